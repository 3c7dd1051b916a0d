/* fm-latex-check.c - does a recogniser's LaTeX compile? (fm-latex-check.h) */
#include "fm-latex-check.h"

#include <string.h>

/* The recogniser writes whatever its tokens spell, and one bad formula stops
 * pdflatex for the whole document: unbalanced braces, `&` outside an
 * alignment, `\sqrt\sqrt22` (an argument that takes arguments), `x^a^b`,
 * `\begin{pmatrix} .. \end{Vmatrix}`, a command that is not defined. So the
 * tex export only writes formulas that this small parser accepts: the
 * commands of the model's vocabulary (and common ones) with their arities,
 * environments by name, delimiters after \left, \right and \big. */

static const char *const tex_symbols[] = {
  "alpha", "beta", "gamma", "delta", "epsilon", "varepsilon", "zeta", "eta", "theta", "vartheta",
  "iota", "kappa", "lambda", "mu", "nu", "xi", "pi", "varpi", "rho", "varrho", "sigma", "varsigma",
  "tau", "upsilon", "phi", "varphi", "chi", "psi", "omega", "Gamma", "Delta", "Theta", "Lambda",
  "Xi", "Pi", "Sigma", "Upsilon", "Phi", "Psi", "Omega",
  "to", "in", "ni", "otimes", "times", "ldots", "cdots", "vdots", "ddots", "dots", "bullet", "partial",
  "subset", "supset", "subseteq", "supseteq", "subsetneq", "circ", "infty", "cap", "cup", "wedge",
  "vee", "leq", "geq", "le", "ge", "neq", "ne", "oplus", "ominus", "odot", "prime", "setminus",
  "cong", "equiv", "approx", "sim", "simeq", "propto", "mapsto", "longmapsto", "longrightarrow",
  "longleftarrow", "longleftrightarrow", "leftarrow", "rightarrow", "Rightarrow", "Leftarrow",
  "Leftrightarrow", "Longrightarrow", "Longleftarrow", "leftrightarrow", "uparrow", "downarrow",
  "hookrightarrow", "rightharpoonup", "leadsto", "emptyset", "varnothing", "pm", "mp", "div",
  "ast", "star", "dagger", "mid", "parallel", "perp", "forall", "exists", "neg", "lnot", "sharp",
  "natural", "flat", "gg", "ll", "colon", "bmod", "notin", "triangle", "bot", "top", "diamond",
  "wp", "imath", "jmath", "ell", "hbar", "aleph", "nabla", "Im", "Re", "S", "P", "cdot", "coloneqq",
  "doteq", "amalg", "boxtimes", "lfloor", "rfloor", "lceil", "rceil", "langle", "rangle", "vert",
  "Vert", "quad", "qquad", "enspace", "displaystyle", "textstyle", "scriptstyle",
  "scriptscriptstyle", "lvert", "rvert", "lVert", "rVert", "angle", "backslash", "le", "ge",
  NULL
};
/* Operators that take \limits and \nolimits. */
static const char *const tex_operators[] = {
  "sum", "prod", "coprod", "int", "iint", "iiint", "oint", "bigoplus", "bigotimes", "bigcup",
  "bigcap", "bigvee", "bigwedge", "lim", "liminf", "limsup", "max", "min", "sup", "inf", "det",
  "dim", "deg", "ln", "log", "exp", "sin", "cos", "tan", "sec", "csc", "cot", "sinh", "cosh",
  "tanh", "coth", "arcsin", "arccos", "arctan", "arg", "ker", "gcd", "Pr", "hom",
  NULL
};
static const char *const tex_one_arg[] = {
  "mathcal", "mathbf", "mathrm", "mathit", "mathbb", "mathfrak", "mathscr", "mathsf", "mathtt",
  "boldsymbol", "overline", "underline", "bar", "tilde", "hat", "widehat", "widetilde",
  "vec", "dot", "ddot", "acute", "grave", "breve", "check", "mathring", "overbrace", "underbrace",
  "overrightarrow", "overleftarrow", "phantom", "vphantom", "hphantom", "pmod", "mod",
  NULL
};
static const char *const tex_two_args[] = {
  "frac", "dfrac", "tfrac", "binom", "dbinom", "tbinom", "stackrel", "overset", "underset", NULL
};
static const char *const tex_text_arg[] = {
  "text", "textit", "textbf", "textrm", "mbox", "mspace", NULL
};
static const char *const tex_big[] = {
  "big", "bigl", "bigr", "Big", "Bigl", "Bigr", "bigg", "biggl", "biggr", "Bigg", "Biggl", "Biggr", NULL
};
static const char *const tex_envs[] = {
  "matrix", "pmatrix", "bmatrix", "Bmatrix", "vmatrix", "Vmatrix", "smallmatrix", "cases",
  "array", "aligned", "gathered", "split", NULL
};

typedef struct {
  const char *p;
  int left_depth;
  gboolean amp, newline;     /* & and \\ allowed here                  */
  gboolean arg_newline;      /* \\ allowed in the next argument (\substack) */
  gboolean any_command;      /* fm_latex_check_well_formed: a command or environment
                              * this parser does not know is taken as defined */
} TexCheck;

static gboolean
tex_in (const char *const *list, const char *name, gsize len)
{
  for (int i = 0; list[i]; i++)
    if (strlen (list[i]) == len && strncmp (list[i], name, len) == 0)
      return TRUE;
  return FALSE;
}

/* A command whose arguments this parser reads: no argument of another. */
static gboolean
tex_takes_arguments (const char *name, gsize len)
{
  static const char *const others[] = {
    "sqrt", "xrightarrow", "xleftarrow", "substack", "operatorname", "mathop", "begin", "end",
    "left", "right", "middle", NULL
  };
  return tex_in (tex_one_arg, name, len) || tex_in (tex_two_args, name, len) ||
         tex_in (tex_text_arg, name, len) || tex_in (tex_big, name, len) || tex_in (others, name, len);
}

static void
tex_skip_spaces (TexCheck *t)
{
  while (*t->p == ' ')
    t->p++;
}

/* A control word at t->p (after the backslash): its length. */
static gsize
tex_word_len (const char *s)
{
  gsize n = 0;
  while (g_ascii_isalpha (s[n]))
    n++;
  return n;
}

static gboolean
tex_delimiter (TexCheck *t)
{
  gsize n;
  tex_skip_spaces (t);
  if (*t->p && strchr ("()[]|./<>", *t->p))
    {
      t->p++;
      return TRUE;
    }
  if (*t->p != '\\')
    return FALSE;
  if (t->p[1] == '{' || t->p[1] == '}' || t->p[1] == '|')
    {
      t->p += 2;
      return TRUE;
    }
  n = tex_word_len (t->p + 1);
  if (n > 0)
    {
      static const char *const delims[] = {
        "langle", "rangle", "lfloor", "rfloor", "lceil", "rceil", "vert", "Vert", "uparrow",
        "downarrow", "backslash", "lvert", "rvert", "lVert", "rVert", NULL
      };
      if (tex_in (delims, t->p + 1, n) || t->any_command)
        {
          t->p += 1 + n;
          return TRUE;
        }
    }
  return FALSE;
}

static gboolean tex_list (TexCheck *t, char until);

/* Text-mode braces: plain characters and nested groups only. */
static gboolean
tex_text_group (TexCheck *t)
{
  int depth = 0;
  tex_skip_spaces (t);
  if (*t->p != '{')
    return FALSE;
  for (; *t->p; t->p++)
    {
      if (*t->p == '{')
        depth++;
      else if (*t->p == '}')
        {
          if (--depth == 0)
            {
              t->p++;
              return TRUE;
            }
        }
      else if (t->any_command && *t->p == '\\' && t->p[1] != '\0')
        t->p++;  /* a command (\'e); \{ and \} are no group */
      else if (strchr ("^_&#%$", *t->p) || (!t->any_command && ((guchar) *t->p >= 0x80 || strchr ("\\~", *t->p))))
        return FALSE;
    }
  return FALSE;
}

/* One argument: a group, a character or a command without arguments. */
static gboolean
tex_arg (TexCheck *t)
{
  gsize n;
  tex_skip_spaces (t);
  if (*t->p == '{')
    {
      /* & and \\ inside braces are errors even in an alignment. */
      TexCheck inner = *t;
      gboolean ok;
      inner.p++;
      inner.amp = FALSE;
      inner.newline = t->arg_newline;
      inner.arg_newline = FALSE;
      ok = tex_list (&inner, '}');
      t->p = inner.p;
      return ok;
    }
  if (*t->p == '\\')
    {
      if (t->p[1] != '\0' && !g_ascii_isalpha (t->p[1]))
        {
          if ((guchar) t->p[1] >= 0x80 || strchr ("\\'`\"^~=.", t->p[1]))
            return FALSE;
          t->p += 2;
          return TRUE;
        }
      n = tex_word_len (t->p + 1);
      if (n > 0 && t->any_command && !tex_takes_arguments (t->p + 1, n))
        {
          t->p += 1 + n;
          return TRUE;
        }
      if (n > 0 && (tex_in (tex_symbols, t->p + 1, n) || tex_in (tex_operators, t->p + 1, n)) &&
          !tex_in ((const char *const[]) { "displaystyle", "textstyle", "scriptstyle",
                                           "scriptscriptstyle", NULL }, t->p + 1, n))
        {
          t->p += 1 + n;
          return TRUE;
        }
      return FALSE;
    }
  if (*t->p == '\0' || strchr ("{}^_&#%$\\'", *t->p) ||
      (!t->any_command && ((guchar) *t->p >= 0x80 || *t->p == '~')))
    return FALSE;
  t->p++;
  return TRUE;
}

/* What one atom of a list did, for the list's script and operator state. */
typedef enum {
  TEX_BAD,        /* an error for pdflatex                                 */
  TEX_ATOM,       /* an atom: a ^ or _ may follow again                    */
  TEX_KEEP,       /* no atom of its own (\middle, \hline, \substack{..}) */
  TEX_OPERATOR,   /* an atom that takes \limits                           */
  TEX_LIMITS,     /* \limits or \nolimits after an operator               */
} TexStep;

/* \begin{env} .. \end{env} after "\begin": a known environment whose body
 * is a list where & and \\ are allowed (no & in gathered), ended by \end
 * with the same name; array's column specification is checked too. */
static TexStep
tex_environment (TexCheck *t)
{
  const char *env;
  gsize len;
  TexCheck inner;

  tex_skip_spaces (t);
  if (*t->p != '{')
    return TEX_BAD;
  env = ++t->p;
  len = tex_word_len (env);
  if (t->any_command && len > 0 && env[len] == '*')
    len++;
  if (len == 0 || (!tex_in (tex_envs, env, len) && !t->any_command) || env[len] != '}')
    return TEX_BAD;
  t->p = env + len + 1;
  if (len == 5 && strncmp (env, "array", 5) == 0 && t->any_command)
    {
      /* any column specification (p{2cm}, @{}) in braces */
      TexCheck spec = *t;
      spec.any_command = TRUE;
      if (!tex_text_group (&spec))
        return TEX_BAD;
      t->p = spec.p;
    }
  else if (len == 5 && strncmp (env, "array", 5) == 0)
    {
      /* Column specification: {cc|l}. */
      tex_skip_spaces (t);
      if (*t->p != '{')
        return TEX_BAD;
      for (t->p++; *t->p != '}'; t->p++)
        if (*t->p == '\0' || !strchr ("lcr| ", *t->p))
          return TEX_BAD;
      t->p++;
    }
  inner = *t;
  inner.amp = !(len == 8 && strncmp (env, "gathered", 8) == 0);
  inner.newline = TRUE;
  inner.left_depth = 0;
  if (!tex_list (&inner, 'E'))
    return TEX_BAD;
  t->p = inner.p;
  /* tex_list stopped after "\end": the same name must follow. */
  tex_skip_spaces (t);
  if (*t->p != '{' || strncmp (t->p + 1, env, len) != 0 || t->p[1 + len] != '}')
    return TEX_BAD;
  t->p += len + 2;
  return TEX_ATOM;
}

/* \left<delim> .. \right<delim> after "\left": a group, as braces are. */
static TexStep
tex_left_right (TexCheck *t)
{
  TexCheck inner = *t;

  if (!tex_delimiter (t))
    return TEX_BAD;
  inner.p = t->p;
  inner.left_depth++;
  inner.amp = inner.newline = FALSE;
  if (!tex_list (&inner, 'R'))
    return TEX_BAD;
  t->p = inner.p;
  return tex_delimiter (t) ? TEX_ATOM : TEX_BAD;
}

/* \sqrt[n]{x}, \xrightarrow[below]{above}: the optional argument is math up
 * to the matching ], then one argument. */
static TexStep
tex_optional_then_arg (TexCheck *t)
{
  tex_skip_spaces (t);
  if (*t->p == '[')
    {
      TexCheck opt = *t;
      int depth = 0;
      for (opt.p++; *opt.p && !(*opt.p == ']' && depth == 0); opt.p++)
        depth += (*opt.p == '{') - (*opt.p == '}');
      if (*opt.p != ']')
        return TEX_BAD;
      {
        g_autofree char *inside = g_strndup (t->p + 1, opt.p - t->p - 1);
        TexCheck sub_check = { inside, 0, FALSE, FALSE, FALSE, t->any_command };
        if (!tex_list (&sub_check, 0))
          return TEX_BAD;
      }
      t->p = opt.p + 1;
    }
  return tex_arg (t) ? TEX_ATOM : TEX_BAD;
}

#define TEX_IS(name, n, word) ((n) == sizeof (word) - 1 && strncmp ((name), (word), (n)) == 0)

/* A control word other than \end and \right, t->p just after it: checks its
 * arguments. was_op: the atom before it was an operator; infix counts the
 * list's \choose and \atop. */
static TexStep
tex_control_word (TexCheck *t, const char *name, gsize n, gboolean was_op, int *infix)
{
  if (TEX_IS (name, n, "begin"))
    return tex_environment (t);
  if (TEX_IS (name, n, "left"))
    return tex_left_right (t);
  if (TEX_IS (name, n, "middle"))
    return t->left_depth > 0 && tex_delimiter (t) ? TEX_KEEP : TEX_BAD;
  if (tex_in (tex_big, name, n))
    return tex_delimiter (t) ? TEX_ATOM : TEX_BAD;
  if (TEX_IS (name, n, "limits") || TEX_IS (name, n, "nolimits"))
    return was_op ? TEX_LIMITS : TEX_BAD;  /* "Limit controls must follow a math operator" */
  if (TEX_IS (name, n, "choose") || TEX_IS (name, n, "atop"))
    return ++*infix > 1 ? TEX_BAD : TEX_ATOM;  /* two generalised fractions in one group */
  if (TEX_IS (name, n, "hline"))
    return t->newline ? TEX_KEEP : TEX_BAD;
  if (tex_in (tex_symbols, name, n))
    return TEX_ATOM;
  if (tex_in (tex_operators, name, n))
    return TEX_OPERATOR;
  if (TEX_IS (name, n, "operatorname") || TEX_IS (name, n, "mathop"))
    {
      if (*t->p == '*')
        t->p++;
      return tex_arg (t) ? TEX_OPERATOR : TEX_BAD;
    }
  if (TEX_IS (name, n, "sqrt") || TEX_IS (name, n, "xrightarrow") || TEX_IS (name, n, "xleftarrow"))
    return tex_optional_then_arg (t);
  if (TEX_IS (name, n, "substack"))
    {
      TexCheck inner = *t;
      inner.arg_newline = TRUE;
      if (!tex_arg (&inner))
        return TEX_BAD;
      t->p = inner.p;
      return TEX_KEEP;
    }
  if (tex_in (tex_one_arg, name, n))
    return tex_arg (t) ? TEX_ATOM : TEX_BAD;
  if (tex_in (tex_two_args, name, n))
    return tex_arg (t) && tex_arg (t) ? TEX_ATOM : TEX_BAD;
  if (tex_in (tex_text_arg, name, n))
    return tex_text_group (t) ? TEX_ATOM : TEX_BAD;
  /* not a command this parser knows to be defined; for the well-formed
   * check an atom that may take \limits (\bigsqcup, \iiiint) */
  return t->any_command ? TEX_OPERATOR : TEX_BAD;
}

/* A control symbol at t->p (a backslash and one non-letter). */
static TexStep
tex_control_symbol (TexCheck *t)
{
  char c = t->p[1];

  if (c == '\\')
    {
      if (!t->newline)
        return TEX_BAD;
      t->p += 2;
      tex_skip_spaces (t);
      return *t->p == '[' && !t->any_command ? TEX_BAD : TEX_ATOM;  /* \\[2pt] is not worth parsing */
    }
  if (c == '\0' || (guchar) c >= 0x80 || strchr ("'`\"^~=.", c))
    return TEX_BAD;  /* text accents are errors in math */
  t->p += 2;
  return TEX_ATOM;
}

/* A list of atoms up to `until` ('}', 'E' for \end, 'R' for \right, 0 for
 * the end of the string). sup and sub: the atom before has a superscript
 * or subscript already; op: it is an operator (\limits may follow); base:
 * an atom since the list or its row or cell began (pdflatex sets a script
 * with none on an empty base, but no formula is written so: for the
 * well-formed check a script that lost its base). */
static gboolean
tex_list (TexCheck *t, char until)
{
  gboolean sup = FALSE, sub = FALSE, op = FALSE, base = FALSE;
  int infix = 0;

  for (;;)
    {
      char c = *t->p;
      gboolean was_op = op, row_end = FALSE;
      TexStep step = TEX_ATOM;

      op = FALSE;
      switch (c)
        {
        case '\0':
          return until == 0;
        case ' ':
          t->p++;
          op = was_op;
          continue;
        case '}':
          t->p++;
          return until == '}';
        case '{':
          step = tex_arg (t) ? TEX_ATOM : TEX_BAD;
          break;
        case '^':
        case '_':
          {
            gboolean *used = c == '^' ? &sup : &sub;
            if (*used || (t->any_command && !base))
              return FALSE;  /* double superscript or subscript */
            *used = TRUE;
            t->p++;
            step = tex_arg (t) ? TEX_KEEP : TEX_BAD;
          }
          break;
        case '\'':
          if (sup || (t->any_command && !base))
            return FALSE;  /* x^2' is a double superscript */
          while (*t->p == '\'')
            t->p++;
          step = TEX_KEEP;
          break;
        case '&':
          if (!t->amp)
            return FALSE;
          t->p++;
          row_end = TRUE;
          break;
        case '\\':
          {
            const char *name = t->p + 1;
            gsize n = tex_word_len (name);
            if (n == 0)
              {
                row_end = name[0] == '\\';
                step = tex_control_symbol (t);
                break;
              }
            t->p += 1 + n;
            if (TEX_IS (name, n, "end"))
              return until == 'E';
            if (TEX_IS (name, n, "right"))
              return until == 'R';
            step = tex_control_word (t, name, n, was_op, &infix);
          }
          break;
        default:
          if (strchr ("#%$", c) || (guchar) c < 0x20 ||
              (!t->any_command && ((guchar) c >= 0x80 || c == '~')))
            return FALSE;  /* non-ASCII needs packages; # % $ would break out */
          t->p++;
          break;
        }
      switch (step)
        {
        case TEX_BAD:
          return FALSE;
        case TEX_ATOM:
          sup = sub = FALSE;
          base = !row_end;
          break;
        case TEX_OPERATOR:
          sup = sub = FALSE;
          op = base = TRUE;
          break;
        case TEX_LIMITS:
          op = TRUE;
          break;
        case TEX_KEEP:
        default:
          break;
        }
    }
}

gboolean
fm_latex_check_compiles (const char *latex)
{
  TexCheck t = { latex, 0, FALSE, FALSE, FALSE, FALSE };

  if (latex == NULL || latex[strspn (latex, " ")] == '\0')
    return FALSE;  /* "$$" would open display math */
  return tex_list (&t, 0);
}

gboolean
fm_latex_check_well_formed (const char *latex)
{
  TexCheck t = { latex, 0, FALSE, FALSE, FALSE, TRUE };

  if (latex == NULL || latex[strspn (latex, " ")] == '\0')
    return FALSE;
  return tex_list (&t, 0);
}


gboolean
fm_latex_check_tag (const char *tag)
{
  for (const char *p = tag; *p; p++)
    if (!(g_ascii_isalnum (*p) || *p == '.' || *p == '-' || *p == '*'))
      return FALSE;
  return *tag != '\0';
}
