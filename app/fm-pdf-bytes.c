/* fm-pdf-bytes.c - which images a page draws, from a PDF's bytes (fm-pdf-bytes.h).
 *
 * fm-document.c refuses to render a page that draws an image too large to
 * decode. It finds those images by their stream dictionaries in the file's
 * bytes (a stream is never in an object stream), and needs to know which
 * pages draw them: this follows /Root, the page tree and each page's
 * /Resources /XObject through the uncompressed objects. It is no general
 * parser: anything it cannot follow (an object inside an object stream, a
 * broken file) makes it give up, and the caller falls back on matching the
 * page's image areas by aspect ratio. */
#include "fm-pdf-bytes.h"

#include <string.h>

/* The page tree's depth and the nodes visited: a cycle in a broken file
 * ends there. */
#define MAX_TREE_DEPTH 64
#define MAX_NODES 1000000
#define MAX_FORM_DEPTH 4

struct _FmPdfIndex {
  GBytes *bytes;
  const char *data, *end;
  GHashTable *objects;  /* object number -> offset just after its "obj" + 1 */
};

static gboolean
is_space (char c)
{
  return c == ' ' || c == '\n' || c == '\r' || c == '\t' || c == '\f' || c == '\0';
}

static gboolean
is_delimiter (char c)
{
  return is_space (c) || strchr ("/<>[]()%{}", c) != NULL;
}

static const char *
skip_space (const char *p, const char *end)
{
  while (p < end)
    {
      if (is_space (*p))
        p++;
      else if (*p == '%')
        {
          while (p < end && *p != '\n' && *p != '\r')
            p++;
        }
      else
        break;
    }
  return p;
}

/* An unsigned integer at p (at most 12 digits, ending at a delimiter): its
 * value and the end, or -1. */
static gint64
read_uint (const char *p, const char *end, const char **after)
{
  gint64 v = 0;
  int n = 0;

  while (p < end && g_ascii_isdigit (*p) && n < 12)
    v = v * 10 + (*p++ - '0'), n++;
  if (n == 0 || (p < end && !is_delimiter (*p)))
    return -1;
  *after = p;
  return v;
}

/* "N G R" at p: N, and *after past the R; else -1. */
static gint64
read_ref (const char *p, const char *end, const char **after)
{
  const char *q;
  gint64 num = read_uint (p, end, &q), gen;

  if (num < 0)
    return -1;
  q = skip_space (q, end);
  gen = read_uint (q, end, &q);
  if (gen < 0)
    return -1;
  q = skip_space (q, end);
  if (q >= end || *q != 'R' || (q + 1 < end && !is_delimiter (q[1])))
    return -1;
  *after = q + 1;
  return num;
}

/* Past one object at p (a dictionary, array, string, name, number,
 * keyword; a reference counts as three), or NULL on junk. */
static const char *
skip_object (const char *p, const char *end, int depth)
{
  if (p >= end || depth > 64)
    return NULL;
  if (p + 1 < end && p[0] == '<' && p[1] == '<')
    {
      p += 2;
      for (;;)
        {
          p = skip_space (p, end);
          if (p + 1 < end && p[0] == '>' && p[1] == '>')
            return p + 2;
          p = skip_object (p, end, depth + 1);
          if (p == NULL)
            return NULL;
        }
    }
  if (*p == '[')
    {
      p++;
      for (;;)
        {
          p = skip_space (p, end);
          if (p < end && *p == ']')
            return p + 1;
          p = skip_object (p, end, depth + 1);
          if (p == NULL)
            return NULL;
        }
    }
  if (*p == '(')
    {
      int nest = 0;
      for (; p < end; p++)
        {
          if (*p == '\\')
            p++;
          else if (*p == '(')
            nest++;
          else if (*p == ')' && --nest == 0)
            return p + 1;
        }
      return NULL;
    }
  if (*p == '<')
    {
      const char *q = memchr (p, '>', (gsize) (end - p));
      return q ? q + 1 : NULL;
    }
  if (*p == '/')
    p++;
  else if (is_delimiter (*p))
    return NULL;
  while (p < end && !is_delimiter (*p))
    p++;
  return p;
}

/* The value of key in the dictionary at dict ("<<"), or NULL. */
static const char *
dict_get (const char *dict, const char *end, const char *key)
{
  gsize key_len = strlen (key);
  const char *p;

  if (dict == NULL || dict + 1 >= end || dict[0] != '<' || dict[1] != '<')
    return NULL;
  p = dict + 2;
  for (;;)
    {
      const char *name;
      p = skip_space (p, end);
      if (p >= end || (p + 1 < end && p[0] == '>' && p[1] == '>'))
        return NULL;
      if (*p != '/')
        return NULL;
      name = p;
      p = skip_object (p, end, 0);
      if (p == NULL)
        return NULL;
      if ((gsize) (p - name) == key_len && strncmp (name, key, key_len) == 0)
        return skip_space (p, end);
      p = skip_space (p, end);
      {
        const char *after;
        if (read_ref (p, end, &after) >= 0)
          p = after;
        else
          p = skip_object (p, end, 0);
      }
      if (p == NULL)
        return NULL;
    }
}

/* The start of object num's value, or NULL when it is not an uncompressed
 * object of the file. */
static const char *
object_body (FmPdfIndex *index, gint64 num)
{
  gpointer off;

  if (!g_hash_table_lookup_extended (index->objects, &num, NULL, &off))
    return NULL;
  return skip_space (index->data + GPOINTER_TO_SIZE (off) - 1, index->end);
}

/* value itself, or the object it refers to; NULL when that is not found. */
static const char *
resolve (FmPdfIndex *index, const char *value)
{
  const char *after;
  gint64 num;

  if (value == NULL)
    return NULL;
  num = read_ref (value, index->end, &after);
  return num >= 0 ? object_body (index, num) : value;
}

static gboolean
value_is_name (const char *value, const char *end, const char *name)
{
  gsize n = strlen (name);
  return value != NULL && (gsize) (end - value) >= n && strncmp (value, name, n) == 0 &&
         (value + n == end || is_delimiter (value[n]));
}

gint64
fm_pdf_object_number_before (const char *data, const char *p)
{
  const char *lo = p - MIN (4096, p - data);

  for (const char *o = p - 3; o >= lo; o--)
    {
      const char *q = o, *d1;
      gint64 num;
      if (memcmp (o, "obj", 3) != 0 || (o > data && o[-1] == 'd'))
        continue;   /* an "endobj" of an earlier object */
      /* "N G obj": back over the generation and the number */
      while (q > data && is_space (q[-1]))
        q--;
      while (q > data && g_ascii_isdigit (q[-1]))
        q--;
      while (q > data && is_space (q[-1]))
        q--;
      d1 = q;
      while (q > data && g_ascii_isdigit (q[-1]))
        q--;
      if (q == d1)
        return -1;
      num = 0;
      for (const char *c = q; c < d1; c++)
        num = num * 10 + (*c - '0');
      return num;
    }
  return -1;
}

FmPdfIndex *
fm_pdf_index_new (GBytes *bytes)
{
  FmPdfIndex *index = g_new0 (FmPdfIndex, 1);
  gsize len = 0;

  index->bytes = g_bytes_ref (bytes);
  index->data = g_bytes_get_data (bytes, &len);
  index->end = index->data + len;
  index->objects = g_hash_table_new_full (g_int64_hash, g_int64_equal, g_free, NULL);
  for (const char *p = index->data; p + 3 <= index->end; p++)
    {
      const char *q = p;
      gint64 num = 0, *key;
      int n = 0;
      p = memchr (p, 'o', (gsize) (index->end - p));
      if (p == NULL || p + 3 > index->end)
        break;
      if (memcmp (p, "obj", 3) != 0 || (p + 3 < index->end && !is_delimiter (p[3])) ||
          p == index->data || !is_space (p[-1]))
        continue;
      /* " N G obj" */
      q = p;
      while (q > index->data && is_space (q[-1]))
        q--;
      while (q > index->data && g_ascii_isdigit (q[-1]))
        q--, n++;
      if (n == 0 || q == index->data || !is_space (q[-1]))
        continue;
      while (q > index->data && is_space (q[-1]))
        q--;
      n = 0;
      {
        const char *d1 = q;
        while (q > index->data && g_ascii_isdigit (q[-1]) && n < 12)
          q--, n++;
        if (n == 0 || (q > index->data && !is_delimiter (q[-1])))
          continue;
        for (const char *c = q; c < d1; c++)
          num = num * 10 + (*c - '0');
      }
      key = g_new (gint64, 1);
      *key = num;
      /* the offset + 1, so that no value is NULL */
      g_hash_table_replace (index->objects, key, GSIZE_TO_POINTER ((gsize) (p + 3 - index->data) + 1));
    }
  return index;
}

void
fm_pdf_index_free (FmPdfIndex *index)
{
  if (index == NULL)
    return;
  g_hash_table_unref (index->objects);
  g_bytes_unref (index->bytes);
  g_free (index);
}

typedef struct {
  FmPdfIndex *index;
  int target;         /* the page wanted */
  int seen;           /* pages passed */
  int nodes;
  const char *resources;  /* the target page's, resolved; NULL none */
  gboolean found, failed;
} TreeWalk;

static void
walk_pages (TreeWalk *w, const char *node, const char *inherited, int depth)
{
  const char *end = w->index->end, *type, *res;

  if (w->found || w->failed)
    return;
  if (node == NULL || depth > MAX_TREE_DEPTH || ++w->nodes > MAX_NODES)
    {
      w->failed = TRUE;
      return;
    }
  res = dict_get (node, end, "/Resources");
  if (res != NULL)
    inherited = res;
  type = dict_get (node, end, "/Type");
  if (value_is_name (type, end, "/Page"))
    {
      if (w->seen++ == w->target)
        {
          w->found = TRUE;
          w->resources = inherited ? resolve (w->index, inherited) : NULL;
          if (inherited && w->resources == NULL)
            w->failed = TRUE;
        }
      return;
    }
  {
    const char *kids = resolve (w->index, dict_get (node, end, "/Kids")), *p, *after;
    if (kids == NULL || *kids != '[')
      {
        w->failed = TRUE;
        return;
      }
    for (p = skip_space (kids + 1, end); p < end && *p != ']' && !w->found && !w->failed;
         p = skip_space (after, end))
      {
        gint64 num = read_ref (p, end, &after);
        if (num < 0)
          {
            w->failed = TRUE;
            return;
          }
        walk_pages (w, object_body (w->index, num), inherited, depth + 1);
      }
  }
}

/* Adds the images of resources (a dictionary) to out, looking into forms. */
static gboolean
add_images (FmPdfIndex *index, const char *resources, GArray *out, int depth)
{
  const char *end = index->end, *xobjects, *p, *after;

  if (resources == NULL || depth > MAX_FORM_DEPTH)
    return TRUE;
  xobjects = dict_get (resources, end, "/XObject");
  if (xobjects == NULL)
    return TRUE;
  xobjects = resolve (index, xobjects);
  if (xobjects == NULL || xobjects + 1 >= end || xobjects[0] != '<' || xobjects[1] != '<')
    return FALSE;
  for (p = skip_space (xobjects + 2, end); p < end && *p == '/'; p = skip_space (p, end))
    {
      const char *obj, *subtype;
      gint64 num;
      p = skip_object (p, end, 0);
      if (p == NULL)
        return FALSE;
      p = skip_space (p, end);
      num = read_ref (p, end, &after);
      if (num < 0)
        return FALSE;   /* an XObject is a stream: always a reference */
      p = after;
      obj = object_body (index, num);
      if (obj == NULL)
        return FALSE;
      subtype = dict_get (obj, end, "/Subtype");
      if (value_is_name (subtype, end, "/Image"))
        {
          gboolean dup = FALSE;
          for (guint i = 0; i < out->len && !dup; i++)
            dup = g_array_index (out, gint64, i) == num;
          if (!dup)
            g_array_append_val (out, num);
        }
      else if (value_is_name (subtype, end, "/Form"))
        {
          const char *res = dict_get (obj, end, "/Resources");
          if (res != NULL && !add_images (index, resolve (index, res), out, depth + 1))
            return FALSE;
        }
    }
  return TRUE;
}

GArray *
fm_pdf_index_page_images (FmPdfIndex *index, int page_index)
{
  const char *end = index->end, *root = NULL, *pages;
  TreeWalk w = { index, page_index, 0, 0, NULL, FALSE, FALSE };
  GArray *out;

  g_return_val_if_fail (index != NULL, NULL);
  /* The last /Root: the trailer's (or the cross-reference stream's
   * dictionary, which is never compressed) of the newest update. */
  for (const char *hit = end - MIN (5, end - index->data); hit >= index->data && root == NULL; hit--)
    if (memcmp (hit, "/Root", 5) == 0 && (hit + 5 == end || is_delimiter (hit[5])))
      {
        const char *after;
        gint64 num = read_ref (skip_space (hit + 5, end), end, &after);
        if (num >= 0)
          root = object_body (index, num);
        if (root == NULL)
          return NULL;
      }
  if (root == NULL)
    return NULL;
  pages = resolve (index, dict_get (root, end, "/Pages"));
  if (pages == NULL)
    return NULL;
  walk_pages (&w, pages, NULL, 0);
  if (!w.found || w.failed)
    return NULL;
  out = g_array_new (FALSE, FALSE, sizeof (gint64));
  if (!add_images (index, w.resources, out, 0))
    {
      g_array_unref (out);
      return NULL;
    }
  return out;
}
