/* fm-document-tab.h - one open document: pages, thumbnails, formulas, results. */
#pragma once

#include <gtk/gtk.h>

#include "fm-document.h"
#include "fm-engine-worker.h"
#include "fm-page-view.h"
#include "fm-results-panel.h"

G_BEGIN_DECLS

#define FM_TYPE_DOCUMENT_TAB (fm_document_tab_get_type ())
G_DECLARE_FINAL_TYPE (FmDocumentTab, fm_document_tab, FM, DOCUMENT_TAB, GtkWidget)

/* Starts opening file off the main thread; "loaded" or "load-failed" follows. */
FmDocumentTab  *fm_document_tab_new (GFile          *file,
                                     const char     *password,
                                     FmEngineWorker *worker,
                                     GSettings      *settings);
GFile          *fm_document_tab_get_file (FmDocumentTab *self);
/* NULL until loaded. */
FmDocument     *fm_document_tab_get_document (FmDocumentTab *self);
const char     *fm_document_tab_get_title (FmDocumentTab *self);
/* A GListModel of FmResultsItem in page order. */
GListModel     *fm_document_tab_get_items (FmDocumentTab *self);
FmPageView     *fm_document_tab_get_page_view (FmDocumentTab *self);
FmResultsPanel *fm_document_tab_get_results_panel (FmDocumentTab *self);
gboolean        fm_document_tab_get_detecting (FmDocumentTab *self);
/* Pages whose formulas have been looked for so far. */
int             fm_document_tab_get_pages_detected (FmDocumentTab *self);
/* Why detection found nothing on page (e.g. no text layer), or NULL. */
const char     *fm_document_tab_get_page_note (FmDocumentTab *self, int page);
/* What page's regions were found in ("text layer", "pixels", "blank"), or
 * NULL before it is detected; how many pages were read from pixels. */
const char     *fm_document_tab_get_page_source (FmDocumentTab *self, int page);
int             fm_document_tab_get_pages_from_pixels (FmDocumentTab *self);

/* Queues every formula not yet recognised (the current page first);
 * returns how many it queued. */
guint           fm_document_tab_recognize (FmDocumentTab *self);
/* Remembers the page and zoom for the next time this file is opened
 * ($XDG_STATE_HOME/formulate/positions.ini); closing the tab does it too. */
void            fm_document_tab_save_position (FmDocumentTab *self);
/* That file's path (newly allocated; any thread). */
char           *fm_document_tab_positions_path (void);
/* The tab is closing: stops opening, detection and recognition for good,
 * so nothing running keeps the tab or its document alive. */
void            fm_document_tab_stop (FmDocumentTab *self);
/* Find: shows the search bar with the focus in it. */
void            fm_document_tab_show_find (FmDocumentTab *self);
/* Looks for text on every page off the main thread ("finding" is TRUE until
 * the hits are in); NULL or "" clears the marks. */
void            fm_document_tab_find (FmDocumentTab *self, const char *text);
gboolean        fm_document_tab_get_finding (FmDocumentTab *self);
/* The next (or previous) match, scrolled into view; wraps around. */
void            fm_document_tab_find_next (FmDocumentTab *self, gboolean forward);
/* FmPageHit of every match (NULL before a search) and the current one. */
const GArray   *fm_document_tab_get_hits (FmDocumentTab *self, int *current);
GtkWidget      *fm_document_tab_get_search_entry (FmDocumentTab *self);

/* The PDF's outline in the sidebar (0 entries: none, the page is hidden). */
guint           fm_document_tab_get_n_outline (FmDocumentTab *self);
GtkListBox     *fm_document_tab_get_outline_list (FmDocumentTab *self);
void            fm_document_tab_show_outline (FmDocumentTab *self);

/* Undo of deletions and of edits of a formula's LaTeX ("can-undo" property). */
gboolean        fm_document_tab_can_undo (FmDocumentTab *self);
gboolean        fm_document_tab_undo (FmDocumentTab *self);
/* Recognised results or edits that were not exported since they changed. */
gboolean        fm_document_tab_has_unsaved (FmDocumentTab *self);
/* A count of the results, edits and deletions so far; an export of the
 * document as it was at count changes calls mark_exported with it. */
guint           fm_document_tab_get_changes (FmDocumentTab *self);
void            fm_document_tab_mark_exported (FmDocumentTab *self, guint changes);
/* Removes the selected region (undoable); FALSE when none was selected. */
gboolean        fm_document_tab_delete_selected (FmDocumentTab *self);
void            fm_document_tab_set_thumbnails_visible (FmDocumentTab *self, gboolean visible);
/* Adds a region by hand (what a drag on the page does). */
FmResultsItem  *fm_document_tab_add_region (FmDocumentTab         *self,
                                            int                    page,
                                            const graphene_rect_t *rect);

G_END_DECLS
