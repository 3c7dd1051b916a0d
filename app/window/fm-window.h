/* fm-window.h - the main window: open PDFs, pages, formulas, results, export. */
#pragma once

#include <adwaita.h>

#include "fm-application.h"
#include "fm-document-tab.h"

G_BEGIN_DECLS

#define FM_TYPE_WINDOW (fm_window_get_type ())
G_DECLARE_FINAL_TYPE (FmWindow, fm_window, FM, WINDOW, AdwApplicationWindow)

FmWindow      *fm_window_new (FmApplication *application);
/* Opens each file in its own tab (already open ones are shown instead). */
void           fm_window_open_files (FmWindow *self, GFile **files, int n_files);
/* The tab on show, or NULL when none is open. */
FmDocumentTab *fm_window_get_current_tab (FmWindow *self);
guint          fm_window_get_n_tabs (FmWindow *self);
/* The message of the last error shown to the user (toast or dialog), for tests. */
const char    *fm_window_get_last_error (FmWindow *self);
/* How many toasts the window has shown and the last one's text, for tests. */
guint          fm_window_get_n_toasts (FmWindow *self);
const char    *fm_window_get_last_toast (FmWindow *self);
/* How many toasts are on show or queued now, for tests. */
guint          fm_window_get_n_toasts_shown (FmWindow *self);
/* The empty window's list of recent PDFs (AdwActionRow rows whose "uri" data
 * is the file's URI), for tests. */
GtkListBox    *fm_window_get_recent_list (FmWindow *self);
/* Dismisses every toast on show (tests, before a screenshot: under Xvfb the
 * window never becomes active, so toasts do not time out), at once or, while
 * the newest is still in its show animation, a moment later. */
void           fm_window_dismiss_toasts (FmWindow *self);
/* The text of the status line and of the progress label. */
const char    *fm_window_get_status_text (FmWindow *self);
GtkLabel      *fm_window_get_status_label (FmWindow *self);
/* The keyboard shortcuts window once it was shown, else NULL. */
GtkWidget     *fm_window_get_shortcuts_window (FmWindow *self);
const char    *fm_window_get_progress_text (FmWindow *self);
/* A device as the device menu names it: "NVIDIA GeForce RTX 4070 — 12 GB",
 * "CUDA — no NVIDIA driver found", "CPU — <brand>"; never a raw id. */
char          *fm_window_device_label (const FeDeviceInfo *device);
/* The device menu's labels (GtkStringList), for tests. */
GListModel    *fm_window_get_device_labels (FmWindow *self);
/* Whether the window shows that files dragged over it can be dropped. */
gboolean       fm_window_get_drop_highlight (FmWindow *self);
/* The zoom level shown in the header bar ("125 %"). */
const char    *fm_window_get_zoom_text (FmWindow *self);
/* Writes the current document's results to file in format ("latex",
 * "markdown", "json"), as the export dialog does. */
gboolean       fm_window_export_to_file (FmWindow    *self,
                                         GFile       *file,
                                         const char  *format,
                                         GError     **error);

G_END_DECLS
