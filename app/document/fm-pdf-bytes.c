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

#include <stdarg.h>
#include <stdlib.h>
#include <string.h>
#include "fm-huge-pages.h"
#ifdef FM_HAVE_ZLIB
#include <zlib.h>
#endif

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

/* ------------------------------------------------------------------------ */
/* Streams stored inflated, for Poppler (fm_pdf_inflate_streams).           */

#ifndef FM_HAVE_ZLIB
GBytes *
fm_pdf_inflate_streams (GBytes *bytes)
{
  (void) bytes;
  return NULL;  /* without zlib Poppler inflates as before */
}
#else

#define INFLATE_MAX_FILE (64 * 1024 * 1024)
#define INFLATE_MAX_STREAM (8 * 1024 * 1024)
#define INFLATE_MAX_TOTAL (64 * 1024 * 1024)

/* The value's text [value, end of value) of key in dict, or FALSE. */
static gboolean
dict_slice (const char *dict, const char *end, const char *key, const char **v0, const char **v1)
{
  const char *v = dict_get (dict, end, key), *after;

  if (v == NULL)
    return FALSE;
  if (read_ref (v, end, &after) < 0)
    after = skip_object (v, end, 0);
  if (after == NULL)
    return FALSE;
  *v0 = v;
  *v1 = after;
  return TRUE;
}

/* The trailer dictionary the file's last cross-reference section ends with
 * (a table's "trailer", or an xref stream's own dictionary), or NULL. */
static const char *
last_trailer (const char *data, const char *end)
{
  const char *tail = end - MIN (1024, end - data), *p = NULL, *after;
  gint64 off;

  for (const char *q = tail; q + 9 <= end; q++)
    if (memcmp (q, "startxref", 9) == 0)
      p = q + 9;
  if (p == NULL)
    return NULL;
  off = read_uint (skip_space (p, end), end, &after);
  if (off < 0 || off >= end - data)
    return NULL;
  p = skip_space (data + off, end);
  if (end - p >= 4 && memcmp (p, "xref", 4) == 0)
    {
      p = g_strstr_len (p, end - p, "trailer");
      return p ? skip_space (p + 7, end) : NULL;
    }
  /* "N G obj <<...>>" of an xref stream */
  if (read_uint (p, end, &after) < 0)
    return NULL;
  p = skip_space (after, end);
  if (read_uint (p, end, &after) < 0)
    return NULL;
  p = skip_space (after, end);
  if (end - p < 3 || memcmp (p, "obj", 3) != 0)
    return NULL;
  return skip_space (p + 3, end);
}

typedef struct {
  gint64 num, gen;
  gsize packed;       /* its length in the file */
  GBytes *data;       /* inflated */
  GString *dict;      /* the stream's dictionary without its filter and length */
} Inflated;

static gint
inflated_cmp (gconstpointer a, gconstpointer b)
{
  const Inflated *x = a, *y = b;
  return x->num < y->num ? -1 : x->num > y->num;
}

/* Inflates data (zlib), at most max bytes out; NULL on any error. */
static GBytes *
zlib_inflate (const guint8 *in, gsize n, gsize max)
{
  z_stream zs = { 0 };
  GByteArray *out = g_byte_array_new ();
  int ret = Z_OK;

  if (inflateInit (&zs) != Z_OK)
    {
      g_byte_array_unref (out);
      return NULL;
    }
  zs.next_in = (Bytef *) in;
  zs.avail_in = (uInt) n;
  while (ret == Z_OK)
    {
      gsize have = out->len;
      if (have >= max)
        break;
      g_byte_array_set_size (out, (guint) MIN (max, have + MAX (n * 4, 65536)));
      zs.next_out = out->data + have;
      zs.avail_out = (uInt) (out->len - have);
      ret = inflate (&zs, Z_NO_FLUSH);
      g_byte_array_set_size (out, (guint) (out->len - zs.avail_out));
    }
  inflateEnd (&zs);
  if (ret != Z_STREAM_END)
    {
      g_byte_array_unref (out);
      return NULL;
    }
  return g_byte_array_free_to_bytes (out);
}

/* One candidate: object num whose "obj" keyword ends at body (the index's
 * offset). Filled into *out when it is a stream with one FlateDecode filter
 * and no parameters, not an image, that inflates cleanly. */
static gboolean
inflate_object (FmPdfIndex *index, gint64 num, const char *body, Inflated *out, gsize *budget)
{
  const char *data = index->data, *end = index->end;
  const char *dict = skip_space (body, end), *dict_end, *p, *v0, *v1, *len_v, *after, *kw;
  gint64 length, gen = 0;
  GBytes *inflated;
  GString *kept;

  /* the generation: back over "obj" and the spaces before it */
  kw = body - 3;
  p = kw;
  while (p > data && is_space (p[-1]))
    p--;
  {
    const char *d1 = p;
    while (p > data && g_ascii_isdigit (p[-1]))
      p--;
    if (p == d1 || d1 - p > 5)
      return FALSE;
    for (const char *c = p; c < d1; c++)
      gen = gen * 10 + (*c - '0');
  }
  if (dict + 1 >= end || dict[0] != '<' || dict[1] != '<')
    return FALSE;
  dict_end = skip_object (dict, end, 0);
  if (dict_end == NULL)
    return FALSE;
  p = skip_space (dict_end, end);
  if (end - p < 6 || memcmp (p, "stream", 6) != 0)
    return FALSE;
  p += 6;
  if (p < end && *p == '\r')
    p++;
  if (p < end && *p == '\n')
    p++;
  else if (p[-1] != '\r')
    return FALSE;
  /* One FlateDecode, no parameters, data in the file, not an image. */
  if (!dict_slice (dict, dict_end, "/Filter", &v0, &v1))
    return FALSE;
  if (*v0 == '[')
    {
      const char *q = skip_space (v0 + 1, v1);
      if (!value_is_name (q, v1, "/FlateDecode"))
        return FALSE;
      q = skip_space (q + 12, v1);
      if (q >= v1 || *q != ']')
        return FALSE;
    }
  else if (!value_is_name (v0, v1, "/FlateDecode"))
    return FALSE;
  if ((dict_slice (dict, dict_end, "/DecodeParms", &v0, &v1) && !value_is_name (v0, v1, "null")) ||
      dict_get (dict, dict_end, "/F") != NULL ||
      (dict_slice (dict, dict_end, "/Subtype", &v0, &v1) && value_is_name (v0, v1, "/Image")))
    return FALSE;
  len_v = resolve (index, dict_get (dict, dict_end, "/Length"));
  if (len_v == NULL || (length = read_uint (len_v, end, &after)) < 0 || length > end - p)
    return FALSE;
  /* The data must end where "endstream" says, or the length is not this
   * object's (a stale copy, a false "obj" inside another stream). */
  if (g_strstr_len (p + length, MIN (end - (p + length), 16), "endstream") == NULL)
    return FALSE;
  inflated = zlib_inflate ((const guint8 *) p, (gsize) length, MIN (*budget, INFLATE_MAX_STREAM) + 1);
  if (inflated == NULL)
    return FALSE;
  if (g_bytes_get_size (inflated) > MIN (*budget, INFLATE_MAX_STREAM))
    {
      g_bytes_unref (inflated);
      return FALSE;
    }
  *budget -= g_bytes_get_size (inflated);

  /* The dictionary's entries but /Filter, /DecodeParms, /DL and /Length. */
  kept = g_string_new ("<<");
  for (p = dict + 2;;)
    {
      const char *k0, *k1;
      p = skip_space (p, dict_end);
      if (p + 1 >= dict_end || (p[0] == '>' && p[1] == '>'))
        break;
      k0 = p;
      k1 = skip_object (p, dict_end, 0);
      if (k1 == NULL)
        break;
      p = skip_space (k1, dict_end);
      if (read_ref (p, dict_end, &after) < 0)
        after = skip_object (p, dict_end, 0);
      if (after == NULL)
        break;
      if (!value_is_name (k0, k1, "/Filter") && !value_is_name (k0, k1, "/DecodeParms") &&
          !value_is_name (k0, k1, "/DL") && !value_is_name (k0, k1, "/Length"))
        {
          g_string_append_c (kept, ' ');
          g_string_append_len (kept, k0, after - k0);
        }
      p = after;
    }
  g_string_append_printf (kept, " /Length %" G_GSIZE_FORMAT ">>", g_bytes_get_size (inflated));
  *out = (Inflated) { num, gen, (gsize) length, inflated, kept };
  return TRUE;
}

/* The inflated copy, written once front to back. Sized from the start (a
 * bound, so it never moves) and, from 2 MiB up, 2 MiB aligned and advised
 * onto 2 MiB pages: on 4 KiB pages the paper's 3.5 MB copy was ~860 first
 * touches of a fresh page, 22 us each on the development VM
 * (bench/RESULTS.md). Grows like a GString should the bound be short. */
typedef struct {
  char *p;
  gsize len, cap;
} OutBuf;

static void
outbuf_init (OutBuf *o, gsize cap)
{
  o->p = fm_alloc_written_whole (cap, &o->cap);
  o->len = 0;
}

static void
outbuf_reserve (OutBuf *o, gsize n)
{
  if (o->len + n <= o->cap)
    return;
  o->cap = MAX (o->cap * 2, o->len + n);
  o->p = g_realloc (o->p, o->cap);
}

static void
outbuf_put (OutBuf *o, const void *d, gsize n)
{
  outbuf_reserve (o, n);
  memcpy (o->p + o->len, d, n);
  o->len += n;
}

static void G_GNUC_PRINTF (2, 3)
outbuf_printf (OutBuf *o, const char *format, ...)
{
  va_list ap;
  int n;

  va_start (ap, format);
  n = g_vsnprintf (NULL, 0, format, ap);
  va_end (ap);
  outbuf_reserve (o, (gsize) n + 1);
  va_start (ap, format);
  g_vsnprintf (o->p + o->len, (gulong) n + 1, format, ap);
  va_end (ap);
  o->len += (gsize) n;
}

GBytes *
fm_pdf_inflate_streams (GBytes *bytes)
{
  gsize len = 0;
  const char *data = g_bytes_get_data (bytes, &len), *end = data + len, *trailer, *trailer_end;
  const char *root0, *root1, *v0, *v1, *after;
  g_autoptr(FmPdfIndex) index = NULL;
  g_autoptr(GArray) done = NULL;
  GHashTableIter it;
  gpointer key, off;
  gsize budget = INFLATE_MAX_TOTAL;
  gint64 size;
  OutBuf out;
  gsize xref_at, bound;

  if (len == 0 || len > INFLATE_MAX_FILE)
    return NULL;
  /* One revision, not encrypted: each object has one definition in the file
   * (an update or a linearised file's two sections are left alone). */
  trailer = last_trailer (data, end);
  if (trailer == NULL || (trailer_end = skip_object (trailer, end, 0)) == NULL ||
      dict_get (trailer, trailer_end, "/Prev") != NULL ||
      dict_get (trailer, trailer_end, "/Encrypt") != NULL ||
      !dict_slice (trailer, trailer_end, "/Root", &root0, &root1) ||
      !dict_slice (trailer, trailer_end, "/Size", &v0, &v1) ||
      (size = read_uint (v0, v1, &after)) < 0)
    return NULL;

  index = fm_pdf_index_new (bytes);
  done = g_array_new (FALSE, FALSE, sizeof (Inflated));
  g_hash_table_iter_init (&it, index->objects);
  while (g_hash_table_iter_next (&it, &key, &off))
    {
      Inflated inf;
      if (inflate_object (index, *(gint64 *) key, index->data + GPOINTER_TO_SIZE (off) - 1, &inf, &budget))
        g_array_append_val (done, inf);
    }
  {
    /* Worth a copy of the file only where these streams are much of it (a
     * scan is mostly images: its copy would cost more than it saves). */
    gsize packed = 0;
    for (guint i = 0; i < done->len; i++)
      packed += g_array_index (done, Inflated, i).packed;
    if (done->len == 0 || packed < len / 4)
      {
        for (guint i = 0; i < done->len; i++)
          {
            g_bytes_unref (g_array_index (done, Inflated, i).data);
            g_string_free (g_array_index (done, Inflated, i).dict, TRUE);
          }
        return NULL;
      }
  }
  g_array_sort (done, inflated_cmp);

  /* The file as it is, then an update that redefines those objects with
   * their data inflated, its cross-reference table and trailer. */
  /* a bound of what is written below: each object's numbers, keywords and
   * xref line take under 128 bytes; the trailer copies at most its own
   * text and the original's /Prev */
  bound = len + 1 + (INFLATE_MAX_TOTAL - budget) + 128 * (gsize) done->len + 256 +
          (gsize) (trailer_end - trailer) + 1024;
  for (guint i = 0; i < done->len; i++)
    bound += g_array_index (done, Inflated, i).dict->len;
  outbuf_init (&out, bound);
  outbuf_put (&out, data, len);
  outbuf_put (&out, "\n", 1);
  for (guint i = 0; i < done->len; i++)
    {
      Inflated *inf = &g_array_index (done, Inflated, i);
      gsize n;
      const char *d = g_bytes_get_data (inf->data, &n);
      gsize at = out.len;

      outbuf_printf (&out, "%" G_GINT64_FORMAT " %" G_GINT64_FORMAT " obj\n%s\nstream\n",
                      inf->num, inf->gen, inf->dict->str);
      outbuf_put (&out, d, n);
      outbuf_put (&out, "\nendstream\nendobj\n", 18);
      inf->dict = (g_string_free (inf->dict, TRUE), NULL);
      g_bytes_unref (inf->data);
      inf->data = GSIZE_TO_POINTER (at);  /* now its offset */
      size = MAX (size, inf->num + 1);
    }
  xref_at = out.len;
  outbuf_put (&out, "xref\n", 5);
  for (guint i = 0; i < done->len; i++)
    {
      Inflated *inf = &g_array_index (done, Inflated, i);
      outbuf_printf (&out, "%" G_GINT64_FORMAT " 1\n%010" G_GSIZE_FORMAT " %05d n \n", inf->num,
                      GPOINTER_TO_SIZE (inf->data), (int) MIN (inf->gen, 65535));
    }
  outbuf_printf (&out, "trailer\n<< /Size %" G_GINT64_FORMAT " /Root ", size);
  outbuf_put (&out, root0, root1 - root0);
  if (dict_slice (trailer, trailer_end, "/Info", &v0, &v1))
    {
      outbuf_put (&out, " /Info ", 7);
      outbuf_put (&out, v0, v1 - v0);
    }
  if (dict_slice (trailer, trailer_end, "/ID", &v0, &v1))
    {
      outbuf_put (&out, " /ID ", 5);
      outbuf_put (&out, v0, v1 - v0);
    }
  {
    /* /Prev: where the original's last section starts */
    const char *p = NULL;
    for (const char *q = end - MIN (1024, len); q + 9 <= end; q++)
      if (memcmp (q, "startxref", 9) == 0)
        p = q + 9;
    outbuf_put (&out, " /Prev ", 7);
    p = skip_space (p, end);
    outbuf_put (&out, p, skip_object (p, end, 0) - p);
  }
  outbuf_printf (&out, " >>\nstartxref\n%" G_GSIZE_FORMAT "\n%%%%EOF\n", xref_at);
  return g_bytes_new_take (out.p, out.len);
}
#endif /* FM_HAVE_ZLIB */
