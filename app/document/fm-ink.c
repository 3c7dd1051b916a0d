/* fm-ink.c - vertical ink runs in a pixel view (fm-ink.h). */
#include "fm-ink.h"

static gboolean
mask_inked (const FmInkView *view, int x, int y)
{
  return view->pixels[(gsize) y * view->stride + x] != 0;
}

static gboolean
gray_inked (const FmInkView *view, int x, int y)
{
  return view->pixels[(gsize) y * view->stride + x] < view->threshold;
}

FmInkView
fm_ink_view_mask (const guint8 *mask, int width, int height)
{
  FmInkView view = { mask_inked, mask, (gsize) width, width, height, 0 };
  return view;
}

FmInkView
fm_ink_view_gray (const guint8 *pixels, int stride, int width, int height, int threshold)
{
  FmInkView view = { gray_inked, pixels, (gsize) stride, width, height, threshold };
  return view;
}

static gboolean
row_inked (const FmInkView *view, int y, int x0, int x1)
{
  for (int x = x0; x < x1; x++)
    if (view->inked (view, x, y))
      return TRUE;
  return FALSE;
}

gboolean
fm_ink_vertical_run (const FmInkView *view, int x0, int x1, int y0, int y1,
                     double min_rows, int *run_y0, int *run_y1)
{
  int best0 = -1, best1 = -1, run0 = -1;

  if (x1 <= x0 || y1 <= y0)
    return FALSE;
  /* y == y1 closes a run that reaches the window's last row. */
  for (int y = y0; y <= y1; y++)
    {
      gboolean any = y < y1 && row_inked (view, y, x0, x1);
      if (any && run0 < 0)
        run0 = y;
      if (!any && run0 >= 0)
        {
          if (y - run0 > best1 - best0)
            {
              best0 = run0;
              best1 = y;
            }
          run0 = -1;
        }
    }
  if (best0 < 0 || best1 - best0 < min_rows)
    return FALSE;
  while (best0 > 0 && row_inked (view, best0 - 1, x0, x1))
    best0--;
  while (best1 < view->height && row_inked (view, best1, x0, x1))
    best1++;
  *run_y0 = best0;
  *run_y1 = best1;
  return TRUE;
}
