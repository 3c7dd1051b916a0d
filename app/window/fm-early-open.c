/* fm-early-open.c - the command line's PDF opened and its first page rendered
 * on a thread of its own while GTK starts (see fm-early-open.h).
 *
 * The render's zoom is predicted the way the page view will choose it: the
 * document's remembered zoom and page (positions.ini, written by the tab when
 * it closes), else fit-width at the page view's width remembered with the
 * most recent document, else at the default window's. A wrong guess costs
 * one render on the spare core: the view then renders the page as it always
 * did (Poppler's fonts and the page already loaded by the early one).
 *
 * No GTK here: the thread only uses Poppler (through FmDocument, whose lock
 * and gate it respects like any render) and GLib. */
#include "fm-early-open.h"

#include "fm-document-tab.h"
#include "fm-page-view.h"
#include "fm-render.h"
#include "fm-startup-log.h"

#include <math.h>
#include <stdlib.h>

typedef struct {
  GMutex lock;
  GCond cond;
  GThread *thread;
  GFile *file;
  GWeakRef render_document;    /* the document the render is of, thread-safe */
  /* Set by the thread, read and changed with lock held. */
  gboolean opened;
  FmDocument *document;        /* the thread's reference; NULL when the open failed */
  GError *open_error;
  double *sizes;
  int n_pages;
  gboolean claimed;            /* the tab took the document or the error */
  int render_index;            /* -1: no render (the open failed) */
  double render_scale;         /* as asked, before fm_render_fit_scale */
  gboolean rendered;
  cairo_surface_t *surface;    /* NULL when the render failed */
  GError *render_error;
  gboolean render_done_with;   /* taken by the view, or not wanted by it */
  gboolean render_waited_for;  /* a take waits for the surface */
  gboolean render_used;        /* the view got it */
} EarlyOpen;

static EarlyOpen *early;

/* The display's integer scale as GDK will report it on X11 and most Wayland
 * set-ups without fractional scaling; a wrong guess only means a re-render. */
static int
guess_scale_factor (void)
{
  const char *env = g_getenv ("GDK_SCALE");
  int factor = env != NULL ? atoi (env) : 1;

  return factor >= 1 && factor <= 4 ? factor : 1;
}

/* The zoom and the page the page view will start at, from the tab's state. */
static double
predict_zoom (EarlyOpen *self, int *page)
{
  g_autofree char *path = fm_document_tab_positions_path ();
  g_autofree char *uri = g_file_get_uri (self->file);
  g_autoptr(GKeyFile) keys = g_key_file_new ();
  g_auto(GStrv) groups = NULL;
  int width = FM_EARLY_OPEN_DEFAULT_VIEW_WIDTH;
  gint64 newest = G_MININT64;

  *page = 0;
  if (!g_key_file_load_from_file (keys, path, G_KEY_FILE_NONE, NULL))
    return fm_page_view_fit_width_zoom_for (self->sizes, self->n_pages, width, 1.0);
  if (g_key_file_has_group (keys, uri))
    {
      double zoom = g_key_file_get_double (keys, uri, "zoom", NULL);
      *page = CLAMP (g_key_file_get_integer (keys, uri, "page", NULL), 0, self->n_pages - 1);
      if (zoom > 0)
        return zoom;
    }
  groups = g_key_file_get_groups (keys, NULL);
  for (gsize i = 0; groups[i] != NULL; i++)
    {
      gint64 t = g_key_file_get_int64 (keys, groups[i], "time", NULL);
      int w = g_key_file_get_integer (keys, groups[i], "width", NULL);
      if (w > 0 && t > newest)
        {
          newest = t;
          width = w;
        }
    }
  return fm_page_view_fit_width_zoom_for (self->sizes, self->n_pages, width, 1.0);
}

static FmDocument *
open_document (EarlyOpen *self, GError **error)
{
  g_autoptr(FmDocument) document = fm_document_new_for_file (self->file, NULL, NULL, error);

  if (document == NULL)
    return NULL;
  self->n_pages = fm_document_get_n_pages (document);
  self->sizes = g_new0 (double, 2 * (gsize) self->n_pages);
  for (int i = 0; i < self->n_pages; i++)
    if (!fm_document_get_page_size (document, i, &self->sizes[2 * i],
                                    &self->sizes[2 * i + 1], error))
      return NULL;
  return g_steal_pointer (&document);
}

static gpointer
early_thread (gpointer data)
{
  EarlyOpen *self = data;
  g_autoptr(GError) error = NULL;
  FmDocument *document = open_document (self, &error);
  int index = -1;
  double scale = 0;
  cairo_surface_t *surface = NULL;

  if (document != NULL)
    scale = predict_zoom (self, &index) * guess_scale_factor ();
  g_weak_ref_set (&self->render_document, document);

  g_mutex_lock (&self->lock);
  self->opened = TRUE;
  self->document = document;
  self->open_error = g_steal_pointer (&error);
  self->render_index = index;
  self->render_scale = scale;
  g_cond_broadcast (&self->cond);
  g_mutex_unlock (&self->lock);
  fm_startup_log ("early-opened");

  if (index >= 0)
    surface = fm_render_page_rect (document, index, NULL,
                                   fm_render_fit_scale (self->sizes[2 * index],
                                                        self->sizes[2 * index + 1], scale),
                                   &error);
  g_mutex_lock (&self->lock);
  self->rendered = TRUE;
  self->surface = surface;
  self->render_error = g_steal_pointer (&error);
  if (self->render_done_with && !self->render_waited_for)
    g_clear_pointer (&self->surface, cairo_surface_destroy);
  /* The tab owns the document now: closing it must free it. */
  if (self->claimed)
    g_clear_object (&self->document);
  g_cond_broadcast (&self->cond);
  g_mutex_unlock (&self->lock);
  fm_startup_log ("early-rendered");
  return NULL;
}

void
fm_early_open_start (int argc, char **argv)
{
  g_autoptr(GError) error = NULL;

  if (early != NULL || argc < 2)
    return;
  /* Options change what the program does (--version, --help, GApplication's
   * own): then it starts as it always did. */
  for (int i = 1; i < argc; i++)
    if (argv[i][0] == '-')
      return;
  early = g_new0 (EarlyOpen, 1);
  g_mutex_init (&early->lock);
  g_cond_init (&early->cond);
  g_weak_ref_init (&early->render_document, NULL);
  /* As GApplication makes the GFile it passes to open. */
  early->file = g_file_new_for_commandline_arg (argv[1]);
  early->render_index = -1;
  early->thread = g_thread_try_new ("fm-early-open", early_thread, early, &error);
  if (early->thread == NULL)
    {
      g_object_unref (early->file);
      g_weak_ref_clear (&early->render_document);
      g_mutex_clear (&early->lock);
      g_cond_clear (&early->cond);
      g_clear_pointer (&early, g_free);
    }
}

void
fm_early_open_finish (void)
{
  if (early == NULL)
    return;
  g_thread_join (early->thread);
  g_clear_object (&early->document);
  g_clear_error (&early->open_error);
  g_clear_error (&early->render_error);
  g_clear_pointer (&early->surface, cairo_surface_destroy);
  g_free (early->sizes);
  g_object_unref (early->file);
  g_weak_ref_clear (&early->render_document);
  g_mutex_clear (&early->lock);
  g_cond_clear (&early->cond);
  g_clear_pointer (&early, g_free);
}

static gboolean
claim (GFile       *file,
       const char  *password,
       gboolean     wait,
       FmDocument **document,
       double     **sizes,
       int         *n_pages,
       GError     **error)
{
  EarlyOpen *self = early;

  if (self == NULL || password != NULL || !g_file_equal (file, self->file))
    return FALSE;
  g_mutex_lock (&self->lock);
  if (self->claimed || (!wait && !self->opened))
    {
      g_mutex_unlock (&self->lock);
      return FALSE;
    }
  self->claimed = TRUE;
  while (!self->opened)
    g_cond_wait (&self->cond, &self->lock);
  /* The thread keeps its reference while it still renders. */
  *document = self->rendered ? g_steal_pointer (&self->document)
                             : self->document ? g_object_ref (self->document) : NULL;
  *sizes = self->sizes ? g_memdup2 (self->sizes, 2 * sizeof (double) * (gsize) self->n_pages) : NULL;
  *n_pages = self->n_pages;
  if (self->open_error != NULL)
    g_propagate_error (error, g_steal_pointer (&self->open_error));
  g_mutex_unlock (&self->lock);
  return TRUE;
}

gboolean
fm_early_open_claim (GFile       *file,
                     const char  *password,
                     FmDocument **document,
                     double     **sizes,
                     int         *n_pages,
                     GError     **error)
{
  return claim (file, password, TRUE, document, sizes, n_pages, error);
}

gboolean
fm_early_open_try_claim (GFile       *file,
                         const char  *password,
                         FmDocument **document,
                         double     **sizes,
                         int         *n_pages,
                         GError     **error)
{
  return claim (file, password, FALSE, document, sizes, n_pages, error);
}

/* Whether document is the one rendered early; the lock is held. */
static gboolean
is_early_document (EarlyOpen *self, FmDocument *document)
{
  FmDocument *rendered = g_weak_ref_get (&self->render_document);
  gboolean same = rendered != NULL && rendered == document;

  g_clear_object (&rendered);
  return same;
}

gboolean
fm_early_open_has_render (FmDocument *document,
                          int         page_index,
                          double      scale)
{
  EarlyOpen *self = early;
  gboolean has;

  if (self == NULL || document == NULL)
    return FALSE;
  g_mutex_lock (&self->lock);
  /* The view's scale comes out of the same arithmetic (fit-width of the same
   * width, or the same remembered zoom): a right guess is equal. */
  has = self->claimed && !self->render_done_with && self->render_index == page_index &&
        fabs (self->render_scale - scale) < 1e-9 && is_early_document (self, document);
  g_mutex_unlock (&self->lock);
  return has;
}

cairo_surface_t *
fm_early_open_take_render_now (FmDocument *document,
                               int         page_index,
                               double      scale)
{
  EarlyOpen *self = early;
  cairo_surface_t *surface = NULL;

  if (self == NULL || document == NULL)
    return NULL;
  g_mutex_lock (&self->lock);
  if (self->claimed && self->rendered && self->surface != NULL && !self->render_done_with &&
      self->render_index == page_index && fabs (self->render_scale - scale) < 1e-9 &&
      is_early_document (self, document))
    {
      surface = g_steal_pointer (&self->surface);
      self->render_done_with = TRUE;
      self->render_used = TRUE;
    }
  g_mutex_unlock (&self->lock);
  return surface;
}

void
fm_early_open_release (FmDocument *document)
{
  EarlyOpen *self = early;

  if (self == NULL || document == NULL)
    return;
  g_mutex_lock (&self->lock);
  if (!self->render_done_with && is_early_document (self, document))
    {
      self->render_done_with = TRUE;
      if (self->rendered && !self->render_waited_for)
        g_clear_pointer (&self->surface, cairo_surface_destroy);
    }
  g_mutex_unlock (&self->lock);
}

static void
take_render_thread (GTask *task, gpointer source, gpointer task_data, GCancellable *cancellable)
{
  EarlyOpen *self = task_data;
  cairo_surface_t *surface;
  GError *error = NULL;

  g_mutex_lock (&self->lock);
  while (!self->rendered)
    g_cond_wait (&self->cond, &self->lock);
  surface = g_steal_pointer (&self->surface);
  if (surface == NULL)
    error = self->render_error != NULL ? g_error_copy (self->render_error)
      : g_error_new (FM_DOCUMENT_ERROR, FM_DOCUMENT_ERROR_RENDER, "page %d was not rendered",
                     self->render_index + 1);
  else
    self->render_used = TRUE;
  g_mutex_unlock (&self->lock);
  if (surface == NULL)
    g_task_return_error (task, error);
  else
    g_task_return_pointer (task, surface, (GDestroyNotify) cairo_surface_destroy);
}

void
fm_early_open_take_render_async (FmDocument          *document,
                                 int                  page_index,
                                 GCancellable        *cancellable,
                                 GAsyncReadyCallback  callback,
                                 gpointer             user_data)
{
  g_autoptr(GTask) task = g_task_new (document, cancellable, callback, user_data);

  g_return_if_fail (early != NULL);
  g_task_set_source_tag (task, fm_early_open_take_render_async);
  g_mutex_lock (&early->lock);
  early->render_done_with = TRUE;
  early->render_waited_for = TRUE;
  g_mutex_unlock (&early->lock);
  g_task_set_task_data (task, early, NULL);
  g_task_run_in_thread (task, take_render_thread);
}

cairo_surface_t *
fm_early_open_take_render_finish (FmDocument    *document,
                                  GAsyncResult  *result,
                                  GError       **error)
{
  return g_task_propagate_pointer (G_TASK (result), error);
}

gboolean
fm_early_open_get_render_used (void)
{
  gboolean used;

  if (early == NULL)
    return FALSE;
  g_mutex_lock (&early->lock);
  used = early->render_used;
  g_mutex_unlock (&early->lock);
  return used;
}
