/* fm-document.c - a PDF opened with Poppler behind one mutex. */
#include "fm-document.h"
#include "fm-pdf-bytes.h"

#include <glib/gstdio.h>
#include <errno.h>
#include <fcntl.h>
#include <math.h>
#include <string.h>
#include <sys/stat.h>
#include <unistd.h>

G_DEFINE_QUARK (fm-document-error-quark, fm_document_error)

/* Pages smaller than this cannot hold text; larger ones are beyond anything a
 * PDF producer writes (the spec's limit is 14400 units times UserUnit). */
#define FM_PAGE_MIN_PT 1.0
#define FM_PAGE_MAX_PT 1.0e6
/* Poppler's Cairo backend decodes an image whole into 4 bytes a pixel before
 * scaling it down, whatever the render's size: a 20000 x 20000 scan costs
 * 1.6 GB. 64 M pixels (256 MB) holds a letter page scanned at 1000 dpi and
 * matches the PNG reader's cap (fm-png.c). */
#define FM_IMAGE_MAX_PIXELS (64LL * 1024 * 1024)

struct _FmDocument {
  GObject parent_instance;
  GMutex lock;
  PopplerDocument *poppler;  /* only touched with lock held */
  GBytes *bytes;             /* Poppler reads from these for the document's life */
  char *name;
  int n_pages;
  GArray *big_images;        /* those of images above FM_IMAGE_MAX_PIXELS; NULL until needed */
  GArray *images;            /* every FmImageSize; NULL until scanned (fm-scan's resolution) */
  FmPdfIndex *objects;       /* made when big_images is not empty, or for images */
  /* The pages read last (lock held): a PopplerPage keeps the text it was
   * read into, and detection, the crop boxes and the text reader each ask
   * for a page's text; a new PopplerPage per call redid Poppler's whole
   * text extraction (content stream, fonts, layout) every time, once per
   * formula on the page (issue 15: a third of a paper's CPU time). */
  struct {
    PopplerPage *page;
    int index;
    guint64 used;
  } recent[FM_DOCUMENT_RECENT_PAGES];
  guint64 clock;
};

typedef struct {
  gint64 width, height;
  gint64 object;  /* its object number, -1 unknown */
} FmImageSize;

G_DEFINE_FINAL_TYPE (FmDocument, fm_document, G_TYPE_OBJECT)

static void
fm_document_finalize (GObject *object)
{
  FmDocument *self = FM_DOCUMENT (object);

  g_mutex_lock (&self->lock);
  for (int i = 0; i < FM_DOCUMENT_RECENT_PAGES; i++)
    g_clear_object (&self->recent[i].page);
  g_clear_object (&self->poppler);
  g_mutex_unlock (&self->lock);
  g_clear_pointer (&self->bytes, g_bytes_unref);
  g_clear_pointer (&self->big_images, g_array_unref);
  g_clear_pointer (&self->images, g_array_unref);
  g_clear_pointer (&self->objects, fm_pdf_index_free);
  g_free (self->name);
  g_mutex_clear (&self->lock);
  G_OBJECT_CLASS (fm_document_parent_class)->finalize (object);
}

static void
fm_document_class_init (FmDocumentClass *klass)
{
  G_OBJECT_CLASS (klass)->finalize = fm_document_finalize;
}

static void
fm_document_init (FmDocument *self)
{
  g_mutex_init (&self->lock);
}

/* A PDF header may sit after up to 1024 bytes of junk (PDF 1.7, H.3 note 13). */
static gboolean
has_pdf_header (GBytes *bytes)
{
  gsize size;
  const char *data = g_bytes_get_data (bytes, &size);
  gsize limit = MIN (size, 1024 + 5);

  if (data == NULL || size < 5)
    return FALSE;
  for (gsize i = 0; i + 5 <= limit; i++)
    if (memcmp (data + i, "%PDF-", 5) == 0)
      return TRUE;
  return FALSE;
}

/* PDF 2.0 (7.6.4.3.3) truncates an AES-256 password to 127 UTF-8 bytes, and
 * Poppler 22.12 smashes its stack on a longer one: cut it here, for the CLI
 * and the window alike, at a character boundary. */
#define FM_PASSWORD_MAX_BYTES 127

static char *
password_truncate (const char *password)
{
  const char *end;

  if (password == NULL)
    return NULL;
  if (strlen (password) <= FM_PASSWORD_MAX_BYTES)
    return g_strdup (password);
  end = password + FM_PASSWORD_MAX_BYTES;
  if (g_utf8_validate (password, -1, NULL))
    while (end > password && (*end & 0xC0) == 0x80)
      end--;  /* back to the first byte of the character cut in half */
  return g_strndup (password, (gsize) (end - password));
}

/* Reads a local file whole. Mapping it would let a file that shrinks while
 * we render (pdflatex rewriting it in place) kill us with SIGBUS; opening
 * with O_NONBLOCK and checking the opened descriptor refuses a FIFO or a
 * device without blocking on it. */
static GBytes *
read_regular_file (const char *path,
                   const char *name,
                   GError    **error)
{
  struct stat st;
  guint8 *data;
  gsize done = 0;
  int fd = g_open (path, O_RDONLY | O_NONBLOCK | O_CLOEXEC, 0);

  if (fd < 0)
    {
      int saved = errno;
      g_set_error (error, FM_DOCUMENT_ERROR, FM_DOCUMENT_ERROR_NOT_FOUND,
                   "%s: %s", name, g_strerror (saved));
      return NULL;
    }
  if (fstat (fd, &st) != 0 || !S_ISREG (st.st_mode))
    {
      gboolean dir = S_ISDIR (st.st_mode);
      close (fd);
      g_set_error (error, FM_DOCUMENT_ERROR, FM_DOCUMENT_ERROR_NOT_FOUND,
                   dir ? "%s: is a directory, not a PDF file" : "%s: not a regular file", name);
      return NULL;
    }
  if ((guint64) st.st_size > G_MAXSIZE / 2)
    {
      close (fd);
      g_set_error (error, FM_DOCUMENT_ERROR, FM_DOCUMENT_ERROR_NOT_FOUND,
                   "%s: too large to read", name);
      return NULL;
    }
  data = g_try_malloc ((gsize) st.st_size + 1);
  if (data == NULL)
    {
      close (fd);
      g_set_error (error, FM_DOCUMENT_ERROR, FM_DOCUMENT_ERROR_NOT_FOUND,
                   "%s: not enough memory to read %lld bytes", name, (long long) st.st_size);
      return NULL;
    }
  while (done < (gsize) st.st_size)
    {
      ssize_t n = read (fd, data + done, (gsize) st.st_size - done);
      if (n < 0 && errno == EINTR)
        continue;
      if (n <= 0)
        {
          int saved = errno;
          close (fd);
          g_free (data);
          if (n == 0)
            g_set_error (error, FM_DOCUMENT_ERROR, FM_DOCUMENT_ERROR_DAMAGED,
                         "%s: the file changed while it was being read", name);
          else
            g_set_error (error, FM_DOCUMENT_ERROR, FM_DOCUMENT_ERROR_NOT_FOUND,
                         "%s: %s", name, g_strerror (saved));
          return NULL;
        }
      done += (gsize) n;
    }
  close (fd);
  return g_bytes_new_take (data, done);
}

/* Process exit and Poppler's threads. Poppler keeps C++ globals (mutexes in
 * its GlobalParams and font caches) that the C++ runtime destroys at exit();
 * a render, detection or search still running on a GTask thread then locks a
 * destroyed mutex and the process dies with std::system_error on the way out.
 * Every entry into Poppler goes through this gate (the document lock and the
 * constructors), and fm_document_close_gate() waits until no thread is inside
 * and keeps new ones out before the window's main() returns. */
static GMutex gate_mutex;
static GCond gate_cond;
static int gate_inside;
static gboolean gate_closed;

static void
gate_enter (void)
{
  g_mutex_lock (&gate_mutex);
  while (gate_closed)  /* the process is exiting: wait for it, never enter */
    g_cond_wait (&gate_cond, &gate_mutex);
  gate_inside++;
  g_mutex_unlock (&gate_mutex);
}

static void
gate_leave (void)
{
  g_mutex_lock (&gate_mutex);
  if (--gate_inside == 0)
    g_cond_broadcast (&gate_cond);
  g_mutex_unlock (&gate_mutex);
}

gboolean
fm_document_close_gate (gint64 timeout_us)
{
  gint64 deadline = g_get_monotonic_time () + timeout_us;
  gboolean idle;

  g_mutex_lock (&gate_mutex);
  gate_closed = TRUE;
  while (gate_inside > 0)
    if (!g_cond_wait_until (&gate_cond, &gate_mutex, deadline))
      break;
  idle = gate_inside == 0;
  g_mutex_unlock (&gate_mutex);
  return idle;
}

/* Poppler 22.x's poppler_document_new_from_bytes() retries a failed password
 * on a stream the first attempt already freed (a use-after-free that crashes
 * on every wrong password). The file-based constructor reopens the file for
 * the retry, so with a password we go through a file. */
static PopplerDocument *
open_poppler (GBytes     *bytes,
              const char *local_path,
              const char *password,
              GError    **error)
{
  g_autofree char *tmp_path = NULL;
  g_autofree char *uri = NULL;
  PopplerDocument *doc;

  if (password == NULL || password[0] == '\0')
    {
      /* Poppler inflates a page's fonts and content again for every render
       * and text extraction: given them inflated once (fm-pdf-bytes.h), it
       * draws the same pages for much less. The file as it is when that
       * copy is refused. */
      g_autoptr(GBytes) inflated = fm_pdf_inflate_streams (bytes);
      if (inflated != NULL)
        {
          doc = poppler_document_new_from_bytes (inflated, NULL, NULL);
          if (doc != NULL)
            return doc;
        }
      return poppler_document_new_from_bytes (bytes, NULL, error);
    }

  if (local_path == NULL)
    {
      gsize size;
      const char *data = g_bytes_get_data (bytes, &size);
      int fd = g_file_open_tmp ("formulate-XXXXXX.pdf", &tmp_path, error);
      gboolean ok;

      if (fd < 0)
        return NULL;
      close (fd);
      ok = g_file_set_contents (tmp_path, data, (gssize) size, error);
      if (!ok)
        {
          g_unlink (tmp_path);
          return NULL;
        }
      local_path = tmp_path;
    }
  uri = g_filename_to_uri (local_path, NULL, error);
  doc = uri ? poppler_document_new_from_file (uri, password, error) : NULL;
  if (tmp_path)
    g_unlink (tmp_path);
  return doc;
}

static FmDocument *
document_new (GBytes     *bytes,
              const char *local_path,
              const char *name,
              const char *password,
              GError    **error)
{
  g_autoptr(GError) local_error = NULL;
  g_autofree char *cut_password = password_truncate (password);
  PopplerDocument *poppler;
  FmDocument *self;
  int n_pages;

  g_return_val_if_fail (bytes != NULL, NULL);
  if (name == NULL)
    name = "document";

  if (g_bytes_get_size (bytes) == 0)
    {
      g_set_error (error, FM_DOCUMENT_ERROR, FM_DOCUMENT_ERROR_NOT_PDF,
                   "%s: empty file, not a PDF", name);
      return NULL;
    }
  if (!has_pdf_header (bytes))
    {
      g_set_error (error, FM_DOCUMENT_ERROR, FM_DOCUMENT_ERROR_NOT_PDF,
                   "%s: not a PDF file (no %%PDF- header)", name);
      return NULL;
    }

  gate_enter ();
  poppler = open_poppler (bytes, local_path, cut_password, &local_error);
  if (cut_password)
    memset (cut_password, 0, strlen (cut_password));
  n_pages = poppler ? poppler_document_get_n_pages (poppler) : 0;
  if (poppler && n_pages <= 0)
    {
      g_object_unref (poppler);
      gate_leave ();
      g_set_error (error, FM_DOCUMENT_ERROR, FM_DOCUMENT_ERROR_NO_PAGES,
                   "%s: the PDF has no pages", name);
      return NULL;
    }
  gate_leave ();
  if (poppler == NULL)
    {
      if (g_error_matches (local_error, POPPLER_ERROR, POPPLER_ERROR_ENCRYPTED))
        {
          /* Poppler reports both cases the same way; only we know whether a
           * password was offered. */
          if (password == NULL || password[0] == '\0')
            g_set_error (error, FM_DOCUMENT_ERROR, FM_DOCUMENT_ERROR_NEEDS_PASSWORD,
                         "%s: the PDF is encrypted and needs a password (use --password)", name);
          else
            g_set_error (error, FM_DOCUMENT_ERROR, FM_DOCUMENT_ERROR_WRONG_PASSWORD,
                         "%s: wrong password for this encrypted PDF", name);
        }
      else
        g_set_error (error, FM_DOCUMENT_ERROR, FM_DOCUMENT_ERROR_DAMAGED,
                     "%s: damaged or truncated PDF (%s)", name,
                     local_error ? local_error->message : "unknown error");
      return NULL;
    }

  self = g_object_new (FM_TYPE_DOCUMENT, NULL);
  self->poppler = poppler;
  self->bytes = g_bytes_ref (bytes);
  self->name = g_strdup (name);
  self->n_pages = n_pages;
  return self;
}

FmDocument *
fm_document_new_for_bytes (GBytes     *bytes,
                           const char *name,
                           const char *password,
                           GError    **error)
{
  return document_new (bytes, NULL, name, password, error);
}

FmDocument *
fm_document_new_for_file (GFile        *file,
                          const char   *password,
                          GCancellable *cancellable,
                          GError      **error)
{
  g_autoptr(GError) local_error = NULL;
  g_autoptr(GFileInfo) info = NULL;
  g_autoptr(GBytes) bytes = NULL;
  g_autofree char *name = NULL;

  g_return_val_if_fail (G_IS_FILE (file), NULL);

  name = g_file_get_parse_name (file);
  info = g_file_query_info (file, G_FILE_ATTRIBUTE_STANDARD_TYPE,
                            G_FILE_QUERY_INFO_NONE, cancellable, &local_error);
  if (info == NULL)
    {
      g_set_error (error, FM_DOCUMENT_ERROR,
                   g_error_matches (local_error, G_IO_ERROR, G_IO_ERROR_CANCELLED)
                     ? FM_DOCUMENT_ERROR_CANCELLED : FM_DOCUMENT_ERROR_NOT_FOUND,
                   "%s: %s", name, local_error->message);
      return NULL;
    }
  if (g_file_info_get_file_type (info) == G_FILE_TYPE_DIRECTORY)
    {
      g_set_error (error, FM_DOCUMENT_ERROR, FM_DOCUMENT_ERROR_NOT_FOUND,
                   "%s: is a directory, not a PDF file", name);
      return NULL;
    }
  if (g_file_info_get_file_type (info) == G_FILE_TYPE_SPECIAL)
    {
      /* A FIFO would block the read forever; /dev/zero would never end. */
      g_set_error (error, FM_DOCUMENT_ERROR, FM_DOCUMENT_ERROR_NOT_FOUND,
                   "%s: not a regular file", name);
      return NULL;
    }

  if (g_file_is_native (file))
    {
      g_autofree char *path = g_file_get_path (file);

      bytes = read_regular_file (path, name, error);
      if (bytes == NULL)
        return NULL;
    }
  else
    {
      char *contents = NULL;
      gsize length = 0;

      if (!g_file_load_contents (file, cancellable, &contents, &length, NULL, &local_error))
        {
          g_set_error (error, FM_DOCUMENT_ERROR, FM_DOCUMENT_ERROR_NOT_FOUND,
                       "%s: %s", name, local_error->message);
          return NULL;
        }
      bytes = g_bytes_new_take (contents, length);
    }

  /* No local path: with a password Poppler then reads a private copy of
   * the bytes we hold, not a file that may have changed since. */
  return document_new (bytes, NULL, name, password, error);
}

FmDocument *
fm_document_new_for_path (const char  *path,
                          const char  *password,
                          GError     **error)
{
  g_autoptr(GFile) file = NULL;

  g_return_val_if_fail (path != NULL, NULL);
  file = g_file_new_for_commandline_arg (path);
  return fm_document_new_for_file (file, password, NULL, error);
}

const char *
fm_document_get_name (FmDocument *self)
{
  g_return_val_if_fail (FM_IS_DOCUMENT (self), NULL);
  return self->name;
}

int
fm_document_get_n_pages (FmDocument *self)
{
  g_return_val_if_fail (FM_IS_DOCUMENT (self), 0);
  return self->n_pages;
}

void
fm_document_lock (FmDocument *self)
{
  gate_enter ();
  g_mutex_lock (&self->lock);
}

void
fm_document_unlock (FmDocument *self)
{
  g_mutex_unlock (&self->lock);
  gate_leave ();
}

PopplerPage *
fm_document_get_page_locked (FmDocument *self,
                             int         index,
                             GError    **error)
{
  PopplerPage *page;
  int oldest;

  if (index < 0 || index >= self->n_pages)
    {
      g_set_error (error, FM_DOCUMENT_ERROR, FM_DOCUMENT_ERROR_PAGE_RANGE,
                   "%s: page %d does not exist (the document has %d)",
                   self->name, index + 1, self->n_pages);
      return NULL;
    }
  oldest = 0;
  for (int i = 0; i < FM_DOCUMENT_RECENT_PAGES; i++)
    {
      if (self->recent[i].page != NULL && self->recent[i].index == index)
        {
          self->recent[i].used = ++self->clock;
          return g_object_ref (self->recent[i].page);
        }
      if (self->recent[i].used < self->recent[oldest].used)
        oldest = i;
    }
  page = poppler_document_get_page (self->poppler, index);
  if (page == NULL)
    {
      g_set_error (error, FM_DOCUMENT_ERROR, FM_DOCUMENT_ERROR_BAD_PAGE,
                   "%s: page %d cannot be read", self->name, index + 1);
      return NULL;
    }
  g_clear_object (&self->recent[oldest].page);
  self->recent[oldest].page = g_object_ref (page);
  self->recent[oldest].index = index;
  self->recent[oldest].used = ++self->clock;
  return page;
}

gboolean
fm_document_get_page_size (FmDocument *self,
                           int         index,
                           double     *width,
                           double     *height,
                           GError    **error)
{
  PopplerPage *page;
  double w = 0, h = 0;

  g_return_val_if_fail (FM_IS_DOCUMENT (self), FALSE);

  fm_document_lock (self);
  page = fm_document_get_page_locked (self, index, error);
  if (page)
    {
      poppler_page_get_size (page, &w, &h);
      g_object_unref (page);
    }
  fm_document_unlock (self);
  if (page == NULL)
    return FALSE;

  if (!isfinite (w) || !isfinite (h) || w < FM_PAGE_MIN_PT || h < FM_PAGE_MIN_PT ||
      w > FM_PAGE_MAX_PT || h > FM_PAGE_MAX_PT)
    {
      g_set_error (error, FM_DOCUMENT_ERROR, FM_DOCUMENT_ERROR_BAD_PAGE,
                   "%s: page %d has an unusable size (%g x %g pt)",
                   self->name, index + 1, w, h);
      return FALSE;
    }
  if (width)
    *width = w;
  if (height)
    *height = h;
  return TRUE;
}

char *
fm_document_dup_title (FmDocument *self)
{
  char *title;

  g_return_val_if_fail (FM_IS_DOCUMENT (self), NULL);
  fm_document_lock (self);
  title = poppler_document_get_title (self->poppler);
  fm_document_unlock (self);
  if (title && title[0] == '\0')
    g_clear_pointer (&title, g_free);
  return title;
}

void
fm_outline_entry_free (FmOutlineEntry *entry)
{
  g_free (entry->title);
  g_free (entry);
}

/* With the lock held: the 0-based page an outline action goes to, or -1. */
static int
action_page_locked (FmDocument *self, PopplerAction *action)
{
  PopplerDest *dest, *found = NULL;
  int page;

  if (action == NULL || action->type != POPPLER_ACTION_GOTO_DEST || action->goto_dest.dest == NULL)
    return -1;
  dest = action->goto_dest.dest;
  if (dest->type == POPPLER_DEST_NAMED && dest->named_dest != NULL)
    dest = found = poppler_document_find_dest (self->poppler, dest->named_dest);
  page = dest != NULL ? dest->page_num - 1 : -1;
  g_clear_pointer (&found, poppler_dest_free);
  return page >= 0 && page < self->n_pages ? page : -1;
}

static void
collect_outline_locked (FmDocument *self, PopplerIndexIter *iter, int depth, GPtrArray *out)
{
  /* A hostile outline may nest without end: 16 levels are plenty. */
  if (depth > 16)
    return;
  do
    {
      PopplerAction *action = poppler_index_iter_get_action (iter);
      PopplerIndexIter *child;

      if (action != NULL && action->any.title != NULL && *action->any.title != '\0')
        {
          FmOutlineEntry *entry = g_new0 (FmOutlineEntry, 1);
          entry->title = g_strdup (action->any.title);
          entry->page = action_page_locked (self, action);
          entry->depth = depth;
          g_ptr_array_add (out, entry);
        }
      poppler_action_free (action);
      child = poppler_index_iter_get_child (iter);
      if (child != NULL)
        {
          collect_outline_locked (self, child, depth + 1, out);
          poppler_index_iter_free (child);
        }
    }
  while (poppler_index_iter_next (iter));
}

GPtrArray *
fm_document_dup_outline (FmDocument *self)
{
  GPtrArray *out = g_ptr_array_new_with_free_func ((GDestroyNotify) fm_outline_entry_free);
  PopplerIndexIter *iter;

  g_return_val_if_fail (FM_IS_DOCUMENT (self), out);
  fm_document_lock (self);
  iter = poppler_index_iter_new (self->poppler);
  if (iter != NULL)
    {
      collect_outline_locked (self, iter, 0, out);
      poppler_index_iter_free (iter);
    }
  fm_document_unlock (self);
  return out;
}

/* memmem() without _GNU_SOURCE: the file holds NULs. */
static const char *
find_bytes (const char *hay, gsize hay_len, const char *needle, gsize needle_len)
{
  const char *p = hay, *end = hay + hay_len;

  while (needle_len > 0 && (gsize) (end - p) >= needle_len)
    {
      p = memchr (p, needle[0], (gsize) (end - p) - needle_len + 1);
      if (p == NULL)
        return NULL;
      if (memcmp (p, needle, needle_len) == 0)
        return p;
      p++;
    }
  return NULL;
}

static gboolean
pdf_delimiter (char c)
{
  return c == ' ' || c == '\n' || c == '\r' || c == '\t' || c == '\f' || c == '\0' ||
         c == '/' || c == '<' || c == '>' || c == '[' || c == ']' || c == '(' || c == ')' || c == '%';
}

/* The direct integer after key in [p, end), or -1 (absent, indirect, junk). */
static gint64
dict_int (const char *p, const char *end, const char *key)
{
  gsize key_len = strlen (key);

  for (const char *k = find_bytes (p, (gsize) (end - p), key, key_len); k != NULL;
       k = find_bytes (k + 1, (gsize) (end - k - 1), key, key_len))
    {
      const char *q = k + key_len;
      gint64 v = 0;
      int digits = 0;

      if (q < end && !pdf_delimiter (*q))
        continue;      /* /WidthX */
      while (q < end && (*q == ' ' || *q == '\n' || *q == '\r' || *q == '\t'))
        q++;
      while (q < end && g_ascii_isdigit (*q) && digits < 12)
        v = v * 10 + (*q++ - '0'), digits++;
      if (digits == 0 || (q < end && (g_ascii_isdigit (*q) || *q == '.')))
        return -1;
      /* "N 0 R" is a reference, not the size */
      while (q < end && (*q == ' ' || *q == '\n' || *q == '\r' || *q == '\t'))
        q++;
      if (q < end && g_ascii_isdigit (*q))
        {
          while (q < end && g_ascii_isdigit (*q))
            q++;
          while (q < end && (*q == ' ' || *q == '\n' || *q == '\r' || *q == '\t'))
            q++;
          if (q < end && *q == 'R')
            return -1;
        }
      return v;
    }
  return -1;
}

/* Image XObjects are streams, and a stream is never inside an object stream
 * nor is its dictionary encrypted (PDF 1.7, 7.5.7 and 7.6.1): every image's
 * /Width and /Height can be read from the file's bytes without parsing its
 * cross-reference table. */
static GArray *
scan_images (GBytes *bytes)
{
  gsize len = 0;
  const char *data = g_bytes_get_data (bytes, &len);
  const char *end = data + len;
  GArray *big = g_array_new (FALSE, FALSE, sizeof (FmImageSize));
  static const char key[] = "/Image";

  for (const char *p = find_bytes (data, len, key, sizeof key - 1); p != NULL;
       p = find_bytes (p + 1, (gsize) (end - p - 1), key, sizeof key - 1))
    {
      const char *q = p, *lo, *hi, *s;
      FmImageSize size;

      if (p + sizeof key - 1 < end && !pdf_delimiter (p[sizeof key - 1]))
        continue;      /* /ImageB, /ImageC of a ProcSet */
      /* "/Subtype /Image": the value of /Subtype, not some other name */
      while (q > data && (q[-1] == ' ' || q[-1] == '\n' || q[-1] == '\r' || q[-1] == '\t'))
        q--;
      if (q - data < 8 || memcmp (q - 8, "/Subtype", 8) != 0)
        continue;
      /* The dictionary: from its "obj" to its "stream", each within 4 KB. */
      lo = MAX (data, p - 4096);
      hi = MIN (end, p + 4096);
      s = find_bytes (p, (gsize) (hi - p), "stream", 6);
      if (s == NULL)
        continue;
      for (const char *o = p; o >= lo + 3; o--)
        if (memcmp (o - 3, "obj", 3) == 0)
          {
            lo = o;
            break;
          }
      size.object = fm_pdf_object_number_before (data, p);
      size.width = dict_int (lo, s, "/Width");
      size.height = dict_int (lo, s, "/Height");
      if (size.width > 0 && size.height > 0)
        g_array_append_val (big, size);
    }
  return big;
}

/* The file's images, read from its bytes once for both the size check and
 * the scan analysis's resolution (the lock held). */
static GArray *
images_locked (FmDocument *self)
{
  if (self->images == NULL)
    self->images = scan_images (self->bytes);
  return self->images;
}

gboolean
fm_document_check_page_images (FmDocument *self,
                               int         index,
                               GError    **error)
{
  PopplerPage *page;
  GList *mapping;
  const FmImageSize *found = NULL;
  g_autoptr(GArray) drawn = NULL;

  g_return_val_if_fail (FM_IS_DOCUMENT (self), FALSE);

  fm_document_lock (self);
  if (self->big_images == NULL)
    {
      GArray *all = images_locked (self);

      self->big_images = g_array_new (FALSE, FALSE, sizeof (FmImageSize));
      for (guint i = 0; i < all->len; i++)
        {
          const FmImageSize *img = &g_array_index (all, FmImageSize, i);
          if (img->width * img->height > FM_IMAGE_MAX_PIXELS)
            g_array_append_vals (self->big_images, img, 1);
        }
    }
  if (self->big_images->len == 0)
    {
      fm_document_unlock (self);
      return TRUE;
    }
  page = fm_document_get_page_locked (self, index, error);
  if (page == NULL)
    {
      fm_document_unlock (self);
      return FALSE;
    }
  /* Which of the file's images this page draws is not told by poppler-glib:
   * the page's resources in the file's bytes tell (fm-pdf-bytes.c). Where
   * they cannot be followed (resources in a compressed object stream), or
   * for an image whose object number is unknown, the page's image areas
   * are (without decoding them): an image drawn at its own aspect ratio (a
   * scan always is) is matched by that ratio, either way up for a turned
   * page, which also refuses a small image of the same shape. */
  if (self->objects == NULL)
    self->objects = fm_pdf_index_new (self->bytes);
  drawn = fm_pdf_index_page_images (self->objects, index);
  if (drawn != NULL)
    for (guint i = 0; i < self->big_images->len && found == NULL; i++)
      {
        const FmImageSize *img = &g_array_index (self->big_images, FmImageSize, i);
        for (guint k = 0; k < drawn->len && found == NULL; k++)
          if (img->object >= 0 && g_array_index (drawn, gint64, k) == img->object)
            found = img;
      }
  mapping = poppler_page_get_image_mapping (page);
  for (GList *l = mapping; l != NULL && found == NULL; l = l->next)
    {
      const PopplerImageMapping *m = l->data;
      double w = fabs (m->area.x2 - m->area.x1), h = fabs (m->area.y2 - m->area.y1);

      if (!(w > 0) || !(h > 0))
        continue;
      for (guint i = 0; i < self->big_images->len && found == NULL; i++)
        {
          const FmImageSize *img = &g_array_index (self->big_images, FmImageSize, i);
          double r = (double) img->width / (double) img->height;

          if (drawn != NULL && img->object >= 0)
            continue;   /* known not to be drawn here */
          if (fabs (w / h / r - 1) < 0.02 || fabs (h / w / r - 1) < 0.02)
            found = img;
        }
    }
  poppler_page_free_image_mapping (mapping);
  g_object_unref (page);
  fm_document_unlock (self);
  if (found)
    {
      g_set_error (error, FM_DOCUMENT_ERROR, FM_DOCUMENT_ERROR_RENDER,
                   "%s: page %d: page image too large: %" G_GINT64_FORMAT " x %" G_GINT64_FORMAT
                   " pixels (the limit is %lld M pixels)",
                   self->name, index + 1, found->width, found->height,
                   FM_IMAGE_MAX_PIXELS / (1024 * 1024));
      return FALSE;
    }
  return TRUE;
}

/* Pixels per point of the finest image page index draws over a fifth of
 * the page or more, matched to the areas the page draws images in by its
 * aspect ratio (2 %, either way up) among the images the page's resources
 * name (all of the file's where those cannot be followed); 0 when there is
 * none. Reads the file's bytes, never decodes an image. */
double
fm_document_page_image_ppp (FmDocument *self,
                            int         index)
{
  PopplerPage *page;
  GList *mapping;
  g_autoptr(GArray) drawn = NULL;
  double page_w = 0, page_h = 0, best = 0;

  g_return_val_if_fail (FM_IS_DOCUMENT (self), 0);

  fm_document_lock (self);
  page = images_locked (self)->len > 0 ? fm_document_get_page_locked (self, index, NULL) : NULL;
  if (page == NULL)
    {
      fm_document_unlock (self);
      return 0;
    }
  if (self->objects == NULL)
    self->objects = fm_pdf_index_new (self->bytes);
  drawn = fm_pdf_index_page_images (self->objects, index);
  poppler_page_get_size (page, &page_w, &page_h);
  mapping = poppler_page_get_image_mapping (page);
  for (GList *l = mapping; l != NULL; l = l->next)
    {
      const PopplerImageMapping *m = l->data;
      double w = fabs (m->area.x2 - m->area.x1), h = fabs (m->area.y2 - m->area.y1);

      if (!(w > 0) || !(h > 0) || w * h < 0.2 * page_w * page_h)
        continue;
      for (guint i = 0; i < self->images->len; i++)
        {
          const FmImageSize *img = &g_array_index (self->images, FmImageSize, i);
          double r = (double) img->width / (double) img->height;
          gboolean named = drawn == NULL;

          for (guint k = 0; drawn != NULL && k < drawn->len && !named; k++)
            named = img->object >= 0 && g_array_index (drawn, gint64, k) == img->object;
          if (!named)
            continue;
          if (fabs (w / h / r - 1) < 0.02)
            best = MAX (best, img->width / w);
          else if (fabs (h / w / r - 1) < 0.02)
            best = MAX (best, img->width / h);
        }
    }
  poppler_page_free_image_mapping (mapping);
  g_object_unref (page);
  fm_document_unlock (self);
  return best;
}

static void
text_layer_free (gpointer data)
{
  FmTextLayer *tl = data;

  g_free (tl->text);
  g_free (tl->rects);
  poppler_page_free_text_attributes (tl->attrs);
  g_free (tl->attr_of);
  g_free (tl);
}

const FmTextLayer *
fm_document_get_text_layer_locked (PopplerPage *page)
{
  FmTextLayer *tl = g_object_get_data (G_OBJECT (page), "fm-text-layer");

  if (tl != NULL)
    return tl->text != NULL ? tl : NULL;
  tl = g_new0 (FmTextLayer, 1);
  tl->text = poppler_page_get_text (page);
  if (tl->text != NULL && !poppler_page_get_text_layout (page, &tl->rects, &tl->n_rects))
    {
      tl->rects = NULL;
      tl->n_rects = 0;
    }
  if (tl->text != NULL)
    {
      tl->attrs = poppler_page_get_text_attributes (page);
      tl->n_chars = g_utf8_strlen (tl->text, -1);
      tl->attr_of = g_new0 (PopplerTextAttributes *, tl->n_chars + 1);
      for (GList *l = tl->attrs; l != NULL; l = l->next)
        {
          PopplerTextAttributes *a = l->data;
          if (a->start_index < 0)
            continue;
          for (glong k = a->start_index; k <= a->end_index && k < tl->n_chars; k++)
            if (tl->attr_of[k] == NULL)
              tl->attr_of[k] = a;
        }
    }
  g_object_set_data_full (G_OBJECT (page), "fm-text-layer", tl, text_layer_free);
  return tl->text != NULL ? tl : NULL;
}
