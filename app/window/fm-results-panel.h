/* fm-results-panel.h - the side panel listing a document's formulas. */
#pragma once

#include <gtk/gtk.h>

#include "fm-results-item.h"

G_BEGIN_DECLS

#define FM_TYPE_RESULTS_PANEL (fm_results_panel_get_type ())
G_DECLARE_FINAL_TYPE (FmResultsPanel, fm_results_panel, FM, RESULTS_PANEL, GtkWidget)

GtkWidget *fm_results_panel_new (void);
/* A GListModel of FmResultsItem. */
void       fm_results_panel_set_items (FmResultsPanel *self, GListModel *items);
void       fm_results_panel_set_low_threshold (FmResultsPanel *self, double threshold);
/* Selects item's row and scrolls to it (no "item-selected" emission). */
void       fm_results_panel_select (FmResultsPanel *self, FmResultsItem *item);
/* The selected items (Ctrl/Shift+click select several), in list order; owning. */
GPtrArray *fm_results_panel_dup_selected (FmResultsPanel *self);
/* Selects n listed rows from position first, as Shift+click does (tests). */
void       fm_results_panel_select_range (FmResultsPanel *self, guint first, guint n);
/* Every recognised formula's LaTeX, one per line, in document order. */
char      *fm_results_panel_dup_all_latex (FmResultsPanel *self);
/* Call when confidences changed, so "Show only low-confidence" refilters. */
void       fm_results_panel_refilter (FmResultsPanel *self);
gboolean fm_results_panel_filter_follows (FmResultsPanel *self, const char *property);
/* Typeset preview of the selected formula; does nothing in builds without
 * WebKitGTK/KaTeX. */
void       fm_results_panel_set_preview_enabled (FmResultsPanel *self, gboolean enabled);
/* The FmResultsPreview, or NULL (not built, or never enabled). */
GtkWidget *fm_results_panel_get_preview (FmResultsPanel *self);
/* The "Show only low-confidence" toggle. */
void       fm_results_panel_set_low_only (FmResultsPanel *self, gboolean low_only);
/* Which formulas are listed: each filter on or off (they combine). */
typedef enum {
  FM_RESULTS_FILTER_PAGE,       /* only the page being read */
  FM_RESULTS_FILTER_DISPLAYS,   /* only display formulas */
  FM_RESULTS_FILTER_TO_CHECK,   /* only low confidence or failed ("Show only low-confidence") */
  FM_RESULTS_FILTER_NO_TINY,    /* no regions of one or two glyphs */
} FmResultsFilter;
void       fm_results_panel_set_filter (FmResultsPanel *self, FmResultsFilter filter, gboolean active);
/* Narrower than this many glyph heights: a "tiny" region (FM_RESULTS_FILTER_NO_TINY). */
#define FM_RESULTS_TINY_EM 2.0
gboolean   fm_results_panel_item_is_tiny (FmResultsItem *item);
/* The page being read changed: with "this page only" the list shows that
 * page; otherwise it scrolls its first formula to the top, unless the page
 * came to the list's selected formula. */
void       fm_results_panel_show_page (FmResultsPanel *self, int page);
int        fm_results_panel_get_current_page (FmResultsPanel *self);
/* The list's scroll position (tests). */
GtkAdjustment *fm_results_panel_get_vadjustment (FmResultsPanel *self);
/* Number of rows shown (after the filter). */
guint      fm_results_panel_get_n_shown (FmResultsPanel *self);

G_END_DECLS
