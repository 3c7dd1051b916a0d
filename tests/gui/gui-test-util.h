/* gui-test-util.h - helpers shared by the GUI tests (tests/gui/test-gui*.c).
 *
 * Every test drives one application and one window for its whole run; the
 * helpers below read them from these globals, which gui_test_start_app() and
 * gui_test_show_window() set (the predicates are GSourceFunc-like callbacks
 * for wait_for(), so they take no window argument). A test's main() is:
 *
 *   if (!gui_test_init (&argc, &argv, "formulate-gui-x", FALSE)) return 77;
 *   gui_test_start_app (); gui_test_show_window ();
 *   g_test_add_func (...); return gui_test_finish (g_test_run ());
 */
#pragma once

#include <adwaita.h>
#include <gtk/gtk.h>

#include "fm-application.h"
#include "fm-software-gl.h"
#include "fm-window.h"

extern FmApplication *app;
extern FmWindow *window;
/* A directory of the test's own, made by gui_test_init(). */
extern char *tmp_dir;

/* The environment every GUI test runs in, then g_test_init() and gtk_init_check():
 * a fresh tmp_dir (named from tmp_name) as XDG_DATA_HOME and XDG_STATE_HOME (the
 * user's recent files, settings and remembered positions stay out of it),
 * memory GSettings, no accessibility bus, WebKit without its sandbox (a
 * container run as root), $FORMULATE_MODEL the tiny test model unless set.
 * strict_logs: every warning fatal, except the missing session bus.
 * FALSE (after printing why) when there is no display: main() returns 77. */
gboolean gui_test_init (int *argc, char ***argv, const char *tmp_name, gboolean strict_logs);
/* The application, registered as a user's would be, with the web preview off
 * (it gets its own test; elsewhere it would only add a web process). */
void gui_test_start_app (void);
/* The window, 1280 x 860, presented. */
void gui_test_show_window (void);
/* After g_test_run(): closes every tab (renders, detection and Find running on
 * the GTask pool would use Poppler while exit() destroys its C++ statics),
 * the window and the application; returns result. */
int gui_test_finish (int result);

/* data/samples/sample.pdf of the source tree. */
char *sample_path (void);
/* The window saved as name (save_widget_screenshot, tmp_dir). */
gboolean save_screenshot (const char *name);

/* The source tree ($FE_SOURCE_ROOT as set by meson test, else the configured one). */
const char *source_root (void);

/* Iterates the main loop until done(data) or timeout; FALSE on timeout. */
gboolean wait_for (gboolean (*done) (gpointer), gpointer data, double timeout_s);

/* Iterates the main loop for a fixed time (lets redraws and idles run). */
void spin (double seconds);

FmDocumentTab *current_tab (void);

/* The first of root and its descendants (depth first, in child order) that
 * match accepts, or NULL: the one widget walk behind every finder of the GUI
 * tests, which differ only in what they look for. */
typedef gboolean (*WidgetMatch) (GtkWidget *widget, gconstpointer data);
GtkWidget *find_widget (GtkWidget *root, WidgetMatch match, gconstpointer data);

/* Saves widget (a toplevel: the window or a dialog) as a PNG named name in
 * $FM_SCREENSHOT_DIR, else in dir. */
gboolean save_widget_screenshot (GtkWidget *widget, const char *dir, const char *name);

/* The window's "close-dialog" (results not exported), or NULL. */
/* The visible Adw.MessageDialog whose widget name is name, or NULL. */
AdwMessageDialog *find_message_dialog (const char *name);
AdwMessageDialog *find_close_dialog (void);
/* As a click on the dialog's button does: the response, then the dialog closes. */
void answer_dialog (AdwMessageDialog *dialog, const char *response);
/* Closes the current tab as Ctrl+W does and answers "Discard" when asked. */
void close_tab_discarding (void);

/* Predicates for wait_for(); data is unused. */
gboolean no_tabs (gpointer data);
/* No toast on show or queued (the window's own count). */
gboolean no_toasts_shown (gpointer data);
gboolean tab_loaded (gpointer data);
gboolean page_painted (gpointer data);
gboolean detection_done (gpointer data);
gboolean engine_settled (gpointer data);
/* Every formula (equation numbers are none) is done or failed, and the engine settled. */
gboolean all_recognized (gpointer data);
