/* fm-engine-worker.c - the recognition thread: model loads, crops, batches. */
#include "fm-engine-worker.h"

#include <glib/gi18n.h>
#include <errno.h>
#include <math.h>
#include <string.h>
#ifdef __linux__
#include <sys/resource.h>
#include <sys/syscall.h>
#include <unistd.h>
#endif

#include "fm-recognize.h"
#include "fm-region.h"
#include "fm-render.h"

/* Small batches keep results flowing to the window and bound how much work a
 * device switch or a Cancel throws away (the abort callback stops sooner). */
#define FM_ENGINE_BATCH 4
/* The status line wants memory figures about once a second while working. */
#define FM_ENGINE_RUNTIME_INTERVAL_US G_USEC_PER_SEC
/* Nice value of the worker thread (and the engine threads it starts). */
#define FM_ENGINE_NICE 10

typedef struct {
  FmDocument *document;
  FmResultsItem *item;     /* reffed here; only ever read on the main thread */
  int page;
  FmRegion *region;        /* a copy: the thread reads it without the item */
  gboolean cancelled;      /* under the worker lock: Cancel hit its batch */
} Job;

struct _FmEngineWorker {
  GObject parent_instance;

  GMainContext *main_context;  /* where every report goes */
  GThread *thread;

  /* Everything below up to the marker is shared with the thread, under lock. */
  GMutex lock;
  GCond cond;
  gboolean quit;
  GPtrArray *queue;            /* Job*, waiting */
  GPtrArray *running;          /* Job*, the batch in the engine */
  FmDocument *focus_document;  /* weak: compared, never dereferenced */
  int focus_page;
  int beam_width;
  gboolean load_pending;
  char *load_path;
  char *load_device;
  fe_precision load_precision;
  gint abort_requested;        /* atomic: checked by the engine's abort callback */
  /* --- end of shared state --- */

  /* Main thread only. */
  FmEngineState state;
  int done;
  int total;
  gint64 run_started_us;
  int run_done;
  gboolean have_runtime;
  FeRuntimeInfo runtime;
  char *load_error;
  FeDeviceInfo *devices;
  gsize n_devices;
  GHashTable *pending_items;   /* FmResultsItem* -> count of jobs in flight */
};

G_DEFINE_FINAL_TYPE (FmEngineWorker, fm_engine_worker, G_TYPE_OBJECT)

enum {
  SIGNAL_MODEL_LOADED,
  SIGNAL_MODEL_FAILED,
  SIGNAL_FELL_BACK,
  SIGNAL_PROGRESS,
  SIGNAL_RUNTIME_CHANGED,
  SIGNAL_DEVICES_CHANGED,
  SIGNAL_STATE_CHANGED,
  SIGNAL_RECOGNITION_FAILED,
  N_SIGNALS
};
static guint signals[N_SIGNALS];

static void
job_free (Job *job)
{
  g_object_unref (job->document);
  g_object_unref (job->item);
  fm_region_free (job->region);
  g_free (job);
}

/* ---------------------------------------------------------------------- */
/* Reports from the thread to the main context                            */

typedef struct {
  FmEngineWorker *self;
  GPtrArray *jobs;            /* Job*, the batch */
  char **latex;               /* per job, NULL when not finished */
  double *confidence;
  double *confidence_min;
  FmProvenance *provenance;
  char **error;               /* per job, a failure message */
  GBytes **crop_rgb;          /* per job, RGB8 pixels of the crop */
  int *crop_width, *crop_height;
} BatchReport;

static void
set_state (FmEngineWorker *self, FmEngineState state)
{
  if (self->state == state)
    return;
  self->state = state;
  g_signal_emit (self, signals[SIGNAL_STATE_CHANGED], 0);
}

static void
pending_add (FmEngineWorker *self, FmResultsItem *item, int delta)
{
  int count = GPOINTER_TO_INT (g_hash_table_lookup (self->pending_items, item)) + delta;

  if (count > 0)
    g_hash_table_insert (self->pending_items, item, GINT_TO_POINTER (count));
  else
    g_hash_table_remove (self->pending_items, item);
}

/* After every report: are we idle now? Runs on the main thread. */
static void
update_idle_state (FmEngineWorker *self)
{
  gboolean idle;

  g_mutex_lock (&self->lock);
  idle = self->queue->len == 0 && self->running->len == 0;
  g_mutex_unlock (&self->lock);

  if (self->state == FM_ENGINE_STATE_WORKING && idle)
    set_state (self, FM_ENGINE_STATE_READY);
}

static void
batch_report_free (BatchReport *report)
{
  for (guint i = 0; i < report->jobs->len; i++)
    {
      g_free (report->latex[i]);
      g_free (report->error[i]);
      g_clear_pointer (&report->crop_rgb[i], g_bytes_unref);
    }
  g_free (report->latex);
  g_free (report->confidence);
  g_free (report->confidence_min);
  g_free (report->provenance);
  g_free (report->error);
  g_free (report->crop_rgb);
  g_free (report->crop_width);
  g_free (report->crop_height);
  g_ptr_array_unref (report->jobs);
  g_object_unref (report->self);
  g_free (report);
}

static gboolean
deliver_batch (gpointer data)
{
  BatchReport *report = data;
  FmEngineWorker *self = report->self;
  GPtrArray *requeue = g_ptr_array_new ();
  const char *first_error = NULL;

  for (guint i = 0; i < report->jobs->len; i++)
    {
      Job *job = g_ptr_array_index (report->jobs, i);

      pending_add (self, job->item, -1);
      if (report->crop_rgb[i] != NULL && fm_results_item_get_crop (job->item) == NULL)
        {
          g_autoptr(GdkTexture) texture =
            gdk_memory_texture_new (report->crop_width[i], report->crop_height[i],
                                    GDK_MEMORY_R8G8B8, report->crop_rgb[i],
                                    (gsize) report->crop_width[i] * 3);
          fm_results_item_set_crop (job->item, texture);
        }
      if (report->latex[i] != NULL)
        {
          /* Provenance first: the row redraws when the result lands. */
          fm_results_item_set_provenance (job->item, report->provenance[i]);
          fm_results_item_set_result (job->item, report->latex[i],
                                      report->confidence[i], report->confidence_min[i]);
          self->done++;
          self->run_done++;
        }
      else if (report->error[i] != NULL)
        {
          fm_results_item_set_failed (job->item, report->error[i]);
          if (first_error == NULL)
            first_error = report->error[i];
          self->done++;
          self->run_done++;
        }
      else
        {
          /* Stopped by Cancel or a device switch before this one finished. */
          fm_results_item_set_state (job->item, FM_RESULT_STATE_WAITING);
          if (!job->cancelled)
            g_ptr_array_add (requeue, job);
          else
            self->total--;
        }
    }

  g_mutex_lock (&self->lock);
  for (guint i = 0; i < requeue->len; i++)
    {
      Job *job = g_ptr_array_index (requeue, i);
      Job *copy = g_new (Job, 1);

      *copy = *job;
      copy->region = fm_region_copy (job->region);
      copy->cancelled = FALSE;
      g_object_ref (copy->document);
      g_object_ref (copy->item);
      g_ptr_array_add (self->queue, copy);
      pending_add (self, copy->item, +1);
    }
  if (requeue->len > 0)
    g_cond_signal (&self->cond);
  g_mutex_unlock (&self->lock);
  g_ptr_array_unref (requeue);

  /* One message per batch, not one per formula (a broken GPU fails them all). */
  if (first_error != NULL)
    g_signal_emit (self, signals[SIGNAL_RECOGNITION_FAILED], 0, first_error);
  g_signal_emit (self, signals[SIGNAL_PROGRESS], 0);
  update_idle_state (self);
  batch_report_free (report);
  return G_SOURCE_REMOVE;
}

typedef struct {
  FmEngineWorker *self;
  GPtrArray *jobs;
} RunningReport;

static gboolean
deliver_running (gpointer data)
{
  RunningReport *report = data;

  for (guint i = 0; i < report->jobs->len; i++)
    {
      Job *job = g_ptr_array_index (report->jobs, i);
      FmResultState state = fm_results_item_get_state (job->item);

      if (state == FM_RESULT_STATE_WAITING)
        fm_results_item_set_state (job->item, FM_RESULT_STATE_RUNNING);
    }
  g_ptr_array_unref (report->jobs);
  g_object_unref (report->self);
  g_free (report);
  return G_SOURCE_REMOVE;
}

typedef struct {
  FmEngineWorker *self;
  gboolean ok;
  char *error;
  FeRuntimeInfo runtime;
  gboolean is_load;            /* FALSE: a periodic runtime update */
} LoadReport;

static gboolean
deliver_load (gpointer data)
{
  LoadReport *report = data;
  FmEngineWorker *self = report->self;

  if (report->ok)
    {
      self->runtime = report->runtime;
      self->have_runtime = TRUE;
      if (report->is_load)
        {
          g_clear_pointer (&self->load_error, g_free);
          set_state (self, FM_ENGINE_STATE_READY);
          g_signal_emit (self, signals[SIGNAL_MODEL_LOADED], 0);
          if (self->runtime.fell_back)
            g_signal_emit (self, signals[SIGNAL_FELL_BACK], 0, self->runtime.fallback_reason);
          /* Formulas queued while loading start now. */
          g_mutex_lock (&self->lock);
          if (self->queue->len > 0)
            set_state (self, FM_ENGINE_STATE_WORKING);
          g_mutex_unlock (&self->lock);
        }
      g_signal_emit (self, signals[SIGNAL_RUNTIME_CHANGED], 0);
    }
  else
    {
      g_free (self->load_error);
      self->load_error = g_strdup (report->error);
      self->have_runtime = FALSE;
      set_state (self, FM_ENGINE_STATE_NO_MODEL);
      g_signal_emit (self, signals[SIGNAL_MODEL_FAILED], 0, report->error);
      g_signal_emit (self, signals[SIGNAL_RUNTIME_CHANGED], 0);
    }
  g_free (report->error);
  g_object_unref (report->self);
  g_free (report);
  return G_SOURCE_REMOVE;
}

typedef struct {
  FmEngineWorker *self;
  FeDeviceInfo *devices;
  gsize n_devices;
} DevicesReport;

static gboolean
deliver_devices (gpointer data)
{
  DevicesReport *report = data;
  FmEngineWorker *self = report->self;

  g_free (self->devices);
  self->devices = report->devices;
  self->n_devices = report->n_devices;
  g_signal_emit (self, signals[SIGNAL_DEVICES_CHANGED], 0);
  g_object_unref (report->self);
  g_free (report);
  return G_SOURCE_REMOVE;
}

/* Always through a source: g_main_context_invoke() would run func right here
 * on the worker thread whenever the main context happens to be free. */
static void
post (FmEngineWorker *self, GSourceFunc func, gpointer data)
{
  GSource *source = g_idle_source_new ();

  g_source_set_priority (source, G_PRIORITY_DEFAULT);
  g_source_set_callback (source, func, data, NULL);
  g_source_set_static_name (source, "[fm-engine-worker report]");
  g_source_attach (source, self->main_context);
  g_source_unref (source);
}

/* ---------------------------------------------------------------------- */
/* The thread                                                             */

static bool
abort_cb (void *user_data)
{
  FmEngineWorker *self = user_data;
  return g_atomic_int_get (&self->abort_requested) != 0;
}

/* The job whose page is nearest the focus page of the focus document, so the
 * page the user is looking at fills in first. Called with the lock held. */
static guint
pick_next (FmEngineWorker *self)
{
  guint best = 0;
  int best_score = G_MAXINT;

  for (guint i = 0; i < self->queue->len; i++)
    {
      Job *job = g_ptr_array_index (self->queue, i);
      int score;

      if (job->document == self->focus_document)
        {
          /* Pages after the focus come just before those behind it. */
          int d = job->page - self->focus_page;
          score = d >= 0 ? 2 * d : -2 * d + 1;
        }
      else
        score = 1000000 + (int) i;
      if (score < best_score)
        {
          best_score = score;
          best = i;
        }
    }
  return best;
}

static GBytes *
gray_to_rgb (const FmGrayImage *gray)
{
  gsize n = (gsize) gray->width * gray->height;
  guint8 *rgb = g_malloc (n * 3);

  for (int y = 0; y < gray->height; y++)
    {
      const guint8 *row = gray->pixels + (gsize) y * gray->stride;
      guint8 *out = rgb + (gsize) y * gray->width * 3;
      for (int x = 0; x < gray->width; x++)
        out[3 * x] = out[3 * x + 1] = out[3 * x + 2] = row[x];
    }
  return g_bytes_new_take (rgb, n * 3);
}

/* What the worker thread holds between batches; only the thread touches it. */
typedef struct {
  FeContext *context;
  FeState *state;
  int em_px;
  gint64 last_runtime_us;   /* when the status line last got memory figures */
} WorkerCtx;

/* Probing devices can dlopen CUDA: done here, never on the main thread. */
static void
worker_report_devices (FmEngineWorker *self)
{
  DevicesReport *report = g_new0 (DevicesReport, 1);

  report->self = g_object_ref (self);
  report->n_devices = fe_devices_list (NULL, 0);
  report->devices = g_new0 (FeDeviceInfo, MAX (report->n_devices, 1));
  report->n_devices = fe_devices_list (report->devices, report->n_devices);
  post (self, deliver_devices, report);
}

/* The model asked for by fm_engine_worker_load_model(), in place of the one
 * loaded. Called with the lock held, which it drops while loading. */
static void
worker_load (FmEngineWorker *self, WorkerCtx *w)
{
  LoadReport *lr = g_new0 (LoadReport, 1);
  g_autofree char *path = g_steal_pointer (&self->load_path);
  g_autofree char *device = g_steal_pointer (&self->load_device);
  fe_precision precision = self->load_precision;
  FeContextParams params = fe_context_default_params ();
  FeContext *fresh = NULL;

  self->load_pending = FALSE;
  g_atomic_int_set (&self->abort_requested, 0);
  g_mutex_unlock (&self->lock);

  lr->self = g_object_ref (self);
  lr->is_load = TRUE;
  /* Free the old model first: two copies may not fit in VRAM. */
  g_clear_pointer (&w->state, fe_state_free);
  g_clear_pointer (&w->context, fe_context_free);
  params.device = device;
  params.precision = precision;
  /* One core stays with the window. */
  params.n_threads = MAX (1, (int) g_get_num_processors () - 1);
  if (path == NULL || *path == '\0')
    lr->error = g_strdup (_("No model file found. Set one in Preferences or with the FORMULATE_MODEL environment variable."));
  else if (fe_context_load (path, &params, &fresh) != FE_OK)
    lr->error = g_strdup (fe_last_error ());
  else if (fe_state_new (fresh, &w->state) != FE_OK)
    {
      lr->error = g_strdup (fe_last_error ());
      fe_context_free (fresh);
    }
  else
    {
      w->context = fresh;
      w->em_px = fe_context_model_info (w->context)->em_px;
      if (fe_context_runtime_info (w->context, &lr->runtime) == FE_OK)
        lr->ok = TRUE;
      else
        lr->error = g_strdup (fe_last_error ());
      w->last_runtime_us = g_get_monotonic_time ();
    }
  post (self, deliver_load, lr);
  g_mutex_lock (&self->lock);
}

/* Up to FM_ENGINE_BATCH jobs, nearest the focus first, moved from the queue
 * to the running set. Called with the lock held. */
static GPtrArray *
worker_take_batch (FmEngineWorker *self)
{
  GPtrArray *batch = g_ptr_array_new ();

  while (batch->len < FM_ENGINE_BATCH && self->queue->len > 0)
    {
      guint index = pick_next (self);
      Job *job = g_ptr_array_steal_index (self->queue, index);
      g_ptr_array_add (batch, job);
      g_ptr_array_add (self->running, job);
    }
  return batch;
}

static void
worker_post_running (FmEngineWorker *self, GPtrArray *batch)
{
  RunningReport *rr = g_new0 (RunningReport, 1);

  rr->self = g_object_ref (self);
  rr->jobs = g_ptr_array_ref (batch);
  post (self, deliver_running, rr);
}

/* An empty report of the batch, which owns the batch's jobs from here on. */
static BatchReport *
batch_report_new (FmEngineWorker *self, GPtrArray *batch)
{
  BatchReport *report = g_new0 (BatchReport, 1);

  report->self = g_object_ref (self);
  report->jobs = batch;
  g_ptr_array_set_free_func (batch, (GDestroyNotify) job_free);
  report->latex = g_new0 (char *, batch->len);
  report->confidence = g_new0 (double, batch->len);
  report->confidence_min = g_new0 (double, batch->len);
  report->provenance = g_new0 (FmProvenance, batch->len);
  report->error = g_new0 (char *, batch->len);
  report->crop_rgb = g_new0 (GBytes *, batch->len);
  report->crop_width = g_new0 (int, batch->len);
  report->crop_height = g_new0 (int, batch->len);
  return report;
}

/* Recognises the batch's formulas into report: LaTeX and confidence, or the
 * failure message, and the crop the panel shows. Runs without the lock. */
static void
worker_recognize_batch (FmEngineWorker *self, WorkerCtx *w, BatchReport *report, int beam_width)
{
  GPtrArray *batch = report->jobs;
  FmRecognizeTask *tasks = g_new0 (FmRecognizeTask, batch->len);
  FmRecognizeOptions opts = fm_recognize_default_options ();
  fe_status status;

  for (guint i = 0; i < batch->len; i++)
    {
      Job *job = g_ptr_array_index (batch, i);
      tasks[i].document = job->document;
      tasks[i].region = job->region;
    }
  opts.em_px = w->em_px;
  opts.beam_width = beam_width;
  opts.abort_callback = abort_cb;
  opts.abort_user_data = self;
  opts.keep_crops = TRUE;
  status = fm_recognize_run (w->state, tasks, batch->len, &opts);
  (void) status;   /* failures are per task */
  for (guint i = 0; i < batch->len; i++)
    {
      FmRegion *region = tasks[i].region;

      if (tasks[i].crop != NULL)
        {
          report->crop_rgb[i] = gray_to_rgb (tasks[i].crop);
          report->crop_width[i] = tasks[i].crop->width;
          report->crop_height[i] = tasks[i].crop->height;
        }
      if (region->latex != NULL)
        {
          report->latex[i] = g_strdup (region->latex);
          report->confidence[i] = region->confidence;
          report->confidence_min[i] = tasks[i].confidence_min;
          report->provenance[i] = region->provenance;
        }
      else if (tasks[i].error != NULL)
        report->error[i] = g_strdup (tasks[i].error);
      fm_recognize_task_clear (&tasks[i]);
    }
  g_free (tasks);
}

/* Memory figures for the status line, at most once an interval. */
static void
worker_report_runtime (FmEngineWorker *self, WorkerCtx *w)
{
  LoadReport *lr;

  if (g_get_monotonic_time () - w->last_runtime_us < FM_ENGINE_RUNTIME_INTERVAL_US)
    return;
  lr = g_new0 (LoadReport, 1);
  lr->self = g_object_ref (self);
  lr->ok = fe_context_runtime_info (w->context, &lr->runtime) == FE_OK;
  if (lr->ok)
    post (self, deliver_load, lr);
  else
    {
      g_object_unref (lr->self);
      g_free (lr);
    }
  w->last_runtime_us = g_get_monotonic_time ();
}

static gpointer
worker_thread (gpointer data)
{
  FmEngineWorker *self = data;
  WorkerCtx w = { .em_px = FM_RENDER_DEFAULT_EM_PX };

#ifdef __linux__
  /* Below the window's thread, so a busy CPU never makes the window stutter;
   * the engine's own threads, created from here, inherit it. */
  if (setpriority (PRIO_PROCESS, (id_t) syscall (SYS_gettid), FM_ENGINE_NICE) != 0)
    g_debug ("engine worker: could not lower priority: %s", g_strerror (errno));
#endif

  worker_report_devices (self);

  g_mutex_lock (&self->lock);
  for (;;)
    {
      GPtrArray *batch;
      BatchReport *report;
      int beam_width;

      if (self->quit)
        break;

      if (self->load_pending)
        {
          worker_load (self, &w);
          continue;
        }

      if (w.context == NULL || self->queue->len == 0)
        {
          g_cond_wait (&self->cond, &self->lock);
          continue;
        }

      batch = worker_take_batch (self);
      beam_width = self->beam_width;
      g_atomic_int_set (&self->abort_requested, 0);
      g_mutex_unlock (&self->lock);

      worker_post_running (self, batch);
      report = batch_report_new (self, batch);
      worker_recognize_batch (self, &w, report, beam_width);
      worker_report_runtime (self, &w);

      g_mutex_lock (&self->lock);
      /* Hand the batch over under the lock so Cancel sees a consistent set. */
      for (guint i = 0; i < batch->len; i++)
        g_ptr_array_remove_fast (self->running, g_ptr_array_index (batch, i));
      post (self, deliver_batch, report);
    }
  g_mutex_unlock (&self->lock);

  g_clear_pointer (&w.state, fe_state_free);
  g_clear_pointer (&w.context, fe_context_free);
  return NULL;
}

/* ---------------------------------------------------------------------- */
/* Main-thread API                                                        */

void
fm_engine_worker_stop (FmEngineWorker *self)
{
  g_return_if_fail (FM_IS_ENGINE_WORKER (self));

  if (self->thread == NULL)
    {
      self->quit = TRUE;   /* and never start it later */
      return;
    }
  g_mutex_lock (&self->lock);
  self->quit = TRUE;
  g_atomic_int_set (&self->abort_requested, 1);
  g_cond_signal (&self->cond);
  g_mutex_unlock (&self->lock);
  g_thread_join (self->thread);
  self->thread = NULL;
}

static void
fm_engine_worker_dispose (GObject *object)
{
  fm_engine_worker_stop (FM_ENGINE_WORKER (object));
  G_OBJECT_CLASS (fm_engine_worker_parent_class)->dispose (object);
}

static void
fm_engine_worker_finalize (GObject *object)
{
  FmEngineWorker *self = FM_ENGINE_WORKER (object);

  g_ptr_array_unref (self->queue);
  g_ptr_array_unref (self->running);
  g_free (self->load_path);
  g_free (self->load_device);
  g_free (self->load_error);
  g_free (self->devices);
  g_hash_table_unref (self->pending_items);
  g_mutex_clear (&self->lock);
  g_cond_clear (&self->cond);
  g_main_context_unref (self->main_context);
  G_OBJECT_CLASS (fm_engine_worker_parent_class)->finalize (object);
}

static void
fm_engine_worker_class_init (FmEngineWorkerClass *klass)
{
  GObjectClass *object_class = G_OBJECT_CLASS (klass);

  object_class->dispose = fm_engine_worker_dispose;
  object_class->finalize = fm_engine_worker_finalize;

  signals[SIGNAL_MODEL_LOADED] =
    g_signal_new ("model-loaded", G_TYPE_FROM_CLASS (klass), G_SIGNAL_RUN_LAST,
                  0, NULL, NULL, NULL, G_TYPE_NONE, 0);
  signals[SIGNAL_MODEL_FAILED] =
    g_signal_new ("model-failed", G_TYPE_FROM_CLASS (klass), G_SIGNAL_RUN_LAST,
                  0, NULL, NULL, NULL, G_TYPE_NONE, 1, G_TYPE_STRING);
  signals[SIGNAL_FELL_BACK] =
    g_signal_new ("fell-back", G_TYPE_FROM_CLASS (klass), G_SIGNAL_RUN_LAST,
                  0, NULL, NULL, NULL, G_TYPE_NONE, 1, G_TYPE_STRING);
  signals[SIGNAL_PROGRESS] =
    g_signal_new ("progress", G_TYPE_FROM_CLASS (klass), G_SIGNAL_RUN_LAST,
                  0, NULL, NULL, NULL, G_TYPE_NONE, 0);
  signals[SIGNAL_RUNTIME_CHANGED] =
    g_signal_new ("runtime-changed", G_TYPE_FROM_CLASS (klass), G_SIGNAL_RUN_LAST,
                  0, NULL, NULL, NULL, G_TYPE_NONE, 0);
  signals[SIGNAL_DEVICES_CHANGED] =
    g_signal_new ("devices-changed", G_TYPE_FROM_CLASS (klass), G_SIGNAL_RUN_LAST,
                  0, NULL, NULL, NULL, G_TYPE_NONE, 0);
  signals[SIGNAL_RECOGNITION_FAILED] =
    g_signal_new ("recognition-failed", G_TYPE_FROM_CLASS (klass), G_SIGNAL_RUN_LAST,
                  0, NULL, NULL, NULL, G_TYPE_NONE, 1, G_TYPE_STRING);
  signals[SIGNAL_STATE_CHANGED] =
    g_signal_new ("state-changed", G_TYPE_FROM_CLASS (klass), G_SIGNAL_RUN_LAST,
                  0, NULL, NULL, NULL, G_TYPE_NONE, 0);
}

static void
fm_engine_worker_init (FmEngineWorker *self)
{
  g_mutex_init (&self->lock);
  g_cond_init (&self->cond);
  /* Jobs move between the arrays with steal; only the queue owns leftovers. */
  self->queue = g_ptr_array_new_with_free_func ((GDestroyNotify) job_free);
  self->running = g_ptr_array_new ();
  self->beam_width = 1;
  self->pending_items = g_hash_table_new (NULL, NULL);
  self->main_context = g_main_context_ref_thread_default ();
  /* The thread starts with the first load: its dlopen()s (BLAS, the CUDA
   * module) hold the loader lock, which GTK needs while it builds the first
   * window, so the application starts it once that window is up. */
}

FmEngineWorker *
fm_engine_worker_new (void)
{
  return g_object_new (FM_TYPE_ENGINE_WORKER, NULL);
}

gboolean
fm_engine_worker_has_engine (void)
{
  return TRUE;
}

void
fm_engine_worker_load_model (FmEngineWorker *self, const char *model_path,
                             const char *device, fe_precision precision)
{
  g_return_if_fail (FM_IS_ENGINE_WORKER (self));

  if (self->thread == NULL && !self->quit)
    self->thread = g_thread_new ("fm-engine", worker_thread, self);
  g_mutex_lock (&self->lock);
  g_free (self->load_path);
  g_free (self->load_device);
  self->load_path = g_strdup (model_path);
  self->load_device = g_strdup (device != NULL ? device : "auto");
  self->load_precision = precision;
  self->load_pending = TRUE;
  /* The running batch stops; its unfinished formulas are queued again. */
  g_atomic_int_set (&self->abort_requested, 1);
  g_cond_signal (&self->cond);
  g_mutex_unlock (&self->lock);
  set_state (self, FM_ENGINE_STATE_LOADING);
}

void
fm_engine_worker_set_beam_width (FmEngineWorker *self, int beam_width)
{
  g_mutex_lock (&self->lock);
  self->beam_width = CLAMP (beam_width, 1, 16);
  g_mutex_unlock (&self->lock);
}

void
fm_engine_worker_submit (FmEngineWorker *self, FmDocument *document, FmResultsItem *item)
{
  Job *job;

  g_return_if_fail (FM_IS_ENGINE_WORKER (self));
  g_return_if_fail (FM_IS_RESULTS_ITEM (item));

  /* An equation number is text, not math: never recognised nor counted in
   * the progress ("12 of 40 formulas"); it is shown with its display. */
  if (!fm_results_item_is_formula (item) || fm_engine_worker_is_pending (self, item))
    return;

  job = g_new0 (Job, 1);
  job->document = g_object_ref (document);
  job->item = g_object_ref (item);
  job->page = fm_results_item_get_page (item);
  job->region = fm_region_copy (fm_results_item_get_region (item));
  fm_results_item_set_state (item, FM_RESULT_STATE_WAITING);

  g_mutex_lock (&self->lock);
  if (self->queue->len == 0 && self->running->len == 0)
    {
      /* A new run: progress counts from here. */
      self->done = 0;
      self->total = 0;
      self->run_done = 0;
      self->run_started_us = g_get_monotonic_time ();
    }
  g_ptr_array_add (self->queue, job);
  g_cond_signal (&self->cond);
  g_mutex_unlock (&self->lock);

  pending_add (self, item, +1);
  self->total++;
  if (self->state == FM_ENGINE_STATE_READY)
    set_state (self, FM_ENGINE_STATE_WORKING);
  g_signal_emit (self, signals[SIGNAL_PROGRESS], 0);
}

void
fm_engine_worker_set_focus (FmEngineWorker *self, FmDocument *document, int page)
{
  g_mutex_lock (&self->lock);
  self->focus_document = document;
  self->focus_page = page;
  g_mutex_unlock (&self->lock);
}

void
fm_engine_worker_cancel (FmEngineWorker *self, FmDocument *document)
{
  GPtrArray *dropped = g_ptr_array_new_with_free_func ((GDestroyNotify) job_free);
  gboolean abort_batch = FALSE;

  g_mutex_lock (&self->lock);
  for (guint i = 0; i < self->queue->len;)
    {
      Job *job = g_ptr_array_index (self->queue, i);
      if (document == NULL || job->document == document)
        g_ptr_array_add (dropped, g_ptr_array_steal_index (self->queue, i));
      else
        i++;
    }
  for (guint i = 0; i < self->running->len; i++)
    {
      Job *job = g_ptr_array_index (self->running, i);
      if (document == NULL || job->document == document)
        {
          job->cancelled = TRUE;
          abort_batch = TRUE;
        }
    }
  if (abort_batch)
    g_atomic_int_set (&self->abort_requested, 1);
  g_mutex_unlock (&self->lock);

  for (guint i = 0; i < dropped->len; i++)
    {
      Job *job = g_ptr_array_index (dropped, i);
      pending_add (self, job->item, -1);
      fm_results_item_set_state (job->item, FM_RESULT_STATE_WAITING);
      self->total--;
    }
  g_ptr_array_unref (dropped);
  g_signal_emit (self, signals[SIGNAL_PROGRESS], 0);
  update_idle_state (self);
}

gboolean
fm_engine_worker_is_pending (FmEngineWorker *self, FmResultsItem *item)
{
  return g_hash_table_contains (self->pending_items, item);
}

FmEngineState
fm_engine_worker_get_state (FmEngineWorker *self)
{
  return self->state;
}

void
fm_engine_worker_get_progress (FmEngineWorker *self, int *done, int *total, double *per_second)
{
  double elapsed = (g_get_monotonic_time () - self->run_started_us) / (double) G_USEC_PER_SEC;

  /* A batch delivered just after a new run began counts into it: clamp. */
  if (done)
    *done = MIN (self->done, self->total);
  if (total)
    *total = self->total;
  if (per_second)
    *per_second = elapsed > 0.05 && self->run_done > 0 ? self->run_done / elapsed : 0.0;
}

gboolean
fm_engine_worker_get_runtime_info (FmEngineWorker *self, FeRuntimeInfo *info)
{
  if (!self->have_runtime)
    return FALSE;
  *info = self->runtime;
  return TRUE;
}

const char *
fm_engine_worker_get_load_error (FmEngineWorker *self)
{
  return self->load_error;
}

const FeDeviceInfo *
fm_engine_worker_list_devices (FmEngineWorker *self, gsize *n_devices)
{
  *n_devices = self->n_devices;
  return self->devices;
}
