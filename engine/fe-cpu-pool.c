/* fe-cpu-pool.c - the CPU backend's threads.
 *
 * Workers are started once and then sleep on a condition variable, so an op
 * split over threads costs a wake-up, not a pthread_create (and no
 * allocation per decoded token). One parallel_for runs at a time; a second
 * caller (another FeState on another thread) simply runs its tasks inline,
 * which keeps the pool free of deadlocks and nested-parallelism surprises.
 *
 * The caller never waits for a helper that has not started: tasks are taken
 * from a shared counter, and once the caller has run out of tasks it closes
 * the job, so a helper that wakes up late (on a loaded machine the scheduler
 * may give it the core a whole time slice later) finds nothing to join. The
 * caller only waits for helpers that are inside a task. */
#include "fe-internal.h"

#include <pthread.h>
#include <stdatomic.h>
#include <stdbool.h>

#define FE_POOL_MAX_THREADS 256

static pthread_mutex_t fe_pool_busy = PTHREAD_MUTEX_INITIALIZER;  /* one job at a time */
static pthread_mutex_t fe_pool_lock = PTHREAD_MUTEX_INITIALIZER;
static pthread_cond_t fe_pool_wake = PTHREAD_COND_INITIALIZER;
static pthread_cond_t fe_pool_done = PTHREAD_COND_INITIALIZER;

static int fe_pool_workers;             /* started so far (never stopped)      */
static int fe_pool_helpers;             /* of those, how many join this job    */
static unsigned long fe_pool_generation;
static int fe_pool_joined;              /* helpers inside the current job      */
static bool fe_pool_closed;             /* the caller is done: no one joins    */

static FeParallelFn fe_pool_fn;
static void *fe_pool_ctx;
static int fe_pool_n_tasks;
static atomic_int fe_pool_next;

static atomic_int fe_cpu_threads;        /* 0 = not set yet: one per core       */

void fe_cpu_set_threads(int n) {
    if (n <= 0)
        n = fe_cpu_info()->n_cores;
    if (n > FE_POOL_MAX_THREADS)
        n = FE_POOL_MAX_THREADS;
    atomic_store(&fe_cpu_threads, n);
}

int fe_cpu_get_threads(void) {
    int n = atomic_load(&fe_cpu_threads);
    return n > 0 ? n : fe_cpu_info()->n_cores;
}

static void fe_pool_run_tasks(FeParallelFn fn, void *ctx, int n_tasks) {
    for (;;) {
        int t = atomic_fetch_add(&fe_pool_next, 1);
        if (t >= n_tasks)
            break;
        fn(ctx, t);
    }
}

static void *fe_pool_worker(void *arg) {
    int index = (int)(intptr_t)arg;
    unsigned long seen = 0;
    pthread_mutex_lock(&fe_pool_lock);
    for (;;) {
        while (fe_pool_generation == seen || index >= fe_pool_helpers) {
            if (fe_pool_generation != seen)
                seen = fe_pool_generation; /* a job this worker is not part of */
            pthread_cond_wait(&fe_pool_wake, &fe_pool_lock);
        }
        seen = fe_pool_generation;
        if (fe_pool_closed)
            continue; /* woke too late: the caller has finished the job */
        FeParallelFn fn = fe_pool_fn;
        void *ctx = fe_pool_ctx;
        int n_tasks = fe_pool_n_tasks;
        fe_pool_joined++;
        pthread_mutex_unlock(&fe_pool_lock);

        fe_pool_run_tasks(fn, ctx, n_tasks);

        pthread_mutex_lock(&fe_pool_lock);
        if (--fe_pool_joined == 0 && fe_pool_closed)
            pthread_cond_signal(&fe_pool_done);
    }
    return NULL;
}

/* Starts workers up to `want`; returns how many exist. */
static int fe_pool_grow(int want) {
    while (fe_pool_workers < want) {
        pthread_t th;
        pthread_attr_t attr;
        pthread_attr_init(&attr);
        pthread_attr_setdetachstate(&attr, PTHREAD_CREATE_DETACHED);
        int rc = pthread_create(&th, &attr, fe_pool_worker, (void *)(intptr_t)fe_pool_workers);
        pthread_attr_destroy(&attr);
        if (rc != 0)
            break; /* fewer threads is slower, not wrong */
        fe_pool_workers++;
    }
    return fe_pool_workers;
}

void fe_cpu_parallel_for(int n_tasks, FeParallelFn fn, void *ctx) {
    int threads = fe_cpu_get_threads();
    if (n_tasks <= 0)
        return;
    if (threads <= 1 || n_tasks == 1 || pthread_mutex_trylock(&fe_pool_busy) != 0) {
        for (int t = 0; t < n_tasks; t++)
            fn(ctx, t);
        return;
    }
    int helpers = threads - 1;
    if (helpers > n_tasks - 1)
        helpers = n_tasks - 1;

    pthread_mutex_lock(&fe_pool_lock);
    helpers = helpers < fe_pool_grow(helpers) ? helpers : fe_pool_workers;
    fe_pool_fn = fn;
    fe_pool_ctx = ctx;
    fe_pool_n_tasks = n_tasks;
    atomic_store(&fe_pool_next, 0);
    fe_pool_helpers = helpers;
    fe_pool_joined = 0;
    fe_pool_closed = false;
    fe_pool_generation++;
    pthread_cond_broadcast(&fe_pool_wake);
    pthread_mutex_unlock(&fe_pool_lock);

    fe_pool_run_tasks(fn, ctx, n_tasks);

    pthread_mutex_lock(&fe_pool_lock);
    fe_pool_closed = true;
    while (fe_pool_joined > 0)
        pthread_cond_wait(&fe_pool_done, &fe_pool_lock);
    pthread_mutex_unlock(&fe_pool_lock);
    pthread_mutex_unlock(&fe_pool_busy);
}
