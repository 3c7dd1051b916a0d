/* fm-startup-log.c - start-up milestones relative to the process start.
 *
 * The start is the kernel's (field 22 of /proc/self/stat, in clock ticks since
 * boot) rather than main(): loading GTK, Poppler and WebKit's libraries before
 * main() is part of what a person waits for. */
#include "fm-startup-log.h"

#include <stdio.h>
#include <string.h>
#include <time.h>
#include <unistd.h>

static double
process_age_s (void)
{
  g_autofree char *stat = NULL;
  struct timespec now;
  const char *field;
  unsigned long long start_ticks = 0;
  long ticks_per_s = sysconf (_SC_CLK_TCK);

  clock_gettime (CLOCK_BOOTTIME, &now);
  /* The command name (field 2) may hold spaces: count fields after its ')'. */
  if (!g_file_get_contents ("/proc/self/stat", &stat, NULL, NULL) ||
      (field = strrchr (stat, ')')) == NULL || ticks_per_s <= 0)
    return -1;
  for (int i = 2; i < 22 && field != NULL; i++)
    field = strchr (field + 1, ' ');
  if (field == NULL || sscanf (field, " %llu", &start_ticks) != 1)
    return -1;
  return now.tv_sec + now.tv_nsec / 1e9 - (double) start_ticks / (double) ticks_per_s;
}

/* Resident set size, as `ps` and the figures count it. */
static double
rss_mb (void)
{
  unsigned long long size_pages = 0, resident_pages = 0;
  FILE *statm = fopen ("/proc/self/statm", "r");

  if (statm == NULL)
    return -1;
  if (fscanf (statm, "%llu %llu", &size_pages, &resident_pages) != 2)
    resident_pages = 0;
  fclose (statm);
  return (double) resident_pages * (double) sysconf (_SC_PAGESIZE) / (1024.0 * 1024.0);
}

/* CPU time of the main thread (the thread whose id is the process's), from
 * the scheduler's nanosecond count: what GTK's start costs on its one thread,
 * apart from waits for another CPU on a loaded machine. */
static double
main_thread_cpu_s (void)
{
  g_autofree char *path = g_strdup_printf ("/proc/self/task/%d/schedstat", (int) getpid ());
  g_autofree char *text = NULL;

  if (!g_file_get_contents (path, &text, NULL, NULL))
    return -1;
  return g_ascii_strtod (text, NULL) / 1e9;
}

static double
process_cpu_s (void)
{
  struct timespec cpu;

  if (clock_gettime (CLOCK_PROCESS_CPUTIME_ID, &cpu) != 0)
    return -1;
  return cpu.tv_sec + cpu.tv_nsec / 1e9;
}

void
fm_startup_log (const char *event)
{
  /* Also called from the thread of fm-early-open.c. */
  static GMutex lock;
  static GHashTable *seen;
  static int enabled = -1;

  g_mutex_lock (&lock);
  if (enabled < 0)
    enabled = g_getenv ("FORMULATE_STARTUP_LOG") != NULL;
  if (enabled && seen == NULL)
    seen = g_hash_table_new (g_str_hash, g_str_equal);
  if (enabled && !g_hash_table_contains (seen, event))
    {
      g_hash_table_add (seen, (gpointer) event);
      fprintf (stderr, "formulate-startup: %s %.3f s %.1f MB, CPU %.3f s, main thread %.3f s\n",
               event, process_age_s (), rss_mb (), process_cpu_s (), main_thread_cpu_s ());
      fflush (stderr);
    }
  g_mutex_unlock (&lock);
}
