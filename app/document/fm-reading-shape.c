/* fm-reading-shape.c - is a model's reading a well-formed formula? (fm-reading-shape.h) */
#include "fm-reading-shape.h"

#include <string.h>

/* The model writes tokens one by one and nothing makes it close what it
 * opened: the 2026-11-27 model's readings on seed 1030 included `zz\bar` (an
 * accent after its base, with no argument), `\mathcal{\alpha}` and, on the
 * development seeds, `\mathcal{\varphi}`; the reader writes a lone sized
 * bar as `\left|` with no `\right`. Such a reading is wrong however sure
 * the model was (the corpus, ../shared, has none of these shapes). */

/* Commands with one math argument. */
static const char *const one_arg[] = {
  "\\bar", "\\hat", "\\tilde", "\\vec", "\\dot", "\\ddot", "\\dddot", "\\acute", "\\grave", "\\breve",
  "\\check", "\\mathring", "\\widehat", "\\widetilde", "\\overline", "\\underline", "\\overrightarrow",
  "\\overleftarrow", "\\overleftrightarrow", "\\underrightarrow", "\\overbrace", "\\underbrace",
  "\\mathcal", "\\mathbb", "\\mathbf", "\\mathrm", "\\mathit", "\\mathfrak", "\\mathscr", "\\mathsf",
  "\\mathtt", "\\mathbfit", "\\boldsymbol", "\\bm", "\\pmb", "\\mathnormal", "\\phantom", "\\vphantom",
  "\\hphantom", "\\sqrt", "\\pmod", "\\mathop", "\\mathbin", "\\mathrel", "\\mathord", "\\boxed",
  "\\xrightarrow", "\\xleftarrow", "\\substack", NULL,
};
/* The accents among them: a dangling one is repaired onto the atom before. */
static const char *const accents[] = {
  "\\bar", "\\hat", "\\tilde", "\\vec", "\\dot", "\\ddot", "\\dddot", "\\acute", "\\grave", "\\breve",
  "\\check", "\\mathring", "\\widehat", "\\widetilde", "\\overline", "\\underline", NULL,
};
/* Math alphabets, whose argument is letters (and digits): a control word
 * in it (\mathcal{\alpha}) has no glyph in the alphabet. */
static const char *const alphabets[] = { "\\mathcal", "\\mathscr", "\\mathbb", "\\mathfrak", NULL };
static const char *const two_args[] = {
  "\\frac", "\\dfrac", "\\tfrac", "\\cfrac", "\\binom", "\\dbinom", "\\tbinom", "\\stackrel",
  "\\overset", "\\underset", NULL,
};
/* Commands whose group is text or a length, not math. */
static const char *const text_arg[] = {
  "\\text", "\\textrm", "\\textit", "\\textbf", "\\textup", "\\textsf", "\\texttt", "\\textnormal",
  "\\mbox", "\\hbox", "\\operatorname", "\\operatorname*", "\\mspace", "\\hspace", "\\hspace*",
  "\\label", "\\tag", "\\tag*", "\\color", "\\vspace", NULL,
};

/* Words that may follow \left, \right and \middle (with the single
 * non-alphanumeric characters and \{ \} \|): anything else there is a
 * TeX error ("Missing delimiter"), `\right\bar` included. */
static const char *const delimiter_words[] = {
  "\\langle", "\\rangle", "\\vert", "\\Vert", "\\lvert", "\\rvert", "\\lVert", "\\rVert", "\\lfloor",
  "\\rfloor", "\\lceil", "\\rceil", "\\lbrace", "\\rbrace", "\\lbrack", "\\rbrack", "\\backslash",
  "\\uparrow", "\\downarrow", "\\updownarrow", "\\Uparrow", "\\Downarrow", "\\Updownarrow", "\\lgroup",
  "\\rgroup", "\\lmoustache", "\\rmoustache", "\\ulcorner", "\\urcorner", "\\llcorner", "\\lrcorner",
  "\\llbracket", "\\rrbracket", NULL,
};
/* Greek letters (and \\ell, \\imath, \\jmath): with Latin letters and
 * digits the only single tokens a
 * dangling accent is put back on. An operator, arrow or delimiter word
 * before it (`a\to\bar`, `\sum\hat_{i}`, `\right\rangle\bar`) is no
 * base the model could have meant: the accent belongs to what it lost. */
static const char *const letter_words[] = {
  "\\alpha", "\\beta", "\\gamma", "\\delta", "\\epsilon", "\\varepsilon", "\\zeta", "\\eta", "\\theta",
  "\\vartheta", "\\iota", "\\kappa", "\\varkappa", "\\lambda", "\\mu", "\\nu", "\\xi", "\\pi", "\\varpi",
  "\\rho", "\\varrho", "\\sigma", "\\varsigma", "\\tau", "\\upsilon", "\\phi", "\\varphi", "\\chi",
  "\\psi", "\\omega", "\\Gamma", "\\Delta", "\\Theta", "\\Lambda", "\\Xi", "\\Pi", "\\Sigma",
  "\\Upsilon", "\\Phi", "\\Psi", "\\Omega", "\\varGamma", "\\varDelta", "\\varTheta", "\\varLambda",
  "\\varXi", "\\varPi", "\\varSigma", "\\varUpsilon", "\\varPhi", "\\varPsi", "\\varOmega", "\\ell", "\\imath", "\\jmath", NULL,
};
/* Commands whose next token is not an atom of its own: a delimiter, a
 * negated relation. */
static const char *const takes_next[] = {
  "\\left", "\\right", "\\middle", "\\not", "\\big", "\\Big", "\\bigg", "\\Bigg", "\\bigl", "\\bigr",
  "\\Bigl", "\\Bigr", "\\biggl", "\\biggr", "\\Biggl", "\\Biggr", "\\bigm", "\\Bigm", "\\biggm",
  "\\Biggm", NULL,
};

typedef struct {
  GPtrArray *tok;   /* the reading's tokens          */
  GArray *at;       /* each token's byte offset      */
  guint i;          /* the next token                */
} Walk;

static gboolean
is_word (const char *tok, const char *const *list)
{
  return g_strv_contains (list, tok);
}

/* The next character: a UTF-8 step that stops at the string's end. A
 * model or a PDF may hand over invalid UTF-8 (a lead byte at the end,
 * "x\xF0"), where g_utf8_next_char would step past the NUL. */
const char *
fm_reading_next_char (const char *p)
{
  if (*p == '\0')
    return p;
  for (p++; (*p & 0xC0) == 0x80; p++)
    ;
  return p;
}

/* One token's end: a control word's letters, a control symbol (a
 * backslash and one character), or one character. The readers' own
 * tokenizers (below, and fm-recognize.c's latex_tokens) add their forms:
 * starred words, \begin{env}. */
const char *
fm_reading_token_end (const char *p)
{
  const char *q;

  if (*p == '\\' && g_ascii_isalpha (p[1]))
    {
      for (q = p + 1; g_ascii_isalpha (*q); q++)
        ;
      return q;
    }
  if (*p == '\\' && p[1] != '\0')
    return fm_reading_next_char (p + 1);
  return fm_reading_next_char (p);
}

/* Control words (with a starred form where one is listed), control
 * symbols, \begin{env}/\end{env} whole, single characters. */
static void
tokenize (const char *latex, GPtrArray *tok, GArray *at)
{
  const char *p = latex;

  while (*p)
    {
      const char *q;
      gsize off = (gsize) (p - latex);

      if (g_ascii_isspace (*p))
        {
          p++;
          continue;
        }
      q = fm_reading_token_end (p);
      if (*p == '\\' && g_ascii_isalpha (p[1]))
        {
          if (*q == '*')
            {
              g_autofree char *star = g_strndup (p, q + 1 - p);
              if (is_word (star, text_arg))
                q++;
            }
          if ((strncmp (p, "\\begin", 6) == 0 || strncmp (p, "\\end", 4) == 0) && *q == '{' &&
              strchr (q, '}') != NULL)
            q = strchr (q, '}') + 1;
        }
      g_ptr_array_add (tok, g_strndup (p, q - p));
      g_array_append_val (at, off);
      p = q;
    }
}

static const char *
peek (const Walk *w)
{
  return w->i < w->tok->len ? w->tok->pdata[w->i] : NULL;
}

/* Tokens that end a list and so cannot start an argument or a script. */
static gboolean
ends_list (const char *t)
{
  return t == NULL || strcmp (t, "}") == 0 || strcmp (t, "^") == 0 || strcmp (t, "_") == 0 ||
         strcmp (t, "&") == 0 || strcmp (t, "\\\\") == 0 || strcmp (t, "\\right") == 0 ||
         strcmp (t, "\\middle") == 0 || g_str_has_prefix (t, "\\end{");
}

static gboolean walk_list (Walk *w, char until);
static gboolean walk_atom (Walk *w);

/* A text group: braces counted, nothing inside checked. */
static gboolean
skip_text_group (Walk *w)
{
  int depth = 0;

  if (g_strcmp0 (peek (w), "{") != 0)
    return FALSE;
  for (; w->i < w->tok->len; w->i++)
    {
      const char *t = w->tok->pdata[w->i];
      depth += strcmp (t, "{") == 0 ? 1 : strcmp (t, "}") == 0 ? -1 : 0;
      if (depth == 0)
        {
          w->i++;
          return TRUE;
        }
    }
  return FALSE;
}

/* One argument: a group or one atom. */
static gboolean
walk_arg (Walk *w)
{
  const char *t = peek (w);

  if (ends_list (t))
    return FALSE;
  return walk_atom (w);
}

/* \mathcal's argument holds no control word. */
static gboolean
letters_argument (const Walk *w)
{
  const char *t = peek (w);
  int depth = 0;

  if (t == NULL)
    return FALSE;
  if (strcmp (t, "{") != 0)
    return !(t[0] == '\\' && g_ascii_isalpha (t[1]));
  for (guint j = w->i; j < w->tok->len; j++)
    {
      const char *u = w->tok->pdata[j];
      depth += strcmp (u, "{") == 0 ? 1 : strcmp (u, "}") == 0 ? -1 : 0;
      if (depth == 0)
        return TRUE;
      if (u[0] == '\\' && g_ascii_isalpha (u[1]))
        return FALSE;
    }
  return TRUE;
}

/* A delimiter \left, \right or \middle can take: one character that is
 * no letter, digit or TeX special ("." included), \{ \} \|, or a
 * delimiter word. */
static gboolean
is_delimiter (const char *t)
{
  if (t == NULL)
    return FALSE;
  if (t[0] == '\\')
    return strcmp (t, "\\{") == 0 || strcmp (t, "\\}") == 0 || strcmp (t, "\\|") == 0 ||
           is_word (t, delimiter_words);
  if (*fm_reading_next_char (t) != '\0')
    return FALSE;
  return !g_ascii_isalnum (t[0]) && strchr ("{}^_&#$%~", t[0]) == NULL;
}

/* \left<delim> ... \right<delim> in one group; \middle only inside. */
static gboolean
walk_left_right (Walk *w)
{
  w->i++;   /* \left */
  if (!is_delimiter (peek (w)))
    return FALSE;
  w->i++;
  if (!walk_list (w, 'R'))
    return FALSE;
  /* at \right: its delimiter follows */
  w->i++;
  if (!is_delimiter (peek (w)))
    return FALSE;
  w->i++;
  return TRUE;
}

/* The group or single token a text command takes (`\text x`, `\label 2`),
 * after the star of a starred form written apart (`\hspace * {5mm}`). */
static gboolean
skip_text_argument (Walk *w, const char *command)
{
  if (g_strcmp0 (peek (w), "*") == 0)
    {
      g_autofree char *star = g_strconcat (command, "*", NULL);
      if (is_word (star, text_arg))
        w->i++;
    }
  if (g_strcmp0 (peek (w), "{") == 0)
    return skip_text_group (w);
  if (ends_list (peek (w)) || g_strcmp0 (peek (w), "{") == 0)
    return FALSE;
  w->i++;
  return TRUE;
}

static gboolean
walk_atom (Walk *w)
{
  const char *t = peek (w);

  if (t == NULL)
    return FALSE;
  if (strcmp (t, "{") == 0)
    {
      w->i++;
      return walk_list (w, '}');
    }
  if (strcmp (t, "\\left") == 0)
    return walk_left_right (w);
  if (g_str_has_prefix (t, "\\begin{"))
    {
      w->i++;
      /* array's column specification, after its optional placement
       * (\begin{array}[t]{cc}) */
      if (strcmp (t, "\\begin{array}") == 0 && g_strcmp0 (peek (w), "[") == 0)
        {
          while (peek (w) != NULL && strcmp (peek (w), "]") != 0)
            w->i++;
          if (peek (w) == NULL)
            return FALSE;
          w->i++;
        }
      if (strcmp (t, "\\begin{array}") == 0 && !skip_text_group (w))
        return FALSE;
      return walk_list (w, 'E');
    }
  w->i++;
  if (is_word (t, text_arg))
    return skip_text_argument (w, t);
  if (is_word (t, alphabets) && !letters_argument (w))
    return FALSE;
  /* \sqrt[n]{x}: the optional argument up to its ] */
  if ((strcmp (t, "\\sqrt") == 0 || strcmp (t, "\\xrightarrow") == 0 || strcmp (t, "\\xleftarrow") == 0) &&
      g_strcmp0 (peek (w), "[") == 0)
    {
      int depth = 0;
      for (; peek (w) != NULL; w->i++)
        {
          depth += strcmp (peek (w), "[") == 0 ? 1 : strcmp (peek (w), "]") == 0 ? -1 : 0;
          if (depth == 0)
            break;
        }
      if (peek (w) == NULL)
        return FALSE;
      w->i++;
    }
  if (is_word (t, one_arg))
    return walk_arg (w);
  if (is_word (t, two_args))
    return walk_arg (w) && walk_arg (w);
  return TRUE;
}

/* A list up to `until`: '}' (consumed), 'R' (stops at \right), 'E'
 * (\end, consumed) or 0 (the end). Scripts: one of each kind per atom,
 * never empty. */
static gboolean
walk_list (Walk *w, char until)
{
  gboolean sup = FALSE, sub = FALSE;

  for (;;)
    {
      const char *t = peek (w);

      if (t == NULL)
        return until == 0;
      if (strcmp (t, "}") == 0)
        {
          w->i++;
          return until == '}';
        }
      if (strcmp (t, "\\right") == 0)
        return until == 'R';
      if (g_str_has_prefix (t, "\\end{"))
        {
          w->i++;
          return until == 'E';
        }
      if (strcmp (t, "\\middle") == 0)
        {
          if (until != 'R')
            return FALSE;
          w->i++;
          if (!is_delimiter (peek (w)))
            return FALSE;
          w->i++;
          /* a script after the bar is the bar's */
          sup = sub = FALSE;
          continue;
        }
      if (strcmp (t, "^") == 0 || strcmp (t, "_") == 0)
        {
          gboolean *used = t[0] == '^' ? &sup : &sub;
          const char *next;
          if (*used)
            return FALSE;   /* x^{a}^{b} */
          *used = TRUE;
          w->i++;
          next = peek (w);
          /* x^{} draws nothing: no formula is typed so */
          if (g_strcmp0 (next, "{") == 0 && w->i + 1 < w->tok->len && strcmp (w->tok->pdata[w->i + 1], "}") == 0)
            return FALSE;
          if (!walk_arg (w))
            return FALSE;
          continue;
        }
      if (strcmp (t, "&") == 0 || strcmp (t, "\\\\") == 0)
        {
          /* a new cell or row: its scripts hang on an empty base
           * (x^{2} &^{3}) */
          w->i++;
          sup = sub = FALSE;
          continue;
        }
      if (strcmp (t, "'") == 0 || strcmp (t, "\\limits") == 0 || strcmp (t, "\\nolimits") == 0)
        {
          w->i++;
          continue;
        }
      if (!walk_atom (w))
        return FALSE;
      sup = sub = FALSE;
    }
}

gboolean
fm_reading_broken (const char *latex)
{
  g_autoptr(GPtrArray) tok = g_ptr_array_new_with_free_func (g_free);
  g_autoptr(GArray) at = g_array_new (FALSE, FALSE, sizeof (gsize));
  Walk w = { tok, at, 0 };

  if (latex == NULL)
    return FALSE;
  tokenize (latex, tok, at);
  return !walk_list (&w, 0);
}

/* The reading with its empty scripts (^{} and _{}) removed, or NULL. */
static char *
without_empty_scripts (const char *latex)
{
  GString *out = g_string_new (NULL);
  gboolean changed = FALSE;
  const char *p = latex;

  while (*p)
    {
      if ((*p == '^' || *p == '_') && (p == latex || p[-1] != '\\'))
        {
          const char *q = p + 1;
          while (*q == ' ')
            q++;
          if (q[0] == '{')
            {
              const char *r = q + 1;
              while (*r == ' ')
                r++;
              if (*r == '}')
                {
                  p = r + 1;
                  changed = TRUE;
                  continue;
                }
            }
        }
      g_string_append_c (out, *p++);
    }
  if (!changed)
    {
      g_string_free (out, TRUE);
      return NULL;
    }
  return g_string_free (out, FALSE);
}

/* The byte range of the atom that ends at token k-1 (a group or one
 * token), or FALSE when it is no atom (a script sign, an operator's
 * argument-less command is fine). */
static gboolean
atom_before (const Walk *w, guint k, gsize *from, guint *first)
{
  int depth = 0;
  guint j;

  if (k == 0)
    return FALSE;
  j = k - 1;
  if (strcmp (w->tok->pdata[j], "}") == 0)
    {
      for (;; j--)
        {
          const char *t = w->tok->pdata[j];
          depth += strcmp (t, "}") == 0 ? 1 : strcmp (t, "{") == 0 ? -1 : 0;
          if (depth == 0 || j == 0)
            break;
        }
      /* a group that is an argument (\frac{a}{b}, x^{2}) is not an atom
       * of its own */
      if (depth != 0 || (j > 0 && (strcmp (w->tok->pdata[j - 1], "}") == 0 ||
                                   ((const char *) w->tok->pdata[j - 1])[0] == '\\' ||
                                   strcmp (w->tok->pdata[j - 1], "^") == 0 ||
                                   strcmp (w->tok->pdata[j - 1], "_") == 0)))
        return FALSE;
    }
  else if (ends_list (w->tok->pdata[j]) || strcmp (w->tok->pdata[j], "{") == 0 ||
           (j > 0 && (strcmp (w->tok->pdata[j - 1], "^") == 0 || strcmp (w->tok->pdata[j - 1], "_") == 0 ||
                      is_word (w->tok->pdata[j - 1], one_arg) || is_word (w->tok->pdata[j - 1], two_args))))
    return FALSE;
  else
    {
      const char *t = w->tok->pdata[j];
      /* a letter, a digit or a Greek letter (\alpha): an operator, arrow
       * or delimiter word is no accent's base */
      if (!(g_ascii_isalnum (t[0]) && t[1] == '\0') && !is_word (t, letter_words))
        return FALSE;
    }
  /* the atom is a delimiter or a negated relation's (\right\rangle, \not=) */
  if (j > 0 && is_word (w->tok->pdata[j - 1], takes_next))
    return FALSE;
  *from = g_array_index (w->at, gsize, j);
  *first = j;
  return TRUE;
}

/* The reading with a dangling accent put on the atom before it
 * (z\bar -> \bar{z}), or NULL. The model wrote the accent after its base:
 * `zz\bar` for z\bar{z} (seed 1030), the reader `\varphi\bar(\xi)`. */
static char *
with_accents_on_base (const char *latex)
{
  g_autoptr(GPtrArray) tok = g_ptr_array_new_with_free_func (g_free);
  g_autoptr(GArray) at = g_array_new (FALSE, FALSE, sizeof (gsize));
  Walk w = { tok, at, 0 };

  tokenize (latex, tok, at);
  for (guint k = 0; k < tok->len; k++)
    {
      gsize from, end, atom_end;
      guint first;
      GString *out;

      if (!is_word (tok->pdata[k], accents) || !ends_list (k + 1 < tok->len ? tok->pdata[k + 1] : NULL) ||
          !atom_before (&w, k, &from, &first))
        continue;
      end = g_array_index (at, gsize, k) + strlen (tok->pdata[k]);
      atom_end = g_array_index (at, gsize, k);
      while (atom_end > from && latex[atom_end - 1] == ' ')
        atom_end--;
      out = g_string_new (NULL);
      g_string_append_len (out, latex, from);
      g_string_append (out, tok->pdata[k]);
      if (strcmp (tok->pdata[first], "{") == 0)
        g_string_append_len (out, latex + from, atom_end - from);
      else
        {
          g_string_append_c (out, '{');
          g_string_append_len (out, latex + from, atom_end - from);
          g_string_append_c (out, '}');
        }
      g_string_append (out, latex + end);
      return g_string_free (out, FALSE);
    }
  return NULL;
}

char *
fm_reading_repaired (const char *latex)
{
  g_autofree char *unscripted = NULL;
  char *accented;

  if (latex == NULL)
    return NULL;
  unscripted = without_empty_scripts (latex);
  accented = with_accents_on_base (unscripted != NULL ? unscripted : latex);
  if (accented != NULL)
    return accented;
  return g_steal_pointer (&unscripted);
}
