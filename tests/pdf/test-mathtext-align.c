/* Column alignment of multi-line displays in the text-layer reader
 * (app/document/fm-mathtext-align.c): aligned, gathered, cases and matrices
 * from tests/fixtures/pdf/mathtext-align.tex (one display per page, pdfLaTeX,
 * Computer Modern). */
#include "fm-document.h"
#include "fm-mathtext.h"
#include "mathtext-fixture.h"

#include <string.h>

/* The page reads `want`; certain or not, and for an uncertain one the
 * reason holds `why`. */
static void
check_page (FmDocument *doc, int page, const char *want, gboolean certain, const char *why)
{
  FmMathTextResult *res = mathtext_fixture_read_page (doc, page);

  if (g_test_verbose ())
    g_printerr ("page %d: %s (%s)\n", page + 1, res->latex, res->reason ? res->reason : "certain");
  g_assert_cmpstr (res->latex, ==, want);
  g_assert_cmpint (res->verdict, ==, certain ? FM_MATHTEXT_CERTAIN : FM_MATHTEXT_UNCERTAIN);
  if (why != NULL)
    g_assert_nonnull (strstr (res->reason, why));
  fm_mathtext_result_free (res);
}

/* A page whose `&` the image cannot place: read UNCERTAIN with its
 * spelling flagged, whatever the spelling. */
static void
check_unsure_spelling (FmDocument *doc, int page)
{
  FmMathTextResult *res = mathtext_fixture_read_page (doc, page);

  if (g_test_verbose ())
    g_printerr ("%s (%s)\n", res->latex, res->reason ? res->reason : "certain");
  g_assert_cmpint (res->verdict, ==, FM_MATHTEXT_UNCERTAIN);
  g_assert_true (res->unsure_spelling);
  fm_mathtext_result_free (res);
}

static void
test_aligned (void)
{
  g_autoptr (FmDocument) doc = mathtext_fixture_open ("mathtext-align.pdf");

  check_page (doc, 0, "\\begin{aligned}a&=b+c\\\\&=d\\end{aligned}", TRUE, NULL);
  check_page (doc, 1, "\\begin{aligned}x_{1}&=y^{2}+1\\\\z&\\leq w\\end{aligned}", TRUE, NULL);
  /* neither a relation column nor centred: every row starts at one x to
   * the point and its relations stand apart, so `&` is first (issue 12) */
  check_page (doc, 8, "\\begin{aligned}&a+b=c\\\\&x=y+z\\end{aligned}", TRUE, NULL);
  /* a row that continues the one above: a binary operator first, a \\quad
   * or \\qquad right of the relation column, written */
  check_page (doc, 14, "\\begin{aligned}a&=b+c-d\\\\&\\quad+e-f\\\\&=g\\end{aligned}", TRUE, NULL);
  check_page (doc, 15, "\\begin{aligned}x&=a+b\\\\&\\qquad-c\\end{aligned}", TRUE, NULL);
  /* a row that starts with `+` elsewhere continues nothing: gathered's
   * centred `+d` (half a quad right of `=`), multline's flush right one */
  check_page (doc, 19, "\\begin{gathered}a=b+c\\\\+d\\end{gathered}", FALSE, "centred");
  check_page (doc, 20, "\\begin{aligned}a=b+c\\\\+d\\end{aligned}", FALSE, "several lines");
  /* gathered's `+fg` a \\qquad's offset right of `=` by chance: rows that
   * are also centred, uncertain (was a CERTAIN aligned) */
  check_page (doc, 21, "\\begin{aligned}a&=b+c+d+e\\\\&\\qquad+fg\\end{aligned}", FALSE, "centred rows");
}

static void
test_gathered (void)
{
  g_autoptr (FmDocument) doc = mathtext_fixture_open ("mathtext-align.pdf");

  check_page (doc, 2, "\\begin{gathered}a+b+c=d\\\\x=y\\end{gathered}", FALSE, "centred");
}

static void
test_cases (void)
{
  g_autoptr (FmDocument) doc = mathtext_fixture_open ("mathtext-align.pdf");
  FmMathTextResult *res;

  check_page (doc, 3, "f(x)=\\begin{cases}1&x\\geq0,\\\\-x&x<0.\\end{cases}", TRUE, NULL);
  /* a brace built from pieces: one delimiter, one symbol */
  check_page (doc, 7, "g(n)=\\begin{cases}0&n=0,\\\\1&n=1,\\\\2&n=2,\\\\n^{2}&n>2.\\end{cases}", TRUE, NULL);
  res = mathtext_fixture_read_page (doc, 7);
  {
    guint braces = 0;
    for (guint k = 0; k < res->symbols->len; k++)
      braces += strcmp (res->symbols->pdata[k], "\\{") == 0;
    g_assert_cmpuint (braces, ==, 1);
  }
  fm_mathtext_result_free (res);
}

static void
test_matrices (void)
{
  g_autoptr (FmDocument) doc = mathtext_fixture_open ("mathtext-align.pdf");

  check_page (doc, 4, "A=\\begin{bmatrix}1&2&3\\\\4&5&6\\end{bmatrix}", TRUE, NULL);
  check_page (doc, 5, "\\left(\\begin{matrix}a&b\\\\c&d\\end{matrix}\\right)", FALSE, "matrix delimiters");
  /* pdfLaTeX's bars of this size have no text-layer glyph (CMEX's code 12
   * repeated): they are found in the ink (fm-mathtext-delim.c) */
  check_page (doc, 6, "\\begin{vmatrix}a&b&0\\\\c&d&0\\\\0&0&1\\end{vmatrix}", FALSE, "matrix delimiters");
}

/* Display fractions on several rows: TeX sets the rows \\lineskip apart,
 * and each bar's parts are the line nearest it, not the neighbouring rows'
 * (the longest bar had taken the rows above and below into its parts). */
static void
test_stacked_fractions (void)
{
  g_autoptr (FmDocument) doc = mathtext_fixture_open ("mathtext-align.pdf");

  check_page (doc, 9, "\\begin{aligned}w&=\\frac{1-A}{1+A}\\\\&=\\frac{(1+u)(1+v)}{(1-u)(1-v)}\\\\"
              "&=\\frac{u+v}{1+uv}\\end{aligned}", TRUE, NULL);
  /* text-style fractions in a matrix: rows by their bars, the brackets
   * over both rows in none */
  check_page (doc, 10, "H=\\begin{bmatrix}\\frac{a}{b}&\\frac{c}{d}\\\\\\frac{e}{f}&\\frac{g}{h}\\end{bmatrix}",
              TRUE, NULL);
  /* an empty column doubles the gap: `&&` is not written, so uncertain */
  check_page (doc, 11, "H=\\begin{bmatrix}\\frac{a}{b}&\\frac{c}{d}\\\\\\frac{e}{f}&\\frac{g}{h}\\end{bmatrix}",
              FALSE, "empty column");
  /* a rule between a numerator's lines: a fraction inside it, kept; its
   * parts are full size: \\dfrac (or \\displaystyle\\frac), uncertain */
  check_page (doc, 12, "x=\\frac{\\dfrac{a+b}{c}}{d+e}", FALSE, "display-style fraction inside");
  /* the fractions share a line with `B=` and with the integral, which do
   * not share one with each other: one line, whatever the items' order */
  check_page (doc, 13, "\\mathbf{B}=\\frac{kI}{c^{2}}\\int\\frac{d\\ell\\times\\mathbf{r}}{r^{3}}", TRUE, NULL);
}

/* Display-style fractions inside a fraction's part: the inner bar lies on
 * the math axis, about at the middle of the full-size line it sits in
 * (`1+`), so the part's lines are joined by the bar that has one of them
 * as its own part, not by where the bar lies between their middles (the
 * inner fraction had been cut to `\\frac{1}{1}`, `1+` and `\\overline{x}`).
 * \\dfrac and \\cfrac are read as \\dfrac (the corpus has no \\cfrac): uncertain. */
static void
test_inner_display_fractions (void)
{
  g_autoptr (FmDocument) doc = mathtext_fixture_open ("mathtext-align.pdf");

  check_page (doc, 16, "x=\\frac{1}{1+\\dfrac{1}{x}}", FALSE, "display-style fraction inside");
  check_page (doc, 17, "\\frac{\\left(\\dfrac{a}{b}\\right)^{2}}{c}", FALSE, "display-style fraction inside");
  check_page (doc, 18, "\\frac{1}{1+\\dfrac{1}{x}}", FALSE, "display-style fraction inside");
}

/* Arrays and column pairs (pages 23-28). */
static void
test_arrays (void)
{
  g_autoptr (FmDocument) doc = mathtext_fixture_open ("mathtext-align.pdf");
  FmMathTextResult *res;
  guint bars = 0;

  /* `\qquad\text{for }\;` in every row: the text's word space and \; (0.61
   * em) are no column (base: `\text{for}&0<x<1`, a matrix of three
   * columns); left-aligned columns are an array's, not a matrix's; the
   * \qquad is not written, so uncertain; the word spaces around `and`
   * are its group's (TeX sets none beside a text group) */
  check_page (doc, 22, "\\begin{array}{ll}u_{t}=u_{xx}&\\text{for}\\;0<x<1\\text{ and }t>0,\\\\"
              "u(0,t)=u(1,t)=0&\\text{for}\\;t>0,\\\\u(x,0)=100&\\text{for}\\;0<x<1.\\end{array}", FALSE,
              "columns without delimiters");
  /* the same gap in cases: two columns (base: a brace over three) */
  check_page (doc, 23, "f(x)=\\begin{cases}1&\\text{if}\\;x>0,\\\\0&\\text{if}\\;x\\leq0.\\end{cases}", FALSE,
              "upright word");
  /* array{rcl}: the relation 1 em from either side (base: an uncertain
   * aligned with \quad after each relation) */
  check_page (doc, 24, "\\begin{array}{rcl}f(x)&=&a+b\\\\&=&c\\\\&\\leq&d+e\\end{array}", TRUE, NULL);
  check_page (doc, 25, "\\begin{array}{rcl}x_{1}&=&y^{2}\\\\g(z)&\\subset&w\\end{array}", TRUE, NULL);
  /* the rule of an augmented matrix is drawn; the reader's ink finder
   * takes it for a bar, which here is the spec's `|` (base: a middle row
   * `\left[\left|\right]`); columns of one-digit cells do not show their
   * alignment, so uncertain */
  check_page (doc, 26, "\\left[\\begin{array}{ccc|c}1&2&3&4\\\\5&6&7&8\\end{array}\\right]", FALSE, "one width");
  res = mathtext_fixture_read_page (doc, 26);
  for (guint k = 0; k < res->symbols->len; k++)
    bars += strcmp (res->symbols->pdata[k], "|") == 0;
  g_assert_cmpuint (bars, ==, 0);
  fm_mathtext_result_free (res);
  /* aligned's two column pairs, \minalignsep (1 em) apart (base: `b+c\quad
   * d=e` and `yz=w+v`) */
  check_page (doc, 27, "\\begin{aligned}a_{1}&=b+c&d_{1}&=e\\\\x&=y&z&=w+v\\end{aligned}", TRUE, NULL);
  /* second left-hand sides that start at one x: `&d&=e` or `&&d=e` */
  check_page (doc, 28, "\\begin{aligned}a_{1}&=b+c&d&=e\\\\x&=y&z&=w+v\\end{aligned}", FALSE, "`&&`");
}

/* fourier builds \longmapsto from a bar the text layer calls `7`, a
 * minus and an arrow: in an array{rcl}'s middle column more than the
 * relation is UNCERTAIN, though the columns are read (it was CERTAIN). */
static void
test_rcl_middle (void)
{
  g_autoptr (FmDocument) doc = mathtext_fixture_open ("mathtext-align-fourier.pdf");
  FmMathTextResult *res = mathtext_fixture_read_page (doc, 0);

  if (g_test_verbose ())
    g_printerr ("%s (%s)\n", res->latex, res->reason ? res->reason : "certain");
  g_assert_true (g_str_has_prefix (res->latex, "\\begin{array}{rcl}"));
  g_assert_cmpint (res->verdict, ==, FM_MATHTEXT_UNCERTAIN);
  g_assert_nonnull (strstr (res->reason, "middle column"));
  fm_mathtext_result_free (res);
  /* Fourier's glyph boxes start at the ink: `&x=1 \\ &y=22` starts apart
   * and aligns at the relation, but `&` may be first (review of reader12s:
   * read `x&=1`, CERTAIN); a spelling the image cannot settle */
  check_unsure_spelling (doc, 1);
}

/* mathptmx's virtual math italic draws f 0.15 em right of its TeX origin
 * and C 0.05 em left (reader12t's probes): a row's start tells where `&`
 * stands only with the measured moves counted. */
static void
test_origins (void)
{
  g_autoptr (FmDocument) doc = mathtext_fixture_open ("mathtext-align-origins.pdf");

  /* x and f are measured: starts apart beyond their moves, relations at one
   * x to the point: `&` at the relation (was UNCERTAIN) */
  check_page (doc, 0, "\\begin{aligned}x&=1\\\\f&=2\\end{aligned}", TRUE, NULL);
  /* `&` first, f's and C's moves set the starts 0.2 em apart: a spelling
   * the image cannot settle (was `f&=1` CERTAIN) */
  check_unsure_spelling (doc, 1);
  /* `&` first, relations apart: read with `&` first, not sure (was read
   * without `&`, and the model's agreeing `f&=1` stood) */
  check_page (doc, 2, "\\begin{aligned}&f=1\\\\&a+b=2\\end{aligned}", FALSE, "start at one x");
}

/* The review of align12m (mathtext-align-review.pdf, mathtext-align-12pt.pdf):
 * readings that had been CERTAIN and wrong. */
static void
test_review (void)
{
  g_autoptr (FmDocument) doc = mathtext_fixture_open ("mathtext-align-review.pdf");
  g_autoptr (FmDocument) doc12 = mathtext_fixture_open ("mathtext-align-12pt.pdf");
  FmMathTextResult *res;
  guint bars = 0;

  /* `&\quad\Longrightarrow\quad`, `\quad\implies\quad` and gathered's
   * `a\quad=\quad b` stand 1.28 and 1.56 em from the sides, an array's
   * relation 10 pt (all three had read a CERTAIN array{rcl}) */
  check_page (doc, 0, "\\begin{aligned}A&\\Longrightarrow\\quad B\\\\C+D&\\Longrightarrow\\quad E\\end{aligned}", FALSE,
              "wide gap before the relation column");
  check_page (doc, 1, "\\begin{aligned}A&\\Longrightarrow\\quad B\\\\C+D&\\Longrightarrow\\quad E\\end{aligned}", FALSE,
              "wide gap before the relation column");
  check_page (doc, 2, "\\begin{aligned}a&=\\quad b\\\\c&=\\quad d\\end{aligned}", FALSE, "wide gap before");
  /* at 12pt a \quad is 1 em, an array's gap 0.83 em: `&\quad\le\quad` is
   * no array (was CERTAIN), a real array{rcl} is one (was an aligned) */
  check_page (doc12, 0, "\\begin{aligned}A&\\leq\\quad B\\\\C+D&\\leq\\quad E\\end{aligned}", FALSE,
              "wide gap before the relation column");
  check_page (doc12, 1, "\\begin{array}{rcl}f(x)&=&a+b\\\\g(z)&\\leq&c\\end{array}", TRUE, NULL);
  /* `xx\quad y=1` over `x\quad yy=1`: the second `=` at one x by chance,
   * one gap before it in both rows (was a CERTAIN column pair) */
  check_page (doc, 3, "\\begin{aligned}ab&=xx&y&=1\\\\a&=x&yy&=1\\end{aligned}", FALSE, "\\quad between pairs");
  check_page (doc, 4, "\\begin{aligned}ab&=xx&y&=1\\\\a&=x&yy&=1\\end{aligned}", FALSE, "\\quad between pairs");
  /* \mapsto's bar, a word of its own at the column's start, is dropped:
   * an arrow in the middle column is uncertain (`gg&\to&c` was CERTAIN) */
  check_page (doc, 5, "\\begin{array}{rcl}f&\\mapsto&a\\\\gg&\\to&c\\end{array}", FALSE, "an arrow");
  check_page (doc, 6, "\\begin{array}{rcl}f&\\to&a\\\\gg&\\to&c\\end{array}", FALSE, "an arrow");
  /* a brace around two matrices and a \middle| is no augmented matrix
   * (was `\left|...\right|`, an array CERTAIN but for the shape) */
  check_page (doc, 7, "\\left\\{\\begin{array}{cc|c}a&b&e\\\\c&d&f\\end{array}\\right\\}", FALSE,
              "ruled array in braces or bars");
  /* a \middle| at no column gap keeps its symbol (it had vanished) */
  res = mathtext_fixture_read_page (doc, 8);
  g_assert_cmpint (res->verdict, ==, FM_MATHTEXT_UNCERTAIN);
  for (guint k = 0; k < res->symbols->len; k++)
    bars += strcmp (res->symbols->pdata[k], "|") == 0;
  g_assert_cmpuint (bars, ==, 1);
  fm_mathtext_result_free (res);
  /* \hline under an augmented matrix's rows: the reader's fraction over
   * the rows below it spans columns (was CERTAIN) */
  check_page (doc, 9, "\\begin{bmatrix}1\\quad2\\quad3\\quad4\\\\\\frac{5\\quad6\\quad7\\quad8}{9\\quad1\\quad2\\quad3}"
              "\\end{bmatrix}", FALSE, "fraction bar over columns");
}

int
main (int argc, char **argv)
{
  g_test_init (&argc, &argv, NULL);
  g_test_add_func ("/pdf/mathtext-align/aligned", test_aligned);
  g_test_add_func ("/pdf/mathtext-align/gathered", test_gathered);
  g_test_add_func ("/pdf/mathtext-align/cases", test_cases);
  g_test_add_func ("/pdf/mathtext-align/matrices", test_matrices);
  g_test_add_func ("/pdf/mathtext-align/stacked-fractions", test_stacked_fractions);
  g_test_add_func ("/pdf/mathtext-align/inner-display-fractions", test_inner_display_fractions);
  g_test_add_func ("/pdf/mathtext-align/arrays", test_arrays);
  g_test_add_func ("/pdf/mathtext-align/rcl-middle", test_rcl_middle);
  g_test_add_func ("/pdf/mathtext-align/review", test_review);
  g_test_add_func ("/pdf/mathtext-align/origins", test_origins);
  return g_test_run ();
}
