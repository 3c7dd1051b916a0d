/* fm-page-text.c - a page's glyphs in its text frame, given to regions (fm-page-text.h). */
#include "fm-page-text.h"

#include <math.h>
#include <string.h>

#include "fm-layout.h"

void
fm_page_text_clear (FmPageText *pg)
{
  for (int s = 0; s < pg->n_slots; s++)
    g_free (pg->slots[s].tag);
  g_free (pg->g);
  g_free (pg->slots);
  memset (pg, 0, sizeof *pg);
}

/* "(3.1)", "(12a)", "(A.2)", "(2.1′)": an equation number set beside a
 * display. Returns the label without parentheses, or NULL. */
static char *
equation_label (const char *text)
{
  g_autofree char *t = g_strstrip (g_strdup (text ? text : ""));
  gsize n = strlen (t);
  char *inner;

  if (n < 3 || t[0] != '(' || t[n - 1] != ')')
    return NULL;
  t[n - 1] = '\0';
  inner = g_strstrip (t + 1);
  if (*inner == '\0' || strlen (inner) > 12)
    return NULL;
  for (const char *p = inner; *p; p = g_utf8_next_char (p))
    {
      gunichar c = g_utf8_get_char (p);
      if (!(g_unichar_isalnum (c) || c == '.' || c == '-' || c == 0x2032 || c == '\''))
        return NULL;
    }
  return g_strdup (inner);
}

/* Fills pg->g from the page's text layer (NULL: no text): every glyph but
 * spaces, no-break spaces and glyphs with a non-finite box, in the layer's order, with its box, font size (the last
 * attribute run that covers it; 0 when none does) and what came before it. */
static void
read_glyphs (FmPageText *pg, const FmTextLayer *tl)
{
  glong n_chars = tl != NULL ? tl->n_chars : 0;
  guint n_rects = tl != NULL ? tl->n_rects : 0;
  double *size_of = g_new0 (double, n_chars + 1);
  gboolean space = TRUE, newline = TRUE;
  const char *p;

  for (GList *l = tl != NULL ? tl->attrs : NULL; l; l = l->next)
    {
      PopplerTextAttributes *a = l->data;
      for (int k = MAX (0, a->start_index); k <= a->end_index && k < n_chars; k++)
        size_of[k] = a->font_size;
    }

  pg->g = g_new0 (FmTextGlyph, MIN ((glong) n_rects, n_chars) + 1);
  p = tl != NULL ? tl->text : "";
  for (glong k = 0; k < n_chars && k < (glong) n_rects; k++, p = g_utf8_next_char (p))
    {
      gunichar c = g_utf8_get_char (p);
      PopplerRectangle *pr = &tl->rects[k];
      FmTextGlyph *gl;

      if (g_unichar_isspace (c) || c == 0xA0 || !isfinite (pr->x1) || !isfinite (pr->y1) ||
          !isfinite (pr->x2) || !isfinite (pr->y2))
        {
          space = TRUE;
          if (c == '\n')
            newline = TRUE;
          continue;
        }
      gl = &pg->g[pg->n++];
      gl->c = c;
      gl->r = (FmRect) { MIN (pr->x1, pr->x2), MIN (pr->y1, pr->y2), MAX (pr->x1, pr->x2), MAX (pr->y1, pr->y2) };
      gl->size = size_of[k];
      gl->space_before = space;
      gl->line_before = newline;
      gl->slot = -1;
      space = newline = FALSE;
    }
  g_free (size_of);
}

gboolean
fm_page_text_load (FmPageText *pg, GPtrArray *regions, FmDocument *doc, int page_index, GError **error)
{
  PopplerPage *page;
  double w = 0, h = 0;
  FmDirVotes votes = { { 0 }, 0 };
  int dir;
  double *sizes;
  int n_sizes = 0;

  fm_document_lock (doc);
  page = fm_document_get_page_locked (doc, page_index, error);
  if (page == NULL)
    {
      fm_document_unlock (doc);
      return FALSE;
    }
  poppler_page_get_size (page, &w, &h);
  /* The layer the text reader and the crop boxes read too, cached with
   * the page while it is among the document's FM_DOCUMENT_RECENT_PAGES
   * recent pages and read from Poppler again after that
   * (fm_document_get_text_layer_locked): each
   * poppler_page_get_text* call copies the page's whole layer, and the
   * script-base measure (fm-recognize.c) loads a page per formula. The
   * glyphs are copied out while the page is held. */
  read_glyphs (pg, fm_document_get_text_layer_locked (page));
  g_object_unref (page);
  fm_document_unlock (doc);

  /* The direction text runs in: every step from one glyph to the next one
   * of its line votes (detection counts only steps inside words of text;
   * here every page with a line of text gets a frame). */
  for (int i = 1; i < pg->n; i++)
    if (!pg->g[i].line_before)
      fm_dir_votes_add (&votes, &pg->g[i - 1].r, &pg->g[i].r);
  dir = fm_dir_votes_winner (&votes, 0, 0);

  sizes = g_new (double, pg->n + 1);
  for (int i = 0; i < pg->n; i++)
    {
      pg->g[i].r = fm_rect_to_frame (&pg->g[i].r, dir, w, h);
      if (pg->g[i].size > 0)
        sizes[n_sizes++] = pg->g[i].size;
    }
  pg->body_em = fm_median (sizes, n_sizes, 10.0);
  g_free (sizes);
  for (int i = 0; i < pg->n; i++)
    if (pg->g[i].size <= 0)
      pg->g[i].size = pg->body_em;

  pg->dir = dir;
  pg->page_w = w;
  pg->page_h = h;
  pg->slots = g_new0 (FmTextSlot, regions->len + 1);
  for (guint i = 0; i < regions->len; i++)
    {
      FmRegion *reg = regions->pdata[i];
      if (reg->page != page_index)
        continue;
      pg->slots[pg->n_slots].reg = reg;
      pg->slots[pg->n_slots].r = fm_rect_to_frame (&reg->box, dir, w, h);
      pg->slots[pg->n_slots].crop = pg->slots[pg->n_slots].r;
      pg->n_slots++;
    }
  return TRUE;
}

/* Whether the run of unassigned glyphs that b's line of text makes (those
 * on its line, half their height or more beside b, within an em of each
 * other) lies within D's x-range, an em either side. Poppler's own lines
 * cannot say: it may set each word of a line as a line of its own. */
static gboolean
text_line_within (const FmPageText *pg, const FmRect *b, double em, const FmRect *D)
{
  gboolean grown = TRUE;
  double x0 = b->x0, x1 = b->x1;

  while (grown)
    {
      grown = FALSE;
      for (int i = 0; i < pg->n; i++)
        {
          const FmRect *g = &pg->g[i].r;
          if (pg->g[i].slot >= 0 || fm_rect_v_overlap (g, b) < 0.5 * MIN (fm_rect_h (g), fm_rect_h (b)) ||
              (g->x0 >= x0 && g->x1 <= x1) || g->x0 > x1 + em || g->x1 < x0 - em)
            continue;
          x0 = MIN (x0, g->x0);
          x1 = MAX (x1, g->x1);
          grown = TRUE;
        }
    }
  return x0 >= D->x0 - em && x1 <= D->x1 + em;
}

/* Pieces of a display that Poppler boxed outside it: on its line and next
 * to it, or stacked on it (limits, numerators) and no wider than it, nor
 * the line of text Poppler set it in: the words of the next line of a
 * two-column page ("point", "for" under a display, then the line's rest
 * beside them had widened its crop across both columns, development seed
 * 1105). The
 * display grows with each, so a chain of pieces is taken in a few rounds.
 * chunk_of: each glyph's chunk (a run of unassigned glyphs on one line). */
static void
take_display_pieces (FmPageText *pg, const int *chunk_of, int n_chunks)
{
  gboolean changed = TRUE;

  for (int round = 0; changed && round < 8; round++)
    {
      changed = FALSE;
      for (int c = 0; c < n_chunks; c++)
        {
          FmRect b = { G_MAXDOUBLE, G_MAXDOUBLE, -G_MAXDOUBLE, -G_MAXDOUBLE };
          GString *txt = g_string_new (NULL);
          double em = 0;
          int count = 0, take = -1, words = 1;
          gboolean as_tag = FALSE;
          g_autofree char *label = NULL;

          for (int i = 0; i < pg->n; i++)
            if (chunk_of[i] == c && pg->g[i].slot < 0)
              {
                fm_rect_union (&b, &pg->g[i].r);
                em = MAX (em, pg->g[i].size);
                if (pg->g[i].space_before && count > 0)
                  {
                    g_string_append_c (txt, ' ');
                    words++;
                  }
                g_string_append_unichar (txt, pg->g[i].c);
                count++;
              }
          if (count == 0)
            {
              g_string_free (txt, TRUE);
              continue;
            }
          label = equation_label (txt->str);
          g_string_free (txt, TRUE);
          for (int d = 0; d < pg->n_slots && take < 0; d++)
            {
              FmTextSlot *ds = &pg->slots[d];
              const FmRect *D = &ds->r;
              gboolean band = fm_rect_cy (&b) >= D->y0 && fm_rect_cy (&b) <= D->y1;
              if (ds->reg->kind != FM_REGION_DISPLAY)
                continue;
              if (band && label && ds->tag == NULL)
                {
                  ds->tag = g_steal_pointer (&label);
                  take = d;
                  as_tag = TRUE;
                }
              else if (band && fm_rect_h_gap (&b, D) <= 1.5 * em && words < 4)
                {
                  take = d;
                  /* "det" before a matrix: part of the formula the
                   * recogniser should see. Only sideways: a piece stacked
                   * above may be boxed by Poppler up into the line above.
                   * Not four words or more: the other column's line level
                   * with a display as wide as its own column, 1.4 em away
                   * (its words had been read as the display's end). */
                  ds->crop.x0 = MIN (ds->crop.x0, b.x0);
                  ds->crop.x1 = MAX (ds->crop.x1, b.x1);
                }
              else if (b.x0 >= D->x0 - em && b.x1 <= D->x1 + em && fm_rect_v_gap (&b, D) <= 0.5 * em &&
                       text_line_within (pg, &b, em, D))
                take = d;
            }
          if (take < 0)
            continue;
          for (int i = 0; i < pg->n; i++)
            if (chunk_of[i] == c && pg->g[i].slot < 0)
              pg->g[i].slot = take;
          if (!as_tag)  /* a number stays outside: it would widen the band */
            fm_rect_union (&pg->slots[take].r, &b);
          changed = TRUE;
        }
    }
}

void
fm_page_text_assign (FmPageText *pg, GPtrArray *regions)
{
  int *chunk_of = g_new (int, pg->n + 1);
  int n_chunks = 0;

  for (int i = 0; i < pg->n; i++)
    {
      FmTextGlyph *g = &pg->g[i];
      double cx = fm_rect_cx (&g->r), cy = fm_rect_cy (&g->r);
      double area = MAX (fm_rect_w (&g->r) * fm_rect_h (&g->r), 1e-6);
      double best = G_MAXDOUBLE, best_ov = 0;
      int pick = -1;

      /* The smallest region whose box holds the glyph's centre. */
      for (int s = 0; s < pg->n_slots; s++)
        {
          const FmRect *b = &pg->slots[s].r;
          if (cx >= b->x0 - 0.5 && cx <= b->x1 + 0.5 && cy >= b->y0 - 0.5 && cy <= b->y1 + 0.5 &&
              fm_rect_w (b) * fm_rect_h (b) < best)
            {
              best = fm_rect_w (b) * fm_rect_h (b);
              pick = s;
            }
        }
      /* Else one that covers most of it, or an inline formula it sticks out
       * of (a radical sign or superscript Poppler boxes too high). */
      for (int s = 0; pick < 0 && s < pg->n_slots; s++)
        {
          const FmRect *b = &pg->slots[s].r;
          double ov = MAX (0.0, MIN (g->r.x1, b->x1) - MAX (g->r.x0, b->x0)) * MAX (0.0, fm_rect_v_overlap (&g->r, b));
          if (ov >= 0.5 * area && ov > best_ov)
            best_ov = ov, pick = s;
        }
      for (int s = 0; pick < 0 && s < pg->n_slots; s++)
        {
          const FmRect *b = &pg->slots[s].r;
          if (pg->slots[s].reg->kind == FM_REGION_INLINE && cx >= b->x0 && cx <= b->x1 &&
              fm_rect_v_overlap (&g->r, b) >= 0.3 * fm_rect_h (&g->r))
            pick = s;
        }
      /* TeX's radical signs hang below their baseline but Poppler boxes
       * them from the font's ascent, most of a line too high (as in
       * fm-detect.c): try where the sign is drawn. */
      if (pick < 0 && (g->c == 0x221A || g->c == 0x221B || g->c == 0x221C))
        for (int s = 0; pick < 0 && s < pg->n_slots; s++)
          {
            const FmRect *b = &pg->slots[s].r;
            double dy = cy + 0.75 * fm_rect_h (&g->r);
            if (cx >= b->x0 - 0.5 && cx <= b->x1 + 0.5 && dy >= b->y0 - 0.5 && dy <= b->y1 + 0.5)
              pick = s;
          }
      g->slot = pick;
      if (pick >= 0 && pg->slots[pick].reg->kind != FM_REGION_NUMBER)
        fm_rect_union (&pg->slots[pick].r, &g->r);
    }

  /* Equation numbers the detector found. */
  for (int s = 0; s < pg->n_slots; s++)
    {
      FmRegion *num = pg->slots[s].reg;
      if (num->kind != FM_REGION_NUMBER || num->label_of < 0 || num->label_of >= (int) regions->len)
        continue;
      for (int d = 0; d < pg->n_slots; d++)
        if (pg->slots[d].reg == regions->pdata[num->label_of] && pg->slots[d].tag == NULL)
          pg->slots[d].tag = equation_label (num->text);
    }

  /* Chunks: runs of unassigned glyphs on one Poppler line without a wide gap. */
  for (int i = 0; i < pg->n; i++)
    {
      FmTextGlyph *g = &pg->g[i];
      if (g->slot >= 0)
        {
          chunk_of[i] = -1;
          continue;
        }
      if (i > 0 && chunk_of[i - 1] >= 0 && !g->line_before &&
          fm_rect_h_gap (&g->r, &pg->g[i - 1].r) <= g->size && fm_rect_v_overlap (&g->r, &pg->g[i - 1].r) > 0)
        chunk_of[i] = chunk_of[i - 1];
      else
        chunk_of[i] = n_chunks++;
    }

  take_display_pieces (pg, chunk_of, n_chunks);
  g_free (chunk_of);
}

gboolean
fm_page_text_crop_boxes (FmDocument *doc,
                         GPtrArray  *regions,
                         guint       first,
                         FmRect     *boxes,
                         GError    **error)
{
  FmPageText pg = { 0 };
  int page;

  if (first >= regions->len)
    return TRUE;
  page = ((FmRegion *) regions->pdata[first])->page;
  for (guint i = first; i < regions->len; i++)
    boxes[i - first] = ((FmRegion *) regions->pdata[i])->box;
  if (!fm_page_text_load (&pg, regions, doc, page, error))
    return FALSE;
  fm_page_text_assign (&pg, regions);
  for (int s = 0; s < pg.n_slots; s++)
    for (guint i = first; i < regions->len; i++)
      if (regions->pdata[i] == pg.slots[s].reg && pg.slots[s].reg->kind == FM_REGION_DISPLAY)
        {
          FmRect grown = fm_rect_from_frame (&pg.slots[s].crop, pg.dir, pg.page_w, pg.page_h);
          fm_rect_union (&boxes[i - first], &grown);
        }
  fm_page_text_clear (&pg);
  return TRUE;
}
