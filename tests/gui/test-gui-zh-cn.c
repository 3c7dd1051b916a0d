/* test-gui-zh-cn.c - the real Formulate window in Simplified Chinese, under Xvfb.
 *
 * Runs with LANGUAGE=zh_CN in the C.UTF-8 locale (built into glibc, so no
 * locale has to be generated) and the catalogues compiled from po/ into the
 * build tree, opens data/samples/sample.pdf, recognises it with the tiny test
 * model and checks that the header bar, the results panel, the results rows
 * and the status line show the zh_CN translations, not the English msgids.
 * Saves window-zh_CN.png (to $FM_SCREENSHOT_DIR when set) so the CJK glyphs
 * can be looked at: a missing CJK font still passes the string checks, the
 * picture is what shows it.
 */
#include <glib/gi18n.h>
#include <glib/gstdio.h>
#include <locale.h>
#include <string.h>

#include "fm-application.h"
#include "fm-window.h"
#include "gui-test-util.h"

/* At least one character from the CJK Unified Ideographs block: proof that a
 * string is Chinese and not an untranslated English msgid. */
static gboolean
has_han (const char *text)
{
  for (const char *p = text; p != NULL && *p; p = g_utf8_next_char (p))
    {
      gunichar c = g_utf8_get_char (p);
      if (c >= 0x4E00 && c <= 0x9FFF)
        return TRUE;
    }
  return FALSE;
}

/* Every visible text of the widget tree: labels, button labels, tooltips. */
static void
collect_texts (GtkWidget *widget, GPtrArray *texts)
{
  const char *tooltip = gtk_widget_get_tooltip_text (widget);

  if (!gtk_widget_get_visible (widget))
    return;
  if (GTK_IS_LABEL (widget))
    g_ptr_array_add (texts, g_strdup (gtk_label_get_label (GTK_LABEL (widget))));
  if (GTK_IS_BUTTON (widget) && gtk_button_get_label (GTK_BUTTON (widget)) != NULL)
    g_ptr_array_add (texts, g_strdup (gtk_button_get_label (GTK_BUTTON (widget))));
  if (tooltip != NULL)
    g_ptr_array_add (texts, g_strdup (tooltip));
  for (GtkWidget *child = gtk_widget_get_first_child (widget); child != NULL;
       child = gtk_widget_get_next_sibling (child))
    collect_texts (child, texts);
}

static gboolean
texts_contain (GPtrArray *texts, const char *needle, gboolean whole)
{
  for (guint i = 0; i < texts->len; i++)
    {
      const char *text = g_ptr_array_index (texts, i);
      if (whole ? g_strcmp0 (text, needle) == 0 : strstr (text, needle) != NULL)
        return TRUE;
    }
  return FALSE;
}

/* The catalogue itself: without it every later check would only see English. */
static void
test_catalogue (void)
{
  const char *recognise = _("_Recognise");

  g_printerr ("# LANGUAGE=%s, LC_MESSAGES locale %s, catalogue dir %s\n", g_getenv ("LANGUAGE"),
              setlocale (LC_MESSAGES, NULL), bindtextdomain (GETTEXT_PACKAGE, NULL));
  g_assert_cmpstr (recognise, ==, "识别(_R)");
  /* Plural forms come from the same catalogue (zh_CN has one form). */
  g_assert_cmpstr (g_dngettext (GETTEXT_PACKAGE, "%u formula", "%u formulas", 1), ==, "%u 个公式");
  g_assert_cmpstr (g_dngettext (GETTEXT_PACKAGE, "%u formula", "%u formulas", 17), ==, "%u 个公式");
}

static void
test_open_and_recognise (void)
{
  g_autofree char *path = g_build_filename (source_root (), "data", "samples", "sample.pdf", NULL);
  g_autoptr(GFile) file = g_file_new_for_path (path);
  FmEngineWorker *worker = fm_application_get_worker (app);

  fm_window_open_files (window, &file, 1);
  g_assert_true (wait_for (tab_loaded, NULL, 20));
  g_assert_true (wait_for (page_painted, NULL, 20));
  g_assert_true (wait_for (detection_done, NULL, 60));
  g_assert_cmpuint (g_list_model_get_n_items (fm_document_tab_get_items (current_tab ())), >, 0);

  if (!fm_engine_worker_has_engine ())
    {
      g_test_skip ("built without the engine's recognition API");
      return;
    }
  g_assert_true (wait_for (engine_settled, NULL, 60));
  if (fm_engine_worker_get_state (worker) == FM_ENGINE_STATE_NO_MODEL)
    {
      g_test_fail_printf ("the test model did not load: %s", fm_engine_worker_get_load_error (worker));
      return;
    }
  /* recognise-on-open may already be running; asking again queues what is left. */
  g_assert_true (gtk_widget_activate_action (GTK_WIDGET (window), "win.recognize", NULL));
  g_assert_true (wait_for (all_recognized, NULL, 120));
}

static void
test_widgets_in_chinese (void)
{
  g_autoptr(GPtrArray) texts = g_ptr_array_new_with_free_func (g_free);
  FmDocumentTab *tab = current_tab ();
  GListModel *items = fm_document_tab_get_items (tab);
  const char *status;
  guint han = 0;

  if (g_list_model_get_n_items (items) > 0)
    {
      g_autoptr(FmResultsItem) item = g_list_model_get_item (items, 0);
      fm_page_view_scroll_to_item (fm_document_tab_get_page_view (tab), item);
      fm_results_panel_select (fm_document_tab_get_results_panel (tab), item);
    }
  spin (0.5);

  collect_texts (GTK_WIDGET (window), texts);
  for (guint i = 0; i < texts->len; i++)
    han += has_han (g_ptr_array_index (texts, i));
  g_printerr ("# %u texts in the widget tree, %u of them with Han characters\n", texts->len, han);

  /* Header bar (fm-window.ui), results panel (fm-results-panel.ui). */
  g_assert_true (texts_contain (texts, "识别(_R)", TRUE));
  g_assert_true (texts_contain (texts, "打开 PDF 文件（Ctrl+O）", TRUE));
  g_assert_true (texts_contain (texts, "全部复制", TRUE));
  g_assert_false (texts_contain (texts, "_Recognise", TRUE));
  g_assert_false (texts_contain (texts, "Copy All", TRUE));
  /* Results rows (fm-results-row.c, printf formats from the catalogue). */
  if (fm_engine_worker_has_engine ())
    {
      g_assert_true (texts_contain (texts, "置信度", FALSE));
      g_assert_false (texts_contain (texts, "confidence", FALSE));
    }
  g_assert_true (texts_contain (texts, "第 1 页 · ", FALSE));
  /* The results count (g_dngettext) in the panel header. */
  g_assert_true (texts_contain (texts, " 个公式", FALSE));

  /* Status line (fm-window.c): the CPU's memory figures. */
  status = fm_window_get_status_text (window);
  g_printerr ("# status: %s\n", status);
  if (fm_engine_worker_get_state (fm_application_get_worker (app)) == FM_ENGINE_STATE_READY)
    g_assert_nonnull (strstr (status, "模型占用"));

  g_assert_true (save_screenshot ("window-zh_CN.png"));
}

int
main (int argc, char **argv)
{
  g_autofree char *mo = NULL;
  const char *locale_dir;

  /* The language under test, whatever the caller's environment says. */
  g_setenv ("LANGUAGE", "zh_CN", TRUE);
  g_setenv ("LANG", "C.UTF-8", TRUE);
  g_setenv ("LC_ALL", "C.UTF-8", TRUE);
  /* Han glyphs in their Simplified Chinese forms when fonts differ. */
  g_setenv ("PANGO_LANGUAGE", "zh-cn", TRUE);
  if (setlocale (LC_ALL, "") == NULL)
    {
      g_printerr ("SKIP: the C library has no C.UTF-8 locale\n");
      return 77;
    }
  /* Catalogues compiled by po/meson.build into the build tree. */
  locale_dir = g_getenv ("FORMULATE_LOCALEDIR");
  if (locale_dir == NULL)
    locale_dir = FM_BUILD_LOCALEDIR;
  bindtextdomain (GETTEXT_PACKAGE, locale_dir);
  bind_textdomain_codeset (GETTEXT_PACKAGE, "UTF-8");
  textdomain (GETTEXT_PACKAGE);
  mo = g_build_filename (locale_dir, "zh_CN", "LC_MESSAGES", GETTEXT_PACKAGE ".mo", NULL);

  if (!g_file_test (mo, G_FILE_TEST_EXISTS))
    {
      /* The build compiles it (the test depends on it): missing means a broken build. */
      g_printerr ("the zh_CN catalogue %s is missing\n", mo);
      return 1;
    }
  if (!gui_test_init (&argc, &argv, "formulate-gui-zh", TRUE))
    return 77;
  gui_test_start_app ();
  gui_test_show_window ();

  g_test_add_func ("/gui-zh-cn/catalogue", test_catalogue);
  g_test_add_func ("/gui-zh-cn/open-and-recognise", test_open_and_recognise);
  g_test_add_func ("/gui-zh-cn/widgets-in-chinese", test_widgets_in_chinese);
  return gui_test_finish (g_test_run ());
}
