/* test-scan.c - pages without a text layer (app/document/fm-scan.c): scanned twins of
 * truth fixtures are detected from their pixels, blank pages are blank.
 *
 * The twins (tests/fixtures/pdf/scan/README.md) are truth-1-00 binarised at
 * 300 dpi and truth-1-03 as a JPEG at 150 dpi, skewed. The bars below are
 * what fm-scan measured on them when the test was written (the test prints
 * it: display P 1.000 R 1.000 of 10, inline P 0.650 R 0.765 of 17, numbers
 * 8 of 8; Tesseract 5.3.0, Debian 12; since the 1.3 em join inline P 0.778
 * R 0.824; since the word classifier P 0.875 R 0.824) less about 0.2, for other Tesseract
 * versions and models: they catch a pixel path that stops finding
 * formulas, not a change of a few boxes. Measured on fresh seeds:
 * docs/scanned.md.
 */
#include "fm-detect.h"
#include "fm-document.h"
#include "fm-render.h"
#include "fm-scan.h"
#include "fm-glyph-net.h"

#include <json-glib/json-glib.h>
#include <math.h>
#include <string.h>

#define BAR_DISPLAY_P 0.80
#define BAR_DISPLAY_R 0.80
#define BAR_INLINE_P 0.45
#define BAR_INLINE_R 0.55

static FmDocument *
open_fixture (const char *rel)
{
  g_autofree char *path = g_build_filename (FM_TEST_SRCDIR, rel, NULL);
  g_autoptr(GError) error = NULL;
  FmDocument *doc = fm_document_new_for_path (path, NULL, &error);
  g_assert_no_error (error);
  return doc;
}

/* The regions fm_scan_detect_page finds on a scan fixture's first page, or
 * NULL with the test skipped when the build has no Tesseract. */
static GPtrArray *
scan_fixture_first_page (const char *rel)
{
  g_autoptr(FmDocument) doc = NULL;
  g_autoptr(GError) error = NULL;
  GPtrArray *regions;

  if (!fm_scan_have_ocr ())
    {
      g_test_skip ("built without Tesseract (Debian: libtesseract-dev, tesseract-ocr-eng)");
      return NULL;
    }
  doc = open_fixture (rel);
  regions = fm_scan_detect_page (doc, 0, NULL, &error);
  g_assert_no_error (error);
  return regions;
}

static double
iou (const FmRect *a, const double b[4])
{
  double ix = MIN (a->x1, b[2]) - MAX (a->x0, b[0]);
  double iy = MIN (a->y1, b[3]) - MAX (a->y0, b[1]);
  double inter, uni;
  if (ix <= 0 || iy <= 0)
    return 0;
  inter = ix * iy;
  uni = (a->x1 - a->x0) * (a->y1 - a->y0) + (b[2] - b[0]) * (b[3] - b[1]) - inter;
  return uni > 0 ? inter / uni : 0;
}

/* The best IoU of a region of this kind with the truth box. */
static double
best_iou_of_kind (GPtrArray *regions, FmRegionKind kind, const double box[4])
{
  double best = 0;

  for (guint i = 0; i < regions->len; i++)
    {
      const FmRegion *r = regions->pdata[i];
      if (r->kind == kind)
        best = MAX (best, iou (&r->box, box));
    }
  return best;
}

typedef struct {
  int matched, predicted, truth;
} Count;

/* Greedy matching at IoU >= 0.5 of one kind, as tools/pdf-truth/score.py. */
static void
score_kind (GPtrArray *regions, JsonArray *truth, FmRegionKind kind, const char *kind_name, Count *c)
{
  guint nt = json_array_get_length (truth);
  g_autofree gboolean *used_t = g_new0 (gboolean, nt + 1);
  g_autofree gboolean *used_p = g_new0 (gboolean, regions->len + 1);

  for (guint j = 0; j < regions->len; j++)
    c->predicted += ((FmRegion *) regions->pdata[j])->kind == kind;
  for (guint i = 0; i < nt; i++)
    c->truth += strcmp (json_object_get_string_member (json_array_get_object_element (truth, i), "kind"),
                        kind_name) == 0;
  for (;;)
    {
      double best = 0.5;
      int bi = -1, bj = -1;
      for (guint i = 0; i < nt; i++)
        {
          JsonObject *t = json_array_get_object_element (truth, i);
          JsonArray *box = json_object_get_array_member (t, "box");
          double b[4];
          if (used_t[i] || strcmp (json_object_get_string_member (t, "kind"), kind_name) != 0)
            continue;
          for (int k = 0; k < 4; k++)
            b[k] = json_array_get_double_element (box, k);
          for (guint j = 0; j < regions->len; j++)
            {
              FmRegion *r = regions->pdata[j];
              double v;
              if (used_p[j] || r->kind != kind)
                continue;
              v = iou (&r->box, b);
              if (v >= best)
                {
                  best = v;
                  bi = (int) i;
                  bj = (int) j;
                }
            }
        }
      if (bi < 0)
        break;
      used_t[bi] = used_p[bj] = TRUE;
      c->matched++;
    }
}

static void
score_twins (Count *display, Count *inline_, Count *number)
{
  const char *names[] = { "truth-1-00-scan300", "truth-1-03-scan150" };

  for (guint n = 0; n < G_N_ELEMENTS (names); n++)
    {
      g_autofree char *pdf = g_strdup_printf ("tests/fixtures/pdf/scan/%s.pdf", names[n]);
      g_autofree char *truth_path = g_strdup_printf ("%s/tests/fixtures/pdf/scan/%s.truth.json",
                                                     FM_TEST_SRCDIR, names[n]);
      g_autoptr(FmDocument) doc = open_fixture (pdf);
      g_autoptr(JsonParser) parser = json_parser_new ();
      g_autoptr(GError) error = NULL;
      g_autoptr(GPtrArray) regions = NULL;
      FmPageSource source = FM_PAGE_SOURCE_TEXT_LAYER;
      JsonArray *truth;

      g_assert_true (json_parser_load_from_file (parser, truth_path, &error));
      truth = json_object_get_array_member (json_node_get_object (json_parser_get_root (parser)), "regions");
      /* The text-layer detector alone still says why it cannot. */
      g_assert_null (fm_detect_page (doc, 0, NULL, &error));
      g_assert_error (error, FM_DOCUMENT_ERROR, FM_DOCUMENT_ERROR_NO_TEXT_LAYER);
      g_clear_error (&error);
      regions = fm_detect_page_any (doc, 0, NULL, &source, &error);
      g_assert_no_error (error);
      g_assert_nonnull (regions);
      g_assert_cmpint (source, ==, FM_PAGE_SOURCE_PIXELS);
      for (guint i = 0; i < regions->len; i++)
        {
          FmRegion *r = regions->pdata[i];
          /* The crop scale of the image model comes from font_size. */
          g_assert_cmpfloat (r->font_size, >, 5);
          g_assert_cmpfloat (r->font_size, <, 20);
          g_assert_cmpfloat (r->box.x0, <, r->box.x1);
          g_assert_cmpfloat (r->box.y0, <, r->box.y1);
          if (r->kind == FM_REGION_NUMBER)
            {
              g_assert_cmpint (r->label_of, >=, 0);
              g_assert_cmpint (((FmRegion *) regions->pdata[r->label_of])->kind, ==, FM_REGION_DISPLAY);
            }
        }
      score_kind (regions, truth, FM_REGION_DISPLAY, "display", display);
      score_kind (regions, truth, FM_REGION_INLINE, "inline", inline_);
      score_kind (regions, truth, FM_REGION_NUMBER, "number", number);
    }
}

static void
test_twins (void)
{
  Count display = { 0 }, inline_ = { 0 }, number = { 0 };
  double dp, dr, ip, ir;

  if (!fm_scan_have_ocr ())
    {
      g_test_skip ("built without Tesseract (Debian: libtesseract-dev, tesseract-ocr-eng)");
      return;
    }
  score_twins (&display, &inline_, &number);
  dp = display.predicted ? (double) display.matched / display.predicted : 1;
  dr = display.truth ? (double) display.matched / display.truth : 1;
  ip = inline_.predicted ? (double) inline_.matched / inline_.predicted : 1;
  ir = inline_.truth ? (double) inline_.matched / inline_.truth : 1;
  g_test_message ("display P %.3f R %.3f (%d/%d/%d), inline P %.3f R %.3f (%d/%d/%d), numbers %d/%d/%d",
                  dp, dr, display.matched, display.predicted, display.truth,
                  ip, ir, inline_.matched, inline_.predicted, inline_.truth,
                  number.matched, number.predicted, number.truth);
  g_assert_cmpfloat (dp, >=, BAR_DISPLAY_P);
  g_assert_cmpfloat (dr, >=, BAR_DISPLAY_R);
  g_assert_cmpfloat (ip, >=, BAR_INLINE_P);
  g_assert_cmpfloat (ir, >=, BAR_INLINE_R);
}

/* The word classifier (fm-scan-words.h) against the rules it refines
 * (FM_SCAN_WORDS=rules): on the fixtures it boxes no fewer inline formulas
 * right and no more wrong (when written: 14 right, 2 wrong; the rules 11
 * and 5), and the displays stay found. */
static void
test_words (void)
{
  Count display = { 0 }, inline_ = { 0 }, number = { 0 };
  Count rules_display = { 0 }, rules_inline = { 0 }, rules_number = { 0 };

  if (!fm_scan_have_ocr ())
    {
      g_test_skip ("built without Tesseract (Debian: libtesseract-dev, tesseract-ocr-eng)");
      return;
    }
  g_setenv ("FM_SCAN_WORDS", "rules", TRUE);
  score_twins (&rules_display, &rules_inline, &rules_number);
  g_unsetenv ("FM_SCAN_WORDS");
  score_twins (&display, &inline_, &number);
  g_test_message ("inline right/wrong: classifier %d/%d, rules %d/%d; displays right %d, rules %d",
                  inline_.matched, inline_.predicted - inline_.matched, rules_inline.matched,
                  rules_inline.predicted - rules_inline.matched, display.matched, rules_display.matched);
  g_assert_cmpint (inline_.matched, >=, rules_inline.matched);
  g_assert_cmpint (inline_.predicted - inline_.matched, <=, rules_inline.predicted - rules_inline.matched);
  g_assert_cmpint (display.matched, >=, rules_display.matched - 1);
}

static void
test_blank (void)
{
  /* A scanned white page with dust, a photo, and a page with a drawing and
   * nothing else: no text layer, no formula. The first is blank with or without
   * Tesseract (the ink test comes first). */
  {
    g_autoptr(FmDocument) doc = open_fixture ("tests/fixtures/pdf/scan/blank-scan.pdf");
    g_autoptr(GError) error = NULL;
    g_autoptr(GPtrArray) regions = NULL;
    FmPageSource source = FM_PAGE_SOURCE_TEXT_LAYER;

    regions = fm_detect_page_any (doc, 0, NULL, &source, &error);
    g_assert_no_error (error);
    g_assert_nonnull (regions);
    g_assert_cmpuint (regions->len, ==, 0);
    g_assert_cmpint (source, ==, FM_PAGE_SOURCE_BLANK);
    g_assert_cmpstr (fm_page_source_to_string (source), ==, "blank");
  }
  /* A page that is one photo: smooth blotches and grain at 50 dpi, and a
   * letter page filled by a 2550 x 3300 px JPEG (issue 14's "one big
   * photo"): no formula either. */
  for (int n = 0; n < 2 && fm_scan_have_ocr (); n++)
    {
      g_autoptr(FmDocument) doc = open_fixture (n == 0 ? "tests/fixtures/pdf/scan/photo.pdf"
                                                       : "tests/fixtures/pdf/scan/photo-big.pdf");
      g_autoptr(GError) error = NULL;
      g_autoptr(GPtrArray) regions = NULL;
      FmPageSource source = FM_PAGE_SOURCE_TEXT_LAYER;

      regions = fm_detect_page_any (doc, 0, NULL, &source, &error);
      g_assert_no_error (error);
      g_assert_cmpint (source, ==, FM_PAGE_SOURCE_PIXELS);
      g_assert_cmpuint (regions->len, ==, 0);
    }
  if (fm_scan_have_ocr ())
    {
      g_autoptr(FmDocument) doc = open_fixture ("tests/bad/pdf/no-text.pdf");
      g_autoptr(GError) error = NULL;
      g_autoptr(GPtrArray) regions = NULL;
      FmPageSource source = FM_PAGE_SOURCE_TEXT_LAYER;

      regions = fm_detect_page_any (doc, 0, NULL, &source, &error);
      g_assert_no_error (error);
      g_assert_cmpint (source, ==, FM_PAGE_SOURCE_PIXELS);
      g_assert_cmpuint (regions->len, ==, 0);
    }
  /* A text-layer page says so. */
  {
    g_autoptr(FmDocument) doc = open_fixture ("tests/fixtures/pdf/truth-1-00.pdf");
    g_autoptr(GError) error = NULL;
    g_autoptr(GPtrArray) regions = NULL;
    FmPageSource source = FM_PAGE_SOURCE_PIXELS;

    regions = fm_detect_page_any (doc, 0, NULL, &source, &error);
    g_assert_no_error (error);
    g_assert_cmpuint (regions->len, >, 0);
    g_assert_cmpint (source, ==, FM_PAGE_SOURCE_TEXT_LAYER);
  }
}

static void
test_huge_image (void)
{
  /* Page 1 draws a 20000 x 20000 px 1-bit scan (49 KB in the file, 1.6 GB
   * once Poppler decodes it): refused before any render, by the scan
   * analysis and by a plain render (the window's page view) alike. Page 2,
   * a small white image, no text layer: blank, not "a scan?". */
  g_autoptr(FmDocument) doc = open_fixture ("tests/fixtures/pdf/scan/huge-scan.pdf");
  g_autoptr(GError) error = NULL;
  g_autoptr(GPtrArray) regions = NULL;
  FmPageSource source = FM_PAGE_SOURCE_TEXT_LAYER;
  cairo_surface_t *surface;

  regions = fm_detect_page_any (doc, 0, NULL, &source, &error);
  g_assert_error (error, FM_DOCUMENT_ERROR, FM_DOCUMENT_ERROR_RENDER);
  g_assert_nonnull (strstr (error->message, "page 1: page image too large: 20000 x 20000 pixels"));
  g_assert_null (regions);
  g_clear_error (&error);
  surface = fm_render_page_rect (doc, 0, NULL, 0.5, &error);
  g_assert_error (error, FM_DOCUMENT_ERROR, FM_DOCUMENT_ERROR_RENDER);
  g_assert_null (surface);
  g_clear_error (&error);

  regions = fm_detect_page_any (doc, 1, NULL, &source, &error);
  g_assert_no_error (error);
  g_assert_cmpuint (regions->len, ==, 0);
  g_assert_cmpstr (fm_page_source_to_string (source), ==, "blank");
  g_clear_pointer (&regions, g_ptr_array_unref);
  surface = fm_render_page_rect (doc, 1, NULL, 0.5, &error);
  g_assert_no_error (error);
  g_assert_nonnull (surface);
  cairo_surface_destroy (surface);

  /* Page 3 draws a small square image: the same aspect ratio as page 1's
   * oversized one, told apart by its object in the page's resources
   * (fm-pdf-bytes.c), so read (blank), not refused. */
  regions = fm_detect_page_any (doc, 2, NULL, &source, &error);
  g_assert_no_error (error);
  g_assert_cmpuint (regions->len, ==, 0);
  g_assert_cmpstr (fm_page_source_to_string (source), ==, "blank");
  g_clear_pointer (&regions, g_ptr_array_unref);
  surface = fm_render_page_rect (doc, 2, NULL, 0.5, &error);
  g_assert_no_error (error);
  g_assert_nonnull (surface);
  cairo_surface_destroy (surface);
}

/* The page image's resolution, read from the file's bytes (fm-document.c),
 * chooses the render: a 150 dpi scan is rendered once and pooled as its
 * enlargement would be, with the same regions as the render at twice the
 * scale (FM_SCAN_POOL=1) at a quarter of its pixels. */
static void
test_render (void)
{
  static const struct {
    const char *path;
    int page;
    double dpi;
  } cases[] = {
    { "tests/fixtures/pdf/scan/truth-1-00-scan300.pdf", 0, 300 },
    { "tests/fixtures/pdf/scan/truth-1-03-scan150.pdf", 0, 150 },
    { "tests/fixtures/pdf/scan/photo.pdf", 0, 50 },
    { "tests/fixtures/pdf/truth-1-00.pdf", 0, 0 },   /* no image */
  };

  for (guint i = 0; i < G_N_ELEMENTS (cases); i++)
    {
      g_autoptr(FmDocument) doc = open_fixture (cases[i].path);
      double dpi = fm_document_page_image_ppp (doc, cases[i].page) * 72;
      g_test_message ("%s: page image %.1f dpi", cases[i].path, dpi);
      g_assert_cmpfloat (fabs (dpi - cases[i].dpi), <, 1.0);
    }
  if (fm_scan_have_ocr ())
    {
      g_autoptr(FmDocument) doc = open_fixture ("tests/fixtures/pdf/scan/truth-1-03-scan150.pdf");
      g_autoptr(GError) error = NULL;
      g_autoptr(GPtrArray) once = NULL, twice = NULL;

      once = fm_scan_detect_page (doc, 0, NULL, &error);
      g_assert_no_error (error);
      g_setenv ("FM_SCAN_POOL", "1", TRUE);
      twice = fm_scan_detect_page (doc, 0, NULL, &error);
      g_unsetenv ("FM_SCAN_POOL");
      g_assert_no_error (error);
      g_assert_cmpuint (once->len, ==, twice->len);
      g_assert_cmpuint (once->len, >, 0);
      for (guint i = 0; i < once->len; i++)
        {
          const FmRegion *a = once->pdata[i], *b = twice->pdata[i];
          g_assert_cmpint (a->kind, ==, b->kind);
          g_assert_cmpfloat (fabs (a->box.x0 - b->box.x0) + fabs (a->box.y0 - b->box.y0) +
                             fabs (a->box.x1 - b->box.x1) + fabs (a->box.y1 - b->box.y1), <, 0.01);
        }
    }
}

/* Each truth box found as a region of this kind (IoU >= 0.5). */
static void
assert_boxes_found (GPtrArray *regions, FmRegionKind kind, const char *what,
                    const double truth[][4], guint n_truth)
{
  for (guint t = 0; t < n_truth; t++)
    {
      double best = best_iou_of_kind (regions, kind, truth[t]);
      g_test_message ("%s, formula %u: best %s IoU %.2f", what, t,
                      kind == FM_REGION_DISPLAY ? "display" : "inline", best);
      g_assert_cmpfloat (best, >=, 0.5);
    }
}

/* Each truth box of page 1 of a scanned fixture found as an inline
 * region (IoU >= 0.5). */
static void
assert_inline_found (const char *fixture, const double truth[][4], guint n_truth)
{
  g_autoptr(GPtrArray) regions = scan_fixture_first_page (fixture);

  if (regions != NULL)
    assert_boxes_found (regions, FM_REGION_INLINE, fixture, truth, n_truth);
}

/* The same for display regions. */
static void
assert_display_found (const char *fixture, const double truth[][4], guint n_truth)
{
  g_autoptr(GPtrArray) regions = scan_fixture_first_page (fixture);

  if (regions != NULL)
    assert_boxes_found (regions, FM_REGION_DISPLAY, fixture, truth, n_truth);
}

/* Scripted letters on a binarised light copy (t_{n}, y_{ij}): the word
 * classifier's net for words of two characters and more weighs their ink's
 * script shape and slant (fm-scan-words-multi.h); the single net of main
 * before scanwordsnet (2026-11-28) called both prose. Page scripts-light:
 * a whole twin (make-truth seed 11621, scan seed 11621, 300
 * dpi, binary+light; tests/fixtures/pdf/scan/README.md). */
static void
test_scripts_light (void)
{
  static const double truth[][4] = {
    { 223.6, 305.8, 232.9, 313.7 },   /* t_{n}    */
    { 269.6, 257.3, 281.7, 264.8 },   /* y_{ij}   */
  };
  assert_inline_found ("tests/fixtures/pdf/scan/scripts-light-scan300.pdf", truth, G_N_ELEMENTS (truth));
}

/* Small inline fractions that Tesseract reads as one of their digits
 * ("2" for \frac{29}{a}, "6" for \frac{y_j}{96}, a word taller than the
 * line): boxed as inline formulas, not dropped as bare numbers. The page
 * is a development twin (make-truth seed 23, page 9, scan seed 29, 300
 * dpi, binarised; tests/fixtures/pdf/scan/README.md); both were missed
 * before 2026-11-26. */
static void
test_fraction_digits (void)
{
  static const double truth[][4] = {
    { 149.4, 226.3, 159.5, 238.9 },   /* \frac{29}{a}    */
    { 336.5, 296.0, 346.6, 308.7 },   /* \frac{y_{j}}{96} */
  };
  assert_inline_found ("tests/fixtures/pdf/scan/fraction-digits-scan300.pdf", truth, G_N_ELEMENTS (truth));
}

/* Inline formulas on three lines in a row, each reaching half a line
 * out (a fraction, a sum's limits): the limit or fraction part of one,
 * off every text line but nearer the next, was joined with the formula
 * stacked against it there, and the three became one box over the three
 * lines (two of them taken for displays). The page is a development twin
 * (make-truth seed 53, page 6, scan seed 530, 300 dpi;
 * tests/fixtures/pdf/scan/README.md); before 2026-11-26 (scan14g) none
 * was found. */
static void
test_stacked_lines (void)
{
  static const double truth[][4] = {
    { 289.4, 186.0, 299.8, 199.0 },   /* \frac{35}{t_{k}}                      */
    { 223.8, 199.9, 299.9, 211.0 },   /* y \approx \delta^{3} - f_{i} + \|u\| */
    { 167.0, 212.5, 206.9, 223.8 },   /* \sum_{i=1}^{n} \|b\|                  */
  };
  assert_inline_found ("tests/fixtures/pdf/scan/stacked-lines-scan300.pdf", truth, G_N_ELEMENTS (truth));
}

/* Every display of a page found as one display box: a display line
 * where Tesseract read one sure "word" of the math ("xa", page
 * display-line) is no text line, and a display fraction whose thin parts
 * each overlap the rest of its line too little is one box with it
 * (page display-fraction). */
static void
test_display_lines (void)
{
  static const struct {
    const char *pdf;
    double truth[6][4];
  } pages[] = {
    { "tests/fixtures/pdf/scan/display-line-scan300.pdf",
      { { 250.8, 116.2, 357.6, 126.7 }, { 264.2, 160.2, 344.9, 184.2 }, { 239.8, 236.0, 370.2, 246.8 },
        { 237.4, 314.3, 373.7, 345.0 }, { 268.6, 400.8, 343.6, 422.1 }, { 269.4, 513.0, 344.3, 536.4 } } },
    { "tests/fixtures/pdf/scan/display-fraction-scan300.pdf",
      { { 266.4, 115.8, 338.0, 140.7 }, { 268.5, 167.6, 337.4, 193.6 }, { 267.3, 293.0, 342.1, 319.6 },
        { 261.5, 402.5, 351.0, 426.6 }, { 281.7, 464.3, 332.6, 487.0 }, { 271.9, 513.0, 343.8, 536.2 } } },
  };

  if (!fm_scan_have_ocr ())
    {
      g_test_skip ("built without Tesseract (Debian: libtesseract-dev, tesseract-ocr-eng)");
      return;
    }
  for (guint k = 0; k < G_N_ELEMENTS (pages); k++)
    {
      g_autoptr(FmDocument) doc = open_fixture (pages[k].pdf);
      g_autoptr(GError) error = NULL;
      g_autoptr(GPtrArray) regions = NULL;

      /* The rules under test on the whole page's reading: read in two
       * parts (fm-scan.c, split_cut), Tesseract made one word with no
       * text at confidence 95 of the fifth display of the second page,
       * which the word classifier took for running text (2026-11-26,
       * scan14j; docs/scanned.md, Scores, tenth round). */
      g_setenv ("FM_SCAN_SPLIT", "0", TRUE);
      regions = fm_scan_detect_page (doc, 0, NULL, &error);
      g_unsetenv ("FM_SCAN_SPLIT");
      g_assert_no_error (error);
      for (guint t = 0; t < G_N_ELEMENTS (pages[k].truth); t++)
        {
          double best = best_iou_of_kind (regions, FM_REGION_DISPLAY, pages[k].truth[t]);
          g_test_message ("%s display %u: best display IoU %.2f", pages[k].pdf, t, best);
          g_assert_cmpfloat (best, >=, 0.5);
        }
    }
}

/* An inline fraction whose bar the blur ran into its numerator, its
 * denominator 0.30 em below (\frac{59}{\sigma}: boxed as numerator and
 * bar, the sigma dropped), and a variable with a subscript Tesseract read
 * as a dictionary word ("mo" at 86 for m_0: prose, nothing boxed). Page
 * subscript-fraction: rows 380-500 pt of a development twin (make-truth
 * seed 2014, page 1, scan seed 20140, 300 dpi JPEG in uneven light;
 * tests/fixtures/pdf/scan/README.md); best IoU 0.29 and 0 before
 * 2026-11-27 (scan14p). */
static void
test_subscript_fraction (void)
{
  static const double truth[][4] = {
    { 231.4, 46.8, 241.9, 58.8 },   /* \frac{59}{\sigma} */
    { 197.8, 63.4, 211.1, 69.4 },   /* m_{0}             */
  };
  assert_inline_found ("tests/fixtures/pdf/scan/subscript-fraction-scan300.pdf", truth, G_N_ELEMENTS (truth));
}

/* An inline fraction Tesseract read as one short word of prose ("ini" at
 * confidence 34 for \frac{z}{\|y\|}): its ink, two pieces stacked 1.4 em
 * from top to bottom, is no row of letters. Page fraction-word: a
 * development twin (make-truth seed 2014, page 7, scan seed 20140, 300
 * dpi, binarised; tests/fixtures/pdf/scan/README.md); nothing boxed over
 * it before 2026-11-27 (scan14p). */
static void
test_fraction_word (void)
{
  static const double truth[][4] = {
    { 219.5, 161.4, 234.4, 175.4 },   /* \frac{z}{\|y\|} */
  };
  assert_inline_found ("tests/fixtures/pdf/scan/fraction-word-scan300.pdf", truth, G_N_ELEMENTS (truth));
}

/* A Greek letter Tesseract read as a symbol ("@" for theta, alone between
 * two words, 0.60 of its box inked) is a letter, not a blotch; "logk)"
 * after "O(k" closes the math word's bracket, so O(k \log k) is one
 * formula, not "O(k" with "logk)" left as prose; and a citation beside
 * running text is prose: a^2 before "[32] system" joined the citation,
 * which also reads as an equation number, and was lost with it. The page
 * is a development twin (make-truth seed 2016, heldout-2016-02, scan seed
 * 20160, 300 dpi, binarised; tests/fixtures/pdf/scan/README.md); all three
 * were missed before scan14q (2026-11-27). One test, one Tesseract run. */
static void
test_letter_symbol (void)
{
  static const double truth[][4] = {
    { 163.8, 153.4, 168.9, 160.6 },   /* \theta */
    { 113.6, 730.6, 148.0, 739.6 },   /* O(k \log k) */
    { 199.1, 470.7, 208.3, 479.7 },   /* a^{2} */
  };
  assert_inline_found ("tests/fixtures/pdf/scan/letter-symbol-scan300.pdf", truth, G_N_ELEMENTS (truth));
}

/* No inline region covers a quarter of one of the prose words' boxes (a
 * neighbouring formula's box may graze a word by a blur's width). */
static void
assert_prose_not_inline (GPtrArray *regions, const double prose[][4], guint n_prose)
{
  for (guint i = 0; i < regions->len; i++)
    {
      const FmRegion *r = regions->pdata[i];
      if (r->kind != FM_REGION_INLINE)
        continue;
      for (guint k = 0; k < n_prose; k++)
        {
          double ix = MIN (r->box.x1, prose[k][2]) - MAX (r->box.x0, prose[k][0]);
          double iy = MIN (r->box.y1, prose[k][3]) - MAX (r->box.y0, prose[k][1]);
          double area = (prose[k][2] - prose[k][0]) * (prose[k][3] - prose[k][1]);
          g_test_message ("region %u [%.0f %.0f %.0f %.0f], prose word %u", i, r->box.x0, r->box.y0,
                          r->box.x1, r->box.y1, k);
          g_assert_false (ix > 0 && iy > 0 && ix * iy > 0.25 * area);
        }
    }
}

/* The fixture's first page keeps the prose boxes out of every inline
 * region and finds the truth's inline formulas beside them. */
static void
assert_prose_beside_inline (const char *fixture, const double prose[][4], guint n_prose,
                            const double truth[][4], guint n_truth)
{
  g_autoptr(GPtrArray) regions = scan_fixture_first_page (fixture);

  if (regions == NULL)
    return;
  assert_prose_not_inline (regions, prose, n_prose);
  assert_boxes_found (regions, FM_REGION_INLINE, fixture, truth, n_truth);
}

/* A footnote's first word "A" whose raised mark Tesseract lost, read
 * "A" at confidence 76 at the start of a line under the footnote rule, is
 * prose; the footnote's formula stays. Rows 640-760 pt of a scanned twin
 * of fixture cls-scanfootnote-cm (scan seed 11562, JPEG, quality 40;
 * tests/fixtures/pdf/scan/README.md); the "A" was boxed inline before
 * scanprose. */
static void
test_footnote_lost_mark (void)
{
  static const double prose[][4] = {
    { 83, 63, 93, 71 },   /* A (of "A note on the runs.") */
  };
  static const double truth[][4] = {
    { 126.3, 54.6, 162.6, 62.6 },   /* O(k \log k) */
  };
  assert_prose_beside_inline ("tests/fixtures/pdf/scan/footnote-lost-mark-scan300.pdf", prose,
                              G_N_ELEMENTS (prose), truth, G_N_ELEMENTS (truth));
}

/* Prose marks and parentheticals are no math: "($n$ large)" and "($x$
 * positive)", whose closing bracket the math word "(n" did not open as an
 * argument's, and a section mark between two words, read as itself at
 * confidence 93, not a letter Tesseract knew no letter for. Page prose-marks: a
 * typeset probe of the review of scan14q (scan seed 10121, 300 dpi;
 * tests/fixtures/pdf/scan/README.md); before scanfix4 "(n large)" and
 * "(x positive)" were one inline box each and the lone mark another. Boxes
 * of the words that must stay out, from the page's own reading. */
static void
test_prose_marks (void)
{
  static const double prose[][4] = {
    { 371, 265, 397, 275 },   /* large)    */
    { 258, 279, 298, 289 },   /* positive) */
    { 260, 447, 264, 457 },   /* the mark in "mark \S{} alone" */
  };
  g_autoptr(GPtrArray) regions = scan_fixture_first_page ("tests/fixtures/pdf/scan/prose-marks-scan300.pdf");

  if (regions != NULL)
    assert_prose_not_inline (regions, prose, G_N_ELEMENTS (prose));
}

/* A word hyphenated at the end of a line of the left column is prose,
 * though the right column's first word lies a gutter (1 em) to its right:
 * "Es-" (a word's first piece, read at confidence 89) was boxed inline beside
 * \frac{c}{\sigma} before scanprose. Rows 120-280 pt of development twin
 * dev-2075-06 (make-truth seed 2075, scan seed 20750, 300 dpi,
 * binary+lowres0.70; tests/fixtures/pdf/scan/README.md); boxes are the
 * truth's and the page's reading less 120 pt. */
static void
test_hyphen_gutter (void)
{
  static const double prose[][4] = {
    { 285, 71, 299, 79 },   /* Es- */
  };
  static const double truth[][4] = {
    { 266.9, 71.8, 274.2, 82.2 },   /* \frac{c}{\sigma} */
  };
  assert_prose_beside_inline ("tests/fixtures/pdf/scan/hyphen-gutter-scan300.pdf", prose,
                              G_N_ELEMENTS (prose), truth, G_N_ELEMENTS (truth));
}

/* Digits with a script are no bare number: \frac{93}{94}, read as digits,
 * its denominator lower than its numerator at both ends, was dropped as a
 * number in the prose. A development twin (make-truth seed 2017,
 * heldout-2017-01, scan seed 20170, 150 dpi, binarised); missed before
 * scan14q. */
static void
test_digit_scripts (void)
{
  static const double truth[][4] = {
    { 121.9, 732.2, 131.9, 742.7 },   /* \frac{93}{94} */
  };
  assert_inline_found ("tests/fixtures/pdf/scan/digit-scripts-scan150.pdf", truth, G_N_ELEMENTS (truth));
}

/* A title page's prose: a \LARGE bold title ("Fixed Points in Limit Sets
 * via \'Etat Maps") and a paragraph with "no", "on", "so". An i's dot
 * over its stem is no fraction's numerator: "in Limit" and "via" were
 * boxed as inline fractions before the review of scan14p (2026-11-27;
 * tests/fixtures/pdf/scan/README.md). Rows 155-205 pt hold the title's
 * two lines, 280 pt and down the paragraph; the author's initial "A."
 * and the heading's lone "a" (rows 215-275 pt) are single letters the
 * word classifier judges, not ink shaped as math, and are not asked
 * about here. */
static void
test_title (void)
{
  static const double prose[][2] = { { 155, 205 }, { 280, 360 } };
  g_autoptr(GPtrArray) regions = scan_fixture_first_page ("tests/fixtures/pdf/scan/title-scan300.pdf");

  if (regions == NULL)
    return;
  for (guint i = 0; i < regions->len; i++)
    {
      const FmRegion *r = regions->pdata[i];
      g_test_message ("region %u: kind %d [%.0f %.0f %.0f %.0f]", i, r->kind, r->box.x0, r->box.y0,
                      r->box.x1, r->box.y1);
      for (guint k = 0; k < G_N_ELEMENTS (prose); k++)
        g_assert_false (r->box.y1 > prose[k][0] && r->box.y0 < prose[k][1]);
    }
}

/* A display set just above a footnote rule, the rule and the footnotes
 * (page footnote-rule: the lower part of a development twin, make-truth
 * seed 2013, page 3, scan seed 20130, 150 dpi JPEG; tests/fixtures/pdf/
 * scan/README.md). The rule, a lone rule stacked under the display's
 * block, was joined to it: the display's box reached down to the
 * footnotes (best IoU 0.43, before 2026-11-27, scan14n). */
static void
test_footnote_rule (void)
{
  static const double truth[4] = { 135.5, 109.7, 253.0, 120.9 };  /* 93 \times b^{n} \times 10 \le ... */
  g_autoptr(GPtrArray) regions = scan_fixture_first_page ("tests/fixtures/pdf/scan/footnote-rule-scan150.pdf");
  double best = 0;

  if (regions == NULL)
    return;
  for (guint i = 0; i < regions->len; i++)
    {
      const FmRegion *r = regions->pdata[i];
      if (r->kind != FM_REGION_DISPLAY)
        continue;
      best = MAX (best, iou (&r->box, truth));
      /* No display reaches the footnotes (their first line's top, 127 pt). */
      if (r->box.x1 > truth[0] && r->box.x0 < truth[2])
        g_assert_cmpfloat (r->box.y1, <, 125.0);
    }
  g_test_message ("footnote-rule: best display IoU %.2f", best);
  g_assert_cmpfloat (best, >=, 0.5);
}

/* A light copy's aligned displays each one display box (page
 * aligned-light, a development twin): the threshold near the ink broke
 * their rows into stems and dots, and a row whose pieces all lie between
 * the pieces of the row above (a lone stem, the third row of the second
 * display) or overlap it by a few pixels only (the third display's first
 * row) was a display of its own, or dropped, until the display blocks
 * themselves were joined when stacked (fm-scan.c, blocks_stacked): best
 * IoU 0.47 and 0.33 for the second and third displays before
 * (2026-11-27, scan14l). */
static void
test_light_aligned (void)
{
  static const double truth[][4] = { { 281.6, 102.6, 344.6, 132.1 },
                                     { 271.2, 185.7, 350.3, 231.2 },
                                     { 269.2, 260.2, 348.6, 304.0 } };

  assert_display_found ("tests/fixtures/pdf/scan/aligned-light-scan300.pdf", truth, G_N_ELEMENTS (truth));
}

/* Equation numbers that Tesseract does not read as "(3.3)" ("bas", "fn"
 * on this light copy) and that broke into more pieces than an unread
 * number's 3 to 6: bracketed by a "(" and a ")" at the column's right
 * edge, each is its display's number, or nothing when its display was
 * missed ("(2)" here), never a display box (page equation-numbers, a
 * development twin). */
static void
test_bracketed_numbers (void)
{
  static const double numbers[][4] = { { 284.8, 567.2, 297.7, 577.4 }, { 275.8, 632.4, 296.5, 642.8 } };
  g_autoptr(GPtrArray) regions = scan_fixture_first_page ("tests/fixtures/pdf/scan/equation-numbers-scan300.pdf");
  gboolean labelled = FALSE;

  if (regions == NULL)
    return;
  for (guint t = 0; t < G_N_ELEMENTS (numbers); t++)
    for (guint i = 0; i < regions->len; i++)
      {
        const FmRegion *r = regions->pdata[i];
        if (r->kind == FM_REGION_DISPLAY && iou (&r->box, numbers[t]) > 0.1)
          g_error ("number %u boxed as a display [%.1f %.1f %.1f %.1f]", t, r->box.x0, r->box.y0, r->box.x1,
                   r->box.y1);
        if (t == 1 && r->kind == FM_REGION_NUMBER && iou (&r->box, numbers[t]) >= 0.5)
          {
            g_assert_cmpint (r->label_of, >=, 0);
            labelled = TRUE;
          }
      }
  g_assert_true (labelled);
}

/* A 1-bit scan in uneven light: its right margin, darkened towards the
 * edge, is specks of noise only (the text column ends at 550 pt of the
 * 612); main boxed 13 displays there, the specks rule leaves one (noise
 * with a piece larger than a speck). Its displays are still found. */
static void
test_shade_edge (void)
{
  g_autoptr(GPtrArray) regions = scan_fixture_first_page ("tests/fixtures/pdf/scan/shade-edge-scan300.pdf");
  int displays = 0, in_margin = 0;

  if (regions == NULL)
    return;
  for (guint i = 0; i < regions->len; i++)
    {
      const FmRegion *r = regions->pdata[i];
      if (r->box.x0 > 565)
        g_test_message ("in the margin: [%.1f %.1f %.1f %.1f]", r->box.x0, r->box.y0, r->box.x1, r->box.y1);
      in_margin += r->box.x0 > 565;
      displays += r->kind == FM_REGION_DISPLAY && r->box.x0 <= 565;
    }
  g_assert_cmpint (in_margin, <=, 2);
  g_assert_cmpint (displays, >=, 9);
}

typedef struct {
  FmDocument *doc;
  GPtrArray *regions;
  GError *error;
} PageRun;

static gpointer
detect_thread (gpointer data)
{
  PageRun *run = data;
  run->regions = fm_scan_detect_page (run->doc, 0, NULL, &run->error);
  return NULL;
}

/* Two pages read at once (formulate-cli's detection threads): each gets
 * a Tesseract instance of its own, the second one loaded while the pages
 * render (fm-scan.c, tess_begin_page), and both read the same boxes. */
static void
test_two_at_once (void)
{
  PageRun runs[2] = { { 0 } };
  GThread *threads[2];

  if (!fm_scan_have_ocr ())
    {
      g_test_skip ("built without Tesseract (Debian: libtesseract-dev, tesseract-ocr-eng)");
      return;
    }
  for (int i = 0; i < 2; i++)
    {
      runs[i].doc = open_fixture ("tests/fixtures/pdf/scan/truth-1-03-scan150.pdf");
      threads[i] = g_thread_new ("test-scan", detect_thread, &runs[i]);
    }
  for (int i = 0; i < 2; i++)
    {
      g_thread_join (threads[i]);
      g_assert_no_error (runs[i].error);
      g_assert_nonnull (runs[i].regions);
    }
  g_assert_cmpuint (runs[0].regions->len, >, 0);
  g_assert_cmpuint (runs[0].regions->len, ==, runs[1].regions->len);
  for (guint i = 0; i < runs[0].regions->len; i++)
    {
      const FmRegion *a = runs[0].regions->pdata[i], *b = runs[1].regions->pdata[i];
      g_assert_cmpint (a->kind, ==, b->kind);
      g_assert_cmpfloat (fabs (a->box.x0 - b->box.x0) + fabs (a->box.y0 - b->box.y0) +
                         fabs (a->box.x1 - b->box.x1) + fabs (a->box.y1 - b->box.y1), <, 0.01);
    }
  for (int i = 0; i < 2; i++)
    {
      g_ptr_array_unref (runs[i].regions);
      g_object_unref (runs[i].doc);
    }
}

/* The regions of page 1 of a fixture with FM_SCAN_SPLIT set to split
 * (NULL: unset, the default). */
static GPtrArray *
detect_split (const char *fixture, const char *split)
{
  g_autoptr(FmDocument) doc = open_fixture (fixture);
  g_autoptr(GError) error = NULL;
  GPtrArray *regions;

  if (split != NULL)
    g_setenv ("FM_SCAN_SPLIT", split, TRUE);
  else
    g_unsetenv ("FM_SCAN_SPLIT");
  regions = fm_scan_detect_page (doc, 0, NULL, &error);
  g_unsetenv ("FM_SCAN_SPLIT");
  g_assert_no_error (error);
  g_assert_nonnull (regions);
  return regions;
}

/* The same regions, kind and box (to 0.01 pt), in the same order. */
static void
assert_same_regions (GPtrArray *a_regions, GPtrArray *b_regions)
{
  g_assert_cmpuint (a_regions->len, ==, b_regions->len);
  for (guint i = 0; i < a_regions->len; i++)
    {
      const FmRegion *a = a_regions->pdata[i], *b = b_regions->pdata[i];
      g_assert_cmpint (a->kind, ==, b->kind);
      g_assert_cmpfloat (fabs (a->box.x0 - b->box.x0) + fabs (a->box.y0 - b->box.y0) +
                         fabs (a->box.x1 - b->box.x1) + fabs (a->box.y1 - b->box.y1), <, 0.01);
    }
}

/* A page read alone is read by two Tesseract instances at once, cut
 * between two text lines (fm-scan.c, split_cut): its parts are images of
 * their own, so the regions are the same whether the parts are read at
 * once or one after the other (as when other pages hold the cores), and
 * about what the whole page's reading gives (when written: 12 and 22
 * regions both ways on the fixtures, 5 displays each). */
static void
test_split (void)
{
  const char *names[] = { "tests/fixtures/pdf/scan/truth-1-00-scan300.pdf",
                          "tests/fixtures/pdf/scan/truth-1-03-scan150.pdf" };

  if (!fm_scan_have_ocr ())
    {
      g_test_skip ("built without Tesseract (Debian: libtesseract-dev, tesseract-ocr-eng)");
      return;
    }
  for (guint n = 0; n < G_N_ELEMENTS (names); n++)
    {
      g_autoptr(GPtrArray) at_once = detect_split (names[n], "1");
      g_autoptr(GPtrArray) serial = detect_split (names[n], "serial");
      g_autoptr(GPtrArray) whole = detect_split (names[n], "0");
      /* In parts by default since 2026-11-28 (tessspeed; whole before). */
      g_autoptr(GPtrArray) by_default = detect_split (names[n], NULL);
      int displays[2] = { 0, 0 };

      g_assert_cmpuint (at_once->len, >, 0);
      assert_same_regions (at_once, serial);
      assert_same_regions (at_once, by_default);
      for (guint i = 0; i < at_once->len; i++)
        displays[0] += ((FmRegion *) at_once->pdata[i])->kind == FM_REGION_DISPLAY;
      for (guint i = 0; i < whole->len; i++)
        displays[1] += ((FmRegion *) whole->pdata[i])->kind == FM_REGION_DISPLAY;
      g_test_message ("%s: %u regions read in parts, %u whole; displays %d and %d", names[n],
                      at_once->len, whole->len, displays[0], displays[1]);
      g_assert_cmpint (ABS (displays[0] - displays[1]), <=, 1);
      g_assert_cmpint (ABS ((int) at_once->len - (int) whole->len), <=, 4);
    }
}

/* Display fractions in the left column level with the right column's
 * prose lines (page twocol-fraction, tests/fixtures/pdf/scan/README.md).
 * A text line spans both columns, and a fraction's numerator on the other
 * column's line was taken for that line's ink: the bar took nothing
 * stacked on it, was a lone rule and dropped, and the second display's box
 * ended where its parts did, 34.8 pt wide of the bar's 36.4 (before
 * 2026-11-27, scanfix2). */
static void
test_twocol_fraction (void)
{
  static const double truth[3][4] = {
    { 154.3, 133.4, 235.7, 157.0 }, { 172.8, 221.6, 211.0, 248.4 }, { 175.2, 349.7, 200.2, 370.4 },
  };
  g_autoptr(GPtrArray) regions = scan_fixture_first_page ("tests/fixtures/pdf/scan/twocol-fraction-scan300.pdf");

  if (regions == NULL)
    return;
  for (guint t = 0; t < G_N_ELEMENTS (truth); t++)
    {
      const FmRegion *best_r = NULL;
      double best = 0;
      for (guint i = 0; i < regions->len; i++)
        {
          const FmRegion *r = regions->pdata[i];
          if (r->kind == FM_REGION_DISPLAY && iou (&r->box, truth[t]) > best)
            {
              best = iou (&r->box, truth[t]);
              best_r = r;
            }
        }
      g_test_message ("twocol-fraction display %u: best display IoU %.2f", t, best);
      g_assert_cmpfloat (best, >=, 0.7);
      /* The bar is the widest piece: the box spans it, the truth's box
       * less the null delimiters' space (1.2 pt each side) and 0.5 pt. */
      g_assert_cmpfloat (best_r->box.x1 - best_r->box.x0, >=, truth[t][2] - truth[t][0] - 2.9);
    }
}

/* Asserts that reads takes every string of yes and none of no. */
static void
assert_reads (gboolean (*reads) (const char *), const char *const *yes, gsize n_yes, const char *const *no,
              gsize n_no)
{
  for (gsize i = 0; i < n_yes; i++)
    if (!reads (yes[i]))
      g_error ("not taken: \"%s\"", yes[i]);
  for (gsize i = 0; i < n_no; i++)
    if (reads (no[i]))
      g_error ("taken: \"%s\"", no[i]);
}

/* A citation is prose; a set or an interval in brackets is math. */
static void
test_citation (void)
{
  static const char *yes[] = { "[12]", "[3,7].", "{13}.", "{10}:", "{10]:", "(4)", "[l2]", "[1-3]" };
  static const char *no[] = { "{0,1}", "{0,1}.", "{1,2}", "{1,2]", "[0,1]", "(0,1)", "[0]", "{}", "[a]", "x" };

  assert_reads (fm_scan_reads_like_citation, yes, G_N_ELEMENTS (yes), no, G_N_ELEMENTS (no));
}

/* A name set against its opening parenthesis is a function applied,
 * math however the nets read the word; a plural's "(s)", a longer word,
 * a lone "(" and a parenthesis after a space or a digit are not. */
static void
test_function_application (void)
{
  static const char *yes[] = { "f(x)", "O(ntog", "tan(40", "span(T)", "det(k", "Ig(n)", "arcsin(x)", "F(U;)" };
  static const char *no[] = { "value(s)", "line(es)", "function(x)", "f(", "(x)", "3(x)", "f", "", "e.g.(a)" };

  assert_reads (fm_scan_reads_function_application, yes, G_N_ELEMENTS (yes), no, G_N_ELEMENTS (no));
}

/* One lowercase letter is a variable, but the words "a" and "i". */
static void
test_lone_letter (void)
{
  static const char *yes[] = { "m", "y.", "x,", "b", "z:" };
  static const char *no[] = { "a", "a.", "i", "I", "M", "xy", "x.,", "x)", "", "1" };

  assert_reads (fm_scan_reads_lone_letter, yes, G_N_ELEMENTS (yes), no, G_N_ELEMENTS (no));
}

/* Digits with one bracket broken are a prose number; the first half of
 * an interval or a point, "(0,", is not, nor a whole "(3)"; the halves of
 * an interval read as a list stay math, a citation's do not. */
static void
test_broken_bracket (void)
{
  static const char *yes[] = { "(19!", "(29\xc2\xb0", "1)", "[2", "(3!", "17]", "17],", "(12" };
  static const char *no[] = { "(0,", "[2,", "(2.", "[0;", "(3)", "[12]", "{7", "(x", "(12345", "12" };
  static const char *interval[] = { "[0", "1]" };
  static const char *interval_stop[] = { "[0,", "1]." };
  static const char *point[] = { "(0,", "0,", "1)" };
  static const char *cited[] = { "[2", "17]" };
  static const char *cited_pair[] = { "[1,", "2]" };
  static const char *one[] = { "[0,1]" };
  static const char *words[] = { "(0,", "x)" };

  assert_reads (fm_scan_reads_like_broken_bracket_number, yes, G_N_ELEMENTS (yes), no, G_N_ELEMENTS (no));
  g_assert_true (fm_scan_words_read_as_list (interval, 2));
  g_assert_true (fm_scan_words_read_as_list (interval_stop, 2));
  g_assert_true (fm_scan_words_read_as_list (point, 3));
  g_assert_false (fm_scan_words_read_as_list (cited, 2));
  g_assert_false (fm_scan_words_read_as_list (cited_pair, 2));
  g_assert_false (fm_scan_words_read_as_list (one, 1));
  g_assert_false (fm_scan_words_read_as_list (words, 2));
}

/* Draws on a white w x h image ink 3 px thick centred on y = f(x) for x in
 * [x0, x1). */
static void
draw_curve (guint8 *px, int w, int h, int x0, int x1, double (*f) (double, double), double arg)
{
  memset (px, 255, (gsize) w * h);
  for (int x = x0; x < x1; x++)
    {
      int yc = (int) lround (f (x - x0, arg));
      for (int y = yc - 1; y <= yc + 1; y++)
        if (y >= 0 && y < h)
          px[(gsize) y * w + x] = 0;
    }
}

static double
curve_line (double x, double slope)
{
  return 4 + slope * x;
}

/* A wide hat: up to its middle and down again, on the skew. */
static double
curve_hat (double x, double slope)
{
  return 10 + slope * x - 6 * (1 - fabs (x - 100) / 100);
}

/* A wide tilde. */
static double
curve_tilde (double x, double slope)
{
  return 9 + slope * x + 3 * sin (x * G_PI / 100);
}

/* The straightness test a rule on a skewed page must pass before its box
 * is flattened (fm-scan.c, comp_straighten_line): a line falling with the
 * skew does; a hat, a tilde, or a line against the skew does not. */
static void
test_stroke_along (void)
{
  enum { W = 220, H = 24 };
  g_autofree guint8 *px = g_malloc ((gsize) W * H);
  double slope = 0.05;  /* 2.9 degrees */

  draw_curve (px, W, H, 10, 210, curve_line, slope);
  g_assert_true (fm_scan_stroke_along (px, W, 128, 10, 0, 210, H, slope, 3));
  g_assert_false (fm_scan_stroke_along (px, W, 128, 10, 0, 210, H, -slope, 3));
  draw_curve (px, W, H, 10, 210, curve_hat, slope);
  g_assert_false (fm_scan_stroke_along (px, W, 128, 10, 0, 210, H, slope, 3));
  draw_curve (px, W, H, 10, 210, curve_tilde, slope);
  g_assert_false (fm_scan_stroke_along (px, W, 128, 10, 0, 210, H, slope, 3));
}

/* A function word of prose beside a formula is prose, whatever the word
 * classifier says: "at" (in Tesseract's dictionary, read at 55) after k <
 * \delta was taken for math and joined the formula, and the two were one
 * box. Page function-words: rows 60-260 pt of a development twin
 * (make-truth seed 2018, heldout-2018-03, scan seed 20180, 300 dpi JPEG;
 * tests/fixtures/pdf/scan/README.md); best IoU 0.11 before scan14r
 * (2026-11-27). */
static void
test_function_words (void)
{
  static const double truth[][4] = {
    { 112.9, 53.1, 137.0, 60.9 },   /* k < \delta */
  };
  /* The rule under test on the whole page's reading: read in two parts
   * (fm-scan.c, split_cut; the default since tessspeed), Tesseract's
   * top part (rows 0-158 of this cropped page, five text lines) read
   * "at" run into the formula after it ("datf,,...,f," at 23) and the
   * function-word rule had no "at" to look at (best IoU 0.27). */
  g_setenv ("FM_SCAN_SPLIT", "0", TRUE);
  assert_inline_found ("tests/fixtures/pdf/scan/function-words-scan300.pdf", truth, G_N_ELEMENTS (truth));
  g_unsetenv ("FM_SCAN_SPLIT");
}

/* A number beside an operator is its operand: Tesseract read "18 \in a"
 * as "18", "\u20ac" and "a", and the classifier took the number for
 * running text; the formula was boxed without it. Page number-operand:
 * rows 170-300 pt of a development twin (make-truth seed 2019,
 * heldout-2019-04, scan seed 20190, 300 dpi JPEG;
 * tests/fixtures/pdf/scan/README.md); best IoU 0.43 before scan14r
 * (2026-11-27). */
static void
test_number_operand (void)
{
  static const double truth[][4] = {
    { 138.2, 62.0, 164.4, 69.8 },   /* 18 \in a */
  };
  assert_inline_found ("tests/fixtures/pdf/scan/number-operand-scan300.pdf", truth, G_N_ELEMENTS (truth));
}

/* A function word between a display's two halves stays in the display:
 * "..., \qquad \text{and} \qquad ..." after a short line, which TeX sets
 * at the line spacing (\abovedisplayshortskip 0 pt), so the text line
 * above lies within 1 em. Its "and" was made prose (word_function_word,
 * or the classifier read it as prose) and the display was boxed as two
 * inline formulas. Page display-word: a scanned twin of the fixture
 * cls-quads-lua (300 dpi JPEG, the review of scan14r, saved again at
 * quality 40; tests/fixtures/pdf/scan/README.md); two inline boxes before
 * scanfix5 (2026-11-27). A crop of it is no test: read without the rest
 * of the page, junk words in the display's ink were taken for prose. */
static void
test_display_word (void)
{
  static const double truth[4] = { 72.4, 143.0, 539.0, 152.4 };
  g_autoptr(GPtrArray) regions = scan_fixture_first_page ("tests/fixtures/pdf/scan/display-word-scan300.pdf");
  double best = 0;

  if (regions == NULL)
    return;
  best = best_iou_of_kind (regions, FM_REGION_DISPLAY, truth);
  g_test_message ("best display IoU %.2f", best);
  g_assert_cmpfloat (best, >=, 0.5);
}

/* The "and" of a prose line flush with the margin, between two inline
 * formulas a word space away ("\noindent $x_1^2 + ... = r^2$ and $y_1^2 +
 * ... = s^2$"), is prose: word_in_display_line() took it for a display's
 * word and the line was boxed as one display (main 0c158a9, both twins).
 * Pages scanand-scan{300,150}: scanned twins of cls-scanand-cm (seed
 * 10363, mixed degradation; tests/fixtures/pdf/scan/README.md). */
static void
test_prose_and (void)
{
  static const double truth[][4] = {
    { 67.6, 134.2, 145.2, 146.0 },    /* x_1^2 + x_2^2 + x_3^2 = r^2 */
    { 167.7, 132.5, 243.8, 144.4 },   /* y_1^2 + y_2^2 + y_3^2 = s^2 */
  };
  const char *pages[] = { "tests/fixtures/pdf/scan/scanand-scan300.pdf", "tests/fixtures/pdf/scan/scanand-scan150.pdf" };

  for (guint f = 0; f < G_N_ELEMENTS (pages); f++)
    {
      g_autoptr(GPtrArray) regions = scan_fixture_first_page (pages[f]);

      if (regions == NULL)
        return;
      for (guint i = 0; i < regions->len; i++)
        g_assert_cmpint (((const FmRegion *) regions->pdata[i])->kind, !=, FM_REGION_DISPLAY);
      assert_inline_found (pages[f], truth, G_N_ELEMENTS (truth));
    }
}

/* An inline formula alone on its paragraph's last line, at the margin
 * one leading under the prose line above, is inline: no running text
 * beside it, it was boxed as a display (main 3b437ef; the display IoU
 * 0.95, no inline box). The displays below it stay displays. Page
 * lastline-scan300: rows 0-245 pt of a scanned twin of cls-scanlastline-cm
 * (scan seed 10582, JPEG and uneven light, saved again at quality 40;
 * tests/fixtures/pdf/scan/README.md). */
static void
test_last_line (void)
{
  static const double inline_truth[4] = { 77.5, 115.5, 155.9, 127.4 };   /* \|b\| \in a_{j} - a_{i+1} \cdot c */
  static const double display_truth[][4] = {
    { 269.4, 130.7, 353.0, 157.1 },   /* \int_{0}^{1} f(t) \, dt = u^{2} + t */
    { 281.0, 197.0, 338.5, 229.3 },   /* \sum_{k=1}^{N} a_{k} b_{k} \le \frac{z}{x} */
  };
  g_autoptr(GPtrArray) regions = scan_fixture_first_page ("tests/fixtures/pdf/scan/lastline-scan300.pdf");
  double best;

  if (regions == NULL)
    return;
  best = best_iou_of_kind (regions, FM_REGION_INLINE, inline_truth);
  g_test_message ("inline on the last line: best IoU %.2f", best);
  g_assert_cmpfloat (best, >=, 0.5);
  g_assert_cmpfloat (best_iou_of_kind (regions, FM_REGION_DISPLAY, inline_truth), <, 0.5);
  assert_boxes_found (regions, FM_REGION_DISPLAY, "lastline", display_truth, G_N_ELEMENTS (display_truth));
}

/* Flat displays flush with the margin (fleqn, \mathindent 0 pt) with
 * tight display skips (3 pt) lie 1.2-1.3 leadings under the prose, within
 * 1 em of it, and start where it does: they stay displays. The first
 * one's u_n was read as "Un" at confidence 90, its line taken for a line
 * of prose (it does not stand apart) and the display boxed inline (main
 * d42a378; band_off_leading). Page flushtight-scan300: rows 0-300 pt of a
 * scanned twin of cls-scanflushtight-cm (scan seed 10673, JPEG, saved again
 * at quality 40; tests/fixtures/pdf/scan/README.md). */
static void
test_flush_tight (void)
{
  static const double truth[][4] = {
    { 63.5, 140.3, 179.2, 152.5 },   /* u_{n} + v_{n} \le 2 w_{n} - z_{n} + c \cdot y */
    { 65.2, 192.6, 194.7, 206.8 },   /* f(x) = g(x) + h(x) - a \cdot b + k */
    { 66.7, 237.1, 156.3, 248.1 },   /* p_{1} + q_{1} = r_{1} \cdot s_{1} - t_{1} */
  };
  g_autoptr(GPtrArray) regions = scan_fixture_first_page ("tests/fixtures/pdf/scan/flushtight-scan300.pdf");

  if (regions == NULL)
    return;
  assert_boxes_found (regions, FM_REGION_DISPLAY, "flushtight", truth, G_N_ELEMENTS (truth));
  for (guint t = 0; t < G_N_ELEMENTS (truth); t++)
    g_assert_cmpfloat (best_iou_of_kind (regions, FM_REGION_INLINE, truth[t]), <, 0.5);
}

/* A display set flush with the margin (fleqn, \mathindent 0 pt) with a
 * function word a word space from the math on both sides is no line of
 * prose: the line of prose below it starts at the margin too, but a
 * display's skip away (1.7 line pitches), not at the paragraph's leading.
 * word_line_flush_with_prose() took it for the next line of a paragraph,
 * the "as" of the gathered rows' second row stayed prose and the row was
 * cut off the display (best IoU 0.45, main 0667c64). Page fleqn-scan300:
 * rows 0-1400 px of a scanned twin of cls-scanfleqn-cm (scan seed 10520,
 * JPEG, saved again at quality 40; tests/fixtures/pdf/scan/README.md). */
static void
test_fleqn (void)
{
  static const double truth[][4] = {
    { 77.5, 136.9, 258.2, 151.0 },   /* u_n(x) + v_n(x) \le 2 \text{ and } ... */
    { 76.0, 204.7, 214.7, 217.7 },   /* f(x) = g(x) + h(x) \text{ for } x \in [a, b] */
    { 74.4, 258.9, 177.2, 288.1 },   /* a_1 + b_1 = c_1 \text{ if } ..., \\ ... \text{ as } ... */
  };

  assert_display_found ("tests/fixtures/pdf/scan/fleqn-scan300.pdf", truth, G_N_ELEMENTS (truth));
}

/* A section's heading is no display: "1 She by" (\section, bold at 14.4
 * pt) was read at confidence 43, its words taken for math and the line
 * boxed as a display (main 0667c64); the display below it stays. Page
 * heading-scan300: rows 0-250 pt of a development twin (make-truth seed
 * 2028, dev-2028-07, scan seed 20280, 300 dpi, binary+lowres0.66;
 * tests/fixtures/pdf/scan/README.md). */
static void
test_heading (void)
{
  static const double heading[4] = { 91, 83, 158, 99 };
  static const double display[4] = { 272.5, 157.9, 346.3, 182.9 };  /* M = \begin{pmatrix} ... */
  g_autoptr(GPtrArray) regions = scan_fixture_first_page ("tests/fixtures/pdf/scan/heading-scan300.pdf");
  double best = 0;

  if (regions == NULL)
    return;
  for (guint i = 0; i < regions->len; i++)
    {
      const FmRegion *r = regions->pdata[i];
      g_test_message ("region %u [%.0f %.0f %.0f %.0f]", i, r->box.x0, r->box.y0, r->box.x1, r->box.y1);
      g_assert_cmpfloat (iou (&r->box, heading), <, 0.1);
      if (r->kind == FM_REGION_DISPLAY)
        best = MAX (best, iou (&r->box, display));
    }
  g_assert_cmpfloat (best, >=, 0.5);
}

/* A display in one column whose piece Tesseract read as a word of
 * prose ("t+" at confidence 62 in t + b_n + 95 > 31 + \epsilon + g_{ij})
 * on the height of the other column's line of prose made one text line
 * with that line, and was boxed inline (main 0667c64): the words of a
 * text line more than 3 em apart are judged each with their own column
 * (band_column_display_lines). Page column-display-scan300: rows 0-230
 * pt of a development twin (make-truth seed 2029, dev-2029-05, scan seed
 * 20290, 300 dpi, binary+shade25; tests/fixtures/pdf/scan/README.md). */
static void
test_column_display (void)
{
  static const double display[4] = { 123.5, 173.4, 234.6, 183.3 };
  g_autoptr(GPtrArray) regions =
    scan_fixture_first_page ("tests/fixtures/pdf/scan/column-display-scan300.pdf");
  double best = 0;

  if (regions == NULL)
    return;
  best = best_iou_of_kind (regions, FM_REGION_DISPLAY, display);
  g_test_message ("best display IoU %.2f", best);
  g_assert_cmpfloat (best, >=, 0.5);
}

/* Intervals and points in brackets are math: Tesseract parts "(0, 1)" at
 * its space into "(0," and "1)", and both halves were taken for numbers
 * of the prose whose bracket a scan broke (reads_like_broken_bracket_number),
 * the cluster dropped as a bare number (main ecc856c; review of scan14s).
 * Page intervals-scan300 (intervals.tex, scan seed 10380, binarised;
 * tests/fixtures/pdf/scan/README.md); the boxes are the formulas' ink on
 * the twin, turned with its skew. */
static void
test_intervals (void)
{
  static const double truth[][4] = {
    { 158, 76, 177, 87 },   /* [0, 1] */
    { 302, 74, 323, 84 },   /* (0, 1) */
    { 274, 86, 305, 97 },   /* (0, 0, 1) */
  };

  assert_inline_found ("tests/fixtures/pdf/scan/intervals-scan300.pdf", truth, G_N_ELEMENTS (truth));
}

/* Digits with sentence punctuation, as tall as lining digits, are a
 * number of the prose, not a formula: "108:" was boxed alone as an inline
 * formula; the formula above it is still found. Page number-stop: rows
 * 120-200 pt of a development twin (make-truth seed 2018, heldout-2018-06,
 * scan seed 20180, 300 dpi, binarised; tests/fixtures/pdf/scan/README.md);
 * boxed before scan14r (2026-11-27). */
static void
test_number_stop (void)
{
  static const double formula[4] = { 84.1, 15.6, 123.2, 24.1 };   /* n^{-1} = t^n */
  static const double prose[4] = { 133, 29, 154, 36 };            /* 108: */
  g_autoptr(GPtrArray) regions = scan_fixture_first_page ("tests/fixtures/pdf/scan/number-stop-scan300.pdf");
  double best = 0;

  if (regions == NULL)
    return;
  for (guint i = 0; i < regions->len; i++)
    {
      const FmRegion *r = regions->pdata[i];
      g_test_message ("region %u [%.0f %.0f %.0f %.0f]", i, r->box.x0, r->box.y0, r->box.x1, r->box.y1);
      if (r->kind == FM_REGION_INLINE)
        best = MAX (best, iou (&r->box, formula));
      g_assert_cmpfloat (iou (&r->box, prose), <, 0.1);
    }
  g_assert_cmpfloat (best, >=, 0.5);
}

/* A small inline fraction Tesseract read as one digit no taller than the
 * line's digits ("2" for \frac{\sigma}{\alpha}, read at 60, the word
 * classifier's math at 0.81) is a formula: its numerator and denominator
 * are stacked, as no number of the prose is. It was dropped as a bare
 * number. Page fraction-stacked: a development twin (make-truth seed 2020,
 * heldout-2020-05, scan seed 20200, 300 dpi, binarised;
 * tests/fixtures/pdf/scan/README.md); no region over it before scan14s
 * (2026-11-27). */
static void
test_fraction_stacked (void)
{
  static const double truth[][4] = {
    { 119.9, 710.2, 127.3, 719.3 },   /* \frac{\sigma}{\alpha} */
  };
  assert_inline_found ("tests/fixtures/pdf/scan/fraction-stacked-scan300.pdf", truth, G_N_ELEMENTS (truth));
}

/* A number in brackets whose bracket the scan broke ("(19!" for a
 * parenthetical "(19)", read at 68, the word classifier's math at 0.54)
 * is prose, not a formula: it was boxed alone as an inline formula. Page
 * bracket-number: a development twin (make-truth seed 2020,
 * heldout-2020-00, scan seed 20200, 300 dpi, binarised, shaded, a light
 * copy; tests/fixtures/pdf/scan/README.md); boxed before scan14s
 * (2026-11-27). The box is Tesseract's word, in points. (The page's "28]"
 * is boxed still: its "[" broke into pieces outside the word.) */
static void
test_bracket_number (void)
{
  static const double prose[4] = { 441, 229, 454, 239 };   /* (19! */
  const double area = (prose[2] - prose[0]) * (prose[3] - prose[1]);
  g_autoptr(GPtrArray) regions = scan_fixture_first_page ("tests/fixtures/pdf/scan/bracket-number-scan300.pdf");

  if (regions == NULL)
    return;
  for (guint i = 0; i < regions->len; i++)
    {
      const FmRegion *r = regions->pdata[i];
      double ix = MIN (r->box.x1, prose[2]) - MAX (r->box.x0, prose[0]);
      double iy = MIN (r->box.y1, prose[3]) - MAX (r->box.y0, prose[1]);
      g_test_message ("region %u [%.0f %.0f %.0f %.0f]", i, r->box.x0, r->box.y0, r->box.x1, r->box.y1);
      g_assert_false (ix > 0 && iy > 0 && ix * iy > 0.5 * area);
    }
}

/* A footnote's first word read with the footnote's mark ("*A" at 57 for
 * the mark and "A" of "A note on") is prose, not a formula: the word
 * classifier took it for math and it was boxed alone. Page footnote-mark:
 * a development twin (make-truth seed 2022, dev2022-2022-07, scan seed
 * 20220, 150 dpi, binarised; tests/fixtures/pdf/scan/README.md); boxed
 * before scan14t (2026-11-27). The box is the base's region, in points. */
static void
test_footnote_mark (void)
{
  static const double prose[4] = { 325.9, 712.3, 333.6, 720.1 };   /* *A */
  const double area = (prose[2] - prose[0]) * (prose[3] - prose[1]);
  g_autoptr(GPtrArray) regions = scan_fixture_first_page ("tests/fixtures/pdf/scan/footnote-mark-scan150.pdf");

  if (regions == NULL)
    return;
  for (guint i = 0; i < regions->len; i++)
    {
      const FmRegion *r = regions->pdata[i];
      double ix = MIN (r->box.x1, prose[2]) - MAX (r->box.x0, prose[0]);
      double iy = MIN (r->box.y1, prose[3]) - MAX (r->box.y0, prose[1]);
      g_test_message ("region %u [%.0f %.0f %.0f %.0f]", i, r->box.x0, r->box.y0, r->box.x1, r->box.y1);
      g_assert_false (ix > 0 && iy > 0 && ix * iy > 0.5 * area);
    }
}

/* Pieces of ink take the text line of their own column: on a two-column
 * page whose columns' lines are not level, a piece whose middle lay on
 * the rows of both columns' lines took the other column's, and a formula
 * was cut between two lines and boxed in pieces (band_at). Page
 * column-lines: a development twin (make-truth seed 2025, dev2025-2025-03,
 * scan seed 20250, 300 dpi, binarised light copy, two columns, sans;
 * tests/fixtures/pdf/scan/README.md); all three missed before scan14t
 * (2026-11-27). */
static void
test_column_lines (void)
{
  static const double truth[][4] = {
    { 436.0, 154.6, 511.0, 165.4 },   /* 64 \subset k + \|m\| \times t */
    { 313.4, 163.9, 341.9, 176.0 },   /* \sum_{i=1}^{n} 9 */
    { 360.8, 529.5, 393.0, 540.2 },   /* \sqrt{a \times \sigma} */
  };
  assert_inline_found ("tests/fixtures/pdf/scan/column-lines-scan300.pdf", truth, G_N_ELEMENTS (truth));
}

/* Two inline formulas a word space apart are two boxes
 * (page_split_word_spaces): f_{ij} and n^{*} were one box (main
 * 3b437ef, best IoU 0.45 and 0.37); the formulas with relations and
 * operators between word spaces on the same lines stay whole. Page
 * pairs-scan300: rows 300-780 px of a scanned twin of cls-scanpairs-cm
 * (scan seed 10570, JPEG; tests/fixtures/pdf/scan/README.md). */
static void
test_word_space_pairs (void)
{
  static const double truth[][4] = {
    { 309.2, 36.5, 321.2, 46.5 },   /* f_{ij}                        */
    { 324.9, 36.3, 335.6, 43.3 },   /* n^{*}                         */
    { 255.4, 48.5, 320.2, 58.5 },   /* 93 \le x \times \beta \times a */
    { 355.2, 57.2, 411.5, 68.2 },   /* a_{k} < 77 - x^{k}            */
    { 395.3, 69.8, 432.7, 80.4 },   /* \|n\| \to \lambda              */
    { 67.9, 99.9, 124.5, 109.8 },   /* g \times b \approx c + d       */
    { 315.1, 97.4, 342.8, 104.8 },  /* u \in v_{k}                    */
  };
  assert_inline_found ("tests/fixtures/pdf/scan/pairs-scan300.pdf", truth, G_N_ELEMENTS (truth));
}

/* A single inline formula stays one box across the word-sized spaces
 * inside it (page_split_word_spaces): a text-style integral with its
 * limits, \int_0^1 f \, dx, was cut after the limits in newtx (main
 * 0183a41, best IoU 0.29: the slanted sign is under 0.65 em wide); a \mid
 * b, its relation under 0.25 em wide, stays whole. Page narrow-scan300:
 * rows 140-215 pt of a scanned twin of cls-scannarrow-newtx (scan seed
 * 10572, JPEG; tests/fixtures/pdf/scan/README.md). */
static void
test_narrow_relations (void)
{
  static const double truth[][4] = {
    { 186.9, 6.3, 206.4, 15.6 },    /* a \mid b          */
    { 259.2, 51.3, 290.5, 66.8 },   /* \int_0^1 f \, dx */
  };
  assert_inline_found ("tests/fixtures/pdf/scan/narrow-scan300.pdf", truth, G_N_ELEMENTS (truth));
}

/* Two inline formulas a word space apart at the end of a text line are
 * two boxes: the second, with no running text within 2 em, was left
 * joined to the first (main d42a378, best IoU 0.46 and 0.38; its line now
 * comes from the first, cluster_group_band). (scaninline's fraction pair,
 * two fractions whose blur ran each bar into a part, was withdrawn after
 * its review: telling them from limits cut text-style integrals.) Page
 * pair-line-end-scan300: rows 480-600 pt of development twin dev-2042-00
 * (make-truth seed 2042, scan seed 20420, 300 dpi, JPEG, lower-resolution
 * scanner; tests/fixtures/pdf/scan/README.md). */
static void
test_pairs_at_line_end (void)
{
  static const double end_truth[][4] = {
    { 372.3, 57.7, 421.1, 69.1 },   /* \sin(73 \pm \alpha) */
    { 424.1, 59.2, 467.2, 70.5 },   /* O(k \log k)          */
  };
  assert_inline_found ("tests/fixtures/pdf/scan/pair-line-end-scan300.pdf", end_truth, G_N_ELEMENTS (end_truth));
}

/* Two inline formulas on two text lines are two boxes even where a piece
 * off the lines reaches both: the limits under an inline sum, beside its
 * sign, lie 0.37 em over the next line's formula, and the two were one
 * box (main d42a378, best IoU 0.20 and 0.43; page_join_ink: the nearer
 * join first, never two lines' groups). Page limits-lines-scan300: rows
 * 60-130 pt of development twin dev-2042-05 (make-truth seed 2042, scan
 * seed 20420, 300 dpi, JPEG in uneven light; tests/fixtures/pdf/scan/README.md). */
static void
test_limits_between_lines (void)
{
  static const double truth[][4] = {
    { 491.9, 25.3, 522.7, 36.4 },   /* \sum_{i=1}^{n} g                       */
    { 460.4, 37.8, 539.2, 48.0 },   /* 84 \subset \|k\| + 79 \times \lambda */
  };
  assert_inline_found ("tests/fixtures/pdf/scan/limits-lines-scan300.pdf", truth, G_N_ELEMENTS (truth));
}

/* Inline formulas on a JPEG'd page in uneven light are type, not a
 * photo, when their box has no more midtones than the prose words
 * beside them (cluster_midtones_as_prose): two formulas 8-10 em wide were
 * dropped as midtones (main d42a378: no box). Page midtones-inline-scan300:
 * rows 430-520 pt of development twin dev-2042-09 (make-truth seed 2042,
 * scan seed 20420, 300 dpi, jpeg+shade28; tests/fixtures/pdf/scan/README.md). */
static void
test_midtones_inline (void)
{
  static const double truth[][4] = {
    { 112.5, 52.7, 180.6, 62.8 },   /* 19 \ge b + 71 \cdot \|u\|           */
    { 96.9, 64.7, 176.8, 75.3 },    /* k_{j} \subset \pi \pm \|u\| - \|m\| */
  };
  assert_inline_found ("tests/fixtures/pdf/scan/midtones-inline-scan300.pdf", truth, G_N_ELEMENTS (truth));
}

/* Two inline formulas a word space apart beside a norm are cut apart
 * however Tesseract reads the norm's bars (page_split_word_spaces,
 * run_edge_delimiter): "m," then "|\al\" for m_1, \dots, m_n then \|n\|
 * was one box on main d42a378 (bars read unevenly or as "\", taken for
 * \mid or \setminus read stuck to an operand); a \mid b and u \parallel v stay whole. Page
 * bars-scan300: rows 0-300 pt of a scanned twin of cls-scanbars-times
 * (scan seed 10683, JPEG; tests/fixtures/pdf/scan/README.md). */
static void
test_uneven_bars (void)
{
  static const double truth[][4] = {
    { 266.6, 109.4, 281.9, 119.7 },   /* \|n\|            */
    { 222.3, 113.0, 264.6, 120.6 },   /* m_1, \dots, m_n  */
    { 114.6, 126.0, 130.6, 136.4 },   /* \|f\|            */
    { 159.9, 184.4, 177.3, 194.8 },   /* a \mid b         */
    { 441.0, 175.7, 460.1, 186.2 },   /* u \parallel v    */
  };
  assert_inline_found ("tests/fixtures/pdf/scan/bars-scan300.pdf", truth, G_N_ELEMENTS (truth));
}

/* Two inline formulas a word space apart are cut apart where the facing
 * operand sits between an operator's thick space and the word space (its
 * gaps alike, as an operator's are: run_operand) or Tesseract reads the
 * second as a lone misread glyph ("&" for \frac{\theta}{54}:
 * reads_misread_glyph); z_1 \in k then \frac{\theta}{54}, and g \in
 * \beta then \frac{a_0}{x} on the next line, were one box each on main
 * 2c577b6. Single formulas whose operands have scripts stay whole. Page
 * pair2-scan300: rows 0-230 pt of a scanned twin of cls-scanpair2-cm
 * (scan seed 11103, JPEG; tests/fixtures/pdf/scan/README.md). */
static void
test_operand_pairs (void)
{
  static const double truth[][4] = {
    { 330.8, 106.8, 341.2, 119.0 },   /* \frac{\theta}{54}       */
    { 300.4, 108.7, 327.2, 117.3 },   /* z_{1} \in k             */
    { 210.3, 121.0, 262.7, 130.1 },   /* f_{i} > 30 + m          */
    { 266.5, 121.8, 316.2, 129.4 },   /* a_{k} > a - m           */
    { 356.2, 130.6, 392.4, 141.1 },   /* \sqrt{x \pm 59}         */
    { 319.4, 172.7, 347.4, 180.7 },   /* u \ge t_{n}              */
    { 408.8, 183.6, 419.5, 194.1 },   /* \frac{a_{0}}{x}          */
    { 139.5, 185.0, 163.0, 194.0 },   /* g \in \beta              */
    { 374.5, 185.3, 405.6, 193.7 },   /* m_{j} > q               */
    { 220.5, 196.4, 272.3, 206.4 },   /* a_{k} > b_{j} + c_{i}   */
    { 93.5, 210.2, 139.0, 218.1 },    /* x \times y_{n} - z       */
  };
  assert_inline_found ("tests/fixtures/pdf/scan/pair2-scan300.pdf", truth, G_N_ELEMENTS (truth));
}

/* Single inline formulas that scans cut in pieces: a text-style sum
 * whose lower limit "i=1" ends over 0.7 em right of the sign (Palatino's
 * sign is 0.81 em tall, under a big operator's 0.85), cut after the "1"
 * where Tesseract read a word break; a list x_1, \dots, x_n whose dots
 * were read as letters or as a blank word the classifier took for prose.
 * Each is found whole (IoU >= 0.5) and no inline box is a piece of it.
 * Pages cut-scan300 (rows 0-400 pt, scan seed 11503 mixed: JPEG) and
 * cutlist-scan300 (rows 0-230 pt, scan seed 11503 --degrade jpeg) of the
 * scanned twins of cls-scancut-palatino (tests/fixtures/pdf/scan/README.md):
 * on main 3f548fe \sum_{i=1}^{n} x^{\prime} and \sum_{i=1}^{n} y (IoU 0.60,
 * 0.67, each with its operand boxed apart) and m_1, \dots, m_n (0.46, two
 * pieces) were cut. */
static void
assert_inline_whole (const char *fixture, const double truth[][4], guint n_truth)
{
  g_autoptr(GPtrArray) regions = scan_fixture_first_page (fixture);

  if (regions == NULL)
    return;
  assert_boxes_found (regions, FM_REGION_INLINE, fixture, truth, n_truth);
  for (guint t = 0; t < n_truth; t++)
    for (guint i = 0; i < regions->len; i++)
      {
        const FmRegion *r = regions->pdata[i];
        double ix = MIN (r->box.x1, truth[t][2]) - MAX (r->box.x0, truth[t][0]);
        double iy = MIN (r->box.y1, truth[t][3]) - MAX (r->box.y0, truth[t][1]);
        double area = (r->box.x1 - r->box.x0) * (r->box.y1 - r->box.y0);
        gboolean piece = r->kind == FM_REGION_INLINE && ix > 0 && iy > 0 && ix * iy >= 0.9 * area &&
                         iou (&r->box, truth[t]) < 0.5;
        if (piece)
          g_test_message ("%s, formula %u: a piece boxed apart at %.1f %.1f %.1f %.1f", fixture, t,
                          r->box.x0, r->box.y0, r->box.x1, r->box.y1);
        g_assert_false (piece);
      }
}

static void
test_limits_lists (void)
{
  static const double truth[][4] = {
    { 257.4, 109.2, 287.9, 120.1 },  /* \sum_{i=1}^{n} m          */
    { 215.8, 121.0, 248.0, 131.9 },  /* \sum_{i=1}^{n} b^{n}      */
    { 181.0, 135.8, 222.5, 143.5 },  /* g_1, \dots, g_n           */
    { 296.2, 143.7, 327.1, 156.0 },  /* \sum_{i=1}^{n} c^{k}      */
    { 401.6, 160.3, 448.3, 167.1 },  /* m_1, \dots, m_n           */
    { 225.4, 168.6, 256.2, 179.7 },  /* \sum_{i=1}^{n} x^{\prime} */
    { 368.0, 172.1, 407.3, 179.0 },  /* c_1, \dots, c_n           */
    { 139.3, 180.6, 167.1, 191.5 },  /* \sum_{i=1}^{n} y          */
    { 409.1, 181.8, 449.4, 191.0 },  /* k_1, \dots, k_n           */
    { 272.9, 192.7, 309.5, 204.8 },  /* \sum_{i=1}^{n} t^{-1}     */
    { 462.5, 197.3, 504.0, 204.1 },  /* x_1, \dots, x_n           */
    { 94.0, 205.4, 122.2, 216.3 },   /* \sum_{i=1}^{n} u          */
  };
  assert_inline_whole ("tests/fixtures/pdf/scan/cut-scan300.pdf", truth, G_N_ELEMENTS (truth));
  assert_inline_whole ("tests/fixtures/pdf/scan/cutlist-scan300.pdf", truth, G_N_ELEMENTS (truth));
}

/* The second reading of the words (fm-scan-words-context.h) settles a
 * word by its neighbours: "fall" read in the middle of k \in u - \|x\| -
 * \Gamma at 0.43 (the first reading's) joins the formula's pieces on both
 * sides (0.60), and "is.was" at 0.58 among sure prose is prose (0.43), no
 * inline formula. Pages dev-2083-01 and dev-2083-00 of the development
 * twins (make-truth seed 2083, scan seed 20830, 300 dpi, binarised;
 * tests/fixtures/pdf/scan/README.md); on main 52d59d8 the formula was cut
 * in two (IoU 0.35) and the prose word boxed. */
static void
test_context (void)
{
  static const double whole[][4] = {
    { 57.2, 379.3, 127.0, 390.9 },   /* k \in u - \|x\| - \Gamma */
  };
  static const double prose[][4] = {
    { 151.0, 109.0, 178.0, 116.0 },  /* "is.was" */
  };
  static const double beside[][4] = {
    { 180.9, 110.2, 220.3, 118.8 },  /* t_1, \dots, t_n */
  };
  assert_inline_whole ("tests/fixtures/pdf/scan/context-join-scan300.pdf", whole, G_N_ELEMENTS (whole));
  assert_prose_beside_inline ("tests/fixtures/pdf/scan/context-prose-scan300.pdf", prose, G_N_ELEMENTS (prose),
                              beside, G_N_ELEMENTS (beside));
}

/* Two lines of prose between two displays that Tesseract's layout took
 * for a picture (a PT_PULLOUT_IMAGE block, returned as one blank word):
 * on main aa1b8be the block's ink became one display [67 175 298 276]
 * that swallowed both displays and k = n (read_again_keep). Page
 * picture-block-scan300: the lead's fresh twin heldout-1087-01 (make-truth
 * seed 1087, scan seed 10870, 300 dpi, JPEG, shade), copied as made: a
 * crop or a JPEG saved again is read without the picture block. */
static void
test_picture_block (void)
{
  static const double displays[][4] = {
    { 136.7, 176.6, 227.1, 203.3 },  /* \int_{0}^{1} n_{i+1} \times \alpha \, dx = 46 */
    { 151.0, 242.3, 215.9, 274.9 },  /* \sum_{k=1}^{N} a \cdot 94 = \frac{54}{k} */
  };
  static const double inlines[][4] = {
    { 67.9, 213.2, 92.8, 220.6 },    /* k = n */
  };
  assert_display_found ("tests/fixtures/pdf/scan/picture-block-scan300.pdf", displays, G_N_ELEMENTS (displays));
  assert_inline_found ("tests/fixtures/pdf/scan/picture-block-scan300.pdf", inlines, G_N_ELEMENTS (inlines));
}

/* A two-column page whose columns' lines are not level (the right
 * column's 0.43 em lower): the 0.45 em window from the left line's first
 * word took half the right line's words, the rest became a text line of
 * its own, and \frac{62}{91} on that line lost its bar to it - its
 * numerator boxed alone with the formula before it (IoU 0.39 on main
 * daea23f). Page column-offset-scan300: rows 0-260 pt of development twin
 * dev-2082-05 (make-truth seed 2082, scan seed 20820, binarised, lower
 * resolution; tests/fixtures/pdf/scan/README.md). */
static void
test_column_offset (void)
{
  static const double truth[][4] = {
    { 379.7, 120.2, 390.2, 132.1 },  /* \frac{62}{91} */
  };
  assert_inline_found ("tests/fixtures/pdf/scan/column-offset-scan300.pdf", truth, G_N_ELEMENTS (truth));
}

/* On a double-spaced page (\linespread{2}: lines 2.9 line heights apart)
 * the leading is measured (page_prose_leading) and an inline formula
 * alone on its paragraph's last line stays inline: both were boxed as
 * displays on main d42a378 (leading 0). Page double-scan300: rows 0-380
 * pt of a scanned twin of cls-scandouble-cm (scan seed 10685, binarised,
 * a lower-resolution scanner; tests/fixtures/pdf/scan/README.md). */
static void
test_double_spacing (void)
{
  static const double truth[][4] = {
    { 75.2, 152.9, 153.6, 164.3 },  /* \|b\| \in a_{j} - a_{i+1} \cdot c */
    { 73.8, 254.5, 122.2, 265.1 },  /* \|f\| \approx x \cdot \Gamma     */
  };
  assert_inline_found ("tests/fixtures/pdf/scan/double-scan300.pdf", truth, G_N_ELEMENTS (truth));
}

/* Word boxes Tesseract made twice as tall as their ink (every word of a
 * line with one top and one bottom, on a soft 150 dpi JPEG page): the em
 * from them doubled (68.4 px for 24.9) and the first inline formula was
 * missed; with the boxes fitted to their ink (words_fit_ink) it is found.
 * Page inflated-scan150 (tests/fixtures/pdf/scan/README.md). */
static void
test_inflated_words (void)
{
  static const double truth[][4] = {
    { 77.8, 150.4, 156.2, 162.6 },  /* \|b\| \in a_{j} - a_{i+1} \cdot c */
  };
  assert_inline_found ("tests/fixtures/pdf/scan/inflated-scan150.pdf", truth, G_N_ELEMENTS (truth));
}

/* Two inline formulas a word space apart that the rules kept as one box
 * are cut apart by the gap net (fm-scan.c, gap_features): "k \neq
 * \lambda" then "\sum_{i=1}^{n} \|b\|", the sum's sign read as a relation
 * between alike gaps (main a8952b7, `FM_SCAN_GAPS=rules`: one box over
 * both). Page gapnet-scan300: rows 300-620 pt of probe twin probe-3960-03
 * (make-truth seed 3960, scan seed 39600, 300 dpi,
 * binary+lowres0.52+shade35+light; tests/fixtures/pdf/scan/README.md). */
static void
test_gap_net (void)
{
  static const double truth[][4] = {
    { 459.7, 157.0, 482.9, 166.1 },   /* k \neq \lambda          */
    { 487.2, 155.3, 525.8, 167.1 },   /* \sum_{i=1}^{n} \|b\|   */
  };
  assert_inline_found ("tests/fixtures/pdf/scan/gapnet-scan300.pdf", truth, G_N_ELEMENTS (truth));
}

/* The glyph net's forward pass in C is the trained net's: on the check
 * crop it gives the logit train-scan-glyphs.py computed with PyTorch (a
 * weight layout slip, a pool or padding off by one changes it by far more
 * than rounding). */
static void
test_glyph_net (void)
{
  guint8 crop[FM_GLYPH_NET_ROWS * FM_GLYPH_NET_COLS];
  float z;

  fm_glyph_net_check_crop (crop);
  z = fm_glyph_net_logit (crop);
  g_test_message ("glyph net on the check crop: %.6f, PyTorch %.6f", z, fm_glyph_net_check_logit ());
  g_assert_cmpfloat_with_epsilon (z, fm_glyph_net_check_logit (), 1e-3 * MAX (1, fabs (z)));
}

int
main (int argc, char **argv)
{
  g_test_init (&argc, &argv, NULL);
  g_test_add_func ("/pdf/scan/glyph-net", test_glyph_net);
  g_test_add_func ("/pdf/scan/gap-net", test_gap_net);
  g_test_add_func ("/pdf/scan/twins", test_twins);
  g_test_add_func ("/pdf/scan/words", test_words);
  g_test_add_func ("/pdf/scan/blank", test_blank);
  g_test_add_func ("/pdf/scan/huge-image", test_huge_image);
  g_test_add_func ("/pdf/scan/render", test_render);
  g_test_add_func ("/pdf/scan/fraction-digits", test_fraction_digits);
  g_test_add_func ("/pdf/scan/stacked-lines", test_stacked_lines);
  g_test_add_func ("/pdf/scan/display-lines", test_display_lines);
  g_test_add_func ("/pdf/scan/bracketed-numbers", test_bracketed_numbers);
  g_test_add_func ("/pdf/scan/light-aligned", test_light_aligned);
  g_test_add_func ("/pdf/scan/shade-edge", test_shade_edge);
  g_test_add_func ("/pdf/scan/two-at-once", test_two_at_once);
  g_test_add_func ("/pdf/scan/split", test_split);
  g_test_add_func ("/pdf/scan/footnote-rule", test_footnote_rule);
  g_test_add_func ("/pdf/scan/subscript-fraction", test_subscript_fraction);
  g_test_add_func ("/pdf/scan/fraction-word", test_fraction_word);
  g_test_add_func ("/pdf/scan/title", test_title);
  g_test_add_func ("/pdf/scan/letter-symbol", test_letter_symbol);
  g_test_add_func ("/pdf/scan/digit-scripts", test_digit_scripts);
  g_test_add_func ("/pdf/scan/prose-marks", test_prose_marks);
  g_test_add_func ("/pdf/scan/twocol-fraction", test_twocol_fraction);
  g_test_add_func ("/pdf/scan/citation", test_citation);
  g_test_add_func ("/pdf/scan/function-application", test_function_application);
  g_test_add_func ("/pdf/scan/lone-letter", test_lone_letter);
  g_test_add_func ("/pdf/scan/broken-bracket", test_broken_bracket);
  g_test_add_func ("/pdf/scan/stroke-along", test_stroke_along);
  g_test_add_func ("/pdf/scan/function-words", test_function_words);
  g_test_add_func ("/pdf/scan/number-operand", test_number_operand);
  g_test_add_func ("/pdf/scan/display-word", test_display_word);
  g_test_add_func ("/pdf/scan/prose-and", test_prose_and);
  g_test_add_func ("/pdf/scan/fleqn", test_fleqn);
  g_test_add_func ("/pdf/scan/heading", test_heading);
  g_test_add_func ("/pdf/scan/column-display", test_column_display);
  g_test_add_func ("/pdf/scan/intervals", test_intervals);
  g_test_add_func ("/pdf/scan/number-stop", test_number_stop);
  g_test_add_func ("/pdf/scan/fraction-stacked", test_fraction_stacked);
  g_test_add_func ("/pdf/scan/bracket-number", test_bracket_number);
  g_test_add_func ("/pdf/scan/pairs-line-end", test_pairs_at_line_end);
  g_test_add_func ("/pdf/scan/limits-lines", test_limits_between_lines);
  g_test_add_func ("/pdf/scan/midtones-inline", test_midtones_inline);
  g_test_add_func ("/pdf/scan/footnote-mark", test_footnote_mark);
  g_test_add_func ("/pdf/scan/column-lines", test_column_lines);
  g_test_add_func ("/pdf/scan/word-space-pairs", test_word_space_pairs);
  g_test_add_func ("/pdf/scan/last-line", test_last_line);
  g_test_add_func ("/pdf/scan/flush-tight", test_flush_tight);
  g_test_add_func ("/pdf/scan/context", test_context);
  g_test_add_func ("/pdf/scan/narrow-relations", test_narrow_relations);
  g_test_add_func ("/pdf/scan/uneven-bars", test_uneven_bars);
  g_test_add_func ("/pdf/scan/operand-pairs", test_operand_pairs);
  g_test_add_func ("/pdf/scan/limits-lists", test_limits_lists);
  g_test_add_func ("/pdf/scan/double-spacing", test_double_spacing);
  g_test_add_func ("/pdf/scan/column-offset", test_column_offset);
  g_test_add_func ("/pdf/scan/picture-block", test_picture_block);
  g_test_add_func ("/pdf/scan/inflated-words", test_inflated_words);
  g_test_add_func ("/pdf/scan/hyphen-gutter", test_hyphen_gutter);
  g_test_add_func ("/pdf/scan/footnote-lost-mark", test_footnote_lost_mark);
  g_test_add_func ("/pdf/scan/scripts-light", test_scripts_light);
  return g_test_run ();
}
