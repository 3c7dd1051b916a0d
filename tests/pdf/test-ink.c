/* test-ink.c - fm_ink_vertical_run over a mask and a gray view (fm-ink.h). */
#include "fm-ink.h"

/* 6 x 12 mask; column 2 has ink in rows 1-2 and 4-9, column 4 in row 11. */
static const char *rows[] = {
  "......", "..#...", "..#...", "......", "..#...", "..#...",
  "..#...", "..#...", "..#...", "..#...", "......", "....#.",
};

static guint8 mask[12 * 6], gray[12 * 8];

static void
fill (void)
{
  for (int y = 0; y < 12; y++)
    for (int x = 0; x < 6; x++)
      {
        mask[y * 6 + x] = rows[y][x] == '#';
        /* gray, stride 8: ink 0, paper 255; a 159 and a 160 pixel in row 0 */
        gray[y * 8 + x] = rows[y][x] == '#' ? 0 : 255;
      }
  gray[0 * 8 + 0] = 160;
  gray[0 * 8 + 1] = 159;
}

static void
test_longest_run (void)
{
  FmInkView v = fm_ink_view_mask (mask, 6, 12);
  int y0 = -1, y1 = -1;

  /* Longest run in rows 0..6 is 4..6 (3 rows, longer than 1..2), then grown down to 9. */
  g_assert_true (fm_ink_vertical_run (&v, 0, 6, 0, 7, 0, &y0, &y1));
  g_assert_cmpint (y0, ==, 4);
  g_assert_cmpint (y1, ==, 10);
  /* Window rows 0..3: the run 1..2, nothing to grow into. */
  g_assert_true (fm_ink_vertical_run (&v, 0, 6, 0, 4, 0, &y0, &y1));
  g_assert_cmpint (y0, ==, 1);
  g_assert_cmpint (y1, ==, 3);
  /* min_rows counts before growing: rows 8..9 are 2 rows, grown they would be 6. */
  g_assert_false (fm_ink_vertical_run (&v, 0, 6, 8, 10, 2.5, &y0, &y1));
  g_assert_true (fm_ink_vertical_run (&v, 0, 6, 8, 10, 2, &y0, &y1));
  g_assert_cmpint (y0, ==, 4);
  g_assert_cmpint (y1, ==, 10);
  /* Columns without ink, and an empty window. */
  g_assert_false (fm_ink_vertical_run (&v, 3, 4, 0, 12, 0, &y0, &y1));
  g_assert_false (fm_ink_vertical_run (&v, 2, 2, 0, 12, 0, &y0, &y1));
  /* Growing stops at the view's last row. */
  g_assert_true (fm_ink_vertical_run (&v, 4, 5, 11, 12, 0, &y0, &y1));
  g_assert_cmpint (y0, ==, 11);
  g_assert_cmpint (y1, ==, 12);
}

static void
test_gray_threshold (void)
{
  FmInkView v = fm_ink_view_gray (gray, 8, 6, 12, 160);
  int y0 = -1, y1 = -1;

  /* Same runs as the mask in columns 2..5. */
  g_assert_true (fm_ink_vertical_run (&v, 2, 6, 0, 7, 0, &y0, &y1));
  g_assert_cmpint (y0, ==, 4);
  g_assert_cmpint (y1, ==, 10);
  /* 159 is ink at threshold 160 (column 1, row 0; nothing below it to grow into),
   * 160 is not (column 0). */
  g_assert_true (fm_ink_vertical_run (&v, 1, 2, 0, 1, 0, &y0, &y1));
  g_assert_cmpint (y0, ==, 0);
  g_assert_cmpint (y1, ==, 1);
  g_assert_false (fm_ink_vertical_run (&v, 0, 1, 0, 1, 0, &y0, &y1));
  /* Of two equally long runs (rows 0..2 with column 1's pixel, 4..6) the first wins. */
  g_assert_true (fm_ink_vertical_run (&v, 0, 6, 0, 7, 0, &y0, &y1));
  g_assert_cmpint (y0, ==, 0);
  g_assert_cmpint (y1, ==, 3);
}

int
main (int argc, char **argv)
{
  g_test_init (&argc, &argv, NULL);
  fill ();
  g_test_add_func ("/ink/longest-run", test_longest_run);
  g_test_add_func ("/ink/gray-threshold", test_gray_threshold);
  return g_test_run ();
}
