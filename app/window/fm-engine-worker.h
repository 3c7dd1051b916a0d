/* fm-engine-worker.h - the one thread that runs the recognition engine.
 *
 * The application owns one FmEngineWorker. Its thread loads the model (so a
 * slow load never blocks the window), renders each queued formula's crop
 * through the PDF library (which takes the document's Poppler lock) and runs
 * fe_recognize in small batches. Everything it reports comes back through the
 * main context of the thread that created it, as signals and property
 * notifications; the worker thread never touches a GTK or GObject-with-signals
 * object. Cancelling stops the current batch between decode steps (the engine's
 * abort callback) and drops the queue.
 */
#pragma once

#include <gio/gio.h>

#include "fe.h"
#include "fm-document.h"
#include "fm-results-item.h"

G_BEGIN_DECLS

typedef enum {
  FM_ENGINE_STATE_NO_MODEL = 0,  /* nothing loaded yet, or the last load failed */
  FM_ENGINE_STATE_LOADING,
  FM_ENGINE_STATE_READY,         /* loaded and idle */
  FM_ENGINE_STATE_WORKING,
} FmEngineState;

#define FM_TYPE_ENGINE_WORKER (fm_engine_worker_get_type ())
G_DECLARE_FINAL_TYPE (FmEngineWorker, fm_engine_worker, FM, ENGINE_WORKER, GObject)

FmEngineWorker *fm_engine_worker_new (void);

/* Stops the thread (the running batch aborts between decode steps), frees
 * the model and joins. Reports already posted may still arrive. Idempotent;
 * the application calls it on shutdown so no engine work outlives main(). */
void            fm_engine_worker_stop (FmEngineWorker *self);

/* Whether this build links the engine's recognition API at all. */
gboolean        fm_engine_worker_has_engine (void);

/* Loads (or reloads on another device) the model on the worker thread, which
 * the first call starts (and which then lists the devices). Queued
 * formulas wait for the load and then go on, so switching devices keeps every
 * result. Ends with "model-loaded" or "model-failed". */
void            fm_engine_worker_load_model (FmEngineWorker *self,
                                             const char     *model_path,
                                             const char     *device,
                                             fe_precision    precision);

void            fm_engine_worker_set_beam_width (FmEngineWorker *self, int beam_width);

/* Queues one formula of document. The item's state becomes WAITING now,
 * RUNNING when its batch starts, DONE or FAILED when it ends. */
void            fm_engine_worker_submit (FmEngineWorker *self,
                                         FmDocument     *document,
                                         FmResultsItem  *item);
/* Formulas nearest this page of this document go first. */
void            fm_engine_worker_set_focus (FmEngineWorker *self,
                                            FmDocument     *document,
                                            int             page);
/* Drops every queued formula (of document, or all when NULL) and stops the
 * running batch between two decode steps. Dropped items go back to WAITING. */
void            fm_engine_worker_cancel (FmEngineWorker *self,
                                         FmDocument     *document);
/* Whether item is queued or running. */
gboolean        fm_engine_worker_is_pending (FmEngineWorker *self,
                                             FmResultsItem  *item);

FmEngineState   fm_engine_worker_get_state (FmEngineWorker *self);
/* Progress of the current run: formulas done / queued since the queue was last
 * empty, formulas per second over the run. */
void            fm_engine_worker_get_progress (FmEngineWorker *self,
                                               int            *done,
                                               int            *total,
                                               double         *per_second);
/* The last runtime figures the worker thread read from the engine (device,
 * memory, fallback); FALSE when no model is loaded. */
gboolean        fm_engine_worker_get_runtime_info (FmEngineWorker *self,
                                                   FeRuntimeInfo  *info);
/* The message of the last failed load, or NULL. */
const char     *fm_engine_worker_get_load_error (FmEngineWorker *self);

/* Every device the engine knows (CPU first), read once and cached. */
const FeDeviceInfo *fm_engine_worker_list_devices (FmEngineWorker *self,
                                                   gsize          *n_devices);

G_END_DECLS
