/* fm-markdown.c - the Markdown layout engine (fm-markdown.h). */
#include "fm-markdown.h"

#include <math.h>
#include <string.h>

#include "fm-layout.h"
#include "fm-latex-check.h"
#include "fm-page-text.h"

/* Poppler's text order is not used as the reading order: it leaves the pieces
 * of a display formula that its boxes put outside the region (radical signs,
 * "det" before a matrix, limits, numerators) as lines of their own, puts page
 * numbers between the lines of a formula, and reads a rotated page's lines in
 * a wrong order. So each page is laid out again, in a frame where text runs
 * left to right and lines go down:
 *  1. every glyph goes to the region that covers it; glyphs on a display's
 *     line next to it, or stacked on it, go to the display too, and an
 *     equation number on its line becomes the display's \tag
 *     (fm_page_text_assign, shared with recognition's crop boxes);
 *  2. the other glyphs and the inline regions make lines, lines and displays
 *     are split into columns (a gutter that few items cross) and read column
 *     by column; page numbers and running headers are left out;
 *  3. lines make paragraphs (indent, a wider gap, a short last line), joined
 *     with hyphens undone; text is escaped for Markdown, formulas are not.
 */

typedef struct {
  gboolean math;          /* an inline region (index = slot), else a glyph  */
  int index;
  FmRect r;
  gboolean piece_start;   /* Poppler's space before it is a line break      */
} MdTok;

typedef struct {
  gboolean display;       /* a display (slot), else a text line (toks)      */
  int slot;
  GArray *toks;
  FmRect r;
  double base;            /* bottom of its text glyphs (fm_median)             */
  double em;              /* median font size of its glyphs                 */
  int column;             /* 0: spanning or single column, 1 left, 2 right  */
  gboolean drop;          /* page number or running header                  */
} MdItem;

/* A page as the Markdown layout sees it: its glyphs and regions in the text
 * frame (fm-page-text.h), and the lines and displays it makes of them. */
typedef struct {
  FmPageText t;
  GArray *items;          /* MdItem, in reading order after md_layout       */
} MdPage;

static void
md_page_clear (MdPage *pg)
{
  if (pg->items)
    {
      for (guint i = 0; i < pg->items->len; i++)
        {
          MdItem *it = &g_array_index (pg->items, MdItem, i);
          if (it->toks)
            g_array_unref (it->toks);
        }
      g_array_unref (pg->items);
      pg->items = NULL;
    }
  fm_page_text_clear (&pg->t);
}

static char *md_line_plain (MdPage *pg, const MdItem *it);

static void
md_item_measure (MdPage *pg, MdItem *it)
{
  double *bases, *sizes;
  int nb = 0, ns = 0;

  if (it->display)
    {
      it->r = pg->t.slots[it->slot].r;
      it->base = it->r.y1;
      it->em = pg->t.body_em;
      return;
    }
  bases = g_new (double, it->toks->len + 1);
  sizes = g_new (double, it->toks->len + 1);
  it->r = (FmRect) { G_MAXDOUBLE, G_MAXDOUBLE, -G_MAXDOUBLE, -G_MAXDOUBLE };
  for (guint k = 0; k < it->toks->len; k++)
    {
      MdTok *t = &g_array_index (it->toks, MdTok, k);
      fm_rect_union (&it->r, &t->r);
      if (!t->math)
        {
          bases[nb++] = t->r.y1;
          sizes[ns++] = pg->t.g[t->index].size;
        }
    }
  it->base = fm_median (bases, nb, it->r.y1);
  it->em = fm_median (sizes, ns, pg->t.body_em);
  g_free (bases);
  g_free (sizes);
}

static int
cmp_tok_x (const void *a, const void *b)
{
  const MdTok *x = a, *y = b;
  return (x->r.x0 > y->r.x0) - (x->r.x0 < y->r.x0);
}

typedef struct {
  int band, column;
  double y;
  guint index;
} MdOrderKey;

static int
cmp_order (const void *a, const void *b)
{
  const MdOrderKey *x = a, *y = b;
  if (x->band != y->band)
    return x->band - y->band;
  if (x->column != y->column)
    return x->column - y->column;
  if (x->y != y->y)
    return (x->y > y->y) - (x->y < y->y);
  return (x->index > y->index) - (x->index < y->index);
}

/* Step 2a: pieces. Poppler's text order, cut where the next token is not on
 * the same line (no vertical overlap, or back to the left, or far right) and
 * at the gutter (Poppler joins lines of two columns that line up); then the
 * inline regions with no glyph of their own, and the displays. Each piece is
 * measured and given its column. */
static GArray *
md_pieces (MdPage *pg, gboolean two, double gutter_lo, double gutter_hi)
{
  GArray *pieces = g_array_new (FALSE, TRUE, sizeof (MdItem));
  MdItem *cur = NULL;
  const MdTok *last = NULL;
  double gutter = 0.5 * (gutter_lo + gutter_hi);

  for (int i = 0; i < pg->t.n; i++)
    {
      FmTextGlyph *g = &pg->t.g[i];
      MdTok t = { FALSE, i, g->r };
      gboolean same;

      if (g->slot >= 0)
        {
          FmTextSlot *s = &pg->t.slots[g->slot];
          if (s->reg->kind != FM_REGION_INLINE || s->placed)
            continue;
          s->placed = TRUE;
          t = (MdTok) { TRUE, g->slot, s->r };
        }
      else if (g->c < 0x20 || (g->c >= 0x7F && g->c < 0xA0) || g_unichar_type (g->c) == G_UNICODE_PRIVATE_USE)
        continue;  /* unmapped glyphs of big delimiters and the like */
      same = cur != NULL && last != NULL &&
             fm_rect_v_overlap (&t.r, &last->r) >= 0.4 * MIN (fm_rect_h (&t.r), fm_rect_h (&last->r)) &&
             t.r.x0 >= last->r.x0 - 0.5 * g->size && t.r.x0 - last->r.x1 <= 3 * g->size &&
             !(two && last->r.x1 <= gutter_lo + 0.5 && t.r.x0 >= gutter_hi - 0.5);
      t.piece_start = !same;
      if (!same)
        {
          MdItem it = { 0 };
          it.toks = g_array_new (FALSE, FALSE, sizeof (MdTok));
          g_array_append_val (pieces, it);
          cur = &g_array_index (pieces, MdItem, pieces->len - 1);
        }
      g_array_append_val (cur->toks, t);
      last = &g_array_index (cur->toks, MdTok, cur->toks->len - 1);
    }
  /* Inline regions with no glyph of their own, and displays. */
  for (int s = 0; s < pg->t.n_slots; s++)
    {
      MdItem it = { 0 };
      if (pg->t.slots[s].reg->kind == FM_REGION_INLINE && !pg->t.slots[s].placed)
        {
          MdTok t = { TRUE, s, pg->t.slots[s].r };
          it.toks = g_array_new (FALSE, FALSE, sizeof (MdTok));
          g_array_append_val (it.toks, t);
          g_array_append_val (pieces, it);
        }
      else if (pg->t.slots[s].reg->kind == FM_REGION_DISPLAY)
        {
          it.display = TRUE;
          it.slot = s;
          g_array_append_val (pieces, it);
        }
    }
  for (guint i = 0; i < pieces->len; i++)
    {
      MdItem *it = &g_array_index (pieces, MdItem, i);
      md_item_measure (pg, it);
    }

  for (guint i = 0; i < pieces->len; i++)
    {
      MdItem *it = &g_array_index (pieces, MdItem, i);
      it->column = !two ? 0 : it->r.x1 <= gutter ? 1 : it->r.x0 >= gutter ? 2 : 0;
    }

  return pieces;
}

/* Step 2b: lines. Takes pieces (and frees it). */
static GArray *
md_lines (MdPage *pg, GArray *pieces)
{
  GArray *lines;

  /* Pieces of one column on one baseline are one line ("1" and "Theory"
   * of a numbered heading, text on both sides of an inline formula that
   * Poppler split). */
  lines = g_array_new (FALSE, TRUE, sizeof (MdItem));
  for (guint i = 0; i < 3 * pieces->len; i++)
    {
      /* Text first, then script-size pieces (a footnote mark Poppler put
       * on a line of its own), then formulas alone: they join the text line
       * they sit in whatever Poppler's order. */
      MdItem *p = &g_array_index (pieces, MdItem, i % pieces->len);
      gboolean merged = FALSE, only_math = !p->display, script;
      if (!p->display && p->toks == NULL)
        continue;  /* merged in the first pass */
      for (guint k = 0; !p->display && k < p->toks->len && only_math; k++)
        only_math = g_array_index (p->toks, MdTok, k).math;
      script = !p->display && !only_math && p->em < 0.9 * pg->t.body_em;
      if (i / pieces->len != (only_math ? 2u : script ? 1u : 0u))
        continue;
      if (p->display)
        {
          g_array_append_val (lines, *p);
          continue;
        }
      for (guint j = 0; j < lines->len && !merged; j++)
        {
          MdItem *l = &g_array_index (lines, MdItem, j);
          double em = MAX (l->em, p->em);
          if (l->display || l->column != p->column)
            continue;
          /* A formula alone (a sum with limits) has no baseline of its own:
           * its middle sits on the math axis, inside the text line. */
          if ((!only_math && fabs (l->base - p->base) <= 0.25 * em) ||
              (only_math && fm_rect_cy (&p->r) <= l->base + 0.3 * l->em &&
               fm_rect_cy (&p->r) >= l->base - 1.2 * l->em) ||
              (script && l->em > 1.1 * p->em && fm_rect_v_overlap (&p->r, &l->r) >= 0.5 * fm_rect_h (&p->r) &&
               p->r.x0 >= l->r.x0 - l->em && p->r.x1 <= l->r.x1 + l->em))
            {
              g_array_append_vals (l->toks, p->toks->data, p->toks->len);
              g_array_unref (p->toks);
              p->toks = NULL;
              merged = TRUE;
            }
        }
      if (!merged)
        g_array_append_val (lines, *p);
    }
  g_array_unref (pieces);
  for (guint i = 0; i < lines->len; i++)
    {
      MdItem *l = &g_array_index (lines, MdItem, i);
      if (!l->display)
        {
          /* Stable within a piece: pieces start left of where the next begins. */
          g_array_sort (l->toks, cmp_tok_x);
          md_item_measure (pg, l);
        }
    }

  return lines;
}

/* Step 2c: reading order. Items spanning both columns cut the page into
 * bands; each band is read left column, right column, then the spanning
 * item. Sets pg->items from lines (which it frees). */
static void
md_order (MdPage *pg, GArray *lines, gboolean two)
{
  guint n_span = 0;
  double *span_y;
  MdOrderKey *keys;

  span_y = g_new (double, lines->len + 1);
  for (guint i = 0; i < lines->len; i++)
    {
      MdItem *l = &g_array_index (lines, MdItem, i);
      if (two && l->column == 0)
        span_y[n_span++] = fm_rect_cy (&l->r);
    }
  qsort (span_y, n_span, sizeof *span_y, fm_cmp_double);
  keys = g_new (MdOrderKey, lines->len + 1);
  for (guint i = 0; i < lines->len; i++)
    {
      MdItem *l = &g_array_index (lines, MdItem, i);
      double y = fm_rect_cy (&l->r);
      int band = 0;
      while ((guint) band < n_span && span_y[band] < y)
        band++;
      keys[i] = (MdOrderKey) { band, two && l->column == 0 ? 3 : l->column, y, i };
    }
  qsort (keys, lines->len, sizeof *keys, cmp_order);
  pg->items = g_array_sized_new (FALSE, TRUE, sizeof (MdItem), lines->len);
  for (guint i = 0; i < lines->len; i++)
    g_array_append_val (pg->items, g_array_index (lines, MdItem, keys[i].index));
  /* FM_MD_DEBUG=1: the laid-out items, for working on the layout. */
  if (g_getenv ("FM_MD_DEBUG"))
    for (guint i = 0; i < pg->items->len; i++)
      {
        MdItem *l = &g_array_index (pg->items, MdItem, i);
        g_autofree char *t = md_line_plain (pg, l);
        g_printerr ("item %u col %d [%.0f %.0f %.0f %.0f] base %.1f em %.1f %s%s\n", i, l->column,
                    l->r.x0, l->r.y0, l->r.x1, l->r.y1, l->base, l->em, l->display ? "DISPLAY " : "", t);
      }
  g_array_unref (lines);
  g_free (keys);
  g_free (span_y);
}

/* Step 2: lines, columns, reading order. */
static void
md_layout (MdPage *pg)
{
  /* Two columns as detection finds them (fm-layout.c), in this page's
   * frame: the export once had a finder of its own, which parted the same
   * pages within a point or two. */
  double gutter_lo = 0, gutter_hi = 0;
  double frame_w = (pg->t.dir & 1) ? pg->t.page_h : pg->t.page_w;
  gboolean two = pg->t.n > 0 &&
                 fm_layout_find_gutter (&pg->t.g[0].r, sizeof *pg->t.g, pg->t.n, frame_w,
                                        pg->t.body_em, &gutter_lo, &gutter_hi);

  md_order (pg, md_lines (pg, md_pieces (pg, two, gutter_lo, gutter_hi)), two);
}

/* A line's text layer, math included, for comparing lines across pages. */
static char *
md_line_plain (MdPage *pg, const MdItem *it)
{
  GString *s = g_string_new (NULL);
  if (it->display)
    return g_string_free (s, FALSE);
  for (guint k = 0; k < it->toks->len; k++)
    {
      const MdTok *t = &g_array_index (it->toks, MdTok, k);
      if (k > 0 && (t->math || pg->t.g[t->index].space_before))
        g_string_append_c (s, ' ');
      if (t->math)
        g_string_append (s, pg->t.slots[t->index].reg->text ? pg->t.slots[t->index].reg->text : "");
      else
        g_string_append_unichar (s, pg->t.g[t->index].c);
    }
  return g_string_free (s, FALSE);
}

/* "12", "- 12 -", "xii", "Page 12", "12 / 30": a page number. */
static gboolean
md_is_page_number (const char *text)
{
  g_autofree char *t = g_utf8_strdown (text, -1);
  const char *p = g_strstrip (t);
  gboolean digits = FALSE, roman = TRUE;

  if (g_str_has_prefix (p, "page "))
    p += 5;
  if (*p == '\0' || strlen (p) > 16)
    return FALSE;
  for (const char *q = p; *q; q++)
    {
      if (g_ascii_isdigit (*q))
        digits = TRUE;
      else if (strchr ("ivxlcdm", *q) == NULL)
        roman = FALSE;
      if (!g_ascii_isdigit (*q) && strchr ("ivxlcdm-/ ", *q) == NULL && (guchar) *q < 0x80)
        return FALSE;
      if ((guchar) *q >= 0x80 && !g_str_has_prefix (q, "\xe2\x80\x93") && !g_str_has_prefix (q, "\xe2\x80\x94") &&
          (guchar) *q >= 0xC0)
        return FALSE;  /* only en and em dashes besides ASCII */
    }
  return digits || (roman && strlen (p) <= 6);
}

/* The top or bottom item of a page, apart from the rest by more than a line:
 * where page numbers and running heads sit. Returns its index or -1. */
static int
md_edge_item (MdPage *pg, gboolean top)
{
  int pick = -1;
  double gap = G_MAXDOUBLE;

  for (guint i = 0; i < pg->items->len; i++)
    {
      MdItem *it = &g_array_index (pg->items, MdItem, i);
      if (pick < 0 || (top ? it->r.y0 < g_array_index (pg->items, MdItem, pick).r.y0
                           : it->r.y1 > g_array_index (pg->items, MdItem, pick).r.y1))
        pick = (int) i;
    }
  if (pick < 0 || g_array_index (pg->items, MdItem, pick).display || pg->items->len < 2)
    return -1;
  for (guint i = 0; i < pg->items->len; i++)
    {
      MdItem *it = &g_array_index (pg->items, MdItem, i), *e = &g_array_index (pg->items, MdItem, pick);
      if ((int) i != pick)
        gap = MIN (gap, top ? it->r.y0 - e->r.y1 : e->r.y0 - it->r.y1);
    }
  return gap >= 1.0 * g_array_index (pg->items, MdItem, pick).em ? pick : -1;
}

/* A line for running-head comparison: digits left out (page numbers). */
static char *
md_head_key (MdPage *pg, int index)
{
  g_autofree char *plain = md_line_plain (pg, &g_array_index (pg->items, MdItem, index));
  GString *s = g_string_new (NULL);
  for (const char *p = plain; *p; p++)
    if (!g_ascii_isdigit (*p) && !g_ascii_isspace (*p))
      g_string_append_c (s, *p);
  return g_string_free (s, FALSE);
}

/* Page numbers at the top or bottom of a page, and running heads and feet:
 * the same top or bottom line (digits aside) on two or more pages. */
static void
md_drop_furniture (MdPage *pages, int n_pages)
{
  for (int e = 0; e < 2; e++)
    {
      int *edge = g_new (int, n_pages + 1);
      char **key = g_new0 (char *, n_pages + 1);

      for (int i = 0; i < n_pages; i++)
        {
          edge[i] = pages[i].items ? md_edge_item (&pages[i], e == 0) : -1;
          if (edge[i] >= 0)
            key[i] = md_head_key (&pages[i], edge[i]);
        }
      for (int i = 0; i < n_pages; i++)
        {
          MdItem *it;
          g_autofree char *plain = NULL;
          gboolean repeated = FALSE;

          if (edge[i] < 0)
            continue;
          it = &g_array_index (pages[i].items, MdItem, edge[i]);
          plain = md_line_plain (&pages[i], it);
          for (int j = 0; j < n_pages && !repeated; j++)
            repeated = j != i && key[j] && *key[i] && strcmp (key[i], key[j]) == 0;
          if (md_is_page_number (plain) || repeated)
            it->drop = TRUE;
        }
      for (int i = 0; i < n_pages; i++)
        g_free (key[i]);
      g_free (key);
      g_free (edge);
    }
}

/* Paragraph text being built: Markdown-escaped text and $math$. */
typedef struct {
  GString *s;
  gboolean last_math;        /* the last thing written is a formula    */
  gsize math_end;            /* where that formula's closing $ is      */
  gboolean pending_space;
  gboolean hyphen_pending;   /* the last line ended "letter-"          */
  gboolean math_line_end;    /* the last line ended with that formula  */
} MdPara;

/* Does the formula before s[end] end in a relation or operator, where TeX
 * breaks an inline formula across lines? */
static gboolean
md_math_ends_open (const char *s, gsize end)
{
  static const char *const ops[] = {
    "leq", "geq", "le", "ge", "neq", "ne", "times", "cdot", "pm", "mp", "to", "in", "subset",
    "subseteq", "approx", "equiv", "sim", "simeq", "cong", "rightarrow", "Rightarrow", "mapsto",
    "cup", "cap", "oplus", "otimes", "ll", "gg", "propto", NULL
  };
  gsize k = end;

  while (k > 0 && s[k - 1] == ' ')
    k--;
  if (k == 0)
    return FALSE;
  if (strchr ("=+-<>,", s[k - 1]) && !(k >= 2 && s[k - 2] == '\\'))
    return TRUE;
  {
    gsize j = k;
    while (j > 0 && g_ascii_isalpha (s[j - 1]))
      j--;
    if (j > 0 && j < k && s[j - 1] == '\\')
      {
        g_autofree char *word = g_strndup (s + j, k - j);
        return g_strv_contains (ops, word);
      }
  }
  return FALSE;
}

static gboolean
md_is_closing (gunichar c)
{
  return c != 0 && (strchr (".,;:!?)]}", (int) (c < 0x80 ? c : 0x80)) != NULL ||
                    c == 0x2019 || c == 0x201D || c == 0x2026);
}

static gboolean
md_is_opening (gunichar c)
{
  return c == '(' || c == '[' || c == '{' || c == 0x2018 || c == 0x201C;
}

static gunichar
md_last_char (GString *s)
{
  const char *p;
  if (s->len == 0)
    return 0;
  p = g_utf8_find_prev_char (s->str, s->str + s->len);
  return p ? g_utf8_get_char (p) : 0;
}

static void
md_para_separator (MdPara *P, gunichar next, gboolean next_math)
{
  gunichar prev = md_last_char (P->s);
  gboolean space = P->pending_space;

  P->pending_space = FALSE;
  if (P->s->len == 0)
    return;
  if (P->hyphen_pending)
    {
      P->hyphen_pending = FALSE;
      /* "equa-" + "tion": a word broken at the line end; "Navier-" +
       * "Stokes" keeps its hyphen. Either way no space. */
      if (!next_math && g_unichar_islower (next))
        g_string_truncate (P->s, g_utf8_find_prev_char (P->s->str, P->s->str + P->s->len) - P->s->str);
      return;
    }
  if (P->last_math && next_math)
    space = TRUE;  /* "$a$$b$" would open a display */
  else if (P->last_math)
    space = g_unichar_isalnum (next) || (space && !md_is_closing (next));
  else if (next_math)
    space = g_unichar_isalnum (prev) || (space && !md_is_opening (prev));
  if (space && prev != ' ')
    g_string_append_c (P->s, ' ');
}

static void
md_para_add_char (MdPara *P, gunichar c, gboolean space_before)
{
  P->pending_space |= space_before;
  /* A formula that ends in the punctuation the text goes on with: the crop
   * took the comma or period after it (E = mc^{2}. followed by ","). */
  if (P->last_math && (c == '.' || c == ',' || c == ';' || c == ':') &&
      P->math_end + 1 == P->s->len && P->math_end >= 3 &&
      strchr (".,;:", P->s->str[P->math_end - 1]) && P->s->str[P->math_end - 2] != '\\' &&
      P->s->str[P->math_end - 2] != '$')
    {
      g_string_erase (P->s, P->math_end - 1, 1);
      P->math_end--;
    }
  md_para_separator (P, c, FALSE);
  P->last_math = P->math_line_end = FALSE;
  if (c == '\\' || c == '*' || c == '_' || c == '`' || c == '$')
    g_string_append_c (P->s, '\\');
  g_string_append_unichar (P->s, c);
}

/* Formula text for between dollars: one line, no unescaped $. Without
 * LaTeX (--detect-only) it is the text layer of the glyphs the region was
 * given here, pieces outside its box included, so the output shows them. */
static char *
md_math_body (MdPage *pg, int slot)
{
  const FmRegion *reg = pg->t.slots[slot].reg;
  g_autoptr(GString) layer = g_string_new (NULL);
  const char *src;
  GString *s = g_string_new (NULL);

  for (int i = 0; reg->latex == NULL && i < pg->t.n; i++)
    if (pg->t.g[i].slot == slot)
      {
        if (layer->len > 0 && pg->t.g[i].space_before)
          g_string_append_c (layer, ' ');
        g_string_append_unichar (layer, pg->t.g[i].c);
      }
  src = reg->latex ? reg->latex : layer->len > 0 ? layer->str : reg->text ? reg->text : "";

  for (const char *p = src; *p; p++)
    {
      if (*p == '\\' && p[1] != '\0')
        {
          g_string_append_c (s, *p++);
          g_string_append_c (s, *p);
          continue;
        }
      if (*p == '$')
        g_string_append_c (s, '\\');
      /* Control characters: unmapped glyphs (big delimiters) in a text layer. */
      g_string_append_c (s, ((guchar) *p < 0x20 || *p == 0x7F) ? ' ' : *p);
    }
  /* Pandoc and most note apps want no space inside the dollars. */
  for (;;)
    {
      g_strstrip (s->str);
      s->len = strlen (s->str);
      if (s->len >= 2 && s->str[s->len - 2] == '\\' && strchr (",;:! ", s->str[s->len - 1]) &&
          (s->len < 3 || s->str[s->len - 3] != '\\'))
        g_string_truncate (s, s->len - 2);
      else
        break;
    }
  return g_string_free (s, FALSE);
}

static void
md_para_add_math (MdPara *P, MdPage *pg, int slot, gboolean space_before)
{
  g_autofree char *body = md_math_body (pg, slot);
  if (*body == '\0')
    return;
  /* One formula that TeX broke at the line end after "E =": one $...$. */
  if (P->last_math && P->math_line_end && P->math_end + 1 == P->s->len &&
      md_math_ends_open (P->s->str, P->math_end))
    {
      g_string_truncate (P->s, P->math_end);
      g_string_append_printf (P->s, " %s$", body);
      P->math_end = P->s->len - 1;
      P->pending_space = P->math_line_end = FALSE;
      return;
    }
  P->math_line_end = FALSE;
  P->pending_space |= space_before;
  md_para_separator (P, 0, TRUE);
  g_string_append_printf (P->s, "$%s$", body);
  P->last_math = TRUE;
  P->math_end = P->s->len - 1;
}

static void
md_para_line_end (MdPara *P)
{
  gsize n = P->s->len;
  const char *prev;

  if (n == 0)
    return;
  P->math_line_end = P->last_math;
  prev = g_utf8_find_prev_char (P->s->str, P->s->str + n);
  if (!P->last_math && prev && prev > P->s->str &&
      (*prev == '-' || g_str_has_prefix (prev, "\xe2\x80\x90") || g_str_has_prefix (prev, "\xc2\xad")))
    {
      const char *before = g_utf8_find_prev_char (P->s->str, prev);
      if (before && g_unichar_isalpha (g_utf8_get_char (before)))
        {
          P->hyphen_pending = TRUE;
          return;
        }
    }
  P->pending_space = TRUE;
}

/* Writes the paragraph, escaping what would start a Markdown block. */
static void
md_para_flush (MdPara *P, GString *out, const char *prefix)
{
  const char *s;

  g_strstrip (P->s->str);
  P->s->len = strlen (P->s->str);
  s = P->s->str;
  if (P->s->len > 0)
    {
      gsize digits = strspn (s, "0123456789");
      g_string_append (out, prefix);
      if (*s == '#' || *s == '>' || *s == '=' || *s == '|' ||
          ((*s == '-' || *s == '+') && (s[1] == ' ' || s[1] == '\0' || s[1] == *s)))
        g_string_append_c (out, '\\');
      else if (digits > 0 && digits <= 9 && (s[digits] == '.' || s[digits] == ')') &&
               (s[digits + 1] == ' ' || s[digits + 1] == '\0'))
        {
          g_string_append_len (out, s, digits);
          g_string_append_c (out, '\\');
          s += digits;
        }
      g_string_append (out, s);
      g_string_append (out, "\n\n");
    }
  g_string_truncate (P->s, 0);
  P->last_math = P->pending_space = P->hyphen_pending = P->math_line_end = FALSE;
}

typedef struct {
  double left, right, pitch;
} MdColumn;

/* Step 3: paragraphs. */
static void
md_emit (MdPage *pg, GString *out)
{
  MdPara P = { g_string_new (NULL), FALSE, 0, FALSE, FALSE, FALSE };
  MdColumn col[3];
  const MdItem *prev = NULL;

  /* Each column's usual left and right edge and line pitch. */
  for (int c = 0; c < 3; c++)
    {
      double *l = g_new (double, pg->items->len + 1), *r = g_new (double, pg->items->len + 1);
      double *d = g_new (double, pg->items->len + 1);
      int n = 0, nd = 0;
      const MdItem *before = NULL;
      for (guint i = 0; i < pg->items->len; i++)
        {
          const MdItem *it = &g_array_index (pg->items, MdItem, i);
          if (it->column != c || it->drop)
            continue;
          if (it->display)
            {
              before = NULL;
              continue;
            }
          l[n] = it->r.x0;
          r[n++] = it->r.x1;
          if (before && it->base > before->base && it->base - before->base < 3 * it->em)
            d[nd++] = it->base - before->base;
          before = it;
        }
      col[c].left = fm_median (l, n, 0);
      col[c].right = fm_median (r, n, 0);
      col[c].pitch = fm_median (d, nd, 1.2 * pg->t.body_em);
      g_free (l);
      g_free (r);
      g_free (d);
    }

  for (guint i = 0; i < pg->items->len; i++)
    {
      const MdItem *it = &g_array_index (pg->items, MdItem, i);
      const MdColumn *c = &col[it->column];
      gboolean heading;

      if (it->drop)
        continue;
      if (it->display)
        {
          FmTextSlot *s = &pg->t.slots[it->slot];
          g_autofree char *body = md_math_body (pg, it->slot);
          md_para_flush (&P, out, "");
          if (*body)
            {
              g_string_append_printf (out, "$$%s", body);
              if (s->tag && fm_latex_check_tag (s->tag))
                g_string_append_printf (out, " \\tag{%s}", s->tag);
              g_string_append (out, "$$\n\n");
            }
          prev = it;
          continue;
        }
      /* A heading: a line in a font clearly larger than the body's. */
      heading = it->em >= 1.15 * pg->t.body_em && it->toks->len <= 80;
      if (heading || (prev && prev->display))
        md_para_flush (&P, out, "");
      else if (prev && !prev->display && P.s->len > 0)
        {
          gboolean indent = it->r.x0 > c->left + 0.7 * it->em;
          gboolean gap = prev->column == it->column && it->base - prev->base > 1.45 * c->pitch &&
                         it->base - prev->base > c->pitch + 0.3 * it->em;
          gunichar endc = md_last_char (P.s);
          gboolean short_end = prev->column == it->column &&
                               prev->r.x1 < col[prev->column].right - 2.0 * prev->em &&
                               (endc == '.' || endc == ':' || endc == '!' || endc == '?');
          /* A change of font size: a footnote after the text, or the text
           * after it. */
          gboolean size = fabs (it->em - prev->em) > 0.12 * MAX (it->em, prev->em);
          if (indent || gap || short_end || size || prev->em >= 1.15 * pg->t.body_em)
            md_para_flush (&P, out, "");
        }
      for (guint k = 0; k < it->toks->len; k++)
        {
          const MdTok *t = &g_array_index (it->toks, MdTok, k);
          gboolean space = k > 0 && fm_rect_h_gap (&t->r, &g_array_index (it->toks, MdTok, k - 1).r) >= 0.15 * it->em;
          if (t->math)
            md_para_add_math (&P, pg, t->index, space);
          else
            md_para_add_char (&P, pg->t.g[t->index].c,
                              space || (k > 0 && !t->piece_start && pg->t.g[t->index].space_before));
        }
      md_para_line_end (&P);
      if (heading)
        md_para_flush (&P, out, "## ");
      prev = it;
    }
  md_para_flush (&P, out, "");
  g_string_free (P.s, TRUE);
}

char *
fm_markdown_write (FmDocument *doc,
                   GPtrArray  *regions,
                   GArray     *page_list,
                   GPtrArray  *page_notes,
                   const char *title)
{
  GString *out = g_string_new (NULL);
  MdPage *pages = g_new0 (MdPage, page_list->len + 1);
  /* A page that cannot be read is a note in its place, as in json and tex:
   * the rest of the document is still worth writing (docs/cli.md). */
  char **unreadable = g_new0 (char *, page_list->len + 1);

  for (guint i = 0; i < page_list->len; i++)
    {
      g_autoptr(GError) page_error = NULL;
      if (fm_page_text_load (&pages[i].t, regions, doc, g_array_index (page_list, int, i), &page_error))
        {
          fm_page_text_assign (&pages[i].t, regions);
          md_layout (&pages[i]);
        }
      else
        {
          md_page_clear (&pages[i]);
          unreadable[i] = g_strdup (page_error ? page_error->message : "the page cannot be read");
        }
    }
  md_drop_furniture (pages, (int) page_list->len);
  if (title)
    {
      g_autofree char *t = g_strdup (title);
      g_strdelimit (t, "\r\n", ' ');
      g_string_append_printf (out, "# %s\n\n", g_strstrip (t));
    }
  for (guint i = 0; i < page_list->len; i++)
    {
      const char *note = i < page_notes->len ? page_notes->pdata[i] : NULL;
      if (i > 0)
        g_string_append (out, "---\n\n");
      if (note == NULL)
        note = unreadable[i];
      if (note)
        {
          g_autofree char *flat = g_strdup (note);
          g_strdelimit (flat, "\r\n", ' ');
          g_string_append_printf (out, "> Page %d: %s\n\n",
                                  g_array_index (page_list, int, i) + 1, flat);
        }
      if (pages[i].items)
        md_emit (&pages[i], out);
    }
  for (guint i = 0; i < page_list->len; i++)
    md_page_clear (&pages[i]);
  for (guint i = 0; i < page_list->len; i++)
    g_free (unreadable[i]);  /* not g_strfreev: readable pages leave NULL holes */
  g_free (unreadable);
  g_free (pages);
  return g_string_free (out, FALSE);
}
