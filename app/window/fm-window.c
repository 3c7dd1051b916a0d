/* fm-window.c - the main window. */
#include "fm-window.h"

#include <glib/gi18n.h>
#include <math.h>
#include <string.h>

#include "fm-export.h"
#include "fm-pandoc.h"
#include "fm-output-file.h"


#define RECENT_MAX 6

/* How long a progress report's status update waits: see worker_progress. */
#define FM_WINDOW_STATUS_DELAY_MS 60

struct _FmWindow {
  AdwApplicationWindow parent_instance;

  /* template */
  AdwToastOverlay *toast_overlay;
  GtkWidget *header_bar;
  GtkWidget *thumbnails_button;
  GtkWidget *page_box;
  GtkWidget *page_entry;
  GtkWidget *page_count_label;
  GtkWidget *zoom_button;
  guint zoom_label_id;           /* the zoom label's update, see tab_zoom_changed */
  AdwWindowTitle *window_title;
  GtkWidget *export_button;
  GMenu *primary_menu;
  GMenu *zoom_menu;
  GtkWidget *menu_button;
  GtkWidget *device_dropdown;
  GtkWidget *recognize_button;
  GtkWidget *main_stack;
  GtkWidget *recent_list;
  AdwTabView *tab_view;
  GtkWidget *status_label;
  GtkWidget *progress_box;
  GtkWidget *progress_label;
  GtkWidget *progress_bar;

  FmApplication *application;
  FmEngineWorker *worker;
  GSettings *settings;
  GtkStringList *device_ids;     /* dropdown position -> device id */
  gboolean updating_devices;
  guint tick_id;
  guint status_soon_id;          /* a progress report's status update, see worker_progress */
  char *last_error;
  char *last_toast;
  guint n_toasts;
  char *status_text;
  char *progress_text;
  GtkFileChooserNative *chooser;
  GtkWidget *shortcuts;          /* the shortcuts window, built on first use */
  gboolean have_pandoc;          /* pandoc on PATH: Word and HTML export offered */
  guint dismiss_source;          /* toasts to go: an idle or a wait for the newest to settle */
  gboolean dismiss_only_when_empty; /* asked by the last tab closing */
  gint64 last_toast_us;          /* when the newest toast was added */
  gboolean discard_confirmed;    /* the window closes without asking again */
  GPtrArray *toasts;             /* AdwToast shown and not dismissed yet */
};

G_DEFINE_FINAL_TYPE (FmWindow, fm_window, ADW_TYPE_APPLICATION_WINDOW)

static void update_status (FmWindow *self);
static void update_actions (FmWindow *self);
static void tab_can_undo_changed (FmDocumentTab *tab, GParamSpec *pspec, FmWindow *self);
static void update_zoom_label (FmWindow *self);
static void open_file_with_password (FmWindow *self, GFile *file, const char *password);

/* ---------------------------------------------------------------------- */
/* Messages                                                               */

static void
remember_error (FmWindow *self, const char *message)
{
  g_free (self->last_error);
  self->last_error = g_strdup (message);
}

/* libadwaita 1.2 frees a toast dismissed while its show animation runs
 * and then finishes that animation on it (AdwToastOverlay: the hide
 * animation's end clears the running show animation, whose "done" handler
 * gets the freed toast): the GUI tests crashed in adw_animation_skip when the
 * last tab closed just after a toast. So toasts are dismissed only once the
 * newest toast is older than its show animation, with a wide margin. */
#define TOAST_SETTLED_US (G_USEC_PER_SEC)

static void
toast_dismissed (FmWindow *self, AdwToast *toast)
{
  if (self->toasts != NULL)
    g_ptr_array_remove (self->toasts, toast);
}

static void
dismiss_toasts_now (FmWindow *self)
{
  /* Newest first (queued toasts before the one on show); each one's
   * "dismissed" takes it out of the array, and the bound stops the loop
   * should a toast not say it was dismissed. */
  for (guint bound = self->toasts->len; self->toasts->len > 0 && bound > 0; bound--)
    {
      g_autoptr(AdwToast) toast = g_object_ref (g_ptr_array_index (self->toasts, self->toasts->len - 1));
      adw_toast_dismiss (toast);
      g_ptr_array_remove (self->toasts, toast);
    }
}

static gboolean dismiss_toasts_timeout (gpointer data);

/* Every toast on show or queued goes once the newest is past its show
 * animation (TOAST_SETTLED_US): at once when it is, else from a timer. A
 * dismissal asked for by the last tab closing is dropped should a document
 * be open again by then. */
static void
dismiss_toasts_when_settled (FmWindow *self)
{
  gint64 age = g_get_monotonic_time () - self->last_toast_us;

  if (self->dismiss_only_when_empty && fm_window_get_current_tab (self) != NULL)
    return;
  if (age >= TOAST_SETTLED_US)
    {
      g_clear_handle_id (&self->dismiss_source, g_source_remove);
      dismiss_toasts_now (self);
    }
  else if (self->dismiss_source == 0)
    self->dismiss_source = g_timeout_add ((guint) ((TOAST_SETTLED_US - age) / 1000) + 1,
                                          dismiss_toasts_timeout, self);
}

static gboolean
dismiss_toasts_timeout (gpointer data)
{
  FmWindow *self = data;

  self->dismiss_source = 0;
  dismiss_toasts_when_settled (self);
  return G_SOURCE_REMOVE;
}

void
fm_window_dismiss_toasts (FmWindow *self)
{
  if (self->toasts->len == 0)
    return;
  self->dismiss_only_when_empty = FALSE;
  dismiss_toasts_when_settled (self);
}

static void
show_toast_with_button (FmWindow *self, const char *message, const char *button, const char *action)
{
  AdwToast *toast = adw_toast_new (message);

  adw_toast_set_timeout (toast, 6);
  if (button != NULL)
    {
      adw_toast_set_button_label (toast, button);
      adw_toast_set_action_name (toast, action);
    }
  g_ptr_array_add (self->toasts, g_object_ref (toast));
  g_signal_connect_swapped (toast, "dismissed", G_CALLBACK (toast_dismissed), self);
  self->last_toast_us = g_get_monotonic_time ();
  adw_toast_overlay_add_toast (self->toast_overlay, toast);
  g_free (self->last_toast);
  self->last_toast = g_strdup (message);
  self->n_toasts++;
}

static void
show_toast (FmWindow *self, const char *message)
{
  show_toast_with_button (self, message, NULL, NULL);
}

/* win.show-toast(s): for the parts of the window that have no toast overlay
 * of their own, such as a result row's Copy button. */
static void
show_toast_action (GtkWidget *widget, const char *name, GVariant *parameter)
{
  show_toast (FM_WINDOW (widget), g_variant_get_string (parameter, NULL));
}

static void
show_error_toast (FmWindow *self, const char *message)
{
  remember_error (self, message);
  show_toast (self, message);
}

/* ---------------------------------------------------------------------- */
/* Tabs                                                                   */

FmDocumentTab *
fm_window_get_current_tab (FmWindow *self)
{
  AdwTabPage *page = self->tab_view ? adw_tab_view_get_selected_page (self->tab_view) : NULL;

  return page ? FM_DOCUMENT_TAB (adw_tab_page_get_child (page)) : NULL;
}

/* The tab view exists once the first document opens (ensure_documents). */
static int
n_tab_pages (FmWindow *self)
{
  return self->tab_view != NULL ? adw_tab_view_get_n_pages (self->tab_view) : 0;
}

guint
fm_window_get_n_tabs (FmWindow *self)
{
  return (guint) n_tab_pages (self);
}

static void
update_page_entry (FmWindow *self)
{
  FmDocumentTab *tab = fm_window_get_current_tab (self);
  FmDocument *doc = tab ? fm_document_tab_get_document (tab) : NULL;
  g_autofree char *current = NULL;
  g_autofree char *count = NULL;

  gtk_widget_set_visible (self->page_box, doc != NULL);
  if (doc == NULL)
    return;
  current = g_strdup_printf ("%d", fm_page_view_get_current_page (fm_document_tab_get_page_view (tab)) + 1);
  /* Translators: after the page number entry, "of 12" */
  count = g_strdup_printf (_("of %d"), fm_document_get_n_pages (doc));
  if (!gtk_widget_has_focus (self->page_entry) &&
      !gtk_widget_is_ancestor (gtk_root_get_focus (GTK_ROOT (self)) ? gtk_root_get_focus (GTK_ROOT (self)) : GTK_WIDGET (self), self->page_entry))
    gtk_editable_set_text (GTK_EDITABLE (self->page_entry), current);
  gtk_label_set_text (GTK_LABEL (self->page_count_label), count);
  update_zoom_label (self);
}

static void update_recent (FmWindow *self);


static void
update_title (FmWindow *self)
{
  FmDocumentTab *tab = fm_window_get_current_tab (self);
  gboolean was_empty = g_strcmp0 (gtk_stack_get_visible_child_name (GTK_STACK (self->main_stack)), "empty") == 0;

  adw_window_title_set_subtitle (self->window_title, tab ? fm_document_tab_get_title (tab) : NULL);
  gtk_stack_set_visible_child_name (GTK_STACK (self->main_stack), tab ? "documents" : "empty");
  if (tab == NULL && !was_empty)
    {
      /* The last document closed: what its toasts said ("Every formula is
       * already recognised", "Formula deleted" with Undo) is about it and
       * goes with it. A toast shown after this (a file that failed to open,
       * an export finishing) stays. The list is read again: files deleted
       * while documents were open drop out of it. */
      /* From an idle: libadwaita 1.2 crashed dismissing them inside
       * AdwTabView's close. */
      if (self->toasts->len > 0 && self->dismiss_source == 0)
        {
          self->dismiss_only_when_empty = TRUE;
          self->dismiss_source = g_idle_add (dismiss_toasts_timeout, self);
        }
      update_recent (self);
    }
}

static void
update_zoom_label (FmWindow *self)
{
  FmDocumentTab *tab = fm_window_get_current_tab (self);
  g_autofree char *text = NULL;

  if (tab == NULL)
    return;
  /* Translators: the zoom level in the header bar, "125 %" */
  text = g_strdup_printf (_("%.0f %%"), 100.0 * fm_page_view_get_zoom (fm_document_tab_get_page_view (tab)));
  gtk_menu_button_set_label (GTK_MENU_BUTTON (self->zoom_button), text);
}

static void
zoom_label_cb (gpointer data)
{
  FmWindow *self = data;

  self->zoom_label_id = 0;
  update_zoom_label (self);
}

static void
tab_zoom_changed (FmPageView *view, GParamSpec *pspec, FmWindow *self)
{
  if (self->tab_view == NULL)  /* the window is being destroyed */
    return;
  /* Fitting the width changes the zoom inside the page view's size
   * allocation: a new label then would resize the header bar in the middle of
   * the window's layout (GTK warns it snapshots a header bar without an
   * allocation). The label follows in the next main-loop turn. */
  if (self->zoom_label_id == 0)
    self->zoom_label_id = g_idle_add_once (zoom_label_cb, self);
}

static void
tab_page_changed (FmPageView *view, GParamSpec *pspec, FmWindow *self)
{
  if (self->tab_view == NULL)  /* the window is being destroyed */
    return;
  update_page_entry (self);
}

static void
tab_loaded (FmDocumentTab *tab, FmWindow *self)
{
  g_autofree char *uri = NULL;
  g_autofree char *title = NULL;
  AdwTabPage *page;

  if (self->tab_view == NULL)  /* the window is being destroyed */
    return;
  uri = g_file_get_uri (fm_document_tab_get_file (tab));
  title = fm_document_dup_title (fm_document_tab_get_document (tab));
  page = adw_tab_view_get_page (self->tab_view, GTK_WIDGET (tab));

  adw_tab_page_set_loading (page, FALSE);
  if (title != NULL && *title != '\0')
    adw_tab_page_set_tooltip (page, title);
  gtk_recent_manager_add_item (gtk_recent_manager_get_default (), uri);
  update_page_entry (self);
  update_actions (self);
}

/* Every way a tab closes (the action, the tab's button, the window) comes
 * here: its detection and recognition stop now. Left to dispose, they would
 * keep the tab and its document alive, and working, until the detection
 * thread reached the last page. Returns FALSE: AdwTabView closes the page. */
static void ask_before_closing (FmWindow *self, AdwTabPage *page);

static gboolean
tab_closing (AdwTabView *view, AdwTabPage *page, FmWindow *self)
{
  FmDocumentTab *tab = FM_DOCUMENT_TAB (adw_tab_page_get_child (page));

  /* Results or edits not exported: ask first (not while the window goes). */
  if (gtk_widget_get_mapped (GTK_WIDGET (self)) && fm_document_tab_has_unsaved (tab))
    {
      ask_before_closing (self, page);
      return GDK_EVENT_STOP;
    }
  fm_document_tab_stop (tab);
  return GDK_EVENT_PROPAGATE;
}

static void
close_tab (FmWindow *self, FmDocumentTab *tab)
{
  AdwTabPage *page = adw_tab_view_get_page (self->tab_view, GTK_WIDGET (tab));

  if (page != NULL)
    adw_tab_view_close_page (self->tab_view, page);
}

/* The question before closing a tab or the window with results or edits not
 * exported: "Discard", "Cancel" or "Export…". page: the tab closing, or NULL
 * for the window. */
typedef struct {
  FmWindow *self;
  AdwTabPage *page;
  gboolean answered;
} CloseData;

static void
close_data_free (gpointer data, GClosure *closure)
{
  CloseData *close = data;

  g_clear_object (&close->page);
  g_object_unref (close->self);
  g_free (close);
}

/* Closes a message dialog from its own "response" handler. GLib holds no
 * reference on the dialog while it emits, and the window list's goes with
 * gtk_window_destroy(): one is kept until the emission is over. */
static void
dialog_done (AdwMessageDialog *dialog)
{
  g_idle_add_once ((GSourceOnceFunc) g_object_unref, g_object_ref (dialog));
  gtk_window_destroy (GTK_WINDOW (dialog));
}

/* A message dialog's data lives as long as its "response" handler, not until
 * the first answer: adw_message_dialog_response() answers without closing,
 * and closing it later answers again with the close response (a second
 * answer on freed data crashed the window test). The first answer counts;
 * the dialog goes with it. */
static void
close_response (AdwMessageDialog *dialog, const char *response, CloseData *data)
{
  FmWindow *self = data->self;
  gboolean discard = g_str_equal (response, "discard");

  if (data->answered)
    return;
  data->answered = TRUE;
  /* The signal's closure keeps data alive until this handler returns. */
  dialog_done (dialog);
  if (data->page != NULL && self->tab_view != NULL)
    {
      if (discard)
        fm_document_tab_stop (FM_DOCUMENT_TAB (adw_tab_page_get_child (data->page)));
      adw_tab_view_close_page_finish (self->tab_view, data->page, discard);
      if (g_str_equal (response, "export"))
        {
          adw_tab_view_set_selected_page (self->tab_view, data->page);
          gtk_widget_activate_action (GTK_WIDGET (self), "win.export", NULL);
        }
    }
  else if (data->page == NULL && discard)
    {
      self->discard_confirmed = TRUE;
      gtk_window_close (GTK_WINDOW (self));
    }
  else if (data->page == NULL && g_str_equal (response, "export") && self->tab_view != NULL)
    {
      /* The first document with something to lose. */
      for (int i = 0; i < adw_tab_view_get_n_pages (self->tab_view); i++)
        {
          AdwTabPage *page = adw_tab_view_get_nth_page (self->tab_view, i);
          if (fm_document_tab_has_unsaved (FM_DOCUMENT_TAB (adw_tab_page_get_child (page))))
            {
              adw_tab_view_set_selected_page (self->tab_view, page);
              gtk_widget_activate_action (GTK_WIDGET (self), "win.export", NULL);
              break;
            }
        }
    }
}

static void
ask_before_closing (FmWindow *self, AdwTabPage *page)
{
  CloseData *data = g_new0 (CloseData, 1);
  AdwMessageDialog *dialog;
  g_autofree char *body = NULL;
  guint n_unsaved = 0;

  if (page != NULL)
    {
      /* Translators: closing a tab, "“paper.pdf” has recognised formulas or edits that were not exported." */
      body = g_strdup_printf (_("“%s” has recognised formulas or edits that were not exported. "
                                "Closing it discards them."),
                              fm_document_tab_get_title (FM_DOCUMENT_TAB (adw_tab_page_get_child (page))));
    }
  else
    {
      for (int i = 0; i < adw_tab_view_get_n_pages (self->tab_view); i++)
        n_unsaved += fm_document_tab_has_unsaved (
          FM_DOCUMENT_TAB (adw_tab_page_get_child (adw_tab_view_get_nth_page (self->tab_view, i))));
      body = g_strdup_printf (g_dngettext (GETTEXT_PACKAGE,
                                           "%u document has recognised formulas or edits that were not exported. "
                                           "Closing the window discards them.",
                                           "%u documents have recognised formulas or edits that were not exported. "
                                           "Closing the window discards them.", n_unsaved),
                              n_unsaved);
    }
  dialog = ADW_MESSAGE_DIALOG (adw_message_dialog_new (GTK_WINDOW (self),
                                                       page != NULL ? _("Discard the Results?")
                                                                    : _("Discard All Results?"),
                                                       body));
  adw_message_dialog_add_responses (dialog, "cancel", _("_Cancel"), "discard", _("_Discard"),
                                    "export", _("_Export…"), NULL);
  adw_message_dialog_set_response_appearance (dialog, "discard", ADW_RESPONSE_DESTRUCTIVE);
  adw_message_dialog_set_response_appearance (dialog, "export", ADW_RESPONSE_SUGGESTED);
  adw_message_dialog_set_default_response (dialog, "export");
  adw_message_dialog_set_close_response (dialog, "cancel");
  data->self = g_object_ref (self);
  data->page = page != NULL ? g_object_ref (page) : NULL;
  g_signal_connect_data (dialog, "response", G_CALLBACK (close_response), data, close_data_free, 0);
  gtk_widget_set_name (GTK_WIDGET (dialog), "close-dialog");
  gtk_window_present (GTK_WINDOW (dialog));
}

typedef struct {
  FmWindow *self;
  GFile *file;
  GtkWidget *entry;
  gboolean answered;
} PasswordData;

static void
password_data_free (gpointer data, GClosure *closure)
{
  PasswordData *password = data;

  g_object_unref (password->file);
  g_object_unref (password->self);
  g_free (password);
}

/* Answered once, as close_response(). */
static void
password_response (AdwMessageDialog *dialog, const char *response, PasswordData *data)
{
  char *password;

  if (data->answered)
    return;
  data->answered = TRUE;
  /* The entry goes with the dialog. */
  password = g_strdup (gtk_editable_get_text (GTK_EDITABLE (data->entry)));
  dialog_done (dialog);
  if (g_str_equal (response, "unlock"))
    open_file_with_password (data->self, data->file, password);
  memset (password, 0, strlen (password));
  g_free (password);
}

static void
ask_password (FmWindow *self, GFile *file, gboolean wrong)
{
  g_autofree char *name = g_file_get_basename (file);
  PasswordData *data = g_new0 (PasswordData, 1);
  AdwMessageDialog *dialog;

  dialog = ADW_MESSAGE_DIALOG (adw_message_dialog_new (GTK_WINDOW (self),
                                                       wrong ? _("Wrong Password") : _("Password Required"),
                                                       NULL));
  adw_message_dialog_format_body (dialog, _("“%s” is encrypted. Enter its password to open it."), name);
  data->self = g_object_ref (self);
  data->file = g_object_ref (file);
  /* A hidden-text GtkEntry: GTK 4.8's GtkPasswordEntry warns about a stale
   * keyboard handler when its dialog closes on a response. */
  data->entry = gtk_entry_new ();
  gtk_entry_set_visibility (GTK_ENTRY (data->entry), FALSE);
  gtk_entry_set_input_purpose (GTK_ENTRY (data->entry), GTK_INPUT_PURPOSE_PASSWORD);
  gtk_entry_set_activates_default (GTK_ENTRY (data->entry), TRUE);
  adw_message_dialog_set_extra_child (dialog, data->entry);
  adw_message_dialog_add_responses (dialog, "cancel", _("_Cancel"), "unlock", _("_Unlock"), NULL);
  adw_message_dialog_set_response_appearance (dialog, "unlock", ADW_RESPONSE_SUGGESTED);
  adw_message_dialog_set_default_response (dialog, "unlock");
  adw_message_dialog_set_close_response (dialog, "cancel");
  g_signal_connect_data (dialog, "response", G_CALLBACK (password_response), data, password_data_free, 0);
  gtk_widget_set_name (GTK_WIDGET (dialog), "password-dialog");
  gtk_window_present (GTK_WINDOW (dialog));
  gtk_widget_grab_focus (data->entry);
}

static void
tab_load_failed (FmDocumentTab *tab, GError *error, FmWindow *self)
{
  g_autoptr(GFile) file = g_object_ref (fm_document_tab_get_file (tab));
  if (self->tab_view == NULL)  /* the window is being destroyed */
    return;

  close_tab (self, tab);
  if (g_error_matches (error, FM_DOCUMENT_ERROR, FM_DOCUMENT_ERROR_NEEDS_PASSWORD) ||
      g_error_matches (error, FM_DOCUMENT_ERROR, FM_DOCUMENT_ERROR_WRONG_PASSWORD))
    {
      remember_error (self, error->message);
      ask_password (self, file, error->code == FM_DOCUMENT_ERROR_WRONG_PASSWORD);
    }
  else
    {
      /* Translators: "Could not open “x.pdf”: <reason>" */
      g_autofree char *name = g_file_get_basename (file);
      g_autofree char *message = g_strdup_printf (_("Could not open “%s”: %s"), name, error->message);
      show_error_toast (self, message);
    }
}

static void
tab_detected (FmDocumentTab *tab, FmWindow *self)
{
  if (self->tab_view == NULL)  /* the window is being destroyed */
    return;
  update_actions (self);
  update_status (self);
}

static void selected_page_changed (AdwTabView *view, GParamSpec *pspec, FmWindow *self);
static void n_pages_changed (AdwTabView *view, GParamSpec *pspec, FmWindow *self);

/* The documents page (tab bar and tab view) is built when the first document
 * opens, not with the window: the empty window never shows it, but the main
 * stack, homogeneous, would style and measure it for the first frame. */
static void
ensure_documents (FmWindow *self)
{
  GtkWidget *box, *tab_bar;

  if (self->tab_view != NULL)
    return;
  box = gtk_box_new (GTK_ORIENTATION_VERTICAL, 0);
  tab_bar = GTK_WIDGET (adw_tab_bar_new ());
  self->tab_view = adw_tab_view_new ();
  gtk_widget_set_vexpand (GTK_WIDGET (self->tab_view), TRUE);
  adw_tab_bar_set_view (ADW_TAB_BAR (tab_bar), self->tab_view);
  gtk_box_append (GTK_BOX (box), tab_bar);
  gtk_box_append (GTK_BOX (box), GTK_WIDGET (self->tab_view));
  g_signal_connect (self->tab_view, "notify::selected-page", G_CALLBACK (selected_page_changed), self);
  g_signal_connect (self->tab_view, "notify::n-pages", G_CALLBACK (n_pages_changed), self);
  g_signal_connect (self->tab_view, "close-page", G_CALLBACK (tab_closing), self);
  gtk_stack_add_named (GTK_STACK (self->main_stack), box, "documents");
}

static void
open_file_with_password (FmWindow *self, GFile *file, const char *password)
{
  FmDocumentTab *tab;
  AdwTabPage *page;
  g_autofree char *name = g_file_get_basename (file);

  ensure_documents (self);
  /* A file already open is shown, not opened twice. */
  for (int i = 0; i < adw_tab_view_get_n_pages (self->tab_view); i++)
    {
      AdwTabPage *existing = adw_tab_view_get_nth_page (self->tab_view, i);
      FmDocumentTab *other = FM_DOCUMENT_TAB (adw_tab_page_get_child (existing));
      if (g_file_equal (fm_document_tab_get_file (other), file))
        {
          adw_tab_view_set_selected_page (self->tab_view, existing);
          return;
        }
    }

  tab = fm_document_tab_new (file, password, self->worker, self->settings);
  page = adw_tab_view_append (self->tab_view, GTK_WIDGET (tab));
  adw_tab_page_set_title (page, name);
  adw_tab_page_set_loading (page, TRUE);
  g_signal_connect (tab, "loaded", G_CALLBACK (tab_loaded), self);
  g_signal_connect (tab, "load-failed", G_CALLBACK (tab_load_failed), self);
  g_signal_connect (tab, "detected", G_CALLBACK (tab_detected), self);
  g_signal_connect (tab, "notify::can-undo", G_CALLBACK (tab_can_undo_changed), self);
  g_signal_connect (fm_document_tab_get_page_view (tab), "notify::current-page",
                    G_CALLBACK (tab_page_changed), self);
  g_signal_connect (fm_document_tab_get_page_view (tab), "notify::zoom",
                    G_CALLBACK (tab_zoom_changed), self);
  fm_document_tab_set_thumbnails_visible (tab, g_settings_get_boolean (self->settings, "show-thumbnails"));
  adw_tab_view_set_selected_page (self->tab_view, page);
  update_title (self);
}

void
fm_window_open_files (FmWindow *self, GFile **files, int n_files)
{
  for (int i = 0; i < n_files; i++)
    open_file_with_password (self, files[i], NULL);
}

static void
selected_page_changed (AdwTabView *view, GParamSpec *pspec, FmWindow *self)
{
  FmDocumentTab *tab = fm_window_get_current_tab (self);
  if (self->tab_view == NULL)  /* the window is being destroyed */
    return;

  update_title (self);
  update_page_entry (self);
  update_actions (self);
  if (tab != NULL && fm_document_tab_get_document (tab) != NULL)
    fm_engine_worker_set_focus (self->worker, fm_document_tab_get_document (tab),
                                fm_page_view_get_current_page (fm_document_tab_get_page_view (tab)));
}

static void
n_pages_changed (AdwTabView *view, GParamSpec *pspec, FmWindow *self)
{
  if (self->tab_view == NULL)  /* the window is being destroyed */
    return;
  update_title (self);
  update_actions (self);
}

/* ---------------------------------------------------------------------- */
/* Recent files                                                           */

static void
recent_activated (AdwActionRow *row, FmWindow *self)
{
  const char *uri = g_object_get_data (G_OBJECT (row), "uri");
  g_autoptr(GFile) file = g_file_new_for_uri (uri);

  open_file_with_password (self, file, NULL);
}

static void
recent_remove_clicked (GtkButton *button, FmWindow *self)
{
  GtkWidget *row = gtk_widget_get_ancestor (GTK_WIDGET (button), GTK_TYPE_LIST_BOX_ROW);
  const char *uri = g_object_get_data (G_OBJECT (row), "uri");

  /* The row goes at once; the manager's "changed" rebuilds the list later. */
  gtk_recent_manager_remove_item (gtk_recent_manager_get_default (), uri, NULL);
  gtk_list_box_remove (GTK_LIST_BOX (self->recent_list), row);
  gtk_widget_set_visible (self->recent_list, gtk_widget_get_first_child (self->recent_list) != NULL);
}

/* When the document was last opened here: the later of the entry's
 * modification (gtk_recent_manager_add_item on every open) and visit. */
static GDateTime *
recent_time (GtkRecentInfo *info)
{
  GDateTime *modified = gtk_recent_info_get_modified (info);
  GDateTime *visited = gtk_recent_info_get_visited (info);

  if (visited != NULL && (modified == NULL || g_date_time_compare (visited, modified) > 0))
    return visited;
  return modified;
}

/* Most recent first. */
static int
compare_recent (gconstpointer a, gconstpointer b)
{
  GDateTime *ta = recent_time (*(GtkRecentInfo **) a);
  GDateTime *tb = recent_time (*(GtkRecentInfo **) b);

  if (ta == NULL || tb == NULL)
    return (ta == NULL) - (tb == NULL);
  return g_date_time_compare (tb, ta);
}

static void
update_recent (FmWindow *self)
{
  GtkRecentManager *manager = gtk_recent_manager_get_default ();
  GList *items = gtk_recent_manager_get_items (manager);
  g_autoptr(GPtrArray) pdfs = g_ptr_array_new ();
  GtkWidget *child;
  guint shown = 0;

  while ((child = gtk_widget_get_first_child (self->recent_list)) != NULL)
    gtk_list_box_remove (GTK_LIST_BOX (self->recent_list), child);

  for (GList *l = items; l != NULL; l = l->next)
    {
      GtkRecentInfo *info = l->data;
      /* A file deleted or moved since is dropped, not offered to fail. */
      if (g_strcmp0 (gtk_recent_info_get_mime_type (info), "application/pdf") == 0 &&
          gtk_recent_info_exists (info))
        g_ptr_array_add (pdfs, info);
    }
  g_ptr_array_sort (pdfs, compare_recent);
  for (guint i = 0; i < pdfs->len && shown < RECENT_MAX; i++, shown++)
    {
      GtkRecentInfo *info = g_ptr_array_index (pdfs, i);
      GtkWidget *row = adw_action_row_new ();
      GtkWidget *remove = gtk_button_new_from_icon_name ("edit-delete-symbolic");
      g_autofree char *location = gtk_recent_info_get_uri_display (info);

      adw_preferences_row_set_title (ADW_PREFERENCES_ROW (row), gtk_recent_info_get_display_name (info));
      adw_action_row_set_subtitle (ADW_ACTION_ROW (row), location);
      adw_preferences_row_set_use_markup (ADW_PREFERENCES_ROW (row), FALSE);
      gtk_list_box_row_set_activatable (GTK_LIST_BOX_ROW (row), TRUE);
      gtk_widget_set_name (remove, "remove-recent");
      gtk_widget_set_valign (remove, GTK_ALIGN_CENTER);
      gtk_widget_add_css_class (remove, "flat");
      gtk_widget_set_tooltip_text (remove, _("Remove from List"));
      gtk_accessible_update_property (GTK_ACCESSIBLE (remove), GTK_ACCESSIBLE_PROPERTY_LABEL,
                                      _("Remove from List"), -1);
      g_signal_connect (remove, "clicked", G_CALLBACK (recent_remove_clicked), self);
      adw_action_row_add_suffix (ADW_ACTION_ROW (row), remove);
      adw_action_row_add_suffix (ADW_ACTION_ROW (row), gtk_image_new_from_icon_name ("go-next-symbolic"));
      g_object_set_data_full (G_OBJECT (row), "uri", g_strdup (gtk_recent_info_get_uri (info)), g_free);
      g_signal_connect (row, "activated", G_CALLBACK (recent_activated), self);
      gtk_list_box_append (GTK_LIST_BOX (self->recent_list), row);
    }
  gtk_widget_set_visible (self->recent_list, shown > 0);
  g_list_free_full (items, (GDestroyNotify) gtk_recent_info_unref);
}

/* ---------------------------------------------------------------------- */
/* Status line and progress                                               */

static char *
format_bytes (guint64 bytes)
{
  return g_format_size_full (bytes, G_FORMAT_SIZE_IEC_UNITS);
}

static void
update_status (FmWindow *self)
{
  FeRuntimeInfo info;
  FmEngineState state = fm_engine_worker_get_state (self->worker);
  g_autoptr(GString) status = g_string_new (NULL);
  int done, total;
  double rate;

  switch (state)
    {
    case FM_ENGINE_STATE_LOADING:
      g_string_append (status, _("Loading the model…"));
      break;
    case FM_ENGINE_STATE_NO_MODEL:
      {
        const char *error = fm_engine_worker_get_load_error (self->worker);
        /* Not "No model loaded" while the model only waits for the first
         * page to be painted (a second at most on a quiet machine). */
        if (error == NULL && self->application != NULL &&
            !fm_application_get_engine_started (self->application))
          g_string_append (status, _("Loading the model…"));
        else
          g_string_append (status, error ? _("Recognition unavailable") : _("No model loaded"));
      }
      break;
    case FM_ENGINE_STATE_READY:
    case FM_ENGINE_STATE_WORKING:
    default:
      if (fm_engine_worker_get_runtime_info (self->worker, &info))
        {
          g_autofree char *total_s = format_bytes (info.device_total);
          g_autofree char *free_s = format_bytes (info.device_free);
          g_autofree char *engine_s = format_bytes (info.engine_bytes);

          static const char *const precisions[] = { "auto", "fp32", "fp16", "bf16" };

          g_string_append (status, info.device.name[0] ? info.device.name : info.device.id);
          if ((unsigned) info.precision < G_N_ELEMENTS (precisions))
            g_string_append_printf (status, " · %s", precisions[info.precision]);
          if (info.device.kind == FE_DEVICE_CUDA)
            /* Translators: VRAM figures, "VRAM 1.2 GiB used by the model · 70 GiB free of 80 GiB" */
            g_string_append_printf (status, _(" · VRAM %s used by the model · %s free of %s"),
                                    engine_s, free_s, total_s);
          else
            g_string_append_printf (status, _(" · RAM %s used by the model · %s free of %s"),
                                    engine_s, free_s, total_s);
        }
      break;
    }

  {
    FmDocumentTab *tab = fm_window_get_current_tab (self);
    FmDocument *doc = tab ? fm_document_tab_get_document (tab) : NULL;

    if (doc != NULL && fm_document_tab_get_detecting (tab))
      {
        int n_pages = fm_document_get_n_pages (doc);
        /* Translators: detection progress, "Finding formulas: page 3 of 12" */
        g_autofree char *finding = g_strdup_printf (_("Finding formulas: page %d of %d · "),
                                                    MIN (fm_document_tab_get_pages_detected (tab) + 1, n_pages),
                                                    n_pages);
        g_string_prepend (status, finding);
      }
    if (doc != NULL && fm_document_tab_get_pages_from_pixels (tab) > 0)
      {
        int n = fm_document_tab_get_pages_from_pixels (tab);
        /* Translators: pages of a scan, whose formulas were found in the image */
        g_string_append_printf (status, g_dngettext (GETTEXT_PACKAGE, " · %d page read from pixels (no text layer)",
                                                  " · %d pages read from pixels (no text layer)", n), n);
      }
  }

  fm_engine_worker_get_progress (self->worker, &done, &total, &rate);
  if (state == FM_ENGINE_STATE_WORKING && rate > 0)
    g_string_append_printf (status, _(" · %.1f formulas/s"), rate);
  g_free (self->status_text);
  self->status_text = g_strdup (status->str);
  gtk_label_set_text (GTK_LABEL (self->status_label), status->str);

  gtk_widget_set_visible (self->progress_box,
                          (state == FM_ENGINE_STATE_WORKING || state == FM_ENGINE_STATE_LOADING) && total > 0);
  if (total > 0)
    {
      g_autoptr(GString) progress = g_string_new (NULL);

      /* Translators: "37 of 112 formulas" */
      g_string_append_printf (progress, g_dngettext (GETTEXT_PACKAGE, "%d of %d formula", "%d of %d formulas", total),
                              done, total);
      if (rate > 0)
        {
          int left = (int) ceil ((total - done) / rate);
          g_string_append_printf (progress, _(" · %.0f/s"), rate);
          /* Translators: time left, "2 s left" */
          g_string_append_printf (progress, _(" · %d s left"), left);
        }
      gtk_label_set_text (GTK_LABEL (self->progress_label), progress->str);
      gtk_progress_bar_set_fraction (GTK_PROGRESS_BAR (self->progress_bar), (double) done / total);
      g_free (self->progress_text);
      self->progress_text = g_strdup (progress->str);
    }
}

static gboolean
tick (gpointer data)
{
  update_status (data);
  return G_SOURCE_CONTINUE;
}

/* When a run ends: how many formulas the current document has and how many
 * of them a person should look at (low confidence or failed). */
static void
show_run_summary (FmWindow *self)
{
  FmDocumentTab *tab = fm_window_get_current_tab (self);
  GListModel *items = tab != NULL ? fm_document_tab_get_items (tab) : NULL;
  double threshold = g_settings_get_double (self->settings, "low-confidence-threshold");
  guint n = items != NULL ? g_list_model_get_n_items (items) : 0, formulas = 0, to_check = 0;
  g_autofree char *text = NULL;

  for (guint i = 0; i < n; i++)
    {
      g_autoptr(FmResultsItem) item = g_list_model_get_item (items, i);
      if (!fm_results_item_is_formula (item))
        continue;
      formulas++;
      if (fm_results_item_is_low_confidence (item, threshold) ||
          fm_results_item_get_state (item) == FM_RESULT_STATE_FAILED)
        to_check++;
    }
  if (formulas == 0)
    return;
  if (to_check == 0)
    /* Translators: shown when recognition ends, "128 formulas recognised" */
    text = g_strdup_printf (g_dngettext (GETTEXT_PACKAGE, "%u formula recognised", "%u formulas recognised", formulas),
                            formulas);
  else
    {
      /* Translators: shown when recognition ends, "128 formulas recognised, 40 to check" */
      g_autofree char *head = g_strdup_printf (g_dngettext (GETTEXT_PACKAGE, "%u formula recognised",
                                                            "%u formulas recognised", formulas), formulas);
      text = g_strdup_printf (_("%s, %u to check"), head, to_check);
    }
  show_toast (self, text);
}

static void
worker_state_changed (FmEngineWorker *worker, FmWindow *self)
{
  gboolean busy = fm_engine_worker_get_state (worker) == FM_ENGINE_STATE_WORKING;
  int done = 0, total = 0;

  /* A run that ran to its end (not cancelled) is summed up. */
  fm_engine_worker_get_progress (worker, &done, &total, NULL);
  if (self->tick_id != 0 && !busy && fm_engine_worker_get_state (worker) == FM_ENGINE_STATE_READY &&
      total > 0 && done == total)
    show_run_summary (self);

  if (busy && self->tick_id == 0)
    self->tick_id = g_timeout_add_seconds (1, tick, self);
  else if (!busy)
    g_clear_handle_id (&self->tick_id, g_source_remove);
  g_clear_handle_id (&self->status_soon_id, g_source_remove);
  update_status (self);
  update_actions (self);
}

static void
status_soon_cb (gpointer data)
{
  FmWindow *self = data;

  self->status_soon_id = 0;
  update_status (self);
}

static void
worker_progress (FmEngineWorker *worker, FmWindow *self)
{
  /* A report comes with results whose rows change in the same main-loop
   * turn. GTK 4.8's software renderer on X11 paints a frame into a new
   * surface the size of the bounding box of everything that changed in it:
   * the status line (bottom, full width) and the results list (right, full
   * height) together made it 1238 x 730 of a 1270 x 850 window, 17-25 ms of
   * the main thread per batch on 2 loaded cores (tests/gui /gui/recognition,
   * 2026-11-25). A frame is at most 1/60 s away: the status line follows a
   * few frames later, in a frame of its own (1238 x 17). */
  if (self->status_soon_id == 0)
    self->status_soon_id = g_timeout_add_once (FM_WINDOW_STATUS_DELAY_MS, status_soon_cb, self);
}

static void
worker_model_failed (FmEngineWorker *worker, const char *message, FmWindow *self)
{
  /* Translators: the model could not be loaded: <reason> */
  g_autofree char *text = g_strdup_printf (_("Recognition is unavailable: %s"), message);

  /* Queued formulas would wait forever for a model that is not coming. */
  fm_engine_worker_cancel (worker, NULL);
  if (gtk_widget_get_mapped (GTK_WIDGET (self)))
    show_error_toast (self, text);
  else
    remember_error (self, text);
  update_status (self);
}

static void
worker_fell_back (FmEngineWorker *worker, const char *reason, FmWindow *self)
{
  /* Translators: the GPU could not be used, the CPU is used instead: <why> */
  g_autofree char *text = g_strdup_printf (_("Running on the CPU: %s"), reason);
  gsize n;
  const FeDeviceInfo *devices = fm_engine_worker_list_devices (worker, &n);
  gboolean have_gpu = FALSE;

  for (gsize i = 0; i < n; i++)
    have_gpu |= devices[i].kind == FE_DEVICE_CUDA && devices[i].available;
  /* A machine without a usable GPU simply runs on the CPU; only a GPU that
   * is there and failed deserves a toast. The reason is kept either way. */
  if (have_gpu)
    show_error_toast (self, text);
  else
    remember_error (self, text);
}

static void
worker_recognition_failed (FmEngineWorker *worker, const char *message, FmWindow *self)
{
  /* Translators: the engine failed on some formulas: <reason> */
  g_autofree char *text = g_strdup_printf (_("Recognition failed: %s"), message);

  /* The same failure on every batch would bury the window in toasts. */
  if (g_strcmp0 (self->last_error, text) != 0)
    show_error_toast (self, text);
}

static void
worker_model_loaded (FmEngineWorker *worker, FmWindow *self)
{
  FmDocumentTab *tab = fm_window_get_current_tab (self);

  update_status (self);
  /* Documents opened before the model was ready start now. */
  if (tab != NULL && g_settings_get_boolean (self->settings, "recognize-on-open"))
    fm_document_tab_recognize (tab);
}

/* ---------------------------------------------------------------------- */
/* Devices                                                                */

static void
device_setup (GtkSignalListItemFactory *factory, GtkListItem *item, FmWindow *self)
{
  GtkWidget *label = gtk_label_new (NULL);

  gtk_label_set_xalign (GTK_LABEL (label), 0);
  /* A CPU's brand string can be long: the header bar keeps its room. But
   * not all of it: in a narrow window the button showed only "…", so at
   * least "Auto" or "CPU —" stays readable. */
  gtk_label_set_ellipsize (GTK_LABEL (label), PANGO_ELLIPSIZE_END);
  gtk_label_set_max_width_chars (GTK_LABEL (label), 30);
  gtk_label_set_width_chars (GTK_LABEL (label), 6);
  gtk_list_item_set_child (item, label);
}

static gboolean
device_info_for (FmWindow *self, const char *id, FeDeviceInfo *out)
{
  gsize n;
  const FeDeviceInfo *devices = fm_engine_worker_list_devices (self->worker, &n);

  for (gsize i = 0; i < n; i++)
    if (g_str_equal (devices[i].id, id))
      {
        *out = devices[i];
        return TRUE;
      }
  return FALSE;
}

static void
device_bind (GtkSignalListItemFactory *factory, GtkListItem *item, FmWindow *self)
{
  GtkWidget *label = gtk_list_item_get_child (item);
  GtkStringObject *label_obj = gtk_list_item_get_item (item);
  guint position = gtk_list_item_get_position (item);
  const char *id = gtk_string_list_get_string (self->device_ids, position);
  FeDeviceInfo info;
  gboolean available = TRUE;

  gtk_label_set_text (GTK_LABEL (label), gtk_string_object_get_string (label_obj));
  if (id != NULL && device_info_for (self, id, &info) && !info.available)
    {
      available = FALSE;
      gtk_widget_set_tooltip_text (label, info.unavailable_reason[0] ? info.unavailable_reason : NULL);
    }
  else
    gtk_widget_set_tooltip_text (label, NULL);
  /* Unavailable devices stay listed, greyed, with the reason as tooltip. */
  gtk_widget_set_sensitive (label, available);
  gtk_list_item_set_activatable (item, available);
  gtk_list_item_set_selectable (item, available);
}

static void
select_device_in_dropdown (FmWindow *self)
{
  g_autofree char *wanted = g_settings_get_string (self->settings, "device");
  guint n = g_list_model_get_n_items (G_LIST_MODEL (self->device_ids));

  self->updating_devices = TRUE;
  for (guint i = 0; i < n; i++)
    if (g_str_equal (gtk_string_list_get_string (self->device_ids, i), wanted))
      gtk_drop_down_set_selected (GTK_DROP_DOWN (self->device_dropdown), i);
  self->updating_devices = FALSE;
}

/* What the engine's reasons for an unusable GPU mean to a person. */
static const char *
device_reason_text (const char *reason)
{
  if (reason == NULL || *reason == '\0')
    return _("not usable");
  if (g_str_has_prefix (reason, "no CUDA driver"))
    return _("no NVIDIA driver found");
  if (g_str_has_prefix (reason, "CUDA backend not built"))
    return _("not built into this version");
  if (g_str_has_prefix (reason, "CUDA libraries not installed"))
    return _("CUDA libraries not installed");
  return reason;
}

char *
fm_window_device_label (const FeDeviceInfo *device)
{
  if (device->kind == FE_DEVICE_CPU)
    /* Translators: the CPU in the device menu, "CPU — AMD Ryzen 7 7700X" */
    return device->name[0] ? g_strdup_printf (_("CPU — %s"), device->name) : g_strdup (_("CPU"));
  if (!device->available)
    /* Translators: a GPU that cannot be used, "CUDA — no NVIDIA driver found" */
    return g_strdup_printf (_("CUDA — %s"), device_reason_text (device->unavailable_reason));
  {
    /* Translators: an NVIDIA GPU without a name from the driver, "NVIDIA GPU 1" */
    g_autofree char *name = device->name[0] ? g_strdup (device->name)
                                            : g_strdup_printf (_("NVIDIA GPU %d"), device->index + 1);
    if (device->total_memory == 0)
      return g_steal_pointer (&name);
    /* GPUs are sold by their memory in whole (binary) gigabytes: 12 GB, not 11.6 GiB. */
    /* Translators: a GPU and its memory, "NVIDIA GeForce RTX 4070 — 12 GB" */
    return g_strdup_printf (_("%s — %.0f GB"), name, (double) device->total_memory / (1024.0 * 1024.0 * 1024.0));
  }
}

static void
worker_devices_changed (FmEngineWorker *worker, FmWindow *self)
{
  gsize n;
  const FeDeviceInfo *devices = fm_engine_worker_list_devices (worker, &n);
  g_autoptr(GtkStringList) labels = gtk_string_list_new (NULL);

  self->updating_devices = TRUE;
  g_clear_object (&self->device_ids);
  self->device_ids = gtk_string_list_new (NULL);
  gtk_string_list_append (labels, _("Auto"));
  gtk_string_list_append (self->device_ids, "auto");
  for (gsize i = 0; i < n; i++)
    {
      g_autofree char *label = fm_window_device_label (&devices[i]);
      gtk_string_list_append (labels, label);
      gtk_string_list_append (self->device_ids, devices[i].id);
    }
  gtk_drop_down_set_model (GTK_DROP_DOWN (self->device_dropdown), G_LIST_MODEL (labels));
  self->updating_devices = FALSE;
  select_device_in_dropdown (self);
}

static void
device_selected (GtkDropDown *dropdown, GParamSpec *pspec, FmWindow *self)
{
  guint position = gtk_drop_down_get_selected (dropdown);
  const char *id;
  FeDeviceInfo info;

  if (self->updating_devices || self->device_ids == NULL || position == GTK_INVALID_LIST_POSITION)
    return;
  id = gtk_string_list_get_string (self->device_ids, position);
  if (id == NULL)
    return;
  if (device_info_for (self, id, &info) && !info.available)
    {
      /* Translators: "cuda: no CUDA driver" */
      g_autofree char *text = g_strdup_printf (_("%s cannot be used: %s"), info.name[0] ? info.name : _("The GPU"),
                                               device_reason_text (info.unavailable_reason));
      show_error_toast (self, text);
      select_device_in_dropdown (self);
      return;
    }
  /* The application reloads the model on the new device; results stay. */
  g_settings_set_string (self->settings, "device", id);
}

/* ---------------------------------------------------------------------- */
/* Actions                                                                */

static void
chooser_response (GtkNativeDialog *chooser, int response, FmWindow *self)
{
  if (response == GTK_RESPONSE_ACCEPT)
    {
      g_autoptr(GListModel) files = gtk_file_chooser_get_files (GTK_FILE_CHOOSER (chooser));
      guint n = g_list_model_get_n_items (files);
      for (guint i = 0; i < n; i++)
        {
          g_autoptr(GFile) file = g_list_model_get_item (files, i);
          open_file_with_password (self, file, NULL);
        }
    }
  g_clear_object (&self->chooser);
}

static void
open_action (GtkWidget *widget, const char *name, GVariant *parameter)
{
  FmWindow *self = FM_WINDOW (widget);
  g_autoptr(GtkFileFilter) filter = gtk_file_filter_new ();

  if (self->chooser != NULL)
    return;
  self->chooser = gtk_file_chooser_native_new (_("Open PDF"), GTK_WINDOW (self),
                                               GTK_FILE_CHOOSER_ACTION_OPEN, _("_Open"), _("_Cancel"));
  gtk_file_filter_set_name (filter, _("PDF documents"));
  gtk_file_filter_add_mime_type (filter, "application/pdf");
  gtk_file_filter_add_suffix (filter, "pdf");
  gtk_file_chooser_add_filter (GTK_FILE_CHOOSER (self->chooser), filter);
  gtk_file_chooser_set_select_multiple (GTK_FILE_CHOOSER (self->chooser), TRUE);
  gtk_native_dialog_set_modal (GTK_NATIVE_DIALOG (self->chooser), TRUE);
  g_signal_connect (self->chooser, "response", G_CALLBACK (chooser_response), self);
  gtk_native_dialog_show (GTK_NATIVE_DIALOG (self->chooser));
}

static void
recognize_action (GtkWidget *widget, const char *name, GVariant *parameter)
{
  FmWindow *self = FM_WINDOW (widget);
  FmDocumentTab *tab = fm_window_get_current_tab (self);

  if (tab == NULL)
    return;
  /* Before the first page was painted the model has not begun to load (it
   * waits for it): asked for, it loads now, and the formulas wait for it. */
  fm_application_start_engine (self->application);
  if (fm_engine_worker_get_state (self->worker) == FM_ENGINE_STATE_NO_MODEL)
    {
      const char *error = fm_engine_worker_get_load_error (self->worker);
      show_error_toast (self, error ? error : _("No model loaded"));
      return;
    }
  /* Ctrl+R with nothing left to do says so rather than nothing. */
  if (fm_document_tab_recognize (tab) == 0 && fm_engine_worker_get_state (self->worker) != FM_ENGINE_STATE_WORKING)
    show_toast (self, _("Every formula is already recognised"));
}

static void
cancel_action (GtkWidget *widget, const char *name, GVariant *parameter)
{
  fm_engine_worker_cancel (FM_WINDOW (widget)->worker, NULL);
}

static void
zoom_action (GtkWidget *widget, const char *name, GVariant *parameter)
{
  FmDocumentTab *tab = fm_window_get_current_tab (FM_WINDOW (widget));
  FmPageView *view;

  if (tab == NULL)
    return;
  view = fm_document_tab_get_page_view (tab);
  if (g_str_equal (name, "win.zoom-in"))
    fm_page_view_zoom_in (view);
  else if (g_str_equal (name, "win.zoom-out"))
    fm_page_view_zoom_out (view);
  else if (g_str_equal (name, "win.zoom-100"))
    fm_page_view_set_zoom (view, 1.0);
  else if (g_str_equal (name, "win.fit-page"))
    fm_page_view_set_fit_page (view, TRUE);
  else
    fm_page_view_set_fit_width (view, TRUE);
  update_zoom_label (FM_WINDOW (widget));
}

static void
thumbnails_action (GtkWidget *widget, const char *name, GVariant *parameter)
{
  FmWindow *self = FM_WINDOW (widget);
  gboolean visible = !g_settings_get_boolean (self->settings, "show-thumbnails");

  g_settings_set_boolean (self->settings, "show-thumbnails", visible);
  for (int i = 0; i < n_tab_pages (self); i++)
    fm_document_tab_set_thumbnails_visible (
      FM_DOCUMENT_TAB (adw_tab_page_get_child (adw_tab_view_get_nth_page (self->tab_view, i))), visible);
  gtk_toggle_button_set_active (GTK_TOGGLE_BUTTON (self->thumbnails_button), visible);
}

static void
delete_region_action (GtkWidget *widget, const char *name, GVariant *parameter)
{
  FmDocumentTab *tab = fm_window_get_current_tab (FM_WINDOW (widget));

  if (tab != NULL && fm_document_tab_delete_selected (tab))
    show_toast_with_button (FM_WINDOW (widget), _("Formula deleted"), _("_Undo"), "win.undo");
}

static void
find_action (GtkWidget *widget, const char *name, GVariant *parameter)
{
  FmDocumentTab *tab = fm_window_get_current_tab (FM_WINDOW (widget));

  if (tab != NULL && fm_document_tab_get_document (tab) != NULL)
    fm_document_tab_show_find (tab);
}

static void
undo_action (GtkWidget *widget, const char *name, GVariant *parameter)
{
  FmDocumentTab *tab = fm_window_get_current_tab (FM_WINDOW (widget));

  if (tab != NULL)
    fm_document_tab_undo (tab);
}

static void
copy_all_action (GtkWidget *widget, const char *name, GVariant *parameter)
{
  FmDocumentTab *tab = fm_window_get_current_tab (FM_WINDOW (widget));
  g_autofree char *all = NULL;

  if (tab == NULL)
    return;
  all = fm_results_panel_dup_all_latex (fm_document_tab_get_results_panel (tab));
  gdk_clipboard_set_text (gtk_widget_get_clipboard (widget), all);
  show_toast (FM_WINDOW (widget), _("Copied the LaTeX of every formula"));
}

static void
close_tab_action (GtkWidget *widget, const char *name, GVariant *parameter)
{
  FmWindow *self = FM_WINDOW (widget);
  FmDocumentTab *tab = fm_window_get_current_tab (self);

  if (tab != NULL)
    close_tab (self, tab);
  else
    gtk_window_close (GTK_WINDOW (self));
}

static void
go_to_page_action (GtkWidget *widget, const char *name, GVariant *parameter)
{
  FmWindow *self = FM_WINDOW (widget);

  if (gtk_widget_get_visible (self->page_box))
    gtk_widget_grab_focus (self->page_entry);
}

static void
page_entry_activate (GtkEntry *entry, FmWindow *self)
{
  FmDocumentTab *tab = fm_window_get_current_tab (self);
  const char *text = gtk_editable_get_text (GTK_EDITABLE (entry));
  guint64 page;

  if (tab == NULL || fm_document_tab_get_document (tab) == NULL)
    return;
  if (g_ascii_string_to_unsigned (text, 10, 1, fm_document_get_n_pages (fm_document_tab_get_document (tab)),
                                  &page, NULL))
    {
      fm_page_view_go_to_page (fm_document_tab_get_page_view (tab), (int) page - 1);
      gtk_widget_grab_focus (GTK_WIDGET (fm_document_tab_get_page_view (tab)));
    }
  else
    gtk_widget_error_bell (GTK_WIDGET (entry));
  update_page_entry (self);
}

static void
update_actions (FmWindow *self)
{
  FmDocumentTab *tab = fm_window_get_current_tab (self);
  gboolean loaded = tab != NULL && fm_document_tab_get_document (tab) != NULL;
  gboolean has_items = loaded && g_list_model_get_n_items (fm_document_tab_get_items (tab)) > 0;
  gboolean working = fm_engine_worker_get_state (self->worker) == FM_ENGINE_STATE_WORKING;

  gtk_widget_action_set_enabled (GTK_WIDGET (self), "win.export", has_items);
  gtk_widget_action_set_enabled (GTK_WIDGET (self), "win.export-docx", has_items && self->have_pandoc);
  gtk_widget_action_set_enabled (GTK_WIDGET (self), "win.export-html", has_items && self->have_pandoc);
  gtk_widget_action_set_enabled (GTK_WIDGET (self), "win.copy-all", has_items);
  gtk_widget_action_set_enabled (GTK_WIDGET (self), "win.recognize", has_items && !working);
  gtk_widget_action_set_enabled (GTK_WIDGET (self), "win.cancel", working);
  gtk_widget_action_set_enabled (GTK_WIDGET (self), "win.zoom-in", loaded);
  gtk_widget_action_set_enabled (GTK_WIDGET (self), "win.zoom-out", loaded);
  gtk_widget_action_set_enabled (GTK_WIDGET (self), "win.fit-width", loaded);
  gtk_widget_action_set_enabled (GTK_WIDGET (self), "win.fit-page", loaded);
  gtk_widget_action_set_enabled (GTK_WIDGET (self), "win.zoom-100", loaded);
  gtk_widget_action_set_enabled (GTK_WIDGET (self), "win.find", loaded);
  gtk_widget_action_set_enabled (GTK_WIDGET (self), "win.undo", loaded && fm_document_tab_can_undo (tab));
}

static void
tab_can_undo_changed (FmDocumentTab *tab, GParamSpec *pspec, FmWindow *self)
{
  if (self->tab_view == NULL)  /* the window is being destroyed */
    return;
  update_actions (self);
}

/* ---------------------------------------------------------------------- */
/* Export                                                                 */

/* What an export holds: the export dialog's "scope" choice. */
typedef enum {
  EXPORT_DOCUMENT,   /* every formula of every page */
  EXPORT_PAGE,       /* the page being read, as if only it had been processed */
  EXPORT_SELECTED,   /* the rows selected in the results list, and their pages */
} ExportScope;

static ExportScope
export_scope_from_string (const char *id)
{
  if (g_strcmp0 (id, "page") == 0)
    return EXPORT_PAGE;
  if (g_strcmp0 (id, "selected") == 0)
    return EXPORT_SELECTED;
  return EXPORT_DOCUMENT;
}

/* The current tab's formulas in scope as the PDF library's export job: its
 * pages are the pages exported (JSON lists them, Markdown lays them out), so
 * "this page" writes what the CLI's --pages N would. */
static FmExportJob *
build_export_job (FmWindow *self, FmDocumentTab *tab, ExportScope scope)
{
  FmDocument *doc = fm_document_tab_get_document (tab);
  GListModel *items = fm_document_tab_get_items (tab);
  g_autofree char *source = g_file_get_basename (fm_document_tab_get_file (tab));
  FmExportJob *job = fm_export_job_new (source);
  g_autoptr(GPtrArray) chosen = NULL;
  g_autofree gboolean *page_in = NULL;
  FeRuntimeInfo info;
  guint n;

  job->title = fm_document_dup_title (doc);
  job->n_pages = fm_document_get_n_pages (doc);
  page_in = g_new0 (gboolean, MAX (job->n_pages, 1));
  if (scope == EXPORT_SELECTED)
    chosen = fm_results_panel_dup_selected (fm_document_tab_get_results_panel (tab));
  else
    {
      int current = fm_page_view_get_current_page (fm_document_tab_get_page_view (tab));
      chosen = g_ptr_array_new_with_free_func (g_object_unref);
      n = g_list_model_get_n_items (items);
      for (guint i = 0; i < n; i++)
        {
          FmResultsItem *item = g_list_model_get_item (items, i);
          if (scope == EXPORT_DOCUMENT || fm_results_item_get_page (item) == current)
            g_ptr_array_add (chosen, item);
          else
            g_object_unref (item);
        }
      for (int page = 0; page < job->n_pages; page++)
        page_in[page] = scope == EXPORT_DOCUMENT || page == current;
    }
  for (guint i = 0; i < chosen->len; i++)
    {
      FmResultsItem *item = chosen->pdata[i];
      int page = fm_results_item_get_page (item);
      g_ptr_array_add (job->regions, fm_region_copy (fm_results_item_get_region (item)));
      if (fm_results_item_get_latex (item) != NULL)
        job->recognized = TRUE;
      if (page >= 0 && page < job->n_pages)
        page_in[page] = TRUE;
    }
  for (int page = 0; page < job->n_pages; page++)
    {
      if (!page_in[page])
        continue;
      g_array_append_val (job->pages, page);
      g_ptr_array_add (job->page_notes, g_strdup (fm_document_tab_get_page_note (tab, page)));
      g_ptr_array_add (job->page_analysis, (gpointer) fm_document_tab_get_page_source (tab, page));
    }
  if (job->recognized && fm_engine_worker_get_runtime_info (self->worker, &info))
    job->device = g_strdup (info.device.id);
  return job;
}

static gboolean
format_for_file (GFile *file, const char *format, FmExportFormat *out)
{
  g_autofree char *name = g_file_get_basename (file);

  if (format != NULL)
    return fm_export_format_from_string (format, out);
  if (g_str_has_suffix (name, ".json"))
    *out = FM_EXPORT_JSON;
  else if (g_str_has_suffix (name, ".md") || g_str_has_suffix (name, ".markdown"))
    *out = FM_EXPORT_MARKDOWN;
  else if (g_str_has_suffix (name, ".docx"))
    *out = FM_EXPORT_DOCX;
  else if (g_str_has_suffix (name, ".html") || g_str_has_suffix (name, ".htm"))
    *out = FM_EXPORT_HTML;
  else
    *out = FM_EXPORT_TEX;
  return TRUE;
}

/* Writes the export to file with the CLI's writers (fm_export_to_bytes, so
 * docx and HTML go through pandoc exactly as `formulate-cli pdf --format`;
 * fm-output-file.h): atomic for a regular file and keeping its mode, in
 * place for anything else, never over the PDF it came from. Files without a
 * local path go through GIO. */
static gboolean
write_export (FmExportJob *job, FmDocument *doc, FmExportFormat format, GFile *file,
              GFile *input, GError **error)
{
  g_autoptr(GBytes) bytes = fm_export_to_bytes (job, doc, format, NULL, error);
  g_autofree char *path = NULL;
  g_autofree char *input_path = NULL;
  const char *data;
  gsize len;

  if (bytes == NULL)
    return FALSE;
  data = g_bytes_get_data (bytes, &len);
  path = g_file_get_path (file);
  if (path == NULL)
    return g_file_replace_contents (file, data, len, NULL, FALSE,
                                    G_FILE_CREATE_REPLACE_DESTINATION, NULL, NULL, error);
  input_path = input ? g_file_get_path (input) : NULL;
  return fm_output_file_write (path, input_path, data, len, error);
}

gboolean
fm_window_export_to_file (FmWindow *self, GFile *file, const char *format, GError **error)
{
  FmDocumentTab *tab = fm_window_get_current_tab (self);
  g_autoptr(FmExportJob) job = NULL;
  FmExportFormat fmt;
  guint changes;

  if (tab == NULL || fm_document_tab_get_document (tab) == NULL)
    {
      g_set_error_literal (error, G_IO_ERROR, G_IO_ERROR_NOT_FOUND, _("No document is open"));
      return FALSE;
    }
  if (!format_for_file (file, format, &fmt))
    {
      g_set_error (error, G_IO_ERROR, G_IO_ERROR_INVALID_ARGUMENT, _("Unknown export format “%s”"), format);
      return FALSE;
    }
  job = build_export_job (self, tab, EXPORT_DOCUMENT);
  changes = fm_document_tab_get_changes (tab);
  if (!write_export (job, fm_document_tab_get_document (tab), fmt, file,
                     fm_document_tab_get_file (tab), error))
    return FALSE;
  fm_document_tab_mark_exported (tab, changes);
  return TRUE;
}

typedef struct {
  FmExportJob *job;
  FmDocument *doc;
  FmExportFormat format;
  GFile *file;
  GFile *input;  /* the PDF, which the export must not replace */
  GWeakRef tab;  /* the tab exported, marked exported when the file is written */
  guint changes; /* its change count when the export started */
} ExportData;

static void
export_data_free (ExportData *data)
{
  fm_export_job_free (data->job);
  g_object_unref (data->doc);
  g_object_unref (data->file);
  g_clear_object (&data->input);
  g_weak_ref_clear (&data->tab);
  g_free (data);
}

static void
export_thread (GTask *task, gpointer source, gpointer task_data, GCancellable *cancellable)
{
  ExportData *data = task_data;
  GError *error = NULL;

  /* Markdown reads the text layer: off the main thread, behind the lock. */
  if (write_export (data->job, data->doc, data->format, data->file, data->input, &error))
    g_task_return_boolean (task, TRUE);
  else
    g_task_return_error (task, error);
}

static void
export_done (GObject *source, GAsyncResult *result, gpointer user_data)
{
  FmWindow *self = FM_WINDOW (source);
  ExportData *data = g_task_get_task_data (G_TASK (result));
  g_autoptr(GError) error = NULL;
  g_autofree char *name = g_file_get_basename (data->file);

  if (g_task_propagate_boolean (G_TASK (result), &error))
    {
      /* Translators: "Exported to x.tex" */
      g_autofree char *text = g_strdup_printf (_("Exported to %s"), name);
      g_autoptr(FmDocumentTab) tab = g_weak_ref_get (&data->tab);

      if (tab != NULL)
        fm_document_tab_mark_exported (tab, data->changes);
      show_toast (self, text);
    }
  else
    {
      g_autofree char *text = g_strdup_printf (_("Could not export to %s: %s"), name, error->message);
      show_error_toast (self, text);
    }
}

static void
export_response (GtkNativeDialog *chooser, int response, FmWindow *self)
{
  FmDocumentTab *tab = fm_window_get_current_tab (self);

  if (response == GTK_RESPONSE_ACCEPT && tab != NULL && fm_document_tab_get_document (tab) != NULL)
    {
      g_autoptr(GFile) file = gtk_file_chooser_get_file (GTK_FILE_CHOOSER (chooser));
      GtkFileFilter *filter = gtk_file_chooser_get_filter (GTK_FILE_CHOOSER (chooser));
      const char *format = filter ? g_object_get_data (G_OBJECT (filter), "format") : NULL;
      g_autofree char *name = g_file_get_basename (file);
      ExportData *data = g_new0 (ExportData, 1);
      g_autoptr(GTask) task = g_task_new (self, NULL, export_done, NULL);

      /* A typed extension wins over the selected filter. */
      if (strchr (name, '.') != NULL)
        format = NULL;
      format_for_file (file, format, &data->format);
      data->job = build_export_job (self, tab, export_scope_from_string (
          gtk_file_chooser_get_choice (GTK_FILE_CHOOSER (chooser), "scope")));
      data->doc = g_object_ref (fm_document_tab_get_document (tab));
      data->file = g_object_ref (file);
      data->input = g_object_ref (fm_document_tab_get_file (tab));
      g_weak_ref_init (&data->tab, tab);
      data->changes = fm_document_tab_get_changes (tab);
      g_task_set_task_data (task, data, (GDestroyNotify) export_data_free);
      g_task_run_in_thread (task, export_thread);
    }
  g_object_unref (chooser);
}

static void
add_export_filter (GtkFileChooser *chooser, const char *title, const char *pattern, const char *format)
{
  GtkFileFilter *filter = gtk_file_filter_new ();

  gtk_file_filter_set_name (filter, title);
  gtk_file_filter_add_pattern (filter, pattern);
  g_object_set_data (G_OBJECT (filter), "format", (gpointer) format);
  gtk_file_chooser_add_filter (chooser, filter);
  g_object_unref (filter);
}

/* The export dialog, its name ending in ext and that format's filter chosen. */
static void
export_open_chooser (FmWindow *self, const char *ext)
{
  FmDocumentTab *tab = fm_window_get_current_tab (self);
  GtkFileChooserNative *chooser;
  g_autofree char *suggested = NULL;
  g_autoptr(GListModel) filters = NULL;
  char *dot;

  if (tab == NULL || fm_document_tab_get_document (tab) == NULL)
    return;
  chooser = gtk_file_chooser_native_new (_("Export Formulas"), GTK_WINDOW (self),
                                         GTK_FILE_CHOOSER_ACTION_SAVE, _("_Export"), _("_Cancel"));
  add_export_filter (GTK_FILE_CHOOSER (chooser), _("LaTeX document (.tex)"), "*.tex", "tex");
  add_export_filter (GTK_FILE_CHOOSER (chooser), _("Markdown (.md)"), "*.md", "markdown");
  add_export_filter (GTK_FILE_CHOOSER (chooser), _("JSON (.json)"), "*.json", "json");
  /* A native chooser's filters cannot be greyed: without pandoc they are
   * left out here, and the menu shows them insensitive with the reason. */
  if (self->have_pandoc)
    {
      add_export_filter (GTK_FILE_CHOOSER (chooser), _("Word document (.docx)"), "*.docx", "docx");
      add_export_filter (GTK_FILE_CHOOSER (chooser), _("Web page with MathML (.html)"), "*.html", "html");
    }
  filters = gtk_file_chooser_get_filters (GTK_FILE_CHOOSER (chooser));
  for (guint i = 0; i < g_list_model_get_n_items (filters); i++)
    {
      g_autoptr(GtkFileFilter) filter = g_list_model_get_item (filters, i);
      const char *format = g_object_get_data (G_OBJECT (filter), "format");
      if (g_str_equal (format, ext) || (g_str_equal (ext, "md") && g_str_equal (format, "markdown")))
        gtk_file_chooser_set_filter (GTK_FILE_CHOOSER (chooser), filter);
    }
  /* Beside the PDF, named after it (as Papers saves a copy): "paper.pdf" ->
   * "paper.tex" in paper.pdf's folder. */
  {
    GFile *pdf = fm_document_tab_get_file (tab);
    g_autoptr(GFile) folder = g_file_get_parent (pdf);
    g_autofree char *with_ext = NULL;

    suggested = g_file_get_basename (pdf);
    if ((dot = strrchr (suggested, '.')) != NULL && dot != suggested)
      *dot = '\0';
    with_ext = g_strconcat (suggested, ".", ext, NULL);
    if (folder != NULL)
      gtk_file_chooser_set_current_folder (GTK_FILE_CHOOSER (chooser), folder, NULL);
    gtk_file_chooser_set_current_name (GTK_FILE_CHOOSER (chooser), with_ext);
  }
  /* What to export, beside the format: the whole document, the page being
   * read, or the rows selected in the results list (offered when any is). */
  {
    g_autoptr(GPtrArray) selected = fm_results_panel_dup_selected (fm_document_tab_get_results_panel (tab));
    const char *ids[] = { "document", "page", "selected", NULL };
    const char *labels[] = { _("Whole document"), _("This page"), _("Selected formulas"), NULL };

    if (selected->len == 0)
      ids[2] = labels[2] = NULL;
    /* Translators: the export dialog's choice of what to export */
    /* The first option, the whole document, is chosen when the dialog opens. */
    gtk_file_chooser_add_choice (GTK_FILE_CHOOSER (chooser), "scope", _("Export"), ids, labels);
  }
  gtk_native_dialog_set_modal (GTK_NATIVE_DIALOG (chooser), TRUE);
  g_signal_connect (chooser, "response", G_CALLBACK (export_response), self);
  gtk_native_dialog_show (GTK_NATIVE_DIALOG (chooser));
}

static void
export_action (GtkWidget *widget, const char *name, GVariant *parameter)
{
  export_open_chooser (FM_WINDOW (widget), "tex");
}

static void
export_docx_action (GtkWidget *widget, const char *name, GVariant *parameter)
{
  export_open_chooser (FM_WINDOW (widget), "docx");
}

static void
export_html_action (GtkWidget *widget, const char *name, GVariant *parameter)
{
  export_open_chooser (FM_WINDOW (widget), "html");
}

/* Word and HTML in the primary menu, beside Export…: insensitive, with the
 * reason in the label, when pandoc is not on PATH (looked up once per
 * window: a new window sees a pandoc installed meanwhile). */
static void
add_pandoc_menu (FmWindow *self)
{
  g_autoptr(GMenu) section = g_menu_new ();

  self->have_pandoc = FALSE;
  {
    g_autofree char *pandoc = fm_pandoc_find ();
    self->have_pandoc = pandoc != NULL;
  }
  if (self->have_pandoc)
    {
      g_menu_append (section, _("Export as _Word (.docx)…"), "win.export-docx");
      g_menu_append (section, _("Export as _HTML with MathML…"), "win.export-html");
    }
  else
    {
      /* Translators: a greyed menu item; pandoc is a program's name. */
      g_menu_append (section, _("Word (.docx) — needs pandoc"), "win.export-docx");
      /* Translators: a greyed menu item; pandoc is a program's name. */
      g_menu_append (section, _("HTML with MathML — needs pandoc"), "win.export-html");
    }
  g_menu_insert_section (self->primary_menu, 1, NULL, G_MENU_MODEL (section));
}

/* ---------------------------------------------------------------------- */
/* Drag and drop                                                          */

/* While files are dragged over the window, it shows where they will go. */
static GdkDragAction
drop_enter (GtkDropTarget *target, double x, double y, FmWindow *self)
{
  gtk_widget_add_css_class (self->main_stack, "fm-drop-target");
  return GDK_ACTION_COPY;
}

static void
drop_leave (GtkDropTarget *target, FmWindow *self)
{
  gtk_widget_remove_css_class (self->main_stack, "fm-drop-target");
}

static gboolean
drop_cb (GtkDropTarget *target, const GValue *value, double x, double y, FmWindow *self)
{
  GSList *files;

  gtk_widget_remove_css_class (self->main_stack, "fm-drop-target");
  if (!G_VALUE_HOLDS (value, GDK_TYPE_FILE_LIST))
    return FALSE;
  files = gdk_file_list_get_files (g_value_get_boxed (value));
  for (GSList *l = files; l != NULL; l = l->next)
    open_file_with_password (self, l->data, NULL);
  g_slist_free (files);
  return files != NULL;
}

/* The keyboard shortcuts window (Ctrl+?, main menu). Not GTK's
 * "gtk/help-overlay.ui" resource: GtkApplication builds that for every window
 * as it is added, before the first frame (6 % of the empty window's start-up
 * samples in perf). Built the first time it is asked for, then kept hidden. */
static void
shortcuts_action (GtkWidget *widget, const char *name, GVariant *parameter)
{
  FmWindow *self = FM_WINDOW (widget);

  if (self->shortcuts == NULL)
    {
      g_autoptr(GtkBuilder) builder =
        gtk_builder_new_from_resource ("/io/github/formulate/Formulate/ui/fm-shortcuts.ui");
      self->shortcuts = GTK_WIDGET (gtk_builder_get_object (builder, "help_overlay"));
      gtk_window_set_transient_for (GTK_WINDOW (self->shortcuts), GTK_WINDOW (self));
      gtk_window_set_hide_on_close (GTK_WINDOW (self->shortcuts), TRUE);
    }
  gtk_window_present (GTK_WINDOW (self->shortcuts));
}

GtkWidget *
fm_window_get_shortcuts_window (FmWindow *self)
{
  return self->shortcuts;
}

/* ---------------------------------------------------------------------- */
/* GObject                                                                */

static gboolean
fm_window_close_request (GtkWindow *window)
{
  FmWindow *self = FM_WINDOW (window);
  int width, height;

  if (!self->discard_confirmed && self->tab_view != NULL)
    for (int i = 0; i < adw_tab_view_get_n_pages (self->tab_view); i++)
      if (fm_document_tab_has_unsaved (FM_DOCUMENT_TAB (
            adw_tab_page_get_child (adw_tab_view_get_nth_page (self->tab_view, i)))))
        {
          ask_before_closing (self, NULL);
          return TRUE;
        }
  if (self->tab_view != NULL)
    for (int i = 0; i < adw_tab_view_get_n_pages (self->tab_view); i++)
      fm_document_tab_save_position (FM_DOCUMENT_TAB (adw_tab_page_get_child (adw_tab_view_get_nth_page (self->tab_view, i))));
  gtk_window_get_default_size (window, &width, &height);
  g_settings_set_int (self->settings, "window-width", width);
  g_settings_set_int (self->settings, "window-height", height);
  g_settings_set_boolean (self->settings, "window-maximized", gtk_window_is_maximized (window));
  return GTK_WINDOW_CLASS (fm_window_parent_class)->close_request (window);
}

static void
fm_window_dispose (GObject *object)
{
  FmWindow *self = FM_WINDOW (object);

  g_clear_handle_id (&self->tick_id, g_source_remove);
  g_clear_handle_id (&self->status_soon_id, g_source_remove);
  g_clear_handle_id (&self->zoom_label_id, g_source_remove);
  g_clear_handle_id (&self->dismiss_source, g_source_remove);
  if (self->worker != NULL)
    g_signal_handlers_disconnect_by_data (self->worker, self);
  if (self->shortcuts != NULL)
    gtk_window_destroy (GTK_WINDOW (self->shortcuts));
  self->shortcuts = NULL;
  if (self->chooser != NULL)
    gtk_native_dialog_destroy (GTK_NATIVE_DIALOG (self->chooser));
  g_clear_object (&self->chooser);
  /* Not a template child (ensure_documents), but the stack's: NULL tells the
   * tabs' callbacks during the stack's disposal that the window is going, as
   * gtk_widget_dispose_template() does for the template's children. */
  self->tab_view = NULL;
  gtk_widget_dispose_template (GTK_WIDGET (self), FM_TYPE_WINDOW);
  g_clear_object (&self->worker);
  g_clear_object (&self->settings);
  g_clear_object (&self->device_ids);
  if (self->toasts != NULL)
    for (guint i = 0; i < self->toasts->len; i++)
      g_signal_handlers_disconnect_by_data (g_ptr_array_index (self->toasts, i), self);
  g_clear_pointer (&self->toasts, g_ptr_array_unref);
  G_OBJECT_CLASS (fm_window_parent_class)->dispose (object);
}

static void
fm_window_finalize (GObject *object)
{
  FmWindow *self = FM_WINDOW (object);

  g_free (self->last_error);
  g_free (self->last_toast);
  g_free (self->status_text);
  g_free (self->progress_text);
  G_OBJECT_CLASS (fm_window_parent_class)->finalize (object);
}

static void
fm_window_class_init (FmWindowClass *klass)
{
  GObjectClass *object_class = G_OBJECT_CLASS (klass);
  GtkWidgetClass *widget_class = GTK_WIDGET_CLASS (klass);

  object_class->dispose = fm_window_dispose;
  object_class->finalize = fm_window_finalize;
  GTK_WINDOW_CLASS (klass)->close_request = fm_window_close_request;

  gtk_widget_class_set_template_from_resource (widget_class, "/io/github/formulate/Formulate/ui/fm-window.ui");
  gtk_widget_class_bind_template_child (widget_class, FmWindow, toast_overlay);
  gtk_widget_class_bind_template_child (widget_class, FmWindow, header_bar);
  gtk_widget_class_bind_template_child (widget_class, FmWindow, thumbnails_button);
  gtk_widget_class_bind_template_child (widget_class, FmWindow, page_box);
  gtk_widget_class_bind_template_child (widget_class, FmWindow, page_entry);
  gtk_widget_class_bind_template_child (widget_class, FmWindow, page_count_label);
  gtk_widget_class_bind_template_child (widget_class, FmWindow, zoom_button);
  gtk_widget_class_bind_template_child (widget_class, FmWindow, window_title);
  gtk_widget_class_bind_template_child (widget_class, FmWindow, export_button);
  gtk_widget_class_bind_template_child (widget_class, FmWindow, primary_menu);
  gtk_widget_class_bind_template_child (widget_class, FmWindow, zoom_menu);
  gtk_widget_class_bind_template_child (widget_class, FmWindow, menu_button);
  gtk_widget_class_bind_template_child (widget_class, FmWindow, device_dropdown);
  gtk_widget_class_bind_template_child (widget_class, FmWindow, recognize_button);
  gtk_widget_class_bind_template_child (widget_class, FmWindow, main_stack);
  gtk_widget_class_bind_template_child (widget_class, FmWindow, recent_list);
  gtk_widget_class_bind_template_child (widget_class, FmWindow, status_label);
  gtk_widget_class_bind_template_child (widget_class, FmWindow, progress_box);
  gtk_widget_class_bind_template_child (widget_class, FmWindow, progress_label);
  gtk_widget_class_bind_template_child (widget_class, FmWindow, progress_bar);

  gtk_widget_class_install_action (widget_class, "win.open", NULL, open_action);
  gtk_widget_class_install_action (widget_class, "win.export", NULL, export_action);
  gtk_widget_class_install_action (widget_class, "win.export-docx", NULL, export_docx_action);
  gtk_widget_class_install_action (widget_class, "win.export-html", NULL, export_html_action);
  gtk_widget_class_install_action (widget_class, "win.recognize", NULL, recognize_action);
  gtk_widget_class_install_action (widget_class, "win.cancel", NULL, cancel_action);
  gtk_widget_class_install_action (widget_class, "win.zoom-in", NULL, zoom_action);
  gtk_widget_class_install_action (widget_class, "win.zoom-out", NULL, zoom_action);
  gtk_widget_class_install_action (widget_class, "win.fit-width", NULL, zoom_action);
  gtk_widget_class_install_action (widget_class, "win.fit-page", NULL, zoom_action);
  gtk_widget_class_install_action (widget_class, "win.zoom-100", NULL, zoom_action);
  gtk_widget_class_install_action (widget_class, "win.show-thumbnails", NULL, thumbnails_action);
  gtk_widget_class_install_action (widget_class, "win.delete-region", NULL, delete_region_action);
  gtk_widget_class_install_action (widget_class, "win.undo", NULL, undo_action);
  gtk_widget_class_install_action (widget_class, "win.find", NULL, find_action);
  gtk_widget_class_install_action (widget_class, "win.copy-all", NULL, copy_all_action);
  gtk_widget_class_install_action (widget_class, "win.show-toast", "s", show_toast_action);
  gtk_widget_class_install_action (widget_class, "win.close-tab", NULL, close_tab_action);
  gtk_widget_class_install_action (widget_class, "win.go-to-page", NULL, go_to_page_action);
  gtk_widget_class_install_action (widget_class, "win.show-help-overlay", NULL, shortcuts_action);

  gtk_widget_class_add_binding_action (widget_class, GDK_KEY_o, GDK_CONTROL_MASK, "win.open", NULL);
  gtk_widget_class_add_binding_action (widget_class, GDK_KEY_e, GDK_CONTROL_MASK, "win.export", NULL);
  /* The menus show an action's last binding as its shortcut: "Ctrl++", not
   * "Ctrl+KP +" (the keypad's keys are added first). */
  gtk_widget_class_add_binding_action (widget_class, GDK_KEY_KP_Add, GDK_CONTROL_MASK, "win.zoom-in", NULL);
  gtk_widget_class_add_binding_action (widget_class, GDK_KEY_equal, GDK_CONTROL_MASK, "win.zoom-in", NULL);
  gtk_widget_class_add_binding_action (widget_class, GDK_KEY_plus, GDK_CONTROL_MASK, "win.zoom-in", NULL);
  gtk_widget_class_add_binding_action (widget_class, GDK_KEY_KP_Subtract, GDK_CONTROL_MASK, "win.zoom-out", NULL);
  gtk_widget_class_add_binding_action (widget_class, GDK_KEY_minus, GDK_CONTROL_MASK, "win.zoom-out", NULL);
  gtk_widget_class_add_binding_action (widget_class, GDK_KEY_0, GDK_CONTROL_MASK, "win.fit-width", NULL);
  gtk_widget_class_add_binding_action (widget_class, GDK_KEY_1, GDK_CONTROL_MASK, "win.zoom-100", NULL);
  gtk_widget_class_add_binding_action (widget_class, GDK_KEY_F9, 0, "win.show-thumbnails", NULL);
  gtk_widget_class_add_binding_action (widget_class, GDK_KEY_w, GDK_CONTROL_MASK, "win.close-tab", NULL);
  gtk_widget_class_add_binding_action (widget_class, GDK_KEY_l, GDK_CONTROL_MASK, "win.go-to-page", NULL);
  gtk_widget_class_add_binding_action (widget_class, GDK_KEY_r, GDK_CONTROL_MASK, "win.recognize", NULL);
  /* A LaTeX entry with the focus undoes its own typing first (GtkText). */
  gtk_widget_class_add_binding_action (widget_class, GDK_KEY_z, GDK_CONTROL_MASK, "win.undo", NULL);
  gtk_widget_class_add_binding_action (widget_class, GDK_KEY_f, GDK_CONTROL_MASK, "win.find", NULL);
  gtk_widget_class_add_binding_action (widget_class, GDK_KEY_question, GDK_CONTROL_MASK, "win.show-help-overlay", NULL);
  gtk_widget_class_add_binding_action (widget_class, GDK_KEY_Escape, 0, "win.cancel", NULL);
}

/* A menu button's popover is built the first time it opens, not with the
 * window: a GtkPopoverMenu makes every item's widgets (and looks up every
 * action's shortcut) when it is given its model, ~3.5 ms of the main
 * thread before the empty window's first frame (perf, 2026-11-26), for menus
 * nobody has opened yet. */
static void
create_menu_popup (GtkMenuButton *button, gpointer model)
{
  if (gtk_menu_button_get_popover (button) == NULL)
    gtk_menu_button_set_menu_model (button, model);
}

static void
fm_window_init (FmWindow *self)
{
  GtkListItemFactory *factory;
  GtkDropTarget *drop;

  g_type_ensure (FM_TYPE_DOCUMENT_TAB);
  gtk_widget_init_template (GTK_WIDGET (self));
  add_pandoc_menu (self);
  gtk_menu_button_set_create_popup_func (GTK_MENU_BUTTON (self->menu_button), create_menu_popup,
                                         self->primary_menu, NULL);
  gtk_menu_button_set_create_popup_func (GTK_MENU_BUTTON (self->zoom_button), create_menu_popup,
                                         self->zoom_menu, NULL);
  self->toasts = g_ptr_array_new_with_free_func (g_object_unref);

  factory = gtk_signal_list_item_factory_new ();
  g_signal_connect (factory, "setup", G_CALLBACK (device_setup), self);
  g_signal_connect (factory, "bind", G_CALLBACK (device_bind), self);
  gtk_drop_down_set_factory (GTK_DROP_DOWN (self->device_dropdown), factory);
  g_object_unref (factory);
  g_signal_connect (self->device_dropdown, "notify::selected", G_CALLBACK (device_selected), self);

  g_signal_connect (self->page_entry, "activate", G_CALLBACK (page_entry_activate), self);

  drop = gtk_drop_target_new (GDK_TYPE_FILE_LIST, GDK_ACTION_COPY);
  g_signal_connect (drop, "drop", G_CALLBACK (drop_cb), self);
  g_signal_connect (drop, "enter", G_CALLBACK (drop_enter), self);
  g_signal_connect (drop, "leave", G_CALLBACK (drop_leave), self);
  gtk_widget_add_controller (GTK_WIDGET (self), GTK_EVENT_CONTROLLER (drop));

  g_signal_connect_object (gtk_recent_manager_get_default (), "changed",
                           G_CALLBACK (update_recent), self, G_CONNECT_SWAPPED);
}

FmWindow *
fm_window_new (FmApplication *application)
{
  FmWindow *self = g_object_new (FM_TYPE_WINDOW, "application", application, NULL);

  self->application = application;
  self->settings = g_object_ref (fm_application_get_settings (application));
  self->worker = g_object_ref (fm_application_get_worker (application));
  gtk_window_set_default_size (GTK_WINDOW (self),
                               g_settings_get_int (self->settings, "window-width"),
                               g_settings_get_int (self->settings, "window-height"));
  if (g_settings_get_boolean (self->settings, "window-maximized"))
    gtk_window_maximize (GTK_WINDOW (self));
  gtk_toggle_button_set_active (GTK_TOGGLE_BUTTON (self->thumbnails_button),
                                g_settings_get_boolean (self->settings, "show-thumbnails"));

  g_signal_connect (self->worker, "state-changed", G_CALLBACK (worker_state_changed), self);
  g_signal_connect (self->worker, "progress", G_CALLBACK (worker_progress), self);
  g_signal_connect (self->worker, "runtime-changed", G_CALLBACK (worker_progress), self);
  g_signal_connect (self->worker, "model-failed", G_CALLBACK (worker_model_failed), self);
  g_signal_connect (self->worker, "model-loaded", G_CALLBACK (worker_model_loaded), self);
  g_signal_connect (self->worker, "fell-back", G_CALLBACK (worker_fell_back), self);
  g_signal_connect (self->worker, "recognition-failed", G_CALLBACK (worker_recognition_failed), self);
  g_signal_connect (self->worker, "devices-changed", G_CALLBACK (worker_devices_changed), self);
  worker_devices_changed (self->worker, self);
  if (fm_engine_worker_get_load_error (self->worker) != NULL)
    remember_error (self, fm_engine_worker_get_load_error (self->worker));

  update_recent (self);
  update_title (self);
  update_page_entry (self);
  update_actions (self);
  update_status (self);
  return self;
}

const char *
fm_window_get_last_error (FmWindow *self)
{
  return self->last_error;
}

guint
fm_window_get_n_toasts (FmWindow *self)
{
  return self->n_toasts;
}

guint
fm_window_get_n_toasts_shown (FmWindow *self)
{
  return self->toasts->len;
}

GtkListBox *
fm_window_get_recent_list (FmWindow *self)
{
  return GTK_LIST_BOX (self->recent_list);
}

const char *
fm_window_get_last_toast (FmWindow *self)
{
  return self->last_toast;
}

const char *
fm_window_get_status_text (FmWindow *self)
{
  return self->status_text;
}

GtkLabel *
fm_window_get_status_label (FmWindow *self)
{
  return GTK_LABEL (self->status_label);
}

const char *
fm_window_get_progress_text (FmWindow *self)
{
  return self->progress_text;
}

const char *
fm_window_get_zoom_text (FmWindow *self)
{
  return gtk_menu_button_get_label (GTK_MENU_BUTTON (self->zoom_button));
}

gboolean
fm_window_get_drop_highlight (FmWindow *self)
{
  return gtk_widget_has_css_class (self->main_stack, "fm-drop-target");
}

GListModel *
fm_window_get_device_labels (FmWindow *self)
{
  return gtk_drop_down_get_model (GTK_DROP_DOWN (self->device_dropdown));
}
