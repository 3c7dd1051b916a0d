/* fm-mathtext-align.c: column alignment of multi-line displays.
 *
 * The text-layer reader (fm-mathtext.c) hands over a region's items when
 * its full-size items form several lines. Here they become rows (by
 * vertical overlap, small items to the nearest row) and columns, written as
 * the normaliser (tools/data/latex_tokens.py) writes the formula corpus:
 *
 * - a tall delimiter spanning every row opens a grid: '{' alone is cases
 *   (two columns, the second left-aligned), '[' ... ']' bmatrix, other pairs
 *   \left( \begin{matrix} ... \right) (the corpus's spelling: 272 times,
 *   pmatrix never) or vmatrix ...; columns are x-ranges free of ink in every
 *   row (matrix columns stand 2 \arraycolsep = 1 em apart, cases' \quad);
 * - without one, rows whose relations stand at one x are aligned (`&` before
 *   that relation; a row without one that starts at that x gets `&` first);
 *   rows that all start at one x are aligned with `&` first (uncertain);
 *   centred rows are gathered (uncertain: a one-column matrix looks alike).
 *
 * Only aligned, cases and bmatrix can come out CERTAIN, and only when every
 * cell reads certainly: the other spellings render alike in other ways.
 * Delimiters that TeX builds from extension pieces (a brace over four rows:
 * top, middle, bottom and repeaters) are merged into one. */
#include "fm-mathtext-align.h"

#include <math.h>
#include <string.h>

#define ROW_NONE G_MAXUINT

typedef struct {
  FmRect box;
  const char *tex;    /* the delimiter: ( [ \{ | \| ) ] \} */
  guint first;        /* one of its items */
} Delim;

typedef struct {
  const FmAlignOps *ops;
  const FmAlignItem *items;
  guint n;
  double em;          /* the main size */
  guint *row;         /* per item: its row, ROW_NONE = not in the grid */
  gboolean *piece;    /* per item: part of a tall delimiter */
  gboolean *outside;  /* per item: left or right of the grid's delimiters */
  guint *owner;       /* per item: the tall delimiter it is part of, or G_MAXUINT */
  guint n_rows;
  double *row_mid;    /* per row, sorted top to bottom */
  GArray *delims;     /* Delim, tall ones */
} Align;

static const char *const relations[] = {
  "=", "<", ">", "\\leq", "\\geq", "\\neq", "\\equiv", "\\approx", "\\sim", "\\simeq", "\\cong",
  "\\to", "\\rightarrow", "\\longrightarrow", "\\Rightarrow", "\\Longrightarrow", "\\mapsto",
  "\\longmapsto", "\\subset", "\\subseteq", "\\supset", "\\supseteq", "\\in", "\\coloneqq",
  "\\iff", "\\Leftrightarrow", "\\Longleftrightarrow", "\\leftarrow", "\\propto", "\\ll", "\\gg",
  "\\prec", "\\succ", "\\preceq", "\\succeq", "\\ni", "\\perp", ":", NULL,
};

/* Whether a LaTeX token is a relation that aligned's columns align at. */
static gboolean
is_relation (const char *tex)
{
  if (tex == NULL)
    return FALSE;
  for (int k = 0; relations[k] != NULL; k++)
    if (strcmp (relations[k], tex) == 0)
      return TRUE;
  return FALSE;
}

static int
delim_side (const char *tex)
{
  static const char *const open[] = { "(", "[", "\\{", "\\lbrace", "\\langle", NULL };
  static const char *const close[] = { ")", "]", "\\}", "\\rbrace", "\\rangle", NULL };

  if (tex == NULL)
    return 0;
  for (int k = 0; open[k] != NULL; k++)
    if (strcmp (open[k], tex) == 0)
      return -1;
  for (int k = 0; close[k] != NULL; k++)
    if (strcmp (close[k], tex) == 0)
      return 1;
  if (strcmp (tex, "|") == 0 || strcmp (tex, "\\|") == 0)
    return 2;   /* either side */
  return 0;
}

/* Pieces of one delimiter: its family (the brace repeater, CMEX's 0x3E,
 * serves both braces). */
static char
delim_family (const char *tex)
{
  if (tex == NULL)
    return 0;
  if (strcmp (tex, "(") == 0 || strcmp (tex, ")") == 0)
    return 'p';
  if (strcmp (tex, "[") == 0 || strcmp (tex, "]") == 0)
    return 'b';
  if (strstr (tex, "brace") != NULL || strcmp (tex, "\\{") == 0 || strcmp (tex, "\\}") == 0)
    return 'c';
  return tex[0];
}

static double
cy (const FmAlignItem *it)
{
  return (it->box.y0 + it->box.y1) / 2;
}

FmRect
fm_mathtext_grow_stack (const FmPieceStack *ps, GArray *stack)
{
  const FmRect seed = *ps->box (ps->data, g_array_index (stack, guint, 0));
  FmRect u = seed;
  gboolean grown = TRUE;

  while (grown)
    {
      grown = FALSE;
      for (guint j = 0; j < ps->n; j++)
        {
          const FmRect *b = ps->box (ps->data, j);
          const FmRect *ref = ps->against_union ? &u : &seed;
          double w = MIN (b->x1 - b->x0, ref->x1 - ref->x0);
          double ov = MIN (b->x1, ref->x1) - MAX (b->x0, ref->x0);
          gboolean in = FALSE, touches = FALSE;

          for (guint k = 0; k < stack->len && !in; k++)
            in = g_array_index (stack, guint, k) == j;
          if (in || !ps->join (ps->data, j) || ov < 0.5 * w)
            continue;
          if (ps->against_union)
            touches = b->y0 <= u.y1 + ps->gap && b->y1 >= u.y0 - ps->gap;
          else
            for (guint k = 0; k < stack->len && !touches; k++)
              {
                const FmRect *c = ps->box (ps->data, g_array_index (stack, guint, k));
                touches = b->y0 <= c->y1 + ps->gap && b->y1 >= c->y0 - ps->gap;
              }
          if (!touches)
            continue;
          g_array_append_val (stack, j);
          u.x0 = MIN (u.x0, b->x0);
          u.x1 = MAX (u.x1, b->x1);
          u.y0 = MIN (u.y0, b->y0);
          u.y1 = MAX (u.y1, b->y1);
          grown = TRUE;
        }
    }
  return u;
}

gboolean
fm_mathtext_same_line (const FmRect *a, double a_mid, gboolean a_stack, const FmRect *b, double b_mid,
                       gboolean b_stack, double em)
{
  /* Fractions on one line share the math axis; a matrix's rows of
   * text-style fractions stand about 1.2 em apart while Poppler's boxes of
   * their parts (font ascent and descent) reach past the neighbouring row's
   * bar (`H=\begin{bmatrix}\frac{\partial^{2}r}{\partial x\partial x}...`
   * read as one line of four fractions, development set seed 1110) */
  if (a_stack && b_stack && fabs (a_mid - b_mid) > 0.5 * em)
    return FALSE;
  return a_mid > b->y0 && a_mid < b->y1 && b_mid > a->y0 && b_mid < a->y1;
}

static gboolean
is_stack (const FmAlignItem *it)
{
  return !it->glyph && it->tex != NULL && strncmp (it->tex, "\\frac{", 6) == 0;
}

static guint
line_root (guint *parent, guint i)
{
  while (parent[i] != i)
    i = parent[i] = parent[parent[i]];
  return i;
}

/* Why one helper: the reader's parse_list counts lines and the aligner's
 * find_rows numbers them; with first-match grouping in one and merging in
 * the other they disagreed where an item shares a line with items of two
 * lines (a fraction beside both `\mathbf{B}=` and an integral). */
guint
fm_mathtext_group_lines (const FmAlignItem *items, guint n, const gboolean *take, double em, guint *line)
{
  g_autofree guint *parent = g_new (guint, n + 1);
  g_autofree gboolean *stack = g_new (gboolean, n + 1);
  guint count = 0;

  for (guint i = 0; i < n; i++)
    {
      parent[i] = i;
      stack[i] = is_stack (&items[i]);
      line[i] = G_MAXUINT;
    }
  for (guint i = 0; i < n; i++)
    for (guint j = 0; take[i] && j < i; j++)
      if (take[j] && line_root (parent, i) != line_root (parent, j) &&
          fm_mathtext_same_line (&items[i].box, items[i].mid, stack[i], &items[j].box, items[j].mid, stack[j], em))
        {
          guint ri = line_root (parent, i), rj = line_root (parent, j);
          parent[MAX (ri, rj)] = MIN (ri, rj);
        }
  /* a line's root is its first item: lines numbered by their first item */
  for (guint i = 0; i < n; i++)
    if (take[i])
      {
        guint root = line_root (parent, i);
        line[i] = root == i ? count++ : line[root];
      }
  return count;
}

/* Whether every item of line `k` (line[i] == k) lies over or under rule r:
 * its centre within the rule's x-range, as take_rules collects a part. */
static gboolean
own_part (const FmAlignItem *items, guint n, const guint *line, guint k, const FmAlignItem *r)
{
  gboolean any = FALSE;

  for (guint i = 0; i < n; i++)
    if (line[i] == k)
      {
        double c = (items[i].box.x0 + items[i].box.x1) / 2;
        if (c < r->box.x0 || c > r->box.x1)
          return FALSE;
        any = TRUE;
      }
  return any;
}

/* Whether a rule of the part joins its lines `near` and `far` (`far` one
 * step further from the part's bar): the rule is the bar of a fraction
 * inside the part with one of the two lines as its own part, the other line
 * being the inner fraction's other part or the line it sits on. A rule's
 * position between the lines' middles says nothing by itself: an inner
 * \dfrac's or \cfrac's bar lies on the math axis, about at the middle of
 * the full-size line it sits on (`\frac{1}{1+\dfrac{1}{x}}` had kept its
 * denominator's numerator `1` alone and left `1+`, the inner bar and `x`
 * behind), and another row's bar lies just past that row's part. In
 * coordinates growing away from the bar (t = -y above it, y below), with
 * 0.25 em of slack for the axis against a line's box middle. */
static gboolean
lines_joined (const FmAlignItem *items, guint n, const guint *line, guint near, guint far,
              double near_mid, double far_mid, double big, gboolean above)
{
  double sign = above ? -1 : 1, nm = sign * near_mid, fm = sign * far_mid, slack = 0.25 * big;

  for (guint i = 0; i < n; i++)
    {
      double rc;
      if (!items[i].rule)
        continue;
      rc = sign * (items[i].box.y0 + items[i].box.y1) / 2;
      /* the near line is the inner fraction's part nearer the bar: its
       * bar lies beyond, at most on the far line (its other part, or the
       * line of a \dfrac it sits in) */
      if (rc > nm && rc < fm + slack && own_part (items, n, line, near, &items[i]))
        return TRUE;
      /* the far line is the inner fraction's part further out: its bar
       * lies before it, at least on the near line */
      if (rc > nm - slack && rc < fm && own_part (items, n, line, far, &items[i]))
        return TRUE;
    }
  return FALSE;
}

/* Lines of the part's size: items grouped by fm_mathtext_same_line
 * (scripts, small items and rules in none: G_MAXUINT); ext gets each
 * line's extent. Returns the largest size. */
static double
size_lines (const FmAlignItem *items, guint n, guint *line, GArray *ext)
{
  g_autofree gboolean *take = g_new (gboolean, n + 1);
  double big = 0;
  guint count;

  for (guint i = 0; i < n; i++)
    if (!items[i].rule)
      big = MAX (big, items[i].size);
  for (guint i = 0; i < n; i++)
    take[i] = !items[i].rule && items[i].size >= 0.85 * big;
  count = fm_mathtext_group_lines (items, n, take, big, line);
  for (guint k = 0; k < count; k++)
    {
      FmRect e = { 0, G_MAXDOUBLE, 0, -G_MAXDOUBLE };
      g_array_append_val (ext, e);
    }
  for (guint i = 0; i < n; i++)
    if (line[i] != G_MAXUINT)
      {
        FmRect *e = &g_array_index (ext, FmRect, line[i]);
        e->y0 = MIN (e->y0, items[i].box.y0);
        e->y1 = MAX (e->y1, items[i].box.y1);
      }
  return big;
}

/* Why: TeX stacks an aligned block's rows \lineskip (1 pt) apart where
 * fractions make them tall, so the parts of a long bar's fraction and the
 * neighbouring rows' parts lie within its reach (`w&=\frac{1-A}{1+A}\\
 * &=\frac{(1+u)...}{...}` read `1+A` into the second numerator,
 * development seed 1110 on every set-up); a part has one line of its size
 * unless a rule (an inner fraction) joins its lines (lines_joined). */
double
fm_mathtext_part_lines (const FmAlignItem *items, guint n, gboolean above, gboolean *keep)
{
  g_autofree guint *line = g_new (guint, n + 1);
  g_autoptr (GArray) ext = g_array_new (FALSE, FALSE, sizeof (FmRect));   /* per line */
  g_autofree double *mids = NULL;
  g_autofree guint *order = NULL;
  gboolean joined = FALSE;
  double big;

  for (guint i = 0; i < n; i++)
    keep[i] = TRUE;
  big = size_lines (items, n, line, ext);
  if (ext->len < 2)
    return 0;
  mids = g_new (double, ext->len);
  for (guint k = 0; k < ext->len; k++)
    {
      const FmRect *e = &g_array_index (ext, FmRect, k);
      mids[k] = (e->y0 + e->y1) / 2;
    }
  /* nearest the bar first */
  order = g_new (guint, ext->len);
  for (guint k = 0; k < ext->len; k++)
    order[k] = k;
  for (guint x = 0; x < ext->len; x++)
    for (guint y = x + 1; y < ext->len; y++)
      if (above ? mids[order[y]] > mids[order[x]] : mids[order[y]] < mids[order[x]])
        {
          guint t = order[x]; order[x] = order[y]; order[y] = t;
        }
  for (guint k = 1; k < ext->len; k++)
    {
      const FmRect *near = &g_array_index (ext, FmRect, order[k - 1]);
      const FmRect *far = &g_array_index (ext, FmRect, order[k]);
      double m0 = mids[order[k - 1]], m1 = mids[order[k]];
      double lo = MIN (m0, m1), hi = MAX (m0, m1), limit;

      if (lines_joined (items, n, line, order[k - 1], order[k], m0, m1, big, above))
        {
          joined = TRUE;
          continue;
        }
      /* between the two lines' facing edges, inside their middles */
      limit = above ? (near->y0 + far->y1) / 2 : (near->y1 + far->y0) / 2;
      limit = CLAMP (limit, lo, hi);
      for (guint i = 0; i < n; i++)
        {
          double c = (items[i].box.y0 + items[i].box.y1) / 2;
          if (above ? c < limit : c > limit)
            keep[i] = FALSE;
        }
      break;
    }
  return joined ? big : 0;
}

typedef struct {
  const Align *a;
  const char *tex;   /* the seed's LaTeX */
} DelimJoin;

static const FmRect *
delim_box (gpointer data, guint j)
{
  return &((const DelimJoin *) data)->a->items[j].box;
}

/* a piece of the same delimiter, or a repeater without a meaning */
static gboolean
delim_join (gpointer data, guint j)
{
  const DelimJoin *dj = data;
  const FmAlignItem *o = &dj->a->items[j];

  return !dj->a->piece[j] && o->glyph && o->ext &&
         (o->tex == NULL || delim_family (o->tex) == delim_family (dj->tex));
}

/* Tall delimiters: extension-font glyphs with a delimiter's LaTeX (or a
 * meaningless piece between two of them) stacked in one x-range, merged;
 * kept when they reach over more than 1.5 em (a one-line \left( is shorter
 * than two lines). */
static void
find_delims (Align *a)
{
  g_autoptr (GArray) group = g_array_new (FALSE, FALSE, sizeof (guint));

  for (guint i = 0; i < a->n; i++)
    {
      const FmAlignItem *it = &a->items[i];
      DelimJoin dj = { a, it->tex };
      FmPieceStack ps = { delim_box, delim_join, &dj, a->n, 0.3 * a->em, TRUE };
      Delim d;

      if (a->piece[i] || !it->glyph || !it->ext || delim_side (it->tex) == 0)
        continue;
      d.tex = it->tex;
      d.first = i;
      g_array_set_size (group, 0);
      g_array_append_val (group, i);
      a->piece[i] = TRUE;
      d.box = fm_mathtext_grow_stack (&ps, group);
      for (guint k = 0; k < group->len; k++)
        a->piece[g_array_index (group, guint, k)] = TRUE;
      if (d.box.y1 - d.box.y0 > 1.5 * a->em)
        {
          for (guint k = 0; k < group->len; k++)
            a->owner[g_array_index (group, guint, k)] = a->delims->len;
          g_array_append_val (a->delims, d);
        }
      else   /* a one-line delimiter: its row's */
        for (guint k = 0; k < group->len; k++)
          a->piece[g_array_index (group, guint, k)] = FALSE;
    }
}

/* The grid was read: the extra pieces of its delimiters back no symbol. */
static void
forget_pieces (const Align *a)
{
  for (guint i = 0; i < a->n; i++)
    {
      gboolean first = FALSE;
      for (guint k = 0; k < a->delims->len && !first; k++)
        first = g_array_index (a->delims, Delim, k).first == i;
      if (a->piece[i] && !first && a->items[i].tex != NULL && a->ops->forget_piece != NULL)
        a->ops->forget_piece (a->ops->reader, a->items[i].item);
    }
}

static double
main_size (const Align *a)
{
  double s = 0;

  for (guint i = 0; i < a->n; i++)
    if (!a->items[i].ext)
      s = MAX (s, a->items[i].size);
  return s > 0 ? s : 10;
}

/* Rows: full-size items that share a line (fm_mathtext_group_lines, as the
 * reader's parse_list counts them); then small ones to the nearest row.
 * Rows numbered top to bottom. */
static void
find_rows (Align *a, double full)
{
  g_autoptr (GArray) mids = g_array_new (FALSE, TRUE, sizeof (double));
  g_autoptr (GArray) counts = g_array_new (FALSE, TRUE, sizeof (guint));
  g_autofree gboolean *take = g_new (gboolean, a->n + 1);
  guint *order, *rank;

  for (guint i = 0; i < a->n; i++)
    take[i] = !a->piece[i] && !a->outside[i] && a->items[i].size >= full;
  g_array_set_size (mids, fm_mathtext_group_lines (a->items, a->n, take, a->em, a->row));
  g_array_set_size (counts, mids->len);
  for (guint i = 0; i < a->n; i++)
    if (a->row[i] != ROW_NONE)
      {
        g_array_index (mids, double, a->row[i]) += a->items[i].mid;
        g_array_index (counts, guint, a->row[i])++;
      }
  a->n_rows = mids->len;
  order = g_new (guint, a->n_rows + 1);
  rank = g_new (guint, a->n_rows + 1);
  for (guint j = 0; j < a->n_rows; j++)
    {
      g_array_index (mids, double, j) /= g_array_index (counts, guint, j);
      order[j] = j;
    }
  for (guint x = 0; x < a->n_rows; x++)
    for (guint y = x + 1; y < a->n_rows; y++)
      if (g_array_index (mids, double, order[y]) < g_array_index (mids, double, order[x]))
        {
          guint t = order[x]; order[x] = order[y]; order[y] = t;
        }
  a->row_mid = g_new (double, a->n_rows + 1);
  for (guint j = 0; j < a->n_rows; j++)
    {
      rank[order[j]] = j;
      a->row_mid[j] = g_array_index (mids, double, order[j]);
    }
  for (guint i = 0; i < a->n; i++)
    if (a->row[i] != ROW_NONE)
      a->row[i] = rank[a->row[i]];
    else if (!a->piece[i] && !a->outside[i] && a->n_rows > 0)
      {
        guint best = 0;
        for (guint j = 1; j < a->n_rows; j++)
          if (fabs (cy (&a->items[i]) - a->row_mid[j]) < fabs (cy (&a->items[i]) - a->row_mid[best]))
            best = j;
        a->row[i] = best;
      }
  g_free (order);
  g_free (rank);
}

static gboolean
spans_rows (const Align *a, const Delim *d)
{
  for (guint j = 0; j < a->n_rows; j++)
    if (a->row_mid[j] < d->box.y0 || a->row_mid[j] > d->box.y1)
      return FALSE;
  return TRUE;
}

/* Whether item i is a cell item (not a delimiter piece) of row `row`
 * (ROW_NONE: of any row) with its centre in [x0, x1). */
static gboolean
in_part (const Align *a, guint i, guint row, double x0, double x1)
{
  double c = (a->items[i].box.x0 + a->items[i].box.x1) / 2;

  return !a->piece[i] && a->row[i] != ROW_NONE && (row == ROW_NONE || a->row[i] == row) &&
         c >= x0 && c < x1;
}

/* The LaTeX of the items of row `row` (ROW_NONE: any row) whose centre lies
 * in [x0, x1). */
static char *
parse_part (const Align *a, guint row, double x0, double x1)
{
  g_autoptr (GPtrArray) part = g_ptr_array_new ();

  for (guint i = 0; i < a->n; i++)
    if (in_part (a, i, row, x0, x1))
      g_ptr_array_add (part, a->items[i].item);
  if (part->len == 0)
    return g_strdup ("");
  return a->ops->parse_line (a->ops->reader, part);
}

/* The line-by-line reading (rows joined by \\, no columns), uncertain. */
static char *
rows_plain (const Align *a, const char *env, const char *lead)
{
  GString *out = g_string_new (NULL);

  g_string_append_printf (out, "\\begin{%s}", env);
  for (guint j = 0; j < a->n_rows; j++)
    {
      g_autofree char *t = parse_part (a, j, -G_MAXDOUBLE, G_MAXDOUBLE);
      if (j > 0)
        g_string_append (out, "\\\\");
      g_string_append (out, lead);
      g_string_append (out, t);
    }
  g_string_append_printf (out, "\\end{%s}", env);
  return g_string_free (out, FALSE);
}

static int
rect_by_x0 (gconstpointer pa, gconstpointer pb)
{
  double a = ((const FmRect *) pa)->x0, b = ((const FmRect *) pb)->x0;
  return (a > b) - (a < b);
}

/* The boxes of the grid's items (not pieces) of row `row` (ROW_NONE: any
 * row) whose centre lies in [x0, x1), sorted by left edge. */
static GArray *
spans_by_x0 (const Align *a, guint row, double x0, double x1)
{
  GArray *spans = g_array_new (FALSE, FALSE, sizeof (FmRect));

  for (guint i = 0; i < a->n; i++)
    if (in_part (a, i, row, x0, x1))
      g_array_append_val (spans, a->items[i].box);
  g_array_sort (spans, rect_by_x0);
  return spans;
}

/* Column boundaries of a grid between x0 and x1: x-ranges of at least
 * 0.6 em free of every item (binary and relation spaces are 0.22 and
 * 0.28 em; matrix columns stand 1 em apart, cases' \quad too). Returns the
 * cut positions (mid-gap), sorted. */
static GArray *
column_cuts (const Align *a, double x0, double x1, double *widest)
{
  g_autoptr (GArray) spans = spans_by_x0 (a, ROW_NONE, x0, x1);
  GArray *cuts = g_array_new (FALSE, FALSE, sizeof (double));
  double reach = -G_MAXDOUBLE;

  *widest = 0;

  for (guint p = 0; p < spans->len; p++)
    {
      FmRect *b = &g_array_index (spans, FmRect, p);
      if (p > 0 && b->x0 - reach >= 0.6 * a->em)
        {
          double cut = (reach + b->x0) / 2;
          g_array_append_val (cuts, cut);
          *widest = MAX (*widest, b->x0 - reach);
        }
      reach = MAX (reach, b->x1);
    }
  return cuts;
}

/* The first x0 of a row's items in [x0, x1). */
static double
row_start (const Align *a, guint row, double x0, double x1)
{
  double s = G_MAXDOUBLE;

  for (guint i = 0; i < a->n; i++)
    if (in_part (a, i, row, x0, x1))
      s = MIN (s, a->items[i].box.x0);
  return s;
}

/* Rows and columns between two delimiters (or right of a lone brace). */
static char *
grid (const Align *a, const Delim *open, const Delim *close)
{
  g_autoptr (GArray) cuts = NULL;
  double x0 = open->box.x1, x1 = close != NULL ? close->box.x0 : G_MAXDOUBLE;
  const char *env, *pre = "", *post = "";
  gboolean certain_env = FALSE;
  double widest = 0;
  GString *out;

  cuts = column_cuts (a, x0, x1, &widest);
  /* matrix columns stand 2 \arraycolsep (1 em) apart, cases' \quad too;
   * twice that is an empty column between them (`a&&b`, the corpus's
   * Hessian) or spacing in a cell */
  if (widest > 1.6 * a->em)
    a->ops->uncertain (a->ops->reader, "a column gap of two (an empty column, `&&`?)");
  if (open->tex[0] == '\0')
    env = "matrix";
  else if (close == NULL)
    {
      gboolean left_aligned = cuts->len == 1;
      double s0 = 0;
      for (guint j = 0; j < a->n_rows && left_aligned; j++)
        {
          double s = row_start (a, j, g_array_index (cuts, double, 0), x1);
          if (s == G_MAXDOUBLE)
            continue;
          if (s0 == 0)
            s0 = s;
          else if (fabs (s - s0) > 0.1 * a->em)
            left_aligned = FALSE;
        }
      if (left_aligned)
        {
          env = "cases";
          certain_env = TRUE;
        }
      else
        {
          env = "matrix", pre = "\\left\\{", post = "\\right.";
          a->ops->uncertain (a->ops->reader, "a brace over rows that are not two left-aligned columns");
        }
    }
  else if (strcmp (open->tex, "[") == 0 && strcmp (close->tex, "]") == 0)
    env = "bmatrix", certain_env = TRUE;
  else if (strcmp (open->tex, "|") == 0 && strcmp (close->tex, "|") == 0)
    env = "vmatrix";
  else if (strcmp (open->tex, "\\|") == 0 && strcmp (close->tex, "\\|") == 0)
    env = "Vmatrix";
  else
    {
      env = "matrix";
      pre = strcmp (open->tex, "(") == 0 ? "\\left(" : strcmp (open->tex, "[") == 0 ? "\\left[" : "\\left\\{";
      post = strcmp (close->tex, ")") == 0 ? "\\right)" : strcmp (close->tex, "]") == 0 ? "\\right]" : "\\right\\}";
    }
  if (!certain_env)
    a->ops->uncertain (a->ops->reader, "matrix delimiters: pmatrix, vmatrix or \\left...\\begin{matrix}");
  out = g_string_new (pre);
  g_string_append_printf (out, "\\begin{%s}", env);
  for (guint j = 0; j < a->n_rows; j++)
    {
      if (j > 0)
        g_string_append (out, "\\\\");
      for (guint k = 0; k <= cuts->len; k++)
        {
          double c0 = k == 0 ? x0 : g_array_index (cuts, double, k - 1);
          double c1 = k == cuts->len ? x1 : g_array_index (cuts, double, k);
          g_autofree char *t = parse_part (a, j, c0, c1);
          if (k > 0)
            g_string_append (out, "&");
          g_string_append (out, t);
        }
    }
  g_string_append_printf (out, "\\end{%s}%s", env, post);
  return g_string_free (out, FALSE);
}

/* x0 of the relations of a row, in order. */
static GArray *
row_relations (const Align *a, guint row)
{
  GArray *xs = g_array_new (FALSE, FALSE, sizeof (double));

  for (guint i = 0; i < a->n; i++)
    if (!a->piece[i] && a->row[i] == row && a->items[i].glyph &&
        is_relation (a->items[i].tex))
      g_array_append_val (xs, a->items[i].box.x0);
  return xs;
}

static gboolean
has_at (GArray *xs, double x, double tol)
{
  for (guint k = 0; k < xs->len; k++)
    if (fabs (g_array_index (xs, double, k) - x) <= tol)
      return TRUE;
  return FALSE;
}

/* A row's extent and its leftmost item (rows_only's rules ask for them per
 * relation and row). */
typedef struct {
  double x0, x1;
  const FmAlignItem *first;
} RowSpan;

static RowSpan *
row_spans (const Align *a)
{
  RowSpan *rs = g_new (RowSpan, a->n_rows + 1);

  for (guint j = 0; j < a->n_rows; j++)
    rs[j] = (RowSpan) { G_MAXDOUBLE, -G_MAXDOUBLE, NULL };
  for (guint i = 0; i < a->n; i++)
    if (in_part (a, i, ROW_NONE, -G_MAXDOUBLE, G_MAXDOUBLE))
      {
        RowSpan *r = &rs[a->row[i]];
        if (r->first == NULL || a->items[i].box.x0 < r->first->box.x0)
          r->first = &a->items[i];
        r->x0 = MIN (r->x0, a->items[i].box.x0);
        r->x1 = MAX (r->x1, a->items[i].box.x1);
      }
  return rs;
}

/* A row that continues the one above it (split's and aligned's
 * `&\quad+e-f`): no relation, a binary operator first, a \quad or \qquad
 * right of the relation column at x. Returns the quads (1 or 2), 0 when it
 * does not continue. amsmath starts the column after `&` with `{}`: the
 * relation stands a thick space (5/18 em) right of the column's start and
 * the operator after `{}\quad` a medium one (4/18 em) right of the quad, so
 * 1 or 2 em - 1/18 em right of x. Any other offset (a centred gathered or
 * multline row that starts with `+`) is no continued row. */
static guint
continues_at (const Align *a, GArray *rels, const RowSpan *span, double x)
{
  static const char *const binary[] = { "+", "-", "\\pm", "\\mp", "\\times", "\\cdot", NULL };
  const FmAlignItem *first = span->first;
  guint quads = 0;

  if (rels->len > 0 || first == NULL || !first->glyph || first->tex == NULL)
    return 0;
  for (guint q = 1; q <= 2; q++)
    if (fabs (first->box.x0 - x - (q - 1.0 / 18) * a->em) <= 0.15 * a->em)
      quads = q;
  for (int k = 0; quads > 0 && binary[k] != NULL; k++)
    if (strcmp (binary[k], first->tex) == 0)
      return quads;
  return 0;
}

/* The x where every row has a relation, starts or continues the row above
 * (at least two rows with a relation there, or one and a continued row);
 * the leftmost such, with each row's quads (continues_at) in quads.
 * G_MAXDOUBLE when none. */
static double
relation_column (const Align *a, GPtrArray *rels, const RowSpan *spans, guint *quads)
{
  double tol = 0.1 * a->em, best = G_MAXDOUBLE;
  g_autofree guint *q_at = g_new0 (guint, a->n_rows + 1);

  for (guint j = 0; j < a->n_rows; j++)
    {
      GArray *xs = rels->pdata[j];
      for (guint k = 0; k < xs->len; k++)
        {
          double x = g_array_index (xs, double, k);
          guint with = 0, cont = 0;
          gboolean fits = TRUE;
          for (guint q = 0; q < a->n_rows && fits; q++)
            {
              q_at[q] = 0;
              if (has_at (rels->pdata[q], x, tol))
                with++;
              else if (q > 0 && (q_at[q] = continues_at (a, rels->pdata[q], &spans[q], x)) > 0)
                cont++;
              else if (spans[q].first == NULL || fabs (spans[q].x0 - x) > tol)
                fits = FALSE;
            }
          if (fits && (with >= 2 || (with >= 1 && cont >= 1)) && x < best)
            {
              best = x;
              memcpy (quads, q_at, sizeof (guint) * a->n_rows);
            }
        }
    }
  return best;
}

/* The widest gap between a row's items in [x0, x1) (sorted by x0), and
 * the gap before x1 (from the last item's right edge). */
static double
row_gaps (const Align *a, guint row, double x0, double x1, double *before_end)
{
  g_autoptr (GArray) spans = spans_by_x0 (a, row, x0, x1);
  double reach = -G_MAXDOUBLE, widest = 0;

  for (guint p = 0; p < spans->len; p++)
    {
      FmRect *b = &g_array_index (spans, FmRect, p);
      if (p > 0)
        widest = MAX (widest, b->x0 - reach);
      reach = MAX (reach, b->x1);
    }
  *before_end = spans->len > 0 ? x1 - reach : 0;
  return widest;
}

/* aligned's spacing: a left-hand side ends a thick space (0.28 em) before
 * its relation; array{rcl}'s `&=&` sets it 2 \arraycolsep (1 em) apart, and
 * a second column pair (`&&`, alignat) leaves a wide gap in a row. */
static void
check_aligned_spacing (const Align *a, double x)
{
  for (guint j = 0; j < a->n_rows; j++)
    {
      double end_gap = 0, unused = 0;
      double widest = row_gaps (a, j, x - 0.05 * a->em, G_MAXDOUBLE, &unused);
      row_gaps (a, j, -G_MAXDOUBLE, x - 0.05 * a->em, &end_gap);
      if (end_gap > 0.6 * a->em)
        a->ops->uncertain (a->ops->reader, "a wide gap before the relation column (array{rcl}?)");
      if (widest > 1.5 * a->em)
        a->ops->uncertain (a->ops->reader, "a wide gap in a row (more column pairs, \\quad?)");
    }
}

static char *
aligned_at (const Align *a, double x, const guint *quads)
{
  GString *out = g_string_new ("\\begin{aligned}");
  double cut = x - 0.05 * a->em;

  check_aligned_spacing (a, x);

  for (guint j = 0; j < a->n_rows; j++)
    {
      g_autofree char *l = parse_part (a, j, -G_MAXDOUBLE, cut);
      g_autofree char *r = parse_part (a, j, cut, G_MAXDOUBLE);
      if (j > 0)
        g_string_append (out, "\\\\");
      g_string_append_printf (out, "%s&%s%s", l, quads[j] == 2 ? "\\qquad" : quads[j] == 1 ? "\\quad" : "", r);
    }
  g_string_append (out, "\\end{aligned}");
  return g_string_free (out, FALSE);
}

/* Columns (x-ranges free of ink in every row) with something in every row
 * and column. */
static gboolean
is_grid (const Align *a)
{
  double widest = 0;
  g_autoptr (GArray) cuts = column_cuts (a, -G_MAXDOUBLE, G_MAXDOUBLE, &widest);

  if (cuts->len == 0)
    return FALSE;
  for (guint j = 0; j < a->n_rows; j++)
    for (guint k = 0; k <= cuts->len; k++)
      {
        double c0 = k == 0 ? -G_MAXDOUBLE : g_array_index (cuts, double, k - 1);
        double c1 = k == cuts->len ? G_MAXDOUBLE : g_array_index (cuts, double, k);
        if (row_start (a, j, c0, c1) == G_MAXDOUBLE)
          return FALSE;
      }
  return TRUE;
}

/* Rows without a delimiter around them: aligned, left-aligned or gathered. */
static char *
rows_only (const Align *a)
{
  g_autoptr (GPtrArray) rels = g_ptr_array_new_with_free_func ((GDestroyNotify) g_array_unref);
  g_autofree RowSpan *spans = row_spans (a);
  g_autofree guint *quads = g_new0 (guint, a->n_rows + 1);
  double x, tol = 0.1 * a->em;
  gboolean starts = TRUE, centred = TRUE, continued = FALSE;

  for (guint j = 0; j < a->n_rows; j++)
    {
      g_ptr_array_add (rels, row_relations (a, j));
      starts = starts && fabs (spans[j].x0 - spans[0].x0) <= tol;
      centred = centred && fabs ((spans[j].x0 + spans[j].x1) / 2 - (spans[0].x0 + spans[0].x1) / 2) <= 0.3 * a->em;
    }
  x = relation_column (a, rels, spans, quads);
  if (x != G_MAXDOUBLE)
    {
      /* rows that also all start at one x (left-hand sides of one width,
       * "g_{1}(x)=" over "g_{2}(x)="): `&` first or at the relation */
      if (starts && spans[0].x0 < x - tol)
        a->ops->uncertain (a->ops->reader, "rows that start at one x and align at a relation (& first or at it)");
      /* a gathered row `+d` under `a=b+c` can stand a quad right of the
       * relation too */
      for (guint j = 0; j < a->n_rows; j++)
        continued = continued || quads[j] > 0;
      if (continued && centred)
        a->ops->uncertain (a->ops->reader, "a continued row in centred rows (gathered?)");
      return aligned_at (a, x, quads);
    }
  if (is_grid (a))
    {
      /* columns without delimiters: a matrix, or one whose bars or
       * parentheses have no text-layer glyph (\vert pieces) */
      Delim open = { { -G_MAXDOUBLE, 0, -G_MAXDOUBLE, 0 }, "", 0 };
      a->ops->uncertain (a->ops->reader, "columns without delimiters (a matrix whose delimiters are ink?)");
      return grid (a, &open, NULL);
    }
  if (starts)
    {
      a->ops->uncertain (a->ops->reader, "several lines that start at one x (aligned at their start?)");
      return rows_plain (a, "aligned", "&");
    }
  if (centred)
    {
      a->ops->uncertain (a->ops->reader, "several centred lines (gathered or a one-column matrix)");
      return rows_plain (a, "gathered", "");
    }
  a->ops->uncertain (a->ops->reader, "several lines");
  return rows_plain (a, "aligned", "");
}

/* Tall delimiters over every row, paired by nesting in x order (a bar
 * closes an open bar); top-level pairs are grids, and a brace left open at
 * the end is cases. FALSE when they do not pair up. */
static gboolean
pair_delims (const Align *a, GArray *pairs)
{
  g_autoptr (GArray) spanning = g_array_new (FALSE, FALSE, sizeof (guint));
  g_autoptr (GArray) stack = g_array_new (FALSE, FALSE, sizeof (guint));

  for (guint k = 0; k < a->delims->len; k++)
    if (spans_rows (a, &g_array_index (a->delims, Delim, k)))
      g_array_append_val (spanning, k);
  for (guint p = 0; p < spanning->len; p++)
    for (guint q = p + 1; q < spanning->len; q++)
      if (g_array_index (a->delims, Delim, g_array_index (spanning, guint, q)).box.x0 <
          g_array_index (a->delims, Delim, g_array_index (spanning, guint, p)).box.x0)
        {
          guint t = g_array_index (spanning, guint, p);
          g_array_index (spanning, guint, p) = g_array_index (spanning, guint, q);
          g_array_index (spanning, guint, q) = t;
        }
  for (guint p = 0; p < spanning->len; p++)
    {
      guint k = g_array_index (spanning, guint, p);
      const Delim *d = &g_array_index (a->delims, Delim, k);
      int side = delim_side (d->tex);
      const Delim *top = stack->len > 0 ? &g_array_index (a->delims, Delim, g_array_index (stack, guint, stack->len - 1)) : NULL;

      if (side == -1 || (side == 2 && (top == NULL || strcmp (top->tex, d->tex) != 0)))
        g_array_append_val (stack, k);
      else if (top != NULL && delim_family (top->tex) == delim_family (d->tex))
        {
          guint pair[2] = { g_array_index (stack, guint, stack->len - 1), k };
          g_array_set_size (stack, stack->len - 1);
          if (stack->len > 0)
            return FALSE;   /* nested grids: not read */
          g_array_append_vals (pairs, pair, 2);
        }
      else
        return FALSE;
    }
  if (stack->len == 1 && delim_family (g_array_index (a->delims, Delim, g_array_index (stack, guint, 0)).tex) == 'c' &&
      delim_side (g_array_index (a->delims, Delim, g_array_index (stack, guint, 0)).tex) == -1)
    {
      guint pair[2] = { g_array_index (stack, guint, 0), G_MAXUINT };
      g_array_append_vals (pairs, pair, 2);
    }
  else if (stack->len > 0)
    return FALSE;
  return pairs->len > 0;
}

/* The items between two grids (or before the first, after the last): one
 * line of the formula. */
static char *
between (Align *a, double x0, double x1)
{
  g_autoptr (GPtrArray) part = g_ptr_array_new ();

  for (guint i = 0; i < a->n; i++)
    {
      double c = (a->items[i].box.x0 + a->items[i].box.x1) / 2;
      if (!a->piece[i] && c >= x0 && c < x1)
        g_ptr_array_add (part, a->items[i].item);
    }
  return part->len > 0 ? a->ops->parse_line (a->ops->reader, part) : g_strdup ("");
}

/* One grid: its rows alone (a formula beside it at the middle is not one). */
static char *
one_grid (Align *a, const Delim *open, const Delim *close)
{
  double x0 = open->box.x1, x1 = close != NULL ? close->box.x0 : G_MAXDOUBLE;
  char *t = NULL;

  for (guint i = 0; i < a->n; i++)
    {
      double c = (a->items[i].box.x0 + a->items[i].box.x1) / 2;
      a->outside[i] = a->piece[i] || c < x0 || c >= x1;
    }
  g_free (a->row_mid);
  find_rows (a, 0.85 * a->em);
  if (a->n_rows >= 2)
    t = grid (a, open, close);
  else
    {
      a->ops->uncertain (a->ops->reader, "a tall delimiter around one line");
      t = parse_part (a, ROW_NONE, x0, x1);
    }
  return t;
}

/* Grids between tall delimiters over every row and the formula around
 * them; NULL (not *done) when there are none or they do not pair up. */
static char *
with_delims (Align *a, gboolean *done)
{
  g_autoptr (GArray) pairs = g_array_new (FALSE, FALSE, sizeof (guint));
  GString *out;
  double x = -G_MAXDOUBLE;

  *done = FALSE;
  if (!pair_delims (a, pairs))
    return NULL;
  *done = TRUE;
  /* tall delimiters inside a row (\left( around a fraction) are its own */
  for (guint i = 0; i < a->n; i++)
    {
      gboolean paired = FALSE;
      for (guint p = 0; p < pairs->len && a->piece[i]; p++)
        paired = paired || g_array_index (pairs, guint, p) == a->owner[i];
      if (a->piece[i] && !paired)
        a->piece[i] = FALSE;
    }
  out = g_string_new (NULL);
  for (guint p = 0; p < pairs->len; p += 2)
    {
      const Delim *open = &g_array_index (a->delims, Delim, g_array_index (pairs, guint, p));
      guint c = g_array_index (pairs, guint, p + 1);
      const Delim *close = c != G_MAXUINT ? &g_array_index (a->delims, Delim, c) : NULL;
      g_autofree char *before = between (a, x, open->box.x0);
      g_autofree char *inside = one_grid (a, open, close);
      g_string_append (out, before);
      g_string_append (out, inside);
      x = close != NULL ? close->box.x1 : G_MAXDOUBLE;
    }
  {
    g_autofree char *after = x < G_MAXDOUBLE ? between (a, x, G_MAXDOUBLE) : g_strdup ("");
    g_string_append (out, after);
  }
  return g_string_free (out, FALSE);
}

char *
fm_mathtext_align (const FmAlignOps *ops, const FmAlignItem *items, guint n_items)
{
  Align a = { ops, items, n_items, 0, NULL, NULL, NULL, NULL, 0, NULL, NULL };
  char *tex = NULL;
  gboolean done = FALSE;

  a.em = main_size (&a);
  a.row = g_new0 (guint, n_items + 1);
  a.piece = g_new0 (gboolean, n_items + 1);
  a.outside = g_new0 (gboolean, n_items + 1);
  a.owner = g_new (guint, n_items + 1);
  for (guint i = 0; i <= n_items; i++)
    a.owner[i] = G_MAXUINT;
  a.delims = g_array_new (FALSE, FALSE, sizeof (Delim));
  find_delims (&a);
  find_rows (&a, 0.85 * a.em);
  if (a.n_rows >= 2)
    tex = with_delims (&a, &done);
  if (done)
    forget_pieces (&a);
  if (!done && a.n_rows >= 2)
    {
      /* no grid: delimiter pieces are ordinary items again */
      memset (a.piece, 0, sizeof (gboolean) * n_items);
      g_free (a.row_mid);
      a.row_mid = NULL;
      find_rows (&a, 0.85 * a.em);
    }
  if (!done)
    tex = a.n_rows >= 2 ? rows_only (&a) : parse_part (&a, ROW_NONE, -G_MAXDOUBLE, G_MAXDOUBLE);
  g_free (a.row);
  g_free (a.piece);
  g_free (a.outside);
  g_free (a.owner);
  g_free (a.row_mid);
  g_array_unref (a.delims);
  return tex;
}
