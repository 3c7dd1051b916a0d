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
} TexCheck;

static gboolean
tex_in (const char *const *list, const char *name, gsize len)
{
  for (int i = 0; list[i]; i++)
    if (strlen (list[i]) == len && strncmp (list[i], name, len) == 0)
      return TRUE;
  return FALSE;
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
      if (tex_in (delims, t->p + 1, n))
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
      else if ((guchar) *t->p >= 0x80 || strchr ("\\^_&#%$~", *t->p))
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
      if (n > 0 && (tex_in (tex_symbols, t->p + 1, n) || tex_in (tex_operators, t->p + 1, n)) &&
          !tex_in ((const char *const[]) { "displaystyle", "textstyle", "scriptstyle",
                                           "scriptscriptstyle", NULL }, t->p + 1, n))
        {
          t->p += 1 + n;
          return TRUE;
        }
      return FALSE;
    }
  if (*t->p == '\0' || (guchar) *t->p >= 0x80 || strchr ("{}^_&#%$~\\'", *t->p))
    return FALSE;
  t->p++;
  return TRUE;
}

/* A list of atoms up to `until` ('}', 'E' for \end, 'R' for \right, 0 for
 * the end of the string). */
static gboolean
tex_list (TexCheck *t, char until)
{
  gboolean sup = FALSE, sub = FALSE, op = FALSE;
  int infix = 0;

  for (;;)
    {
      char c = *t->p;
      gboolean was_op = op;

      op = FALSE;
      if (c == '\0')
        return until == 0;
      if (c == ' ')
        {
          t->p++;
          op = was_op;
          continue;
        }
      if (c == '}')
        {
          t->p++;
          return until == '}';
        }
      if (c == '{')
        {
          if (!tex_arg (t))
            return FALSE;
          sup = sub = FALSE;
          continue;
        }
      if (c == '^' || c == '_')
        {
          gboolean *used = c == '^' ? &sup : &sub;
          if (*used)
            return FALSE;  /* double superscript or subscript */
          *used = TRUE;
          t->p++;
          if (!tex_arg (t))
            return FALSE;
          continue;
        }
      if (c == '\'')
        {
          if (sup)
            return FALSE;  /* x^2' is a double superscript */
          while (*t->p == '\'')
            t->p++;
          continue;
        }
      if (c == '&')
        {
          if (!t->amp)
            return FALSE;
          t->p++;
          sup = sub = FALSE;
          continue;
        }
      if (c == '\\')
        {
          const char *name = t->p + 1;
          gsize n = tex_word_len (name);
          if (n == 0)
            {
              /* Control symbols. */
              if (name[0] == '\\')
                {
                  if (!t->newline)
                    return FALSE;
                  t->p += 2;
                  tex_skip_spaces (t);
                  if (*t->p == '[')
                    return FALSE;  /* \\[2pt] is not worth parsing */
                  sup = sub = FALSE;
                  continue;
                }
              if (name[0] == '\0' || (guchar) name[0] >= 0x80 || strchr ("'`\"^~=.", name[0]))
                return FALSE;  /* text accents are errors in math */
              t->p += 2;
              sup = sub = FALSE;
              continue;
            }
          t->p += 1 + n;
          if (n == 5 && strncmp (name, "begin", 5) == 0)
            {
              const char *env;
              gsize len;
              TexCheck inner;
              tex_skip_spaces (t);
              if (*t->p != '{')
                return FALSE;
              env = ++t->p;
              len = tex_word_len (env);
              if (!tex_in (tex_envs, env, len) || env[len] != '}')
                return FALSE;
              t->p = env + len + 1;
              if (len == 5 && strncmp (env, "array", 5) == 0)
                {
                  /* Column specification: {cc|l}. */
                  tex_skip_spaces (t);
                  if (*t->p != '{')
                    return FALSE;
                  for (t->p++; *t->p != '}'; t->p++)
                    if (*t->p == '\0' || !strchr ("lcr| ", *t->p))
                      return FALSE;
                  t->p++;
                }
              inner = *t;
              inner.amp = !(len == 8 && strncmp (env, "gathered", 8) == 0);
              inner.newline = TRUE;
              inner.left_depth = 0;
              if (!tex_list (&inner, 'E'))
                return FALSE;
              t->p = inner.p;
              /* tex_list stopped after "\end": the same name must follow. */
              tex_skip_spaces (t);
              if (*t->p != '{' || strncmp (t->p + 1, env, len) != 0 || t->p[1 + len] != '}')
                return FALSE;
              t->p += len + 2;
              sup = sub = FALSE;
              continue;
            }
          if (n == 3 && strncmp (name, "end", 3) == 0)
            return until == 'E';
          if (n == 4 && strncmp (name, "left", 4) == 0)
            {
              TexCheck inner = *t;
              if (!tex_delimiter (t))
                return FALSE;
              inner.p = t->p;
              inner.left_depth++;
              inner.amp = inner.newline = FALSE;  /* a group, as braces */
              if (!tex_list (&inner, 'R'))
                return FALSE;
              t->p = inner.p;
              if (!tex_delimiter (t))
                return FALSE;
              sup = sub = FALSE;
              continue;
            }
          if (n == 5 && strncmp (name, "right", 5) == 0)
            return until == 'R';
          if (n == 6 && strncmp (name, "middle", 6) == 0)
            {
              if (t->left_depth == 0 || !tex_delimiter (t))
                return FALSE;
              continue;
            }
          if (tex_in (tex_big, name, n))
            {
              if (!tex_delimiter (t))
                return FALSE;
              sup = sub = FALSE;
              continue;
            }
          if ((n == 6 && strncmp (name, "limits", 6) == 0) || (n == 8 && strncmp (name, "nolimits", 8) == 0))
            {
              if (!was_op)
                return FALSE;  /* "Limit controls must follow a math operator" */
              op = TRUE;
              continue;
            }
          if ((n == 6 && strncmp (name, "choose", 6) == 0) || (n == 4 && strncmp (name, "atop", 4) == 0))
            {
              if (++infix > 1)
                return FALSE;  /* two generalised fractions in one group */
              sup = sub = FALSE;
              continue;
            }
          if (n == 5 && strncmp (name, "hline", 5) == 0)
            {
              if (!t->newline)
                return FALSE;
              continue;
            }
          if (tex_in (tex_symbols, name, n))
            {
              sup = sub = FALSE;
              continue;
            }
          if (tex_in (tex_operators, name, n))
            {
              sup = sub = FALSE;
              op = TRUE;
              continue;
            }
          if ((n == 12 && strncmp (name, "operatorname", 12) == 0) || (n == 6 && strncmp (name, "mathop", 6) == 0))
            {
              if (*t->p == '*')
                t->p++;
              if (!tex_arg (t))
                return FALSE;
              sup = sub = FALSE;
              op = TRUE;
              continue;
            }
          if ((n == 4 && strncmp (name, "sqrt", 4) == 0) || (n == 11 && strncmp (name, "xrightarrow", 11) == 0) ||
              (n == 10 && strncmp (name, "xleftarrow", 10) == 0))
            {
              tex_skip_spaces (t);
              if (*t->p == '[')
                {
                  TexCheck opt = *t;
                  int depth = 0;
                  /* The optional argument: math up to the matching ]. */
                  for (opt.p++; *opt.p && !(*opt.p == ']' && depth == 0); opt.p++)
                    depth += (*opt.p == '{') - (*opt.p == '}');
                  if (*opt.p != ']')
                    return FALSE;
                  {
                    g_autofree char *inside = g_strndup (t->p + 1, opt.p - t->p - 1);
                    TexCheck sub_check = { inside, 0, FALSE, FALSE, FALSE };
                    if (!tex_list (&sub_check, 0))
                      return FALSE;
                  }
                  t->p = opt.p + 1;
                }
              if (!tex_arg (t))
                return FALSE;
              sup = sub = FALSE;
              continue;
            }
          if (n == 8 && strncmp (name, "substack", 8) == 0)
            {
              TexCheck inner = *t;
              inner.arg_newline = TRUE;
              if (!tex_arg (&inner))
                return FALSE;
              t->p = inner.p;
              continue;
            }
          if (tex_in (tex_one_arg, name, n))
            {
              if (!tex_arg (t))
                return FALSE;
              sup = sub = FALSE;
              continue;
            }
          if (tex_in (tex_two_args, name, n))
            {
              if (!tex_arg (t) || !tex_arg (t))
                return FALSE;
              sup = sub = FALSE;
              continue;
            }
          if (tex_in (tex_text_arg, name, n))
            {
              if (!tex_text_group (t))
                return FALSE;
              sup = sub = FALSE;
              continue;
            }
          return FALSE;  /* not a command this parser knows to be defined */
        }
      if ((guchar) c >= 0x80 || strchr ("#%$~", c) || c < 0x20)
        return FALSE;  /* non-ASCII needs packages; # % $ would break out */
      t->p++;
      sup = sub = FALSE;
    }
}

gboolean
fm_latex_check_compiles (const char *latex)
{
  TexCheck t = { latex, 0, FALSE, FALSE, FALSE };

  if (latex == NULL || latex[strspn (latex, " ")] == '\0')
    return FALSE;  /* "$$" would open display math */
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
