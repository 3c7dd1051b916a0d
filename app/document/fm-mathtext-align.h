/* fm-mathtext-align.h: column alignment of multi-line displays for the
 * text-layer reader (fm-mathtext.c): aligned, gathered, cases, matrices. */
#pragma once

#include "fm-render.h"

#include <glib.h>

G_BEGIN_DECLS

/* One item of a region that holds several lines, as the reader hands it over. */
typedef struct {
  gpointer item;      /* the reader's item, handed back to parse_line        */
  FmRect box;
  double mid;         /* vertical reference (box centre of baseline glyphs)  */
  double size;        /* font size, points                                   */
  const char *tex;    /* its LaTeX, NULL = unknown glyph                     */
  gboolean ext;       /* a glyph from a math extension font                  */
  gboolean glyph;     /* a single glyph (not a word, fraction, radical...)   */
  gboolean rule;      /* a drawn rule (fraction bar, vinculum)               */
  gboolean origin;    /* a glyph whose box start is measured against its TeX
                         origin: it lies origin_lo..origin_hi em right of it
                         (0 in Computer/Latin Modern, STIX Two; virtual
                         fonts move some letters, bench/RESULTS.md)          */
  double origin_lo, origin_hi;
  const char *font;   /* a glyph's font name (NULL for other items)          */
} FmAlignItem;

typedef struct {
  gpointer reader;
  /* the reader's one-line parse of some of its items (the pointers of
   * FmAlignItem.item); newly allocated */
  char *(*parse_line) (gpointer reader, GPtrArray *items);
  /* marks the reading UNCERTAIN with a reason */
  void (*uncertain) (gpointer reader, const char *why);
  /* a delimiter piece merged into a taller one: it backs no symbol of its own */
  void (*forget_piece) (gpointer reader, gpointer item);
} FmAlignOps;

/* The LaTeX of items that form several lines (n >= 2 rows of full-size
 * items): \begin{aligned}/gathered/cases/matrix..., in the normaliser's
 * spelling. Calls ops->uncertain where rows, columns or spelling are not
 * certain. Newly allocated. */
char *fm_mathtext_align (const FmAlignOps *ops, const FmAlignItem *items, guint n_items);

/* Whether two items (boxes, vertical references, stack = a fraction) share
 * a line: each one's reference inside the other's box, and fractions' bars
 * within 0.5 em. */
gboolean fm_mathtext_same_line (const FmRect *a, double a_mid, gboolean a_stack, const FmRect *b,
                                double b_mid, gboolean b_stack, double em);

/* Lines: the items with take[i] grouped by fm_mathtext_same_line, an item
 * that shares a line with items of two lines joining them (whatever the
 * items' order). line[i] gets each taken item's line, numbered by their
 * first items, and G_MAXUINT for the others. Returns the number of lines. */
guint fm_mathtext_group_lines (const FmAlignItem *items, guint n_items, const gboolean *take, double em,
                               guint *line);

/* A fraction part's lines: the items over (above = TRUE) or under a bar
 * that the reader took as its part, with the part's rules. Items of the
 * part's size form lines; from the line nearest the bar outward, a line
 * belongs to the part only when a rule of the part joins it to the previous
 * one (a fraction inside the part with one of the two lines as its own
 * part); a line beyond a gap without one is the next or previous line of
 * the display (an aligned block of fractions, a matrix of text-style
 * fractions), and keep[i] is set FALSE for it and every item beyond it.
 * Returns the size of the part's lines when it kept more than one (a
 * fraction inside with parts of that size), else 0. */
double fm_mathtext_part_lines (const FmAlignItem *items, guint n_items, gboolean above, gboolean *keep);

/* Pieces of one tall delimiter, stacked in one column: the step the reader's
 * merge_extensible and the aligner's find_delims share. From the seed
 * (stack[0], an index into the caller's items) an item j joins when join()
 * accepts it, its x-range overlaps the reference box by half the narrower
 * width and its box touches the stack vertically within gap; repeated until
 * nothing joins. against_union: the reference and the touch test use the
 * stack's union box (which grows as pieces join); else the x reference is the
 * seed's box and the touch test any one piece's. Returns the union box. */
typedef struct {
  const FmRect *(*box) (gpointer data, guint j);
  gboolean (*join) (gpointer data, guint j);
  gpointer data;
  guint n;
  double gap;
  gboolean against_union;
} FmPieceStack;

FmRect fm_mathtext_grow_stack (const FmPieceStack *ps, GArray *stack);

G_END_DECLS
