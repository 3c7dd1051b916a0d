/* mathtext-fixture.c - see mathtext-fixture.h. */
#include "mathtext-fixture.h"

FmDocument *
mathtext_fixture_open (const char *name)
{
  g_autoptr (GError) error = NULL;
  g_autofree char *path = g_build_filename (FM_TEST_SRCDIR, "tests", "fixtures", "pdf", name, NULL);
  FmDocument *doc = fm_document_new_for_path (path, NULL, &error);

  g_assert_no_error (error);
  return doc;
}

FmMathTextResult *
mathtext_fixture_read_page (FmDocument *doc, int page)
{
  g_autoptr (GError) error = NULL;
  double w, h;
  FmRect box;
  g_autoptr (FmRegion) region = NULL;
  FmMathTextResult *res;

  g_assert_true (fm_document_get_page_size (doc, page, &w, &h, NULL));
  box = (FmRect) { 0, 0, w, h };
  region = fm_region_new (page, FM_REGION_DISPLAY, &box);
  res = fm_mathtext_read_region (doc, region, &error);
  g_assert_no_error (error);
  g_assert_nonnull (res);
  return res;
}
