/* fm-detect.c - formulas from Poppler's text layout (see fm-detect.h). */
#include "fm-detect.h"
#include "fm-fonts.h"
#include "fm-geometry.h"
#include "fm-ink.h"
#include "fm-layout.h"

#include <math.h>
#include <sys/mman.h>
#include <string.h>

typedef enum {
  CLS_TEXT,      /* a letter or symbol of running text                        */
  CLS_NEUTRAL,   /* digits, ASCII operators, brackets, function names          */
  CLS_WEAK,      /* a short italic word in a text italic: math in mathptmx etc */
  CLS_STRONG,    /* math font or math symbol                                   */
} GlyphClass;

typedef struct {
  gunichar c;
  FmRect r;
  double size;
  FmFontClass font;
  GlyphClass cls;
  gboolean space_before;   /* a space or line break precedes it in the text  */
  gboolean line_before;    /* a line break precedes it                        */
  gboolean ext;            /* from a TeX math extension font                  */
  gboolean bold;           /* from a bold face                                */
  gboolean ink;            /* found in the ink only (ink_lost_glyphs)         */
  gboolean unit;           /* starts a unit after a number (classify_units)   */
} Glyph;

static gboolean is_prefix_operator (gunichar c);

/* The character of a glyph the text layer lost and the ink shows: a large
 * delimiter (a private-use code point: no rule of the text applies to it). */
#define INK_GLYPH 0xE000

typedef struct {
  int start, end;          /* glyph range [start, end)                        */
  FmRect box;
  double em;               /* median font size                                */
  double em_max;           /* largest font size (scripts pull the median down) */
  int n_text, n_neutral, n_weak, n_strong;
  gboolean is_display;
  gboolean is_display_piece; /* a display's limit/script, if it has a display */
  gboolean is_number;      /* looks like "(3.1)"                               */
  int block;               /* display block index or -1                       */
} Chunk;

/* One gray render of the page: where its ink is (see ink_map_init). */
typedef struct InkMap InkMap;
struct InkMap {
  guint8 *ink;     /* 1 = ink */
  int w, h;
  double scale;
  int *label;      /* scratch, w*h, component id stamp */
  gsize label_cap; /* ints mapped at label (labels_new) */
  guint8 *dirty;   /* per 4 KiB of label: written (labels_keep clears those) */
  int *stack;
};

/* A formula in the making: the glyphs it holds. */
typedef struct Proto {
  int *idx;
  int n;
  FmRegionKind kind;
  int chunk_first;  /* for ordering */
  int label_block;  /* numbers: the display block they label */
  gboolean absorb_only;  /* script-sized digits: kept only when joined to a formula */
} Proto;

/* Text margins of each column (see find_margins). */
typedef struct {
  gboolean known[2];
  double left[2], right[2];  /* per column (0 left/only, 1 right of a gutter) */
} Margins;

/* One page along fm_detect_page's phases: the first fields are what
 * grouping knows about the page besides its glyphs (the helpers read them);
 * the rest is what each phase leaves for the next ones. */
typedef struct {
  gboolean has_gutter;     /* a two-column page: the white stripe between   */
  double gutter_x0, gutter_x1;
  const InkMap *ink;       /* the page's ink (upright frame), or NULL        */

  FmDetectOptions opts;
  int page_index;
  /* Poppler's page and text layer, held (with the document's lock) until
   * page_release */
  PopplerPage *page;
  char *text;
  PopplerRectangle *rects;
  guint n_rects;
  GList *attrs;
  Glyph *g;                /* the glyphs, in the upright frame once turned   */
  int n;
  double body_em;          /* the page's median font size                    */
  gboolean unicode_math;   /* math letters in U+1D400-1D7FF (unicode-math)   */
  int rot;                 /* text direction (text_direction)                */
  double page_w, page_h;   /* the page in the upright frame                  */
  double disp_w, disp_h;   /* ... and as displayed                           */
  InkMap ink_map;          /* valid when have_ink; ink points to it          */
  gboolean have_ink;
  GArray *comps;           /* InkComp: the ink's components, while found     */
  GArray *chunks;          /* Chunk                                          */
  Margins margins;
  FmRect *blocks;          /* display blocks (emptied ones: zero width)      */
  int *block_first;        /* each block's first chunk                       */
  int n_blocks;
  GPtrArray *protos;       /* Proto: displays, numbers, inline formulas      */
} PageCtx;

/* Whether x-centres a and b lie in different columns. A centre inside the
 * gutter is the left column's: the right column's lines start where the
 * gutter ends, and what reaches into it is an overfull line of the left
 * column (X_{q_\ell} f = 0 whose 0 stands in the gutter). */
static int
column_of (const PageCtx *pc, double cx)
{
  return pc->has_gutter && cx >= pc->gutter_x1 ? 1 : 0;
}

static gboolean
across_gutter (const PageCtx *pc, double a, double b)
{
  return pc != NULL && column_of (pc, a) != column_of (pc, b);
}

FmDetectOptions
fm_detect_default_options (void)
{
  return (FmDetectOptions) { FM_DETECT_RULE_FULL, TRUE };
}

static int
compare_int (const void *a, const void *b)
{
  int x = *(const int *) a, y = *(const int *) b;
  return (x > y) - (x < y);
}

static double
median_size (const Glyph *g, int start, int end)
{
  int n = end - start;
  double *v, m;

  if (n <= 0)
    return 10.0;
  v = g_new (double, n);
  for (int i = 0; i < n; i++)
    v[i] = g[start + i].size;
  m = fm_median (v, n, 10.0);
  g_free (v);
  return m > 0.5 ? m : 10.0;
}

static gboolean
is_operator (gunichar c)
{
  /* ':' is a relation in math (f : X -> Y, :=), '\\' is \setminus in
   * CMSY; running text has no math on both sides of them. */
  if (c < 128)
    return strchr ("+-=<>|/*:\\", (int) c) != NULL && c != 0;
  /* arrows: some are "other symbols" in Unicode (U+21DD squiggly arrow) */
  if ((c >= 0x2190 && c <= 0x21FF) || (c >= 0x27F0 && c <= 0x27FF) || (c >= 0x2900 && c <= 0x297F))
    return TRUE;
  /* what Poppler maps CMSY's binary operators to: \circ -> U+25E6 WHITE
   * BULLET, \bullet -> U+2022, \dagger, \star, triangles */
  if (c == 0x25E6 || c == 0x2022 || c == 0x2219 || c == 0x22C6 || c == 0x2020 || c == 0x2021 ||
      c == 0x25B3 || c == 0x25BD || c == 0x25C3 || c == 0x25B9)
    return TRUE;
  return g_unichar_type (c) == G_UNICODE_MATH_SYMBOL || c == 0x00B1 || c == 0x00D7 ||
         c == 0x00B7 || c == 0x22C5 || c == 0x0338 ||
         g_unichar_type (c) == G_UNICODE_NON_SPACING_MARK;
}

/* Letters of g[i..j) at the word's full size (not scripts). */
static int
full_size_letters (const Glyph *g, int i, int j)
{
  double top = 0;
  int count = 0;

  for (int k = i; k < j; k++)
    top = MAX (top, g[k].size);
  for (int k = i; k < j; k++)
    count += g[k].size >= 0.85 * top;
  return count;
}

static gboolean v_overlap_enough (const FmRect *a, const FmRect *b, double frac);

/* Whether italic letters a and b (in that order) are two words of one
 * emphasised phrase: same size, same line, a word space apart (math's thin
 * space before "dx" is 1/6 em; a word space is 1/3 em, at least 2/9 em
 * when the line is squeezed). */
static gboolean
word_space_between (const Glyph *a, const Glyph *b)
{
  double em = MAX (a->size, b->size);

  return b->space_before && g_unichar_isalpha (a->c) && g_unichar_isalpha (b->c) &&
         a->font == FM_FONT_TEXT_ITALIC && b->font == FM_FONT_TEXT_ITALIC &&
         fabs (a->size - b->size) <= 0.1 * em && v_overlap_enough (&a->r, &b->r, 0.5) &&
         b->r.x0 - a->r.x1 >= 0.15 * em && b->r.x0 - a->r.x1 < 1.0 * em;
}


/* Whether italic letters a and b are the last and first words of two lines
 * of one emphasised phrase ("\emph{as so}" broken after "as"). */
static gboolean
line_broken_phrase (const Glyph *a, const Glyph *b)
{
  double em = MAX (a->size, b->size);

  return b->line_before && g_unichar_isalpha (a->c) && g_unichar_isalpha (b->c) &&
         a->font == FM_FONT_TEXT_ITALIC && b->font == FM_FONT_TEXT_ITALIC &&
         fabs (a->size - b->size) <= 0.1 * em && b->r.y0 > a->r.y1 - 0.3 * em &&
         /* back to the start of the next line, not a matrix entry below */
         b->r.x1 < a->r.x0 - 5 * em;
}

/* Whether glyph o, next to glyph w on its line, is a math symbol or an
 * operator. */
static gboolean
math_neighbour (const Glyph *o, const Glyph *w)
{
  double em = MAX (o->size, w->size);

  if (fm_rect_h_gap (&o->r, &w->r) > 1.5 * em || !v_overlap_enough (&o->r, &w->r, 0.3))
    return FALSE;
  return o->cls == CLS_STRONG || (o->c != '-' && o->c != '/' && is_operator (o->c));
}

/* Whether glyph b touches glyph a on its line: no space between, less than
 * 0.15 em apart. */
static gboolean
glued (const Glyph *a, const Glyph *b)
{
  double em = MAX (a->size, b->size);

  return !b->space_before && v_overlap_enough (&a->r, &b->r, 0.3) &&
         b->r.x0 - a->r.x1 < 0.15 * em && b->r.x0 - a->r.x1 > -0.3 * em;
}

/* glued(), for a script b of a: Poppler may see a space where the size
 * changes (Libertine's F_{\text{A on B}}), the gap tells. */
static gboolean
script_glued (const Glyph *a, const Glyph *b)
{
  double em = MAX (a->size, b->size);

  return glued (a, b) || (!b->line_before && v_overlap_enough (&a->r, &b->r, 0.3) &&
                          b->r.x0 - a->r.x1 < 0.08 * em && b->r.x0 - a->r.x1 > -0.3 * em);
}

static gboolean
is_math_seed (const Glyph *g)
{
  return g->cls == CLS_STRONG || g->cls == CLS_WEAK || g->font == FM_FONT_MATH;
}

static int
compare_index_x0 (const void *a, const void *b, gpointer data)
{
  const Glyph *g = data;
  double xa = g[*(const int *) a].r.x0, xb = g[*(const int *) b].r.x0;
  return (xa > xb) - (xa < xb);
}

/* For each glyph, a script-sized glyph set against its right end, raised or
 * lowered (4^{1}, \mathsf{y}_\nu), wherever Poppler's order puts it (it often
 * lists raised scripts apart): the one of lowest index, or -1. Sorted by x,
 * so a page costs n log n. */
static int *
right_scripts (const Glyph *g, int n)
{
  int *order = g_new (int, n + 1), *script = g_new (int, n + 1);

  for (int i = 0; i < n; i++)
    {
      order[i] = i;
      script[i] = -1;
    }
  g_qsort_with_data (order, n, sizeof (int), compare_index_x0, (gpointer) g);
  for (int i = 0; i < n; i++)
    {
      const Glyph *b = &g[i];
      double em = b->size, bc = (b->r.y0 + b->r.y1) / 2, lo = b->r.x1 - 0.1 * em;
      int a = 0, z = n;
      while (a < z)
        {
          int mid = (a + z) / 2;
          if (g[order[mid]].r.x0 <= lo)
            a = mid + 1;
          else
            z = mid;
        }
      for (int k = a; k < n && g[order[k]].r.x0 < b->r.x1 + 0.15 * em; k++)
        {
          const Glyph *s = &g[order[k]];
          double sc = (s->r.y0 + s->r.y1) / 2;
          if (order[k] != i && s->size < 0.85 * b->size && s->size > 0.4 * b->size &&
              (g_unichar_isalnum (s->c) || s->c == 0x2212 || s->c == '-') &&
              (bc - sc >= 0.15 * em || sc - bc >= 0.1 * em) &&
              v_overlap_enough (&s->r, &b->r, 0.4) &&   /* not a neighbouring line's script */
              (script[i] < 0 || order[k] < script[i]))
            script[i] = order[k];
        }
    }
  g_free (order);
  return script;
}

/* The word space of the line of word g[i..j), from the gaps between
 * upright letters of running text that Poppler sees a space between, along
 * the line in its order (TeX gives every word space of a justified line one
 * width; punctuation changes the one after it): -1 unless two or more
 * agree within 0.006 em. */
static double
line_word_space (const Glyph *g, int n, int i, int j)
{
  double lo = G_MAXDOUBLE, hi = -G_MAXDOUBLE, size = g[i].size > 0.5 ? g[i].size : 10.0;
  int count = 0;

  for (int dir = -1; dir <= 1; dir += 2)
    for (int k = dir < 0 ? i : j, steps = 0; k > 0 && k < n && steps < 80; k += dir, steps++)
      {
        const Glyph *a = &g[k - 1], *b = &g[k];
        double gap = b->r.x0 - a->r.x1;
        if (!v_overlap_enough (&g[i].r, dir < 0 ? &a->r : &b->r, 0.5) || gap < -0.5 * size || gap > 0.9 * size)
          break;   /* off the line, or into the other column */
        if (!b->space_before || a->font != FM_FONT_TEXT || b->font != FM_FONT_TEXT || a->cls != CLS_TEXT ||
            b->cls != CLS_TEXT || !g_unichar_isalpha (a->c) || !g_unichar_isalpha (b->c) ||
            fabs (a->size - size) > 0.05 * size || fabs (b->size - size) > 0.05 * size ||
            gap < 0.1 * size || gap > 1.0 * size)
          continue;
        count++;
        lo = MIN (lo, gap);
        hi = MAX (hi, gap);
      }
  return count >= 2 && hi - lo <= 0.006 * size ? 0.5 * (lo + hi) : -1;
}

#define GLYPH_WORD_SIZE 16

/* Glyphs [from, to) as UTF-8 in word (GLYPH_WORD_SIZE bytes), cut short
 * where a further character might not fit: long enough for the names the
 * word lists compare with. */
static void
glyph_word (const Glyph *g, int from, int to, char *word)
{
  int len = 0;

  for (int k = from; k < to && len < GLYPH_WORD_SIZE - 6; k++)
    len += g_unichar_to_utf8 (g[k].c, word + len);
  word[len] = '\0';
}

/* The function words of English prose (articles, prepositions, pronouns,
 * conjunctions): the running text's words right before an inline formula
 * ("but $\varphi$", "that $Q = ...$"), never an operator name, though the
 * gap before the formula can measure narrower or wider than the line's word
 * space (fonts' sidebearings) and make them look like one. */
static gboolean
prose_function_word (const char *word)
{
  static const char *const words[] = {
    "a", "an", "the", "of", "on", "in", "to", "at", "by", "as", "or", "and", "but", "for", "if", "so",
    "we", "it", "is", "be", "are", "was", "has", "had", "not", "that", "this", "then", "than", "thus",
    "such", "into", "onto", "from", "with", "you", "your", "they", "their", "our", "its", "all", "any",
    "each", "some", "both", "also", "let", "see", "when", "where", "which", "while", "here", "there",
    "since", "hence", "only", "via", "do", "does", "can", "may", "will", "get", "give", NULL
  };
  for (int i = 0; words[i]; i++)
    if (g_ascii_strcasecmp (word, words[i]) == 0)
      return TRUE;
  return FALSE;
}

/* A footnote mark after the word g[i..j) of full size `size': raised
 * digits or daggers glued to it, then a word space of the line's width
 * and \scriptspace ("Also\footnote{...} $\mathbf{H}^{T}$"; a name's
 * script is followed by its argument, glued or a thin space and
 * \scriptspace on). Returns the end of the mark, or -1. */
static int
footnote_mark_end (const Glyph *g, int n, int i, int j, double size)
{
  int e = j;
  double gap, ws;

  if (j - i < 3 || j >= n || !glued (&g[j - 1], &g[j]) || g[j].size >= 0.85 * size ||
      g[j].r.y1 > g[j - 1].r.y1 - 0.15 * size)
    return -1;
  while (e < n && (e == j || glued (&g[e - 1], &g[e])) && g[e].size < 0.85 * size &&
         (g_unichar_isdigit (g[e].c) || g[e].c == '*' || g[e].c == 0x2020 || g[e].c == 0x2021 ||
          /* (\fnsymbol's other marks: CMSY's \ast as Poppler reads it,
           * \S, \P, \|) */
          g[e].c == 0x2217 || g[e].c == 0x00A7 || g[e].c == 0x00B6 || g[e].c == 0x2016))
    e++;
  if (e == j || e >= n || !g[e].space_before || !v_overlap_enough (&g[j - 1].r, &g[e].r, 0.3))
    return -1;
  gap = g[e].r.x0 - g[e - 1].r.x1;
  ws = line_word_space (g, n, i, j);
  /* (\textsuperscript sets the mark as a math script: \scriptspace,
   * 0.5 pt, comes on top of the word space) */
  if (ws > 0 ? gap < ws - 0.02 * size || gap > ws + 0.08 * size : gap < 0.25 * size)
    return -1;
  return e;
}

/* Whether the word starting at g[i], whose largest letter is size, is a
 * script of the math glyph before it, glued to it (F_{\text{water}}). */
static gboolean
script_of_math_letter (const Glyph *g, int i, double size)
{
  if (i > 0 && script_glued (&g[i - 1], &g[i]) && is_math_seed (&g[i - 1]) && size < 0.85 * g[i - 1].size)
    return TRUE;
  /* Poppler can list a script of text as a line of its own after its
   * letter's line (\rho_\text{w} in a footnote, XeLaTeX Bonum and
   * pdfLaTeX Euler): the letter is then found among the glyphs before,
   * by the script's place - touching its right edge, level with it */
  if (!g[i].line_before)
    return FALSE;
  for (int k = i - 1; k >= 0 && k >= i - 400; k--)
    {
      double em = g[k].size;
      if (is_math_seed (&g[k]) && g_unichar_isalpha (g[k].c) && size < 0.85 * em &&
          fabs (g[i].r.x0 - g[k].r.x1) < 0.08 * em && v_overlap_enough (&g[k].r, &g[i].r, 0.3) &&
          fabs ((g[i].r.y0 + g[i].r.y1) - (g[k].r.y0 + g[k].r.y1)) > 0.1 * em)
        return TRUE;
    }
  return FALSE;
}

/* Whether gap, between an upright name and the next glyph on its line, is
 * TeX's thin space (1/6 em, after an operator name before its operand)
 * rather than a word space: a word space is 1/3 em and shrinks to 2/9 em
 * at most; ws is the line's word space (line_word_space(), -1 where it
 * cannot be measured). On a line squeezed until its word space is about
 * a thin space, only a gap clearly narrower than it is one: "= 0 also s"
 * in Utopia, word spaces 0.17 em. */
static gboolean
thin_space_not_word_space (double gap, double ws, double size)
{
  return gap < 0.2 * size && !(ws > 0 && fabs (gap - ws) < 0.008 * size) &&
         !(ws > 0 && ws < 0.2 * size && gap > ws - 0.02 * size);
}

/* Whether the upright word g[i..j) is text inside a formula (\text{pr}_1,
 * \mathrm{Spec}(A), F_{\text{water}}, \mathrm{d}x) rather than a word of
 * running text: it carries a script, takes an argument in brackets that
 * starts with math, is a script of a math letter, or runs into a math
 * letter, each without a space. */
static gboolean
upright_word_in_math (const Glyph *g, int n, int i, int j, const int *script, double body_em)
{
  double size = 0;

  for (int k = i; k < j; k++)
    size = MAX (size, g[k].size);
  if (j < n && glued (&g[j - 1], &g[j]))
    {
      const Glyph *next = &g[j];
      if (next->size < 0.85 * size && next->r.y0 < g[j - 1].r.y1)
        return TRUE;    /* its script */
      if (is_math_seed (next) && next->size >= 0.85 * size)
        return TRUE;    /* \mathrm{d}x */
      if ((next->c == '(' || next->c == '[') && j + 1 < n && glued (next, &g[j + 1]) && is_math_seed (&g[j + 1]))
        return TRUE;    /* Spec(S */
    }
  /* a short word's script that Poppler lists apart: \mathsf{y}_\nu */
  if (j - i <= 4 && script[j - 1] >= 0)
    return TRUE;
  /* Ci(x) where Poppler sees a space before the bracket or after it (the
   * fonts' sidebearings): by the gaps, no wider than a thin space */
  if (j + 1 < n && (g[j].c == '(' || g[j].c == '[') && is_math_seed (&g[j + 1]) && !g[j].line_before &&
      v_overlap_enough (&g[j - 1].r, &g[j].r, 0.3) && g[j].r.x0 - g[j - 1].r.x1 < 0.12 * size &&
      g[j + 1].r.x0 - g[j].r.x1 < 0.12 * size && g[j].r.x0 - g[j - 1].r.x1 > -0.2 * size)
    return TRUE;
  /* An operator name before its argument: \mathrm{ns}\,z, \operatorname{ph} z
   * - TeX's thin space (1/6 em) before a math letter of the word's size. A
   * word space is 1/3 em and shrinks to 2/9 em at most; a word of running
   * text before an inline formula keeps it. Short words only: special
   * functions' names are abbreviations. */
  if (j < n && j - i <= 4 && (g[j].cls == CLS_STRONG || g[j].cls == CLS_WEAK) && g_unichar_isalpha (g[j].c) &&
      g[j].size >= 0.85 * size && v_overlap_enough (&g[j - 1].r, &g[j].r, 0.3) &&
      g[j].r.x0 - g[j - 1].r.x1 > -0.1 * size)
    {
      /* ... unless the gap is the line's word space (a squeezed line's
       * can be narrower than 0.2 em); with \operatorname's own thin space
       * the name stands two thin spaces (1/3 em) before its argument,
       * which the line's word spaces tell from a word space */
      double gap = g[j].r.x0 - g[j - 1].r.x1, ws = line_word_space (g, n, i, j);
      if (thin_space_not_word_space (gap, ws, size))
        return TRUE;
      if (ws > 0 && fabs (gap - size / 3.0) < 0.02 * size && fabs (gap - ws) > 0.02 * size)
        return TRUE;
    }
  /* ... and between a relation or operator and a math letter, where
   * \operatorname{Bi}\,t puts two thin spaces before the argument: running
   * text has no word between a relation and a letter */
  if (j < n && i > 0 && j - i <= 4 && (g[j].cls == CLS_STRONG || g[j].cls == CLS_WEAK) &&
      g_unichar_isalpha (g[j].c) && g[j].size >= 0.85 * size && is_operator (g[i - 1].c) &&
      g[i - 1].c != '-' && g[i - 1].c != '/' && g[i - 1].c != '|' && g[i - 1].c != 0x2225 &&
      g[i - 1].c != 0x2223 && g[i - 1].c != 0x2016 && g[i - 1].size >= 0.85 * size &&   /* not a fence: "||m|| many g" */ v_overlap_enough (&g[i - 1].r, &g[i].r, 0.3) &&
      v_overlap_enough (&g[j - 1].r, &g[j].r, 0.3) &&
      g[i].r.x0 - g[i - 1].r.x1 < 0.4 * size && g[j].r.x0 - g[j - 1].r.x1 < 0.4 * size)
    return TRUE;
  if (script_of_math_letter (g, i, size))
    return TRUE;        /* a script in text: F_{water} */
  /* A script-sized name in a fraction's numerator or a limit
   * (\frac{\mathrm{Ln}\,\theta}{3}): Poppler may list the denominator
   * between the name and its argument, so the argument is looked for
   * among the next glyphs, level with the name and a thin space on (not a
   * word space: a footnote's "of x") */
  if (j - i <= 4 && size < 0.85 * body_em &&
      /* (not a word of a line of small text: a footnote's "note on x") */
      !(i > 0 && g_unichar_isalpha (g[i - 1].c) && g[i - 1].font != FM_FONT_MATH &&
        fabs (g[i - 1].size - size) < 0.1 * size && v_overlap_enough (&g[i - 1].r, &g[i].r, 0.5)))
    {
      double ws = line_word_space (g, n, i, j);
      for (int k = j; k < n && k < j + 4; k++)
        {
          double gap = g[k].r.x0 - g[j - 1].r.x1;
          if (!v_overlap_enough (&g[j - 1].r, &g[k].r, 0.5))
            continue;
          if ((g[k].cls == CLS_STRONG || g[k].cls == CLS_WEAK) && g_unichar_isalpha (g[k].c) &&
              fabs (g[k].size - size) < 0.1 * size && gap > -0.1 * size && gap < 0.3 * size &&
              !(ws > 0 && fabs (gap - ws) < 0.02 * size))
            return TRUE;
          break;
        }
    }
  return FALSE;
}

/* Whether the upright word g[i..j), an operator name, stands a thin space
 * before a number of its size: \sinh 0 = 0, \log 1 = 0, \cos 0 = 1 in CM
 * and LM, where the name, the digits and '=' all come from the text font
 * (CMR, LMRoman), so the formula had no seed and was missed in every
 * set-up of pdf-e2e (\sinh 0 = 0 on 1077). TeX puts a thin space between
 * an operator and an ordinary operand, 0.166 em measured there; running
 * text sets a word space after a word ("log 2" of a list of files). */
static gboolean
operator_name_before_number (const Glyph *g, int n, int i, int j)
{
  char word[GLYPH_WORD_SIZE];
  double size = 0, gap, ws;
  int k;

  if (j >= n || j - i > 7 || !g_unichar_isdigit (g[j].c))
    return FALSE;
  glyph_word (g, i, j, word);
  for (k = i; k < j; k++)
    size = MAX (size, g[k].size);
  if (!fm_word_is_math_function (word) || g[j - 1].size < 0.85 * size || fabs (g[j].size - size) > 0.1 * size ||
      !v_overlap_enough (&g[j - 1].r, &g[j].r, 0.5))
    return FALSE;
  gap = g[j].r.x0 - g[j - 1].r.x1;
  ws = line_word_space (g, n, i, j);
  if (gap < 0.1 * size || !thin_space_not_word_space (gap, ws, size))
    return FALSE;
  /* a line squeezed to its limit sets a word space under 0.2 em in
   * Times, Palatino (0.19), Libertine, Termes, Pagella (0.167): where the
   * line's word space is not measured, the number must go on into a
   * relation (\sinh 0 = 0), or "log 2, 55, max 10" of a list became
   * formulas (review of e2e12t, fully squeezed lines in six fonts) */
  if (ws > 0)
    return gap < ws - 0.03 * size;
  for (k = j; k < n && (g_unichar_isdigit (g[k].c) || g[k].c == '.') && !g[k].line_before; k++)
    ;
  return k < n && k > j && !g[k].line_before &&
         (g[k].c == '=' || g[k].c == '<' || g[k].c == '>' || g[k].c == 0x2260 || g[k].c == 0x2264 || g[k].c == 0x2265);
}

/* Whether the upright word g[i..j) goes on a script of text that ends at
 * g[end - 1] (F_{\text{A on B}}: "on", then "B"): of its size, level with
 * it, one script-size word space on. */
static gboolean
script_text_continues (const Glyph *g, int i, int j, int end)
{
  const Glyph *p;
  double gap;

  if (end != i || i <= 0 || j - i > 8)
    return FALSE;
  p = &g[i - 1];
  gap = g[i].r.x0 - p->r.x1;
  for (int k = i; k < j; k++)
    if (g[k].size > 1.1 * p->size)
      return FALSE;
  return g[i].space_before && !g[i].line_before && fabs (g[i].size - p->size) < 0.1 * p->size &&
         v_overlap_enough (&p->r, &g[i].r, 0.7) && gap > 0.1 * p->size && gap < 0.6 * p->size;
}

/* Whether the bold letter g[i] is part of a bold phrase (a heading,
 * \textbf{...}): a bold letter a word space or less before or after it. */
static gboolean
bold_phrase (const Glyph *g, int n, int i)
{
  for (int d = -1; d <= 1; d += 2)
    {
      int k = i + d;
      const Glyph *a, *b;
      if (k < 0 || k >= n || !g[k].bold || !g_unichar_isalnum (g[k].c))
        continue;
      a = d < 0 ? &g[k] : &g[i];
      b = d < 0 ? &g[i] : &g[k];
      if (v_overlap_enough (&a->r, &b->r, 0.5) && b->r.x0 - a->r.x1 < 0.6 * MAX (a->size, b->size))
        return TRUE;
    }
  return FALSE;
}

/* Whether the upright word g[i..j) mixes bold and regular letters, at
 * most three full-size ones and no bold phrase around its bold ones: the
 * differential of a vector, \mathrm{d}\mathbf{p} ("dp" with a bold p),
 * \mathbf{F}\mathrm{d}x. Running text does not switch weight inside a
 * word, but prose does bold one letter of it (\textbf{T}he, Ph\textbf{D},
 * \textbf{A}ll \textbf{Y}ou \textbf{N}eed, an acronym's letters): the
 * regular letters must all be the differential's d, or the word must be
 * glued to a math glyph (\mathbf{F}\mathrm{d}\mathbf{r} with a thin
 * space lost, \mathrm{e}\mathbf{x}_i). */
static gboolean
bold_and_regular_word (const Glyph *g, int n, int i, int j)
{
  int bold = 0, regular = 0, other = 0;
  double top = 0;
  gboolean glued = FALSE;

  for (int k = i; k < j; k++)
    top = MAX (top, g[k].size);
  for (int k = i; k < j; k++)
    {
      if (g[k].size < 0.85 * top)
        continue;
      bold += g[k].bold;
      regular += !g[k].bold;
      other += !g[k].bold && g[k].c != 'd';
    }
  /* (a bold word right before or after it: a heading, \textbf{...}) */
  if ((g[i].bold && bold_phrase (g, n, i)) || (g[j - 1].bold && bold_phrase (g, n, j - 1)))
    return FALSE;
  for (int d = -1; d <= 1; d += 2)
    {
      int k = d < 0 ? i - 1 : j;
      if (k < 0 || k >= n || !(g[k].font == FM_FONT_MATH || fm_char_is_math_symbol (g[k].c)))
        continue;
      const Glyph *a = d < 0 ? &g[k] : &g[j - 1], *b = d < 0 ? &g[i] : &g[k];
      if (!b->space_before && v_overlap_enough (&a->r, &b->r, 0.3) && b->r.x0 - a->r.x1 < 0.2 * top)
        glued = TRUE;
    }
  return bold > 0 && regular > 0 && bold + regular <= 3 && (other == 0 || glued);
}

/* Whether the upright word g[i..j) is a function name followed by
 * script-sized letters glued to its end: \mathop{\mathrm{colim}}\nolimits_i
 * and \max_k in fonts whose math letters are the text italic come as one
 * word "colimi", whose name is "colim". */
static gboolean
scripted_function_name (const Glyph *g, int i, int j)
{
  char name[16];
  int nl = 0, e = i;
  double top = 0;

  for (int k = i; k < j; k++)
    top = MAX (top, g[k].size);
  while (e < j && g[e].size >= 0.85 * top)
    e++;
  if (e == j || e < i + 2)
    return FALSE;
  for (int k = e; k < j; k++)
    if (g[k].size >= 0.85 * top)
      return FALSE;
  for (int k = i; k < e && nl < (int) sizeof name - 6; k++)
    nl += g_unichar_to_utf8 (g[k].c, name + nl);
  name[nl] = '\0';
  return fm_word_is_math_function (name);
}

/* Whether g[o] is an operator or relation on the line of the letter
 * g[k], next to it: no wider apart than a thick space and its sidebearings. */
static gboolean
operator_beside (const Glyph *g, int o, int k)
{
  const Glyph *a = o < k ? &g[o] : &g[k], *b = o < k ? &g[k] : &g[o];
  double gap = b->r.x0 - a->r.x1, em = MAX (g[k].size, 1.0);

  return (is_operator (g[o].c) || (fm_char_is_math_symbol (g[o].c) && !g_unichar_isalpha (g[o].c))) &&
         g[o].c != '-' && g[o].c != '/' && fabs (g[o].size - g[k].size) < 0.2 * em &&
         v_overlap_enough (&a->r, &b->r, 0.5) && gap > -0.1 * em && gap < 0.45 * em;
}

/* The word space of the text line of g[k], from the gaps between its
 * upright text letters a space apart (one width to 0.006 em, two samples
 * at least, as band_word_space() asks of a band); -1 where they do not
 * agree. For the glyph classes, before the bands exist. */
static double
glyph_line_word_space (const Glyph *g, int n, int k)
{
  int first = k, last = k, samples = 0;
  double lo = G_MAXDOUBLE, hi = -G_MAXDOUBLE, em = MAX (g[k].size, 1.0);

  while (first > 0 && !g[first].line_before)
    first--;
  while (last + 1 < n && !g[last + 1].line_before)
    last++;
  for (int m = first + 1; m <= last; m++)
    {
      const Glyph *a = &g[m - 1], *b = &g[m];
      double gap = b->r.x0 - a->r.x1;
      if (!b->space_before || a->font != FM_FONT_TEXT || b->font != FM_FONT_TEXT || !g_unichar_isalpha (a->c) ||
          !g_unichar_isalpha (b->c) || fabs (a->size - g[k].size) > 0.05 * em || fabs (b->size - g[k].size) > 0.05 * em ||
          gap < 0.1 * em || gap > 1.0 * em || !v_overlap_enough (&a->r, &b->r, 0.5))
        continue;
      samples++;
      lo = MIN (lo, gap);
      hi = MAX (hi, gap);
    }
  return samples >= 2 && hi - lo <= 0.006 * em ? 0.5 * (lo + hi) : -1;
}

/* Whether the sign g[s] follows running text: it starts its line, or
 * the glyph before it is an upright text letter classed running text
 * ("goes $\to$ \emph{lex}", "the *\emph{new}*", "a $<$\emph{file}$>$").
 * A sign after a math operand is a formula's (review of detectfix16:
 * e^{a+bcd+1}, x_{a<bcd>e}, \sum_{k=\mathit{low}+1} in Times and
 * Palatino, whose scripts glue their signs; f : \mathit{Int} \to
 * \mathit{Nat} on a Times line shrunk to math's thick space, 0.222 em -
 * all split at the italic word). */
static gboolean
sign_after_prose (const Glyph *g, int s)
{
  return s == 0 || g[s].line_before || (g[s - 1].font == FM_FONT_TEXT && g[s - 1].cls == CLS_TEXT);
}

/* Whether the italic run g[i..j) between the signs g[i-1] and g[j] is set
 * like an emphasised word of prose: glued to both (*\emph{new}*,
 * $<$\emph{file}$>$: inside a formula a relation or binary sign has a
 * thick or medium space), or a word space after the left one and that
 * space and the run's italic correction before the right one ($\to$
 * \emph{lex} $\to$). Measured in Times, Palatino, txfonts, pxfonts,
 * Charter: the word space to 0.013 em (Palatino's signs come from virtual
 * fonts, 0.012 em off) and the italic correction under 0.03 em; math
 * letters between operators differ from the word space by 0.014 em or
 * more on the left (txfonts' thick space), or by more than a correction
 * on the right. */
static gboolean
prose_word_between_signs (const Glyph *g, int n, int i, int j)
{
  double em = MAX (g[i].size, 1.0), ws = glyph_line_word_space (g, n, i);
  double left = g[i].r.x0 - g[i - 1].r.x1, right = g[j].r.x0 - g[j - 1].r.x1;

  if (!sign_after_prose (g, i - 1))
    return FALSE;
  if (left < 0.05 * em && right < 0.05 * em)
    return TRUE;
  return ws > 0 && fabs (left - ws) <= 0.013 * em && right - left >= -0.008 * em && right - left <= 0.03 * em;
}

/* Where math letters are the text italic (mathpazo, mathptmx), a run of
 * three or four italic letters with an operator glued on both sides is a
 * formula's (c_X : uvX \to X, Palatino), not an emphasised word: prose
 * sets no word between a relation and an arrow. After classify_words(),
 * which leaves such runs running text. */
static void
classify_italic_runs (Glyph *g, int n)
{
  for (int i = 1, j; i < n; i = MAX (j, i + 1))
    {
      for (j = i; j < n && (j == i || !g[j].space_before) && g_unichar_isalpha (g[j].c) &&
                  g[j].font == FM_FONT_TEXT_ITALIC && g[j].cls == CLS_TEXT;)
        j++;
      if (j - i >= 3 && j - i <= 4 && j < n && (g[j].space_before || !g_unichar_isalpha (g[j].c)) &&
          operator_beside (g, i - 1, i) && operator_beside (g, j, j - 1) && !prose_word_between_signs (g, n, i, j))
        for (int m = i; m < j; m++)
          g[m].cls = CLS_WEAK;
    }
}

/* Word-level decisions: upright function names are neutral; a short italic
 * word on its own is a weak seed, a longer italic word or an italic phrase is
 * emphasis. */
static void
classify_words (Glyph *g, int n, gboolean math_italic, const int *script, double body_em)
{
  int i = 0, script_text_end = -1;

  while (i < n)
    {
      int j = i;
      gboolean italic = FALSE, upright = FALSE;

      if (!g_unichar_isalpha (g[i].c) || g[i].font == FM_FONT_MATH || fm_char_is_math_symbol (g[i].c))
        {
          i++;
          continue;
        }
      while (j < n && (j == i || !g[j].space_before) && g_unichar_isalpha (g[j].c) &&
             g[j].font != FM_FONT_MATH && !fm_char_is_math_symbol (g[j].c))
        j++;
      /* Italic or upright by the word's full-size letters: "T_{\\text{linear}}"
       * in mathptmx is one run, an italic T with upright script letters. */
      {
        double top = 0;
        for (int k = i; k < j; k++)
          top = MAX (top, g[k].size);
        for (int k = i; k < j; k++)
          if (g[k].size >= 0.85 * top)
            {
              if (g[k].font == FM_FONT_TEXT_ITALIC)
                italic = TRUE;
              else
                upright = TRUE;
            }
      }
      if (upright && !italic && footnote_mark_end (g, n, i, j, g[j - 1].size) >= 0)
        {
          /* a word with its footnote mark: running text, and so is the mark */
          int e = footnote_mark_end (g, n, i, j, g[j - 1].size);
          for (int k = j; k < e; k++)
            g[k].cls = CLS_TEXT;
          i = e;
          continue;
        }
      if (upright && !italic)
        {
          char word[GLYPH_WORD_SIZE];
          glyph_word (g, i, j, word);
          /* \mathbf{v}, \mathbf{R}_2: a bold letter on its own (its script
           * too would make it an upright word glued to math: neutral, no seed) */
          int lead = i;
          for (int k = i; k < j; k++)
            if (g[k].size > g[lead].size)
              lead = k;
          if ((full_size_letters (g, i, j) == 1 && g[lead].bold && !bold_phrase (g, n, lead)) ||
              bold_and_regular_word (g, n, i, j))
            for (int k = i; k < j; k++)
              g[k].cls = CLS_WEAK;   /* the letter and its script letters; \mathrm{d}\mathbf{p} */
          else if (!(prose_function_word (word) && g[lead].size >= 0.85 * body_em &&
                     (j >= n || g[j].space_before || g[j].r.x0 - g[j - 1].r.x1 > 0.1 * g[j - 1].size)) &&
                   ((j - i <= 7 && fm_word_is_math_function (word)) ||
                    (j - i <= 9 && scripted_function_name (g, i, j)) ||
                    upright_word_in_math (g, n, i, j, script, body_em) ||
                    script_text_continues (g, i, j, script_text_end)))
            {
              /* (a seed where the operand is a number: \sinh 0 = 0) */
              GlyphClass cls = operator_name_before_number (g, n, i, j) ? CLS_WEAK : CLS_NEUTRAL;
              for (int k = i; k < j; k++)
                g[k].cls = cls;
              /* a script of text glued to a math letter (F_{\text{A on B}}):
               * its next words may follow */
              if (script_text_continues (g, i, j, script_text_end) ||
                  script_of_math_letter (g, i, g[lead].size))
                script_text_end = j;
            }
        }
      else if (italic && upright && full_size_letters (g, i, j) <= 3)
        {
          /* Upright and italic letters in one short run: \mathrm{d}x in
           * mathptmx; running text does not switch faces inside a word. */
          double top = 0;
          for (int k = i; k < j; k++)
            {
              g[k].cls = g[k].font == FM_FONT_TEXT_ITALIC ? CLS_WEAK : CLS_NEUTRAL;
              top = MAX (top, g[k].size);
            }
          /* (F_{\text{A on B}} in txfonts: an italic F, its script "A",
           * and the script's next words) */
          if (g[j - 1].font != FM_FONT_TEXT_ITALIC && g[j - 1].size < 0.85 * top)
            script_text_end = j;
        }
      else if (italic && !upright && math_italic && j - i >= 2 && j - i <= 6 &&
               upright_word_in_math (g, n, i, j, script, body_em))
        {
          /* On such a page, an italic word glued to math as an upright
           * name would be (\mathit{Sh}(\mathcal{C}), \textit{Lift}(x, A'),
           * \textit{PSh}(\mathcal{C}): the Stacks project's categories) is
           * a name in the formula, not emphasis */
          for (int k = i; k < j; k++)
            g[k].cls = CLS_NEUTRAL;
        }
      else if (italic && !upright && full_size_letters (g, i, j) <= 2)
        {
          /* A short italic word is a math letter (with its scripts: "y_ij"
           * in mathptmx is one italic "word" with two small letters), unless
           * it is part of an emphasised phrase: another full-size italic word
           * right before or after it, one plain space away. Math never puts a
           * word space between two letters. */
          gboolean phrase = FALSE;

          if ((i > 0 && word_space_between (&g[i - 1], &g[i])) ||
              (j < n && word_space_between (&g[j - 1], &g[j])) ||
              (i > 0 && line_broken_phrase (&g[i - 1], &g[i])) ||
              (j < n && line_broken_phrase (&g[j - 1], &g[j])))
            {
              /* ... unless the italic run touches a math symbol or an
               * operator ("f dx = c" with a thin space that looks wide). */
              int s0 = i, e0 = j;
              while (s0 > 0 && g_unichar_isalpha (g[s0 - 1].c) && g[s0 - 1].font == FM_FONT_TEXT_ITALIC &&
                     (!g[s0].space_before || word_space_between (&g[s0 - 1], &g[s0])))
                s0--;
              while (e0 < n && g_unichar_isalpha (g[e0].c) && g[e0].font == FM_FONT_TEXT_ITALIC &&
                     (!g[e0].space_before || word_space_between (&g[e0 - 1], &g[e0])))
                e0++;
              int words = 1;
              for (int k = s0 + 1; k < e0; k++)
                words += g[k].space_before;
              /* single letters a word space apart are formulas ("$z$
               * $O(n)$"); a run with a long word ("section up") is emphasis
               * even right before a formula: math's italic words are letters */
              if (words == e0 - s0)
                phrase = FALSE;
              else
                phrase = (e0 - s0) - (j - i) >= 3 ||
                       !((s0 > 0 && math_neighbour (&g[s0 - 1], &g[s0])) ||
                         (e0 < n && math_neighbour (&g[e0], &g[e0 - 1])));
            }
          /* On a page whose math letters come from a math font (CMMI, a
           * math italic), a text-italic word is emphasis (\emph{as},
           * \textsl{do}): only documents whose math italic is the text
           * italic (mathptmx, sfmath) set math letters in it. */
          if (math_italic)
            phrase = TRUE;
          for (int m = i; m < j; m++)
            g[m].cls = phrase ? CLS_TEXT : CLS_WEAK;
          /* (mathptmx, txfonts: F_{\text{A on B}} is one italic "word"
           * ending in its upright script) */
          if (!phrase && g[j - 1].font == FM_FONT_TEXT && g[j - 1].size < 0.85 * g[i].size)
            script_text_end = j;
        }
      i = j;
    }
}

/* Whether digits l and r (l's run of digits ends before r's starts) are two
 * groups of one long number set with a thin or medium space
 * (1.12139\;32942): the left side holds a decimal point with three or more
 * digits after it, both groups three or more digits. Running text puts a
 * word space between numbers and no decimal groups. */
static gboolean
digit_groups (const Glyph *g, int n, int l, int r)
{
  int k, right = 0, group = 0, nearest = 0;
  gboolean point = FALSE;

  if (!g_unichar_isdigit (g[l].c) || !g_unichar_isdigit (g[r].c) || r <= l)
    return FALSE;
  for (k = r; k < n && g_unichar_isdigit (g[k].c) && (k == r || !g[k].space_before); k++)
    right++;
  if (right < 3)
    return FALSE;
  for (k = l; k >= 0 && !point; k--)
    {
      if (g_unichar_isdigit (g[k].c))
        {
          group++;
          if (g[k].space_before && k > 0 && g_unichar_isdigit (g[k - 1].c))
            {
              if (group < 3)
                return FALSE;
              if (nearest == 0)
                nearest = group;
              group = 0;   /* an earlier group of the same number */
            }
          else if (g[k].space_before || g[k].line_before)
            return FALSE;
        }
      else if (g[k].c == '.' && group >= 3 && k > 0 && g_unichar_isdigit (g[k - 1].c) && !g[k].space_before)
        point = TRUE;
      else
        return FALSE;
    }
  /* the groups of a number's decimals are equal, the last one may be
   * shorter: "2.345 1000" is two numbers */
  return point && right <= (nearest > 0 ? nearest : group);
}

/* Whether a chunk is one decimal number and nothing else (digits, its
 * point, digit groups, an ellipsis), with five digits or more: a display of
 * a constant's value (\[ 1.12139\;32942\ldots \]). Page numbers and years
 * have no decimal point. */
static gboolean
chunk_is_decimal (const Glyph *g, const Chunk *ch)
{
  int digits = 0;
  gboolean point = FALSE;

  for (int k = ch->start; k < ch->end; k++)
    {
      gunichar c = g[k].c;
      if (g_unichar_isdigit (c))
        digits++;
      else if (c == '.' && k > ch->start && k + 1 < ch->end && g_unichar_isdigit (g[k - 1].c) &&
               g_unichar_isdigit (g[k + 1].c))
        point = TRUE;
      else if (c != 0x2026 && c != '.')
        return FALSE;
    }
  return point && digits >= 5;
}

static gboolean
is_angle_open (gunichar c)
{
  return c == 0x27E8 || c == 0x2329 || c == 0x3008;
}

static gboolean
is_angle_close (gunichar c)
{
  return c == 0x27E9 || c == 0x232A || c == 0x3009;
}

/* Whether the upright word w (UTF-8) is a unit symbol: an SI base or
 * derived unit, or one with a decimal prefix (km, kΩ, MeV, μs). No English
 * word is one: the prefix 'a' (as) and 'h' (ha) are left out. */
static gboolean
is_unit_word (const char *w)
{
  static const char *const units[] = {
    "m", "s", "g", "A", "K", "mol", "cd", "N", "J", "W", "V", "C", "Ω", "Hz", "Pa", "T", "F", "H",
    "Wb", "S", "eV", "L", "Bq", "Gy", "Sv", "lx", "lm", "rad", "sr", "atm", "bar", "min", NULL
  };
  static const char *const prefixes[] = { "", "k", "M", "G", "m", "μ", "µ", "n", "p", "c", "d", NULL };

  for (int p = 0; prefixes[p] != NULL; p++)
    {
      gsize lp = strlen (prefixes[p]);
      if (strncmp (w, prefixes[p], lp) != 0)
        continue;
      for (int u = 0; units[u] != NULL; u++)
        if (strcmp (w + lp, units[u]) == 0 && !(lp > 0 && strlen (units[u]) > 2))
          return TRUE;
    }
  return FALSE;
}

/* Whether g[i - 1] is a degree sign raised after the number ending at
 * g[i - 2]: \circ in a superscript (smaller, its box's middle above the
 * digit's: Poppler's boxes hold the font's depth, so the bottom is no
 * test) or U+00B0, glued to the digit. */
static gboolean
degree_after_number (const Glyph *g, int i)
{
  const Glyph *o, *d;
  double em;

  if (i < 2)
    return FALSE;
  o = &g[i - 1];
  d = &g[i - 2];
  em = d->size > 0.5 ? d->size : 10.0;
  if (!g_unichar_isdigit (d->c) || o->space_before ||
      !(o->c == 0x2218 || o->c == 0x25E6 || o->c == 0x00B0) || o->r.x0 - d->r.x1 > 0.15 * em ||
      o->r.x0 - d->r.x1 < -0.1 * em || fabs (g[i].size - d->size) > 0.1 * em)
    return FALSE;
  return o->c == 0x00B0 || (o->size < 0.85 * d->size && o->r.y0 + o->r.y1 < d->r.y0 + d->r.y1 - 0.1 * em);
}

/* The last glyph of a raised exponent glued to the number ending at g[d]
 * (10^{-19}\ \textup{C}), or -1: Poppler can list the exponent, a line of
 * its own to it, before its number's line, so the unit comes right after
 * the number in the text and the exponent lies among the glyphs before. */
static int
exponent_end (const Glyph *g, int d)
{
  double em = g[d].size > 0.5 ? g[d].size : 10.0;
  int k, e;

  /* (all raised glyphs of the line come first: a line's length back) */
  for (k = MAX (0, d - 240); k < d; k++)
    if (g[k].size < 0.85 * g[d].size && (g_unichar_isdigit (g[k].c) || g[k].c == '-' || g[k].c == 0x2212) &&
        g[k].r.x0 - g[d].r.x1 > -0.1 * em && g[k].r.x0 - g[d].r.x1 < 0.15 * em &&
        g[k].r.y0 + g[k].r.y1 < g[d].r.y0 + g[d].r.y1 - 0.1 * em && g[k].r.y1 > g[d].r.y0)
      break;
  if (k >= d)
    return -1;
  for (e = k; e + 1 < d && !g[e + 1].space_before && g[e + 1].size < 0.85 * g[d].size &&
              (g_unichar_isdigit (g[e + 1].c) || g[e + 1].c == '.') && fabs (g[e + 1].r.x0 - g[e].r.x1) < 0.1 * em;)
    e++;
  return g_unichar_isdigit (g[e].c) ? e : -1;
}

/* A relation alone between words of prose, "hence $\coloneqq$.":
 * Computer Modern, Latin Modern and Times take ':' and '=' from the text
 * font, so the word has no seed and the formula was lost (pdf-e2e 1073).
 * Typed prose and code have '=', '==' and ':=' standing alone ("SD =
 * standard deviation", "a := b", review of e2e12s), so a text-font '=' is
 * no evidence; mathtools' \coloneqq is: \vcentcolon\mathrel{\mkern-1.2mu}=
 * sets the '=' 1.2 mu (0.067 em) into the colon's advance, which typing
 * never does: Poppler ends the colon's box where the '=' starts, 0.21 em
 * wide in CM against a typed colon's 0.278 em (Times' and LM's the same). That pair, or a U+2254 glyph, a word space after a text letter and
 * before a text letter or the line's end (sentence punctuation glued after
 * it aside), is weak math. */
static void
classify_lone_relations (Glyph *g, int n)
{
  for (int i = 1; i + 1 < n; i++)
    {
      int e = i + 1;
      gboolean coloneqq = g[i].c == ':' && g[i + 1].c == '=' && !g[i + 1].space_before &&
                          g[i].r.x1 - g[i].r.x0 < 0.24 * g[i].size;
      if (!g[i].space_before || g[i].line_before || g[i - 1].cls != CLS_TEXT || !g_unichar_isalpha (g[i - 1].c))
        continue;
      if (g[i].c == 0x2254)
        e = i + 1;
      else if (coloneqq && (g[i].cls == CLS_NEUTRAL || g[i].cls == CLS_STRONG))
        e = i + 2;
      else
        continue;
      while (e < n && !g[e].space_before && (g[e].c == '.' || g[e].c == ',' || g[e].c == ';'))
        e++;
      if (e < n && !g[e].line_before && !(g[e].space_before && g[e].cls == CLS_TEXT && g_unichar_isalpha (g[e].c)))
        continue;
      /* (Fourier's '=' is a math font's, its ':' the text's: the ':'
       * would be trimmed as punctuation) */
      for (int k = i; k < e && (g[k].c == '=' || g[k].c == ':' || g[k].c == 0x2254); k++)
        g[k].cls = g[k].cls == CLS_STRONG ? CLS_STRONG : CLS_WEAK;
    }
}

/* A mark that opens a line of running text is the line's label, not a
 * formula: a list item's bullet (amsart's and many classes' \labelitemi
 * is CMSY's \bullet, U+2022, a \circ label U+25E6, U+2218 in
 * unicode-math), a footnote's
 * symbol before the note's first word (\thanks sets $^\ast$, U+2217, at
 * the foot of a title page: ten of twenty TeX Live manuals, detectreal).
 * The mark is first on its line, level with a word of two or more letters
 * of the text faces after it; a formula opening a line with a bullet or a
 * star has math or a sign after it. */
static void
classify_line_marks (Glyph *g, int n)
{
  for (int i = 0; i + 2 < n; i++)
    {
      gunichar c = g[i].c;
      int k = i + 1;

      if (!(c == 0x2022 || c == 0x25E6 || c == 0x2218 || c == 0x2219 || c == 0x2217 || c == '*' || c == 0x22C6 ||
            c == 0x2020 || c == 0x2021) ||
          !(i == 0 || g[i].line_before) || g[k].line_before || !v_overlap_enough (&g[i].r, &g[k].r, 0.3) ||
          g[k].r.x0 < g[i].r.x1 - 0.05 * g[k].size || g[k].r.x0 - g[i].r.x1 > 2.0 * g[k].size)
        continue;
      /* (the word may be a macro's name in typewriter, "\\brk[type]": its
       * letters are running text, its backslash is not a letter) */
      int letters = 0, math = 0;
      for (; k < n && (k == i + 1 || !g[k].space_before) && !g[k].line_before; k++)
        {
          letters += g_unichar_isalpha (g[k].c) && g[k].cls == CLS_TEXT;
          math += g[k].font == FM_FONT_MATH || (g_unichar_isalpha (g[k].c) && g[k].cls != CLS_TEXT);
        }
      if (letters >= 2 && math == 0)
        {
          g[i].cls = CLS_TEXT;
          g[i].font = FM_FONT_TEXT;
        }
    }
}

/* A section or paragraph sign before a number is a reference in running
 * text ("(\S 10)", "\S\S 3-4"), not a formula: pdfLaTeX's \S in OT1
 * comes from CMSY, a math font (nathguide's index of commands, 150 such
 * regions, detectreal). The number follows on the sign's line, glued or a
 * word space on. */
static void
classify_section_signs (Glyph *g, int n)
{
  for (int i = 0; i + 1 < n; i++)
    {
      int k = i + 1;

      if (g[i].c != 0x00A7 && g[i].c != 0x00B6)
        continue;
      while (k < n && k < i + 3 && g[k].c == g[i].c && !g[k].space_before)
        k++;
      if (k < n && g_unichar_isdigit (g[k].c) && !g[k].line_before && v_overlap_enough (&g[i].r, &g[k].r, 0.3) &&
          g[k].r.x0 - g[k - 1].r.x1 < 0.5 * g[k].size && g[k].size >= 0.85 * g[i].size)
        for (int m = i; m < k; m++)
          {
            g[m].cls = CLS_TEXT;
            g[m].font = FM_FONT_TEXT;
          }
    }
}

/* Units after a number: TeX sets 9.8\ \mathrm{m/s^2} with a control space,
 * as wide as the line's word spaces, so the gap cannot tell the unit from
 * a word of running text; the word can. An upright word that is a unit
 * symbol, a word space after a digit on the same line, and the units
 * glued to it by '/', a centred dot or a script, are neutral (no seed of
 * their own) and the first is marked to join the number. */
static void
classify_units (Glyph *g, int n)
{
  for (int i = 1; i < n; i++)
    {
      const Glyph *d = &g[i - 1];
      double em = d->size > 0.5 ? d->size : 10.0, gap = g[i].r.x0 - d->r.x1;
      int k = i, b = i - 1;
      gboolean ratio;

      /* after a number's exponent (10^{-3}\ \mathrm{m}^3): the number,
       * not its script, is level with the unit and of its size */
      while (b > 0 && g[b].size < 0.85 * g[i].size && !g[b].space_before &&
             (g_unichar_isdigit (g[b].c) || g[b].c == '-' || g[b].c == 0x2212 || g[b].c == '.'))
        b--;
      if (b < i - 1 && g_unichar_isdigit (d->c) && g_unichar_isdigit (g[b].c) &&
          g[b + 1].r.x0 - g[b].r.x1 < 0.15 * g[b].size && g[b + 1].r.x0 - g[b].r.x1 > -0.1 * g[b].size)
        {
          d = &g[b];
          em = d->size > 0.5 ? d->size : 10.0;
        }
      /* a temperature, 0^\circ\mathrm{C}: the unit glued to a raised
       * degree sign (\circ, or the text layer's U+00B0) after the number,
       * with no space or a control space; the unit is measured from the
       * number, and the degree sign joins it as a script sign */
      if (degree_after_number (g, i) && !g[i].line_before && gap > -0.1 * em && gap < 0.5 * em)
        {
          d = &g[i - 2];
          em = d->size > 0.5 ? d->size : 10.0;
        }
      /* (the number's exponent listed before it: the gap counts from the
       * exponent's end, and the unit starts a line of Poppler's after it) */
      else if (g_unichar_isdigit (d->c) && g[i].space_before && gap >= 0.5 * em && gap < 3.0 * em &&
               (b = exponent_end (g, i - 1)) >= 0 && g[i].r.x0 - g[b].r.x1 >= 0.1 * em &&
               g[i].r.x0 - g[b].r.x1 <= 0.5 * em && v_overlap_enough (&d->r, &g[i].r, 0.5) &&
               fabs (g[i].size - d->size) <= 0.1 * em)
        ;

      else if (!g_unichar_isdigit (d->c) || !g[i].space_before || g[i].line_before || gap < 0.1 * em ||
               gap > 0.5 * em || !v_overlap_enough (&d->r, &g[i].r, 0.5) || fabs (g[i].size - d->size) > 0.1 * em)
        continue;
      ratio = FALSE;
      while (k < n)
        {
          GString *w = g_string_new (NULL);
          int j = k;
          gboolean ok;
          while (j < n && (j == k || !g[j].space_before) && g_unichar_isalpha (g[j].c) && !g[j].bold &&
                 fabs (g[j].size - g[k].size) < 0.1 * em && g[j].cls != CLS_WEAK &&
                 !(g[j].cls == CLS_STRONG && g_unichar_islower (g[j].c) && g[j].c != 0x03BC && g[j].c != 0x00B5))
            g_string_append_unichar (w, g[j++].c);
          /* a rate spelt in words, 73.3\ \text{miles/hour}: two short
           * upright words glued by a slash, a word space after the number
           * (prose sets a slash between words, and/or, but not after a
           * formula's number) */
          if (k == i && j > k && j - k <= 6 && !is_unit_word (w->str) && j + 1 < n && g[j].c == '/' &&
              !g[j].space_before && !g[j + 1].space_before && g_unichar_isalpha (g[j + 1].c) &&
              g[j + 1].cls != CLS_STRONG && fabs (g[j + 1].size - g[k].size) < 0.1 * em &&
              strcmp (w->str, "and") != 0 && strcmp (w->str, "or") != 0 && strcmp (w->str, "either") != 0)
            ratio = TRUE;
          ok = j > k && (is_unit_word (w->str) || (ratio && j - k <= 6)) &&
               !(j < n && !g[j].space_before && g_unichar_isalpha (g[j].c));
          g_string_free (w, TRUE);
          if (!ok)
            break;
          for (int q = k; q < j; q++)
            if (g[q].cls == CLS_TEXT)
              g[q].cls = CLS_NEUTRAL;
          if (k == i)
            g[i].unit = TRUE;
          /* m/s, kg·m: the next unit glued on by a slash or a dot */
          if (j + 1 < n && !g[j].space_before && !g[j + 1].space_before &&
              (g[j].c == '/' || g[j].c == 0x00B7 || g[j].c == 0x22C5 || g[j].c == 0x2219))
            {
              if (g[j].cls == CLS_TEXT)
                g[j].cls = CLS_NEUTRAL;
              k = j + 1;
            }
          else
            break;
        }
    }
}

/* A nuclide, ^{212}\mathrm{Bi}: a raised number of script size after a
 * space, glued to an upright word of one capital and at most one small
 * letter (a footnote mark comes after its word; a footnote's own mark
 * starts its line, often before "A note"): the number is a seed and the
 * symbol joins it. g[i] is the glyph tested. */
static void
classify_nuclide (Glyph *g, int n, int i)
{
  if (g_unichar_isdigit (g[i].c) && i > 0 && g[i].space_before && !g[i].line_before && g[i].cls != CLS_TEXT)
    {
      int k = i, j;
      while (k < n && g_unichar_isdigit (g[k].c) && (k == i || !g[k].space_before))
        k++;
      j = k;
      /* (Poppler may see a space at the change of size: the gap tells) */
      while (j < n && j < k + 2 && g_unichar_isalpha (g[j].c) && (j == k || !g[j].space_before) &&
             g[j].font == FM_FONT_TEXT && (j == k ? g_unichar_isupper (g[j].c) : g_unichar_islower (g[j].c)))
        j++;
      if (j > k && k < n && !(j < n && !g[j].space_before && g_unichar_isalnum (g[j].c)) &&
          !(j == k + 1 && (g[k].c == 'A' || g[k].c == 'I')) &&
          g[k - 1].size < 0.85 * g[k].size && g[k - 1].r.y1 < g[k].r.y1 - 0.2 * (g[k].r.y1 - g[k].r.y0) &&
          g[k].r.x0 - g[k - 1].r.x1 < 0.12 * g[k].size && g[k].r.x0 - g[k - 1].r.x1 > -0.1 * g[k].size)
        {
          for (int q = i; q < k; q++)
            if (g[q].cls != CLS_STRONG)
              g[q].cls = CLS_WEAK;
          for (int q = k; q < j; q++)
            g[q].cls = CLS_NEUTRAL;
        }
    }
}

/* Whether '<' g[i] and '>' g[k] are glued to the word of three letters or
 * more between them: $<$\emph{file}$>$, a meta-variable set with math's
 * less and greater signs (CM, kpfonts, XeLaTeX LM/Termes/Pagella Math:
 * one region). Inside a formula a relation has a thick space on each
 * side. */
static gboolean
glued_less_greater (const Glyph *g, int i, int k, int letters)
{
  double em = MAX (g[i].size, 1.0);

  return g[k].c == '>' && letters >= 3 && k > i + 1 && sign_after_prose (g, i) && !g[i + 1].space_before &&
         !g[k].space_before &&
         g[i + 1].r.x0 - g[i].r.x1 < 0.05 * em && g[k].r.x0 - g[k - 1].r.x1 < 0.05 * em;
}

/* Glyph-level corrections after the word classes, for what looks like math
 * glyph by glyph but is not (or the reverse):
 * - a number with a script (4^{1}, 15_{16}, 10^{-3}): digits are neutral
 *   and a number alone is text, but running text has no raised or lowered
 *   small digit glued to a number - the number and its script are a seed;
 * - meta-variables of syntax prose, "<label>" set as \langle\textit{label}
 *   \rangle (the amsmath guide): angle brackets around a word of running
 *   text (three letters or more, or two upright ones; math puts its own
 *   letters between them) are text;
 * - logos and words that end in a math symbol with no space ("LaTeX2e"
 *   ends in CMMI's epsilon): a strong glyph glued to the end of a word of
 *   three or more running-text letters is part of the word;
 * - italic abbreviations (\emph{e.g.}): single italic letters joined by
 *   full stops with no space are a word, not math letters. */
static void
classify_glyph_runs (Glyph *g, int n, const int *script)
{
  for (int i = 0; i < n; i++)
    {
      /* a number with a script */
      if (g_unichar_isdigit (g[i].c) && g[i].cls == CLS_NEUTRAL &&
          !(i + 1 < n && g_unichar_isdigit (g[i + 1].c) && !g[i + 1].space_before &&
            g[i + 1].size >= 0.85 * g[i].size))
        {
          /* the script by position: Poppler may list a raised script apart */
          double em = g[i].size;
          int si = script[i];
          if (si >= 0 && !(i > 0 && g_unichar_isalpha (g[i - 1].c) && !g[i].space_before))
            {
              int k = i;
              while (k >= 0 && (g_unichar_isdigit (g[k].c) || g[k].c == '.') && g[k].size >= 0.85 * em &&
                     (k == i || !g[k + 1].space_before))
                g[k--].cls = CLS_WEAK;
              for (k = si; k < n && (k == si || !g[k].space_before) && g[k].size < 0.85 * em &&
                   (g_unichar_isalnum (g[k].c) || g[k].cls != CLS_TEXT); k++)
                if (g[k].cls != CLS_STRONG)
                  g[k].cls = CLS_WEAK;
            }
        }
      classify_nuclide (g, n, i);
      /* a meta-variable */
      if (is_angle_open (g[i].c) || g[i].c == '<')
        {
          int k = i + 1, letters = 0, italic = 0;
          /* (the word may hold digits and an underscore, "<point1>",
           * "<math_column>", a second word, "<AMS env>", and docstrip's
           * guards sign their option with a star or a slash, "<*package>",
           * "</trace>", in the listings of the TeX Live manuals: the star
           * is CMSY's) */
          while (k < n && v_overlap_enough (&g[i].r, &g[k].r, 0.3) && !g[k].line_before &&
                 (g_unichar_isalnum (g[k].c) ?
                  g[k].cls != CLS_STRONG && g[k].font != FM_FONT_MATH &&
                  (!g[k].space_before || (letters > 0 && g[k].r.x0 - g[k - 1].r.x1 < 0.6 * g[k].size)) :
                  !g[k].space_before && (g[k].c == '-' || g[k].c == '_' ||
                                         ((g[k].c == '*' || g[k].c == 0x2217 || g[k].c == '/') && k == i + 1))))
            {
              letters += g_unichar_isalpha (g[k].c) != 0;
              italic += g[k].font == FM_FONT_TEXT_ITALIC;
              k++;
            }
          if (k < n && (g[i].c == '<' ? glued_less_greater (g, i, k, letters) : is_angle_close (g[k].c)) &&
              (letters >= 3 || (letters == 2 && italic == 0)))
            {
              /* with the closing brace of "\begin{<name>}" */
              if (k + 1 < n && g[k + 1].c == '}' && !g[k + 1].space_before)
                k++;
              for (int m = i; m <= k; m++)
                g[m].cls = CLS_TEXT;
            }
        }
      /* a word that ends in a math symbol */
      /* (not a radical or big operator: Type 1 radicals' boxes sit a line
       * too high, Poppler may list them glued to a word of the line above) */
      if (g[i].cls == CLS_STRONG && !g[i].ext && !is_prefix_operator (g[i].c) && i > 0 && !g[i].space_before &&
          g[i].size >= 0.85 * g[i - 1].size &&
          v_overlap_enough (&g[i - 1].r, &g[i].r, 0.3) && g[i].r.x0 - g[i - 1].r.x1 < 0.15 * g[i].size)
        {
          int k = i - 1, letters = 0, prev = -1, skipped = 0;
          /* by the gaps: Poppler sees a space in LaTeX2e's kerns; it may
           * list a glyph of another line in between (a radical sign) */
          while (k >= 0)
            {
              /* (level with the word's last glyph taken: the symbol may
               * be lowered, LaTeX2e's epsilon is a subscript) */
              if ((g[k].ext || !v_overlap_enough (&g[k].r, &g[prev >= 0 ? prev : i].r, 0.3)) && prev >= 0 && skipped < 2)
                {
                  skipped++;
                  k--;
                  continue;
                }
              /* (an operator name's letters are neutral: \cos(\omega t)
               * on a line whose word space shrank under 0.2 em walked on
               * into the word before "cos") */
              if (!g_unichar_isalnum (g[k].c) || g[k].cls == CLS_STRONG || g[k].cls == CLS_WEAK ||
                  (g[k].cls == CLS_NEUTRAL && g_unichar_isalpha (g[k].c)) ||
                  /* (a word space by the text's size: LaTeX2e's epsilon
                   * is a script, its size smaller than the 0.15 em kern
                   * before the 2 and the bearings need) */
                  (prev >= 0 && (g[prev].r.x0 - g[k].r.x1 >= 0.2 * MAX (g[i].size, g[k].size) || g[prev].line_before)))
                break;
              letters += g[k].cls == CLS_TEXT && g_unichar_isalpha (g[k].c);
              prev = k--;
            }
          if (letters >= 3)
            g[i].cls = CLS_TEXT;
        }
      /* a logo that starts with a math letter: \AmS (CMSY's A, then M, S);
       * its letters run left to right (Poppler can list a script before
       * its line, then go back to the line's first word: \mathbf{v}^{T}
       * in newtx, T and then "Your") */
      if (g[i].cls == CLS_STRONG && !g[i].ext && g_unichar_isupper (g[i].c) && i + 2 < n &&
          g[i + 1].r.x0 > g[i].r.x0 && g[i + 2].r.x0 > g[i + 1].r.x0 &&
          v_overlap_enough (&g[i].r, &g[i + 1].r, 0.5) && g[i + 1].cls == CLS_TEXT && g[i + 2].cls == CLS_TEXT && g_unichar_isalpha (g[i + 1].c) &&
          g_unichar_isalpha (g[i + 2].c) && g[i + 1].font == FM_FONT_TEXT && !g[i + 2].space_before &&
          g[i + 1].r.x0 - g[i].r.x1 < 0.12 * g[i].size && g[i + 2].r.x0 - g[i + 1].r.x1 < 0.12 * g[i].size)
        g[i].cls = CLS_TEXT;
      /* a TeX command in running text (\texttt{\textbackslash begin}):
       * a backslash glued to a word is not \setminus, which has spaces */
      if (g[i].c == '\\' && i + 2 < n)
        {
          /* \textbackslash and \{ come from CMSY in OT1: by font they are
           * math; the command name after them is not */
          int k = i + 1;
          while (k < n && !g[k].space_before && g_unichar_isalpha (g[k].c) && g[k].font != FM_FONT_MATH)
            k++;
          if (k - i - 1 >= 2)
            {
              if (k < n && g[k].c == '{' && !g[k].space_before)
                k++;
              for (int m = i; m < k; m++)
                g[m].cls = CLS_TEXT;
            }
        }
      /* the AMS logo: three capitals of a math font kerned together (\AmS
       * sets A, M, S in CMSY) between words of running text; a formula's
       * calligraphic capitals are not three in a row with a hyphen or a
       * word after them */
      if (g[i].cls == CLS_STRONG && !g[i].ext && i + 3 < n && g_unichar_isupper (g[i].c) && g[i].space_before)
        {
          int k = i + 1;
          while (k < n && g_unichar_isupper (g[k].c) && g[k].cls == CLS_STRONG && g[k].font == g[i].font &&
                 !g[k].space_before && fabs (g[k].size - g[i].size) < 0.1 * g[i].size &&
                 g[k].r.x0 - g[k - 1].r.x1 < 0.12 * g[i].size)
            k++;
          /* ... or the logo's own letters wherever it stands (before a
           * full stop, a comma, a space): A, M, S of one math font with no
           * gap (\AmS: A\kern-.1667em\lower.5ex\hbox{M}\kern-.125em S;
           * the text layer does not show the lowered M) */
          if (k - i >= 3 && k < n && (g[k].c == '-' || (g_unichar_isalpha (g[k].c) && g[k].cls == CLS_TEXT)))
            for (int m = i; m < k; m++)
              g[m].cls = CLS_TEXT;
          else if (k - i == 3 && g[i].c == 'A' && g[i + 1].c == 'M' && g[i + 2].c == 'S' &&
                   g[i + 1].r.x0 - g[i].r.x1 < 0.02 * g[i].size && g[i + 2].r.x0 - g[i + 1].r.x1 < 0.02 * g[i].size &&
                   (k >= n || g[k].space_before ||
                    (g[k].c > 0 && g[k].c < 128 && strchr (".,;:!?)", (int) g[k].c) != NULL)))
            for (int m = i; m < k; m++)
              g[m].cls = CLS_TEXT;
        }
      /* an italic abbreviation */
      if (g[i].font == FM_FONT_TEXT_ITALIC && g_unichar_isalpha (g[i].c) && i + 2 < n &&
          g[i + 1].c == '.' && !g[i + 1].space_before && !g[i + 2].space_before &&
          g_unichar_isalpha (g[i + 2].c) && g[i + 2].font == FM_FONT_TEXT_ITALIC &&
          g[i + 2].size >= 0.85 * g[i].size)
        g[i].cls = g[i + 2].cls = CLS_TEXT;
    }
}

static GlyphClass
classify_glyph (const Glyph *g, FmDetectRule rule)
{
  if (rule == FM_DETECT_RULE_PDFMATHTRANSLATE)
    return CLS_TEXT; /* decided from the raw font name by the caller */
  if (fm_char_is_math_symbol (g->c))
    return CLS_STRONG;
  if (g->font == FM_FONT_MATH)
    return CLS_STRONG;
  if (fm_char_is_neutral (g->c))
    return CLS_NEUTRAL;
  return CLS_TEXT;
}

static gboolean
pmt_char_is_math (gunichar c)
{
  /* PDFMathTranslate also flags these Unicode categories. */
  GUnicodeType t = g_unichar_type (c);

  return t == G_UNICODE_MODIFIER_LETTER || t == G_UNICODE_NON_SPACING_MARK ||
         t == G_UNICODE_MODIFIER_SYMBOL || t == G_UNICODE_MATH_SYMBOL;
}

/* "[12]" or "[3, 7]" starting at glyph i, preceded by a space: a citation. */
static gboolean is_sentence_punct (gunichar c);

static gboolean
is_citation (const Glyph *g, int i, int end)
{
  /* (a math font's bracket is math: "\tau : [1] \to [2]" in LuaLaTeX) */
  if (g[i].c != '[' || !g[i].space_before || g[i].font == FM_FONT_MATH)
    return FALSE;
  /* a citation follows a word or punctuation of the text, not math
   * ("\tau : [1] \to [2]" where math takes its brackets from the text
   * font, as Fourier does) */
  gboolean after_math = i > 0 && !g[i].line_before && g[i - 1].cls != CLS_TEXT &&
                        (!is_sentence_punct (g[i - 1].c) || g[i - 1].c == ':');
  for (int k = i + 1; k < end && k < i + 12; k++)
    {
      /* (... unless running text or a sentence's end follows it and no
       * operator precedes it - no formula ends in one: "$A \otimes B$
       * [33] case") */
      if (g[k].c == ']')
        return k > i + 1 &&
               (!after_math ||
                (!is_operator (g[i - 1].c) &&
                 (k + 1 >= end || (g[k + 1].space_before && g[k + 1].cls == CLS_TEXT && g_unichar_isalpha (g[k + 1].c)) ||
                  (!g[k + 1].space_before && is_sentence_punct (g[k + 1].c) && g[k + 1].c != ':'))));
      if (!g_ascii_isdigit (g[k].c) && g[k].c != ',' && g[k].c != '-')
        return FALSE;
    }
  return FALSE;
}

/* Whether g[i] is the closing bracket of a citation. */
static gboolean
citation_end (const Glyph *g, int n, int i)
{
  if (g[i].c != ']')
    return FALSE;
  for (int k = i - 1; k >= 0 && k > i - 12; k--)
    if (g[k].c == '[')
      return is_citation (g, k, n);
  return FALSE;
}


static gboolean
chunk_text_matches_number (const Glyph *g, const Chunk *ch)
{
  static GRegex *re;
  char buf[64];
  int len = 0;
  gboolean match;

  if (ch->end - ch->start > 12)
    return FALSE;
  for (int i = ch->start; i < ch->end; i++)
    len += g_unichar_to_utf8 (g[i].c, buf + len);
  buf[len] = '\0';
  if (g_once_init_enter (&re))
    g_once_init_leave (&re, g_regex_new ("^\\(([0-9]+[a-z]?|[A-Z]?[0-9]+(\\.[0-9]+)+[a-z]?|[0-9]+[.-][0-9]+|\\*|[ivx]+)\\)$",
                                         G_REGEX_OPTIMIZE, 0, NULL));
  match = g_regex_match (re, buf, 0, NULL);
  return match;
}

static char *
glyph_text (const Glyph *g, const int *idx, int n)
{
  GString *s = g_string_new (NULL);

  for (int k = 0; k < n; k++)
    {
      if (g[idx[k]].c == INK_GLYPH)
        continue;   /* no character: the delimiter is known by its ink only */
      if (k > 0 && g[idx[k]].space_before)
        g_string_append_c (s, ' ');
      g_string_append_unichar (s, g[idx[k]].c);
    }
  return g_string_free (s, FALSE);
}

static gboolean
v_overlap_enough (const FmRect *a, const FmRect *b, double frac)
{
  double ov = MIN (a->y1, b->y1) - MAX (a->y0, b->y0);
  double h = MIN (a->y1 - a->y0, b->y1 - b->y0);

  return h > 0 && ov >= frac * h;
}

/* Whether the glyphs level with box, taken while each is less than 0.9 em
 * from those taken so far, include a letter of running text (full size:
 * a script's words, \prod_{i\text{ even}}, are the formula's). Glyphs
 * starting at stop_x or right of it are not walked (a cases display's
 * column of conditions: cases_condition_column()). */
static gboolean
line_reaches_text (const Glyph *g, int n, const FmRect *box, double em, const PageCtx *pc, double stop_x,
                   double *line_x0, double *line_x1)
{
  double x0 = box->x0, x1 = box->x1;
  gboolean *taken = g_new0 (gboolean, n + 1);
  gboolean found = FALSE;

  for (gboolean grew = TRUE; grew && !found;)
    {
      grew = FALSE;
      for (int i = 0; i < n && !found; i++)
        {
          double cy = 0.5 * (g[i].r.y0 + g[i].r.y1);
          if (taken[i] || cy < box->y0 || cy > box->y1 || across_gutter (pc, fm_rect_cx (&g[i].r), fm_rect_cx (box)))
            continue;
          if (g[i].r.x1 < x0 - 0.9 * em || g[i].r.x0 > x1 + 0.9 * em || g[i].r.x0 >= stop_x)
            continue;
          taken[i] = TRUE;
          if (g[i].cls == CLS_TEXT && g_unichar_isalpha (g[i].c) && g[i].size >= 0.8 * em)
            found = TRUE;
          if (g[i].r.x0 < x0 || g[i].r.x1 > x1)
            {
              x0 = MIN (x0, g[i].r.x0);
              x1 = MAX (x1, g[i].r.x1);
              grew = TRUE;
            }
        }
    }
  g_free (taken);
  *line_x0 = x0;
  *line_x1 = x1;
  return found;
}

/* ------------------------------------------------------------------------ */
/* Ink refinement on one gray render of the page.                           */


/* The label map: 4 bytes a pixel of the page (17 MB at 3 px/pt) of which
 * only the pages around formulas are ever written. Fresh anonymous pages
 * are zero without being cleared, where calloc of a block the allocator
 * reuses memsets all of it (issue 15: 7 % of a paper's CPU time). But each
 * first touch of a fresh page is a page fault (22 us on the development
 * VM, 5-8 k of them for a 10-page paper: 5 % of its CPU time), so a
 * finished page's map (and the fills' stack) goes to a small shelf for the
 * next page, with only its written 4 KiB pages cleared (label_dirty).
 * The shelf is process-wide, not per thread: a thread pool's idle threads
 * outlive the document, and a map kept per thread stayed resident after
 * the window closed the document (gui-memory grew 26 MB over 20 cycles);
 * fm_detect_release_scratch() empties it when a document's detection ends.
 * Both are mmapped so that releasing them gives the pages back at once
 * (a freed 24 MB malloc block can stay in a thread's arena). */
typedef struct {
  int *label;
  int *stack;              /* the fills' stack, as many ints */
  gsize cap;               /* ints mapped, each */
} LabelPlane;

#define LABEL_SHELF_SIZE 8 /* at most this many kept maps (one per detecting thread) */

static GMutex label_shelf_lock;
static LabelPlane label_shelf[LABEL_SHELF_SIZE];
static guint label_shelf_len;

static void
label_plane_unmap (LabelPlane *lp)
{
  if (lp->label)
    munmap (lp->label, lp->cap * sizeof (int));
  if (lp->stack)
    munmap (lp->stack, lp->cap * sizeof (int));
  *lp = (LabelPlane) { NULL, NULL, 0 };
}

void
fm_detect_release_scratch (void)
{
  g_mutex_lock (&label_shelf_lock);
  for (guint i = 0; i < label_shelf_len; i++)
    label_plane_unmap (&label_shelf[i]);
  label_shelf_len = 0;
  g_mutex_unlock (&label_shelf_lock);
}

static int *
labels_new (gsize n, gsize *cap, int **stack)
{
  LabelPlane lp = { NULL, NULL, 0 };

  g_mutex_lock (&label_shelf_lock);
  for (guint i = 0; i < label_shelf_len; i++)
    if (label_shelf[i].cap >= n)
      {
        lp = label_shelf[i];
        label_shelf[i] = label_shelf[--label_shelf_len];
        break;
      }
  g_mutex_unlock (&label_shelf_lock);
  if (lp.label == NULL)
    {
      void *label = mmap (NULL, n * sizeof (int), PROT_READ | PROT_WRITE, MAP_PRIVATE | MAP_ANONYMOUS, -1, 0);
      void *fills = mmap (NULL, n * sizeof (int), PROT_READ | PROT_WRITE, MAP_PRIVATE | MAP_ANONYMOUS, -1, 0);

      lp = (LabelPlane) { label == MAP_FAILED ? NULL : label, fills == MAP_FAILED ? NULL : fills, n };
      if (lp.label == NULL || lp.stack == NULL)
        {
          label_plane_unmap (&lp);
          return NULL;
        }
    }
  *cap = lp.cap;
  *stack = lp.stack;
  return lp.label;
}

#define LABEL_PAGE_SHIFT 10 /* 1024 ints: one 4 KiB page of the label map */

/* Notes that label[p] is written (before each write). */
static inline void
label_dirty (InkMap *m, gsize p)
{
  m->dirty[p >> LABEL_PAGE_SHIFT] = 1;
}

/* Zeroes the pages of m's label map that were written (and no other: a
 * write or read of an untouched page would fault it in) and shelves the map
 * for the next page; with the shelf full, the smallest map goes. */
static void
labels_keep (InkMap *m)
{
  gsize pages = (m->label_cap >> LABEL_PAGE_SHIFT) + 1;
  LabelPlane lp = { m->label, m->stack, m->label_cap };

  for (gsize i = 0; i < pages; i++)
    if (m->dirty[i])
      {
        gsize a = i << LABEL_PAGE_SHIFT, b = MIN (a + ((gsize) 1 << LABEL_PAGE_SHIFT), m->label_cap);
        memset (m->label + a, 0, (b - a) * sizeof (int));
      }
  m->label = NULL;
  m->stack = NULL;
  g_mutex_lock (&label_shelf_lock);
  if (label_shelf_len < LABEL_SHELF_SIZE)
    label_shelf[label_shelf_len++] = lp;
  else
    {
      guint smallest = 0;

      for (guint i = 1; i < label_shelf_len; i++)
        if (label_shelf[i].cap < label_shelf[smallest].cap)
          smallest = i;
      if (label_shelf[smallest].cap < lp.cap)
        {
          LabelPlane out = label_shelf[smallest];

          label_shelf[smallest] = lp;
          lp = out;
        }
      label_plane_unmap (&lp);
    }
  g_mutex_unlock (&label_shelf_lock);
}

static void
ink_map_clear (InkMap *m)
{
  if (m->label)
    labels_keep (m);
  g_free (m->dirty);
  g_free (m->ink);
}

static gboolean
ink_map_init (InkMap *m, PopplerPage *page)
{
  double pw, ph, scale;

  memset (m, 0, sizeof *m);
  poppler_page_get_size (page, &pw, &ph);
  /* 3 px/pt resolves 0.4 pt fraction bars; big pages get less, never more
   * than the render cap. */
  scale = fm_render_fit_scale (pw, ph, 3.0);
  scale = MIN (scale, fm_render_fit_scale (pw, ph, sqrt (6.0e6 / (pw * ph))));
  if (!(scale > 0.2))
    return FALSE;
  /* Straight to ink (no page-sized ARGB and gray images: issue 15). */
  m->ink = fm_render_page_ink_locked (page, scale, 170, &m->w, &m->h, NULL);
  if (m->ink == NULL)
    return FALSE;
  m->scale = scale;
  m->label = labels_new ((gsize) m->w * m->h, &m->label_cap, &m->stack);
  if (m->label == NULL)
    {
      g_clear_pointer (&m->ink, g_free);
      return FALSE;
    }
  m->dirty = g_malloc0 ((m->label_cap >> LABEL_PAGE_SHIFT) + 1);
  return TRUE;
}

/* Grows/shrinks box to the ink of the connected components that belong to it:
 * those whose centre lies inside the glyph box, or that mostly overlap it
 * horizontally and reach into it (fraction bars, radical signs). */
static void
ink_refine (InkMap *m, FmRect *box, double em, int stamp_base)
{
  int ax0, ay0, ax1, ay1, bx0, by0, bx1, by1;
  double margin = 0.6 * em;
  gboolean first = TRUE;
  FmRect out = { 0 };
  int stamp = stamp_base;

  ax0 = MAX (0, (int) floor ((box->x0 - margin) * m->scale));
  ay0 = MAX (0, (int) floor ((box->y0 - margin) * m->scale));
  ax1 = MIN (m->w, (int) ceil ((box->x1 + margin) * m->scale));
  ay1 = MIN (m->h, (int) ceil ((box->y1 + margin) * m->scale));
  bx0 = (int) floor (box->x0 * m->scale);
  by0 = (int) floor (box->y0 * m->scale);
  bx1 = (int) ceil (box->x1 * m->scale);
  by1 = (int) ceil (box->y1 * m->scale);
  if (ax1 <= ax0 || ay1 <= ay0)
    return;

  for (int y = MAX (by0, ay0); y < MIN (by1, ay1); y++)
    for (int x = MAX (bx0, ax0); x < MIN (bx1, ax1); x++)
      {
        gsize p = (gsize) y * m->w + x;
        int sp = 0, cx0 = x, cx1 = x, cy0 = y, cy1 = y;
        gboolean clipped = FALSE;
        double cxm, cym, ov;

        if (!m->ink[p] || m->label[p] == stamp)
          continue;
        /* Flood fill inside the neighbourhood (8-connected). */
        label_dirty (m, p);
        m->label[p] = stamp;
        m->stack[sp++] = (int) p;
        while (sp > 0)
          {
            int q = m->stack[--sp];
            int qx = q % m->w, qy = q / m->w;

            cx0 = MIN (cx0, qx); cx1 = MAX (cx1, qx);
            cy0 = MIN (cy0, qy); cy1 = MAX (cy1, qy);
            for (int dy = -1; dy <= 1; dy++)
              for (int dx = -1; dx <= 1; dx++)
                {
                  int nx = qx + dx, ny = qy + dy;
                  gsize np;
                  if (nx < ax0 || ny < ay0 || nx >= ax1 || ny >= ay1)
                    {
                      if (nx >= 0 && ny >= 0 && nx < m->w && ny < m->h &&
                          m->ink[(gsize) ny * m->w + nx])
                        clipped = TRUE;
                      continue;
                    }
                  np = (gsize) ny * m->w + nx;
                  if (m->ink[np] && m->label[np] != stamp)
                    {
                      label_dirty (m, np);
                      m->label[np] = stamp;
                      m->stack[sp++] = (int) np;
                    }
                }
          }
        /* A component running out of the neighbourhood is a neighbour's
         * (a rule across the column, a big figure): keep the glyph box's part. */
        if (clipped)
          {
            cx0 = MAX (cx0, bx0); cx1 = MIN (cx1, bx1 - 1);
            cy0 = MAX (cy0, by0); cy1 = MIN (cy1, by1 - 1);
          }
        cxm = 0.5 * (cx0 + cx1 + 1);
        cym = 0.5 * (cy0 + cy1 + 1);
        ov = MIN (cx1 + 1, bx1) - MAX (cx0, bx0);
        /* beside the centre rule: a rule (a fraction bar, an overline:
         * thin) or a component mostly inside the box's rows; not a
         * neighbouring line's descender reaching into a tall box
         * (OpenType fonts' boxes span more than a line) */
        if ((cxm >= bx0 && cxm <= bx1 && cym >= by0 && cym <= by1) ||
            (ov >= 0.5 * (cx1 + 1 - cx0) && cym >= by0 - 0.3 * em * m->scale && cym <= by1 + 0.3 * em * m->scale &&
             (cy1 + 1 - cy0 <= 0.35 * em * m->scale ||
              MIN (cy1 + 1, by1) - MAX (cy0, by0) >= 0.5 * (cy1 + 1 - cy0))))
          {
            FmRect c = { cx0 / m->scale, cy0 / m->scale, (cx1 + 1) / m->scale, (cy1 + 1) / m->scale };
            if (first)
              out = c;
            else
              fm_rect_union (&out, &c);
            first = FALSE;
          }
      }
  if (!first)
    *box = out;
}


/* Longest vertical run of ink in pixel column x between rows y0 and y1. */
static int
ink_column_run (const InkMap *m, int x, int y0, int y1)
{
  int best = 0, run = 0;

  for (int y = y0; y < y1; y++)
    {
      run = m->ink[(gsize) y * m->w + x] ? run + 1 : 0;
      best = MAX (best, run);
    }
  return best;
}

/* Whether pixel column x holds, through the middle of box, a stroke 2.4 em
 * taller than the box or more: a rule running on through the lines above
 * or below - the side of an \fbox{\parbox}, a framed box or a table's
 * column rule - not a delimiter of the formula in box (a lost \left| is
 * the formula's height and a little more, a lost \Bigg| 3 em). */
static gboolean
ink_column_runs_through (const InkMap *m, int x, const FmRect *box, double em)
{
  int mid = (int) floor (0.5 * (box->y0 + box->y1) * m->scale), top = mid, bottom = mid;

  if (mid < 0 || mid >= m->h || !m->ink[(gsize) mid * m->w + x])
    return FALSE;
  while (top > 0 && m->ink[(gsize) (top - 1) * m->w + x])
    top--;
  while (bottom + 1 < m->h && m->ink[(gsize) (bottom + 1) * m->w + x])
    bottom++;
  return bottom + 1 - top >= (box->y1 - box->y0 + 2.4 * em) * m->scale;
}

/* A region's box grows over large delimiters that the text layer lost
 * (\left| ... \right|, \left\|: CMEX's extension pieces at codes Poppler
 * reads as spaces): a tall vertical stroke (>= 1 em, and >= 60 % of the
 * box's height) within 0.6 em beside the box, in columns no glyph of the
 * text layer covers. Its neighbour bar (\|) comes with it. A frame's or
 * table's rule runs on through the lines above or below
 * (ink_column_runs_through()): a formula starting or ending a line of an
 * \fbox{\parbox} took the box's side and the line's height with it
 * (cls-framerule: IoU under 0.5 in every font). */
static void
ink_lost_delimiters (const InkMap *m, FmRect *box, double em, const Glyph *g, int n)
{
  int y0 = MAX (0, (int) floor ((box->y0 - 0.4 * em) * m->scale));
  int y1 = MIN (m->h, (int) ceil ((box->y1 + 0.4 * em) * m->scale));
  int need = (int) ceil (MAX (0.8 * em, 0.5 * (box->y1 - box->y0)) * m->scale);

  if (y1 - y0 < need)
    return;
  for (int side = 0; side < 2; side++)
    {
      int dir = side == 0 ? 1 : -1;
      int start = side == 0 ? (int) ceil (box->x1 * m->scale) : (int) floor (box->x0 * m->scale) - 1;
      int reach = (int) ceil (0.6 * em * m->scale), hit = -1, last = -1;

      for (int d = 0; d < reach; d++)
        {
          int x = start + dir * d;
          double xp = (x + 0.5) / m->scale;
          gboolean covered = FALSE;
          if (x < 0 || x >= m->w)
            break;
          if (hit >= 0 && abs (x - hit) > (int) ceil (0.35 * em * m->scale))
            break;
          if (ink_column_run (m, x, y0, y1) < need)
            continue;
          if (ink_column_runs_through (m, x, box, em))
            break;
          for (int k = 0; k < n && !covered; k++)
            covered = xp >= g[k].r.x0 && xp <= g[k].r.x1 && g[k].r.y1 > box->y0 && g[k].r.y0 < box->y1;
          if (covered)
            {
              if (hit < 0)
                break;   /* a glyph of the text layer first: nothing lost */
              continue;
            }
          if (hit < 0)
            hit = x;
          last = x;
        }
      if (last < 0)
        continue;
      if (side == 0)
        box->x1 = MAX (box->x1, (last + 1) / m->scale);
      else
        box->x0 = MIN (box->x0, last / m->scale);
      for (int x = MIN (hit, last); x <= MAX (hit, last); x++)
        for (int y = y0; y < y1; y++)
          if (m->ink[(gsize) y * m->w + x])
            {
              box->y0 = MIN (box->y0, y / m->scale);
              box->y1 = MAX (box->y1, (y + 1) / m->scale);
            }
    }
}

/* See the caller (fm_detect_page). */
static gboolean
radical_to_ink (const InkMap *m, FmRect *r)
{
  double h = r->y1 - r->y0, w = r->x1 - r->x0;
  int x0 = MAX (0, (int) floor ((r->x0 + 0.3 * w) * m->scale));
  int x1 = MIN (m->w, (int) ceil ((r->x1 - 0.3 * w) * m->scale));
  int y0 = MAX (0, (int) floor (r->y0 * m->scale)), y1 = MIN (m->h, (int) ceil ((r->y1 + 0.75 * h) * m->scale));
  FmInkView view = fm_ink_view_mask (m->ink, m->w, m->h);
  int best0, best1;

  if (x1 <= x0 || y1 <= y0)
    return FALSE;
  /* The run may start above the box (a tall sign); a sign taller than the
   * window is followed up and down. */
  if (!fm_ink_vertical_run (&view, x0, x1, y0, y1, 0.3 * h * m->scale, &best0, &best1))
    return FALSE;
  /* A run that comes down from above the window and stops in the upper
   * 3/4 of the glyph box's height is the line above's (the descender of
   * an italic f over a radical raised into a superscript,
   * e^{\sqrt{-\lambda}t}), when the window holds another run below it
   * that starts less than 0.4 of the box's height below the box: the
   * sign's own (a Type 1 radical's box sits too high; in cls-raisedroot
   * its ink starts 0.21-0.30 of it below the box). One that starts lower
   * is the next line's ink. */
  if (best0 < y0 && best1 < r->y0 * m->scale + 0.75 * h * m->scale)
    {
      int low0, low1;
      if (fm_ink_vertical_run (&view, x0, x1, best1 + 1, y1, 0.3 * h * m->scale, &low0, &low1) &&
          low0 <= (r->y1 + 0.4 * h) * m->scale)
        {
          best0 = low0;
          best1 = low1;
        }
    }
  r->y0 = best0 / m->scale;
  r->y1 = best1 / m->scale;
  return TRUE;
}

/* The pixel row of a horizontal rule (a fraction bar) between the upper
 * glyph box a and the lower b across their common width: the first row
 * between them that is ink all along, or -1. */
static int
ink_rule_row (const InkMap *m, const FmRect *a, const FmRect *b)
{
  double ox0 = MAX (a->x0, b->x0), ox1 = MIN (a->x1, b->x1);
  int x0, x1, y0, y1;

  if (m == NULL)
    return -1;
  x0 = MAX (0, (int) ceil (ox0 * m->scale) + 1);
  x1 = MIN (m->w, (int) floor (ox1 * m->scale) - 1);
  y0 = MAX (0, (int) floor (a->y1 * m->scale) - 1);
  y1 = MIN (m->h, (int) ceil (b->y0 * m->scale) + 1);
  if (x1 - x0 < 2 || y1 <= y0)
    return -1;
  for (int y = y0; y < y1; y++)
    {
      int x = x0;
      while (x < x1 && m->ink[(gsize) y * m->w + x])
        x++;
      if (x == x1)
        return y;
    }
  return -1;
}

/* Whether a horizontal rule (a fraction bar) runs between the upper glyph box
 * a and the lower b across their common width: some pixel row between them
 * that is ink all along. */
static gboolean
ink_rule_between (const InkMap *m, const FmRect *a, const FmRect *b)
{
  return ink_rule_row (m, a, b) >= 0;
}

/* ink_rule_row's row as a y in points (its middle), -1 when none. */
static double
ink_rule_y (const InkMap *m, const FmRect *a, const FmRect *b)
{
  int row = ink_rule_row (m, a, b);

  return row < 0 ? -1 : (row + 0.5) / m->scale;
}

/* The ends, in points, of the run of ink on pixel row y through column x
 * (a fraction bar's ends). x comes from glyph boxes, which may hang past
 * the page's edge: clamped to the map (ink_rule_row scanned only inside). */
static void
ink_row_run (const InkMap *m, int y, int x, double *x0, double *x1)
{
  const guint8 *row;
  int l, r;

  y = CLAMP (y, 0, m->h - 1);
  x = CLAMP (x, 0, m->w - 1);
  row = m->ink + (gsize) y * m->w;
  l = x;
  r = x;

  while (l > 0 && row[l - 1])
    l--;
  while (r + 1 < m->w && row[r + 1])
    r++;
  *x0 = l / m->scale;
  *x1 = (r + 1) / m->scale;
}

/* Whether a fraction bar runs right above glyph box r (a denominator's
 * glyph): a row of ink all across r less than 0.45 em above its top, not
 * counting the box's own top rows. */
static gboolean
bar_above (const InkMap *m, const FmRect *r, double em)
{
  FmRect above, below;

  if (m == NULL)
    return FALSE;
  above = (FmRect) { r->x0, r->y0 - 0.45 * em, r->x1, r->y0 - 0.45 * em };
  below = (FmRect) { r->x0, r->y0 - 2.0 / m->scale, r->x1, r->y1 };
  return ink_rule_between (m, &above, &below);
}

/* The y (points) of a fraction bar right below glyph box r (a numerator's
 * glyphs): a row of ink all across r less than 0.45 em below its bottom
 * or in its lowest 0.15 em (a Type 1 font's box reaches down to the font's
 * descent, over the bar); -1 when none. */
static double
bar_below_y (const InkMap *m, const FmRect *r, double em)
{
  FmRect above = { r->x0, r->y0, r->x1, r->y1 - 0.15 * em };
  FmRect below = { r->x0, r->y1 + 0.45 * em, r->x1, r->y1 + 0.45 * em };

  return ink_rule_y (m, &above, &below);
}

/* The same right above glyph box r (a denominator's glyphs). */
static double
bar_above_y (const InkMap *m, const FmRect *r, double em)
{
  FmRect above = { r->x0, r->y0 - 0.45 * em, r->x1, r->y0 - 0.45 * em };
  FmRect below = { r->x0, r->y0 + 0.15 * em, r->x1, r->y1 };

  return ink_rule_y (m, &above, &below);
}

/* Whether the gap between glyphs a and b on a line holds a tall vertical
 * stroke of ink (>= 1 em in one pixel column, across the line's middle)
 * that no glyph of the text layer has: a large delimiter of \left| ...
 * \right| or \left\| built from extension pieces that Poppler drops. */
static gboolean
ink_delimiter_between (const InkMap *m, const FmRect *a, const FmRect *b, double em)
{
  double cy = 0.25 * (a->y0 + a->y1 + b->y0 + b->y1);
  int x0, x1, y0, y1, ymid, need;

  if (m == NULL)
    return FALSE;
  x0 = MAX (0, (int) ceil (a->x1 * m->scale) + 1);
  x1 = MIN (m->w, (int) floor (b->x0 * m->scale) - 1);
  y0 = MAX (0, (int) floor ((cy - 2.0 * em) * m->scale));
  y1 = MIN (m->h, (int) ceil ((cy + 2.0 * em) * m->scale));
  ymid = (int) (cy * m->scale);
  need = (int) ceil (1.0 * em * m->scale);
  if (x1 <= x0 || y1 - y0 < need || ymid < y0 || ymid >= y1)
    return FALSE;
  for (int x = x0; x < x1; x++)
    {
      int top = ymid, bottom = ymid;
      if (!m->ink[(gsize) ymid * m->w + x])
        continue;
      while (top > y0 && m->ink[(gsize) (top - 1) * m->w + x])
        top--;
      while (bottom + 1 < y1 && m->ink[(gsize) (bottom + 1) * m->w + x])
        bottom++;
      if (bottom - top + 1 >= need)
        return TRUE;
    }
  return FALSE;
}

/* Whether the middle of the gap between glyphs a and b on a line holds
 * ink that no glyph of the text layer covers (bit 1 of the map, set by
 * ink_lost_glyphs(), is clear there) and that stands at least 0.3 em tall
 * within their common rows: a symbol the text layer lost. XeTeX's
 * \setminus in Latin Modern Math and TeX Gyre Bonum Math has no text
 * (x \in S \setminus \{c\}): its formula stood in two pieces 0.8 em
 * apart. A fraction bar or an underline is flatter. */
static gboolean
ink_lost_symbol_between (const InkMap *m, const FmRect *a, const FmRect *b, double em)
{
  int x0, x1, y0, y1, top = G_MAXINT, bottom = -1, left = G_MAXINT, right = -1;

  if (m == NULL)
    return FALSE;
  x0 = MAX (0, (int) ceil ((a->x1 + 0.12 * em) * m->scale));
  x1 = MIN (m->w, (int) floor ((b->x0 - 0.12 * em) * m->scale));
  y0 = MAX (0, (int) floor (MAX (a->y0, b->y0) * m->scale));
  y1 = MIN (m->h, (int) ceil (MIN (a->y1, b->y1) * m->scale));
  if (x1 - x0 < 0.2 * em * m->scale || y1 - y0 < 0.3 * em * m->scale)
    return FALSE;
  for (int y = y0; y < y1; y++)
    {
      const guint8 *row = m->ink + (gsize) y * m->w;
      for (int x = x0; x < x1; x++)
        if (row[x] == 1)
          {
            top = MIN (top, y);
            bottom = MAX (bottom, y);
            left = MIN (left, x);
            right = MAX (right, x);
          }
    }
  return bottom >= 0 && bottom - top + 1 >= 0.3 * em * m->scale && right - left + 1 <= 1.0 * em * m->scale;
}

/* A connected component of the page's ink (8-connected), in pixels. */
typedef struct {
  int x0, y0, x1, y1;      /* bounding box, inclusive                      */
} InkComp;

/* The component of ink pixel p, labelled on first use: the label map holds
 * -(index + 1) in comps for its pixels (ink_refine() stamps its fills with
 * positive numbers, so the two never meet). */
static int
ink_comp_at (InkMap *m, GArray *comps, gsize p)
{
  int sp = 0, id;
  InkComp c;

  if (m->label[p] < 0)
    return -m->label[p] - 1;
  c = (InkComp) { (int) (p % m->w), (int) (p / m->w), (int) (p % m->w), (int) (p / m->w) };
  id = -(int) comps->len - 1;
  label_dirty (m, p);
  m->label[p] = id;
  m->stack[sp++] = (int) p;
  while (sp > 0)
    {
      int q = m->stack[--sp], qx = q % m->w, qy = q / m->w;
      c.x0 = MIN (c.x0, qx); c.x1 = MAX (c.x1, qx);
      c.y0 = MIN (c.y0, qy); c.y1 = MAX (c.y1, qy);
      for (int dy = -1; dy <= 1; dy++)
        for (int dx = -1; dx <= 1; dx++)
          {
            int nx = qx + dx, ny = qy + dy;
            gsize np;
            if (nx < 0 || ny < 0 || nx >= m->w || ny >= m->h)
              continue;
            np = (gsize) ny * m->w + nx;
            if (m->ink[np] && m->label[np] >= 0)
              {
                label_dirty (m, np);
                m->label[np] = id;
                m->stack[sp++] = (int) np;
              }
          }
    }
  g_array_append_val (comps, c);
  return (int) comps->len - 1;
}

static FmRect
ink_comp_rect (const InkMap *m, const InkComp *c)
{
  return (FmRect) { c->x0 / m->scale, c->y0 / m->scale, (c->x1 + 1) / m->scale, (c->y1 + 1) / m->scale };
}

/* The ink of a glyph of a TeX math extension font (a large delimiter, a
 * big operator): Poppler's box is the font's, often shorter than the glyph
 * and above it (the glyphs hang below their baseline). The glyph is the
 * largest component whose middle lies in the box's columns, from a little
 * above the box to one box height below it, at least 0.8 of the box's
 * height: a \left\langle, whose middle columns hold two separate strokes,
 * is one component. FALSE when there is none. */
static gboolean
ext_glyph_to_ink_min (InkMap *m, GArray *comps, FmRect *r, double min_h)
{
  double h = r->y1 - r->y0, best_area = 0;
  int x0 = MAX (0, (int) floor (r->x0 * m->scale)), x1 = MIN (m->w, (int) ceil (r->x1 * m->scale));
  int y0 = MAX (0, (int) floor ((r->y0 - 0.25 * h) * m->scale));
  int y1 = MIN (m->h, (int) ceil ((r->y1 + 1.0 * h) * m->scale)), last = -1;
  FmRect best = *r;

  for (int y = y0; y < y1; y++)
    for (int x = x0; x < x1; x++)
      {
        gsize p = (gsize) y * m->w + x;
        int k;
        FmRect c;
        double cx, area;
        if (!m->ink[p] || (m->label[p] < 0 && -m->label[p] - 1 == last))
          continue;
        last = k = ink_comp_at (m, comps, p);
        c = ink_comp_rect (m, &g_array_index (comps, InkComp, k));
        cx = fm_rect_cx (&c);
        area = (c.x1 - c.x0) * (c.y1 - c.y0);
        if (cx < r->x0 || cx > r->x1 || c.y1 - c.y0 < min_h * h || c.x1 - c.x0 > 2.0 * (r->x1 - r->x0) + 2.0 ||
            area <= best_area)
          continue;
        best_area = area;
        best = c;
      }
  if (best_area <= 0)
    return FALSE;
  *r = best;
  return TRUE;
}

static gboolean
ext_glyph_to_ink (InkMap *m, GArray *comps, FmRect *r)
{
  return ext_glyph_to_ink_min (m, comps, r, 0.8);
}

static gboolean
is_delimiter_char (gunichar c)
{
  return c == '(' || c == ')' || c == '[' || c == ']' || c == '{' || c == '}' || c == '|' || c == 0x2016 ||
         c == 0x2223 || c == 0x2225 || (c >= 0x2308 && c <= 0x230B) || c == 0x27E8 || c == 0x27E9 ||
         c == 0x2329 || c == 0x232A || c == 0x27E6 || c == 0x27E7 || c == 0x2983 || c == 0x2984;
}

/* A \bigl( of a Type 1 math font that keeps its extension glyphs under the
 * same name as its symbols (STIX Two's STIXTwoMath in pdfLaTeX: one name for
 * every encoding, so fm_font_is_math_extension cannot tell) hangs below its
 * baseline like CMEX's, and Poppler's box sits up to half a line too high:
 * the delimiter joined the line above (the formula above took it in, the
 * one below lost it). The box moves to its ink, and the glyph counts as an
 * extension glyph, when the largest component in its columns, at least half
 * the box's height (a \bigl( is 1.2 em, the box 1.5 em), lies mostly below
 * the box yet still reaches into it (its own ink, not the next line's). A
 * delimiter that sits in its box (OpenType math fonts, text parentheses)
 * stays as it is. */
static gboolean
hanging_delimiter_to_ink (InkMap *m, GArray *comps, FmRect *r)
{
  FmRect fit = *r;
  double h = r->y1 - r->y0;

  if (!ext_glyph_to_ink_min (m, comps, &fit, 0.5))
    return FALSE;
  if (0.5 * (fit.y0 + fit.y1 - r->y0 - r->y1) <= 0.25 * h || fit.y0 >= r->y1 - 0.1 * h)
    return FALSE;
  *r = fit;
  return TRUE;
}

/* Large delimiters that the text layer lost: Poppler drops the TeX math
 * extension font's pieces at codes it reads as white space or controls
 * (CMEX's \langle and \rangle at 0x0A/0x0B, \vert at 0x0C, \Bigg( at
 * 0x20, ...), so a formula in \left\langle ... \right\rangle has a hole
 * where each delimiter stood. The ink still shows them: a connected
 * component taller than 1.1 em of the text beside it (a text bracket is at
 * most 1 em), narrow, that no glyph of the text layer covers, becomes a glyph
 * of its own (INK_GLYPH, neutral: a stroke alone is no formula). Appended to
 * g (room for it is made here); returns the new count. */
static Glyph *
ink_lost_glyphs (InkMap *m, GArray *comps, Glyph *g, int *n_io, double body_em)
{
  int n = *n_io, cap = n + 1, n_over;
  int *over = g_new (int, n + 1);
  guint first = comps->len;

  /* Ink inside a glyph's box is that glyph's: bit 1 of the ink map marks
   * it (the map stays non-zero exactly where there is ink). Components are
   * grown only from the ink left over: fraction bars, rules, lost pieces. */
  for (int k = 0; k < n; k++)
    {
      int x0 = MAX (0, (int) floor (g[k].r.x0 * m->scale)), x1 = MIN (m->w, (int) ceil (g[k].r.x1 * m->scale));
      int y0 = MAX (0, (int) floor (g[k].r.y0 * m->scale)), y1 = MIN (m->h, (int) ceil (g[k].r.y1 * m->scale));
      for (int y = y0; y < y1; y++)
        {
          guint8 *row = m->ink + (gsize) y * m->w;
          for (int x = x0; x < x1; x++)
            row[x] |= row[x] << 1;
        }
    }
  for (gsize p = 0; p < (gsize) m->w * m->h; p++)
    if (m->ink[p] == 1 && m->label[p] >= 0)
      ink_comp_at (m, comps, p);

  for (guint ci = first; ci < comps->len; ci++)
    {
      const InkComp *c = &g_array_index (comps, InkComp, ci);
      FmRect r = ink_comp_rect (m, c);
      double h = r.y1 - r.y0, w = r.x1 - r.x0, mid, em = 0, best = G_MAXDOUBLE;
      int covered = 0;

      /* tall and narrow, by the page's size first (cheap), then by the
       * size of the nearest glyph level with it */
      if (h < 0.8 * body_em || w > 1.0 * body_em || w > 0.6 * h)
        continue;
      mid = 0.5 * (r.y0 + r.y1);
      for (int k = 0; k < n; k++)
        {
          double gap;
          if (g[k].r.y0 > mid || g[k].r.y1 < mid || g[k].size <= 0)
            continue;
          gap = fm_rect_h_gap (&g[k].r, &r);
          if (gap < best && gap < 3.0 * body_em)
            {
              best = gap;
              em = g[k].size;
            }
        }
      if (em <= 0 || h < 1.1 * em || h > 12.0 * em || w > 0.8 * em)
        continue;
      /* no glyph of the text layer over it: columns covered by a glyph
       * box that reaches its middle */
      n_over = 0;
      for (int k = 0; k < n; k++)
        if (g[k].r.x0 < r.x1 && g[k].r.x1 > r.x0 && g[k].r.y0 <= mid + 0.25 * h && g[k].r.y1 >= mid - 0.25 * h)
          over[n_over++] = k;
      for (int x = c->x0; x <= c->x1 && n_over > 0; x++)
        {
          double xp = (x + 0.5) / m->scale;
          gboolean cov = FALSE;
          for (int k = 0; k < n_over && !cov; k++)
            cov = xp >= g[over[k]].r.x0 && xp <= g[over[k]].r.x1;
          covered += cov;
        }
      if (covered > 0.3 * (c->x1 - c->x0 + 1))
        continue;
      if (*n_io + 1 >= cap)
        {
          cap = 2 * cap + 8;
          g = g_renew (Glyph, g, cap);
        }
      g[*n_io] = (Glyph) { INK_GLYPH, r, em, FM_FONT_MATH, CLS_NEUTRAL, TRUE, TRUE, TRUE, FALSE, TRUE };
      (*n_io)++;
    }
  g_free (over);
  return g;
}

/* Whether no ink lies in the middle half of the gap between glyph boxes a
 * and b (a left of b), over the rows either covers: a fraction bar crosses
 * all of it, while an italic letter's overhang (CMMI's k) and the next
 * glyph's reach into the gap only touch its ends. */
static gboolean
ink_gap_empty (const InkMap *m, const FmRect *a, const FmRect *b)
{
  int x0, x1, y0, y1;
  double quarter = 0.25 * (b->x0 - a->x1);

  if (m == NULL)
    return TRUE;
  x0 = MAX (0, (int) ceil ((a->x1 + quarter) * m->scale) + 1);
  x1 = MIN (m->w, (int) floor ((b->x0 - quarter) * m->scale) - 1);
  y0 = MAX (0, (int) floor (MIN (a->y0, b->y0) * m->scale));
  y1 = MIN (m->h, (int) ceil (MAX (a->y1, b->y1) * m->scale));
  for (int y = y0; y < y1; y++)
    for (int x = x0; x < x1; x++)
      if (m->ink[(gsize) y * m->w + x])
        return FALSE;
  return TRUE;
}

/* The rightmost ink of the rows of a, in the columns from a->x0 to limit
 * (points); a->x1 where the map has none there. */
static double
ink_right_edge (const InkMap *m, const FmRect *a, double limit)
{
  int x0, x1, y0, y1;

  if (m == NULL)
    return a->x1;
  x0 = MAX (0, (int) floor (a->x0 * m->scale));
  x1 = MIN (m->w, (int) floor (limit * m->scale) - 1);
  y0 = MAX (0, (int) floor (a->y0 * m->scale) + 1);
  y1 = MIN (m->h, (int) ceil (a->y1 * m->scale) - 1);
  for (int x = x1 - 1; x >= x0; x--)
    for (int y = y0; y < y1; y++)
      if (m->ink[(gsize) y * m->w + x])
        return (x + 1) / m->scale;
  return a->x1;
}

/* The map turned so that text runs left to right (rot: quarter turns of the
 * text, see text_direction()). */
static void
ink_map_turn (InkMap *m, int rot)
{
  int w = m->w, h = m->h, uw = (rot & 1) ? h : w, uh = (rot & 1) ? w : h;
  guint8 *up;

  if (rot == 0)
    return;
  up = g_malloc ((gsize) uw * uh);
  for (int v = 0; v < uh; v++)
    for (int u = 0; u < uw; u++)
      {
        int x, y;
        switch (rot)
          {
          case 1: x = w - 1 - v; y = u; break;
          case 2: x = w - 1 - u; y = h - 1 - v; break;
          default: x = v; y = h - 1 - u; break;
          }
        up[(gsize) v * uw + u] = m->ink[(gsize) y * w + x];
      }
  g_free (m->ink);
  m->ink = up;
  m->w = uw;
  m->h = uh;
}

/* Rotated pages (/Rotate, or content turned on the page): Poppler gives the
 * boxes as displayed, so text may run down (1), right to left (2) or up (3).
 * The direction is the majority of steps between consecutive letters of one
 * word; math glyphs are left out (scripts and fractions step anywhere). */
static int
text_direction (const Glyph *g, int n)
{
  FmDirVotes v = { { 0 }, 0 };

  for (int i = 1; i < n; i++)
    if (!(g[i].space_before || g[i].line_before || g[i].cls != CLS_TEXT || g[i - 1].cls != CLS_TEXT ||
          !g_unichar_isalpha (g[i].c) || !g_unichar_isalpha (g[i - 1].c)))
      fm_dir_votes_add (&v, &g[i - 1].r, &g[i].r);
  return fm_dir_votes_winner (&v, 10, 0.6);
}

/* ------------------------------------------------------------------------ */



/* ------------------------------------------------------------------------ */
/* Inline formulas from the page geometry.
 *
 * Poppler's text order is not reliable inside formulas: it moves limits,
 * radical signs, fraction parts and scripts into other "lines", sometimes
 * into the next text line. So inline formulas are not grown along Poppler's
 * order but clustered in the plane: math glyphs join when they are neighbours
 * on one text line (with the spacing rules of TeX's math: no space, thin space,
 * or a space next to an operator) or stacked with a script-sized or line-less
 * part (fractions, limits). Text lines ("bands") come from the glyphs of
 * running text only, which Poppler never displaces; a math glyph belongs to
 * the band its centre lies in, and two glyphs of different text lines are
 * never joined, however close they are. */

typedef struct {
  double x0, x1, y0, y1, cy, em;
  /* The line's word space: TeX gives every word space of a justified line
   * one width (between letters: punctuation changes it), so a gap between
   * math glyphs that differs from it is math spacing, and one that equals
   * it separates two formulas. ws_n samples between ws_lo and ws_hi. */
  double ws_lo, ws_hi;
  int ws_n;
} Band;

/* Text-line fragments: runs of running-text letters in Poppler's order that
 * stay on one line. */
static GArray *
text_bands (const Glyph *g, int n, const gboolean *excluded, const PageCtx *pc)
{
  GArray *bands = g_array_new (FALSE, FALSE, sizeof (Band));
  int *run = g_new (int, n + 1);
  double *v = g_new (double, n + 1);
  int len = 0;

  for (int i = 0; i <= n; i++)
    {
      gboolean text = i < n && !excluded[i] && g[i].cls == CLS_TEXT && g_unichar_isalpha (g[i].c);
      gboolean extend = FALSE;

      if (text && len > 0)
        {
          const Glyph *last = &g[run[len - 1]];
          double em = MAX (last->size, 1.0);
          extend = v_overlap_enough (&last->r, &g[i].r, 0.5) && g[i].r.x0 > last->r.x0 - 0.5 * em &&
                   g[i].r.x0 - last->r.x1 < 3.0 * em && !across_gutter (pc, fm_rect_cx (&last->r), fm_rect_cx (&g[i].r));
        }
      if (!extend && len > 0 && (i == n || text))
        {
          Band b;
          b.x0 = G_MAXDOUBLE;
          b.x1 = -G_MAXDOUBLE;
          for (int k = 0; k < len; k++)
            {
              b.x0 = MIN (b.x0, g[run[k]].r.x0);
              b.x1 = MAX (b.x1, g[run[k]].r.x1);
            }
          for (int k = 0; k < len; k++) v[k] = g[run[k]].r.y0;
          b.y0 = fm_median (v, len, 0);
          for (int k = 0; k < len; k++) v[k] = g[run[k]].r.y1;
          b.y1 = fm_median (v, len, 0);
          for (int k = 0; k < len; k++) v[k] = g[run[k]].size;
          b.em = fm_median (v, len, 0);
          if (!(b.em > 0.5))
            b.em = MAX (b.y1 - b.y0, 1.0);
          b.cy = 0.5 * (b.y0 + b.y1);
          b.ws_n = 0;
          b.ws_lo = G_MAXDOUBLE;
          b.ws_hi = -G_MAXDOUBLE;
          for (int k = 1; k < len; k++)
            {
              const Glyph *a = &g[run[k - 1]], *c = &g[run[k]];
              double gap = c->r.x0 - a->r.x1;
              if (!c->space_before || run[k] != run[k - 1] + 1 || a->font != FM_FONT_TEXT ||
                  c->font != FM_FONT_TEXT || gap < 0.1 * b.em || gap > 1.0 * b.em)
                continue;
              b.ws_n++;
              b.ws_lo = MIN (b.ws_lo, gap);
              b.ws_hi = MAX (b.ws_hi, gap);
            }
          /* A few script-sized letters are no line of text but a
           * formula's upright part (\frac{\mathrm{Ln}\,\theta}{3},
           * q_\text{in}): as a band it would part the formula's glyphs
           * into two lines. A footnote's line is longer. */
          if (b.y1 > b.y0 && !(len <= 3 && pc != NULL && b.em < 0.85 * pc->body_em))
            g_array_append_val (bands, b);
          len = 0;
        }
      if (text)
        run[len++] = i;
    }
  g_free (run);
  g_free (v);
  /* fragments of one line (cut at its formulas) share its word space */
  for (guint a = 0; a < bands->len; a++)
    for (guint b = a + 1; b < bands->len; b++)
      {
        Band *ba = &g_array_index (bands, Band, a), *bb = &g_array_index (bands, Band, b);
        if (fabs (ba->cy - bb->cy) > 0.1 * ba->em || fabs (ba->em - bb->em) > 0.05 * ba->em ||
            across_gutter (pc, 0.5 * (ba->x0 + ba->x1), 0.5 * (bb->x0 + bb->x1)))
          continue;
        ba->ws_n = bb->ws_n = ba->ws_n + bb->ws_n;
        ba->ws_lo = bb->ws_lo = MIN (ba->ws_lo, bb->ws_lo);
        ba->ws_hi = bb->ws_hi = MAX (ba->ws_hi, bb->ws_hi);
      }
  return bands;
}

/* The word space of glyph m's line, when the line has one width for all
 * its word spaces (two samples at least, within 0.006 em): else -1. */
static double
band_word_space (GArray *bands, int band)
{
  const Band *b;

  if (band < 0)
    return -1;
  b = &g_array_index (bands, Band, band);
  if (b->ws_n < 2 || b->ws_hi - b->ws_lo > 0.006 * b->em)
    return -1;
  return 0.5 * (b->ws_lo + b->ws_hi);
}

typedef struct {
  int glyph;
  int band;          /* home text line or -1 */
  double em;         /* the home line's font size (the page's when none) */
  gboolean script;   /* script-sized for its line */
  gboolean ambiguous; /* its centre lies in two text lines' bands */
  gboolean hanging;   /* a script near another line's band (inline_home_lines) */
} MathGlyph;

static gboolean
different_lines (GArray *bands, const MathGlyph *a, const MathGlyph *b, double em)
{
  return a->band >= 0 && b->band >= 0 &&
         fabs (g_array_index (bands, Band, a->band).cy - g_array_index (bands, Band, b->band).cy) > 0.4 * em;
}

/* A dot of an ellipsis ("x_1, ..., x_n" set as three periods) rather than a
 * sentence's full stop. */
static gboolean
ellipsis_dot (const Glyph *g, int n, int i)
{
  int before = 0;

  if (g[i].c == 0x2026 || g[i].c == 0x22EF)
    return TRUE;
  /* a fourth dot is the sentence's full stop after \ldots ("$x =
   * 2.45\ldots$.") */
  while (before < 3 && i - before > 0 && g[i - before - 1].c == '.')
    before++;
  if (g[i].c == '.' && before == 3)
    return FALSE;
  return g[i].c == '.' && ((i > 0 && g[i - 1].c == '.') || (i + 1 < n && g[i + 1].c == '.'));
}

/* Joins the clusters of a and b unless they are anchored on different text
 * lines. */
static gboolean
uf_join (int *parent, double *line_cy, double *line_em, int a, int b)
{
  int ra = fm_uf_find (parent, a), rb = fm_uf_find (parent, b);

  if (ra == rb)
    return TRUE;
  if (!isnan (line_cy[ra]) && !isnan (line_cy[rb]) &&
      fabs (line_cy[ra] - line_cy[rb]) > 0.4 * MAX (line_em[ra], line_em[rb]))
    return FALSE;
  parent[rb] = ra;
  if (isnan (line_cy[ra]))
    {
      line_cy[ra] = line_cy[rb];
      line_em[ra] = line_em[rb];
    }
  return TRUE;
}

/* Any running-text glyph between two horizontal neighbours on their line.
 * text_idx is sorted by its glyphs' centres, text_cx (those centres): only
 * the glyphs whose centre lies between the two are looked at (the scan of
 * every text glyph per pair was a fifth of the detector's time on a page of
 * 20k glyphs). */
static gboolean
text_between (const Glyph *g, const gboolean *excluded, const int *text_idx, const double *text_cx, int n_text,
              const FmRect *left, const FmRect *right)
{
  double x0 = left->x1, x1 = right->x0;
  int lo = 0, hi = n_text;

  if (x1 <= x0)
    return FALSE;
  while (lo < hi)
    {
      int mid = lo + (hi - lo) / 2;
      if (text_cx[mid] <= x0)
        lo = mid + 1;
      else
        hi = mid;
    }
  for (int k = lo; k < n_text && text_cx[k] < x1; k++)
    {
      const Glyph *t = &g[text_idx[k]];
      double cy = 0.5 * (t->r.y0 + t->r.y1);
      if (excluded[text_idx[k]])
        continue;
      /* Its centre level with them: OpenType fonts' boxes are so tall that
       * the next line's letters overlap a subscript. */
      if (cy >= MIN (left->y0, right->y0) && cy <= MAX (left->y1, right->y1))
        return TRUE;
    }
  return FALSE;
}

/* Radicals and big operators take an operand on their right only: the space
 * before one is the space between two formulas. */
static gboolean
is_prefix_operator (gunichar c)
{
  return (c >= 0x221A && c <= 0x221C) || c == 0x2211 || c == 0x220F || c == 0x2210 ||
         (c >= 0x222B && c <= 0x2233) || (c >= 0x22C0 && c <= 0x22C3) || c == 0x00AC;
}

static gboolean
is_sentence_punct (gunichar c)
{
  return c == '.' || c == ',' || c == ';' || c == ':' || c == '!';
}

static gboolean
is_open_bracket (gunichar c)
{
  return c == '(' || c == '[' || c == '{';
}

static gboolean
is_close_bracket (gunichar c)
{
  return c == ')' || c == ']' || c == '}';
}

/* Glyph indices by their boxes' centre x (text_between's order). */
static int
compare_glyph_cx (const void *a, const void *b, gpointer data)
{
  const Glyph *g = data;
  double xa = 0.5 * (g[*(const int *) a].r.x0 + g[*(const int *) a].r.x1);
  double xb = 0.5 * (g[*(const int *) b].r.x0 + g[*(const int *) b].r.x1);
  return (xa > xb) - (xa < xb);
}

static int
compare_glyph_x (const void *a, const void *b, gpointer data)
{
  const Glyph *g = data;
  double xa = g[*(const int *) a].r.x0 + g[*(const int *) a].r.x1;
  double xb = g[*(const int *) b].r.x0 + g[*(const int *) b].r.x1;
  return (xa > xb) - (xa < xb);
}

static int
compare_math_x0 (const void *a, const void *b, gpointer data)
{
  const Glyph *g = data;
  double xa = g[((const MathGlyph *) a)->glyph].r.x0, xb = g[((const MathGlyph *) b)->glyph].r.x0;
  return (xa > xb) - (xa < xb);
}

/* The first math glyph (math sorted by x0) whose x0 is x or more: a scan
 * for a glyph's neighbours starts there, not at the page's first glyph. */
static int
math_from_x (const GArray *math, const Glyph *g, int m, double x)
{
  int lo = 0, hi = m;

  while (lo < hi)
    {
      int mid = lo + (hi - lo) / 2;
      if (g[g_array_index (math, MathGlyph, mid).glyph].r.x0 < x)
        lo = mid + 1;
      else
        hi = mid;
    }
  return lo;
}

/* The first index a of a non-decreasing array right_max (the running
 * maximum of the x0-sorted math glyphs' x1) whose value is x or more: no
 * glyph before it reaches x. */
static int
math_reaching (const double *right_max, int m, double x)
{
  int lo = 0, hi = m;

  while (lo < hi)
    {
      int mid = lo + (hi - lo) / 2;
      if (right_max[mid] < x)
        lo = mid + 1;
      else
        hi = mid;
    }
  return lo;
}

/* Whether g is an extension font's delimiter fitted to its ink: narrow and
 * tall (a big operator of the same font is about as wide as tall, an
 * integral half as wide; fonts like Fourier map all of them to letters and
 * Latin-1 signs, so the character cannot tell). */
static gboolean
ext_delimiter (const Glyph *g)
{
  return g->ext && !is_prefix_operator (g->c) && fm_rect_w (&g->r) < 0.4 * fm_rect_h (&g->r);
}
/* The state of inline_clusters' steps: the glyphs, the text lines, the math
 * glyphs with their home lines, and the union-find over them. */
/* fraction_part_scan()'s answer for a glyph: no fraction part, a part
 * whose bar runs past its parts (fraction_bar_hugs_parts(): a table's
 * rule), or a part of a bar that ends with its parts. */
typedef enum { FRAC_NONE = 0, FRAC_PART = 1, FRAC_TIGHT = 2 } FracAnswer;

typedef struct {
  const Glyph *g;
  int n;
  const gboolean *excluded;
  const int *chunk_of;
  double body_em;
  FmDetectRule rule;
  const PageCtx *pc;
  GArray *bands;                /* Band: the text lines, then math-only lines */
  GArray *math;                 /* MathGlyph, sorted by x0 */
  int m;
  int *text_idx, n_text;        /* running-text glyphs, sorted by centre x */
  double *text_cx;              /* their centres' x */
  int *parent;                  /* union-find over math */
  double *line_cy, *line_em;
  int *best_left, *best_right;  /* nearest line neighbour on either side, or -1 */
  int n_text_bands;             /* bands [0, n_text_bands) are text lines */
  int *bar;                     /* per math glyph: its display-style fraction, or -1 */
  GArray *bars;                 /* FracBar */
  double max_script_w;          /* the widest script-size math glyph */
  /* fraction_part()'s answer per math glyph (FracAnswer), for frac_em[k]
   * (-1: not asked yet): it is asked for each pair a glyph is in, and
   * scans the page's ink and math */
  signed char *frac;
  double *frac_em;
  gboolean math_face_commas;    /* the page sets math's commas in a math face */
} InlineCtx;

/* A display-style fraction in a text line (inline_fraction_stacks()). */
typedef struct {
  double x0, x1, y;             /* the bar */
  int band;                     /* the text line it stands on */
  int first;                    /* one of its parts (a math glyph) */
} FracBar;

/* Every strong/weak/neutral glyph gets its home line (the band whose middle
 * is nearest its centre), running-text glyphs are listed; math is sorted by
 * x0. */
static void
inline_home_lines (InlineCtx *ic)
{
  const Glyph *g = ic->g;
  GArray *bands = ic->bands;

  for (int i = 0; i < ic->n; i++)
    {
      MathGlyph mg = { i, -1, ic->body_em, FALSE, FALSE, FALSE };
      double cy = 0.5 * (g[i].r.y0 + g[i].r.y1), best_d = G_MAXDOUBLE;
      double lo_cy = G_MAXDOUBLE, hi_cy = -G_MAXDOUBLE;
      double lo_near = G_MAXDOUBLE, hi_near = -G_MAXDOUBLE;

      if (ic->excluded[i])
        continue;
      if (g[i].cls == CLS_TEXT)
        {
          ic->text_idx[ic->n_text++] = i;
          continue;
        }
      for (guint b = 0; b < bands->len; b++)
        {
          const Band *bd = &g_array_index (bands, Band, b);
          double d = g[i].r.x1 < bd->x0 ? bd->x0 - g[i].r.x1 : (g[i].r.x0 > bd->x1 ? g[i].r.x0 - bd->x1 : 0);
          if (cy < bd->y0 - 0.15 * bd->em || cy > bd->y1 + 0.15 * bd->em || d > 20 * bd->em ||
              across_gutter (ic->pc, 0.5 * (bd->x0 + bd->x1), fm_rect_cx (&g[i].r)))
            continue;
          lo_near = MIN (lo_near, bd->cy);
          hi_near = MAX (hi_near, bd->cy);
          if (cy < bd->y0 || cy > bd->y1)
            continue;
          /* Lines overlap where the font's boxes are tall (OpenType fonts,
           * tight leading): the line whose middle is nearest, then the
           * nearest fragment of it. */
          d = fabs (cy - bd->cy) + 0.01 * d;
          lo_cy = MIN (lo_cy, bd->cy);
          hi_cy = MAX (hi_cy, bd->cy);
          if (d < best_d)
            {
              best_d = d;
              mg.band = (int) b;
              mg.em = bd->em;
            }
        }
      mg.script = g[i].size > 0 && g[i].size <= 0.85 * mg.em;
      /* A script just outside a line's band is as ambiguous: the
       * subscript of a \right) or of a tall operator hangs below the
       * line of its base, its centre in the next line's band. */
      mg.ambiguous = hi_cy - lo_cy > 0.4 * mg.em;
      mg.hanging = ic->rule == FM_DETECT_RULE_FULL && mg.script && !mg.ambiguous && hi_near - lo_near > 0.4 * mg.em;
      g_array_append_val (ic->math, mg);
    }
  ic->m = (int) ic->math->len;
  g_array_sort_with_data (ic->math, compare_math_x0, (gpointer) g);
  ic->max_script_w = 0;
  for (int a = 0; a < ic->m; a++)
    {
      const MathGlyph *ma = &g_array_index (ic->math, MathGlyph, a);
      if (ma->script)
        ic->max_script_w = MAX (ic->max_script_w, g[ma->glyph].r.x1 - g[ma->glyph].r.x0);
    }
}

/* A script whose centre lies in two lines' bands (OpenType fonts' boxes
 * are tall: a subscript reaches well into the next line's) belongs to the
 * line of the full-size math glyph it touches: its base. */
static void
inline_scripts_to_base (InlineCtx *ic)
{
  const Glyph *g = ic->g;
  int m = ic->m;
  gboolean *settled = g_new0 (gboolean, m + 1);

  for (int a = 0; a < m; a++)
    {
      MathGlyph *ma = &g_array_index (ic->math, MathGlyph, a);
      const Glyph *ga = &g[ma->glyph];
      double best = G_MAXDOUBLE;
      int band = -1;
      if (!(ma->ambiguous || ma->hanging) || !ma->script)
        continue;
      for (int b = 0; b < m; b++)
        {
          const MathGlyph *mb = &g_array_index (ic->math, MathGlyph, b);
          const Glyph *gb = &g[mb->glyph];
          double gap = fm_rect_h_gap (&ga->r, &gb->r);
          /* (math is sorted by x0: the rest starts farther right) */
          if (gb->r.x0 > ga->r.x1 + 0.31 * ma->em)
            break;
          double ix = MIN (ga->r.x1, gb->r.x1) - MAX (ga->r.x0, gb->r.x0);
          /* beside it, not above or below (a fraction's denominator sits
           * over the next line's glyphs) */
          if (b == a || mb->script || mb->band < 0 || mb->ambiguous || gap > 0.3 * ma->em ||
              ix > 0.5 * MIN (ga->r.x1 - ga->r.x0, gb->r.x1 - gb->r.x0) ||
              MIN (ga->r.y1, gb->r.y1) <= MAX (ga->r.y0, gb->r.y0))
            continue;
          /* A script hanging out of a line into the next one's band (the
           * subscript of a \right) or of a tall operator) belongs to a
           * base it touches on its left, on the line above, and only when
           * nothing on its own line is as close. */
          if (ma->hanging && (mb->band == ma->band ? gap > 0.1 * ma->em :
                              (gap > 0.05 * ma->em || gb->r.x1 > ga->r.x0 + 0.05 * ma->em ||
                               fm_rect_cy (&gb->r) >= fm_rect_cy (&ga->r))))
            continue;
          if (gap < best)
            {
              best = gap;
              band = mb->band;
            }
        }
      if (band >= 0)
        ma->band = band;
      settled[a] = band >= 0;
    }
  /* A script between other scripts of its row (the = of a limit k=0
   * under an inline \sum, no full-size glyph within reach) takes the line
   * of the script it touches on its left that has one; math is sorted by
   * x0, so a row is walked from its start. */
  for (int a = 0; a < m; a++)
    {
      MathGlyph *ma = &g_array_index (ic->math, MathGlyph, a);
      const Glyph *ga = &g[ma->glyph];
      if (!ma->ambiguous || !ma->script || settled[a])
        continue;
      /* (a script that ends near ga's start starts at most the widest
       * script's width before it) */
      for (int b = math_from_x (ic->math, g, m, ga->r.x0 - 0.06 * ma->em - ic->max_script_w); b < m; b++)
        {
          const MathGlyph *mb = &g_array_index (ic->math, MathGlyph, b);
          const Glyph *gb = &g[mb->glyph];
          if (gb->r.x0 > ga->r.x0 + 0.05 * ma->em)
            break;
          if (b == a || !mb->script || mb->band < 0 || (mb->ambiguous && !settled[b]) ||
              gb->r.x1 > ga->r.x0 + 0.05 * ma->em || ga->r.x0 - gb->r.x1 > 0.05 * ma->em ||
              fabs (fm_rect_cy (&ga->r) - fm_rect_cy (&gb->r)) > 0.1 * ma->em)
            continue;
          ma->band = mb->band;
          settled[a] = TRUE;
          break;
        }
    }
  g_free (settled);
}

/* The parts of an inline fraction (a rule between them) are on one line:
 * an ambiguous part takes its unambiguous partner's. */
static void
inline_fraction_part_lines (InlineCtx *ic)
{
  const Glyph *g = ic->g;
  int m = ic->m;

  for (int a = 0; a < m; a++)
    {
      MathGlyph *ma = &g_array_index (ic->math, MathGlyph, a);
      const Glyph *ga = &g[ma->glyph];
      if (!ma->ambiguous || !ma->script)
        continue;
      for (int b = 0; b < m; b++)
        {
          const MathGlyph *mb = &g_array_index (ic->math, MathGlyph, b);
          const Glyph *gb = &g[mb->glyph];
          double ix = MIN (ga->r.x1, gb->r.x1) - MAX (ga->r.x0, gb->r.x0);
          if (b == a || mb->ambiguous || mb->band < 0 || !mb->script ||
              ix <= 0.2 * MIN (ga->r.x1 - ga->r.x0, gb->r.x1 - gb->r.x0) || fm_rect_v_gap (&ga->r, &gb->r) >= 1.0 * ma->em)
            continue;
          if (ink_rule_between (ic->pc->ink, ga->r.y1 <= gb->r.y0 ? &ga->r : &gb->r,
                                ga->r.y1 <= gb->r.y0 ? &gb->r : &ga->r))
            {
              ma->band = mb->band;
              break;
            }
        }
    }
}

/* The text line whose middle is nearest y, within half an em, among the
 * text bands near columns [x0, x1]; -1 when none. */
static int
text_band_at (const InlineCtx *ic, double y, double x0, double x1)
{
  int best = -1;
  double best_d = G_MAXDOUBLE;

  for (int b = 0; b < ic->n_text_bands; b++)
    {
      const Band *bd = &g_array_index (ic->bands, Band, b);
      double d = fabs (y - bd->cy);
      double dx = x1 < bd->x0 ? bd->x0 - x1 : (x0 > bd->x1 ? x0 - bd->x1 : 0);
      if (y < bd->y0 || y > bd->y1 || d > 0.5 * bd->em || dx > 20 * bd->em ||
          across_gutter (ic->pc, 0.5 * (bd->x0 + bd->x1), 0.5 * (x0 + x1)))
        continue;
      /* (the nearest fragment of the nearest line) */
      d += 0.01 * dx;
      if (d < best_d)
        {
          best_d = d;
          best = b;
        }
    }
  return best;
}

/* The text line of a fraction bar: the run of ink [x0, x1] on row y is a
 * bar, not a rule across the column (a table's \hline, an underline, a
 * \rule, a footnote rule), when it is at most 20 em long and lies on a text
 * line's middle, where the math axis is, within 0.2 em. Returns the line
 * (a text band), -1 when it is no bar. */
static int
fraction_bar_band (const InlineCtx *ic, double y, double x0, double x1, double em)
{
  int band;

  if (x1 - x0 > 20 * em)
    return -1;
  band = text_band_at (ic, y, x0, x1);
  if (band < 0 || fabs (y - g_array_index (ic->bands, Band, band).cy) > 0.2 * em)
    return -1;
  return band;
}

/* The parts of display-style fractions in a text line (\dfrac{n!}{s^{n+1}},
 * \displaystyle m\frac{d^2x}{dt^2}): full-size numerators and denominators
 * stand above and below the line, often as lines of their own (the math-only
 * lines) or on none, and were boxed apart. Two full-size glyphs one above
 * the other with a bar of ink between them that lies on a text line's
 * middle (the math axis) make a fraction of that line: every math glyph
 * over or under the bar, its near edge within 0.8 em of it (not the next
 * line's fraction) and not on another text line,
 * takes the bar's line and is one of its parts (joined in
 * inline_fraction_joins()). */
static void
inline_fraction_stacks (InlineCtx *ic)
{
  const Glyph *g = ic->g;
  const InkMap *ink = ic->pc->ink;
  int m = ic->m;
  double *right_max;

  ic->bar = g_new (int, m + 1);
  for (int a = 0; a < m; a++)
    ic->bar[a] = -1;
  ic->bars = g_array_new (FALSE, FALSE, sizeof (FracBar));
  if (ink == NULL || ic->rule != FM_DETECT_RULE_FULL)
    return;
  /* Math is sorted by x0: the scans below start at the first glyph whose
   * right end, or an earlier glyph's, comes within a point of the reach they
   * test (right_max, the running maximum of x1) and stop past its end - the
   * glyphs skipped are those the tests would skip (same output; the whole
   * page was scanned per glyph, a quadratic cost on pages of 20k glyphs). */
  right_max = g_new (double, MAX (m, 1));
  for (int a = 0; a < m; a++)
    right_max[a] = MAX (a > 0 ? right_max[a - 1] : -G_MAXDOUBLE, g[g_array_index (ic->math, MathGlyph, a).glyph].r.x1);
  for (int a = 0; a < m; a++)
    {
      const MathGlyph *ma = &g_array_index (ic->math, MathGlyph, a);
      const Glyph *ga = &g[ma->glyph];
      gboolean full_a = !ma->script && ga->size >= 0.85 * ic->body_em;
      if (ic->bar[a] >= 0)
        continue;
      for (int b = math_reaching (right_max, m, ga->r.x0 - 1.0); b < m; b++)
        {
          const MathGlyph *mb = &g_array_index (ic->math, MathGlyph, b);
          const Glyph *gb = &g[mb->glyph];
          double em = MAX (ma->em, mb->em);
          double ix = MIN (ga->r.x1, gb->r.x1) - MAX (ga->r.x0, gb->r.x0);
          FracBar fb;
          int row;
          if (gb->r.x0 >= ga->r.x1)
            break;      /* no overlap with ga from here on */
          /* (one of the two may be a script: a short numerator's
           * only full-size glyph can stand over the denominator's
           * superscript alone, e^{-s} over s(s^2+1)) */
          if (b == a || !(full_a || (!mb->script && gb->size >= 0.85 * ic->body_em)) ||
              gb->r.y0 < ga->r.y1 - 0.3 * em ||
              gb->r.y0 - ga->r.y1 > 1.0 * em || ix <= 0.2 * MIN (fm_rect_w (&ga->r), fm_rect_w (&gb->r)) ||
              (ma->band >= 0 && ma->band == mb->band))
            continue;
          /* (Type 1 fonts' boxes, from the font's ascent to its descent,
           * can overlap around the bar: then the bar is in the overlap) */
          {
            FmRect up = ga->r, down = gb->r;
            up.y1 = MIN (ga->r.y1, gb->r.y0);
            down.y0 = MAX (gb->r.y0, ga->r.y1);
            row = ink_rule_row (ink, &up, &down);
            /* (a bar runs under all of both: where they overlap by a
             * sliver, e over the + of s^2+4, the rows are looked for
             * across both but their outer 0.15 em, the reach the test
             * below allows) */
            if (row < 0)
              {
                up.x0 = down.x0 = MIN (ga->r.x0, gb->r.x0) + 0.15 * em;
                up.x1 = down.x1 = MAX (ga->r.x1, gb->r.x1) - 0.15 * em;
                row = ink_rule_row (ink, &up, &down);
              }
          }
          if (row < 0)
            continue;
          fb.y = (row + 0.5) / ink->scale;
          /* (with a script, the bar lies between the two and against
           * both: a text-style fraction's bar is no bar between its
           * numerator and the next line's glyph below its denominator) */
          if ((!full_a || mb->script || gb->size < 0.85 * ic->body_em) &&
              (fb.y <= fm_rect_cy (&ga->r) || fb.y >= fm_rect_cy (&gb->r) || fb.y - ga->r.y1 > 0.4 * em ||
               gb->r.y0 - fb.y > 0.4 * em))
            continue;
          ink_row_run (ink, row, (int) (0.5 * (MAX (ga->r.x0, gb->r.x0) + MIN (ga->r.x1, gb->r.x1)) * ink->scale),
                       &fb.x0, &fb.x1);
          fb.band = fraction_bar_band (ic, fb.y, fb.x0, fb.x1, em);
          /* A bar (fraction_bar_band()), not a stroke of a glyph (Type 1
           * boxes of neighbouring lines overlap, and a letter's stroke can
           * cross the overlap): it reaches over both glyphs. */
          if (fb.band < 0 || fb.x0 > ga->r.x0 + 0.15 * em || fb.x0 > gb->r.x0 + 0.15 * em || fb.x1 < ga->r.x1 - 0.15 * em ||
              fb.x1 < gb->r.x1 - 0.15 * em)
            continue;
          fb.first = a;
          {
            const Band *t = &g_array_index (ic->bands, Band, fb.band);
            int id = (int) ic->bars->len;
            for (int k = math_reaching (right_max, m, fb.x0 - 0.1 * t->em - 1.0); k < m; k++)
              {
                MathGlyph *mk = &g_array_index (ic->math, MathGlyph, k);
                const Glyph *gk = &g[mk->glyph];
                double cx = fm_rect_cx (&gk->r);
                if (gk->r.x0 > fb.x1 + 0.1 * t->em)
                  break;  /* its centre is right of the bar's reach, and all after it */
                if (ic->bar[k] >= 0 || cx < fb.x0 - 0.1 * t->em || cx > fb.x1 + 0.1 * t->em ||
                    gk->r.y1 < fb.y - 0.8 * t->em || gk->r.y0 > fb.y + 0.8 * t->em ||
                    (gk->r.y1 > fb.y + 0.15 * t->em && gk->r.y0 < fb.y - 0.15 * t->em))
                  continue;
                if (mk->band >= 0 && mk->band < ic->n_text_bands &&
                    fabs (g_array_index (ic->bands, Band, mk->band).cy - t->cy) > 0.4 * t->em)
                  continue;     /* the line above or below */
                mk->band = fb.band;
                mk->em = t->em;
                ic->bar[k] = id;
              }
            ic->bar[a] = id;
            ic->bar[b] = id;
            g_array_index (ic->math, MathGlyph, a).band = fb.band;
            g_array_index (ic->math, MathGlyph, b).band = fb.band;
            g_array_append_val (ic->bars, fb);
            if (g_getenv ("FM_DETECT_DEBUG"))
              g_printerr ("fraction bar [%.1f %.1f] y %.1f on band %d\n", fb.x0, fb.x1, fb.y, fb.band);
          }
          break;
        }
    }
  g_free (right_max);
}

/* Lines with no running text (a paragraph's last line holding only a
 * formula) have no band, and their glyphs would join the formula of the
 * line above through the stacked rule: full-size line-less glyphs level
 * with each other (three or more, less than 3 em apart) make a line of
 * their own, and the line-less scripts inside it belong to it. */
static void
inline_math_only_lines (InlineCtx *ic)
{
  const Glyph *g = ic->g;
  GArray *bands = ic->bands;
  int m = ic->m;
  guint first_new = bands->len;
  int *count = NULL;

  for (int a = 0; a < m; a++)
    {
      MathGlyph *ma = &g_array_index (ic->math, MathGlyph, a);
      const Glyph *ga = &g[ma->glyph];
      double cy = 0.5 * (ga->r.y0 + ga->r.y1);
      int found = -1;
      if (ma->band >= 0 || ma->script || !(ga->size > 0.85 * ic->body_em))
        continue;
      for (guint b = first_new; b < bands->len && found < 0; b++)
        {
          Band *bd = &g_array_index (bands, Band, b);
          if (fabs (cy - bd->cy) < 0.25 * bd->em && ga->r.x0 < bd->x1 + 3 * bd->em)
            found = (int) b;
        }
      if (found < 0)
        {
          Band nb = { ga->r.x0, ga->r.x1, ga->r.y0, ga->r.y1, cy, MAX (ga->size, 1.0), 0, 0, 0 };
          g_array_append_val (bands, nb);
          found = (int) bands->len - 1;
        }
      else
        {
          Band *bd = &g_array_index (bands, Band, found);
          bd->x0 = MIN (bd->x0, ga->r.x0);
          bd->x1 = MAX (bd->x1, ga->r.x1);
          bd->y0 = MIN (bd->y0, ga->r.y0);
          bd->y1 = MAX (bd->y1, ga->r.y1);
        }
      ma->band = found;
    }
  count = g_new0 (int, bands->len + 1);
  for (int a = 0; a < m; a++)
    {
      const MathGlyph *ma = &g_array_index (ic->math, MathGlyph, a);
      if (ma->band >= (int) first_new)
        count[ma->band]++;
    }
  for (int a = 0; a < m; a++)
    {
      MathGlyph *ma = &g_array_index (ic->math, MathGlyph, a);
      const Glyph *ga = &g[ma->glyph];
      double cy = 0.5 * (ga->r.y0 + ga->r.y1);
      if (ma->band >= (int) first_new && count[ma->band] < 3)
        ma->band = -1;
      else if (ma->band < 0 && ma->script)
        for (guint b = first_new; b < bands->len; b++)
          {
            const Band *bd = &g_array_index (bands, Band, b);
            if (count[b] >= 3 && cy > bd->y0 && cy < bd->y1 &&
                ga->r.x0 < bd->x1 + bd->em && ga->r.x1 > bd->x0 - bd->em)
              {
                ma->band = (int) b;
                break;
              }
          }
    }
  g_free (count);
}

/* A script that inline_math_only_lines() put on a line of math alone (its
 * centre in it, within an em of it) keeps that line only while full-size
 * glyphs hold it. Where inline_fraction_stacks() has moved them all to one
 * text line - the parts of a display-style fraction in running text - the
 * line is none, and a script on it goes where they went: the lower limit
 * of a display-style sum before that fraction (n=1 under
 * \sum_{n=1}^\infty \frac{1}{n^2+1}, level with the denominator) then
 * stands on its operator's line and joins it as a stacked part, not a
 * formula of the line below. old_band: each math glyph's band before
 * inline_fraction_stacks(). */
static void
inline_orphan_scripts (InlineCtx *ic, const int *old_band)
{
  int nb = (int) ic->bands->len;
  int *moved_to = g_new (int, nb + 1);

  for (int b = 0; b <= nb; b++)
    moved_to[b] = -1;   /* -1: no full-size glyph, -2: one still there or two targets */
  for (int a = 0; a < ic->m; a++)
    {
      const MathGlyph *ma = &g_array_index (ic->math, MathGlyph, a);
      int b = old_band[a];
      if (ma->script || b < ic->n_text_bands)
        continue;
      if (ma->band == b || ma->band < 0 || (moved_to[b] >= 0 && moved_to[b] != ma->band))
        moved_to[b] = -2;
      else if (moved_to[b] == -1)
        moved_to[b] = ma->band;
    }
  for (int a = 0; a < ic->m; a++)
    {
      MathGlyph *ma = &g_array_index (ic->math, MathGlyph, a);
      if (ma->script && ma->band >= ic->n_text_bands && ma->band == old_band[a] && moved_to[ma->band] >= 0)
        ma->band = moved_to[ma->band];
    }
  g_free (moved_to);
}

static void
inline_debug_lines (const InlineCtx *ic)
{
  const Glyph *g = ic->g;

  for (guint b = 0; b < ic->bands->len; b++)
    {
      const Band *bd = &g_array_index (ic->bands, Band, b);
      g_printerr ("band %u [%.1f %.1f %.1f %.1f] em %.1f\n", b, bd->x0, bd->y0, bd->x1, bd->y1, bd->em);
    }
  for (int a = 0; a < ic->m; a++)
    {
      const MathGlyph *ma = &g_array_index (ic->math, MathGlyph, a);
      char u[8] = { 0 };
      g_unichar_to_utf8 (g[ma->glyph].c, u);
      g_printerr ("math %d [%.1f %.1f %.1f %.1f] %s size %.1f band %d%s\n", ma->glyph, g[ma->glyph].r.x0,
                  g[ma->glyph].r.y0, g[ma->glyph].r.x1, g[ma->glyph].r.y1, u, g[ma->glyph].size, ma->band,
                  ma->script ? " script" : "");
    }
}

/* Neighbours on a line: each glyph is tested against its nearest math
 * neighbour on either side only, so that a rule for a wide gap (the space
 * around an operator) never reaches past a glyph in between. */
static void
inline_nearest_neighbours (InlineCtx *ic)
{
  const Glyph *g = ic->g;
  int m = ic->m;
  double *gap_right = g_new (double, m + 1), *gap_left = g_new (double, m + 1);

  for (int a = 0; a < m; a++)
    {
      ic->best_right[a] = ic->best_left[a] = -1;
      gap_right[a] = gap_left[a] = G_MAXDOUBLE;
    }
  for (int a = 0; a < m; a++)
    {
      const MathGlyph *ma = &g_array_index (ic->math, MathGlyph, a);
      const Glyph *ga = &g[ma->glyph];
      for (int b = a + 1; b < m; b++)
        {
          const MathGlyph *mb = &g_array_index (ic->math, MathGlyph, b);
          const Glyph *gb = &g[mb->glyph];
          double em = MAX (ma->em, mb->em), key;
          int l = a, r = b;

          if (gb->r.x0 > ga->r.x1 + 2.2 * em)
            break;  /* sorted by x0: nothing further can be close */
          if (!v_overlap_enough (&ga->r, &gb->r, 0.3) || different_lines (ic->bands, ma, mb, em))
            continue;
          if (gb->r.x0 + gb->r.x1 < ga->r.x0 + ga->r.x1)
            {
              l = b;
              r = a;
            }
          /* Nearest by gap, then by centre distance. */
          key = MAX (0.0, g[g_array_index (ic->math, MathGlyph, r).glyph].r.x0 -
                          g[g_array_index (ic->math, MathGlyph, l).glyph].r.x1) +
                1e-3 * fabs (ga->r.x0 + ga->r.x1 - gb->r.x0 - gb->r.x1);
          if (key < gap_right[l])
            {
              gap_right[l] = key;
              ic->best_right[l] = r;
            }
          if (key < gap_left[r])
            {
              gap_left[r] = key;
              ic->best_left[r] = l;
            }
        }
    }
  g_free (gap_right);
  g_free (gap_left);
}

/* A sign that stands in a superscript as an ordinary symbol: u^{*},
 * A^{+}, x^{-}, A^{\dagger}, 17^{\circ}, V^{\perp}, R^{\wedge}, and an
 * accent over a letter (\vec's arrow, Poppler's combining mark). */
static gboolean
is_script_sign (gunichar c)
{
  return c == '*' || c == 0x2217 || c == '+' || c == '-' || c == 0x2212 || c == 0x00B1 || c == 0x2213 ||
         c == 0x2020 || c == 0x2021 || c == 0x2218 || c == 0x25E6 || c == 0x22A5 || c == 0x22C6 ||
         c == 0x2227 || c == 0x2228 || c == 0x223C || g_unichar_type (c) == G_UNICODE_NON_SPACING_MARK;
}

/* Whether r, an extension font's delimiter fitted to its ink, opens the
 * \left ... \right group of the math letter l before it (x \left[
 * \frac{a}{b} \right], \kappa \left\| ... \right\|): TeX's thin space
 * before the inner atom and the big delimiter's left sidebearing measure
 * 0.39-0.45 em in CM, LM, Times, Palatino and Libertine (probes 3705, detect
 * dev 1153), over the 0.4 em of any extension delimiter, so the letter was
 * an inline region of its own (class leftright, fresh detect 1092: P
 * 0.823). A word space and the sidebearing, two formulas, measure 0.55 em
 * or more. */
static gboolean
letter_before_big_delimiter (const MathGlyph *ml, const MathGlyph *mr, const Glyph *l, const Glyph *r, double gap,
                             double em)
{
  return gap < 0.5 * em && ext_delimiter (r) && !r->ink && !ml->script && !mr->script && !l->ext &&
         (l->cls == CLS_STRONG || l->cls == CLS_WEAK) && g_unichar_isalnum (l->c);
}

/* The spacing rules for two line neighbours l (left) and r: operators,
 * punctuation, ellipses, scripts, operator names, digit groups and
 * delimiters, and the limit before a radical or big operator. */
static gboolean closing_bar (const InlineCtx *ic, int li);

static gboolean
pair_join_spacing (const InlineCtx *ic, const MathGlyph *ml, const MathGlyph *mr, const Glyph *l,
                   const Glyph *r, double gap, double em)
{
  const Glyph *g = ic->g;
  int n = ic->n;
  FmDetectRule rule = ic->rule;
  /* Next in Poppler's order with no space: one word. */
  gboolean adjacent = (r - g == l - g + 1) && !r->space_before;
  gboolean join = gap < 0.2 * em ||
         (adjacent && gap < 0.4 * em) ||
         /* (a sign in a script is no binary operator: u^{*} x = y, A^{+} B,
          * 17^{\circ} U are two formulas a word space apart; a limit row's
          * symbols, \to \infty under \lim, still reach the operand) */
         (gap < 1.2 * em && ((is_operator (l->c) && !(ml->script && gap >= 0.3 * em && is_script_sign (l->c))) ||
                             (is_operator (r->c) && !is_prefix_operator (r->c)))) ||
         /* math's comma and \dots are followed by a thin space; a
          * sentence's period or comma by a word space */
         ((l->c == ',' || l->c == ';' || ellipsis_dot (g, n, (int) (r - g))) && gap < 0.3 * em) ||
         /* after an ellipsis, a thin space (1/6 em: \ldots is an
          * inner atom) continues the formula, a word space (>= 2/9
          * em) ends it */
         (ellipsis_dot (g, n, (int) (l - g)) && gap < (r->c == '.' || r->c == ',' ? 0.3 : 0.2) * em) ||
         /* two scripts a word space apart are the ends of two
          * formulas ("n_n \sum^n"), not one */
         ((ml->script || mr->script) && gap < 0.3 * em &&
          !(ml->script && mr->script && r->space_before && gap >= 0.2 * em)) ||
         /* TeX's thin space around an operator name (log, sin), two of them
          * in \operatorname{Re}\,z (1/3 em) */
         (gap < 0.36 * em && ((l->cls == CLS_NEUTRAL && g_unichar_isalpha (l->c)) ||
                              (r->cls == CLS_NEUTRAL && g_unichar_isalpha (r->c))) &&
          /* not after a script and a word space: "\rangle^{2} \exp" is two */
          !(ml->script && r->space_before && gap >= 0.2 * em) &&
          /* the two thin spaces come after the name, before its
           * argument; before the name a word space ends a formula
           * ("\ldots\ \operatorname{Re}") */
          !(r->cls == CLS_NEUTRAL && g_unichar_isalpha (r->c) &&
            !(l->cls == CLS_NEUTRAL && g_unichar_isalpha (l->c)) && r->space_before && gap >= 0.2 * em)) ||
         /* digit groups of one number: 1.12139\;32942 */
         (rule == FM_DETECT_RULE_FULL && gap < 0.32 * em && v_overlap_enough (&l->r, &r->r, 0.7) &&
          digit_groups (g, n, (int) (l - g), (int) (r - g))) ||
         /* a large delimiter that the text layer lost */
         (rule == FM_DETECT_RULE_FULL && gap < 1.0 * em && ink_delimiter_between (ic->pc->ink, &l->r, &r->r, em)) ||
         /* ... or found in the ink: its box is its ink, without
          * the sidebearings of a text-layer box, and \left puts
          * a thin space before it (an inner atom) */
         ((l->ink || r->ink) && gap < 0.3 * em) ||
         /* ... or an extension font's delimiter fitted to its ink
          * (ext_glyph_to_ink): the sidebearings of its advance
          * come on top of the thin space (a thin bar's are a
          * fifth of an em in Fourier) */
         (rule == FM_DETECT_RULE_FULL && ic->pc->ink != NULL && gap < 0.4 * em &&
          (ext_delimiter (l) || ext_delimiter (r))) ||
         letter_before_big_delimiter (ml, mr, l, r, gap, em) ||
         /* ... and an extension font's big operator: its left sidebearing
          * (0.05 em, CMEX's text-style \int) comes on top of the thin space
          * before it, c\int s\,d\mu measures 0.216 em; a word space (2/9 em
          * or more) and the sidebearing make 0.27 em */
         (rule == FM_DETECT_RULE_FULL && r->ext && is_prefix_operator (r->c) && !mr->script && gap < 0.25 * em &&
          v_overlap_enough (&l->r, &r->r, 0.5));
  /* Before a radical or big operator only TeX's thin space
   * (1/6 em) is inside a formula - or a binary operator's or a
   * relation's own space (2/9, 5/18 em: r \propto \sqrt{A}):
   * no formula ends in one. */
  /* (a closing bar, \bigr| or \|v\|, is no relation: "$|a|$ $\sqrt{2}$",
   * "$\bigl| f_n - f \bigr|$ $\int_0^1 g$" had been one formula in Libertine,
   * STIX Two and LM Math, whose bars Poppler reads as U+2223 or U+2225) */
  if (join && is_prefix_operator (r->c) && gap >= (r->ext ? 0.25 : 0.2) * em &&
      !(is_operator (l->c) && !is_prefix_operator (l->c) && l->c != '/' && l->c != '|' &&
        gap < 0.45 * em && !closing_bar (ic, (int) (ml - &g_array_index (ic->math, MathGlyph, 0)))))
    join = FALSE;
  return join;
}

/* The extent [*s0, *s1] of the script-size math glyphs on one side of the
 * bar on row y that runs over [bx0, bx1]: above it (above) or below it,
 * within 0.5 em, and within the bar's ends (tol); FALSE when none. */
static gboolean
fraction_side_extent (const InlineCtx *ic, double y, gboolean above, double bx0, double bx1, double tol, double em,
                      double *s0, double *s1)
{
  const Glyph *g = ic->g;

  *s0 = G_MAXDOUBLE;
  *s1 = -G_MAXDOUBLE;
  for (int j = math_from_x (ic->math, g, ic->m, bx0 - tol); j < ic->m; j++)
    {
      const MathGlyph *mj = &g_array_index (ic->math, MathGlyph, j);
      const FmRect *o = &g[mj->glyph].r;
      if (o->x0 >= bx1)
        break;
      if (!mj->script || o->x1 > bx1 + tol)
        continue;
      if (above ? (fm_rect_cy (o) < y && o->y1 > y - 0.5 * em) : (fm_rect_cy (o) > y && o->y0 < y + 0.5 * em))
        {
          *s0 = MIN (*s0, o->x0);
          *s1 = MAX (*s1, o->x1);
        }
    }
  return *s1 > *s0;
}

/* Whether a bar [bx0, bx1] ends within 0.35 em of the parts [p0, p1]
 * stacked on it: a fraction's, not a table's rule. TeX adds
 * \nulldelimiterspace (0.12 em) each side of a fraction; a table's \hline
 * or \cline runs \tabcolsep (0.6 em) or whole columns past its cells
 * (review of detectprec: a \multirow results table's numbers and wrapped
 * text beside an \hline had become inline formulas in CM). */
static gboolean
fraction_bar_hugs_parts (double bx0, double bx1, double p0, double p1, double em)
{
  return p1 > p0 && bx0 >= p0 - 0.35 * em && bx1 <= p1 + 0.35 * em;
}

/* fraction_bar_hugs_parts() for the bar on row y over [bx0, bx1], its
 * parts the script-size math glyphs above and below it
 * (fraction_side_extent()). */
static gboolean
fraction_bar_tight (const InlineCtx *ic, double y, double bx0, double bx1, double tol, double em)
{
  double p0 = G_MAXDOUBLE, p1 = -G_MAXDOUBLE, s0, s1;

  for (int side = 0; side < 2; side++)
    if (fraction_side_extent (ic, y, side == 0, bx0, bx1, tol, em, &s0, &s1))
      {
        p0 = MIN (p0, s0);
        p1 = MAX (p1, s1);
      }
  return fraction_bar_hugs_parts (bx0, bx1, p0, p1, em);
}

/* Whether a fraction part [s0, s1] is centred on its bar [bx0, bx1]:
 * its margins equal within tol and a quarter of the room left (a
 * denominator's italic correction is in its box for TeX, not in the
 * glyph's). */
static gboolean
fraction_part_centred (double s0, double s1, double bx0, double bx1, double tol)
{
  double lm = MAX (0.0, s0 - bx0), rm = MAX (0.0, bx1 - s1);

  return fabs (lm - rm) <= tol + 0.25 * (lm + rm);
}

/* fraction_part_scan()'s partner where no script on the bar's other side
 * overlaps k's columns: the first or last glyph of a part wider than the
 * other (the f of \frac{f(x)}{x}, the n of \frac{1}{n^2+1}, each beside a
 * centred one-glyph part). y is the bar's row, above k or below it (y < 0:
 * none); the ink run through k there must be a bar (fraction_bar_band():
 * a rule under a script finds "partners" all along it), the bar reaching
 * across k's box. The narrower side's scripts under the run are centred
 * on it: a fraction's narrower part is centred on its bar, while a
 * subscript under a wider superscript (x_i^{2n} in an OpenType font's
 * tight boxes, where the rule found is the superscript's own bottom
 * stroke) is left-aligned with it. (The wider part need not reach the
 * bar's ends: a numerator's f(x) starts 1 pt after it in some fonts.) */
static FracAnswer
fraction_partner_apart (const InlineCtx *ic, int k, double y, gboolean above, double em)
{
  const FmRect *r = &ic->g[g_array_index (ic->math, MathGlyph, k).glyph].r;
  double tol = 1.5 / ic->pc->ink->scale + 0.02 * em, bx0, bx1, k0, k1, p0, p1;

  if (y < 0)
    return FRAC_NONE;
  ink_row_run (ic->pc->ink, (int) (y * ic->pc->ink->scale), (int) (fm_rect_cx (r) * ic->pc->ink->scale), &bx0, &bx1);
  if (bx0 > r->x0 + tol || bx1 < r->x1 - tol || fraction_bar_band (ic, y, bx0, bx1, em) < 0)
    return FRAC_NONE;
  /* (above: the partner's side, the bar above k; k's is the other) */
  if (!fraction_side_extent (ic, y, above, bx0, bx1, tol, em, &p0, &p1) ||
      !fraction_side_extent (ic, y, !above, bx0, bx1, tol, em, &k0, &k1))
    return FRAC_NONE;
  if (!(p1 - p0 < k1 - k0 ? fraction_part_centred (p0, p1, bx0, bx1, tol) : fraction_part_centred (k0, k1, bx0, bx1, tol)))
    return FRAC_NONE;
  return fraction_bar_hugs_parts (bx0, bx1, MIN (p0, k0), MAX (p1, k1), em) ? FRAC_TIGHT : FRAC_PART;
}

/* Whether math glyph k is a part of a text-style fraction: a bar runs
 * right below it (a numerator) or above it (a denominator), and another
 * script-size math glyph stands on the bar's other side over the same
 * columns (a superscript's box can have a letter's stroke right below it,
 * t^2: no partner). */
static FracAnswer
fraction_part_scan (const InlineCtx *ic, int k, double em)
{
  const Glyph *g = ic->g;
  const MathGlyph *mk = &g_array_index (ic->math, MathGlyph, k);
  const FmRect *r = &g[mk->glyph].r;
  double below, above;
  FracAnswer answer;

  if (ic->pc->ink == NULL || !mk->script)
    return FRAC_NONE;
  /* (both: the rule below may be the glyph's own bottom stroke, a 2's) */
  below = bar_below_y (ic->pc->ink, r, em);
  above = bar_above_y (ic->pc->ink, r, em);
  if (below < 0 && above < 0)
    return FRAC_NONE;
  /* (a partner overlaps r's columns: it starts before r ends, and at most
   * the widest script's width before r starts; math is sorted by x0) */
  for (int j = math_from_x (ic->math, g, ic->m, r->x0 - ic->max_script_w - 0.01 * em); j < ic->m; j++)
    {
      const MathGlyph *mj = &g_array_index (ic->math, MathGlyph, j);
      const FmRect *o = &g[mj->glyph].r;
      double ix = MIN (o->x1, r->x1) - MAX (o->x0, r->x0);
      if (o->x0 >= r->x1)
        break;
      if (j == k || !mj->script || ix <= 0.2 * MIN (o->x1 - o->x0, r->x1 - r->x0))
        continue;
      if ((below >= 0 && fm_rect_cy (o) > below && o->y0 < below + 0.5 * em) ||
          (above >= 0 && fm_rect_cy (o) < above && o->y1 > above - 0.5 * em))
        {
          /* A fraction's bar is as wide as its wider part: its ink run
           * reaches across both boxes (a pixel and a sidebearing short at
           * most). Under stacked scripts with tight boxes (x_i^2 in an
           * OpenType font) the rule found is the superscript's own bottom
           * stroke, which ends with its box, short of the subscript's. */
          double bx0, bx1, y = (below >= 0 && fm_rect_cy (o) > below) ? below : above;
          double tol = 1.5 / ic->pc->ink->scale + 0.02 * em;
          ink_row_run (ic->pc->ink, (int) (y * ic->pc->ink->scale),
                       (int) (0.5 * (MAX (o->x0, r->x0) + MIN (o->x1, r->x1)) * ic->pc->ink->scale), &bx0, &bx1);
          if (bx0 <= MIN (o->x0, r->x0) + tol && bx1 >= MAX (o->x1, r->x1) - tol &&
              fraction_bar_band (ic, y, bx0, bx1, em) >= 0)
            return fraction_bar_tight (ic, y, bx0, bx1, tol, em) ? FRAC_TIGHT : FRAC_PART;
        }
    }
  answer = fraction_partner_apart (ic, k, below, FALSE, em);
  return answer != FRAC_NONE ? answer : fraction_partner_apart (ic, k, above, TRUE, em);
}

/* fraction_part_scan(), asked once per glyph and em (each pair a glyph is
 * in asks). */
static gboolean
fraction_part (const InlineCtx *ic, int k, double em)
{
  if (ic->frac[k] < 0 || ic->frac_em[k] != em)
    {
      ic->frac[k] = (signed char) fraction_part_scan (ic, k, em);
      ic->frac_em[k] = em;
    }
  return ic->frac[k] != FRAC_NONE;
}

/* The ends of the bar of fraction part k (fraction_part()): the ink run of
 * the rule right below or above it; k's own ends where neither reaches
 * across it. A fraction's parts are centred on its bar, the bar starts and
 * ends the fraction: what stands before or after it is as far from the bar
 * as from the fraction, however narrow the part beside it. */
static void
fraction_bar_ends (const InlineCtx *ic, int k, double em, double *x0, double *x1)
{
  const FmRect *r = &ic->g[g_array_index (ic->math, MathGlyph, k).glyph].r;
  double tol = 1.5 / ic->pc->ink->scale + 0.02 * em;

  *x0 = r->x0;
  *x1 = r->x1;
  for (int side = 0; side < 2; side++)
    {
      double y = side == 0 ? bar_below_y (ic->pc->ink, r, em) : bar_above_y (ic->pc->ink, r, em), bx0, bx1;
      if (y < 0)
        continue;
      ink_row_run (ic->pc->ink, (int) (y * ic->pc->ink->scale), (int) (fm_rect_cx (r) * ic->pc->ink->scale), &bx0,
                   &bx1);
      /* (a rule's end is no bar's: the gap to it would be 0) */
      if (bx0 <= r->x0 + tol && bx1 >= r->x1 - tol && fraction_bar_band (ic, y, bx0, bx1, em) >= 0)
        {
          *x0 = MIN (*x0, bx0);
          *x1 = MAX (*x1, bx1);
        }
    }
}

/* The glue between bar k and its line neighbour on side (-1 left, +1
 * right), in points, or -1 where it has none within 0.7 em. Measured on
 * the left from the neighbour's ink where that reaches past its box: a
 * letter's italic correction (\|f\| in TeX Gyre Bonum Math, 0.25 em) is
 * no glue. */
static double
bar_glue (const InlineCtx *ic, int k, int side)
{
  const Glyph *g = ic->g;
  const MathGlyph *mk = &g_array_index (ic->math, MathGlyph, k);
  int nb = side < 0 ? ic->best_left[k] : ic->best_right[k];
  const FmRect *b = &g[mk->glyph].r, *o;

  if (nb < 0)
    return -1;
  o = &g[g_array_index (ic->math, MathGlyph, nb).glyph].r;
  if (fm_rect_h_gap (b, o) >= 0.7 * mk->em)
    return -1;
  if (side > 0)
    return MAX (0, o->x0 - b->x1);
  return MAX (0, b->x0 - MAX (o->x1, ink_right_edge (ic->pc->ink, o, b->x0)));
}

/* Whether math glyph li is a vertical bar that closes an absolute value
 * or a norm (|A| < |B|, \lVert f \rVert): it sits right against its left
 * operand, and the bars of its kind walked left by the line neighbours
 * (steps under 0.7 em, at most 24 glyphs, scripts not counted) are even in
 * number with it. Such a bar is a closing delimiter, no relation: a word
 * space after it ends the formula ("|A| < |B| (Y, d_Y)" had been one),
 * where after \mid ({x \mid (x,y)}, a relation's thick space as wide as a
 * word space) it does not. pdfLaTeX's \mid is the same glyph as |: TeX
 * puts no glue between a closing bar and its operand (an ordinary or
 * closing atom after one), a thick space (5/18 em, no shrink) on both
 * sides of a relation, so a bar over 0.22 em from its left neighbour is a
 * relation, and the walk does not count bars with such glue on both sides
 * ("a \mid b \Rightarrow a \mid (b+c)" split at its second \mid).
 * Measured: a relation's bar 0.27-0.37 em from its neighbours (CM, newtx,
 * Libertine), a closing one up to 0.17 em (newtx's f: its italic
 * correction outruns its ink). */
static gboolean
closing_bar (const InlineCtx *ic, int li)
{
  const Glyph *g = ic->g;
  const MathGlyph *ml = &g_array_index (ic->math, MathGlyph, li);
  gunichar c = g[ml->glyph].c;
  int k = li, bars = 0;

  /* (U+2223: unicode-math's \lvert/\rvert at \bigl/\bigr size in LM
   * Math, as Poppler reads them; \mid is that character too, and its
   * thick space tells it apart) */
  if (c != '|' && c != 0x2016 && c != 0x2225 && c != 0x2223)
    return FALSE;
  if (bar_glue (ic, li, -1) > 0.22 * ml->em)
    return FALSE;
  for (int taken = 0; k >= 0 && taken < 24; taken++)
    {
      const MathGlyph *mk = &g_array_index (ic->math, MathGlyph, k);
      int next = ic->best_left[k];
      bars += !mk->script && g[mk->glyph].c == c &&
              !(bar_glue (ic, k, -1) > 0.22 * mk->em && bar_glue (ic, k, 1) > 0.22 * mk->em);
      if (next < 0 ||
          fm_rect_h_gap (&g[mk->glyph].r, &g[g_array_index (ic->math, MathGlyph, next).glyph].r) >= 0.7 * mk->em)
        break;
      k = next;
    }
  return bars % 2 == 0;
}

/* Whether c, a math symbol to Unicode, is an ordinary symbol to TeX
 * (\infty, \partial, \emptyset, \nabla, \forall, \exists, \angle):
 * no glue on either side of it. */
static gboolean
is_ordinary_symbol (gunichar c)
{
  return c == 0x221E || c == 0x2202 || c == 0x2205 || c == 0x2207 || c == 0x2200 || c == 0x2203 ||
         c == 0x2204 || c == 0x2220 || c == 0x1D715 || c == 0x1D6FB;
}

/* The line's word space (see Band): a gap of that width where
 * Poppler sees a space separates two formulas - unless one side
 * is an operator (a relation's thick space can equal it); a gap
 * of another width, up to 0.45 em, is math's own spacing
 * (\operatorname{ph}\,z and \mathrm{Li}_2\,u put two thin
 * spaces, a word space at its natural width in CM). li is l's index in
 * math; join is the spacing rules' answer, returned changed or not. */
static gboolean is_accent_mark (gunichar c);
static int script_base (const InlineCtx *ic, int li);

/* Whether math glyph li is a script of a math letter (x_\infty, L^\infty),
 * not of an operator's limits. */
static gboolean
script_of_letter (const InlineCtx *ic, int li)
{
  int b = script_base (ic, li);
  const Glyph *base = b >= 0 ? &ic->g[g_array_index (ic->math, MathGlyph, b).glyph] : NULL;

  return base != NULL && g_unichar_isalpha (base->c) && (base->cls == CLS_STRONG || base->cls == CLS_WEAK) &&
         !base->ext && !is_prefix_operator (base->c);
}

/* The letter under accent g[a] (\vec{e}, \hat{z}): the glyph listed
 * next to it that overlaps it across or starts where it ends (TeX kerns
 * back over the accent's advance: CM's \vec is a 0.03 em box before the
 * e), not above it (an accent over an x-height letter is not raised: its
 * box is level with the letter's); -1 if none. */
static int
accented_letter (const Glyph *g, int n, int a)
{
  for (int k = a - 1; k <= a + 1; k += 2)
    if (k >= 0 && k < n && g_unichar_isalpha (g[k].c) &&
        (MIN (g[k].r.x1, g[a].r.x1) > MAX (g[k].r.x0, g[a].r.x0) ||
         fabs (g[k].r.x0 - g[a].r.x1) < 0.05 * g[k].size) &&
        fm_rect_cy (&g[k].r) > fm_rect_cy (&g[a].r) - 0.1 * g[k].size)
      return k;
  return -1;
}

/* The gap between l and r as TeX's glue: an accent's box is its own
 * glyph's, set off by the letter's skew (\vec{e}'s arrow starts 0.03 em
 * before the e), while the accented atom is as wide as its letter. */
static double
atom_gap (const Glyph *g, int n, const Glyph *l, const Glyph *r)
{
  int a = is_accent_mark (l->c) ? accented_letter (g, n, (int) (l - g)) : -1;
  int b = is_accent_mark (r->c) ? accented_letter (g, n, (int) (r - g)) : -1;

  return MAX (0.0, (b >= 0 ? g[b].r.x0 : r->r.x0) - (a >= 0 ? g[a].r.x1 : l->r.x1));
}

/* Whether l ends an operator name (\ker, \operatorname{Tr}: a known
 * function word, upright, neutral) and r is the math letter of its operand:
 * TeX's thin space after the operator and the \, written after it make
 * 1/3 em, the natural word space of CM and LM (pdfLaTeX, XeLaTeX), and with
 * the sidebearings 0.244-0.253 em in newtx and Libertine, as wide as their
 * lines' word space to 0.004 em (probes 3800: \ker\, T, \operatorname{Tr}\,\nu,
 * \mathrm{tr}\, A): the letter was an inline region of its own. Not the
 * names that prose writes as words before a formula ("the min $M$", "max
 * $N$", "log $L$" in CM are as wide apart: probe 3801 merged them). */
static gboolean
operator_name_before_letter (const Glyph *g, const MathGlyph *ml, const MathGlyph *mr, const Glyph *l,
                             const Glyph *r)
{
  static const char *const prose_names[] = { "min", "max", "log", "exp", "mod", "deg", "arg", "sup", "inf", NULL };
  char word[GLYPH_WORD_SIZE];
  int j = (int) (l - g) + 1, i = j - 1;

  if (l->cls != CLS_NEUTRAL || !g_unichar_isalpha (l->c) || ml->script || mr->script || r->cls != CLS_STRONG ||
      !g_unichar_isalpha (r->c))
    return FALSE;
  while (i > 0 && j - i < 8 && !g[i].space_before && g[i - 1].cls == CLS_NEUTRAL && g_unichar_isalpha (g[i - 1].c))
    i--;
  glyph_word (g, i, j, word);
  for (int k = 0; prose_names[k]; k++)
    if (strcmp (word, prose_names[k]) == 0)
      return FALSE;
  return fm_word_is_math_function (word);
}

static gboolean
pair_join_word_space (const InlineCtx *ic, int li, const MathGlyph *ml, const MathGlyph *mr, const Glyph *l,
                      const Glyph *r, double gap, double em, gboolean join)
{
  const Glyph *g = ic->g;
  const PageCtx *pc = ic->pc;
  const int *best_left = ic->best_left;
  GArray *math = ic->math;
  double ws = band_word_space (ic->bands, ml->band >= 0 ? ml->band : mr->band);
  /* A formula that ends in \infty or \emptyset, ordinary symbols with
   * no glue after them, is parted from the next by a word space
   * ("$0\cdot\infty$ $h : U \to X$" had been one). Only those two on
   * the left, not in a limit (\lim_{n\to\infty} a_n centres the
   * limit under \lim: its gap to a_n is any width; a letter's script
   * is no limit: "$Y_\infty$ 2024", pdf-e2e dev 1161), and none on the
   * right: a control space before \forall, \exists, \partial or \nabla
   * is the word space inside one formula (f(x) \ge 0\ \forall x \in X,
   * \nabla f = 0\ \partial_x g). */
  gboolean ends_ordinary = (l->c == 0x221E || l->c == 0x2205) && (!ml->script || script_of_letter (ic, li));
  /* (an accent has no glue: \vec{e}_2 after a word space had been
   * joined to the formula before it as if after an operator) */
  gboolean op = (is_operator (l->c) && !ends_ordinary && !is_accent_mark (l->c) && !closing_bar (ic, li)) ||
                (is_operator (r->c) && !is_prefix_operator (r->c) && !is_accent_mark (r->c));
  /* boxes made from the ink (extension fonts, lost pieces)
   * have no sidebearings: their gaps are no glue widths */
  gboolean exact = !l->ext && !r->ext && !l->ink && !r->ink;
  /* a text-style fraction's numerator or denominator: the script-size
   * glyph next to its bar (\sum_{n=1}^\infty \frac{1}{n^2} \cos t puts a
   * thin space and the null delimiter, 0.34 em, on either side of it) */
  gboolean frac_l = ws > 0 && fraction_part (ic, li, em);
  gboolean frac_r = ws > 0 && fraction_part (ic, (int) (mr - &g_array_index (math, MathGlyph, 0)), em);
  /* (after a script, a thin space and \scriptspace make
   * 0.21-0.23 em, as wide as a fully shrunk word space, 2/9
   * em: there the rules above decide) */
  if (ws > 0 && join && exact && !op && r->space_before && gap >= 0.2 * em &&
      fabs (gap - ws) < 0.008 * em &&
      /* (beside a fraction a word space has the null delimiter on top:
       * \frac{F_0}{m} \cos, a thin space and it, can equal the line's) */
      !frac_l && !frac_r && !operator_name_before_letter (g, ml, mr, l, r) &&
      /* (the dots of one ellipsis: a squeezed line's word space can
       * shrink to their spacing) */
      !(ellipsis_dot (g, ic->n, (int) (l - g)) && ellipsis_dot (g, ic->n, (int) (r - g))) &&
      /* (a superscript after a math italic letter stands its italic
       * correction on: V's, 0.22 em in CM, equals a squeezed line's
       * word space, "V' \cap X" was cut after V on fresh seed 1046; a
       * formula after a word space would add the correction to it) */
      !(mr->script && r->r.y0 < l->r.y0 && g_unichar_isalpha (l->c) && l->cls != CLS_NEUTRAL &&
        l->cls != CLS_TEXT && !ml->script) &&
      /* after a script TeX adds \scriptspace to the glue: a
       * word space there is wider than the line's, and a gap
       * narrower than it is math spacing (\lim_{x\to c} x^2:
       * thin space plus \scriptspace, 0.253 em against a word
       * space of 0.260 em) */
      !(ml->script && (gap < 0.24 * em || gap < ws - 0.004 * em)))
    join = FALSE;
  /* After a script, a word space and \scriptspace (0.035-0.06
   * em: 0.5 pt, or the OpenType font's SpaceAfterScript): two
   * formulas (40^{3} 36^{1}); inside a formula a script is
   * followed by \scriptspace alone, or with a thin space
   * (0.22 em), or by an operator's space */
  else if (ws > 0 && join && exact && !op && ml->script && !mr->script && r->space_before &&
           gap > ws + 0.02 * em && gap < ws + 0.08 * em &&
           /* (on a squeezed line, unless the word space is as wide as the
            * thin space, which neither stretches nor shrinks: newtx's
            * "$\emptyset^\#$ $F_1$" at 0.19 em) */
           (ws > 0.2 * em || fabs (ws - em / 6.0) > 0.015 * em) &&
           /* (but a thin space and \scriptspace, 0.2 to 0.23 em, before an
            * operator name's upright letter or a d is the thin space of
            * a^2\sin\theta or x^2\,dx, which falls in that window where a
            * squeezed line's word space is 0.14-0.2 em) */
           !(fabs (gap - em / 6.0 - 0.05 * em) < 0.015 * em &&
             (r->c == 'd' || (g_unichar_isalpha (r->c) && r->cls == CLS_NEUTRAL))) &&
           /* (a fraction's denominator is followed by the null
            * delimiter and a thin space, 0.29 em: \frac{1}{g(y)}\,dy;
            * so is its numerator where that is the wider part:
            * \frac{f(x)}{x}\,dx) */
           !bar_above (pc->ink, &l->r, em) && !frac_l)
    join = FALSE;
  /* (a gap to an ink box holds a sidebearing besides the
   * glue: only one narrower than the word space tells) */
  else if (ws > 0 && !join && gap >= 0.1 * em &&
           gap < (is_prefix_operator (r->c) ? 0.3 : 0.45) * em &&
           /* (after a script, \scriptspace widens a word space; the
            * null delimiter beside a fraction, 1.2 pt, too: without it
            * a fraction's thin space is narrower than a tight line's
            * word space, 0.22 em against 0.30. 0.1 em, a little less
            * than 1.2 pt at 10-11 pt: the page's points are TeX's only
            * when it is not scaled, its em is measured) */
           (exact && !ml->script && !frac_r ? fabs (gap - ws) > 0.02 * em
                                           : gap - (frac_l || frac_r ? 0.1 * em : 0.0) < ws - 0.02 * em) &&
           /* TeX puts a math letter's italic correction
            * after it at the end of a formula: a word space
            * after an italic letter is wider than the line's
            * (two math letters have no glue between them) */
           !(gap > ws && g_unichar_isalpha (l->c) && l->cls != CLS_NEUTRAL && l->cls != CLS_TEXT) &&
           !is_sentence_punct (l->c) && !is_sentence_punct (r->c) && (!mr->script || frac_r) &&
           /* a script after its base (\mathrm{Li}_2\,u), or a
            * text-style fraction's part (whose word space the null
            * delimiter widens: a narrower gap is math's) */
           (!ml->script || frac_l || frac_r ||
            (best_left[li] >= 0 && !g_array_index (math, MathGlyph, best_left[li]).script &&
             fm_rect_h_gap (&g[g_array_index (math, MathGlyph, best_left[li]).glyph].r, &l->r) < 0.05 * em)) &&
           /* nothing between them: a fraction's numerator is
            * narrower than its bar */
           ink_gap_empty (pc->ink, &l->r, &r->r))
    join = TRUE;
  /* A text-style fraction, then an operator name (\frac{d}{dx}\cos x):
   * the name's thin space and the null delimiter, 0.29 em; a word space
   * there has the null delimiter on top, past the line's word space by
   * more than 0.1 em */
  else if (!join && frac_l && !mr->script && r->cls == CLS_NEUTRAL && g_unichar_isalpha (r->c) &&
           gap < 0.4 * em && gap < ws + 0.1 * em && ink_gap_empty (pc->ink, &l->r, &r->r))
    join = TRUE;
  /* An operator name's script, then its argument a thin space
   * on (\operatorname{Li}_{2}\,t): \scriptspace and the thin
   * space reach a word space and more, but no formula ends in
   * a scripted name */
  else if (!join && ml->script && !mr->script && gap < 0.45 * em && best_left[li] >= 0 &&
           g[g_array_index (math, MathGlyph, best_left[li]).glyph].cls == CLS_NEUTRAL &&
           g_unichar_isalpha (g[g_array_index (math, MathGlyph, best_left[li]).glyph].c) &&
           !g_array_index (math, MathGlyph, best_left[li]).script &&
           fm_rect_h_gap (&g[g_array_index (math, MathGlyph, best_left[li]).glyph].r, &l->r) < 0.05 * em &&
           g_unichar_isalpha (r->c) && r->cls != CLS_TEXT && r->cls != CLS_NEUTRAL &&
           ink_gap_empty (pc->ink, &l->r, &r->r))
    join = TRUE;
  return join;
}

static gboolean ext_operator (const InlineCtx *ic, int b);

/* How far past big operator b's box its first side script may start, in
 * its em: a text-style big operator's box can be narrower than its
 * advance, and its scripts start up to 0.2 em after it (the largest gap
 * seen: newtx's \prod and \sum, read "Î" and "Í"), so the reach is
 * 0.25 em; 0.1 em for any other base. */
static double
side_script_reach (const InlineCtx *ic, int b)
{
  gunichar c = ic->g[g_array_index (ic->math, MathGlyph, b).glyph].c;

  if (g_array_index (ic->math, MathGlyph, b).script)
    return 0.1;
  if ((is_prefix_operator (c) && !(c >= 0x221A && c <= 0x221C) && c != 0x00AC) || ext_operator (ic, b))
    return 0.25;
  return 0.1;
}

/* The full-size glyph (index in math) whose script li is: the walk left
 * over scripts that touch one another (\sim_{rat}: t, a, r) ends at a
 * glyph that is no script and touches the first of them; -1 when li is
 * no script or the walk loses touch. */
static int
script_base (const InlineCtx *ic, int li)
{
  const Glyph *g = ic->g;
  int i = li;

  if (!g_array_index (ic->math, MathGlyph, li).script)
    return -1;
  for (int steps = 0; steps < 12; steps++)
    {
      const MathGlyph *mi = &g_array_index (ic->math, MathGlyph, i);
      int j = ic->best_left[i];
      const MathGlyph *mj;

      if (j < 0)
        return -1;
      mj = &g_array_index (ic->math, MathGlyph, j);
      /* (side_script_reach: 0.1 em past most bases, a slanted glyph's box
       * ending before its ink; 0.25 em past a big operator, an integral or
       * an extension font's operator, whose box can end before its
       * advance) */
      if (fm_rect_h_gap (&g[mj->glyph].r, &g[mi->glyph].r) >= side_script_reach (ic, j) * MAX (mi->em, mj->em))
        return -1;
      if (!mj->script)
        return j;
      i = j;
    }
  return -1;
}

/* Whether math glyph b, the base of script li, is a big operator of a Type 1
 * extension font whose text is a letter (kpfonts' and pxfonts' \int read
 * "R"): an extension glyph without a delimiter's text that is as wide as a
 * big operator (ext_delimiter: a fence is narrower), or that has scripts
 * both above and below its middle (\int_s^\infty: a fence's script, as in
 * \bigr)^2, goes on one side). Its formula had ended at its scripts. */
static gboolean
ext_operator (const InlineCtx *ic, int b)
{
  const Glyph *g = ic->g;
  const Glyph *base = &g[g_array_index (ic->math, MathGlyph, b).glyph];
  double mid = fm_rect_cy (&base->r);
  gboolean above = FALSE, below = FALSE;

  if (!base->ext || is_delimiter_char (base->c))
    return FALSE;
  if (!ext_delimiter (base))
    return TRUE;
  /* (math is sorted by x0: the scripts start within the operator's
   * box or just after it) */
  for (int k = b + 1; k < ic->m; k++)
    {
      const MathGlyph *mk = &g_array_index (ic->math, MathGlyph, k);
      const FmRect *rk = &g[mk->glyph].r;
      if (rk->x0 > base->r.x1 + 0.3 * mk->em)
        break;
      if (!mk->script || !v_overlap_enough (&base->r, rk, 0.3))
        continue;
      above = above || fm_rect_cy (rk) < mid;
      below = below || fm_rect_cy (rk) > mid;
    }
  return above && below;
}

/* Whether li is the last script of an operator (\sim_{rat}, \times_Y,
 * \otimes_{\mathcal{O}_X}^{L}, \int_0^1): no formula ends in a scripted
 * relation, binary or big operator, and after its script come the
 * operator's own space (a thick space after a relation) and \scriptspace,
 * 0.3-0.5 em with a font's sidebearings - as wide as a word space, so
 * neither the word-space rules nor the limit before a big operator apply. */
static gboolean
operator_script_end (const InlineCtx *ic, int li, const Glyph *r, double gap)
{
  const Glyph *g = ic->g;
  int b = script_base (ic, li);
  const MathGlyph *mb;
  const Glyph *base;
  FmRect stack;

  if (b < 0)
    return FALSE;
  mb = &g_array_index (ic->math, MathGlyph, b);
  base = &g[mb->glyph];
  if (!(is_operator (base->c) || is_prefix_operator (base->c) || ext_operator (ic, b)) || base->c == '/' ||
      base->c == '-' || base->c == ':' || is_delimiter_char (base->c))
    return FALSE;   /* (a fence's script ends a formula: |x|_p) */
  /* ordinary symbols that Unicode calls math symbols: \emptyset^{\#},
   * \infty, \partial, 
abla, primes, accents end formulas with scripts */
  if (base->c == 0x2205 || base->c == 0x221E || base->c == 0x2202 || base->c == 0x2207 ||
      (base->c >= 0x2032 && base->c <= 0x2037) || base->c == 0x22A5 || base->c == 0x22A4 ||
      base->c == 0x2220 || base->c == 0x00AC || g_unichar_type (base->c) == G_UNICODE_NON_SPACING_MARK)
    return FALSE;
  /* The gap counts from the end of the operator's whole stack of scripts
   * (\otimes_{\mathcal{O}_X}^{L}: the superscript is narrower than the
   * subscript, \int_0^1: the superscript sits in the subscript's gap),
   * scripts within 0.6 em above or below the operator, each touching the
   * stack so far; math is sorted by x0. */
  stack = g[g_array_index (ic->math, MathGlyph, li).glyph].r;
  for (int k = b + 1; k < ic->m; k++)
    {
      const MathGlyph *mk = &g_array_index (ic->math, MathGlyph, k);
      const FmRect *rk = &g[mk->glyph].r;
      if (rk->x0 >= r->r.x0)
        break;
      if (mk->script && rk->x0 < MAX (stack.x1, base->r.x1) + 0.1 * mb->em && rk->x1 < r->r.x0 &&
          rk->y0 > base->r.y0 - 0.6 * mb->em && rk->y1 < base->r.y1 + 0.6 * mb->em)
        fm_rect_union (&stack, rk);
    }
  gap = MIN (gap, MAX (0.0, r->r.x0 - stack.x1));
  return gap < 0.6 * mb->em && !is_sentence_punct (r->c) && !is_close_bracket (r->c) &&
         ink_gap_empty (ic->pc->ink, &stack, &r->r);
}

/* The script of big operator li's stack of side scripts that reaches
 * farthest right before r (index in math), -1 when it has none: the
 * scripts within 0.6 em above or below it, each starting within 0.1 em of
 * the stack so far; math is sorted by x0. Past a wide subscript the
 * operand's nearest line neighbour can be the operator itself, 1.3 em away
 * (\sum_{i=1}^{n} \omega, \int_{A\cup B} f in newtx: the subscript sits too
 * low to be the operand's neighbour). */
static int
operator_stack_last (const InlineCtx *ic, int li, const Glyph *r)
{
  const Glyph *g = ic->g;
  const MathGlyph *mb = &g_array_index (ic->math, MathGlyph, li);
  const Glyph *base = &g[mb->glyph];
  double x1 = base->r.x1, last_x1 = -G_MAXDOUBLE;
  int last = -1;

  for (int k = li + 1; k < ic->m; k++)
    {
      const MathGlyph *mk = &g_array_index (ic->math, MathGlyph, k);
      const FmRect *rk = &g[mk->glyph].r;
      if (rk->x0 >= r->r.x0)
        break;
      if (!mk->script || rk->x0 >= x1 + (last < 0 ? side_script_reach (ic, li) : 0.1) * mb->em || rk->x1 >= r->r.x0 ||
          rk->y0 <= base->r.y0 - 0.6 * mb->em || rk->y1 >= base->r.y1 + 0.6 * mb->em)
        continue;
      x1 = MAX (x1, rk->x1);
      if (rk->x1 >= last_x1)
        {
          last_x1 = rk->x1;
          last = k;
        }
    }
  return last;
}

/* Whether li ends an operator set with limits under or over it (a
 * display-style \lim_{k\to\infty}, \sum\limits_{n=7}^\infty inline): the
 * operator - a big operator or an operator name, the letters touching l -
 * has script-size glyphs centred under or over it that reach past its
 * right end, and r starts a thin space after the widest of them (up to 0.3
 * em with sidebearings). Measured from the operator, that gap is half the
 * limit's overhang more, as wide as a word space: TeX centres the narrower
 * of operator and limit on the wider. */
static gboolean
limits_stack_end (const InlineCtx *ic, int li, const Glyph *r, double em)
{
  const Glyph *g = ic->g;
  const Glyph *l = &g[g_array_index (ic->math, MathGlyph, li).glyph];
  FmRect op = l->r;
  double stack_x1 = l->r.x1, lim_x0 = G_MAXDOUBLE;
  FmRect row = { 1, 0, 0, 0 };  /* the limit's row: none yet */
  /* (a math font's upright name is a strong glyph: STIX Two's lim) */
  gboolean name = l->cls != CLS_TEXT && g_unichar_isalpha (l->c);

  if (g_array_index (ic->math, MathGlyph, li).script || !(name || is_prefix_operator (l->c) || l->ext) ||
      is_sentence_punct (r->c) || is_close_bracket (r->c))
    return FALSE;
  /* the operator name's letters, left of l (math is sorted by x0: the
   * rest start farther left, and no letter is 2 em wide) */
  for (int k = li - 1; name && k >= 0; k--)
    {
      const MathGlyph *mk = &g_array_index (ic->math, MathGlyph, k);
      const Glyph *gk = &g[mk->glyph];
      if (op.x0 - gk->r.x0 > 2.0 * em)
        break;
      if (mk->script || gk->cls != l->cls || !g_unichar_isalpha (gk->c) || gk->r.x1 > op.x0 + 0.05 * em ||
          op.x0 - gk->r.x1 > 0.05 * em || !v_overlap_enough (&gk->r, &op, 0.7))
        continue;
      fm_rect_union (&op, &gk->r);
    }
  /* (a limit reaching past op's right end starts before it, at most the
   * widest script's width before it) */
  for (int k = math_from_x (ic->math, g, ic->m, op.x1 - ic->max_script_w - 0.01 * em); k < ic->m; k++)
    {
      const MathGlyph *mk = &g_array_index (ic->math, MathGlyph, k);
      const FmRect *rk = &g[mk->glyph].r;
      if (rk->x0 >= op.x1)
        break;
      if (!mk->script || rk->x1 <= op.x1 || rk->x1 > r->r.x0 ||
          !(fm_rect_cy (rk) > op.y1 - 0.1 * em || fm_rect_cy (rk) < op.y0 + 0.1 * em) ||
          fm_rect_v_gap (rk, &op) > 0.6 * em)
        continue;
      stack_x1 = MAX (stack_x1, rk->x1);
      lim_x0 = MIN (lim_x0, rk->x0);
      if (row.x1 < row.x0)
        row = *rk;
      else
        fm_rect_union (&row, rk);
    }
  if (lim_x0 == G_MAXDOUBLE)
    return FALSE;
  /* (the limit row's right end: the scripts starting right of op that
   * touch the row so far, walked rightwards. The loop above sees only
   * those starting left of op's end, and its centre test left out a
   * prime, raised to op's middle: \lim\limits_{x\to a'} ended before it,
   * was not centred and split from f(x)) */
  for (int k = math_from_x (ic->math, g, ic->m, op.x1); k < ic->m; k++)
    {
      const MathGlyph *mk = &g_array_index (ic->math, MathGlyph, k);
      const FmRect *rk = &g[mk->glyph].r;
      if (rk->x0 > stack_x1 + 0.1 * em || rk->x0 >= r->r.x0)
        break;
      if (mk->script && rk->x1 > stack_x1 && rk->x1 <= r->r.x0 && rk->y1 > row.y0 && rk->y0 < row.y1)
        {
          stack_x1 = rk->x1;
          fm_rect_union (&row, rk);
        }
    }
  /* (the limit row's left end: the scripts touching the found ones,
   * walked leftwards; math is sorted by x0) */
  for (int k = math_from_x (ic->math, g, ic->m, lim_x0) - 1; k >= 0; k--)
    {
      const MathGlyph *mk = &g_array_index (ic->math, MathGlyph, k);
      const FmRect *rk = &g[mk->glyph].r;
      if (rk->x0 <= op.x0 - 1.0 * em)
        break;
      /* (on the limit's row: a subscript of the line above can reach
       * over it in x - pdf-e2e seed 1039, an x_k over the n of
       * \lim\limits_{n\to\infty}, tests/fixtures/pdf/cls-limrow.body.tex;
       * touching within 0.12 em: a script letter's italic correction, CM's
       * N of \lim\limits_{N\to\infty} ends 0.08 em before the arrow, which
       * alone had been taken for the limit, not centred - pdf-e2e dev 1161) */
      if (mk->script && rk->x1 > lim_x0 - 0.12 * em && rk->x0 < lim_x0 && rk->x0 > op.x0 - 1.0 * em &&
          !(fm_rect_cy (rk) <= op.y1 - 0.1 * em && fm_rect_cy (rk) >= op.y0 + 0.1 * em) &&
          v_overlap_enough (rk, &row, 0.5))
        lim_x0 = rk->x0;
    }
  /* centred: the limit overhangs the operator alike on both sides */
  if (fabs ((op.x0 - lim_x0) - (stack_x1 - op.x1)) > 0.15 * em)
    return FALSE;
  return r->r.x0 - stack_x1 > -0.05 * em && r->r.x0 - stack_x1 < 0.3 * em;
}

/* Whether the gap between math glyphs li and ri (next to each other in
 * the text) is a binary operator's spaces with the operator missing: an
 * OpenType math font without U+29F5 (\setminus in DejaVu, Fira, Bonum,
 * Latin Modern Math under unicode-math) sets nothing there, no ink and no
 * text, only the medium spaces on both sides (0.45-0.85 em between U and
 * K of f \colon U \setminus K \to \mathbb{C}). Two formulas a word space
 * apart stand one word space apart: this gap is wider than the line's word
 * space by a third, yet under an em, between two math-font symbols, with
 * no glyph of the text between them. */
static gboolean
lost_operator_gap (const InlineCtx *ic, int li, int ri, double gap, double em)
{
  const Glyph *g = ic->g;
  const MathGlyph *ml = &g_array_index (ic->math, MathGlyph, li), *mr = &g_array_index (ic->math, MathGlyph, ri);
  const Glyph *l = &g[ml->glyph], *r = &g[mr->glyph];
  double ws = band_word_space (ic->bands, mr->band >= 0 ? mr->band : ml->band);

  /* (a Type 1 font has U+29F5's glyph: there two formulas \enspace apart,
   * $U$\enspace$K$, stand alike; an OpenType math font's set-up writes
   * its math letters as Mathematical Alphanumeric Symbols) */
  if (!ic->pc->unicode_math || mr->glyph != ml->glyph + 1 || mr->script || l->font != FM_FONT_MATH ||
      r->font != FM_FONT_MATH || l->ext || r->ext || l->ink || r->ink)
    return FALSE;
  if (!(g_unichar_isalnum (l->c) || is_close_bracket (l->c)) || !(g_unichar_isalnum (r->c) || is_open_bracket (r->c)))
    return FALSE;
  if (!(ws > 0) || gap < 0.4 * em || gap < 1.35 * ws || gap >= 1.0 * em)
    return FALSE;
  return ic->pc->ink != NULL && ink_gap_empty (ic->pc->ink, &l->r, &r->r);
}

/* A relation sign, for equations_apart(). */
static gboolean
is_relation_sign (gunichar c)
{
  static const gunichar rel[] = { '=', '<', '>', 0x2260, 0x2264, 0x2265, 0x2248, 0x2261, 0x2208, 0x2209,
                                  0x2282, 0x2283, 0x2286, 0x2287, 0x223C, 0x2243, 0x2245, 0x226A, 0x226B,
                                  0x2A7D, 0x2A7E, 0x2192, 0x21A6 };

  for (guint k = 0; k < G_N_ELEMENTS (rel); k++)
    if (c == rel[k])
      return TRUE;
  return FALSE;
}

/* Whether a full-size relation sign lies among the math glyphs walked from
 * c by the line neighbours on side step (-1 left, +1 right), while each is
 * less than 0.7 em from the last, at most 16 of them and at most
 * max_full full-size ones before the relation (the second equation's left
 * side is short, x_2 or p_{c,f}: further on the relation can be the next
 * formula's, L = r\:p\:\sin\:\theta then |f| \in L^1). Only a relation
 * outside brackets counts (P(X=x)\,P(Y=y): the first relation is inside
 * the probability's argument), and walking left a big operator or a
 * radical before the relation means c is inside its operand
 * (E = \int x f(x)\,dx = 1: the \, before dx is the integral's own). */
static gboolean
relation_beside (const InlineCtx *ic, int c, int step, int max_full)
{
  const Glyph *g = ic->g;
  int k = c, full = 0, depth = 0;

  for (int taken = 0; k >= 0 && taken < 16; taken++)
    {
      const MathGlyph *mk = &g_array_index (ic->math, MathGlyph, k);
      int next = step < 0 ? ic->best_left[k] : ic->best_right[k];
      gunichar ck = g[mk->glyph].c;
      if (is_open_bracket (ck) || is_close_bracket (ck))
        depth += (is_close_bracket (ck) == (step < 0)) ? 1 : -1;
      if (depth < 0)
        return FALSE;   /* c is inside a bracket: not between two equations */
      if (step < 0 && !mk->script && ck != 0x00AC &&
          (is_prefix_operator (ck) || (g[mk->glyph].ext && !is_open_bracket (ck) && !is_close_bracket (ck))))
        return FALSE;
      if (!mk->script && depth == 0 && is_relation_sign (ck))
        return TRUE;
      /* (brackets do not count: f(x) = -1 has its relation as near as
       * x_2 = -1) */
      if (!mk->script && !is_open_bracket (ck) && !is_close_bracket (ck) && ++full >= max_full)
        break;
      if (next < 0 || (!mk->script && (g[mk->glyph].c == ',' || g[mk->glyph].c == ';')))
        break;  /* (a list's comma: the relation is another formula's) */
      if (fm_rect_h_gap (&g[mk->glyph].r, &g[g_array_index (ic->math, MathGlyph, next).glyph].r) >= 0.7 * mk->em)
        break;
      k = next;
    }
  return FALSE;
}

/* Whether an integral sign lies among the 16 math glyphs walked left from
 * c by the line neighbours, while each is less than 0.7 em from the last. */
static gboolean
integral_before (const InlineCtx *ic, int c)
{
  const Glyph *g = ic->g;
  int k = c;

  for (int taken = 0; k >= 0 && taken < 16; taken++)
    {
      const MathGlyph *mk = &g_array_index (ic->math, MathGlyph, k);
      int next = ic->best_left[k];
      if (g[mk->glyph].c >= 0x222B && g[mk->glyph].c <= 0x2233)
        return TRUE;
      if (next < 0 ||
          fm_rect_h_gap (&g[mk->glyph].r, &g[g_array_index (ic->math, MathGlyph, next).glyph].r) >= 0.7 * mk->em)
        break;
      k = next;
    }
  return FALSE;
}

/* Whether ri is an integral's differential a thin space after li
 * (\int f\,d\mu): TeX puts an italic letter's italic correction before
 * the thin space, 0.16-0.2 em after f in newtx, Libertine and Termes, so
 * the gap (0.33-0.37 em) passes a line's word space and the formula was
 * cut there; newtx's closing bracket, narrower in the PDF than in TeX,
 * leaves g(x)\,dx a gap 0.02 em off the word space. A d (or \partial)
 * glued to the letter it differentiates, after an integral sign on its
 * left, continues the formula: no formula a word space after a letter,
 * with no word between, opens with a bare differential ($d\mu$ alone
 * does, but not a word space after a formula's letter). The cap is a
 * thin space and 0.27 em: the widest italic correction seen (0.25 em, f
 * in TeX Gyre Bonum Math) and 0.02 em for a bracket narrower in the PDF
 * than in TeX. (Known limit: in mathptmx, whose math letters are Times
 * Italic, \int_0^\infty f \emph{dx} - a prose word in italics - is
 * joined too; the font does not tell them apart.) */
static gboolean
differential_after_letter (const InlineCtx *ic, int li, int ri, double gap, double em)
{
  const Glyph *g = ic->g;
  const MathGlyph *ml = &g_array_index (ic->math, MathGlyph, li), *mr = &g_array_index (ic->math, MathGlyph, ri);
  const Glyph *l = &g[ml->glyph], *r = &g[mr->glyph];
  int k = mr->glyph + 1;

  if (mr->script || r->ext || gap > em / 6.0 + 0.27 * em || l->cls == CLS_TEXT ||
      !(g_unichar_isalnum (l->c) || is_close_bracket (l->c)))
    return FALSE;
  if (!(r->c == 'd' || r->c == 0x1D451 || r->c == 0x2202 || r->c == 0x1D715))
    return FALSE;
  if (k >= ic->n || g[k].space_before || !g_unichar_isalpha (g[k].c) || g[k].cls == CLS_TEXT ||
      g[k].r.x0 - r->r.x1 > 0.1 * em || !v_overlap_enough (&r->r, &g[k].r, 0.3))
    return FALSE;
  /* (past a wide side subscript, \int_{A\cup B} f, the letter's line
   * neighbour is the integral sign itself, over 0.7 em away) */
  k = ic->best_left[li];
  return integral_before (ic, li) ||
         (k >= 0 && g[g_array_index (ic->math, MathGlyph, k).glyph].c >= 0x222B &&
          g[g_array_index (ic->math, MathGlyph, k).glyph].c <= 0x2233);
}

/* Whether ri, a differential glued to its letter, continues the formula
 * after li, a big closing delimiter with no integral on its left
 * (\left(2y + \frac{y^2}{x}\right)\,dx + (2y+x)\,dy = 0): TeX puts a thin
 * space after a \right delimiter (an inner atom) on top of the \,, and
 * the delimiter's box is fitted to its ink, so the gap (0.51 em in CM) is
 * a word space and a sidebearing. The formula must go on after the
 * differential with a binary sign or a relation (M\,dx + N\,dy = 0, a
 * 1-form = 0): no formula a word space after another opens with a bare
 * "dx +". The cap is two thin spaces and 0.25 em of sidebearing. */
static gboolean
differential_after_delimiter (const InlineCtx *ic, int li, int ri, double gap, double em)
{
  const Glyph *g = ic->g;
  const Glyph *l = &g[g_array_index (ic->math, MathGlyph, li).glyph];
  const Glyph *r = &g[g_array_index (ic->math, MathGlyph, ri).glyph];
  int k = (int) (r - g) + 1, x = ic->best_right[ri], next;

  if (!ext_delimiter (l) || g_array_index (ic->math, MathGlyph, ri).script || r->ext ||
      gap > em / 3.0 + 0.25 * em || !(r->c == 'd' || r->c == 0x1D451))
    return FALSE;
  if (k >= ic->n || g[k].space_before || !g_unichar_isalpha (g[k].c) || g[k].cls == CLS_TEXT ||
      g[k].r.x0 - r->r.x1 > 0.1 * em || !v_overlap_enough (&r->r, &g[k].r, 0.3) || x < 0 ||
      g_array_index (ic->math, MathGlyph, x).glyph != k || (next = ic->best_right[x]) < 0)
    return FALSE;
  r = &g[g_array_index (ic->math, MathGlyph, next).glyph];
  return (is_operator (r->c) || is_relation_sign (r->c)) && !g_array_index (ic->math, MathGlyph, next).script &&
         r->r.x0 - g[k].r.x1 < 0.6 * em;
}

/* Whether c is an accent that Poppler gives a box of its own (\hat,
 * \bar, \tilde, \dot, \ddot, \check, \breve, \acute, \grave, \mathring). */
static gboolean
is_accent_mark (gunichar c)
{
  return (c >= 0x0300 && c <= 0x036F && c != 0x0338) || (c >= 0x20D0 && c <= 0x20DC) || c == 0x02C6 ||
         c == 0x02DC || c == 0x00AF ||
         c == 0x02D9 || c == 0x00A8 || c == 0x02C7 || c == 0x02D8 || c == 0x00B4 || c == 0x02DA;
}

/* Whether two equations stand a word space apart, li ending the first and
 * ri, a letter, starting the second (ma+bv+kx = 0 x_2 = -te^t): between
 * two ordinary symbols TeX puts no space, so a gap as wide as the line's
 * word space there is one, or \, - and on a squeezed line (word space
 * 0.17 em) the two are alike. A relation on both sides tells them apart:
 * one formula does not chain two equations with a thin space and no
 * punctuation (the \, of f(x)\,dx or \mathrm{Ei}\,\lambda has none
 * after it). */
static gboolean
equations_apart (const InlineCtx *ic, int li, int ri, double gap, double em)
{
  const Glyph *g = ic->g;
  const MathGlyph *ml = &g_array_index (ic->math, MathGlyph, li), *mr = &g_array_index (ic->math, MathGlyph, ri);
  const Glyph *l = &g[ml->glyph], *r = &g[mr->glyph];
  double ws = band_word_space (ic->bands, mr->band >= 0 ? mr->band : ml->band);

  /* (only a gap as wide as the word space and the first formula's italic
   * correction - 0.13 em after J in STIX Two Math -: a wider one is a \quad
   * inside the formula, x = 1 \quad y = 2 - quad_in_formula()'s) */
  if (mr->script || !r->space_before || !g_unichar_isalpha (r->c) || gap < 0.12 * em || ws <= 0 ||
      gap < ws - 0.03 * em || gap > ws + 0.3 * em || gap >= 0.6 * em)
    return FALSE;
  /* (an accent ends the first as its letter would: (-1\ \mathrm{mN})\hat{\mathbf{y}}
   * f(x) = -1, the hat's box reaching to the letter's right end) */
  if (!(g_unichar_isalnum (l->c) || is_close_bracket (l->c) || is_accent_mark (l->c)) || l->ext || l->ink)
    return FALSE;
  /* an operator name's last letter (\operatorname{Tr}\,u) takes a thin
   * space before its argument */
  if (l->c < 128 && g_ascii_isalpha (l->c) && ic->best_left[li] >= 0)
    {
      const Glyph *p = &g[g_array_index (ic->math, MathGlyph, ic->best_left[li]).glyph];
      if (p->c < 128 && g_ascii_isalpha (p->c) && l->r.x0 - p->r.x1 < 0.05 * em)
        return FALSE;
    }
  /* the differential of an integral (\int_0^1 g = f(x)\,dx: the relation
   * can stand between the integral and its dx) */
  if ((r->c == 'd' || r->c == 0x1D451 || r->c == 0x2202 || r->c == 0x1D715) && integral_before (ic, li))
    return FALSE;
  return relation_beside (ic, li, -1, 16) && relation_beside (ic, ri, +1, 4);
}

/* Whether a sign ri opens a formula: a unary minus or plus has no space
 * after it, a binary one TeX's medium space on both sides (shrunk alike
 * on a squeezed line). After an ordinary symbol (a letter, a digit, a
 * script, a closing bracket) a sign spaced only on its left is the start
 * of the next formula a word space on ("|x|^2 = x^2 -\omega^2 X" had
 * been one). */
static gboolean
unary_sign_after_word_space (const InlineCtx *ic, int li, int ri, double gap, double em)
{
  const Glyph *g = ic->g;
  const Glyph *l = &g[g_array_index (ic->math, MathGlyph, li).glyph];
  const Glyph *r = &g[g_array_index (ic->math, MathGlyph, ri).glyph];
  int ni = ic->best_right[ri], b;
  const Glyph *next;
  double after, ws = band_word_space (ic->bands, g_array_index (ic->math, MathGlyph, ri).band);

  /* (only where the line has a word space to measure: a display's line
   * has none, and a shrunk display's binary sign can sit closer to what
   * follows than to what precedes it by its sidebearings, C_1\cos(4t) +C_2) */
  if (!(r->c == '-' || r->c == 0x2212 || r->c == '+' || r->c == 0x00B1 || r->c == 0x2213) || ni < 0 ||
      !r->space_before || gap < 0.12 * em || ws <= 0 || gap < ws - 0.03 * em)
    return FALSE;
  /* after an operator, an opening bracket, punctuation or a big operator a
   * sign is unary inside the formula (= -x, (-x), a, -b, \sum -x) */
  if (is_operator (l->c) || is_prefix_operator (l->c) || is_open_bracket (l->c) || l->c == ',' ||
      l->c == ';' || l->c == '.' || l->ext)
    return FALSE;
  /* nor after an operator's scripts (\sum_k -a_k; newtx's text-style sum,
   * "Í" of txexs, ends 0.1 em before its subscript, past script_base's
   * reach) */
  b = ic->best_left[li];
  if (g_array_index (ic->math, MathGlyph, li).script && b >= 0)
    {
      const Glyph *base = &g[g_array_index (ic->math, MathGlyph, b).glyph];
      if ((base->ext || is_operator (base->c) || is_prefix_operator (base->c)) &&
          fm_rect_h_gap (&base->r, &l->r) < 0.3 * em)
        return FALSE;
    }
  b = script_base (ic, li);
  if (b >= 0 && (is_operator (g[g_array_index (ic->math, MathGlyph, b).glyph].c) ||
                 is_prefix_operator (g[g_array_index (ic->math, MathGlyph, b).glyph].c) || ext_operator (ic, b)))
    return FALSE;
  next = &g[g_array_index (ic->math, MathGlyph, ni).glyph];
  after = next->r.x0 - r->r.x1;
  return !next->space_before && after < 0.06 * em && after < 0.3 * gap && !is_operator (next->c) &&
         v_overlap_enough (&r->r, &next->r, 0.3);
}

/* Whether an opening bracket ri a word space after a lowercase math letter
 * li opens the next formula: inside a formula TeX puts only the letter's
 * italic correction before the bracket, under 0.1 em for every lowercase
 * math italic but f (a quarter em in some fonts, which the bracket rule of
 * inline_pair_join allows for). Where the math brackets come from a math
 * font (newtx, STIX Two, Libertine) "$n$ $(\bar\partial\Phi)$" had been
 * one formula. */
static gboolean
bracket_after_word_space (const InlineCtx *ic, int li, int ri, double gap, double em)
{
  const Glyph *g = ic->g;
  const MathGlyph *ml = &g_array_index (ic->math, MathGlyph, li);
  const Glyph *l = &g[ml->glyph];
  const Glyph *r = &g[g_array_index (ic->math, MathGlyph, ri).glyph];
  double ws = band_word_space (ic->bands, ml->band), glue;

  if (!(is_open_bracket (r->c) && r->space_before && !ml->script && g_unichar_islower (l->c) &&
        l->cls == CLS_STRONG && l->c != 'f' && l->c != 0x1D453 /* math italic f */ && gap >= 0.2 * em &&
        ws > 0 && gap >= ws - 0.02 * em))
    return FALSE;
  /* Measured from the letter's ink where it reaches past its box, the
   * glue still holds the italic correction: a thin space and Libertine's
   * x's make 0.26 em (0.1\,x\,(8-x)), so only a gap wider than any
   * lowercase letter's correction (0.1 em) and a thin space tells. */
  glue = r->r.x0 - MAX (l->r.x1, ink_right_edge (ic->pc->ink, &l->r, r->r.x0));
  return glue >= 0.28 * em && glue >= ws - 0.03 * em;
}

/* Whether an opening bracket ri a word space after a closing bar li
 * (closing_bar) opens the next formula: inside a formula TeX puts no glue
 * between a closing delimiter and an opening one, a thin space at most
 * (\right's inner atom); the bar's sidebearings (0.09 em in newtx) come on
 * top, so a gap as wide as the line's word space and over a quarter em is
 * one ("|A| < |B| (Y, d_Y)", "\|f\| \le \|g\| (X, d)"). */
static gboolean
bar_then_bracket_apart (const InlineCtx *ic, int li, int ri, double gap, double em)
{
  const MathGlyph *mr = &g_array_index (ic->math, MathGlyph, ri);
  const Glyph *r = &ic->g[mr->glyph];
  double ws = band_word_space (ic->bands, mr->band >= 0 ? mr->band : g_array_index (ic->math, MathGlyph, li).band);

  return is_open_bracket (r->c) && r->space_before && !mr->script && ws > 0 && gap >= ws - 0.03 * em &&
         gap >= 0.25 * em && closing_bar (ic, li);
}

/* Whether a radical ri a word space after a closing bar or bracket li
 * opens the next formula: a radical is an ordinary atom to TeX, and
 * between a closing delimiter (or a bar, an ordinary symbol) and an
 * ordinary atom TeX puts no glue, so "|a|\sqrt{b}" sets the sign 0.04 em
 * from the bar (newtx) and "$|a|$ $\sqrt{b}$" a word space plus that.
 * Only a gap as wide as the line's word space and over 0.22 em: a thin
 * space written in the formula (\,, 0.17 em and the sidebearing) stays
 * under both; a root's index comes after the sign (Poppler's box of the
 * sign in "$(a+b)$ $\sqrt[3]{c}$" starts 0.247 em on in Libertine). */
static gboolean
closing_then_radical_apart (const InlineCtx *ic, int li, int ri, double gap, double em)
{
  const MathGlyph *ml = &g_array_index (ic->math, MathGlyph, li);
  const MathGlyph *mr = &g_array_index (ic->math, MathGlyph, ri);
  const Glyph *l = &ic->g[ml->glyph];
  const Glyph *r = &ic->g[mr->glyph];
  double ws = band_word_space (ic->bands, mr->band >= 0 ? mr->band : ml->band);

  return r->c >= 0x221A && r->c <= 0x221C && !mr->script && !ml->script && ws > 0 &&
         gap >= ws - 0.03 * em && gap >= 0.22 * em &&
         ((is_close_bracket (l->c) && l->cls != CLS_TEXT) || closing_bar (ic, li));
}

/* Whether a relation or binary sign ri a word space after li opens the
 * next formula ("$g(x)$ $>f$"): inside one formula TeX spaces such a sign
 * alike on both sides (thick or medium space, stretched alike), so a gap
 * as wide as the line's word space before it and a different one after
 * it is the word space between two formulas and the sign's own space.
 * Only after a closing bracket, a digit or an upright symbol: a math
 * italic letter's italic correction widens the gap before the sign
 * inside one formula too (f > 0), and a script's \scriptspace. The sign
 * must take its space after it: before a closing bracket, punctuation or
 * another relation (:=) it has none. The gap must equal the word space
 * to 0.003 em, as exact boxes give it: a virtual font's glyph (newtx's
 * brackets) is narrower in the PDF than in TeX, and its gap wider than
 * the glue by 0.085 em, which can equal a word space to 0.006 em
 * ("U(\widetilde{P},f) \leq U(Q,f)" was cut before \leq). */
static gboolean
relation_after_word_space (const InlineCtx *ic, int li, int ri, double gap, double em)
{
  const Glyph *g = ic->g;
  const MathGlyph *ml = &g_array_index (ic->math, MathGlyph, li), *mr = &g_array_index (ic->math, MathGlyph, ri);
  const Glyph *l = &g[ml->glyph], *r = &g[mr->glyph], *next;
  int ni = ic->best_right[ri];
  double ws = band_word_space (ic->bands, mr->band >= 0 ? mr->band : ml->band), after;

  if (!(is_operator (r->c) && !is_ordinary_symbol (r->c) && !is_prefix_operator (r->c)) || ni < 0 ||
      ml->script || mr->script || !r->space_before || l->ext || l->ink || r->ext || r->ink || ws <= 0 ||
      gap < 0.15 * em || fabs (gap - ws) >= 0.003 * em)
    return FALSE;
  if (!(is_close_bracket (l->c) || g_unichar_isdigit (l->c) ||
        (g_unichar_isalpha (l->c) && (l->cls == CLS_NEUTRAL || l->cls == CLS_TEXT))))
    return FALSE;
  next = &g[g_array_index (ic->math, MathGlyph, ni).glyph];
  if (g_array_index (ic->math, MathGlyph, ni).script || next->ext || next->ink || is_operator (next->c) ||
      is_close_bracket (next->c) || is_sentence_punct (next->c) || next->c == ',' || next->c == ';' ||
      !v_overlap_enough (&r->r, &next->r, 0.3))
    return FALSE;
  after = next->r.x0 - r->r.x1;
  /* (different, not narrower: Times' word space, 0.25 em, is narrower
   * than the thick space, 5/18 em, and so is CM's on a line stretched
   * past half its stretch; cls-wordapart-times's "$g(x)$ $>f$" has the
   * wider gap after the sign) */
  return after >= 0.1 * em && fabs (after - gap) > 0.015 * em;
}

/* Whether math glyph k beside fraction bar fb (side 0: left of it, 1:
 * right) stands a word space from the fraction: the two are formulas apart
 * ("$\Delta_\rho(a)$ $\dfrac{\omega}{s^2-\omega^2}$", fresh seed 1046 on
 * every set-up). Inside one formula TeX puts a thin space between a
 * fraction and an ordinary symbol or a bracket (3 mu, which never
 * stretches) and \nulldelimiterspace (1.2 pt) between the bar and the
 * fraction's box; between two formulas the line's word space takes the
 * thin space's place. Only a closing (opening) bracket, a digit or an
 * upright letter (after the fraction any letter): a math italic letter's
 * italic correction widens the gap before a fraction inside a formula, and a relation's or binary sign's space stretches
 * (relation_after_word_space() tells those). The bar's ends come from the
 * ink, to a third of a point. */
static gboolean
fraction_word_space_apart (const InlineCtx *ic, const FracBar *fb, int k, int side, double gap, double em)
{
  const MathGlyph *mo = &g_array_index (ic->math, MathGlyph, k);
  const Glyph *o = &ic->g[mo->glyph];
  /* (the glyph's own line: the fraction's may be the rest of the line
   * after it, with no word space measured) */
  double ws = band_word_space (ic->bands, mo->band >= 0 ? mo->band : fb->band);
  /* (a math italic letter after the fraction too: its italic correction
   * follows it, \dfrac{e^{i\theta}-e^{-i\theta}}{2i}$ $f \colon ...) */
  gboolean ord = g_unichar_isdigit (o->c) ||
                 (g_unichar_isalpha (o->c) && (side == 1 || o->cls == CLS_NEUTRAL || o->cls == CLS_TEXT)) ||
                 (side == 0 ? is_close_bracket (o->c) : is_open_bracket (o->c));

  if (!ord || o->ext || o->ink || mo->script || ws <= 0)
    return FALSE;
  /* (a math italic letter's box comes from a virtual font in newtx and
   * Libertine, up to 0.1 em wider apart than TeX set it: after the
   * fraction, a gap up to 0.15 em over the word space; a \quad is 1 em) */
  if (side == 1 && g_unichar_isalpha (o->c) && o->cls != CLS_NEUTRAL && o->cls != CLS_TEXT)
    return gap - 1.2 >= ws - 0.04 * em && gap - 1.2 <= ws + 0.15 * em && gap - 1.2 >= (1.0 / 6 + 0.05) * em;
  return fabs (gap - 1.2 - ws) <= 0.04 * em && gap - 1.2 >= (1.0 / 6 + 0.05) * em;
}

/* Where a word space separates two formulas that the spacing rules
 * joined: a unary sign or an opening bracket that opens the second.
 * (boxes12: the font set-ups with narrow word spaces and math brackets,
 * newtx, STIX Two, Libertine, met these most.) */
static gboolean
word_space_starts_formula (const InlineCtx *ic, int li, int ri, double gap, double em)
{
  const Glyph *l = &ic->g[g_array_index (ic->math, MathGlyph, li).glyph];
  const Glyph *r = &ic->g[g_array_index (ic->math, MathGlyph, ri).glyph];

  /* a fraction's part level with the line (a denominator's s beside
   * "(a)") and a glyph of no fraction: measured from the bar */
  if (ic->bar != NULL && ic->bar[ri] >= 0 && ic->bar[li] < 0)
    {
      const FracBar *fb = &g_array_index (ic->bars, FracBar, ic->bar[ri]);
      if (l->r.x1 <= fb->x0 + 0.1 * em && fraction_word_space_apart (ic, fb, li, 0, fb->x0 - l->r.x1, em))
        return TRUE;
    }
  if (ic->bar != NULL && ic->bar[li] >= 0 && ic->bar[ri] < 0)
    {
      const FracBar *fb = &g_array_index (ic->bars, FracBar, ic->bar[li]);
      if (r->r.x0 >= fb->x1 - 0.1 * em && fraction_word_space_apart (ic, fb, ri, 1, r->r.x0 - fb->x1, em))
        return TRUE;
    }
  return unary_sign_after_word_space (ic, li, ri, gap, em) || bracket_after_word_space (ic, li, ri, gap, em) ||
         equations_apart (ic, li, ri, gap, em) || bar_then_bracket_apart (ic, li, ri, gap, em) ||
         closing_then_radical_apart (ic, li, ri, gap, em) || relation_after_word_space (ic, li, ri, gap, em);
}

/* Whether an unmatched bracket lies on the side step (-1 left, +1 right)
 * of math glyph c, walking the math glyphs level with c while each is less
 * than 0.7 em from those taken so far (running text is no math glyph: a
 * word makes a wider gap) and at most 24 of them. */
static gboolean
bracket_unmatched_beside (const InlineCtx *ic, int c, int step)
{
  const Glyph *g = ic->g;
  const MathGlyph *mc = &g_array_index (ic->math, MathGlyph, c);
  FmRect reach = g[mc->glyph].r;
  int depth = 0, taken = 0;

  for (int k = c + step; k >= 0 && k < ic->m && taken < 24; k += step)
    {
      const MathGlyph *mk = &g_array_index (ic->math, MathGlyph, k);
      const Glyph *gk = &g[mk->glyph];
      gboolean open = is_open_bracket (gk->c), close = is_close_bracket (gk->c);

      /* (math is sorted by x0: to the left a glyph may still end
       * inside the reach, to the right none starts before it) */
      if (step > 0 ? gk->r.x0 > reach.x1 + 0.7 * mc->em : gk->r.x0 < reach.x0 - 4.0 * mc->em)
        return FALSE;
      /* (level with the line, not its band: a line's bands can part
       * at a gap, as they did right after the comma) */
      if (mk->script || !v_overlap_enough (&reach, &gk->r, 0.5) || fm_rect_h_gap (&reach, &gk->r) >= 0.7 * mc->em)
        continue;
      fm_rect_union (&reach, &gk->r);
      taken++;
      depth += step > 0 ? open - close : close - open;
      if (depth < 0)
        return TRUE;
    }
  return FALSE;
}

/* Whether the comma between line neighbours li and ri separates the
 * arguments inside one pair of brackets (U(\widetilde{P},f),
 * H_i(f_1, \ldots, f_r)): TeX puts a thin space after math's comma, but
 * a math italic's sidebearings (Palatino, 0.31 em) or the dots after it
 * make the gap as wide as a word space. A sentence's comma between two
 * formulas has no bracket around it that opens before and closes after
 * with only math in between. */
static gboolean
comma_in_brackets (const InlineCtx *ic, int li, int ri, double gap, double em)
{
  const Glyph *g = ic->g;
  int c = g[g_array_index (ic->math, MathGlyph, li).glyph].c == ',' ? li :
          g[g_array_index (ic->math, MathGlyph, ri).glyph].c == ',' ? ri : -1;

  if (c < 0 || gap >= 0.45 * em || g_array_index (ic->math, MathGlyph, c).script)
    return FALSE;
  return bracket_unmatched_beside (ic, c, -1) && bracket_unmatched_beside (ic, c, +1);
}

/* Whether the gap after math's comma l is the comma's thin space plus a
 * control space, a list inside one formula (f_\textup{o},\ 3f_\textup{o},\
 * \ldots): the thin space after a punctuation atom (1/6 em of the math
 * font's quad, 0.11-0.17 em of the glyphs' size) neither stretches nor
 * shrinks, so the gap is the line's word space and more, or - in a formula
 * set at its natural width, a box, as the truth files' are - the font's
 * natural word space and the thin space, which a stretched line's word
 * space can pass. Two formulas a word space apart after math's comma have
 * that space to 0.015 em: the formula before ends at its comma ("$a,$
 * $b$"); a sentence's comma is the text font's. (The glyph after may be
 * the text font's: pdfLaTeX takes math's digits from it.) */
static gboolean
comma_control_space (const InlineCtx *ic, const MathGlyph *ml, const MathGlyph *mr, const Glyph *l,
                     const Glyph *r, double gap, double em)
{
  double ws = band_word_space (ic->bands, ml->band >= 0 ? ml->band : mr->band);

  return l->c == ',' && l->font == FM_FONT_MATH && !ml->script && !mr->script && !l->ink && !r->ink && ws > 0 &&
         gap > 0.2 * em && gap < ws + 0.2 * em && fabs (gap - ws) > 0.015 * em &&
         v_overlap_enough (&l->r, &r->r, 0.3) && ink_gap_empty (ic->pc->ink, &l->r, &r->r);
}

/* Whether a symbol the text layer lost stands between subscript l and the
 * letter r after it (J_{a,1} \amalg J_{a,2}: Fira Math's \amalg has no
 * text). The symbol stands on the line of the letter, so the ink is looked
 * for over that letter's rows, from the script's end, up to 1.3 em. */
static gboolean
lost_symbol_after_script (const InlineCtx *ic, const MathGlyph *ml, const MathGlyph *mr, const Glyph *l,
                          const Glyph *r, double gap, double em)
{
  FmRect from_script = r->r;

  if (gap >= 1.3 * em || !ml->script || mr->script || r->cls != CLS_STRONG || l->ink || r->ink || r->r.y0 >= l->r.y0)
    return FALSE;
  from_script.x0 = l->r.x0;
  from_script.x1 = l->r.x1;
  return ink_lost_symbol_between (ic->pc->ink, &from_script, &r->r, em);
}

/* Whether the glue between line neighbours ml and mr (glyphs l and r) is
 * the line's word space, to 0.008 em (TeX sets one line's word spaces
 * alike). The glue counts from l's ink where it reaches past its box: an
 * italic letter's correction is no glue, and on a line squeezed to TeX's
 * limit it equals the word space - CM's V and Y have 0.222 em, the word
 * space shrinks to 0.222 em, and V(x), Y(t) were cut at the bracket (the
 * ink of V reaches 0.19 em past its box; LuaTeX LM Math: 0.214 against
 * 0.222 em). */
static gboolean
word_space_gap (const InlineCtx *ic, const MathGlyph *ml, const MathGlyph *mr, const Glyph *l, const Glyph *r,
                double em)
{
  double ws = band_word_space (ic->bands, ml->band >= 0 ? ml->band : mr->band);
  double glue = r->r.x0 - MAX (l->r.x1, ink_right_edge (ic->pc->ink, &l->r, r->r.x0));

  return ws > 0 && fabs (glue - ws) < 0.008 * em;
}

/* Whether the line neighbours li (left) and ri of math join. */
/* Whether the gap between line neighbours l and r is a \quad or \qquad inside one
 * formula (u(t-a) \quad (a \geq 0), \frac{dA}{dt} = -10A, \quad A(0)=5):
 * 1 em between the glyphs' advance boxes (Poppler's boxes: 0.999-1.000
 * em in Charter, Fira, Bonum, Euler; after a script \scriptspace on top,
 * 1.07 em in Charter),
 * where the line's word spaces are far narrower - a
 * line stretched until its word space is an em could put one between two
 * formulas. A sentence's full stop ends the formula before it. */
static gboolean
quad_in_formula (const InlineCtx *ic, const MathGlyph *ml, const MathGlyph *mr, const Glyph *l, const Glyph *r,
                 double gap, double em)
{
  double ws = band_word_space (ic->bands, ml->band >= 0 ? ml->band : mr->band);

  /* (boxes fitted to ink have no advance: their gaps are no glue) */
  if (mr->script || l->ink || r->ink || l->ext || r->ext || !(ws > 0 && ws < 0.6 * em) || l->c == '.' ||
      l->c == ':' || !v_overlap_enough (&l->r, &r->r, 0.3))
    return FALSE;
  /* nothing in the gap: a subscript's neighbour is measured from the
   * subscript, and a wider superscript above it can fill an em before a
   * word space and the next formula (z_1^{3/2} $R^{n_e}$, fresh seed 1061) */
  if (!ink_gap_empty (ic->pc->ink, &l->r, &r->r))
    return FALSE;
  /* (math's comma puts a thin space before the quad: 1.14-1.17 em; a
   * \qquad is two ems, a = b \qquad c = d) */
  for (int q = 1; q <= 2; q++)
    if (l->c == ',' || l->c == ';' ? gap > (q + 0.1) * em && gap < (q + 0.2) * em
                                   : gap > (q - 0.03) * em && gap < (q + (ml->script ? 0.1 : 0.03)) * em)
      return TRUE;
  return FALSE;
}

/* Whether comma l is the sentence's between two formulas ("$x=1$, $y$",
 * "$q_1$, $q_2$"): a text face's comma followed by a word space, on a page
 * whose math sets its commas in a math face (CMMI, LM Math Italic, NewTXMI,
 * LibertineMathMI, STIX Two Math; mathptmx takes CMMI's) - math's own comma
 * comes from there, so a text face's is prose. Its thin space and a
 * squeezed word space are both about 0.2 em, and Libertine's and newtx's
 * comma boxes reach into the space: the gap alone joined them (probes 3934,
 * seven pdfLaTeX set-ups and XeLaTeX/LuaLaTeX STIX Two Math: 23 of 108
 * formulas joined to the next). mathpazo sets math's comma in the text face
 * too: there no page has a math face's comma and nothing changes. */
static gboolean
sentence_comma_between (const InlineCtx *ic, const MathGlyph *mr, const Glyph *l, const Glyph *r, double gap,
                        double em)
{
  return ic->math_face_commas && l->c == ',' && l->font == FM_FONT_TEXT && !mr->script && r->space_before &&
         gap >= 0.15 * em && r->cls != CLS_TEXT;
}

/* TeX makes a binary sign with no operand after it an ordinary symbol,
 * with no medium space before it: a \bullet, \circ, \star or \dagger a
 * word space after a number or letter and followed by a word of text is
 * a formula of its own ("lemma 42 $\bullet$ that": the region "42 \bullet"
 * missed it in all 11 set-ups of pdf-e2e 1074) */
static gboolean
lone_binary_sign (const Glyph *g, int n, const Glyph *l, const Glyph *r, double gap, double em)
{
  return gap >= 0.15 * em && r->space_before &&
         (r->c == 0x2022 || r->c == 0x2219 || r->c == 0x25E6 || r->c == 0x2218 || r->c == 0x22C6 || r->c == 0x2020 || r->c == 0x2021) &&
         r - g + 1 < n && r[1].space_before && r[1].cls == CLS_TEXT && g_unichar_isalpha (r[1].c) &&
         g_unichar_isalnum (l->c);
}

static gboolean
inline_pair_join (const InlineCtx *ic, int li, int ri)
{
  const Glyph *g = ic->g;
  int n = ic->n;
  FmDetectRule rule = ic->rule;
  const MathGlyph *ml = &g_array_index (ic->math, MathGlyph, li);
  const MathGlyph *mr = &g_array_index (ic->math, MathGlyph, ri);
  const Glyph *l = &g[ml->glyph], *r = &g[mr->glyph];
  double em = MAX (ml->em, mr->em);
  double gap = MAX (0.0, r->r.x0 - l->r.x1);
  gboolean join = pair_join_spacing (ic, ml, mr, l, r, gap, em);

  if (rule == FM_DETECT_RULE_FULL)
    join = pair_join_word_space (ic, li, ml, mr, l, r, atom_gap (g, n, l, r), em, join);
  /* digit groups of one number stay one whatever the line's word space:
   * \: (2/9 em) can equal it, a control space (8.45747\ 37604, 1/3 em
   * in CM) exceeds it; digit_groups() wants a decimal point and groups
   * of equal length, which prose's numbers do not have */
  if (!join && rule == FM_DETECT_RULE_FULL && gap < 0.4 * em && v_overlap_enough (&l->r, &r->r, 0.7) &&
      digit_groups (g, n, (int) (l - g), (int) (r - g)))
    join = TRUE;
  /* TeX puts no glue between a letter and an opening bracket in
   * math, only the letter's italic correction (a quarter em
   * after a math italic f in some fonts, as wide as a word
   * space): a math font's bracket that close continues the
   * formula ("$f$ (see ..." has a text font's bracket). */
  if (!join && rule == FM_DETECT_RULE_FULL && is_open_bracket (r->c) && g_unichar_isalpha (l->c) &&
      l->cls != CLS_TEXT && l->cls != CLS_NEUTRAL && !ml->script && !mr->script &&
      gap < 0.45 * em && v_overlap_enough (&l->r, &r->r, 0.5) &&
      /* (a gap that is the line's word space to 0.008 em is one, after
       * any letter but f - "$\operatorname{Im} A$ $(0,0,0)$" in Pagella
       * had been one formula; f's italic correction is itself about a word
       * space, 0.244 em in Bonum, and can equal the line's: f(x) was cut
       * on fresh 1081) */
      (l->c == 'f' || l->c == 0x1D453 || !word_space_gap (ic, ml, mr, l, r, em)) &&
      (r->font == FM_FONT_MATH ||
       /* (where math takes its brackets from the text font, as
        * Fourier does: math inside them, "f (t)" and not "f (see") */
       (r - g + 1 < n && !r[1].space_before && r[1].cls != CLS_TEXT && r[1].cls != CLS_NEUTRAL &&
        g_unichar_isalpha (r[1].c))))
    join = TRUE;
  /* ... and between a math letter and a closing delimiter that closes
   * a bracket or a bar opened on its left (\|f\| in TeX Gyre Bonum
   * Math: f's italic correction, 0.25 em; a bracket from the text font
   * too, as CM's are: \mathcal{A}(V)_{+}, V's is 0.22 em) */
  if (!join && rule == FM_DETECT_RULE_FULL && g_unichar_isalpha (l->c) && l->cls != CLS_TEXT &&
      l->cls != CLS_NEUTRAL && !ml->script && !mr->script &&
      (r->font == FM_FONT_MATH || (is_close_bracket (r->c) && r->cls != CLS_TEXT)) && gap < 0.45 * em &&
      v_overlap_enough (&l->r, &r->r, 0.5) &&
      (is_close_bracket (r->c) ? bracket_unmatched_beside (ic, li, -1) : closing_bar (ic, ri)))
    join = TRUE;
  /* (a fraction is an operator's operand too: \sum_{n=1}^\infty \frac{1}{n^2};
   * its gap counts from its bar, \oint_\gamma \frac{h(z)}{z}: the lone
   * subscript's neighbour is the centred z under the bar. So two formulas
   * a word space apart, $\int_0^1$ $\frac{f(x)}{x}$, are one region, as
   * $\int_0^1$ $x$ are: deliberate - no formula ends in an operator with
   * scripts, and its operand's glue is as wide as a word space) */
  if (!join && rule == FM_DETECT_RULE_FULL && !mr->script && operator_script_end (ic, li, r, gap))
    join = TRUE;
  if (!join && rule == FM_DETECT_RULE_FULL && mr->script && fraction_part (ic, ri, em))
    {
      Glyph from_bar = *r;
      double bar_x1;
      fraction_bar_ends (ic, ri, em, &from_bar.r.x0, &bar_x1);
      join = operator_script_end (ic, li, &from_bar, MAX (0.0, from_bar.r.x0 - l->r.x1));
    }
  /* After a text-style fraction TeX puts a thin space before an opening
   * bracket or an ordinary symbol (the fraction is an inner atom) and the
   * null delimiter (1.2 pt) between the bar and the fraction's box: the gap
   * counts from the bar's end, a narrower numerator's end lies farther
   * (\frac{\partial r}{\partial x_k}(0,0) = 0 lost its fraction). A word
   * space there is wider than the thin space by 0.05 em at least. */
  if (!join && rule == FM_DETECT_RULE_FULL && ml->script && !mr->script && ic->pc->ink != NULL &&
      (is_open_bracket (r->c) || g_unichar_isalnum (r->c)) && fraction_part (ic, li, em))
    {
      double bar_x0, bar_x1;
      fraction_bar_ends (ic, li, em, &bar_x0, &bar_x1);
      double from_bar = r->r.x0 - bar_x1 - 1.2;
      double ws = band_word_space (ic->bands, mr->band >= 0 ? mr->band : ml->band);
      join = from_bar < (1.0 / 6 + 0.03) * em && (ws <= 0 || from_bar < ws - 0.03 * em) &&
             v_overlap_enough (&l->r, &r->r, 0.1);
    }
  if (!join && rule == FM_DETECT_RULE_FULL && !mr->script && limits_stack_end (ic, li, r, em))
    join = TRUE;
  /* a big operator, its side scripts, its operand: the gap counts from the
   * scripts' end, as from its last script's */
  if (!join && rule == FM_DETECT_RULE_FULL && !ml->script && !mr->script &&
      (is_prefix_operator (l->c) || ext_operator (ic, li)))
    {
      int last = operator_stack_last (ic, li, r);
      join = last >= 0 && script_base (ic, last) == li && operator_script_end (ic, last, r, gap);
    }
  if (!join && rule == FM_DETECT_RULE_FULL && comma_in_brackets (ic, li, ri, gap, em))
    join = TRUE;
  if (!join && rule == FM_DETECT_RULE_FULL && comma_control_space (ic, ml, mr, l, r, gap, em))
    join = TRUE;
  if (!join && rule == FM_DETECT_RULE_FULL && quad_in_formula (ic, ml, mr, l, r, gap, em))
    join = TRUE;
  if (!join && rule == FM_DETECT_RULE_FULL &&
      (differential_after_letter (ic, li, ri, gap, em) || differential_after_delimiter (ic, li, ri, gap, em)))
    join = TRUE;
  /* the words of a script of text (F_{\text{A on B}}, made neutral by
   * script_text_continues()): a script-size word space apart */
  if (!join && rule == FM_DETECT_RULE_FULL && ml->script && mr->script && l->cls != CLS_STRONG &&
      r->cls == CLS_NEUTRAL && g_unichar_isalpha (l->c) && g_unichar_isalpha (r->c) && l->font != FM_FONT_MATH &&
      r->font != FM_FONT_MATH && fabs (l->size - r->size) < 0.1 * l->size && v_overlap_enough (&l->r, &r->r, 0.7) &&
      gap < 0.6 * l->size)
    join = TRUE;
  /* a binary operator the font lacks: its spaces without it */
  if (!join && rule == FM_DETECT_RULE_FULL && lost_operator_gap (ic, li, ri, gap, em))
    join = TRUE;
  /* a math symbol the text layer lost between two math glyphs */
  if (!join && rule == FM_DETECT_RULE_FULL && gap < 1.2 * em && (l->cls == CLS_STRONG || r->cls == CLS_STRONG) &&
      !ml->script && !mr->script && ink_lost_symbol_between (ic->pc->ink, &l->r, &r->r, em))
    join = TRUE;
  if (!join && rule == FM_DETECT_RULE_FULL && lost_symbol_after_script (ic, ml, mr, l, r, gap, em))
    join = TRUE;
  /* a number and its unit, a control space apart (classify_units); or
   * the number's exponent listed apart from it (exponent_end()) */
  if (rule == FM_DETECT_RULE_FULL && r->unit &&
      (g_unichar_isdigit (l->c) || degree_after_number (g, (int) (r - g))) && gap < 0.5 * em &&
      (r - g == l - g + 1 || (ml->script && r - g > 0 && exponent_end (g, (int) (r - g) - 1) == (int) (l - g))))
    join = TRUE;
  if (join && rule == FM_DETECT_RULE_FULL && word_space_starts_formula (ic, li, ri, gap, em))
    join = FALSE;
  if (join && rule == FM_DETECT_RULE_FULL && sentence_comma_between (ic, mr, l, r, gap, em))
    join = FALSE;
  /* (a lone binary sign is a formula of its own) */
  if (join && rule == FM_DETECT_RULE_FULL && lone_binary_sign (g, n, l, r, gap, em))
    join = FALSE;
  if (g_strcmp0 (g_getenv ("FM_DETECT_DEBUG"), "joins") == 0)
    {
      char u1[8] = { 0 }, u2[8] = { 0 };
      g_unichar_to_utf8 (l->c, u1);
      g_unichar_to_utf8 (r->c, u2);
      g_printerr ("pair %s [%.1f %.1f] %s [%.1f %.1f] gap %.3f em ws %.3f em join %d\n", u1, l->r.x0, l->r.y0, u2,
                  r->r.x0, r->r.y0, gap / em, band_word_space (ic->bands, ml->band >= 0 ? ml->band : mr->band) / em, join);
    }
  if (rule == FM_DETECT_RULE_PDFMATHTRANSLATE)
    join = gap < 0.6 * em;
  /* never into a citation, nor out of one into the formula after it
   * ("[15] $\pm 0.5$") */
  if (join && (is_citation (g, (int) (r - g), n) || (r->space_before && citation_end (g, n, (int) (l - g)))))
    join = FALSE;
  if (join && text_between (g, ic->excluded, ic->text_idx, ic->text_cx, ic->n_text, &l->r, &r->r))
    join = FALSE;
  if (join && across_gutter (ic->pc, fm_rect_cx (&l->r), fm_rect_cx (&r->r)))
    join = FALSE;
  return join;
}

static void
inline_line_neighbours (InlineCtx *ic)
{
  inline_nearest_neighbours (ic);
  for (int a = 0; a < ic->m; a++)
    for (int side = 0; side < 2; side++)
      {
        int li = side == 0 ? a : ic->best_left[a], ri = side == 0 ? ic->best_right[a] : a;

        if (li < 0 || ri < 0)
          continue;
        if (inline_pair_join (ic, li, ri))
          uf_join (ic->parent, ic->line_cy, ic->line_em, li, ri);
      }
}

/* Stacked parts: fraction numerators and denominators, limits. */
static void
inline_stacked_parts (InlineCtx *ic)
{
  const Glyph *g = ic->g;
  int m = ic->m;

  for (int a = 0; a < m; a++)
    {
      const MathGlyph *ma = &g_array_index (ic->math, MathGlyph, a);
      const Glyph *ga = &g[ma->glyph];
      for (int b = a + 1; b < m; b++)
        {
          const MathGlyph *mb = &g_array_index (ic->math, MathGlyph, b);
          const Glyph *gb = &g[mb->glyph];
          double em = MAX (ma->em, mb->em);
          double ix = MIN (ga->r.x1, gb->r.x1) - MAX (ga->r.x0, gb->r.x0);
          double wmin = MIN (ga->r.x1 - ga->r.x0, gb->r.x1 - gb->r.x0);

          if (gb->r.x0 > ga->r.x1 + 0.15 * em)
            break;
          if (different_lines (ic->bands, ma, mb, em))
            continue;
          /* A script diagonally against its base: Type 1 fonts with small
           * boxes (txfonts, newtx) leave a text-style sum's subscript below
           * the sum's box and beside it. */
          /* The same for a script raised over a closing delimiter, that
           * overlaps its box by less than the 30 % the line rule needs
           * (\right)^{2}: the delimiter's variant in an OpenType math font
           * is taller than the box the text layer gives it). */
          if ((ma->script != mb->script) && fm_rect_h_gap (&ga->r, &gb->r) < 0.15 * em && ix <= 0.2 * wmin &&
              fm_rect_v_gap (&ga->r, &gb->r) < 0.25 * em &&
              (fm_rect_v_gap (&ga->r, &gb->r) > 0 ||
               MIN (ga->r.y1, gb->r.y1) - MAX (ga->r.y0, gb->r.y0) <
                 0.35 * (ma->script ? ga->r.y1 - ga->r.y0 : gb->r.y1 - gb->r.y0)))
            {
              uf_join (ic->parent, ic->line_cy, ic->line_em, a, b);
              continue;
            }
          /* OpenType math fonts' boxes are tighter than Type 1 ones: the
           * parts of an inline fraction can lie 0.5 em apart around the bar. */
          if (ix > 0.2 * wmin && (ma->script || mb->script || ma->band < 0 || mb->band < 0) &&
              (fm_rect_v_gap (&ga->r, &gb->r) < 0.35 * em ||
               (fm_rect_v_gap (&ga->r, &gb->r) < 1.0 * em &&
                ink_rule_between (ic->pc->ink, ga->r.y1 <= gb->r.y0 ? &ga->r : &gb->r,
                                  ga->r.y1 <= gb->r.y0 ? &gb->r : &ga->r))))
            uf_join (ic->parent, ic->line_cy, ic->line_em, a, b);
        }
    }
}

/* A display-style fraction's parts are one formula, and it joins the math
 * glyphs level with its bar on either side when the gap is a math space
 * (less than 0.45 em: the relation's or operator's thick space, the thin
 * space around a fraction) with no running text between and no word space
 * (fraction_word_space_apart()): its parts stand too far above and below
 * the line for the line-neighbour rules. */
static void
inline_fraction_joins (InlineCtx *ic)
{
  const Glyph *g = ic->g;

  for (int k = 0; k < ic->m; k++)
    if (ic->bar[k] >= 0)
      uf_join (ic->parent, ic->line_cy, ic->line_em, g_array_index (ic->bars, FracBar, ic->bar[k]).first, k);
  for (guint f = 0; f < ic->bars->len; f++)
    {
      const FracBar *fb = &g_array_index (ic->bars, FracBar, f);
      double em = g_array_index (ic->bands, Band, fb->band).em;
      FmRect bar = { fb->x0, fb->y - 0.05 * em, fb->x1, fb->y + 0.05 * em };
      int side[2] = { -1, -1 };
      double gap[2] = { 0.45 * em, 0.45 * em };

      for (int k = 0; k < ic->m; k++)
        {
          const MathGlyph *mk = &g_array_index (ic->math, MathGlyph, k);
          const Glyph *gk = &g[mk->glyph];
          if (ic->bar[k] == (int) f || mk->band < 0 || gk->r.y0 > fb->y || gk->r.y1 < fb->y ||
              fabs (g_array_index (ic->bands, Band, mk->band).cy - g_array_index (ic->bands, Band, fb->band).cy) >
                0.4 * em)
            continue;
          if (gk->r.x1 <= fb->x0 + 0.1 * em && fb->x0 - gk->r.x1 < gap[0])
            {
              gap[0] = fb->x0 - gk->r.x1;
              side[0] = k;
            }
          else if (gk->r.x0 >= fb->x1 - 0.1 * em && gk->r.x0 - fb->x1 < gap[1])
            {
              gap[1] = gk->r.x0 - fb->x1;
              side[1] = k;
            }
        }
      for (int s = 0; s < 2; s++)
        {
          const Glyph *o;
          if (side[s] < 0)
            continue;
          o = &g[g_array_index (ic->math, MathGlyph, side[s]).glyph];
          if (!text_between (g, ic->excluded, ic->text_idx, ic->text_cx, ic->n_text, s == 0 ? &o->r : &bar, s == 0 ? &bar : &o->r) &&
              !fraction_word_space_apart (ic, fb, side[s], s, gap[s], em))
            uf_join (ic->parent, ic->line_cy, ic->line_em, fb->first, side[s]);
        }
    }
}

/* Sentence punctuation and unbalanced brackets at the ends of a cluster's
 * glyphs idx[*s..*e) (sorted by x) are text: moves *s and *e past them. */
static void
inline_trim_ends (const Glyph *g, int n, const int *idx, int *s_io, int *e_io)
{
  int s = *s_io, e = *e_io;

  for (gboolean trimmed = TRUE; trimmed && e > s;)
    {
      gunichar last = g[idx[e - 1]].c, firstc = g[idx[s]].c;
      int open = 0, close = 0;
      trimmed = FALSE;
      for (int k = s; k < e; k++)
        {
          open += is_open_bracket (g[idx[k]].c);
          close += is_close_bracket (g[idx[k]].c);
        }
      /* also a period or comma typed inside the math ("$x,$") */
      if ((g[idx[e - 1]].cls == CLS_NEUTRAL || g[idx[e - 1]].font == FM_FONT_MATH) &&
          is_sentence_punct (last) && !ellipsis_dot (g, n, idx[e - 1]))
        { e--; trimmed = TRUE; }
      else if (is_close_bracket (last) && close > open)
        { e--; trimmed = TRUE; }
      else if (is_open_bracket (firstc) && open > close)
        { s++; trimmed = TRUE; }
      else if (g[idx[s]].cls == CLS_NEUTRAL && is_sentence_punct (firstc))
        { s++; trimmed = TRUE; }
    }
  *s_io = s;
  *e_io = e;
}

/* Whether the bar of fraction seed a (under or over it) is a fraction's
 * and not a table's rule (fraction_bar_hugs_parts()): a bar of the
 * fraction finder's, or the one fraction_part() found under or over a. */
static gboolean
fraction_seed_tight (const InlineCtx *ic, int a, double em)
{
  const Glyph *g = ic->g;
  double p0 = G_MAXDOUBLE, p1 = -G_MAXDOUBLE;

  if (ic->bar[a] < 0)
    return fraction_part (ic, a, em) && ic->frac[a] == FRAC_TIGHT;
  for (int k = 0; k < ic->m; k++)
    if (ic->bar[k] == ic->bar[a])
      {
        const FmRect *rk = &g[g_array_index (ic->math, MathGlyph, k).glyph].r;
        p0 = MIN (p0, rk->x0);
        p1 = MAX (p1, rk->x1);
      }
  return fraction_bar_hugs_parts (g_array_index (ic->bars, FracBar, ic->bar[a]).x0,
                                  g_array_index (ic->bars, FracBar, ic->bar[a]).x1, p0, p1, em);
}

/* Clusters with a seed (a math-font glyph, a math symbol, a weak letter, or
 * a text-style fraction's part) become protos in protos.
 * pdfLaTeX sets \frac{1}{2} in a text line from its text font's digits
 * (CMR7, LMRoman7, Times, Palatino, Libertine, newtx) and draws the bar as
 * a rule: no glyph was a seed, and 11 of the 13 inline fractions of a probe
 * page were missed in each of those six set-ups (XeLaTeX and LuaLaTeX take
 * the digits from the math font); \dfrac{1}{2} the same, full size. Two
 * glyphs stacked over a bar on their line's middle (fraction_part(),
 * inline_fraction_stacks()) are math; prose stacks nothing. */
static void
inline_seeded_protos (const InlineCtx *ic, GPtrArray *protos)
{
  const Glyph *g = ic->g;
  GHashTable *by_root = g_hash_table_new (NULL, NULL);
  GPtrArray *lists = g_ptr_array_new ();
  GArray *fractions = g_array_new (FALSE, TRUE, sizeof (gboolean));

  for (int a = 0; a < ic->m; a++)
    {
      const MathGlyph *ma = &g_array_index (ic->math, MathGlyph, a);
      int root = fm_uf_find (ic->parent, a);
      int l = GPOINTER_TO_INT (g_hash_table_lookup (by_root, GINT_TO_POINTER (root + 1))) - 1;
      if (l < 0)
        {
          l = (int) lists->len;
          g_hash_table_insert (by_root, GINT_TO_POINTER (root + 1), GINT_TO_POINTER (l + 1));
          g_ptr_array_add (lists, g_array_new (FALSE, FALSE, sizeof (int)));
          g_array_set_size (fractions, lists->len);
        }
      g_array_append_val ((GArray *) lists->pdata[l], ma->glyph);
      if (ic->rule == FM_DETECT_RULE_FULL && !g_array_index (fractions, gboolean, l) &&
          (ic->bar[a] >= 0 || (ma->script && fraction_part (ic, a, ma->em))) && fraction_seed_tight (ic, a, ma->em))
        g_array_index (fractions, gboolean, l) = TRUE;
    }
  for (guint l = 0; l < lists->len; l++)
    {
      GArray *list = lists->pdata[l];
      int *idx = (int *) (void *) list->data;
      int s = 0, e = (int) list->len;
      gboolean seeded = g_array_index (fractions, gboolean, l), ink = FALSE, delimiters_only = TRUE;

      g_qsort_with_data (idx, e, sizeof (int), compare_glyph_x, (gpointer) g);
      inline_trim_ends (g, ic->n, idx, &s, &e);
      for (int k = s; k < e; k++)
        {
          const Glyph *gk = &g[idx[k]];
          if (gk->cls == CLS_STRONG || gk->cls == CLS_WEAK)
            seeded = TRUE;
          ink |= gk->ink;
          delimiters_only &= gk->ink || (gk->ext && !is_prefix_operator (gk->c)) || is_open_bracket (gk->c) ||
                             is_close_bracket (gk->c) || gk->c == '|' || gk->c == 0x2016;
        }
      /* Delimiters alone - an extension font's pieces (Fourier's, read as
       * Latin-1 signs), a bracket of a math font - are no formula: the
       * pieces of a big delimiter whose formula lies on the next line; kept
       * only to join a display they lie in. */
      if (ic->rule == FM_DETECT_RULE_FULL && delimiters_only && e > s)
        {
          ink = ink || seeded;
          seeded = FALSE;
        }
      /* (a cluster seeded by a fraction part can be trimmed to nothing:
       * a lone script-size period with a rule under it, a fraction part
       * for fraction_part(), read an empty proto's first glyph - a crash
       * on detect dev j1148l-1148-08, LuaLaTeX, main d42a378 too) */
      if ((seeded || ink) && e > s)
        {
          Proto *pr = g_new0 (Proto, 1);
          /* a delimiter the text layer lost, with no seed: kept only to
           * join a display it lies in */
          pr->absorb_only = !seeded;
          pr->kind = FM_REGION_INLINE;
          pr->n = e - s;
          pr->idx = g_new (int, pr->n);
          memcpy (pr->idx, idx + s, sizeof (int) * pr->n);
          qsort (pr->idx, pr->n, sizeof (int), compare_int);
          pr->chunk_first = ic->chunk_of[pr->idx[0]];
          pr->label_block = -1;
          g_ptr_array_add (protos, pr);
        }
      g_array_free (list, TRUE);
    }
  g_ptr_array_free (lists, TRUE);
  g_array_free (fractions, TRUE);
  g_hash_table_destroy (by_root);
}

/* Inline formulas among the glyphs not excluded (display blocks, numbers):
 * a GPtrArray of Proto. */
static GPtrArray *
inline_clusters (const Glyph *g, int n, const gboolean *excluded, const int *chunk_of,
                 double body_em, FmDetectRule rule, const PageCtx *pc)
{
  GPtrArray *protos = g_ptr_array_new ();
  InlineCtx ic = { 0 };

  ic.g = g;
  ic.n = n;
  ic.excluded = excluded;
  ic.chunk_of = chunk_of;
  ic.body_em = body_em;
  ic.rule = rule;
  ic.pc = pc;
  ic.bands = text_bands (g, n, excluded, pc);
  ic.math = g_array_new (FALSE, FALSE, sizeof (MathGlyph));
  ic.text_idx = g_new (int, n + 1);
  inline_home_lines (&ic);
  g_qsort_with_data (ic.text_idx, ic.n_text, sizeof (int), compare_glyph_cx, (gpointer) g);
  ic.text_cx = g_new (double, ic.n_text + 1);
  for (int k = 0; k < ic.n_text; k++)
    ic.text_cx[k] = 0.5 * (g[ic.text_idx[k]].r.x0 + g[ic.text_idx[k]].r.x1);
  ic.frac = g_new (signed char, ic.m + 1);
  memset (ic.frac, -1, ic.m + 1);
  ic.frac_em = g_new0 (double, ic.m + 1);
  for (int k = 0; k < n && !ic.math_face_commas; k++)
    ic.math_face_commas = g[k].c == ',' && g[k].font == FM_FONT_MATH;
  inline_scripts_to_base (&ic);
  inline_fraction_part_lines (&ic);
  ic.n_text_bands = (int) ic.bands->len;
  if (rule == FM_DETECT_RULE_FULL)
    inline_math_only_lines (&ic);
  {
    int *old_band = g_new (int, ic.m + 1);
    for (int a = 0; a < ic.m; a++)
      old_band[a] = g_array_index (ic.math, MathGlyph, a).band;
    inline_fraction_stacks (&ic);
    if (rule == FM_DETECT_RULE_FULL)
      inline_orphan_scripts (&ic, old_band);
    g_free (old_band);
  }
  if (g_getenv ("FM_DETECT_DEBUG"))
    inline_debug_lines (&ic);
  ic.parent = g_new (int, ic.m + 1);
  ic.line_cy = g_new (double, ic.m + 1);
  ic.line_em = g_new (double, ic.m + 1);
  ic.best_right = g_new (int, ic.m + 1);
  ic.best_left = g_new (int, ic.m + 1);
  for (int a = 0; a < ic.m; a++)
    {
      const MathGlyph *ma = &g_array_index (ic.math, MathGlyph, a);
      ic.parent[a] = a;
      ic.line_cy[a] = ma->band >= 0 ? g_array_index (ic.bands, Band, ma->band).cy : NAN;
      ic.line_em[a] = ma->em;
    }
  inline_line_neighbours (&ic);
  inline_stacked_parts (&ic);
  inline_fraction_joins (&ic);
  inline_seeded_protos (&ic, protos);
  g_free (ic.bar);
  g_free (ic.frac);
  g_free (ic.frac_em);
  g_array_free (ic.bars, TRUE);
  g_free (ic.parent);
  g_free (ic.line_cy);
  g_free (ic.line_em);
  g_free (ic.best_right);
  g_free (ic.best_left);
  g_free (ic.text_idx);
  g_free (ic.text_cx);
  g_array_free (ic.math, TRUE);
  g_array_free (ic.bands, TRUE);
  return protos;
}

/* ------------------------------------------------------------------------ */
/* Display lines: a display's line may hold text (\text{for all }, \quad
 * \text{and}, upright operator names, bold vectors) that the chunk tests
 * count as running text. What sets a display apart is its place on the line:
 * it stays clear of both text margins and is centred (or indented) in the
 * column, while a line of a paragraph starts or ends at a margin.          */


/* Text margins: the most common left and right ends of long chunks of
 * running text (justified paragraphs share both), three of them at each
 * margin, or two at the right one where they are the rightmost. */
static void
find_margins (GArray *chunks, const PageCtx *pc, Margins *m)
{
  for (int col = 0; col < 2; col++)
    {
      double *l = g_new (double, chunks->len + 1), *r = g_new (double, chunks->len + 1);
      int nl = 0, cl = 0, cr = 0;

      for (guint i = 0; i < chunks->len; i++)
        {
          const Chunk *ch = &g_array_index (chunks, Chunk, i);
          int total = ch->end - ch->start;
          if (total < 12 || ch->n_text * 3 < total * 2 || column_of (pc, fm_rect_cx (&ch->box)) != col)
            continue;
          l[nl] = ch->box.x0;
          r[nl++] = ch->box.x1;
        }
      m->known[col] = FALSE;
      if (nl >= 3)
        {
          m->left[col] = fm_layout_mode (l, nl, &cl);
          m->right[col] = fm_layout_mode (r, nl, &cr);
          /* (two lines ending at the rightmost x to a point, r sorted by
           * fm_layout_mode(), are the paragraphs' justified measure where
           * three start at the left one: a short page of narrow type -
           * Times, XITS Math - around an aligned display has no third, and
           * its rows with words beside them were dissolved, cls-rowwords.
           * "To a point" at a 10 pt body: 0.1 em, as what moves a
           * justified line's end - Poppler's rounded advance widths, a
           * protruded period - scales with the type; a fixed point was
           * a third looser at 8 pt than at 12) */
          if (cr < 3 && cl >= 3 && r[nl - 2] >= r[nl - 1] - 0.1 * pc->body_em)
            {
              m->right[col] = r[nl - 1];
              cr = 3;
            }
          m->known[col] = cl >= 3 && cr >= 3 && m->right[col] - m->left[col] > 10.0;
        }
      g_free (l);
      g_free (r);
    }
}

/* The chunks on chunk i's line: their middle level with it, chained over
 * gaps narrower than 3.5 em (two \qquad), not numbers, not across a gutter.
 * The gaps are measured to the line's reach, which takes in the chunks
 * stacked on it (a display fraction's numerator and denominator, which
 * Poppler lists as lines of their own, words in them or not):
 * "\frac{a}{b} + \frac{c}{d}" leaves the "+" more than 3.5 em from a word
 * before the second fraction.
 * Fills members (room for chunks->len) and returns how many. */
static int
line_group (GArray *chunks, guint i, const PageCtx *pc, int *members, FmRect *ext)
{
  const Chunk *ch = &g_array_index (chunks, Chunk, i);
  int n = 0;
  gboolean *in = g_new0 (gboolean, chunks->len + 1);
  FmRect reach = ch->box;

  members[n++] = (int) i;
  in[i] = TRUE;
  *ext = ch->box;
  for (gboolean grew = TRUE; grew;)
    {
      grew = FALSE;
      for (guint j = 0; j < chunks->len; j++)
        {
          const Chunk *o = &g_array_index (chunks, Chunk, j);
          double cy = 0.5 * (o->box.y0 + o->box.y1);
          gboolean level = cy >= ch->box.y0 && cy <= ch->box.y1 && v_overlap_enough (&o->box, &ch->box, 0.5);
          /* (a line of words above or below that touches this one by a
           * hair - a descender, an accent - is not stacked on it) */
          gboolean stacked = !level && o->box.y1 > ch->box.y0 && o->box.y0 < ch->box.y1 &&
                             (o->n_text == 0 || v_overlap_enough (&o->box, &ch->box, 0.3));
          if (in[j] || o->is_number || !(level || stacked) ||
              across_gutter (pc, fm_rect_cx (&o->box), fm_rect_cx (&ch->box)) ||
              fm_rect_h_gap (&reach, &o->box) > 3.5 * ch->em)
            continue;
          in[j] = TRUE;
          reach.x0 = MIN (reach.x0, o->box.x0);
          reach.x1 = MAX (reach.x1, o->box.x1);
          grew = TRUE;
          if (!level)
            continue;
          members[n++] = (int) j;
          ext->x0 = MIN (ext->x0, o->box.x0);
          ext->x1 = MAX (ext->x1, o->box.x1);
        }
    }
  g_free (in);
  return n;
}

static gboolean relation_aligned_within (const Glyph *g, const Chunk *o, const Chunk *r, double tol);

/* Whether chunk o reads as a line of running text rather than a
 * display's row with a label: three text letters or more, and two thirds
 * of its glyphs text letters or three words of them (runs after a space
 * or a math glyph). "rate out = x + y" has 7 letters of 11 in two words; a
 * minipage's line "also have r_1 + r_2 = s_1 if we know that the sum t_1
 * + t_2 = m holds." 30 of 46 in nine words. */
static gboolean
running_text_line (const Glyph *g, const Chunk *o)
{
  int words = 0;

  for (int k = o->start; k < o->end; k++)
    words += g[k].cls == CLS_TEXT && (k == o->start || g[k].space_before || g[k - 1].cls != CLS_TEXT);
  return o->n_text >= 3 && (o->n_text * 3 >= (o->end - o->start) * 2 || words >= 3);
}

/* Whether a chunk level with chunk o (o itself, or a relation sign set
 * apart from it: Palatino's "=" of a gathered row is a chunk of its own)
 * has a relation sign at the very x of one in a chunk on the line spanning
 * ext, to 0.005 em: o's line and ext are rows of one aligned or gathered
 * display, not lines of a paragraph. TeX sets aligned rows' signs at one x
 * to the thousandth of a point (the jot-row probes in eight set-ups); two
 * lines of an inset paragraph met to 0.012 em by chance (a Palatino list,
 * 0.05 em as aligned_rows() allows made its first line a display). */
static gboolean
rows_of_one_display (const PageCtx *pc, const Chunk *o, const FmRect *ext)
{
  double oy = fm_rect_cy (&o->box);

  for (guint i = 0; i < pc->chunks->len; i++)
    {
      const Chunk *a = &g_array_index (pc->chunks, Chunk, i);
      if (fabs (fm_rect_cy (&a->box) - oy) > 0.3 * o->em || a->box.x1 < ext->x0 || a->box.x0 > ext->x1)
        continue;
      for (guint j = 0; j < pc->chunks->len; j++)
        {
          const Chunk *r = &g_array_index (pc->chunks, Chunk, j);
          double cy = fm_rect_cy (&r->box);
          if (r != a && cy >= ext->y0 && cy <= ext->y1 && r->box.x0 >= ext->x0 - 0.1 * r->em &&
              r->box.x1 <= ext->x1 + 0.1 * r->em && relation_aligned_within (pc->g, a, r, 0.005))
            return TRUE;
        }
    }
  return FALSE;
}

/* Whether lines of words just above or below the line spanning ext (a
 * box gap under 1 em) start and end within 0.1 em of where ext does: lines
 * of the same paragraph, so ext's slivers from the margins are the
 * paragraph's own measure (a framed box), not a display's centring. A
 * display's neighbours run from margin to margin, a quarter em or more
 * beyond it. Both edges: the rows of a left-aligned aligned display
 * (&\text{rate in is } ... \\ &\text{rate out is } ...) share the left
 * one only, and a justified paragraph's line shares both with the line
 * above or below (detectfix11). One edge is enough where the line sharing
 * it is running text one line pitch away: the short last line of a
 * two-line \fbox{\parbox} paragraph (its first line had come as a false
 * display in CM, LM, Times, Palatino, Charter, XeLaTeX Termes Math,
 * LuaLaTeX LM Math), a word or more on it ("w_1 + w_2 = v holds."). It
 * lies the paragraph's baselineskip away (1.15-1.2 em between the lines'
 * middles), where the rows of an aligned or gathered display are \jot
 * further apart (1.45-1.5 em in cls-alignedge, whose lower row "rate out
 * = x + y" has words too) and a matrix's rows have none. Rows set with
 * \jot at 0-1 pt lie at the paragraph's pitch (1.2-1.3 em, cls-jotrows:
 * the widest row's words were lost in CM and LuaLaTeX LM Math), so the
 * neighbour must look like a paragraph's line too: no relation sign at
 * the x of one on ext's line (rows_of_one_display()), and, for one shared
 * edge, running text (running_text_line()). An inset paragraph's lines
 * (quote, minipage, list, shaded box) are running text whose signs meet
 * only by chance. */
static gboolean
edge_shared_by_neighbour (const PageCtx *pc, const FmRect *ext, double em)
{
  gboolean left = FALSE, right = FALSE, prose_edge = FALSE;

  for (guint j = 0; j < pc->chunks->len; j++)
    {
      const Chunk *o = &g_array_index (pc->chunks, Chunk, j);
      double cy = 0.5 * (o->box.y0 + o->box.y1);

      if (o->n_text == 0 || (cy >= ext->y0 && cy <= ext->y1) || fm_rect_v_gap (ext, &o->box) > 1.0 * em ||
          across_gutter (pc, fm_rect_cx (&o->box), fm_rect_cx (ext)) || rows_of_one_display (pc, o, ext))
        continue;
      gboolean shares_left = fabs (o->box.x0 - ext->x0) < 0.1 * em;
      gboolean shares_right = fabs (o->box.x1 - ext->x1) < 0.1 * em;
      left = left || shares_left;
      right = right || shares_right;
      prose_edge = prose_edge || ((shares_left || shares_right) && running_text_line (pc->g, o) &&
                                  fabs (cy - fm_rect_cy (ext)) < 1.3 * em);
    }
  return (left && right) || prose_edge;
}

/* Whether a line spanning ext stays clear of its column's margins and is
 * centred or indented like a display. A display nearly as wide as a
 * narrow column is set off by the same sliver on both sides, a quarter em
 * or more (0.3 em either side of \text{practical resonance frequency }
 * \omega = \sqrt{...} in a two-column page): a paragraph's line is flush
 * with one margin at least - unless its box's margins are not the page's:
 * a justified paragraph inside a framed or \fbox{\parbox} box is set in
 * by the same sliver on both sides, and its neighbour lines share an edge
 * with it (the line above ends, the line below starts, where it does;
 * detectfix9). */
static gboolean
line_is_set_off (const PageCtx *pc, int col, const FmRect *ext, double em)
{
  const Margins *m = &pc->margins;
  double lg, rg;

  if (!m->known[col])
    return FALSE;
  lg = ext->x0 - m->left[col];
  rg = m->right[col] - ext->x1;
  /* (a narrow display's rows share an edge too, and are set off by the
   * rules below) */
  if (lg >= 0.25 * em && rg >= 0.25 * em && fabs (lg - rg) < 0.1 * em && !edge_shared_by_neighbour (pc, ext, em))
    return TRUE;
  if (lg < 1.0 * em || rg < 1.0 * em)
    return FALSE;
  return fabs (lg - rg) < 1.5 * em || (lg >= 2.0 * em && rg >= 2.5 * em);
}

/* Adds to row[0..nm) (the chunks of one line, members[0] the line's own)
 * the chunks of no text stacked on that line: a display-style fraction's
 * numerator and denominator, a sum's limits. Poppler lists them as lines of
 * their own, so without them "\frac{a}{b} - \frac{c}{d} = 0" is a lone
 * minus and a "= 0" of digits, two parts with too little math to be a
 * formula. Returns the new count; row has room for every chunk. */
static int
stacked_on_line (const PageCtx *pc, const int *members, int nm, double em, const Chunk **row)
{
  const Chunk *line = &g_array_index (pc->chunks, Chunk, members[0]);
  double lx0 = line->box.x0, lx1 = line->box.x1;
  int n = nm;

  for (int k = 0; k < nm; k++)
    {
      lx0 = MIN (lx0, row[k]->box.x0);
      lx1 = MAX (lx1, row[k]->box.x1);
    }
  for (guint j = 0; j < pc->chunks->len; j++)
    {
      const Chunk *o = &g_array_index (pc->chunks, Chunk, j);
      gboolean in = FALSE;
      for (int k = 0; k < nm && !in; k++)
        in = members[k] == (int) j;
      /* overlapping the line's height without being level with it, within
       * its extent (a fraction wider than the rest reaches 3.5 em out) */
      if (in || o->is_number || o->n_text > 0 || o->n_strong + o->n_weak + o->n_neutral == 0 ||
          o->box.y1 <= line->box.y0 || o->box.y0 >= line->box.y1 ||
          o->box.x1 < lx0 - 3.5 * em || o->box.x0 > lx1 + 3.5 * em ||
          across_gutter (pc, fm_rect_cx (&o->box), fm_rect_cx (&line->box)))
        continue;
      row[n++] = o;
    }
  return n;
}

/* Whether a display line from x0 to x1 closing in a condition
 * (formulas_joined_by_words()) is set off from its column's margins. */
static gboolean
condition_line_set_off (const PageCtx *pc, double x0, double x1, double em)
{
  int col = column_of (pc, 0.5 * (x0 + x1));
  double lg = x0 - pc->margins.left[col], rg = pc->margins.right[col] - x1;

  return pc->margins.known[col] && (lg >= 1.0 * em || (lg >= 0.2 * em && rg >= 0.2 * em && fabs (lg - rg) < 1.0 * em));
}

/* Whether an equation number chunk stands level with the line from x0 to
 * x1 (box y0..y1), right or left of it and not across a gutter. */
static gboolean
number_level_with_line (const PageCtx *pc, double x0, double x1, double y0, double y1)
{
  FmRect line = { x0, y0, x1, y1 };

  for (guint j = 0; j < pc->chunks->len; j++)
    {
      const Chunk *o = &g_array_index (pc->chunks, Chunk, j);
      if (o->is_number && v_overlap_enough (&o->box, &line, 0.5) && (o->box.x0 >= x1 || o->box.x1 <= x0) &&
          !across_gutter (pc, fm_rect_cx (&o->box), 0.5 * (x0 + x1)))
        return TRUE;
    }
  return FALSE;
}

/* Whether a part of words of total glyphs, on a centred line of formulas
 * (formulas_joined_by_words()), is a display's phrase: between two
 * formulas a clause of up to 40 glyphs (\sum_n x_n \quad \text{converges
 * if and only if} \quad \sum_{n=M} x_n, the corpus: 20 letters, over the
 * 12 a word part of a line that is not centred may hold), and as the
 * line's last part a word or two (\quad \text{converges.}). A centred
 * prose line has no gap of 0.9 em between its words and its formulas.
 * Fresh detect 1092 lost these displays in four engines. */
static gboolean
phrase_between_formulas (int total, gboolean last)
{
  return total <= (last ? 12 : 40);
}

/* Whether the chunks members[0..nm) of one line are formulas joined by
 * words set a \qquad apart (\qquad \text{and} \qquad): a display as wide
 * as the column, which line_is_set_off() cannot tell from a text line.
 * Chunks that overlap or nearly touch (a fraction's parts, an integral and
 * its limits) are one part of the line. Running text has no gap of 1.5 em
 * inside a line, so two parts of math and, between them, only short parts
 * of words, each 1.5 em or more from a neighbour (\qquad \text{whenever}
 * \quad) and 0.9 em from the other, are one display line. So are they
 * with a word set only a \quad apart from each (\quad\text{in}\quad,
 * \quad\text{for all}\quad) when an equation number stands level with
 * the line: a numbered display as wide as its column is centred in the
 * room the number leaves, so line_is_set_off() sees no centring, and its
 * parts had come as two inline formulas and a lost number (XeLaTeX and
 * LuaLaTeX Termes, Latin Modern, two columns). A line of running text has
 * no equation number 0.9 em clear of its words. */
static gboolean
formulas_joined_by_words (const PageCtx *pc, const int *members, int nm, double em)
{
  int cap = (int) pc->chunks->len + 1;
  const Chunk **row = g_new (const Chunk *, cap);
  const Chunk *line = &g_array_index (pc->chunks, Chunk, members[0]);
  /* the parts: extent and glyph counts */
  double *x0 = g_new (double, cap), *x1 = g_new (double, cap);
  int *math = g_new0 (int, cap), *text = g_new0 (int, cap), *total = g_new0 (int, cap);
  int np = 0, n_math = 0, n_words = 0;
  gboolean ok = TRUE, condition = FALSE, numbered, centred, *lead_text = g_new0 (gboolean, cap);

  for (int k = 0; k < nm; k++)
    row[k] = &g_array_index (pc->chunks, Chunk, members[k]);
  nm = stacked_on_line (pc, members, nm, em, row);
  /* by x (a line has few chunks) */
  for (int a = 1; a < nm; a++)
    for (int b = a; b > 0 && row[b]->box.x0 < row[b - 1]->box.x0; b--)
      {
        const Chunk *t = row[b];
        row[b] = row[b - 1];
        row[b - 1] = t;
      }
  for (int k = 0; k < nm; k++)
    {
      const Chunk *o = row[k];
      if (np == 0 || o->box.x0 > x1[np - 1] + 0.9 * em)
        {
          x0[np] = o->box.x0;
          lead_text[np] = pc->g[o->start].cls == CLS_TEXT;
          x1[np++] = o->box.x1;
        }
      x1[np - 1] = MAX (x1[np - 1], o->box.x1);
      math[np - 1] += o->n_strong + o->n_weak;
      text[np - 1] += o->n_text;
      total[np - 1] += o->end - o->start;
    }
  /* (the parts are more than 0.9 em apart: a \quad each side) */
  numbered = np >= 3 && number_level_with_line (pc, x0[0], x1[np - 1], line->box.y0, line->box.y1);
  /* (a centred line: its word parts may be a longer phrase, and a last
   * part of words may close it - see phrase_between_formulas()) */
  centred = np >= 3 && line_is_set_off (pc, column_of (pc, 0.5 * (x0[0] + x1[np - 1])),
                                        &(FmRect) { x0[0], line->box.y0, x1[np - 1], line->box.y1 }, em);
  for (int k = 0; ok && k < np; k++)
    {
      if (math[k] >= 2 && text[k] * 4 <= total[k])
        n_math++;
      else if (math[k] == 0 && text[k] > 0 && total[k] <= 12 && k > 0 && k < np - 1 &&
               (numbered || MAX (x0[k] - x1[k - 1], x0[k + 1] - x1[k]) >= 1.5 * em))
        n_words++;
      else if (centred && math[k] == 0 && text[k] > 0 && k > 0 && math[k - 1] >= 2 &&
               phrase_between_formulas (total[k], k == np - 1))
        n_words += k < np - 1;
      /* a condition closing the line after a \qquad, words then math
       * (\qquad \text{for all $\xi \in U$}.), after a formula that
       * starts the line - set off as a display is, indented or centred
       * clear of both margins (a wide one by a few points): a table row,
       * a description's label and its text or a stretched line of running
       * text start at the left margin */
      /* (a longer condition, \qquad \text{for every piecewise smooth
       * closed path } \gamma \colon [a,b] \to U, when the line is set off
       * as line_is_set_off() asks: clear of both margins by 1 em) */
      else if (k == np - 1 && k == 1 && n_math == 1 && lead_text[k] && math[k] >= 1 &&
               x0[k] - x1[k - 1] >= 1.5 * em &&
               ((text[k] <= 12 && total[k] <= 16 && condition_line_set_off (pc, x0[0], x1[k], em)) ||
                (text[k] <= 40 && total[k] <= 60 &&
                 line_is_set_off (pc, column_of (pc, 0.5 * (x0[0] + x1[k])),
                                  &(FmRect) { x0[0], row[0]->box.y0, x1[k], row[0]->box.y1 }, em))))
        condition = TRUE;
      else
        ok = FALSE;
    }
  g_free (lead_text);
  g_free (row);
  g_free (x0);
  g_free (x1);
  g_free (math);
  g_free (text);
  g_free (total);
  return ok && ((n_math >= 2 && n_words >= 1) || (n_math == 1 && condition));
}

/* Whether the leftmost word of the chunks members[0..nm) of one line is a
 * list item's label: a bullet or dash, or up to three digits, letters or
 * roman numerals closed by "." or ")" ("1.", "(a)", "iv)"). */
static gboolean
opens_with_label (const Glyph *g, GArray *chunks, const int *members, int nm)
{
  const Chunk *first = NULL;
  int n = 0, alnum = 0, s;
  gunichar c0, cl;

  for (int k = 0; k < nm; k++)
    {
      const Chunk *o = &g_array_index (chunks, Chunk, members[k]);
      if (first == NULL || o->box.x0 < first->box.x0)
        first = o;
    }
  if (first == NULL || first->end <= first->start)
    return FALSE;
  s = first->start;
  while (s + n < first->end && (n == 0 || !g[s + n].space_before) && n < 6)
    n++;
  c0 = g[s].c;
  cl = g[s + n - 1].c;
  if (n == 1 && (c0 == 0x2022 || c0 == 0x2013 || c0 == 0x2014 || c0 == '*' || c0 == 0x25E6 || c0 == 0x2219 ||
                 c0 == 0x00B7 || c0 == 0x2023))
    return TRUE;
  for (int k = c0 == '(' ? 1 : 0; k < n - 1; k++)
    alnum += g_unichar_isalnum (g[s + k].c);
  return n >= 2 && (cl == '.' || cl == ')') && alnum == n - 1 - (c0 == '(') && alnum <= 3 &&
         (s + n == first->end || g[s + n].space_before);
}

/* Whether x0 lies 2 em or more right of where every line of words in
 * column col starts, on a page with too few such lines for its margins to
 * be known (a document's last page: two lines and a display). */
static gboolean
indented_from_text (const PageCtx *pc, int col, double x0, double em)
{
  double start = G_MAXDOUBLE;

  for (guint i = 0; i < pc->chunks->len; i++)
    {
      const Chunk *ch = &g_array_index (pc->chunks, Chunk, i);
      int total = ch->end - ch->start;
      if (total >= 12 && ch->n_text * 3 >= total * 2 && column_of (pc, fm_rect_cx (&ch->box)) == col)
        start = MIN (start, ch->box.x0);
    }
  return start < G_MAXDOUBLE && x0 - start >= 2.0 * em;
}

/* The chunks of a display's rows above and below its line members[0..nm)
 * that lie left of the remark starting at remark_x0: short chunks (no
 * prose line) overlapping the line's height without being level with it,
 * reached from the line in steps of under 3.5 em. Writes them to parts;
 * returns their count. */
static int
remark_formula_rows (const PageCtx *pc, const int *members, int nm, double remark_x0, double em, int *parts)
{
  const Chunk *line = &g_array_index (pc->chunks, Chunk, members[0]);
  double reach = remark_x0;
  int n = 0;

  for (int k = 0; k < nm; k++)
    reach = MIN (reach, g_array_index (pc->chunks, Chunk, members[k]).box.x0);

  for (gboolean grew = TRUE; grew;)
    {
      grew = FALSE;
      for (guint j = 0; j < pc->chunks->len; j++)
        {
          const Chunk *o = &g_array_index (pc->chunks, Chunk, j);
          double cy = 0.5 * (o->box.y0 + o->box.y1);
          gboolean known = FALSE;
          for (int k = 0; k < nm && !known; k++)
            known = members[k] == (int) j;
          for (int k = 0; k < n && !known; k++)
            known = parts[k] == (int) j;
          if (known || o->is_number || o->end - o->start > 24 || (cy >= line->box.y0 && cy <= line->box.y1) ||
              o->box.y1 <= line->box.y0 || o->box.y0 >= line->box.y1 || o->box.x1 > remark_x0 - 1.0 * em ||
              o->box.x1 < reach - 3.5 * em || across_gutter (pc, fm_rect_cx (&o->box), fm_rect_cx (&line->box)))
            continue;
          parts[n++] = (int) j;
          reach = MIN (reach, o->box.x0);
          grew = TRUE;
        }
    }
  return n;
}

/* Counts chunk o into a formula's part of a line: its box, its math and
 * text glyphs, its length (display_then_remark(), for the line's chunks
 * and for the rows found above and below it). */
static void
tally_formula_part (const Chunk *o, FmRect *box, int *math, int *text, int *total)
{
  if (*total == 0)
    *box = o->box;
  else
    fm_rect_union (box, &o->box);
  *math += o->n_strong + o->n_weak;
  *text += o->n_text;
  *total += o->end - o->start;
}

/* Whether a chunk of words other than those of the line y0..y1 starts at
 * x (to 0.2 em) on a line within 2.5 em above or below it: the line is a
 * row of a table column (display_then_remark(), condition_rows()). */
static gboolean
wordy_at_x_nearby (const PageCtx *pc, double x, double y0, double y1, double em)
{
  for (guint i = 0; i < pc->chunks->len; i++)
    {
      const Chunk *q = &g_array_index (pc->chunks, Chunk, i);
      double cy = fm_rect_cy (&q->box);
      if (q->is_number || q->n_text * 2 < q->end - q->start || fabs (q->box.x0 - x) >= 0.2 * em ||
          (cy > y0 && cy < y1))
        continue;
      if ((q->box.y1 <= y0 + 0.2 * em && y0 - q->box.y1 < 2.5 * em) ||
          (q->box.y0 >= y1 - 0.2 * em && q->box.y0 - y1 < 2.5 * em))
        return TRUE;
    }
  return FALSE;
}

/* Whether the chunks members[0..nm) of one line are a display and, after
 * a \qquad or more (\hfill), a remark in brackets that closes the line
 * (\mathbf{v} = \Delta\mathbf{r}/\Delta t \qquad \hfill [only for constant
 * velocity]): the remark's words outnumber the formula's glyphs, so the
 * line looked like text with an inline formula. Two parts 1.5 em or more
 * apart, math then words that open with a bracket, the whole line set off
 * from the margins (condition_line_set_off()) as no paragraph's line is.
 * The formula's rows above and below the line count with it; they are
 * written to parts (*n_parts) so that the caller makes them display too. */
static gboolean
display_then_remark (const PageCtx *pc, const int *members, int nm, double em, int *parts, int *n_parts)
{
  const Glyph *g = pc->g;
  FmRect left = { 0, 0, 0, 0 }, right = { 0, 0, 0, 0 };
  int last = -1, math = 0, text = 0, total = 0, open = -1, r_math = 0, r_text = 0, r_total = 0, r_words = 0;
  int col, l_words = 0;
  gboolean bracket, named = FALSE;

  *n_parts = 0;

  for (int k = 0; k < nm; k++)
    if (last < 0 || g_array_index (pc->chunks, Chunk, members[k]).box.x0 >
                    g_array_index (pc->chunks, Chunk, members[last]).box.x0)
      last = k;
  right = g_array_index (pc->chunks, Chunk, members[last]).box;
  for (int k = 0; k < nm; k++)
    {
      const Chunk *o = &g_array_index (pc->chunks, Chunk, members[k]);
      gboolean in_right = k == last || o->box.x0 >= right.x0 - 0.9 * em;
      if (in_right)
        {
          fm_rect_union (&right, &o->box);
          r_math += o->n_strong + o->n_weak;
          r_text += o->n_text;
          r_total += o->end - o->start;
          r_words++;
          for (int i = o->start; i < o->end; i++)
            {
              r_words += i > o->start && g[i].space_before;
              if (open < 0 || g[i].r.x0 < g[open].r.x0)
                open = i;
            }
          continue;
        }
      tally_formula_part (o, &left, &math, &text, &total);
      /* (the words of the formula's own line and whether a relation
       * follows them: \text{efficiency} = 1-\frac{Q_L}{Q_H}) */
      for (int i = o->start; i < o->end; i++)
        {
          l_words += g[i].cls == CLS_TEXT && g_unichar_isalpha (g[i].c) &&
                     (i == o->start || g[i].space_before || !g_unichar_isalpha (g[i - 1].c));
          named = named || (is_relation_sign (g[i].c) && i > o->start && g[i - 1].cls == CLS_TEXT &&
                            g_unichar_isalpha (g[i - 1].c));
        }
    }
  /* (the remark first: the rows below are looked for on few lines) */
  if (open < 0 || r_text < 3 || r_math * 4 > r_text || r_total > 60)
    return FALSE;
  bracket = g[open].c == '[' || g[open].c == '(';
  /* A remark of words with no bracket (\sum_{n=1}^\infty \frac{2^n}{n!}
   * \qquad \text{converges absolutely.}) only on a line TeX centred as a
   * whole, formula and remark: 2 em or more from both margins, alike to
   * 0.5 em (tested again below with the formula's rows). A paragraph's
   * line starts at the margin or its indent; \hfill's remark, which has
   * its bracket, reaches the right margin. */
  col = column_of (pc, 0.5 * (left.x0 + right.x1));
  if (!bracket && (!g_unichar_isalpha (g[open].c) || !pc->margins.known[col] ||
                   pc->margins.right[col] - right.x1 < 2.0 * em || left.x0 - pc->margins.left[col] < 2.0 * em))
    return FALSE;
  /* The formula's rows above and below the line (a fraction's numerator
   * and denominator, "\frac{10^{-3}\ kg}{1\ g} \qquad (correct)") are
   * lines of their own to Poppler: without them the formula is a lone
   * "P =" or nothing, too little math for a display. */
  *n_parts = remark_formula_rows (pc, members, nm, right.x0, em, parts);
  for (int k = 0; k < *n_parts; k++)
    tally_formula_part (&g_array_index (pc->chunks, Chunk, parts[k]), &left, &math, &text, &total);
  /* A list item's line (\item $x^2+y^2=1$ \qquad (the unit circle)) is
   * indented as a display is, but its label opens it: prose, not a
   * display. */
  if (opens_with_label (g, pc->chunks, members, nm))
    return FALSE;
  /* One bracketed word at the right margin is a tag, \tag{Young}, which
   * is the display's number: a remark has words. */
  col = column_of (pc, 0.5 * (left.x0 + right.x1));
  if (r_words < 2 && pc->margins.known[col] && pc->margins.right[col] - right.x1 < 1.0 * em)
    return FALSE;
  if (!bracket && (left.x0 - pc->margins.left[col] < 2.0 * em ||
                   fabs ((left.x0 - pc->margins.left[col]) - (pc->margins.right[col] - right.x1)) > 0.5 * em))
    return FALSE;
  /* The widest row of a centred table of a formula column and a text
   * column (c@{\qquad}l) is centred too: its words start where the words
   * of the rows above or below start, a display's remark is alone. */
  if (!bracket && (wordy_at_x_nearby (pc, right.x0, right.y0, right.y1, em) ||
                   wordy_at_x_nearby (pc, left.x0, left.y0, left.y1, em)))
    return FALSE;
  /* A formula that names its quantity in words, \text{efficiency} =
   * 1-\frac{Q_L}{Q_H}. \qquad \text{[efficiency of any heat engine]}, is
   * mostly letters: a phrase of up to three words then a relation, the
   * formula with its rows above and below the line (Poppler lists them
   * apart or in the line's chunk) taller than a line of prose, 1.2 em: a
   * fraction (pdf-e2e 1073: missed on every set-up). */
  named = named && l_words <= 3 && left.y1 - left.y0 >= 1.2 * em;
  return total > 0 && math >= 2 && (text * 4 <= total || named) && open >= 0 &&
         r_text >= 3 && r_math * 4 <= r_text && r_total <= 60 && right.x0 - left.x1 >= 1.5 * em &&
         (condition_line_set_off (pc, left.x0, right.x1, em) ||
          (!pc->margins.known[col] && indented_from_text (pc, col, left.x0, em)));
}

/* Moves the chunks of display block `from` into block `to` (-1: none). */
/* Whether display block b is the continuation of a display broken over
 * lines: its leftmost full-size glyph is a binary operator or relation (TeX
 * breaks a long display before one: "&\quad + ..."). Fraction rows push such
 * lines more than 0.9 em apart. */
static gboolean
block_continues (const Glyph *g, GArray *chunks, int b)
{
  double top = 0;
  int first = -1;

  for (guint i = 0; i < chunks->len; i++)
    {
      const Chunk *ch = &g_array_index (chunks, Chunk, i);
      if (ch->block == b)
        top = MAX (top, ch->em_max);
    }
  for (guint i = 0; i < chunks->len; i++)
    {
      const Chunk *ch = &g_array_index (chunks, Chunk, i);
      if (ch->block != b)
        continue;
      for (int k = ch->start; k < ch->end; k++)
        if (g[k].size >= 0.8 * top && (first < 0 || g[k].r.x0 < g[first].r.x0))
          first = k;
    }
  /* (a sum, an integral or a radical starts a formula) */
  return first >= 0 && is_operator (g[first].c) && !is_prefix_operator (g[first].c) && g[first].c != '/' &&
         g[first].c != '|' && g[first].c != '\\';
}

static void
reassign_block (GArray *chunks, int from, int to)
{
  for (guint i = 0; i < chunks->len; i++)
    if (g_array_index (chunks, Chunk, i).block == from)
      g_array_index (chunks, Chunk, i).block = to;
}

/* ------------------------------------------------------------------------ */
/* fm_detect_page's phases, in the order it calls them. Each reads and fills
 * the page context; the comment above each says what it adds.              */

/* Gives back Poppler's page and text layer and the document's lock. */
static void
page_release (PageCtx *pc, FmDocument *doc)
{
  g_clear_object (&pc->page);
  fm_document_unlock (doc);
  g_clear_pointer (&pc->text, g_free);
  g_clear_pointer (&pc->rects, g_free);
  poppler_page_free_text_attributes (pc->attrs);
  pc->attrs = NULL;
}

/* Glyphs from the text layer: character, box, font size and font class of
 * every non-space character, with whether a space or line break precedes it.
 * Takes the document's lock (released by page_release). FALSE with error set
 * when the page has no text layer. */
static gboolean
page_glyphs (PageCtx *pc, FmDocument *doc, GError **error)
{
  fm_document_lock (doc);
  pc->page = fm_document_get_page_locked (doc, pc->page_index, error);
  if (pc->page == NULL)
    {
      fm_document_unlock (doc);
      return FALSE;
    }
  poppler_page_get_size (pc->page, &pc->page_w, &pc->page_h);
  pc->text = poppler_page_get_text (pc->page);
  if (pc->text && *pc->text)
    {
      if (!poppler_page_get_text_layout (pc->page, &pc->rects, &pc->n_rects))
        pc->n_rects = 0;
      pc->attrs = poppler_page_get_text_attributes (pc->page);
    }

  if (pc->text && pc->n_rects > 0)
    {
      /* Per character font: attribute ranges are character offsets. */
      glong n_chars = g_utf8_strlen (pc->text, -1);
      const char **font_of = g_new0 (const char *, n_chars + 1);
      double *size_of = g_new0 (double, n_chars + 1);
      const char *p = pc->text;
      gboolean space = TRUE, newline = TRUE;

      for (GList *l = pc->attrs; l; l = l->next)
        {
          PopplerTextAttributes *a = l->data;
          for (int k = MAX (0, a->start_index); k <= a->end_index && k < n_chars; k++)
            {
              font_of[k] = a->font_name;
              size_of[k] = a->font_size;
            }
        }

      pc->g = g_new0 (Glyph, MIN ((glong) pc->n_rects, n_chars) + 1);
      for (glong k = 0; k < n_chars && k < (glong) pc->n_rects; k++, p = g_utf8_next_char (p))
        {
          gunichar c = g_utf8_get_char (p);
          Glyph *gl;

          if (pc->opts.rule == FM_DETECT_RULE_FULL)
            c = fm_font_oms_symbol (font_of[k], c);
          PopplerRectangle *pr = &pc->rects[k];

          if (g_unichar_isspace (c) || c == 0xA0 || c == 0 || !isfinite (pr->x1) || !isfinite (pr->y1) ||
              !isfinite (pr->x2) || !isfinite (pr->y2))
            {
              space = TRUE;
              if (c == '\n')
                newline = TRUE;
              continue;
            }
          gl = &pc->g[pc->n++];
          gl->c = c;
          gl->r = (FmRect) { MIN (pr->x1, pr->x2), MIN (pr->y1, pr->y2), MAX (pr->x1, pr->x2), MAX (pr->y1, pr->y2) };
          gl->size = size_of[k];
          gl->space_before = space;
          gl->line_before = newline;
          space = newline = FALSE;
          if (pc->opts.rule == FM_DETECT_RULE_PDFMATHTRANSLATE)
            {
              gl->font = fm_font_is_math_pdfmathtranslate (font_of[k]) ? FM_FONT_MATH : FM_FONT_TEXT;
              gl->cls = (gl->font == FM_FONT_MATH || pmt_char_is_math (c)) ? CLS_STRONG : CLS_TEXT;
            }
          else
            {
              gl->font = fm_font_classify (font_of[k]);
              gl->ext = fm_font_is_math_extension (font_of[k]);
              gl->bold = fm_font_is_bold (font_of[k]);
              if (g_strcmp0 (g_getenv ("FM_DETECT_DEBUG"), "fonts") == 0)
                g_printerr ("font U+%04X %s -> %d\n", c, font_of[k] ? font_of[k] : "(null)", gl->font);
              gl->cls = classify_glyph (gl, pc->opts.rule);
            }
        }
      g_free (font_of);
      g_free (size_of);
    }

  if (pc->n == 0)
    {
      page_release (pc, doc);
      g_set_error (error, FM_DOCUMENT_ERROR, FM_DOCUMENT_ERROR_NO_TEXT_LAYER,
                   "%s: page %d has no text layer (a scan?): formulas cannot be found",
                   fm_document_get_name (doc), pc->page_index + 1);
      return FALSE;
    }
  return TRUE;
}

/* TeX builds \mapsto from CMSY's \mapstochar, a bar of no width in
 * slot 0x37, and the arrow set on top of it; Poppler reads the bar as the
 * digit '7' of the math font. Where that '7' starts where the arrow (or
 * \longmapsto's relbar) after it starts, it is the relation's piece: as a
 * digit it had parted "z_n \mapsto f(..)" and "\mathcal{G} \mapsto .." after
 * their first atom, the relation's thick space as wide as a word space
 * (pdf-e2e dev 1161, CM and LM). */
static void
mapsto_pieces (Glyph *g, int n)
{
  for (int i = 0; i + 1 < n; i++)
    if (g[i].c == '7' && g[i].font == FM_FONT_MATH &&
        ((g[i + 1].c >= 0x2190 && g[i + 1].c <= 0x21FF) || (g[i + 1].c >= 0x27F0 && g[i + 1].c <= 0x27FF) ||
         g[i + 1].c == 0x2212 || g[i + 1].c == '-') &&
        fabs (g[i + 1].r.x0 - g[i].r.x0) < 0.1 * MAX (g[i].size, 1.0) && v_overlap_enough (&g[i].r, &g[i + 1].r, 0.5))
      g[i].c = 0x21A6;
}

/* Poppler lists a text-style fraction's numerator and denominator as one
 * word when the denominator starts where the numerator starts or a little
 * right of it (\frac{1}{2}, \frac{3}{4}, \frac{a}{b}): a word's glyphs
 * all get the word's height, from the numerator's top to the denominator's
 * bottom, and the first glyph ends where the second starts (no width).
 * Seen in every probe set-up (pdfLaTeX CM, LM, Times, Palatino,
 * Libertine, newtx; XeLaTeX LM and Termes Math; LuaLaTeX LM Math), and the
 * parts' test (fraction_part()) found no bar between two boxes that are one.
 * Such a pair - the second's box as tall as two glyphs' (over 1.7 of its
 * size), the first no wider than a quarter em, both of one size - gets its
 * boxes back: the first (the numerator, set first) the upper half, the
 * second the lower, the first as wide as the second. Only letters and
 * digits under the page's body size (a text fraction's parts are script
 * size): old dvips PDFs of Type 3 bitmap fonts give every word's glyphs
 * 1.8 em tall boxes, and Times' '.' or Helvetica's 'i' are a quarter em
 * wide (review of detectprec). */
static void
one_word_fraction_parts (Glyph *g, int n)
{
  double body = median_size (g, 0, n);

  for (int i = 0; i + 1 < n; i++)
    {
      Glyph *up = &g[i], *down = &g[i + 1];
      double h = fm_rect_h (&down->r), size = down->size;
      if (down->space_before || down->line_before || !(size > 0) || fabs (up->size - size) > 0.05 * size ||
          size > 0.85 * body || !g_unichar_isalnum (up->c) || !g_unichar_isalnum (down->c) ||
          h < 1.7 * size || fabs (up->r.y0 - down->r.y0) > 0.01 || fabs (up->r.y1 - down->r.y1) > 0.01 ||
          fm_rect_w (&up->r) > 0.25 * size || fabs (up->r.x1 - down->r.x0) > 0.01 || fm_rect_w (&down->r) <= 0.01)
        continue;
      up->r.x1 = MAX (up->r.x1, up->r.x0 + fm_rect_w (&down->r));
      up->r.y1 = down->r.y0 = up->r.y0 + 0.5 * h;
      i++;
    }
}

/* The body size, the text direction (turned text is worked on in the frame
 * where it runs left to right, and its boxes given back as displayed) and,
 * for the full rule, the word-level classes: they measure gaps along the
 * line, so after turning. */
static void
page_words (PageCtx *pc)
{
  Glyph *g = pc->g;
  int n = pc->n;

  pc->body_em = median_size (g, 0, n);
  pc->rot = text_direction (g, n);
  if (pc->rot != 0)
    for (int i = 0; i < n; i++)
      g[i].r = fm_rect_to_frame (&g[i].r, pc->rot, pc->page_w, pc->page_h);
  if (pc->opts.rule == FM_DETECT_RULE_FULL)
    {
      mapsto_pieces (g, n);
      one_word_fraction_parts (g, n);
      /* twice: an upright word's test looks at the class of the italic
       * letter after it (\mathrm{ns}(u) in mathptmx), set later in the pass */
      /* Whether this page's math letters come from a math font: lowercase
       * letters of a math font (not CMEX, which maps its pieces to letters)
       * outnumber single letters of the text italic two to one. A mathptmx
       * page has a few \mathfrak letters and many Times Italic x and y. */
      int math_letters = 0, single_italic = 0;
      gboolean math_italic;
      for (int i = 0; i < n; i++)
        {
          math_letters += g[i].font == FM_FONT_MATH && !g[i].ext && g_unichar_islower (g[i].c) &&
                          (g[i].c < 0x370 || g[i].c >= 0x1D400);
          single_italic += g[i].font == FM_FONT_TEXT_ITALIC && g_unichar_isalpha (g[i].c) &&
                           !(i > 0 && !g[i].space_before && g_unichar_isalpha (g[i - 1].c)) &&
                           !(i + 1 < n && !g[i + 1].space_before && g_unichar_isalpha (g[i + 1].c));
        }
      math_italic = math_letters >= 3 && math_letters >= 2 * single_italic;
      for (int i = 0; i < n && !pc->unicode_math; i++)
        pc->unicode_math = g[i].font == FM_FONT_MATH && g[i].c >= 0x1D400 && g[i].c <= 0x1D7FF;
      int *script = right_scripts (g, n);
      classify_words (g, n, math_italic, script, pc->body_em);
      classify_words (g, n, math_italic, script, pc->body_em);
      if (!math_italic)
        classify_italic_runs (g, n);
      classify_glyph_runs (g, n, script);
      classify_units (g, n);
      classify_lone_relations (g, n);
      classify_line_marks (g, n);
      classify_section_signs (g, n);
      g_free (script);
    }
}

/* The page's ink, turned into the text's frame (page_w/page_h become that
 * frame's), when the options ask for it; with the full rule also the place
 * for its connected components, found as needed: glyphs of extension fonts
 * and those the text layer lost are found among them. */
static void
page_ink (PageCtx *pc)
{
  pc->disp_w = pc->page_w;
  pc->disp_h = pc->page_h;
  if (pc->rot & 1)
    {
      pc->page_w = pc->disp_h;
      pc->page_h = pc->disp_w;
    }
  if (pc->opts.refine_with_bitmap)
    pc->have_ink = ink_map_init (&pc->ink_map, pc->page);
  if (pc->have_ink)
    ink_map_turn (&pc->ink_map, pc->rot);
  if (pc->have_ink && pc->opts.rule == FM_DETECT_RULE_FULL)
    pc->comps = g_array_new (FALSE, FALSE, sizeof (InkComp));
  pc->ink = pc->have_ink ? &pc->ink_map : NULL;
}

/* Radical signs: Poppler boxes every glyph from the font's ascent to its
 * descent, but TeX's Type 1 radicals hang below their baseline (height ~0,
 * depth ~1 em), so their box sits most of a line too high, while OpenType
 * math fonts' radicals (XeTeX, LuaTeX, Word) and some Type 1 ones sit in it.
 * With a render, the box's height becomes the tallest run of ink rows in
 * the middle of its columns that meets the box or the 3/4 of its height
 * below it (the sign's stroke covers every row it spans); without one, the
 * Type 1 case is assumed. Extension-font glyphs and big operators move to
 * their ink the same way. */
/* The box of the glyphs listed in [lo, hi) that sit level with seed and
 * follow each other from it less than 0.3 em apart: a fraction's part
 * (d x under \frac{d}{dx}), not the table row or footnote it may be in. */
static FmRect
part_cluster (const Glyph *g, int lo, int hi, FmRect seed, double em)
{
  FmRect u = seed;
  gboolean grown = TRUE;

  for (int pass = 0; grown && pass < 8; pass++)
    {
      grown = FALSE;
      for (int k = lo; k < hi; k++)
        {
          const FmRect *o = &g[k].r;
          if ((o->x0 >= u.x0 && o->x1 <= u.x1) || !v_overlap_enough (o, &seed, 0.5) ||
              fm_rect_h_gap (o, &u) >= 0.3 * em)
            continue;
          fm_rect_union (&u, o);
          grown = TRUE;
        }
    }
  return u;
}

/* Whether a bar of ink over the box r (its row y) reaches across r and
 * across a script-size math glyph on its other side, among the glyphs
 * listed within 64 of g[i..j) (Poppler lists a fraction's parts near each
 * other, the rest of a line between them at most). A fraction's bar is as
 * wide as its wider part: it ends within 0.4 em of the two parts' boxes,
 * where a table's \hline or a footnote's rule runs on past them
 * ("$n$ & $t$ \\ \hline yes & no" made "n yes" a fraction). */
static gboolean
bar_has_math_partner (const PageCtx *pc, int i, int j, const FmRect *r, double y, double em)
{
  const Glyph *g = pc->g;
  double tol = 1.5 / pc->ink->scale + 0.02 * em;
  int lo = MAX (0, i - 64), hi = MIN (pc->n, j + 64);

  for (int k = lo; k < hi; k++)
    {
      const FmRect *o = &g[k].r;
      double bx0, bx1, ix = MIN (o->x1, r->x1) - MAX (o->x0, r->x0);
      gboolean below = fm_rect_cy (o) > y;
      FmRect a, b;
      if ((k >= i && k < j) || g[k].cls == CLS_TEXT || g[k].size >= 0.85 * pc->body_em ||
          ix <= 0.2 * MIN (fm_rect_w (o), fm_rect_w (r)) || below == (fm_rect_cy (r) > y) ||
          (below ? o->y0 - y : y - o->y1) > 0.5 * em)
        continue;
      ink_row_run (pc->ink, (int) (y * pc->ink->scale), (int) (0.5 * (MAX (o->x0, r->x0) + MIN (o->x1, r->x1)) * pc->ink->scale),
                   &bx0, &bx1);
      if (!(bx0 <= MIN (o->x0, r->x0) + tol && bx1 >= MAX (o->x1, r->x1) - tol))
        continue;
      a = part_cluster (g, lo, hi, *r, em);
      b = part_cluster (g, lo, hi, *o, em);
      if (bx0 >= MIN (a.x0, b.x0) - 0.4 * em - tol && bx1 <= MAX (a.x1, b.x1) + 0.4 * em + tol)
        return TRUE;
    }
  return FALSE;
}

/* Upright script-size words alone over or under a fraction's bar are
 * names in its parts: \frac{\mathrm{d}}{\mathrm{d}x}, whose numerator "d"
 * is a word of the text font with nothing glued to it (classify_words
 * left it running text, and the fraction lost its numerator and its tie
 * to \cos x after it). The word is at most three letters, no script-size
 * letter of running text is level with it within an em (a footnote's
 * words), and the bar runs across it and a script-size math glyph on its
 * other side. */
static void
fraction_part_words (PageCtx *pc)
{
  Glyph *g = pc->g;
  int n = pc->n;

  if (pc->ink == NULL || pc->opts.rule != FM_DETECT_RULE_FULL)
    return;
  for (int i = 0; i < n; i++)
    {
      int j = i + 1;
      double em = g[i].size, y;
      FmRect r = g[i].r;
      gboolean alone = TRUE;
      /* (a word's first letter: Poppler may list the numerator glued to
       * the denominator's last glyph, "dxd") */
      if (g[i].cls != CLS_TEXT || !g_unichar_isalpha (g[i].c) || g[i].size >= 0.85 * pc->body_em ||
          (i > 0 && !g[i].space_before && g_unichar_isalpha (g[i - 1].c) && g[i - 1].cls == CLS_TEXT &&
           v_overlap_enough (&g[i - 1].r, &g[i].r, 0.5)))
        continue;
      while (j < n && !g[j].space_before && g_unichar_isalpha (g[j].c) && g[j].cls == CLS_TEXT &&
             g[j].size < 0.85 * pc->body_em)
        fm_rect_union (&r, &g[j++].r);
      if (j - i > 3)
        continue;
      for (int d = -1; d <= 1 && alone; d += 2)
        {
          int k = d < 0 ? i - 1 : j;
          if (k >= 0 && k < n && g[k].cls == CLS_TEXT && g_unichar_isalpha (g[k].c) &&
              fabs (g[k].size - em) < 0.1 * em && v_overlap_enough (&g[k].r, &r, 0.5) &&
              fm_rect_h_gap (&g[k].r, &r) < 1.0 * em)
            alone = FALSE;
        }
      if (!alone)
        continue;
      y = bar_below_y (pc->ink, &r, em);
      if (!(y >= 0 && bar_has_math_partner (pc, i, j, &r, y, em)))
        {
          y = bar_above_y (pc->ink, &r, em);
          if (!(y >= 0 && bar_has_math_partner (pc, i, j, &r, y, em)))
            continue;
        }
      for (int k = i; k < j; k++)
        g[k].cls = CLS_NEUTRAL;
    }
}

static void
fit_tall_glyphs (PageCtx *pc)
{
  Glyph *g = pc->g;
  InkMap *ink = &pc->ink_map;

  for (int i = 0; i < pc->n; i++)
    if (g[i].c == 0x221A || g[i].c == 0x221B || g[i].c == 0x221C)
      {
        double h = g[i].r.y1 - g[i].r.y0;
        if (!pc->have_ink || !radical_to_ink (ink, &g[i].r))
          {
            g[i].r.y0 += 0.75 * h;
            g[i].r.y1 += 0.75 * h;
          }
      }
    else if (pc->comps != NULL && g[i].ext && ext_glyph_to_ink (ink, pc->comps, &g[i].r))
      ;
    /* (and its big operators: STIX Two's text-style \bigcup, \bigoplus,
     * \sum hang as far below a box of the text size; the middle columns of
     * a \bigcup hold only its bottom stroke, so radical_to_ink() below
     * cannot find it) */
    else if (pc->comps != NULL && g[i].font == FM_FONT_MATH &&
             (is_delimiter_char (g[i].c) || (is_prefix_operator (g[i].c) && g[i].c != 0x00AC)) &&
             hanging_delimiter_to_ink (ink, pc->comps, &g[i].r))
      g[i].ext = TRUE;
    else if (pc->have_ink && ((is_prefix_operator (g[i].c) && g[i].c != 0x00AC) || g[i].ext))
      {
        /* Big operators of Type 1 extension fonts (CMEX-like: STIX 2's,
         * txfonts') hang below their baseline the same way: the box moves
         * to the ink when that lies mostly below it, and keeps its height
         * (which the line tests are tuned to). */
        FmRect fit = g[i].r;
        double h = g[i].r.y1 - g[i].r.y0, d;
        if (radical_to_ink (ink, &fit) &&
            (d = 0.5 * (fit.y0 + fit.y1 - g[i].r.y0 - g[i].r.y1)) > 0.25 * h &&
            /* the operator's own ink, not the next line's: most of it in
             * the box, or (a display-size sum of STIX Two's Type 1 font,
             * whose box is the text size's and ends where its ink starts)
             * nearly as tall as the box and starting in it, as no glyph of
             * the next line does */
            (MIN (fit.y1, g[i].r.y1) - MAX (fit.y0, g[i].r.y0) > 0.25 * (fit.y1 - fit.y0) ||
             (fit.y1 - fit.y0 > 0.8 * h && fit.y0 < g[i].r.y1 - 0.1 * h)))
          {
            g[i].r.y0 += d;
            g[i].r.y1 += d;
          }
      }
}

/* The gutter of a two-column page, and the glyphs that only the ink shows
 * (large delimiters the text layer lost). */
static void
page_columns_and_lost_glyphs (PageCtx *pc)
{
  if (pc->opts.rule == FM_DETECT_RULE_FULL)
    pc->has_gutter = fm_layout_find_gutter (&pc->g[0].r, sizeof *pc->g, pc->n, pc->page_w, pc->body_em,
                                            &pc->gutter_x0, &pc->gutter_x1);
  if (pc->comps != NULL)
    {
      pc->g = ink_lost_glyphs (&pc->ink_map, pc->comps, pc->g, &pc->n, pc->body_em);
      g_array_free (pc->comps, TRUE);
      pc->comps = NULL;
    }
  if (g_getenv ("FM_DETECT_DEBUG"))
    g_printerr ("gutter %d [%.1f %.1f] rot %d\n", pc->has_gutter, pc->gutter_x0, pc->gutter_x1, pc->rot);
}

/* Whether the glyphs from g[i] (a '(') read as an equation number,
 * "(3)", "(2.1a)", that ends its line. */
static gboolean
number_ends_line (const Glyph *g, int n, int i)
{
  Chunk ch = { 0 };
  int j = i + 1;

  while (j < n && j < i + 11 && g[j].c != ')' && !g[j].space_before)
    j++;
  if (j >= n || g[j].c != ')' || g[j].space_before)
    return FALSE;
  if (j + 1 < n && !g[j + 1].line_before && g[j + 1].r.x0 >= g[j].r.x0 && v_overlap_enough (&g[j].r, &g[j + 1].r, 0.3))
    return FALSE;
  ch.start = i;
  ch.end = j + 1;
  return chunk_text_matches_number (g, &ch);
}

/* Whether glyph k (k > 0) starts another line than glyph k - 1's, back to
 * the left (make_chunks()'s first cut). */
static gboolean
new_line_at (const Glyph *g, int k)
{
  double em = MAX (MAX (g[k - 1].size, g[k].size), 1.0);
  return g[k].r.x0 < g[k - 1].r.x0 - 0.5 * em && !v_overlap_enough (&g[k - 1].r, &g[k].r, 0.3);
}

/* Whether the line from glyph i on (a display after a left number that
 * starts at glyph start) is set as amsmath sets a display: it ends less
 * than an em before the right end of the page's text in its column (a
 * display that fills the line, its number moved close), or it is centred
 * in the column within an em (a display nearly as wide as the column
 * beside its number). A label before a formula set flush left is neither. */
static gboolean
display_runs_to_edge (const PageCtx *pc, int start, int i)
{
  const Glyph *g = pc->g;
  double line_x1 = g[i].r.x1, left = G_MAXDOUBLE, right = 0, em = MAX (g[i].size, 1.0);

  for (int k = i + 1; k < pc->n; k++)
    {
      if (new_line_at (g, k) ||
          across_gutter (pc, fm_rect_cx (&g[i].r), fm_rect_cx (&g[k].r)))
        break;   /* the next line, or the other column */
      line_x1 = MAX (line_x1, g[k].r.x1);
    }
  /* the column's ends: the outermost line starts and ends that two other
   * lines share within half an em (an overfull line, a page number in the
   * margin stand alone), or one other line on a page of few lines, whose
   * right end, one column, mirrors its left */
  double left1 = G_MAXDOUBLE, right1 = 0;
  for (int k = 0; k < pc->n; k++)
    {
      gboolean first = k == 0 || new_line_at (g, k), last = k + 1 == pc->n || new_line_at (g, k + 1);
      int near_l = 0, near_r = 0;
      if (!(first || last) || across_gutter (pc, fm_rect_cx (&g[start].r), fm_rect_cx (&g[k].r)))
        continue;
      for (int j = 0; j < pc->n && (near_l < 2 || near_r < 2); j++)
        if (j != k && !across_gutter (pc, fm_rect_cx (&g[k].r), fm_rect_cx (&g[j].r)))
          {
            near_l += first && (j == 0 || new_line_at (g, j)) && fabs (g[j].r.x0 - g[k].r.x0) < 0.5 * em;
            near_r += last && (j + 1 == pc->n || new_line_at (g, j + 1)) && fabs (g[j].r.x1 - g[k].r.x1) < 0.5 * em;
          }
      left = near_l >= 2 ? MIN (left, g[k].r.x0) : left;
      left1 = near_l >= 1 ? MIN (left1, g[k].r.x0) : left1;
      right = near_r >= 2 ? MAX (right, g[k].r.x1) : right;
      right1 = near_r >= 1 ? MAX (right1, g[k].r.x1) : right1;
    }
  left = left < G_MAXDOUBLE ? left : left1;
  if (right <= 0)
    right = !pc->has_gutter && left < G_MAXDOUBLE ? pc->page_w - left : right1;
  if (!(right > left))
    return TRUE;   /* no column found: as before */
  return line_x1 >= right - 1.0 * em || fabs (g[i].r.x0 + line_x1 - left - right) < 2.0 * em;
}

/* Whether the glyphs from start to i (exclusive, g[i - 1] a ')') read as
 * an equation number that starts its line, "(2.3)", and g[i] begins math
 * after it: amsart numbers on the left (leqno), and a display as wide as
 * the column allows sets its first glyph less than 0.9 em after the
 * number. A line of prose that starts with "(1)" goes on with a word, and
 * a label before a formula that ends short of the column's right end,
 * \noindent(1)\hspace{.5em}$x^2+y^2=1$, left room for a number beside it
 * (display_runs_to_edge()). */
static gboolean
number_starts_line (const PageCtx *pc, int start, int i)
{
  const Glyph *g = pc->g;
  Chunk ch = { 0 };

  if (g[i - 1].c != ')' || g[i].cls == CLS_TEXT || i - start > 12)
    return FALSE;
  if (start > 0 && !g[start].line_before && v_overlap_enough (&g[start - 1].r, &g[start].r, 0.3) &&
      !across_gutter (pc, fm_rect_cx (&g[start - 1].r), fm_rect_cx (&g[start].r)))
    return FALSE;   /* the chunk was cut at a gap of its line, not at its start */
  ch.start = start;
  ch.end = i;
  return chunk_text_matches_number (g, &ch) && display_runs_to_edge (pc, start, i);
}

/* Chunks: runs of glyphs in text order, cut at line breaks that move to
 * another line and at wide horizontal gaps. */
static void
make_chunks (PageCtx *pc)
{
  const Glyph *g = pc->g;
  int n = pc->n, start = 0;

  pc->chunks = g_array_new (FALSE, TRUE, sizeof (Chunk));
  for (int i = 1; i <= n; i++)
    {
      gboolean cut = i == n;
      if (!cut)
        {
          double em = MAX (g[i - 1].size, g[i].size);
          const FmRect *a = &g[i - 1].r, *b = &g[i].r;
          if (em < 1) em = 10;
          if (b->x0 < a->x0 - 0.5 * em && !v_overlap_enough (a, b, 0.3))
            cut = TRUE;  /* back to the left on another line */
          else if (b->x0 - a->x1 > 0.9 * em || a->x0 - b->x1 > 0.9 * em)
            cut = TRUE;  /* a wide gap: equation number, column, \quad */
          else if (g[i].line_before && !v_overlap_enough (a, b, 0.05))
            cut = TRUE;  /* Poppler's next line */
          else if (across_gutter (pc, fm_rect_cx (a), fm_rect_cx (b)))
            cut = TRUE;  /* the other column */
          else if (g[i].c == '(' && b->y0 >= a->y1 - 0.1 * em)
            cut = TRUE;  /* an equation number set on the line below its
                          * display, listed as the same line */
          else if (g[i].c == '(' && b->x0 - a->x1 >= 0.4 * em && number_ends_line (g, n, i))
            cut = TRUE;  /* an equation number less than 0.9 em after a
                          * display as wide as the column allows */
          else if (b->x0 - a->x1 >= 0.4 * em && number_starts_line (pc, start, i))
            cut = TRUE;  /* a left equation number less than 0.9 em
                          * before such a display */
        }
      if (cut)
        {
          Chunk ch = { 0 };
          ch.start = start;
          ch.end = i;
          ch.block = -1;
          ch.box = g[start].r;
          for (int k = start; k < i; k++)
            {
              fm_rect_union (&ch.box, &g[k].r);
              switch (g[k].cls)
                {
                case CLS_TEXT: ch.n_text++; break;
                case CLS_NEUTRAL: ch.n_neutral++; break;
                case CLS_WEAK: ch.n_weak++; break;
                case CLS_STRONG: ch.n_strong++; break;
                default: break;
                }
            }
          ch.em = median_size (g, start, i);
          for (int k = start; k < i; k++)
            ch.em_max = MAX (ch.em_max, g[k].size);
          ch.is_number = chunk_text_matches_number (g, &ch);
          g_array_append_val (pc->chunks, ch);
          start = i;
        }
    }

  if (g_getenv ("FM_DETECT_DEBUG"))
    for (guint i = 0; i < pc->chunks->len; i++)
      {
        Chunk *ch = &g_array_index (pc->chunks, Chunk, i);
        g_printerr ("chunk %u [%.1f %.1f %.1f %.1f] em %.1f:", i, ch->box.x0, ch->box.y0, ch->box.x1, ch->box.y1, ch->em);
        for (int k = ch->start; k < ch->end; k++)
          {
            char u[8] = { 0 };
            g_unichar_to_utf8 (g[k].c, u);
            g_printerr (" %s%s/%c%c", g[k].space_before ? "_" : "", u, "TNWS"[g[k].cls], "tim"[g[k].font]);
          }
        g_printerr ("\n");
      }
}

/* Whether a mostly-text chunk can be running text: a math symbol among
 * fewer than four letters is a display's own operator name ("Ai u =" before
 * the fractions of an aligned display: special-function names are not all
 * in the list of known ones). */
static gboolean
running_text_chunk (const Chunk *o)
{
  return o->n_text >= 4 || o->n_strong == 0;
}

/* Whether a tall glyph of character c can be a cases brace: an opening
 * bracket, or a glyph the text layer could not name (Latin Modern's
 * extension brace comes as a private-use or control code, a brace found in
 * the ink as INK_GLYPH); an integral or sum beside the rows is no brace. */
static gboolean
cases_brace_char (gunichar c)
{
  return is_open_bracket (c) || c == INK_GLYPH || c < 0x20 || (c >= 0xE000 && c <= 0xF8FF);
}

/* Whether c is a piece of a left brace as XeTeX and LuaTeX build a tall
 * one: the upper hook, middle piece, lower hook and extension, U+23A7 to
 * U+23AA. The right brace's pieces, U+23AB to U+23AD (\right\} closing
 * a system, rcases), open no cases column. */
static gboolean
left_brace_piece (gunichar c)
{
  return c >= 0x23A7 && c <= 0x23AA;
}

/* The tall cases brace of chunk ch into *brace (the union of a brace's
 * pieces, or its one tall glyph); FALSE when ch has none 1.8 body ems tall. */
static gboolean
chunk_cases_brace (const PageCtx *pc, const Chunk *ch, FmRect *brace)
{
  const Glyph *g = pc->g;

  *brace = (FmRect) { 0, 0, 0, 0 };
  for (int j = ch->start; j < ch->end; j++)
    {
      gboolean piece = left_brace_piece (g[j].c);
      FmRect r = g[j].r;
      /* (an OpenType math font's big brace is a glyph variant that
       * Poppler boxes at the font's ascent and descent, about an em: its
       * ink, the tallest run in its middle columns, is the brace) */
      if (g[j].c == '{' && g[j].font == FM_FONT_MATH && fm_rect_h (&r) < 1.8 * pc->body_em && pc->ink != NULL)
        radical_to_ink (pc->ink, &r);
      if (!piece && !(fm_rect_h (&r) >= 1.8 * pc->body_em && cases_brace_char (g[j].c)))
        continue;
      if (brace->x1 <= brace->x0 || r.x0 > brace->x1)
        *brace = r;
      else
        fm_rect_union (brace, &r);
    }
  return brace->x1 > brace->x0 && fm_rect_h (brace) >= 1.8 * pc->body_em;
}

/* Whether the line starting at x0, level with y, is a display's line that
 * begins with words ("for every x we set u(x) = {...}"): it starts 2 em
 * or more right of where its column's prose starts (indented_from_text():
 * a paragraph's line starts there, or a \parindent of 1 to 1.5 em in),
 * and no other line of text within 2.5 em above or below starts at its x
 * (an item of a list is indented too, its lines at one x). On a page too
 * short for its text margins to be known such a display was taken for an
 * inline cases in running text and lost (probe page: both displays missed
 * in CM, Times, Libertine, XeLaTeX STIX Two, LuaLaTeX Libertinus). */
static gboolean
display_line_with_words (const PageCtx *pc, double x0, double y, double em)
{
  if (!indented_from_text (pc, column_of (pc, x0), x0, em))
    return FALSE;
  for (guint i = 0; i < pc->chunks->len; i++)
    {
      const Chunk *o = &g_array_index (pc->chunks, Chunk, i);
      double cy = fm_rect_cy (&o->box);
      if (fabs (o->box.x0 - x0) < 0.2 * em && fabs (cy - y) > 0.8 * em && fabs (cy - y) < 2.5 * em &&
          running_text_line (pc->g, o))
        return FALSE;
    }
  return TRUE;
}

/* Whether glyph k of chunk o starts a word of running text in letters of
 * the body's size (first in its chunk or after a space): how a brace's
 * line counts its prose words (prose_right_of_rows(),
 * brace_in_running_text()). */
static gboolean
full_size_word_start (const Glyph *g, const Chunk *o, int k, double em)
{
  return g[k].cls == CLS_TEXT && g_unichar_isalpha (g[k].c) && g[k].size >= 0.8 * em &&
         (k == o->start || g[k].space_before);
}

/* Whether the line of an inline cases that starts a line runs on as prose
 * right of its rows: a chunk of three words or more, level with the
 * brace's middle, starting less than 2 em after every chunk right of the
 * brace within its height (the rows, which it must not overlap) and
 * ending at its column's known right margin (0.5 em). The rest of the
 * sentence after "f(x) = \begin{cases}...\end{cases}" at a line's start
 * ("is the function that we study here, ..."): the first row above the
 * text line was a false display in XeLaTeX and LuaLaTeX STIX Two and
 * Libertinus Math (probe 3751; XeLaTeX LM Math's brace is not found
 * tall, chunk_cases_brace(), and on a short page the margins are
 * unknown: left). A cases display's line ends short of the margin (a
 * remark after \quad too), its number aside. */
static gboolean
prose_right_of_rows (const PageCtx *pc, const FmRect *brace)
{
  GArray *chunks = pc->chunks;
  const Glyph *g = pc->g;
  double cy = fm_rect_cy (brace), em = pc->body_em;
  int col = column_of (pc, fm_rect_cx (brace));

  if (!pc->margins.known[col])
    return FALSE;
  for (guint i = 0; i < chunks->len; i++)
    {
      const Chunk *o = &g_array_index (chunks, Chunk, i);
      double rows_x1 = -G_MAXDOUBLE;
      gboolean clear = TRUE;
      int words = 0;
      if (o->is_number || o->box.x0 <= brace->x1 || o->box.y0 >= cy || o->box.y1 <= cy ||
          fabs (o->box.x1 - pc->margins.right[col]) > 0.5 * em || across_gutter (pc, fm_rect_cx (&o->box), fm_rect_cx (brace)))
        continue;
      for (int k = o->start; k < o->end; k++)
        words += full_size_word_start (g, o, k, em);
      for (guint j = 0; j < chunks->len && clear && words >= 3; j++)
        {
          const Chunk *q = &g_array_index (chunks, Chunk, j);
          double qy = fm_rect_cy (&q->box);
          if (j == i || q->is_number || q->box.x0 < brace->x1 - 0.1 * em || qy <= brace->y0 || qy >= brace->y1)
            continue;
          rows_x1 = MAX (rows_x1, q->box.x1);
          clear = q->box.x1 <= o->box.x0 + 0.1 * em;
        }
      if (words >= 3 && clear && rows_x1 > -G_MAXDOUBLE && o->box.x0 - rows_x1 < 2.0 * em)
        return TRUE;
    }
  return FALSE;
}

/* Whether a tall brace stands in a line of running text: three words or
 * more of full-size letters left of it, level with its middle, in one
 * chunk (the brace's middle is the math axis, on the text line that holds
 * an inline cases or \left\{ ... \right.; XeTeX's brace and rows can
 * come in the prose's chunk), on a line that is no display's
 * (display_line_with_words()). A cases display has only its left side
 * there, math or a word (\operatorname{sign}(x) = ...), or words on a
 * line of its own. An inline cases that starts a line has no words left
 * of it: the sentence running on right of its rows tells it
 * (prose_right_of_rows()). */
static gboolean
brace_in_running_text (const PageCtx *pc, const FmRect *brace)
{
  GArray *chunks = pc->chunks;
  const Glyph *g = pc->g;
  double cy = fm_rect_cy (brace), em = pc->body_em, line_x0 = G_MAXDOUBLE;
  gboolean words_left = FALSE;

  for (guint i = 0; i < chunks->len; i++)
    {
      const Chunk *o = &g_array_index (chunks, Chunk, i);
      int words = 0;
      if (o->is_number || o->box.x0 >= brace->x0 || o->box.y0 >= cy || o->box.y1 <= cy ||
          across_gutter (pc, fm_rect_cx (&o->box), fm_rect_cx (brace)))
        continue;
      line_x0 = MIN (line_x0, o->box.x0);
      for (int k = o->start; k < o->end; k++)
        words += full_size_word_start (g, o, k, em) && g[k].r.x1 <= brace->x0 && g[k].r.y0 < cy && g[k].r.y1 > cy;
      words_left = words_left || words >= 3;
    }
  return (words_left && !display_line_with_words (pc, line_x0, cy, em)) || prose_right_of_rows (pc, brace);
}

/* Whether chunk ch is a piece of a cases or \left\{ ... \right. set in a
 * text line (brace_in_running_text()): its rows, right of the brace and
 * less than 4 em from it, or its left side, ending less than 1.5 em
 * before it, within the brace's height. Its first row stands above the
 * text line and its left side between the lines' rows, both math only: a
 * false display each in CM, LM, Times, Palatino, Libertine, newtx,
 * XeLaTeX and LuaLaTeX (STIX Two, Libertinus) probes. */
static gboolean
inline_cases_piece (const PageCtx *pc, const Chunk *ch)
{
  GArray *chunks = pc->chunks;
  double cy = fm_rect_cy (&ch->box), em = pc->body_em;

  for (guint i = 0; i < chunks->len; i++)
    {
      const Chunk *b = &g_array_index (chunks, Chunk, i);
      FmRect brace;
      if (!chunk_cases_brace (pc, b, &brace) || cy <= brace.y0 || cy >= brace.y1)
        continue;
      if (!((ch->box.x0 >= brace.x0 - 0.1 * em && ch->box.x0 - brace.x1 < 4.0 * em) ||
            (ch->box.x1 <= brace.x0 + 0.1 * em && brace.x0 - ch->box.x1 < 1.5 * em)))
        continue;
      if (brace_in_running_text (pc, &brace))
        return TRUE;
    }
  return FALSE;
}

/* Whether running text follows the column of conditions that starts at
 * column_x right of brace: a text chunk starting after the column's
 * widest row, less than 2 em after it, level with the brace. A cases in a
 * text line (\begin{cases} or \left\{ ... \right. inside $...$) is
 * followed by the rest of its sentence; a cases display by nothing but its
 * number. (Without this the prose right of an inline cases at a line's
 * start was skipped as conditions and the cases taken for a display on a
 * short page: probes in CM, LM, Times, Palatino, Libertine, newtx,
 * XeLaTeX and LuaLaTeX.) */
static gboolean
prose_after_column (const PageCtx *pc, const FmRect *brace, double column_x, double em)
{
  GArray *chunks = pc->chunks;
  double column_x1 = column_x;

  for (guint i = 0; i < chunks->len; i++)
    {
      const Chunk *o = &g_array_index (chunks, Chunk, i);
      double cy = fm_rect_cy (&o->box);
      if (fabs (o->box.x0 - column_x) < 0.2 * em && cy > brace->y0 && cy < brace->y1)
        column_x1 = MAX (column_x1, o->box.x1);
    }
  for (guint i = 0; i < chunks->len; i++)
    {
      const Chunk *o = &g_array_index (chunks, Chunk, i);
      double cy = fm_rect_cy (&o->box);
      if (!o->is_number && o->n_text * 3 >= o->end - o->start && o->box.x0 >= column_x1 &&
          o->box.x0 - column_x1 < 2.0 * em && cy > brace->y0 && cy < brace->y1 &&
          !across_gutter (pc, fm_rect_cx (&o->box), column_x))
        return TRUE;
    }
  return FALSE;
}

/* The x where a column of conditions starts right of a tall cases brace of
 * chunk ch (\begin{cases} 1 & \text{if } x \in S \\ ...), or G_MAXDOUBLE:
 * two chunks or more starting at one x (0.2 em), their middles within
 * the brace's height and 0.8 em or more apart, less than 4 em right of it,
 * one of them with words (a third of its glyphs running text, as the
 * isolation test counts them; "otherwise" can be an upright word glued to
 * the period).
 * Their words made the chunk holding the brace no display (a text chunk
 * level with it, its line reaching running text) wherever the text margins
 * are unknown - a short last page - and the line-group rule cannot help:
 * 14 false inline regions and a missed display in one formula on detect dev
 * 1139 (CM, XeLaTeX, LuaLaTeX; the CM one fixed), 7 of 8 such displays on a
 * probe page in CM, Times, XeLaTeX and LuaLaTeX LM (6 found now, LuaLaTeX's
 * first still not). A paragraph has no brace. */
static double
cases_condition_column (const PageCtx *pc, const Chunk *ch)
{
  GArray *chunks = pc->chunks;
  FmRect brace;

  if (!chunk_cases_brace (pc, ch, &brace) || brace_in_running_text (pc, &brace))
    return G_MAXDOUBLE;
  for (guint i = 0; i < chunks->len; i++)
    {
      const Chunk *o = &g_array_index (chunks, Chunk, i);
      double cy = fm_rect_cy (&o->box);
      if (o->is_number || o->n_text * 3 < o->end - o->start || o->box.x0 < brace.x1 ||
          o->box.x0 - brace.x1 > 4.0 * o->em || cy < brace.y0 || cy > brace.y1)
        continue;
      for (guint k = 0; k < chunks->len; k++)
        {
          const Chunk *q = &g_array_index (chunks, Chunk, k);
          double qy = fm_rect_cy (&q->box);
          if (k != i && !q->is_number && fabs (q->box.x0 - o->box.x0) < 0.2 * o->em && fabs (qy - cy) > 0.8 * o->em && qy > brace.y0 &&
              qy < brace.y1)
            return prose_after_column (pc, &brace, o->box.x0, o->em) ? G_MAXDOUBLE : o->box.x0 - 0.1 * o->em;
        }
    }
  return G_MAXDOUBLE;
}

/* Display candidates: math-dominated chunks with no text chunk beside them
 * (with the full rule, also clear of the text margins found first). */
static void
display_chunks (PageCtx *pc)
{
  const Glyph *g = pc->g;
  GArray *chunks = pc->chunks;
  FmDetectRule rule = pc->opts.rule;

  if (rule == FM_DETECT_RULE_FULL)
    find_margins (chunks, pc, &pc->margins);
  for (guint i = 0; i < chunks->len; i++)
    {
      Chunk *ch = &g_array_index (chunks, Chunk, i);
      int total = ch->end - ch->start, script_text = 0;
      gboolean isolated = TRUE, piece;
      double line_x0, line_x1, column_x = G_MAXDOUBLE;

      /* (words in scripts, \prod_{i\text{ even}} or F_{\text{total}},
       * are a display's own: running text is full size) */
      /* (a short chunk all of script size, a \substack's second row "n
       * odd" under a sum, has its chunk em at script size: its letters are
       * measured against the body's; a footnote's line is longer) */
      double script_em = (rule == FM_DETECT_RULE_FULL && total <= 12 && ch->em_max < 0.81 * pc->body_em) ? pc->body_em : ch->em;
      for (int k = ch->start; k < ch->end; k++)
        script_text += g[k].cls == CLS_TEXT && g[k].size < 0.8 * script_em;

      if (ch->is_number || (ch->n_strong + ch->n_weak == 0 &&
                            (rule != FM_DETECT_RULE_FULL || !chunk_is_decimal (g, ch))))
        continue;
      if (rule == FM_DETECT_RULE_PDFMATHTRANSLATE)
        {
          if (ch->n_text > 0)
            continue;
        }
      else if (ch->n_text - script_text > MAX (1, total / 6))
        continue;
      if (rule == FM_DETECT_RULE_FULL)
        column_x = cases_condition_column (pc, ch);
      for (guint j = 0; j < chunks->len && isolated; j++)
        {
          Chunk *o = &g_array_index (chunks, Chunk, j);
          int ot = o->end - o->start;
          if (j == i || o->is_number || o->box.x0 >= column_x)
            continue;
          if (o->n_text * 3 < ot || across_gutter (pc, fm_rect_cx (&o->box), fm_rect_cx (&ch->box)) ||
              (rule == FM_DETECT_RULE_FULL && o->em_max < 0.81 * pc->body_em && v_overlap_enough (&o->box, &ch->box, 0.05) &&
               !v_overlap_enough (&o->box, &ch->box, 0.9)))
            continue;    /* not text, the other column's, or a script's words below or above */
          if (v_overlap_enough (&ch->box, &o->box, total <= 2 ? 0.15 : 0.5) &&
              fm_rect_h_gap (&ch->box, &o->box) < 2.0 * ch->em)
            isolated = FALSE;
        }
      if (isolated && rule == FM_DETECT_RULE_FULL && inline_cases_piece (pc, ch))
        isolated = FALSE;
      /* A lone script or radical sign that Poppler put on a line of its own
       * is a piece of an inline formula, not a display. */
      /* So is a script-sized piece (limits, scripts, fraction parts): both
       * may only join a display block that has a full-size chunk. */
      /* (OpenType math fonts scale scripts by their MATH table's
       * ScriptPercentScaleDown, 80 % in DejaVu Math: a script there is
       * 0.8 em of the text, which Poppler's rounded sizes put on either
       * side of 0.8) */
      piece = (total <= 2 && ch->box.y1 - ch->box.y0 < 0.6 * pc->body_em) || ch->em_max < 0.81 * pc->body_em;
      /* A display has its line to itself: walking along the line from it
       * over gaps narrower than a column gap must not reach running text
       * (Poppler may have listed the rest of the line as other chunks). */
      /* (a piece's letters are script size: measured against the body's
       * em, an upright or misread letter of a limit, \bigcup_{\lambda \in
       * I}, is no running text) */
      line_x0 = ch->box.x0;
      line_x1 = ch->box.x1;
      if (isolated && rule == FM_DETECT_RULE_FULL &&
          line_reaches_text (g, pc->n, &ch->box, piece ? MAX (ch->em, pc->body_em) : ch->em, pc, column_x, &line_x0,
                             &line_x1))
        isolated = FALSE;
      /* Displays are indented or centred; a math-only line flush with the
       * text margin above it is the end of a paragraph. */
      for (guint j = 0; j < chunks->len && isolated; j++)
        {
          Chunk *o = &g_array_index (chunks, Chunk, j);
          /* the line above: its middle above this chunk's top (OpenType
           * fonts' boxes of neighbouring lines overlap) */
          if (o->n_text * 3 < o->end - o->start || 0.5 * (o->box.y0 + o->box.y1) > ch->box.y0 ||
              ch->box.y0 - o->box.y1 > 1.0 * ch->em)
            continue;
          /* the line's extent: Poppler may list its first glyph apart; the
           * line above may be cut into chunks at formulas and wide spaces */
          if (fabs (o->box.x0 - line_x0) < 0.3 * ch->em)
            {
              double above_x1 = o->box.x1;
              for (guint k = 0; k < chunks->len; k++)
                {
                  const Chunk *q = &g_array_index (chunks, Chunk, k);
                  if (v_overlap_enough (&q->box, &o->box, 0.5) && q->box.x0 >= o->box.x0 &&
                      !across_gutter (pc, fm_rect_cx (&q->box), fm_rect_cx (&o->box)))
                    above_x1 = MAX (above_x1, q->box.x1);
                }
              if (line_x1 < above_x1 - 2 * ch->em)
                isolated = FALSE;
            }
        }
      /* ... and the end of a paragraph whose last line holds only a
       * formula starts at the column's left margin and stops short of the
       * right one; a display is centred or indented (a display too wide
       * for that reaches the right margin as well) */
      if (isolated && rule == FM_DETECT_RULE_FULL)
        {
          const Margins *m = &pc->margins;
          int col = column_of (pc, 0.5 * (line_x0 + line_x1));
          if (m->known[col] && fabs (line_x0 - m->left[col]) < 0.5 * ch->em &&
              m->right[col] - line_x1 > 2.0 * ch->em)
            isolated = FALSE;
        }
      ch->is_display = isolated && !piece;
      ch->is_display_piece = isolated && piece;
      if (g_getenv ("FM_DETECT_DEBUG") && isolated)
        g_printerr ("display chunk %u%s line [%.1f %.1f]\n", i, piece ? " (piece)" : "", line_x0, line_x1);
    }
}

/* Tags of one word, \tag{Young}: amsmath sets them flush with the right
 * margin like a number, but chunk_text_matches_number() knows numbers
 * only, so the tag joined its display's line, which then reached the
 * margin and was taken for a line of text (the display lost) or kept the
 * tag inside the display's box. A chunk that is one bracketed word of
 * letters, ending at its column's right margin, 1.5 em or more after the
 * rest of its line, and that rest mostly math, is the display's number. */
static void
word_tags (PageCtx *pc)
{
  const Glyph *g = pc->g;

  for (guint i = 0; i < pc->chunks->len; i++)
    {
      Chunk *ch = &g_array_index (pc->chunks, Chunk, i);
      int n = ch->end - ch->start, col = column_of (pc, fm_rect_cx (&ch->box)), math = 0, text = 0, total = 0;
      gboolean word = n >= 3 && n <= 14 && ch->block == -1 && !ch->is_number;
      double gap = G_MAXDOUBLE;

      if (!word || !pc->margins.known[col] || fabs (pc->margins.right[col] - ch->box.x1) > 0.5 * ch->em ||
          !((g[ch->start].c == '(' && g[ch->end - 1].c == ')') || (g[ch->start].c == '[' && g[ch->end - 1].c == ']')))
        continue;
      for (int k = ch->start + 1; k < ch->end - 1 && word; k++)
        word = g_unichar_isalpha (g[k].c) && !g[k].space_before;
      for (guint j = 0; j < pc->chunks->len && word; j++)
        {
          const Chunk *o = &g_array_index (pc->chunks, Chunk, j);
          if (j == i || o->box.x1 > ch->box.x0 || !v_overlap_enough (&o->box, &ch->box, 0.5) ||
              across_gutter (pc, fm_rect_cx (&o->box), fm_rect_cx (&ch->box)))
            continue;
          gap = MIN (gap, ch->box.x0 - o->box.x1);
          math += o->n_strong + o->n_weak;
          text += o->n_text;
          total += o->end - o->start;
        }
      if (word && gap >= 1.5 * ch->em && gap < G_MAXDOUBLE && math >= 2 && text * 4 <= total)
        ch->is_number = TRUE;
    }
}

/* Whether glyph k may stand beside a sign that words_display_line()
 * counts: a math letter or symbol, a digit, a bracket. */
static gboolean
sign_neighbour (const Glyph *g, int k)
{
  gunichar c = g[k].c;
  return g[k].cls != CLS_TEXT || g_unichar_isdigit (c) || c == '(' || c == ')' || c == '[' || c == ']';
}

/* Whether g[k] is a math binary sign that joins operands: -, +, x, dot. */
static gboolean
binary_sign (const Glyph *g, int k)
{
  gunichar c = g[k].c;
  return g[k].cls != CLS_TEXT && (c == 0x2212 || c == '-' || c == '+' || c == 0x00D7 || c == 0x00B7 || c == 0x22C5);
}

/* Whether the word phrase of glyphs [k, e) of chunk ch is an operand: a
 * binary sign right before or after it, brackets around it aside -
 * (\text{births}) - (\text{deaths}), (\text{rate in} \times ...). */
static gboolean
operand_phrase (const Glyph *g, const Chunk *ch, int k, int e)
{
  while (k < e && !g_unichar_isalpha (g[k].c))
    k++;
  while (e > k && !g_unichar_isalpha (g[e - 1].c))
    e--;
  for (k--; k >= ch->start && (g[k].c == '(' || g[k].c == '['); k--)
    ;
  for (; e < ch->end && (g[e].c == ')' || g[e].c == ']'); e++)
    ;
  return (k >= ch->start && binary_sign (g, k)) || (e < ch->end && binary_sign (g, e));
}

/* Whether the leftmost chunk of a line opens with a phrase of one to three
 * lower-case words and, a word space after it, a relation sign with two
 * math glyphs or more after it on its chunk: a display that names its
 * quantity, \text{area under curve} = \Delta x = \int_{t_1}^{t_2} v\,dt
 * (pdf-e2e 1073: a display in CM, where its integral is a chunk of its
 * own, an inline piece in XeLaTeX, LuaLaTeX and STIX Two, whose line is
 * 61 % letters). A code line does ("flag = x == y" in verbatim, whose
 * '==' is two weak glyphs: review of e2e12s), so one math-font glyph at
 * least must follow. */
static gboolean
phrase_then_relation (const PageCtx *pc, const int *members, int nm)
{
  const Glyph *g = pc->g;
  const Chunk *ch = &g_array_index (pc->chunks, Chunk, members[0]);
  int k, words = 0, math = 0, strong = 0;

  for (int m = 1; m < nm; m++)
    if (g_array_index (pc->chunks, Chunk, members[m]).box.x0 < ch->box.x0)
      ch = &g_array_index (pc->chunks, Chunk, members[m]);
  if (ch->end <= ch->start || !g_unichar_islower (g[ch->start].c))
    return FALSE;
  for (k = ch->start; k < ch->end && g[k].cls == CLS_TEXT && g_unichar_isalpha (g[k].c) && !g[k].bold; k++)
    words += k == ch->start || g[k].space_before;
  if (words > 3 || k == ch->end || !g[k].space_before || !is_relation_sign (g[k].c))
    return FALSE;
  for (k++; k < ch->end; k++)
    {
      math += g[k].cls == CLS_STRONG || g[k].cls == CLS_WEAK;
      strong += g[k].cls == CLS_STRONG;
    }
  return math >= 2 && strong > 0;
}

/* Whether glyphs [from, to) spell a caption's name. A label that is no
 * caption's needs words after it to be one: \[\text{Case 1: } x > 0\]
 * and \[\text{Theorem 2. } a^2 + b^2 = c^2\] are displays (review of
 * detectfix11: both had become inline "1: x > 0") */
static gboolean
caption_name (const Glyph *g, int from, int to)
{
  static const char *const names[] = { "Figure", "Fig", "Table", "Tab", "Algorithm", "Listing", "Scheme", "Chart" };
  char word[GLYPH_WORD_SIZE];

  glyph_word (g, from, to, word);
  for (guint i = 0; i < G_N_ELEMENTS (names); i++)
    if (strcmp (word, names[i]) == 0)
      return TRUE;
  return FALSE;
}

/* Whether a line (chunks members) is a phrase of words, after a label of
 * digits and points, then a word space and one formula with no word after
 * it, with 40 % of its glyphs text letters or more. Opening with a capital
 * or a label it is a centred heading, \textsc{2. The case $n = 1$},
 * "Lemma $k = 3$" (4-7 text letters of 8-12 glyphs: under
 * display_lines_with_text()'s 60 %); opening with a lower-case word
 * (*lower) it is a display that names its formula, \text{practical
 * resonance frequency } \omega = \sqrt{\omega_0^2 - 2p^2} (over the 60 %): no
 * heading, caption or sentence starts so, and an abstract's line has words
 * after its math. A display of words has its words as operands, a sign
 * right after them (\text{rate in} &= 5, \text{Var}(X)), or words after
 * its math; one that opens with an operator name set in the text font
 * (Times' \operatorname{ph}\,a &= \mathrm{erfc}(z-6) + ...) is mostly math.
 * *labelled: the phrase opens with a label of digits and points or is
 * mostly bold - what tells a heading from a display that opens with a
 * capitalised word, \text{Maximize } z = 3x_1 + 2x_2 (heading_line()). */
static gboolean
phrase_then_formula (const PageCtx *pc, const int *members, int nm, gboolean *lower, gboolean *labelled)
{
  const Glyph *g = pc->g;
  const Chunk *ch = &g_array_index (pc->chunks, Chunk, members[0]), *next = NULL;
  int k, words = 0, text = 0, total = 0, letters = 0, bold = 0;

  *lower = FALSE;
  *labelled = FALSE;
  for (int m = 0; m < nm; m++)
    {
      const Chunk *o = &g_array_index (pc->chunks, Chunk, members[m]);
      ch = o->box.x0 < ch->box.x0 ? o : ch;
      text += o->n_text;
      total += o->end - o->start;
    }
  if (text * 5 < total * 2)
    return FALSE;
  for (int m = 0; m < nm; m++)
    {
      const Chunk *o = &g_array_index (pc->chunks, Chunk, members[m]);
      for (int q = o->start; q < o->end && o != ch; q++)
        if (g[q].cls == CLS_TEXT && g_unichar_isalpha (g[q].c))
          return FALSE;
      if (o != ch && (next == NULL || o->box.x0 < next->box.x0))
        next = o;
    }
  for (k = ch->start; k < ch->end && (g_unichar_isdigit (g[k].c) || g[k].c == '.'); k++)
    ;
  *lower = k == ch->start && k < ch->end && g_unichar_islower (g[k].c);
  *labelled = k > ch->start;
  if (k == ch->start)
    {
      /* a caption's label, "Figure 2: The map $g(t) = t^2$", "Table 1.":
       * a capitalised word, a number, a colon or a point, then a word
       * space - no display opens so (detectfix11) */
      int q = k + 1, d;
      while (q < ch->end && g[q].cls == CLS_TEXT && g_unichar_isalpha (g[q].c) && !g[q].space_before)
        q++;
      for (d = q; d < ch->end && (g_unichar_isdigit (g[d].c) || g[d].c == '.') && (d == q) == g[d].space_before; d++)
        ;
      d += d < ch->end && d > q && g[d].c == ':';
      if (g[k].cls == CLS_TEXT && g_unichar_isupper (g[k].c) && d > q + 1 && g_unichar_isdigit (g[q].c) &&
          (g[d - 1].c == ':' || g[d - 1].c == '.') && d < ch->end && g[d].space_before &&
          (caption_name (g, k, q) || (g[d].cls == CLS_TEXT && g_unichar_isalpha (g[d].c))))
        {
          *labelled = TRUE;
          words = 1;
          k = d;
        }
    }
  for (; k < ch->end && g[k].cls == CLS_TEXT && g_unichar_isalpha (g[k].c); k++)
    {
      words += k == ch->start || g[k].space_before;
      letters++;
      bold += g[k].bold;
    }
  *labelled = *labelled || (letters > 0 && 2 * bold > letters);
  if (k == ch->end && next != NULL)
    k = (int) (ch = next)->start;
  if (words == 0 || k == ch->end || !g[k].space_before || is_operator (g[k].c) || is_relation_sign (g[k].c))
    return FALSE;
  for (; k < ch->end; k++)
    if (g[k].cls == CLS_TEXT && g_unichar_isalpha (g[k].c))
      return FALSE;
  return TRUE;
}

/* Whether a line (chunks members, extent ext) is a centred heading with a
 * formula in it, \textsc{2. The case $n = 1$}, \textbf{Lemma 1.} $k = 3$:
 * a phrase that opens with a capital then one formula (phrase_then_formula())
 * and a heading's marks - a label or a bold face, one text line high (no
 * big operator, fraction or tall delimiter). A capital alone is no such
 * mark: \[\text{Maximize } z = 3x_1 + 2x_2\], \text{Area } A = \pi r^2
 * with its (1), \text{Total } T = \sum_{i=1}^n t_i are displays
 * (detectfix9). */
static gboolean
heading_line (const PageCtx *pc, const int *members, int nm, const FmRect *ext, double em)
{
  gboolean lower, labelled;

  return phrase_then_formula (pc, members, nm, &lower, &labelled) && !lower && labelled &&
         ext->y1 - ext->y0 <= 1.6 * em;
}

/* Whether chunk ch is one or two big delimiters alone (a \Bigl( set as a
 * chunk of its own; a nameless CMEX's come as control characters). */
static gboolean
delimiter_chunk (const Glyph *g, const Chunk *ch)
{
  gboolean all = ch->end - ch->start <= 2;

  for (int k = ch->start; k < ch->end && all; k++)
    all = is_delimiter_char (g[k].c) || g[k].c < 0x20;
  return all;
}

/* Whether a set-off line of one chunk that is mostly words is a display
 * made of words: \frac{dx}{dt} = (\text{rate in} \times \text{concentration
 * in}) - ..., \text{change of } x = (\text{births}) - (\text{deaths}). Its
 * words come in short phrases (at most three words) between math: a sign
 * of operation or relation with math, a digit or a bracket on one side
 * (\text{rate in} &= 5, \text{volume} + (\text{rate in} - ...)),
 * and a math letter or sign that is no punctuation. A centred line of prose
 * (a caption, a \begin{center} line with an inline formula) runs four words
 * or more together. Two chunks: a formula and a phrase a \quad after it
 * (f = g \quad \text{almost everywhere}); more only when each holds a
 * counted sign, a row of equations \qquad apart (\text{rate in} = 5
 * \qquad \text{rate out} = 3 \qquad ...): a table row has a gap between
 * each two cells, and cells of words.
 * Short prose with inline math is as dense (a caption "Table 1: The sign
 * of $x$ and $y = 2$", a heading "1. The case $n = 1$", a list item, an
 * abstract's line; detectfix8): the line must also open with a math
 * letter (x = \#\text{ of hares}), not a word or a list label, or one of
 * its phrases must be an operand of a binary sign; text-font signs (the
 * ':' of a caption, the '-' of "p-adic", a list's dash) count for
 * nothing, and headings are larger than the body. */
static gboolean
words_display_line (const PageCtx *pc, const int *members, int nm, double em)
{
  const Glyph *g = pc->g;
  FmRect ext = g_array_index (pc->chunks, Chunk, members[0]).box;
  int run = 0, longest = 0, ops = 0, math = 0, bold = 0, n_letters = 0, first = 0, cells = 0;
  gboolean operand = FALSE, opens_math, named, lower, labelled;

  /* (a \Bigl( or \Bigr] is a chunk of its own, a nameless CMEX's as a
   * control character: no cell of a row) */
  for (int m = 0; m < nm; m++)
    cells += !delimiter_chunk (g, &g_array_index (pc->chunks, Chunk, members[m]));
  if (cells > 6)
    return FALSE;
  for (int m = 0; m < nm; m++)
    {
      const Chunk *ch = &g_array_index (pc->chunks, Chunk, members[m]);
      fm_rect_union (&ext, &ch->box);
      /* (the median: a title is large all through, a display's big
       * operator or delimiter is one glyph) */
      if (ch->em > 1.15 * pc->body_em)
        return FALSE;
      if (ch->box.x0 < g_array_index (pc->chunks, Chunk, members[first]).box.x0)
        first = m;
    }
  if (!line_is_set_off (pc, column_of (pc, fm_rect_cx (&ext)), &ext, em))
    return FALSE;
  {
    /* the leftmost chunk's first glyph in Poppler's text order, not its
     * leftmost box: the order runs left to right along the line and puts
     * an accent after its letter (\hat{x} = \text{number of hares} opens
     * with x, pdfLaTeX CM, tidy18); they differ where a glyph reaches
     * left of the first one's box, a wide accent or a slanted integral,
     * no letter that opens the line */
    const Chunk *ch = &g_array_index (pc->chunks, Chunk, members[first]);
    opens_math = g[ch->start].cls != CLS_TEXT && g_unichar_isalpha (g[ch->start].c);
  }
  /* (a named display's formula is taller than a text line, a radical or
   * a fraction: 1.36-1.43 em on dev 1124 and the fixtures; a centred line
   * of prose, "given that $x = 2$", "see also $n = 1$", is one text line
   * high, 0.89 em - detectfix9). The height takes in the chunks stacked
   * on the line: Poppler lists a display fraction's numerator and
   * denominator as lines of their own when the text font is not the math
   * font's (Times' \text{average speed } \bar v = \frac{\Delta x}{\Delta t}
   * left a line 0.9 em high; detectfix11) */
  named = phrase_then_formula (pc, members, nm, &lower, &labelled) && lower;
  if (named)
    {
      const Chunk **row = g_new (const Chunk *, pc->chunks->len + 1);
      FmRect tall = ext;
      int n;

      for (int m = 0; m < nm; m++)
        row[m] = &g_array_index (pc->chunks, Chunk, members[m]);
      n = stacked_on_line (pc, members, nm, em, row);
      for (int k = nm; k < n; k++)
        fm_rect_union (&tall, &row[k]->box);
      named = tall.y1 - tall.y0 >= 1.2 * em;
      g_free (row);
    }
  /* (or a few lower-case words straight into a relation, e2e12s) */
  named = named || phrase_then_relation (pc, members, nm);
  for (int m = 0; m < nm; m++)
    {
      const Chunk *ch = &g_array_index (pc->chunks, Chunk, members[m]);
      int ops_before = ops;
      for (int k = ch->start; k < ch->end;)
        {
          /* one word: glyphs up to the next space */
          int e = k + 1, letters = 0, other = 0;
          while (e < ch->end && !g[e].space_before)
            e++;
          for (int q = k; q < e; q++)
            {
              gboolean sign = is_operator (g[q].c) && g[q].c != '/';
              gboolean inner = q > ch->start && q < ch->end - 1;
              if (g[q].cls == CLS_TEXT && g_unichar_isalpha (g[q].c))
                {
                  letters++;
                  bold += g[q].bold;
                }
              else if (sign || ((g[q].cls == CLS_STRONG || g[q].cls == CLS_WEAK) && g_unichar_isalnum (g[q].c)))
                other++;
              /* (a sign inside a word between letters is a hyphen) */
              ops += sign && inner && g[q].cls != CLS_TEXT && (sign_neighbour (g, q - 1) || sign_neighbour (g, q + 1)) &&
                     !(q > k && q < e - 1 && g_unichar_isalpha (g[q - 1].c) && g_unichar_isalpha (g[q + 1].c));
              math += (g[q].cls == CLS_STRONG || g[q].cls == CLS_WEAK) && !is_sentence_punct (g[q].c) && g[q].c != ',';
            }
          n_letters += letters;
          run = (letters > 0 && other == 0) ? run + 1 : 0;
          longest = MAX (longest, run);
          operand = operand || (letters > 0 && other == 0 && operand_phrase (g, ch, k, e));
          k = e;
        }
      if (cells > 2 && ops == ops_before && !named && !delimiter_chunk (g, ch))
        return FALSE;
    }
  /* (a heading in bold, "The case $p = 2$", is no display) */
  /* (three chunks or more, each with its counted sign, are a row of
   * equations whatever their first word: no prose line has such gaps) */
  return ops >= 1 && math >= 1 && longest <= 3 && 2 * bold <= n_letters && (opens_math || operand || cells > 2 || named);
}

/* The chunks stacked on a display line (stacked_on_line()) into parts:
 * its fractions' parts and limits, which Poppler lists as lines of their
 * own (the denominator of \text{FWHM} = \frac{f_o}{Q}, the numerator x^2
 * of \operatorname{Ai}\,\lambda = \frac{x^{2}}{\theta+1} \mathrm{cn}\,t,
 * level with no words and not all of them display chunks). Returns how
 * many. */
static int
display_line_parts (const PageCtx *pc, const int *members, int nm, double em, int *parts)
{
  const Chunk **row = g_new (const Chunk *, pc->chunks->len + 1);
  int n;

  for (int m = 0; m < nm; m++)
    row[m] = &g_array_index (pc->chunks, Chunk, members[m]);
  n = stacked_on_line (pc, members, nm, em, row) - nm;
  for (int k = 0; k < n; k++)
    parts[k] = (int) (row[nm + k] - (const Chunk *) (gconstpointer) pc->chunks->data);
  g_free (row);
  return n;
}

/* Whether c is a big operator that TeX centres on the math axis. */
static gboolean
big_operator_char (gunichar c)
{
  return c == 0x2211 || c == 0x220F || c == 0x2210 || c == 0x222B || c == 0x222C || c == 0x222E || c == 0x22C3 ||
         c == 0x22C2 || c == 0x2A01 || c == 0x2A02;
}

/* The middle of chunk ch's line: the median of its glyphs' vertical
 * middles - or, when the chunk holds a big operator 1.3 em tall or more
 * (a display-style sum or integral) near it, that glyph's middle, which
 * TeX centres on the math axis (not any tall glyph box: a Latin Modern
 * chunk of "\dfrac{n+1}{2} is the median rank" holds one 2 em tall whose
 * middle is above the line's). The median of a chunk of a few glyphs can lie
 * in a fraction's numerator: CM and Latin Modern put "\sum x_i" of an
 * inline \displaystyle\sum_{i=1}^{n}\frac{x_i}{n} in one chunk, its median
 * two-thirds up in the numerator, and the words of the line, 0.45 em
 * below it, stopped counting as its prose (text_on_line()): a centred or
 * quoted prose line became one display (cls-sumfrac). */
static double
chunk_mid_y (const Glyph *g, const Chunk *ch)
{
  int n = ch->end - ch->start, tallest = -1;
  double *v = g_new (double, MAX (n, 1)), m;

  for (int k = 0; k < n; k++)
    {
      const FmRect *r = &g[ch->start + k].r;
      v[k] = fm_rect_cy (r);
      if (big_operator_char (g[ch->start + k].c) && r->y1 - r->y0 >= 1.3 * ch->em && (tallest < 0 || r->y1 - r->y0 > g[tallest].r.y1 - g[tallest].r.y0))
        tallest = ch->start + k;
    }
  m = fm_median (v, n, fm_rect_cy (&ch->box));
  /* (within 0.75 em of the median: a chunk can reach into the next line's
   * sum, "\dfrac{n+1}{2}" over the line below's \displaystyle\sum in a
   * quote, Latin Modern) */
  if (tallest >= 0 && fabs (fm_rect_cy (&g[tallest].r) - m) < 0.75 * ch->em)
    m = fm_rect_cy (&g[tallest].r);
  g_free (v);
  return m;
}

/* The running-text letters of chunk o on the line whose middle is mid
 * that are a set's condition: after the separator (':' or '|' of a math
 * face) inside a brace pair '{' ... '}' of a math face that closes in the
 * chunk. U = \{ p \in M : h \text{ is a
 * local diffeomorphism at } p \}, W = \{x \in |X| : f \text{ is Gorenstein
 * at }x\} (the corpus, fresh detect 1092) are mostly words, so a centred
 * display line of them was prose with two inline formulas; prose sets no
 * math-face braces around its words. */
static int
set_condition_words (const Glyph *g, const Chunk *o, double mid, double em)
{
  int n = 0, pending = 0, depth = 0;
  gboolean condition = FALSE;

  for (int k = o->start; k < o->end; k++)
    {
      gunichar c = g[k].c;
      gboolean math_face = g[k].font == FM_FONT_MATH;

      if (math_face && c == '{')
        {
          /* (a nested pair ends the outer condition: none is counted) */
          depth++;
          condition = FALSE;
          pending = 0;
        }
      else if (math_face && c == '}' && depth > 0)
        {
          n += condition ? pending : 0;
          depth--;
          condition = FALSE;
          pending = 0;
        }
      else if (depth > 0 && !condition && g[k].cls != CLS_TEXT && (c == ':' || c == 0x2236 || c == '|' || c == 0x2223))
        condition = TRUE;
      else if (condition && g[k].cls == CLS_TEXT && fabs (fm_rect_cy (&g[k].r) - mid) < 0.4 * em)
        pending++;
    }
  return n;
}

/* The running-text letters of chunk o that stand on the line whose middle
 * is mid: letters raised or lowered by 0.4 em or more are the words of a
 * display-style fraction's numerator or denominator (v =
 * \frac{\text{circumference}}{T} = \frac{2\pi r}{T}: raised 0.6-0.7 em in CM,
 * txfonts, Bonum Math, where Poppler lists them in the line's chunks) and
 * read as math, not as the line's prose. */
static int
text_on_line (const Glyph *g, const Chunk *o, double mid, double em)
{
  int n = 0;

  for (int k = o->start; k < o->end; k++)
    n += g[k].cls == CLS_TEXT && fabs (fm_rect_cy (&g[k].r) - mid) < 0.4 * em;
  return n - set_condition_words (g, o, mid, em);
}

/* The math of the chunks parts[0..n) stacked on a line whose middle is
 * mid (display_line_parts()): their math glyphs, and one for each that a
 * fraction bar separates from the line - the parts of
 * \frac{100\ \textup{cm}}{1\ \textup{m}} are digits and unit words, and
 * a line "\times ," between two such fractions (Palatino, Euler) has no
 * other math to be a display by. */
static int
stacked_math (const PageCtx *pc, const int *parts, int n, double mid)
{
  int math = 0;

  for (int k = 0; k < n; k++)
    {
      const Chunk *o = &g_array_index (pc->chunks, Chunk, parts[k]);
      gboolean above = fm_rect_cy (&o->box) < mid;
      math += o->n_strong + o->n_weak;
      math += (above ? bar_below_y (pc->ink, &o->box, o->em) : bar_above_y (pc->ink, &o->box, o->em)) >= 0;
    }
  return math;
}

/* Whether the line spanning ext (its chunks members[0..nm)) opens a cases
 * display with words before its brace, on a page whose text margins are
 * unknown (line_is_set_off() cannot tell): a member holds a tall left
 * brace (chunk_cases_brace()) and the words before it stand on a line
 * of their own, indented from the prose (display_line_with_words()).
 * "\text{for every } x \text{ we set } u(x) = \begin{cases}...": both
 * such displays of a short probe page were lost in CM, Times,
 * Libertine, XeLaTeX STIX Two and LuaLaTeX Libertinus. */
static gboolean
cases_words_line (const PageCtx *pc, const int *members, int nm, const FmRect *ext, double em)
{
  FmRect brace;

  if (pc->margins.known[column_of (pc, fm_rect_cx (ext))])
    return FALSE;
  for (int k = 0; k < nm; k++)
    if (chunk_cases_brace (pc, &g_array_index (pc->chunks, Chunk, members[k]), &brace) && brace.x0 > ext->x0 + 2.0 * em &&
        display_line_with_words (pc, ext->x0, fm_rect_cy (&brace), em))
      return TRUE;
  return FALSE;
}

/* Whether a line of n_text running-text letters in total glyphs is no
 * prose once the glyphs of the parts stacked on it (parts[0..n_parts),
 * off its middle) count among its own: "\text{FWHM} =
 * \frac{f_\textup{o}}{Q}." had 5 letters of 7 glyphs without its
 * fraction's parts, over display_lines_with_text()'s 3/5, and its display
 * and number were lost (XeLaTeX, LuaLaTeX STIX Two, detect dev 1157).
 * Asked after display_then_remark(), which takes a remark's line with
 * its parts as it will (cls-remarks). */
static gboolean
words_over_parts (const PageCtx *pc, const int *parts, int n_parts, int n_text, int total)
{
  for (int k = 0; k < n_parts; k++)
    total += g_array_index (pc->chunks, Chunk, parts[k]).end - g_array_index (pc->chunks, Chunk, parts[k]).start;
  return n_parts > 0 && n_text * 5 <= total * 3;
}

/* Display lines with text in them: a chunk with math whose whole line is
 * set off like a display (clear of both margins, centred or indented) and
 * is not mostly text makes that line a display, text chunks and all. */
static void
display_lines_with_text (PageCtx *pc)
{
  const Glyph *g = pc->g;
  GArray *chunks = pc->chunks;
  int *members = g_new (int, chunks->len + 1);
  int *parts = g_new (int, chunks->len + 1);

  for (guint i = 0; i < chunks->len; i++)
    {
      Chunk *ch = &g_array_index (chunks, Chunk, i);
      FmRect ext;
      int nm, n_parts = 0, n_text = 0, total = 0, math = 0;
      double mid;
      gboolean all_display = TRUE, set_off, parts_over;
      /* a remark's line may hold no math of its own: a fraction's rows
       * are above and below it (display_then_remark()) */
      gboolean remark_seed = (g[ch->start].c == '(' || g[ch->start].c == '[') && ch->end - ch->start <= 60;

      /* full size: footnotes are set off by their own indent */
      if (ch->is_number || (ch->n_strong + ch->n_weak == 0 && !remark_seed) || ch->em_max < 0.9 * pc->body_em)
        continue;
      nm = line_group (chunks, i, pc, members, &ext);
      mid = chunk_mid_y (g, ch);
      for (int k = 0; k < nm; k++)
        {
          const Chunk *o = &g_array_index (chunks, Chunk, members[k]);
          n_text += text_on_line (g, o, mid, ch->em);
          total += o->end - o->start;
          math += o->n_strong + o->n_weak;
          all_display &= o->is_display;
        }
      if (all_display)
        continue;
      /* (the parts stacked on the line count: a fraction's words) */
      n_parts = display_line_parts (pc, members, nm, ch->em, parts);
      math += stacked_math (pc, parts, n_parts, mid);
      /* (formulas joined by words weigh their parts themselves: a long
       * condition after a \qquad is most of its line's glyphs) */
      set_off = math >= 2 &&
                ((n_text * 5 <= total * 3 && line_is_set_off (pc, column_of (pc, fm_rect_cx (&ext)), &ext, ch->em) &&
                  !heading_line (pc, members, nm, &ext, ch->em)) ||
                 formulas_joined_by_words (pc, members, nm, ch->em));
      set_off = set_off || words_display_line (pc, members, nm, ch->em);
      set_off = set_off || (math >= 2 && cases_words_line (pc, members, nm, &ext, ch->em));
      parts_over = words_over_parts (pc, parts, n_parts, n_text, total);
      if (!set_off && !display_then_remark (pc, members, nm, ch->em, parts, &n_parts))
        {
          /* (display_then_remark() wrote its own parts: the line's again) */
          if (!(math >= 2 && parts_over && line_is_set_off (pc, column_of (pc, fm_rect_cx (&ext)), &ext, ch->em) &&
                !heading_line (pc, members, nm, &ext, ch->em)))
            continue;
          n_parts = display_line_parts (pc, members, nm, ch->em, parts);
        }
      for (int k = 0; k < nm + n_parts; k++)
        {
          Chunk *o = &g_array_index (chunks, Chunk, k < nm ? members[k] : parts[k - nm]);
          o->is_display = TRUE;
          o->is_display_piece = FALSE;
        }
    }
  if (g_getenv ("FM_DETECT_DEBUG"))
    for (int col = 0; col < 2; col++)
      g_printerr ("margins col %d: %s [%.1f %.1f]\n", col, pc->margins.known[col] ? "known" : "unknown",
                  pc->margins.left[col], pc->margins.right[col]);
  g_free (members);
  g_free (parts);
}

/* Whether one of chunk o's full-size relation signs stands within tol em
 * of the same sign's x in chunk r. */
static gboolean
relation_aligned_within (const Glyph *g, const Chunk *o, const Chunk *r, double tol)
{
  for (int a = o->start; a < o->end; a++)
    if (is_relation_sign (g[a].c) && g[a].size >= 0.8 * o->em_max)
      for (int b = r->start; b < r->end; b++)
        if (g[b].c == g[a].c && fabs (g[b].r.x0 - g[a].r.x0) < tol * o->em && fabs (g[b].size - g[a].size) < 0.5)
          return TRUE;
  return FALSE;
}

/* Whether one of chunk o's full-size relation signs stands within 0.05 em
 * of the same sign's x in chunk r: aligned rows share their "=" to the
 * point. */
static gboolean
relation_aligned (const Glyph *g, const Chunk *o, const Chunk *r)
{
  return relation_aligned_within (g, o, r, 0.05);
}

/* The bottoms of the first and last full-size rows of display block b
 * (the bottoms of its body-size chunks' boxes, each a baseline plus the
 * font's descent); NAN when it has none, and where its top (bottom) chunk
 * is script-sized: a limit over a sum (\sum_{k=1}^{n} in an aligned row,
 * newtx and Libertine's boxes tight to its ink) leaves more room to the
 * row above than TeX's \lineskip and \jot put there. *top_row and
 * *bottom_row (unless NULL) get those rows' chunks. */
static void
block_rows (const PageCtx *pc, int b, double *first, double *last, const Chunk **top_row, const Chunk **bottom_row)
{
  const Chunk *top = NULL, *bottom = NULL, *first_row = NULL, *last_row = NULL;

  for (guint i = 0; i < pc->chunks->len; i++)
    {
      const Chunk *o = &g_array_index (pc->chunks, Chunk, i);
      if (o->block != b)
        continue;
      top = top == NULL || o->box.y0 < top->box.y0 ? o : top;
      bottom = bottom == NULL || o->box.y1 > bottom->box.y1 ? o : bottom;
      if (o->em < 0.9 * pc->body_em)
        continue;
      first_row = first_row == NULL || o->box.y1 < first_row->box.y1 ? o : first_row;
      last_row = last_row == NULL || o->box.y1 > last_row->box.y1 ? o : last_row;
    }
  if (top != NULL && top->em < 0.9 * pc->body_em)
    first_row = NULL;
  if (bottom != NULL && bottom->em < 0.9 * pc->body_em)
    last_row = NULL;
  *first = first_row != NULL ? first_row->box.y1 : NAN;
  *last = last_row != NULL ? last_row->box.y1 : NAN;
  if (top_row != NULL)
    *top_row = first_row;
  if (bottom_row != NULL)
    *bottom_row = last_row;
}

/* Whether a full-size relation sign of chunk r stands at the x of the
 * same sign in a chunk of display block b, either way (relation_aligned()):
 * the rows of one aligned, align or split display share their "=". */
static gboolean
relation_aligned_with_block (const PageCtx *pc, int b, const Chunk *r)
{
  for (guint i = 0; i < pc->chunks->len; i++)
    {
      const Chunk *o = &g_array_index (pc->chunks, Chunk, i);
      if (o->block == b && o != r && (relation_aligned (pc->g, o, r) || relation_aligned (pc->g, r, o)))
        return TRUE;
    }
  return FALSE;
}

/* The equation number level with row (half its height or more in the
 * row's box, same column), or NULL. */
static const Chunk *
number_level_with (const PageCtx *pc, const Chunk *row)
{
  for (guint i = 0; i < pc->chunks->len; i++)
    {
      const Chunk *o = &g_array_index (pc->chunks, Chunk, i);
      if (o->is_number && v_overlap_enough (&o->box, &row->box, 0.5) &&
          !across_gutter (pc, fm_rect_cx (&o->box), fm_rect_cx (&row->box)))
        return o;
    }
  return NULL;
}

/* Whether an equation number stands level with the gap between the rows
 * upper and lower (its middle below the upper row's middle and above the
 * lower's): amsmath centres an equation's one number on its gathered or
 * split block, between its rows. */
static gboolean
number_between_rows (const PageCtx *pc, const Chunk *upper, const Chunk *lower)
{
  for (guint i = 0; i < pc->chunks->len; i++)
    {
      const Chunk *o = &g_array_index (pc->chunks, Chunk, i);
      double cy = fm_rect_cy (&o->box);
      if (o->is_number && cy > fm_rect_cy (&upper->box) && cy < fm_rect_cy (&lower->box) &&
          number_level_with (pc, upper) != o && number_level_with (pc, lower) != o &&
          !across_gutter (pc, fm_rect_cx (&o->box), fm_rect_cx (&upper->box)))
        return TRUE;
    }
  return FALSE;
}

/* Whether display block b, or chunk single where b < 0, has a full-size
 * row whose relation sign stands at the x of one in block a's rows. */
static gboolean
rows_share_relation (const PageCtx *pc, int a, int b, const Chunk *single)
{
  if (b < 0)
    return relation_aligned_with_block (pc, a, single);
  for (guint i = 0; i < pc->chunks->len; i++)
    {
      const Chunk *r = &g_array_index (pc->chunks, Chunk, i);
      if (r->block == b && r->em >= 0.9 * pc->body_em && relation_aligned_with_block (pc, a, r))
        return TRUE;
    }
  return FALSE;
}

/* The equation number level with a full-size row of display block b
 * (or, where b < 0, with chunk single), or NULL. */
static const Chunk *
number_of_display (const PageCtx *pc, int b, const Chunk *single)
{
  if (b < 0)
    return single->em >= 0.9 * pc->body_em ? number_level_with (pc, single) : NULL;
  for (guint i = 0; i < pc->chunks->len; i++)
    {
      const Chunk *r = &g_array_index (pc->chunks, Chunk, i), *n;
      if (r->block == b && r->em >= 0.9 * pc->body_em && (n = number_level_with (pc, r)) != NULL)
        return n;
    }
  return NULL;
}

/* Whether display block a and display block b (or, where b < 0, chunk
 * single), stacked less than 0.9 em apart, are two displays set back to
 * back (\[...\] \[...\], two equations in a row, no text line between).
 * Spacing alone does not tell them from one display's rows: TeX's
 * display skips put the boxes 0.6-0.87 em apart and the facing rows'
 * bottoms 1.8-3.1 em (probe 3940: CM, LM, newtx, Libertine, STIX Two;
 * XeLaTeX and LuaLaTeX LM and STIX Two Math), while rows set with \\[len]
 * are 1.5 em plus len apart with boxes 0.6-0.9 em apart (probes 3894,
 * 3941) - a rule on spacing alone cut aligned rows set with \\[2pt]
 * (detectleft). Two signs tell them: the rows of one aligned, align or
 * split display share their relation's x (relation_aligned()), which
 * keeps them together at any spacing, and two displays each carry their
 * own number (one equation's number stands level with one row or between
 * its rows), which parts them at any spacing. Neither said, the facing
 * full-size rows part at 1.75 em: gathered rows up to \\[2pt] (1.6-1.7
 * em) stay one display, rows farther apart were already cut where their
 * boxes are 0.9 em apart. */
static gboolean
displays_back_to_back (const PageCtx *pc, int a, int b, const Chunk *single)
{
  const FmRect *ra = &pc->blocks[a], *rb = b >= 0 ? &pc->blocks[b] : &single->box;
  const Chunk *a_top, *a_bottom, *b_top, *b_bottom, *upper, *lower, *n_a, *n_b;
  double a_rows[2], b_rows[2], gap = fm_rect_v_gap (ra, rb);
  gboolean a_above = fm_rect_cy (ra) < fm_rect_cy (rb);

  if (gap < 0.3 * pc->body_em || rows_share_relation (pc, a, b, single))
    return FALSE;
  n_a = number_of_display (pc, a, NULL);
  n_b = number_of_display (pc, b, single);
  if (n_a != NULL && n_b != NULL && n_a != n_b)
    return TRUE;
  block_rows (pc, a, &a_rows[0], &a_rows[1], &a_top, &a_bottom);
  if (b >= 0)
    block_rows (pc, b, &b_rows[0], &b_rows[1], &b_top, &b_bottom);
  else
    b_top = b_bottom = single->em >= 0.9 * pc->body_em ? single : NULL;
  upper = a_above ? a_bottom : b_bottom;
  lower = a_above ? b_top : a_top;
  if (upper == NULL || lower == NULL || gap < 0.6 * pc->body_em)
    return FALSE;
  return lower->box.y1 - upper->box.y1 >= 1.75 * pc->body_em && !number_between_rows (pc, upper, lower);
}

/* Display blocks: stacked or side-by-side display chunks. */
static void
display_blocks (PageCtx *pc)
{
  GArray *chunks = pc->chunks;

  pc->blocks = g_new0 (FmRect, chunks->len + 1);
  pc->block_first = g_new0 (int, chunks->len + 1);
  for (guint i = 0; i < chunks->len; i++)
    {
      Chunk *ch = &g_array_index (chunks, Chunk, i);
      int b = -1;

      if (!ch->is_display && !ch->is_display_piece)
        continue;
      for (int k = 0; k < pc->n_blocks && b < 0; k++)
        {
          const FmRect *bk = &pc->blocks[k];
          double em = ch->em;
          gboolean stacked = fm_rect_v_gap (bk, &ch->box) < 0.9 * em && fm_rect_h_gap (bk, &ch->box) < 0.5 * em &&
                             !(pc->opts.rule == FM_DETECT_RULE_FULL && displays_back_to_back (pc, k, -1, ch));
          gboolean beside = v_overlap_enough (bk, &ch->box, 0.3) && fm_rect_h_gap (bk, &ch->box) < 3.0 * em;
          if ((stacked || beside) && !across_gutter (pc, fm_rect_cx (bk), fm_rect_cx (&ch->box)))
            b = k;
        }
      if (b < 0)
        {
          b = pc->n_blocks++;
          pc->blocks[b] = ch->box;
          pc->block_first[b] = (int) i;
        }
      else
        fm_rect_union (&pc->blocks[b], &ch->box);
      ch->block = b;
    }
}

/* Whether the line of chunk i (line_group()) is set off from both margins
 * of its column; *nm (unless NULL) gets how many chunks the line has. */
static gboolean
chunk_line_set_off (const PageCtx *pc, guint i, int *nm)
{
  const Chunk *ch = &g_array_index (pc->chunks, Chunk, i);
  int *members = g_new (int, pc->chunks->len + 1);
  FmRect ext;
  gboolean ok;
  int n;

  n = line_group (pc->chunks, i, pc, members, &ext);
  if (nm != NULL)
    *nm = n;
  ok = line_is_set_off (pc, column_of (pc, fm_rect_cx (&ext)), &ext, ch->em);
  g_free (members);
  return ok;
}

/* Whether chunk i has its line to itself (no other chunk level with it
 * but numbers) and that line is set off from both margins of its column. */
static gboolean
row_alone_set_off (const PageCtx *pc, guint i)
{
  int nm;
  gboolean ok = chunk_line_set_off (pc, i, &nm);

  return ok && nm == 1;
}

/* Continuation lines: a long display broken over lines (aligned rows,
 * multline, a two-column page's narrow display) continues on a line that
 * starts with a binary operator or relation (TeX breaks a display before
 * one, "&\quad + ..."). Fraction rows push the lines more than 0.9 em
 * apart (up to 2 em between the main lines, before the fraction parts
 * join their blocks), and a continuation line flush with neither margin nor centred can
 * be taken for inline pieces: a math-dominated chunk starting with an
 * operator right below a display block joins it, and so do the chunks level
 * with it that are not running text. */
static void
continuation_lines (PageCtx *pc)
{
  const Glyph *g = pc->g;
  GArray *chunks = pc->chunks;
  FmRect *blocks = pc->blocks;

  for (gboolean changed = TRUE; changed;)
    {
      changed = FALSE;
      for (guint i = 0; i < chunks->len; i++)
        {
          Chunk *ch = &g_array_index (chunks, Chunk, i);
          int total = ch->end - ch->start, first = -1;
          gboolean worded = FALSE;
          if (ch->block >= 0 || ch->is_number || ch->em_max < 0.8 * pc->body_em)
            continue;
          for (int k = ch->start; k < ch->end; k++)
            if (g[k].size >= 0.8 * ch->em_max && (first < 0 || g[k].r.x0 < g[first].r.x0))
              first = k;
          /* a row of words opening with a relation, set off from both
           * margins, alone on its line: "&= (\text{circumference})/T"
           * of an aligned display (no line of running text opens with
           * one) */
          if (ch->n_text > MAX (1, total / 6) && running_text_chunk (ch))
            {
              worded = first >= 0 && is_operator (g[first].c) && !is_prefix_operator (g[first].c) &&
                       g[first].c != '/' && g[first].c != '|' && row_alone_set_off (pc, i);
              if (!worded)
                continue;
            }
          for (int b = 0; b < pc->n_blocks && first >= 0; b++)
            {
              gboolean below, level, whole = FALSE;
              if (blocks[b].x1 <= blocks[b].x0 || across_gutter (pc, fm_rect_cx (&blocks[b]), fm_rect_cx (&ch->box)))
                continue;
              /* a block of pieces only (a fraction's part, a limit) is
               * no display to continue */
              for (guint j = 0; j < chunks->len && !whole; j++)
                whole = g_array_index (chunks, Chunk, j).block == b && g_array_index (chunks, Chunk, j).is_display;
              if (!whole)
                continue;
              below = is_operator (g[first].c) && g[first].c != '/' && g[first].c != '|' &&
                      ch->box.y0 > blocks[b].y0 && fm_rect_v_gap (&blocks[b], &ch->box) < 2.0 * ch->em &&
                      ch->box.x0 > blocks[b].x0 - 0.5 * ch->em && ch->box.x0 < blocks[b].x1;
              /* beside it: math, or glyphs of no class touching it (a
               * big closing delimiter drawn from the extension font, the
               * "= 0" after a fraction) */
              level = ch->box.y0 >= blocks[b].y0 - 0.2 * ch->em && ch->box.y1 <= blocks[b].y1 + 0.2 * ch->em &&
                      fm_rect_h_gap (&blocks[b], &ch->box) < 3.0 * ch->em &&
                      (ch->n_strong + ch->n_weak > 0 ||
                       (ch->n_text == 0 && fm_rect_h_gap (&blocks[b], &ch->box) < 1.0 * ch->em));
              if (below && is_prefix_operator (g[first].c))
                below = FALSE;   /* a radical or sum starts a formula */
              if (worded)
                level = FALSE;
              if (below || level)
                {
                  /* a line of its own: running text on the line makes it
                   * an inline formula's part (a radical sign Poppler put
                   * on a chunk of its own); a worded row's own words are
                   * not running text */
                  double lx0, lx1;
                  if (!worded && line_reaches_text (g, pc->n, &ch->box, ch->em, pc, G_MAXDOUBLE, &lx0, &lx1))
                    continue;
                  fm_rect_union (&blocks[b], &ch->box);
                  ch->block = b;
                  ch->is_display = TRUE;
                  ch->is_display_piece = FALSE;
                  changed = TRUE;
                  break;
                }
            }
        }
    }
}

/* Whether display blocks a and b share their line farther apart than
 * "beside" allows, with nothing between them: one display line holds one
 * display, so formulas set \qquad\qquad apart on it (4 em) are one
 * display, not two. Words in the gap keep them apart, and so does an
 * equation number in neither block: two numbered equations side by side
 * (two minipages) put the left one's "(1)" there, and merged they were one
 * display over it. (Glyphs of no class there are the line's own: the "="
 * of a gathered a \quad = \quad b.) */
static gboolean
blocks_level_apart (const PageCtx *pc, int a, int b, double em)
{
  const FmRect *ra = &pc->blocks[a], *rb = &pc->blocks[b];
  double gx0 = MIN (ra->x1, rb->x1), gx1 = MAX (ra->x0, rb->x0);

  if (!v_overlap_enough (ra, rb, 0.5) || fm_rect_h_gap (ra, rb) >= 6.0 * em)
    return FALSE;
  for (guint i = 0; i < pc->chunks->len; i++)
    {
      const Chunk *o = &g_array_index (pc->chunks, Chunk, i);
      if (o->block != a && o->block != b &&
          (o->n_text > 0 || o->is_number) &&
          o->box.x1 > gx0 && o->box.x0 < gx1 &&
          (v_overlap_enough (&o->box, ra, 0.3) || v_overlap_enough (&o->box, rb, 0.3)))
        return FALSE;
    }
  return TRUE;
}

/* The first row of an aligned display that is no display line of its
 * own: \frac{\text{15 lb}}{\text{1 in}^2} &= \frac{68\ \textup{N}}{...} has
 * words in its fractions, and only the rows below, which open with "="
 * (block_continues()), made a block. A line right above such a block (less
 * than 1 em above it, within 3 em of its columns), of full size and set off
 * from both margins with the chunks level with it, is its first row:
 * running text above a display reaches a margin. One row per block, as the
 * block then starts with it. Returns whether a row joined. */
static gboolean
first_rows_above (PageCtx *pc)
{
  GArray *chunks = pc->chunks;
  FmRect *blocks = pc->blocks;
  int *members = g_new (int, chunks->len + 1);
  gboolean any = FALSE;

  for (int b = 0; b < pc->n_blocks; b++)
    for (guint i = 0; i < chunks->len; i++)
      {
        Chunk *ch = &g_array_index (chunks, Chunk, i);
        FmRect ext;
        int nm;
        if (blocks[b].x1 <= blocks[b].x0 || ch->block != -1 || ch->is_number || ch->em_max < 0.9 * pc->body_em ||
            fm_rect_cy (&ch->box) >= blocks[b].y0 || blocks[b].y0 - ch->box.y1 > 1.0 * ch->em ||
            fm_rect_h_gap (&blocks[b], &ch->box) > 3.0 * ch->em ||
            across_gutter (pc, fm_rect_cx (&blocks[b]), fm_rect_cx (&ch->box)) ||
            !block_continues (pc->g, chunks, b))
          continue;
        nm = line_group (chunks, i, pc, members, &ext);
        if (!line_is_set_off (pc, column_of (pc, fm_rect_cx (&ext)), &ext, ch->em))
          continue;
        for (int k = 0; k < nm; k++)
          {
            Chunk *o = &g_array_index (chunks, Chunk, members[k]);
            if (o->block != -1)
              continue;
            o->block = b;
            o->is_display = TRUE;
            o->is_display_piece = FALSE;
            fm_rect_union (&blocks[b], &o->box);
          }
        if (g_getenv ("FM_DETECT_DEBUG"))
          g_printerr ("chunk %u: first row of block %d\n", i, b);
        any = TRUE;
        break;   /* one row: the block's new top must not take the row above it too */
      }
  g_free (members);
  return any;
}

/* Whether chunk o closes, with its last glyph, a square bracket that the
 * chunks of block b leave open: the second row of a bracketed remark,
 * \shoveright{\text{[condition for a maximum;}} \\ \text{$m$ is an
 * integer]} of a gathered display. */
static gboolean
closes_block_bracket (const PageCtx *pc, const Chunk *o, int b)
{
  const Glyph *g = pc->g;
  int open = 0;

  if (g[o->end - 1].c != ']')
    return FALSE;
  for (int k = o->start; k < o->end - 1; k++)
    if (g[k].c == '[' || g[k].c == ']')
      return FALSE;
  for (guint i = 0; i < pc->chunks->len; i++)
    {
      const Chunk *ch = &g_array_index (pc->chunks, Chunk, i);
      /* (a half-open interval, [0, 1) or (0, 1], closes with the other
       * bracket: it leaves nothing open) */
      int paren = 0, square = 0;
      for (int k = ch->start; k < ch->end && ch->block == b; k++)
        if (g[k].c == '(')
          paren++;
        else if (g[k].c == '[')
          square++;
        else if (g[k].c == ')' || g[k].c == ']')
          {
            gboolean round = g[k].c == ')';
            if (round ? paren > 0 : square > 0)
              round ? paren-- : square--;
            else if (round ? square > 0 : paren > 0)
              round ? square-- : paren--;
            else
              open -= !round;
          }
      open += square;
    }
  return open > 0;
}

/* Whether chunk i, alone on its line, is flush with an edge of display
 * block b (to 0.1 em) and no wider, both set off from the column's margins
 * by a quarter em or more: a lower row of an aligned display sharing the
 * widest row's edge - its "&= x + y" ending where the row above ends, or
 * its "&\text{rate out} = ..." starting where it starts - is set off on
 * one side only (cls-jotrows, cls-alignedge: the row came as an inline
 * formula in CM and LuaLaTeX LM Math). A paragraph's line reaches a
 * margin. */
static gboolean
row_flush_with_block (const PageCtx *pc, guint i, int b)
{
  const Chunk *ch = &g_array_index (pc->chunks, Chunk, i);
  const FmRect *bk = &pc->blocks[b];
  const Margins *m = &pc->margins;
  int *members = g_new (int, pc->chunks->len + 1);
  FmRect ext;
  int nm = line_group (pc->chunks, i, pc, members, &ext), col = column_of (pc, fm_rect_cx (&ext));
  double em = ch->em;
  gboolean ok = nm == 1 && m->known[col] && ext.x0 - m->left[col] >= 0.25 * em &&
                m->right[col] - ext.x1 >= 0.25 * em && bk->x0 - m->left[col] >= 0.25 * em &&
                m->right[col] - bk->x1 >= 0.25 * em && ext.x0 >= bk->x0 - 0.1 * em && ext.x1 <= bk->x1 + 0.1 * em &&
                (fabs (ext.x0 - bk->x0) < 0.1 * em || fabs (ext.x1 - bk->x1) < 0.1 * em);

  g_free (members);
  return ok;
}

/* Whether chunk i, right above or below chunk o's display block, is a row
 * of it (aligned_rows()): its relation sign at the x of one of o's, or it
 * closes a bracket the block left open, on a line set off from both
 * margins; or flush with the block's edge (row_flush_with_block()) with
 * its sign at the very x of o's (0.005 em, rows_of_one_display()), or a
 * bracket closed, or math and no running text (running_text_line()). The last line of an inset paragraph under a boxed display
 * (quote, \fbox, a shaded box) is running text, and its signs meet the
 * block's only by chance. */
static gboolean
aligned_row_of (const PageCtx *pc, guint i, guint j)
{
  const Chunk *ch = &g_array_index (pc->chunks, Chunk, i), *o = &g_array_index (pc->chunks, Chunk, j);
  int b = o->block;

  gboolean closes = ch->box.y0 > pc->blocks[b].y0 && closes_block_bracket (pc, ch, b);

  if ((relation_aligned (pc->g, ch, o) || closes) && row_alone_set_off (pc, i))
    return TRUE;
  return (relation_aligned_within (pc->g, ch, o, 0.005) || closes ||
          (ch->n_strong + ch->n_weak > 0 && !running_text_line (pc->g, ch))) &&
         row_flush_with_block (pc, i, b);
}

/* Rows of an aligned display that are mostly words (\text{rate in} &= 5,
 * \text{concentration in} &= 0.1): no display line of their own, but a
 * line right above or below a display block (less than 1 em), alone on its
 * line and set off from both margins, whose relation sign stands at the
 * very x of a relation in the block's rows, is one of its rows. Prose
 * reaches a margin, and two lines' signs do not meet to 0.05 em by chance
 * that often. So is such a line below the block that closes a square
 * bracket the block left open (closes_block_bracket()). Returns whether a
 * row joined. */
static gboolean
aligned_rows (PageCtx *pc)
{
  GArray *chunks = pc->chunks;
  gboolean any = FALSE;

  for (gboolean changed = TRUE; changed;)
    {
      changed = FALSE;
      for (guint i = 0; i < chunks->len; i++)
        {
          Chunk *ch = &g_array_index (chunks, Chunk, i);
          if (ch->block != -1 || ch->is_number || ch->em_max < 0.9 * pc->body_em)
            continue;
          for (guint j = 0; j < chunks->len; j++)
            {
              const Chunk *o = &g_array_index (chunks, Chunk, j);
              int b = o->block;
              if (b < 0 || pc->blocks[b].x1 <= pc->blocks[b].x0 || fm_rect_v_gap (&pc->blocks[b], &ch->box) >= 1.0 * ch->em ||
                  v_overlap_enough (&pc->blocks[b], &ch->box, 0.3) ||
                  across_gutter (pc, fm_rect_cx (&pc->blocks[b]), fm_rect_cx (&ch->box)) ||
                  !aligned_row_of (pc, i, j))
                continue;
              ch->block = b;
              ch->is_display = TRUE;
              ch->is_display_piece = FALSE;
              fm_rect_union (&pc->blocks[b], &ch->box);
              if (g_getenv ("FM_DETECT_DEBUG"))
                g_printerr ("chunk %u: aligned row of block %d\n", i, b);
              changed = any = TRUE;
              break;
            }
        }
    }
  return any;
}

/* Whether display blocks a and b are rows of one aligned (align, split)
 * display set farther apart than 0.9 em with \\[len] (\\[4pt] under rows
 * of display-style sums, \\[6pt]): stacked less than 1.5 em apart (a
 * line of text between two displays puts them 2 em or more apart), their
 * relation signs at one x (relation_aligned(): 0.05 em). They came as two
 * displays in CM, LM, newtx, Libertine and XeLaTeX STIX Two (probe 3941). */
static gboolean
aligned_rows_apart (const PageCtx *pc, int a, int b, double em)
{
  return fm_rect_v_gap (&pc->blocks[a], &pc->blocks[b]) < 1.5 * em && fm_rect_h_gap (&pc->blocks[a], &pc->blocks[b]) < 0.5 * em &&
         rows_share_relation (pc, a, b, NULL);
}

/* Merging can make blocks touch that did not before (a limit joins two
 * pieces): merge until stable. Then blocks of pieces only are not
 * displays. */
static void
merge_blocks (PageCtx *pc)
{
  GArray *chunks = pc->chunks;
  FmRect *blocks = pc->blocks;

  for (gboolean changed = TRUE; changed;)
    {
      changed = FALSE;
      for (int a = 0; a < pc->n_blocks && !changed; a++)
        for (int b = a + 1; b < pc->n_blocks && !changed; b++)
          {
            double em = 10;
            if (blocks[a].x1 <= blocks[a].x0 || blocks[b].x1 <= blocks[b].x0)
              continue;
            for (guint i = 0; i < chunks->len; i++)
              if (g_array_index (chunks, Chunk, i).block == a)
                em = g_array_index (chunks, Chunk, i).em;
            if (((fm_rect_v_gap (&blocks[a], &blocks[b]) < 0.9 * em && fm_rect_h_gap (&blocks[a], &blocks[b]) < 0.5 * em &&
                  !(pc->opts.rule == FM_DETECT_RULE_FULL && displays_back_to_back (pc, a, b, NULL))) ||
                 (v_overlap_enough (&blocks[a], &blocks[b], 0.3) && fm_rect_h_gap (&blocks[a], &blocks[b]) < 3.0 * em) ||
                 (pc->opts.rule == FM_DETECT_RULE_FULL && fm_rect_v_gap (&blocks[a], &blocks[b]) < 1.5 * em &&
                  fm_rect_h_gap (&blocks[a], &blocks[b]) < 0.5 * em &&
                  block_continues (pc->g, chunks, blocks[a].y0 < blocks[b].y0 ? b : a)) ||
                 (pc->opts.rule == FM_DETECT_RULE_FULL && blocks_level_apart (pc, a, b, em)) ||
                 (pc->opts.rule == FM_DETECT_RULE_FULL && aligned_rows_apart (pc, a, b, em))) &&
                !across_gutter (pc, fm_rect_cx (&blocks[a]), fm_rect_cx (&blocks[b])))
              {
                fm_rect_union (&blocks[a], &blocks[b]);
                blocks[b] = (FmRect) { 0, 0, 0, 0 };
                reassign_block (chunks, b, a);
                pc->block_first[a] = MIN (pc->block_first[a], pc->block_first[b]);
                changed = TRUE;
              }
          }
    }

  for (int b = 0; b < pc->n_blocks; b++)
    {
      gboolean whole = FALSE;
      for (guint i = 0; i < chunks->len; i++)
        {
          Chunk *ch = &g_array_index (chunks, Chunk, i);
          whole |= ch->block == b && ch->is_display;
        }
      if (whole)
        continue;
      blocks[b] = (FmRect) { 0, 0, 0, 0 };
      reassign_block (chunks, b, -1);
    }
}

/* Parts with no math glyph stacked on a display (a display-style
 * fraction's digits, \frac{1}{3}; a limit of digits): a chunk of neutral
 * glyphs only, within the block's columns and less than 0.5 em above or
 * below it, is part of it. */
static void
stacked_neutral_parts (PageCtx *pc)
{
  GArray *chunks = pc->chunks;
  FmRect *blocks = pc->blocks;

  for (guint i = 0; i < chunks->len; i++)
    {
      Chunk *ch = &g_array_index (chunks, Chunk, i);
      double lx0, lx1;
      if (ch->block != -1 || ch->is_number || ch->n_text > 0 || ch->n_strong + ch->n_weak > 0)
        continue;
      for (int b = 0; b < pc->n_blocks; b++)
        if (blocks[b].x1 > blocks[b].x0 && ch->box.x0 >= blocks[b].x0 - 0.2 * ch->em &&
            ch->box.x1 <= blocks[b].x1 + 0.2 * ch->em && fm_rect_v_gap (&blocks[b], &ch->box) < 0.5 * ch->em &&
            !v_overlap_enough (&blocks[b], &ch->box, 0.9) &&
            /* not a piece of the text line below or above (a delimiter
             * of an inline formula that only the ink shows, \bigl( ) */
            !line_reaches_text (pc->g, pc->n, &ch->box, ch->em, pc, G_MAXDOUBLE, &lx0, &lx1))
          {
            fm_rect_union (&blocks[b], &ch->box);
            ch->block = b;
            /* A part as near a second block on its other side joins the
             * two: the row of an aligned display under a fraction's
             * numerator (\theta_f &= ... \\ \frac{1}{f} &= ...), whose
             * block began at the denominators 1 em below the first row. */
            for (int c = 0; c < pc->n_blocks; c++)
              if (c != b && blocks[c].x1 > blocks[c].x0 && ch->box.x0 >= blocks[c].x0 - 0.2 * ch->em &&
                  ch->box.x1 <= blocks[c].x1 + 0.2 * ch->em && fm_rect_v_gap (&blocks[c], &ch->box) < 0.5 * ch->em &&
                  (fm_rect_cy (&blocks[c]) < fm_rect_cy (&ch->box)) != (fm_rect_cy (&blocks[b]) < fm_rect_cy (&ch->box)) &&
                  !across_gutter (pc, fm_rect_cx (&blocks[b]), fm_rect_cx (&blocks[c])))
                {
                  fm_rect_union (&blocks[b], &blocks[c]);
                  blocks[c] = (FmRect) { 0, 0, 0, 0 };
                  reassign_block (chunks, c, b);
                  pc->block_first[b] = MIN (pc->block_first[b], pc->block_first[c]);
                }
            break;
          }
    }
}

/* Fractions of words in a display (\frac{78\ \textup{revolutions}}{1\
 * \textup{minute}} \times ...): their numerators and denominators are
 * chunks of upright words, never display chunks, and the display is left
 * with its operators only. A chunk of a few full-size words next to a
 * display block, over (under) a fraction bar that lies inside the block's
 * line, is a part of it: an inline fraction's bar lies on a line of running
 * text, not on a display. Repeated until stable, as each part widens the
 * block towards the next fraction. Returns whether a part joined. */
static gboolean
stacked_word_parts (PageCtx *pc)
{
  GArray *chunks = pc->chunks;
  FmRect *blocks = pc->blocks;
  gboolean any = FALSE;

  if (pc->ink == NULL)
    return FALSE;
  for (gboolean changed = TRUE; changed;)
    {
      changed = FALSE;
      for (guint i = 0; i < chunks->len; i++)
        {
          Chunk *ch = &g_array_index (chunks, Chunk, i);
          double y;
          if (ch->block != -1 || ch->is_number || ch->n_text == 0 || ch->end - ch->start > 24 ||
              ch->em_max < 0.9 * pc->body_em)
            continue;
          y = bar_below_y (pc->ink, &ch->box, ch->em);
          if (y < 0)
            y = bar_above_y (pc->ink, &ch->box, ch->em);
          if (y < 0)
            continue;
          for (int b = 0; b < pc->n_blocks; b++)
            if (blocks[b].x1 > blocks[b].x0 && y > blocks[b].y0 && y < blocks[b].y1 &&
                fm_rect_h_gap (&blocks[b], &ch->box) < 3.0 * ch->em &&
                !across_gutter (pc, fm_rect_cx (&blocks[b]), fm_rect_cx (&ch->box)))
              {
                fm_rect_union (&blocks[b], &ch->box);
                ch->block = b;
                changed = any = TRUE;
                break;
              }
        }
    }
  return any;
}

/* The middle of chunk o's running-text letters (its math glyphs' boxes
 * can reach far above and below the line). */
static double
text_middle (const PageCtx *pc, const Chunk *o)
{
  double sum = 0;
  int n = 0;

  for (int k = o->start; k < o->end; k++)
    if (pc->g[k].cls == CLS_TEXT)
      {
        sum += fm_rect_cy (&pc->g[k].r);
        n++;
      }
  return n > 0 ? sum / n : fm_rect_cy (&o->box);
}

/* Whether chunk o is a piece of a line of running text in the column of
 * x (outside every block, mostly text letters, at least three glyphs, not
 * script size: the words of a limit, \prod_{i\text{ even}}, are no line):
 * the line a display-style fraction's bar or a crossed block lies on. */
static gboolean
text_line_chunk (const PageCtx *pc, const Chunk *o, double x)
{
  int ot = o->end - o->start;

  return o->block < 0 && !o->is_number && ot >= 3 && o->n_text * 2 >= ot && running_text_chunk (o) &&
         o->em_max >= 0.81 * pc->body_em && !across_gutter (pc, fm_rect_cx (&o->box), x);
}

/* Whether chunk o is a line of running text whose size is chunk ch's largest glyph's to
 * 10 %, for a ch smaller than the body (a footnote's \dfrac: 0.8-0.83 of
 * the body): ch is then full size on that line, not a script-size part
 * of a fraction in the body text, whose line is larger. */
static gboolean
small_text_line (const PageCtx *pc, const Chunk *o, const Chunk *ch, double x)
{
  int ot = o->end - o->start;

  return o->block < 0 && !o->is_number && ot >= 3 && o->n_text * 2 >= ot &&
         running_text_chunk (o) && fabs (o->em - ch->em_max) < 0.1 * ch->em_max &&
         !across_gutter (pc, fm_rect_cx (&o->box), x);
}

/* Whether block b holds only script-size chunks (under 0.81 of the body,
 * as display_chunks() tells a piece: OpenType fonts' scripts are 0.7-0.8
 * of the text, Libertinus Math's read as 0.8 by Poppler). Their
 * bar on a text line's middle makes them the parts of text-style fractions
 * of that line (\frac{1}{2} in running text): in LuaLaTeX STIX Two and
 * Libertinus Math the denominators are chunks of their own that touch the
 * next line's raised \dfrac numerator, whose line group took them in and
 * made them displays of their own (cls-textfrac's body: 4 false displays
 * in STIX Two, 2 in Libertinus; the fractions in pieces). A display's own
 * limits and scripts stand in a block with a full-size chunk. */
static gboolean
script_parts_block (const PageCtx *pc, int b)
{
  gboolean any = FALSE;

  for (guint i = 0; i < pc->chunks->len && b >= 0; i++)
    {
      const Chunk *ch = &g_array_index (pc->chunks, Chunk, i);
      if (ch->block != b)
        continue;
      if (ch->em_max >= 0.81 * pc->body_em)
        return FALSE;
      any = TRUE;
    }
  return any;
}

/* Whether the bar on row y by box (chunk i or a run of its glyphs) lies on
 * the middle of a line of running text beside it, or of a chunk of a few
 * words that starts the formula - wholly left or right of chunk i's
 * block: a display's own line of words and math is no text line. */
static gboolean
bar_y_on_text_line (const PageCtx *pc, guint i, const FmRect *box, double y, FmRect *bar)
{
  const Chunk *ch = &g_array_index (pc->chunks, Chunk, i);
  FmRect near = *box;

  /* (the text beside is near the bar, not the part: a narrow part
   * centred on a wide one, the 8 of \frac{\mathrm{cn}(\lambda+5)}{8},
   * stands more than 2 em from the words on either side) */
  ink_row_run (pc->ink, (int) (y * pc->ink->scale), (int) (fm_rect_cx (box) * pc->ink->scale), &near.x0, &near.x1);
  near.x0 = MIN (near.x0, box->x0);
  near.x1 = MAX (near.x1, box->x1);
  for (guint k = 0; k < pc->chunks->len; k++)
    {
      const Chunk *o = &g_array_index (pc->chunks, Chunk, k);
      /* (the cheap test first: most of the page's chunks are far) */
      if (fm_rect_h_gap (&o->box, &near) >= 2.0 * o->em)
        continue;
      /* (a chunk under the body's size: a footnote's fraction part, on a
       * footnote's line only - small_text_line(); or a chunk of three
       * words' letters and the formula's start, "them X(s) =": the middle
       * is its letters') */
      /* (a script-size part of a block of such parts only - a text-style
       * fraction's, script_parts_block(): on a line of body text too) */
      if (ch->em_max < 0.85 * pc->body_em ?
          !small_text_line (pc, o, ch, fm_rect_cx (box)) &&
          !(script_parts_block (pc, ch->block) && text_line_chunk (pc, o, fm_rect_cx (box))) :
          !text_line_chunk (pc, o, fm_rect_cx (box)) &&
          !(o->block < 0 && !o->is_number && o->n_text >= 3 &&
            !across_gutter (pc, fm_rect_cx (&o->box), fm_rect_cx (box)) &&
            (ch->block < 0 || o->box.x1 <= pc->blocks[ch->block].x0 || o->box.x0 >= pc->blocks[ch->block].x1)))
        continue;
      if (fabs (text_middle (pc, o) - y) < 0.2 * o->em)
        {
          if (g_getenv ("FM_DETECT_DEBUG"))
            g_printerr ("chunk %u: a fraction's part, its bar at y %.1f on the text of chunk %u\n", i, y, k);
          *bar = (FmRect) { near.x0, y, near.x1, y };
          return TRUE;
        }
    }
  return FALSE;
}

/* Whether a bar right below or above box (bar_y_on_text_line()) lies on
 * the middle of a text line. Both sides are tried: the rule found below a
 * denominator can be its own flat bottom stroke (a 2's, a z's), which lies
 * on no line's middle (\frac{1}{2}'s 2 in LuaLaTeX STIX Two). */
static gboolean
bar_on_text_line (const PageCtx *pc, guint i, const FmRect *box, FmRect *bar)
{
  for (int side = 0; side < 2; side++)
    {
      double y = side == 0 ? bar_below_y (pc->ink, box, pc->body_em) : bar_above_y (pc->ink, box, pc->body_em);
      if (y >= 0 && bar_y_on_text_line (pc, i, box, y, bar))
        return TRUE;
    }
  return FALSE;
}

/* Whether chunk i of a block is a part of an inline display-style fraction
 * (\dfrac{n!}{s^{n+1}}): its numerator (or denominator) is a display chunk
 * of its own, or stacked onto a display or onto a part of the next line's
 * fraction. Such a full-size chunk has a fraction bar right below (above)
 * it, and the bar lies on the middle of a line of running text beside it
 * (the math axis of the line the fraction belongs to), as no display's bar
 * or the bottom stroke of its brackets and big operators does. */
static gboolean
fraction_part_chunk (const PageCtx *pc, guint i, FmRect *bar)
{
  const Chunk *ch = &g_array_index (pc->chunks, Chunk, i);
  const Glyph *g = pc->g;

  /* (full size: a text-style fraction's script-size part of the line
   * above may be stacked onto a display - unless its block is script-size
   * parts only, script_parts_block()) */
  /* (or a footnote's size, 0.8-0.83 of the body at 10-12 pt, with a bar on
   * a footnote's line: scripts are 0.67-0.73 of it) */
  /* (its largest glyph's size: a numerator of more script glyphs than
   * full-size ones, \dfrac{e^{-as}}{s}, has a script-size median) */
  if (ch->em_max < 0.76 * pc->body_em && !script_parts_block (pc, ch->block))
    return FALSE;
  if (bar_on_text_line (pc, i, &ch->box, bar))
    return TRUE;
  /* A chunk can hold more than the fraction's part: the limit under a
   * \lim before the fraction, on the denominator's row (\displaystyle
   * \lim_{n\to\infty} \frac{n}{(1+\epsilon)^n}). The bar is over part of
   * it only: each run of its full-size glyphs (less than 0.3 em apart) is
   * tested. */
  for (int k = ch->start; k < ch->end;)
    {
      FmRect run;
      int e = k;
      if (g[k].size < 0.85 * ch->em_max)
        {
          k++;
          continue;
        }
      run = g[k].r;
      while (e + 1 < ch->end && (g[e + 1].size < 0.85 * ch->em_max || g[e + 1].r.x0 - run.x1 < 0.3 * ch->em))
        {
          e++;
          if (g[e].size >= 0.85 * ch->em_max)
            fm_rect_union (&run, &g[e].r);
        }
      if ((k > ch->start || e + 1 < ch->end) && bar_on_text_line (pc, i, &run, bar))
        return TRUE;
      k = e + 1;
    }
  return FALSE;
}

/* Takes the parts of inline display-style fractions (fraction_part_chunk())
 * out of block b, whose box shrinks to the rest: TRUE when nothing is left
 * (the block was only such parts). A display that a fraction's part of the
 * line above was stacked onto keeps its own lines and its number. */
static gboolean
fraction_parts_out (PageCtx *pc, int b)
{
  GArray *chunks = pc->chunks;
  gboolean *part = g_new0 (gboolean, chunks->len + 1), any = FALSE, rest = FALSE, own_line = FALSE;
  FmRect box = { 0, 0, 0, 0 }, parts = { 0, 0, 0, 0 };
  FmRect *bars = g_new0 (FmRect, chunks->len + 1);
  int n_bars = 0;

  for (guint i = 0; i < chunks->len; i++)
    if (g_array_index (chunks, Chunk, i).block == b && fraction_part_chunk (pc, i, &bars[n_bars]))
      {
        if (!any)
          parts = g_array_index (chunks, Chunk, i).box;
        else
          fm_rect_union (&parts, &g_array_index (chunks, Chunk, i).box);
        part[i] = any = TRUE;
        n_bars++;
      }
  /* (the other part of a fraction whose part passed: within its bar's
   * ends, its near edge within 0.8 em of the bar. A denominator of x-height
   * letters with boxes tight to the ink, the t of newtx's \frac{\log(1+t)}{t},
   * hangs more than the 0.45 em that bar_above_y() looks under a bar) */
  for (guint i = 0; i < chunks->len; i++)
    {
      const Chunk *ch = &g_array_index (chunks, Chunk, i);
      for (int k = 0; k < n_bars && ch->block == b && !part[i]; k++)
        part[i] = ch->box.x0 >= bars[k].x0 - 0.1 * ch->em && ch->box.x1 <= bars[k].x1 + 0.1 * ch->em &&
                  ((ch->box.y0 >= bars[k].y0 && ch->box.y0 - bars[k].y0 < 0.8 * ch->em) ||
                   (ch->box.y1 <= bars[k].y0 && bars[k].y0 - ch->box.y1 < 0.8 * ch->em));
      if (part[i] && ch->block == b)
        fm_rect_union (&parts, &ch->box);
    }
  g_free (bars);
  /* (the rest keeps the block only with a line of its own: chunks level
   * with the parts are the other parts of the same fractions, \dfrac{dx}{dy}
   * = \dfrac{1}{ky}, whose bars need not all pass the test) */
  for (guint i = 0; i < chunks->len && any; i++)
    {
      const Chunk *ch = &g_array_index (chunks, Chunk, i);
      if (ch->block == b && !part[i] && (fm_rect_cy (&ch->box) < parts.y0 || fm_rect_cy (&ch->box) > parts.y1))
        own_line = TRUE;
    }
  for (guint i = 0; i < chunks->len && any; i++)
    if (g_array_index (chunks, Chunk, i).block == b && !own_line)
      part[i] = TRUE;
  for (guint i = 0; i < chunks->len && any; i++)
    {
      Chunk *ch = &g_array_index (chunks, Chunk, i);
      if (ch->block != b)
        continue;
      if (part[i])
        {
          ch->block = -1;
          continue;
        }
      if (!rest)
        {
          box = ch->box;
          pc->block_first[b] = (int) i;
        }
      else
        fm_rect_union (&box, &ch->box);
      rest = TRUE;
    }
  g_free (part);
  if (any && rest)
    pc->blocks[b] = box;
  return any && !rest;
}

/* Whether chunk ch of a block lies on the line of running text that
 * crosses it (crossing_line_out()): overlapping its box, or a script-size
 * piece right under or over it (less than 0.5 em off), a script or limit
 * of the line's formula. Such a subscript under a text line right below an
 * aligned display (\left[ ... \right]_2) had kept the display's rows from
 * lying on one side of the line, and the display was dissolved. */
static gboolean
on_crossing_line (const Chunk *ch, const Chunk *line, double slack)
{
  return fm_rect_v_overlap (&ch->box, &line->box) > slack ||
         (ch->is_display_piece && !ch->is_display && fm_rect_v_gap (&ch->box, &line->box) < 0.5 * line->em);
}

/* A display block that took in the math of a text line right below (or
 * above) it is crossed by that line, yet its other rows are a display: a
 * stretched paragraph line whose formulas stand more than 2 em from its
 * words is no running text chunk by chunk, and stacked less than 0.9 em
 * under an aligned display its formulas joined the display's block (seed
 * 1060: `\begin{aligned}` with its number lost). The chunks overlapping the
 * crossing line's box leave the block; the rest stays a display when it
 * holds a full-size display chunk and lies wholly on one side of the line.
 * An inline display-style fraction's numerator and denominator both
 * overlap their line's box (the bar lies on the math axis), its limits
 * touch it: such a block keeps nothing and is dissolved. TRUE when the
 * block was kept, shrunk to the rest. */
static gboolean
crossing_line_out (PageCtx *pc, int b, const Chunk *line)
{
  GArray *chunks = pc->chunks;
  gboolean above = FALSE, below = FALSE, display = FALSE, any = FALSE, moved = FALSE;
  int first = -1;
  FmRect rest = { 0, 0, 0, 0 };
  double slack = 0.1 * line->em;

  for (guint i = 0; i < chunks->len; i++)
    {
      const Chunk *ch = &g_array_index (chunks, Chunk, i);
      if (ch->block != b || on_crossing_line (ch, line, slack))
        continue;
      above |= ch->box.y1 <= line->box.y0 + slack;
      below |= ch->box.y0 >= line->box.y1 - slack;
      display |= ch->is_display && ch->em >= 0.85 * pc->body_em;
      if (!any)
        rest = ch->box;
      else
        fm_rect_union (&rest, &ch->box);
      any = TRUE;
    }
  if (!any || !display || (above && below))
    return FALSE;
  for (guint i = 0; i < chunks->len; i++)
    {
      Chunk *ch = &g_array_index (chunks, Chunk, i);
      if (ch->block == b && on_crossing_line (ch, line, slack))
        {
          ch->block = -1;
          moved = TRUE;
        }
      else if (ch->block == b && first < 0)
        first = (int) i;
    }
  /* (nothing level with the line: no progress, the caller would loop) */
  if (!moved)
    return FALSE;
  if (g_getenv ("FM_DETECT_DEBUG"))
    g_printerr ("block [%.1f %.1f %.1f %.1f] crossed by running text: shrunk to [%.1f %.1f %.1f %.1f]\n",
                pc->blocks[b].x0, pc->blocks[b].y0, pc->blocks[b].x1, pc->blocks[b].y1, rest.x0, rest.y0, rest.x1,
                rest.y1);
  pc->blocks[b] = rest;
  pc->block_first[b] = first;
  return TRUE;
}

/* The chunk of running text that passes through block b (beside it, its
 * middle in the block's height), or -1. */
static int
crossing_text_chunk (const PageCtx *pc, int b)
{
  GArray *chunks = pc->chunks;
  const FmRect *blocks = pc->blocks;
  const Margins *margins = &pc->margins;
  int col = column_of (pc, fm_rect_cx (&blocks[b])), run_text = -1, set_off_words = -1;
  gboolean flush = FALSE;

  for (guint i = 0; i < chunks->len; i++)
    {
      const Chunk *o = &g_array_index (chunks, Chunk, i);
      double cy = 0.5 * (o->box.y0 + o->box.y1);
      if (!text_line_chunk (pc, o, fm_rect_cx (&blocks[b])))
        continue;
      /* text wholly between the block's ends is the display's own
       * (\overset{\text{def}}{=}, \text{if}): a line of running text
       * passing through reaches out of it on one side at least */
      if (o->box.x0 > blocks[b].x0 + 0.5 * o->em && o->box.x1 < blocks[b].x1 - 0.5 * o->em)
        continue;
      if (!(cy > blocks[b].y0 && cy < blocks[b].y1 && fm_rect_h_gap (&o->box, &blocks[b]) < 2.0 * o->em))
        continue;
      /* (nor does one line set off from both margins beside a block
       * that reaches 0.5 em or more above or below it: a display's row
       * with words beside it, "&= 3.2139\ \textup{m} \quad
       * \text{(calculator output)}" of an aligned display in Euler, dev
       * 1135; a paragraph's line starts or ends at a margin. Words beside
       * two rows or more, or beside a block of their line only, are a
       * centred table's text column, cls-condtable) */
      if (!chunk_line_set_off (pc, i, NULL) ||
          (o->box.y0 - blocks[b].y0 < 0.5 * o->em && blocks[b].y1 - o->box.y1 < 0.5 * o->em))
        return (int) i;
      if (set_off_words >= 0)
        return set_off_words;
      set_off_words = (int) i;
    }
  /* ... farther away (after a \qquad, "y' = \dfrac{1}{x}, \qquad
   * y(0) = 0 in define."): running text level with the block's
   * middle rows, on a line that starts or ends at the column's
   * margin (a paragraph's line; a display is set off from both) */
  for (guint i = 0; i < chunks->len && !(run_text >= 0 && flush); i++)
    {
      const Chunk *o = &g_array_index (chunks, Chunk, i);
      double cy = 0.5 * (o->box.y0 + o->box.y1);
      /* (in the block's column by its margins too: a page's
       * gutter is not always found) */
      if (o->block >= 0 || o->is_number || !margins->known[col] ||
          across_gutter (pc, fm_rect_cx (&o->box), fm_rect_cx (&blocks[b])) ||
          blocks[b].x0 < margins->left[col] - o->em || blocks[b].x1 > margins->right[col] + o->em ||
          o->box.x0 < margins->left[col] - o->em || o->box.x1 > margins->right[col] + o->em ||
          cy < blocks[b].y0 + 0.3 * o->em || cy > blocks[b].y1 - 0.3 * o->em)
        continue;
      if (run_text < 0 && text_line_chunk (pc, o, fm_rect_cx (&blocks[b])) &&
          (o->box.x1 < blocks[b].x0 || o->box.x0 > blocks[b].x1))
        run_text = (int) i;
      if (fabs (o->box.x0 - margins->left[col]) < 0.5 * o->em ||
          fabs (o->box.x1 - margins->right[col]) < 0.5 * o->em)
        flush = TRUE;
    }
  return flush ? run_text : -1;
}

/* Whether chunk o, wordy and wholly right of display block b, is a row of
 * a column of conditions (cases' \text{if ...}): level with the block's
 * rows (0.2 em into them: a cases' first row, text style, can lie above a
 * block that starts at its second) and within 3 em of it, in its column and
 * not past the margin. */
static gboolean
condition_row (const PageCtx *pc, int b, const Chunk *o)
{
  const FmRect *bl = &pc->blocks[b];
  int col = column_of (pc, fm_rect_cx (bl));

  return o->block < 0 && !o->is_number && o->n_text * 2 >= o->end - o->start && o->em_max >= 0.81 * pc->body_em &&
         o->box.x0 >= bl->x1 - 0.2 * o->em && o->box.x0 - bl->x1 < 3.0 * o->em &&
         o->box.y1 > bl->y0 + 0.2 * o->em && o->box.y0 < bl->y1 - 0.2 * o->em &&
         !across_gutter (pc, fm_rect_cx (bl), fm_rect_cx (&o->box)) &&
         (!pc->margins.known[col] || o->box.x1 < pc->margins.right[col] + 0.5 * o->em);
}

/* How many of the chunks marked in row[] have their middle within r's
 * height (condition_column()). */
static int
rows_level_with (GArray *chunks, const gboolean *row, const FmRect *r)
{
  int n = 0;

  for (guint i = 0; i < chunks->len; i++)
    {
      double cy = fm_rect_cy (&g_array_index (chunks, Chunk, i).box);
      n += row[i] && cy > r->y0 && cy < r->y1;
    }
  return n;
}

/* Whether the rows row[] found beside block b are the conditions of a
 * cases display: two or more of them level with one tall glyph of the
 * block (the brace, 1.8 em or more), none ending in a hyphen, and no row
 * of words at their x above or below them. A notation table's formula
 * column has no brace (tabular{ll}, p{...}: its rows are a column of
 * their own), a minipage of prose beside a display hyphenates and runs
 * on, a table's text column continues past the block. */
static gboolean
condition_column (const PageCtx *pc, int b, const gboolean *row)
{
  GArray *chunks = pc->chunks;
  const Glyph *g = pc->g;
  const FmRect *bl = &pc->blocks[b];
  FmRect col = { 0, 0, 0, 0 }, pieces = { 0, 0, 0, 0 };
  int n = 0, braced = 0;
  double em = pc->body_em;

  for (guint i = 0; i < chunks->len; i++)
    {
      const Chunk *o = &g_array_index (chunks, Chunk, i);
      int last = o->end - 1;
      if (!row[i])
        continue;
      if (last > o->start && (g[last].c == '-' || g[last].c == 0x2010) && g_unichar_isalpha (g[last - 1].c))
        return FALSE;
      if (n++ == 0)
        col = o->box;
      else
        fm_rect_union (&col, &o->box);
    }
  /* (the brace is not always a glyph of the block: a cases brace beside
   * an integral's limits joins the block late; XeTeX and LuaTeX build it
   * of pieces, left_brace_piece(), one span together) */
  for (guint k = 0; k < chunks->len && braced < 2; k++)
    {
      const Chunk *c = &g_array_index (chunks, Chunk, k);
      for (int j = c->start; j < c->end && braced < 2; j++)
        {
          const FmRect *r = &g[j].r;
          gboolean piece = left_brace_piece (g[j].c);
          if (fm_rect_cx (r) < bl->x0 - em || r->x1 > col.x0 || r->y1 < bl->y0 || r->y0 > bl->y1 ||
              !(piece || (r->y1 - r->y0 >= 1.8 * em && cases_brace_char (g[j].c))))
            continue;
          if (piece)
            {
              if (pieces.x1 <= pieces.x0)
                pieces = *r;
              else
                fm_rect_union (&pieces, r);
              continue;
            }
          braced = rows_level_with (chunks, row, r);
        }
    }
  if (braced < 2 && pieces.x1 > pieces.x0)
    braced = rows_level_with (chunks, row, &pieces);
  return n >= 2 && braced >= 2 && !wordy_at_x_nearby (pc, col.x0, col.y0, col.y1, em);
}

/* The conditions of a cases display beside its rows (\int_{\gamma\circ h}
 * \omega = \begin{cases} \int_\gamma \omega & \text{if } h \text{
 * preserves orientation,} \\ ...): their words make each a line of
 * running text level with the block, which dissolve_crossed_blocks() took
 * for an inline \displaystyle fraction's line and dissolved the display.
 * One text line passes through an inline fraction's parts; rows of words
 * starting at one x (to 0.2 em) on two rows of a block of two rows or more
 * (1.8 em) right of it are a column of the display, and join its block (a
 * paragraph's lines start at the margin, left of the block). */
static void
condition_rows (PageCtx *pc)
{
  GArray *chunks = pc->chunks;
  gboolean *row = g_new0 (gboolean, chunks->len + 1);

  for (int b = 0; b < pc->n_blocks; b++)
    {
      FmRect *bl = &pc->blocks[b];
      if (bl->x1 <= bl->x0 || bl->y1 - bl->y0 < 1.8 * pc->body_em)
        continue;
      memset (row, 0, (chunks->len + 1) * sizeof (gboolean));
      for (guint i = 0; i < chunks->len; i++)
        {
          const Chunk *o = &g_array_index (chunks, Chunk, i);
          gboolean aligned = FALSE;
          if (!condition_row (pc, b, o))
            continue;
          for (guint k = 0; k < chunks->len && !aligned; k++)
            {
              const Chunk *q = &g_array_index (chunks, Chunk, k);
              aligned = k != i && fabs (q->box.x0 - o->box.x0) < 0.2 * o->em &&
                        fabs (fm_rect_cy (&q->box) - fm_rect_cy (&o->box)) > 0.8 * o->em && condition_row (pc, b, q);
            }
          if (!aligned)
            continue;
          if (g_getenv ("FM_DETECT_DEBUG"))
            g_printerr ("chunk %u: a condition row of block %d\n", i, b);
          row[i] = TRUE;
        }
      /* (joined after the scan: each row is measured against the block's
       * own rows, and its partner is still a chunk of no block) */
      if (!condition_column (pc, b, row))
        continue;
      for (guint i = 0; i < chunks->len; i++)
        if (row[i])
          {
            g_array_index (chunks, Chunk, i).block = b;
            fm_rect_union (bl, &g_array_index (chunks, Chunk, i).box);
            /* (the block's first chunk orders its region among the
             * others: a first row above the block comes first) */
            pc->block_first[b] = MIN (pc->block_first[b], (int) i);
          }
    }
  g_free (row);
}

/* How many chunks of running text (text_line_chunk()) out of every block
 * stand beside display block b on the lines of its rows, a row that is not
 * the whole block, and are those lines set off from both margins
 * (line_is_set_off()); *words gets the last one. */
static int
words_beside_rows (const PageCtx *pc, int b, gboolean *set_off, int *words)
{
  GArray *chunks = pc->chunks;
  const FmRect *bk = &pc->blocks[b];
  int *members = g_new (int, chunks->len + 1), n = 0;
  gboolean *seen = g_new0 (gboolean, chunks->len + 1);

  *set_off = TRUE;
  for (guint i = 0; i < chunks->len; i++)
    {
      const Chunk *r = &g_array_index (chunks, Chunk, i);
      FmRect ext;
      int nm;
      if (r->block != b || !r->is_display ||
          (r->box.y0 - bk->y0 < 0.5 * r->em && bk->y1 - r->box.y1 < 0.5 * r->em))
        continue;
      nm = line_group (chunks, i, pc, members, &ext);
      for (int k = 0; k < nm; k++)
        {
          const Chunk *o = &g_array_index (chunks, Chunk, members[k]);
          /* (within 3.5 em of the block itself, line_group()'s step: the
           * remark after a row is a \quad or \qquad off it, 1-2 em; the
           * line's chain can reach words further on over another chunk) */
          if (seen[members[k]] || !text_line_chunk (pc, o, fm_rect_cx (bk)) ||
              (o->box.x0 < bk->x1 && o->box.x1 > bk->x0) || fm_rect_h_gap (&o->box, bk) > 3.5 * r->em)
            continue;
          seen[members[k]] = TRUE;
          *words = members[k];
          *set_off = *set_off && line_is_set_off (pc, column_of (pc, fm_rect_cx (&ext)), &ext, r->em);
          n++;
        }
    }
  g_free (seen);
  g_free (members);
  return n;
}

/* Words beside one row of a display of several rows: "&= 3.2139\
 * \textup{m} \quad \text{(calculator output)}" of an aligned display, the
 * words an em right of the block on a line set off from both margins. The
 * rows' line joins a display by itself where it holds two math glyphs or
 * more (Euler, Palatino); a number and a unit in the text font have none
 * (CM, LM, Times, txfonts, newtx, Libertine, XeLaTeX Pagella and XITS
 * Math: the display was cut before the words). One such chunk joins the
 * block; words beside two rows or more are a centred table's text column
 * (cls-condtable), and words on a line that reaches a margin are running
 * text (crossing_text_chunk()). */
static void
join_words_beside_rows (PageCtx *pc)
{
  for (int b = 0; b < pc->n_blocks; b++)
    {
      gboolean set_off;
      int words = -1;
      Chunk *o;
      if (pc->blocks[b].x1 <= pc->blocks[b].x0 || words_beside_rows (pc, b, &set_off, &words) != 1 || !set_off)
        continue;
      o = &g_array_index (pc->chunks, Chunk, words);
      o->block = b;
      o->is_display = TRUE;
      o->is_display_piece = FALSE;
      fm_rect_union (&pc->blocks[b], &o->box);
      if (g_getenv ("FM_DETECT_DEBUG"))
        g_printerr ("chunk %d: words beside a row of block %d\n", words, b);
    }
}

/* A block that a line of running text passes through is the numerator and
 * denominator (or limits) of an inline \displaystyle fraction on that
 * line, not a display: a display has its lines to itself. Only the rows
 * level with the line leave a block that has rows of its own clear of it
 * (crossing_line_out()). */
static void
dissolve_crossed_blocks (PageCtx *pc)
{
  GArray *chunks = pc->chunks;
  FmRect *blocks = pc->blocks;

  for (int b = 0; b < pc->n_blocks; b++)
    {
      int line = -1;
      if (blocks[b].x1 <= blocks[b].x0)
        continue;
      if (!fraction_parts_out (pc, b))
        {
          /* (each line out shrinks the block: test it again. A line
           * that cannot leave - a second one too, after one left -
           * dissolves the whole block: the lines taken out before stay
           * out, all of it is text then) */
          while ((line = crossing_text_chunk (pc, b)) >= 0 &&
                 crossing_line_out (pc, b, &g_array_index (chunks, Chunk, line)))
            ;
          if (line < 0)
            continue;
        }
      if (g_getenv ("FM_DETECT_DEBUG"))
        g_printerr ("block [%.1f %.1f %.1f %.1f] crossed by running text: dissolved\n", blocks[b].x0,
                    blocks[b].y0, blocks[b].x1, blocks[b].y1);
      blocks[b] = (FmRect) { 0, 0, 0, 0 };
      reassign_block (chunks, b, -1);
    }
}

/* Whether a number chunk at box sits where amsmath sets an equation
 * number below its display: its line starts right after the display's last
 * line (less than 1 em below it), and it ends at or right of the display's
 * right end, in its right half. One test for detach_numbers_below(), which
 * takes such a number out of its block, and number_below_block(), which
 * pairs it with the block again: they must agree, or a detached number
 * would be lost. */
static gboolean
number_sits_below (const FmRect *box, const FmRect *display, double em)
{
  return box->y0 >= display->y1 - 0.3 * em && box->y0 - display->y1 < 1.0 * em &&
         box->x1 >= display->x1 - 0.5 * em && box->x0 > fm_rect_cx (display);
}

/* Whether a number chunk at box sits where amsmath sets a left equation
 * number (leqno, amsart's default) above a display that leaves no room
 * for it: its line ends right before the display's first line (less than
 * 1 em above it), and it starts at or left of the display's left end, in
 * its left half. */
static gboolean
number_sits_above (const FmRect *box, const FmRect *display, double em)
{
  /* (the display starts less than the number's width and an em right of
   * the number's start, or the number would have stood on its line: a
   * cross-reference "(2)" ending a paragraph's line, an enumerate label
   * \item[(1)] before a centred display, are no numbers) */
  return box->y1 <= display->y0 + 0.3 * em && display->y0 - box->y1 < 1.0 * em &&
         box->x0 <= display->x0 + 0.5 * em && box->x1 < fm_rect_cx (display) &&
         display->x0 - box->x0 < fm_rect_w (box) + 1.0 * em;
}

/* The display block whose equation number chunk i is when amsmath set it
 * on a line of its own below the display, or above it for a left number
 * (the display left no room for it; wide displays in XeLaTeX/LuaLaTeX's
 * OpenType fonts, two-column pages): the number's line starts right after
 * the block's last line, the number ends at or right of the block's right
 * end, in its right half (number_sits_below()), or the mirror above
 * (number_sits_above()), and nothing else is on the number's line. -1
 * when none. */
static int
number_below_block (const PageCtx *pc, guint i)
{
  GArray *chunks = pc->chunks;
  const Chunk *ch = &g_array_index (chunks, Chunk, i);
  double em = ch->em, cy = fm_rect_cy (&ch->box);

  for (guint k = 0; k < chunks->len; k++)
    {
      const Chunk *o = &g_array_index (chunks, Chunk, k);
      if (k != i && o->box.y0 < cy && o->box.y1 > cy && !across_gutter (pc, fm_rect_cx (&o->box), fm_rect_cx (&ch->box)))
        return -1;      /* a line of text, or another part of a formula */
    }
  for (int b = 0; b < pc->n_blocks; b++)
    {
      const FmRect *bl = &pc->blocks[b];
      if (bl->x1 <= bl->x0 || across_gutter (pc, fm_rect_cx (bl), fm_rect_cx (&ch->box)))
        continue;
      if (number_sits_below (&ch->box, bl, em))
        return b;
    }
  for (int b = 0; b < pc->n_blocks; b++)
    {
      const FmRect *bl = &pc->blocks[b];
      if (bl->x1 <= bl->x0 || across_gutter (pc, fm_rect_cx (bl), fm_rect_cx (&ch->box)))
        continue;
      if (number_sits_above (&ch->box, bl, em))
        return b;
    }
  return -1;
}

/* An equation number set below its display (number_below_block()) is less
 * than 0.9 em below the display's last line, so the stacked chunks made
 * it part of the block: a number chunk of a block whose other chunks end
 * above it, in the block's right half and ending at or right of them, is
 * taken out again (the block's box shrinks to the rest); so is a left
 * number above the rest (number_sits_above()). */
static void
detach_numbers_below (PageCtx *pc)
{
  GArray *chunks = pc->chunks;

  for (guint i = 0; i < chunks->len; i++)
    {
      Chunk *ch = &g_array_index (chunks, Chunk, i);
      FmRect rest = { 0, 0, 0, 0 };
      gboolean any = FALSE;
      int b = ch->block;

      if (!ch->is_number || b < 0)
        continue;
      for (guint k = 0; k < chunks->len; k++)
        {
          const Chunk *o = &g_array_index (chunks, Chunk, k);
          if (k == i || o->block != b)
            continue;
          if (!any)
            rest = o->box;
          else
            fm_rect_union (&rest, &o->box);
          any = TRUE;
        }
      if (!any || !(number_sits_below (&ch->box, &rest, ch->em) || number_sits_above (&ch->box, &rest, ch->em)))
        continue;
      ch->block = -1;
      pc->blocks[b] = rest;
    }
}

/* One display proto per remaining block, then the equation numbers:
 * number-like chunks level with a display block. */
static void
display_and_number_protos (PageCtx *pc)
{
  GArray *chunks = pc->chunks;
  const FmRect *blocks = pc->blocks;

  detach_numbers_below (pc);
  pc->protos = g_ptr_array_new ();
  for (int b = 0; b < pc->n_blocks; b++)
    {
      Proto *pr;
      GArray *idx;
      if (blocks[b].x1 <= blocks[b].x0)
        continue;
      idx = g_array_new (FALSE, FALSE, sizeof (int));
      for (guint i = 0; i < chunks->len; i++)
        {
          Chunk *ch = &g_array_index (chunks, Chunk, i);
          if (ch->block == b)
            for (int k = ch->start; k < ch->end; k++)
              g_array_append_val (idx, k);
        }
      pr = g_new0 (Proto, 1);
      pr->kind = FM_REGION_DISPLAY;
      pr->n = (int) idx->len;
      pr->idx = (int *) (void *) g_array_free (idx, FALSE);
      pr->chunk_first = pc->block_first[b];
      pr->label_block = b;
      g_ptr_array_add (pc->protos, pr);
    }

  if (pc->opts.rule == FM_DETECT_RULE_PDFMATHTRANSLATE)
    return;
  for (guint i = 0; i < chunks->len; i++)
    {
      Chunk *ch = &g_array_index (chunks, Chunk, i);
      int best = -1;
      double best_gap = G_MAXDOUBLE;

      if (!ch->is_number)
        continue;
      for (int b = 0; b < pc->n_blocks; b++)
        {
          double cy = 0.5 * (ch->box.y0 + ch->box.y1);
          double gap = fm_rect_h_gap (&blocks[b], &ch->box);
          if (blocks[b].x1 <= blocks[b].x0)
            continue;
          if (cy >= blocks[b].y0 - 0.5 * ch->em && cy <= blocks[b].y1 + 0.5 * ch->em &&
              gap > 0.5 * ch->em && gap < pc->page_w * 0.6 && gap < best_gap &&
              !across_gutter (pc, fm_rect_cx (&blocks[b]), fm_rect_cx (&ch->box)))
            {
              best = b;
              best_gap = gap;
            }
        }
      if (best < 0)
        best = number_below_block (pc, i);
      if (best >= 0)
        {
          Proto *pr = g_new0 (Proto, 1);
          pr->kind = FM_REGION_NUMBER;
          pr->n = ch->end - ch->start;
          pr->idx = g_new (int, pr->n);
          for (int k = 0; k < pr->n; k++)
            pr->idx[k] = ch->start + k;
          pr->chunk_first = (int) i;
          pr->label_block = best;
          ch->block = -2; /* used */
          g_ptr_array_add (pc->protos, pr);
        }
    }
}

/* Whether an inline piece bb sits beside display block ba, between its
 * first and last rows: nothing but the display's own parts shares a
 * display's rows in its column (its number is a chunk of its own), so the
 * piece is a part its chunks missed - a cases environment's conditions
 * after "\text{if }", whose text words made them text lines ("x \neq 0"
 * and "y = 0" of \begin{cases} .. & \text{if } x \neq 0 \text{ or } ..).
 * Only for a block of two rows (1.8 em: two text-style rows of cases) or
 * more, the piece inside its height, a
 * few ems from it, in its column. */
static gboolean
beside_display_rows (const PageCtx *pc, const FmRect *ba, const FmRect *bb)
{
  double em = pc->body_em > 0 ? pc->body_em : 10.0;
  double gap = fm_rect_h_gap (ba, bb);

  /* starting right of the block's left edge: conditions follow their
   * values (a row's condition may already be in the block, so not right of
   * its right edge), and a piece to the left is the other column's prose
   * where no gutter was found; or reaching into the block over its left
   * edge (a cases' first-row operator \int_{\gamma\circ h}, left of a block
   * that starts at its subscript) */
  return ba->y1 - ba->y0 >= 1.8 * em && bb->y0 >= ba->y0 - 0.1 * em && bb->y1 <= ba->y1 + 0.1 * em &&
         (bb->x0 > ba->x0 || bb->x1 > ba->x0 + 0.2 * em) && gap < 3.0 * em &&
         !across_gutter (pc, fm_rect_cx (ba), fm_rect_cx (bb));
}

/* Inline pieces beside a display's rows (beside_display_rows) join it, the
 * block growing by each, so that the next piece on the row counts its gap
 * from the last ("if x \neq 0 or y \neq 0"). Each join restarts the scan
 * over all (piece, display) pairs, O(joins x protos^2): a grown block can
 * take a piece scanned before it, and the first pair in that order is the
 * one joined. Joins are a few per page (a cases display's conditions), so
 * the restart costs little; going on after a join could change which
 * display a piece beside two blocks joins. */
static void
join_display_row_pieces (PageCtx *pc)
{
  GPtrArray *protos = pc->protos;
  gboolean changed = TRUE;

  while (changed)
    {
      changed = FALSE;
      for (guint a = 0; a < protos->len && !changed; a++)
        {
          Proto *pb = protos->pdata[a];
          FmRect bb;
          if (pb->kind != FM_REGION_INLINE)
            continue;
          bb = pc->g[pb->idx[0]].r;
          for (int m = 1; m < pb->n; m++)
            fm_rect_union (&bb, &pc->g[pb->idx[m]].r);
          for (guint d = 0; d < protos->len && !changed; d++)
            {
              Proto *pa = protos->pdata[d];
              if (pa->kind != FM_REGION_DISPLAY || !beside_display_rows (pc, &pc->blocks[pa->label_block], &bb))
                continue;
              pa->idx = g_renew (int, pa->idx, pa->n + pb->n);
              memcpy (pa->idx + pa->n, pb->idx, sizeof (int) * pb->n);
              pa->n += pb->n;
              qsort (pa->idx, pa->n, sizeof (int), compare_int);
              {
                /* wider, never taller: the 0.1 em tolerance would let
                 * chained joins creep up or down the page */
                FmRect *block = &pc->blocks[pa->label_block];
                double y0 = block->y0, y1 = block->y1;
                fm_rect_union (block, &bb);
                block->y0 = y0;
                block->y1 = y1;
              }
              g_free (pb->idx);
              g_free (pb);
              g_ptr_array_remove_index (protos, a);
              changed = TRUE;
            }
        }
    }
}

/* Inline formulas among the glyphs of no display and no number. Pieces of
 * a display that its chunks did not catch (a limit Poppler put on a text
 * line) join it when they lie mostly inside its block. */
static void
inline_protos (PageCtx *pc)
{
  const Glyph *g = pc->g;
  GArray *chunks = pc->chunks;
  GPtrArray *protos = pc->protos;
  gboolean *excluded = g_new0 (gboolean, pc->n + 1);
  int *chunk_of = g_new0 (int, pc->n + 1);
  GPtrArray *inl;

  for (guint i = 0; i < chunks->len; i++)
    {
      Chunk *ch = &g_array_index (chunks, Chunk, i);
      for (int k = ch->start; k < ch->end; k++)
        {
          chunk_of[k] = (int) i;
          excluded[k] = ch->block != -1;
        }
    }
  inl = inline_clusters (g, pc->n, excluded, chunk_of, pc->body_em, pc->opts.rule, pc);
  g_free (excluded);
  g_free (chunk_of);

  for (guint a = 0; a < inl->len; a++)
    {
      Proto *pb = inl->pdata[a];
      FmRect bb = g[pb->idx[0]].r;
      gboolean joined = FALSE;

      for (int m = 1; m < pb->n; m++)
        fm_rect_union (&bb, &g[pb->idx[m]].r);
      for (guint d = 0; d < protos->len && !joined; d++)
        {
          Proto *pa = protos->pdata[d];
          const FmRect *ba;
          double ix, iy;
          if (pa->kind != FM_REGION_DISPLAY)
            continue;
          ba = &pc->blocks[pa->label_block];
          ix = MIN (ba->x1, bb.x1) - MAX (ba->x0, bb.x0);
          iy = MIN (ba->y1, bb.y1) - MAX (ba->y0, bb.y0);
          /* (or 40 % when it lies within the block's columns: a
           * display-style fraction in the middle of the line, taller than
           * the block of the line's chunks) */
          if (ix > 0 && iy > 0 &&
              (ix * iy >= 0.5 * (bb.x1 - bb.x0) * (bb.y1 - bb.y0) ||
               (bb.x0 >= ba->x0 && bb.x1 <= ba->x1 && ix * iy >= 0.4 * (bb.x1 - bb.x0) * (bb.y1 - bb.y0))))
            {
              pa->idx = g_renew (int, pa->idx, pa->n + pb->n);
              memcpy (pa->idx + pa->n, pb->idx, sizeof (int) * pb->n);
              pa->n += pb->n;
              qsort (pa->idx, pa->n, sizeof (int), compare_int);
              g_free (pb->idx);
              g_free (pb);
              joined = TRUE;
            }
        }
      if (!joined && pb->absorb_only)
        {
          g_free (pb->idx);
          g_free (pb);
        }
      else if (!joined)
        g_ptr_array_add (protos, pb);
    }
  g_ptr_array_free (inl, TRUE);
  /* the pdfmathtranslate rule is the bench's baseline: no line walks */
  if (pc->opts.rule == FM_DETECT_RULE_FULL)
    join_display_row_pieces (pc);
}

/* Whether a glyph of the proto at m's size (not a script, limit or
 * fraction part in a smaller size) lies wholly below m, 0.15 em clear of
 * it: m is not on the display's last line. A display style fraction's
 * denominator does not: its box overlaps the baseline's (shifted down
 * 0.69 em, its box reaching 0.7 em up), the next row of an aligned block
 * (\baselineskip, 1.2 em on) clears it by 0.4 em. */
static gboolean
line_below (const Glyph *g, const Proto *pr, int m)
{
  const Glyph *p = &g[pr->idx[m]];
  gboolean below = FALSE, below_under = FALSE, above = FALSE;

  for (int k = 0; k < pr->n; k++)
    {
      const Glyph *q = &g[pr->idx[k]];
      if (q->size < 0.9 * p->size)
        continue;
      if (q->r.y0 > p->r.y1 + 0.15 * p->size)
        {
          below = TRUE;
          below_under = below_under || (q->r.x1 > p->r.x0 && q->r.x0 < p->r.x1);
        }
      if (q->r.y1 < p->r.y0 - 0.15 * p->size)
        above = TRUE;
    }
  /* Punctuation after a three-row cases/pmatrix or an aligned block with a
   * \dfrac row sits on the main baseline, mid-block: rows above it and
   * below it, but nothing under it (review of cw12r: "cases}." kept its
   * period). An upper row's own comma has nothing above it, or a lower
   * row reaching under it. */
  return below && (below_under || !above);
}

/* A display's sentence punctuation ("\[ x = 1, \]"): the rightmost glyph
 * of its last line, a period/comma/semicolon that is no ellipsis dot, is
 * not part of the formula. The rightmost glyph of the whole display can
 * end an upper row ("X'' + \lambda X = 0," over "Y'' - \lambda Y = 0.",
 * fresh seed 1046 on every set-up): that punctuation is the formula's, and
 * the region without it left a glyph out of the text layer's reading. */
static void
drop_display_punct (const PageCtx *pc, Proto *pr)
{
  const Glyph *g = pc->g;
  int last = -1;

  if (pr->kind != FM_REGION_DISPLAY || pr->n <= 2)
    return;
  for (int m = 0; m < pr->n; m++)
    if ((last < 0 || g[pr->idx[m]].r.x1 > g[pr->idx[last]].r.x1) && !line_below (g, pr, m))
      last = m;
  if (last < 0)
    return;
  if (is_sentence_punct (g[pr->idx[last]].c) && g[pr->idx[last]].c != ':' &&
      !ellipsis_dot (g, pc->n, pr->idx[last]))
    {
      memmove (pr->idx + last, pr->idx + last + 1, sizeof (int) * (pr->n - last - 1));
      pr->n--;
    }
}

/* Whether proto pr holds no running-text letter (a frame's formula is math
 * only; a line of framed prose with a formula in it is not). */
static gboolean
proto_all_math (const Glyph *g, const Proto *pr)
{
  for (int m = 0; m < pr->n; m++)
    if (g[pr->idx[m]].cls == CLS_TEXT && g_unichar_isalpha (g[pr->idx[m]].c))
      return FALSE;
  return TRUE;
}

/* Which way a line of ink runs: along a row (y fixed) or a column (x
 * fixed). */
typedef enum { INK_ROW, INK_COLUMN } InkAxis;

/* Whether the line of ink at at (row y = at for INK_ROW, column x = at for
 * INK_COLUMN) holds ink at every pixel from from to to along it but a few
 * (a rule's anti-aliased pixels). */
static gboolean
ink_line_covered (const InkMap *m, InkAxis axis, int at, int from, int to)
{
  int lines = axis == INK_ROW ? m->h : m->w;
  int length = axis == INK_ROW ? m->w : m->h;
  int miss = 0;

  if (at < 0 || at >= lines)
    return FALSE;
  for (int i = MAX (0, from); i <= MIN (length - 1, to); i++)
    {
      int x = axis == INK_ROW ? i : at, y = axis == INK_ROW ? at : i;
      miss += !m->ink[(gsize) y * m->w + x];
    }
  return miss * 20 <= to - from + 1;
}

/* Where a rule of ink along row y (or the row under it: a rule is a pixel
 * or two) runs on from column x in direction dir; x itself when none. */
static int
ink_rule_end (const InkMap *m, int y, int x, int dir)
{
  int best = x;

  for (int r = y; r <= y + 1 && r < m->h; r++)
    {
      int e = x;
      while (e + dir >= 0 && e + dir < m->w && m->ink[(gsize) r * m->w + e + dir])
        e += dir;
      best = dir > 0 ? MAX (best, e) : MIN (best, e);
    }
  return best;
}

/* Whether rect a holds rect b whole. */
static gboolean
rect_holds (const FmRect *a, const FmRect *b)
{
  return b->x0 >= a->x0 && b->x1 <= a->x1 && b->y0 >= a->y0 && b->y1 <= a->y1;
}

/* The frame whose side is the stroke of ink column x through row mid, its
 * interior on side dir (1: right, -1: left): the stroke at least min_h
 * pixels tall, a rule along its top and its bottom running 3 em or more
 * to a second stroke as tall. *frame gets the frame's box. */
static gboolean
frame_from_stroke (const InkMap *m, int x, int mid, int min_h, int dir, double em, FmRect *frame)
{
  int top = mid, bottom = mid, far, far_bottom;

  if (x < 0 || x >= m->w || mid < 0 || mid >= m->h || !m->ink[(gsize) mid * m->w + x])
    return FALSE;
  while (top > 0 && m->ink[(gsize) (top - 1) * m->w + x])
    top--;
  while (bottom + 1 < m->h && m->ink[(gsize) (bottom + 1) * m->w + x])
    bottom++;
  if (bottom + 1 - top < min_h)
    return FALSE;
  far = ink_rule_end (m, top, x, dir);
  far_bottom = ink_rule_end (m, MAX (bottom - 1, 0), x, dir);
  if (abs (far - x) < 3.0 * em * m->scale || abs (far_bottom - far) > 0.2 * em * m->scale ||
      !ink_line_covered (m, INK_COLUMN, far, top + 1, bottom - 1) ||
      !(ink_line_covered (m, INK_ROW, top, MIN (x, far), MAX (x, far)) ||
        ink_line_covered (m, INK_ROW, top + 1, MIN (x, far), MAX (x, far))))
    return FALSE;
  frame->x0 = MIN (x, far) / m->scale;
  frame->x1 = (MAX (x, far) + 1) / m->scale;
  frame->y0 = top / m->scale;
  frame->y1 = (bottom + 1) / m->scale;
  return TRUE;
}

/* A frame (\fbox{\parbox{...}{...}}, a framed box) right beside box on
 * side 0 (right) or 1 (left), its interior away from box: its side within
 * 0.8 em of box through the middle of the formula's line (y0..y1), 1.2
 * em taller than the line (a frame of two lines of text; a glyph's ink
 * is not, a delimiter has no rules), and
 * (frame_from_stroke()) its rules running away from box. A formula inside
 * a frame (cls-framerule) has the frame's side beside it too, but the
 * rules run past it, not away. */
static gboolean
frame_beside (const InkMap *m, const FmRect *box, double y0, double y1, double em, int side, FmRect *frame)
{
  int dir = side == 0 ? 1 : -1;
  int start = side == 0 ? (int) ceil (box->x1 * m->scale) : (int) floor (box->x0 * m->scale) - 1;
  int reach = (int) ceil (0.8 * em * m->scale), mid = (int) floor (0.5 * (y0 + y1) * m->scale);
  int min_h = (int) ceil ((y1 - y0 + 1.2 * em) * m->scale);

  if (mid < 0 || mid >= m->h)
    return FALSE;
  for (int d = 0; d < reach; d++)
    {
      int x = start + dir * d;
      if (x < 0 || x >= m->w)
        return FALSE;
      if (m->ink[(gsize) mid * m->w + x])
        return frame_from_stroke (m, x, mid, min_h, dir, em, frame);
    }
  return FALSE;
}

/* Grows a formula's box over the frames beside it (frame_beside()) and
 * the frames its line crosses (a display whose line took a line of each
 * frame's text, XeLaTeX and LuaLaTeX): the corpus' displays of framed
 * paragraphs joined by math, c\fbox{\parbox{38mm}{Alice saw ...}} +
 * c'\fbox{\parbox{38mm}{Bob saw ...}}, (fresh detect 1092, three engines)
 * came as the letters and signs between the frames - inline pieces, or a
 * display without its frames. line is the formula's own line (before
 * any growth). Returns whether it grew. */
static gboolean
grow_over_frames (const InkMap *m, FmRect *box, const FmRect *line, double em, gboolean crossing)
{
  gboolean grew = FALSE;
  FmRect frame;
  int mid = (int) floor (0.5 * (line->y0 + line->y1) * m->scale);
  int min_h = (int) ceil ((line->y1 - line->y0 + 1.2 * em) * m->scale);

  for (int side = 0; side < 2; side++)
    while (frame_beside (m, box, line->y0, line->y1, em, side, &frame) && !rect_holds (box, &frame))
      {
        fm_rect_union (box, &frame);
        grew = TRUE;
      }
  if (crossing)
    for (int x = (int) floor (line->x0 * m->scale); x <= (int) ceil (line->x1 * m->scale); x++)
      for (int dir = -1; dir <= 1; dir += 2)
        if (frame_from_stroke (m, x, mid, min_h, dir, em, &frame) && !rect_holds (box, &frame))
          {
            fm_rect_union (box, &frame);
            grew = TRUE;
          }
  return grew;
}

/* Joins the regions that grow_over_frames() grew (framed[a]) with the
 * regions their boxes now overlap, into one display: the frames' math
 * between them (+c', - b) and after them, growing over the frames beside
 * the joined line. lines[] are the regions' own lines. Equation numbers'
 * display indices follow. */
static void
join_framed_regions (const InkMap *m, GPtrArray *regions, gboolean *framed, FmRect *lines)
{
  for (guint a = 0; a < regions->len; a++)
    for (guint b = a + 1; b < regions->len; b++)
      {
        FmRegion *ra = regions->pdata[a], *rb = regions->pdata[b];
        char *text;

        if (!(framed[a] || framed[b]) || ra->kind == FM_REGION_NUMBER || rb->kind == FM_REGION_NUMBER ||
            fm_rect_h_gap (&ra->box, &rb->box) > 0.0 || fm_rect_v_gap (&ra->box, &rb->box) > 0.0)
          continue;
        fm_rect_union (&ra->box, &rb->box);
        fm_rect_union (&lines[a], &lines[b]);
        text = g_strconcat (ra->text ? ra->text : "", " ", rb->text ? rb->text : "", NULL);
        g_free (ra->text);
        ra->text = text;
        framed[a] = TRUE;
        grow_over_frames (m, &ra->box, &lines[a], ra->font_size, FALSE);
        for (guint k = 0; k < regions->len; k++)
          {
            FmRegion *rk = regions->pdata[k];
            if (rk->label_of == (int) b)
              rk->label_of = (int) a;
            else if (rk->label_of > (int) b)
              rk->label_of--;
          }
        memmove (framed + b, framed + b + 1, sizeof (gboolean) * (regions->len - b - 1));
        memmove (lines + b, lines + b + 1, sizeof (FmRect) * (regions->len - b - 1));
        g_ptr_array_remove_index (regions, b);
        b = a;
      }
  for (guint a = 0; a < regions->len; a++)
    if (framed[a])
      ((FmRegion *) regions->pdata[a])->kind = FM_REGION_DISPLAY;
}

/* The regions, in reading order (the order of their first chunk; numbers
 * after their display, which gets its index first): box fitted to the ink,
 * turned back to the displayed page, text, font size, and the display each
 * number labels. */
static GPtrArray *
make_regions (PageCtx *pc)
{
  GPtrArray *protos = pc->protos;
  GPtrArray *regions = g_ptr_array_new_with_free_func ((GDestroyNotify) fm_region_free);
  int *block_region = g_new (int, pc->n_blocks + 1);
  gboolean *framed = g_new0 (gboolean, protos->len + 1);
  FmRect *lines = g_new0 (FmRect, protos->len + 1);

  for (int b = 0; b <= pc->n_blocks; b++)
    block_region[b] = -1;
  for (guint a = 0; a < protos->len; a++)
    for (guint b = a + 1; b < protos->len; b++)
      {
        Proto *pa = protos->pdata[a], *pb = protos->pdata[b];
        int ka = pa->chunk_first * 4 + (pa->kind == FM_REGION_NUMBER ? 3 : 0);
        int kb = pb->chunk_first * 4 + (pb->kind == FM_REGION_NUMBER ? 3 : 0);
        if (kb < ka || (kb == ka && pb->idx[0] < pa->idx[0]))
          {
            protos->pdata[a] = pb;
            protos->pdata[b] = pa;
          }
      }
  for (guint a = 0; a < protos->len; a++)
    {
      Proto *pr = protos->pdata[a];
      FmRect box;
      FmRegion *region;
      double *sizes;

      drop_display_punct (pc, pr);
      sizes = g_new (double, pr->n);
      box = pc->g[pr->idx[0]].r;
      for (int m = 0; m < pr->n; m++)
        {
          fm_rect_union (&box, &pc->g[pr->idx[m]].r);
          sizes[m] = pc->g[pr->idx[m]].size;
        }
      region = fm_region_new (pc->page_index, pr->kind, &box);
      region->font_size = fm_median (sizes, pr->n, 0.0);
      if (region->font_size <= 0.5)
        region->font_size = 10.0;
      g_free (sizes);
      region->text = glyph_text (pc->g, pr->idx, pr->n);
      if (pc->have_ink)
        {
          FmRect b0 = region->box, b1;
          ink_refine (&pc->ink_map, &region->box, region->font_size, (int) a + 1);
          b1 = region->box;
          ink_lost_delimiters (&pc->ink_map, &region->box, region->font_size, pc->g, pc->n);
          lines[a] = b0;
          framed[a] = pr->kind != FM_REGION_NUMBER &&
                      (proto_all_math (pc->g, pr) || pr->kind == FM_REGION_DISPLAY) &&
                      grow_over_frames (&pc->ink_map, &region->box, &lines[a], region->font_size,
                                        pr->kind == FM_REGION_DISPLAY);
          if (g_getenv ("FM_DETECT_DEBUG"))
            g_printerr ("region %s [%.1f %.1f %.1f %.1f] ink [%.1f %.1f %.1f %.1f] delim [%.1f %.1f %.1f %.1f]\n",
                        region->text, b0.x0, b0.y0, b0.x1, b0.y1, b1.x0, b1.y0, b1.x1, b1.y1, region->box.x0,
                        region->box.y0, region->box.x1, region->box.y1);
        }
      if (pr->kind == FM_REGION_DISPLAY)
        block_region[pr->label_block] = (int) regions->len;
      g_ptr_array_add (regions, region);
    }
  for (guint a = 0; a < protos->len; a++)
    {
      Proto *pr = protos->pdata[a];
      if (pr->kind == FM_REGION_NUMBER)
        ((FmRegion *) regions->pdata[a])->label_of = block_region[pr->label_block];
    }
  g_free (block_region);
  /* (in the upright frame, where the ink is; then turned back) */
  if (pc->have_ink)
    join_framed_regions (&pc->ink_map, regions, framed, lines);
  for (guint a = 0; a < regions->len; a++)
    {
      FmRegion *region = regions->pdata[a];
      region->box = fm_rect_from_frame (&region->box, pc->rot, pc->disp_w, pc->disp_h);
    }
  g_free (framed);
  g_free (lines);
  return regions;
}

static void
page_ctx_clear (PageCtx *pc)
{
  if (pc->protos != NULL)
    {
      for (guint a = 0; a < pc->protos->len; a++)
        {
          Proto *pr = pc->protos->pdata[a];
          g_free (pr->idx);
          g_free (pr);
        }
      g_ptr_array_free (pc->protos, TRUE);
    }
  if (pc->chunks != NULL)
    g_array_free (pc->chunks, TRUE);
  g_free (pc->blocks);
  g_free (pc->block_first);
  g_free (pc->g);
  if (pc->have_ink)
    ink_map_clear (&pc->ink_map);
}

GPtrArray *
fm_detect_page (FmDocument            *doc,
                int                    page_index,
                const FmDetectOptions *options,
                GError               **error)
{
  PageCtx pc = { 0 };
  GPtrArray *regions;

  pc.opts = options ? *options : fm_detect_default_options ();
  pc.page_index = page_index;
  /* under the document's lock: everything that reads the Poppler page */
  if (!page_glyphs (&pc, doc, error))
    {
      page_ctx_clear (&pc);
      return NULL;
    }
  page_words (&pc);
  page_ink (&pc);
  fraction_part_words (&pc);
  fit_tall_glyphs (&pc);
  page_columns_and_lost_glyphs (&pc);
  page_release (&pc, doc);

  /* displays */
  make_chunks (&pc);
  display_chunks (&pc);
  if (pc.opts.rule == FM_DETECT_RULE_FULL)
    {
      word_tags (&pc);
      display_lines_with_text (&pc);
    }
  display_blocks (&pc);
  if (pc.opts.rule == FM_DETECT_RULE_FULL)
    continuation_lines (&pc);
  merge_blocks (&pc);
  if (pc.opts.rule == FM_DETECT_RULE_FULL)
    {
      if (first_rows_above (&pc))
        merge_blocks (&pc);
      if (aligned_rows (&pc))
        merge_blocks (&pc);
      stacked_neutral_parts (&pc);
      /* (word parts make the blocks of one display line touch) */
      if (stacked_word_parts (&pc))
        merge_blocks (&pc);
      condition_rows (&pc);
      join_words_beside_rows (&pc);
      dissolve_crossed_blocks (&pc);
    }
  display_and_number_protos (&pc);

  /* inline formulas, then all in reading order */
  inline_protos (&pc);
  regions = make_regions (&pc);
  page_ctx_clear (&pc);
  return regions;
}
