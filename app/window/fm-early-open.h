/* fm-early-open.h - the PDF named on the command line, opened and its first
 * page rendered on a thread of its own while GTK starts.
 *
 * GTK and libadwaita start on the main thread alone (~0.3 s of a 2-core
 * machine's first core); the document's open, its page sizes and the first
 * render (Poppler's and fontconfig's first use included) take another
 * 0.2-0.3 s that used to start only when the tab existed. main() starts them
 * here at once; the tab's open and the page view's first render of that page
 * then take the results instead of doing the work again. Each result is taken
 * once; everything else opens as before.
 */
#pragma once

#include <cairo.h>
#include <gio/gio.h>

#include "fm-document.h"

G_BEGIN_DECLS

/* From main(), before g_application_run(): when the command line is exactly
 * one or more file names (no option), starts opening the first. */
void fm_early_open_start (int argc, char **argv);
/* After g_application_run(): waits for the thread and drops what nobody took. */
void fm_early_open_finish (void);

/* For the tab's open, on a worker thread: when file is the one started and
 * not taken yet (and no password is given), waits for its open and returns
 * TRUE with what fm_document_new_for_file() and the page sizes gave (the
 * document or the error; sizes: n_pages (width, height) pairs, g_free).
 * FALSE: open it yourself. */
gboolean fm_early_open_claim (GFile        *file,
                              const char   *password,
                              FmDocument  **document,
                              double      **sizes,
                              int          *n_pages,
                              GError      **error);

/* The same without waiting, on the main thread: FALSE also while the thread
 * still opens it. */
gboolean fm_early_open_try_claim (GFile        *file,
                                  const char   *password,
                                  FmDocument  **document,
                                  double      **sizes,
                                  int          *n_pages,
                                  GError      **error);

/* The render of page_index at scale when it is done already (the page view's
 * first layout, so the window's first frame shows the page), else NULL. */
cairo_surface_t *fm_early_open_take_render_now (FmDocument *document,
                                                int         page_index,
                                                double      scale);
/* For the page view, on the main thread: whether the early thread renders
 * (or rendered) page_index of document at scale (device pixels per point, as
 * asked before fm_render_fit_scale), not taken yet. */
gboolean fm_early_open_has_render (FmDocument *document,
                                   int         page_index,
                                   double      scale);
/* The view's first update of the document's pages did not want the render
 * (another page or none): its memory goes back. */
void     fm_early_open_release (FmDocument *document);
/* Waits for that render off the main thread (a GTask of document). */
void             fm_early_open_take_render_async  (FmDocument          *document,
                                                   int                  page_index,
                                                   GCancellable        *cancellable,
                                                   GAsyncReadyCallback  callback,
                                                   gpointer             user_data);
cairo_surface_t *fm_early_open_take_render_finish (FmDocument    *document,
                                                   GAsyncResult  *result,
                                                   GError       **error);
/* Whether the page view drew the early render (for the tests). */
gboolean         fm_early_open_get_render_used (void);

/* The page view's width to predict the first render's zoom from when the
 * user's state has none (a first start): the default window's (1200 px,
 * the schema's window-width) less the results panel (its 340 px and the
 * paned's handle), as GTK 4.8 + libadwaita 1.2 allocate it. The GUI test
 * /daily/early-open checks it against a window of the default size. */
#define FM_EARLY_OPEN_DEFAULT_VIEW_WIDTH 849

G_END_DECLS
