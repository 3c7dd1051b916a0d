/* test-gui-daily.c - the window as people use it every day (issue 16), under Xvfb.
 *
 * One application and window, the bundled sample PDF recognised with the tiny
 * test model (random weights: the LaTeX is nonsense, the behaviour is what is
 * tested): undo of a deletion and of an edit (Ctrl+Z, the toast's Undo), the
 * question before closing a tab or the window with results not exported.
 * No timing bounds: every wait is for a state, with a generous timeout.
 */
#include <glib/gstdio.h>
#include <math.h>
#include <stdlib.h>
#include <string.h>

#include <cairo-pdf.h>
#include <json-glib/json-glib.h>

#include "fm-application.h"
#include "fm-early-open.h"
#include "fm-results-row.h"
#include "fm-window.h"
#include "gui-test-util.h"

static gboolean
no_close_dialog (gpointer data)
{
  return find_close_dialog () == NULL;
}

/* Opens the sample (once) and waits until its formulas are recognised. */
static void
open_sample_recognised (void)
{
  g_autofree char *path = sample_path ();
  g_autoptr(GFile) file = g_file_new_for_path (path);

  fm_window_open_files (window, &file, 1);
  g_assert_true (wait_for (tab_loaded, NULL, 30));
  g_assert_true (wait_for (detection_done, NULL, 120));
  gtk_widget_activate_action (GTK_WIDGET (window), "win.recognize", NULL);
  g_assert_true (wait_for (all_recognized, NULL, 120));
}

static FmResultsItem *
nth_formula (FmDocumentTab *tab, guint nth, guint *position)
{
  GListModel *items = fm_document_tab_get_items (tab);
  guint n = g_list_model_get_n_items (items);

  for (guint i = 0; i < n; i++)
    {
      g_autoptr(FmResultsItem) item = g_list_model_get_item (items, i);
      if (fm_results_item_is_formula (item) && nth-- == 0)
        {
          if (position != NULL)
            *position = i;
          return item;   /* the list keeps it */
        }
    }
  return NULL;
}

/* GTK 4.8 has no public way to read a widget action's enabled state: the
 * tab's "can-undo", which enables win.undo, stands in. */
static gboolean
action_enabled (const char *name)
{
  g_assert_cmpstr (name, ==, "undo");
  return fm_document_tab_can_undo (current_tab ());
}

static void
test_undo (void)
{
  FmDocumentTab *tab;
  GListModel *items;
  FmResultsItem *item;
  guint position, n;
  g_autofree char *latex = NULL;
  guint toasts;

  open_sample_recognised ();
  tab = current_tab ();
  items = fm_document_tab_get_items (tab);
  n = g_list_model_get_n_items (items);
  g_assert_false (fm_document_tab_can_undo (tab));
  g_assert_false (action_enabled ("undo"));

  /* Delete the second formula as the Delete key does: a toast with Undo. */
  item = nth_formula (tab, 1, &position);
  g_assert_nonnull (item);
  g_object_ref (item);
  fm_page_view_set_selected (fm_document_tab_get_page_view (tab), item);
  toasts = fm_window_get_n_toasts (window);
  gtk_widget_activate_action (GTK_WIDGET (window), "win.delete-region", NULL);
  g_assert_cmpuint (g_list_model_get_n_items (items), ==, n - 1);
  g_assert_cmpuint (fm_window_get_n_toasts (window), ==, toasts + 1);
  g_assert_cmpstr (fm_window_get_last_toast (window), ==, "Formula deleted");
  g_assert_true (action_enabled ("undo"));

  /* Undo (Ctrl+Z, or the toast's button: both are win.undo) puts it back in place. */
  gtk_widget_activate_action (GTK_WIDGET (window), "win.undo", NULL);
  g_assert_cmpuint (g_list_model_get_n_items (items), ==, n);
  {
    g_autoptr(FmResultsItem) back = g_list_model_get_item (items, position);
    g_assert_true (back == item);
  }
  g_assert_false (action_enabled ("undo"));

  /* An edit, typed in several steps, is one undo step back to the engine's text. */
  latex = g_strdup (fm_results_item_get_latex (item));
  g_assert_nonnull (latex);
  g_assert_false (fm_results_item_get_edited (item));
  fm_results_item_set_latex (item, "x");
  fm_results_item_set_latex (item, "x^");
  fm_results_item_set_latex (item, "x^2");
  g_assert_true (fm_results_item_get_edited (item));
  g_assert_true (action_enabled ("undo"));
  gtk_widget_activate_action (GTK_WIDGET (window), "win.undo", NULL);
  g_assert_cmpstr (fm_results_item_get_latex (item), ==, latex);
  g_assert_false (fm_results_item_get_edited (item));
  /* What is exported follows the undo too. */
  g_assert_cmpstr (fm_results_item_get_region (item)->latex, ==, latex);
  g_assert_false (fm_document_tab_can_undo (tab));

  /* Two edits of two formulas and a deletion undo in reverse order. */
  {
    FmResultsItem *other = nth_formula (tab, 2, NULL);
    g_autofree char *other_latex = g_strdup (fm_results_item_get_latex (other));

    /* Texts no formula of the sample reads as (its third formula is "b"
     * itself, and setting a formula to its own text is no edit). */
    g_assert_cmpstr (other_latex, !=, "b^{edited}");
    fm_results_item_set_latex (item, "a^{edited}");
    fm_results_item_set_latex (other, "b^{edited}");
    fm_page_view_set_selected (fm_document_tab_get_page_view (tab), item);
    gtk_widget_activate_action (GTK_WIDGET (window), "win.delete-region", NULL);
    g_assert_cmpuint (g_list_model_get_n_items (items), ==, n - 1);
    g_assert_true (fm_document_tab_undo (tab));
    g_assert_cmpuint (g_list_model_get_n_items (items), ==, n);
    g_assert_cmpstr (fm_results_item_get_latex (other), ==, "b^{edited}");
    g_assert_true (fm_document_tab_undo (tab));
    g_assert_cmpstr (fm_results_item_get_latex (other), ==, other_latex);
    g_assert_cmpstr (fm_results_item_get_latex (item), ==, "a^{edited}");
    g_assert_true (fm_document_tab_undo (tab));
    g_assert_cmpstr (fm_results_item_get_latex (item), ==, latex);
    g_assert_false (fm_document_tab_undo (tab));
  }
  g_object_unref (item);
}

/* Closing a tab or the window with results not exported asks first. */
static void
test_close_confirmation (void)
{
  FmDocumentTab *tab = current_tab ();
  g_autofree char *out = g_build_filename (tmp_dir, "sample.json", NULL);
  g_autoptr(GFile) out_file = g_file_new_for_path (out);
  g_autoptr(GError) error = NULL;
  AdwMessageDialog *dialog;

  g_assert_nonnull (tab);
  g_assert_true (fm_document_tab_has_unsaved (tab));

  /* Ctrl+W: the question; Cancel keeps the tab. */
  gtk_widget_activate_action (GTK_WIDGET (window), "win.close-tab", NULL);
  dialog = find_close_dialog ();
  g_assert_nonnull (dialog);
  g_assert_true (adw_message_dialog_has_response (dialog, "discard"));
  g_assert_true (adw_message_dialog_has_response (dialog, "export"));
  g_assert_true (adw_message_dialog_has_response (dialog, "cancel"));
  spin (0.5);
  g_assert_true (save_widget_screenshot (GTK_WIDGET (dialog), tmp_dir, "dialog-close.png"));
  answer_dialog (dialog, "cancel");
  g_assert_true (wait_for (no_close_dialog, NULL, 5));
  g_assert_cmpuint (fm_window_get_n_tabs (window), ==, 1);

  /* The window's close request asks too, for every document; Cancel keeps it. */
  gtk_window_close (GTK_WINDOW (window));
  dialog = find_close_dialog ();
  g_assert_nonnull (dialog);
  g_assert_true (gtk_widget_get_visible (GTK_WIDGET (window)));
  answer_dialog (dialog, "cancel");
  g_assert_true (wait_for (no_close_dialog, NULL, 5));
  g_assert_true (gtk_widget_get_visible (GTK_WIDGET (window)));

  /* Quit (Ctrl+Q, app.quit) asks the same question; Cancel keeps the
   * application, its window and the tab. */
  g_action_group_activate_action (G_ACTION_GROUP (gtk_window_get_application (GTK_WINDOW (window))),
                                  "quit", NULL);
  dialog = find_close_dialog ();
  g_assert_nonnull (dialog);
  answer_dialog (dialog, "cancel");
  g_assert_true (wait_for (no_close_dialog, NULL, 5));
  g_assert_true (gtk_widget_get_visible (GTK_WIDGET (window)));
  g_assert_cmpuint (fm_window_get_n_tabs (window), ==, 1);

  /* Exported: nothing to lose, so no question. */
  g_assert_true (fm_window_export_to_file (window, out_file, "json", &error));
  g_assert_no_error (error);
  g_assert_false (fm_document_tab_has_unsaved (tab));
  /* An edit after the export is something to lose again. */
  {
    FmResultsItem *item = nth_formula (tab, 0, NULL);
    fm_results_item_set_latex (item, "y");
    g_assert_true (fm_document_tab_has_unsaved (tab));
    g_assert_true (fm_document_tab_undo (tab));
  }
  g_assert_true (fm_window_export_to_file (window, out_file, "json", &error));
  gtk_widget_activate_action (GTK_WIDGET (window), "win.close-tab", NULL);
  g_assert_null (find_close_dialog ());
  g_assert_true (wait_for (no_tabs, NULL, 5));

  /* Discard closes it. */
  open_sample_recognised ();
  gtk_widget_activate_action (GTK_WIDGET (window), "win.close-tab", NULL);
  dialog = find_close_dialog ();
  g_assert_nonnull (dialog);
  answer_dialog (dialog, "discard");
  g_assert_true (wait_for (no_tabs, NULL, 5));
}

static int follow_page;

static gboolean
list_followed (gpointer data)
{
  FmResultsPanel *panel = fm_document_tab_get_results_panel (current_tab ());
  return fm_results_panel_get_current_page (panel) == follow_page;
}

static guint
count_formulas (GListModel *items, int page, FmRegionKind kind, gboolean tiny_too)
{
  guint n = g_list_model_get_n_items (items), count = 0;

  for (guint i = 0; i < n; i++)
    {
      g_autoptr(FmResultsItem) item = g_list_model_get_item (items, i);
      if (fm_results_item_is_formula (item) && (page < 0 || fm_results_item_get_page (item) == page) &&
          ((int) kind < 0 || fm_results_item_get_kind (item) == kind) &&
          (tiny_too || !fm_results_panel_item_is_tiny (item)))
        count++;
    }
  return count;
}

/* The list follows the page scrolled to in the document; "this page only";
 * the filters. */
static void
test_results_follow_page (void)
{
  FmDocumentTab *tab;
  FmResultsPanel *panel;
  FmPageView *view;
  GtkAdjustment *list_adj, *page_adj;
  GListModel *items;
  graphene_rect_t area;
  guint all;

  open_sample_recognised ();
  tab = current_tab ();
  panel = fm_document_tab_get_results_panel (tab);
  view = fm_document_tab_get_page_view (tab);
  items = fm_document_tab_get_items (tab);
  list_adj = fm_results_panel_get_vadjustment (panel);
  page_adj = gtk_scrollable_get_vadjustment (GTK_SCROLLABLE (view));
  all = count_formulas (items, -1, -1, TRUE);
  g_assert_cmpuint (fm_results_panel_get_n_shown (panel), ==, all);
  g_assert_cmpuint (count_formulas (items, 1, -1, TRUE), >, 0);
  spin (0.5);
  g_assert_cmpfloat (gtk_adjustment_get_value (list_adj), ==, 0);
  /* The sample's list is taller than the panel, or following shows nothing. */
  g_assert_cmpfloat (gtk_adjustment_get_upper (list_adj), >, gtk_adjustment_get_page_size (list_adj) + 100);

  /* Scroll the document (not the list) to page 2: the list scrolls to its formulas. */
  g_assert_true (fm_page_view_get_page_area (view, 1, &area));
  gtk_adjustment_set_value (page_adj, gtk_adjustment_get_value (page_adj) + area.origin.y);
  follow_page = 1;
  g_assert_true (wait_for (list_followed, NULL, 10));
  spin (0.5);
  g_test_message ("list scrolled to %.0f of %.0f", gtk_adjustment_get_value (list_adj), gtk_adjustment_get_upper (list_adj));
  g_assert_cmpfloat (gtk_adjustment_get_value (list_adj), >, 0);
  g_assert_true (save_widget_screenshot (GTK_WIDGET (window), tmp_dir, "window-follow-page.png"));
  /* And back to page 1. */
  gtk_adjustment_set_value (page_adj, 0);
  follow_page = 0;
  g_assert_true (wait_for (list_followed, NULL, 10));
  spin (0.5);
  g_assert_cmpfloat (gtk_adjustment_get_value (list_adj), ==, 0);

  /* This page only: page 1's formulas, then page 2's when the document moves on. */
  fm_results_panel_set_filter (panel, FM_RESULTS_FILTER_PAGE, TRUE);
  g_assert_cmpuint (fm_results_panel_get_n_shown (panel), ==, count_formulas (items, 0, -1, TRUE));
  fm_page_view_go_to_page (view, 1);
  g_assert_cmpuint (fm_results_panel_get_n_shown (panel), ==, count_formulas (items, 1, -1, TRUE));
  fm_results_panel_set_filter (panel, FM_RESULTS_FILTER_PAGE, FALSE);
  g_assert_cmpuint (fm_results_panel_get_n_shown (panel), ==, all);

  /* Displays only. */
  fm_results_panel_set_filter (panel, FM_RESULTS_FILTER_DISPLAYS, TRUE);
  g_assert_cmpuint (fm_results_panel_get_n_shown (panel), ==, count_formulas (items, -1, FM_REGION_DISPLAY, TRUE));
  g_assert_cmpuint (fm_results_panel_get_n_shown (panel), <, all);
  fm_results_panel_set_filter (panel, FM_RESULTS_FILTER_DISPLAYS, FALSE);

  /* No one- or two-glyph regions: the sample has inline ones like that. */
  fm_results_panel_set_filter (panel, FM_RESULTS_FILTER_NO_TINY, TRUE);
  g_assert_cmpuint (fm_results_panel_get_n_shown (panel), ==, count_formulas (items, -1, -1, FALSE));
  g_assert_cmpuint (fm_results_panel_get_n_shown (panel), <, all);
  fm_results_panel_set_filter (panel, FM_RESULTS_FILTER_NO_TINY, FALSE);

  /* To check only: everything the tiny model read is low confidence or none is. */
  {
    double threshold = g_settings_get_double (fm_application_get_settings (app), "low-confidence-threshold");
    guint n = g_list_model_get_n_items (items), to_check = 0;
    for (guint i = 0; i < n; i++)
      {
        g_autoptr(FmResultsItem) item = g_list_model_get_item (items, i);
        to_check += fm_results_item_is_formula (item) &&
                    (fm_results_item_is_low_confidence (item, threshold) ||
                     fm_results_item_get_state (item) == FM_RESULT_STATE_FAILED);
      }
    fm_results_panel_set_filter (panel, FM_RESULTS_FILTER_TO_CHECK, TRUE);
    g_assert_cmpuint (fm_results_panel_get_n_shown (panel), ==, to_check);
    fm_results_panel_set_filter (panel, FM_RESULTS_FILTER_TO_CHECK, FALSE);
  }
  g_assert_cmpuint (fm_results_panel_get_n_shown (panel), ==, all);
}

/* A 3-page A4 PDF made here with cairo: "needle" on page 1 (baseline at
 * 100 pt) and on page 3 (baseline at 500 pt), and an outline of two chapters
 * and a section (pages 1, 3, 2). */
static char *
make_text_pdf (void)
{
  char *path = g_build_filename (tmp_dir, "text.pdf", NULL);
  cairo_surface_t *surface = cairo_pdf_surface_create (path, 595, 842);
  cairo_t *cr = cairo_create (surface);
  int chapter;

  cairo_select_font_face (cr, "DejaVu Sans", CAIRO_FONT_SLANT_NORMAL, CAIRO_FONT_WEIGHT_NORMAL);
  cairo_set_font_size (cr, 14);
  for (int page = 0; page < 3; page++)
    {
      cairo_move_to (cr, 72, 100);
      cairo_show_text (cr, page == 0 ? "A needle in the first page." : "Plain text without it.");
      cairo_move_to (cr, 72, 500);
      cairo_show_text (cr, page == 2 ? "The last NEEDLE is here." : "More plain text.");
      cairo_show_page (cr);
    }
  chapter = cairo_pdf_surface_add_outline (surface, CAIRO_PDF_OUTLINE_ROOT, "First chapter", "page=1", 0);
  cairo_pdf_surface_add_outline (surface, chapter, "A section", "page=2", 0);
  cairo_pdf_surface_add_outline (surface, CAIRO_PDF_OUTLINE_ROOT, "Second chapter", "page=3", 0);
  cairo_destroy (cr);
  cairo_surface_finish (surface);
  g_assert_cmpint (cairo_surface_status (surface), ==, CAIRO_STATUS_SUCCESS);
  cairo_surface_destroy (surface);
  return path;
}

static gboolean
find_done (gpointer data)
{
  return !fm_document_tab_get_finding (current_tab ()) && fm_document_tab_get_hits (current_tab (), NULL) != NULL;
}

static gboolean
page_is (gpointer data)
{
  return fm_page_view_get_current_page (fm_document_tab_get_page_view (current_tab ())) == GPOINTER_TO_INT (data);
}

/* Ctrl+F, the hits marked, Enter and Shift+Enter. */
static gboolean
search_bar_closed (gpointer entry)
{
  return !gtk_widget_get_mapped (entry);
}

static void
test_find (void)
{
  g_autofree char *path = make_text_pdf ();
  g_autoptr(GFile) file = g_file_new_for_path (path);
  FmDocumentTab *tab;
  GtkWidget *entry;
  const GArray *hits;
  int current = -1;

  while (fm_window_get_n_tabs (window) > 0)
    close_tab_discarding ();
  fm_window_open_files (window, &file, 1);
  g_assert_true (wait_for (tab_loaded, NULL, 30));
  g_assert_true (wait_for (page_painted, NULL, 30));
  tab = current_tab ();

  /* Ctrl+F shows the search bar with the focus in its entry. */
  gtk_widget_activate_action (GTK_WIDGET (window), "win.find", NULL);
  entry = fm_document_tab_get_search_entry (tab);
  g_assert_true (gtk_widget_get_mapped (entry) || wait_for ((gboolean (*) (gpointer)) gtk_widget_get_mapped, entry, 5));
  g_assert_true (gtk_widget_has_focus (entry) || gtk_widget_is_ancestor (gtk_root_get_focus (GTK_ROOT (window)), entry));

  /* Typing searches (any case), off the main thread. */
  gtk_editable_set_text (GTK_EDITABLE (entry), "needle");
  g_assert_true (wait_for (find_done, NULL, 20));
  hits = fm_document_tab_get_hits (tab, &current);
  g_assert_cmpuint (hits->len, ==, 2);
  g_assert_cmpint (current, ==, 0);
  {
    const FmPageHit *first = &g_array_index (hits, FmPageHit, 0);
    const FmPageHit *second = &g_array_index (hits, FmPageHit, 1);
    g_test_message ("hit 1: page %d, %.1f %.1f %.1f x %.1f", first->page + 1, first->rect.origin.x,
                    first->rect.origin.y, first->rect.size.width, first->rect.size.height);
    g_assert_cmpint (first->page, ==, 0);
    g_assert_cmpint (second->page, ==, 2);
    /* Top-left origin: the baseline at 100 pt lies in the word's box, the
     * word starts after "A " at 72 pt. */
    g_assert_cmpfloat (first->rect.origin.y, <, 100);
    g_assert_cmpfloat (first->rect.origin.y + first->rect.size.height, >, 96);
    g_assert_cmpfloat (first->rect.origin.x, >, 72);
    g_assert_cmpfloat (first->rect.origin.x, <, 100);
    g_assert_cmpfloat (second->rect.origin.y, <, 500);
    g_assert_cmpfloat (second->rect.origin.y, >, 480);
  }
  spin (0.5);
  fm_window_dismiss_toasts (window);
  g_assert_true (wait_for (no_toasts_shown, NULL, 10));
  spin (0.5);
  g_assert_true (save_widget_screenshot (GTK_WIDGET (window), tmp_dir, "window-find.png"));

  /* Enter: the next match, on page 3, scrolled into view. */
  g_signal_emit_by_name (entry, "activate");
  fm_document_tab_get_hits (tab, &current);
  g_assert_cmpint (current, ==, 1);
  g_assert_true (wait_for (page_is, GINT_TO_POINTER (2), 10));
  /* Shift+Enter (the previous-match binding): back to page 1. */
  g_signal_emit_by_name (entry, "previous-match");
  fm_document_tab_get_hits (tab, &current);
  g_assert_cmpint (current, ==, 0);
  g_assert_true (wait_for (page_is, GINT_TO_POINTER (0), 10));
  /* Wraps around. */
  fm_document_tab_find_next (tab, FALSE);
  fm_document_tab_get_hits (tab, &current);
  g_assert_cmpint (current, ==, 1);

  /* Nothing found says so; an empty entry clears the marks. */
  gtk_editable_set_text (GTK_EDITABLE (entry), "zebra");
  g_assert_true (wait_for (find_done, NULL, 20));
  g_assert_cmpuint (fm_document_tab_get_hits (tab, NULL)->len, ==, 0);
  gtk_editable_set_text (GTK_EDITABLE (entry), "");
  spin (0.5);
  g_assert_null (fm_document_tab_get_hits (tab, NULL));

  /* Esc (the entry's stop-search) closes the bar. */
  g_signal_emit_by_name (entry, "stop-search");
  g_assert_true (wait_for (search_bar_closed, entry, 5));
}

static gboolean
outline_loaded (gpointer data)
{
  return fm_document_tab_get_n_outline (current_tab ()) > 0;
}

/* The PDF's outline in the sidebar; a click goes to its page. */
static void
test_outline (void)
{
  FmDocumentTab *tab = current_tab ();
  GtkListBox *list;
  GtkListBoxRow *row;

  g_assert_nonnull (tab);
  g_assert_true (wait_for (outline_loaded, NULL, 20));
  g_assert_cmpuint (fm_document_tab_get_n_outline (tab), ==, 3);
  list = fm_document_tab_get_outline_list (tab);
  g_assert_true (g_settings_get_boolean (fm_application_get_settings (app), "show-thumbnails") ||
                 gtk_widget_activate_action (GTK_WIDGET (window), "win.show-thumbnails", NULL));
  if (!g_settings_get_boolean (fm_application_get_settings (app), "show-thumbnails"))
    gtk_widget_activate_action (GTK_WIDGET (window), "win.show-thumbnails", NULL);
  fm_document_tab_show_outline (tab);
  spin (0.8);
  g_assert_true (gtk_widget_get_mapped (GTK_WIDGET (list)));
  fm_window_dismiss_toasts (window);
  g_assert_true (wait_for (no_toasts_shown, NULL, 10));
  spin (0.5);
  g_assert_true (save_widget_screenshot (GTK_WIDGET (window), tmp_dir, "window-outline.png"));

  /* "Second chapter" goes to page 3, "A section" (nested) to page 2. */
  row = gtk_list_box_get_row_at_index (list, 2);
  g_signal_emit_by_name (list, "row-activated", row);
  g_assert_true (wait_for (page_is, GINT_TO_POINTER (2), 10));
  row = gtk_list_box_get_row_at_index (list, 1);
  g_signal_emit_by_name (list, "row-activated", row);
  g_assert_true (wait_for (page_is, GINT_TO_POINTER (1), 10));
  gtk_widget_activate_action (GTK_WIDGET (window), "win.show-thumbnails", NULL);

  /* The sample has no outline: its sidebar has no outline page. */
  {
    g_autofree char *path = sample_path ();
    g_autoptr(GFile) file = g_file_new_for_path (path);
    fm_window_open_files (window, &file, 1);
    g_assert_true (wait_for (tab_loaded, NULL, 30));
    spin (0.5);
    g_assert_cmpuint (fm_document_tab_get_n_outline (current_tab ()), ==, 0);
    close_tab_discarding ();
  }
}

static void
reopen (GFile *file)
{
  close_tab_discarding ();
  g_assert_true (wait_for (no_tabs, NULL, 5));
  fm_window_open_files (window, &file, 1);
  g_assert_true (wait_for (tab_loaded, NULL, 30));
  g_assert_true (wait_for (page_painted, NULL, 30));
}

static gboolean
is_zoom_button (GtkWidget *widget, gconstpointer label)
{
  return GTK_IS_MENU_BUTTON (widget) &&
         g_strcmp0 (gtk_menu_button_get_label (GTK_MENU_BUTTON (widget)), label) == 0;
}

static gboolean
is_label_with_text (GtkWidget *widget, gconstpointer text)
{
  return GTK_IS_LABEL (widget) && g_strcmp0 (gtk_label_get_text (GTK_LABEL (widget)), text) == 0;
}

/* The zoom level shown, the presets, and each document's page and zoom
 * remembered from one opening to the next. */
static void
test_zoom_and_position (void)
{
  g_autofree char *path = make_text_pdf ();
  g_autoptr(GFile) file = g_file_new_for_path (path);
  g_autofree char *positions = g_build_filename (tmp_dir, "formulate", "positions.ini", NULL);
  FmPageView *view;
  g_autofree char *text = NULL;

  while (fm_window_get_n_tabs (window) > 0)
    close_tab_discarding ();
  fm_window_open_files (window, &file, 1);
  g_assert_true (wait_for (tab_loaded, NULL, 30));
  g_assert_true (wait_for (page_painted, NULL, 30));
  spin (0.3);
  view = fm_document_tab_get_page_view (current_tab ());
  /* Fit width at first; the level is shown. */
  g_assert_true (fm_page_view_get_fit_width (view));
  text = g_strdup_printf ("%.0f %%", 100 * fm_page_view_get_zoom (view));
  g_assert_cmpstr (fm_window_get_zoom_text (window), ==, text);
  /* The level is a menu button whose menu (built when it first opens) has
   * the presets. */
  {
    GtkWidget *button = find_widget (GTK_WIDGET (window), is_zoom_button, text);
    GtkPopover *popover;

    g_assert_nonnull (button);
    g_assert_true (gtk_widget_is_sensitive (button));
    gtk_menu_button_popup (GTK_MENU_BUTTON (button));
    spin (0.3);
    popover = gtk_menu_button_get_popover (GTK_MENU_BUTTON (button));
    g_assert_nonnull (popover);
    g_assert_true (gtk_widget_get_mapped (GTK_WIDGET (popover)));
    g_assert_nonnull (find_widget (GTK_WIDGET (popover), is_label_with_text, "Fit Page"));
    g_assert_nonnull (find_widget (GTK_WIDGET (popover), is_label_with_text, "Actual Size (100 %)"));
    gtk_menu_button_popdown (GTK_MENU_BUTTON (button));
    spin (0.2);
  }

  gtk_widget_activate_action (GTK_WIDGET (window), "win.zoom-100", NULL);
  g_assert_cmpfloat (fm_page_view_get_zoom (view), ==, 1.0);
  g_assert_cmpstr (fm_window_get_zoom_text (window), ==, "100 %");

  /* Fit page: a whole A4 page in the view's height. */
  gtk_widget_activate_action (GTK_WIDGET (window), "win.fit-page", NULL);
  spin (0.3);
  g_assert_true (fm_page_view_get_fit_page (view));
  g_assert_cmpfloat (842 * fm_page_view_get_zoom (view), <=, gtk_widget_get_height (GTK_WIDGET (view)));
  g_assert_cmpfloat (842 * fm_page_view_get_zoom (view), >, gtk_widget_get_height (GTK_WIDGET (view)) - 40);
  fm_window_dismiss_toasts (window);
  g_assert_true (wait_for (no_toasts_shown, NULL, 10));
  spin (0.5);
  g_assert_true (save_widget_screenshot (GTK_WIDGET (window), tmp_dir, "window-fit-page.png"));
  gtk_widget_activate_action (GTK_WIDGET (window), "win.fit-width", NULL);
  g_assert_true (fm_page_view_get_fit_width (view));
  g_assert_false (fm_page_view_get_fit_page (view));

  /* Page 3 at 150 %: remembered when the tab closes, back when it opens. */
  fm_page_view_set_zoom (view, 1.5);
  fm_page_view_go_to_page (view, 2);
  g_assert_true (wait_for (page_is, GINT_TO_POINTER (2), 10));
  reopen (file);
  g_assert_true (g_file_test (positions, G_FILE_TEST_IS_REGULAR));
  view = fm_document_tab_get_page_view (current_tab ());
  g_assert_true (wait_for (page_is, GINT_TO_POINTER (2), 10));
  g_assert_cmpfloat (fabs (fm_page_view_get_zoom (view) - 1.5), <, 1e-6);
  g_assert_false (fm_page_view_get_fit_width (view));
  g_assert_cmpstr (fm_window_get_zoom_text (window), ==, "150 %");

  /* Fit page is remembered as such, not as a number. */
  gtk_widget_activate_action (GTK_WIDGET (window), "win.fit-page", NULL);
  fm_page_view_go_to_page (view, 1);
  reopen (file);
  view = fm_document_tab_get_page_view (current_tab ());
  g_assert_true (fm_page_view_get_fit_page (view));
  g_assert_true (wait_for (page_is, GINT_TO_POINTER (1), 10));
}

/* The status line (device, memory, speed, pages read from pixels, detection's
 * progress) is never cut: where the window is too narrow for it, it takes
 * more lines. Asked of the label's size request, since the header bar keeps
 * the window wider than the line is long on most machines. */
static void
test_status_line_whole (void)
{
  GtkWidget *label = GTK_WIDGET (fm_window_get_status_label (window));
  int min_w, nat_w, one_line, for_half, width, height;

  open_sample_recognised ();
  g_assert_cmpstr (gtk_label_get_text (GTK_LABEL (label)), ==, fm_window_get_status_text (window));
  gtk_widget_measure (label, GTK_ORIENTATION_HORIZONTAL, -1, &min_w, &nat_w, NULL, NULL);
  gtk_widget_measure (label, GTK_ORIENTATION_VERTICAL, nat_w, &one_line, NULL, NULL, NULL);
  gtk_widget_measure (label, GTK_ORIENTATION_VERTICAL, nat_w / 2, &for_half, NULL, NULL, NULL);
  g_test_message ("status '%s': %d px long, %d px high, %d px at half its width",
                  gtk_label_get_text (GTK_LABEL (label)), nat_w, one_line, for_half);
  g_assert_cmpint (min_w, <, nat_w / 2);
  g_assert_cmpint (for_half, >=, 2 * one_line);

  /* At the narrowest the window goes, laid out whole. */
  gtk_window_get_default_size (GTK_WINDOW (window), &width, &height);
  gtk_window_set_default_size (GTK_WINDOW (window), 300, height);
  spin (1.0);
  g_assert_false (pango_layout_is_ellipsized (gtk_label_get_layout (GTK_LABEL (label))));
  gtk_widget_measure (label, GTK_ORIENTATION_VERTICAL, gtk_widget_get_width (label), &for_half, NULL, NULL, NULL);
  g_assert_cmpint (gtk_widget_get_height (label), >=, for_half);
  g_assert_true (save_widget_screenshot (GTK_WIDGET (window), tmp_dir, "window-narrow-status.png"));
  gtk_window_set_default_size (GTK_WINDOW (window), width, height);
  spin (0.5);
  close_tab_discarding ();
}

/* The keyboard shortcuts window (Ctrl+?, the main menu's Keyboard Shortcuts)
 * is built when first asked for, not with every window, and shown again
 * the same after it is closed. */
static void
test_shortcuts_on_demand (void)
{
  GtkWidget *shortcuts;
  GListModel *toplevels = gtk_window_get_toplevels ();

  /* GTK 4.8's shortcuts window lays out a label of its own with a negative
   * size ("GtkLabel ... reported min width -3", through structured logging,
   * which g_test_log_set_fatal_handler does not see) whoever builds it (GTK's
   * help-overlay resource did the same): warnings are not fatal while it is
   * shown, criticals still are. */
  GLogLevelFlags fatal = g_log_set_always_fatal (G_LOG_FATAL_MASK | G_LOG_LEVEL_CRITICAL);

  g_assert_null (fm_window_get_shortcuts_window (window));
  for (guint i = 0; i < g_list_model_get_n_items (toplevels); i++)
    {
      g_autoptr(GObject) toplevel = g_list_model_get_item (toplevels, i);
      g_assert_false (GTK_IS_SHORTCUTS_WINDOW (toplevel));
    }
  for (int round = 0; round < 2; round++)
    {
      g_assert_true (gtk_widget_activate_action (GTK_WIDGET (window), "win.show-help-overlay", NULL));
      shortcuts = fm_window_get_shortcuts_window (window);
      g_assert_true (GTK_IS_SHORTCUTS_WINDOW (shortcuts));
      g_assert_true (gtk_window_get_transient_for (GTK_WINDOW (shortcuts)) == GTK_WINDOW (window));
      spin (0.5);
      g_assert_true (gtk_widget_get_mapped (shortcuts));
      if (round == 0)
        g_assert_true (save_widget_screenshot (shortcuts, tmp_dir, "window-shortcuts.png"));
      gtk_window_close (GTK_WINDOW (shortcuts));
      spin (0.3);
      g_assert_false (gtk_widget_get_visible (shortcuts));
      g_assert_true (fm_window_get_shortcuts_window (window) == shortcuts);
    }
  g_log_set_always_fatal (fatal);
}

/* An A4 PDF in the test's folder with one line of text at the top of each
 * page; a NULL line leaves its page empty (no text layer, no ink). */
static char *
write_line_pdf (const char *name, const char *const *lines, int n_pages)
{
  char *path = g_build_filename (tmp_dir, name, NULL);
  cairo_surface_t *surface = cairo_pdf_surface_create (path, 595, 842);
  cairo_t *cr = cairo_create (surface);

  cairo_select_font_face (cr, "DejaVu Sans", CAIRO_FONT_SLANT_NORMAL, CAIRO_FONT_WEIGHT_NORMAL);
  cairo_set_font_size (cr, 14);
  for (int page = 0; page < n_pages; page++)
    {
      if (lines[page] != NULL)
        {
          cairo_move_to (cr, 72, 100);
          cairo_show_text (cr, lines[page]);
        }
      cairo_show_page (cr);
    }
  cairo_destroy (cr);
  cairo_surface_finish (surface);
  g_assert_cmpint (cairo_surface_status (surface), ==, CAIRO_STATUS_SUCCESS);
  cairo_surface_destroy (surface);
  return path;
}

/* A PDF of n plain A4 pages, each saying its number. */
static char *
make_pages_pdf (int n_pages)
{
  g_autoptr (GPtrArray) lines = g_ptr_array_new_with_free_func (g_free);

  for (int page = 0; page < n_pages; page++)
    g_ptr_array_add (lines, g_strdup_printf ("Page %d.", page + 1));
  return write_line_pdf ("pages.pdf", (const char *const *) lines->pdata, n_pages);
}

static gboolean
zoom_changed_from (gpointer old_zoom)
{
  double zoom = fm_page_view_get_zoom (fm_document_tab_get_page_view (current_tab ()));

  return fabs (zoom - *(double *) old_zoom) > 1e-3;
}

/* Opening the sidebar narrows the pages (fit width): the page being read
 * stays in view, at the same place, and closing it again too. */
static void
test_sidebar_keeps_page (void)
{
  g_autofree char *path = make_pages_pdf (9);
  g_autoptr(GFile) file = g_file_new_for_path (path);
  GSettings *settings = fm_application_get_settings (app);
  FmPageView *view;
  double zoom;

  while (fm_window_get_n_tabs (window) > 0)
    close_tab_discarding ();
  if (g_settings_get_boolean (settings, "show-thumbnails"))
    gtk_widget_activate_action (GTK_WIDGET (window), "win.show-thumbnails", NULL);
  fm_window_open_files (window, &file, 1);
  g_assert_true (wait_for (tab_loaded, NULL, 30));
  g_assert_true (wait_for (page_painted, NULL, 30));
  view = fm_document_tab_get_page_view (current_tab ());
  gtk_widget_activate_action (GTK_WIDGET (window), "win.fit-width", NULL);
  fm_page_view_go_to_page (view, 5);
  g_assert_true (wait_for (page_is, GINT_TO_POINTER (5), 10));
  spin (0.3);

  for (int round = 0; round < 2; round++)
    {
      zoom = fm_page_view_get_zoom (view);
      gtk_widget_activate_action (GTK_WIDGET (window), "win.show-thumbnails", NULL);
      g_assert_true (wait_for (zoom_changed_from, &zoom, 10));
      spin (0.5);
      g_assert_cmpint (fm_page_view_get_current_page (view), ==, 5);
    }
  g_assert_false (g_settings_get_boolean (settings, "show-thumbnails"));
  close_tab_discarding ();
}

static gboolean
devices_listed (gpointer data)
{
  GListModel *labels = fm_window_get_device_labels (window);
  return labels != NULL && g_list_model_get_n_items (labels) > 1;
}

/* Device names a person understands; a highlight while files are dragged in. */
static void
test_devices_and_drop (void)
{
  GListModel *labels;
  GListModel *controllers = gtk_widget_observe_controllers (GTK_WIDGET (window));
  GtkDropTarget *target = NULL;
  gboolean cpu_seen = FALSE;
  GdkDragAction action = 0;

  /* The engine lists its devices once the window has painted (at most 5 s). */
  g_assert_true (wait_for (devices_listed, NULL, 60));
  labels = fm_window_get_device_labels (window);
  for (guint i = 0; i < g_list_model_get_n_items (labels); i++)
    {
      const char *label = gtk_string_list_get_string (GTK_STRING_LIST (labels), i);
      g_test_message ("device menu: %s", label);
      /* Never the engine's ids. */
      g_assert_false (g_str_equal (label, "cpu") || g_str_equal (label, "cuda") || g_str_has_prefix (label, "cuda:"));
      cpu_seen |= g_str_has_prefix (label, "CPU");
    }
  g_assert_true (cpu_seen);
  {
    FeDeviceInfo gpu = { .id = "cuda:0", .name = "NVIDIA GeForce RTX 4070", .kind = FE_DEVICE_CUDA,
                         .available = true, .total_memory = 12ull << 30 };
    FeDeviceInfo none = { .id = "cuda", .name = "NVIDIA GPU", .kind = FE_DEVICE_CUDA,
                          .available = false, .unavailable_reason = "no CUDA driver" };
    g_autofree char *gpu_label = fm_window_device_label (&gpu);
    g_autofree char *none_label = fm_window_device_label (&none);
    g_assert_cmpstr (gpu_label, ==, "NVIDIA GeForce RTX 4070 — 12 GB");
    g_assert_cmpstr (none_label, ==, "CUDA — no NVIDIA driver found");
  }

  for (guint i = 0; i < g_list_model_get_n_items (controllers) && target == NULL; i++)
    {
      g_autoptr(GObject) controller = g_list_model_get_item (controllers, i);
      if (GTK_IS_DROP_TARGET (controller))
        target = GTK_DROP_TARGET (controller);
    }
  g_object_unref (controllers);
  g_assert_nonnull (target);
  g_assert_false (fm_window_get_drop_highlight (window));
  g_signal_emit_by_name (target, "enter", 300.0, 300.0, &action);
  g_assert_true (action & GDK_ACTION_COPY);
  g_assert_true (fm_window_get_drop_highlight (window));
  spin (0.3);
  fm_window_dismiss_toasts (window);
  g_assert_true (wait_for (no_toasts_shown, NULL, 10));
  spin (0.5);
  g_assert_true (save_widget_screenshot (GTK_WIDGET (window), tmp_dir, "window-drop.png"));
  g_signal_emit_by_name (target, "leave");
  g_assert_false (fm_window_get_drop_highlight (window));
}

static gboolean
is_mapped_row_of (GtkWidget *widget, gconstpointer item)
{
  return FM_IS_RESULTS_ROW (widget) && fm_results_row_get_item (FM_RESULTS_ROW (widget)) == item &&
         gtk_widget_get_mapped (widget);
}

/* The row showing item, once the list has made and mapped it. */
static FmResultsRow *
row_for_item (GtkWidget *widget, FmResultsItem *item)
{
  return (FmResultsRow *) find_widget (widget, is_mapped_row_of, item);
}

static gboolean
row_shown (gpointer item)
{
  return row_for_item (GTK_WIDGET (fm_document_tab_get_results_panel (current_tab ())), item) != NULL;
}

typedef struct {
  FmResultsItem *item;
  int min_height;
} RowHeight;

static gboolean
row_taller (gpointer data)
{
  RowHeight *want = data;
  FmResultsRow *row = row_for_item (GTK_WIDGET (fm_document_tab_get_results_panel (current_tab ())), want->item);
  return row != NULL && gtk_widget_get_height (GTK_WIDGET (row)) >= want->min_height;
}

static gboolean
crop_taller (gpointer data)
{
  RowHeight *want = data;
  FmResultsRow *row = row_for_item (GTK_WIDGET (fm_document_tab_get_results_panel (current_tab ())), want->item);
  return row != NULL && gtk_widget_get_height (fm_results_row_get_crop_picture (row)) >= want->min_height;
}

/* A gray texture of the given size, standing in for a crop. */
static GdkTexture *
gray_texture (int width, int height)
{
  g_autofree guchar *pixels = g_malloc ((gsize) width * height * 3);
  g_autoptr(GBytes) bytes = NULL;

  memset (pixels, 0xc0, (gsize) width * height * 3);
  bytes = g_bytes_new (pixels, (gsize) width * height * 3);
  return gdk_memory_texture_new (width, height, GDK_MEMORY_R8G8B8, bytes, (gsize) width * 3);
}

/* A long formula is shown whole in its row: the LaTeX wraps and the row grows;
 * typing in it edits the formula. */
static void
test_row_long_latex (void)
{
  static const char long_latex[] =
    "\\mathbf{E}\\left[\\sum_{k=1}^{n} \\frac{X_k^2}{\\sigma_k^2}\\right] = \\int_{-\\infty}^{\\infty} "
    "\\sum_{k=1}^{n} \\frac{x^2}{\\sigma_k^2} \\frac{1}{\\sqrt{2\\pi\\sigma_k^2}} "
    "\\exp\\left(-\\frac{(x-\\mu_k)^2}{2\\sigma_k^2}\\right) \\mathrm{d}x = n + \\sum_{k=1}^{n} "
    "\\frac{\\mu_k^2}{\\sigma_k^2} \\quad\\text{for independent } X_k \\sim \\mathcal{N}(\\mu_k, \\sigma_k^2)";
  FmDocumentTab *tab;
  FmResultsPanel *panel;
  FmResultsItem *item;
  FmResultsRow *row;
  GtkWidget *view;
  g_autofree char *before = NULL;
  g_autofree char *typed = NULL;
  RowHeight want;
  int one_line, view_width;

  open_sample_recognised ();
  tab = current_tab ();
  panel = fm_document_tab_get_results_panel (tab);
  item = nth_formula (tab, 0, NULL);
  g_assert_nonnull (item);
  before = g_strdup (fm_results_item_get_latex (item));
  fm_results_item_set_latex (item, "x");
  fm_results_panel_select (panel, item);
  g_assert_true (wait_for (row_shown, item, 30));
  spin (0.3);
  row = row_for_item (GTK_WIDGET (panel), item);
  view = fm_results_row_get_latex_label (row);
  one_line = gtk_widget_get_height (view);
  g_assert_cmpint (one_line, >, 0);

  fm_results_item_set_latex (item, long_latex);
  /* All of it is in the view (no ellipsis, nothing cut), wrapped into
   * several lines within the panel's width: the row grows. */
  want.item = item;
  want.min_height = gtk_widget_get_height (GTK_WIDGET (row)) + 2 * one_line;
  g_assert_true (wait_for (row_taller, &want, 10));
  row = row_for_item (GTK_WIDGET (panel), item);
  view = fm_results_row_get_latex_label (row);
  g_assert_cmpstr (gtk_label_get_text (GTK_LABEL (view)), ==, long_latex);
  g_assert_true (gtk_label_get_wrap (GTK_LABEL (view)));
  g_assert_cmpint (gtk_label_get_wrap_mode (GTK_LABEL (view)), ==, PANGO_WRAP_WORD_CHAR);
  g_assert_cmpint (gtk_label_get_ellipsize (GTK_LABEL (view)), ==, PANGO_ELLIPSIZE_NONE);
  g_assert_true (gtk_label_get_selectable (GTK_LABEL (view)));
  g_assert_cmpint (gtk_widget_get_height (view), >=, 3 * one_line);
  view_width = gtk_widget_get_width (view);
  g_assert_cmpint (view_width, >, 0);
  g_assert_cmpint (view_width, <=, gtk_widget_get_width (GTK_WIDGET (panel)));
  spin (0.5);
  g_assert_true (save_widget_screenshot (GTK_WIDGET (window), tmp_dir, "window-row-long-latex.png"));

  /* Edit: the LaTeX in an entry; what is typed is the formula; Enter
   * shows the wrapped text again. */
  g_assert_null (fm_results_row_get_entry (row));
  fm_results_row_edit (row);
  {
    GtkWidget *entry = fm_results_row_get_entry (row);
    int position;

    g_assert_nonnull (entry);
    g_assert_false (gtk_widget_get_visible (view));
    g_assert_cmpstr (gtk_editable_get_text (GTK_EDITABLE (entry)), ==, long_latex);
    position = -1;
    gtk_editable_insert_text (GTK_EDITABLE (entry), " + 1", -1, &position);
    typed = g_strconcat (long_latex, " + 1", NULL);
    g_assert_cmpstr (fm_results_item_get_latex (item), ==, typed);
    g_assert_true (fm_results_item_get_edited (item));
    g_signal_emit_by_name (entry, "activate");
    g_assert_null (fm_results_row_get_entry (row));
    g_assert_true (gtk_widget_get_visible (view));
    g_assert_cmpstr (gtk_label_get_text (GTK_LABEL (view)), ==, typed);
  }
  fm_results_item_set_latex (item, before);
}

/* A tall crop (fractions, a matrix) is drawn at its own height up to a bound,
 * not squeezed to a line; a flat one keeps a line's height. */
static void
test_row_tall_crop (void)
{
  FmDocumentTab *tab = current_tab ();
  FmResultsPanel *panel = fm_document_tab_get_results_panel (tab);
  FmResultsItem *item = nth_formula (tab, 0, NULL);
  g_autoptr(GdkTexture) old = NULL;
  g_autoptr(GdkTexture) tall = gray_texture (240, 150);
  g_autoptr(GdkTexture) very_tall = gray_texture (240, 900);
  g_autoptr(GdkTexture) flat = gray_texture (400, 18);
  FmResultsRow *row;
  GtkWidget *picture;
  RowHeight want;
  int height;

  g_assert_nonnull (item);
  old = fm_results_item_get_crop (item) ? g_object_ref (fm_results_item_get_crop (item)) : NULL;
  fm_results_panel_select (panel, item);
  g_assert_true (wait_for (row_shown, item, 30));
  row = row_for_item (GTK_WIDGET (panel), item);
  picture = fm_results_row_get_crop_picture (row);

  fm_results_item_set_crop (item, tall);
  gtk_widget_get_size_request (picture, NULL, &height);
  g_assert_cmpint (height, ==, 150);
  want.item = item;
  want.min_height = 150;
  /* Laid out at that height in the list, not only asked for. */
  g_assert_true (wait_for (crop_taller, &want, 10));

  fm_results_item_set_crop (item, very_tall);
  gtk_widget_get_size_request (picture, NULL, &height);
  g_assert_cmpint (height, ==, 200);
  fm_results_item_set_crop (item, flat);
  gtk_widget_get_size_request (picture, NULL, &height);
  g_assert_cmpint (height, ==, 32);
  fm_results_item_set_crop (item, old);
}

/* ---------------------------------------------------------------------- */
/* Export: the dialog beside the PDF, named after it; what to export.      */

/* The export dialog: GtkFileChooserNative falls back to a GtkFileChooserDialog
 * outside a sandbox, which the test answers as a person would. */
static GtkFileChooser *
find_file_chooser (void)
{
  GListModel *toplevels = gtk_window_get_toplevels ();

  for (guint i = 0; i < g_list_model_get_n_items (toplevels); i++)
    {
      g_autoptr(GtkWidget) w = g_list_model_get_item (toplevels, i);
      if (GTK_IS_FILE_CHOOSER_DIALOG (w) && gtk_widget_get_visible (w))
        return GTK_FILE_CHOOSER (w);
    }
  return NULL;
}

static gboolean
chooser_shown (gpointer data)
{
  return find_file_chooser () != NULL;
}

static gboolean
chooser_has_folder (gpointer chooser)
{
  g_autoptr(GFile) folder = gtk_file_chooser_get_current_folder (chooser);
  return folder != NULL;
}

static gboolean
offers_choice (GtkWidget *widget, gconstpointer label)
{
  GListModel *model;

  if (!GTK_IS_DROP_DOWN (widget))
    return FALSE;
  model = gtk_drop_down_get_model (GTK_DROP_DOWN (widget));
  for (guint i = 0; model != NULL && GTK_IS_STRING_LIST (model) && i < g_list_model_get_n_items (model); i++)
    if (g_strcmp0 (gtk_string_list_get_string (GTK_STRING_LIST (model), i), label) == 0)
      return TRUE;
  return FALSE;
}

/* The drop-down among widget's descendants that offers label. */
static GtkDropDown *
find_choice_drop_down (GtkWidget *widget, const char *label)
{
  return (GtkDropDown *) find_widget (widget, offers_choice, label);
}

static gboolean
file_exists (gpointer path)
{
  return g_file_test (path, G_FILE_TEST_EXISTS);
}

/* Opens the export dialog, checks where it starts and what it offers, picks
 * scope and writes name in tmp_dir; returns the exported JSON's regions. */
static JsonArray *
export_through_dialog (JsonParser *parser, const char *scope, gboolean offers_selected,
                       const char *name)
{
  g_autofree char *sample = sample_path ();
  g_autoptr(GFile) sample_file = g_file_new_for_path (sample);
  g_autoptr(GFile) sample_folder = g_file_get_parent (sample_file);
  g_autoptr(GFile) folder = NULL;
  g_autoptr(GFile) out_folder = g_file_new_for_path (tmp_dir);
  g_autofree char *current_name = NULL;
  g_autofree char *out = g_build_filename (tmp_dir, name, NULL);
  g_autoptr(GError) error = NULL;
  GtkFileChooser *chooser;
  JsonObject *root;

  g_remove (out);
  gtk_widget_activate_action (GTK_WIDGET (window), "win.export", NULL);
  g_assert_true (wait_for (chooser_shown, NULL, 10));
  chooser = find_file_chooser ();
  /* In the PDF's folder, the PDF's name with the format's extension. */
  /* The dialog reads the folder asynchronously. */
  g_assert_true (wait_for (chooser_has_folder, chooser, 10));
  folder = gtk_file_chooser_get_current_folder (chooser);
  g_assert_nonnull (folder);
  g_assert_true (g_file_equal (folder, sample_folder));
  current_name = gtk_file_chooser_get_current_name (chooser);
  g_assert_cmpstr (current_name, ==, "sample.tex");
  /* The whole document unless the person picks otherwise. */
  g_assert_cmpstr (gtk_file_chooser_get_choice (chooser, "scope"), ==, "document");
  if (g_str_equal (scope, "selected"))
    {
      spin (0.5);
      g_assert_true (save_widget_screenshot (GTK_WIDGET (chooser), tmp_dir, "dialog-export.png"));
    }

  /* As a person picks it: the choice's drop-down in the dialog. */
  {
    GtkDropDown *choice = find_choice_drop_down (GTK_WIDGET (chooser), "This page");
    const char *ids[] = { "document", "page", "selected" };

    g_assert_nonnull (choice);
    /* "Selected formulas" is offered only while rows are selected. */
    g_assert_cmpuint (g_list_model_get_n_items (gtk_drop_down_get_model (choice)), ==,
                      offers_selected ? 3 : 2);
    for (guint i = 0; i < G_N_ELEMENTS (ids); i++)
      if (g_str_equal (ids[i], scope))
        gtk_drop_down_set_selected (choice, i);
    g_assert_cmpstr (gtk_file_chooser_get_choice (chooser, "scope"), ==, scope);
  }
  g_assert_true (gtk_file_chooser_set_current_folder (chooser, out_folder, NULL));
  gtk_file_chooser_set_current_name (chooser, name);   /* the typed .json picks JSON */
  gtk_dialog_response (GTK_DIALOG (chooser), GTK_RESPONSE_ACCEPT);
  g_assert_true (wait_for (file_exists, out, 30));
  /* Written to a temporary file and renamed: complete once it exists. */
  spin (0.2);
  g_assert_true (json_parser_load_from_file (parser, out, &error));
  g_assert_no_error (error);
  root = json_node_get_object (json_parser_get_root (parser));
  g_assert_nonnull (root);
  return json_object_get_array_member (root, "regions");
}

static void
test_export_choices (void)
{
  FmDocumentTab *tab;
  FmResultsPanel *panel;
  GListModel *items;
  guint n_all = 0, n_page = 0, n;
  int page;

  while (fm_window_get_n_tabs (window) > 0)
    close_tab_discarding ();
  open_sample_recognised ();
  tab = current_tab ();
  panel = fm_document_tab_get_results_panel (tab);
  items = fm_document_tab_get_items (tab);
  page = fm_page_view_get_current_page (fm_document_tab_get_page_view (tab));
  n = g_list_model_get_n_items (items);
  for (guint i = 0; i < n; i++)
    {
      g_autoptr(FmResultsItem) item = g_list_model_get_item (items, i);
      n_all++;
      if (fm_results_item_get_page (item) == page)
        n_page++;
    }
  g_assert_cmpuint (n_page, >, 0);
  g_assert_cmpuint (n_page, <, n_all);

  /* Nothing selected: whole document (the default) or this page. */
  fm_results_panel_select (panel, NULL);
  {
    g_autoptr(JsonParser) parser = json_parser_new ();
    JsonArray *regions = export_through_dialog (parser, "document", FALSE, "whole.json");
    g_assert_cmpuint (json_array_get_length (regions), ==, n_all);
  }
  {
    g_autoptr(JsonParser) parser = json_parser_new ();
    JsonArray *regions = export_through_dialog (parser, "page", FALSE, "page.json");
    JsonArray *pages = json_object_get_array_member (json_node_get_object (json_parser_get_root (parser)), "pages");

    g_assert_cmpuint (json_array_get_length (regions), ==, n_page);
    for (guint i = 0; i < json_array_get_length (regions); i++)
      g_assert_cmpint (json_object_get_int_member (json_array_get_object_element (regions, i), "page"), ==, page + 1);
    g_assert_cmpuint (json_array_get_length (pages), ==, 1);
  }
  /* Two rows selected (Shift+click): "Selected formulas" is offered. */
  fm_results_panel_select_range (panel, 0, 2);
  {
    g_autoptr(GPtrArray) selected = fm_results_panel_dup_selected (panel);
    g_autoptr(JsonParser) parser = json_parser_new ();
    JsonArray *regions;

    g_assert_cmpuint (selected->len, ==, 2);
    regions = export_through_dialog (parser, "selected", TRUE, "selected.json");
    g_assert_cmpuint (json_array_get_length (regions), ==, 2);
    for (guint i = 0; i < 2; i++)
      g_assert_cmpstr (json_object_get_string_member (json_array_get_object_element (regions, i), "latex"), ==,
                       fm_results_item_get_latex (selected->pdata[i]));
  }
  /* The CLI is unaffected: fm_window_export_to_file and formulate-cli write the whole document. */
}

/* ---------------------------------------------------------------------- */
/* The empty window: recent documents, no toast left from a closed one.    */

/* The recent list's rows' titles, top to bottom. */
static GPtrArray *
recent_titles (void)
{
  GtkListBox *list = fm_window_get_recent_list (window);
  GPtrArray *titles = g_ptr_array_new ();

  if (!gtk_widget_get_visible (GTK_WIDGET (list)))
    return titles;
  for (GtkWidget *row = gtk_widget_get_first_child (GTK_WIDGET (list)); row != NULL;
       row = gtk_widget_get_next_sibling (row))
    if (ADW_IS_ACTION_ROW (row))
      g_ptr_array_add (titles, (gpointer) adw_preferences_row_get_title (ADW_PREFERENCES_ROW (row)));
  return titles;
}

static gboolean
is_named (GtkWidget *widget, gconstpointer name)
{
  return g_strcmp0 (gtk_widget_get_name (widget), name) == 0;
}

static GtkWidget *
find_named (GtkWidget *widget, const char *name)
{
  return find_widget (widget, is_named, name);
}

static int
title_index (GPtrArray *titles, const char *title)
{
  for (guint i = 0; i < titles->len; i++)
    if (g_strcmp0 (titles->pdata[i], title) == 0)
      return (int) i;
  return -1;
}

static gboolean
recent_has_title (gpointer title)
{
  g_autoptr(GPtrArray) titles = recent_titles ();
  return title_index (titles, title) >= 0;
}

static void
test_recent_list (void)
{
  g_autofree char *sample = sample_path ();
  g_autofree char *contents = NULL;
  const char *names[] = { "recent-older.pdf", "recent-newer.pdf", "recent-deleted.pdf" };
  char *paths[G_N_ELEMENTS (names)];
  gsize len;

  while (fm_window_get_n_tabs (window) > 0)
    close_tab_discarding ();
  g_assert_true (g_file_get_contents (sample, &contents, &len, NULL));
  /* Opened in this order, a second apart (the recent list's times). */
  for (gsize i = 0; i < G_N_ELEMENTS (names); i++)
    {
      g_autoptr(GFile) file = NULL;
      paths[i] = g_build_filename (tmp_dir, names[i], NULL);
      g_assert_true (g_file_set_contents (paths[i], contents, len, NULL));
      file = g_file_new_for_path (paths[i]);
      fm_window_open_files (window, &file, 1);
      g_assert_true (wait_for (tab_loaded, NULL, 30));
      spin (1.1);
    }
  /* Something to say in a toast, as in the issue: Recognise with nothing to do. */
  g_assert_true (wait_for (detection_done, NULL, 60));
  gtk_widget_activate_action (GTK_WIDGET (window), "win.recognize", NULL);
  g_assert_true (wait_for (all_recognized, NULL, 120));
  gtk_widget_activate_action (GTK_WIDGET (window), "win.recognize", NULL);
  g_assert_cmpstr (fm_window_get_last_toast (window), ==, "Every formula is already recognised");
  g_assert_cmpuint (fm_window_get_n_toasts_shown (window), >, 0);

  /* One file goes away while it is open. */
  g_assert_cmpint (g_remove (paths[2]), ==, 0);
  while (fm_window_get_n_tabs (window) > 0)
    close_tab_discarding ();
  g_assert_true (wait_for (no_tabs, NULL, 5));
  /* The empty window shows no toast left from the documents closed. */
  g_assert_true (wait_for (no_toasts_shown, NULL, 5));
  g_assert_true (wait_for (recent_has_title, (gpointer) names[1], 10));
  {
    g_autoptr(GPtrArray) titles = recent_titles ();
    /* Most recent first; the deleted file is not offered. */
    g_assert_cmpint (title_index (titles, names[1]), >=, 0);
    g_assert_cmpint (title_index (titles, names[0]), >, title_index (titles, names[1]));
    g_assert_cmpint (title_index (titles, names[2]), ==, -1);
  }
  spin (0.5);
  g_assert_true (save_widget_screenshot (GTK_WIDGET (window), tmp_dir, "window-empty-recent.png"));

  /* Remove from List: the row goes, and the entry from GTK's recent files. */
  {
    GtkListBox *list = fm_window_get_recent_list (window);
    g_autofree char *uri = g_filename_to_uri (paths[1], NULL, NULL);
    GtkWidget *row = NULL, *button;

    for (GtkWidget *r = gtk_widget_get_first_child (GTK_WIDGET (list)); r != NULL; r = gtk_widget_get_next_sibling (r))
      if (ADW_IS_ACTION_ROW (r) && g_strcmp0 (adw_preferences_row_get_title (ADW_PREFERENCES_ROW (r)), names[1]) == 0)
        row = r;
    g_assert_nonnull (row);
    button = find_named (row, "remove-recent");
    g_assert_nonnull (button);
    g_assert_cmpstr (gtk_widget_get_tooltip_text (button), ==, "Remove from List");
    g_signal_emit_by_name (button, "clicked");
    {
      g_autoptr(GPtrArray) titles = recent_titles ();
      g_assert_cmpint (title_index (titles, names[1]), ==, -1);
      g_assert_cmpint (title_index (titles, names[0]), >=, 0);
    }
    g_assert_false (gtk_recent_manager_has_item (gtk_recent_manager_get_default (), uri));
    /* Still gone once the manager has told the window it changed. */
    spin (1.0);
    g_assert_false (recent_has_title ((gpointer) names[1]));
  }
  for (gsize i = 0; i < G_N_ELEMENTS (names); i++)
    g_free (paths[i]);
}

/* ---------------------------------------------------------------------- */
/* A blank page is blank, not "a scan?".                                   */

/* Text, an empty page (no text layer, no ink: a page left blank on purpose,
 * as between chapters), text. */
static char *
make_pdf_with_blank_page (void)
{
  static const char *const lines[] = {
    "The first chapter ends here.", NULL, "The second chapter starts here.",
  };

  return write_line_pdf ("with-blank-page.pdf", lines, G_N_ELEMENTS (lines));
}

/* "a scan?", or "read from pixels" (the status line's count of pages of a
 * scan). A build without Tesseract says it "cannot read pixels", which is
 * true of a blank page too. */
static gboolean
mentions_scan (const char *text)
{
  g_autofree char *lower = text ? g_utf8_strdown (text, -1) : NULL;
  return lower != NULL && (strstr (lower, "scan") != NULL || strstr (lower, "from pixels") != NULL);
}

static void
test_blank_page (void)
{
  g_autofree char *path = make_pdf_with_blank_page ();
  g_autoptr(GFile) file = g_file_new_for_path (path);
  g_autofree char *md_path = g_build_filename (tmp_dir, "with-blank-page.md", NULL);
  g_autofree char *json_path = g_build_filename (tmp_dir, "with-blank-page.json", NULL);
  g_autoptr(GFile) md_file = g_file_new_for_path (md_path);
  g_autoptr(GFile) json_file = g_file_new_for_path (json_path);
  g_autoptr(GError) error = NULL;
  g_autofree char *md = NULL, *json = NULL;
  FmDocumentTab *tab;
  const char *note, *source;
  guint toasts;

  while (fm_window_get_n_tabs (window) > 0)
    close_tab_discarding ();
  toasts = fm_window_get_n_toasts (window);
  fm_window_open_files (window, &file, 1);
  g_assert_true (wait_for (tab_loaded, NULL, 30));
  g_assert_true (wait_for (detection_done, NULL, 60));
  tab = current_tab ();
  g_assert_cmpint (fm_document_tab_get_pages_detected (tab), ==, 3);

  note = fm_document_tab_get_page_note (tab, 1);
  source = fm_document_tab_get_page_source (tab, 1);
  g_printerr ("# blank page: analysis %s, note %s\n", source ? source : "(none)", note ? note : "(none)");
  g_assert_false (mentions_scan (note));
  /* Built with a pixel reader (Tesseract) the page is analysed and found
   * blank; without one it has a note saying the build cannot read pixels. */
  if (source != NULL)
    g_assert_cmpstr (source, ==, "blank");
  else
    g_assert_nonnull (note);
  g_assert_cmpint (fm_document_tab_get_pages_from_pixels (tab), ==, 0);
  g_assert_false (mentions_scan (fm_window_get_status_text (window)));
  if (fm_window_get_n_toasts (window) > toasts)
    g_assert_false (mentions_scan (fm_window_get_last_toast (window)));

  /* Nor do the exports, which carry each page's note. */
  g_assert_true (fm_window_export_to_file (window, md_file, "markdown", &error));
  g_assert_no_error (error);
  g_assert_true (g_file_get_contents (md_path, &md, NULL, NULL));
  g_assert_false (mentions_scan (md));
  g_assert_true (fm_window_export_to_file (window, json_file, "json", &error));
  g_assert_no_error (error);
  g_assert_true (g_file_get_contents (json_path, &json, NULL, NULL));
  g_assert_null (strstr (json, "scan"));
  g_assert_null (strstr (json, "\"pixels\""));
}

/* The PDF on the command line is opened and its first page rendered while
 * GTK starts (fm-early-open.c): the window takes both, and the guessed zoom
 * is the one the view chooses, first from the default window's size (a first
 * start: no remembered state), then from the zoom remembered for the file.
 * A second window of the default size stands in for the program's first.
 * set_zoom > 0: zoom to it before the tab closes (and remembers it). */
static double
open_early_in_default_window (const char *path, double set_zoom, gboolean guess_right)
{
  char *args[] = { (char *) "formulate", (char *) path, NULL };
  g_autoptr(GFile) file = g_file_new_for_commandline_arg (path);
  FmWindow *main_window = window;
  FmPageView *view;
  double zoom;

  fm_early_open_start (2, args);
  window = fm_window_new (app);
  gtk_window_present (GTK_WINDOW (window));
  fm_window_open_files (window, &file, 1);
  g_assert_true (wait_for (page_painted, NULL, 30));
  view = fm_document_tab_get_page_view (current_tab ());
  zoom = fm_page_view_get_zoom (view);
  g_printerr ("# early open: page view %d px wide, zoom %.4f, early render used: %s\n",
              gtk_widget_get_width (GTK_WIDGET (view)), zoom,
              fm_early_open_get_render_used () ? "yes" : "no");
  g_assert_cmpint (gtk_widget_get_width (GTK_WIDGET (view)), ==, FM_EARLY_OPEN_DEFAULT_VIEW_WIDTH);
  g_assert_true (fm_early_open_get_render_used () == guess_right);
  if (set_zoom > 0)
    fm_page_view_set_zoom (view, set_zoom);
  while (fm_window_get_n_tabs (window) > 0)
    close_tab_discarding ();
  spin (0.2);
  gtk_window_destroy (GTK_WINDOW (window));
  window = main_window;
  fm_early_open_finish ();
  return zoom;
}

static void
test_early_open (void)
{
  g_autofree char *path = sample_path ();
  g_autofree char *positions = g_build_filename (g_get_user_state_dir (), "formulate", "positions.ini", NULL);
  GSettings *settings = fm_application_get_settings (app);

  g_settings_reset (settings, "window-width");
  g_settings_reset (settings, "window-height");
  g_settings_reset (settings, "window-maximized");
  g_settings_reset (settings, "show-thumbnails");
  g_remove (positions);
  /* A first start: fit-width at the default window's page view width; the
   * tab remembers the zoom set before it closes... */
  open_early_in_default_window (path, 1.37, TRUE);
  /* ...and the next start renders at it. */
  g_assert_cmpfloat_with_epsilon (open_early_in_default_window (path, 0, TRUE), 1.37, 1e-9);

  /* A guess from another window's width is wrong here: that render is
   * dropped, and the page is rendered as the view asks. */
  {
    g_autoptr(GKeyFile) keys = g_key_file_new ();
    g_autofree char *copy = g_build_filename (tmp_dir, "early-copy.pdf", NULL);
    g_autofree char *bytes = NULL;
    gsize length = 0;

    g_assert_true (g_file_get_contents (path, &bytes, &length, NULL));
    g_assert_true (g_file_set_contents (copy, bytes, (gssize) length, NULL));
    g_key_file_set_integer (keys, "file:///elsewhere.pdf", "width", 500);
    g_key_file_set_int64 (keys, "file:///elsewhere.pdf", "time", G_MAXINT32);
    g_assert_true (g_key_file_save_to_file (keys, positions, NULL));
    g_assert_cmpfloat (open_early_in_default_window (copy, 0, FALSE), >, 0.5);
  }
}

int
main (int argc, char **argv)
{
  if (!gui_test_init (&argc, &argv, "formulate-gui-daily", FALSE))
    return 77;
  gui_test_start_app ();
  gui_test_show_window ();

  g_test_add_func ("/daily/undo", test_undo);
  g_test_add_func ("/daily/close-confirmation", test_close_confirmation);
  g_test_add_func ("/daily/results-follow-page", test_results_follow_page);
  g_test_add_func ("/daily/find", test_find);
  g_test_add_func ("/daily/outline", test_outline);
  g_test_add_func ("/daily/zoom-and-position", test_zoom_and_position);
  g_test_add_func ("/daily/sidebar-keeps-page", test_sidebar_keeps_page);
  g_test_add_func ("/daily/status-line-whole", test_status_line_whole);
  g_test_add_func ("/daily/shortcuts-on-demand", test_shortcuts_on_demand);
  g_test_add_func ("/daily/devices-and-drop", test_devices_and_drop);
  g_test_add_func ("/daily/row-long-latex", test_row_long_latex);
  g_test_add_func ("/daily/row-tall-crop", test_row_tall_crop);
  g_test_add_func ("/daily/export-choices", test_export_choices);
  g_test_add_func ("/daily/blank-page", test_blank_page);
  g_test_add_func ("/daily/recent-list", test_recent_list);
  g_test_add_func ("/daily/early-open", test_early_open);
  return gui_test_finish (g_test_run ());
}
