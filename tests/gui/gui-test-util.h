/* gui-test-util.h - helpers shared by the GUI tests (test-gui.c, test-gui-zh-cn.c).
 *
 * Both tests drive one application and one window for their whole run; the
 * helpers below read them from these two globals, which each test sets in its
 * main() (the predicates are GSourceFunc-like callbacks for wait_for(), so
 * they take no window argument).
 */
#pragma once

#include <adwaita.h>
#include <gtk/gtk.h>

#include "fm-application.h"
#include "fm-window.h"

extern FmApplication *app;
extern FmWindow *window;

/* The source tree ($FE_SOURCE_ROOT as set by meson test, else the configured one). */
const char *source_root (void);

/* Iterates the main loop until done(data) or timeout; FALSE on timeout. */
gboolean wait_for (gboolean (*done) (gpointer), gpointer data, double timeout_s);

/* Iterates the main loop for a fixed time (lets redraws and idles run). */
void spin (double seconds);

FmDocumentTab *current_tab (void);

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
gboolean tab_loaded (gpointer data);
gboolean page_painted (gpointer data);
gboolean detection_done (gpointer data);
gboolean engine_settled (gpointer data);
/* Every formula (equation numbers are none) is done or failed, and the engine settled. */
gboolean all_recognized (gpointer data);
