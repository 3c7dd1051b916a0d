/* fm-layout.h - the layout of a page's text, shared by detection
 * (fm-detect.c) and the Markdown export (fm-page-text.c, fm-markdown.c).
 *
 * Contract: pure functions of boxes in PDF points (origin top-left, y down);
 * GLib only, no Poppler, no GTK, no state. Rectangles and the text frame
 * (fm_rect_to_frame / fm_rect_from_frame: the page turned so that text runs
 * left to right) are in fm-geometry.h; this module finds which frame a page
 * needs (the direction its text runs) and, in that frame, where a page's two
 * columns part. */
#pragma once

#include "fm-geometry.h"

G_BEGIN_DECLS

/* Text direction: each step from one glyph to the next one of its word (or
 * line) votes for the way text runs: 0 right, 1 down, 2 left, 3 up (the
 * direction numbers of fm_rect_to_frame). */
typedef struct {
  int votes[4];
  int steps;
} FmDirVotes;

void fm_dir_votes_add (FmDirVotes *v, const FmRect *from, const FmRect *to);

/* The direction most steps vote for (the lower number on a tie), or 0 when
 * there are fewer than min_steps steps or the winner has no more than
 * min_share of them. */
int fm_dir_votes_winner (const FmDirVotes *v, int min_steps, double min_share);

/* The most common value within +-1 (v[0..n) sorted in place), and how many
 * share it. */
double fm_layout_mode (double *v, int n, int *count);

/* Two columns, in the text frame: the widest stripe in the middle of the
 * frame (frame_w wide) that (almost) no box crosses while the text beside it
 * is covered by many lines, and the lines after it start at one x. The boxes
 * are n records of `stride` bytes, each starting with its FmRect (a glyph
 * array's &g[0].r, sizeof *g). em is the body text's size. */
gboolean fm_layout_find_gutter (const FmRect *boxes, gsize stride, int n, double frame_w,
                                double em, double *gutter_x0, double *gutter_x1);

G_END_DECLS
