/* fm-latex-check.h - is a recogniser's LaTeX safe to put in a document?
 *
 * Contract: pure functions of a string. fm_latex_check_compiles says whether
 * pdflatex with amsmath and amssymb compiles latex in math mode, as far as a
 * small parser can tell: known commands with their arguments, environments
 * by name, \left and \right, no double scripts, & and \\ only in alignments;
 * so a tex export stays compilable whatever the recogniser wrote.
 * fm_latex_check_well_formed is the same parse with any command and
 * environment taken as defined (and non-ASCII allowed), and a script that
 * has no base refused: whether latex is well-formed whatever the packages,
 * for a reader that must not be sure of a reading that is not.
 * fm_latex_check_tag says whether a label may go inside \tag{}. */
#pragma once

#include <glib.h>

G_BEGIN_DECLS

gboolean fm_latex_check_compiles   (const char *latex);
gboolean fm_latex_check_well_formed (const char *latex);
gboolean fm_latex_check_tag        (const char *tag);

G_END_DECLS
