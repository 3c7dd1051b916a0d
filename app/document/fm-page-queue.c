/* fm-page-queue.c - pages detected ahead on worker threads (fm-page-queue.h). */
#include "fm-page-queue.h"

#include "fm-detect.h"
#include "fm-document.h"

struct _FmPageQueue {
  FmDocument      *doc;
  FmDetectOptions  options;
  int             *pages;
  guint            n_pages;
  FmPageQueueStop  stop;
  gpointer         stop_data;
  FmPageDetection *slots;    /* one per index, filled by the pool */
  gboolean        *done;
  GThreadPool     *pool;
  guint            pushed;   /* indices handed to the pool */
  guint            ahead;    /* how many may be in flight */
  GMutex           lock;
  GCond            cond;
};

static void
detect_work (gpointer data, gpointer user_data)
{
  FmPageQueue *q = user_data;
  guint i = GPOINTER_TO_UINT (data) - 1;
  int page = q->pages[i];
  FmPageDetection d = { NULL, FM_PAGE_SOURCE_TEXT_LAYER, NULL, 0 };
  gint64 t0 = g_get_monotonic_time ();

  if ((q->stop == NULL || !q->stop (q->stop_data)) &&
      fm_document_get_page_size (q->doc, page, NULL, NULL, &d.error))
    d.regions = fm_detect_page_any (q->doc, page, &q->options, &d.source, &d.error);
  else if (d.error == NULL)
    g_set_error (&d.error, G_IO_ERROR, G_IO_ERROR_CANCELLED, "interrupted");
  d.ms = (g_get_monotonic_time () - t0) / 1000.0;
  g_mutex_lock (&q->lock);
  q->slots[i] = d;
  q->done[i] = TRUE;
  g_cond_broadcast (&q->cond);
  g_mutex_unlock (&q->lock);
}

FmPageQueue *
fm_page_queue_new (FmDocument            *doc,
                   const FmDetectOptions *options,
                   const int             *pages,
                   guint                  n_pages,
                   FmPageQueueStop        stop,
                   gpointer               stop_data)
{
  FmPageQueue *q = g_new0 (FmPageQueue, 1);
  guint threads = fm_detect_thread_count ();

  q->doc = doc;
  q->options = options ? *options : fm_detect_default_options ();
  q->pages = g_memdup2 (pages, MAX (n_pages, 1) * sizeof *pages);
  q->n_pages = n_pages;
  q->stop = stop;
  q->stop_data = stop_data;
  q->slots = g_new0 (FmPageDetection, MAX (n_pages, 1));
  q->done = g_new0 (gboolean, MAX (n_pages, 1));
  q->ahead = 2 * threads;
  g_mutex_init (&q->lock);
  g_cond_init (&q->cond);
  q->pool = g_thread_pool_new (detect_work, q, (int) threads, FALSE, NULL);
  return q;
}

/* Pages up to @limit (counted from 1) handed to the pool, in order. */
static void
push_up_to (FmPageQueue *q, guint limit)
{
  while (q->pushed < MIN (limit, q->n_pages))
    g_thread_pool_push (q->pool, GUINT_TO_POINTER (++q->pushed), NULL);
}

void
fm_page_queue_start (FmPageQueue *q)
{
  /* The first page only: what the caller does meanwhile (formulate-cli
   * loads the model) is on the path to the first result as much as that
   * page is, and on two cores the pages after it would take its core. */
  push_up_to (q, 1);
}

FmPageDetection
fm_page_queue_take (FmPageQueue *q, guint i)
{
  FmPageDetection d;

  g_return_val_if_fail (i < q->n_pages, (FmPageDetection) { 0 });
  push_up_to (q, i + q->ahead);
  g_mutex_lock (&q->lock);
  while (!q->done[i])
    g_cond_wait (&q->cond, &q->lock);
  d = q->slots[i];
  q->slots[i].regions = NULL;
  q->slots[i].error = NULL;
  g_mutex_unlock (&q->lock);
  return d;
}

void
fm_page_queue_free (FmPageQueue *q)
{
  if (q == NULL)
    return;
  g_thread_pool_free (q->pool, TRUE, TRUE);
  /* The pool's threads outlive the queue: their pages' maps must not. */
  fm_detect_release_scratch ();
  for (guint i = 0; i < q->n_pages; i++)
    {
      g_clear_pointer (&q->slots[i].regions, g_ptr_array_unref);
      g_clear_error (&q->slots[i].error);
    }
  g_mutex_clear (&q->lock);
  g_cond_clear (&q->cond);
  g_free (q->slots);
  g_free (q->done);
  g_free (q->pages);
  g_free (q);
}
