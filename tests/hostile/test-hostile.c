/* test-hostile.c - issue 18 in the document library: a PDF that changes
 * under us, the shared export writer, exports of hostile region sets, fonts
 * too large to be true. */
#include "fm-detect.h"
#include "fm-document.h"
#include "fm-export.h"
#include "fm-output-file.h"
#include "fm-region.h"
#include "fm-render.h"

#include <glib/gstdio.h>
#include <math.h>
#include <string.h>
#include <sys/stat.h>

static char *
source_path (const char *rel)
{
  return g_build_filename (g_getenv ("FE_SOURCE_ROOT"), rel, NULL);
}

static char *
temp_dir (void)
{
  g_autoptr(GError) error = NULL;
  char *dir = g_dir_make_tmp ("formulate-hostile-XXXXXX", &error);
  g_assert_no_error (error);
  return dir;
}

static void
remove_dir (const char *dir)
{
  GDir *d = g_dir_open (dir, 0, NULL);
  const char *name;
  while (d && (name = g_dir_read_name (d)))
    {
      g_autofree char *p = g_build_filename (dir, name, NULL);
      g_unlink (p);
    }
  if (d)
    g_dir_close (d);
  g_rmdir (dir);
}

/* The PDF was memory-mapped: pdflatex rewriting it in place while we
 * rendered it killed us with SIGBUS. Now it is read once, whole. */
static void
test_file_shrinks_after_open (void)
{
  g_autofree char *dir = temp_dir ();
  g_autofree char *src = source_path ("tests/fixtures/pdf/punct.pdf");
  g_autofree char *path = g_build_filename (dir, "shrinks.pdf", NULL);
  g_autofree char *contents = NULL;
  gsize len;
  g_autoptr(GError) error = NULL;
  g_autoptr(FmDocument) doc = NULL;
  GPtrArray *regions;

  g_assert_true (g_file_get_contents (src, &contents, &len, NULL));
  g_assert_true (g_file_set_contents (path, contents, (gssize) len, NULL));
  doc = fm_document_new_for_path (path, NULL, &error);
  g_assert_no_error (error);
  g_assert_true (truncate (path, 0) == 0);
  regions = fm_detect_page (doc, 0, NULL, &error);
  g_assert_no_error (error);
  g_assert_nonnull (regions);
  g_assert_cmpuint (regions->len, >, 0);
  g_ptr_array_unref (regions);
  remove_dir (dir);
}

static void
test_scale_clamps_huge_fonts (void)
{
  /* 5000 pt is a scaled-up page: the crop keeps one em at 1000 pt's scale
   * instead of rendering at 10 pt's (100 times too large, over the cap). */
  g_assert_cmpfloat_with_epsilon (fm_render_scale_for_font (5000.0, 20), 0.02, 1e-12);
  g_assert_cmpfloat_with_epsilon (fm_render_scale_for_font (1e300, 20), 0.02, 1e-12);
  g_assert_cmpfloat_with_epsilon (fm_render_scale_for_font (INFINITY, 20), 2.0, 1e-12);
  g_assert_cmpfloat_with_epsilon (fm_render_scale_for_font (999.0, 20), 20.0 / 999.0, 1e-12);
}

static void
test_output_writer (void)
{
  g_autofree char *dir = temp_dir ();
  g_autofree char *input = g_build_filename (dir, "in.pdf", NULL);
  g_autofree char *out = g_build_filename (dir, "out.json", NULL);
  g_autofree char *contents = NULL;
  g_autoptr(GError) error = NULL;
  struct stat st;

  g_assert_true (g_file_set_contents (input, "%PDF-1.4 input", -1, NULL));
  /* the input, however it is named */
  g_assert_false (fm_output_file_write (input, input, "x", 1, &error));
  g_assert_error (error, G_IO_ERROR, G_IO_ERROR_EXISTS);
  g_assert_nonnull (strstr (error->message, "is the input file"));
  g_clear_error (&error);
  g_assert_true (g_file_get_contents (input, &contents, NULL, NULL));
  g_assert_cmpstr (contents, ==, "%PDF-1.4 input");
  g_clear_pointer (&contents, g_free);

  /* a new file, then a private one keeps its mode */
  g_assert_true (fm_output_file_write (out, input, "one", 3, &error));
  g_assert_no_error (error);
  g_assert_true (g_chmod (out, 0600) == 0);
  g_assert_true (fm_output_file_write (out, input, "two", 3, &error));
  g_assert_no_error (error);
  g_assert_true (g_stat (out, &st) == 0);
  g_assert_cmpint (st.st_mode & 07777, ==, 0600);
  g_assert_true (g_file_get_contents (out, &contents, NULL, NULL));
  g_assert_cmpstr (contents, ==, "two");

  /* a directory is refused and named */
  g_assert_false (fm_output_file_write (dir, NULL, "x", 1, &error));
  g_assert_error (error, G_IO_ERROR, G_IO_ERROR_IS_DIRECTORY);
  g_assert_true (g_str_has_prefix (error->message, dir));
  g_clear_error (&error);

  /* a file in a folder that does not exist: the message names the path the
   * user gave, not the temporary file beside it */
  {
    g_autofree char *missing = g_build_filename (dir, "no-such-dir", "x.json", NULL);
    g_assert_false (fm_output_file_write (missing, NULL, "x", 1, &error));
    g_assert_true (g_str_has_prefix (error->message, missing));
    g_assert_null (strstr (error->message, ".json."));
    g_clear_error (&error);
  }
  remove_dir (dir);
}

static FmRegion *
region (int page, FmRegionKind kind, const char *text, const char *latex, int label_of)
{
  FmRect box = { 10, 10, 100, 30 };
  FmRegion *r = fm_region_new (page, kind, &box);
  r->text = g_strdup (text);
  r->latex = g_strdup (latex);
  r->label_of = label_of;
  return r;
}

/* An amsldoc align carries (3.1) and (3.2) on one display: both numbers are
 * kept (one \tag) and none leaks (LSan in the sanitizer build). */
static void
test_tex_keeps_every_number (void)
{
  g_autoptr(FmExportJob) job = fm_export_job_new ("align.pdf");
  g_autofree char *tex = NULL;
  g_autoptr(GError) error = NULL;
  int page = 0;

  g_array_append_val (job->pages, page);
  g_ptr_array_add (job->page_notes, NULL);
  g_ptr_array_add (job->regions, region (0, FM_REGION_DISPLAY, "a = b", "a = b", -1));
  g_ptr_array_add (job->regions, region (0, FM_REGION_NUMBER, "(3.1)", NULL, 0));
  g_ptr_array_add (job->regions, region (0, FM_REGION_NUMBER, "(3.2)", NULL, 0));
  g_ptr_array_add (job->regions, region (0, FM_REGION_DISPLAY, "c = d", "c = d", -1));
  g_ptr_array_add (job->regions, region (0, FM_REGION_NUMBER, "(3.3)", NULL, 3));
  tex = fm_export_to_string (job, NULL, FM_EXPORT_TEX, &error);
  g_assert_no_error (error);
  g_assert_nonnull (strstr (tex, "a = b \\tag{3.1, 3.2}\n"));
  g_assert_nonnull (strstr (tex, "c = d \\tag{3.3}\n"));
}

/* Markdown writes the pages it can read, a note for the one it cannot, as
 * json and tex do; it used to write nothing and fail the run. */
static void
test_md_unreadable_page (void)
{
  g_autofree char *src = source_path ("tests/fixtures/pdf/punct.pdf");
  g_autoptr(GError) error = NULL;
  g_autoptr(FmDocument) doc = fm_document_new_for_path (src, NULL, &error);
  g_autoptr(FmExportJob) job = fm_export_job_new ("punct.pdf");
  g_autofree char *md = NULL;
  int pages[2] = { 0, 7 };  /* punct.pdf has one page: the second cannot be read */

  g_assert_no_error (error);
  g_array_append_vals (job->pages, pages, 2);
  g_ptr_array_add (job->page_notes, NULL);
  g_ptr_array_add (job->page_notes, NULL);
  md = fm_export_to_string (job, doc, FM_EXPORT_MARKDOWN, &error);
  g_assert_no_error (error);
  g_assert_nonnull (md);
  g_assert_nonnull (strstr (md, "> Page 8: "));
  g_assert_nonnull (strstr (md, "We take"));
}

/* Non-UTF-8 file names still make valid UTF-8 exports. */
static void
test_export_source_utf8 (void)
{
  g_autoptr(FmExportJob) job = fm_export_job_new ("caf\351.pdf");
  g_autofree char *json = NULL, *tex = NULL;
  int page = 0;

  g_array_append_val (job->pages, page);
  g_ptr_array_add (job->page_notes, NULL);
  json = fm_export_to_string (job, NULL, FM_EXPORT_JSON, NULL);
  tex = fm_export_to_string (job, NULL, FM_EXPORT_TEX, NULL);
  g_assert_true (g_utf8_validate (json, -1, NULL));
  g_assert_true (g_utf8_validate (tex, -1, NULL));
}

int
main (int argc, char **argv)
{
  g_test_init (&argc, &argv, NULL);
  g_test_add_func ("/hostile/document/file-shrinks-after-open", test_file_shrinks_after_open);
  g_test_add_func ("/hostile/render/huge-fonts-clamped", test_scale_clamps_huge_fonts);
  g_test_add_func ("/hostile/output/writer", test_output_writer);
  g_test_add_func ("/hostile/export/tex-every-number", test_tex_keeps_every_number);
  g_test_add_func ("/hostile/export/md-unreadable-page", test_md_unreadable_page);
  g_test_add_func ("/hostile/export/source-utf8", test_export_source_utf8);
  return g_test_run ();
}
