/* gui-test-util.c - helpers shared by the GUI tests; see gui-test-util.h. */
#include "gui-test-util.h"

#include <string.h>
#include <execinfo.h>
#include <signal.h>
#include <unistd.h>

FmApplication *app;
FmWindow *window;
char *tmp_dir;

/* Xvfb without a session bus: GTK warns that it cannot reach one, which
 * changes nothing for these tests. Every other warning stays fatal. */
static gboolean
fatal_log_filter (const char *domain, GLogLevelFlags level, const char *message, gpointer data)
{
  if (message != NULL && (strstr (message, "session bus") != NULL || strstr (message, "dbus-launch") != NULL))
    return FALSE;
  return TRUE;
}

/* A crash names where it happened: a CI log of a flaky segfault said only
 * "Segmentation fault" (the window's message dialogs, 2026-11-26). */
static void
print_crash_backtrace (int signal_number)
{
  static const char header[] = "\n# crashed; backtrace (addr2line -e the test program for lines):\n";
  void *frames[64];
  int n = backtrace (frames, G_N_ELEMENTS (frames));

  if (write (STDERR_FILENO, header, sizeof header - 1) < 0)
    _exit (128 + signal_number);
  backtrace_symbols_fd (frames, n, STDERR_FILENO);
  signal (signal_number, SIG_DFL);
  raise (signal_number);
}

gboolean
gui_test_init (int *argc, char ***argv, const char *tmp_name, gboolean strict_logs)
{
  g_autofree char *template = g_strconcat (tmp_name, "-XXXXXX", NULL);
  g_autofree char *model = NULL;

  /* Under ASan its own report is better. */
#ifndef __SANITIZE_ADDRESS__
  signal (SIGSEGV, print_crash_backtrace);
  signal (SIGBUS, print_crash_backtrace);
#endif
  tmp_dir = g_dir_make_tmp (template, NULL);
  g_assert_nonnull (tmp_dir);
  g_setenv ("XDG_DATA_HOME", tmp_dir, TRUE);
  g_setenv ("XDG_STATE_HOME", tmp_dir, TRUE);
  g_setenv ("GSETTINGS_BACKEND", "memory", TRUE);
  /* GTK 4.8 looks for the accessibility bus at a path shared by every session
   * of the user (~/.cache/at-spi/bus): another GUI test ending at the same
   * time made GTK log a critical. No test reads it. */
  g_setenv ("GTK_A11Y", "none", TRUE);
  /* WebKit's sandbox cannot start inside a container run as root. */
  g_setenv ("WEBKIT_DISABLE_SANDBOX_THIS_IS_DANGEROUS", "1", FALSE);
  model = g_build_filename (source_root (), "tests", "fixtures", "model", "tiny.safetensors", NULL);
  if (g_getenv ("FORMULATE_MODEL") == NULL)
    g_setenv ("FORMULATE_MODEL", model, TRUE);

  g_test_init (argc, argv, NULL);
  /* GL as the program leaves it (app/window/main.c): off under the cairo
   * renderer the tests use, so the launch measured is the one a user gets;
   * and, as there, GDK_DEBUG stays set (an unsetenv() after gtk_init races
   * the threads GTK started). */
  fm_avoid_software_gl ();
  if (strict_logs)
    {
      g_test_log_set_fatal_handler (fatal_log_filter, NULL);
      /* Without a session bus GTK warns through structured logging, which the
       * filter above cannot see: then only criticals stay fatal. */
      if (g_getenv ("DBUS_SESSION_BUS_ADDRESS") == NULL)
        g_log_set_always_fatal (G_LOG_LEVEL_CRITICAL | G_LOG_FATAL_MASK);
    }
  if (!gtk_init_check ())
    {
      g_printerr ("SKIP: no display (install xvfb and run under xvfb-run)\n");
      return FALSE;
    }
  return TRUE;
}

void
gui_test_start_app (void)
{
  app = fm_application_new ();
  g_application_set_flags (G_APPLICATION (app), G_APPLICATION_HANDLES_OPEN | G_APPLICATION_NON_UNIQUE);
  g_assert_true (g_application_register (G_APPLICATION (app), NULL, NULL));
  g_settings_set_boolean (fm_application_get_settings (app), "show-preview", FALSE);
}

void
gui_test_show_window (void)
{
  window = fm_window_new (app);
  gtk_window_set_default_size (GTK_WINDOW (window), 1280, 860);
  gtk_window_present (GTK_WINDOW (window));
}

int
gui_test_finish (int result)
{
  while (fm_window_get_n_tabs (window) > 0)
    close_tab_discarding ();
  spin (1.0);
  gtk_window_destroy (GTK_WINDOW (window));
  spin (0.1);
  g_application_quit (G_APPLICATION (app));
  g_clear_object (&app);
  return result;
}

char *
sample_path (void)
{
  return g_build_filename (source_root (), "data", "samples", "sample.pdf", NULL);
}

gboolean
save_screenshot (const char *name)
{
  /* The shared helper waits out a pending layout (after the last tab closes
   * the window has no picture until the next frame). */
  return save_widget_screenshot (GTK_WIDGET (window), tmp_dir, name);
}

const char *
source_root (void)
{
  const char *root = g_getenv ("FE_SOURCE_ROOT");
  return root ? root : FM_SOURCE_DATADIR "/..";
}

GtkWidget *
find_widget (GtkWidget *root, WidgetMatch match, gconstpointer data)
{
  if (match (root, data))
    return root;
  for (GtkWidget *child = gtk_widget_get_first_child (root); child != NULL;
       child = gtk_widget_get_next_sibling (child))
    {
      GtkWidget *found = find_widget (child, match, data);
      if (found != NULL)
        return found;
    }
  return NULL;
}

gboolean
wait_for (gboolean (*done) (gpointer), gpointer data, double timeout_s)
{
  gint64 end = g_get_monotonic_time () + (gint64) (timeout_s * G_USEC_PER_SEC);

  while (!done (data))
    {
      if (g_get_monotonic_time () > end)
        return FALSE;
      g_main_context_iteration (NULL, FALSE);
      g_usleep (1000);
    }
  return TRUE;
}

void
spin (double seconds)
{
  gint64 end = g_get_monotonic_time () + (gint64) (seconds * G_USEC_PER_SEC);
  while (g_get_monotonic_time () < end)
    {
      g_main_context_iteration (NULL, FALSE);
      g_usleep (1000);
    }
}

FmDocumentTab *
current_tab (void)
{
  return fm_window_get_current_tab (window);
}

gboolean
save_widget_screenshot (GtkWidget *widget, const char *dir, const char *name)
{
  g_autoptr(GdkPaintable) paintable = gtk_widget_paintable_new (widget);
  GtkSnapshot *snapshot = gtk_snapshot_new ();
  int w = gtk_widget_get_width (widget), h = gtk_widget_get_height (widget);
  g_autoptr(GskRenderNode) node = NULL;
  g_autoptr(GdkTexture) texture = NULL;
  g_autofree char *path = NULL;
  const char *env_dir = g_getenv ("FM_SCREENSHOT_DIR");

  gdk_paintable_snapshot (paintable, snapshot, w, h);
  node = gtk_snapshot_free_to_node (snapshot);
  /* A widget waiting for its layout paints nothing: let a frame or two pass. */
  for (int tries = 0; node == NULL && tries < 50; tries++)
    {
      spin (0.1);
      snapshot = gtk_snapshot_new ();
      gdk_paintable_snapshot (paintable, snapshot, w, h);
      node = gtk_snapshot_free_to_node (snapshot);
    }
  if (node == NULL || gtk_widget_get_native (widget) == NULL)
    {
      g_printerr ("# screenshot %s: no picture (%d x %d, mapped %d)\n", name, w, h, gtk_widget_get_mapped (widget));
      return FALSE;
    }
  texture = gsk_renderer_render_texture (gtk_native_get_renderer (gtk_widget_get_native (widget)), node,
                                         &GRAPHENE_RECT_INIT (0, 0, w, h));
  path = g_build_filename (env_dir ? env_dir : dir, name, NULL);
  g_printerr ("# screenshot %s (%d x %d)\n", path, w, h);
  if (!gdk_texture_save_to_png (texture, path))
    {
      g_printerr ("# screenshot %s: not saved\n", path);
      return FALSE;
    }
  return TRUE;
}

AdwMessageDialog *
find_message_dialog (const char *name)
{
  GListModel *toplevels = gtk_window_get_toplevels ();
  guint n = g_list_model_get_n_items (toplevels);

  for (guint i = 0; i < n; i++)
    {
      g_autoptr(GtkWidget) w = g_list_model_get_item (toplevels, i);
      if (ADW_IS_MESSAGE_DIALOG (w) && gtk_widget_get_visible (w) &&
          g_strcmp0 (gtk_widget_get_name (w), name) == 0)
        return ADW_MESSAGE_DIALOG (w);
    }
  return NULL;
}

AdwMessageDialog *
find_close_dialog (void)
{
  return find_message_dialog ("close-dialog");
}

void
answer_dialog (AdwMessageDialog *dialog, const char *response)
{
  g_object_ref (dialog);
  adw_message_dialog_response (dialog, response);
  gtk_window_destroy (GTK_WINDOW (dialog));
  g_object_unref (dialog);
}

void
close_tab_discarding (void)
{
  AdwMessageDialog *dialog;

  gtk_widget_activate_action (GTK_WIDGET (window), "win.close-tab", NULL);
  /* The window asks at once, from the close request itself. */
  if ((dialog = find_close_dialog ()) != NULL)
    answer_dialog (dialog, "discard");
}

gboolean
no_tabs (gpointer data)
{
  return fm_window_get_n_tabs (window) == 0;
}

gboolean
no_toasts_shown (gpointer data)
{
  return fm_window_get_n_toasts_shown (window) == 0;
}

gboolean
tab_loaded (gpointer data)
{
  FmDocumentTab *tab = current_tab ();
  return tab != NULL && fm_document_tab_get_document (tab) != NULL;
}

gboolean
page_painted (gpointer data)
{
  FmDocumentTab *tab = current_tab ();
  return tab != NULL && fm_page_view_get_n_painted (fm_document_tab_get_page_view (tab)) > 0;
}

gboolean
detection_done (gpointer data)
{
  FmDocumentTab *tab = current_tab ();
  return tab != NULL && fm_document_tab_get_document (tab) != NULL && !fm_document_tab_get_detecting (tab);
}

gboolean
engine_settled (gpointer data)
{
  FmEngineWorker *worker = fm_application_get_worker (app);
  FmEngineState state = fm_engine_worker_get_state (worker);
  /* NO_MODEL counts only with an error: before that the engine has not started. */
  return state == FM_ENGINE_STATE_READY ||
         (state == FM_ENGINE_STATE_NO_MODEL && fm_engine_worker_get_load_error (worker) != NULL);
}

gboolean
all_recognized (gpointer data)
{
  GListModel *items = fm_document_tab_get_items (current_tab ());
  guint n = g_list_model_get_n_items (items);

  for (guint i = 0; i < n; i++)
    {
      g_autoptr(FmResultsItem) item = g_list_model_get_item (items, i);
      FmResultState state = fm_results_item_get_state (item);
      /* Equation numbers are never recognised. */
      if (!fm_results_item_is_formula (item))
        continue;
      if (state != FM_RESULT_STATE_DONE && state != FM_RESULT_STATE_FAILED)
        return FALSE;
    }
  return n > 0 && engine_settled (NULL);
}
