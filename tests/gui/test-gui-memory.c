/* test-gui-memory.c - closing a document gives its memory back (issue 16).
 *
 * Opens a 16-page PDF (8 copies of data/samples/sample.pdf joined with qpdf,
 * or the sample alone without qpdf) in the real window 20 times and closes it
 * each time: half the cycles once detection and the tiny model's recognition
 * ran through, half while they are still running (the cancel paths). After
 * every close the tab, its FmDocument and a results item must be finalised (nothing keeps a
 * reference: page textures, thumbnails, the results list, engine jobs), and
 * the process's RSS, after malloc_trim(), must stay within a bound of what it
 * was after the first two cycles.
 */
#include <glib/gstdio.h>
#include <malloc.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

#include "fm-application.h"
#include "fm-window.h"
#include "gui-test-util.h"

#define CYCLES 20
/* Allowed growth from cycle 2 to cycle 20. Before the fixes in this test's
 * commits a 40-page PDF grew RSS by 97 MB over 20 cycles (the results list
 * kept every item and crop alive; glibc's arenas kept page renders); after
 * them a 16-page one grew 8.9 MB from cycle 2 to 20 (load average ~15). */
#define RSS_GROWTH_BOUND_MB 25.0

static double
rss_mb (void)
{
  g_autofree char *status = NULL;
  const char *line;

  if (!g_file_get_contents ("/proc/self/status", &status, NULL, NULL) ||
      (line = strstr (status, "VmRSS:")) == NULL)
    return -1;
  return g_ascii_strtod (line + 6, NULL) / 1024.0;
}

static gboolean
finalized (gpointer data)
{
  gpointer *weak = data;
  return weak[0] == NULL && weak[1] == NULL && weak[2] == NULL;
}

/* A longer document than the 2-page sample, so a retained one shows in RSS. */
static char *
make_long_pdf (void)
{
  g_autofree char *sample = g_build_filename (source_root (), "data", "samples", "sample.pdf", NULL);
  g_autofree char *qpdf = g_find_program_in_path ("qpdf");
  g_autoptr(GPtrArray) argv = g_ptr_array_new ();
  char *out = g_build_filename (tmp_dir, "long.pdf", NULL);
  g_autoptr(GError) error = NULL;
  int status = 0;

  if (qpdf == NULL)
    {
      g_test_message ("qpdf not installed: cycling the 2-page sample");
      g_free (out);
      return g_steal_pointer (&sample);
    }
  g_ptr_array_add (argv, qpdf);
  g_ptr_array_add (argv, (gpointer) "--empty");
  g_ptr_array_add (argv, (gpointer) "--pages");
  for (int i = 0; i < 8; i++)
    g_ptr_array_add (argv, sample);
  g_ptr_array_add (argv, (gpointer) "--");
  g_ptr_array_add (argv, out);
  g_ptr_array_add (argv, NULL);
  g_assert_true (g_spawn_sync (NULL, (char **) argv->pdata, NULL, G_SPAWN_DEFAULT, NULL, NULL,
                               NULL, NULL, &status, &error));
  g_assert_no_error (error);
  g_assert_true (g_spawn_check_wait_status (status, NULL));
  return out;
}

static void
test_open_close (void)
{
  g_autofree char *path = make_long_pdf ();
  g_autoptr(GFile) file = g_file_new_for_path (path);
  double rss[CYCLES];
  /* FM_TEST_CYCLES shortens the run for heaptrack or valgrind. */
  int cycles = CLAMP (g_getenv ("FM_TEST_CYCLES") ? atoi (g_getenv ("FM_TEST_CYCLES")) : CYCLES, 3, CYCLES);

  for (int i = 0; i < cycles; i++)
    {
      gpointer weak[3];
      FmDocumentTab *tab;

      fm_window_open_files (window, &file, 1);
      g_assert_true (wait_for (tab_loaded, NULL, 30));
      g_assert_true (wait_for (page_painted, NULL, 30));
      tab = current_tab ();
      if (i % 2 == 0)
        {
          g_assert_true (wait_for (detection_done, NULL, 120));
          g_assert_true (wait_for (engine_settled, NULL, 120));
        }
      else
        spin (0.3);   /* detection and recognition still running */
      weak[0] = tab;
      weak[1] = fm_document_tab_get_document (tab);
      g_object_add_weak_pointer (G_OBJECT (weak[0]), &weak[0]);
      g_object_add_weak_pointer (G_OBJECT (weak[1]), &weak[1]);
      /* A results item holds its crop texture: the biggest part of a tab. */
      weak[2] = g_list_model_get_n_items (fm_document_tab_get_items (tab)) > 0
                  ? g_list_model_get_item (fm_document_tab_get_items (tab), 0) : NULL;
      if (weak[2] != NULL)
        {
          g_object_add_weak_pointer (G_OBJECT (weak[2]), &weak[2]);
          g_object_unref (weak[2]);
        }

      close_tab_discarding ();
      g_assert_true (wait_for (no_tabs, NULL, 10));
      /* The running batch finishes (or aborts) and drops its references. */
      if (!wait_for (finalized, weak, 30))
        g_error ("cycle %d: the closed %s was not finalised", i + 1,
                 weak[0] != NULL ? "tab" : weak[1] != NULL ? "document" : "tab's first results item");
      spin (0.2);
      malloc_trim (0);
      rss[i] = rss_mb ();
      g_test_message ("cycle %d: RSS %.1f MB after closing", i + 1, rss[i]);
    }
  g_printerr ("# RSS after closing the document: cycle 2 %.1f MB, cycle %d %.1f MB "
              "(growth %.1f MB, bound %.0f MB)\n",
              rss[1], cycles, rss[cycles - 1], rss[cycles - 1] - rss[1], RSS_GROWTH_BOUND_MB);
  g_assert_cmpfloat (rss[cycles - 1] - rss[1], <=, RSS_GROWTH_BOUND_MB);
}

int
main (int argc, char **argv)
{
  if (!gui_test_init (&argc, &argv, "formulate-gui-memory", FALSE))
    return 77;
  gui_test_start_app ();
  gui_test_show_window ();

  g_test_add_func ("/gui-memory/open-close", test_open_close);
  return gui_test_finish (g_test_run ());
}
