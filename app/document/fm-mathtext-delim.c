/* fm-mathtext-delim.c: sized delimiters from their ink (fm-mathtext-delim.h).
 *
 * A delimiter is told by the path of its stroke down its height, from the
 * horizontal middle of the ink in each row (its centre line) and from full
 * rows (a bracket's serifs):
 *
 * - a bar is as narrow as its stroke all the way down;
 * - a bracket is a stem at one side with a serif across the whole width at
 *   both ends (a floor at the bottom only, a ceiling at the top only);
 * - a parenthesis, an angle bracket and a brace bulge to one side at their
 *   middle and come back at both ends. Measured from the middle, the centre
 *   line of a parenthesis (an arc) comes back slowly, then fast: a quarter
 *   of the way at half the height; an angle bracket's (two straight
 *   strokes) comes back evenly; a brace's jumps to its stem at once (the
 *   cusp), stays there and comes back only at the hooks.
 *
 * The thresholds were read from CMEX10, LMEX, txexs and the OpenType math
 * fonts at \big to \Bigg (tests/fixtures/pdf/mathtext-bigdelims.tex). */
#include "fm-mathtext-delim.h"

#include <math.h>

/* Centre line and extent of each row; FALSE when a row holds no ink (not
 * one piece) or crosses the ink more than twice. */
typedef struct {
  double *c;      /* centre of the ink in row y                       */
  int *n;         /* ink pixels in row y                              */
  int *left;      /* first ink column of row y                        */
  int *right;     /* last ink column of row y                         */
} Rows;

static gboolean
rows_measure (const FmInkShape *s, Rows *rows)
{
  for (int y = 0; y < s->height; y++)
    {
      const guint8 *row = s->mask + (gsize) y * s->width;
      int first = -1, last = -1, n = 0, runs = 0;
      for (int x = 0; x < s->width; x++)
        if (row[x])
          {
            if (first < 0)
              first = x;
            if (x == 0 || !row[x - 1])
              runs++;
            last = x;
            n++;
          }
      if (n == 0 || runs > 2)
        return FALSE;
      rows->c[y] = 0.5 * (first + last);
      rows->n[y] = n;
      rows->left[y] = first;
      rows->right[y] = last;
    }
  return TRUE;
}

/* Mean centre over rows [y0, y1). */
static double
mean_centre (const Rows *rows, int y0, int y1)
{
  double sum = 0;
  y1 = MAX (y1, y0 + 1);
  for (int y = y0; y < y1; y++)
    sum += rows->c[y];
  return sum / (y1 - y0);
}

/* Whether one of rows [y0, y1) is ink across nearly the whole width. */
static gboolean
has_full_row (const FmInkShape *s, const Rows *rows, int y0, int y1)
{
  for (int y = MAX (0, y0); y < MIN (s->height, y1); y++)
    if (rows->n[y] >= 0.8 * s->width && rows->right[y] - rows->left[y] + 1 == rows->n[y])
      return TRUE;
  return FALSE;
}

/* The share of the way back from the middle's centre to the ends' at a
 * fraction f of the half height, the top and bottom halves averaged. */
static double
way_back (const FmInkShape *s, const Rows *rows, double mid, double span, double f)
{
  int half = s->height / 2;
  int yt = (int) lround (half - f * half), yb = (int) lround (half + f * half);

  yt = CLAMP (yt, 0, s->height - 1);
  yb = CLAMP (yb, 0, s->height - 1);
  return (0.5 * (rows->c[yt] + rows->c[yb]) - mid) / span;
}

static gunichar
classify (const FmInkShape *s, const Rows *rows, double em_px)
{
  int w = s->width, h = s->height;
  int band = MAX (2, (int) ceil (0.08 * em_px));
  g_autofree int *sorted = g_memdup2 (rows->n, sizeof (int) * h);
  int stroke;
  gboolean top, bottom;
  double mid, ends, span, d25, d50, d75;

  /* the stroke: the median ink of a row (a bracket's stem, an arc's width) */
  for (int a = 1; a < h; a++)
    for (int b = a; b > 0 && sorted[b - 1] > sorted[b]; b--)
      {
        int t = sorted[b];
        sorted[b] = sorted[b - 1];
        sorted[b - 1] = t;
      }
  stroke = sorted[h / 2];
  if (w <= 1.6 * stroke + 2)
    {
      /* a bar's stroke is thin (CMEX's: 0.04 em); a filled box is no bar */
      if (w > 0.15 * em_px + 2)
        return 0;
      for (int y = 0; y < h; y++)
        if (rows->n[y] < 0.5 * w)
          return 0;
      return '|';
    }
  top = has_full_row (s, rows, 0, band);
  bottom = has_full_row (s, rows, h - band, h);
  if (top || bottom)
    {
      /* a stem at one side between the serifs */
      gboolean at_left = TRUE, at_right = TRUE;
      for (int y = band; y < h - band; y++)
        {
          at_left &= rows->left[y] <= 0.2 * w && rows->n[y] <= 0.6 * w;
          at_right &= rows->right[y] >= 0.8 * w - 1 && rows->n[y] <= 0.6 * w;
        }
      if (at_left == at_right)
        return 0;
      if (top && bottom)
        return at_left ? '[' : ']';
      if (top)
        return at_left ? 0x2308 : 0x2309;
      return at_left ? 0x230A : 0x230B;
    }
  mid = mean_centre (rows, (int) (0.47 * h), (int) ceil (0.53 * h));
  ends = 0.5 * (mean_centre (rows, 0, (int) ceil (0.03 * h)) + mean_centre (rows, h - (int) ceil (0.03 * h), h));
  span = ends - mid;
  /* both ends come back to one side, and far enough to be a shape */
  if (fabs (mean_centre (rows, 0, (int) ceil (0.03 * h)) - mean_centre (rows, h - (int) ceil (0.03 * h), h)) > 0.25 * w ||
      fabs (span) < 0.3 * w)
    return 0;
  d25 = way_back (s, rows, mid, span, 0.25);
  d50 = way_back (s, rows, mid, span, 0.5);
  d75 = way_back (s, rows, mid, span, 0.75);
  if (g_getenv ("FM_MATHTEXT_DEBUG") != NULL)
    g_printerr ("delimiter shape %dx%d stroke %d span %.1f way back %.2f %.2f %.2f\n", w, h, stroke, span, d25, d50,
                d75);
  if (d25 < 0.2 && d50 < 0.4 && d75 < 0.75)
    return span > 0 ? '(' : ')';
  if (fabs (d25 - 0.25) < 0.12 && fabs (d50 - 0.5) < 0.12 && fabs (d75 - 0.75) < 0.12)
    return span > 0 ? 0x27E8 : 0x27E9;
  if (d25 >= 0.3 && d75 - d25 < 0.25 && d75 < 0.8)
    return span > 0 ? '{' : '}';
  return 0;
}

gunichar
fm_mathtext_delim_shape (const FmInkShape *shape, double em_px)
{
  Rows rows;
  gunichar d = 0;

  g_return_val_if_fail (shape != NULL && shape->mask != NULL, 0);
  int h = shape->height;
  if (shape->width < 1 || h < 8)
    return 0;
  rows.c = g_new (double, h);
  rows.n = g_new (int, h);
  rows.left = g_new (int, h);
  rows.right = g_new (int, h);
  if (rows_measure (shape, &rows))
    d = classify (shape, &rows, em_px);
  g_free (rows.c);
  g_free (rows.n);
  g_free (rows.left);
  g_free (rows.right);
  return d;
}

gboolean
fm_mathtext_delim_mirrors (const FmInkShape *a, const FmInkShape *b)
{
  g_return_val_if_fail (a != NULL && b != NULL, FALSE);
  /* Two renders of one glyph at different x differ by a pixel of rounding
   * at each edge: the best of the shifts by a pixel either way. */
  if (abs (a->width - b->width) > 2 || abs (a->height - b->height) > 2)
    return FALSE;
  for (int dy = -1; dy <= 1; dy++)
    for (int dx = -1; dx <= 1; dx++)
      {
        long both = 0, either = 0;
        for (int y = MIN (0, dy); y < MAX (a->height, b->height + dy); y++)
          for (int x = MIN (0, dx); x < MAX (a->width, b->width + dx); x++)
            {
              int xb = b->width - 1 - (x - dx), yb = y - dy;
              gboolean ia = y >= 0 && x >= 0 && y < a->height && x < a->width && a->mask[(gsize) y * a->width + x];
              gboolean ib = yb >= 0 && xb >= 0 && yb < b->height && xb < b->width &&
                            b->mask[(gsize) yb * b->width + xb];
              both += ia && ib;
              either += ia || ib;
            }
        if (either > 0 && both >= 0.6 * either)
          return TRUE;
      }
  return FALSE;
}
