/* test-gui-model-start.c - the model waits for the first page, not for a person (issue 16).
 *
 * The model begins to load only once the first window's document has painted
 * its first page (app/window/fm-application.c), so that its reading and
 * threads do not delay that page. Until then the status line says the model
 * is loading, and Recognise (Ctrl+R) starts the load at once instead of
 * answering "No model loaded". Its own program: the window here is opened
 * unmapped, so the first page is never painted until the test shows it, a
 * state the other programs (their window shown first) never have. */
#include <string.h>

#include "gui-test-util.h"

#include "fm-application.h"
#include "fm-window.h"

static void
test_recognise_before_first_page (void)
{
  g_autofree char *path = sample_path ();
  g_autoptr(GFile) file = g_file_new_for_path (path);
  const char *toast;

  window = fm_window_new (app);
  gtk_window_set_default_size (GTK_WINDOW (window), 1280, 860);
  /* Opened and analysed while the window is not on screen: nothing painted. */
  fm_window_open_files (window, &file, 1);
  g_assert_true (wait_for (tab_loaded, NULL, 30));
  g_assert_true (wait_for (detection_done, NULL, 120));
  g_assert_false (fm_application_get_engine_started (app));
  g_assert_cmpstr (fm_window_get_status_text (window), ==, "Loading the model…");

  gtk_widget_activate_action (GTK_WIDGET (window), "win.recognize", NULL);
  g_assert_true (fm_application_get_engine_started (app));
  toast = fm_window_get_last_toast (window);
  g_assert_true (toast == NULL || strstr (toast, "model") == NULL);
  gtk_window_present (GTK_WINDOW (window));
  g_assert_true (wait_for (all_recognized, NULL, 120));
  g_assert_true (wait_for (page_painted, NULL, 30));
}

int
main (int argc, char **argv)
{
  if (!gui_test_init (&argc, &argv, "formulate-gui-model-start", FALSE))
    return 77;
  gui_test_start_app ();
  g_test_add_func ("/gui-model-start/recognise-before-first-page", test_recognise_before_first_page);
  return gui_test_finish (g_test_run ());
}
