/* fm-startup-log.h - timestamps of the start-up milestones, for tools/measure-startup. */
#pragma once

#include <glib.h>

G_BEGIN_DECLS

/* With FORMULATE_STARTUP_LOG set, prints "formulate-startup: EVENT SECONDS s RSS MB,
 * CPU C s, main thread M s" on stderr the first time EVENT happens, SECONDS
 * counted from the process's start as the kernel recorded it (exec and dynamic
 * linking included), RSS the process's resident memory then, C the CPU time of
 * all its threads so far and M that of its main thread (on a loaded machine
 * the CPU times compare builds better than SECONDS, which counts waits for a
 * CPU).
 * Without it, does nothing. Main thread only. */
void fm_startup_log (const char *event);

G_END_DECLS
