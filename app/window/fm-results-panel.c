/* fm-results-panel.c - list of formulas with crop, LaTeX, confidence and copy. */
#include "fm-results-panel.h"

#include <adwaita.h>
#include <glib/gi18n.h>

#include "fm-results-row.h"
#ifdef FM_HAVE_PREVIEW
#include <gmodule.h>
#endif

struct _FmResultsPanel {
  GtkWidget parent_instance;

  GtkWidget *box;
  GtkWidget *count_label;
  GtkWidget *low_only_button;
  GtkWidget *page_only_button;
  GtkWidget *filter_button;
  GtkWidget *page_only_check;
  GtkWidget *displays_only_check;
  GtkWidget *low_only_check;
  GtkWidget *hide_tiny_check;
  GtkWidget *list_scroller;
  GtkWidget *copy_all_button;
  GtkWidget *stack;
  GtkWidget *list_view;
  GtkWidget *preview_revealer;
  GtkWidget *preview_box;
  GtkWidget *preview;          /* NULL when built without WebKitGTK/KaTeX */
  gboolean preview_enabled;
  FmResultsItem *preview_item;
  gulong preview_handler;

  GListModel *items;
  GtkCustomFilter *filter;
  GtkFilterListModel *filtered;
  GtkMultiSelection *selection; /* Ctrl/Shift+click pick several (export "selected formulas") */
  double low_threshold;
  gboolean selecting;          /* set while selecting from code */
  int current_page;            /* the page being read, for "this page only" */
  FmResultsItem *scroll_item;  /* to put at the top of the list once laid out */
  guint scroll_tick;
  int scroll_tries;
};

G_DEFINE_FINAL_TYPE (FmResultsPanel, fm_results_panel, GTK_TYPE_WIDGET)

enum { SIGNAL_ITEM_SELECTED, N_SIGNALS };
static guint signals[N_SIGNALS];

static gboolean
filter_func (gpointer object, gpointer user_data)
{
  FmResultsPanel *self = user_data;

  /* Equation numbers are shown in their display formula's row. */
  if (!fm_results_item_is_formula (object))
    return FALSE;
  if (gtk_toggle_button_get_active (GTK_TOGGLE_BUTTON (self->page_only_button)) &&
      fm_results_item_get_page (object) != self->current_page)
    return FALSE;
  if (gtk_check_button_get_active (GTK_CHECK_BUTTON (self->displays_only_check)) &&
      fm_results_item_get_kind (object) != FM_REGION_DISPLAY)
    return FALSE;
  if (gtk_check_button_get_active (GTK_CHECK_BUTTON (self->hide_tiny_check)) &&
      fm_results_panel_item_is_tiny (object))
    return FALSE;
  if (!gtk_toggle_button_get_active (GTK_TOGGLE_BUTTON (self->low_only_button)))
    return TRUE;
  return fm_results_item_is_low_confidence (object, self->low_threshold) ||
         fm_results_item_get_state (object) == FM_RESULT_STATE_FAILED;
}

/* A region narrower than FM_RESULTS_TINY_EM glyph heights: one or two symbols
 * ("x", "n_i"), which a person rarely wants to copy. A box drawn by hand has no
 * font size; its height stands in for it. */
gboolean
fm_results_panel_item_is_tiny (FmResultsItem *item)
{
  graphene_rect_t r;
  double em = fm_results_item_get_font_size (item);

  fm_results_item_get_rect (item, &r);
  if (em <= 0)
    em = r.size.height;
  return em > 0 && r.size.width < FM_RESULTS_TINY_EM * em;
}

static guint
count_formulas (GListModel *items)
{
  guint n = items ? g_list_model_get_n_items (items) : 0, formulas = 0;

  for (guint i = 0; i < n; i++)
    {
      g_autoptr(FmResultsItem) item = g_list_model_get_item (items, i);
      formulas += fm_results_item_is_formula (item);
    }
  return formulas;
}

static void
update_count (FmResultsPanel *self)
{
  guint n = count_formulas (self->items);
  guint shown = fm_results_panel_get_n_shown (self);
  g_autofree char *text = NULL;

  if (shown == n)
    text = g_strdup_printf (g_dngettext (GETTEXT_PACKAGE, "%u formula", "%u formulas", n), n);
  else
    /* Translators: "3 of 40 formulas" (only low-confidence shown) */
    text = g_strdup_printf (g_dngettext (GETTEXT_PACKAGE, "%u of %u formula", "%u of %u formulas", n), shown, n);
  gtk_label_set_text (GTK_LABEL (self->count_label), text);
  gtk_stack_set_visible_child_name (GTK_STACK (self->stack), n > 0 ? "list" : "empty");
  gtk_widget_set_sensitive (self->copy_all_button, n > 0);
}

static void
setup_row (GtkSignalListItemFactory *factory, GtkListItem *list_item, FmResultsPanel *self)
{
  gtk_list_item_set_child (list_item, fm_results_row_new ());
}

static void
bind_row (GtkSignalListItemFactory *factory, GtkListItem *list_item, FmResultsPanel *self)
{
  FmResultsRow *row = FM_RESULTS_ROW (gtk_list_item_get_child (list_item));

  fm_results_row_set_low_threshold (row, self->low_threshold);
  fm_results_row_set_item (row, gtk_list_item_get_item (list_item));
}

static void
unbind_row (GtkSignalListItemFactory *factory, GtkListItem *list_item, FmResultsPanel *self)
{
  fm_results_row_set_item (FM_RESULTS_ROW (gtk_list_item_get_child (list_item)), NULL);
}

#ifdef FM_HAVE_PREVIEW
/* The preview's type from libformulate-preview.so, loaded once, the first
 * time a preview is shown (fm-results-preview.h): $FORMULATE_PREVIEW_MODULE
 * (the tests), beside the program (the build tree), the configured
 * <libdir>/formulate, and <program>/../<libdir>/formulate (a relocated
 * install). G_TYPE_INVALID, with a message once, when none loads: the panel
 * then has no preview, as in a build without WebKitGTK. */
static GType
preview_type (void)
{
  static gsize type = 0;

  if (g_once_init_enter (&type))
    {
      GType found = G_TYPE_INVALID;
      g_autofree char *exe = g_file_read_link ("/proc/self/exe", NULL);
      g_autofree char *exe_dir = exe ? g_path_get_dirname (exe) : NULL;
      const char *name = "libformulate-preview.so";
      g_autofree char *beside = exe_dir ? g_build_filename (exe_dir, name, NULL) : NULL;
      g_autofree char *configured = g_build_filename (FM_PREVIEW_MODULE_DIR, name, NULL);
      g_autofree char *relocated = exe_dir ? g_build_filename (exe_dir, "..", FM_LIBDIR_NAME, "formulate", name, NULL) : NULL;
      const char *candidates[] = { g_getenv ("FORMULATE_PREVIEW_MODULE"), beside, configured, relocated };

      for (gsize i = 0; i < G_N_ELEMENTS (candidates) && found == G_TYPE_INVALID; i++)
        {
          GModule *module;
          GType (*get_type) (void) = NULL;

          if (candidates[i] == NULL || !g_file_test (candidates[i], G_FILE_TEST_EXISTS))
            continue;
          module = g_module_open (candidates[i], G_MODULE_BIND_LOCAL);
          if (module == NULL)
            {
              g_message ("preview module %s: %s", candidates[i], g_module_error ());
              continue;
            }
          if (g_module_symbol (module, "fm_results_preview_get_type", (gpointer *) &get_type) && get_type != NULL)
            {
              /* A registered GType cannot go: the module stays. */
              g_module_make_resident (module);
              found = get_type ();
            }
          else
            g_module_close (module);
        }
      if (found == G_TYPE_INVALID)
        g_message ("no typeset preview: %s not found", name);
      /* g_once_init_leave() refuses 0 (G_TYPE_INVALID) with a critical and
       * the next call would search again: "none" is stored as 1, which no
       * GType is (fundamental types are multiples of 4, others pointers). */
      g_once_init_leave (&type, found != G_TYPE_INVALID ? found : 1);
    }
  return type != 1 ? (GType) type : G_TYPE_INVALID;
}
#endif

static void
update_preview (FmResultsPanel *self)
{
#ifdef FM_HAVE_PREVIEW
  const char *latex = self->preview_item ? fm_results_item_get_latex (self->preview_item) : NULL;
  gboolean show = self->preview_enabled && latex != NULL && *latex != '\0';

  /* The web view (and its web process, and WebKitGTK itself) only comes when
   * first needed. */
  if (show && self->preview == NULL && preview_type () != G_TYPE_INVALID)
    {
      self->preview = g_object_new (preview_type (), NULL);
      gtk_box_append (GTK_BOX (self->preview_box), self->preview);
    }
  show = show && self->preview != NULL;

  gtk_revealer_set_reveal_child (GTK_REVEALER (self->preview_revealer), show);
  if (show)
    g_object_set (self->preview, "latex", latex, NULL);
#else
  gtk_revealer_set_reveal_child (GTK_REVEALER (self->preview_revealer), FALSE);
#endif
}

static void
preview_item_notify (FmResultsItem *item, GParamSpec *pspec, FmResultsPanel *self)
{
  update_preview (self);
}

static void
set_preview_item (FmResultsPanel *self, FmResultsItem *item)
{
  if (self->preview_item == item)
    return;
  if (self->preview_item != NULL)
    g_clear_signal_handler (&self->preview_handler, self->preview_item);
  g_set_object (&self->preview_item, item);
  if (item != NULL)
    self->preview_handler = g_signal_connect (item, "notify::latex", G_CALLBACK (preview_item_notify), self);
  update_preview (self);
}

/* The one selected item (borrowed), or NULL when none or several are. */
static FmResultsItem *
single_selected (FmResultsPanel *self)
{
  g_autoptr(GtkBitset) set = gtk_selection_model_get_selection (GTK_SELECTION_MODEL (self->selection));
  g_autoptr(FmResultsItem) item = NULL;

  if (gtk_bitset_get_size (set) != 1)
    return NULL;
  item = g_list_model_get_item (G_LIST_MODEL (self->filtered), gtk_bitset_get_minimum (set));
  return item;   /* the list keeps it */
}

static void
selection_changed (GtkSelectionModel *selection, guint position, guint n_items, FmResultsPanel *self)
{
  /* A plain click (one row) shows it on the page; Ctrl/Shift+click adding
   * rows for an export leaves the page where it is. */
  FmResultsItem *item = single_selected (self);

  set_preview_item (self, item);

  if (!self->selecting && item != NULL)
    g_signal_emit (self, signals[SIGNAL_ITEM_SELECTED], 0, item);
}

static void
copy_all_clicked (GtkButton *button, FmResultsPanel *self)
{
  g_autofree char *all = NULL;

  /* The window's Copy All says so with a toast; a panel outside a window
   * copies by itself. */
  if (gtk_widget_activate_action (GTK_WIDGET (self), "win.copy-all", NULL))
    return;
  all = fm_results_panel_dup_all_latex (self);
  gdk_clipboard_set_text (gtk_widget_get_clipboard (GTK_WIDGET (self)), all);
}

static void
low_only_toggled (GtkToggleButton *button, FmResultsPanel *self)
{
  fm_results_panel_refilter (self);
}

static void
items_changed (GListModel *model, guint position, guint removed, guint added, FmResultsPanel *self)
{
  update_count (self);
}

static void
fm_results_panel_dispose (GObject *object)
{
  FmResultsPanel *self = FM_RESULTS_PANEL (object);

  if (self->filtered)
    g_signal_handlers_disconnect_by_func (self->filtered, items_changed, self);
  if (self->preview_item != NULL)
    g_clear_signal_handler (&self->preview_handler, self->preview_item);
  g_clear_object (&self->preview_item);
  if (self->scroll_tick != 0)
    gtk_widget_remove_tick_callback (self->list_view, self->scroll_tick);
  self->scroll_tick = 0;
  g_clear_object (&self->scroll_item);
  gtk_widget_dispose_template (GTK_WIDGET (self), FM_TYPE_RESULTS_PANEL);
  g_clear_object (&self->selection);
  g_clear_object (&self->items);
  G_OBJECT_CLASS (fm_results_panel_parent_class)->dispose (object);
}

static void
fm_results_panel_class_init (FmResultsPanelClass *klass)
{
  GtkWidgetClass *widget_class = GTK_WIDGET_CLASS (klass);

  G_OBJECT_CLASS (klass)->dispose = fm_results_panel_dispose;
  gtk_widget_class_set_template_from_resource (widget_class, "/io/github/formulate/Formulate/ui/fm-results-panel.ui");
  gtk_widget_class_bind_template_child (widget_class, FmResultsPanel, box);
  gtk_widget_class_bind_template_child (widget_class, FmResultsPanel, count_label);
  gtk_widget_class_bind_template_child (widget_class, FmResultsPanel, low_only_button);
  gtk_widget_class_bind_template_child (widget_class, FmResultsPanel, page_only_button);
  gtk_widget_class_bind_template_child (widget_class, FmResultsPanel, filter_button);
  gtk_widget_class_bind_template_child (widget_class, FmResultsPanel, page_only_check);
  gtk_widget_class_bind_template_child (widget_class, FmResultsPanel, displays_only_check);
  gtk_widget_class_bind_template_child (widget_class, FmResultsPanel, low_only_check);
  gtk_widget_class_bind_template_child (widget_class, FmResultsPanel, hide_tiny_check);
  gtk_widget_class_bind_template_child (widget_class, FmResultsPanel, list_scroller);
  gtk_widget_class_bind_template_child (widget_class, FmResultsPanel, copy_all_button);
  gtk_widget_class_bind_template_child (widget_class, FmResultsPanel, stack);
  gtk_widget_class_bind_template_child (widget_class, FmResultsPanel, list_view);
  gtk_widget_class_bind_template_child (widget_class, FmResultsPanel, preview_revealer);
  gtk_widget_class_bind_template_child (widget_class, FmResultsPanel, preview_box);
  gtk_widget_class_set_layout_manager_type (widget_class, GTK_TYPE_BIN_LAYOUT);

  signals[SIGNAL_ITEM_SELECTED] =
    g_signal_new ("item-selected", G_TYPE_FROM_CLASS (klass), G_SIGNAL_RUN_LAST, 0, NULL, NULL, NULL,
                  G_TYPE_NONE, 1, FM_TYPE_RESULTS_ITEM);
}

static void
fm_results_panel_init (FmResultsPanel *self)
{
  GtkListItemFactory *factory;

  g_type_ensure (ADW_TYPE_STATUS_PAGE);
  gtk_widget_init_template (GTK_WIDGET (self));
  self->low_threshold = 0.6;

  self->filter = gtk_custom_filter_new (filter_func, self, NULL);
  self->filtered = gtk_filter_list_model_new (NULL, GTK_FILTER (self->filter));
  self->selection = gtk_multi_selection_new (G_LIST_MODEL (self->filtered));
  g_signal_connect (self->selection, "selection-changed", G_CALLBACK (selection_changed), self);
  g_signal_connect (self->filtered, "items-changed", G_CALLBACK (items_changed), self);

  factory = gtk_signal_list_item_factory_new ();
  g_signal_connect (factory, "setup", G_CALLBACK (setup_row), self);
  g_signal_connect (factory, "bind", G_CALLBACK (bind_row), self);
  g_signal_connect (factory, "unbind", G_CALLBACK (unbind_row), self);
  gtk_list_view_set_factory (GTK_LIST_VIEW (self->list_view), factory);
  g_object_unref (factory);
  /* transfer none: an extra reference here kept the selection, and through
   * it every results item and its crop texture, alive after the tab closed. */
  gtk_list_view_set_model (GTK_LIST_VIEW (self->list_view), GTK_SELECTION_MODEL (self->selection));

  g_signal_connect (self->copy_all_button, "clicked", G_CALLBACK (copy_all_clicked), self);
  g_signal_connect (self->low_only_button, "toggled", G_CALLBACK (low_only_toggled), self);
  g_signal_connect (self->page_only_button, "toggled", G_CALLBACK (low_only_toggled), self);
  g_signal_connect_swapped (self->displays_only_check, "toggled", G_CALLBACK (fm_results_panel_refilter), self);
  g_signal_connect_swapped (self->hide_tiny_check, "toggled", G_CALLBACK (fm_results_panel_refilter), self);
  /* The menu's check buttons and the header's toggles are one setting each. */
  g_object_bind_property (self->low_only_button, "active", self->low_only_check, "active",
                          G_BINDING_BIDIRECTIONAL | G_BINDING_SYNC_CREATE);
  g_object_bind_property (self->page_only_button, "active", self->page_only_check, "active",
                          G_BINDING_BIDIRECTIONAL | G_BINDING_SYNC_CREATE);
  update_count (self);
}

void
fm_results_panel_set_preview_enabled (FmResultsPanel *self, gboolean enabled)
{
  self->preview_enabled = enabled;
  update_preview (self);
}

GtkWidget *
fm_results_panel_get_preview (FmResultsPanel *self)
{
  return self->preview;
}

GtkWidget *
fm_results_panel_new (void)
{
  return g_object_new (FM_TYPE_RESULTS_PANEL, NULL);
}

void
fm_results_panel_set_items (FmResultsPanel *self, GListModel *items)
{
  g_set_object (&self->items, items);
  gtk_filter_list_model_set_model (self->filtered, items);
  update_count (self);
}

void
fm_results_panel_set_low_threshold (FmResultsPanel *self, double threshold)
{
  self->low_threshold = threshold;
  fm_results_panel_refilter (self);
}

GPtrArray *
fm_results_panel_dup_selected (FmResultsPanel *self)
{
  g_autoptr(GtkBitset) set = gtk_selection_model_get_selection (GTK_SELECTION_MODEL (self->selection));
  GPtrArray *items = g_ptr_array_new_with_free_func (g_object_unref);
  GtkBitsetIter iter;
  guint i;

  for (gboolean ok = gtk_bitset_iter_init_first (&iter, set, &i); ok; ok = gtk_bitset_iter_next (&iter, &i))
    g_ptr_array_add (items, g_list_model_get_item (G_LIST_MODEL (self->filtered), i));
  return items;
}

void
fm_results_panel_select_range (FmResultsPanel *self, guint first, guint n)
{
  self->selecting = TRUE;
  gtk_selection_model_select_range (GTK_SELECTION_MODEL (self->selection), first, n, TRUE);
  self->selecting = FALSE;
}

void
fm_results_panel_select (FmResultsPanel *self, FmResultsItem *item)
{
  guint n = g_list_model_get_n_items (G_LIST_MODEL (self->filtered));

  self->selecting = TRUE;
  gtk_selection_model_unselect_all (GTK_SELECTION_MODEL (self->selection));
  for (guint i = 0; i < n && item != NULL; i++)
    {
      g_autoptr(FmResultsItem) candidate = g_list_model_get_item (G_LIST_MODEL (self->filtered), i);
      if (candidate == item)
        {
          gtk_selection_model_select_item (GTK_SELECTION_MODEL (self->selection), i, TRUE);
          gtk_widget_activate_action (self->list_view, "list.scroll-to-item", "u", i);
          break;
        }
    }
  self->selecting = FALSE;
}

char *
fm_results_panel_dup_all_latex (FmResultsPanel *self)
{
  GString *all = g_string_new (NULL);
  guint n = self->items ? g_list_model_get_n_items (self->items) : 0;

  for (guint i = 0; i < n; i++)
    {
      g_autoptr(FmResultsItem) item = g_list_model_get_item (self->items, i);
      const char *latex = fm_results_item_get_latex (item);
      if (latex != NULL && *latex != '\0')
        g_string_append_printf (all, "%s\n", latex);
    }
  return g_string_free (all, FALSE);
}

void
fm_results_panel_refilter (FmResultsPanel *self)
{
  gtk_filter_changed (GTK_FILTER (self->filter), GTK_FILTER_CHANGE_DIFFERENT);
  update_count (self);
}

/* Whether a change of an item's PROPERTY can change what the list shows.
 * Results arrive as latex/confidence/state/crop notifications on every item;
 * refiltering for each batch re-ran the filter over the whole list while only
 * the "to check" filter looks at results. */
gboolean
fm_results_panel_filter_follows (FmResultsPanel *self, const char *property)
{
  if (g_str_equal (property, "page"))
    return TRUE;
  if (g_str_equal (property, "state") || g_str_equal (property, "confidence"))
    return gtk_toggle_button_get_active (GTK_TOGGLE_BUTTON (self->low_only_button));
  return FALSE;
}

guint
fm_results_panel_get_n_shown (FmResultsPanel *self)
{
  return g_list_model_get_n_items (G_LIST_MODEL (self->filtered));
}

void
fm_results_panel_set_low_only (FmResultsPanel *self, gboolean low_only)
{
  gtk_toggle_button_set_active (GTK_TOGGLE_BUTTON (self->low_only_button), low_only);
}

void
fm_results_panel_set_filter (FmResultsPanel *self, FmResultsFilter filter, gboolean active)
{
  switch (filter)
    {
    case FM_RESULTS_FILTER_PAGE:
      gtk_toggle_button_set_active (GTK_TOGGLE_BUTTON (self->page_only_button), active);
      break;
    case FM_RESULTS_FILTER_DISPLAYS:
      gtk_check_button_set_active (GTK_CHECK_BUTTON (self->displays_only_check), active);
      break;
    case FM_RESULTS_FILTER_TO_CHECK:
      gtk_toggle_button_set_active (GTK_TOGGLE_BUTTON (self->low_only_button), active);
      break;
    case FM_RESULTS_FILTER_NO_TINY:
      gtk_check_button_set_active (GTK_CHECK_BUTTON (self->hide_tiny_check), active);
      break;
    default:
      g_return_if_reached ();
    }
}

/* After "list.scroll-to-item" has brought the row into view and the list
 * was laid out: scrolls so the row is at the top. A few frames at most. */
static gboolean
scroll_item_to_top (GtkWidget *list_view, GdkFrameClock *clock, gpointer data)
{
  FmResultsPanel *self = data;
  GtkAdjustment *adj = gtk_scrolled_window_get_vadjustment (GTK_SCROLLED_WINDOW (self->list_scroller));

  for (GtkWidget *child = gtk_widget_get_first_child (list_view); child != NULL;
       child = gtk_widget_get_next_sibling (child))
    {
      GtkWidget *row = gtk_widget_get_first_child (child);
      graphene_rect_t bounds;

      if (row != NULL && FM_IS_RESULTS_ROW (row) && fm_results_row_get_item (FM_RESULTS_ROW (row)) == self->scroll_item &&
          gtk_widget_get_mapped (row) && gtk_widget_compute_bounds (child, list_view, &bounds))
        {
          gtk_adjustment_set_value (adj, gtk_adjustment_get_value (adj) + bounds.origin.y);
          break;
        }
    }
  if (++self->scroll_tries < 3)
    return G_SOURCE_CONTINUE;
  g_clear_object (&self->scroll_item);
  self->scroll_tick = 0;
  return G_SOURCE_REMOVE;
}

void
fm_results_panel_show_page (FmResultsPanel *self, int page)
{
  FmResultsItem *selected = single_selected (self);
  guint n;

  if (page == self->current_page)
    return;
  self->current_page = page;
  if (gtk_toggle_button_get_active (GTK_TOGGLE_BUTTON (self->page_only_button)))
    {
      fm_results_panel_refilter (self);
      return;
    }
  /* The page came to the selected formula (a click in this list): stay. */
  if (selected != NULL && fm_results_item_get_page (selected) == page)
    return;
  n = g_list_model_get_n_items (G_LIST_MODEL (self->filtered));
  for (guint i = 0; i < n; i++)
    {
      g_autoptr(FmResultsItem) item = g_list_model_get_item (G_LIST_MODEL (self->filtered), i);
      if (fm_results_item_get_page (item) >= page)
        {
          /* The page's first formula at the top of the list, as far as the
           * list goes ("list.scroll-to-item" would only bring it into view,
           * at the bottom when scrolling down). Rows are as tall as their
           * crops: the row's own position is not known before it is drawn,
           * so scroll to it, then put it on top. */
          gtk_widget_activate_action (self->list_view, "list.scroll-to-item", "u", i);
          g_set_object (&self->scroll_item, item);
          self->scroll_tries = 0;
          if (self->scroll_tick == 0)
            self->scroll_tick = gtk_widget_add_tick_callback (self->list_view, scroll_item_to_top, self, NULL);
          break;
        }
    }
}

int
fm_results_panel_get_current_page (FmResultsPanel *self)
{
  return self->current_page;
}

GtkAdjustment *
fm_results_panel_get_vadjustment (FmResultsPanel *self)
{
  return gtk_scrolled_window_get_vadjustment (GTK_SCROLLED_WINDOW (self->list_scroller));
}
