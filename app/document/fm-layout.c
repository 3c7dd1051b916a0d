/* fm-layout.c - text direction and column gutters (fm-layout.h). */
#include "fm-layout.h"

#include <math.h>

#define BOX(boxes, stride, i) ((const FmRect *) ((const char *) (boxes) + (gsize) (i) * (stride)))

void
fm_dir_votes_add (FmDirVotes *v, const FmRect *from, const FmRect *to)
{
  double dx = fm_rect_cx (to) - fm_rect_cx (from);
  double dy = fm_rect_cy (to) - fm_rect_cy (from);

  /* A step of zero (overprinted glyphs) counts as running right: the
   * unturned page, which is what a page without evidence is. */
  if (fabs (dx) >= fabs (dy))
    v->votes[dx >= 0 ? 0 : 2]++;
  else
    v->votes[dy >= 0 ? 1 : 3]++;
  v->steps++;
}

int
fm_dir_votes_winner (const FmDirVotes *v, int min_steps, double min_share)
{
  int best = 0;

  for (int d = 1; d < 4; d++)
    if (v->votes[d] > v->votes[best])
      best = d;
  return v->steps >= min_steps && v->votes[best] > min_share * v->steps ? best : 0;
}

double
fm_layout_mode (double *v, int n, int *count)
{
  double best = 0;
  int best_n = 0;

  qsort (v, n, sizeof *v, fm_cmp_double);
  for (int i = 0, j = 0; i < n; i++)
    {
      int k = i;
      while (j < n && v[j] < v[i] - 1.0)
        j++;
      while (k + 1 < n && v[k + 1] <= v[i] + 1.0)
        k++;
      if (k - j + 1 > best_n)
        {
          best_n = k - j + 1;
          best = v[i];
        }
    }
  *count = best_n;
  return best;
}

/* Whether boxes a and b share at least frac of the lower one's height. */
static gboolean
v_overlap_enough (const FmRect *a, const FmRect *b, double frac)
{
  double h = MIN (fm_rect_h (a), fm_rect_h (b));

  return h > 0 && fm_rect_v_overlap (a, b) >= frac * h;
}

/* Whether the lines to the right of a candidate gutter start at one x (a
 * column's left margin, shared by all its lines but indented ones), as
 * opposed to a river of word spaces on a short one-column page, after which
 * each line goes on mid-sentence at its own x. */
static gboolean
column_starts_aligned (const FmRect *boxes, gsize stride, int n, double x, double em)
{
  int *cand = g_new (int, n + 1), nc = 0, n_first = 0, best = 0;
  double *first = g_new (double, n + 1);

  for (int i = 0; i < n; i++)
    if (BOX (boxes, stride, i)->x0 >= x && BOX (boxes, stride, i)->x0 < x + 3 * em)
      cand[nc++] = i;
  for (int a = 0; a < nc; a++)
    {
      const FmRect *ra = BOX (boxes, stride, cand[a]);
      gboolean is_first = TRUE;
      for (int b = 0; b < nc && is_first; b++)
        {
          const FmRect *rb = BOX (boxes, stride, cand[b]);
          if (b != a && rb->x0 < ra->x0 && v_overlap_enough (ra, rb, 0.5))
            is_first = FALSE;
        }
      if (is_first)
        first[n_first++] = ra->x0;
    }
  if (n_first > 0)
    fm_layout_mode (first, n_first, &best);
  g_free (cand);
  g_free (first);
  return best >= 3 && best * 2 >= n_first;
}

/* The widest stripe in the middle half of the frame whose bins are
 * covered by few boxes: a fifth or a quarter of `peak` (the busiest bin's
 * count, see fm_layout_find_gutter()), or at most 2 when `strict`, where
 * the stripe must also have covered bins on its right - one that runs out
 * to the frame's edge is the blank beside a short last column whose lines
 * end mid-column, not a gutter. Its first bin in *start, its width in bins
 * (0 if none). */
static int
widest_stripe (const int *cover, int nb, double frame_w, double bin, int peak, gboolean strict, int *start)
{
  int best_w = 0;

  *start = -1;
  for (int b = (int) (0.25 * frame_w / bin); b < (int) (0.75 * frame_w / bin) && b < nb;)
    {
      int e = b;
      while (e < nb && cover[e] <= (strict ? 2 : MAX (2, peak >= 24 && fabs (e * bin - 0.5 * frame_w) < 0.1 * frame_w
                                                             ? peak / 4 : peak / 5)))
        e++;
      if (e - b > best_w && (!strict || e < nb))
        {
          best_w = e - b;
          *start = b;
        }
      b = MAX (e, b + 1);
    }
  return best_w;
}

/* Whether most lines that start within 3 em right of a stripe [x0, x1]
 * also have a box in the stripe: running text crosses a stripe inside a
 * column, which the first pass can take for the gutter when that column is
 * short (its few lines under a fifth of the peak: a two-column page's short
 * right column gave [451 504.5], review of detect12n, seed 9204), while a
 * column's overfull lines reach into the gutter beside a few of the other
 * column's lines only. */
static gboolean
stripe_crossed_by_lines (const FmRect *boxes, gsize stride, int n, double x0, double x1, double em)
{
  int rows = 0, crossed = 0;

  for (int a = 0; a < n; a++)
    {
      const FmRect *ra = BOX (boxes, stride, a);
      gboolean is_first = ra->x0 >= x1 && ra->x0 < x1 + 3 * em, cross = FALSE;
      for (int b = 0; b < n && is_first; b++)
        {
          const FmRect *rb = BOX (boxes, stride, b);
          if (b == a || !v_overlap_enough (ra, rb, 0.5))
            continue;
          if (rb->x0 >= x1 && rb->x0 < ra->x0)
            is_first = FALSE;
          cross |= rb->x1 > x0 && rb->x0 < x1;
        }
      rows += is_first;
      crossed += is_first && cross;
    }
  return rows >= 3 && crossed * 2 > rows;
}

/* Whether the boxes wholly left of a stripe [x0, x1] and those wholly
 * right of it start at one height: the strict pass lets at most two boxes
 * cross the stripe, so the page has nothing set across it, and its two
 * columns both start at the top of the text. A centred tabular{rl} of a
 * one-column page has a blank between its columns too, its left cells end
 * at one x and its right ones start at one, but the heading and the
 * paragraph above the table stand on its left only. */
static gboolean
sides_start_level (const FmRect *boxes, gsize stride, int n, double x0, double x1, double em)
{
  double top_l = G_MAXDOUBLE, top_r = G_MAXDOUBLE;

  for (int i = 0; i < n; i++)
    {
      const FmRect *r = BOX (boxes, stride, i);
      if (r->x1 <= x0)
        top_l = MIN (top_l, r->y0);
      else if (r->x0 >= x1)
        top_r = MIN (top_r, r->y0);
    }
  return top_l < G_MAXDOUBLE && top_r < G_MAXDOUBLE && fabs (top_l - top_r) < 1.5 * em;
}

/* Two-column pages: Poppler lists level lines of both columns as one line,
 * and LaTeX's 10 pt column gap is narrower than the 0.9 em that cuts
 * detection's chunks once the text is 12 pt. The gutter is the widest stripe
 * in the middle of the frame that (almost) no box crosses while the stripes
 * beside it are covered by many lines: a one-column page has its lines
 * across the middle. "Almost": up to a fifth of the busiest stripe's boxes,
 * for the overfull lines of a column whose unbreakable formulas run into
 * the gutter (an amsart page at 12 pt had six, an eighth had hidden it);
 * a quarter on a full page (24 lines or more through the busiest stripe)
 * within a tenth of the frame's width from its middle, where LaTeX puts
 * the gutter (a kpfonts amsart page at 12 pt, dev seed 1109, had 10 of 41,
 * 24 %), but not elsewhere: a one-column page of displays and ragged last
 * lines had a quarter-covered stripe at 72 % of its width, and a short page
 * of two display lines whose second formulas start at one x one near its
 * middle. */
gboolean
fm_layout_find_gutter (const FmRect *boxes, gsize stride, int n, double frame_w, double em,
                       double *gutter_x0, double *gutter_x1)
{
  const double bin = 0.5;
  int nb, peak = 0;
  int *cover;
  gboolean found = FALSE;

  if (!(frame_w > 10) || n < 50)
    return FALSE;
  nb = (int) ceil (frame_w / bin) + 2;
  cover = g_new0 (int, nb);
  for (int i = 0; i < n; i++)
    {
      const FmRect *r = BOX (boxes, stride, i);
      int b0 = CLAMP ((int) floor (r->x0 / bin), 0, nb - 1), b1 = CLAMP ((int) floor (r->x1 / bin), 0, nb - 1);
      for (int b = b0; b <= b1; b++)
        cover[b]++;
    }
  for (int b = 0; b < nb; b++)
    peak = MAX (peak, cover[b]);
  /* Then, when that finds none, a stripe of the blank only (2 boxes at
   * most): a short right column's few lines are fewer than a fifth of the
   * busiest stripe's, and the first pass took them into the stripe. */
  for (int pass = 0; pass < 2 && !found; pass++)
    {
      int best_s, best_w = widest_stripe (cover, nb, frame_w, bin, peak, pass == 1, &best_s);
      int side = (int) (3 * em / bin);
      double left = 0, right = 0;

      if (best_s < 0 || best_w * bin < 0.4 * em)
        continue;
      for (int k = 1; k <= side; k++)
        {
          left += best_s - k >= 0 ? cover[best_s - k] : 0;
          right += best_s + best_w - 1 + k < nb ? cover[best_s + best_w - 1 + k] : 0;
        }
      /* Text on both sides; a short last column (the end of a paper) has
       * few lines, so only a little. */
      if (left / side >= MAX (2.0, 0.05 * peak) && right / side >= MAX (2.0, 0.05 * peak) &&
          column_starts_aligned (boxes, stride, n, (best_s + best_w) * bin, em) &&
          (pass == 0 ? !stripe_crossed_by_lines (boxes, stride, n, best_s * bin, (best_s + best_w) * bin, em)
                     : sides_start_level (boxes, stride, n, best_s * bin, (best_s + best_w) * bin, em)))
        {
          found = TRUE;
          *gutter_x0 = best_s * bin;
          *gutter_x1 = (best_s + best_w) * bin;
        }
    }
  g_free (cover);
  return found;
}
