/* fm-startup-log.h - timestamps of the start-up milestones, for tools/measure-startup. */
#pragma once

#include <glib.h>

G_BEGIN_DECLS

/* With FORMULATE_STARTUP_LOG set, prints "formulate-startup: EVENT SECONDS s RSS MB"
 * on stderr the first time EVENT happens, SECONDS counted from the process's
 * start as the kernel recorded it (exec and dynamic linking included), RSS the
 * process's resident memory then.
 * Without it, does nothing. Main thread only. */
void fm_startup_log (const char *event);

G_END_DECLS
