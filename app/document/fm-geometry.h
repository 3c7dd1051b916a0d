/* fm-geometry.h - rectangles on a page and the page's text frame (header only).
 *
 * Contract: pure functions of FmRect boxes (PDF points on the displayed page,
 * origin top-left, y down); no allocation, no Poppler, no state. The text
 * frame of direction dir (0: text runs right, 1: down, 2: left, 3: up) is the
 * page turned so that text runs left to right and lines go down;
 * fm_rect_from_frame undoes fm_rect_to_frame. Inline because the layout code
 * calls them per glyph and region pair. */
#pragma once

#include <stdlib.h>

#include "fm-render.h"

G_BEGIN_DECLS

static inline double fm_rect_w  (const FmRect *r) { return r->x1 - r->x0; }
static inline double fm_rect_h  (const FmRect *r) { return r->y1 - r->y0; }
static inline double fm_rect_cx (const FmRect *r) { return 0.5 * (r->x0 + r->x1); }
static inline double fm_rect_cy (const FmRect *r) { return 0.5 * (r->y0 + r->y1); }

/* How far the two boxes' vertical extents overlap (negative: the gap). */
static inline double
fm_rect_v_overlap (const FmRect *a, const FmRect *b)
{
  return MIN (a->y1, b->y1) - MAX (a->y0, b->y0);
}

/* The horizontal (vertical) gap between two boxes, 0 when they overlap. */
static inline double
fm_rect_h_gap (const FmRect *a, const FmRect *b)
{
  return MAX (0.0, MAX (a->x0 - b->x1, b->x0 - a->x1));
}

static inline double
fm_rect_v_gap (const FmRect *a, const FmRect *b)
{
  return MAX (0.0, MAX (a->y0 - b->y1, b->y0 - a->y1));
}

/* Grows a to hold b. */
static inline void
fm_rect_union (FmRect *a, const FmRect *b)
{
  a->x0 = MIN (a->x0, b->x0);
  a->y0 = MIN (a->y0, b->y0);
  a->x1 = MAX (a->x1, b->x1);
  a->y1 = MAX (a->y1, b->y1);
}

/* A displayed-page rectangle in the text frame of direction dir on a w x h page. */
static inline FmRect
fm_rect_to_frame (const FmRect *r, int dir, double w, double h)
{
  switch (dir)
    {
    case 1:
      return (FmRect) { r->y0, w - r->x1, r->y1, w - r->x0 };
    case 2:
      return (FmRect) { w - r->x1, h - r->y1, w - r->x0, h - r->y0 };
    case 3:
      return (FmRect) { h - r->y1, r->x0, h - r->y0, r->x1 };
    default:
      return *r;
    }
}

/* The inverse of fm_rect_to_frame. */
static inline FmRect
fm_rect_from_frame (const FmRect *r, int dir, double w, double h)
{
  switch (dir)
    {
    case 1:
      return (FmRect) { w - r->y1, r->x0, w - r->y0, r->x1 };
    case 2:
      return (FmRect) { w - r->x1, h - r->y1, w - r->x0, h - r->y0 };
    case 3:
      return (FmRect) { r->y0, h - r->x1, r->y1, h - r->x0 };
    default:
      return *r;
    }
}

static inline int
fm_cmp_double (const void *a, const void *b)
{
  double x = *(const double *) a, y = *(const double *) b;
  return (x > y) - (x < y);
}

/* The median of v[0..n) (sorted in place; the upper one of an even count),
 * or fallback when n is 0. */
static inline double
fm_median (double *v, int n, double fallback)
{
  if (n <= 0)
    return fallback;
  qsort (v, n, sizeof *v, fm_cmp_double);
  return v[n / 2];
}

/* The root of i's set in a union-find forest (parent[i] == i at a root),
 * halving the path on the way: detection joins glyph clusters with it, the
 * scan analysis ink components and words. */
static inline int
fm_uf_find (int *parent, int i)
{
  while (parent[i] != i)
    {
      parent[i] = parent[parent[i]];
      i = parent[i];
    }
  return i;
}

G_END_DECLS
