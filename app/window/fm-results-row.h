/* fm-results-row.h - one row of the results panel: crop, LaTeX, confidence, copy. */
#pragma once

#include <gtk/gtk.h>

#include "fm-results-item.h"

G_BEGIN_DECLS

#define FM_TYPE_RESULTS_ROW (fm_results_row_get_type ())
G_DECLARE_FINAL_TYPE (FmResultsRow, fm_results_row, FM, RESULTS_ROW, GtkWidget)

GtkWidget     *fm_results_row_new (void);
/* Rows are recycled by the list view: set_item rebinds to another item. */
void           fm_results_row_set_item (FmResultsRow *self, FmResultsItem *item);
FmResultsItem *fm_results_row_get_item (FmResultsRow *self);
/* The equation number shown beside the LaTeX ("(3.1)"), or NULL when none is shown. */
const char    *fm_results_row_get_number_text (FmResultsRow *self);
/* The LaTeX's wrapping GtkLabel and the crop's GtkPicture (tests, screenshots). */
GtkWidget     *fm_results_row_get_latex_label (FmResultsRow *self);
GtkWidget     *fm_results_row_get_crop_picture (FmResultsRow *self);
/* As the row's Edit button does: the LaTeX in an entry, focused; the entry
 * while editing, else NULL. */
void           fm_results_row_edit (FmResultsRow *self);
GtkWidget     *fm_results_row_get_entry (FmResultsRow *self);
void           fm_results_row_set_low_threshold (FmResultsRow *self, double threshold);

G_END_DECLS
