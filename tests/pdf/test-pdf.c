/* test-pdf.c - the PDF library: documents, rendering, page ranges, detection. */
#include "fm-detect.h"
#include "fm-document.h"
#include "fm-export.h"
#include "fm-latex-check.h"
#include "fm-fonts.h"
#include "fm-layout.h"
#include "fm-pages.h"
#include "fm-pdf-bytes.h"
#include "fm-render.h"

#include <cairo-pdf.h>
#include <glib/gstdio.h>
#include <json-glib/json-glib.h>
#include <math.h>
#include <string.h>
#include <unistd.h>

static char *
src_path (const char *rel)
{
  return g_build_filename (FM_TEST_SRCDIR, rel, NULL);
}

static FmDocument *
open_fixture (const char *rel, const char *password, GError **error)
{
  g_autofree char *path = src_path (rel);
  return fm_document_new_for_path (path, password, error);
}

static void
test_scale_rule (void)
{
  g_assert_cmpfloat_with_epsilon (fm_render_scale_for_font (10.0, 20), 2.0, 1e-12);
  g_assert_cmpfloat_with_epsilon (fm_render_scale_for_font (8.0, 20), 2.5, 1e-12);
  g_assert_cmpfloat_with_epsilon (fm_render_scale_for_font (12.0, 24), 2.0, 1e-12);
  /* Garbage sizes fall back to 10 pt, a bad em to the model default. */
  g_assert_cmpfloat_with_epsilon (fm_render_scale_for_font (0.0, 20), 2.0, 1e-12);
  g_assert_cmpfloat_with_epsilon (fm_render_scale_for_font (NAN, 20), 2.0, 1e-12);
  g_assert_cmpfloat_with_epsilon (fm_render_scale_for_font (10.0, 0), FM_RENDER_DEFAULT_EM_PX / 10.0, 1e-12);
}

static void
test_render_page_and_crop (void)
{
  g_autoptr(GError) error = NULL;
  g_autoptr(FmDocument) doc = open_fixture ("tests/fixtures/pdf/truth-1-00.pdf", NULL, &error);
  cairo_surface_t *s;
  FmRect rect = { 100, 100, 150.5, 120 };
  g_autoptr(FmGrayImage) gray = NULL;
  double w, h;
  guint64 dark = 0;

  g_assert_no_error (error);
  g_assert_cmpint (fm_document_get_n_pages (doc), ==, 1);
  g_assert_true (fm_document_get_page_size (doc, 0, &w, &h, &error));
  g_assert_cmpfloat_with_epsilon (w, 612, 0.01);
  g_assert_cmpfloat_with_epsilon (h, 792, 0.01);

  s = fm_render_page_rect (doc, 0, NULL, 0.5, &error);
  g_assert_no_error (error);
  g_assert_cmpint (cairo_image_surface_get_width (s), ==, 306);
  g_assert_cmpint (cairo_image_surface_get_height (s), ==, 396);
  cairo_surface_destroy (s);

  gray = fm_render_page_rect_gray (doc, 0, &rect, 2.0, &error);
  g_assert_no_error (error);
  g_assert_cmpint (gray->width, ==, 101);
  g_assert_cmpint (gray->height, ==, 40);

  /* The whole page in gray: white margins, some ink. */
  g_clear_pointer (&gray, fm_gray_image_free);
  gray = fm_render_page_rect_gray (doc, 0, NULL, 1.0, &error);
  g_assert_no_error (error);
  g_assert_cmpint (gray->pixels[0], ==, 255);
  for (int i = 0; i < gray->width * gray->height; i++)
    dark += gray->pixels[i] < 128;
  g_assert_cmpuint (dark, >, 1000);

  g_assert_null (fm_render_page_rect (doc, 0, &rect, -1, &error));
  g_assert_error (error, FM_DOCUMENT_ERROR, FM_DOCUMENT_ERROR_RENDER);
  g_clear_error (&error);
  g_assert_null (fm_render_page_rect (doc, 3, NULL, 1, &error));
  g_assert_error (error, FM_DOCUMENT_ERROR, FM_DOCUMENT_ERROR_PAGE_RANGE);
  g_clear_error (&error);
  g_assert_cmpstr (fm_document_get_name (doc), !=, NULL);
  {
    g_autofree char *title = fm_document_dup_title (doc);
    g_assert_cmpstr (title, ==, "Formulate detection truth truth-1-00");
  }
}


static gboolean
same_pixels (cairo_surface_t *a, cairo_surface_t *b)
{
  int w = cairo_image_surface_get_width (a), h = cairo_image_surface_get_height (a);
  int sa = cairo_image_surface_get_stride (a), sb = cairo_image_surface_get_stride (b);
  const guint8 *pa = cairo_image_surface_get_data (a), *pb = cairo_image_surface_get_data (b);

  if (w != cairo_image_surface_get_width (b) || h != cairo_image_surface_get_height (b))
    return FALSE;
  for (int y = 0; y < h; y++)
    if (memcmp (pa + (gsize) y * sa, pb + (gsize) y * sb, (gsize) w * 4) != 0)
      return FALSE;
  return TRUE;
}

/* The page's pixels do not depend on where their buffer came from
 * (fm-render.c's pixels_take): Cairo's own below 64 KiB, a kept or fresh
 * buffer up to 8 MiB, one on 2 MiB pages above (scale 3: 17 MB), in an
 * order that hands a kept buffer back and forth; each against a render onto
 * an image Cairo allocated itself. */
static void
test_render_buffer_sizes (void)
{
  g_autoptr(GError) error = NULL;
  g_autofree char *path = src_path ("tests/fixtures/pdf/truth-1-00.pdf");
  g_autofree char *uri = g_filename_to_uri (path, NULL, &error);
  PopplerDocument *pd;
  PopplerPage *page;
  const double scales[] = { 3.0, 1.0, 0.1, 3.0, 2.0, 1.0, 0.5 };

  g_assert_no_error (error);
  pd = poppler_document_new_from_file (uri, NULL, &error);
  g_assert_no_error (error);
  page = poppler_document_get_page (pd, 0);
  for (guint i = 0; i < G_N_ELEMENTS (scales); i++)
    {
      cairo_surface_t *s = fm_render_page_rect_locked (page, NULL, scales[i], &error);
      int w, h;
      cairo_surface_t *ref;
      cairo_t *cr;

      g_assert_no_error (error);
      w = cairo_image_surface_get_width (s);
      h = cairo_image_surface_get_height (s);
      ref = cairo_image_surface_create (CAIRO_FORMAT_ARGB32, w, h);
      cr = cairo_create (ref);
      cairo_set_source_rgb (cr, 1, 1, 1);
      cairo_paint (cr);
      cairo_scale (cr, scales[i], scales[i]);
      poppler_page_render (page, cr);
      cairo_destroy (cr);
      cairo_surface_flush (ref);
      g_assert_true (same_pixels (s, ref));
      cairo_surface_destroy (ref);
      cairo_surface_destroy (s);
    }
  g_object_unref (page);
  g_object_unref (pd);
}

/* fm_render_page_rect_replayed_gray against the direct render of rect: the
 * same size, the same pixels when rect's corner is on the page's pixel grid
 * (whole), else the same but where Poppler snapped a rule or a stroke to the
 * device's grid (at most 2 % of the pixels here) and never a pixel moved
 * further than that: the ink is the same sum within 2 %. */
static void
replay_like_direct (FmDocument *doc, const FmRect *rect, double scale, gboolean whole)
{
  g_autoptr(GError) error = NULL;
  g_autoptr(FmGrayImage) replayed = fm_render_page_rect_replayed_gray (doc, 0, rect, scale, &error);
  g_autoptr(FmGrayImage) direct = NULL;
  gsize n_diff = 0;
  double ink_r = 0, ink_d = 0;

  g_assert_no_error (error);
  direct = fm_render_page_rect_gray (doc, 0, rect, scale, &error);
  g_assert_no_error (error);
  g_assert_cmpint (replayed->width, ==, direct->width);
  g_assert_cmpint (replayed->height, ==, direct->height);
  for (int y = 0; y < direct->height; y++)
    for (int x = 0; x < direct->width; x++)
      {
        int r = replayed->pixels[(gsize) y * replayed->stride + x];
        int d = direct->pixels[(gsize) y * direct->stride + x];

        n_diff += r != d;
        ink_r += 255 - r;
        ink_d += 255 - d;
      }
  if (whole)
    g_assert_cmpuint (n_diff, ==, 0);
  else
    {
      g_assert_cmpuint (n_diff, <=, (gsize) direct->width * direct->height / 50);
      g_assert_cmpfloat (fabs (ink_r - ink_d), <=, 0.02 * ink_d + 255);
    }
}

/* Issue 15's shortcuts must not change a pixel: the file with its streams
 * stored inflated draws and reads as the file; a crop cut from the page's
 * recording is the direct render of the same pixel-aligned rectangle; the
 * ink map is the threshold of a render of the whole page. */
static void
test_render_shortcuts (void)
{
  g_autoptr(GError) error = NULL;
  g_autofree char *path = src_path ("tests/fixtures/pdf/truth-1-00.pdf");
  g_autofree char *data = NULL;
  gsize len;
  g_autoptr(GBytes) bytes = NULL, inflated = NULL;
  PopplerDocument *a, *b;
  PopplerPage *pa, *pb;
  g_autofree char *ta = NULL, *tb = NULL;
  g_autoptr(FmDocument) doc = NULL;
  const FmRect rects[] = { { 100.3, 100.7, 150.5, 120.2 }, { 71.9, 300.25, 540.1, 333.3 }, { 0, 0, 612, 150 } };
  const double scales[] = { 1.83, 2.0, 6.0 };

  g_assert_true (g_file_get_contents (path, &data, &len, &error));
  bytes = g_bytes_new_take (g_steal_pointer (&data), len);
  inflated = fm_pdf_inflate_streams (bytes);
  g_assert_nonnull (inflated);
  g_assert_cmpuint (g_bytes_get_size (inflated), >, len);
  a = poppler_document_new_from_bytes (bytes, NULL, &error);
  g_assert_no_error (error);
  b = poppler_document_new_from_bytes (inflated, NULL, &error);
  g_assert_no_error (error);
  g_assert_cmpint (poppler_document_get_n_pages (a), ==, poppler_document_get_n_pages (b));
  pa = poppler_document_get_page (a, 0);
  pb = poppler_document_get_page (b, 0);
  ta = poppler_page_get_text (pa);
  tb = poppler_page_get_text (pb);
  g_assert_cmpstr (ta, ==, tb);
  for (guint i = 0; i < G_N_ELEMENTS (scales); i++)
    {
      cairo_surface_t *sa = fm_render_page_rect_locked (pa, &rects[0], scales[i], &error);
      cairo_surface_t *sb = fm_render_page_rect_locked (pb, &rects[0], scales[i], &error);
      g_assert_no_error (error);
      g_assert_true (same_pixels (sa, sb));
      cairo_surface_destroy (sa);
      cairo_surface_destroy (sb);
    }
  g_object_unref (pa);
  g_object_unref (pb);
  g_object_unref (a);
  g_object_unref (b);
  /* Not for a file that is not one plain revision. */
  {
    g_autoptr(GBytes) junk = g_bytes_new_static ("%PDF-1.4\nno trailer\n", 21);
    g_assert_null (fm_pdf_inflate_streams (junk));
  }

  doc = fm_document_new_for_path (path, NULL, &error);
  g_assert_no_error (error);
  for (guint r = 0; r < G_N_ELEMENTS (rects); r++)
    for (guint i = 0; i < G_N_ELEMENTS (scales); i++)
      {
        FmRect drawn;
        g_autoptr(FmGrayImage) crop = fm_render_page_crop_gray (doc, 0, &rects[r], scales[i], &drawn, &error);
        g_autoptr(FmGrayImage) direct = NULL;
        g_assert_no_error (error);
        /* the corner on the page's pixel grid, at most half a pixel away */
        g_assert_cmpfloat (fabs (drawn.x0 - rects[r].x0) * scales[i], <=, 0.5 + 1e-9);
        g_assert_cmpfloat (fabs (round (drawn.x0 * scales[i]) - drawn.x0 * scales[i]), <, 1e-6);
        direct = fm_render_page_rect_gray (doc, 0, &drawn, scales[i], &error);
        g_assert_no_error (error);
        g_assert_cmpint (crop->width, ==, direct->width);
        g_assert_cmpint (crop->height, ==, direct->height);
        g_assert_cmpmem (crop->pixels, (gsize) crop->width * crop->height,
                         direct->pixels, (gsize) direct->width * direct->height);
        replay_like_direct (doc, &drawn, scales[i], TRUE);
        replay_like_direct (doc, &rects[r], scales[i], FALSE);
      }
  {
    int w, h;
    guint8 *ink;
    g_autoptr(FmGrayImage) page = fm_render_page_rect_gray (doc, 0, NULL, 2.997, &error);
    PopplerPage *p;
    gsize n_ink = 0;

    g_assert_no_error (error);
    fm_document_lock (doc);
    p = fm_document_get_page_locked (doc, 0, &error);
    ink = fm_render_page_ink_locked (p, 2.997, 170, &w, &h, &error);
    g_clear_object (&p);
    fm_document_unlock (doc);
    g_assert_no_error (error);
    g_assert_cmpint (w, ==, page->width);
    g_assert_cmpint (h, ==, page->height);
    for (int y = 0; y < h; y++)
      for (int x = 0; x < w; x++)
        {
          g_assert_cmpint (ink[(gsize) y * w + x], ==, page->pixels[(gsize) y * page->stride + x] < 170);
          n_ink += ink[(gsize) y * w + x];
        }
    g_assert_cmpuint (n_ink, >, 1000);
    g_free (ink);
  }
}

static void
test_render_pixel_cap (void)
{
  g_autoptr(GError) error = NULL;
  g_autoptr(FmDocument) doc = open_fixture ("tests/bad/pdf/huge-page.pdf", NULL, &error);
  double w, h, scale;
  cairo_surface_t *s;

  g_assert_no_error (error);
  g_assert_true (fm_document_get_page_size (doc, 0, &w, &h, &error));
  g_assert_cmpfloat (w, ==, 14400);
  /* 200 x 200 inches at 1 px/pt is 207 M pixels: refused, not allocated. */
  g_assert_null (fm_render_page_rect (doc, 0, NULL, 1.0, &error));
  g_assert_error (error, FM_DOCUMENT_ERROR, FM_DOCUMENT_ERROR_RENDER);
  g_clear_error (&error);
  scale = fm_render_fit_scale (w, h, 1.0);
  g_assert_cmpfloat (scale, <, 1.0);
  g_assert_cmpfloat (scale, >, 0.1);
  s = fm_render_page_rect (doc, 0, NULL, scale, &error);
  g_assert_no_error (error);
  g_assert_cmpint ((gint64) cairo_image_surface_get_width (s) * cairo_image_surface_get_height (s), <=, FM_RENDER_MAX_PIXELS);
  cairo_surface_destroy (s);
}

static void
test_rotation (void)
{
  g_autoptr(GError) error = NULL;
  g_autoptr(FmDocument) doc = open_fixture ("tests/fixtures/pdf/rotated-90.pdf", NULL, &error);
  cairo_surface_t *s;
  double w, h;

  g_assert_no_error (error);
  g_assert_true (fm_document_get_page_size (doc, 0, &w, &h, &error));
  /* /Rotate 90 on a letter page: displayed landscape. */
  g_assert_cmpfloat_with_epsilon (w, 792, 0.01);
  g_assert_cmpfloat_with_epsilon (h, 612, 0.01);
  s = fm_render_page_rect (doc, 0, NULL, 0.25, &error);
  g_assert_no_error (error);
  g_assert_cmpint (cairo_image_surface_get_width (s), ==, 198);
  g_assert_cmpint (cairo_image_surface_get_height (s), ==, 153);
  cairo_surface_destroy (s);
}

typedef struct {
  const char *file;
  int code;
  const char *password;
} BadCase;

static void
test_bad_inputs (void)
{
  const BadCase cases[] = {
    { "tests/bad/pdf/not-a-pdf.pdf", FM_DOCUMENT_ERROR_NOT_PDF, NULL },
    { "tests/bad/pdf/empty.pdf", FM_DOCUMENT_ERROR_NOT_PDF, NULL },
    { "tests/bad/pdf/truncated.pdf", FM_DOCUMENT_ERROR_DAMAGED, NULL },
    { "tests/bad/pdf/zero-pages.pdf", FM_DOCUMENT_ERROR_NO_PAGES, NULL },
    { "tests/bad/pdf/encrypted.pdf", FM_DOCUMENT_ERROR_NEEDS_PASSWORD, NULL },
    { "tests/bad/pdf/encrypted.pdf", FM_DOCUMENT_ERROR_NEEDS_PASSWORD, "" },
    { "tests/bad/pdf/encrypted.pdf", FM_DOCUMENT_ERROR_WRONG_PASSWORD, "wrong" },
    { "tests/bad/pdf", FM_DOCUMENT_ERROR_NOT_FOUND, NULL },
    { "tests/bad/pdf/does-not-exist.pdf", FM_DOCUMENT_ERROR_NOT_FOUND, NULL },
  };

  for (guint i = 0; i < G_N_ELEMENTS (cases); i++)
    {
      g_autoptr(GError) error = NULL;
      g_autoptr(FmDocument) doc = open_fixture (cases[i].file, cases[i].password, &error);

      g_test_message ("%s", cases[i].file);
      g_assert_null (doc);
      g_assert_error (error, FM_DOCUMENT_ERROR, cases[i].code);
      g_assert_null (strchr (error->message, '\n'));
    }

  /* The right password opens it. */
  {
    g_autoptr(GError) error = NULL;
    g_autoptr(FmDocument) doc = open_fixture ("tests/bad/pdf/encrypted.pdf", "secret", &error);
    g_assert_no_error (error);
    g_assert_cmpint (fm_document_get_n_pages (doc), ==, 1);
  }

  /* Pages without text: a clear error from detection, not an empty result. */
  for (guint i = 0; i < 2; i++)
    {
      const char *file = i == 0 ? "tests/bad/pdf/no-text.pdf" : "tests/bad/pdf/unrenderable.pdf";
      g_autoptr(GError) error = NULL;
      g_autoptr(FmDocument) doc = open_fixture (file, NULL, &error);
      GPtrArray *regions;

      g_assert_no_error (error);
      regions = fm_detect_page (doc, 0, NULL, &error);
      g_assert_null (regions);
      g_assert_error (error, FM_DOCUMENT_ERROR, FM_DOCUMENT_ERROR_NO_TEXT_LAYER);
    }

  if (geteuid () != 0)
    {
      g_autofree char *tmp = g_build_filename (g_get_tmp_dir (), "fm-test-locked.pdf", NULL);
      g_autoptr(GError) error = NULL;
      g_autoptr(FmDocument) doc = NULL;
      g_assert_true (g_file_set_contents (tmp, "%PDF-1.4\n", -1, NULL));
      g_chmod (tmp, 0);
      doc = fm_document_new_for_path (tmp, NULL, &error);
      g_assert_null (doc);
      g_assert_error (error, FM_DOCUMENT_ERROR, FM_DOCUMENT_ERROR_NOT_FOUND);
      g_unlink (tmp);
    }
}

static void
test_bytes_fuzz_like (void)
{
  /* Every prefix length class of a real PDF: never a crash, always a verdict. */
  g_autofree char *path = src_path ("tests/fixtures/pdf/truth-1-02.pdf");
  g_autofree char *data = NULL;
  gsize len;

  g_assert_true (g_file_get_contents (path, &data, &len, NULL));
  for (gsize cut = 0; cut < len; cut += len / 7 + 1)
    {
      g_autoptr(GBytes) bytes = g_bytes_new (data, cut);
      g_autoptr(GError) error = NULL;
      g_autoptr(FmDocument) doc = fm_document_new_for_bytes (bytes, "cut.pdf", NULL, &error);
      g_assert_true ((doc != NULL) != (error != NULL));
      if (doc)
        {
          GPtrArray *r = fm_detect_page (doc, 0, NULL, NULL);
          if (r)
            g_ptr_array_unref (r);
        }
    }
}

static void
test_pages_parse (void)
{
  g_autoptr(GError) error = NULL;
  GArray *p = fm_pages_parse ("1-3,7", 10, &error);
  const char *bad[] = { "x", "0", "11", "3-2", "1,,2", "1-2-3", "", "2-x" };

  g_assert_no_error (error);
  g_assert_cmpuint (p->len, ==, 4);
  g_assert_cmpint (g_array_index (p, int, 0), ==, 0);
  g_assert_cmpint (g_array_index (p, int, 3), ==, 6);
  g_array_unref (p);

  p = fm_pages_parse ("9-, 2,2", 10, &error);
  g_assert_no_error (error);
  g_assert_cmpuint (p->len, ==, 3);
  g_assert_cmpint (g_array_index (p, int, 0), ==, 1);
  g_assert_cmpint (g_array_index (p, int, 2), ==, 9);
  g_array_unref (p);

  p = fm_pages_parse (NULL, 3, &error);
  g_assert_cmpuint (p->len, ==, 3);
  g_array_unref (p);

  for (guint i = 0; i < G_N_ELEMENTS (bad); i++)
    {
      g_autoptr(GError) e = NULL;
      g_test_message ("'%s'", bad[i]);
      g_assert_null (fm_pages_parse (bad[i], 10, &e));
      g_assert_error (e, FM_DOCUMENT_ERROR, FM_DOCUMENT_ERROR_PAGE_RANGE);
    }
}

static void
test_font_rules (void)
{
  g_assert_cmpstr (fm_font_strip_subset ("ABCDEF+CMMI10"), ==, "CMMI10");
  g_assert_cmpstr (fm_font_strip_subset ("Abcdef+CMMI10"), ==, "Abcdef+CMMI10");
  g_assert_true (fm_font_is_math_pdfmathtranslate ("XYZABC+CMSY10"));
  g_assert_false (fm_font_is_math_pdfmathtranslate ("XYZABC+CMR10"));
  g_assert_true (fm_font_is_math_pdfmathtranslate ("NimbusRomNo9L-ReguItal"));
  g_assert_cmpint (fm_font_classify ("ABCDEF+CMMI10"), ==, FM_FONT_MATH);
  g_assert_cmpint (fm_font_classify ("ABCDEF+CMR10"), ==, FM_FONT_TEXT);
  g_assert_cmpint (fm_font_classify ("ABCDEF+CMTI10"), ==, FM_FONT_TEXT_ITALIC);
  g_assert_cmpint (fm_font_classify ("LatinModernMath-Regular"), ==, FM_FONT_MATH);
  g_assert_cmpint (fm_font_classify ("CambriaMath"), ==, FM_FONT_MATH);
  g_assert_cmpint (fm_font_classify ("Cambria"), ==, FM_FONT_TEXT);
  g_assert_cmpint (fm_font_classify ("STIXTwoMath-Regular"), ==, FM_FONT_MATH);
  g_assert_cmpint (fm_font_classify ("NimbusRomNo9L-ReguItal"), ==, FM_FONT_TEXT_ITALIC);
  g_assert_cmpint (fm_font_classify ("LMRoman10-Italic"), ==, FM_FONT_TEXT_ITALIC);
  g_assert_cmpint (fm_font_classify ("LMMathItalic10-Regular"), ==, FM_FONT_MATH);
  g_assert_cmpint (fm_font_classify ("ABCDEF+STIXTwoText-Regular-Identity-H"), ==, FM_FONT_TEXT);
  g_assert_cmpint (fm_font_classify ("ABCDEF+STIXTwoText-Italic-Identity-H"), ==, FM_FONT_TEXT_ITALIC);
  g_assert_cmpint (fm_font_classify ("ABCDEF+STIXTwoMath-Regular-Identity-H"), ==, FM_FONT_MATH);
  g_assert_cmpint (fm_font_classify ("XITS-Regular"), ==, FM_FONT_TEXT);
  g_assert_cmpint (fm_font_classify ("XITSMath-Regular"), ==, FM_FONT_MATH);
  g_assert_cmpint (fm_font_classify ("STIXGeneral-Italic"), ==, FM_FONT_TEXT_ITALIC);
  g_assert_cmpint (fm_font_classify ("STIXSizeOneSym-Regular"), ==, FM_FONT_MATH);
  g_assert_cmpint (fm_font_classify ("TeXGyreDejaVuMath-Regular-Identity-H"), ==, FM_FONT_MATH);
  g_assert_cmpint (fm_font_classify ("LibertinusMath-Regular"), ==, FM_FONT_MATH);
  g_assert_cmpint (fm_font_classify ("LibertinusSerif-Italic"), ==, FM_FONT_TEXT_ITALIC);
  g_assert_cmpint (fm_font_classify ("ABCDEF+NewTXMI"), ==, FM_FONT_MATH);
  g_assert_cmpint (fm_font_classify ("ABCDEF+NewTXMI7"), ==, FM_FONT_MATH);
  g_assert_cmpint (fm_font_classify ("ABCDEF+LibertineMathMI"), ==, FM_FONT_MATH);
  g_assert_cmpint (fm_font_classify ("ABCDEF+Kp--M-Italic"), ==, FM_FONT_MATH);
  g_assert_cmpint (fm_font_classify ("ABCDEF+Kp--M-Sy-Regular"), ==, FM_FONT_MATH);
  g_assert_cmpint (fm_font_classify ("ABCDEF+Kp-Italic"), ==, FM_FONT_TEXT_ITALIC);
  g_assert_cmpint (fm_font_classify ("ABCDEF+LinLibertineTI"), ==, FM_FONT_TEXT_ITALIC);
  g_assert_cmpint (fm_font_classify ("ABCDEF+MathDesign-CH-Regular-T1-10"), ==, FM_FONT_TEXT);
  g_assert_cmpint (fm_font_classify ("ABCDEF+MathDesign-CH-Regular-Italic-MathItalic-10"), ==, FM_FONT_MATH);
  /* math alphabets of newtx and mathalfa (\mathscr{M} read "ℳ" in a text font) */
  g_assert_cmpint (fm_font_classify ("ABCDEF+stxscr"), ==, FM_FONT_MATH);
  g_assert_cmpint (fm_font_classify ("ABCDEF+BOONDOXUprScr-Regular"), ==, FM_FONT_MATH);
  g_assert_cmpint (fm_font_classify ("ABCDEF+BoondoxFraktur-Regular"), ==, FM_FONT_MATH);
  g_assert_cmpint (fm_font_classify ("ABCDEF+BBOLDX-Regular"), ==, FM_FONT_MATH);
  g_assert_cmpint (fm_font_classify ("ABCDEF+DutchCalligraphic-Regular"), ==, FM_FONT_MATH);
  g_assert_cmpint (fm_font_classify ("ABCDEF+STIXTwoText"), ==, FM_FONT_TEXT);
  g_assert_true (fm_char_is_math_symbol (0x2133));    /* ℳ */
  g_assert_true (fm_char_is_math_symbol (0x2102));    /* ℂ */
  g_assert_true (fm_char_is_math_symbol (0x210B));    /* ℋ */
  g_assert_true (fm_char_is_math_symbol (0x2124));    /* ℤ */
  g_assert_true (fm_char_is_math_symbol (0x212D));    /* ℭ */
  g_assert_false (fm_char_is_math_symbol (0x2116));   /* № */
  g_assert_false (fm_char_is_math_symbol (0x212B));   /* Å (Angstrom sign) */
  g_assert_false (fm_char_is_math_symbol (0x2122));   /* ™ */
  g_assert_true (fm_font_is_math_extension ("ABCDEF+CMEX10"));
  g_assert_true (fm_font_is_math_extension ("ABCDEF+EUEX10"));
  g_assert_true (fm_font_is_math_extension ("txexs"));
  g_assert_true (fm_font_is_math_extension ("Fourier-Math-Extension"));
  g_assert_true (fm_font_is_math_extension ("Kp--M-Ex-Regular"));
  g_assert_false (fm_font_is_math_extension ("ABCDEF+CMSY10"));
  g_assert_false (fm_font_is_math_extension ("LatinModernMath-Regular"));
  g_assert_false (fm_font_is_math_extension ("TeXGyreTermesX-Regular"));
  /* STIX Two's text face is no extension font ("stix...ex" once took it) */
  g_assert_false (fm_font_is_math_extension ("ABCDEF+STIXTwoText-Regular"));
  g_assert_false (fm_font_is_math_extension ("ABCDEF+STIXTwoText-Italic"));
  /* OMS/OMX fonts without glyph names: letters are the slots' symbols */
  g_assert_cmpuint (fm_font_oms_symbol ("ABCDEF+Fourier-Math-Symbols", 'p'), ==, 0x221A);
  g_assert_cmpuint (fm_font_oms_symbol ("ABCDEF+Fourier-Math-Symbols", 'h'), ==, 0x27E8);
  g_assert_cmpuint (fm_font_oms_symbol ("ABCDEF+Fourier-Math-Extension", 'P'), ==, 0x2211);
  g_assert_cmpuint (fm_font_oms_symbol ("ABCDEF+Fourier-Math-Extension", 'q'), ==, 0x221A);
  g_assert_cmpuint (fm_font_oms_symbol ("ABCDEF+CMSY10", 'z'), ==, 0x2021);
  g_assert_cmpuint (fm_font_oms_symbol ("ABCDEF+Pxsyc", ','), ==, 0x2260);   /* \neq */
  g_assert_cmpuint (fm_font_oms_symbol ("ABCDEF+txsyc", ','), ==, 0x2260);
  /* \boldmath's txbsyc/Pxbsyc and [light]{kpfonts}' face are symbolsC too
   * (detectfix12); slots past the first ten come from txfonts.sty */
  g_assert_cmpuint (fm_font_oms_symbol ("ABCDEF+txbsyc", ','), ==, 0x2260);
  g_assert_cmpuint (fm_font_oms_symbol ("ABCDEF+Pxbsyc", 'B'), ==, 0x2254);   /* \coloneqq */
  g_assert_cmpuint (fm_font_oms_symbol ("ABCDEF+Kp-Light-M-Syc-Regular", ','), ==, 0x2260);
  g_assert_cmpuint (fm_font_oms_symbol ("ABCDEF+Kp--M-Syc-Regular", '2'), ==, 0x2285);   /* \nsupset */
  g_assert_cmpuint (fm_font_oms_symbol ("ABCDEF+txsyc", 'F'), ==, 0x2A74);   /* \Coloneqq */
  g_assert_cmpuint (fm_font_oms_symbol ("ABCDEF+txsyc", 27), ==, 0x2245);    /* \cong */
  g_assert_cmpuint (fm_font_oms_symbol ("ABCDEF+txsyc", 17), ==, 0x2250);    /* \doteq */
  g_assert_cmpuint (fm_font_oms_symbol ("ABCDEF+Kp-Light-M-Sy-Regular", ','), ==, ',');
  g_assert_cmpuint (fm_font_oms_symbol ("ABCDEF+txbsy", ','), ==, ',');
  g_assert_cmpuint (fm_font_oms_symbol ("ABCDEF+Rpxmi", ','), ==, ',');
  g_assert_cmpuint (fm_font_oms_symbol ("ABCDEF+CMSY10", 'A'), ==, 'A');   /* \mathcal */
  g_assert_cmpuint (fm_font_oms_symbol ("ABCDEF+Fourier-Math-Letters-Italic", 'p'), ==, 'p');
  g_assert_cmpuint (fm_font_oms_symbol ("ABCDEF+StandardSymL", 'p'), ==, 'p');   /* Symbol: Greek */
  g_assert_cmpuint (fm_font_oms_symbol ("ABCDEF+Utopia-Regular", 'P'), ==, 'P');
  /* Poppler's spelling of txfonts/pxfonts names */
  g_assert_cmpint (fm_font_classify ("NUQHRO+Pxex"), ==, FM_FONT_MATH);
  g_assert_cmpint (fm_font_classify ("Rpxmi"), ==, FM_FONT_MATH);
  g_assert_cmpint (fm_font_classify ("txsy"), ==, FM_FONT_MATH);
  g_assert_cmpint (fm_font_classify ("URWPalladioL-Ital"), ==, FM_FONT_TEXT_ITALIC);
  g_assert_true (fm_char_is_math_symbol (0x2126));  /* CMR's Omega, as Poppler names it */
  g_assert_true (fm_char_is_math_symbol (0x2211));  /* ∑ */
  g_assert_true (fm_char_is_math_symbol (0x03B1));  /* α */
  g_assert_false (fm_char_is_math_symbol ('a'));
  g_assert_true (fm_char_is_neutral ('7'));
  g_assert_true (fm_word_is_math_function ("sin"));
  g_assert_false (fm_word_is_math_function ("sine"));
}

/* Detection against the truth files of the committed fixtures. The floors sit
 * below what bench/detect measures, so a regression fails here first. */
static void
score_fixture (const char *name, int *matched, int *predicted, int *truth)
{
  g_autofree char *pdf_rel = g_strdup_printf ("tests/fixtures/pdf/%s.pdf", name);
  g_autofree char *truth_path = g_strdup_printf ("%s/tests/fixtures/pdf/%s.truth.json", FM_TEST_SRCDIR, name);
  g_autoptr(GError) error = NULL;
  g_autoptr(FmDocument) doc = open_fixture (pdf_rel, NULL, &error);
  g_autoptr(JsonParser) parser = json_parser_new ();
  JsonArray *tr;
  GPtrArray *all = g_ptr_array_new_with_free_func ((GDestroyNotify) fm_region_free);

  g_assert_no_error (error);
  g_assert_true (json_parser_load_from_file (parser, truth_path, &error));
  tr = json_object_get_array_member (json_node_get_object (json_parser_get_root (parser)), "regions");
  for (int p = 0; p < fm_document_get_n_pages (doc); p++)
    {
      GPtrArray *r = fm_detect_page (doc, p, NULL, &error);
      g_assert_no_error (error);
      for (guint i = 0; i < r->len; i++)
        {
          FmRegion *reg = r->pdata[i];
          g_assert_nonnull (reg->text);
          g_assert_cmpfloat (reg->font_size, >, 3);
          g_ptr_array_add (all, fm_region_copy (reg));
        }
      g_ptr_array_unref (r);
    }
  /* display, inline and equation numbers */
  for (int kind = 0; kind < 3; kind++)
    {
      const char *kname = fm_region_kind_to_string (kind);
      gboolean *used = g_new0 (gboolean, all->len + 1);
      for (guint t = 0; t < json_array_get_length (tr); t++)
        {
          JsonObject *o = json_array_get_object_element (tr, t);
          JsonArray *b = json_object_get_array_member (o, "box");
          FmRect box = { json_array_get_double_element (b, 0), json_array_get_double_element (b, 1),
                         json_array_get_double_element (b, 2), json_array_get_double_element (b, 3) };
          int page = (int) json_object_get_int_member (o, "page") - 1;
          int best = -1;
          double best_iou = 0.5;
          if (strcmp (json_object_get_string_member (o, "kind"), kname) != 0)
            continue;
          truth[kind]++;
          for (guint k = 0; k < all->len; k++)
            {
              FmRegion *reg = all->pdata[k];
              double v;
              if (used[k] || (int) reg->kind != kind || reg->page != page)
                continue;
              v = fm_rect_iou (&box, &reg->box);
              if (v >= best_iou)
                {
                  best_iou = v;
                  best = (int) k;
                }
            }
          if (best >= 0)
            {
              used[best] = TRUE;
              matched[kind]++;
            }
        }
      for (guint k = 0; k < all->len; k++)
        if ((int) ((FmRegion *) all->pdata[k])->kind == kind)
          predicted[kind]++;
      g_free (used);
    }
  g_ptr_array_unref (all);
}

/* cls-alignedge-cm (detectfix11): the widest row of a left-aligned aligned
 * display, set in from a narrow column's margins by equal slivers of 0.31
 * em, whose lower row of words starts where it starts. One shared edge made
 * it a framed paragraph's line (main 0c158a9: an inline formula from a_1,
 * its words dropped); it is a display with its words. The lower rows, flush
 * with it, join it since detectfix20 (row_flush_with_block()): the whole
 * fixture is in /pdf/detect/classes too. */
static void
test_detect_aligned_edge (void)
{
  g_autoptr(GError) error = NULL;
  g_autoptr(FmDocument) doc = open_fixture ("tests/fixtures/pdf/cls-alignedge-cm.pdf", NULL, &error);
  GPtrArray *r;
  guint rows = 0;

  g_assert_no_error (error);
  r = fm_detect_page (doc, 0, NULL, &error);
  g_assert_no_error (error);
  for (guint k = 0; k < r->len; k++)
    {
      const FmRegion *reg = r->pdata[k];
      if (reg->text != NULL && strstr (reg->text, "h8") != NULL)
        {
          rows++;
          g_assert_cmpint (reg->kind, ==, FM_REGION_DISPLAY);
          g_assert_true (g_str_has_prefix (reg->text, "rate in is"));
        }
    }
  g_assert_cmpuint (rows, ==, 2);
  g_ptr_array_unref (r);
}

/* detectprec2 (review of detectprec): a cases and a \left\{ ... \right.
 * inside a text line of a short page (cls-inlcases, CM, newtx, XeLaTeX
 * STIX Two Math). Their first row stands above the text line, math only,
 * and was taken for a display (main d42a378: 1, 2 and 1 false displays);
 * no region of these pages is a display. (The inline formulas themselves
 * still come in pieces: not scored here.) detectprec3: cls-casesstart
 * (LuaLaTeX STIX Two, XeLaTeX Libertinus), the same starting a line of a
 * paragraph, no words left of the brace, the sentence running on right of
 * the rows (main 2c577b6: one false display each). */
static void
test_detect_inline_cases (void)
{
  const char *names[] = { "cls-inlcases-cm", "cls-inlcases-newtx", "cls-inlcases-xe", "cls-casesstart-lua",
                          "cls-casesstart-xe" };

  for (guint i = 0; i < G_N_ELEMENTS (names); i++)
    {
      int matched[3] = { 0 }, predicted[3] = { 0 }, truth[3] = { 0 };

      score_fixture (names[i], matched, predicted, truth);
      g_test_message ("%s: display %d/%d of %d, inline %d/%d of %d", names[i], matched[0], predicted[0], truth[0],
                      matched[1], predicted[1], truth[1]);
      g_assert_cmpint (truth[0], ==, 0);
      g_assert_cmpint (predicted[0], ==, 0);
    }
}

/* The failure classes of issue 14 section 1, one small fixture each
 * (tests/fixtures/pdf/cls-*.body.tex, made by
 * tools/pdf-truth/make-class-fixtures.sh): operator and special-function
 * names set upright or sans (\mathrm{ns}\,z, \operatorname{Bi}\,t,
 * \mathsf{j}_n) split formulas; \left| and \left\| pieces that the text
 * layer lacks cut them; digit groups (1.12139\;32942), numbers with a script
 * (4^{1}, 15_{16}) and a display of a constant were missed or cut; a bold
 * letter with a script (CM and mathptmx) was missed; a two-line aligned
 * display with fraction rows in two columns fell apart into pieces; and
 * syntax prose (\begin{<name>}, <label>), logos (LaTeX2e, AMS) and
 * emphasised words were boxed. The detector before this test found 48 % of
 * the inline formulas of these fixtures at precision 0.37. cls-spacing:
 * operator names two thin spaces before their argument (\operatorname{ph}\,z,
 * told from a word space by the line's own word spaces), \left\langle pieces
 * the text layer drops, formulas a word space apart (the detector before it:
 * inline P/R 0.545/0.667). cls-joins (Helvetica) and cls-joins-xe (DejaVu
 * Math): units a control space after a number, formulas a word space apart
 * after a script or an italic letter, the AMS logo before a full stop, text
 * and a \bigl( line next to displays, scripts over \right) (the detector
 * before it: 4 false inline regions, 3 on cls-joins-xe). cls-fontjoins
 * (Fourier, and Libertine with newtxmath): a radical after a relation or
 * binary operator (Fourier's from a symbol font without glyph names, read
 * as "p": fm_font_oms_symbol), a math italic letter's italic correction before "(", the
 * sidebearings of extension-font delimiters fitted to their ink, a
 * fraction's denominator before \,dy (the detector before it: 8 and 9
 * false inline regions). cls-names (two columns, CM and Latin Modern Math):
 * an operator name's script before its argument, \log after CMMI's k, a
 * script-sized name in a numerator, an aligned display that starts with an
 * unknown special-function name, a display-style fraction inside a display
 * line (the detector before it: display P/R 0.75/0.75, inline P/R
 * 0.40/0.75). cls-stix (pdfLaTeX, stix2): \bigl( \Bigr] of a Type 1 math
 * font with one name for all its encodings hang below their baseline, their
 * boxes half a line too high (the detector before it: inline P/R
 * 0.40/0.57). cls-edges (Libertine) and cls-edges-lua (LuaLaTeX, Termes
 * Math): the edges of inline formulas - a function word of the prose before
 * a formula ("but $\varphi$"), a citation or a footnote mark before one, a
 * math font's brackets with digits ([1] \to [2]) taken for citations, the
 * subscript of a \right) hanging into the next line's band; cls-edges-fourier:
 * the pieces of Fourier's big delimiters standing alone, its text-font
 * brackets after math taken for citations (the detector before it, all
 * three: inline P/R 0.48/0.67). cls-opscripts (Libertine, XeLaTeX STIX Two
 * Math, LuaLaTeX Latin Modern Math): an operator's script before the
 * operator's space (\sim_{rat} j, \otimes_{\mathcal{O}_X}^{L} N,
 * \int_0^1 \int), the words of F_{\text{A on B}}, a unit after an exponent,
 * nuclides (^{212}\mathrm{Bi}), the LaTeX2e logo in STIX Two Text (the
 * detector before it, all three: inline P/R 0.26/0.40); cls-numbelow
 * (two columns, XeLaTeX and LuaLaTeX): equation numbers set below or close
 * after a display as wide as the column (before: number R 0.25);
 * cls-dfrac (pdfLaTeX STIX Two, XeLaTeX STIX Two Math, LuaLaTeX Pagella
 * Math): inline display-style fractions (\dfrac, \displaystyle\frac), whose
 * numerators and denominators were boxed apart or taken for displays (the
 * detector before it, all three: inline P/R 0.31/0.59, display P 0.27: a
 * display beside one lost its number); cls-bigops (pdfLaTeX
 * stix2 at 12 pt): text-style \bigcup, \bigoplus, \sum of a Type 1 math font
 * with one name for all its encodings hang below a box of the text size
 * (the detector before it: inline P/R 0.75/0.86 and a false display);
 * cls-groups (pdfLaTeX CM, XeLaTeX Latin Modern Math, LuaLaTeX STIX Two
 * Math): a constant's decimals in groups set apart by \: or a control space,
 * as wide as the line's word space or wider (the detector before it: 4
 * false inline regions, inline P 0.857); cls-extops-kpfonts: text-style
 * integrals of an extension font whose text layer reads \int as "R" (the
 * detector before it: 2 false inline regions, inline P/R 0.78/0.88);
 * cls-mathalpha-newtx: newtx's \mathscr from stxscr, whose letters come as
 * letterlike characters (U+2133) in a font not known as math (the detector
 * before it: inline P/R 0.57/0.50); cls-wordstart (newtx, Libertine, CM):
 * two formulas a word space apart, the second opening with a unary sign or
 * with a bracket after a lowercase math letter, beside the same signs and
 * brackets inside formulas (the detector before it, all three: 11 of 42
 * formulas merged, inline P/R 0.91/0.74);
 * cls-commas (pdfLaTeX Palatino and newtx, XeLaTeX XITS Math): a comma
 * between the arguments inside one pair of brackets, its thin space widened
 * to a word space by sidebearings or an ellipsis (U(\widetilde{P},f),
 * H_i(f_1, \ldots, f_r)), cut the formula; a sentence's comma inside the
 * sentence's own brackets does not join (the detector before it, all three:
 * inline P/R 0.71/0.88); cls-overfull-euler (two columns, amsart, Euler):
 * unbreakable inline formulas of the left column running into the gutter,
 * a glyph in the gutter was put in the right column (the detector before
 * it: 1 false inline region); cls-quads (pdfLaTeX Charter, XeLaTeX Fira
 * Math, LuaLaTeX TeX Gyre Termes Math): a \quad inside an inline formula
 * cut it, and displays of two formulas joined by \qquad \text{and}
 * \qquad, as wide as the column, were read as text lines (the detector
 * before it, all three: inline P/R 0.26/0.50, display P/R 0.27/0.33);
 * cls-opsub-times (mathptmx): an operator name with a letter script
 * (\mathop{\mathrm{colim}}\nolimits_i) came as one unknown word and cut
 * the formula (the detector before it: inline P/R 0.67/0.80); cls-stacks
 * (two columns, pdfLaTeX Charter, XeLaTeX and LuaLaTeX TeX Gyre Termes
 * Math): a text-style fraction after a sum's limits, a display-style \lim
 * whose limit overhangs it, an aligned display and its number above a
 * stretched line whose formulas joined its block (LuaLaTeX), a display
 * ending in \qquad \text{for all $\xi \in U$} (the detector before it:
 * Charter and XeLaTeX inline P 0.83 - no false region is allowed there
 * now -, LuaLaTeX display R 0.50, inline P/R 0.24/0.80); cls-numleft-lua
 * (amsart, two columns, DejaVu Math) and cls-numclose-xe (amsart, TeX Gyre
 * Termes Math): left equation numbers (leqno) set on a line of their own
 * above a display as wide as the column, or less than 0.9 em before it on
 * its line (the detector before it: numbers 1 of 3 and 1 of 2, the close
 * one inside the display's box); cls-eqapart (XeLaTeX STIX Two Math,
 * pdfLaTeX Libertine): two equations a word space apart on a squeezed line
 * (word space 0.17 em, as narrow as a thin space), beside thin spaces inside
 * formulas (\,dx, \operatorname{Tr}\,u, 2\,b) (the detector before it:
 * inline P/R 0.75/0.60 and 0.71/0.50); cls-nosetminus (XeLaTeX DejaVu
 * Math, LuaLaTeX Fira Math): \setminus missing from the font, only the
 * operator's spaces left (f \colon U \setminus K \to \mathbb{C} in two
 * pieces), and u^{*} x = y_1, a superscript's sign taken for a binary
 * operator (the detector before it: inline P/R 0.27/0.38 and 0.50/0.63);
 * cls-detfix-cm (pdfLaTeX CM, review of detect14m): a thin space inside a
 * formula on a squeezed line (\int x f(x)\,dx, P(X=x)\,P(Y=y)) and a \quad
 * on a normal line cut the formula, $U$\enspace$K$ was joined as a lost
 * \setminus, and a cross-reference "(2)" ending the line above a display,
 * an \item[(1)] label and "(1)" half an em before an inline formula were
 * taken for left equation numbers (the detector before it: inline P/R
 * 0.73/0.89, 2 false numbers); cls-inlinejoin (pdfLaTeX newtx, XeLaTeX
 * Pagella Math, LuaLaTeX Bonum Math, detect14n): a formula ending in a
 * closing bar a word space before one opening with a bracket (|A| < |B|
 * (Y, d_Y)) was one, \|f\| lost its closing bar after f's italic
 * correction, inline \dfrac whose numerator's one full-size glyph stands
 * over a script or a sliver of the denominator fell apart,
 * \frac{\mathrm{d}}{\mathrm{d}x}\cos x lost its upright numerator and
 * its tie to \cos, \mathrm{d}\mathbf{p} had no seed (the detector before
 * it, all three: inline P/R 0.47/0.55); cls-qquad (pdfLaTeX Libertine,
 * XeLaTeX STIX Two Math, detect14n): a \qquad inside an inline formula
 * cut it, and libertine's semibold \mathbf (LinLibertineTZ) was not bold,
 * \mathbf{u} + \mathbf{v} had no seed (the detector before it, both:
 * inline P/R 0.31/0.42); cls-dispcuts-cm (pdfLaTeX CM, 12 pt, issue
 * 12): formulas \qquad\qquad apart on one display line, fractions of words
 * and units, a bracketed remark after \qquad\hfill, an aligned row of words
 * "&= (\text{circumference})/T", an aligned display whose first row has
 * fractions of words (the detector before it: 4 of 9 displays, 11 false
 * regions); cls-dispcols (two columns at 12 pt, Latin Modern and
 * Libertine): display-style fractions \qquad \text{and} \qquad apart,
 * words in a product's limits, a \bigr\} and a \bigcup's limit on displays
 * as wide as the column, and the short right column of a last page, whose
 * gutter was not found (the detector before it: one display of five lost
 * on each, 4 and 5 false regions); cls-midbold (pdfLaTeX newtx and
 * Libertine, XeLaTeX Latin Modern Math, detectfix3): pdfLaTeX's \mid
 * taken for a closing bar split a \mid (b+c) and P(A \mid B) \mid (A,B)
 * before their bracket, words with one bold letter (\textbf{T}he,
 * Ph\textbf{D}) were boxed as a vector's differential, a footnotesize
 * table's \hline passed for a fraction bar ("n yes") (the detector before
 * it: 14, 14 and 11 false or missed regions of 16); cls-sidetags-cm (pdfLaTeX CM, review of
 * detect12n): two numbered equations side by side in two minipages and a
 * \tag{Young} after a wide display (the detector before it: displays 3 of
 * 5, numbers 1 of 3 - the two equations one display over "(1)", the tag
 * inside its display's box), and a centred tabular{rl} on a one-column
 * page (see /pdf/layout/gutter-overfull); cls-limrow (pdfLaTeX
 * CM and Latin Modern, e2efix12): an inline \lim\limits_{n\to\infty} f(x_n)
 * under a long subscript of the line above came in two pieces (the
 * detector before it, CM: inline 4 matched of 6, 9 regions); cls-limprime
 * (pdfLaTeX CM and Latin Modern, tidy16): \lim\limits_{x\to a'} f(x), the
 * limit row's prime raised beside "lim", came in two pieces (before it:
 * inline 3 matched of 4, 5 regions, on both); cls-fracnum
 * (pdfLaTeX Latin Modern, XeLaTeX Termes Math, LuaLaTeX Pagella Math,
 * detect14p): a text-style fraction whose numerator is wider than its
 * denominator after an operator with limits or a lone subscript
 * (\int_{-1}^{1} \frac{g(t)}{t}\,dt, \oint_\gamma \frac{h(z)}{z}\,dz) came in
 * pieces, and \,dx after such a numerator was cut off in the Unicode
 * engines (the detector before it, all three: inline P/R 0.485/0.762);
 * cls-namebracket (XeLaTeX Libertinus Math, LuaLaTeX Pagella Math, pdfLaTeX
 * newtx, detect14p): \cos(\omega t) on a line whose word space shrank
 * under 0.2 em lost "cos" - its bracket was taken for the end of the prose
 * word before it (the detector before it: one of seven lost on each);
 * cls-dsumfrac (pdfLaTeX pxfonts, XeLaTeX and LuaLaTeX Termes Math,
 * detect14p): a display-style sum's lower limit level with the denominator
 * of a display-style fraction after it stood on the denominator's line of
 * math and came as a region of its own (the detector before it: 6 false
 * inline regions over the three, inline P 0.600); cls-opside (pdfLaTeX
 * newtx and Libertine, detect14p): past a big operator's wide side
 * subscript (\sum_{i=1}^{n} \omega, \int_{A\cup B} g) the operand's line
 * neighbour was the operator itself, over an em away, and the operand a
 * formula of its own (the detector before it: 3 false inline regions); cls-remarks
 * (pdfLaTeX CM and Times, e2e12p): a display fraction then "\qquad
 * \text{(remark)}" on its line, one on a page too short for its margins
 * (the detector before it, both: displays 1 of 3, 2 false); cls-raisedroot
 * (CM and Latin Modern, e2e12p): e^{\sqrt{-\lambda}t} under an italic f,
 * the radical fitted to the f's descender (before it: 5 false regions);
 * cls-wordapart (CM, Times, STIX Two, e2e12p): $0\cdot\infty$
 * $h:U\to X$, $g(x)$ $>f$, \hat{\mathbf{y}} then $f(x) = -1$ (before it,
 * all three: inline 5 of 9, 1 false); cls-sharp (CM and newtx, e2e12p):
 * \emptyset^\#, T^\#, A^\# + B^\# (before it: inline 3 of 5, 6 false);
 * cls-barrule (pdfLaTeX CM, XeLaTeX Termes Math, detectfix5): scripts over
 * an underline, which is no fraction bar, and superscripts wider than their
 * subscripts (x_i^{2n}) beside formulas a word space apart - a guard: the
 * detector before the fix passed it too (it took the underline for a bar,
 * but no join here needed it). cls-dsumfrac and cls-barrule allow no
 * stray region; cls-opgap (pdfLaTeX newtx, txfonts beside it, detect14q): newtx's
 * text-style \prod and \sum, whose side scripts start 0.2 em past the
 * operator's box, lost their operand (\prod_{j=1}^{m} y_j: 2 false inline
 * regions before); cls-casesrows (XeLaTeX and LuaLaTeX STIX Two Math,
 * detect14q): a cases display's conditions after \text{if} came as inline
 * regions and the display was cut (display P/R 0/0, inline P 0.333);
 * cls-ordspace (CM and newtx, detectfix6): f(x) \ge 0\ \forall x, \nabla f =
 * 0\ \partial_x g (a control space, or \; in newtx, before an ordinary
 * symbol) and, on lines squeezed to a word space of 0.15-0.19 em,
 * a^2\sin\theta, b_1\cos\phi (e2e12p's detector: 9 and 6 extra regions);
 * cls-intdiff (pdfLaTeX newtx and Libertine, XeLaTeX Termes Math,
 * detect14s): \int f\,d\mu, whose f's italic correction before the thin
 * space made the gap wider than a word space, and newtx's g(x)\,dx, cut
 * before the differential (the detector before it: 8 false inline regions
 * over the three, one formula missed);
 * cls-textdisp (pdfLaTeX CM and Palatino, XeLaTeX Termes Math, detect14r):
 * displays made mostly of words (\frac{dx}{dt} = (\text{rate in} \times
 * ...), aligned rows \text{rate in} &= 5, & x = \#\text{ of hares}) came as
 * inline pieces or not at all, beside a centred prose line with an inline
 * formula that must stay inline (the detector before it: displays 1, 0 and
 * 2 of 4, inline P 0.15-0.18); detectfix8 added centred prose dense with
 * inline math that must stay prose - a caption, a small-caps heading, a
 * hyphenated affiliation, an abstract's line (detect14r's rule: 7 displays
 * for 4 in the CM PDF); cls-substack (pdfLaTeX Latin Modern and
 * newtx, LuaLaTeX Pagella Math, detect14r): \substack{n=1 \\ n \text{ odd}}
 * under a sum, its second row a region of its own (the detector before it:
 * 1, 2 and 1 stray regions); cls-longcond (pdfLaTeX kpfonts, XeLaTeX
 * Libertinus Math, detect14r): \int_\gamma \omega = 0 \qquad \text{for
 * every piecewise smooth closed path } \gamma \colon [a,b] \to U, a
 * condition too long for one (before: display 0 of 1, cut or in pieces);
 * cls-dispcross (pdfLaTeX sans and CM, two columns at \large, detect14r): an
 * aligned display over a stretched text line whose \left[..\right]_{z}
 * hangs its subscript under the line - the display was dissolved (before:
 * display 0 of 1, 6 pieces); cls-remarkrows (pdfLaTeX CM, XeLaTeX Latin
 * Modern Math, detect14r): a gathered display's bracketed remark over two
 * rows, the second closing the bracket (before: display 0 of 1 - in pieces
 * at the branch point, its first row alone after words_display_line());
 * cls-units (pdfLaTeX CM and LM, XeLaTeX LM Math, e2e12q): a temperature's
 * unit glued to a raised degree sign (0^\circ\textup{C}) and a rate in
 * words after a control space (73.3\ \text{miles/hour}), both cut before
 * the unit (the detector before it: 4 of the 7 formulas missed on each);
 * "n = 3 and/or m = 4" stays two;
 * cls-footfrac (XeLaTeX DejaVu Math, LuaLaTeX Pagella Math, at 12 pt,
 * detect14s's rule, fixture by detectfix7): a footnote's display-style
 * \frac{1}{1-v^2}\,dv = dx, whose fraction at footnote size was taken for
 * a display of its own (before: a false display and two inline pieces,
 * inline 0 of 1);
 * cls-stackparts (pdfLaTeX STIX Two and newtx, XeLaTeX Termes Math,
 * detect14t): inline display-style fractions with a narrow or short part,
 * the 8 of \frac{\mathrm{cn}(\lambda+5)}{8} more than 2 em from the words,
 * the t of newtx's \frac{\log(1+t)}{t} under a bar 0.5 em above it (before:
 * display precision 0.33-0.50, the parts false displays); cls-phrasedisp
 * (pdfLaTeX CM, XeLaTeX Pagella Math, LuaLaTeX STIX Two Math, two columns,
 * detect14t): centred headings "2. The case $n = 1$", "Lemma $k = 3$" stay
 * prose, a display naming its formula in lower-case words as wide as the
 * column and a row of three equations of words are displays (before:
 * display 0 of 2, three false displays); cls-bigdelimwords (pdfLaTeX CM
 * and Palatino, detect14t): a display of words whose \Bigl( \Bigr) are
 * chunks of their own, refused as a table row of five chunks (before:
 * display 0 of 1, inline pieces);
 * cls-capdisp (pdfLaTeX CM, XeLaTeX Termes Math, detectfix9): displays that
 * open with a capitalised word (\text{Maximize } z = ..., a numbered
 * \text{Area } A = \pi r^2, an aligned \text{Minimize } & ...), taken for
 * headings by detect14t (before: display 0 of 5, inline pieces, the number
 * lost); cls-boxpar (pdfLaTeX CM, LuaLaTeX LM Math, detectfix9): a
 * justified paragraph in an \fbox{\parbox}, set in by equal slivers
 * (before: a false display of its lines); cls-centreprose (pdfLaTeX CM,
 * XeLaTeX Termes Math, detectfix9): centred lower-case prose with one
 * formula one text line high, "given that $x = 2$" (before: display);
 * e2e12r (pdfLaTeX CM and LM; the detector before it in brackets):
 * cls-scriptnum, inline \dfrac numerators of more scripts than full-size
 * glyphs, a denominator 2 em from the line's words, a letter a word space
 * after a fraction (display 1/2, inline 2/3 of 3); cls-exactdiff,
 * \left(..\right)\,dx + (..)\,dy = 0 with no integral (inline 2/4 of 3);
 * cls-condrows (two columns at 12 pt), a cases display whose conditions
 * are rows of words (display 0 of 1, 6 and 4 inline pieces, number 0 of 1);
 * cls-wordremark, a display and a remark of words after \qquad on one
 * centred line (display 0 of 1); cls-fracgaps, a bracket after a text-style
 * fraction and c\int s\,d\mu, thin spaces measured from a narrower
 * numerator and from an ink-fitted \int (inline 6/7 of 6: a cut piece
 * over); cls-alignfrac (11 pt), an aligned display whose second row holds
 * fractions (display 1/2 of 1); cls-expunit (amsart at 12 pt), a unit after
 * a power of ten whose exponent Poppler lists before the line (the regions
 * ended at the 10: text checked below). detectfix10: cls-condtable, a
 * centred tabular{ll} of notation and a table l@{\quad}p{...} of \dfrac
 * rows, whose text columns condition_rows() took for a cases display's
 * conditions (main 090e5eb: inline 2/2 of 6, the first table one display).
 * detectfix11: cls-namedfrac (pdfLaTeX Times and CM), displays named in
 * lower-case words with a display fraction whose parts Poppler lists as
 * lines of their own (main 0c158a9, Times: display 2 of 3, inline pieces);
 * cls-caption (pdfLaTeX CM, XeLaTeX Termes Math), one-line captions
 * "Figure 1: The map $g(t) = t^2$" (main 0c158a9: two false displays,
 * inline 2 of 4).
 * detect14u (main 0c158a9 in brackets, matched/found of truth):
 * cls-commalist (kpfonts, XeLaTeX Libertinus), f_\textup{o},\ 3f_\textup{o},\
 * \ldots and a_1,\ a_2,\ a_3 cut at every comma and control space (inline
 * 2/10 of 4), "$p_1,$ $p_2$" two formulas; cls-lostamalg (Fira Math), a lost
 * \amalg after a subscript (XeLaTeX 2/7 of 4; LuaLaTeX right before too);
 * cls-scriptapart (Euler, XeLaTeX Bonum), \rho_\text{w} in a footnote, its
 * script listed as a line of its own (1/2 of 2); cls-sycrel (kpfonts,
 * txfonts), symbolsC's \neq read as a comma, \coloneqq as a B (4/8 and 5/6
 * of 5); cls-italicrun (Palatino, Times), uvX between two operators taken
 * for an emphasised word (0/4 of 2); cls-wordbracket (XeLaTeX and LuaLaTeX
 * Pagella), "$\ker B$ $(1,2)$" a word space apart joined by the
 * italic-correction rule (2/3 of 5).
 * e2e12s (main 0c158a9 in brackets): cls-namedremark (CM, LM, XeLaTeX LM
 * Math), displays named in words then a bracketed remark after \qquad,
 * \text{efficiency} = 1-\frac{Q_L}{Q_H}. \qquad \text{[..]}, and one named
 * straight before its relation, \text{area under curve} = \Delta x = \int
 * .. (display 1/1 of 3 in CM and LM, 0 in XeLaTeX: inline pieces);
 * cls-lonerel (CM, LM, Times), a relation alone in prose, $\coloneqq$ and
 * $=$ in the text font's glyphs, and "lemma 42 $\bullet$ that", a bullet
 * with no operand after it a word space from a number (inline 4/5 of 7:
 * "42 \bullet" one region).
 * detect14v (main 0667c64 in brackets): cls-wordfrac (Palatino, txfonts,
 * Euler), displays whose fractions hold words, v =
 * \frac{\text{circumference}}{T} = ... and \frac{100\ \textup{cm}}{1\
 * \textup{m}} \times ..., came as inline pieces or not at all (display 0/0,
 * 1/2 and 1/1 of 2; inline pieces "v=", "2\pi r =", "100 cm 100 cm \times");
 * cls-rowwords (Euler, Palatino), an aligned display whose middle row has
 * "\quad \text{(calculator output)}", dissolved as crossed by running text
 * (display 0/0 of 1, its number lost, 3 inline pieces).
 * detectfix17 (main d7bc3b0 in brackets): cls-sumfrac (CM, LM), a centred
 * prose line with an inline \displaystyle\sum_{i=1}^{n}\frac{x_i}{n}, its
 * words 0.45 em below the middle of the sum-and-numerator chunk, became one
 * display, words and all (display 0/1 of 0, inline 2/2 of 3).
 *
 * detectfix16 (main 0667c64 in brackets): cls-boxtwo (CM, Times), two-line
 * \fbox{\parbox} paragraphs whose short last line shares one edge only with
 * the first (two false displays, inline 1 of 6); cls-squeeze (CM, LM),
 * V(x), Y(t) on a line squeezed to TeX's limit, CM's italic correction of
 * V and Y as wide as its word space (11 of 12, three pieces); cls-emphsigns
 * (Times, Palatino, CM), $\to$ \emph{lex} $\to$ and *\emph{new}* taken for
 * math letters between operators (4 of 8, six regions over), and
 * $<$\emph{file}$>$, a meta-variable in math's signs (CM: two regions over).
 *
 * e2e12t (main 0667c64 in brackets): cls-opnum (CM, LM), an operator name a
 * thin space before a number, \sinh 0 = 0, all in the text font, beside
 * typed prose "log 2" a word space apart (no region), and limits under a
 * name whose first letter's italic correction parted it from the arrow,
 * \lim\limits_{N\to\infty} (inline 0/4 of 8);
 * cls-scriptspace (CM, LM), a formula ending in a script a word space before
 * the next, "$Y_\infty$ 2024", "$a^n$ $\vec{v}$" (inline 6/8 of 9: one region
 * each); cls-mapsto (CM, LM), \mapsto whose CMSY bar Poppler reads as a
 * '7': the formula lost its first atom (inline 5/12 and 5/11 of 6).
 *
 * detectprec (main 3b437ef in brackets): cls-textfrac (CM, Times),
 * text-style fractions of digits in a text line, \frac{1}{2}, whose
 * digits and bar (a rule) hold no seed in pdfLaTeX, and a numerator and a
 * denominator that Poppler lists as one word (inline 1/1 of 10 each: the
 * letters of \frac{a}{b} only); cls-casescol (CM, Times), cases displays
 * whose conditions hold words on a page too short for its text margins to
 * be known (display 0 of 2 each, the rows inline pieces).
 *
 * Lead, session v (main d42a378 in brackets): cls-quadword (Latin Modern,
 * XeLaTeX and LuaLaTeX Termes Math, two columns), numbered displays as wide
 * as the column whose formulas a word joins a \quad apart each side,
 * \quad\text{in}\quad (display 3/3 of 4, inline 1/3 of 1, numbers 3/3 of 4 each: one line
 * came as two inline formulas and lost its number).
 *
 * detectfix20 (main d42a378 in brackets): cls-alignedge-cm, whole (its
 * lower rows, flush with the widest, came as inline pieces: display 0 of
 * 2); cls-jotrows (CM, LuaLaTeX LM Math, two columns), aligned and
 * gathered rows set with \jot 0-1 pt sharing an edge, the widest taken for
 * a framed paragraph's line and the rows flush with it set off on one side
 * only (display 0 of 4, CM; 0 of 4, LuaLaTeX); cls-rowwords (CM, Times,
 * XeLaTeX XITS), the calculator-output row in fonts whose "= 3.2139 m"
 * holds no math glyph: cut before the words or dissolved (display 0 of 1).
 *
 * rvfix20 (main a69a2cf in brackets): cls-framerule (CM, Palatino, XeLaTeX
 * LM Math), inline formulas starting a line of an \fbox{\parbox}, the
 * box's side taken for a lost delimiter (inline 3 of 6, CM and XeLaTeX; 2
 * of 6, Palatino).
 *
 * rvprec2 (main a64d825 in brackets): cls-caseswords (CM, Times, XeLaTeX
 * STIX Two, LuaLaTeX Libertinus), cases displays whose line opens with words
 * before the brace ("for every x we set u(x) = {...") on a short page, the
 * words taken for running text around an inline cases (display 0 of 2 in
 * each, 8 or 10 inline pieces).
 *
 * detectprec3 (main 2c577b6 in brackets): cls-textfrac (LuaLaTeX STIX Two,
 * XeLaTeX Libertinus), text-style fractions whose script-size denominators
 * Poppler lists as chunks of their own: the next line's raised \dfrac
 * numerator took them into its line, each a display of its own (display
 * 0/4 of 0, inline 6/10 of 10; display 0/2, inline 8/10); cls-wordfrac2
 * (XeLaTeX STIX Two, LuaLaTeX Libertinus, two columns, 12 pt), a numbered
 * display "\text{FWHM} = \frac{f_\textup{o}}{Q}." whose line was mostly the
 * acronym's letters, its fraction's parts not counted (XeLaTeX: display 0 of
 * 1, number 0 of 1; the LuaLaTeX one was found).
 *
 * detecttext (main 916dd3b in brackets): cls-setwords (CM, XeLaTeX STIX
 * Two, LuaLaTeX Libertinus), displays whose words are most of the line - a
 * set's condition in words, formulas joined by a clause a \quad apart and
 * closed by a word (display 1 of 3 in each, the rest inline pieces);
 * cls-letterdelim (CM, Libertine), a math letter before a \left delimiter
 * split off as a region of its own (2 and 3 stray regions); cls-framedisp
 * (CM, XeLaTeX LM Math, LuaLaTeX Termes Math), displays of framed
 * paragraphs joined by math (display 0 of 2 in each, the math between the
 * frames in pieces); detectop (main 487c0d2 in brackets): cls-opthin (CM,
 * XeLaTeX LM Math, Libertine), a known operator name, \, and a letter as
 * wide apart as the line's word space (\operatorname{Tr}\,\nu, \ker\, T:
 * the letter a region of its own, inline 4 of 6 in CM and XeLaTeX, 5 of 6
 * in Libertine). detectinline (main daea23f in brackets): cls-sentcomma
 * (Libertine, newtx, XeLaTeX STIX Two), two formulas parted by the
 * sentence's comma and a word space, "$x=1$, $y$" (inline 3 of 11, 6 of 11,
 * 7 of 11); cls-barop (XeLaTeX and LuaLaTeX LM Math), a formula ending in
 * \bigr| a word space before one opening with an integral or a sum (inline
 * 4 of 7 in both); detectb2b: cls-b2b (CM, XeLaTeX LM Math), displays set
 * back to back - single lines, two numbered equations, \Bigl\{ sets, an
 * aligned block then a line - merged pairwise, and an aligned block's rows
 * set with \\[4pt] split in CM (display 3 of 10 in CM, 4 of 10 in
 * XeLaTeX on main), with gathered rows in \\[1pt] that must stay one;
 * detectreal: cls-barroot (newtx, Libertine), a formula ending in a closing
 * bar or bracket a word space before one opening with a radical, "$|a|$
 * $\sqrt{b}$", "$f(x)$ $\sqrt{x}$" (inline 6 of 13 in both on main, the
 * pairs one region each); cls-linemarks (CM, XeLaTeX LM Math), marks
 * opening a line of running text - \circ and \ast item labels, \fnsymbol's
 * star at the foot of the page - and that star after a word in the text
 * (4 regions over in both on main: the marks, "below*"); cls-metavars (CM,
 * XeLaTeX LM Math), meta-variables with a digit, an underscore or two words
 * and docstrip's guards "<*package>", "</trace>" (7 regions over in both on
 * main), beside angle brackets of math; cls-sectsign (CM), references
 * "(\S 10)", "\S\S 3--4", "\P 2" with CMSY's signs (6 regions over on main). */
static void
test_detect_classes (void)
{
  const char *names[] = { "cls-opname", "cls-leftright", "cls-numbers", "cls-bold", "cls-bold-times",
                          "cls-long", "cls-prose", "cls-spacing", "cls-joins", "cls-joins-xe",
                          "cls-fontjoins-fourier", "cls-fontjoins-libertine", "cls-names", "cls-names-xe", "cls-stix",
                          "cls-edges", "cls-edges-lua", "cls-edges-fourier", "cls-opscripts", "cls-opscripts-xe",
                          "cls-opscripts-lua", "cls-numbelow-xe", "cls-numbelow-lua", "cls-dfrac", "cls-dfrac-xe",
                          "cls-dfrac-lua", "cls-bigops", "cls-groups", "cls-groups-xe", "cls-groups-lua",
                          "cls-extops-kpfonts", "cls-mathalpha-newtx", "cls-wordstart-newtx",
                          "cls-wordstart-libertine", "cls-wordstart-cm",
                          "cls-commas-palatino", "cls-commas-newtx", "cls-commas-xe",
                          "cls-overfull-euler", "cls-quads-charter", "cls-quads-xe", "cls-quads-lua",
                          "cls-opsub-times", "cls-stacks-charter", "cls-stacks-xe", "cls-stacks-lua",
                          "cls-numleft-lua", "cls-numclose-xe", "cls-eqapart-stix", "cls-eqapart-libertine",
                          "cls-nosetminus-dejavu", "cls-nosetminus-fira", "cls-detfix-cm",
                          "cls-inlinejoin-newtx", "cls-inlinejoin-xe", "cls-inlinejoin-lua",
                          "cls-qquad-libertine", "cls-qquad-xe", "cls-dispcuts-cm",
                          "cls-dispcols-lmodern", "cls-dispcols-libertine", "cls-midbold-newtx",
                          "cls-midbold-libertine", "cls-midbold-xe",
                          "cls-sidetags-cm", "cls-limrow-cm", "cls-limrow-lmodern",
                          "cls-limprime-cm", "cls-limprime-lmodern", "cls-fracnum-lmodern",
                          "cls-fracnum-xe", "cls-fracnum-lua", "cls-namebracket-xe", "cls-namebracket-lua",
                          "cls-namebracket-newtx", "cls-dsumfrac-pxfonts", "cls-dsumfrac-xe", "cls-dsumfrac-lua",
                          "cls-opside-newtx", "cls-opside-libertine",
                          "cls-remarks-cm", "cls-remarks-times", "cls-raisedroot-cm", "cls-raisedroot-lmodern",
                          "cls-wordapart-cm", "cls-wordapart-times", "cls-wordapart-stix",
                          "cls-sharp-cm", "cls-sharp-newtx", "cls-barrule-cm", "cls-barrule-xe", "cls-opgap-newtx", "cls-opgap-txfonts",
                          "cls-casesrows-xe", "cls-casesrows-lua", "cls-ordspace-cm", "cls-ordspace-newtx", "cls-fracapart-cm", "cls-fracapart-times",
                          "cls-fracapart-xe", "cls-italicsup-cm", "cls-italicsup-xe", "cls-intdiff-newtx",
                          "cls-intdiff-libertine", "cls-intdiff-xe",
                          "cls-textdisp-cm", "cls-textdisp-palatino", "cls-textdisp-xe",
                          "cls-substack-lmodern", "cls-substack-newtx", "cls-substack-lua",
                          "cls-longcond-kpfonts", "cls-longcond-xe", "cls-dispcross-sans", "cls-dispcross-cm",
                          "cls-remarkrows-cm", "cls-remarkrows-xe", "cls-units-cm", "cls-units-lmodern",
                          "cls-units-xe", "cls-footfrac-xe", "cls-footfrac-lua", "cls-stackparts-stix2",
                          "cls-stackparts-newtx", "cls-stackparts-xe", "cls-phrasedisp-cm", "cls-phrasedisp-xe",
                          "cls-phrasedisp-lua", "cls-bigdelimwords-cm", "cls-bigdelimwords-palatino",
                          "cls-capdisp-cm", "cls-capdisp-xe", "cls-boxpar-cm", "cls-boxpar-lua",
                          "cls-centreprose-cm", "cls-centreprose-xe",
                          "cls-scriptnum-cm",
                          "cls-scriptnum-lmodern", "cls-exactdiff-cm", "cls-exactdiff-lmodern", "cls-condrows-cm",
                          "cls-condrows-lmodern", "cls-wordremark-cm", "cls-wordremark-lmodern", "cls-fracgaps-cm",
                          "cls-fracgaps-lmodern", "cls-alignfrac-cm", "cls-alignfrac-lmodern", "cls-expunit-cm",
                          "cls-expunit-lmodern", "cls-condtable-cm", "cls-condtable-lmodern",
                          "cls-namedfrac-times", "cls-namedfrac-cm", "cls-caption-cm", "cls-caption-xe",
                          "cls-commalist-kpfonts", "cls-commalist-xe", "cls-lostamalg-xe", "cls-lostamalg-lua",
                          "cls-scriptapart-euler", "cls-scriptapart-xe", "cls-sycrel-kpfonts", "cls-sycrel-txfonts",
                          "cls-italicrun-palatino", "cls-italicrun-times", "cls-wordbracket-xe",
                          "cls-wordbracket-lua", "cls-boxtwo-cm", "cls-boxtwo-times", "cls-squeeze-cm",
                          "cls-squeeze-lmodern", "cls-emphsigns-times", "cls-emphsigns-palatino",
                          "cls-emphsigns-cm",
                          "cls-namedremark-cm", "cls-namedremark-lmodern", "cls-namedremark-xe", "cls-lonerel-cm",
                          "cls-lonerel-lmodern", "cls-lonerel-times", "cls-wordfrac-palatino",
                          "cls-wordfrac-txfonts", "cls-wordfrac-euler", "cls-rowwords-euler",
                          "cls-rowwords-palatino", "cls-sumfrac-cm", "cls-sumfrac-lmodern",
                          "cls-opnum-cm", "cls-opnum-lmodern",
                          "cls-scriptspace-cm", "cls-scriptspace-lmodern", "cls-mapsto-cm", "cls-mapsto-lmodern",
                          "cls-textfrac-cm", "cls-textfrac-times", "cls-casescol-cm", "cls-casescol-times",
                          "cls-quadword-lmodern", "cls-quadword-xe", "cls-quadword-lua",
                          "cls-alignedge-cm", "cls-jotrows-cm", "cls-jotrows-lua", "cls-rowwords-cm",
                          "cls-rowwords-times", "cls-rowwords-xe", "cls-framerule-cm", "cls-framerule-palatino",
                          "cls-framerule-xe", "cls-caseswords-cm", "cls-caseswords-times",
                          "cls-caseswords-xe", "cls-caseswords-lua", "cls-textfrac-lua", "cls-textfrac-xe",
                          "cls-wordfrac2-xe", "cls-wordfrac2-lua", "cls-setwords-cm", "cls-setwords-xe",
                          "cls-setwords-lua", "cls-letterdelim-cm", "cls-letterdelim-libertine",
                          "cls-framedisp-cm", "cls-framedisp-xe", "cls-framedisp-lua", "cls-opthin-cm",
                          "cls-opthin-xe", "cls-opthin-libertine", "cls-sentcomma-libertine",
                          "cls-sentcomma-newtx", "cls-sentcomma-xe", "cls-barop-xe", "cls-barop-lua",
                          "cls-b2b-cm", "cls-b2b-xe", "cls-barroot-newtx", "cls-barroot-libertine",
                          "cls-linemarks-cm", "cls-linemarks-xe", "cls-metavars-cm", "cls-metavars-xe",
                          "cls-sectsign-cm" };

  for (guint i = 0; i < G_N_ELEMENTS (names); i++)
    {
      int matched[3] = { 0 }, predicted[3] = { 0 }, truth[3] = { 0 };

      score_fixture (names[i], matched, predicted, truth);
      g_test_message ("%s: display %d/%d of %d, inline %d/%d of %d, numbers %d/%d of %d", names[i], matched[0],
                      predicted[0], truth[0], matched[1], predicted[1], truth[1], matched[2], predicted[2], truth[2]);
      g_assert_cmpint (matched[0], ==, truth[0]);
      g_assert_cmpint (matched[1], ==, truth[1]);
      g_assert_cmpint (matched[2], ==, truth[2]);
      g_assert_cmpint (predicted[2], ==, matched[2]);
      g_assert_cmpint (predicted[0] + predicted[1] - matched[0] - matched[1], <=, 1);
      /* (a split fraction or limit leaves one piece over: none here;
       * cls-stacks-lua keeps one, not fixed yet - the limit k\to\infty
       * under A's display-style \lim, with the sentence's comma, comes
       * as a region of its own in LuaLaTeX's boxes) */
      /* (cls-dsumfrac's class was a stray region of its own, the sum's
       * lower limit, and cls-substack's a \substack's second row: the one
       * piece over allowed above would let them back) */
      if (g_str_equal (names[i], "cls-stacks-charter") || g_str_equal (names[i], "cls-stacks-xe") ||
          g_str_has_prefix (names[i], "cls-dsumfrac-") || g_str_has_prefix (names[i], "cls-barrule-") ||
          g_str_has_prefix (names[i], "cls-substack-") || g_str_has_prefix (names[i], "cls-opnum-") ||
          g_str_has_prefix (names[i], "cls-scriptspace-") || g_str_has_prefix (names[i], "cls-mapsto-") ||
          g_str_has_prefix (names[i], "cls-textfrac-") || g_str_has_prefix (names[i], "cls-opthin-") ||
          g_str_has_prefix (names[i], "cls-barroot-") || g_str_has_prefix (names[i], "cls-linemarks-") ||
          g_str_has_prefix (names[i], "cls-metavars-") || g_str_has_prefix (names[i], "cls-sectsign-"))
        g_assert_cmpint (predicted[1], ==, matched[1]);
      /* (e2e12r's cuts keep the IoU over 0.5, the piece cut off is a
       * region over: cls-fracgaps' lone c, cls-alignfrac's second row) */
      if (g_str_has_prefix (names[i], "cls-fracgaps-") || g_str_has_prefix (names[i], "cls-alignfrac-") ||
          g_str_has_prefix (names[i], "cls-b2b-"))
        {
          g_assert_cmpint (predicted[0], ==, matched[0]);
          g_assert_cmpint (predicted[1], ==, matched[1]);
        }
    }

  /* An aligned display's upper row ends in a comma further right than
   * the last row's period: the comma is the formula's, not the sentence's
   * (the region had left it out of its text). */
  for (guint f = 0; f < 3; f++)
    {
      const char *pdf[] = { "tests/fixtures/pdf/cls-fracapart-cm.pdf", "tests/fixtures/pdf/cls-fracapart-times.pdf",
                            "tests/fixtures/pdf/cls-fracapart-xe.pdf" };
      g_autoptr(GError) error = NULL;
      g_autoptr(FmDocument) doc = open_fixture (pdf[f], NULL, &error);
      GPtrArray *r;
      guint displays = 0;

      g_assert_no_error (error);
      r = fm_detect_page (doc, 0, NULL, &error);
      g_assert_no_error (error);
      for (guint k = 0; k < r->len; k++)
        {
          const FmRegion *reg = r->pdata[k];
          if (reg->kind == FM_REGION_DISPLAY)
            {
              displays++;
              g_assert_nonnull (strstr (reg->text, "0,"));
            }
        }
      g_assert_cmpuint (displays, ==, 1);
      g_ptr_array_unref (r);
    }

  /* A unit a control space after a power of ten whose exponent Poppler
   * listed before the number's line (e2e12r): the region ends in the unit,
   * C or N; "10^{3} apples" keeps its word out. */
  for (guint f = 0; f < 2; f++)
    {
      g_autoptr(GError) error = NULL;
      g_autoptr(FmDocument) doc = open_fixture (f == 0 ? "tests/fixtures/pdf/cls-expunit-cm.pdf" :
                                                         "tests/fixtures/pdf/cls-expunit-lmodern.pdf", NULL, &error);
      GPtrArray *r;
      guint units = 0;

      g_assert_no_error (error);
      r = fm_detect_page (doc, 0, NULL, &error);
      g_assert_no_error (error);
      for (guint k = 0; k < r->len; k++)
        {
          const FmRegion *reg = r->pdata[k];
          gsize len = strlen (reg->text);
          if (reg->kind == FM_REGION_INLINE && len > 2 &&
              (g_str_has_suffix (reg->text, " C") || g_str_has_suffix (reg->text, " N")))
            units++;
          g_assert_null (strstr (reg->text, "apples"));
        }
      g_assert_cmpuint (units, ==, 2);
      g_ptr_array_unref (r);
    }

  /* The full stop after \ldots ends the sentence, not the formula (its
   * fourth dot had been taken for one of the ellipsis). */
  for (guint f = 0; f < 2; f++)
    {
      g_autoptr(GError) error = NULL;
      g_autoptr(FmDocument) doc =
        open_fixture (f == 0 ? "tests/fixtures/pdf/cls-joins.pdf" : "tests/fixtures/pdf/cls-joins-xe.pdf", NULL, &error);
      GPtrArray *r;
      gboolean found = FALSE;

      g_assert_no_error (error);
      r = fm_detect_page (doc, 0, NULL, &error);
      g_assert_no_error (error);
      for (guint k = 0; k < r->len; k++)
        {
          const FmRegion *reg = r->pdata[k];
          if (reg->text != NULL && strstr (reg->text, "2.45722") != NULL)
            {
              found = TRUE;
              g_assert_false (g_str_has_suffix (reg->text, "...."));
              g_assert_false (g_str_has_suffix (reg->text, ". . . ."));
            }
        }
      g_assert_true (found);
      g_ptr_array_unref (r);
    }

  /* No region on the prose that is not math (the truth's "decoys"). */
  {
    g_autofree char *truth_path = g_strdup_printf ("%s/tests/fixtures/pdf/cls-prose.truth.json", FM_TEST_SRCDIR);
    g_autoptr(GError) error = NULL;
    g_autoptr(FmDocument) doc = open_fixture ("tests/fixtures/pdf/cls-prose.pdf", NULL, &error);
    g_autoptr(JsonParser) parser = json_parser_new ();
    JsonArray *decoys;
    GPtrArray *r;

    g_assert_no_error (error);
    g_assert_true (json_parser_load_from_file (parser, truth_path, &error));
    decoys = json_object_get_array_member (json_node_get_object (json_parser_get_root (parser)), "decoys");
    g_assert_cmpuint (json_array_get_length (decoys), ==, 10);
    r = fm_detect_page (doc, 0, NULL, &error);
    g_assert_no_error (error);
    for (guint t = 0; t < json_array_get_length (decoys); t++)
      {
        JsonArray *b = json_object_get_array_member (json_array_get_object_element (decoys, t), "box");
        FmRect box = { json_array_get_double_element (b, 0), json_array_get_double_element (b, 1),
                       json_array_get_double_element (b, 2), json_array_get_double_element (b, 3) };
        for (guint k = 0; k < r->len; k++)
          {
            FmRegion *reg = r->pdata[k];
            double ix = MIN (box.x1, reg->box.x1) - MAX (box.x0, reg->box.x0);
            double iy = MIN (box.y1, reg->box.y1) - MAX (box.y0, reg->box.y0);
            double area = (reg->box.x1 - reg->box.x0) * (reg->box.y1 - reg->box.y0);
            if (ix > 0 && iy > 0 && ix * iy > 0.3 * area)
              g_error ("region '%s' on prose decoy %u", reg->text, t);
          }
      }
    g_ptr_array_unref (r);
  }
}

/* A page of glyph boxes (12 pt, 4.6 pt wide on a 5 pt pitch, a word space
 * after every sixth glyph at an offset that moves from line to line): two columns 72-301 and 311-540
 * when two_col, one column 72-540 otherwise; the first `overfull` lines of
 * the left column run on into the gutter by 6-9 pt (an unbreakable formula
 * at a line's end). */
static GArray *
gutter_page (gboolean two_col, int overfull)
{
  GArray *boxes = g_array_new (FALSE, FALSE, sizeof (FmRect));

  for (int line = 0; line < 48; line++)
    for (int col = 0; col < (two_col ? 2 : 1); col++)
      {
        double x0 = col == 0 ? 72 : 311, x1 = two_col && col == 0 ? 301 : 540;
        if (two_col && col == 0 && line < overfull)
          x1 += 6 + line % 4;
        /* (a word space of 3 pt after every sixth glyph, the first one
         * after line % 6 glyphs) */
        for (double gx = x0, k = 1; gx < x1 - 0.5; gx += 5 + (((int) k + line) % 6 == 0 ? 3 : 0), k++)
          {
            FmRect r = { gx, 100 + 14 * line, MIN (gx + 4.6, x1), 110 + 14 * line };
            g_array_append_val (boxes, r);
          }
      }
  return boxes;
}

/* Glyph boxes (4.6 pt on a 5 pt pitch, 8 pt high) from x0 to x1 on the
 * line at y. */
static void
glyph_run (GArray *boxes, double x0, double x1, double y)
{
  for (double gx = x0; gx < x1 - 0.5; gx += 5)
    {
      FmRect r = { gx, y, MIN (gx + 4.6, x1), y + 8 };
      g_array_append_val (boxes, r);
    }
}

/* A one-column page at 10 pt (text 72-540) with a centred tabular{rl} of
 * six rows, as on a pdfLaTeX CM page: a heading, a full line of text, the
 * table (left cells "x = 1" ending at one x, right cells starting at one
 * x and ending raggedly), a short line and a centred display. */
static GArray *
table_page (void)
{
  GArray *boxes = g_array_new (FALSE, FALSE, sizeof (FmRect));

  glyph_run (boxes, 72, 130, 100);
  glyph_run (boxes, 72, 540, 120);
  for (int row = 0; row < 6; row++)
    {
      glyph_run (boxes, 207, 232, 140 + 12 * row);
      glyph_run (boxes, 244, 330 + 15 * (row % 3), 140 + 12 * row);
    }
  glyph_run (boxes, 72, 160, 220);
  glyph_run (boxes, 266, 343, 240);
  return boxes;
}

/* The gutter of a two-column page whose left column has overfull lines:
 * an eighth of the lines reaching into the 10 pt gutter had hidden it
 * (an amsart page at 12 pt, dev seed 1056), and its displays were then
 * dissolved as crossed by the other column's text. */
static void
test_layout_gutter_overfull (void)
{
  /* (11 of 48 lines: more than a fifth, allowed near the middle of a full
   * page - a kpfonts amsart page at 12 pt, dev seed 1109) */
  for (int overfull = 0; overfull <= 11; overfull += overfull < 8 ? 4 : 3)
    {
      GArray *b = gutter_page (TRUE, overfull);
      double x0 = 0, x1 = 0;
      g_assert_true (fm_layout_find_gutter ((FmRect *) b->data, sizeof (FmRect), (int) b->len, 612, 12, &x0, &x1));
      g_assert_cmpfloat (x0, >=, 300.5);
      g_assert_cmpfloat (x1, <=, 311.5);
      g_array_unref (b);
    }
  /* one column: its word spaces make no gutter */
  {
    GArray *b = gutter_page (FALSE, 0);
    double x0 = 0, x1 = 0;
    g_assert_false (fm_layout_find_gutter ((FmRect *) b->data, sizeof (FmRect), (int) b->len, 612, 12, &x0, &x1));
    g_array_unref (b);
  }
  /* one column with a centred tabular{rl}: the blank left of the table's
   * right-aligned cells (and the one between its columns) is no gutter -
   * the heading and the paragraph above the table stand on its left only
   * (the strict pass for short right columns took [153 206.5], review of
   * detect12n) */
  {
    GArray *b = table_page ();
    double x0 = 0, x1 = 0;
    g_assert_false (fm_layout_find_gutter ((FmRect *) b->data, sizeof (FmRect), (int) b->len, 612, 10, &x0, &x1));
    g_array_unref (b);
  }
}

/* Turned pages (tools/pdf-truth/rotate-truth.py: qpdf --rotate=+ANGLE, truth
 * boxes turned with the page): regions in displayed coordinates, as good as
 * on the upright page. Before turned text was handled, a /Rotate 90 page lost
 * most formulas. */
static void
test_detect_rotated (void)
{
  const char *names[] = { "truth-xe-1-01-rot90", "truth-xe-1-01-rot180", "truth-xe-1-01-rot270",
                          "truth-1-01-rot270" };

  for (guint i = 0; i < G_N_ELEMENTS (names); i++)
    {
      int matched[3] = { 0 }, predicted[3] = { 0 }, truth[3] = { 0 };
      g_autofree char *pdf_rel = g_strdup_printf ("tests/fixtures/pdf/%s.pdf", names[i]);
      g_autoptr(GError) error = NULL;
      g_autoptr(FmDocument) doc = open_fixture (pdf_rel, NULL, &error);
      GPtrArray *r;
      double w, h;

      g_assert_no_error (error);
      g_assert_true (fm_document_get_page_size (doc, 0, &w, &h, &error));
      r = fm_detect_page (doc, 0, NULL, &error);
      g_assert_no_error (error);
      for (guint k = 0; k < r->len; k++)
        {
          FmRegion *reg = r->pdata[k];
          g_assert_cmpfloat (reg->box.x0, >=, 0);
          g_assert_cmpfloat (reg->box.y0, >=, 0);
          g_assert_cmpfloat (reg->box.x1, <=, w);
          g_assert_cmpfloat (reg->box.y1, <=, h);
        }
      g_ptr_array_unref (r);
      score_fixture (names[i], matched, predicted, truth);
      g_test_message ("%s: display %d/%d of %d, inline %d/%d of %d", names[i], matched[0], predicted[0],
                      truth[0], matched[1], predicted[1], truth[1]);
      g_assert_cmpint (truth[0], >, 0);
      g_assert_cmpint (truth[1], >, 5);
      /* Measured: every region matched on all four (2026-11-24). */
      g_assert_cmpint (matched[0], ==, truth[0]);
      g_assert_cmpint (predicted[0], ==, truth[0]);
      g_assert_cmpfloat ((double) matched[1] / predicted[1], >=, 0.9);
      g_assert_cmpfloat ((double) matched[1] / truth[1], >=, 0.9);
    }
}

/* Sentence punctuation after a formula, typed outside or inside the math
 * ("$x$," and "$x,$", "\\[ ... . \\]"), is not in the region: each region
 * ends left of the period, comma or semicolon that follows it on its line
 * (tests/fixtures/pdf/punct.tex). */
static void
test_detect_punctuation (void)
{
  g_autoptr(GError) error = NULL;
  g_autoptr(FmDocument) doc = open_fixture ("tests/fixtures/pdf/punct.pdf", NULL, &error);
  GPtrArray *r;
  PopplerPage *page;
  char *text;
  PopplerRectangle *rects = NULL;
  guint n_rects = 0;
  int checked = 0, n_display = 0;

  g_assert_no_error (error);
  r = fm_detect_page (doc, 0, NULL, &error);
  g_assert_no_error (error);
  fm_document_lock (doc);
  page = fm_document_get_page_locked (doc, 0, &error);
  g_assert_no_error (error);
  text = poppler_page_get_text (page);
  g_assert_true (poppler_page_get_text_layout (page, &rects, &n_rects));
  fm_document_unlock (doc);
  for (guint i = 0; i < r->len; i++)
    {
      FmRegion *reg = r->pdata[i];
      const char *p = text;
      double nearest = G_MAXDOUBLE;
      gsize len = strlen (reg->text);

      n_display += reg->kind == FM_REGION_DISPLAY;
      g_assert_true (len > 0 && strchr (".,;", reg->text[len - 1]) == NULL);
      /* The middle of the punctuation glyph nearest to the region's right on
       * its line. */
      for (guint k = 0; k < n_rects && *p; k++, p = g_utf8_next_char (p))
        {
          gunichar c = g_utf8_get_char (p);
          double cy = 0.5 * (rects[k].y1 + rects[k].y2);
          if ((c == '.' || c == ',' || c == ';') && cy > reg->box.y0 && cy < reg->box.y1 + 2 &&
              rects[k].x1 > reg->box.x0 && rects[k].x1 - reg->box.x1 < 6 && rects[k].x1 - reg->box.x1 > -3)
            nearest = MIN (nearest, 0.5 * (rects[k].x1 + rects[k].x2));
        }
      if (nearest < G_MAXDOUBLE)
        {
          /* A formula's ink may overhang its advance into the next glyph's
           * box, but never past the punctuation's middle, which its own ink
           * crosses. */
          g_assert_cmpfloat (reg->box.x1, <, nearest);
          checked++;
        }
    }
  g_test_message ("punctuation: %u regions, %d checked", r->len, checked);
  g_assert_cmpint (n_display, ==, 2);
  g_assert_cmpint (r->len, ==, 8);
  g_assert_cmpint (checked, >=, 6);
  g_free (rects);
  g_free (text);
  g_clear_object (&page);
  g_ptr_array_unref (r);
}

/* Formulas with text in them (tests/fixtures/pdf/textmath.body.tex, in CM
 * and in amsart with mathptmx): displays holding \\text{for all}, \\qquad
 * \\text{and}, \\operatorname{Res} and \\mathrm{d}x are whole display regions,
 * text and all; a script-heavy display (a sum with limits and z_1^k z_2^k,
 * whose median glyph is script-sized) is a display, not a piece; bold vectors
 * and \\operatorname{Spec}(A) are found inline. Before the display-line pass
 * the text parts were left out or the displays were missed (real formulas
 * from the shared corpus: display R 0.73, bench/detect/README.md). */
static void
test_detect_text_in_math (void)
{
  const char *names[] = { "textmath-cm", "textmath-ams" };
  int matched[3] = { 0 }, predicted[3] = { 0 }, truth[3] = { 0 };

  for (guint i = 0; i < G_N_ELEMENTS (names); i++)
    {
      g_autofree char *pdf_rel = g_strdup_printf ("tests/fixtures/pdf/%s.pdf", names[i]);
      g_autoptr(GError) error = NULL;
      g_autoptr(FmDocument) doc = open_fixture (pdf_rel, NULL, &error);
      GPtrArray *r;
      gboolean for_all = FALSE, and = FALSE, pole = FALSE;

      g_assert_no_error (error);
      r = fm_detect_page (doc, 0, NULL, &error);
      g_assert_no_error (error);
      for (guint k = 0; k < r->len; k++)
        {
          FmRegion *reg = r->pdata[k];
          if (reg->kind != FM_REGION_DISPLAY)
            continue;
          for_all |= strstr (reg->text, "for all") != NULL && strstr (reg->text, "sup") != NULL;
          and |= strstr (reg->text, "and") != NULL && strstr (reg->text, "<") != NULL;
          pole |= strstr (reg->text, "pole") != NULL && strstr (reg->text, "Res") != NULL;
        }
      g_assert_true (for_all);
      g_assert_true (and);
      g_assert_true (pole);
      g_ptr_array_unref (r);
      score_fixture (names[i], matched, predicted, truth);
    }
  g_test_message ("text in math: display %d/%d of %d, inline %d/%d of %d", matched[0], predicted[0], truth[0],
                  matched[1], predicted[1], truth[1]);
  g_assert_cmpint (truth[0], ==, 12);
  g_assert_cmpint (matched[0], ==, truth[0]);
  g_assert_cmpint (predicted[0], ==, truth[0]);
  /* Measured inline P 0.862, R 0.893 (2026-11-25): W = J/s has no math
   * glyph, units after a word space split off. */
  g_assert_cmpfloat ((double) matched[1] / predicted[1], >=, 0.8);
  g_assert_cmpfloat ((double) matched[1] / truth[1], >=, 0.85);
}

static void
test_detect_fixtures (void)
{
  /* Seed 1 of tools/pdf-truth/make-truth.py: the five default font setups,
   * and txfonts/pxfonts (--fonts txfonts,pxfonts --prefix truth-tx), whose
   * math fonts Poppler names "Pxex", "Rpxmi". */
  /* And XeLaTeX/LuaLaTeX with unicode-math (--engine xelatex --fonts
   * lm-math,stix2-math --prefix truth-xe; --engine lualatex --fonts
   * termes-math,dejavu-math --prefix truth-lua; --count 2): OpenType math
   * fonts, math alphanumerics (U+1D44E...), other radical and fraction boxes. */
  const char *names[] = { "truth-1-00", "truth-1-01", "truth-1-02", "truth-1-03", "truth-1-04",
                          "truth-tx-1-00", "truth-tx-1-01", "truth-xe-1-00", "truth-xe-1-01",
                          "truth-lua-1-00", "truth-lua-1-01" };
  int matched[3] = { 0 }, predicted[3] = { 0 }, truth[3] = { 0 };
  double dp, dr, ip, ir;

  for (guint i = 0; i < G_N_ELEMENTS (names); i++)
    score_fixture (names[i], matched, predicted, truth);
  dp = (double) matched[0] / MAX (predicted[0], 1);
  dr = (double) matched[0] / MAX (truth[0], 1);
  ip = (double) matched[1] / MAX (predicted[1], 1);
  ir = (double) matched[1] / MAX (truth[1], 1);
  g_test_message ("fixtures: display P %.3f R %.3f (%d truth), inline P %.3f R %.3f (%d truth)",
                  dp, dr, truth[0], ip, ir, truth[1]);
  g_assert_cmpint (truth[0], >, 10);
  g_assert_cmpint (truth[1], >, 20);
  /* Measured 1.000/1.000 display, 0.988/1.000 inline (2026-11-22); the
   * floors leave room for other Poppler versions' text order. */
  g_assert_cmpfloat (dp, >=, 0.95);
  g_assert_cmpfloat (dr, >=, 0.95);
  g_assert_cmpfloat (ip, >=, 0.90);
  g_assert_cmpfloat (ir, >=, 0.90);
}

static void
test_detect_baseline_rule_differs (void)
{
  g_autoptr(GError) error = NULL;
  g_autoptr(FmDocument) doc = open_fixture ("tests/fixtures/pdf/truth-1-01.pdf", NULL, &error);
  FmDetectOptions opts = fm_detect_default_options ();
  GPtrArray *full, *base;

  g_assert_no_error (error);
  full = fm_detect_page (doc, 0, &opts, &error);
  opts.rule = FM_DETECT_RULE_PDFMATHTRANSLATE;
  opts.refine_with_bitmap = FALSE;
  base = fm_detect_page (doc, 0, &opts, &error);
  g_assert_no_error (error);
  g_assert_cmpuint (full->len, >, 0);
  g_assert_cmpuint (base->len, >, 0);
  g_ptr_array_unref (full);
  g_ptr_array_unref (base);
}

static void
test_crop_scale (void)
{
  g_autoptr(GError) error = NULL;
  g_autoptr(FmDocument) doc = open_fixture ("tests/fixtures/pdf/truth-1-00.pdf", NULL, &error);
  GPtrArray *r = fm_detect_page (doc, 0, NULL, &error);
  FmRegion *first;
  g_autoptr(FmGrayImage) crop = NULL;
  double scale;

  g_assert_no_error (error);
  g_assert_cmpuint (r->len, >, 0);
  first = r->pdata[0];
  scale = fm_region_crop_scale (first, 20);
  g_assert_cmpfloat_with_epsilon (scale, 20.0 / first->font_size, 1e-9);
  crop = fm_region_render_crop (doc, first, 20, 0.0, &error);
  g_assert_no_error (error);
  g_assert_cmpint (crop->width, ==, (int) ceil ((first->box.x1 - first->box.x0) * scale - 1e-6));
  g_ptr_array_unref (r);
}

static void
test_export (void)
{
  g_autoptr(GError) error = NULL;
  g_autoptr(FmDocument) doc = open_fixture ("tests/fixtures/pdf/truth-1-01.pdf", NULL, &error);
  g_autoptr(FmExportJob) job = fm_export_job_new ("truth-1-01.pdf");
  GPtrArray *r = fm_detect_page (doc, 0, NULL, &error);
  g_autofree char *tex = NULL, *md = NULL, *json = NULL;
  int page = 0;

  g_assert_no_error (error);
  g_array_append_val (job->pages, page);
  g_ptr_array_add (job->page_notes, NULL);
  for (guint i = 0; i < r->len; i++)
    {
      FmRegion *reg = fm_region_copy (r->pdata[i]);
      if (i == 0)
        reg->latex = g_strdup ("\\frac{a}{b}");
      else if (i == 1)
        reg->latex = g_strdup ("\\frac{a}{b");   /* unbalanced: must become a comment */
      g_ptr_array_add (job->regions, reg);
    }
  g_ptr_array_unref (r);
  tex = fm_export_to_string (job, doc, FM_EXPORT_TEX, &error);
  g_assert_no_error (error);
  g_assert_nonnull (strstr (tex, "\\begin{document}"));
  g_assert_nonnull (strstr (tex, "% unbalanced LaTeX: \\frac{a}{b\n"));
  md = fm_export_to_string (job, doc, FM_EXPORT_MARKDOWN, &error);
  g_assert_no_error (error);
  g_assert_nonnull (strstr (md, "$$"));
  json = fm_export_to_string (job, doc, FM_EXPORT_JSON, &error);
  g_assert_nonnull (strstr (json, "\"latex\" : \"\\\\frac{a}{b}\""));

  g_assert_true (fm_latex_check_compiles ("\\left( x \\right)"));
  g_assert_true (fm_latex_check_compiles ("\\{ a \\}"));
  g_assert_false (fm_latex_check_compiles ("\\left( x"));
  g_assert_false (fm_latex_check_compiles ("}{"));
  g_assert_false (fm_latex_check_compiles ("a $ b"));
  g_assert_false (fm_latex_check_compiles ("\\begin{matrix} a"));
}

/* Several threads on one document: the document lock serialises Poppler. */
static gpointer
render_worker (gpointer data)
{
  FmDocument *doc = data;
  for (int i = 0; i < 4; i++)
    {
      FmRect rect = { 50.0 + i * 10, 100, 300, 200 };
      FmGrayImage *g = fm_render_page_rect_gray (doc, 0, &rect, 1.5, NULL);
      g_assert_nonnull (g);
      fm_gray_image_free (g);
      g_ptr_array_unref (fm_detect_page (doc, 0, NULL, NULL));
    }
  return NULL;
}

static void
on_rendered (GObject *source, GAsyncResult *result, gpointer user_data)
{
  GError *error = NULL;
  cairo_surface_t *s = fm_render_page_rect_finish (FM_DOCUMENT (source), result, &error);
  g_assert_no_error (error);
  g_assert_cmpint (cairo_image_surface_get_width (s), ==, 153);
  cairo_surface_destroy (s);
  g_main_loop_quit (user_data);
}

static void
test_threads_and_async (void)
{
  g_autoptr(GError) error = NULL;
  g_autoptr(FmDocument) doc = open_fixture ("tests/fixtures/pdf/truth-1-02.pdf", NULL, &error);
  GThread *threads[3];
  GMainLoop *loop = g_main_loop_new (NULL, FALSE);

  g_assert_no_error (error);
  for (int i = 0; i < 3; i++)
    threads[i] = g_thread_new ("render", render_worker, doc);
  for (int i = 0; i < 3; i++)
    g_thread_join (threads[i]);

  fm_render_page_rect_async (doc, 0, NULL, 0.25, NULL, on_rendered, loop);
  g_main_loop_run (loop);
  g_main_loop_unref (loop);
}

/* The outline (bookmarks) with nesting and pages, from a PDF made with cairo;
 * none for a PDF without one. */
static void
test_outline (void)
{
  g_autofree char *dir = g_dir_make_tmp ("fm-outline-XXXXXX", NULL);
  g_autofree char *path = g_build_filename (dir, "outline.pdf", NULL);
  cairo_surface_t *surface = cairo_pdf_surface_create (path, 300, 300);
  cairo_t *cr = cairo_create (surface);
  g_autoptr(GError) error = NULL;
  g_autoptr(FmDocument) doc = NULL;
  g_autoptr(FmDocument) plain = NULL;
  g_autoptr(GPtrArray) outline = NULL;
  g_autoptr(GPtrArray) none = NULL;
  int top;

  for (int i = 0; i < 3; i++)
    cairo_show_page (cr);
  top = cairo_pdf_surface_add_outline (surface, CAIRO_PDF_OUTLINE_ROOT, "One", "page=1", 0);
  cairo_pdf_surface_add_outline (surface, top, "One.a", "page=3", 0);
  cairo_pdf_surface_add_outline (surface, CAIRO_PDF_OUTLINE_ROOT, "Two", "page=2", 0);
  cairo_destroy (cr);
  cairo_surface_destroy (surface);

  doc = fm_document_new_for_path (path, NULL, &error);
  g_assert_no_error (error);
  outline = fm_document_dup_outline (doc);
  g_assert_cmpuint (outline->len, ==, 3);
  {
    const FmOutlineEntry *a = g_ptr_array_index (outline, 0);
    const FmOutlineEntry *b = g_ptr_array_index (outline, 1);
    const FmOutlineEntry *c = g_ptr_array_index (outline, 2);
    g_assert_cmpstr (a->title, ==, "One");
    g_assert_cmpint (a->page, ==, 0);
    g_assert_cmpint (a->depth, ==, 0);
    g_assert_cmpstr (b->title, ==, "One.a");
    g_assert_cmpint (b->page, ==, 2);
    g_assert_cmpint (b->depth, ==, 1);
    g_assert_cmpstr (c->title, ==, "Two");
    g_assert_cmpint (c->page, ==, 1);
    g_assert_cmpint (c->depth, ==, 0);
  }
  plain = open_fixture ("data/samples/sample.pdf", NULL, &error);
  g_assert_no_error (error);
  none = fm_document_dup_outline (plain);
  g_assert_cmpuint (none->len, ==, 0);
  g_unlink (path);
  g_rmdir (dir);
}

/* fm_document_close_gate (the window's exit): it waits for a thread inside
 * Poppler, and a thread that comes later never gets in. In a subprocess,
 * because the gate stays closed for the rest of the process. */
static gpointer
gate_holder (gpointer data)
{
  fm_document_lock (data);
  g_usleep (300 * 1000);
  fm_document_unlock (data);
  return NULL;
}

/* Globals: the subprocess exits with the latecomer still parked, and leak
 * checkers must see the document as reachable. */
static FmDocument *gate_doc;
static gint gate_latecomer_in;

static gpointer
gate_latecomer (gpointer data)
{
  fm_document_lock (gate_doc);
  g_atomic_int_set (&gate_latecomer_in, 1);
  fm_document_unlock (gate_doc);
  return NULL;
}

static void
test_close_gate (void)
{
  if (g_test_subprocess ())
    {
      g_autoptr(GError) error = NULL;
      gint64 t0;

      gate_doc = open_fixture ("tests/fixtures/pdf/truth-1-02.pdf", NULL, &error);
      g_assert_no_error (error);
      g_thread_unref (g_thread_new ("holder", gate_holder, gate_doc));
      g_usleep (50 * 1000);  /* the holder is inside */
      t0 = g_get_monotonic_time ();
      g_assert_true (fm_document_close_gate (10 * G_USEC_PER_SEC));
      g_assert_cmpint (g_get_monotonic_time () - t0, >=, 150 * 1000);
      g_thread_unref (g_thread_new ("latecomer", gate_latecomer, NULL));
      g_usleep (200 * 1000);
      g_assert_cmpint (g_atomic_int_get (&gate_latecomer_in), ==, 0);
      return;  /* exits with the latecomer parked at the gate */
    }
  g_test_trap_subprocess (NULL, 60 * G_USEC_PER_SEC, G_TEST_SUBPROCESS_DEFAULT);
  g_test_trap_assert_passed ();
}

int
main (int argc, char **argv)
{
  g_test_init (&argc, &argv, NULL);
  g_test_add_func ("/pdf/render/scale-rule", test_scale_rule);
  g_test_add_func ("/pdf/render/page-and-crop", test_render_page_and_crop);
  g_test_add_func ("/pdf/render/pixel-cap", test_render_pixel_cap);
  g_test_add_func ("/pdf/render/shortcuts", test_render_shortcuts);
  g_test_add_func ("/pdf/render/buffer-sizes", test_render_buffer_sizes);
  g_test_add_func ("/pdf/render/rotation", test_rotation);
  g_test_add_func ("/pdf/document/bad-inputs", test_bad_inputs);
  g_test_add_func ("/pdf/document/outline", test_outline);
  g_test_add_func ("/pdf/document/truncated-bytes", test_bytes_fuzz_like);
  g_test_add_func ("/pdf/pages/parse", test_pages_parse);
  g_test_add_func ("/pdf/detect/font-rules", test_font_rules);
  g_test_add_func ("/pdf/detect/fixtures", test_detect_fixtures);
  g_test_add_func ("/pdf/detect/rotated", test_detect_rotated);
  g_test_add_func ("/pdf/detect/punctuation", test_detect_punctuation);
  g_test_add_func ("/pdf/detect/text-in-math", test_detect_text_in_math);
  g_test_add_func ("/pdf/detect/classes", test_detect_classes);
  g_test_add_func ("/pdf/detect/inline-cases", test_detect_inline_cases);
  g_test_add_func ("/pdf/detect/aligned-edge", test_detect_aligned_edge);
  g_test_add_func ("/pdf/layout/gutter-overfull", test_layout_gutter_overfull);
  g_test_add_func ("/pdf/detect/baseline-rule", test_detect_baseline_rule_differs);
  g_test_add_func ("/pdf/detect/crop-scale", test_crop_scale);
  g_test_add_func ("/pdf/export/formats", test_export);
  g_test_add_func ("/pdf/document/threads-and-async", test_threads_and_async);
  g_test_add_func ("/pdf/document/close-gate", test_close_gate);
  return g_test_run ();
}
