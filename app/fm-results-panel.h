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
/* Every recognised formula's LaTeX, one per line, in document order. */
char      *fm_results_panel_dup_all_latex (FmResultsPanel *self);
/* Call when confidences changed, so "Show only low-confidence" refilters. */
void       fm_results_panel_refilter (FmResultsPanel *self);
/* Typeset preview of the selected formula; does nothing in builds without
 * WebKitGTK/KaTeX. */
void       fm_results_panel_set_preview_enabled (FmResultsPanel *self, gboolean enabled);
/* The FmResultsPreview, or NULL (not built, or never enabled). */
GtkWidget *fm_results_panel_get_preview (FmResultsPanel *self);
/* The "Show only low-confidence" toggle. */
void       fm_results_panel_set_low_only (FmResultsPanel *self, gboolean low_only);
/* Number of rows shown (after the filter). */
guint      fm_results_panel_get_n_shown (FmResultsPanel *self);

G_END_DECLS
