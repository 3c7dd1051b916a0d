/* fm-page-view.h - the pages of one document, scrolled, zoomed, with formula boxes.
 *
 * One widget draws every page (GtkScrollable: put it in a GtkScrolledWindow) so
 * only the visible pages are rendered, each off the main thread through
 * fm_render_page_rect_async at zoom x the monitor's scale factor. Boxes of the
 * document's formulas are drawn over the pages: display formulas and inline
 * ones in two colours, their state (waiting, running, done, low confidence,
 * failed) in the line style. Click a box to select it, drag on a page to draw a
 * new region by hand. With "thumbnails" set it becomes the sidebar: small pages,
 * no boxes, a click activates a page.
 */
#pragma once

#include <gtk/gtk.h>

#include "fm-document.h"
#include "fm-results-item.h"

G_BEGIN_DECLS

#define FM_TYPE_PAGE_VIEW (fm_page_view_get_type ())
G_DECLARE_FINAL_TYPE (FmPageView, fm_page_view, FM, PAGE_VIEW, GtkWidget)

GtkWidget     *fm_page_view_new (void);

/* sizes: n_pages (width, height) pairs in points, read off the main thread
 * beforehand (reading them here would wait on the document's Poppler lock). */
void           fm_page_view_set_document (FmPageView   *self,
                                          FmDocument   *document,
                                          const double *sizes,
                                          int           n_pages);
/* A GListModel of FmResultsItem, the boxes to draw. */
void           fm_page_view_set_items (FmPageView *self, GListModel *items);

void           fm_page_view_set_low_threshold (FmPageView *self, double threshold);
void           fm_page_view_set_thumbnails (FmPageView *self, gboolean thumbnails);

double         fm_page_view_get_zoom (FmPageView *self);
void           fm_page_view_set_zoom (FmPageView *self, double zoom);
void           fm_page_view_zoom_in (FmPageView *self);
void           fm_page_view_zoom_out (FmPageView *self);
/* Zoom follows the widget's width until the next explicit zoom. */
void           fm_page_view_set_fit_width (FmPageView *self, gboolean fit_width);
gboolean       fm_page_view_get_fit_width (FmPageView *self);
/* Zoom follows the widget's size so a whole page shows, until the next explicit zoom. */
void           fm_page_view_set_fit_page (FmPageView *self, gboolean fit_page);
gboolean       fm_page_view_get_fit_page (FmPageView *self);
/* The zoom at which the widest of n_pages (width, height) point sizes fills
 * a view width pixels wide, as fit-width does; fallback when it cannot (no
 * pages, no width). Any thread. */
double         fm_page_view_fit_width_zoom_for (const double *sizes, int n_pages, int width,
                                                double fallback);
/* Goes to page once the pages are laid out (a remembered position). */
void           fm_page_view_set_initial_page (FmPageView *self, int page);

/* The page at the top of the view, 0-based. */
int            fm_page_view_get_current_page (FmPageView *self);
void           fm_page_view_go_to_page (FmPageView *self, int page);

FmResultsItem *fm_page_view_get_selected (FmPageView *self);
void           fm_page_view_set_selected (FmPageView *self, FmResultsItem *item);
/* Scrolls so the item's box is in view and selects it. */
void           fm_page_view_scroll_to_item (FmPageView *self, FmResultsItem *item);

/* Scrolls so rect (points on page) is in view, if it is not already. */
void           fm_page_view_scroll_to_rect (FmPageView *self, int page, const graphene_rect_t *rect);

/* A match of Find: a rectangle in points on a page (top-left origin). */
typedef struct {
  int page;
  graphene_rect_t rect;
} FmPageHit;
/* Marks every hit (GArray of FmPageHit, or NULL for none) and scrolls to
 * hits[current] (orange; the others yellow). */
void           fm_page_view_set_hits (FmPageView *self, GArray *hits, int current);

/* Pages painted with a finished render so far (tests wait on it). */
guint          fm_page_view_get_n_painted (FmPageView *self);
/* Where page index sits in widget coordinates at the current scroll, for tests
 * that click and drag on it. FALSE when out of range. */
gboolean       fm_page_view_get_page_area (FmPageView      *self,
                                           int              page,
                                           graphene_rect_t *area);

G_END_DECLS
