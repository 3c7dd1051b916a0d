/* fm-ink.h - vertical ink runs in a pixel view (GLib only).
 *
 * Contract: the text layer places a tall glyph (a radical, a big operator, a
 * large delimiter) where its font's metrics say, which for TeX's Type 1
 * fonts is too high; its ink says where it is. Detection (fm-detect.c,
 * radical_to_ink, over the page's ink mask) and the text-layer reader
 * (fm-mathtext.c, ink_column_extent, over a gray crop) both fit the glyph's
 * box to the longest vertical ink run in a window of columns, through one
 * view of "is (x, y) ink?".
 */
#pragma once

#include <glib.h>

G_BEGIN_DECLS

typedef struct FmInkView FmInkView;

/* Whether the pixel (x, y), 0 <= x < width and 0 <= y < height, is ink. */
typedef gboolean (*FmInkedFunc) (const FmInkView *view, int x, int y);

struct FmInkView {
  FmInkedFunc inked;
  const guint8 *pixels;
  gsize stride;          /* bytes a row */
  int width, height;
  int threshold;         /* fm_ink_view_gray: darker than this is ink */
};

/* A mask of width x height bytes, row after row: nonzero is ink. */
FmInkView fm_ink_view_mask (const guint8 *mask, int width, int height);
/* 8-bit gray (0 black, 255 white): a pixel darker than threshold is ink. */
FmInkView fm_ink_view_gray (const guint8 *pixels, int stride, int width, int height, int threshold);

/* The longest run of rows among y0..y1-1 that have ink in some column of
 * x0..x1-1 (the first of equally long ones), then grown up and down while
 * the next row has ink in those columns (a stroke taller than the window).
 * Rows run_y0..run_y1-1. FALSE when no row of the window has ink, or when
 * the run before growing is shorter than min_rows. The window must lie in
 * the view. */
gboolean fm_ink_vertical_run (const FmInkView *view, int x0, int x1, int y0, int y1,
                              double min_rows, int *run_y0, int *run_y1);

G_END_DECLS
