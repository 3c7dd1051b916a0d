/* fm-recognize.c - crops, text layer, batching and results for window and CLI. */
#include "fm-recognize.h"

#include <math.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "fm-geometry.h"
#include "fm-page-text.h"

#include "fm-mathtext.h"
#include "fm-reading-shape.h"

/* The glyphs' symbols plus the operator names of the reading. */
static GStrv
constraint_symbols (const FmMathTextResult *result)
{
  g_autoptr(GStrvBuilder) b = g_strv_builder_new ();
  const char *p = result->latex;

  /* The engine wants one vocabulary token per entry: a text word ("for all")
   * is its letters, a double prime two primes. */
  for (guint i = 0; result->symbols != NULL && i < result->symbols->len; i++)
    {
      g_auto(GStrv) words = g_strsplit_set (result->symbols->pdata[i], " \t", -1);
      for (guint w = 0; words[w] != NULL; w++)
        {
          const char *word = words[w];
          if (word[0] == '\0')
            continue;
          if (strspn (word, "'") == strlen (word))
            for (const char *q = word; *q; q++)
              g_strv_builder_add (b, "'");
          else
            g_strv_builder_add (b, word);
        }
    }
  /* The crop is widened to the formula's line (fm_recognize_prepare_page) and
   * may show the sentence punctuation the region leaves out. */
  g_strv_builder_add_many (b, ".", ",", ";", NULL);
  while (p != NULL && (p = strchr (p, '\\')) != NULL)
    {
      const char *q = ++p;
      while (g_ascii_isalpha (*q))
        q++;
      g_autofree char *word = g_strndup (p, q - p);
      /* the engine's contract wants an operator name as one symbol (\sin);
       * the reader's symbols list its letters. \bmod is its spelling of mod. */
      if (fm_mathtext_is_operator_word (word) || strcmp (word, "bmod") == 0)
        {
          g_autofree char *command = g_strconcat ("\\", word, NULL);
          g_strv_builder_add (b, command);
        }
      p = q;
    }
  return g_strv_builder_end (b);
}

/* Commands whose argument draws nothing: a length, a label, a colour, an
 * invisible box, an array's column spec. */
static gboolean
skips_argument (const char *command)
{
  static const char *const skip[] = {
    "\\mspace", "\\hspace", "\\hspace*", "\\vspace", "\\label", "\\tag", "\\tag*", "\\color",
    "\\phantom", "\\hphantom", "\\vphantom", "\\begin{array}", "\\begin{tabular}",
    "\\begin{alignat}", "\\begin{alignat*}", "\\begin{alignedat}", "\\rule", NULL,
  };
  return g_strv_contains (skip, command);
}

static const char *
skip_group (const char *p)
{
  int depth = 0;

  while (g_ascii_isspace (*p))
    p++;
  if (*p != '{' && *p != '[')
    return p;
  for (char open = *p, close = open == '{' ? '}' : ']'; *p; p++)
    {
      if (*p == '\\' && p[1] != '\0')
        p++;
      else if (*p == open)
        depth++;
      else if (*p == close && --depth == 0)
        return p + 1;
    }
  return p;
}

/* LaTeX cut into tokens as the model's vocabulary cuts it (docs/model.md):
 * control words, control symbols, \begin{env}, \left( and single characters;
 * arguments that draw nothing are skipped. */
/* The tokens of a reading; with starts, each one's byte offset too. */
static GPtrArray *
latex_tokens_at (const char *latex, GArray *starts)
{
  GPtrArray *out = g_ptr_array_new_with_free_func (g_free);
  const char *p = latex;

  while (p != NULL && *p)
    {
      const char *q = p;
      char *tok;

      if (g_ascii_isspace (*p))
        {
          p++;
          continue;
        }
      if (*p == '\\')
        {
          q = fm_reading_token_end (p);
          if (*q == '*' && (strncmp (p, "\\operatorname", 13) == 0 || strncmp (p, "\\tag", 4) == 0 ||
                            strncmp (p, "\\hspace", 7) == 0))
            q++;
          tok = g_strndup (p, q - p);
          if (strcmp (tok, "\\begin") == 0 || strcmp (tok, "\\end") == 0)
            {
              const char *e = q;
              while (g_ascii_isspace (*e))
                e++;
              if (*e == '{' && strchr (e, '}') != NULL)
                {
                  g_autofree char *env = g_strndup (e, strchr (e, '}') + 1 - e);
                  char *t = g_strconcat (tok, env, NULL);
                  g_free (tok);
                  tok = t;
                  q = strchr (e, '}') + 1;
                }
            }
          else if (strcmp (tok, "\\left") == 0 || strcmp (tok, "\\right") == 0 ||
                   strcmp (tok, "\\middle") == 0)
            {
              /* \left. draws nothing: one token */
              const char *e = q;
              while (g_ascii_isspace (*e))
                e++;
              if (*e == '.')
                {
                  char *t = g_strconcat (tok, ".", NULL);
                  g_free (tok);
                  tok = t;
                  q = e + 1;
                }
            }
          else if (strcmp (tok, "\\kern") == 0 || strcmp (tok, "\\mkern") == 0 ||
                   strcmp (tok, "\\hskip") == 0)
            {
              /* \mkern3mu: a number and a unit */
              while (*q && (g_ascii_isdigit (*q) || *q == '.' || *q == '-' || g_ascii_isspace (*q)))
                q++;
              for (int k = 0; k < 2 && g_ascii_isalpha (*q); k++)
                q++;
            }
          if (skips_argument (tok))
            {
              /* \rule[raise]{width}{height}: three groups */
              int groups = strcmp (tok, "\\rule") == 0 ? 3 : 1;
              for (int k = 0; k < groups; k++)
                q = skip_group (q);
            }
        }
      else
        {
          q = fm_reading_token_end (p);
          tok = g_strndup (p, q - p);
        }
      if (starts != NULL)
        {
          gsize at = (gsize) (p - latex);
          g_array_append_val (starts, at);
        }
      g_ptr_array_add (out, tok);
      p = q;
    }
  return out;
}

static GPtrArray *
latex_tokens (const char *latex)
{
  return latex_tokens_at (latex, NULL);
}

static int
compare_strings (gconstpointer a, gconstpointer b)
{
  return strcmp (*(const char *const *) a, *(const char *const *) b);
}

static GPtrArray *latex_symbols_in_order (const char *latex);
static guint count_unknown (GPtrArray *symbols);

GPtrArray *
fm_recognize_latex_symbols (const char *latex)
{
  GPtrArray *out = latex_symbols_in_order (latex);

  g_ptr_array_sort (out, compare_strings);
  return out;
}

/* fm_recognize_latex_symbols in reading order. */
static GPtrArray *
latex_symbols_in_order (const char *latex)
{
  /* Spellings of one glyph (or glyph pair) beyond the engine's aliases. */
  static const char *const same[][3] = {
    { "\\neq", "\\not", "=" }, { "\\notin", "\\not", "\\in" }, { "\\dots", "\\ldots", NULL },
    { "\\dotsc", "\\ldots", NULL }, { "\\dotso", "\\ldots", NULL }, { "\\dotsb", "\\cdots", NULL },
    { "\\dotsm", "\\cdots", NULL }, { "\\dotsi", "\\cdots", NULL }, { "\\mid", "|", NULL },
    { "\\colon", ":", NULL }, { "\\ast", "*", NULL }, { "\\lbrack", "[", NULL },
    { "\\rbrack", "]", NULL }, { "\\widehat", "\\hat", NULL }, { "\\widetilde", "\\tilde", NULL },
    { "\\cdotp", "\\cdot", NULL }, { "\\owns", "\\ni", NULL }, { "\\bmod", NULL, NULL },
    { "\\mod", NULL, NULL },
  };
  g_autoptr(GPtrArray) tokens = latex_tokens (latex);
  GPtrArray *out = g_ptr_array_new_with_free_func (g_free);

  /* Structure that draws delimiters. */
  static const char *const drawn[][3] = {
    { "\\binom", "(", ")" }, { "\\dbinom", "(", ")" }, { "\\tbinom", "(", ")" },
    { "\\choose", "(", ")" }, { "\\begin{pmatrix}", "(", ")" }, { "\\begin{bmatrix}", "[", "]" },
    { "\\begin{Bmatrix}", "\\{", "\\}" }, { "\\begin{vmatrix}", "|", "|" },
    { "\\begin{Vmatrix}", "\\|", "\\|" }, { "\\begin{cases}", "\\{", NULL },
    { "\\begin{dcases}", "\\{", NULL }, { "\\begin{rcases}", "\\}", NULL },
  };
  for (guint i = 0; i < tokens->len; i++)
    {
      const char *sym = fe_token_symbol (tokens->pdata[i]);
      gboolean done = FALSE;

      for (gsize k = 0; k < G_N_ELEMENTS (drawn); k++)
        if (strcmp (tokens->pdata[i], drawn[k][0]) == 0)
          for (int j = 1; j < 3 && drawn[k][j] != NULL; j++)
            g_ptr_array_add (out, g_strdup (drawn[k][j]));
      if (sym == NULL)
        continue;
      /* An operator name is its letters: \sin, \operatorname{sin} and
       * \mathrm{sin} draw the same glyphs. \pmod draws its parentheses. */
      if (sym[0] == '\\' && (fm_mathtext_is_operator_word (sym + 1) || strcmp (sym, "\\bmod") == 0 ||
                             strcmp (sym, "\\pmod") == 0 || strcmp (sym, "\\mod") == 0))
        {
          const char *w = sym[1] == 'b' || sym[1] == 'p' ? (sym[1] == 'b' ? "mod" : "(mod)") : sym + 1;
          if (strcmp (sym, "\\mod") == 0)
            w = "mod";
          for (const char *c = w; *c; c++)
            g_ptr_array_add (out, g_strndup (c, 1));
          continue;
        }
      for (gsize k = 0; k < G_N_ELEMENTS (same) && !done; k++)
        if (strcmp (sym, same[k][0]) == 0)
          {
            for (int j = 1; j < 3 && same[k][j] != NULL; j++)
              g_ptr_array_add (out, g_strdup (same[k][j]));
            done = TRUE;
          }
      if (!done)
        g_ptr_array_add (out, g_strdup (sym));
    }
  /* A display's sentence punctuation may or may not be in the reading (the
   * detected box leaves it out, the widened crop shows it). */
  while (out->len > 0)
    {
      const char *last = out->pdata[out->len - 1];
      if (strcmp (last, ".") != 0 && strcmp (last, ",") != 0 && strcmp (last, ";") != 0)
        break;
      g_ptr_array_remove_index (out, out->len - 1);
    }
  return out;
}

/* The model's reading is the glyphs' with symbols left out inside it: its
 * symbols, in order, are a subsequence of the glyphs' one line, starting and
 * ending with the same symbols. An autoregressive decoder skips a stretch of
 * a long formula ("(p+s_{0}e_{m})" for "(p+s_{0}e_{\ell}+t_{0}e_{m})",
 * development seed 1010, on three font set-ups); a box that took in words
 * of the sentence (\text{...}) or of a neighbouring line (a second line,
 * glyphs at its start or end) is not this. */
static gboolean
skipped_inside (const char *model, const char *text)
{
  g_autoptr(GPtrArray) m = NULL;
  g_autoptr(GPtrArray) t = NULL;
  guint i = 0;

  if (model == NULL || text == NULL || strstr (text, "\\\\") != NULL || strstr (text, "\\text{") != NULL)
    return FALSE;
  m = latex_symbols_in_order (model);
  t = latex_symbols_in_order (text);
  if (m->len == 0 || m->len >= t->len || count_unknown (t) > 0 ||
      strcmp (m->pdata[0], t->pdata[0]) != 0 || strcmp (m->pdata[m->len - 1], t->pdata[t->len - 1]) != 0)
    return FALSE;
  for (guint j = 0; j < t->len && i < m->len; j++)
    if (strcmp (m->pdata[i], t->pdata[j]) == 0)
      i++;
  return i == m->len;
}

static gboolean
is_space_token (const char *tok)
{
  static const char *const spaces[] = { "\\,", "\\ ", "\\;", "\\:", "~", "\\quad", "\\qquad", NULL };

  return g_strv_contains (spaces, tok);
}

/* The index of the token after an upright word of two letters or more
 * that a reading starts with (one of words, then {letters}; TeX's small
 * spaces inside it are skipped), 0 when it starts otherwise. */
static guint
leading_word (GPtrArray *m, const char *const *words)
{
  guint k, letters = 0;

  if (m->len < 4 || !g_strv_contains (words, m->pdata[0]) || strcmp (m->pdata[1], "{") != 0)
    return 0;
  for (k = 2; k < m->len && strcmp (m->pdata[k], "}") != 0; k++)
    {
      const char *tok = m->pdata[k];
      if (strcmp (tok, "\\!") == 0 || strcmp (tok, "\\,") == 0 || strcmp (tok, "\\ ") == 0 || strcmp (tok, "~") == 0)
        continue;
      if (strlen (tok) != 1 || !g_ascii_isalpha (tok[0]))
        return 0;
      letters++;
    }
  if (k + 1 >= m->len || letters < 2)
    return 0;
  return k + 1;
}

static const char *const word_commands[] = { "\\operatorname", "\\text", "\\mathrm", "\\textrm", "\\textup", NULL };

/* The model's reading without a word it starts with (\operatorname{Have},
 * \text{thus}, \mathrm{you}: two letters or more) when the rest has the
 * glyphs' symbols: the reader left that word out as the sentence's, which
 * the detector's box took in (fm-mathtext.c drop_leading_word; development
 * seed 1100 lost "f=qP", "y(x,0)", "y'=x+y-1" to it on fourier, libertine
 * and Libertinus). NULL otherwise. */
static char *
without_leading_word (const char *model, const char *text)
{
  g_autoptr(GArray) at = g_array_new (FALSE, FALSE, sizeof (gsize));
  g_autoptr(GPtrArray) m = NULL;
  guint k;
  const char *rest;

  if (model == NULL || text == NULL)
    return NULL;
  m = latex_tokens_at (model, at);
  k = leading_word (m, word_commands);
  if (k == 0)
    return NULL;
  rest = model + g_array_index (at, gsize, k);
  while (*rest == ' ' || *rest == '~' || (rest[0] == '\\' && (rest[1] == ' ' || rest[1] == ',' || rest[1] == ';')))
    rest += rest[0] == '\\' ? 2 : 1;
  if (*rest == '\0' || fm_recognize_symbol_distance (rest, text) != 0)
    return NULL;
  return g_strdup (rest);
}

/* The sentence's word that the detector's box took in, where the reader
 * kept it: the model spells it as a word of text set apart by a space
 * (\text{more}\,g_{k}(\zeta)=..., development seed 1103, four times on
 * libertine, whose word space of 0.19-0.20 em is too close to TeX's thin
 * space after an operator for fm-mathtext.c's drop_leading_word, and once
 * on Times), and the glyphs' reading starts with an upright word. In the
 * corpus (../shared, 146k formulas) 4 formulas start with a word and a
 * spacing command, all four \operatorname{Re}\, z-like, which is why
 * \operatorname does not count here. TRUE with both readings' rests
 * (newly allocated) when they agree. */
static gboolean
without_spaced_word (const char *model, const char *text, char **model_rest, char **text_rest)
{
  g_autoptr(GArray) mat = g_array_new (FALSE, FALSE, sizeof (gsize));
  g_autoptr(GArray) tat = g_array_new (FALSE, FALSE, sizeof (gsize));
  g_autoptr(GPtrArray) m = NULL;
  g_autoptr(GPtrArray) t = NULL;
  guint k, j;

  if (model == NULL || text == NULL)
    return FALSE;
  m = latex_tokens_at (model, mat);
  k = leading_word (m, word_commands + 1);   /* not \operatorname */
  if (k == 0 || !is_space_token (m->pdata[k]))
    return FALSE;
  while (k < m->len && is_space_token (m->pdata[k]))
    k++;
  t = latex_tokens_at (text, tat);
  j = leading_word (t, word_commands);
  if (k >= m->len || j == 0 ||
      fm_recognize_symbol_distance (model + g_array_index (mat, gsize, k), text + g_array_index (tat, gsize, j)) != 0)
    return FALSE;
  *model_rest = g_strdup (model + g_array_index (mat, gsize, k));
  *text_rest = g_strdup (text + g_array_index (tat, gsize, j));
  return TRUE;
}

/* English function words (articles, prepositions, conjunctions, pronouns,
 * quantifiers, auxiliaries): the sentence's, never a formula's first word.
 * Of the corpus's 123k inline formulas (../shared) 1198 start with an upright
 * word of two letters or more, all operator-like (pr, id, depth, length, gr,
 * trdeg, div, ord ... rank, span, can 3 times, so not "can") or a physics
 * quantity (heat, efficiency); none with one of these. fm-detect.c's
 * prose_function_word is the detector's list, kept apart on purpose: it has
 * "can", "may", "see", "via" ..., which start formulas here. */
static gboolean
is_function_word (const char *word)
{
  static const char *const words[] = {
    "an", "the", "and", "or", "but", "nor", "so", "yet", "if", "then", "else", "of", "on", "in", "at",
    "by", "for", "from", "to", "with", "without", "into", "onto", "over", "under", "as", "is", "are",
    "was", "were", "be", "been", "being", "has", "have", "had", "do", "does", "did", "we", "you", "they",
    "he", "she", "it", "its", "our", "their", "his", "her", "this", "that", "these", "those", "there",
    "here", "where", "when", "which", "while", "whose", "who", "all", "any", "each", "every", "many",
    "more", "most", "much", "some", "such", "no", "not", "only", "also", "thus", "hence", "let", "since",
    "because", "both", "either", "neither", "than", "very", "what", "how", "now", "well", NULL,
  };
  g_autofree char *lower = g_ascii_strdown (word, -1);

  return g_strv_contains (words, lower);
}

/* The reading without the sentence's function word it starts with
 * (\text{on}\tilde{\gamma}_{i}=0, \text{many}c\in(1,2): development seed
 * 1106, libertine, where the word space is as narrow as a thin space and
 * the detector's box took the word in; whichever reading was chosen kept
 * it). NULL when it does not start with one or nothing follows. */
static char *
without_sentence_word (const char *latex)
{
  g_autoptr(GArray) at = g_array_new (FALSE, FALSE, sizeof (gsize));
  g_autoptr(GPtrArray) m = latex_tokens_at (latex, at);
  g_autoptr(GString) word = g_string_new (NULL);
  guint k = leading_word (m, word_commands);

  if (k == 0)
    return NULL;
  for (guint i = 2; i + 1 < k; i++)
    if (g_ascii_isalpha (((const char *) m->pdata[i])[0]))
      g_string_append (word, m->pdata[i]);
  if (!is_function_word (word->str))
    return NULL;
  while (k < m->len && is_space_token (m->pdata[k]))
    k++;
  if (k >= m->len)
    return NULL;
  return g_strdup (latex + g_array_index (at, gsize, k));
}

static guint
count_unknown (GPtrArray *symbols)
{
  guint n = 0;

  /* the reader writes a glyph without a meaning as "?" */
  for (guint i = 0; i < symbols->len; i++)
    n += strcmp (symbols->pdata[i], "?") == 0;
  return n;
}

guint
fm_recognize_symbol_distance (const char *a, const char *b)
{
  g_autoptr(GPtrArray) sa = fm_recognize_latex_symbols (a);
  g_autoptr(GPtrArray) sb = fm_recognize_latex_symbols (b);
  guint i = 0, j = 0, only_a = 0, only_b = 0;
  guint unknown_a = count_unknown (sa), unknown_b = count_unknown (sb);

  while (i < sa->len || j < sb->len)
    {
      int c = i == sa->len ? 1 : j == sb->len ? -1 : strcmp (sa->pdata[i], sb->pdata[j]);
      if (c == 0)
        i++, j++;
      else if (c < 0)
        only_a += strcmp (sa->pdata[i++], "?") != 0;
      else
        only_b += strcmp (sb->pdata[j++], "?") != 0;
    }
  /* An unknown glyph ("?", a code without Unicode meaning) stands for any
   * one symbol of the other reading. */
  only_a -= MIN (only_a, unknown_b);
  only_b -= MIN (only_b, unknown_a);
  return only_a + only_b;
}

static gboolean
is_sentence_punct (const char *token)
{
  return strcmp (token, ".") == 0 || strcmp (token, ",") == 0 || strcmp (token, ";") == 0;
}

/* Spacing at the end of a reading draws nothing: "x\\,." and "t\\ ." lose it
 * with their period (the model's "\\ ." before a period the page does not
 * have had left a lone backslash, seed 1010). */
static void
strip_trailing_space (char *stem)
{
  static const char *const sp[] = { "\\,", "\\;", "\\:", "\\!", "\\ ", "\\quad", "\\qquad", "~", NULL };

  for (gboolean again = TRUE; again;)
    {
      gsize n;

      again = FALSE;
      /* "\\ " is a control space: not chomped as white space */
      n = strlen (stem);
      while (n > 0 && g_ascii_isspace (stem[n - 1]) && !(n > 1 && stem[n - 2] == '\\' && !(n > 2 && stem[n - 3] == '\\')))
        stem[--n] = '\0';
      for (const char *const *q = sp; *q; q++)
        if (g_str_has_suffix (stem, *q) && !(n > strlen (*q) && stem[n - strlen (*q) - 1] == '\\'))
          {
            stem[n - strlen (*q)] = '\0';
            again = TRUE;
            break;
          }
    }
}

/* The glyphs' punctuation is their last drawn token: the reader may set
 * it inside a group ("_{=L.}", "\\end{aligned}" after it). NULL when
 * their last drawn token is not sentence punctuation. */
static const char *
last_drawn_punct (GPtrArray *t)
{
  for (guint k = t->len; k > 0; k--)
    if (fe_token_symbol (t->pdata[k - 1]) != NULL)
      return is_sentence_punct (t->pdata[k - 1]) ? t->pdata[k - 1] : NULL;
  return NULL;
}

/* The reading with the sentence punctuation the glyphs have at its end:
 * the model, trained on formulas that often end in one, writes a period the
 * page does not have and misses one beside a display's box. NULL when
 * nothing changes. */
static char *
with_glyphs_punctuation (const char *model, const char *text)
{
  g_autoptr(GPtrArray) m = latex_tokens (model);
  g_autoptr(GPtrArray) t = latex_tokens (text);
  const char *want = last_drawn_punct (t);
  const char *have = m->len > 0 && is_sentence_punct (m->pdata[m->len - 1]) ? m->pdata[m->len - 1] : NULL;
  g_autofree char *stem = NULL;
  gsize end;

  if (g_strcmp0 (want, have) == 0)
    return NULL;
  /* The model's period inside its environment ("x.\end{aligned}"): the
   * page's one beside the box is the same glyph, not a second one. */
  if (want != NULL && have == NULL)
    {
      guint k = m->len;
      /* closing braces, \end{...}, \right., spacing: nothing drawn */
      while (k > 0 && fe_token_symbol (m->pdata[k - 1]) == NULL)
        k--;
      if (k > 0 && k < m->len && strcmp (m->pdata[k - 1], want) == 0)
        return NULL;
    }
  stem = g_strdup (model);
  end = strlen (stem);
  if (have != NULL)
    {
      /* the punctuation and the space before it ("x\,.") */
      const char *last = strrchr (stem, have[0]);
      end = last != NULL ? (gsize) (last - stem) : end;
      stem[end] = '\0';
      strip_trailing_space (stem);
    }
  return g_strconcat (stem, want != NULL ? want : "", NULL);
}

static const char *const delimiter_sizes[] = {
  "\\bigl", "\\bigr", "\\bigm", "\\big", "\\Bigl", "\\Bigr", "\\Bigm", "\\Big", "\\biggl",
  "\\biggr", "\\biggm", "\\bigg", "\\Biggl", "\\Biggr", "\\Biggm", "\\Bigg", NULL,
};

/* Delimiters drawn larger than their normal glyph: \left( ... \right) (not
 * \left.), \bigl( and its kin. */
static guint
count_sized (const char *latex)
{
  g_autoptr(GPtrArray) t = latex_tokens (latex);
  guint n = 0;

  for (guint i = 0; i < t->len; i++)
    {
      const char *tok = t->pdata[i];
      /* latex_tokens keeps "\left." whole, so a bare \left has a delimiter */
      if (strcmp (tok, "\\left") == 0 || strcmp (tok, "\\right") == 0 || strcmp (tok, "\\middle") == 0 ||
          g_strv_contains (delimiter_sizes, tok))
        n++;
    }
  return n;
}

/* How often token tok stands in a reading. */
static guint
count_token (const char *latex, const char *tok)
{
  g_autoptr(GPtrArray) t = latex_tokens (latex);
  guint n = 0;

  for (guint i = 0; i < t->len; i++)
    n += strcmp (t->pdata[i], tok) == 0;
  return n;
}

/* \left and \right (not \left.) in a reading. */
static guint
count_left (const char *latex)
{
  g_autoptr(GPtrArray) t = latex_tokens (latex);
  guint n = 0;

  for (guint i = 0; i < t->len; i++)
    n += strcmp (t->pdata[i], "\\left") == 0 || strcmp (t->pdata[i], "\\right") == 0;
  return n;
}

/* The model's reading without \big, \Bigl ... sizes when the glyphs' reading
 * has no sized delimiter: the reader writes \left( for every delimiter from
 * an extension font (pdfLaTeX's \bigl( is CMEX) or taller than 1.05 em (an
 * OpenType size variant), so an agreeing reading whose delimiters are all
 * normal glyphs was set without \big (the model writes \bigl\{ for a plain
 * \{: 13 of the 43 confident-and-wrong agreeing readings of development seed
 * 412). NULL when nothing changes. */
static char *
without_sizes (const char *model, const char *text)
{
  g_autoptr(GPtrArray) t = latex_tokens (text);
  g_autoptr(GString) out = NULL;
  gboolean changed = FALSE;
  const char *p = model;

  /* an unknown glyph ("?") may be a sized delimiter the reader could not
   * name (fourier's extension font): then nothing is known of sizes */
  for (guint i = 0; i < t->len; i++)
    if (count_sized (t->pdata[i]) > 0 || strcmp (t->pdata[i], "?") == 0)
      return NULL;
  out = g_string_new (NULL);
  while (*p)
    {
      const char *q = p;
      if (*p == '\\' && g_ascii_isalpha (p[1]))
        {
          q = p + 1;
          while (g_ascii_isalpha (*q))
            q++;
          {
            g_autofree char *word = g_strndup (p, q - p);
            if (g_strv_contains (delimiter_sizes, word))
              {
                changed = TRUE;
                while (*q == ' ')
                  q++;
                p = q;
                continue;
              }
          }
          g_string_append_len (out, p, q - p);
          p = q;
          continue;
        }
      if (*p == '\\' && p[1] != '\0')
        {
          g_string_append_len (out, p, 2);
          p += 2;
          continue;
        }
      g_string_append_c (out, *p++);
    }
  return changed ? g_string_free (g_steal_pointer (&out), FALSE) : NULL;
}

/* Opening and closing delimiters in equal numbers. A formula the detector
 * cut off leaves one open ("g\\in(f_{1},\\ldots", "\\Gamma(Z,i_{sm}^{-1}" on
 * fresh seeds 1003 and 1004, read by both readers alike and confident),
 * while half-open intervals ([0,1), ]a,b[) still count one of each. Bars
 * are not counted: |x| and \\|x\\| pair with themselves. */
static gboolean
delimiters_balance (GPtrArray *tokens)
{
  static const char *const open[] = {
    "(", "[", "\\{", "\\lbrace", "\\lbrack", "\\langle", "\\lfloor", "\\lceil", "\\left.", NULL,
  };
  static const char *const close[] = {
    ")", "]", "\\}", "\\rbrace", "\\rbrack", "\\rangle", "\\rfloor", "\\rceil", "\\right.", NULL,
  };
  int n = 0;
  gboolean text = FALSE;

  for (guint i = 0; i < tokens->len; i++)
    {
      const char *tok = tokens->pdata[i];
      /* a parenthesis in words ("\\text{(i)}") is typed, not cut: the
       * text's group is skipped */
      if (strcmp (tok, "\\text") == 0 || strcmp (tok, "\\mbox") == 0 || strcmp (tok, "\\textup") == 0 ||
          strcmp (tok, "\\textrm") == 0 || strcmp (tok, "\\textit") == 0 || strcmp (tok, "\\textbf") == 0)
        {
          text = TRUE;
          continue;
        }
      if (text && strcmp (tok, "{") == 0)
        {
          int depth = 0;
          for (; i < tokens->len; i++)
            {
              if (strcmp (tokens->pdata[i], "{") == 0)
                depth++;
              else if (strcmp (tokens->pdata[i], "}") == 0 && --depth == 0)
                break;
            }
          text = FALSE;
          continue;
        }
      text = FALSE;
      /* \\left| ... \\right| pair as \\left and \\right, whatever they draw */
      if (strcmp (tok, "\\left") == 0 || strcmp (tok, "\\right") == 0 || strcmp (tok, "\\middle") == 0)
        {
          n += tok[1] == 'l' ? 1 : tok[1] == 'r' ? -1 : 0;
          i++;
        }
      else if (g_strv_contains (open, tok))
        n++;
      else if (g_strv_contains (close, tok))
        n--;
    }
  return n == 0;
}

/* A reading that ends in a relation or binary operator ("\Omega\otimes",
 * "[0]\sim_{rat}"), starts with one other than a sign ("*x^{-1}=...") or
 * starts with a script that has no base, or leaves a delimiter open, is cut
 * or took in a neighbour (the detector's box lost a glyph at its edge or
 * took in a footnote mark), and every reading of it is wrong however sure. */
static gboolean
looks_cut (const char *latex)
{
  static const char *const binary[] = {
    "=", "<", ">", "\\leq", "\\geq", "\\neq", "\\sim", "\\simeq", "\\approx", "\\equiv", "\\cong",
    "\\to", "\\mapsto", "\\in", "\\subset", "\\subseteq", "\\supset", "\\supseteq", "\\times",
    "\\otimes", "\\oplus", "\\cdot", "*", "\\ast", "\\cup", "\\cap", "\\circ", "\\coloneqq",
    "\\Rightarrow", "\\Leftarrow", "\\Leftrightarrow", "\\Longrightarrow", "\\longrightarrow",
    "\\wedge", "\\vee", "\\ll", "\\gg", "\\propto", "\\setminus", "\\le", "\\ge", "\\ne",
    "\\rightarrow", "\\leftarrow", "\\implies", "\\iff", "\\perp", "\\mid", NULL,
  };
  static const char *const signs[] = { "+", "-", "\\pm", "\\mp", NULL };
  g_autoptr(GPtrArray) t = latex_tokens (latex);
  guint64 script_groups = 0;   /* bit d: the group at depth d+1 is a script */
  int depth = 0;
  gint first = -1, last = -1;

  /* The first and last things on the baseline: symbols at the top level
   * (not a script: "\sim_{rat}" ends in \sim) or a group that is not a
   * script (a fraction's or root's argument ends "v=\frac{x}{t}"). */
  for (guint i = 0; i < t->len; i++)
    {
      const char *tok = t->pdata[i];
      gboolean script = i > 0 && (strcmp (t->pdata[i - 1], "_") == 0 || strcmp (t->pdata[i - 1], "^") == 0);
      if (strcmp (tok, "{") == 0)
        {
          if (depth < 64)
            script_groups = script ? script_groups | (G_GUINT64_CONSTANT (1) << depth)
                                   : script_groups & ~(G_GUINT64_CONSTANT (1) << depth);
          depth++;
        }
      else if (strcmp (tok, "}") == 0)
        {
          depth = MAX (0, depth - 1);
          if (depth == 0 && !(script_groups & 1))
            {
              if (first < 0)
                first = (gint) i;
              last = (gint) i;
            }
        }
      else if (depth == 0 && !script && fe_token_symbol (tok) != NULL && !is_sentence_punct (tok))
        {
          if (first < 0)
            first = (gint) i;
          last = (gint) i;
        }
    }
  if (first < 0)
    return FALSE;
  if (!delimiters_balance (t))
    return TRUE;
  /* A script with no base ("^{1}\\operatorname{d}f/\\operatorname{d}x"): the
   * box took in the footnote mark of the word before it (seed 1010). */
  if (strcmp (t->pdata[0], "^") == 0 || strcmp (t->pdata[0], "_") == 0)
    return TRUE;
  return (g_strv_contains (binary, t->pdata[first]) && !g_strv_contains (signs, t->pdata[first])) ||
         g_strv_contains (binary, t->pdata[last]) || g_strv_contains (signs, t->pdata[last]);
}

/* How a reading's confidence follows from its agreement with the glyphs,
 * from the share of right readings (image match) per way of choosing and per
 * bin of the model's own confidence on bench/pdf-e2e's development seed 401
 * (bench/RESULTS.md):
 * - agreeing readings the model was at least half sure of were right about
 *   9 times in 10, whatever its confidence above that: they are lifted to
 *   0.8-1; below, the symbols are right but the layout is often not ({}_{x}^{2}
 *   for x^{2}), and the model's confidence stands;
 * - a reading that disagrees with the glyphs loses 0.15, so that only one
 *   the model is very sure of escapes the review flag (right 11 of 11 above
 *   0.9, 1 in 7 below 0.3);
 * - where the model disagrees with a CERTAIN glyph reading, that reading is
 *   taken, but both were often wrong (the reader's \mapsto, a lost rule):
 *   flagged. */
#define AGREE_SURE       0.5
#define CONF_TEXT        0.5
#define MODEL_LOST       0.1
#define DISAGREE_PENALTY 0.15

/* A cut reading (looks_cut) and a constrained one stay below the review flag. */
#define CONF_CUT         0.5
#define CONF_CONSTRAINED 0.5

static gboolean
is_delimiter_token (const char *tok)
{
  static const char *const delimiters[] = {
    "(", ")", "[", "]", "\\{", "\\}", "\\lbrace", "\\rbrace", "\\langle", "\\rangle", "\\lfloor",
    "\\rfloor", "\\lceil", "\\rceil", "|", "\\|", "\\vert", "\\Vert", "\\lvert", "\\rvert",
    "\\lVert", "\\rVert", "\\lbrack", "\\rbrack", NULL,
  };
  return g_strv_contains (delimiters, tok);
}

/* A reading rewritten in place, piece by piece: its tokens with each
 * one's byte offset and, from the first change on, the text so far. The
 * step every rewrite of a reading below shares. */
typedef struct
{
  const char *src;  /* the reading (not owned) */
  GPtrArray *toks;  /* its tokens */
  GArray *at;       /* the byte offset of each of toks in src */
  GString *out;     /* NULL while nothing has changed */
  gsize copied;     /* how much of src stands in out */
} Rewrite;

static void
rewrite_read (Rewrite *w, const char *src)
{
  w->src = src;
  w->at = g_array_new (FALSE, FALSE, sizeof (gsize));
  w->toks = latex_tokens_at (src, w->at);
}

static void
rewrite_clear (Rewrite *w)
{
  g_clear_pointer (&w->toks, g_ptr_array_unref);
  g_clear_pointer (&w->at, g_array_unref);
  if (w->out != NULL)
    g_string_free (g_steal_pointer (&w->out), TRUE);
}

G_DEFINE_AUTO_CLEANUP_CLEAR_FUNC (Rewrite, rewrite_clear)

/* Drops the bytes from..to of src: the text so far, src copied up to
 * from, for the caller to append what stands there instead. */
static GString *
rewrite_cut (Rewrite *w, gsize from, gsize to)
{
  if (w->out == NULL)
    w->out = g_string_new (NULL);
  g_string_append_len (w->out, w->src + w->copied, from - w->copied);
  w->copied = to;
  return w->out;
}

/* The rewritten reading; NULL when nothing was cut. */
static char *
rewrite_done (Rewrite *w)
{
  if (w->out == NULL)
    return NULL;
  g_string_append (w->out, w->src + w->copied);
  return g_string_free (g_steal_pointer (&w->out), FALSE);
}

/* The agreeing reading with the explicit sizes of the glyphs' delimiters
 * (\bigl[ ... \bigr], which the reader writes only where \left could not
 * have given that size, fm-mathtext.c explicit_size) where it wrote them at
 * normal size or with \left: development seed 1011 lost
 * "\frac{d}{dx}\bigl[\cos(x)\bigr]" and "\omega_{j}\bigl(\gamma(t)\bigr)" on seven
 * set-ups to the model's plain [ and (. The glyphs' \left and \right go
 * where the model wrote a plain delimiter: the reader writes them for a
 * taller glyph or for plain ones that TeX spaced as a \left pair's Inner
 * atom (fm-mathtext.c, line_inner_pairs: -k\left(x\right). read as the
 * model's -k(x). on every set-up of used seed 1060). Delimiters are paired
 * by order; when the two readings' delimiters differ, NULL (nothing
 * changes). */
static char *
with_glyphs_sizes (const char *model, const char *text)
{
  g_autoptr(GPtrArray) t = latex_tokens (text);
  g_autoptr(GPtrArray) want = g_ptr_array_new ();   /* per delimiter: size or NULL */
  g_auto (Rewrite) w = { 0 };
  GPtrArray *m;
  GArray *at;
  gboolean any = FALSE;
  guint d = 0;

  for (guint i = 0; i < t->len; i++)
    if (is_delimiter_token (t->pdata[i]))
      {
        const char *prev = i > 0 ? t->pdata[i - 1] : "";
        const char *size = g_strv_contains (delimiter_sizes, prev) || strcmp (prev, "\\left") == 0 ||
                           strcmp (prev, "\\right") == 0 ? prev : NULL;
        g_ptr_array_add (want, (gpointer) size);
        any |= size != NULL;
      }
  if (!any)
    return NULL;
  rewrite_read (&w, model);
  m = w.toks;
  at = w.at;
  for (guint i = 0; i < m->len; i++)
    {
      const char *prev = i > 0 ? m->pdata[i - 1] : NULL;
      const char *size;
      gsize from;

      if (!is_delimiter_token (m->pdata[i]))
        continue;
      if (d >= want->len)
        return NULL;
      size = want->pdata[d++];
      if (size == NULL)
        continue;
      /* the model's own size stays: a lone bar's ink height says its step
       * only against the body's em, which an inline region of script-size
       * fraction parts does not show (\frac{\partial}{\partial\bar{z}_{k}}\big|_{p}
       * inline at 11 pt reads \Big|: development seed 1124, four set-ups) */
      if (prev != NULL && g_strv_contains (delimiter_sizes, prev))
        continue;
      /* a \left the model wrote stays; "(" -> "\left(" */
      if ((strcmp (size, "\\left") == 0 || strcmp (size, "\\right") == 0) && prev != NULL &&
          (strcmp (prev, "\\left") == 0 || strcmp (prev, "\\right") == 0))
        continue;
      /* "(" or "\left(" -> "\bigl(" */
      from = prev != NULL && (strcmp (prev, "\\left") == 0 || strcmp (prev, "\\right") == 0)
             ? g_array_index (at, gsize, i - 1) : g_array_index (at, gsize, i);
      g_string_append (rewrite_cut (&w, from, g_array_index (at, gsize, i)), size);
    }
  if (d != want->len)
    return NULL;
  return rewrite_done (&w);
}

/* Whether the reading's i-th token, a delimiter, is drawn sized: after
 * \left, \right, \middle or \bigl and its kin. */
static gboolean
is_sized_at (GPtrArray *t, guint i)
{
  const char *prev = i > 0 ? t->pdata[i - 1] : NULL;

  return prev != NULL && (strcmp (prev, "\\left") == 0 || strcmp (prev, "\\right") == 0 ||
                          strcmp (prev, "\\middle") == 0 || g_strv_contains (delimiter_sizes, prev));
}

/* The agreeing reading without the \left and \right of a pair whose glyphs
 * are both drawn at normal size (the reader writes \left for an extension
 * font's glyph or one taller than 1.05 em, fm-mathtext.c): \left( around
 * flat content draws the normal glyph, so both spellings draw the same, and
 * the corpus (../shared) writes flat content in plain ( [ \{ 34000, 4300
 * and 1600 times against 52, 16 and 4 in \left pairs. The 2026-11-27 model
 * writes `\left[t\right]` for [t] and `\left\{` (seed 1030). Around taller
 * content a normal glyph says the author typed no \left at all. Delimiters
 * pair by order; where the readings' delimiters differ, or a glyph is
 * unknown (?), or the pair holds a \middle, NULL (nothing changes). */
static char *
without_unsized_left (const char *model, const char *text)
{
  g_autoptr(GPtrArray) t = latex_tokens (text);
  g_autoptr(GArray) td = g_array_new (FALSE, FALSE, sizeof (guint));   /* text's delimiters */
  g_autoptr(GArray) md = g_array_new (FALSE, FALSE, sizeof (guint));   /* model's */
  g_autofree gboolean *drop = NULL;
  g_auto (Rewrite) w = { 0 };
  GPtrArray *m;
  gboolean changed = FALSE;

  if (strstr (model, "\\left") == NULL)
    return NULL;
  rewrite_read (&w, model);
  m = w.toks;
  drop = g_new0 (gboolean, m->len + 1);
  for (guint i = 0; i < t->len; i++)
    if (strcmp (t->pdata[i], "?") == 0)
      return NULL;
    else if (is_delimiter_token (t->pdata[i]))
      g_array_append_val (td, i);
  for (guint i = 0; i < m->len; i++)
    if (is_delimiter_token (m->pdata[i]))
      g_array_append_val (md, i);
  if (td->len != md->len)
    return NULL;
  for (guint d = 0; d < md->len; d++)
    if (strcmp (t->pdata[g_array_index (td, guint, d)], m->pdata[g_array_index (md, guint, d)]) != 0)
      return NULL;
  for (guint d = 0; d < md->len; d++)
    {
      guint i = g_array_index (md, guint, d), e = d;
      int depth = 0;
      gboolean middle = FALSE;

      if (i == 0 || strcmp (m->pdata[i - 1], "\\left") != 0 || is_sized_at (t, g_array_index (td, guint, d)))
        continue;
      /* its \right: the next one at this depth (\left. and \right. count) */
      for (guint j = i + 1; j < m->len; j++)
        {
          const char *tok = m->pdata[j];
          if (strcmp (tok, "\\left") == 0 || strcmp (tok, "\\left.") == 0)
            depth++;
          else if ((strcmp (tok, "\\middle") == 0 || strcmp (tok, "\\middle.") == 0) && depth == 0)
            middle = TRUE;
          else if ((strcmp (tok, "\\right") == 0 || strcmp (tok, "\\right.") == 0) && depth-- == 0)
            {
              /* its delimiter's index among the model's */
              for (e = d + 1; e < md->len && g_array_index (md, guint, e) <= j; e++)
                ;
              if (strcmp (tok, "\\right") != 0 || e >= md->len || g_array_index (md, guint, e) != j + 1)
                e = d;
              break;
            }
        }
      if (e == d || middle || is_sized_at (t, g_array_index (td, guint, e)))
        continue;
      drop[i - 1] = drop[g_array_index (md, guint, e) - 1] = TRUE;
      changed = TRUE;
    }
  if (!changed)
    return NULL;
  for (guint i = 0; i < m->len; i++)
    if (drop[i])
      rewrite_cut (&w, g_array_index (w.at, gsize, i), g_array_index (w.at, gsize, i + 1));
  return rewrite_done (&w);
}

static const char *const limits_operators[] = {
  "\\sum", "\\prod", "\\coprod", "\\bigoplus", "\\bigotimes", "\\bigodot", "\\bigcup", "\\bigcap",
  "\\biguplus", "\\bigsqcup", "\\bigvee", "\\bigwedge", NULL,
};

/* The big operators of the glyphs' tokens t paired by order with the
 * model's m: each pair's model index in pairs (one per glyph operator), or
 * FALSE where the operators differ. */
static gboolean
paired_operators (GPtrArray *t, GPtrArray *m, GArray *pairs)
{
  guint j = 0;

  for (guint i = 0; i < t->len; i++)
    {
      if (!g_strv_contains (limits_operators, t->pdata[i]))
        continue;
      while (j < m->len && !g_strv_contains (limits_operators, m->pdata[j]))
        j++;
      if (j == m->len || strcmp (m->pdata[j], t->pdata[i]) != 0)
        return FALSE;
      g_array_append_val (pairs, j);
      j++;
    }
  while (j < m->len && !g_strv_contains (limits_operators, m->pdata[j]))
    j++;
  return j == m->len;
}

/* The token after index i, or "". */
static const char *
token_after (GPtrArray *toks, guint i)
{
  return i + 1 < toks->len ? toks->pdata[i + 1] : "";
}

/* The agreeing reading with the glyphs' \nolimits: in a display the reader
 * writes \sum\nolimits_{j} where the display-size operator's scripts stand
 * beside it (fm-mathtext.c line_nolimits); the model's \sum_{j} or
 * \sum\limits_{j} would draw them above and below (\sum\nolimits_{j\in
 * E_{k}} lost on five set-ups of development seed 1124; a model's \limits
 * there was kept, confident). Likewise the glyphs' \limits: inline, a
 * text-size operator with its limits above and below (fm-mathtext.c
 * note_inline_limits), which the model's \sum_{j} would set beside it.
 * The operators pair by order; where they differ, NULL (nothing changes).
 * Never removed here: inline, the glyphs' \sum_{j} and \sum\nolimits_{j}
 * draw the same (unseen_nolimits). */
static char *
with_glyphs_nolimits (const char *model, const char *text)
{
  g_autoptr(GPtrArray) t = NULL;
  g_autoptr(GArray) pairs = NULL;
  g_auto (Rewrite) w = { 0 };
  GPtrArray *m;
  guint n = 0;

  if (strstr (text, "limits") == NULL)
    return NULL;
  t = latex_tokens (text);
  rewrite_read (&w, model);
  m = w.toks;
  pairs = g_array_new (FALSE, FALSE, sizeof (guint));
  if (!paired_operators (t, m, pairs))
    return NULL;
  for (guint i = 0; i < t->len; i++)
    {
      guint j;
      const char *after, *want;
      gsize end, skip;

      if (!g_strv_contains (limits_operators, t->pdata[i]))
        continue;
      j = g_array_index (pairs, guint, n++);
      after = token_after (m, j);
      want = token_after (t, i);
      if ((strcmp (want, "\\nolimits") != 0 && strcmp (want, "\\limits") != 0) || strcmp (after, want) == 0)
        continue;
      end = skip = g_array_index (w.at, gsize, j) + strlen (m->pdata[j]);
      /* the model's other one goes: the glyphs saw where the scripts are */
      if (strcmp (after, "\\limits") == 0 || strcmp (after, "\\nolimits") == 0)
        skip = g_array_index (w.at, gsize, j + 1) + strlen (after);
      g_string_append (rewrite_cut (&w, end, skip), want);
    }
  return rewrite_done (&w);
}

/* Whether a reading writes \nolimits on an operator the glyphs read with
 * scripts and without it. In a display the glyphs then saw the limits
 * above and below and the reading is wrong; inline both draw the same and
 * the strings cannot tell the two apart, so the reading is not rewritten,
 * only flagged (the choice is no sure agreement). */
static gboolean
unseen_nolimits (const char *latex, const char *text)
{
  g_autoptr(GPtrArray) t = NULL;
  g_autoptr(GPtrArray) m = NULL;
  g_autoptr(GArray) pairs = NULL;
  guint n = 0;

  if (strstr (latex, "\\nolimits") == NULL)
    return FALSE;
  t = latex_tokens (text);
  m = latex_tokens (latex);
  pairs = g_array_new (FALSE, FALSE, sizeof (guint));
  if (!paired_operators (t, m, pairs))
    return FALSE;
  for (guint i = 0; i < t->len; i++)
    {
      const char *after;

      if (!g_strv_contains (limits_operators, t->pdata[i]))
        continue;
      after = token_after (t, i);
      if (strcmp (token_after (m, g_array_index (pairs, guint, n++)), "\\nolimits") == 0 &&
          (strcmp (after, "_") == 0 || strcmp (after, "^") == 0))
        return TRUE;
    }
  return FALSE;
}

static gboolean
is_script_letter (GPtrArray *toks, guint i)
{
  const char *tok = toks->pdata[i];

  return i + 2 < toks->len && (strcmp (tok, "\\mathcal") == 0 || strcmp (tok, "\\mathscr") == 0) &&
         strcmp (toks->pdata[i + 1], "{") == 0;
}

static gboolean
is_colon (GPtrArray *toks, guint i)
{
  return strcmp (toks->pdata[i], ":") == 0 || strcmp (toks->pdata[i], "\\colon") == 0;
}

/* The step the glyph respellings below share: both readings' tokens (the
 * model's with each one's byte offset, to rewrite it in place) and the
 * tokens of one class in each, paired by order. */
typedef struct
{
  Rewrite model;  /* the model's reading, its tokens model.toks */
  GPtrArray *t;   /* the glyphs' reading's tokens */
  GArray *want;   /* the indices in t of the class's tokens */
  GArray *got;    /* the same in model.toks: want[k] pairs with got[k] */
} TokenPairs;

static void
token_pairs_clear (TokenPairs *p)
{
  rewrite_clear (&p->model);
  g_clear_pointer (&p->t, g_ptr_array_unref);
  g_clear_pointer (&p->want, g_array_unref);
  g_clear_pointer (&p->got, g_array_unref);
}

G_DEFINE_AUTO_CLEANUP_CLEAR_FUNC (TokenPairs, token_pairs_clear)

/* Reads both readings into p (cleared by token_pairs_clear) and pairs the
 * tokens in_class holds. FALSE when the glyphs have none or the counts
 * differ (the readings do not pair up); the tokens are read either way. */
static gboolean
token_pairs_read (TokenPairs *p, const char *model, const char *text, gboolean (*in_class) (GPtrArray *, guint))
{
  p->t = latex_tokens (text);
  rewrite_read (&p->model, model);
  p->want = g_array_new (FALSE, FALSE, sizeof (guint));
  p->got = g_array_new (FALSE, FALSE, sizeof (guint));
  for (guint i = 0; i < p->t->len; i++)
    if (in_class (p->t, i))
      g_array_append_val (p->want, i);
  for (guint i = 0; i < p->model.toks->len; i++)
    if (in_class (p->model.toks, i))
      g_array_append_val (p->got, i);
  return p->want->len > 0 && p->want->len == p->got->len;
}

/* One respelling's own check of a pair, the glyphs' token t[ti] and the
 * model's m[mi]: FALSE where the pair shows the readings differ (nothing
 * is respelt then); else *edit is set to the model token's new spelling,
 * or left NULL to keep it. data is the respelling's own. */
typedef gboolean (*PairSpelling) (GPtrArray *t, guint ti, GPtrArray *m, guint mi, gconstpointer data,
                                   const char **edit);

/* The model's reading with each pair's model token spelt as spell says
 * (a control word keeps a space before a letter: "\colon I", not
 * "\colonI"); NULL when spell refuses a pair or nothing changes. */
static char *
token_pairs_respelled (TokenPairs *p, PairSpelling spell, gconstpointer data)
{
  Rewrite *w = &p->model;

  for (guint k = 0; k < p->got->len; k++)
    {
      guint mi = g_array_index (p->got, guint, k);
      gsize from = g_array_index (w->at, gsize, mi);
      const char *edit = NULL;
      GString *out;

      if (!spell (p->t, g_array_index (p->want, guint, k), w->toks, mi, data, &edit))
        return NULL;
      if (edit == NULL)
        continue;
      out = rewrite_cut (w, from, from + strlen (w->toks->pdata[mi]));
      g_string_append (out, edit);
      if (edit[0] == '\\' && g_ascii_isalpha (edit[strlen (edit) - 1]) && g_ascii_isalpha (w->src[w->copied]))
        g_string_append_c (out, ' ');
    }
  return rewrite_done (w);
}

/* token_pairs_read then token_pairs_respelled, for a respelling that needs
 * nothing else of the tokens: NULL where the readings do not pair up. */
static char *
respelled_pairs (const char *model, const char *text, gboolean (*in_class) (GPtrArray *, guint),
                 PairSpelling spell, gconstpointer data)
{
  g_auto (TokenPairs) p = { 0 };

  if (!token_pairs_read (&p, model, text, in_class))
    return NULL;
  return token_pairs_respelled (&p, spell, data);
}

/* Whether the braced arguments after t[i] and m[j] hold the same tokens. */
static gboolean
same_argument (GPtrArray *t, guint i, GPtrArray *m, guint j)
{
  for (guint k = 1;; k++)
    {
      if (i + k >= t->len || j + k >= m->len || strcmp (t->pdata[i + k], m->pdata[j + k]) != 0)
        return FALSE;
      if (strcmp (t->pdata[i + k], "}") == 0)
        return TRUE;
    }
}

/* respelled_face's check: data is { glyph_cmd, model_cmd }. */
static gboolean
face_spelling (GPtrArray *t, guint ti, GPtrArray *m, guint mi, gconstpointer data, const char **edit)
{
  const char *const *cmds = data;

  if (!same_argument (t, ti + 1, m, mi + 1))
    return FALSE;
  if (strcmp (t->pdata[ti], cmds[0]) == 0 && strcmp (m->pdata[mi], cmds[1]) == 0)
    *edit = cmds[0];
  return TRUE;
}

/* The model reading with the glyphs' face command glyph_cmd where it writes
 * model_cmd over the same argument: the face commands (is_face) of both
 * readings paired by order. NULL when a pair's arguments differ or nothing
 * changes. */
static char *
respelled_face (const char *model, const char *text, gboolean (*is_face) (GPtrArray *, guint),
                const char *glyph_cmd, const char *model_cmd)
{
  const char *const cmds[] = { glyph_cmd, model_cmd };

  return respelled_pairs (model, text, is_face, face_spelling, cmds);
}

/* The agreeing reading with the glyphs' \mathcal where it writes \mathscr
 * for the same letter. The reader writes \mathcal for CMSY's and Euler's
 * capitals and for OpenType math's script alphabet, which unicode-math
 * draws for \mathcal and \mathscr alike (the corpus, ../shared, has
 * \mathcal 62352 times, \mathscr 239); the model, reading the shape, writes
 * \mathscr for the rounder script capitals of STIX Two and Libertinus
 * (fresh seeds 1001-1003: U(x,s)\in\mathscr{B} and
 * y\in\mathscr{F}(A_{1}\times_{A}A_{2}), confident and wrong). The other way
 * round (the reader's \mathscr from RSFS, which mathptmx uses for
 * \mathcal) stays the model's. Letters are paired by order; NULL when the
 * readings' script letters differ or nothing changes. */
static char *
with_glyphs_calligraphic (const char *model, const char *text)
{
  return respelled_face (model, text, is_script_letter, "\\mathcal", "\\mathscr");
}

/* with_glyphs_colon's check: the glyphs' \colon where the model writes ":". */
static gboolean
colon_spelling (GPtrArray *t, guint ti, GPtrArray *m, guint mi, gconstpointer data, const char **edit)
{
  if (strcmp (t->pdata[ti], "\\colon") == 0 && strcmp (m->pdata[mi], ":") == 0)
    *edit = "\\colon";
  return TRUE;
}

/* The agreeing reading with the glyphs' \colon where it writes ":": TeX
 * spaces amsmath's \colon (punctuation, 2 mu before, 6 after) apart from
 * the relation ":" (5 mu on both sides), and the reader tells them by that
 * spacing; the model writes ":" by habit (the corpus has ":" about ten
 * times as often; development seed 1101: f'\colon I\to\mathbb{R} read
 * f':I\to\mathbb{R}). Colons are paired by order; NULL when their counts
 * differ or nothing changes. */
static char *
with_glyphs_colon (const char *model, const char *text)
{
  return respelled_pairs (model, text, is_colon, colon_spelling, NULL);
}

static guint count_tokens (GPtrArray *toks, const char *const *which);

static gboolean
is_fraction (GPtrArray *toks, guint i)
{
  return strcmp (toks->pdata[i], "\\frac") == 0 || strcmp (toks->pdata[i], "\\dfrac") == 0 ||
         strcmp (toks->pdata[i], "\\tfrac") == 0;
}

static gboolean
is_style_switch (const char *tok)
{
  return strcmp (tok, "\\displaystyle") == 0 || strcmp (tok, "\\textstyle") == 0 ||
         strcmp (tok, "\\scriptstyle") == 0 || strcmp (tok, "\\scriptscriptstyle") == 0;
}

/* Whether the model sets a style itself for what follows token i's
 * group: a switch before i (its scope may hold i), or one outside braces
 * or inside a group that opens the formula ({\\displaystyle ..}). */
static gboolean
model_style_switch (GPtrArray *m, guint i)
{
  int depth = 0;
  gboolean opening = TRUE;

  for (guint k = 0; k < m->len; k++)
    {
      const char *tok = m->pdata[k];
      if (is_style_switch (tok) && (k < i || depth == 0 || opening))
        return TRUE;
      depth += strcmp (tok, "{") == 0 ? 1 : strcmp (tok, "}") == 0 ? -1 : 0;
      opening = opening && strcmp (tok, "{") == 0;
    }
  return FALSE;
}

/* A reading without its \\limits outside any group: under \\displaystyle
 * they draw nothing more, and the reader, which saw the limits above and
 * below, writes none there (fresh seed 1060: \\displaystyle\\lim\\limits_{x\\to
 * c}... spelt from the model's \\lim\\limits on six set-ups; fixed after
 * scoring). Inside a group (a fraction's part is text style) they stay.
 * NULL when there is none. */
static char *
without_top_limits (const char *latex)
{
  g_auto (Rewrite) w = { 0 };
  int depth = 0;

  rewrite_read (&w, latex);
  for (guint i = 0; i < w.toks->len; i++)
    {
      const char *tok = w.toks->pdata[i];
      gsize from = g_array_index (w.at, gsize, i);
      GString *out;

      /* an environment's cells are text style (cases, array: review of
       * reader12q), and after a \\textstyle the model's \\limits are its own */
      depth += strcmp (tok, "{") == 0 || g_str_has_prefix (tok, "\\begin") ? 1
               : strcmp (tok, "}") == 0 || g_str_has_prefix (tok, "\\end") ? -1 : 0;
      if (depth == 0 && is_style_switch (tok) && strcmp (tok, "\\displaystyle") != 0)
        break;
      if (depth != 0 || strcmp (tok, "\\limits") != 0)
        continue;
      out = rewrite_cut (&w, from, from + strlen (tok));
      /* "\\lim\\limits x" keeps a space between \\lim and x */
      if (g_ascii_isalpha (latex[w.copied]) && out->len > 0 && g_ascii_isalpha (out->str[out->len - 1]))
        g_string_append_c (out, ' ');
    }
  return rewrite_done (&w);
}

/* Whether token i of toks lies inside a part (numerator or denominator) of
 * a fraction: the parts are the two arguments after \frac, \dfrac,
 * \tfrac or \cfrac, braced or one token each. */
static gboolean
inside_fraction_part (GPtrArray *toks, guint i)
{
  static const char *const fracs[] = { "\\frac", "\\dfrac", "\\tfrac", "\\cfrac", NULL };
  g_autoptr(GArray) parts = g_array_new (FALSE, FALSE, sizeof (guint));   /* per open group: is a part? */
  g_autoptr(GArray) saved = g_array_new (FALSE, FALSE, sizeof (guint));   /* per open group: outer pending */
  guint pending = 0, open_parts = 0;

  for (guint k = 0; k < i && k < toks->len; k++)
    {
      const char *t = toks->pdata[k];
      if (strcmp (t, "{") == 0)
        {
          guint part = pending > 0;
          guint rest = pending > 0 ? pending - 1 : 0;
          g_array_append_val (parts, part);
          g_array_append_val (saved, rest);
          open_parts += part;
          pending = 0;
        }
      else if (strcmp (t, "}") == 0)
        {
          if (parts->len == 0)
            continue;
          open_parts -= g_array_index (parts, guint, parts->len - 1);
          pending = g_array_index (saved, guint, saved->len - 1);
          g_array_set_size (parts, parts->len - 1);
          g_array_set_size (saved, saved->len - 1);
        }
      else if (g_strv_contains (fracs, t))
        pending = 2;
      else if (pending > 0)
        pending--;   /* \frac12: an unbraced part, one token */
    }
  return open_parts > 0;
}

/* with_glyphs_display_style's check: the glyphs' \dfrac where the model
 * writes \frac, but not inside another fraction's part or under the
 * model's own style switch. */
static gboolean
display_fraction_spelling (GPtrArray *t, guint ti, GPtrArray *m, guint mi, gconstpointer data, const char **edit)
{
  if (strcmp (t->pdata[ti], "\\dfrac") == 0 && strcmp (m->pdata[mi], "\\frac") == 0 &&
      !inside_fraction_part (m, mi) && !model_style_switch (m, mi))
    *edit = "\\dfrac";
  return TRUE;
}

/* The agreeing reading in the glyphs' display style: the reader measures
 * an inline formula's style from its glyphs' sizes (fm-mathtext.c:
 * \displaystyle where a big operator is drawn at display size or takes
 * its limits above and below, \dfrac where a fraction's parts are at the
 * line's text size); the model, reading a crop without the line, writes
 * text style (fresh seed 1055: \displaystyle\int_R f read \int_{R}f and
 * x=\dfrac{20}{16-\pi^2}... read \frac on nine set-ups each, confident;
 * both draw apart). Only added, never taken away: the reader's text style
 * is a default where it measured nothing (no text beside the region).
 * Fractions pair by order; a \dfrac inside another fraction's part is left
 * to with_glyphs_fractions, which flags it (a \cfrac nest, not what the
 * model or the reader can spell for sure). NULL when nothing changes. */
static char *
with_glyphs_display_style (const char *model, const char *text)
{
  g_auto (TokenPairs) p = { 0 };
  g_autofree char *fracs = NULL;
  gboolean style;

  if (token_pairs_read (&p, model, text, is_fraction))
    fracs = token_pairs_respelled (&p, display_fraction_spelling, NULL);
  /* the model's own switch outside braces, or in a group that opens the
   * formula, stays its own (review of reader12q: \\textstyle\\sum read
   * \\displaystyle\\textstyle\\sum); one inside a part or script sets
   * that group only, and the glyphs' \\displaystyle still holds outside
   * it (tidy18: any switch anywhere had kept it off) */
  style = p.t->len > 0 && strcmp (p.t->pdata[0], "\\displaystyle") == 0 && !model_style_switch (p.model.toks, 0);
  if (!style)
    return g_steal_pointer (&fracs);
  {
    g_autofree char *plain = without_top_limits (fracs ? fracs : model);
    const char *body = plain ? plain : fracs ? fracs : model;
    return g_strdup_printf ("\\displaystyle%s%s", g_ascii_isalpha (body[0]) ? " " : "", body);
  }
}

static gboolean
is_bold_command (GPtrArray *toks, guint i)
{
  return (strcmp (toks->pdata[i], "\\mathbf") == 0 || strcmp (toks->pdata[i], "\\textbf") == 0) &&
         i + 1 < toks->len && strcmp (toks->pdata[i + 1], "{") == 0;
}

/* The agreeing reading with the glyphs' \mathbf where it writes \textbf
 * for the same bold upright glyphs: one drawing (the text face's bold in
 * both), and the corpus (../shared) writes \mathbf 5763 times, \textbf 47
 * (used seed 1056: {\mathbf{r}}_{cm} read \textbf{r}_{cm} on eight set-ups,
 * confident). Paired by order; NULL when the arguments differ or nothing
 * changes. */
static char *
with_glyphs_bold (const char *model, const char *text)
{
  if (strstr (model, "\\textbf") == NULL)
    return NULL;
  return respelled_face (model, text, is_bold_command, "\\mathbf", "\\textbf");
}

/* The agreeing reading with the glyphs' operator names: the reader writes
 * \gcd for an upright "gcd" that TeX's operator spacing sets apart (its
 * words are TeX's named operators, fm_mathtext_is_operator_word); the model
 * writes its corpus's \text{gcd} or \mathrm{gcd} now and then (fresh seed
 * 1055: \gcd(g_0,h_0)=1 on seven set-ups; \text{gcd} draws no operator
 * space). Only when every such word of the model's is one of the glyphs'
 * commands (counts agree); NULL when nothing changes. */
static char *
with_glyphs_operator_names (const char *model, const char *text)
{
  static const char *const wraps[] = { "\\text", "\\mathrm", "\\textrm", "\\textup", "\\operatorname", NULL };
  g_autoptr(GPtrArray) t = latex_tokens (text);
  g_autoptr(GPtrArray) done = g_ptr_array_new_with_free_func (g_free);
  g_auto (Rewrite) w = { 0 };
  GPtrArray *m;

  rewrite_read (&w, model);
  m = w.toks;
  for (guint i = 0; i + 3 < m->len; i++)
    {
      g_autoptr(GString) word = g_string_new (NULL);
      g_autofree char *cmd = NULL;
      const char *one[] = { NULL, NULL };
      guint j = i + 2, before = 0;
      GString *out;
      gsize end;

      if (!g_strv_contains (wraps, m->pdata[i]) || strcmp (m->pdata[i + 1], "{") != 0)
        continue;
      while (j < m->len && strlen (m->pdata[j]) == 1 && g_ascii_isalpha (((char *) m->pdata[j])[0]))
        g_string_append (word, m->pdata[j++]);
      /* \mod spaces like \pmod, not like "mod" set upright */
      if (j >= m->len || strcmp (m->pdata[j], "}") != 0 || !fm_mathtext_is_operator_word (word->str) ||
          strcmp (word->str, "mod") == 0)
        continue;
      cmd = g_strconcat ("\\", word->str, NULL);
      one[0] = cmd;
      for (guint k = 0; k < done->len; k++)
        before += strcmp (done->pdata[k], cmd) == 0;
      /* the glyphs' command for this one too, beside the model's own */
      if (count_tokens (t, one) < count_tokens (m, one) + before + 1)
        return NULL;
      g_ptr_array_add (done, g_strdup (cmd));
      end = g_array_index (w.at, gsize, j) + 1;
      out = rewrite_cut (&w, g_array_index (w.at, gsize, i), end);
      g_string_append (out, cmd);
      if (g_ascii_isalpha (model[end]))
        g_string_append_c (out, ' ');
      i = j;
    }
  return rewrite_done (&w);
}

static guint
count_tokens (GPtrArray *toks, const char *const *which)
{
  guint n = 0;

  for (guint i = 0; i < toks->len; i++)
    n += g_strv_contains (which, toks->pdata[i]);
  return n;
}

static gboolean
ends_in_control_word (const GString *s)
{
  gsize k = s->len;

  while (k > 0 && g_ascii_isalpha (s->str[k - 1]))
    k--;
  return k < s->len && k > 0 && s->str[k - 1] == '\\';
}

/* The agreeing reading without the \underline{...} it writes where the
 * glyphs' reading has none: an underline is a drawn rule, which the reader
 * finds in the region's ink, so one it did not find is the model's
 * invention (development seed 1102: \underline{\Delta}\omega\approx... on
 * CM and LM, confident; 1103: \underline{\bigl\|...} on six set-ups). Only
 * when the glyphs' reading has no more rule-drawn constructs than the
 * model's others (a rule the reader read as a fraction bar or overline
 * is not missing). NULL when nothing changes. */
static char *
without_invented_underline (const char *model, const char *text)
{
  static const char *const under[] = { "\\underline", NULL };
  static const char *const rules[] = { "\\frac", "\\dfrac", "\\tfrac", "\\overline", "\\underline", "\\sqrt", NULL };
  static const char *const open_brace[] = { "{", NULL }, *const close_brace[] = { "}", NULL };
  g_autoptr(GPtrArray) t = latex_tokens (text);
  g_auto (Rewrite) w = { 0 };
  GPtrArray *m;
  guint n_under;

  rewrite_read (&w, model);
  m = w.toks;
  n_under = count_tokens (m, under);
  if (n_under == 0 || count_tokens (t, under) > 0 || count_tokens (t, rules) + n_under > count_tokens (m, rules))
    return NULL;
  /* an unclosed group (skip_group stops at the end of the text) */
  if (count_tokens (m, open_brace) != count_tokens (m, close_brace))
    return NULL;
  for (guint i = 0; i + 1 < m->len; i++)
    {
      const char *open, *close;
      GString *out;

      /* not one inside a group already copied (\underline{\underline{a}}) */
      if (strcmp (m->pdata[i], "\\underline") != 0 || strcmp (m->pdata[i + 1], "{") != 0 ||
          g_array_index (w.at, gsize, i) < w.copied)
        continue;
      open = model + g_array_index (w.at, gsize, i + 1);
      close = skip_group (open);
      if (close == NULL || close <= open + 1 || close[-1] != '}')
        return NULL;
      out = rewrite_cut (&w, g_array_index (w.at, gsize, i), close - model);
      /* "\underline{ab}^{2}" keeps its group as the base of the script,
       * "x^\underline{ab}" as the script's argument */
      if (*close == '^' || *close == '_' ||
          (i > 0 && (strcmp (m->pdata[i - 1], "^") == 0 || strcmp (m->pdata[i - 1], "_") == 0)))
        g_string_append_len (out, open, close - open);
      else
        {
          /* "\to M", not "\toM" (fresh seed 1016) */
          if (ends_in_control_word (out) && g_ascii_isalpha (open[1]))
            g_string_append_c (out, ' ');
          g_string_append_len (out, open + 1, close - open - 2);
        }
    }
  return rewrite_done (&w);
}

/* A reading that is not LaTeX: math inside \text{...} (development seed
 * 1102: \qquad\text{for\ x\in A.} on CM and LM, where the glyphs read
 * \text{for}x\in A. with x in math italic). A math symbol's control word,
 * a script or a \frac inside a text group outside $...$. */
static gboolean
math_in_text (const char *latex)
{
  static const char *const texts[] = { "\\text", "\\textrm", "\\textup", "\\textit", "\\textbf", "\\mbox", NULL };
  static const char *const text_ok[] = { "\\ldots", "\\dots", "\\S", "\\P", "\\i", "\\j", "\\ss", "\\o", "\\O",
                                         "\\l", "\\L", "\\ae", "\\AE", "\\oe", "\\OE", "\\aa", "\\AA",
                                         /* old font switches: text inside text (\\emph, \\textsf ...
                                          * are structure to the engine, fe_token_symbol() NULL) */
                                         "\\em", "\\it", "\\bf", "\\rm", "\\sf", "\\tt", "\\sl", "\\sc", NULL };
  g_autoptr(GPtrArray) m = latex_tokens (latex);

  for (guint i = 0; i + 1 < m->len; i++)
    {
      int depth = 0;
      gboolean dollar = FALSE;

      if (!g_strv_contains (texts, m->pdata[i]) || strcmp (m->pdata[i + 1], "{") != 0)
        continue;
      for (guint k = i + 1; k < m->len; k++)
        {
          const char *tok = m->pdata[k];
          depth += strcmp (tok, "{") == 0 ? 1 : strcmp (tok, "}") == 0 ? -1 : 0;
          if (depth == 0)
            break;
          dollar ^= strcmp (tok, "$") == 0;
          if (!dollar && (strcmp (tok, "^") == 0 || strcmp (tok, "_") == 0 || strcmp (tok, "\\frac") == 0 ||
                          (tok[0] == '\\' && g_ascii_isalpha (tok[1]) && fe_token_symbol (tok) != NULL &&
                           !g_strv_contains (text_ok, tok))))
            return TRUE;
        }
    }
  return FALSE;
}

/* Whether the glyphs' reading has a small space after a text group of the
 * given letters (spaces inside left out): the reader writes \; where the
 * gap after the group is the word space and more (fm-mathtext.c). */
static gboolean
glyphs_space_after_text (const char *text, const char *letters)
{
  g_autoptr(GArray) at = g_array_new (FALSE, FALSE, sizeof (gsize));
  g_autoptr(GPtrArray) t = latex_tokens_at (text, at);

  for (guint i = 0; i + 3 < t->len; i++)
    if (strcmp (t->pdata[i], "\\text") == 0 && strcmp (t->pdata[i + 1], "{") == 0)
      {
        guint k = i + 2;
        g_autofree char *inner = NULL;
        while (k < t->len && strcmp (t->pdata[k], "}") != 0)
          k++;
        if (k + 1 >= t->len || !is_space_token (t->pdata[k + 1]))
          continue;
        inner = g_strndup (text + g_array_index (at, gsize, i + 2),
                           g_array_index (at, gsize, k) - g_array_index (at, gsize, i + 2));
        if (strcmp (g_strstrip (inner), letters) == 0)
          return TRUE;
      }
  return FALSE;
}

/* The agreeing reading without a small space (\, \; \: \  ~) right after
 * a text group or an operator name: the corpus (../shared) writes the
 * space inside the group, \text{if }x, which the normaliser drops (16457
 * text groups followed by no spacing command, 176 by a small one; in
 * cases, 207 against 64), and TeX spaces operators itself (\sin x 220
 * times, \sin\,x 2; \dim 99 to 10, \log 24 to 4, \ln 54 to 23;
 * \operatorname{...} 601 to 5), while the model writes \text{if}\;x
 * (development seeds 1103 and 1104: cases on nine and eleven set-ups,
 * confident). \inf, \sup, \max and \min are left alone: the corpus
 * spaces them as often or more (\sup\,A 65, \sup A 16; seed 1104 has
 * both \inf A and \sup\,A). The reader writes \; only after a text group
 * whose gap is the word space and more (0.6 em, a word space 0.33): there
 * the corpus's \; is seen and the model's space stays (development seed
 * 1112: 11 confident and wrong, one per set-up). NULL when nothing changes. */
static char *
without_space_after_text (const char *model, const char *text)
{
  static const char *const texts[] = { "\\text", "\\textrm", "\\textup", "\\mbox", "\\textit", "\\textbf",
                                       "\\operatorname", NULL };
  /* not \\inf, \\sup, \\max, \\min: the corpus writes \\sup\\,A more often
   * than \\sup A (65 to 16) */
  static const char *const ops[] = { "\\sin", "\\cos", "\\tan", "\\cot", "\\sec", "\\csc", "\\sinh", "\\cosh",
                                     "\\tanh", "\\log", "\\ln", "\\lg", "\\exp", "\\det", "\\dim", "\\ker", "\\deg",
                                     "\\gcd", "\\lim", "\\liminf", "\\limsup", "\\Pr", "\\arg", "\\hom", NULL };
  static const char *const small[] = { "\\,", "\\;", "\\:", "\\ ", "~", NULL };
  g_auto (Rewrite) w = { 0 };
  GPtrArray *m;
  GArray *at;

  rewrite_read (&w, model);
  m = w.toks;
  at = w.at;
  for (guint i = 0; i + 1 < m->len; i++)
    {
      int depth = 0;
      guint k = i;    /* the construct's last token */
      GString *out;

      if (g_strv_contains (texts, m->pdata[i]) && strcmp (m->pdata[i + 1], "{") == 0)
        for (k = i + 1; k < m->len; k++)
          {
            depth += strcmp (m->pdata[k], "{") == 0 ? 1 : strcmp (m->pdata[k], "}") == 0 ? -1 : 0;
            if (depth == 0)
              break;
          }
      else if (!g_strv_contains (ops, m->pdata[i]))
        continue;
      if (k + 2 >= m->len || !g_strv_contains (small, m->pdata[k + 1]))
        {
          i = k;    /* not into the group: the spaces in it are between words */
          continue;
        }
      if (k > i && text != NULL)
        {
          g_autofree char *letters = g_strndup (model + g_array_index (at, gsize, i + 2),
                                                g_array_index (at, gsize, k) - g_array_index (at, gsize, i + 2));
          if (glyphs_space_after_text (text, g_strstrip (letters)))
            {
              i = k + 1;    /* the glyphs' gap is the word space and more: kept */
              continue;
            }
        }
      out = rewrite_cut (&w, g_array_index (at, gsize, k + 1), g_array_index (at, gsize, k + 2));
      /* "\inf A", not "\infA" */
      if (k == i && g_ascii_isalpha (model[g_array_index (at, gsize, k + 2)]))
        g_string_append_c (out, ' ');
      i = k + 1;
    }
  return rewrite_done (&w);
}

static gsize
token_end (const char *latex, GArray *at, guint i)
{
  return i < at->len ? g_array_index (at, gsize, i) : strlen (latex);
}

/* ^{\prime}, ^{\prime\prime}, ^\prime as ', '' (the corpus, ../shared: 13
 * times ^\prime against 51583 primes). NULL when there is none. */
static char *
prime_tokens_as_typed (const char *model)
{
  g_auto (Rewrite) w = { 0 };
  GPtrArray *m;

  rewrite_read (&w, model);
  m = w.toks;
  for (guint i = 0; i + 1 < m->len; i++)
    {
      guint n = 0, end = 0;
      GString *out;

      if (strcmp (m->pdata[i], "^") != 0)
        continue;
      if (strcmp (m->pdata[i + 1], "\\prime") == 0)
        n = 1, end = i + 2;
      else if (strcmp (m->pdata[i + 1], "{") == 0)
        {
          guint j = i + 2;
          while (j < m->len && strcmp (m->pdata[j], "\\prime") == 0)
            j++, n++;
          end = j < m->len && strcmp (m->pdata[j], "}") == 0 ? j + 1 : 0;
        }
      if (n == 0 || end == 0)
        continue;
      out = rewrite_cut (&w, g_array_index (w.at, gsize, i), token_end (model, w.at, end));
      for (guint k = 0; k < n; k++)
        g_string_append_c (out, '\'');
      i = end - 1;
    }
  return rewrite_done (&w);
}

/* The agreeing reading with primes as people type them: ' for ^{\prime},
 * and before a subscript. W_{1}' and W'_{1} are one rendering (both are
 * W^{\prime}_{1} to TeX; the reader cannot tell them, fm-mathtext.c
 * calls a prime with a subscript uncertain); the corpus (../shared) writes
 * the prime first about 6400 times, after the subscript about 1100
 * (development seed 1104: W_{1}'=U\setminus Z_{1} and V_{p}'\to U_{p}' on
 * five set-ups each, the glyphs reading W'_{1}). A prime followed by a
 * superscript stays. NULL when nothing changes. */
static char *
primes_as_typed (const char *model)
{
  g_autofree char *ticks = prime_tokens_as_typed (model);
  const char *now = ticks != NULL ? ticks : model;
  g_auto (Rewrite) w = { 0 };
  GPtrArray *m;
  GArray *at;
  char *done;

  rewrite_read (&w, now);
  m = w.toks;
  at = w.at;
  for (guint i = 0; i + 2 < m->len; i++)
    {
      guint g = i + 2, n = 0;
      GString *out;

      if (strcmp (m->pdata[i], "_") != 0)
        continue;
      if (strcmp (m->pdata[i + 1], "{") == 0)
        {
          int depth = 0;
          for (g = i + 1; g < m->len; g++)
            {
              depth += strcmp (m->pdata[g], "{") == 0 ? 1 : strcmp (m->pdata[g], "}") == 0 ? -1 : 0;
              if (depth == 0)
                break;
            }
          g++;
        }
      while (g + n < m->len && strcmp (m->pdata[g + n], "'") == 0)
        n++;
      if (n == 0 || (g + n < m->len && strcmp (m->pdata[g + n], "^") == 0))
        continue;
      out = rewrite_cut (&w, g_array_index (at, gsize, i), token_end (now, at, g + n));
      for (guint k = 0; k < n; k++)
        g_string_append_c (out, '\'');
      g_string_append_len (out, now + g_array_index (at, gsize, i), g_array_index (at, gsize, g) - g_array_index (at, gsize, i));
      i = g + n - 1;
    }
  done = rewrite_done (&w);
  return done != NULL ? done : g_steal_pointer (&ticks);
}

static gboolean
is_layout_token (const char *tok)
{
  return strcmp (tok, "&") == 0 || strcmp (tok, "\\\\") == 0 || g_str_has_prefix (tok, "\\begin{") ||
         g_str_has_prefix (tok, "\\end{");
}

/* Whether token lists a and b hold the same tokens in the same order once
 * those kept() refuses are left out of both. */
static gboolean
same_kept_tokens (GPtrArray *a, GPtrArray *b, gboolean (*kept) (const char *tok))
{
  guint i = 0, j = 0;

  for (;;)
    {
      while (i < a->len && !kept (a->pdata[i]))
        i++;
      while (j < b->len && !kept (b->pdata[j]))
        j++;
      if (i == a->len || j == b->len)
        return i == a->len && j == b->len;
      if (strcmp (a->pdata[i++], b->pdata[j++]) != 0)
        return FALSE;
    }
}

static gboolean
is_any_token (const char *tok)
{
  return tok != NULL;
}

/* Two readings of the same tokens in the same order. */
static gboolean
same_tokens (const char *a, const char *b)
{
  g_autoptr(GPtrArray) ta = latex_tokens (a);
  g_autoptr(GPtrArray) tb = latex_tokens (b);

  return same_kept_tokens (ta, tb, is_any_token);
}

/* Two readings lay out rows and columns alike: the same sequence of
 * environments, row breaks and column separators. */
static gboolean
same_layout (const char *a, const char *b)
{
  g_autoptr(GPtrArray) ta = latex_tokens (a);
  g_autoptr(GPtrArray) tb = latex_tokens (b);

  return same_kept_tokens (ta, tb, is_layout_token);
}

/* A reading of several lines (an environment with rows). */
static gboolean
is_multiline (const char *latex)
{
  return latex != NULL && strstr (latex, "\\begin{") != NULL && strstr (latex, "\\\\") != NULL;
}

/* What an agreeing reading takes from the glyphs, in this order: each
 * gives the reading so far spelled as the glyphs have it, or NULL when
 * nothing changes. */
typedef char *(*GlyphSpelling) (const char *model, const char *text);

static const GlyphSpelling glyph_spellings[] = {
  with_glyphs_punctuation,     /* their sentence punctuation */
  without_sizes,               /* no delimiter sizes the glyphs do not have */
  with_glyphs_sizes,           /* the explicit sizes they have */
  without_unsized_left,
  with_glyphs_nolimits,
  with_glyphs_colon,           /* their \colon */
  with_glyphs_display_style,
  with_glyphs_operator_names,
  with_glyphs_bold,            /* \mathbf */
  with_glyphs_calligraphic,    /* \mathcal */
  without_invented_underline,  /* no underline they do not have */
  without_space_after_text,    /* no model's small space after a text group or operator */
};

/* An agreeing reading spelled as its glyphs (glyph_spellings), with primes
 * as typed. */
static char *
spelled_as_glyphs (const char *reading, const char *text)
{
  char *now = g_strdup (reading);
  char *primes;

  for (gsize i = 0; i < G_N_ELEMENTS (glyph_spellings); i++)
    {
      char *spelled = glyph_spellings[i] (now, text);
      if (spelled != NULL)
        {
          g_free (now);
          now = spelled;
        }
    }
  primes = primes_as_typed (now);
  if (primes == NULL)
    return now;
  g_free (now);
  return primes;
}

/* A run of two or more ties ("Ab_{1}~~~Ab_{2}~~~\cdots~~Ab_{n}", the model's
 * spelling of an em of space: a tie is a third of one) as people type it:
 * \quad, and \qquad from five. In the formula corpus (../shared, 146k
 * formulas) runs of two or more ties occur in 15 formulas, \quad in 1656,
 * \qquad in 608; development seed 1011 lost one formula on every font set-up
 * to it. NULL when nothing changes. */
static char *
spaces_as_typed (const char *latex)
{
  GString *out = NULL;
  const char *p = latex;

  if (latex == NULL || strstr (latex, "~~") == NULL)
    return NULL;
  out = g_string_new (NULL);
  while (*p)
    {
      if (*p == '~' && !(p > latex && p[-1] == '\\'))
        {
          const char *q = p;
          guint n = 0;

          while (*q == '~' || *q == ' ')
            n += *q++ == '~';
          if (n >= 2)
            {
              g_string_append (out, n >= 5 ? "\\qquad" : "\\quad");
              if (g_ascii_isalpha (*q))
                g_string_append_c (out, ' ');
              p = q;
              continue;
            }
        }
      g_string_append_c (out, *p++);
    }
  return g_string_free (out, FALSE);
}

/* A disagreeing model reading without the sentence punctuation at its end
 * that a one-line glyph reading does not have: the glyphs of the box say
 * whether the page has it, even where they do not say the rest (on the
 * kept runs of seeds 1102-1104, 1015, 1016 and 1105 a model's trailing
 * period or comma the one-line glyphs lacked was never the truth's, 17
 * times; inside a multi-line glyph reading it was 6 times: a display's
 * period beside the detected box). Only dropped, never added: where the
 * glyphs have one the model lacks, the truth had none 5 times in 7. NULL
 * when nothing changes. */
static char *
without_invented_punctuation (const char *model, const char *text)
{
  g_autoptr(GPtrArray) t = NULL;

  if (model == NULL || strstr (text, "\\begin{") != NULL)
    return NULL;
  t = latex_tokens (text);
  if (last_drawn_punct (t) != NULL)
    return NULL;
  return with_glyphs_punctuation (model, text);
}

/* The end of an upright word group at token k (\mathrm{der}, \text{so\ do}:
 * letters and TeX's small spaces only), 0 when none starts there. */
static guint
word_group_end (GPtrArray *m, guint k)
{
  guint j;

  if (k + 2 >= m->len || !g_strv_contains (word_commands, m->pdata[k]) || strcmp (m->pdata[k + 1], "{") != 0)
    return 0;
  for (j = k + 2; j < m->len && strcmp (m->pdata[j], "}") != 0; j++)
    {
      const char *tok = m->pdata[j];
      if (!is_space_token (tok) && strcmp (tok, "\\!") != 0 && !(strlen (tok) == 1 && g_ascii_isalpha (tok[0])))
        return 0;
    }
  return j < m->len && j > k + 2 ? j + 1 : 0;
}

/* The reading without a tail of upright words after its last sentence
 * punctuation (`...\,d\zeta,\quad\mathrm{der}\,\,\,\mathrm{den}\quad
 * \mathrm{m}`: fresh seed 1052 on CM and LM, where the model, having read
 * the whole display, went on writing words from the prose the crop clipped
 * above and below). Of the corpus's 164k formulas (../shared, texsrc and
 * im2latex100k) three end in words after a comma (`\text{ and}`,
 * `\mathrm{traceless~~Ricci~~tensor}`, `\mathrm{etc}`), and a display
 * `f(x)=0,\quad\text{otherwise}` outside cases would lose its word too: the
 * cut only touches a reading that disagrees with the glyphs or is the
 * constrained one, and flags it. NULL when the reading has no such tail. */
static char *
without_word_tail (const char *latex)
{
  g_autoptr(GArray) at = g_array_new (FALSE, FALSE, sizeof (gsize));
  g_autoptr(GPtrArray) m = NULL;
  guint k, words = 0, punct = 0;
  int depth = 0, env = 0, punct_env = 0;

  if (latex == NULL)
    return NULL;
  m = latex_tokens_at (latex, at);
  for (k = 0; k < m->len; k++)
    {
      const char *tok = m->pdata[k];
      depth += strcmp (tok, "{") == 0 ? 1 : strcmp (tok, "}") == 0 ? -1 : 0;
      env += g_str_has_prefix (tok, "\\begin{") ? 1 : g_str_has_prefix (tok, "\\end{") ? -1 : 0;
      if (depth == 0 && is_sentence_punct (tok))
        {
          punct = k + 1;
          punct_env = env;
        }
    }
  /* punctuation inside an environment the reading never closes (no \end
   * came after it): what follows is the environment's cells, not prose
   * after the formula (a closed one ends in \end, which is no tail) */
  if (punct == 0 || punct >= m->len || punct_env > 0)
    return NULL;
  for (k = punct; k < m->len;)
    {
      guint end = word_group_end (m, k);
      if (end > 0)
        {
          words++;
          k = end;
        }
      /* (rows of words outside any environment: the model's rows of the
       * prose, `\quad\text{deo\ and\ \ tout}\\\mathrm{der}`, the
       * previous model file on the same display) */
      else if (is_space_token (m->pdata[k]) || (punct_env == 0 && strcmp (m->pdata[k], "\\\\") == 0))
        k++;
      else
        return NULL;
    }
  if (words == 0)
    return NULL;
  return g_strndup (latex, g_array_index (at, gsize, punct));
}

/* The letters and digits of tokens from..to-1 (a word's, without its
 * commands, spaces and apostrophes). */
static char *
token_letters (GPtrArray *t, guint from, guint to)
{
  GString *s = g_string_new (NULL);

  for (guint k = from; k < to && k < t->len; k++)
    {
      const char *tok = t->pdata[k];
      if (tok[0] != '\\')
        for (const char *c = tok; *c; c++)
          if (g_ascii_isalnum (*c))
            g_string_append_c (s, *c);
    }
  return g_string_free (s, FALSE);
}

static guint
byte_distance (const char *a, const char *b)
{
  gsize la = strlen (a), lb = strlen (b);
  g_autofree guint *row = g_new (guint, lb + 1);

  for (gsize j = 0; j <= lb; j++)
    row[j] = (guint) j;
  for (gsize i = 1; i <= la; i++)
    {
      guint diag = row[0];
      row[0] = (guint) i;
      for (gsize j = 1; j <= lb; j++)
        {
          guint up = row[j];
          row[j] = MIN (MIN (row[j] + 1, row[j - 1] + 1), diag + (a[i - 1] != b[j - 1]));
          diag = up;
        }
    }
  return row[lb];
}

/* The closing token of a group opened at t[open] ("{"), or t->len. */
static guint
group_close (GPtrArray *t, guint open)
{
  int depth = 0;

  for (guint k = open; k < t->len; k++)
    {
      depth += strcmp (t->pdata[k], "{") == 0 ? 1 : strcmp (t->pdata[k], "}") == 0 ? -1 : 0;
      if (depth == 0)
        return k;
    }
  return t->len;
}

/* Whether the letters of tokens from..to-1 all occur among the phrase's
 * letters w, in either case: an upright letter or a bare one the phrase
 * lacks is the formula's (\mathrm{d}t, \mathrm{e}, the x of
 * \text{fo}x\text{r all}), never a garbled piece of the phrase. */
static gboolean
letters_in (GPtrArray *t, guint from, guint to, const char *w)
{
  g_autofree char *got = token_letters (t, from, to);
  g_autofree char *low = g_ascii_strdown (w, -1);

  for (const char *c = got; *c; c++)
    if (strchr (low, g_ascii_tolower (*c)) == NULL)
      return FALSE;
  return TRUE;
}

/* A word group at t[k] that may be part of a run read for the phrase
 * letters w, in the model's reading: \text{...} (or the \textrm, \textup,
 * \mbox it may write; the glyphs' phrases are \text groups only),
 * or \mathrm{...} of two letters or more all of them the phrase's (a lone
 * upright letter is a differential or a constant); letters, digits,
 * apostrophes and spaces inside only. The token after it, 0 when none is. */
static guint
word_run_step (GPtrArray *t, guint k, const char *w)
{
  static const char *const groups[] = { "\\text", "\\textrm", "\\textup", "\\mbox", "\\mathrm", NULL };
  guint close;

  if (k + 1 >= t->len || !g_strv_contains (groups, t->pdata[k]) || strcmp (t->pdata[k + 1], "{") != 0)
    return 0;
  close = group_close (t, k + 1);
  if (close >= t->len)
    return 0;
  for (guint j = k + 2; j < close; j++)
    {
      const char *tok = t->pdata[j];
      if (!is_space_token (tok) && strcmp (tok, "'") != 0 && !(strlen (tok) == 1 && g_ascii_isalnum (tok[0])))
        return 0;
    }
  if (strcmp (t->pdata[k], "\\mathrm") == 0)
    {
      g_autofree char *got = token_letters (t, k + 2, close);
      if (strlen (got) < 2 || !letters_in (t, k + 2, close, w))
        return 0;
    }
  return close + 1;
}

/* The run of word groups from t[s] nearest the phrase letters w (spaces,
 * apostrophes and the phrase's bare letters between groups: the amsmath
 * guide's `\text{AIaxvell}s\ \text{equations}`; a run ends at a group's
 * end, a math letter after it is the formula's): its distance, *run_end
 * the token after it (0 when no run starts at s). The shortest run of the
 * least distance. */
static guint
phrase_run (GPtrArray *m, guint s, const char *w, guint *run_end)
{
  guint end = word_run_step (m, s, w), next, best_d = G_MAXUINT;
  gboolean group_end = TRUE;

  *run_end = 0;
  while (end > 0)
    {
      if (group_end)
        {
          g_autofree char *got = token_letters (m, s, end);
          guint d = byte_distance (got, w);
          if (d < best_d)
            best_d = d, *run_end = end;
        }
      group_end = FALSE;
      if (end < m->len && (strcmp (m->pdata[end], "'") == 0 ||
                           (strlen (m->pdata[end]) == 1 && g_ascii_isalpha (((char *) m->pdata[end])[0]) &&
                            letters_in (m, end, end + 1, w))))
        end++;
      else if ((next = word_run_step (m, end, w)) > 0)
        end = next, group_end = TRUE;
      else if (end + 1 < m->len && is_space_token (m->pdata[end]) && (next = word_run_step (m, end + 1, w)) > 0)
        end = next, group_end = TRUE;
      else
        end = 0;
    }
  return best_d;
}

static guint
count_spaces (const char *s)
{
  guint n = 0;

  for (; *s; s++)
    n += *s == ' ' || *s == '~';
  return n;
}

/* The glyphs' text phrases: the insides of their reading's \text groups,
 * as typed (spaces kept), and their letters. */
static void
glyph_phrases (const char *text, GPtrArray *phrases, GPtrArray *letters)
{
  g_autoptr(GArray) at = g_array_new (FALSE, FALSE, sizeof (gsize));
  g_autoptr(GPtrArray) t = latex_tokens_at (text, at);

  for (guint i = 0; i + 2 < t->len; i++)
    {
      guint close;
      if (strcmp (t->pdata[i], "\\text") != 0 || strcmp (t->pdata[i + 1], "{") != 0)
        continue;
      close = group_close (t, i + 1);
      if (close >= t->len || close == i + 2)
        continue;
      g_ptr_array_add (phrases, g_strndup (text + g_array_index (at, gsize, i + 1) + 1,
                                           g_array_index (at, gsize, close) - g_array_index (at, gsize, i + 1) - 1));
      g_ptr_array_add (letters, token_letters (t, i + 2, close));
      i = close;
    }
}

/* The reading with the glyphs' words where it spells them otherwise. A
 * text face's glyphs are the words' own characters, spaces the glyphs'
 * gaps (fm-mathtext.c merge_text_phrases), while the model garbles words
 * it reads from pixels: the amsmath guide's `\text{Maxwell's equations}`
 * read `\text{AIaxvell}s\ \text{equations}`, `\text{for }x` read
 * `\text{for}x` (which draws "forx"). Each glyph phrase, in order, takes
 * the run of the reading's word groups (phrase_run) nearest its letters
 * over all starts after the last one given: the least distance, then the
 * shortest run, so that a \mathrm{d}t\quad or \mathrm{e} before the words
 * is never taken in (it was: the first start within reach won and the
 * formula's letters went). Its letters must be the phrase's or within a
 * quarter of them (four letters or more). A reading that is the glyphs'
 * own is right as it stands. NULL when nothing changes; *respelt where
 * letters changed (a repair). */
static char *
with_glyphs_words (const char *reading, const char *text, gboolean *respelt)
{
  g_autoptr(GPtrArray) phrases = g_ptr_array_new_with_free_func (g_free);
  g_autoptr(GPtrArray) want = g_ptr_array_new_with_free_func (g_free);
  g_auto (Rewrite) rw = { 0 };
  GPtrArray *m;
  GArray *at;
  guint pos = 0;

  *respelt = FALSE;
  if (reading == NULL || text == NULL || strstr (text, "\\text{") == NULL || strcmp (reading, text) == 0)
    return NULL;
  glyph_phrases (text, phrases, want);
  rewrite_read (&rw, reading);
  m = rw.toks;
  at = rw.at;
  for (guint p = 0; p < phrases->len; p++)
    {
      const char *w = want->pdata[p];
      guint best_s = 0, best_end = 0, best_d = G_MAXUINT;
      /* a phrase of spaces only is a gap, no word to spell */
      if (w[0] == '\0')
        continue;
      for (guint s = pos; s < m->len; s++)
        {
          guint end, d = phrase_run (m, s, w, &end);
          if (end > 0 && (d == 0 || (strlen (w) >= 4 && 4 * d <= strlen (w))) &&
              (d < best_d || (d == best_d && end - s < best_end - best_s)))
            best_d = d, best_s = s, best_end = end;
        }
      if (best_end == 0)
        continue;
      {
        gsize from = g_array_index (at, gsize, best_s), to = token_end (reading, at, best_end);
        g_autofree char *phrase = g_strdup (phrases->pdata[p]);
        g_autofree char *typed = NULL;
        g_autofree char *was = g_strndup (reading + from, to - from);
        /* a spacing command of the reading beside the group is its space:
         * the glyphs' one is not written twice (\text{if}\;x) */
        if (best_end < m->len && is_space_token (m->pdata[best_end]))
          g_strchomp (phrase);
        if (best_s > 0 && is_space_token (m->pdata[best_s - 1]))
          g_strchug (phrase);
        typed = g_strdup_printf ("\\text{%s}", phrase);
        pos = best_end;
        /* the same letters: only spaces the glyphs see and the reading
         * lost are given (the reader's \text{for}\;k beside the model's
         * \text{for }\;k keeps the model's) */
        if (strcmp (g_strstrip (was), typed) != 0 && (best_d > 0 || count_spaces (typed) > count_spaces (was)))
          {
            g_string_append (rewrite_cut (&rw, from, to), typed);
            *respelt |= best_d > 0;
          }
      }
    }
  return rewrite_done (&rw);
}

/* The symbols a reading draws bold: tokens inside \mathbf, \boldsymbol,
 * \bm, \pmb, \textbf groups, less braces and script marks. */
static guint
bold_symbols (const char *latex)
{
  static const char *const bold[] = { "\\mathbf", "\\boldsymbol", "\\bm", "\\pmb", "\\textbf", "\\mathbfit",
                                      "\\symbf", NULL };
  g_autoptr(GPtrArray) t = latex_tokens (latex);
  guint n = 0;

  for (guint i = 0; i + 1 < t->len; i++)
    {
      guint close;
      if (!g_strv_contains (bold, t->pdata[i]) || strcmp (t->pdata[i + 1], "{") != 0)
        continue;
      close = group_close (t, i + 1);
      for (guint k = i + 2; k < close && k < t->len; k++)
        {
          const char *tok = t->pdata[k];
          if (strcmp (tok, "{") != 0 && strcmp (tok, "}") != 0 && strcmp (tok, "^") != 0 && strcmp (tok, "_") != 0 &&
              !g_strv_contains (bold, tok))
            n++;
        }
      i = close;
    }
  return n;
}

static gboolean
is_any_fraction (GPtrArray *toks, guint i)
{
  static const char *const fracs[] = { "\\frac", "\\dfrac", "\\tfrac", "\\cfrac", NULL };

  return g_strv_contains (fracs, toks->pdata[i]);
}

/* with_glyphs_fractions's check: the glyphs' own fraction command where it
 * is not \frac; under the model's own style switch its \frac is as drawn. */
static gboolean
glyph_fraction_spelling (GPtrArray *t, guint ti, GPtrArray *m, guint mi, gconstpointer data, const char **edit)
{
  const char *glyphs = t->pdata[ti];

  if (strcmp (glyphs, "\\frac") != 0 && strcmp (glyphs, m->pdata[mi]) != 0 && !model_style_switch (m, mi))
    *edit = glyphs;
  return TRUE;
}

/* The agreeing reading with the glyphs' fraction commands where the
 * glyphs measured one (fm-mathtext.c writes \dfrac for a fraction inside
 * a display fraction's part whose own parts are full size): the amsmath
 * guide's \cfrac continued fraction read `\frac{1}{\sqrt{2}+\frac{1}{..}}`
 * from the model, at 0.95, whose inner parts would be script size. Only
 * where both hold as many fractions, matched in order. NULL when nothing
 * changes. */
static char *
with_glyphs_fractions (const char *reading, const char *text)
{
  return respelled_pairs (reading, text, is_any_fraction, glyph_fraction_spelling, NULL);
}

/* Scripts on an empty base followed by another of the same kind
 * ({}^{f}{}^{,}): no formula writes them (isotopes pair {}^{235}_{92}U,
 * tensors alternate R^{a}{}_{b}{}^{c}), the reader's pieces of a label do. */
static guint
empty_base_chains (const char *latex, const char *kind)
{
  guint n = 0;

  for (const char *p = latex; (p = strstr (p, kind)) != NULL; p += 3)
    if (p[3] == '{' && strncmp (skip_group (p + 3), kind, 3) == 0)
      n++;
  return n;
}

/* \overset{f}{-}: a glyph over a lone rule piece (an arrow's shaft). */
static guint
stacked_over_rule (const char *latex, const char *command)
{
  guint n = 0;
  size_t len = strlen (command);

  for (const char *p = latex; (p = strstr (p, command)) != NULL; p += len)
    if (strncmp (skip_group (p + len - 1), "{-}", 3) == 0)
      n++;
  return n;
}

#define STACKED_GARBLED 3

/* Whether tokens [from, to) of t, a run of minus signs, are signs of a
 * signature ((+----), diag(----+)): a plus sign stands next to the run. A
 * shaft's pieces have no plus among them; an arrow labelled `+` read as
 * `+----` is let through too (rare; the model's reading then competes as
 * for any other glyph reading). */
static gboolean
sign_run (GPtrArray *t, guint from, guint to)
{
  return strcmp (g_ptr_array_index (t, from), "-") == 0 &&
         ((from > 0 && strcmp (g_ptr_array_index (t, from - 1), "+") == 0) ||
          (to < t->len && strcmp (g_ptr_array_index (t, to), "+") == 0));
}

/* Pieces of stacked layout the reader could not build: scripts on an empty
 * base in a row ({}^{f}{}^{,}), glyphs stacked over a lone rule piece
 * (\overset{f}{-}) and runs of rule pieces (----, ,,,,; not a signature's
 * signs, sign_run): an extensible arrow's label and shaft read glyph by
 * glyph (pdf-e2e seed 1039, \xrightarrow{1,\ f_j,\ ...} on eight
 * set-ups, each read as 20-40 such pieces). */
static guint
stacked_fragments (const char *latex)
{
  g_autoptr(GPtrArray) t = latex_tokens (latex);
  guint n = 0;

  n += empty_base_chains (latex, "{}^") + empty_base_chains (latex, "{}_");
  n += stacked_over_rule (latex, "\\overset{") + stacked_over_rule (latex, "\\underset{");
  for (guint i = 0, end; i < t->len; i = end)
    {
      const char *tok = g_ptr_array_index (t, i);
      gboolean piece = strcmp (tok, "-") == 0 || strcmp (tok, ",") == 0;

      for (end = i + 1; piece && end < t->len && strcmp (tok, g_ptr_array_index (t, end)) == 0;)
        end++;
      if (piece && end - i >= 4 && !sign_run (t, i, end))
        n += STACKED_GARBLED;  /* no formula writes four in a row */
    }
  return n;
}

/* A glyph reading made of such pieces, where the model's has fewer, is no
 * formula the reader understood: the model's reading, however unsure, is
 * nearer (seed 1039: the model's was right on Times at confidence 0.0,
 * the glyphs' garbage on CM/LM cost most of the set-up's BLEU). */
static gboolean
glyphs_garbled (const char *text, const char *model)
{
  return model != NULL && model[0] != '\0' && stacked_fragments (text) >= STACKED_GARBLED + stacked_fragments (model);
}

/* The model is lost (its confidence under MODEL_LOST) and disagrees with
 * the glyphs' one-line reading: there the glyphs' reading was right 14
 * times and the model's never, over the kept runs of seeds 1102-1104, 1015,
 * 1016 and 1105 (55 both wrong); a multi-line glyph reading of a one-line
 * formula (a script read as a row: \frac{\partial g}{\partial x_{k}}\big|_{p})
 * was wrong 5 times where the model was right, so it stays the model's, and
 * so does one with an unknown glyph (?). */
static gboolean
model_lost (double model_confidence, const char *text)
{
  return model_confidence < MODEL_LOST && strstr (text, "\\begin{") == NULL && strchr (text, '?') == NULL;
}

static double
agree_confidence (double model)
{
  return model >= AGREE_SURE ? 0.8 + 0.2 * model : model;
}

/* The chosen reading against what the glyphs measured exactly: their
 * words (with_glyphs_words), the sizes of fraction parts and the bold
 * faces. */
static void
checked_against_glyphs (FmChoice choice, const char *text_latex, char **latex, double *confidence)
{
  if (choice != FM_CHOICE_TEXT)
    {
      gboolean respelt;
      char *worded = with_glyphs_words (*latex, text_latex, &respelt);
      if (worded != NULL)
        {
          g_free (*latex);
          *latex = worded;
          /* the model misread the words it drew: a repair, flagged */
          if (respelt)
            *confidence = MIN (*confidence, CONF_CUT);
        }
    }
  if (text_latex != NULL && (choice == FM_CHOICE_AGREE || choice == FM_CHOICE_CONSTRAINED))
    {
      /* Sizes and faces the glyphs measured and the agreeing reading
       * lacks: its symbols are right, its drawing not. A fraction's parts
       * at full size are the glyphs' \dfrac (\cfrac?), flagged; bold
       * symbols the readings count apart (the amsmath guide's
       * \boldsymbol/\pmb line read partly plain at 0.92) leave it
       * unsure which is right. */
      char *sized = with_glyphs_fractions (*latex, text_latex);
      if (sized != NULL)
        {
          g_free (*latex);
          *latex = sized;
          *confidence = MIN (*confidence, CONF_CUT);
        }
      if (bold_symbols (*latex) != bold_symbols (text_latex))
        *confidence = MIN (*confidence, CONF_CUT);
      /* and script letters likewise: pdfLaTeX STIX Two's \mathscr{S} read
       * \mathcal{S} by the glyphs and S by the model, whose agreeing S was
       * confident and wrong (development seed 1147). Counted together: which
       * of the two alphabets a script glyph is the reader often cannot say
       * (mathptmx's \mathcal is rsfs, read \mathscr; the model's \mathcal
       * there was right on five formulas of that seed). */
      if (count_token (*latex, "\\mathcal") + count_token (*latex, "\\mathscr") !=
          count_token (text_latex, "\\mathcal") + count_token (text_latex, "\\mathscr"))
        *confidence = MIN (*confidence, CONF_CUT);
    }
}

/* The reading with the glyphs' relation ":" where it writes \colon: the
 * reader spells a colon between two neighbours from its spaces (5 mu on
 * both sides for the relation, less before than after for \colon;
 * fm-mathtext.c, colon_by_ink), and flags the reading DOUBTFUL where it
 * could not tell. The model writes \colon for the relation (pdf-e2e seed
 * 1073: \Psi : \bigoplus read \Psi\colon at 0.95-0.96 on two set-ups).
 * Colons paired by order; only those inside the glyphs' reading (a first
 * or last colon had no neighbour to measure by) and not before "=". NULL
 * when the counts differ or nothing changes. */
static char *
with_relation_colon (const char *latex, const char *text)
{
  g_autoptr(GPtrArray) t = latex_tokens (text);
  g_auto (Rewrite) w = { 0 };
  GPtrArray *m;
  guint ti = 0;

  rewrite_read (&w, latex);
  m = w.toks;
  for (guint mi = 0; mi < m->len; mi++)
    {
      const char *mt = m->pdata[mi];
      if (strcmp (mt, ":") != 0 && strcmp (mt, "\\colon") != 0)
        continue;
      while (ti < t->len && strcmp (t->pdata[ti], ":") != 0 && strcmp (t->pdata[ti], "\\colon") != 0)
        ti++;
      if (ti == t->len)
        return NULL;
      if (strcmp (mt, "\\colon") == 0 && strcmp (t->pdata[ti], ":") == 0 && ti > 0 && ti + 1 < t->len &&
          strcmp (t->pdata[ti + 1], "=") != 0)
        {
          gsize from = g_array_index (w.at, gsize, mi), to = from + strlen (mt);
          while (latex[to] == ' ')
            to++;
          g_string_append_c (rewrite_cut (&w, from, to), ':');
        }
      ti++;
    }
  while (ti < t->len && strcmp (t->pdata[ti], ":") != 0 && strcmp (t->pdata[ti], "\\colon") != 0)
    ti++;
  if (ti < t->len)
    return NULL;
  return rewrite_done (&w);
}

/* The model unsure (long formulas: H^{-k}(L\pi_{!}(\mathcal{F})
 * \otimes_{B}^{\mathbf{L}}...) at 0.26-0.50) of a reading that is the
 * glyphs' CERTAIN one token for token: the layout the model's low
 * confidence doubts is the glyphs' own. Such readings were right 17
 * times in 17 where flagged, 327 in 327 in all, on development seed
 * 1162 (reader12t, bench/RESULTS.md): lifted as if the model were half sure.
 * Not from below a quarter: a model that all but refuses the image
 * sees a piece of something (\displaystyle\prod_{j} cut from its
 * operand by detection, newtx: 0.0 -> 0.9, review of reader12t). */
static gboolean
unsure_model_certain_glyphs (FmTextReadVerdict verdict, double model_confidence, const char *latex,
                             const char *text_latex)
{
  return verdict == FM_TEXT_READ_CERTAIN && model_confidence >= 0.25 && model_confidence < AGREE_SURE &&
         same_tokens (latex, text_latex);
}

/* An agreeing (or constrained) reading checked where the agreement
 * confirms less than it seems: the relation colon the glyphs measured, a
 * \nolimits the image cannot show (flagged), and a spelling the glyphs
 * left that the image cannot settle either (where `&` stands, a colon's
 * space, a limits' style; fm-mathtext.c, spelling_doubt: flagged). */
static void
agreement_checked (FmTextReadVerdict verdict, const char *text_latex, char **latex, double *confidence)
{
  if (text_latex != NULL && verdict != FM_TEXT_READ_DOUBTFUL)
    {
      char *colon = with_relation_colon (*latex, text_latex);
      if (colon != NULL)
        {
          g_free (*latex);
          *latex = colon;
        }
    }
  if (text_latex != NULL && unseen_nolimits (*latex, text_latex))
    *confidence = MIN (*confidence, CONF_CUT);
  if (verdict == FM_TEXT_READ_DOUBTFUL)
    *confidence = MIN (*confidence, CONF_CUT);
}

/* UNCERTAIN or DOUBTFUL: the model decides. */
static gboolean
is_unsure (FmTextReadVerdict verdict)
{
  return verdict == FM_TEXT_READ_UNCERTAIN || verdict == FM_TEXT_READ_DOUBTFUL;
}

static FmChoice
choose (FmTextReadVerdict  verdict,
        const char        *text_latex,
        const char        *model_latex,
        double             model_confidence,
        const char        *second_latex,
        double             second_confidence,
        char             **latex,
        double            *confidence,
        FmProvenance      *provenance)
{
  FmChoice choice;
  g_autofree char *rest = NULL;
  g_autofree char *text_rest = NULL;

  if (verdict == FM_TEXT_READ_UNAVAILABLE || text_latex == NULL || text_latex[0] == '\0')
    {
      *latex = g_strdup (model_latex);
      *confidence = model_confidence;
      *provenance = FM_PROVENANCE_IMAGE;
      choice = FM_CHOICE_IMAGE;
    }
  else if (without_spaced_word (model_latex, text_latex, &rest, &text_rest))
    {
      /* The box took in the sentence's word: both readings' rests, spelt
       * as the glyphs are, flagged (the box is wrong). */
      *latex = spelled_as_glyphs (rest, text_rest);
      *confidence = MIN (agree_confidence (model_confidence), CONF_CUT);
      *provenance = FM_PROVENANCE_TEXT_IMAGE;
      choice = FM_CHOICE_AGREE;
    }
  else if (model_latex != NULL && fm_recognize_symbol_distance (model_latex, text_latex) == 0)
    {
      choice = FM_CHOICE_AGREE;
      *provenance = FM_PROVENANCE_TEXT_IMAGE;
      *confidence = agree_confidence (model_confidence);
      if (verdict == FM_TEXT_READ_CERTAIN && is_multiline (text_latex) && !same_layout (model_latex, text_latex))
        /* Rows and columns the reader is certain of (fm-mathtext-align.c:
         * every cell certain) are the glyphs' layout; the model's rows of
         * the same symbols may break or align them elsewhere. Where its
         * rows and columns are the glyphs', its spelling of the cells
         * stays (fresh seed 1016: the corpus's 38{\mspace{0mu}^{\circ}}
         * in an aligned block, which the model writes and the glyphs
         * cannot know, lost on eleven set-ups). */
        *latex = g_strdup (text_latex);
      else if (math_in_text (model_latex) && !math_in_text (text_latex))
        {
          /* the model's spelling is not LaTeX; the glyphs' is, flagged
           * (the reader was not sure of its words either) */
          *latex = g_strdup (text_latex);
          *confidence = MIN (*confidence, CONF_TEXT);
          *provenance = FM_PROVENANCE_TEXT;
        }
      else
        *latex = spelled_as_glyphs (model_latex, text_latex);
      if (unsure_model_certain_glyphs (verdict, model_confidence, *latex, text_latex))
        *confidence = agree_confidence (AGREE_SURE);
    }
  else if (is_unsure (verdict) && second_latex != NULL &&
           fm_recognize_symbol_distance (second_latex, text_latex) == 0)
    {
      /* A reading forced onto the glyphs' symbols was right 3 times in 18
       * on development seed 412: the best guess, flagged. */
      *latex = spelled_as_glyphs (second_latex, text_latex);
      *confidence = MIN (agree_confidence (second_confidence), CONF_CONSTRAINED);
      *provenance = FM_PROVENANCE_TEXT_IMAGE;
      choice = FM_CHOICE_CONSTRAINED;
    }
  else if (is_unsure (verdict) && (rest = without_leading_word (model_latex, text_latex)) != NULL)
    {
      /* The box took in the sentence's word: the rest of the model's
       * reading, spelt as the glyphs are, flagged (the box is wrong). */
      *latex = spelled_as_glyphs (rest, text_latex);
      *confidence = MIN (agree_confidence (model_confidence), CONF_CUT);
      *provenance = FM_PROVENANCE_TEXT_IMAGE;
      choice = FM_CHOICE_AGREE;
    }
  else if (verdict == FM_TEXT_READ_CERTAIN ||
           (!glyphs_garbled (text_latex, model_latex) &&
            (model_lost (model_confidence, text_latex) ||
             (skipped_inside (model_latex, text_latex) &&
              (second_latex == NULL || skipped_inside (second_latex, text_latex))))))
    {
      /* Where the model (and its constrained reading) skipped symbols
       * inside the glyphs' one line, the glyphs' reading was right 3 times
       * in 3 and the model's 0 (development seed 1010), and where the model
       * was lost (model_lost): the reader's, flagged like a CERTAIN one the
       * model disagrees with. */
      *latex = g_strdup (text_latex);
      *confidence = CONF_TEXT;
      *provenance = FM_PROVENANCE_TEXT;
      choice = FM_CHOICE_TEXT;
    }
  else
    {
      *latex = without_invented_punctuation (model_latex, text_latex);
      if (*latex == NULL)
        *latex = g_strdup (model_latex != NULL ? model_latex : text_latex);
      *confidence = MAX (0.0, model_confidence - DISAGREE_PENALTY);
      *provenance = FM_PROVENANCE_TEXT_IMAGE;
      choice = FM_CHOICE_DISAGREE;
    }
  if (*latex != NULL)
    {
      char *typed = spaces_as_typed (*latex);
      if (typed != NULL)
        {
          g_free (*latex);
          *latex = typed;
        }
    }
  if (*latex != NULL)
    {
      char *unworded = without_sentence_word (*latex);
      if (unworded != NULL)
        {
          g_free (*latex);
          *latex = unworded;
          *confidence = MIN (*confidence, CONF_CUT);
        }
    }
  if (*latex != NULL && (choice == FM_CHOICE_DISAGREE || choice == FM_CHOICE_CONSTRAINED))
    {
      /* words the glyphs' symbols do not agree with, after the formula's
       * punctuation: the prose the crop clipped (without_word_tail); the
       * cut reading is a repair, flagged */
      char *cut = without_word_tail (*latex);
      if (cut != NULL)
        {
          g_free (*latex);
          *latex = cut;
          *confidence = MIN (*confidence, CONF_CUT);
        }
    }
  if (*latex != NULL)
    checked_against_glyphs (choice, text_latex, latex, confidence);
  if (*latex != NULL && looks_cut (*latex))
    *confidence = MIN (*confidence, CONF_CUT);
  /* The glyphs hold sized delimiters the agreeing reading writes at normal
   * size ("\frac{d}{dx}(E(x))" for \bigl( ... \bigr): development seed
   * 413, five times, all confident): its size is unknown, so flagged; also
   * where the glyphs' \left was written into it (with_glyphs_sizes): the
   * two readings disagreed, and around flat content the reader's \left is
   * read from spaces alone. (Explicit sizes written in stay sure: development
   * seed 1011's \bigl[\cos(x)\bigr], right on seven set-ups.) */
  if (*latex != NULL && (choice == FM_CHOICE_AGREE || choice == FM_CHOICE_CONSTRAINED) &&
      (count_sized (text_latex) > count_sized (*latex) ||
       ((choice == FM_CHOICE_AGREE ? model_latex : second_latex) != NULL &&
        count_left (*latex) > count_left (choice == FM_CHOICE_AGREE ? model_latex : second_latex))))
    *confidence = MIN (*confidence, CONF_CUT);
  if (*latex != NULL && (choice == FM_CHOICE_AGREE || choice == FM_CHOICE_CONSTRAINED))
    agreement_checked (verdict, text_latex, latex, confidence);
  return choice;
}

/* Whether two readings differ only in where their alignment points stand
 * (`&X''+\lambda X=0` against `X''+\lambda X&=0`, or gathered's centred
 * rows against aligned's): the glyphs' reader put
 * `&` where their positions show the columns (rows that start at one x,
 * relations that do not stand at one x: fresh seed 1046, on every set-up);
 * the other reading aligns where they do not, and the two render apart. */
static gboolean
differ_in_alignment (const char *a, const char *b)
{
  g_autoptr (GString) sa = NULL;
  g_autoptr (GString) sb = NULL;

  /* (a reading of rows without `&` is the reader's "several lines": it
   * found no columns to tell) */
  if (a == NULL || b == NULL || strcmp (a, b) == 0 || !(strchr (a, '&') != NULL || strstr (a, "{gathered}") != NULL))
    return FALSE;
  sa = g_string_new (a);
  sb = g_string_new (b);
  /* (rows the glyphs' reader found centred are gathered's) */
  g_string_replace (sa, "&", "", 0);
  g_string_replace (sb, "&", "", 0);
  g_string_replace (sa, "{gathered}", "{aligned}", 0);
  g_string_replace (sb, "{gathered}", "{aligned}", 0);
  return strcmp (sa->str, sb->str) == 0;
}

static gboolean
is_small_space (const char *tok)
{
  static const char *const small[] = { "\\,", "\\:", "\\;", "\\ ", "~", NULL };

  return g_strv_contains (small, tok);
}

static gboolean
is_no_small_space (const char *tok)
{
  return !is_small_space (tok);
}

/* Whether token lists a and b are one but for their small spaces. */
static gboolean
same_but_small_spaces (GPtrArray *a, GPtrArray *b)
{
  return same_kept_tokens (a, b, is_no_small_space);
}

/* The glyphs' reader writes a small space only where it measured one
 * between atoms TeX sets no space between (fm-mathtext.c,
 * line_append_small_space: f\,dz, 0.160\ \mu). A chosen
 * reading with fewer small spaces draws narrower than the page: the model's
 * agreeing d(fdz) for d(f\,dz) was confident and wrong on five set-ups of
 * used seeds 1053 and 1055 (spacing is no symbol, so the readings
 * "agreed"). Where the reading is the glyphs' but for its small spaces,
 * the glyphs' spaces are written; either way it is flagged. A reading with
 * as many small spaces or more keeps its own: the reader measures only some
 * gaps (not those beside \text{N}), and which space a gap is (\, or a Times
 * word space, 0.17 and 0.25 em) the model sees as well (development seed
 * 1138: 5\ \text{m} confident and right, then flagged against the glyphs'
 * 5\,\mathrm{m}). TRUE when the reading lacks the glyphs' spaces. */
static gboolean
spaces_differ (const char *text, char **latex)
{
  g_autoptr(GPtrArray) t = NULL;
  g_autoptr(GPtrArray) l = NULL;
  guint nt = 0, nl = 0;

  if (text == NULL || *latex == NULL)
    return FALSE;
  t = latex_tokens (text);
  for (guint k = 0; k < t->len; k++)
    nt += is_small_space (t->pdata[k]);
  if (nt == 0)
    return FALSE;
  l = latex_tokens (*latex);
  for (guint k = 0; k < l->len; k++)
    nl += is_small_space (l->pdata[k]);
  if (nl >= nt)
    return FALSE;
  if (same_but_small_spaces (t, l))
    {
      g_free (*latex);
      *latex = g_strdup (text);
    }
  return TRUE;
}

/* A model reading that is no formula (fm_reading_broken: `zz\bar`,
 * `\mathcal{\alpha}`, a \left without its \right, `x^{}`) is wrong however
 * sure the model was: the CERTAIN glyphs' reading where there is one (sure
 * where the model's symbols agree with it), else its repair, the reading
 * constrained by the glyphs or the glyphs' UNCERTAIN reading, each flagged.
 * A chosen reading still broken (the reader's lone `\left|` where the box
 * cut the pair, the model's with no alternative) is repaired where it can
 * be and flagged. */
FmChoice
fm_recognize_choose (FmTextReadVerdict  verdict,
                     const char        *text_latex,
                     const char        *model_latex,
                     double             model_confidence,
                     const char        *second_latex,
                     double             second_confidence,
                     char             **latex,
                     double            *confidence,
                     FmProvenance      *provenance)
{
  g_autofree char *mended = NULL;
  gboolean text_whole = text_latex != NULL && text_latex[0] != '\0' && verdict != FM_TEXT_READ_UNAVAILABLE &&
                        !fm_reading_broken (text_latex);
  gboolean doubt = FALSE;
  FmChoice choice;

  if (model_latex != NULL && fm_reading_broken (model_latex))
    {
      if (!(verdict == FM_TEXT_READ_CERTAIN && text_whole))
        {
          doubt = TRUE;
          mended = fm_reading_repaired (model_latex);
        }
      if (doubt && mended != NULL && !fm_reading_broken (mended))
        model_latex = mended;
      else if (doubt && second_latex != NULL && !fm_reading_broken (second_latex))
        {
          model_latex = second_latex;
          model_confidence = second_confidence;
        }
      else if (text_whole)
        {
          *latex = g_strdup (text_latex);
          *confidence = verdict == FM_TEXT_READ_CERTAIN && fm_recognize_symbol_distance (model_latex, text_latex) == 0
                        ? agree_confidence (model_confidence) : CONF_TEXT;
          *provenance = FM_PROVENANCE_TEXT;
          return FM_CHOICE_TEXT;
        }
    }
  choice = choose (verdict, text_latex, model_latex, model_confidence, second_latex, second_confidence,
                   latex, confidence, provenance);
  if (*latex != NULL && fm_reading_broken (*latex))
    {
      /* a repair that leaves it broken is no better: the reading stays */
      char *fixed = fm_reading_repaired (*latex);
      if (fixed != NULL && !fm_reading_broken (fixed))
        {
          g_free (*latex);
          *latex = fixed;
        }
      else
        g_free (fixed);
      doubt = TRUE;
    }
  if (verdict != FM_TEXT_READ_UNAVAILABLE && differ_in_alignment (text_latex, *latex))
    doubt = TRUE;
  if (verdict != FM_TEXT_READ_UNAVAILABLE && spaces_differ (text_latex, latex))
    doubt = TRUE;
  if (doubt)
    *confidence = MIN (*confidence, CONF_CUT);
  return choice;
}

/* Superscripts on a closing bracket (fm-recognize.h, FmScriptBase). The
 * model writes its corpus's `{(x-y)}^{2}` where the page has `(x-y)^2`
 * (fresh pdf-e2e seed 1049: nine set-ups, all confident), and the glyphs'
 * reader cannot tell the two apart by their symbols. A script on `)` or `]`
 * in the reading, its bracket's opening token and whether a group `{...}`
 * holds exactly the bracketed base. */
typedef struct {
  guint open;      /* token of the opening bracket                       */
  guint close;     /* token of the closing bracket                       */
  gboolean group;  /* `{` at open - 1 and `}` at close + 1                */
} ScriptBase;

static gboolean
is_size_token (const char *tok)
{
  return g_str_has_prefix (tok, "\\big") || g_str_has_prefix (tok, "\\Big");
}

static GArray *
script_bases (GPtrArray *t)
{
  GArray *out = g_array_new (FALSE, FALSE, sizeof (ScriptBase));
  g_autoptr (GArray) stack = g_array_new (FALSE, FALSE, sizeof (guint));

  for (guint i = 0; i < t->len; i++)
    {
      const char *tok = g_ptr_array_index (t, i);
      guint open;
      const char *want;

      if (strcmp (tok, "(") == 0 || strcmp (tok, "[") == 0 || strcmp (tok, "{") == 0)
        {
          g_array_append_val (stack, i);
          continue;
        }
      want = strcmp (tok, ")") == 0 ? "(" : strcmp (tok, "]") == 0 ? "[" : strcmp (tok, "}") == 0 ? "{" : NULL;
      if (want == NULL)
        continue;
      if (stack->len == 0 || strcmp (g_ptr_array_index (t, g_array_index (stack, guint, stack->len - 1)), want) != 0)
        {
          /* unpaired ([0,1) is an interval): nothing here can be trusted */
          g_array_set_size (out, 0);
          g_array_unref (stack);
          stack = NULL;
          return out;
        }
      open = g_array_index (stack, guint, stack->len - 1);
      g_array_set_size (stack, stack->len - 1);
      if (*want == '{' || (i > 0 && is_size_token (g_ptr_array_index (t, i - 1))))
        continue;
      if (i + 1 < t->len && strcmp (g_ptr_array_index (t, i + 1), "^") == 0)
        g_array_append_val (out, ((ScriptBase) { open, i, FALSE }));
      else if (i + 2 < t->len && open >= 1 && strcmp (g_ptr_array_index (t, i + 1), "}") == 0 &&
               strcmp (g_ptr_array_index (t, i + 2), "^") == 0 &&
               strcmp (g_ptr_array_index (t, open - 1), "{") == 0)
        {
          /* the group is an argument of the token before it (\sqrt{(x)}^2,
           * x^{(k)}) unless that token is neither a command nor a script */
          const char *before = open >= 2 ? g_ptr_array_index (t, open - 2) : "";
          if (before[0] != '\\' && strcmp (before, "^") != 0 && strcmp (before, "_") != 0)
            g_array_append_val (out, ((ScriptBase) { open, i, TRUE }));
        }
    }
  return out;
}

char *
fm_recognize_spell_script_bases (const char *latex, FmScriptBase measured, double *confidence)
{
  g_autoptr (GArray) at = g_array_new (FALSE, FALSE, sizeof (gsize));
  g_autoptr (GPtrArray) t = NULL;
  g_autoptr (GArray) bases = NULL;
  GString *out;
  guint next = 0;

  if (latex == NULL || (strstr (latex, ")") == NULL && strstr (latex, "]") == NULL) || strchr (latex, '^') == NULL)
    return NULL;
  t = latex_tokens_at (latex, at);
  bases = script_bases (t);
  if (bases->len == 0)
    return NULL;
  if (measured != FM_SCRIPT_BASE_CHAR && measured != FM_SCRIPT_BASE_GROUP)
    {
      /* the glyphs cannot say which it is: neither spelling is sure */
      *confidence = MIN (*confidence, CONF_CUT);
      return g_strdup (latex);
    }
  out = g_string_new (NULL);
  for (guint b = 0; b < bases->len; b++)
    {
      const ScriptBase *sb = &g_array_index (bases, ScriptBase, b);
      gsize open_at = g_array_index (at, gsize, sb->open);
      gsize after_close = g_array_index (at, gsize, sb->close) + 1;

      if (sb->group && measured == FM_SCRIPT_BASE_CHAR)
        {
          /* drop the `{` before the bracket and the `}` after it */
          gsize brace = g_array_index (at, gsize, sb->open - 1);
          gsize brace_close = g_array_index (at, gsize, sb->close + 1);
          g_string_append_len (out, latex + next, brace - next);
          g_string_append_len (out, latex + brace + 1, after_close - brace - 1);
          next = brace_close + 1;
        }
      else if (!sb->group && measured == FM_SCRIPT_BASE_GROUP)
        {
          g_string_append_len (out, latex + next, open_at - next);
          g_string_append_c (out, '{');
          g_string_append_len (out, latex + open_at, after_close - open_at);
          g_string_append_c (out, '}');
          next = after_close;
        }
    }
  g_string_append (out, latex + next);
  if (strcmp (out->str, latex) == 0)
    {
      g_string_free (out, TRUE);
      return NULL;
    }
  return g_string_free (out, FALSE);
}

/* Poppler boxes a glyph from its font's ascent to its descent: its baseline
 * sits DESCENT_SHARE of the box's height above the bottom (0.22 of CM's
 * 0.885 em box: cmr's 0.194 em; Latin Modern Math's 1.0 em box: 0.21).
 * Under CHAR_MAX_RAISE of the base's size (sup1 0.413 em on CM, Latin
 * Modern Math's SuperscriptShiftUp 0.363) a script sits as on a character,
 * over GROUP_MIN_RAISE as on a group box (CM's 0.75 em parenthesis less 0.7
 * of sup_drop 0.386: 0.48 em; Latin Modern Math's less 0.7 of 0.25: 0.575);
 * between, either. */
#define DESCENT_SHARE   0.22
#define CHAR_MAX_RAISE  0.43
#define GROUP_MIN_RAISE 0.46

static FmScriptBase
script_raise (const FmTextGlyph *base, const FmTextGlyph *sup)
{
  double bh = fm_rect_h (&base->r), sh = fm_rect_h (&sup->r);
  double b_share = bh / base->size, s_share = sh / sup->size;
  double raise;

  /* boxes of fonts whose ascent and descent differ place their baselines
   * differently: their heights per point tell */
  if (fabs (b_share - s_share) > 0.01 * MAX (b_share, s_share))
    return FM_SCRIPT_BASE_UNKNOWN;
  raise = ((base->r.y1 - DESCENT_SHARE * bh) - (sup->r.y1 - DESCENT_SHARE * sh)) / base->size;
  if (g_getenv ("FORMULATE_TRACE_SCRIPTS") != NULL)
    g_printerr ("script-base: %.3f (box %.3f / %.3f em)\n", raise, b_share, s_share);
  return raise < CHAR_MAX_RAISE ? FM_SCRIPT_BASE_CHAR : raise > GROUP_MIN_RAISE ? FM_SCRIPT_BASE_GROUP
                                                                                  : FM_SCRIPT_BASE_UNKNOWN;
}

/* The superscript of a `)` or `]` among a region's glyphs: the nearest
 * smaller glyph that starts at its right edge and sits higher (Poppler's
 * order puts a raised script on a line of its own), or NULL. */
static const FmTextGlyph *
script_of (const FmPageText *pt, const FmTextGlyph *b)
{
  const FmTextGlyph *best = NULL;

  for (int j = 0; j < pt->n; j++)
    {
      const FmTextGlyph *g = &pt->g[j];

      if (g->slot != b->slot || g->size <= 0 || g->size >= 0.9 * b->size ||
          g->r.y1 >= b->r.y1 - 0.1 * b->size || g->r.x0 < b->r.x1 - 0.2 * b->size ||
          g->r.x0 > b->r.x1 + 0.3 * b->size)
        continue;
      if (best == NULL || g->r.x0 < best->r.x0)
        best = g;
    }
  return best;
}

FmScriptBase
fm_recognize_measure_script_bases (FmDocument *doc, const FmRegion *region)
{
  g_autoptr (GPtrArray) regions = g_ptr_array_new ();
  FmPageText pt = { 0 };
  FmScriptBase seen = FM_SCRIPT_BASE_NONE;

  g_ptr_array_add (regions, (gpointer) region);
  if (!fm_page_text_load (&pt, regions, doc, region->page, NULL))
    return FM_SCRIPT_BASE_UNKNOWN;
  fm_page_text_assign (&pt, regions);
  for (int i = 0; i < pt.n; i++)
    {
      const FmTextGlyph *g = &pt.g[i];
      const FmTextGlyph *sup;

      if (g->slot != 0 || (g->c != ')' && g->c != ']') || g->size <= 0 || (sup = script_of (&pt, g)) == NULL)
        continue;
      FmScriptBase here = script_raise (g, sup);
      seen = seen == FM_SCRIPT_BASE_NONE || seen == here ? here : FM_SCRIPT_BASE_UNKNOWN;
    }
  fm_page_text_clear (&pt);
  return seen;
}

/* fm-mathtext's verdicts in the pipeline's terms. */
static FmTextReadVerdict
read_mathtext (FmDocument *doc, const FmRegion *region, char **latex, GStrv *symbols,
               GError **error)
{
  FmRegion seen = *region;
  FmMathTextResult *result;
  FmTextReadVerdict verdict = FM_TEXT_READ_UNAVAILABLE;

  /* The glyphs of what the model sees: a display's crop takes in the pieces
   * of it that Poppler boxed beside the detected box ("det" before a
   * matrix, fm_recognize_prepare_page); read from the box alone they made
   * the two readings disagree. */
  if (region->crop_box.x1 > region->crop_box.x0 && region->crop_box.y1 > region->crop_box.y0)
    fm_rect_union (&seen.box, &region->crop_box);
  result = fm_mathtext_read_region (doc, &seen, error);

  *latex = NULL;
  *symbols = NULL;
  if (result == NULL)
    return FM_TEXT_READ_UNAVAILABLE;
  if (result->latex != NULL && result->latex[0] != '\0')
    switch (result->verdict)
      {
      case FM_MATHTEXT_CERTAIN:
        verdict = FM_TEXT_READ_CERTAIN;
        break;
      case FM_MATHTEXT_UNCERTAIN:
        verdict = result->unsure_spelling ? FM_TEXT_READ_DOUBTFUL : FM_TEXT_READ_UNCERTAIN;
        break;
      case FM_MATHTEXT_UNAVAILABLE:
      default:
        break;
      }
  if (verdict != FM_TEXT_READ_UNAVAILABLE)
    *latex = g_strdup (result->latex);
  if (verdict == FM_TEXT_READ_UNCERTAIN || verdict == FM_TEXT_READ_DOUBTFUL)
    *symbols = constraint_symbols (result);
  fm_mathtext_result_free (result);
  return verdict;
}

FmTextReader
fm_recognize_text_reader (void)
{
  return read_mathtext;
}

gboolean
fm_crop_rule_from_string (const char *name, FmCropRule *out)
{
  if (g_strcmp0 (name, "box") == 0)
    *out = FM_CROP_RULE_BOX;
  else if (g_strcmp0 (name, "line") == 0)
    *out = FM_CROP_RULE_LINE;
  else
    return FALSE;
  return TRUE;
}

FmRecognizeOptions
fm_recognize_default_options (void)
{
  FmRecognizeOptions opts = { 0 };

  opts.em_px = FM_RENDER_DEFAULT_EM_PX;
  /* The image model reads every formula and the text layer checks it
   * (combined mode): on bench/pdf-e2e's fresh seeds it reads more formulas
   * exactly than the image model alone, and its confidence flags the wrong
   * ones (bench/RESULTS.md, docs/text-layer.md). Text first (CERTAIN skips
   * the model) measured worse with the v1 model. */
  opts.read_text = fm_recognize_text_reader ();
  opts.combine = TRUE;
  return opts;
}

void
fm_recognize_prepare_page (FmDocument *doc, GPtrArray *regions, guint first, FmCropRule rule)
{
  g_autofree FmRect *boxes = NULL;
  g_autoptr(GError) error = NULL;

  if (first >= regions->len)
    return;
  boxes = g_new (FmRect, regions->len - first);
  for (guint i = first; i < regions->len; i++)
    boxes[i - first] = ((FmRegion *) regions->pdata[i])->box;
  /* On failure (a page whose text layer cannot be read) fm_page_text_crop_boxes
   * has already filled in the boxes as found; recognition goes on with them. */
  if (rule == FM_CROP_RULE_LINE)
    fm_page_text_crop_boxes (doc, regions, first, boxes, &error);
  for (guint i = first; i < regions->len; i++)
    ((FmRegion *) regions->pdata[i])->crop_box = boxes[i - first];
}

void
fm_recognize_task_clear (FmRecognizeTask *task)
{
  g_clear_pointer (&task->error, g_free);
  g_clear_pointer (&task->crop, fm_gray_image_free);
}

static void
set_result (FmRegion *region, const char *latex, double confidence, FmProvenance provenance)
{
  g_free (region->latex);
  region->latex = g_strdup (latex);
  region->confidence = confidence;
  region->provenance = provenance;
}

static void
trace_choice (const FmRegion *region, FmChoice choice, FmTextReadVerdict verdict, const char *text,
              const FeResult *model, const FeResult *second, const char *latex, double confidence)
{
  static const char *const names[] = { "image", "agree", "constrained", "text", "disagree" };
  const char *path = g_getenv ("FM_RECOGNIZE_TRACE");
  g_autoptr(GString) line = NULL;
  FILE *f;

  if (path == NULL || (f = fopen (path, "a")) == NULL)
    return;
  line = g_string_new (NULL);
  g_string_append_printf (line, "%s\t%d\t%.4f\t%.4f\t%s\t%s\t%s\t%s\t%d\t%s\t%.2f %.2f %.2f %.2f\n",
                          names[choice], verdict, model->confidence, confidence, latex ? latex : "",
                          text ? text : "", model->latex ? model->latex : "",
                          second && second->latex ? second->latex : "", region->page,
                          fm_region_kind_to_string (region->kind), region->box.x0, region->box.y0,
                          region->box.x1, region->box.y1);
  fputs (line->str, f);
  fclose (f);
}

/* Combined mode: each reading that disagrees with its region's glyphs is
 * decoded once more, constrained by the glyphs' reading (its tokens: the
 * engine keeps the symbols), from the encoding the first reading used
 * (FeRecognizeParams.recheck: no second encode of the image); then
 * fm_recognize_choose picks among the three. */
typedef struct {
  const gsize *slot;                  /* image -> task */
  const FmTextReadVerdict *verdicts;  /* per task */
  char **text_latex;                  /* per task */
  GPtrArray **symbols;                /* per image: the glyphs' tokens */
  FeSymbolConstraint *constraints;    /* per image */
  FeResult *second;                   /* per image: the constrained reading */
} GlyphRecheck;

/* FeRecognizeParams.recheck: the glyphs' constraint for image k, or NULL
 * where the reader is CERTAIN its own reading beats a constrained one
 * (development seed 412: the constrained reading agreed with its symbols 27
 * times and was right 11 times, the reader 19 times: the model keeps its
 * own style, \mathcal{Q} for Q, and layout), or the reading already has
 * the glyphs' symbols. */
static const FeSymbolConstraint *
glyph_recheck (void *user_data, size_t k, const FeResult *first)
{
  GlyphRecheck *gr = user_data;
  const char *text = gr->text_latex[gr->slot[k]];

  if (text == NULL || first->latex == NULL || !is_unsure (gr->verdicts[gr->slot[k]]) ||
      fm_recognize_symbol_distance (first->latex, text) == 0)
    return NULL;
  /* the reading's tokens (its sentence punctuation included: the reader
   * looks beside a display for it) */
  g_clear_pointer (&gr->symbols[k], g_ptr_array_unref);
  gr->symbols[k] = latex_tokens (text);
  gr->constraints[k] = (FeSymbolConstraint) {
    .symbols = (const char *const *) gr->symbols[k]->pdata,
    .n_symbols = (int) gr->symbols[k]->len,
  };
  return &gr->constraints[k];
}

/* Room for n_images rechecks; rp (combined mode), when not NULL, asks the
 * engine for them. */
static void
glyph_recheck_start (GlyphRecheck *gr, FeRecognizeParams *rp, const gsize *slot,
                     const FmTextReadVerdict *verdicts, char **text_latex, gsize n_images)
{
  *gr = (GlyphRecheck) {
    .slot = slot, .verdicts = verdicts, .text_latex = text_latex,
    .symbols = g_new0 (GPtrArray *, n_images + 1),
    .constraints = g_new0 (FeSymbolConstraint, n_images + 1),
    .second = g_new0 (FeResult, n_images + 1),
  };
  if (rp != NULL)
    {
      rp->recheck = glyph_recheck;
      rp->recheck_user_data = gr;
      rp->rechecked = gr->second;
    }
}

static void
glyph_recheck_end (GlyphRecheck *gr, gsize n_images)
{
  for (gsize k = 0; k < n_images; k++)
    {
      fe_result_clear (&gr->second[k]);
      g_clear_pointer (&gr->symbols[k], g_ptr_array_unref);
    }
  g_free (gr->symbols);
  g_free (gr->constraints);
  g_free (gr->second);
}

/* A display's reading without a leading \displaystyle: a display is set
 * in display style already, and the corpus (../shared) writes it in none
 * of its 22723 displays; the model starts display readings with it
 * (development seed 1103: "\displaystyle W=\bigcup_{...}" on CM, LM and
 * Times). In place; a reading that is nothing else stays. */
void
fm_recognize_strip_display_style (char *latex)
{
  static const char word[] = "\\displaystyle";
  gsize n = strlen (word);

  if (latex == NULL || strncmp (latex, word, n) != 0 || g_ascii_isalpha (latex[n]))
    return;
  while (latex[n] == ' ')
    n++;
  if (latex[n] == '\0')
    return;
  memmove (latex, latex + n, strlen (latex + n) + 1);
}

/* The chosen reading's scripts on closing brackets as the glyph boxes
 * measure them (fm_recognize_measure_script_bases), only for a reading
 * that has such a script: the measure gives the page's glyphs to the
 * region again, from the document's cached copy of the page's layer
 * (fm_page_text_load; read from Poppler again only when the page left the
 * document's recent pages meanwhile: same content). */
static void
with_measured_script_bases (const FmRecognizeTask *task, char **latex, double *confidence)
{
  double probe = 1.0;
  g_autofree char *has = fm_recognize_spell_script_bases (*latex, FM_SCRIPT_BASE_NONE, &probe);
  char *spelt;

  if (has == NULL)
    return;
  spelt = fm_recognize_spell_script_bases (*latex, fm_recognize_measure_script_bases (task->document, task->region),
                                           confidence);
  if (spelt != NULL)
    {
      g_free (*latex);
      *latex = spelt;
    }
}

/* After the model read every image (and rechecked those glyph_recheck
 * asked for, into second): fm_recognize_choose picks among the three; the
 * chosen reading replaces results[k]. */
static void
check_with_glyphs (const FmRecognizeTask *tasks, gsize n_images, const GlyphRecheck *gr,
                   FeResult *results, FmProvenance *provenances)
{
  const gsize *slot = gr->slot;
  const FmTextReadVerdict *verdicts = gr->verdicts;
  char **text_latex = gr->text_latex;

  for (gsize k = 0; k < n_images; k++)
    {
      const FeResult *two = gr->second[k].latex != NULL ? &gr->second[k] : NULL;
      g_autofree char *latex = NULL;
      double confidence = 0;
      FmProvenance provenance;
      FmChoice choice;

      if (results[k].latex == NULL)
        continue;
      choice = fm_recognize_choose (verdicts[slot[k]], text_latex[slot[k]], results[k].latex,
                                    results[k].confidence, two ? two->latex : NULL,
                                    two ? two->confidence : 0, &latex, &confidence, &provenance);
      if (tasks[slot[k]].region->kind == FM_REGION_DISPLAY)
        fm_recognize_strip_display_style (latex);
      if (verdicts[slot[k]] != FM_TEXT_READ_UNAVAILABLE)
        with_measured_script_bases (&tasks[slot[k]], &latex, &confidence);
      trace_choice (tasks[slot[k]].region, choice, verdicts[slot[k]], text_latex[slot[k]], &results[k], two, latex, confidence);
      if (strcmp (latex, results[k].latex) != 0)
        {
          /* the engine frees results with free() */
          char *copy = strdup (latex);
          if (copy != NULL)
            {
              free (results[k].latex);
              results[k].latex = copy;
            }
        }
      results[k].confidence = (float) confidence;
      provenances[k] = provenance;
    }
}

fe_status
fm_recognize_run (FeState *state, FmRecognizeTask *tasks, gsize n_tasks,
                  const FmRecognizeOptions *opts)
{
  FmRecognizeOptions defaults = fm_recognize_default_options ();
  g_autofree FmGrayImage **grays = g_new0 (FmGrayImage *, n_tasks + 1);
  g_autofree FeImage *images = g_new0 (FeImage, n_tasks + 1);
  g_autofree FeResult *results = NULL;
  GlyphRecheck recheck;
  g_autofree gsize *slot = g_new0 (gsize, n_tasks + 1);   /* image -> task */
  g_autofree gboolean *text_guided = g_new0 (gboolean, n_tasks + 1);
  /* per task: the glyphs' symbols of an UNCERTAIN reading (g_strfreev) */
  GStrv *task_symbols = g_new0 (GStrv, n_tasks + 1);
  /* combined mode: the reader's verdict and reading per task (g_free) */
  g_autofree FmTextReadVerdict *verdicts = g_new0 (FmTextReadVerdict, n_tasks + 1);
  char **text_latex = g_new0 (char *, n_tasks + 1);
  g_autofree FmProvenance *provenances = NULL;
  g_autofree FeSymbolConstraint *constraints = g_new0 (FeSymbolConstraint, n_tasks + 1);
  gboolean constrained = FALSE;
  FeRecognizeParams rp = fe_recognize_default_params ();
  int em_px;
  gsize n_images = 0;
  fe_status status = FE_OK;

  if (opts == NULL)
    opts = &defaults;
  em_px = opts->em_px > 0 ? opts->em_px : FM_RENDER_DEFAULT_EM_PX;

  for (gsize i = 0; i < n_tasks; i++)
    {
      FmRecognizeTask *task = &tasks[i];
      FmRegion *region = task->region;
      g_autoptr(GError) error = NULL;
      double scale, font_size = region->font_size;
      gint64 t0 = g_get_monotonic_time ();

      task->confidence_min = -1;
      verdicts[i] = FM_TEXT_READ_UNAVAILABLE;
      /* An equation number is text, not math: the window shows it with its
       * display and exports carry the text layer's number. */
      if (region->kind == FM_REGION_NUMBER)
        continue;

      if (opts->read_text != NULL)
        {
          g_autofree char *latex = NULL;
          g_autoptr(GError) read_error = NULL;
          FmTextReadVerdict verdict = opts->read_text (task->document, region, &latex,
                                                       &task_symbols[i], &read_error);

          if (opts->combine)
            {
              /* The model reads every region; the glyphs check it below. */
              verdicts[i] = latex != NULL ? verdict : FM_TEXT_READ_UNAVAILABLE;
              text_latex[i] = g_steal_pointer (&latex);
              g_clear_pointer (&task_symbols[i], g_strfreev);
            }
          else if (verdict == FM_TEXT_READ_CERTAIN && latex != NULL)
            {
              /* The glyphs are the formula: no model guess can beat them. */
              set_result (region, latex, 1.0, FM_PROVENANCE_TEXT);
              task->confidence_min = 1.0;
              region->recognize_ms = (g_get_monotonic_time () - t0) / 1000.0;
              if (opts->keep_crops)
                task->crop = fm_region_render_crop (task->document, region, em_px,
                                                    FM_RECOGNIZE_CROP_MARGIN_EM, NULL);
              continue;
            }
          /* UNCERTAIN: the model reads the crop, preferring the symbols the
           * glyphs back (FeSymbolConstraint, engine/fe-constraint.c). */
          text_guided[i] = is_unsure (verdict) && !opts->combine;
          if (!text_guided[i])
            g_clear_pointer (&task_symbols[i], g_strfreev);
        }

      grays[i] = fm_region_render_crop (task->document, region, em_px,
                                        FM_RECOGNIZE_CROP_MARGIN_EM, &error);
      if (grays[i] == NULL)
        {
          task->error = g_strdup (error->message);
          continue;
        }
      scale = fm_region_crop_scale (region, em_px);
      images[n_images] = (FeImage) {
        .data = grays[i]->pixels, .width = grays[i]->width,
        .height = grays[i]->height, .stride = grays[i]->stride,
        .format = FE_PIXEL_GRAY8,
        /* No font size (a box drawn by hand) or a nonsense one (Type 3
         * fonts report 0.01 or 5000 pt, and the crop falls back to another
         * scale): the engine estimates. */
        .em_px_hint = font_size >= 0.5 && font_size <= 1000 ? (float) (font_size * scale) : 0.0f,
      };
      if (opts->constrain_uncertain && task_symbols[i] != NULL && task_symbols[i][0] != NULL)
        {
          constraints[n_images] = (FeSymbolConstraint) {
            .symbols = (const char *const *) task_symbols[i],
            .n_symbols = (int) g_strv_length (task_symbols[i]),
          };
          constrained = TRUE;
        }
      slot[n_images++] = i;
    }

  results = g_new0 (FeResult, n_images + 1);
  provenances = g_new0 (FmProvenance, n_images + 1);
  if (opts->beam_width > 0)
    rp.beam_width = opts->beam_width;
  rp.abort_callback = opts->abort_callback;
  rp.abort_user_data = opts->abort_user_data;
  rp.progress_callback = opts->progress_callback;
  rp.progress_user_data = opts->progress_user_data;
  if (constrained)
    rp.constraints = constraints;
  glyph_recheck_start (&recheck, opts->combine ? &rp : NULL, slot, verdicts, text_latex, n_images);
  if (n_images > 0)
    status = fe_recognize (state, images, n_images, &rp, results);
  if (opts->combine && status == FE_OK)
    check_with_glyphs (tasks, n_images, &recheck, results, provenances);
  glyph_recheck_end (&recheck, n_images);

  for (gsize k = 0; k < n_images; k++)
    {
      FmRecognizeTask *task = &tasks[slot[k]];

      if (results[k].latex != NULL)
        {
          FmProvenance provenance = text_guided[slot[k]] ? FM_PROVENANCE_TEXT_IMAGE : FM_PROVENANCE_IMAGE;
          if (opts->combine && provenances[k] != FM_PROVENANCE_NONE)
            provenance = provenances[k];
          set_result (task->region, results[k].latex, results[k].confidence, provenance);
          task->confidence_min = results[k].confidence_min;
          task->region->recognize_ms = results[k].preprocess_ms + results[k].encoder_ms
                                       + results[k].decoder_ms;
        }
      else if (status != FE_OK && status != FE_ERR_ABORTED)
        task->error = g_strdup (fe_last_error ());
      fe_result_clear (&results[k]);
    }

  for (gsize i = 0; i < n_tasks; i++)
    {
      if (opts->keep_crops && grays[i] != NULL && tasks[i].crop == NULL)
        tasks[i].crop = g_steal_pointer (&grays[i]);
      g_clear_pointer (&grays[i], fm_gray_image_free);
      g_strfreev (task_symbols[i]);
      g_free (text_latex[i]);
    }
  g_free (task_symbols);
  g_free (text_latex);
  return status;
}
