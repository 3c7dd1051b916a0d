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
 *   a bar without a partner inside a pair is an array's rule ({ccc|c});
 * - without one, relations centred at one x, 1 em from both sides, are an
 *   array{rcl}'s middle column; else rows whose relations stand at one x
 *   are aligned (`&` before that relation; a row without one that starts at
 *   that x gets `&` first), with further relation columns after a 1 em gap
 *   as column pairs (`a&=b&c&=d`); rows that all start at one x are aligned
 *   with `&` first (uncertain); columns without delimiters are a matrix or
 *   an array{ll} (uncertain); centred rows are gathered (uncertain: a
 *   one-column matrix looks alike).
 *
 * Only aligned, cases, bmatrix, array{rcl} and a ruled array whose columns
 * show their alignment can come out CERTAIN, and only when every cell reads
 * certainly: the other spellings render alike in other ways.
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
  gboolean rule;      /* a bar without a partner inside a pair: an array's rule */
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
      d.rule = FALSE;
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
      /* a rule backs no symbol at all (its spec's `|` draws it) */
      for (guint k = 0; k < a->delims->len && !first; k++)
        first = g_array_index (a->delims, Delim, k).first == i && !g_array_index (a->delims, Delim, k).rule;
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

/* The line-by-line reading (rows joined by \\, no columns); the caller
 * says whether it is sure. */
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
rect_by_x0_double (gconstpointer pa, gconstpointer pb)
{
  double a = *(const double *) pa, b = *(const double *) pb;
  return (a > b) - (a < b);
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

static int
items_by_x0 (gconstpointer pa, gconstpointer pb, gpointer data)
{
  const Align *al = data;
  double a = al->items[*(const guint *) pa].box.x0, b = al->items[*(const guint *) pb].box.x0;
  return (a > b) - (a < b);
}

/* Whether an item is an upright text group (`\text{for}`). */
static gboolean
is_text_word (const FmAlignItem *it)
{
  return !it->glyph && it->tex != NULL && g_str_has_prefix (it->tex, "\\text{");
}

/* Column boundaries of a grid between x0 and x1: x-ranges of at least
 * 0.6 em free of every item (binary and relation spaces are 0.22 and
 * 0.28 em; matrix columns stand 1 em apart, cases' \quad too). A gap under
 * 0.8 em after a text group is its word space and a `\;` (0.61 em: the
 * reader writes `\;` there, fm-mathtext.c line_append_space), no column:
 * `&\qquad\text{for }\;t>0` in every row of an array had read as three
 * columns, `\text{for}&t>0`. Returns the cut positions (mid-gap), sorted. */
static GArray *
column_cuts (const Align *a, double x0, double x1, double *widest)
{
  g_autoptr (GArray) order = g_array_new (FALSE, FALSE, sizeof (guint));
  GArray *cuts = g_array_new (FALSE, FALSE, sizeof (double));
  double reach = -G_MAXDOUBLE;
  const FmAlignItem *last = NULL;   /* the item that reaches furthest right */

  *widest = 0;
  for (guint i = 0; i < a->n; i++)
    if (in_part (a, i, ROW_NONE, x0, x1))
      g_array_append_val (order, i);
  g_array_sort_with_data (order, items_by_x0, (gpointer) a);
  for (guint p = 0; p < order->len; p++)
    {
      const FmAlignItem *it = &a->items[g_array_index (order, guint, p)];
      double gap = it->box.x0 - reach;
      if (p > 0 && gap >= 0.6 * a->em && !(gap < 0.8 * a->em && is_text_word (last)))
        {
          double cut = (reach + it->box.x0) / 2;
          g_array_append_val (cuts, cut);
          *widest = MAX (*widest, gap);
        }
      if (it->box.x1 > reach)
        reach = it->box.x1, last = it;
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

/* An array's column spec from its cells' edges: per column, 'l' when its
 * non-empty cells start at one x, 'r' when they end at one, 'c' when their
 * centres meet; '?' when that cannot be told (fewer than two cells, or
 * cells of one width, which every alignment sets alike) or none fits.
 * cuts as column_cuts gives them between x0 and x1. Newly allocated. */
static char *
column_spec (const Align *a, double x0, double x1, GArray *cuts)
{
  double tol = 0.1 * a->em;
  char *spec = g_new0 (char, cuts->len + 2);

  for (guint k = 0; k <= cuts->len; k++)
    {
      double c0 = k == 0 ? x0 : g_array_index (cuts, double, k - 1);
      double c1 = k == cuts->len ? x1 : g_array_index (cuts, double, k);
      double lo[3] = { G_MAXDOUBLE, G_MAXDOUBLE, G_MAXDOUBLE }, hi[3] = { -G_MAXDOUBLE, -G_MAXDOUBLE, -G_MAXDOUBLE };
      guint cells = 0;

      for (guint j = 0; j < a->n_rows; j++)
        {
          double s = G_MAXDOUBLE, e = -G_MAXDOUBLE;
          for (guint i = 0; i < a->n; i++)
            if (in_part (a, i, j, c0, c1))
              s = MIN (s, a->items[i].box.x0), e = MAX (e, a->items[i].box.x1);
          if (s == G_MAXDOUBLE)
            continue;
          cells++;
          /* left edges, right edges, centres */
          lo[0] = MIN (lo[0], s), hi[0] = MAX (hi[0], s);
          lo[1] = MIN (lo[1], e), hi[1] = MAX (hi[1], e);
          lo[2] = MIN (lo[2], (s + e) / 2), hi[2] = MAX (hi[2], (s + e) / 2);
        }
      if (cells < 2 || (hi[0] - lo[0] <= tol && hi[1] - lo[1] <= tol))
        spec[k] = '?';
      else
        spec[k] = hi[0] - lo[0] <= tol ? 'l' : hi[1] - lo[1] <= tol ? 'r' : hi[2] - lo[2] <= tol ? 'c' : '?';
    }
  return spec;
}

/* The column spec of an array with rules (a bar without a partner between
 * its delimiters, pair_delims): column_spec's with `|` at each rule's
 * column gap; NULL when there is no rule. A column whose alignment cannot
 * be told is written 'c' (the corpus's augmented matrices are {ccc|c} all
 * 16 times), uncertain; a rule away from every gap is not read. */
static char *
rule_spec (const Align *a, double x0, double x1, GArray *cuts)
{
  g_autofree char *cols = column_spec (a, x0, x1, cuts);
  GString *spec = g_string_new (NULL);
  guint rules = 0;

  for (guint k = 0; k <= cuts->len; k++)
    {
      if (cols[k] == '?')
        cols[k] = 'c';
      g_string_append_c (spec, cols[k]);
      for (guint d = 0; d < a->delims->len && k < cuts->len; d++)
        {
          const Delim *r = &g_array_index (a->delims, Delim, d);
          if (r->rule && fabs ((r->box.x0 + r->box.x1) / 2 - g_array_index (cuts, double, k)) < 0.3 * a->em)
            {
              g_string_append_c (spec, '|');
              rules++;
            }
        }
    }
  for (guint d = 0; d < a->delims->len; d++)
    {
      Delim *r = &g_array_index (a->delims, Delim, d);
      gboolean at_gap = FALSE;
      if (!r->rule || (r->box.x0 + r->box.x1) / 2 <= x0 || (r->box.x0 + r->box.x1) / 2 >= x1)
        continue;
      rules--;
      for (guint k = 0; k < cuts->len; k++)
        at_gap = at_gap || fabs ((r->box.x0 + r->box.x1) / 2 - g_array_index (cuts, double, k)) < 0.3 * a->em;
      /* a bar at no column gap (`\middle|` between two matrices) is no
       * rule of this array: its symbol stays (it had vanished) */
      if (!at_gap)
        r->rule = FALSE;
    }
  if (rules != 0)
    a->ops->uncertain (a->ops->reader, "a rule between the delimiters that is not at a column gap");
  if (spec->len == cuts->len + 1)
    {
      g_string_free (spec, TRUE);
      return NULL;
    }
  {
    g_autofree char *seen = column_spec (a, x0, x1, cuts);
    if (strchr (seen, '?') != NULL)
      a->ops->uncertain (a->ops->reader, "array columns of one width (l, c or r?)");
  }
  return g_string_free (spec, FALSE);
}

/* \left or \right for a ruled array's delimiter. */
static const char *
ruled_delim (const char *tex, gboolean left)
{
  static const char *const map[][3] = {
    { "(", "\\left(", "\\right)" }, { ")", "\\left(", "\\right)" }, { "[", "\\left[", "\\right]" },
    { "]", "\\left[", "\\right]" }, { "\\{", "\\left\\{", "\\right\\}" }, { "\\}", "\\left\\{", "\\right\\}" },
    { "\\|", "\\left\\|", "\\right\\|" },
  };

  for (guint k = 0; k < G_N_ELEMENTS (map); k++)
    if (strcmp (tex, map[k][0]) == 0)
      return map[k][left ? 1 : 2];
  return left ? "\\left|" : "\\right|";
}

/* A fraction wider than a column: its bar stands over a gap of another
 * row's columns (0.9 em or more between two of its items under the bar).
 * An array's \\hline over rows is such a bar, and the reader made the rows
 * above and below it a fraction (`\\frac{5\\quad6...}{9\\quad1...}`, read
 * CERTAIN in an augmented matrix); a cell's fraction stays in its column. */
static void
rule_over_columns (const Align *a, double x0, double x1)
{
  for (guint i = 0; i < a->n; i++)
    {
      const FmRect *b = &a->items[i].box;
      if (a->items[i].tex == NULL || !g_str_has_prefix (a->items[i].tex, "\\frac") || a->row[i] == ROW_NONE ||
          (b->x0 + b->x1) / 2 < x0 || (b->x0 + b->x1) / 2 > x1)
        continue;
      for (guint j = 0; j < a->n_rows; j++)
        {
          g_autoptr (GArray) spans = NULL;
          double reach = -G_MAXDOUBLE;
          if (j == a->row[i])
            continue;
          spans = spans_by_x0 (a, j, b->x0, b->x1);
          for (guint p = 0; p < spans->len; p++)
            {
              const FmRect *s = &g_array_index (spans, FmRect, p);
              if (p > 0 && s->x0 - reach >= 0.9 * a->em)
                {
                  a->ops->uncertain (a->ops->reader, "a fraction bar over columns (\\hline?)");
                  return;
                }
              reach = MAX (reach, s->x1);
            }
        }
    }
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
  g_autofree char *spec = NULL;
  GString *out;

  cuts = column_cuts (a, x0, x1, &widest);
  /* matrix columns stand 2 \arraycolsep (1 em) apart, cases' \quad too;
   * twice that is an empty column between them (`a&&b`, the corpus's
   * Hessian) or spacing in a cell */
  if (widest > 1.6 * a->em)
    a->ops->uncertain (a->ops->reader, "a column gap of two (an empty column, `&&`?)");
  if (open->tex[0] == '\0')
    {
      /* left- or right-aligned columns are an array's (array{ll}: a
       * matrix centres them) */
      spec = column_spec (a, x0, x1, cuts);
      env = strchr (spec, '?') == NULL && strspn (spec, "c") < strlen (spec) ? "array" : "matrix";
    }
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
  else if ((spec = rule_spec (a, x0, x1, cuts)) != NULL)
    {
      /* \left[\begin{array}{ccc|c}...\end{array}\right] */
      env = "array";
      /* an augmented matrix's brackets or parentheses; a brace or bars
       * (`\left\{...\middle|...\right\}`, a set) are another construct
       * that draws them alike, uncertain */
      certain_env = (strcmp (open->tex, "[") == 0 && strcmp (close->tex, "]") == 0) ||
                    (strcmp (open->tex, "(") == 0 && strcmp (close->tex, ")") == 0);
      pre = ruled_delim (open->tex, TRUE);
      post = ruled_delim (close->tex, FALSE);
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
  if (!certain_env && strcmp (env, "array") == 0 && close != NULL && open->tex[0] != '\0')
    a->ops->uncertain (a->ops->reader, "a ruled array in braces or bars");
  rule_over_columns (a, x0, x1);
  if (!certain_env && strcmp (env, "array") != 0)
    a->ops->uncertain (a->ops->reader, "matrix delimiters: pmatrix, vmatrix or \\left...\\begin{matrix}");
  out = g_string_new (pre);
  g_string_append_printf (out, "\\begin{%s}", env);
  if (strcmp (env, "array") == 0)
    g_string_append_printf (out, "{%s}", spec);
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

/* Where row j's right-hand side of one pair ends and the next pair's
 * left-hand side starts, between relation columns xa and xb: the middle of
 * the row's widest gap there; G_MAXDOUBLE when it is under 0.9 em (aligned
 * sets its pairs \minalignsep, 1 em, apart). */
static double
pair_gap (const Align *a, guint j, double xa, double xb)
{
  g_autoptr (GArray) spans = spans_by_x0 (a, j, xa - 0.05 * a->em, xb - 0.05 * a->em);
  double reach = -G_MAXDOUBLE, widest = 0, cut = G_MAXDOUBLE;

  for (guint p = 0; p < spans->len; p++)
    {
      FmRect *b = &g_array_index (spans, FmRect, p);
      if (p > 0 && b->x0 - reach > widest)
        widest = b->x0 - reach, cut = (b->x0 + reach) / 2;
      reach = MAX (reach, b->x1);
    }
  return widest >= 0.9 * a->em ? cut : G_MAXDOUBLE;
}

/* aligned's column pairs (`a&=b&c&=d`): relation columns right of x where
 * every row has a relation, each after a gap of 1 em or more in every row.
 * Returns the columns (x first) and per row and pair the cut before its
 * left-hand side (cuts[j * len + p], p >= 1); NULL when there is one. */
static GArray *
pair_columns (const Align *a, GPtrArray *rels, double x, double **cuts)
{
  GArray *xs = g_array_new (FALSE, FALSE, sizeof (double));
  GArray *row0 = rels->pdata[0];
  g_autoptr (GArray) cand = g_array_copy (row0);

  g_array_sort (cand, (GCompareFunc) rect_by_x0_double);
  g_array_append_val (xs, x);
  for (guint k = 0; k < cand->len; k++)
    {
      double c = g_array_index (cand, double, k);
      gboolean all = c > g_array_index (xs, double, xs->len - 1) + 0.5 * a->em;
      for (guint j = 1; j < a->n_rows && all; j++)
        all = has_at (rels->pdata[j], c, 0.1 * a->em);
      for (guint j = 0; j < a->n_rows && all; j++)
        all = pair_gap (a, j, g_array_index (xs, double, xs->len - 1), c) != G_MAXDOUBLE;
      if (all)
        g_array_append_val (xs, c);
    }
  if (xs->len < 2)
    {
      g_array_unref (xs);
      return NULL;
    }
  *cuts = g_new0 (double, a->n_rows * xs->len + 1);
  for (guint j = 0; j < a->n_rows; j++)
    {
      (*cuts)[j * xs->len] = -G_MAXDOUBLE;
      for (guint p = 1; p < xs->len; p++)
        (*cuts)[j * xs->len + p] = pair_gap (a, j, g_array_index (xs, double, p - 1), g_array_index (xs, double, p));
    }
  return xs;
}

/* The rows of aligned's column pairs: `L&R&L&R`. Uncertain when every
 * pair's right-hand sides end at one x: then `\quad` before a relation that
 * stands at one x by chance reads alike. */
static char *
aligned_pairs (const Align *a, GArray *xs, const double *cuts)
{
  GString *out = g_string_new ("\\begin{aligned}");
  guint n = xs->len;
  gboolean ragged = FALSE, even = FALSE;

  for (guint p = 1; p < n; p++)
    {
      gboolean one_gap = TRUE;
      for (guint j = 1; j < a->n_rows; j++)
        {
          /* e0, e1: half the gap before the pair (the cut is its middle) */
          double e0 = 0, e1 = 0;
          row_gaps (a, 0, -G_MAXDOUBLE, cuts[p], &e0);
          row_gaps (a, j, -G_MAXDOUBLE, cuts[j * n + p], &e1);
          ragged = ragged || fabs ((cuts[p] - e0) - (cuts[j * n + p] - e1)) > 0.1 * a->em;
          one_gap = one_gap && fabs (e0 - e1) <= 0.05 * a->em;
        }
      even = even || one_gap;
    }
  /* a pair's right-aligned left-hand sides and the ragged ends before them
   * leave gaps of several widths; one gap in every row is spacing (`xx\quad
   * y=1` over `x\quad yy=1`, whose second `=` stands at one x by chance,
   * had read a CERTAIN `&y&=1`) */
  if (even)
    a->ops->uncertain (a->ops->reader, "one gap before a column pair in every row (\\quad between pairs?)");
  else if (!ragged)
    a->ops->uncertain (a->ops->reader, "column pairs after sides of one width (\\quad or `&`?)");
  /* left-hand sides that all start at one x: `&x&>0` or `&&x>0` (an empty
   * right-aligned column, the corpus's `&&`) render alike */
  for (guint p = 1; p < n && ragged; p++)
    {
      double s0 = row_start (a, 0, cuts[p], g_array_index (xs, double, p) - 0.05 * a->em);
      gboolean one_x = TRUE;
      for (guint j = 1; j < a->n_rows; j++)
        one_x = one_x && fabs (row_start (a, j, cuts[j * n + p], g_array_index (xs, double, p) - 0.05 * a->em) - s0) <=
                             0.1 * a->em;
      if (one_x)
        a->ops->uncertain (a->ops->reader, "a column pair whose left-hand sides start at one x (`&&`?)");
    }
  for (guint j = 0; j < a->n_rows; j++)
    {
      if (j > 0)
        g_string_append (out, "\\\\");
      for (guint p = 0; p < n; p++)
        {
          double rel = g_array_index (xs, double, p) - 0.05 * a->em;
          double end = p + 1 < n ? cuts[j * n + p + 1] : G_MAXDOUBLE;
          g_autofree char *l = parse_part (a, j, cuts[j * n + p], rel);
          g_autofree char *r = parse_part (a, j, rel, end);
          g_string_append_printf (out, "%s%s&%s", p > 0 ? "&" : "", l, r);
        }
    }
  g_string_append (out, "\\end{aligned}");
  return g_string_free (out, FALSE);
}

/* A relation glyph, or an arrow with a label (`&\xrightarrow{\varphi}&`
 * in an array{rcl}'s middle column). */
static gboolean
is_middle (const FmAlignItem *it)
{
  if (it->glyph)
    return is_relation (it->tex);
  return it->tex != NULL && (g_str_has_prefix (it->tex, "\\xrightarrow") || g_str_has_prefix (it->tex, "\\xleftarrow"));
}

/* The relation of row j whose centre is within 0.15 em of c (array{rcl}
 * centres its middle column), or NULL. */
static const FmAlignItem *
relation_at (const Align *a, guint j, double c)
{
  for (guint i = 0; i < a->n; i++)
    if (!a->piece[i] && a->row[i] == j && is_middle (&a->items[i]) &&
        fabs ((a->items[i].box.x0 + a->items[i].box.x1) / 2 - c) <= 0.15 * a->em)
      return &a->items[i];
  return NULL;
}

/* Whether the relations centred at c are an array{rcl}'s middle column:
 * 2 \arraycolsep (1 em) from the right-aligned left-hand sides (where a row
 * has one, and one row at least) and from the left-aligned right-hand sides
 * (aligned sets them a thick space, 0.28 em, apart); a narrower relation
 * widens its row's gaps by half the difference, so the sides' edges stand
 * at one x. A row without a relation continues the right-hand side
 * (`&&-\text{length}...`) and starts at or right of its x (right of it:
 * spaces the reader does not write, uncertain). Each row's relation edges
 * go to rel[2 * j], rel[2 * j + 1] (for a continued row, just left of the
 * right-hand side). */
/* 2 \arraycolsep (5 pt each) in PDF units (big points) */
#define RCL_GAP (10.0 * 72.0 / 72.27)

static gboolean
rcl_at (const Align *a, double c, double *rel)
{
  double tol = 0.1 * a->em, lhs = G_MAXDOUBLE, rhs = G_MAXDOUBLE, widest = 0;
  guint sides = 0, rows = 0;
  gboolean indented = FALSE;

  for (guint j = 0; j < a->n_rows; j++)
    {
      const FmAlignItem *r = relation_at (a, j, c);
      if (r != NULL)
        widest = MAX (widest, r->box.x1 - r->box.x0);
    }
  for (guint j = 0; j < a->n_rows; j++)
    {
      const FmAlignItem *r = relation_at (a, j, c);
      double before = 0, after = G_MAXDOUBLE, gap;
      rel[2 * j] = rel[2 * j + 1] = G_MAXDOUBLE;
      if (r == NULL)
        continue;
      rows++;
      rel[2 * j] = r->box.x0, rel[2 * j + 1] = r->box.x1;
      row_gaps (a, j, -G_MAXDOUBLE, r->box.x0 - 0.05 * a->em, &before);
      for (guint i = 0; i < a->n; i++)
        if (in_part (a, i, j, r->box.x1, G_MAXDOUBLE))
          after = MIN (after, a->items[i].box.x0 - r->box.x1);
      /* the sides' edges: the same in every row */
      if (before != 0 && lhs == G_MAXDOUBLE)
        lhs = r->box.x0 - before;
      if (after != G_MAXDOUBLE && rhs == G_MAXDOUBLE)
        rhs = r->box.x1 + after;
      if ((before != 0 && fabs (r->box.x0 - before - lhs) > tol) || after == G_MAXDOUBLE ||
          fabs (r->box.x1 + after - rhs) > tol)
        return FALSE;
      /* 2 \arraycolsep is 10 pt whatever the font size (1 em at 10pt,
       * 0.83 em at 12pt), widened by half the width the row's relation
       * lacks to the column's widest; `\quad=\quad` (1.28 em) or
       * `\quad\implies\quad` (1.56 em) in aligned or gathered is no
       * array (they had read a CERTAIN array{rcl}) */
      gap = RCL_GAP + (widest - (r->box.x1 - r->box.x0)) / 2;
      if ((before != 0 && fabs (before - gap) > tol) || fabs (after - gap) > tol ||
          (before != 0 && fabs (before - after) > tol))
        return FALSE;
      sides += before != 0;
    }
  if (sides == 0)
    return FALSE;
  for (guint j = 0; j < a->n_rows; j++)
    if (rel[2 * j] == G_MAXDOUBLE)
      {
        double start = row_start (a, j, -G_MAXDOUBLE, G_MAXDOUBLE);
        if (start < rhs - tol)
          return FALSE;
        indented = indented || start > rhs + tol;
        rel[2 * j] = rel[2 * j + 1] = rhs - 0.45 * a->em;
      }
  if (indented)
    a->ops->uncertain (a->ops->reader, "a row indented in an array's right column (spaces)");
  return rows > 0;
}

/* array{rcl}: a relation column (rcl_at) at one of the relations. */
static gboolean
is_rcl (const Align *a, double *rel)
{
  for (guint i = 0; i < a->n; i++)
    if (!a->piece[i] && a->row[i] != ROW_NONE && is_middle (&a->items[i]) &&
        rcl_at (a, (a->items[i].box.x0 + a->items[i].box.x1) / 2, rel))
      return TRUE;
  return FALSE;
}

/* The rows of an array{rcl}: `L&REL&R`. The corpus spells these 129 times
 * {rcl} and never {lcl} or {ccl}, which render alike where the left-hand
 * sides are one (or of one width). */
static char *
array_rcl (const Align *a, const double *rel)
{
  GString *out = g_string_new ("\\begin{array}{rcl}");

  for (guint j = 0; j < a->n_rows; j++)
    {
      double c0 = rel[2 * j] - 0.05 * a->em, c1 = rel[2 * j + 1] + 0.4 * a->em;
      guint in_middle = 0;
      g_autofree char *l = NULL;
      /* the middle column is the relation alone: a glyph beside it is
       * misread (fourier's \longmapsto read as `7\longrightarrow`) or
       * something the relation column does not explain */
      for (guint i = 0; i < a->n; i++)
        in_middle += in_part (a, i, j, c0, c1);
      if (in_middle > 1)
        a->ops->uncertain (a->ops->reader, "more than a relation in an array's middle column");
      /* \mapsto's bar (CMSY's zero-width mapstochar) comes as a word of
       * its own where the column starts at it, and the reader drops that
       * word: `gg&\mapsto&c` had read a CERTAIN `\to` (aligned, where the
       * bar and the arrow form one word, reads it) */
      for (guint i = 0; i < a->n; i++)
        if (in_part (a, i, j, c0, c1) && a->items[i].tex != NULL &&
            (strcmp (a->items[i].tex, "\\to") == 0 || strcmp (a->items[i].tex, "\\rightarrow") == 0 ||
             strcmp (a->items[i].tex, "\\longrightarrow") == 0))
          a->ops->uncertain (a->ops->reader, "an arrow in an array's middle column (\\mapsto whose bar was dropped?)");
      l = parse_part (a, j, -G_MAXDOUBLE, c0);
      g_autofree char *m = parse_part (a, j, c0, c1);
      g_autofree char *r = parse_part (a, j, c1, G_MAXDOUBLE);
      if (j > 0)
        g_string_append (out, "\\\\");
      g_string_append_printf (out, "%s&%s&%s", l, m, r);
    }
  g_string_append (out, "\\end{array}");
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

/* Whether a row has a gap of 0.9 em or more: a second column may stand
 * after it (array{ll}'s `u(x,0)=0,\quad&u(x,h)=f(x)`, development seed
 * 1154, read as one `&`-first column). */
static gboolean
rows_have_wide_gap (const Align *a)
{
  for (guint j = 0; j < a->n_rows; j++)
    {
      double unused = 0;
      if (row_gaps (a, j, -G_MAXDOUBLE, G_MAXDOUBLE, &unused) >= 0.9 * a->em)
        return TRUE;
    }
  return FALSE;
}

/* Where the `&` of rows that all start near one x and have relations near
 * one x (column x) stands, from which of the two is exact. TeX sets the
 * column's content at one x to the point: with `&` first the rows' first
 * glyphs start at one x and their relations stand apart by the width
 * difference of what precedes them (pdfLaTeX STIX Two's `&X''+\lambda X=0`
 * over `&Y''-\lambda Y=0`: X and Y differ by 0.07 em, the relations by
 * 0.14 em, inside the 0.1 em tolerance the column is found with); with `&`
 * at the relation it is the other way round. Measured in real TeX
 * (bench/RESULTS.md, issue 12): both exact to 0.001 pt in pdfLaTeX CM and
 * XeLaTeX STIX Two Math. ALIGN_AT_UNKNOWN where neither is exact or both are
 * (left-hand sides of one width) or a row has no relation there. */
typedef enum { ALIGN_AT_UNKNOWN, ALIGN_AT_START, ALIGN_AT_RELATION } AlignAt;

/* Where row j's content may start in TeX (x range [*lo, *hi]), from its
 * first item's box: virtual math fonts draw some letters off their TeX
 * origin (mathptmx's f 0.15 em right of it, C 0.05 em left), so rows of
 * `&` first start apart on the page where their first glyphs differ
 * (review of reader12s: Fourier's `&x=1 \\ &y=22` had read `x&=1`
 * CERTAIN; `&f=1 \\ &C=22` read `f&=1` at 0.92 in mathptmx). One glyph of
 * one font and size moves alike in every row (one_glyph); an unmeasured
 * item may stand UNMEASURED_LO..UNMEASURED_HI em off, beyond the widest
 * moves measured (NewTXMI -0.054..0.175, LibertineMathMI -0.091..0.081). */
#define UNMEASURED_LO (-0.1)
#define UNMEASURED_HI 0.2

static void
row_origin (const RowSpan *span, gboolean one_glyph, double *lo, double *hi)
{
  const FmAlignItem *f = span->first;
  double move_lo = UNMEASURED_LO, move_hi = UNMEASURED_HI;

  if (one_glyph)
    move_lo = move_hi = 0;
  else if (f->glyph && f->origin)
    {
      move_lo = f->origin_lo;
      move_hi = f->origin_hi;
    }
  *lo = span->x0 - move_hi * f->size;
  *hi = span->x0 - move_lo * f->size;
}

/* Whether every row starts with one glyph (the same character of one font
 * and size). */
static gboolean
rows_start_with_one_glyph (const Align *a, const RowSpan *spans)
{
  const FmAlignItem *f0 = spans[0].first;

  for (guint j = 0; j < a->n_rows; j++)
    {
      const FmAlignItem *f = spans[j].first;
      if (f == NULL || !f->glyph || f->tex == NULL || f0->tex == NULL || strcmp (f->tex, f0->tex) != 0 ||
          g_strcmp0 (f->font, f0->font) != 0 || fabs (f->size - f0->size) >= 0.01 * f0->size)
        return FALSE;
    }
  return TRUE;
}

/* How the rows' TeX starts can lie: *apart, how far the ranges of
 * row_origin stand apart at least (negative where they overlap: the rows
 * may start at one x); *spread, how far the starts stand apart where they
 * are exactly known (G_MAXDOUBLE where some row's is not). */
static void
origins_apart (const Align *a, const RowSpan *spans, double *apart, double *spread)
{
  gboolean one_glyph = rows_start_with_one_glyph (a, spans);
  double lo_max = -G_MAXDOUBLE, hi_min = G_MAXDOUBLE, first_min = G_MAXDOUBLE, first_max = -G_MAXDOUBLE;
  gboolean points = TRUE;

  for (guint j = 0; j < a->n_rows; j++)
    {
      double lo, hi;
      row_origin (&spans[j], one_glyph, &lo, &hi);
      lo_max = MAX (lo_max, lo);
      hi_min = MIN (hi_min, hi);
      first_min = MIN (first_min, lo);
      first_max = MAX (first_max, lo);
      points = points && hi - lo <= 0.002 * spans[j].first->size;
    }
  *apart = lo_max - hi_min;
  *spread = points ? first_max - first_min : G_MAXDOUBLE;
}

#define ALIGN_EXACT_EM 0.01

static AlignAt
start_or_relation (const Align *a, GPtrArray *rels, const RowSpan *spans, double x)
{
  double rel_dev = 0, apart, spread, exact = ALIGN_EXACT_EM * a->em;

  for (guint j = 0; j < a->n_rows; j++)
    {
      GArray *xs = rels->pdata[j];
      double nearest = G_MAXDOUBLE;
      for (guint k = 0; k < xs->len; k++)
        nearest = MIN (nearest, fabs (g_array_index (xs, double, k) - x));
      if (spans[j].first == NULL || nearest > 0.1 * a->em)
        return ALIGN_AT_UNKNOWN;
      rel_dev = MAX (rel_dev, nearest);
    }
  origins_apart (a, spans, &apart, &spread);
  if (g_getenv ("FM_MATHTEXT_DEBUG") != NULL)
    g_printerr ("align starts apart %.4f (exact spread %.4f) relation %.4f em\n", apart / a->em,
                spread == G_MAXDOUBLE ? -1 : spread / a->em, rel_dev / a->em);
  if (spread < exact && rel_dev > 2 * exact && !rows_have_wide_gap (a))
    return ALIGN_AT_START;
  if (rel_dev < exact && apart > 2 * exact)
    return ALIGN_AT_RELATION;
  return ALIGN_AT_UNKNOWN;
}

/* Whether the rows may start at one x in TeX (`&` first), their first
 * glyphs' moves off their origins counted. Not where no row's first glyph
 * was measured (and they differ): the unmeasured range then takes in
 * most left-hand sides of an `x &= ... \\ y &= ...` block, which had
 * been read CERTAIN at the relation and came out flagged (newpx, STIX v1,
 * fouriernc: review of reader12t); there the page's starts decide, as
 * before. */
static gboolean
may_start_together (const Align *a, const RowSpan *spans)
{
  double apart, spread;
  gboolean measured = FALSE;

  for (guint j = 0; j < a->n_rows; j++)
    if (spans[j].first == NULL)
      return FALSE;
    else
      measured = measured || (spans[j].first->glyph && spans[j].first->origin);
  if (!measured && !rows_start_with_one_glyph (a, spans))
    return FALSE;
  origins_apart (a, spans, &apart, &spread);
  return apart <= 2 * ALIGN_EXACT_EM * a->em;
}

/* Whether the rows end at one x (to a hundredth of an em; starting at
 * one x too, they are of one width). */
static gboolean
ends_together (const Align *a, const RowSpan *spans)
{
  for (guint j = 0; j < a->n_rows; j++)
    if (fabs (spans[j].x1 - spans[0].x1) >= ALIGN_EXACT_EM * a->em)
      return FALSE;
  return TRUE;
}

/* Whether every row has a relation and all start at one x to the point,
 * without a wide gap in a row: aligned's `&` first, whose relations (not
 * at one x, or a relation column would have been found) cannot be the
 * column. Not where they end at one x too: centred rows of one width
 * (gathered's `2x=y` over `x=2y`, array{c}) are drawn alike (review of
 * reader12s: read `&` first, CERTAIN). */
static gboolean
starts_exactly (const Align *a, GPtrArray *rels, const RowSpan *spans)
{
  for (guint j = 0; j < a->n_rows; j++)
    if (((GArray *) rels->pdata[j])->len == 0 || spans[j].first == NULL ||
        fabs (spans[j].x0 - spans[0].x0) >= ALIGN_EXACT_EM * a->em)
      return FALSE;
  return !rows_have_wide_gap (a) && !ends_together (a, spans);
}

/* Rows without a delimiter around them: aligned, left-aligned or gathered. */
static char *
rows_only (const Align *a)
{
  g_autoptr (GPtrArray) rels = g_ptr_array_new_with_free_func ((GDestroyNotify) g_array_unref);
  g_autofree RowSpan *spans = row_spans (a);
  g_autofree guint *quads = g_new0 (guint, a->n_rows + 1);
  g_autofree double *rel = NULL, *cuts = NULL;
  g_autoptr (GArray) xs = NULL;
  double x, tol = 0.1 * a->em;
  gboolean starts = TRUE, centred = TRUE, continued = FALSE;

  for (guint j = 0; j < a->n_rows; j++)
    {
      g_ptr_array_add (rels, row_relations (a, j));
      starts = starts && fabs (spans[j].x0 - spans[0].x0) <= tol;
      centred = centred && fabs ((spans[j].x0 + spans[j].x1) / 2 - (spans[0].x0 + spans[0].x1) / 2) <= 0.3 * a->em;
    }
  rel = g_new0 (double, 2 * a->n_rows + 1);
  if (is_rcl (a, rel))
    return array_rcl (a, rel);
  x = relation_column (a, rels, spans, quads);
  if (x != G_MAXDOUBLE)
    {
      /* rows that also all start at one x (left-hand sides of one width,
       * "g_{1}(x)=" over "g_{2}(x)="), or may in TeX where their first
       * glyphs are drawn off their origins: `&` first or at the relation */
      if ((starts || may_start_together (a, spans)) && spans[0].x0 < x - tol)
        switch (start_or_relation (a, rels, spans, x))
          {
          case ALIGN_AT_START:
            /* rows of one width centred start at one x too (gathered's
             * `a\quad=\quad b` over `c\quad=\quad d`): drawn alike */
            if (ends_together (a, spans))
              a->ops->uncertain (a->ops->reader, "centred rows that start at one x (gathered or & first?)");
            return rows_plain (a, "aligned", "&");
          case ALIGN_AT_RELATION:
            break;
          case ALIGN_AT_UNKNOWN:
          default:
            a->ops->uncertain (a->ops->reader, "rows that start at one x and align at a relation (& first or at it)");
            break;
          }
      /* a gathered row `+d` under `a=b+c` can stand a quad right of the
       * relation too */
      for (guint j = 0; j < a->n_rows; j++)
        continued = continued || quads[j] > 0;
      if (continued && centred)
        a->ops->uncertain (a->ops->reader, "a continued row in centred rows (gathered?)");
      if (!continued && (xs = pair_columns (a, rels, x, &cuts)) != NULL)
        return aligned_pairs (a, xs, cuts);
      return aligned_at (a, x, quads);
    }
  if (is_grid (a))
    {
      /* columns without delimiters: a matrix, or one whose bars or
       * parentheses have no text-layer glyph (\vert pieces) */
      Delim open = { { -G_MAXDOUBLE, 0, -G_MAXDOUBLE, 0 }, "", 0, FALSE };
      a->ops->uncertain (a->ops->reader, "columns without delimiters (a matrix whose delimiters are ink?)");
      return grid (a, &open, NULL);
    }
  if (starts && starts_exactly (a, rels, spans))
    return rows_plain (a, "aligned", "&");
  /* rows whose first glyphs a virtual font draws off their TeX origins
   * start apart on the page (mathptmx's `&f=1 \\ &a+b=2`: f 0.15 em
   * right): read like rows that start at one x, so that a reading with
   * `&` elsewhere is not taken for an agreeing one (the model's `f&=1` had
   * stood at 0.93-0.97 against a reading without `&`) */
  if (starts || may_start_together (a, spans))
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
      else if (top != NULL && delim_side (top->tex) == 2 && stack->len >= 2 &&
               delim_family (g_array_index (a->delims, Delim, g_array_index (stack, guint, stack->len - 2)).tex) ==
               delim_family (d->tex))
        {
          /* `\left[\begin{array}{ccc|c}`: the rule is drawn ink that the
           * reader took for a bar (fm-mathtext.c's lost delimiters); it
           * stands between two columns (see grid) */
          g_array_index (a->delims, Delim, g_array_index (stack, guint, stack->len - 1)).rule = TRUE;
          g_array_set_size (stack, stack->len - 1);
          p--;   /* the closing delimiter again, against the opening one */
        }
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
      if (a->piece[i] && !paired && !(a->owner[i] != G_MAXUINT && g_array_index (a->delims, Delim, a->owner[i]).rule))
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
