/* The text-layer reader (app/document/fm-mathtext.c): glyph -> LaTeX per font family,
 * the layout parser on hand-made formulas (tests/fixtures/pdf/mathtext.tex,
 * one display per page, made with pdflatex), and a Type 3 region. */
#include "fm-document.h"
#include "fm-mathtext.h"
#include "mathtext-fixture.h"

#include <string.h>

static void
check_glyph (gunichar c, const char *font, const char *want)
{
  g_autofree char *got = fm_mathtext_glyph_latex (c, font);
  g_assert_cmpstr (got, ==, want);
}

static void
test_glyph_mapping (void)
{
  /* Computer Modern / Latin Modern (pdfLaTeX). */
  check_glyph ('x', "ABCDEF+CMMI10", "x");
  check_glyph ('x', "LMMathItalic10-Regular", "x");
  check_glyph ('d', "CMR10", "\\mathrm{d}");
  check_glyph ('2', "CMR7", "2");
  check_glyph ('v', "CMBX10", "\\mathbf{v}");
  check_glyph ('v', "CMMIB10", "\\boldsymbol{v}");
  check_glyph ('R', "MSBM10", "\\mathbb{R}");
  check_glyph ('O', "CMSY10", "\\mathcal{O}");
  check_glyph ('g', "EUFM10", "\\mathfrak{g}");
  check_glyph ('F', "RSFS10", "\\mathscr{F}");
  check_glyph ('A', "CMSS10", "\\mathsf{A}");
  check_glyph ('t', "CMTT10", "\\mathtt{t}");
  check_glyph (0x03B1, "CMMI10", "\\alpha");
  check_glyph (0x03B5, "CMMI10", "\\varepsilon");
  check_glyph (0x03F5, "CMMI10", "\\epsilon");
  check_glyph (0x03D5, "CMMI10", "\\phi");
  check_glyph (0x03C6, "LMMathItalic10-Regular", "\\varphi");
  /* Adobe Symbol (mathptmx) and fourier name their phis the other way round */
  check_glyph (0x03C6, "EMPIMZ+StandardSymL-Slant_167", "\\phi");
  check_glyph (0x03D5, "StandardSymL-Slant_167", "\\varphi");
  check_glyph (0x03C6, "Fourier-Math-Letters-Italic", "\\phi");
  check_glyph (0x2126, "CMR10", "\\Omega");   /* Poppler's OHM SIGN for CMR's Omega */
  check_glyph (0x00B5, "CMMI10", "\\mu");     /* and MICRO SIGN for mu */
  check_glyph (0x2211, "CMEX10", "\\sum");
  check_glyph (0x2264, "CMSY10", "\\leq");
  check_glyph (0x2212, "CMSY10", "-");
  check_glyph ('\\', "CMSY10", "\\setminus");
  /* Times, Palatino, newtx, Libertine: letters in the text italic or a
   * math italic are plain letters, upright ones \mathrm. */
  check_glyph ('x', "NimbusRomNo9L-ReguItal", "x");
  check_glyph ('x', "URWPalladioL-Ital", "x");
  check_glyph ('x', "NewTXMI", "x");
  /* fourier's \\mathcal (Utopia set-up): its own Cal font, not CMSY */
  check_glyph ('O', "Fourier-Math-Cal", "\\mathcal{O}");
  check_glyph ('O', "ABCDEF+Fourier-Math-Cal", "\\mathcal{O}");
  check_glyph ('x', "LibertineMathMI", "x");
  check_glyph ('x', "Times-Roman", "\\mathrm{x}");
  check_glyph ('v', "NimbusRomNo9L-Medi", "\\mathbf{v}");
  /* OpenType math (unicode-math): the style is in the character. */
  check_glyph (0x1D465, "LatinModernMath-Regular", "x");          /* italic x */
  check_glyph ('x', "LatinModernMath-Regular", "\\mathrm{x}");
  check_glyph (0x1D42F, "STIXTwoMath-Regular", "\\mathbf{v}");
  check_glyph (0x211D, "LatinModernMath-Regular", "\\mathbb{R}");
  check_glyph (0x1D53B, "LatinModernMath-Regular", "\\mathbb{D}");
  check_glyph (0x1D4AA, "LatinModernMath-Regular", "\\mathcal{O}");
  /* a pdfLaTeX script face (newtx's stxscr) is \\mathscr; OpenType's
   * script alphabet stays \\mathcal */
  check_glyph (0x1D4AB, "ABCDEF+stxscr", "\\mathscr{P}");
  check_glyph (0x1D4AB, "STIXTwoMath-Regular", "\\mathcal{P}");
  /* STIX Two's division slash, OpenType's \\perp */
  check_glyph (0x2215, "STIXTwoMath", "/");
  check_glyph (0x27C2, "LatinModernMath-Regular", "\\perp");
  check_glyph (0x1D51E, "LatinModernMath-Regular", "\\mathfrak{a}");
  check_glyph (0x1D5A0, "LatinModernMath-Regular", "\\mathsf{A}");
  check_glyph (0x1D6FC, "LatinModernMath-Regular", "\\alpha");    /* italic alpha */
  check_glyph (0x1D7D0, "LatinModernMath-Regular", "\\mathbf{2}");
  check_glyph (0x210E, "LatinModernMath-Regular", "h");           /* Planck's italic h */
  /* No meaning: a private-use code. */
  g_assert_null (fm_mathtext_glyph_latex (0xE000, "CMMI10"));
}

/* A page's reading, shown with its verdict under --verbose. */
static FmMathTextResult *
read_page (FmDocument *doc, int page)
{
  FmMathTextResult *res = mathtext_fixture_read_page (doc, page);
  if (g_test_verbose ())
    g_printerr ("page %d: %s (%s)\n", page, res->latex, res->reason ? res->reason : "certain");
  return res;
}

static void
check_page (FmDocument *doc, int page, const char *want)
{
  FmMathTextResult *res = read_page (doc, page);
  g_assert_cmpstr (res->latex, ==, want);
  g_assert_cmpint (res->verdict, ==, FM_MATHTEXT_CERTAIN);
  g_assert_null (res->reason);
  g_assert_cmpuint (res->symbols->len, >, 0);
  fm_mathtext_result_free (res);
}

/* The reading of a region of one's own on a page (a box the test drew). */
static FmMathTextResult *
read_box (FmDocument *doc, int page, FmRegionKind kind, const FmRect *box)
{
  g_autoptr (GError) error = NULL;
  g_autoptr (FmRegion) region = fm_region_new (page, kind, box);
  FmMathTextResult *res = fm_mathtext_read_region (doc, region, &error);

  g_assert_no_error (error);
  if (g_test_verbose ())
    g_printerr ("%s (%s)\n", res->latex ? res->latex : "(none)", res->reason ? res->reason : "certain");
  return res;
}

/* An uncertain reading of want, for a reason that says why. */
static void
assert_uncertain_because (const FmMathTextResult *res, const char *want, const char *because)
{
  g_assert_cmpstr (res->latex, ==, want);
  g_assert_cmpint (res->verdict, ==, FM_MATHTEXT_UNCERTAIN);
  g_assert_nonnull (strstr (res->reason, because));
}

/* Uncertain (and how it reads, when want is not NULL): a reading that
 * is not sure must not say it is. */
static void
check_page_uncertain (FmDocument *doc, int page, const char *want)
{
  FmMathTextResult *res = read_page (doc, page);
  if (want != NULL)
    g_assert_cmpstr (res->latex, ==, want);
  g_assert_cmpint (res->verdict, ==, FM_MATHTEXT_UNCERTAIN);
  fm_mathtext_result_free (res);
}

static void
test_layout (void)
{
  g_autoptr (FmDocument) doc = mathtext_fixture_open ("mathtext.pdf");

  check_page (doc, 0, "x^{2}+y_{1}=\\frac{a+b}{c}");
  check_page (doc, 1, "\\sqrt{x+1}\\leq\\alpha_{i}^{2}");
  check_page (doc, 2, "\\sum_{k=1}^{n}k=\\frac{n(n+1)}{2}");
  check_page (doc, 3, "\\mathbb{R}\\to\\mathcal{O}_{X}\\times\\mathbf{v}");
  check_page (doc, 4, "\\sin x+\\log y\\neq\\frac{1}{\\sqrt[3]{z}}");
  /* CMSY's mapsto bar has no width: Poppler boxes it where the arrow starts */
  check_page (doc, 8, "n\\mapsto x^{2}");
  /* Sized brackets around glyphs of the main size: \\left would have kept
   * them at normal size, so they were set by \\bigl and \\Bigl; around a
   * fraction \\left (development seed 1011). */
  check_page (doc, 10, "\\frac{d}{dx}\\bigl[\\cos x\\bigr]=\\Bigl[\\sin x\\Bigr]+\\left[\\frac{a}{b}\\right]");
  /* \\xrightarrow{i}: its minus starts where the arrow does and ends inside
   * it; \\longmapsto: the zero-width bar sits where the minus starts
   * (fresh seed 1002: "\\to-^{i}", "7\\longrightarrow"). */
  check_page (doc, 11, "W\\xrightarrow{i}U\\quad n\\longmapsto x");
}

/* The box around every glyph of page `page_index' (a fixture page holding one
 * formula and what a detector box took in with it). */
static FmRect
page_text_box (FmDocument *doc, int page_index)
{
  g_autoptr (GError) error = NULL;
  PopplerPage *page;
  PopplerRectangle *rects = NULL;
  guint n_rects = 0;
  FmRect box = { G_MAXDOUBLE, G_MAXDOUBLE, -G_MAXDOUBLE, -G_MAXDOUBLE };

  fm_document_lock (doc);
  page = fm_document_get_page_locked (doc, page_index, &error);
  g_assert_no_error (error);
  g_assert_true (poppler_page_get_text_layout (page, &rects, &n_rects));
  for (guint i = 0; i < n_rects; i++)
    {
      box.x0 = MIN (box.x0, MIN (rects[i].x1, rects[i].x2));
      box.x1 = MAX (box.x1, MAX (rects[i].x1, rects[i].x2));
      box.y0 = MIN (box.y0, MIN (rects[i].y1, rects[i].y2));
      box.y1 = MAX (box.y1, MAX (rects[i].y1, rects[i].y2));
    }
  g_free (rects);
  g_object_unref (page);
  fm_document_unlock (doc);
  return box;
}

/* Page 14: an inline formula whose box took in the line of words above it
 * (development seed 1010); a lone double bar as a script and as a relation
 * is \\parallel (fresh seed 1002: F_{\\|}). */
static void
test_word_row_parallel (void)
{
  g_autoptr (FmDocument) doc = mathtext_fixture_open ("mathtext.pdf");
  FmRect box = page_text_box (doc, 13);
  FmMathTextResult *res;

  res = read_box (doc, 13, FM_REGION_INLINE, &box);
  assert_uncertain_because (res, "F_{\\parallel}=v\\parallel w", "line of words");
  /* the words' letters back no symbol: F, \\|, =, v, \\|, w */
  g_assert_cmpuint (res->symbols->len, ==, 6);
  fm_mathtext_result_free (res);

  /* As a display, two lines stay two lines (an aligned, uncertain). */
  res = read_box (doc, 13, FM_REGION_DISPLAY, &box);
  g_assert_true (g_str_has_prefix (res->latex, "\\begin{aligned}"));
  fm_mathtext_result_free (res);
}

/* Page 15: the box of an inline formula took in the word before it
 * ("Have f=qP", development seed 1100); a word glued to what follows is
 * the formula's. */
static void
test_leading_word (void)
{
  g_autoptr (FmDocument) doc = mathtext_fixture_open ("mathtext.pdf");
  FmRect box = page_text_box (doc, 14);
  FmMathTextResult *res;

  res = read_box (doc, 14, FM_REGION_INLINE, &box);
  assert_uncertain_because (res, "f=qP", "a word before");
  g_assert_cmpuint (res->symbols->len, ==, 4);
  fm_mathtext_result_free (res);
  /* as a display nothing is dropped (the word space after the word is
   * its group's: TeX sets none after a text group) */
  res = read_box (doc, 14, FM_REGION_DISPLAY, &box);
  g_assert_cmpstr (res->latex, ==, "\\text{Have }f=qP");
  fm_mathtext_result_free (res);
}

/* A region that took in a glyph of the line above: the lower limit of a
 * display-style integral over the next line's 10^{22} (fresh seed 1001 read
 * "7\\times10_{22}^{a}"). The limit overlaps neither the base nor a larger
 * script, so it is left out and the reading is not certain. */
static void
test_neighbour_script (void)
{
  g_autoptr (FmDocument) doc = mathtext_fixture_open ("mathtext.pdf");
  g_autoptr (GError) error = NULL;
  PopplerPage *page;
  g_autofree char *text = NULL;
  PopplerRectangle *rects = NULL;
  guint n_rects = 0;
  FmRect box = { G_MAXDOUBLE, G_MAXDOUBLE, -G_MAXDOUBLE, -G_MAXDOUBLE };
  double limit_y0 = -1;
  gboolean line2 = FALSE;
  FmMathTextResult *res;

  fm_document_lock (doc);
  page = fm_document_get_page_locked (doc, 12, &error);
  g_assert_no_error (error);
  text = poppler_page_get_text (page);
  g_assert_true (poppler_page_get_text_layout (page, &rects, &n_rects));
  for (guint i = 0; text[i] != '\0' && i < n_rects; i++)
    {
      double y0 = MIN (rects[i].y1, rects[i].y2), y1 = MAX (rects[i].y1, rects[i].y2);
      if (text[i] == 'a')
        limit_y0 = y0;
      line2 = line2 || text[i] == '7';
      if (line2 && !g_ascii_isspace (text[i]))
        {
          box.x0 = MIN (box.x0, MIN (rects[i].x1, rects[i].x2));
          box.x1 = MAX (box.x1, MAX (rects[i].x1, rects[i].x2));
          box.y0 = MIN (box.y0, y0);
          box.y1 = MAX (box.y1, y1);
        }
    }
  g_free (rects);
  g_object_unref (page);
  fm_document_unlock (doc);
  g_assert_cmpfloat (limit_y0, >, 0);
  g_assert_true (line2);
  /* the line, and up to the limit's top (not the integral sign) */
  box.y0 = limit_y0;
  res = read_box (doc, 12, FM_REGION_INLINE, &box);
  assert_uncertain_because (res, "7\\times10^{22}", "apart from the line");
  fm_mathtext_result_free (res);
}

/* A display's sentence period, left out of its box (as the detector does):
 * the reader takes it from beside the box; an inline formula's is text. */
static void
test_trailing_punctuation (void)
{
  g_autoptr (FmDocument) doc = mathtext_fixture_open ("mathtext.pdf");
  g_autoptr (GError) error = NULL;
  PopplerPage *page;
  g_autofree char *text = NULL;
  PopplerRectangle *rects = NULL;
  guint n_rects = 0;
  double dot_x0 = -1, dot_x1 = -1, w, h;
  FmMathTextResult *res;

  fm_document_lock (doc);
  page = fm_document_get_page_locked (doc, 9, &error);
  g_assert_no_error (error);
  text = poppler_page_get_text (page);
  g_assert_true (poppler_page_get_text_layout (page, &rects, &n_rects));
  for (guint i = 0; text[i] != '\0' && i < n_rects; i++)
    if (text[i] == '.')
      {
        dot_x0 = MIN (rects[i].x1, rects[i].x2);
        dot_x1 = MAX (rects[i].x1, rects[i].x2);
      }
  g_free (rects);
  g_object_unref (page);
  fm_document_unlock (doc);
  g_assert_cmpfloat (dot_x0, >, 0);
  g_assert_true (fm_document_get_page_size (doc, 9, &w, &h, NULL));

  for (int kind = 0; kind < 2; kind++)
    {
      FmRect box = { 0, 0, dot_x0 - 1.0, h };
      g_autoptr (FmRegion) region = fm_region_new (9, kind == 0 ? FM_REGION_DISPLAY : FM_REGION_INLINE, &box);
      res = fm_mathtext_read_region (doc, region, &error);
      g_assert_no_error (error);
      g_assert_cmpint (res->verdict, ==, FM_MATHTEXT_CERTAIN);
      g_assert_cmpstr (res->latex, ==, kind == 0 ? "f=g." : "f=g");
      fm_mathtext_result_free (res);
    }

  /* A box that takes in the period's left part (its centre half a point
   * outside): the sentence's period still, not an inline formula's
   * (LuaLaTeX/Libertinus "k." on seed 1010). */
  for (int kind = 0; kind < 2; kind++)
    {
      FmRect box = { 0, 0, 0.5 * (dot_x0 + dot_x1) - 0.5, h };
      g_autoptr (FmRegion) region = fm_region_new (9, kind == 0 ? FM_REGION_DISPLAY : FM_REGION_INLINE, &box);
      res = fm_mathtext_read_region (doc, region, &error);
      g_assert_no_error (error);
      g_assert_cmpstr (res->latex, ==, kind == 0 ? "f=g." : "f=g");
      fm_mathtext_result_free (res);
    }
}

static void
test_symbols (void)
{
  g_autoptr (FmDocument) doc = mathtext_fixture_open ("mathtext.pdf");
  FmMathTextResult *res = mathtext_fixture_read_page (doc, 0);
  /* x 2 + y 1 = a + b c: one token per glyph, the bar is no glyph. */
  const char *want[] = { "x", "2", "+", "y", "1", "=", "a", "+", "b", "c" };

  g_assert_cmpuint (res->symbols->len, ==, G_N_ELEMENTS (want));
  for (gsize i = 0; i < G_N_ELEMENTS (want); i++)
    {
      gboolean found = FALSE;
      for (guint j = 0; j < res->symbols->len && !found; j++)
        found = g_strcmp0 (res->symbols->pdata[j], want[i]) == 0;
      g_assert_true (found);
    }
  fm_mathtext_result_free (res);
}

/* Layouts the reader must not be sure of: several lines (no column
 * alignment yet) and an upright letter (\mathrm{d}, \text{d} and
 * \operatorname{d} look alike). Uncertain, with a best reading and a
 * reason, never empty. */
static void
test_uncertain (void)
{
  g_autoptr (FmDocument) doc = mathtext_fixture_open ("mathtext.pdf");
  FmMathTextResult *res = mathtext_fixture_read_page (doc, 5);

  /* page 6's aligned is read with its columns (fm-mathtext-align.c,
   * tests/pdf/test-mathtext-align.c), uncertain: its rows also start at
   * one x, so `&` may stand first */
  g_assert_cmpint (res->verdict, ==, FM_MATHTEXT_UNCERTAIN);
  g_assert_cmpstr (res->latex, ==, "\\begin{aligned}a&=b+c\\\\d&=e\\end{aligned}");
  g_assert_nonnull (strstr (res->reason, "start at one x"));
  fm_mathtext_result_free (res);

  res = mathtext_fixture_read_page (doc, 6);
  g_assert_cmpint (res->verdict, ==, FM_MATHTEXT_UNCERTAIN);
  /* the page's \, before the d is measured and written (it had been lost) */
  g_assert_cmpstr (res->latex, ==, "\\int_{0}^{1}f(x)\\,\\mathrm{d}x");
  g_assert_nonnull (strstr (res->reason, "upright letter"));
  fm_mathtext_result_free (res);
}

/* A region set in a Type 3 bitmap font without ToUnicode has no usable
 * text: UNAVAILABLE (the image path takes it), never an empty formula. */
static void
test_type3 (void)
{
  g_autoptr (FmDocument) doc = mathtext_fixture_open ("mathtext.pdf");
  FmMathTextResult *res = mathtext_fixture_read_page (doc, 7);

  g_assert_cmpint (res->verdict, ==, FM_MATHTEXT_UNAVAILABLE);
  g_assert_null (res->latex);
  g_assert_nonnull (res->reason);
  fm_mathtext_result_free (res);
}

/* A region with no glyphs at all (white space of a page). */
static void
test_empty_region (void)
{
  g_autoptr (FmDocument) doc = mathtext_fixture_open ("mathtext.pdf");
  g_autoptr (GError) error = NULL;
  FmRect box = { 10, 10, 30, 30 };
  g_autoptr (FmRegion) region = fm_region_new (0, FM_REGION_INLINE, &box);
  FmMathTextResult *res = fm_mathtext_read_region (doc, region, &error);

  g_assert_no_error (error);
  g_assert_cmpint (res->verdict, ==, FM_MATHTEXT_UNAVAILABLE);
  g_assert_null (res->latex);
  fm_mathtext_result_free (res);
}

/* mathptmx draws \\epsilon and \\varepsilon with Adobe Symbol's one epsilon:
 * the reader writes it as a glyph of unknown meaning, which the pipeline
 * matches with either (it had written \\varepsilon, and a decode constrained
 * to it replaced the model's right \\epsilon on development seed 1010). */
static void
test_symbol_epsilon (void)
{
  g_autoptr (FmDocument) doc = mathtext_fixture_open ("mathtext-times.pdf");
  FmMathTextResult *res;

  res = mathtext_fixture_read_page (doc, 0);
  g_assert_cmpstr (res->latex, ==, "K\\subset U_{?}");
  g_assert_cmpint (res->verdict, ==, FM_MATHTEXT_UNCERTAIN);
  fm_mathtext_result_free (res);
}

/* Latin Modern at 12 pt (tests/fixtures/pdf/mathtext-lm.tex): limits that
 * Poppler boxes into their operator's box, and an equals sign struck
 * through by a slash that has no text-layer glyph (its ink, inside the
 * "=" glyph's box, had passed the ink check: "=" CERTAIN). */
static void
test_lm (void)
{
  g_autoptr (FmDocument) doc = mathtext_fixture_open ("mathtext-lm.pdf");
  FmMathTextResult *res;

  check_page (doc, 0, "0=\\lim_{n\\to\\infty}\\frac{1}{n}");
  check_page (doc, 1, "a\\neq b");
  /* the slash backs a symbol: \neq is "\not" and "=" to the model */
  res = mathtext_fixture_read_page (doc, 1);
  g_assert_true (g_ptr_array_find_with_equal_func (res->symbols, "\\not", g_str_equal, NULL));
  fm_mathtext_result_free (res);
  /* the script slash of the limit's \neq strikes the script "=", not
   * the \prod above it (fresh seed 1025 had read \not\prod_{j\neq k}) */
  check_page (doc, 2, "P=\\prod_{j\\neq k}a_{j}");
  /* \\; after a text group: its gap is the word space and more; a word
   * space alone is no spacing command (development seed 1112) but the
   * group's own space (`and b` had read \\text{and}b, "andb");
   * uncertain for its words */
  res = mathtext_fixture_read_page (doc, 3);
  g_assert_cmpstr (res->latex, ==, "a_{k}=0\\quad\\text{for}\\;k\\geq1\\quad\\text{and }b");
  fm_mathtext_result_free (res);
}

/* STIX Two under pdfLaTeX (tests/fixtures/pdf/mathtext-stix2.tex):
 * delimiters built from pieces, stacked bars, a display \prod boxed above
 * its ink, \overset, bars with scripts (development seed 1101). */
static void
test_stix2 (void)
{
  g_autoptr (FmDocument) doc = mathtext_fixture_open ("mathtext-stix2.pdf");
  FmMathTextResult *res;
  FmRect box = page_text_box (doc, 4);

  check_page (doc, 0, "\\varphi\\left(\\bigcup_{j=1}^{n}E_{j}\\right)\\geq\\sum_{j=1}^{n}\\varphi(E_{j})");
  check_page (doc, 1, "\\left|x_{n}-x\\right|\\leq\\epsilon");
  /* its \\nolimits since reader12n (line_nolimits) */
  check_page (doc, 2, "c\\colon K\\longrightarrow\\prod\\nolimits_{i\\geq0}A^{i}(X)");
  /* uncertain for its \\text{def} only */
  res = read_page (doc, 3);
  g_assert_cmpstr (res->latex, ==, "\\|z\\|\\overset{\\text{def}}{=}\\sqrt{|z_{1}|^{2}+|z_{2}|^{2}}");
  fm_mathtext_result_free (res);

  /* A line of the body text over an inline formula: a lone letter and
   * digits beside the words; left out with its symbols. */
  res = read_box (doc, 4, FM_REGION_INLINE, &box);
  assert_uncertain_because (res, "z_{3}^{0},z_{4}^{0},\\ldots,z_{n}^{0}", "line of words");
  fm_mathtext_result_free (res);

  /* A prime before a subscript is the base's, boxed by Poppler at the
   * subscript's x; one after a subscript's letter stays in it. */
  res = read_page (doc, 5);
  g_assert_cmpstr (res->latex, ==, "\\mathcal{L}'_{0}+X_{S'}");
  fm_mathtext_result_free (res);
}

/* Colons told apart by their spaces where a glyph's box takes in the kern
 * after it (pdfLaTeX's TJ arrays at 12 pt, XeTeX's glyph runs), and where
 * aligned's `&` stands (tests/fixtures/pdf/mathtext-colon-12pt.tex and
 * mathtext-colon-xe.tex, issue 12). */
/* A thin space inside a superscript, measured in the script's own em
 * (reader12t, development seed 1163: read without it, CERTAIN, on four
 * set-ups); the same superscript without the space stays CERTAIN. */
static void
test_script_space (void)
{
  g_autoptr (FmDocument) doc = mathtext_fixture_open ("mathtext-script-space.pdf");

  check_page_uncertain (doc, 0, "60=22+67e^{-0.0616\\,t}");
  check_page (doc, 1, "60=22+67e^{-0.0616t}");
}

static void
test_colon_spacing (void)
{
  g_autoptr (FmDocument) doc = mathtext_fixture_open ("mathtext-colon-12pt.pdf");
  g_autoptr (FmDocument) xe = mathtext_fixture_open ("mathtext-colon-xe.pdf");
  FmMathTextResult *res;

  /* \Psi's box reaches the colon: the relation read from the ink's white
   * (was \colon, CERTAIN) */
  check_page (doc, 0, "\\Psi:\\bigoplus\\nolimits_{i\\in I}A_{i}\\longrightarrow\\mathcal{F}");
  check_page (doc, 1, "\\Psi:A\\longrightarrow\\mathcal{F}");
  check_page (doc, 2, "\\Psi\\colon A\\longrightarrow\\mathcal{F}");
  /* rows that start at one x to the point, relations apart: `&` first
   * (was UNCERTAIN); the other way round, `&` at the relation */
  check_page (doc, 3, "\\begin{aligned}&X''+\\lambda X=0,\\\\&Y''-\\lambda Y=0.\\end{aligned}");
  check_page (doc, 4, "\\begin{aligned}X''+\\lambda X&=0,\\\\Y''-\\lambda Y&=0.\\end{aligned}");
  check_page (xe, 0, "f\\colon X\\to Y");
  check_page (xe, 1, "\\Psi:A\\longrightarrow\\mathcal{F}");
  /* STIX Two Math's \\colon measures 0.151 em more white after than
   * before at the CLI's render, 0.106 at this region's coarser one: inside
   * the band the ink cannot tell, so ":" and a spelling doubt */
  res = read_page (xe, 2);
  g_assert_cmpint (res->verdict, ==, FM_MATHTEXT_UNCERTAIN);
  g_assert_true (res->unsure_spelling);
  fm_mathtext_result_free (res);
  check_page (xe, 3, "\\{x:x>0\\}");
  /* STIX Two's X and Y have one width: starts and relations both at one
   * x, drawn alike either way; unsure, and a spelling the image cannot
   * settle (an agreeing model reading stays flagged) */
  res = read_page (xe, 4);
  g_assert_cmpint (res->verdict, ==, FM_MATHTEXT_UNCERTAIN);
  g_assert_true (res->unsure_spelling);
  fm_mathtext_result_free (res);
  res = read_page (doc, 0);
  g_assert_false (res->unsure_spelling);
  fm_mathtext_result_free (res);
  /* \mathbb{R}'s box middle is off the line: the colon's spaces are not
   * measured, so its ":" is no certain relation (review of reader12s: an
   * agreeing model's right \colon had been replaced, 0.99) */
  res = read_page (doc, 5);
  g_assert_cmpint (res->verdict, ==, FM_MATHTEXT_UNCERTAIN);
  g_assert_true (res->unsure_spelling);
  fm_mathtext_result_free (res);
  /* gathered's centred rows of one width start at one x and end at one
   * x: `&` first is not certain (was CERTAIN) */
  res = read_page (doc, 6);
  g_assert_cmpint (res->verdict, ==, FM_MATHTEXT_UNCERTAIN);
  fm_mathtext_result_free (res);
}

/* XeTeX's \\vec is a combining mark (tests/fixtures/pdf/mathtext-stix2-xe.tex)
 * boxed with no width at its base's right edge: it is the a's, not the e's.
 * Poppler's text layout sometimes leaves such a mark out (development seed
 * 1101): then the ink over the letter keeps the reading from being certain. */
static void
test_lost_accent (void)
{
  g_autoptr (FmDocument) doc = mathtext_fixture_open ("mathtext-stix2-xe.pdf");
  FmMathTextResult *res;

  check_page (doc, 0, "\\vec{a}e^{t}");
  check_page (doc, 1, "ae^{t}");
  res = read_page (doc, 2);
  g_assert_cmpint (res->verdict, ==, FM_MATHTEXT_UNCERTAIN);
  g_assert_nonnull (strstr (res->reason, "accent"));
  fm_mathtext_result_free (res);
}

/* Unicode math italics under XeLaTeX (tests/fixtures/pdf/mathtext-lm-xe.tex):
 * a rule inside a letter's box below its middle is an underline or a
 * fraction bar, not the letter's; an overline's part stays on its line,
 * where \left( and \bigl( would draw the same size. */
static void
test_unicode_rules (void)
{
  g_autoptr (FmDocument) doc = mathtext_fixture_open ("mathtext-lm-xe.pdf");
  FmMathTextResult *res;

  res = read_page (doc, 0);
  /* an underline is always a guess (an extensible arrow's pieces look alike) */
  g_assert_cmpstr (res->latex, ==, "0\\to\\underline{M}\\to I");
  g_assert_cmpint (res->verdict, ==, FM_MATHTEXT_UNCERTAIN);
  fm_mathtext_result_free (res);
  res = read_page (doc, 1);
  assert_uncertain_because (res, "r\\left(\\varphi(x),\\overline{\\varphi(x)}\\right)=0", "overline");
  fm_mathtext_result_free (res);
  check_page (doc, 2, "I=\\frac{V}{R}");
}

/* fourier's Fourier-Math-Symbols has no ToUnicode for its \surd (OMS code
 * 0x70, raw "p"): the radical is still a radical, with its vinculum. */
static void
test_oms_surd (void)
{
  g_autoptr (FmDocument) doc = mathtext_fixture_open ("cls-fontjoins-fourier.pdf");
  g_autoptr (GError) error = NULL;
  FmRect boxes[] = { { 330.46, 95.99, 371.6, 106.25 }, { 439.47, 94.83, 467.61, 104.68 } };
  const char *want[] = { "g(x)=\\sqrt{x}", "a+\\sqrt{b}" };

  for (guint k = 0; k < G_N_ELEMENTS (boxes); k++)
    {
      g_autoptr (FmRegion) region = fm_region_new (0, FM_REGION_INLINE, &boxes[k]);
      FmMathTextResult *res = fm_mathtext_read_region (doc, region, &error);
      g_assert_no_error (error);
      if (g_test_verbose ())
        g_printerr ("%s (%s)\n", res->latex, res->reason ? res->reason : "certain");
      g_assert_cmpstr (res->latex, ==, want[k]);
      g_assert_cmpint (res->verdict, ==, FM_MATHTEXT_CERTAIN);
      fm_mathtext_result_free (res);
    }
}

/* Sized delimiters whose codes Poppler's text layer drops (CMEX10's 0x00,
 * 0x09-0x0D, 0x20; tests/fixtures/pdf/mathtext-bigdelims.tex), read from
 * their ink: the mirror of a kept partner, else their shape; LMMathSymbols'
 * raw "7" is \mapsto's bar (mathtext-bigdelims-lm.tex); fourier's sized
 * delimiters at Latin-1 codes (mathtext-bigdelims-fourier.tex); lmodern's
 * sizes at 12 pt (mathtext-bigdelims-lm12.tex). */
static void
test_lost_delimiters (void)
{
  g_autoptr (FmDocument) doc = mathtext_fixture_open ("mathtext-bigdelims.pdf");
  g_autoptr (FmDocument) lm = mathtext_fixture_open ("mathtext-bigdelims-lm.pdf");
  g_autoptr (FmDocument) fourier = mathtext_fixture_open ("mathtext-bigdelims-fourier.pdf");
  g_autoptr (FmDocument) lm12 = mathtext_fixture_open ("mathtext-bigdelims-lm12.pdf");
  g_autoptr (FmDocument) lm12b = mathtext_fixture_open ("mathtext-bigdelims-lm12b.pdf");
  g_autoptr (FmDocument) cm12 = mathtext_fixture_open ("mathtext-bigdelims-cm12.pdf");
  FmMathTextResult *res;

  check_page (doc, 0, "a\\bigl(b+c\\bigr)");
  check_page (doc, 1, "\\bigl\\{x\\bigr\\}");
  check_page (doc, 2, "\\bigl\\langle y\\bigr\\rangle+\\Bigl\\langle z\\Bigr\\rangle");
  check_page (doc, 3, "\\left|\\frac{a}{b}\\right|+\\left\\|\\frac{a}{b}\\right\\|");
  check_page (doc, 4, "\\Biggl(v\\Biggr)");
  /* an evaluation bar: found, but no pair */
  res = read_page (doc, 5);
  g_assert_cmpint (res->verdict, ==, FM_MATHTEXT_UNCERTAIN);
  g_assert_nonnull (strstr (res->latex, "|"));
  fm_mathtext_result_free (res);
  /* a bar inside an open bracket opens a pair of bars */
  check_page (doc, 6, "f=\\left[(n-1)\\left|\\frac{1}{r_{1}}\\pm\\frac{1}{r_{2}}\\right|\\right]^{-1}");
  /* around scripts \\left and \\bigl draw the same size: not certain */
  res = read_page (doc, 7);
  g_assert_cmpint (res->verdict, ==, FM_MATHTEXT_UNCERTAIN);
  g_assert_nonnull (strstr (res->reason, "scripts"));
  fm_mathtext_result_free (res);
  /* CMMI's \\vec: a sliver at its base's left edge */
  check_page (doc, 8, "\\langle\\vec{u},2\\vec{v}\\rangle");
  /* lmodern at 12 pt: its extension font stays at 10 pt, so amsmath's \\big
   * draws the 1.8 em variant and \\Big the 2.4 (read \\Bigl( and \\bigg|
   * before); LaTeX's own \\Big and \\bigg draw the same glyphs, so amsmath's
   * reading, not sure (mathtext-bigdelims-lm12b.tex: LaTeX's \\Big( read
   * \\bigl( CERTAIN). CM at 12 pt without amsmath: CMEX10 unscaled, LaTeX's
   * fixed sizes (mathtext-bigdelims-cm12.tex, \\Big( read \\bigl( CERTAIN);
   * there \\big's 8.5 pt box needs no more than CMR12's own "(", which it
   * draws: a plain (x) in the PDF. */
  check_page_uncertain (lm12, 0, "F=\\prod_{\\ell=1}^{k}\\bigl(z_{n}-\\alpha_{\\ell}(z')\\bigr)");
  check_page_uncertain (lm12, 1, "\\Bigl[x+y\\Bigr]+\\biggl\\{u\\biggr\\}");
  check_page_uncertain (lm12b, 0, NULL);
  check_page (cm12, 0, "\\Bigl(a+b\\Bigr)+(x)+\\biggl[y\\biggr]");
  res = mathtext_fixture_read_page (lm12, 2);
  g_assert_cmpstr (res->latex, ==, "\\frac{\\partial r}{\\partial z_{k}}\\Big|_{q}");
  fm_mathtext_result_free (res);
  check_page (lm, 0, "f\\bigl(|x|\\bigr)");
  check_page (lm, 1, "V\\mapsto V\\times_{X}Z");
  check_page (fourier, 0, "\\varphi\\bigl((0,1)\\bigr)+\\bigl\\{x\\bigr\\}");
  /* Utopia's combining accents, each beside half its letter's box */
  check_page (fourier, 1, "q(z,\\bar{z})=y\\hat{\\mathbf{y}}");
  /* a script \\neq in the limit under \\prod (fresh seed 1025: \\not\\prod_{j\\neq k}) */
  check_page (fourier, 2, "P=\\prod_{j\\neq k}a_{j}");
}

/* Bars that no glyph draws and that are no sized pair (mathtext-vrules.tex):
 * a shape is not a glyph, so a bar found by its shape alone leaves the
 * reading UNCERTAIN unless it pairs with a mirror of its height around
 * content close inside both (an array's rules stand \arraycolsep off its
 * columns: \begin{array}{|c|} read CERTAIN \left|x+y\right| before; at
 * 14 pt too, page 4); a sized pair around flat content is \Bigl| or a
 * wrong \left| (page 3). */
static void
test_vrules (void)
{
  g_autoptr (FmDocument) doc = mathtext_fixture_open ("mathtext-vrules.pdf");

  for (int page = 0; page < 5; page++)
    {
      FmMathTextResult *res = read_page (doc, page);
      g_assert_cmpint (res->verdict, ==, FM_MATHTEXT_UNCERTAIN);
      /* page 3: \Bigl|x+y\Bigr|, a pair, but \left| would draw the
       * normal bar around x+y */
      g_assert_nonnull (strstr (res->reason, page == 3 ? "flat content" : "shape alone"));
      if (page == 3)
        g_assert_cmpstr (res->latex, ==, "\\left|x+y\\right|");
      fm_mathtext_result_free (res);
    }
}

/* newtxmath's txexs maps its display \\sum to U+2211 U+FE01
 * (mathtext-libertine.tex): the variation selector is part of the \\sum's
 * glyph, not a glyph of its own; txsys and txsyb by their own encodings. */
static void
test_libertine (void)
{
  g_autoptr (FmDocument) doc = mathtext_fixture_open ("mathtext-libertine.pdf");

  check_page (doc, 0, "\\sum_{k=1}^{n}x_{k}");
  /* txsys's accents at Latin-1 codes (0xA0 came as a space), a text
   * font's ring and grave, txsyb's \\mathbb capitals */
  check_page (doc, 1, "\\vec{e}_{j}+\\hat{x}+\\dot{a}+\\ddot{b}+\\mathring{A}+\\grave{u}+\\dddot{v}+\\partial\\mathbb{D}^{2}");
}

/* Struck glyphs (mathtext-struck.tex, mathtext-struck-times.tex): LaTeX's
 * \\notin is an ordinary slash over \\in (read "z\\notin/U_{2}", certain,
 * development seed 1115 on CM and LM); mathptmx's \\emptyset a zero with a
 * slash over it ("0/"). */
static void
test_struck (void)
{
  g_autoptr (FmDocument) doc = mathtext_fixture_open ("mathtext-struck.pdf");
  g_autoptr (FmDocument) times = mathtext_fixture_open ("mathtext-struck-times.pdf");

  check_page (doc, 0, "z\\notin U_{2}");
  check_page (times, 0, "f^{-1}(V)\\cap Z=\\emptyset");
}

/* LaTeX's \\cong, a tilde set over "=" at one x (mathtext-struck-lm.tex):
 * Latin Modern at 11 pt puts the "=" 0.001 pt left of the tilde at some
 * positions (pages 4, 8, 12 of 16, each shifted 0.13 pt), which read
 * "=\\sim" (development seed 1114). */
static void
test_cong_order (void)
{
  g_autoptr (FmDocument) doc = mathtext_fixture_open ("mathtext-struck-lm.pdf");

  for (int page = 0; page < 16; page++)
    check_page (doc, page, "A\\cong B");
}

/* One-row matrices (mathtext-matrixrow.tex, 12 pt): a \\big pair around
 * columns 2\\arraycolsep apart, read "\\bigl[y\\quad-x\\bigr]" certain
 * before; a \\quad (12 pt) is no column gap, but as wide as one after an
 * italic correction: not sure; at 10 pt both are 10 pt wide: the matrix,
 * not sure. */
static void
test_matrix_row (void)
{
  g_autoptr (FmDocument) doc = mathtext_fixture_open ("mathtext-matrixrow.pdf");
  FmMathTextResult *res;

  check_page (doc, 0, "\\begin{bmatrix}y&-x\\end{bmatrix}");
  check_page (doc, 1, "A=\\begin{pmatrix}1&2&3\\end{pmatrix}");
  /* 11.70 pt: the column gap after a cell ending in P (its italic
   * correction) is as wide (mathtext-matrixrow2.tex) */
  check_page_uncertain (doc, 2, "X=\\bigl[u\\quad v\\bigr]");
  res = mathtext_fixture_read_page (doc, 3);
  assert_uncertain_because (res, "\\begin{bmatrix}y&-x\\end{bmatrix}", "one-row matrix");
  fm_mathtext_result_free (res);
}

static void
check_certain_box (FmDocument *doc, const FmRect *box, const char *want)
{
  FmMathTextResult *res = read_box (doc, 0, FM_REGION_INLINE, box);

  g_assert_cmpstr (res->latex, ==, want);
  g_assert_cmpint (res->verdict, ==, FM_MATHTEXT_CERTAIN);
  fm_mathtext_result_free (res);
}

/* cls-inlinestyle-{cm,xe}.pdf (pdfLaTeX CM, XeLaTeX Latin Modern Math):
 * inline formulas in display style read as such from their glyphs' sizes
 * (issue 12, fresh seed 1055 read all of them in text style): a fraction
 * with parts at the line's text size is \\dfrac, a big operator at display
 * size or with limits above and below puts the formula in \\displaystyle,
 * a text-size one with limits above and below has \\limits; text style
 * stays text style. CM's display integral slants past its box (its ink had
 * been found from half-way down: two lines, uncertain). The boxes are the
 * fixtures' truth (.truth.json). */
static void
test_inline_style (void)
{
  static const FmRect boxes[2][12] = {
    { { 128.23, 95.61, 182.25, 116.44 }, { 178.05, 123.41, 213.98, 135.26 }, { 113.57, 142.24, 152.04, 171.32 },
      { 138.53, 178.3, 188.02, 189.3 }, { 128.76, 196.27, 148.44, 218.91 }, { 123.2, 225.88, 210.3, 243.24 },
      { 116.28, 250.21, 182.47, 258.63 }, { 155.66, 267.59, 220.47, 277.56 }, { 116.31, 284.53, 140.42, 305.02 },
      { 193.93, 312.0, 237.61, 335.45 }, { 124.66, 342.42, 171.63, 352.39 }, { 120.73, 360.36, 152.22, 369.78 } },
    { { 128.22, 95.74, 182.13, 116.18 }, { 178.04, 123.15, 213.2, 135.21 }, { 113.55, 142.19, 151.41, 170.03 },
      { 138.5, 177.0, 187.31, 189.76 }, { 128.76, 196.73, 146.87, 220.4 }, { 123.21, 227.38, 207.91, 244.69 },
      { 116.27, 251.66, 181.5, 261.1 }, { 155.65, 269.05, 220.46, 279.11 }, { 116.3, 286.08, 140.56, 306.68 },
      { 193.9, 313.66, 236.56, 337.72 }, { 124.65, 344.7, 171.54, 354.75 }, { 120.74, 362.63, 152.69, 372.54 } },
  };
  static const char *const want[10] = {
    "x=\\dfrac{20}{16-\\pi^{2}}", "y=\\frac{n+1}{2n}", "\\displaystyle\\sum_{n=1}^{\\infty}a_{n}x^{n}",
    "\\sum_{n=1}^{\\infty}a_{n}x^{n}", "\\displaystyle\\int_{R}f",
    "\\displaystyle\\sup_{x\\in D}f(x)\\leq\\inf_{y\\in D}g(y)", "\\lim_{n\\to\\infty}x_{n}=0",
    "\\gcd(g_{0},h_{0})=1", "\\dfrac{a+b}{c}", "\\sum\\limits_{k=1}^{n}k=m",
  };
  static const char *const pdf[2] = { "cls-inlinestyle-cm.pdf", "cls-inlinestyle-xe.pdf" };

  for (int f = 0; f < 2; f++)
    {
      g_autoptr (FmDocument) doc = mathtext_fixture_open (pdf[f]);
      for (int k = 0; k < 10; k++)
        check_certain_box (doc, &boxes[f][k], want[k]);
      /* a prime stacked over its subscript is one drawing whichever the
       * order (CM; Poppler merges XeLaTeX's lines there), a subscript
       * right of the prime another */
      if (f == 0)
        check_certain_box (doc, &boxes[f][10], "x''_{1}=-6x_{1}");
      {
        FmMathTextResult *res = read_box (doc, 0, FM_REGION_INLINE, &boxes[f][11]);
        assert_uncertain_because (res, "x'_{1}=y", "right of a prime");
        fm_mathtext_result_free (res);
      }
    }
}

/* cls-dispstyle-{newtx,xe}.pdf (pdfLaTeX newtx, XeLaTeX STIX Two Math;
 * review of reader12q, all seven read CERTAIN before): a word's limits
 * above and below beside a script-size fraction are \\limits, not sure
 * (\\displaystyle on the whole formula before); a \\biggl( or a \\dfrac
 * kerned under a text-style integral leaves it text style (the
 * slanted-ink columns of CMEX's display \\int had taken them in); two
 * full-size fractions, or one with a script beside it, are \\dfrac's or
 * \\displaystyle\\frac's alike; a word's limits with nothing else to tell
 * stay \\displaystyle. Boxes from the fixtures' truth (.truth.json). */
static void
test_display_style_review (void)
{
  static const FmRect boxes[2][7] = {
    { { 111.3, 95.39, 154.1, 111.26 }, { 109.63, 118.23, 155.54, 134.5 }, { 112.41, 141.47, 143.71, 165.59 },
      { 115.16, 172.56, 142.16, 190.55 }, { 128.71, 197.53, 154.87, 215.52 }, { 108.42, 222.49, 125.44, 240.48 },
      { 111.3, 247.46, 156.93, 261.35 } },
    { { 113.19, 97.33, 158.23, 116.05 }, { 111.1, 123.03, 158.0, 141.81 }, { 112.72, 148.78, 144.65, 171.07 },
      { 115.78, 178.04, 143.58, 195.69 }, { 131.42, 202.66, 159.07, 220.3 }, { 110.13, 227.28, 127.87, 244.92 },
      { 113.19, 251.9, 161.91, 267.17 } },
  };
  static const char *const pdf[2] = { "cls-dispstyle-newtx.pdf", "cls-dispstyle-xe.pdf" };
  static const char *const unsure[4][2] = {
    { "\\lim\\limits_{n\\to\\infty}\\frac{1}{n}=0", "text-style glyphs" },
    { "\\max\\limits_{i}a_{i}\\leq\\frac{1}{2}", "text-style glyphs" },
    { "\\dfrac{a}{b}+\\dfrac{c}{d}", "full-size fractions beside more" },
    { "\\dfrac{a}{b}x^{2}", "full-size fractions beside more" },
  };
  static const int unsure_box[4] = { 0, 1, 4, 5 };

  for (int f = 0; f < 2; f++)
    {
      g_autoptr (FmDocument) doc = mathtext_fixture_open (pdf[f]);
      for (int k = 0; k < 4; k++)
        {
          FmMathTextResult *res = read_box (doc, 0, FM_REGION_INLINE, &boxes[f][unsure_box[k]]);
          assert_uncertain_because (res, unsure[k][0], unsure[k][1]);
          fm_mathtext_result_free (res);
        }
      check_certain_box (doc, &boxes[f][2], "\\int\\biggl(f\\biggr)dx");
      check_certain_box (doc, &boxes[f][3], "\\int\\dfrac{a}{b}dx");
      check_certain_box (doc, &boxes[f][6], "\\displaystyle\\lim_{n\\to\\infty}x_{n}=0");
    }
}

/* cls-scriptfrac-{cm,xe}.pdf (pdfLaTeX CM, XeLaTeX Latin Modern Math;
 * tidy18): a fraction in a script (script-script parts in either style)
 * and a full-size one in a formula alone on its line (no text size beside
 * it) show no text style, so a word's limits above and below are
 * \\displaystyle, certain (both read \\lim\\limits, uncertain, before);
 * a script-size fraction alone on its line, against the region's largest
 * glyphs, still shows text style. Boxes from the fixtures' truth.
 * readerfix8: beside a main-line superscript or prime a word's limits are
 * not sure (the superscript rises by sup1 in display style, sup2 in text
 * style): text-style \\lim\\limits_{..}x^{\\frac{1}{n}}, x^{2}, f'(x) in
 * running text read CERTAIN \\displaystyle before, and so does the
 * display-style one (now not sure either: the cost); beside a subscript
 * alone (drawn alike) still \\displaystyle, certain. On XeLaTeX the
 * text-style and script fractions' bars were taken as the
 * Unicode n's own ink under them (readerfix7: x_{n}^{1} and a CERTAIN
 * \lim_{n\to\infty}_{n}^{1}=0 before): now as CM reads them. */
static void
test_script_fraction_style (void)
{
  static const FmRect boxes[2][7] = {
    { { 113.82, 95.61, 167.52, 112.59 }, { 72.0, 125.54, 121.11, 145.67 }, { 72.0, 158.63, 120.05, 174.02 },
      { 113.82, 186.97, 167.52, 203.44 }, { 123.83, 216.4, 170.35, 231.66 }, { 117.72, 244.61, 176.26, 259.25 },
      { 139.86, 272.2, 193.13, 286.09 } },
    { { 113.81, 95.7, 166.56, 112.63 }, { 72.0, 125.58, 120.14, 146.2 }, { 72.0, 159.15, 119.08, 174.95 },
      { 113.81, 187.9, 166.56, 204.83 }, { 123.83, 217.78, 169.38, 233.66 }, { 117.71, 246.61, 175.66, 261.69 },
      { 139.86, 274.75, 192.17, 288.91 } },
  };
  static const char *const pdf[2] = { "cls-scriptfrac-cm.pdf", "cls-scriptfrac-xe.pdf" };
  static const char *const sup[3] = { "\\displaystyle\\lim_{n\\to\\infty}x^{\\frac{1}{n}}=1",
                                      "\\displaystyle\\lim_{x\\to0}x^{2}=0",
                                      "\\displaystyle\\lim_{x\\to0}f'(x)=1" };

  for (int f = 0; f < 2; f++)
    {
      g_autoptr (FmDocument) doc = mathtext_fixture_open (pdf[f]);
      FmMathTextResult *res;
      FmRect cut;

      check_certain_box (doc, &boxes[f][1], "\\displaystyle\\lim_{n\\to\\infty}\\frac{1}{n}=0");
      /* a box that cuts the last fraction's numerator off (a detector's
       * cut) leaves its denominator a second subscript of the limits:
       * not LaTeX, so not sure (it read CERTAIN before the well-formed
       * check in read_finish) */
      cut = boxes[f][2];
      cut.y0 = 165.3;
      res = read_box (doc, 0, FM_REGION_INLINE, &cut);
      assert_uncertain_because (res, "\\displaystyle\\lim_{n\\to\\infty}_{n}=0", "not well-formed LaTeX");
      fm_mathtext_result_free (res);
      for (int k = 1; k < 3; k++)
        {
          res = read_box (doc, 0, FM_REGION_INLINE, &boxes[f][3 + k]);
          assert_uncertain_because (res, sup[k], "a superscript beside a word's limits");
          fm_mathtext_result_free (res);
        }
      for (int k = 0; k < 4; k += 3)
        {
          res = read_box (doc, 0, FM_REGION_INLINE, &boxes[f][k]);
          assert_uncertain_because (res, sup[0], "a superscript beside a word's limits");
          fm_mathtext_result_free (res);
        }
      check_certain_box (doc, &boxes[f][6], "\\displaystyle\\lim_{n\\to\\infty}a_{\\frac{1}{n}}=1");
      res = read_box (doc, 0, FM_REGION_INLINE, &boxes[f][2]);
      assert_uncertain_because (res, "\\lim\\limits_{n\\to\\infty}\\frac{1}{n}=0", "text-style glyphs");
      fm_mathtext_result_free (res);
    }
}

/* cls-edges-lua.pdf (LuaLaTeX, Latin Modern Math; fixture truth's box):
 * a text-style fraction of Unicode Greek letters between bars,
 * \kappa\left|\frac{\theta}{\lambda}\right|_{x}, lost its bar to the
 * \lambda under it and read CERTAIN \kappa\left|_{\lambda}^{\theta}\right|_{x}
 * (readerfix7): the \theta's ink right over the bar makes it a fraction's. */
static void
test_unicode_denominator_bar (void)
{
  static const FmRect box = { 314.63, 158.55, 339.37, 173.5 };
  g_autoptr (FmDocument) doc = mathtext_fixture_open ("cls-edges-lua.pdf");

  check_certain_box (doc, &box, "\\kappa\\left|\\frac{\\theta}{\\lambda}\\right|_{x}");
}

/* mathtext-dfrac.tex: inside a display fraction's part, a fraction with
 * full-size parts is a \\dfrac (both read \\frac before; still uncertain:
 * \\displaystyle\\frac draws the same), one with script-size parts a
 * \\frac; a tall radical's vinculum starts above its fitted box (its
 * stroke reaches the top at its right end only: \\sqrt\\overline{...}
 * before, development seed 1115 on every set-up). */
static void
test_nested_dfrac (void)
{
  g_autoptr (FmDocument) doc = mathtext_fixture_open ("mathtext-dfrac.pdf");
  FmMathTextResult *res = mathtext_fixture_read_page (doc, 0);

  g_assert_cmpstr (res->latex, ==, "\\frac{\\dfrac{a}{b}}{c}+\\frac{1}{1+\\dfrac{1}{x}}");
  g_assert_cmpint (res->verdict, ==, FM_MATHTEXT_UNCERTAIN);
  fm_mathtext_result_free (res);
  check_page (doc, 1, "\\frac{\\frac{a}{b}}{c}");
  check_page (doc, 2, "t=\\sqrt{\\frac{2h}{g}}");
}

/* CMEX's wide accents (mathtext-wideaccents.tex): \\widehat and
 * \\widetilde over the glyphs their width spans (unknown glyphs before:
 * "x?y", development seeds 1114 and 1115); a script that reaches under
 * the accent leaves the group unknown, so uncertain. */
static void
test_wide_accents (void)
{
  g_autoptr (FmDocument) doc = mathtext_fixture_open ("mathtext-wideaccents.pdf");
  FmMathTextResult *res;

  /* the smallest accent over two glyphs: \\widetilde{l}l draws the same
   * (review of reader12l; mathtext-wideaccents2.tex) */
  res = mathtext_fixture_read_page (doc, 0);
  g_assert_true (g_str_has_prefix (res->latex, "\\widehat{xy}+"));
  g_assert_cmpint (res->verdict, ==, FM_MATHTEXT_UNCERTAIN);
  fm_mathtext_result_free (res);
  res = mathtext_fixture_read_page (doc, 1);
  g_assert_cmpint (res->verdict, ==, FM_MATHTEXT_UNCERTAIN);
  fm_mathtext_result_free (res);
}

/* Bases of wide accents read certain and wrong before (review of
 * reader12l): the widest accent over a wider base spans its middle
 * glyphs only (\widehat{ABCD} read A\widehat{BC}D, \widehat{x+y} in
 * Latin Modern x\widehat{+}y); a narrow base's skewed accent reaches over
 * the next glyph's middle (\widetilde{l}l read \widetilde{ll},
 * \widehat{t}t \widehat{tt}). All uncertain now; a base the accent
 * spans stays sure (mathtext-wideaccents2.tex, mathtext-wideaccents-lm.tex). */
static void
test_wide_accent_bases (void)
{
  g_autoptr (FmDocument) cm = mathtext_fixture_open ("mathtext-wideaccents2.pdf");
  g_autoptr (FmDocument) lm = mathtext_fixture_open ("mathtext-wideaccents-lm.pdf");

  for (int page = 0; page < 4; page++)
    check_page_uncertain (cm, page, NULL);
  /* in the box around its glyphs (as the detector's) \\widetilde{WXYZ}
   * had read W\\widetilde{XY}Z, certain: W's italic correction (0.13 em)
   * stands between W and X */
  {
    g_autoptr (GError) error = NULL;
    FmRect box = page_text_box (cm, 1);
    g_autoptr (FmRegion) region = fm_region_new (1, FM_REGION_DISPLAY, &box);
    FmMathTextResult *res = fm_mathtext_read_region (cm, region, &error);
    g_assert_no_error (error);
    g_assert_cmpint (res->verdict, ==, FM_MATHTEXT_UNCERTAIN);
    fm_mathtext_result_free (res);
  }
  check_page_uncertain (lm, 0, NULL);
  check_page_uncertain (lm, 1, NULL);
  check_page (lm, 2, "\\widehat{xy}+\\widetilde{D}");
}

/* One-row matrices read certain and wrong before (review of reader12l,
 * mathtext-matrixrow2.tex): a cell's italic correction widens its column
 * gap ([V&W] read \bigl[V\quad W\bigr] at 10, 11 and 12 pt), a \quad in
 * a cell made the row a \bigl pair of \quads, an empty cell read
 * \qquad. All uncertain now; a clean row stays sure. */
static void
test_matrix_row_doubt (void)
{
  g_autoptr (FmDocument) doc = mathtext_fixture_open ("mathtext-matrixrow2.pdf");

  /* page 5 (a\\ b&c) still reads "ab&c", certain: Poppler's box of "a"
   * takes in the space after it, so no gap is seen */
  for (int page = 0; page < 11; page++)
    if (page != 4)
      check_page_uncertain (doc, page, NULL);
  check_page (doc, 11, "\\begin{pmatrix}a&b&c\\end{pmatrix}");
}

/* Under \\linespread{0.85} Poppler boxes an inline fraction's numerator
 * and denominator as one line (mathtext-linespread.tex): \\frac{x}{y} read
 * \\overline{xy}, certain (review of reader12l); in the detector's box
 * (formulate-cli pdf ... --text-layer) uncertain now. */
static void
test_merged_lines (void)
{
  g_autoptr (FmDocument) doc = mathtext_fixture_open ("mathtext-linespread.pdf");
  g_autoptr (GError) error = NULL;
  FmRect box = { 197.2, 127.79, 201.87, 139.47 };
  g_autoptr (FmRegion) region = fm_region_new (0, FM_REGION_INLINE, &box);
  FmMathTextResult *res = fm_mathtext_read_region (doc, region, &error);

  g_assert_no_error (error);
  g_assert_cmpint (res->verdict, ==, FM_MATHTEXT_UNCERTAIN);
  g_assert_nonnull (strstr (res->reason, "merged lines"));
  fm_mathtext_result_free (res);
}

/* Big operators of the extension fonts: newtxmath's txexs keeps CMEX's
 * 0x7D codes up, read as Latin-1 (mathtext-txexs.tex, text and display
 * size: unknown glyphs before); CMEX's \\biguplus had read \\bigsqcup, its
 * display-size \\bigcup ... \\bigvee come as ASCII punctuation
 * (mathtext-cmexops.tex: "\\left[_{k}A+\\setminus_{k}A" before). */
static void
test_txexs_bigops (void)
{
  g_autoptr (FmDocument) tx = mathtext_fixture_open ("mathtext-txexs.pdf");
  g_autoptr (FmDocument) cm = mathtext_fixture_open ("mathtext-cmexops.pdf");

  const char *want = "\\bigoplus_{i}V_{i}+\\bigotimes_{j}W+\\bigcup_{k}A+\\bigodot_{l}B+\\biguplus_{m}C+\\coprod_{n}D";

  check_page (tx, 0, want);
  /* display size: Poppler boxes txexs's glyphs 9 pt above their ink's
   * bottom; a box around the ink (as the detector's) */
  {
    g_autoptr (GError) error = NULL;
    FmRect box = page_text_box (tx, 1);
    box.y1 += 12;
    g_autoptr (FmRegion) region = fm_region_new (1, FM_REGION_DISPLAY, &box);
    FmMathTextResult *res = fm_mathtext_read_region (tx, region, &error);
    g_assert_no_error (error);
    g_assert_cmpstr (res->latex, ==, want);
    g_assert_cmpint (res->verdict, ==, FM_MATHTEXT_CERTAIN);
    fm_mathtext_result_free (res);
  }
  check_page (cm, 0, "\\biguplus_{m}C+\\biguplus_{m}C+\\bigcup_{k}A+\\bigcap_{k}A+\\bigwedge_{k}A+\\bigvee_{k}A");
}

/* A display \\prod of CMEX10 at 10 pt in a 12 pt document
 * (mathtext-prod12.tex): on the main line by its ink, not a script of "=". */
static void
test_prod_12pt (void)
{
  g_autoptr (FmDocument) doc = mathtext_fixture_open ("mathtext-prod12.pdf");

  check_page (doc, 0, "P=\\prod_{j\\neq k}a_{j}");
}

/* A box that reaches up into the line above takes in the foot serif of its
 * T (mathtext-struck.tex page 2; development seed 1114, CM: the T of "Than"
 * over "(I,R)" read \\overline{(}, certain where the serif lay in the 2 pt
 * drawn around the box): a stroke of a glyph left out is no rule. */
static void
test_foreign_serif (void)
{
  g_autoptr (FmDocument) doc = mathtext_fixture_open ("mathtext-struck.pdf");
  g_autoptr (GError) error = NULL;
  PopplerPage *page;
  PopplerRectangle *rects = NULL;
  guint n_rects = 0;
  FmRect line = { G_MAXDOUBLE, G_MAXDOUBLE, -G_MAXDOUBLE, -G_MAXDOUBLE };
  double above = -G_MAXDOUBLE, top = G_MAXDOUBLE;

  fm_document_lock (doc);
  page = fm_document_get_page_locked (doc, 1, &error);
  g_assert_no_error (error);
  g_assert_true (poppler_page_get_text_layout (page, &rects, &n_rects));
  for (guint i = 0; i < n_rects; i++)
    top = MIN (top, MIN (rects[i].y1, rects[i].y2));
  /* the first line's glyphs start at the top; the formula's below them */
  for (guint i = 0; i < n_rects; i++)
    {
      double y0 = MIN (rects[i].y1, rects[i].y2), y1 = MAX (rects[i].y1, rects[i].y2);
      if (rects[i].x2 == rects[i].x1)
        continue;
      if (y0 < top + 5)
        above = MAX (above, y1);
      else
        {
          line.x0 = MIN (line.x0, MIN (rects[i].x1, rects[i].x2));
          line.x1 = MAX (line.x1, MAX (rects[i].x1, rects[i].x2));
          line.y0 = MIN (line.y0, y0);
          line.y1 = MAX (line.y1, y1);
        }
    }
  g_free (rects);
  g_object_unref (page);
  fm_document_unlock (doc);
  g_assert_cmpfloat (line.y0, >, above);

  /* the serif in the render around the box: certain, without it; inside
   * the box: its ink stays unexplained (uncertain), still no rule */
  for (int k = 0; k < 2; k++)
    {
      FmRect box = { line.x0, above - (k == 0 ? 1.7 : 2.7), line.x1, line.y1 };
      g_autoptr (FmRegion) region = fm_region_new (1, FM_REGION_INLINE, &box);
      FmMathTextResult *res = fm_mathtext_read_region (doc, region, &error);
      g_assert_no_error (error);
      if (g_test_verbose ())
        g_printerr ("%s (%s)\n", res->latex, res->reason ? res->reason : "certain");
      g_assert_cmpstr (res->latex, ==, "(I,R)");
      if (k == 0)
        g_assert_cmpint (res->verdict, ==, FM_MATHTEXT_CERTAIN);
      fm_mathtext_result_free (res);
    }
}

/* A sized delimiter with no partner on its line (mathtext-evalbar.tex): an
 * evaluation bar, \big| or \Big| by its ink, not a \left| without
 * \right (development seed 1124); uncertain all the same (the box may have
 * cut the partner off). */
static void
test_eval_bar (void)
{
  g_autoptr (FmDocument) doc = mathtext_fixture_open ("mathtext-evalbar.pdf");

  check_page_uncertain (doc, 0, "\\frac{\\partial}{\\partial z_{k}}\\Big|_{p}");
  check_page_uncertain (doc, 1, "f\\big|_{U}");
  check_page_uncertain (doc, 2, "g\\bigl[x+y");
}

/* fourier's Fourier-Math-Symbols is OMS-encoded like CMSY: its mapstochar
 * comes as "7" (mathtext-fourier-maps.tex; "T7\\longrightarrow\\Gamma(T)"
 * and "\\varphi7\\to" before, development seeds 1123 and 1124). */
static void
test_fourier_maps (void)
{
  g_autoptr (FmDocument) doc = mathtext_fixture_open ("mathtext-fourier-maps.pdf");

  check_page (doc, 0, "T\\longmapsto\\Gamma(T)");
  check_page (doc, 1, "\\varphi\\mapsto x^{2}");
  check_page (doc, 2, "a\\neq b");
}

/* A sized bar inside a pair of other delimiters is a \\middle|
 * (mathtext-middle.tex: "\\left\\{x\\left|\\frac{x}{2}>0\\right\\}" before,
 * no LaTeX); not sure (a lone bar may be a lost \\right|). Bars that pair
 * among themselves stay a pair; a bar with a script or shorter than the
 * pair is no \\middle| (\\Big|_{0}, \\big|). */
static void
test_middle_bar (void)
{
  g_autoptr (FmDocument) doc = mathtext_fixture_open ("mathtext-middle.pdf");

  check_page_uncertain (doc, 0, "\\left\\{x\\middle|\\frac{x}{2}>0\\right\\}");
  check_page_uncertain (doc, 1, "\\left(\\frac{a}{b}\\middle|c\\right)");
  check_page (doc, 2, "\\left[\\left|\\frac{a}{b}\\right|+1\\right]");
  /* a bar with a script, or shorter than its pair, keeps its own size */
  check_page_uncertain (doc, 3, "g=\\left(\\frac{\\partial f}{\\partial x}\\Big|_{0}\\right)^{2}");
  check_page_uncertain (doc, 4, "P\\left(\\frac{\\frac{a}{b}}{\\frac{c}{d}}\\big|E\\right)");
}

/* A display-size big operator with its scripts beside it is \\nolimits
 * (mathtext-nolimits.tex; "p=a-\\sum_{j\\in E}h_{j}", certain, before); limits
 * above and below, a text-size \\sum in a fraction or a cases cell, and a
 * 12 pt display's (CMEX10 stays at 10 pt), are not. */
static void
test_nolimits (void)
{
  g_autoptr (FmDocument) doc = mathtext_fixture_open ("mathtext-nolimits.pdf");

  check_page (doc, 0, "p=a-\\sum\\nolimits_{j\\in E}h_{j}");
  check_page (doc, 1, "p=\\sum_{j\\in E}h_{j}");
  check_page (doc, 2, "\\frac{1}{n}\\sum_{k=1}^{n}x_{k}+\\frac{\\sum_{k}x_{k}}{2}");
  check_page (doc, 3, "\\bigoplus\\nolimits_{i}M_{i}=\\prod\\nolimits_{i}^{n}N");
  check_page (doc, 4, "f=\\begin{cases}\\sum_{i}x_{i}&x>0\\\\0&x\\leq0\\end{cases}");
  check_page (doc, 5, "S=\\sum_{i=1}^{n}a_{i}");
}

/* Extensible arrows (tests/fixtures/pdf/mathtext-xarrows.tex, pdfLaTeX CM,
 * and mathtext-xarrows-xe.tex, XeLaTeX Latin Modern Math): the shaft's
 * touching minus signs are the arrow's, the label over it its argument
 * (read as a row of minus signs under an \underline before, pdf-e2e seed
 * 1039); labels over and under are \xrightarrow[..]{..} (read CERTAIN as
 * \longrightarrow_{u}^{\sim}); word spaces in a label are not read, so not
 * sure; a label over one arrow glyph is \overset's (\xrightarrow draws a
 * longer arrow); amscd's arrows, longer than their labels, are not sure. */
static void
test_xarrows (void)
{
  g_autoptr (FmDocument) doc = mathtext_fixture_open ("mathtext-xarrows.pdf");
  g_autoptr (FmDocument) xe = mathtext_fixture_open ("mathtext-xarrows-xe.pdf");
  g_autoptr (FmDocument) stix = mathtext_fixture_open ("mathtext-xarrows-stix2.pdf");
  g_autoptr (FmDocument) cm2 = mathtext_fixture_open ("mathtext-xarrows-cm2.pdf");
  g_autoptr (FmDocument) stixm = mathtext_fixture_open ("mathtext-xarrows-stixm-xe.pdf");
  FmMathTextResult *res;

  check_page (doc, 0, "A\\xrightarrow{f_{1}+g}B");
  check_page (doc, 1, "X\\xleftarrow{\\alpha\\beta\\gamma}Y");
  check_page (doc, 2, "X\\xrightarrow[u]{\\sim}Y");
  res = read_page (doc, 3);
  g_assert_cmpint (res->verdict, ==, FM_MATHTEXT_UNCERTAIN);
  g_assert_nonnull (strstr (res->reason, "a space in a script"));
  g_assert_nonnull (strstr (res->latex, "\\xrightarrow{1,f_{j},f_{j+1}\\circ f_{j}}"));
  fm_mathtext_result_free (res);
  check_page (doc, 4, "X\\overset{f}{\\to}Y");
  /* amscd's arrows are longer than \\xrightarrow's for their labels */
  res = mathtext_fixture_read_page (doc, 5);
  g_assert_cmpint (res->verdict, ==, FM_MATHTEXT_UNCERTAIN);
  g_assert_nonnull (strstr (res->reason, "longer than its label"));
  fm_mathtext_result_free (res);
  check_page (xe, 0, "M\\xrightarrow{\\varphi_{e}\\circ\\psi}N");
  /* stix2's short shaft is one "," of the arrow's font (read
   * A,\\overset{f}{\\to}B CERTAIN before); spaces at a label's edges, and
   * labels over arrows \\xrightarrow does not draw (mathtools' \\xmapsto,
   * \\xleftrightarrow, \\xhookrightarrow; \\overset over \\longrightarrow),
   * are not sure (each read CERTAIN as another before:
   * mathtext-xarrows-stix2.tex, mathtext-xarrows-cm2.tex) */
  check_page (stix, 0, "A\\xrightarrow{f}B");
  for (int p = 1; p < 6; p++)
    check_page_uncertain (stix, p, NULL);
  for (int p = 0; p < 6; p++)
    check_page_uncertain (cm2, p, NULL);
  /* a long arrow that is no row of shaft pieces with a label as long as
   * it: \overset{..}{\longrightarrow} (one minus piece, or one U+27F6
   * glyph, which \xrightarrow never draws) */
  check_page_uncertain (xe, 2, NULL);
  /* STIX Two Math's arrow is 1.22 em: a short label's arrow is that long
   * (mathtext-xarrows-stixm-xe.tex) */
  check_page (stixm, 0, "A\\xrightarrow{f}B");
  check_page (xe, 1, "X\\xleftarrow{\\alpha\\beta\\gamma}Y");
}

/* Sized pairs around fractions and scripts
 * (tests/fixtures/pdf/mathtext-bigfrac.tex): a pair shorter than \left
 * would draw around the ink inside is an explicit size (\bigl[\frac{..}{..}\bigr]
 * had read CERTAIN as \left[, pdf-e2e seed 1037); one around scripts within
 * a normal parenthesis's reach is too (f\bigl(x_{0}+r\cos(t),...\bigr) had
 * read \left(, not sure, and the model's plain "(" won, development seed
 * 1133); one as tall as \left's least, or around a sized pair of its
 * height, is either, not sure. */
static void
test_big_around (void)
{
  g_autoptr (FmDocument) doc = mathtext_fixture_open ("mathtext-bigfrac.pdf");
  g_autoptr (FmDocument) two = mathtext_fixture_open ("mathtext-bigfrac2.pdf");

  check_page (doc, 0, "\\left[\\frac{\\partial\\varphi}{\\partial x}\\right]"
                      "\\bigl[\\frac{\\partial\\varphi}{\\partial x}\\bigr]"
                      "\\Bigl[\\frac{\\partial\\varphi}{\\partial x}\\Bigr]");
  check_page (doc, 1, "\\bigl(\\frac{x}{y}\\bigr)+\\left(\\frac{x}{y}\\right)");
  check_page (doc, 2, "f\\bigl(x_{0}+r\\cos(t),y_{0}+r\\sin(t)\\bigr)");
  check_page_uncertain (doc, 3, "\\left[\\frac{\\partial\\varphi}{\\partial x}\\right]");
  /* around a \\bigl pair of its own size (used seed 1041: CERTAIN \\left( before) */
  check_page_uncertain (doc, 4, "\\ell\\left(\\gamma\\bigl([0,t]\\bigr)\\right)");
  /* two CMEX steps taller than \\left draws around the ink: no \\left
   * (mathtext-bigfrac2.tex: \\Biggl(, \\biggl[ read CERTAIN \\left before) */
  check_page_uncertain (two, 0, "\\Biggl(\\frac{a}{b}\\Biggr)");
  check_page_uncertain (two, 1, "\\biggl[\\frac{a}{b}\\biggr]");
}

/* Words of the text font inside a display (mathtext-textwords-*.tex, CM,
 * Times and Libertine, whose word spaces are 0.33, 0.25 and about 0.2
 * em): one \\text group with its spaces and apostrophe, and the word space
 * between a group and the math beside it inside the group (the amsmath
 * guide's "Maxwell's equations" had read
 * \\text{Maxwell}'\\mathrm{s}\\text{equations}, "for x" \\text{for}x, which
 * draw "Maxwellsequations" and "forx"); a lone upright letter is no word
 * of the phrase. Upright words stay uncertain
 * (\\text, \\mathrm or \\operatorname?). */
static void
test_text_words (void)
{
  static const char *const sets[] = { "cm", "times", "libertine" };

  for (guint i = 0; i < G_N_ELEMENTS (sets); i++)
    {
      g_autofree char *name = g_strdup_printf ("mathtext-textwords-%s.pdf", sets[i]);
      g_autoptr (FmDocument) doc = mathtext_fixture_open (name);

      check_page_uncertain (doc, 0, "B'=-\\partial\\times E,\\qquad\\text{Maxwell's equations}");
      check_page_uncertain (doc, 1, "\\partial_{s}f(x)=g(x)\\quad\\text{for }x=x_{0}+Ix_{1}");
      check_page_uncertain (doc, 2, "P_{r-j}=\\begin{cases}0&\\text{if }r-j\\text{ is odd},\\\\1&\\text{if }r-j\\text{ is even}."
                                    "\\end{cases}");
      check_page_uncertain (doc, 3, "x=y+1\\qquad\\text{by }(3.24)");
      /* a lone upright letter after the words is the formula's (read
       * \\text{and d}y, the review of cw12t) */
      check_page_uncertain (doc, 4, "u=v\\quad\\text{and }\\mathrm{d}y=0");
    }
}

/* A thin or word space between atoms TeX sets no space between is written
 * and makes the reading UNCERTAIN (mathtext-spaces.tex; "d(fdz)=...",
 * CERTAIN, before); italic corrections and brackets' side bearings are no
 * space. Under LuaLaTeX the f leans over the thin space after it. */
static void
test_small_spaces (void)
{
  const char *names[] = { "mathtext-spaces.pdf", "mathtext-spaces-lua.pdf" };

  for (guint f = 0; f < G_N_ELEMENTS (names); f++)
    {
      g_autoptr (FmDocument) doc = mathtext_fixture_open (names[f]);
      FmMathTextResult *res;

      res = read_page (doc, 0);
      assert_uncertain_because (res, "d(f\\,dz)=df\\wedge dz=0", "a small space");
      fm_mathtext_result_free (res);
      res = read_page (doc, 1);
      assert_uncertain_because (res, "F=g(x)\\,dx", "a small space");
      fm_mathtext_result_free (res);
      res = read_page (doc, 2);
      assert_uncertain_because (res, "t=0.16\\ \\mu", "a small space");
      fm_mathtext_result_free (res);
      check_page (doc, 3, "f(x)=xf(y)+[A:k][B:k]");
      check_page (doc, 4, "X(s)=F(s)H(s)");
    }
}

/* Plain-size brackets spaced as a \left..\right pair's Inner atom
 * (mathtext-inner.tex): a thin space from an Ord before it, or after it
 * before a full stop, makes it \left..\right, UNCERTAIN; a thin space after
 * the pair before a letter is a typed \, and a pair with no space beside it
 * stays plain and CERTAIN. */
static void
test_inner_pairs (void)
{
  const char *names[] = { "mathtext-inner.pdf", "mathtext-inner-xe.pdf" };

  for (guint f = 0; f < G_N_ELEMENTS (names); f++)
    {
      g_autoptr (FmDocument) doc = mathtext_fixture_open (names[f]);
      FmMathTextResult *res;

      res = read_page (doc, 0);
      assert_uncertain_because (res, "F\\approx-k\\left(x-x_{0}\\right).", "spaced as \\left");
      fm_mathtext_result_free (res);
      res = read_page (doc, 1);
      assert_uncertain_because (res, "v=e^{-ct}\\left(-c\\sin\\omega t+\\omega\\cos\\omega t\\right)", "spaced as \\left");
      fm_mathtext_result_free (res);
      res = read_page (doc, 2);
      assert_uncertain_because (res, "A\\leq\\sup_{z}\\left\\|f(z)\\right\\|.", "spaced as \\left");
      fm_mathtext_result_free (res);
      res = read_page (doc, 3);
      assert_uncertain_because (res, "F=g(x)\\,dx", "a small space");
      fm_mathtext_result_free (res);
      res = read_page (doc, 4);
      g_assert_cmpstr (res->latex, ==, "I=\\int_{0}^{1}|f|\\,d\\mu");
      g_assert_null (strstr (res->reason != NULL ? res->reason : "", "spaced as \\left"));
      fm_mathtext_result_free (res);
      check_page (doc, 5, "a(x)b=c");
      check_page (doc, 6, "\\int_{\\partial B_{r}(z)}f=0");
    }
}

/* Glued italic letters of a text face beside math italic letters are one
 * word, \\mathit, UNCERTAIN (mathtext-itwords.tex: \\textit{Ab} and
 * \\mathit{Lift}, read as math italic letters and CERTAIN before). */
static void
test_italic_words (void)
{
  const char *names[] = { "mathtext-itwords.pdf", "mathtext-itwords-xe.pdf" };

  for (guint f = 0; f < G_N_ELEMENTS (names); f++)
    {
      g_autoptr (FmDocument) doc = mathtext_fixture_open (names[f]);
      FmMathTextResult *res;

      res = read_page (doc, 0);
      assert_uncertain_because (res, "M:\\mathcal{I}\\to\\mathit{Ab}", "italic letters of a text face");
      fm_mathtext_result_free (res);
      res = read_page (doc, 1);
      assert_uncertain_because (res, "x\\in\\mathit{Lift}(y)", "italic letters of a text face");
      fm_mathtext_result_free (res);
    }
}

int
main (int argc, char **argv)
{
  g_test_init (&argc, &argv, NULL);
  g_test_add_func ("/pdf/mathtext/glyph-mapping", test_glyph_mapping);
  g_test_add_func ("/pdf/mathtext/trailing-punctuation", test_trailing_punctuation);
  g_test_add_func ("/pdf/mathtext/neighbour-script", test_neighbour_script);
  g_test_add_func ("/pdf/mathtext/word-row-parallel", test_word_row_parallel);
  g_test_add_func ("/pdf/mathtext/leading-word", test_leading_word);
  g_test_add_func ("/pdf/mathtext/layout", test_layout);
  g_test_add_func ("/pdf/mathtext/lm", test_lm);
  g_test_add_func ("/pdf/mathtext/symbols", test_symbols);
  g_test_add_func ("/pdf/mathtext/uncertain", test_uncertain);
  g_test_add_func ("/pdf/mathtext/symbol-epsilon", test_symbol_epsilon);
  g_test_add_func ("/pdf/mathtext/type3", test_type3);
  g_test_add_func ("/pdf/mathtext/empty-region", test_empty_region);
  g_test_add_func ("/pdf/mathtext/stix2", test_stix2);
  g_test_add_func ("/pdf/mathtext/lost-accent", test_lost_accent);
  g_test_add_func ("/pdf/mathtext/unicode-rules", test_unicode_rules);
  g_test_add_func ("/pdf/mathtext/oms-surd", test_oms_surd);
  g_test_add_func ("/pdf/mathtext/lost-delimiters", test_lost_delimiters);
  g_test_add_func ("/pdf/mathtext/vrules", test_vrules);
  g_test_add_func ("/pdf/mathtext/libertine", test_libertine);
  g_test_add_func ("/pdf/mathtext/struck", test_struck);
  g_test_add_func ("/pdf/mathtext/foreign-serif", test_foreign_serif);
  g_test_add_func ("/pdf/mathtext/text-words", test_text_words);
  g_test_add_func ("/pdf/mathtext/cong-order", test_cong_order);
  g_test_add_func ("/pdf/mathtext/matrix-row", test_matrix_row);
  g_test_add_func ("/pdf/mathtext/nested-dfrac", test_nested_dfrac);
  g_test_add_func ("/pdf/mathtext/inline-style", test_inline_style);
  g_test_add_func ("/pdf/mathtext/display-style-review", test_display_style_review);
  g_test_add_func ("/pdf/mathtext/script-fraction-style", test_script_fraction_style);
  g_test_add_func ("/pdf/mathtext/unicode-denominator-bar", test_unicode_denominator_bar);
  g_test_add_func ("/pdf/mathtext/wide-accents", test_wide_accents);
  g_test_add_func ("/pdf/mathtext/wide-accent-bases", test_wide_accent_bases);
  g_test_add_func ("/pdf/mathtext/matrix-row-doubt", test_matrix_row_doubt);
  g_test_add_func ("/pdf/mathtext/merged-lines", test_merged_lines);
  g_test_add_func ("/pdf/mathtext/txexs-bigops", test_txexs_bigops);
  g_test_add_func ("/pdf/mathtext/prod-12pt", test_prod_12pt);
  g_test_add_func ("/pdf/mathtext/eval-bar", test_eval_bar);
  g_test_add_func ("/pdf/mathtext/fourier-maps", test_fourier_maps);
  g_test_add_func ("/pdf/mathtext/middle", test_middle_bar);
  g_test_add_func ("/pdf/mathtext/nolimits", test_nolimits);
  g_test_add_func ("/pdf/mathtext/xarrows", test_xarrows);
  g_test_add_func ("/pdf/mathtext/big-around", test_big_around);
  g_test_add_func ("/pdf/mathtext/small-spaces", test_small_spaces);
  g_test_add_func ("/pdf/mathtext/inner-pairs", test_inner_pairs);
  g_test_add_func ("/pdf/mathtext/italic-words", test_italic_words);
  g_test_add_func ("/pdf/mathtext/colon-spacing", test_colon_spacing);
  g_test_add_func ("/pdf/mathtext/script-space", test_script_space);
  return g_test_run ();
}
