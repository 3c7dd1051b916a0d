/* fm-page-text.h - a page's text layer in its text frame, each glyph given to
 * the formula region that owns it; and the crop boxes recognition reads.
 *
 * Contract: fm_page_text_load reads one page's glyphs (Poppler's text, layout
 * and font sizes, under the document lock, from the page's copy that
 * fm_document_get_text_layer_locked keeps), finds the direction its text runs
 * in and turns glyphs and the page's regions into that text frame
 * (fm-geometry.h). fm_page_text_assign gives every glyph to the region that
 * covers it, and a display the pieces Poppler boxed outside it (on its line
 * beside it, or stacked on it) and the equation number on its line as its tag.
 * The Markdown layout (fm-markdown.c) builds on this, and so does
 * fm_page_text_crop_boxes, which recognition (fm-recognize.c) crops at. */
#pragma once

#include "fm-region.h"

G_BEGIN_DECLS

typedef struct {
  gunichar c;
  FmRect r;               /* text frame                                     */
  double size;            /* font size, points (0: unknown)                 */
  gboolean space_before;  /* a space in the text layer before it            */
  gboolean line_before;   /* Poppler started a line before it               */
  int slot;               /* FmTextSlot it belongs to, or -1                */
} FmTextGlyph;

typedef struct {
  FmRegion *reg;
  FmRect r;               /* text frame; displays grow by their glyphs      */
  char *tag;              /* DISPLAY: its equation number ("3.1") or NULL   */
  FmRect crop;            /* DISPLAY: r widened by the pieces on its line   */
  gboolean placed;        /* INLINE: the Markdown layout has placed it      */
} FmTextSlot;

typedef struct {
  FmTextGlyph *g;
  int n;
  FmTextSlot *slots;      /* the page's regions, in the order of regions    */
  int n_slots;
  double body_em;         /* median font size of the page's glyphs          */
  int dir;                /* text direction, as for fm_rect_to_frame        */
  double page_w, page_h;  /* displayed page                                 */
} FmPageText;

/* Fills pt (zeroed) with page page_index's glyphs and the regions of that page
 * among regions. FALSE with error when the page cannot be read. */
gboolean fm_page_text_load   (FmPageText  *pt,
                              GPtrArray   *regions,
                              FmDocument  *doc,
                              int          page_index,
                              GError     **error);
/* Gives the glyphs to regions (regions: the array pt was loaded from, for
 * equation numbers' label_of). */
void     fm_page_text_assign (FmPageText  *pt,
                              GPtrArray   *regions);
/* Frees what pt holds and zeroes it. */
void     fm_page_text_clear  (FmPageText  *pt);

/* Boxes to crop regions[first..] (all of one page) at for recognition:
 * each display's box widened by the text-layer pieces on its line that are
 * given to it ("det" before a matrix); other boxes as they are. boxes has
 * room for regions->len - first entries. */
gboolean fm_page_text_crop_boxes (FmDocument  *doc,
                                  GPtrArray   *regions,
                                  guint        first,
                                  FmRect      *boxes,
                                  GError     **error);

G_END_DECLS
