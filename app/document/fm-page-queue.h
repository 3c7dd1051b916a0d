/* fm-page-queue.h - pages detected ahead on worker threads, taken in order.
 *
 * The window and formulate-cli both detect a document's pages on
 * fm_detect_thread_count() threads (a page without a text layer keeps
 * Tesseract busy for about a second, docs/scanned.md; each thread reads
 * with its own Tesseract instance) while the caller takes the results in
 * page order: the window to fill its list from the top, the CLI to
 * recognise and write page after page. At most twice as many pages as
 * threads are detected ahead of the one last taken.
 */
#pragma once

#include "fm-detect.h"
#include "fm-scan.h"

G_BEGIN_DECLS

typedef struct {
  GPtrArray    *regions;  /* FmRegion*, the taker's; NULL on error */
  FmPageSource  source;   /* what the regions were found in */
  GError       *error;    /* the taker's; why regions is NULL */
  double        ms;       /* wall time of this page's detection */
} FmPageDetection;

typedef struct _FmPageQueue FmPageQueue;

/* Polled before a page's detection starts: TRUE stops the run (that page
 * and later ones come back with G_IO_ERROR_CANCELLED). */
typedef gboolean (*FmPageQueueStop) (gpointer user_data);

/* Detects pages[0 .. n_pages) of doc (0-based indices, any order) with
 * options (NULL: the defaults; copied). doc must outlive the queue. */
FmPageQueue     *fm_page_queue_new  (FmDocument            *doc,
                                     const FmDetectOptions *options,
                                     const int             *pages,
                                     guint                  n_pages,
                                     FmPageQueueStop        stop,
                                     gpointer               stop_data);
/* Starts the detection of the first page now, without waiting for it:
 * formulate-cli loads the model meanwhile. fm_page_queue_take (queue, 0)
 * starts the pages after it. */
void             fm_page_queue_start (FmPageQueue          *queue);
/* The detection of pages[i], waiting for it; take each i once, in order. */
FmPageDetection  fm_page_queue_take (FmPageQueue           *queue,
                                     guint                  i);
/* Pages queued and not started are dropped; running ones finish first. */
void             fm_page_queue_free (FmPageQueue           *queue);

G_END_DECLS
