/* test-export.c - the JSON writer gives json-glib's bytes without its node
 * tree; the tex export's LaTeX check: what it accepts compiles with
 * pdflatex, and what it rejects as an error would have stopped pdflatex.
 * The compile checks skip without pdflatex on PATH. */
#include "fm-export.h"
#include "fm-latex-check.h"

#include <glib/gstdio.h>
#include <json-glib/json-glib.h>
#include <math.h>
#include <string.h>

/* Formulas of the kinds the recogniser writes, all valid. */
static const char *const good[] = {
  "E=mc^{2}",
  "x=\\frac{-b\\pm\\sqrt{b^{2}-4ac}}{2a}",
  "\\int_{-\\infty}^{\\infty}e^{-x^{2}}dx=\\sqrt{\\pi}",
  "\\sum\\limits_{n=0}^{\\infty}x^{n}=\\frac{1}{1-x}",
  "\\det\\begin{pmatrix}a&b\\\\c&d\\end{pmatrix}=ad-bc",
  "\\lim_{n\\to\\infty}\\left(1+\\frac{1}{n}\\right)^{n}=e",
  "f'(x)=\\cos x",
  "f''^{2}",
  "\\sqrt[3]{x}+\\sqrt\\alpha",
  "\\left.\\frac{\\partial f}{\\partial x}\\right|_{x=0}",
  "\\left\\{x\\middle|x>0\\right\\}",
  "\\begin{cases}1&x>0\\\\0&\\text{otherwise}\\end{cases}",
  "\\begin{array}{cc|l}a&b&c\\\\\\hline d&e&f\\end{array}",
  "\\begin{aligned}a&=b\\\\&=c\\end{aligned}",
  "\\operatorname{H}_{\\mathcal{O}}\\mathscr{L}\\coloneqq\\mathbb{R}",
  "\\sum_{\\substack{i<j\\\\j<n}}a_{ij}",
  "{n\\choose k}",
  "\\bigl(x\\bigr)\\Bigg\\|y\\Bigg\\|",
  "x\\,y\\;z\\!w\\quad\\{a\\}",
  "\\overbrace{a+b}^{n}\\underset{x}{\\arg\\max}",
};

/* Errors for pdflatex: each stops a document. */
static const char *const bad[] = {
  "\\left(a&b\\right)",                         /* & outside an alignment    */
  "\\sqrt\\sqrt22",                              /* argument takes arguments  */
  "x^{a}^{b}",                                   /* double superscript        */
  "x_{1}_{2}",                                   /* double subscript          */
  "x^{2}'",                                      /* prime after a superscript */
  "\\begin{pmatrix}a\\end{Vmatrix}",            /* environments do not match */
  "\\begin{aligned}a&b",                         /* unclosed environment      */
  "\\frac{a}",                                   /* missing argument          */
  "\\foo x",                                     /* undefined command         */
  "x\\limits^{2}",                               /* \limits after no operator */
  "{a\\choose b\\choose c}",                     /* two \choose in a group    */
  "\\begin{matrix}{a&b}\\end{matrix}",          /* & inside braces           */
  "x^",                                          /* script without argument   */
  "\\left(x",                                    /* no \right                 */
  "a}{",                                         /* braces                    */
  "\\text{a^b}",                                 /* math in text mode         */
  "\\begin{array}a\\end{array}",                /* array without columns     */
};

/* Rejected to be safe, though some would compile. */
static const char *const refused[] = {
  "", "  ", "a $ b", "50% off", "x#1", "∥x∥", "a\\\\b" /* \\ outside an alignment */, NULL,
};

/* Well-formed whatever the packages: commands and environments this
 * parser does not know, non-ASCII. */
static const char *const well_formed[] = {
  "\\foo x", "X\\xhookrightarrow{f}Y", "∥x∥", "\\text{caf\\'e é}", "{}^{14}C",
  "\\begin{alignat*}{2}a&=b\\\\&=c\\end{alignat*}", "\\bigsqcup\\limits_{i}A_{i}",
  "\\left\\lbrace x\\right.", "\\begin{array}{p{2cm}@{}c}a&b\\end{array}", "\\begin{aligned}a\\\\[2pt]b\\end{aligned}",
};

/* Not well-formed LaTeX, whatever the packages: what a text-layer reading
 * must never be sure of. */
static const char *const ill_formed[] = {
  "\\lim_{n\\to\\infty}_{n}^{1}=0",                   /* a fraction's bar lost */
  "^{2}x", "\\frac{^{1}}{n}", "\\sqrt{'}",                /* scripts without base  */
  "\\begin{cases}1&^{2}\\end{cases}", "\\begin{cases}1\\\\^{2}\\end{cases}",
  "\\begin{foo}a\\end{bar}", "\\left\\lbrace x", "x\\right)", "\\text{a_b}",
};

static gboolean
pdflatex_compiles (const char *const *formulas, gsize n, gboolean display)
{
  g_autofree char *dir = g_dir_make_tmp ("fm-export-XXXXXX", NULL);
  g_autofree char *tex = g_build_filename (dir, "t.tex", NULL);
  g_autoptr(GString) doc = g_string_new ("\\documentclass{article}\\usepackage{amsmath,amssymb}"
                                          "\\providecommand{\\coloneqq}{\\mathrel{:}=}"
                                          "\\providecommand{\\mathscr}{\\mathcal}\\begin{document}\n");
  const char *argv[] = { "pdflatex", "-interaction=nonstopmode", "-halt-on-error", "-no-shell-escape",
                         "t.tex", NULL };
  int status = -1;
  g_autoptr(GError) error = NULL;
  g_autofree char *out = NULL, *err = NULL;

  g_assert_nonnull (dir);
  for (gsize i = 0; i < n; i++)
    g_string_append_printf (doc, display ? "\\begin{equation*}\n%s\n\\end{equation*}\n" : "$%s$\\par\n",
                            formulas[i]);
  g_string_append (doc, "\\end{document}\n");
  g_assert_true (g_file_set_contents (tex, doc->str, -1, NULL));
  g_assert_true (g_spawn_sync (dir, (char **) argv, NULL, G_SPAWN_SEARCH_PATH, NULL, NULL, &out, &err,
                               &status, &error));
  /* Leave nothing behind. */
  {
    g_autoptr(GDir) d = g_dir_open (dir, 0, NULL);
    const char *name;
    while (d && (name = g_dir_read_name (d)))
      {
        g_autofree char *p = g_build_filename (dir, name, NULL);
        g_unlink (p);
      }
    g_rmdir (dir);
  }
  return g_spawn_check_wait_status (status, NULL);
}

static void
test_check_verdicts (void)
{
  for (gsize i = 0; i < G_N_ELEMENTS (good); i++)
    if (!fm_latex_check_compiles (good[i]))
      g_error ("rejected valid LaTeX: %s", good[i]);
  for (gsize i = 0; i < G_N_ELEMENTS (bad); i++)
    if (fm_latex_check_compiles (bad[i]))
      g_error ("accepted LaTeX that stops pdflatex: %s", bad[i]);
  for (gsize i = 0; refused[i]; i++)
    g_assert_false (fm_latex_check_compiles (refused[i]));
  g_assert_false (fm_latex_check_compiles (NULL));
}

/* The well-formed check takes any command as defined and refuses a script
 * without a base, otherwise as strict: the valid ones pass, every error
 * but an undefined command and math in text mode fails. */
static void
test_check_well_formed (void)
{
  for (gsize i = 0; i < G_N_ELEMENTS (good); i++)
    if (!fm_latex_check_well_formed (good[i]))
      g_error ("not well-formed, but valid: %s", good[i]);
  for (gsize i = 0; i < G_N_ELEMENTS (well_formed); i++)
    if (!fm_latex_check_well_formed (well_formed[i]))
      g_error ("not well-formed, but is: %s", well_formed[i]);
  for (gsize i = 0; i < G_N_ELEMENTS (bad); i++)
    if (fm_latex_check_well_formed (bad[i]) != (strcmp (bad[i], "\\foo x") == 0))
      g_error ("well-formed wrongly: %s", bad[i]);
  for (gsize i = 0; i < G_N_ELEMENTS (ill_formed); i++)
    if (fm_latex_check_well_formed (ill_formed[i]))
      g_error ("well-formed, but is not: %s", ill_formed[i]);
  g_assert_false (fm_latex_check_well_formed (NULL));
  g_assert_false (fm_latex_check_well_formed (" "));
}

static void
test_pdflatex (void)
{
  g_autofree char *pdflatex = g_find_program_in_path ("pdflatex");

  if (pdflatex == NULL)
    {
      g_test_skip ("no pdflatex");
      return;
    }
  /* The good ones compile together, inline and displayed... */
  g_assert_true (pdflatex_compiles (good, G_N_ELEMENTS (good), FALSE));
  g_assert_true (pdflatex_compiles (good, G_N_ELEMENTS (good), TRUE));
  /* ...and each bad one really stops pdflatex (so the check is not just
   * stricter than it needs to be). */
  for (gsize i = 0; i < G_N_ELEMENTS (bad); i++)
    if (pdflatex_compiles (&bad[i], 1, TRUE))
      g_error ("pdflatex compiled what the check calls an error: %s", bad[i]);
}

/* The JSON writer before it streamed (json-glib node tree, pretty, indent
 * 1), kept as the reference: the streamed writer must give the same bytes. */
static double
ref_round2 (double v)
{
  return round (v * 100.0) / 100.0;
}

static char *
reference_json (FmExportJob *job)
{
  g_autoptr(JsonBuilder) b = json_builder_new ();
  g_autoptr(JsonGenerator) gen = json_generator_new ();
  g_autoptr(JsonNode) root = NULL;
  g_autofree char *s = NULL;

#define STR_OR_NULL(v) ((v) ? json_builder_add_string_value (b, (v)) : json_builder_add_null_value (b))
  json_builder_begin_object (b);
  json_builder_set_member_name (b, "format");
  json_builder_add_string_value (b, "formulate-pdf-1");
  json_builder_set_member_name (b, "source");
  json_builder_add_string_value (b, job->source);
  json_builder_set_member_name (b, "title");
  STR_OR_NULL (job->title);
  json_builder_set_member_name (b, "n_pages");
  json_builder_add_int_value (b, job->n_pages);
  json_builder_set_member_name (b, "recognized");
  json_builder_add_boolean_value (b, job->recognized);
  json_builder_set_member_name (b, "text_reader");
  json_builder_add_boolean_value (b, job->text_reader);
  if (job->model)
    {
      json_builder_set_member_name (b, "model");
      json_builder_add_string_value (b, job->model);
    }
  if (job->device)
    {
      json_builder_set_member_name (b, "device");
      json_builder_add_string_value (b, job->device);
    }
  json_builder_set_member_name (b, "units");
  json_builder_add_string_value (b, "pt, origin top-left of the displayed page");
  json_builder_set_member_name (b, "pages");
  json_builder_begin_array (b);
  for (guint i = 0; i < job->pages->len; i++)
    {
      json_builder_begin_object (b);
      json_builder_set_member_name (b, "page");
      json_builder_add_int_value (b, g_array_index (job->pages, int, i) + 1);
      json_builder_set_member_name (b, "note");
      STR_OR_NULL (i < job->page_notes->len ? (const char *) job->page_notes->pdata[i] : NULL);
      json_builder_set_member_name (b, "analysis");
      STR_OR_NULL (i < job->page_analysis->len ? (const char *) job->page_analysis->pdata[i] : NULL);
      json_builder_end_object (b);
    }
  json_builder_end_array (b);
  json_builder_set_member_name (b, "regions");
  json_builder_begin_array (b);
  for (guint i = 0; i < job->regions->len; i++)
    {
      FmRegion *r = job->regions->pdata[i];
      json_builder_begin_object (b);
      json_builder_set_member_name (b, "page");
      json_builder_add_int_value (b, r->page + 1);
      json_builder_set_member_name (b, "kind");
      json_builder_add_string_value (b, fm_region_kind_to_string (r->kind));
      json_builder_set_member_name (b, "box");
      json_builder_begin_array (b);
      json_builder_add_double_value (b, ref_round2 (r->box.x0));
      json_builder_add_double_value (b, ref_round2 (r->box.y0));
      json_builder_add_double_value (b, ref_round2 (r->box.x1));
      json_builder_add_double_value (b, ref_round2 (r->box.y1));
      json_builder_end_array (b);
      json_builder_set_member_name (b, "font_size");
      json_builder_add_double_value (b, ref_round2 (r->font_size));
      json_builder_set_member_name (b, "text");
      json_builder_add_string_value (b, r->text ? r->text : "");
      json_builder_set_member_name (b, "latex");
      STR_OR_NULL (r->latex);
      json_builder_set_member_name (b, "confidence");
      if (r->latex && r->confidence >= 0)
        json_builder_add_double_value (b, round (r->confidence * 1000.0) / 1000.0);
      else
        json_builder_add_null_value (b);
      json_builder_set_member_name (b, "provenance");
      STR_OR_NULL (r->latex ? fm_provenance_to_string (r->provenance) : NULL);
      if (r->kind == FM_REGION_NUMBER)
        {
          json_builder_set_member_name (b, "label_of");
          if (r->label_of >= 0)
            json_builder_add_int_value (b, r->label_of);
          else
            json_builder_add_null_value (b);
        }
      json_builder_set_member_name (b, "recognize_ms");
      json_builder_add_double_value (b, ref_round2 (r->recognize_ms));
      json_builder_end_object (b);
    }
  json_builder_end_array (b);
  json_builder_set_member_name (b, "timings");
  json_builder_begin_object (b);
  json_builder_set_member_name (b, "detect_ms");
  json_builder_add_double_value (b, ref_round2 (job->detect_ms));
  json_builder_set_member_name (b, "recognize_ms");
  json_builder_add_double_value (b, ref_round2 (job->recognize_ms));
  json_builder_set_member_name (b, "total_ms");
  json_builder_add_double_value (b, ref_round2 (job->total_ms));
  json_builder_end_object (b);
  json_builder_end_object (b);
#undef STR_OR_NULL

  root = json_builder_get_root (b);
  json_generator_set_root (gen, root);
  json_generator_set_pretty (gen, TRUE);
  json_generator_set_indent (gen, 1);
  s = json_generator_to_data (gen, NULL);
  return g_strconcat (s, "\n", NULL);
}

static FmRegion *
add_region (FmExportJob *job, int page, FmRegionKind kind, double x0, double y0,
            const char *text, const char *latex)
{
  FmRect box = { x0, y0, x0 + 123.456789, y0 + 10.005 };
  FmRegion *r = fm_region_new (page, kind, &box);

  r->font_size = 9.9626;
  r->text = g_strdup (text);
  r->latex = g_strdup (latex);
  r->confidence = 0.87654;
  r->recognize_ms = 12.3456;
  r->provenance = FM_PROVENANCE_IMAGE;
  g_ptr_array_add (job->regions, r);
  return r;
}

/* A job with every field kind: null and unicode titles, notes and errors,
 * analysis, equation numbers with and without their display, formulas not
 * recognised, escapes in every string, awkward doubles. */
static FmExportJob *
every_field_job (gboolean with_title)
{
  /* Not UTF-8: the job makes it valid, as it does for real file names. */
  FmExportJob *job = fm_export_job_new ("/tmp/\xc3\xa9t\xc3\xa9 \"q\"\\\xff.pdf");
  FmRegion *r;
  int pages[] = { 0, 1, 4, 6 };

  if (with_title)
    job->title = g_strdup ("Σ über \"Titel\"\ttab\nline\x01\x7f 𝔸");
  job->n_pages = 7;
  job->recognized = TRUE;
  job->text_reader = TRUE;
  job->model = g_strdup ("/models/formulate-v1.safetensors");
  job->device = g_strdup ("cpu");
  g_array_append_vals (job->pages, pages, G_N_ELEMENTS (pages));
  g_ptr_array_add (job->page_notes, NULL);
  g_ptr_array_add (job->page_notes, g_strdup ("no text layer: read from pixels"));
  g_ptr_array_add (job->page_notes, g_strdup ("error: page could not be read (\"broken xref\")"));
  /* page_notes and page_analysis shorter than pages: the rest are null. */
  g_ptr_array_add (job->page_analysis, (gpointer) "text layer");
  g_ptr_array_add (job->page_analysis, (gpointer) "pixels");
  g_ptr_array_add (job->page_analysis, NULL);

  add_region (job, 0, FM_REGION_DISPLAY, 72.0, 100.0, "∫ e−x² dx = √π", "\\int e^{-x^{2}}dx=\\sqrt{\\pi}");
  r = add_region (job, 0, FM_REGION_NUMBER, 500.0, 100.0, "(1.1)", NULL);
  r->label_of = 0;
  r = add_region (job, 0, FM_REGION_NUMBER, 500.0, 130.0, "(1.2)", NULL);
  r->label_of = -1;
  r = add_region (job, 1, FM_REGION_INLINE, 0.1, 1.0 / 3.0, "a\\b \"c\" \b\f\r", "\\text{\"}");
  r->provenance = FM_PROVENANCE_TEXT;
  r->confidence = -1.0;
  r = add_region (job, 1, FM_REGION_INLINE, -0.0, 1e16, NULL, "x");
  r->provenance = FM_PROVENANCE_TEXT_IMAGE;
  r->confidence = 1.0;
  r->font_size = 0.0;
  r->recognize_ms = 0.004;
  r = add_region (job, 4, FM_REGION_DISPLAY, 72.0, 700.0, "日本語 ✓", NULL);  /* not recognised */
  r = add_region (job, 6, FM_REGION_INLINE, 10.0, 20.0, "x", "y");
  r->provenance = FM_PROVENANCE_NONE;
  job->detect_ms = 1234.5678;
  job->recognize_ms = 0.0;
  job->total_ms = 99999.999;
  return job;
}

static void
assert_same_and_parses (FmExportJob *job)
{
  g_autoptr(GError) error = NULL;
  g_autofree char *streamed = fm_export_to_string (job, NULL, FM_EXPORT_JSON, &error);
  g_autofree char *reference = reference_json (job);
  g_autoptr(JsonParser) parser = json_parser_new ();

  g_assert_no_error (error);
  g_assert_cmpstr (streamed, ==, reference);
  g_assert_true (g_utf8_validate (streamed, -1, NULL));
  g_assert_true (json_parser_load_from_data (parser, streamed, -1, &error));
  g_assert_no_error (error);
}

static void
test_json_same_as_json_glib (void)
{
  g_autoptr(FmExportJob) full = every_field_job (TRUE);
  g_autoptr(FmExportJob) untitled = every_field_job (FALSE);
  g_autoptr(FmExportJob) empty = fm_export_job_new ("empty.pdf");
  g_autoptr(GError) error = NULL;
  g_autofree char *text = NULL;
  g_autoptr(JsonParser) parser = json_parser_new ();
  JsonObject *root, *region;
  JsonArray *regions, *pages;

  assert_same_and_parses (full);
  assert_same_and_parses (untitled);
  assert_same_and_parses (empty);  /* no pages, no regions: "[]" */

  /* What a reader gets back is what the job holds. */
  text = fm_export_to_string (full, NULL, FM_EXPORT_JSON, &error);
  g_assert_true (json_parser_load_from_data (parser, text, -1, &error));
  root = json_node_get_object (json_parser_get_root (parser));
  g_assert_cmpstr (json_object_get_string_member (root, "source"), ==, full->source);
  g_assert_cmpstr (json_object_get_string_member (root, "title"), ==, full->title);
  pages = json_object_get_array_member (root, "pages");
  g_assert_cmpuint (json_array_get_length (pages), ==, 4);
  g_assert_cmpstr (json_object_get_string_member (json_array_get_object_element (pages, 2), "note"),
                   ==, "error: page could not be read (\"broken xref\")");
  g_assert_true (json_object_get_null_member (json_array_get_object_element (pages, 3), "note"));
  g_assert_true (json_object_get_null_member (json_array_get_object_element (pages, 3), "analysis"));
  regions = json_object_get_array_member (root, "regions");
  g_assert_cmpuint (json_array_get_length (regions), ==, full->regions->len);
  g_assert_cmpint (json_object_get_int_member (json_array_get_object_element (regions, 1), "label_of"), ==, 0);
  g_assert_true (json_object_get_null_member (json_array_get_object_element (regions, 2), "label_of"));
  g_assert_false (json_object_has_member (json_array_get_object_element (regions, 0), "label_of"));
  region = json_array_get_object_element (regions, 3);
  g_assert_cmpstr (json_object_get_string_member (region, "text"), ==, "a\\b \"c\" \b\f\r");
  g_assert_true (json_object_get_null_member (region, "confidence"));
  g_assert_cmpfloat (json_object_get_double_member (region, "font_size"), ==, 9.96);
  g_assert_true (json_object_get_null_member (json_array_get_object_element (regions, 5), "latex"));
  g_assert_cmpstr (json_object_get_string_member (json_array_get_object_element (regions, 5), "text"),
                   ==, "日本語 ✓");
}

/* Where the streamed writer parts from json-glib 1.6 on purpose: bytes it
 * wrote that no JSON parser reads. */
static void
test_json_always_parses (void)
{
  g_autoptr(FmExportJob) job = fm_export_job_new ("a\x1f" "b.pdf");
  FmRect box = { 1e21, 2e300, -1e17, 1e-300 };
  FmRegion *r = fm_region_new (0, FM_REGION_INLINE, &box);
  g_autoptr(GError) error = NULL;
  g_autofree char *text = NULL;
  g_autoptr(JsonParser) parser = json_parser_new ();
  JsonObject *root;
  JsonArray *b;

  r->text = g_strdup ("\x1f");
  g_ptr_array_add (job->regions, r);
  text = fm_export_to_string (job, NULL, FM_EXPORT_JSON, &error);
  g_assert_nonnull (strstr (text, "\"a\\u001fb.pdf\""));
  /* %.17g gives "-1e+17": json-glib 1.6 wrote "-1e+17.0". */
  g_assert_null (strstr (text, "e+17.0"));
  g_assert_nonnull (strstr (text, " -1e+17,"));
  g_assert_true (json_parser_load_from_data (parser, text, -1, &error));
  g_assert_no_error (error);
  root = json_node_get_object (json_parser_get_root (parser));
  g_assert_cmpstr (json_object_get_string_member (root, "source"), ==, "a\x1f" "b.pdf");
  b = json_object_get_array_member (json_array_get_object_element (
        json_object_get_array_member (root, "regions"), 0), "box");
  g_assert_cmpfloat (fabs (json_array_get_double_element (b, 0) - 1e21), <, 1e6);
  g_assert_cmpfloat (json_array_get_double_element (b, 2), ==, -1e17);
  g_assert_cmpfloat (json_array_get_double_element (b, 3), ==, 0.0);
}

int
main (int argc, char **argv)
{
  g_test_init (&argc, &argv, NULL);
  g_test_add_func ("/export/json/same-as-json-glib", test_json_same_as_json_glib);
  g_test_add_func ("/export/json/always-parses", test_json_always_parses);
  g_test_add_func ("/export/latex-check/verdicts", test_check_verdicts);
  g_test_add_func ("/export/latex-check/well-formed", test_check_well_formed);
  g_test_add_func ("/export/latex-check/pdflatex", test_pdflatex);
  return g_test_run ();
}
