/* fm-results-preview.h - a typeset preview of one formula (WebKitGTK + KaTeX).
 *
 * Built only when WebKitGTK 6 and Debian's libjs-katex are found; KaTeX is
 * loaded from the local files, nothing is fetched from the network. Built as
 * a module of its own (libformulate-preview.so), which the results panel
 * loads the first time a preview is shown: WebKitGTK and the ~100 libraries
 * it brings are then not linked at start-up. Outside the module, use it
 * through GObject: the type's "latex" (write), "n-rendered", "error" and
 * "message" (read) properties. */
#pragma once

#include <gtk/gtk.h>

G_BEGIN_DECLS

#define FM_TYPE_RESULTS_PREVIEW (fm_results_preview_get_type ())
G_DECLARE_FINAL_TYPE (FmResultsPreview, fm_results_preview, FM, RESULTS_PREVIEW, GtkWidget)

GtkWidget *fm_results_preview_new (void);
/* Typesets latex (NULL or empty clears). */
void       fm_results_preview_set_latex (FmResultsPreview *self, const char *latex);
/* How many formulas the page has typeset (tests); -1 until the page loaded. */
int        fm_results_preview_get_n_rendered (FmResultsPreview *self);
/* The last KaTeX error message ("" when the formula typeset), for the UI. */
const char *fm_results_preview_get_error (FmResultsPreview *self);

/* The message shown instead of the formula when KaTeX cannot typeset it
 * ("KaTeX cannot display this: …"), or NULL while the formula is shown. */
const char *fm_results_preview_get_message (FmResultsPreview *self);

G_END_DECLS
