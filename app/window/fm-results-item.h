/* fm-results-item.h - one formula region of a document and what the engine made of it.
 *
 * Lives on the main thread only: the engine worker copies what it needs (page,
 * rectangle, font size) when the item is queued and hands results back through
 * the main loop, so no property of an item ever changes on another thread. */
#pragma once

#include <gtk/gtk.h>

#include "fm-region.h"

G_BEGIN_DECLS

typedef enum {
  FM_RESULT_STATE_WAITING = 0, /* found, not yet recognised */
  FM_RESULT_STATE_RUNNING,     /* in the engine's current batch */
  FM_RESULT_STATE_DONE,
  FM_RESULT_STATE_FAILED,      /* the engine returned an error for it */
} FmResultState;

#define FM_TYPE_RESULT_STATE (fm_result_state_get_type ())
GType fm_result_state_get_type (void);

#define FM_TYPE_RESULTS_ITEM (fm_results_item_get_type ())
G_DECLARE_FINAL_TYPE (FmResultsItem, fm_results_item, FM, RESULTS_ITEM, GObject)

/* Takes a copy of region (the PDF library's detection result). */
FmResultsItem *fm_results_item_new (const FmRegion *region,
                                    gboolean        manual);
/* The region with latex and confidence kept in step with the item, for export. */
const FmRegion *fm_results_item_get_region (FmResultsItem *self);

int            fm_results_item_get_page       (FmResultsItem *self);
void           fm_results_item_get_rect       (FmResultsItem *self, graphene_rect_t *rect);
FmRegionKind   fm_results_item_get_kind       (FmResultsItem *self);
/* FALSE for an equation number: drawn on the page, never recognised, listed or counted. */
gboolean       fm_results_item_is_formula     (FmResultsItem *self);
/* A display formula's equation number ("(3.1)", the text layer's string), or NULL. */
const char    *fm_results_item_get_number     (FmResultsItem *self);
void           fm_results_item_set_number     (FmResultsItem *self, const char *number);
double         fm_results_item_get_font_size  (FmResultsItem *self);
gboolean       fm_results_item_get_manual     (FmResultsItem *self);
FmResultState  fm_results_item_get_state      (FmResultsItem *self);
void           fm_results_item_set_state      (FmResultsItem *self, FmResultState state);
const char    *fm_results_item_get_latex      (FmResultsItem *self);
/* Edited by the user or filled by the engine. A change of a recognised
 * formula is the user's edit: "edited" (old latex, old edited flag) is emitted. */
void           fm_results_item_set_latex      (FmResultsItem *self, const char *latex);
/* Puts back an earlier LaTeX and edited flag (undo): no "edited" emission. */
void           fm_results_item_restore_latex  (FmResultsItem *self, const char *latex, gboolean edited);
/* The engine's confidence (FeResult.confidence: calibrated probability of a
 * right reading, or the mean token probability for an uncalibrated model), or
 * a negative value before recognition. */
double         fm_results_item_get_confidence (FmResultsItem *self);
void           fm_results_item_set_result     (FmResultsItem *self,
                                               const char    *latex,
                                               double         confidence,
                                               double         confidence_min);
/* Where the LaTeX came from; set by the engine worker just before the result. */
FmProvenance   fm_results_item_get_provenance (FmResultsItem *self);
void           fm_results_item_set_provenance (FmResultsItem *self, FmProvenance provenance);
void           fm_results_item_set_failed     (FmResultsItem *self, const char *message);
const char    *fm_results_item_get_error      (FmResultsItem *self);
/* Low confidence: recognised with confidence below threshold. */
gboolean       fm_results_item_is_low_confidence (FmResultsItem *self, double threshold);
GdkTexture    *fm_results_item_get_crop       (FmResultsItem *self);
void           fm_results_item_set_crop       (FmResultsItem *self, GdkTexture *crop);
gboolean       fm_results_item_get_edited     (FmResultsItem *self);

G_END_DECLS
