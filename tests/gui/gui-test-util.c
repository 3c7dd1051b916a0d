/* gui-test-util.c - helpers shared by the GUI tests; see gui-test-util.h. */
#include "gui-test-util.h"

FmApplication *app;
FmWindow *window;

const char *
source_root (void)
{
  const char *root = g_getenv ("FE_SOURCE_ROOT");
  return root ? root : FM_SOURCE_DATADIR "/..";
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
