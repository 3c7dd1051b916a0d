/* test-export.c - the tex export's LaTeX check: what it accepts compiles with
 * pdflatex, and what it rejects as an error would have stopped pdflatex.
 * The compile checks skip without pdflatex on PATH. */
#include "fm-export.h"
#include "fm-latex-check.h"

#include <glib/gstdio.h>
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

int
main (int argc, char **argv)
{
  g_test_init (&argc, &argv, NULL);
  g_test_add_func ("/export/latex-check/verdicts", test_check_verdicts);
  g_test_add_func ("/export/latex-check/pdflatex", test_pdflatex);
  return g_test_run ();
}
