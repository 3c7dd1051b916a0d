/* fm-latex-check.h - is a recogniser's LaTeX safe to put in a document?
 *
 * Contract: pure functions of a string. fm_latex_check_compiles says whether
 * pdflatex with amsmath and amssymb compiles latex in math mode, as far as a
 * small parser can tell: known commands with their arguments, environments
 * by name, \left and \right, no double scripts, & and \\ only in alignments;
 * so a tex export stays compilable whatever the recogniser wrote.
 * fm_latex_check_tag says whether a label may go inside \tag{}. */
#pragma once

#include <glib.h>

G_BEGIN_DECLS

gboolean fm_latex_check_compiles (const char *latex);
gboolean fm_latex_check_tag      (const char *tag);

G_END_DECLS
