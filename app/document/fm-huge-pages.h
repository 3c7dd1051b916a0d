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

/* n bytes rounded up to whole 2 MiB pages, 2 MiB aligned and advised onto
 * huge pages all of it (a tail left on 4 KiB pages would fault page by
 * page, which is what the caller asked to avoid), *whole set to the size;
 * NULL below 2 MiB, without huge pages, or when memory runs out. */
static inline void *
fm_alloc_huge_whole (gsize n, gsize *whole)
{
#if defined(__linux__) && defined(MADV_HUGEPAGE)
  void *p = NULL;

  if (n >= FM_HUGE_PAGE && n <= G_MAXSIZE - FM_HUGE_PAGE)
    {
      *whole = (n + FM_HUGE_PAGE - 1) & ~(FM_HUGE_PAGE - 1);
      if (posix_memalign (&p, FM_HUGE_PAGE, *whole) == 0)
        {
          (void) madvise (p, *whole, MADV_HUGEPAGE);
          return p;
        }
    }
#endif
  return NULL;
}

/* At least n bytes, g_free-able, on whole huge pages from 2 MiB up.
 * *capacity (when not NULL) gets the usable size, so a growing buffer can
 * use the rounding's slack. Aborts when memory runs out, as g_malloc. */
static inline void *
fm_alloc_written_whole (gsize n, gsize *capacity)
{
  gsize whole = n;
  void *p = fm_alloc_huge_whole (n, &whole);

  if (p == NULL)
    {
      p = g_malloc (n);
      whole = n;
    }
  if (capacity != NULL)
    *capacity = whole;
  return p;
}

/* The same without the capacity, NULL when memory runs out (for callers with
 * a way out: a page image that does not fit is an error the window shows). */
static inline void *
fm_try_alloc_written_whole (gsize n)
{
  gsize whole;
  void *p = fm_alloc_huge_whole (n, &whole);

  return p != NULL ? p : g_try_malloc (n);
}
