/* fe-error.c - per-thread error messages and the log sink. */
#include "fe-internal.h"

#include <pthread.h>
#include <stdio.h>
#include <string.h>

#define FE_ERROR_MAX 1024

static _Thread_local char fe_error_message[FE_ERROR_MAX];

static void fe_default_log(fe_log_level level, const char *message, void *user_data);

static pthread_mutex_t fe_log_lock = PTHREAD_MUTEX_INITIALIZER;
static fe_log_callback fe_log_sink = fe_default_log;
static void *fe_log_sink_data = NULL;

const char *fe_status_name(fe_status status) {
    switch (status) {
    case FE_OK: return "FE_OK";
    case FE_ERR_INVALID_ARGUMENT: return "FE_ERR_INVALID_ARGUMENT";
    case FE_ERR_IO: return "FE_ERR_IO";
    case FE_ERR_FORMAT: return "FE_ERR_FORMAT";
    case FE_ERR_UNSUPPORTED: return "FE_ERR_UNSUPPORTED";
    case FE_ERR_OUT_OF_MEMORY: return "FE_ERR_OUT_OF_MEMORY";
    case FE_ERR_DEVICE: return "FE_ERR_DEVICE";
    case FE_ERR_DEVICE_MISMATCH: return "FE_ERR_DEVICE_MISMATCH";
    case FE_ERR_ABORTED: return "FE_ERR_ABORTED";
    case FE_ERR_INTERNAL: return "FE_ERR_INTERNAL";
    default: return "FE_ERR_UNKNOWN";
    }
}

const char *fe_last_error(void) { return fe_error_message; }

void fe_clear_error(void) { fe_error_message[0] = '\0'; }

fe_status fe_set_error(fe_status status, const char *fmt, ...) {
    va_list ap;
    va_start(ap, fmt);
    vsnprintf(fe_error_message, sizeof fe_error_message, fmt, ap);
    va_end(ap);
    /* Messages are one line: callers show them in a toast or on stderr. */
    for (char *p = fe_error_message; *p; p++)
        if (*p == '\n' || *p == '\r')
            *p = ' ';
    return status;
}

fe_status fe_prefix_error(fe_status status, const char *fmt, ...) {
    char prefix[FE_ERROR_MAX];
    char old[FE_ERROR_MAX];
    va_list ap;
    va_start(ap, fmt);
    vsnprintf(prefix, sizeof prefix, fmt, ap);
    va_end(ap);
    memcpy(old, fe_error_message, sizeof old);
    snprintf(fe_error_message, sizeof fe_error_message, "%.500s: %.500s", prefix, old);
    return status;
}

static void fe_default_log(fe_log_level level, const char *message, void *user_data) {
    (void)user_data;
    if (level < FE_LOG_WARN)
        return;
    fprintf(stderr, "formulate: %s: %s\n", level == FE_LOG_WARN ? "warning" : "error", message);
}

void fe_set_log_callback(fe_log_callback callback, void *user_data) {
    pthread_mutex_lock(&fe_log_lock);
    fe_log_sink = callback;
    fe_log_sink_data = user_data;
    pthread_mutex_unlock(&fe_log_lock);
}

void fe_log(fe_log_level level, const char *fmt, ...) {
    char message[FE_ERROR_MAX];
    fe_log_callback sink;
    void *data;
    va_list ap;

    pthread_mutex_lock(&fe_log_lock);
    sink = fe_log_sink;
    data = fe_log_sink_data;
    pthread_mutex_unlock(&fe_log_lock);
    if (!sink)
        return;
    va_start(ap, fmt);
    vsnprintf(message, sizeof message, fmt, ap);
    va_end(ap);
    sink(level, message, data);
}
