/* fm-huge-pages.h - buffers written whole right away, on 2 MiB pages (header only).
 *
 * Why: on the development VM each first touch of a fresh 4 KiB page costs
 * ~22 us of CPU (bench/RESULTS.md, "First touches"): a page's ink map or the
 * PDF's inflated copy (MBs, written front to back at once) faulted in page by
 * page; 2 MiB aligned and advised onto 2 MiB pages it costs a few faults.
 * Only for buffers written whole: a huge page is resident as soon as one
 * byte of it is touched. The engine has its own (engine/fe-cpu.c). */
#pragma once

#include <glib.h>
#include <stdlib.h>
#ifdef __linux__
#include <sys/mman.h>
#endif

#define FM_HUGE_PAGE ((gsize) 2 << 20)

/* n bytes, g_free-able; from 2 MiB up 2 MiB aligned, its whole 2 MiB pages
 * advised onto huge pages (round n up to FM_HUGE_PAGE for all of it). */
static inline void *
fm_alloc_written_whole (gsize n)
{
#if defined(__linux__) && defined(MADV_HUGEPAGE)
  void *p = NULL;

  if (n >= FM_HUGE_PAGE && posix_memalign (&p, FM_HUGE_PAGE, n) == 0)
    {
      (void) madvise (p, n & ~(FM_HUGE_PAGE - 1), MADV_HUGEPAGE);
      return p;
    }
#endif
  return g_malloc (n);
}
