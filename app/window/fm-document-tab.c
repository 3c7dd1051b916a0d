/* fm-document-tab.c - one open document: pages, thumbnails, formulas, results. */
#include "fm-document-tab.h"
#include "fm-early-open.h"
#include "fm-startup-log.h"

#include <errno.h>
#include <glib/gi18n.h>
#include <glib/gstdio.h>
#include <string.h>

#include "fm-detect.h"
#include "fm-recognize.h"
#include "fm-page-queue.h"
#include "fm-scan.h"

struct _FmDocumentTab {
  GtkWidget parent_instance;

  GFile *file;
  char *password;
  char *title;
  FmDocument *document;
  FmEngineWorker *worker;
  GSettings *settings;
  GListStore *items;
  GCancellable *cancellable;
  gboolean detecting;
  int pages_detected;
  char **page_notes;           /* per page: why detection found nothing, or NULL */
  const char **page_sources;   /* per page: fm_page_source_to_string, or NULL    */
  int pages_from_pixels;       /* pages without a text layer, read from pixels   */
  int n_notes;
  guint refilter_idle;
  gboolean refilter_pending; /* a change the results filter looks at */
  GPtrArray *undo;             /* UndoStep*, the last one on top */
  guint changes;               /* results, edits, deletions so far */
  guint exported_changes;      /* changes when last exported */

  /* Find (Ctrl+F) */
  GtkWidget *search_bar;
  GtkWidget *search_entry;
  GtkWidget *search_label;
  GCancellable *find_cancellable;   /* the search running, or NULL */
  GArray *hits;                     /* FmPageHit, or NULL before a search */
  int current_hit;

  /* Outline (the sidebar's second page) */
  GtkWidget *sidebar_stack;
  GtkWidget *outline_list;
  guint n_outline;

  GtkWidget *box;
  GtkWidget *thumbs_revealer;
  GtkWidget *thumbs_view;
  GtkWidget *paned;
  GtkWidget *page_scroller;
  GtkWidget *page_view;
  GtkWidget *results_panel;
};

G_DEFINE_FINAL_TYPE (FmDocumentTab, fm_document_tab, GTK_TYPE_WIDGET)

enum {
  SIGNAL_LOADED,
  SIGNAL_LOAD_FAILED,
  SIGNAL_DETECTED,
  N_SIGNALS
};
static guint signals[N_SIGNALS];

enum { PROP_0, PROP_DETECTING, PROP_CAN_UNDO, PROP_FINDING, N_PROPS };
static GParamSpec *properties[N_PROPS];

/* ---------------------------------------------------------------------- */
/* Undo                                                                   */

/* The undo steps of a document: a deleted region (put back where it was in
 * the list) or an edit of a recognised formula's LaTeX (the text before the
 * first keystroke: one step per formula edited, not one per character). */
typedef enum { UNDO_DELETE, UNDO_EDIT } UndoKind;

typedef struct {
  UndoKind kind;
  FmResultsItem *item;
  guint position;              /* UNDO_DELETE: where it was in the list */
  char *latex;                 /* UNDO_EDIT: the LaTeX before the edit */
  gboolean edited;             /* UNDO_EDIT: whether that was an edit already */
} UndoStep;

static void
undo_step_free (UndoStep *step)
{
  g_object_unref (step->item);
  g_free (step->latex);
  g_free (step);
}

/* Undo keeps this many steps; older ones are forgotten. */
#define UNDO_MAX 100

static void
push_undo (FmDocumentTab *self, UndoStep *step)
{
  gboolean could = self->undo->len > 0;

  if (self->undo->len >= UNDO_MAX)
    g_ptr_array_remove_index (self->undo, 0);
  g_ptr_array_add (self->undo, step);
  if (!could)
    g_object_notify_by_pspec (G_OBJECT (self), properties[PROP_CAN_UNDO]);
}

static void
item_edited (FmResultsItem *item, const char *before, gboolean was_edited, FmDocumentTab *self)
{
  UndoStep *top = self->undo->len > 0 ? g_ptr_array_index (self->undo, self->undo->len - 1) : NULL;
  UndoStep *step;

  /* Typing on in the same formula extends the step already there. */
  if (top != NULL && top->kind == UNDO_EDIT && top->item == item)
    return;
  step = g_new0 (UndoStep, 1);
  step->kind = UNDO_EDIT;
  step->item = g_object_ref (item);
  step->latex = g_strdup (before);
  step->edited = was_edited;
  push_undo (self, step);
}

gboolean
fm_document_tab_can_undo (FmDocumentTab *self)
{
  return self->undo->len > 0;
}

gboolean
fm_document_tab_undo (FmDocumentTab *self)
{
  UndoStep *step;

  if (self->undo->len == 0)
    return FALSE;
  step = g_ptr_array_steal_index (self->undo, self->undo->len - 1);
  if (step->kind == UNDO_DELETE)
    {
      g_list_store_insert (self->items, MIN (step->position, g_list_model_get_n_items (G_LIST_MODEL (self->items))),
                           step->item);
      fm_page_view_set_selected (FM_PAGE_VIEW (self->page_view), step->item);
      fm_results_panel_select (FM_RESULTS_PANEL (self->results_panel), step->item);
      self->changes++;
    }
  else
    fm_results_item_restore_latex (step->item, step->latex, step->edited);
  undo_step_free (step);
  if (self->undo->len == 0)
    g_object_notify_by_pspec (G_OBJECT (self), properties[PROP_CAN_UNDO]);
  return TRUE;
}

gboolean
fm_document_tab_has_unsaved (FmDocumentTab *self)
{
  guint n = g_list_model_get_n_items (G_LIST_MODEL (self->items));

  if (self->changes == self->exported_changes)
    return FALSE;
  /* Regions found but never recognised lose nothing when closed. */
  for (guint i = 0; i < n; i++)
    {
      g_autoptr(FmResultsItem) item = g_list_model_get_item (G_LIST_MODEL (self->items), i);
      if (fm_results_item_get_latex (item) != NULL)
        return TRUE;
    }
  return FALSE;
}

void
fm_document_tab_mark_exported (FmDocumentTab *self, guint changes)
{
  self->exported_changes = changes;
}

guint
fm_document_tab_get_changes (FmDocumentTab *self)
{
  return self->changes;
}

/* ---------------------------------------------------------------------- */
/* Find                                                                   */

/* Runs poppler_page_find_text page by page on a worker thread, each page
 * under the document's lock (so renders and detection interleave with it on a
 * long document), and hands back every match in page order. */
typedef struct {
  FmDocument *document;
  char *text;
} FindData;

static void
find_data_free (FindData *data)
{
  g_object_unref (data->document);
  g_free (data->text);
  g_free (data);
}

static void
find_thread (GTask *task, gpointer source, gpointer task_data, GCancellable *cancellable)
{
  FindData *data = task_data;
  const char *text = data->text;
  FmDocument *doc = data->document;
  int n = fm_document_get_n_pages (doc);
  GArray *hits = g_array_new (FALSE, FALSE, sizeof (FmPageHit));

  for (int i = 0; i < n && !g_cancellable_is_cancelled (cancellable); i++)
    {
      PopplerPage *page;
      GList *matches;
      double width, height;

      fm_document_lock (doc);
      page = fm_document_get_page_locked (doc, i, NULL);
      if (page == NULL)
        {
          fm_document_unlock (doc);
          continue;
        }
      poppler_page_get_size (page, &width, &height);
      matches = poppler_page_find_text_with_options (page, text, POPPLER_FIND_DEFAULT);
      g_object_unref (page);
      fm_document_unlock (doc);
      for (GList *l = matches; l != NULL; l = l->next)
        {
          PopplerRectangle *r = l->data;
          /* Poppler gives PDF space (origin bottom left); the view's points
           * start at the top. */
          FmPageHit hit = { i, GRAPHENE_RECT_INIT ((float) r->x1, (float) (height - r->y2),
                                                   (float) (r->x2 - r->x1), (float) (r->y2 - r->y1)) };
          g_array_append_val (hits, hit);
        }
      g_list_free_full (matches, (GDestroyNotify) poppler_rectangle_free);
    }
  g_task_return_pointer (task, hits, (GDestroyNotify) g_array_unref);
}

static void
update_find_label (FmDocumentTab *self)
{
  g_autofree char *text = NULL;

  if (self->hits == NULL)
    text = g_strdup ("");
  else if (self->hits->len == 0)
    text = g_strdup (_("No matches"));
  else
    /* Translators: Find's position, "3 of 12" */
    text = g_strdup_printf (_("%d of %u"), self->current_hit + 1, self->hits->len);
  gtk_label_set_text (GTK_LABEL (self->search_label), text);
}

static void
find_done (GObject *source, GAsyncResult *result, gpointer user_data)
{
  FmDocumentTab *self = FM_DOCUMENT_TAB (source);
  GCancellable *cancellable = user_data;
  GArray *hits = g_task_propagate_pointer (G_TASK (result), NULL);

  /* A newer search replaced this one, or the tab is closing. */
  if (hits == NULL || g_cancellable_is_cancelled (cancellable) || self->find_cancellable != cancellable)
    {
      g_clear_pointer (&hits, g_array_unref);
      g_object_unref (cancellable);
      return;
    }
  g_clear_object (&self->find_cancellable);
  g_object_unref (cancellable);
  g_clear_pointer (&self->hits, g_array_unref);
  self->hits = hits;
  self->current_hit = 0;
  /* The first match at or after the page being read. */
  for (guint i = 0; i < hits->len; i++)
    if (g_array_index (hits, FmPageHit, i).page >= fm_page_view_get_current_page (FM_PAGE_VIEW (self->page_view)))
      {
        self->current_hit = (int) i;
        break;
      }
  fm_page_view_set_hits (FM_PAGE_VIEW (self->page_view), hits->len > 0 ? hits : NULL, self->current_hit);
  update_find_label (self);
  g_object_notify_by_pspec (G_OBJECT (self), properties[PROP_FINDING]);
}

void
fm_document_tab_find (FmDocumentTab *self, const char *text)
{
  g_autoptr(GTask) task = NULL;

  if (self->find_cancellable != NULL)
    g_cancellable_cancel (self->find_cancellable);
  g_clear_object (&self->find_cancellable);
  g_clear_pointer (&self->hits, g_array_unref);
  fm_page_view_set_hits (FM_PAGE_VIEW (self->page_view), NULL, -1);
  if (self->document == NULL || text == NULL || *text == '\0')
    {
      update_find_label (self);
      g_object_notify_by_pspec (G_OBJECT (self), properties[PROP_FINDING]);
      return;
    }
  self->find_cancellable = g_cancellable_new ();
  task = g_task_new (self, self->find_cancellable, find_done, g_object_ref (self->find_cancellable));
  {
    FindData *data = g_new0 (FindData, 1);
    data->document = g_object_ref (self->document);
    data->text = g_strdup (text);
    g_task_set_task_data (task, data, (GDestroyNotify) find_data_free);
  }
  g_task_run_in_thread (task, find_thread);
  g_object_notify_by_pspec (G_OBJECT (self), properties[PROP_FINDING]);
}

void
fm_document_tab_find_next (FmDocumentTab *self, gboolean forward)
{
  if (self->hits == NULL || self->hits->len == 0)
    return;
  self->current_hit = (int) ((self->current_hit + (forward ? 1 : self->hits->len - 1)) % self->hits->len);
  fm_page_view_set_hits (FM_PAGE_VIEW (self->page_view), self->hits, self->current_hit);
  update_find_label (self);
}

gboolean
fm_document_tab_get_finding (FmDocumentTab *self)
{
  return self->find_cancellable != NULL;
}

const GArray *
fm_document_tab_get_hits (FmDocumentTab *self, int *current)
{
  if (current != NULL)
    *current = self->current_hit;
  return self->hits;
}

void
fm_document_tab_show_find (FmDocumentTab *self)
{
  gtk_search_bar_set_search_mode (GTK_SEARCH_BAR (self->search_bar), TRUE);
  gtk_widget_grab_focus (self->search_entry);
}

GtkWidget *
fm_document_tab_get_search_entry (FmDocumentTab *self)
{
  return self->search_entry;
}

static void
search_changed (GtkSearchEntry *entry, FmDocumentTab *self)
{
  fm_document_tab_find (self, gtk_editable_get_text (GTK_EDITABLE (entry)));
}

static void
search_activate (GtkSearchEntry *entry, FmDocumentTab *self)
{
  fm_document_tab_find_next (self, TRUE);
}

static void
search_previous (GtkSearchEntry *entry, FmDocumentTab *self)
{
  fm_document_tab_find_next (self, FALSE);
}

static void
next_clicked (GtkButton *button, FmDocumentTab *self)
{
  fm_document_tab_find_next (self, TRUE);
}

static void
previous_clicked (GtkButton *button, FmDocumentTab *self)
{
  fm_document_tab_find_next (self, FALSE);
}

static gboolean
search_previous_shortcut (GtkWidget *widget, GVariant *args, gpointer data)
{
  fm_document_tab_find_next (FM_DOCUMENT_TAB (data), FALSE);
  return TRUE;
}

static void
search_mode_changed (GtkSearchBar *bar, GParamSpec *pspec, FmDocumentTab *self)
{
  /* A closed search bar leaves no marks on the pages. */
  if (!gtk_search_bar_get_search_mode (bar))
    {
      fm_document_tab_find (self, NULL);
      gtk_widget_grab_focus (self->page_view);
    }
  else if (*gtk_editable_get_text (GTK_EDITABLE (self->search_entry)) != '\0')
    fm_document_tab_find (self, gtk_editable_get_text (GTK_EDITABLE (self->search_entry)));
}

/* ---------------------------------------------------------------------- */
/* Opening, off the main thread                                           */

typedef struct {
  char *password;
  FmDocument *document;
  double *sizes;
  int n_pages;
} OpenData;

/* A password is wiped before its memory goes back: a freed block keeps its
 * bytes until reused, and would show in a core dump. explicit_bzero, not
 * memset, which the compiler may drop before a free. */
static void
free_password (char *password)
{
  if (password != NULL)
    explicit_bzero (password, strlen (password));
  g_free (password);
}

static void
open_data_free (OpenData *data)
{
  free_password (data->password);
  g_clear_object (&data->document);
  g_free (data->sizes);
  g_free (data);
}

static void
open_thread (GTask *task, gpointer source, gpointer task_data, GCancellable *cancellable)
{
  OpenData *data = task_data;
  GFile *file = source;
  GError *error = NULL;

  /* The document on the command line was opened while GTK started. */
  if (fm_early_open_claim (file, data->password, &data->document, &data->sizes,
                           &data->n_pages, &error))
    {
      if (data->document == NULL)
        g_task_return_error (task, error);
      else
        g_task_return_boolean (task, TRUE);
      return;
    }
  data->document = fm_document_new_for_file (file, data->password, cancellable, &error);
  if (data->document == NULL)
    {
      g_task_return_error (task, error);
      return;
    }
  /* Page sizes now, so the view never waits on the Poppler lock. */
  data->n_pages = fm_document_get_n_pages (data->document);
  data->sizes = g_new0 (double, 2 * (gsize) data->n_pages);
  for (int i = 0; i < data->n_pages; i++)
    if (!fm_document_get_page_size (data->document, i, &data->sizes[2 * i],
                                    &data->sizes[2 * i + 1], &error))
      {
        g_task_return_error (task, error);
        return;
      }
  g_task_return_boolean (task, TRUE);
}

static void add_item (FmDocumentTab *self, FmResultsItem *item);

/* Detection runs page by page on a worker thread; each page's regions come
 * back to the main thread as soon as that page is done, so boxes (and
 * recognition) start on the first pages while later ones are still read. */
typedef struct {
  FmDocumentTab *self;       /* reffed */
  int page;                  /* -1: detection finished */
  GPtrArray *regions;        /* FmRegion*, owning; NULL on error */
  char *note;
  FmPageSource source;       /* what the regions were found in */
} DetectedPage;

static void finish_detection (FmDocumentTab *self);
static void detected_page_free (DetectedPage *dp);

static gboolean
deliver_page (gpointer data)
{
  DetectedPage *dp = data;
  FmDocumentTab *self = dp->self;

  if (!g_cancellable_is_cancelled (self->cancellable) && self->document != NULL)
    {
      if (dp->page < 0)
        finish_detection (self);
      else
        {
          self->pages_detected++;
          if (dp->note != NULL && self->page_notes != NULL)
            self->page_notes[dp->page] = g_steal_pointer (&dp->note);
          if (dp->regions != NULL && self->page_sources != NULL)
            {
              self->page_sources[dp->page] = fm_page_source_to_string (dp->source);
              self->pages_from_pixels += dp->source == FM_PAGE_SOURCE_PIXELS;
            }
          guint n_regions = dp->regions != NULL ? dp->regions->len : 0;
          g_autoptr(GPtrArray) page_items = g_ptr_array_new_full (n_regions, g_object_unref);

          for (guint i = 0; i < n_regions; i++)
            g_ptr_array_add (page_items, fm_results_item_new (g_ptr_array_index (dp->regions, i), FALSE));
          /* An equation number is not a formula of its own: its text goes with
           * the display it labels (label_of is page-local), and the number
           * stays in the list only for its grey box on the page. */
          for (guint i = 0; i < n_regions; i++)
            {
              const FmRegion *r = g_ptr_array_index (dp->regions, i);
              if (r->kind == FM_REGION_NUMBER && r->label_of >= 0 && (guint) r->label_of < n_regions &&
                  r->text != NULL && *r->text != '\0')
                fm_results_item_set_number (g_ptr_array_index (page_items, r->label_of), r->text);
            }
          for (guint i = 0; i < n_regions; i++)
            {
              FmResultsItem *item = g_ptr_array_index (page_items, i);
              add_item (self, item);
              if (fm_results_item_is_formula (item) &&
                  g_settings_get_boolean (self->settings, "recognize-on-open") &&
                  fm_engine_worker_get_state (self->worker) != FM_ENGINE_STATE_NO_MODEL &&
                  fm_engine_worker_get_state (self->worker) != FM_ENGINE_STATE_LOADING)
                fm_engine_worker_submit (self->worker, self->document, item);
            }
          g_signal_emit (self, signals[SIGNAL_DETECTED], 0);
        }
    }
  detected_page_free (dp);
  return G_SOURCE_REMOVE;
}

static void
deliver_later (GMainContext *context, DetectedPage *dp)
{
  /* A source, never g_main_context_invoke(): that could run deliver_page on
   * this thread when the main context is free. */
  GSource *idle = g_idle_source_new ();

  g_source_set_callback (idle, deliver_page, dp, NULL);
  g_source_attach (idle, context);
  g_source_unref (idle);
}

static void
detected_page_free (DetectedPage *dp)
{
  g_clear_pointer (&dp->regions, g_ptr_array_unref);
  g_free (dp->note);
  g_object_unref (dp->self);
  g_free (dp);
}

static gboolean
detection_cancelled (gpointer cancellable)
{
  return g_cancellable_is_cancelled (cancellable);
}

/* Pages are detected on worker threads (fm-page-queue.h: a scanned page
 * keeps Tesseract busy for about a second) and handed to the main loop in
 * page order, so the list still fills from the top. */
static void
detect_thread (GTask *task, gpointer source, gpointer task_data, GCancellable *cancellable)
{
  FmDocumentTab *self = source;
  FmDocument *doc = task_data;
  int n = fm_document_get_n_pages (doc), page;
  GMainContext *context = g_task_get_context (task);
  g_autofree int *pages = g_new (int, MAX (n, 1));
  FmPageQueue *queue;

  for (page = 0; page < n; page++)
    pages[page] = page;
  queue = fm_page_queue_new (doc, NULL, pages, n, detection_cancelled, cancellable);
  for (page = 0; page <= n; page++)
    {
      DetectedPage *dp = g_new0 (DetectedPage, 1);

      dp->self = g_object_ref (self);
      dp->page = page < n ? page : -1;   /* -1: detection finished */
      if (page < n)
        {
          FmPageDetection d = fm_page_queue_take (queue, page);
          dp->regions = d.regions;
          dp->source = d.source;
          if (d.regions == NULL)
            dp->note = g_strdup (d.error->message);
          else
            /* The crops the CLI recognises too (one pipeline, fm-recognize.h). */
            fm_recognize_prepare_page (doc, dp->regions, 0, FM_CROP_RULE_DEFAULT);
          g_clear_error (&d.error);
        }
      deliver_later (context, dp);
      if (g_cancellable_is_cancelled (cancellable))
        break;
    }
  fm_page_queue_free (queue);
  g_task_return_boolean (task, TRUE);
}

static void
start_detection (FmDocumentTab *self)
{
  self->n_notes = fm_document_get_n_pages (self->document);
  self->page_notes = g_new0 (char *, self->n_notes + 1);
  g_free (self->page_sources);
  self->page_sources = g_new0 (const char *, self->n_notes + 1);
  self->pages_from_pixels = 0;
  self->detecting = TRUE;
  g_object_notify_by_pspec (G_OBJECT (self), properties[PROP_DETECTING]);
  {
    g_autoptr(GTask) task = g_task_new (self, self->cancellable, NULL, NULL);
    g_task_set_task_data (task, g_object_ref (self->document), g_object_unref);
    g_task_run_in_thread (task, detect_thread);
  }
}

static void
finish_detection (FmDocumentTab *self)
{
  self->detecting = FALSE;
  fm_startup_log ("detection-done");
  g_object_notify_by_pspec (G_OBJECT (self), properties[PROP_DETECTING]);
  g_signal_emit (self, signals[SIGNAL_DETECTED], 0);
}

/* ---------------------------------------------------------------------- */
/* The last page and zoom of each document                                */

/* A small key file in the user's state directory, one group per document
 * URI: "page" (0-based), "zoom", "fit" ("width", "page" or "none"), "width" (of
 * the page view, in pixels) and "time"
 * (when last closed, to keep only the most recent POSITIONS_MAX documents). */
#define POSITIONS_MAX 200

char *
fm_document_tab_positions_path (void)
{
  return g_build_filename (g_get_user_state_dir (), "formulate", "positions.ini", NULL);
}

static void
restore_position (FmDocumentTab *self)
{
  g_autofree char *path = fm_document_tab_positions_path ();
  g_autofree char *uri = g_file_get_uri (self->file);
  g_autoptr(GKeyFile) keys = g_key_file_new ();
  g_autofree char *fit = NULL;
  FmPageView *view = FM_PAGE_VIEW (self->page_view);

  if (!g_key_file_load_from_file (keys, path, G_KEY_FILE_NONE, NULL) || !g_key_file_has_group (keys, uri))
    return;
  fit = g_key_file_get_string (keys, uri, "fit", NULL);
  if (g_strcmp0 (fit, "page") == 0)
    fm_page_view_set_fit_page (view, TRUE);
  else if (g_strcmp0 (fit, "none") == 0)
    {
      double zoom = g_key_file_get_double (keys, uri, "zoom", NULL);
      if (zoom > 0)
        fm_page_view_set_zoom (view, zoom);
    }
  fm_page_view_set_initial_page (view, MAX (0, g_key_file_get_integer (keys, uri, "page", NULL)));
}

void
fm_document_tab_save_position (FmDocumentTab *self)
{
  g_autofree char *path = fm_document_tab_positions_path ();
  g_autofree char *dir = g_path_get_dirname (path);
  g_autofree char *uri = g_file_get_uri (self->file);
  g_autoptr(GKeyFile) keys = g_key_file_new ();
  g_autoptr(GError) error = NULL;
  FmPageView *view = FM_PAGE_VIEW (self->page_view);
  g_auto(GStrv) groups = NULL;
  gsize n_groups = 0;

  if (self->document == NULL)
    return;
  g_key_file_load_from_file (keys, path, G_KEY_FILE_KEEP_COMMENTS, NULL);
  g_key_file_set_integer (keys, uri, "page", fm_page_view_get_current_page (view));
  g_key_file_set_double (keys, uri, "zoom", fm_page_view_get_zoom (view));
  g_key_file_set_string (keys, uri, "fit", fm_page_view_get_fit_page (view) ? "page"
                                           : fm_page_view_get_fit_width (view) ? "width" : "none");
  /* What fit-width means in this window: fm-early-open.c predicts the
   * first render's zoom of a document not seen before from it. */
  g_key_file_set_integer (keys, uri, "width", gtk_widget_get_width (GTK_WIDGET (view)));
  g_key_file_set_int64 (keys, uri, "time", g_get_real_time () / G_USEC_PER_SEC);
  /* Forget the documents closed longest ago. */
  groups = g_key_file_get_groups (keys, &n_groups);
  while (n_groups > POSITIONS_MAX)
    {
      const char *oldest = NULL;
      gint64 oldest_time = G_MAXINT64;
      for (gsize i = 0; groups[i] != NULL; i++)
        {
          gint64 t;
          if (!g_key_file_has_group (keys, groups[i]))
            continue;
          t = g_key_file_get_int64 (keys, groups[i], "time", NULL);
          if (t < oldest_time)
            {
              oldest_time = t;
              oldest = groups[i];
            }
        }
      if (oldest == NULL)
        break;
      g_key_file_remove_group (keys, oldest, NULL);
      n_groups--;
    }
  if (g_mkdir_with_parents (dir, 0700) != 0 || !g_key_file_save_to_file (keys, path, &error))
    g_warning ("Could not remember the position in %s: %s", uri,
               error != NULL ? error->message : g_strerror (errno));
}

static void
outline_thread (GTask *task, gpointer source, gpointer task_data, GCancellable *cancellable)
{
  g_task_return_pointer (task, fm_document_dup_outline (task_data), (GDestroyNotify) g_ptr_array_unref);
}

static void
outline_done (GObject *source, GAsyncResult *result, gpointer user_data)
{
  FmDocumentTab *self = FM_DOCUMENT_TAB (source);
  g_autoptr(GPtrArray) entries = g_task_propagate_pointer (G_TASK (result), NULL);

  if (entries == NULL || g_cancellable_is_cancelled (self->cancellable))
    return;
  for (guint i = 0; i < entries->len; i++)
    {
      FmOutlineEntry *entry = g_ptr_array_index (entries, i);
      GtkWidget *row = gtk_list_box_row_new ();
      GtkWidget *line = gtk_box_new (GTK_ORIENTATION_HORIZONTAL, 6);
      GtkWidget *title = gtk_label_new (entry->title);
      g_autofree char *number = entry->page >= 0 ? g_strdup_printf ("%d", entry->page + 1) : g_strdup ("");
      GtkWidget *page = gtk_label_new (number);

      gtk_label_set_xalign (GTK_LABEL (title), 0);
      gtk_label_set_ellipsize (GTK_LABEL (title), PANGO_ELLIPSIZE_END);
      gtk_widget_set_hexpand (title, TRUE);
      gtk_widget_set_tooltip_text (title, entry->title);
      gtk_widget_add_css_class (page, "dim-label");
      gtk_widget_add_css_class (page, "numeric");
      gtk_widget_set_margin_start (line, 6 + 12 * MIN (entry->depth, 6));
      gtk_widget_set_margin_end (line, 6);
      gtk_widget_set_margin_top (line, 4);
      gtk_widget_set_margin_bottom (line, 4);
      gtk_box_append (GTK_BOX (line), title);
      gtk_box_append (GTK_BOX (line), page);
      gtk_list_box_row_set_child (GTK_LIST_BOX_ROW (row), line);
      gtk_list_box_row_set_activatable (GTK_LIST_BOX_ROW (row), entry->page >= 0);
      g_object_set_data (G_OBJECT (row), "page", GINT_TO_POINTER (entry->page));
      gtk_list_box_append (GTK_LIST_BOX (self->outline_list), row);
    }
  self->n_outline = entries->len;
  /* A PDF without an outline shows the page thumbnails only. */
  gtk_stack_page_set_visible (gtk_stack_get_page (GTK_STACK (self->sidebar_stack),
                                                  gtk_widget_get_parent (gtk_widget_get_parent (self->outline_list))),
                              entries->len > 0);
}

static void
outline_row_activated (GtkListBox *list, GtkListBoxRow *row, FmDocumentTab *self)
{
  int page = GPOINTER_TO_INT (g_object_get_data (G_OBJECT (row), "page"));

  if (page >= 0)
    fm_page_view_go_to_page (FM_PAGE_VIEW (self->page_view), page);
}

void
fm_document_tab_show_outline (FmDocumentTab *self)
{
  if (self->n_outline > 0)
    gtk_stack_set_visible_child_name (GTK_STACK (self->sidebar_stack), "outline");
}

guint
fm_document_tab_get_n_outline (FmDocumentTab *self)
{
  return self->n_outline;
}

GtkListBox *
fm_document_tab_get_outline_list (FmDocumentTab *self)
{
  return GTK_LIST_BOX (self->outline_list);
}

static void
open_done (GObject *source, GAsyncResult *result, gpointer user_data)
{
  FmDocumentTab *self = user_data;   /* the task holds a reference */
  OpenData *data = g_task_get_task_data (G_TASK (result));
  g_autoptr(GError) error = NULL;
  g_autofree char *title = NULL;

  if (!g_task_propagate_boolean (G_TASK (result), &error))
    {
      if (!g_error_matches (error, G_IO_ERROR, G_IO_ERROR_CANCELLED))
        g_signal_emit (self, signals[SIGNAL_LOAD_FAILED], 0, error);
      return;
    }
  self->document = g_steal_pointer (&data->document);
  fm_page_view_set_document (FM_PAGE_VIEW (self->page_view), self->document, data->sizes, data->n_pages);
  fm_page_view_set_document (FM_PAGE_VIEW (self->thumbs_view), self->document, data->sizes, data->n_pages);
  restore_position (self);
  g_signal_emit (self, signals[SIGNAL_LOADED], 0);
  start_detection (self);
  {
    g_autoptr(GTask) task = g_task_new (self, self->cancellable, outline_done, NULL);
    g_task_set_task_data (task, g_object_ref (self->document), g_object_unref);
    g_task_run_in_thread (task, outline_thread);
  }
}

/* ---------------------------------------------------------------------- */

static void
refilter_soon_cb (gpointer data)
{
  FmDocumentTab *self = data;

  self->refilter_idle = 0;
  if (self->refilter_pending)
    fm_results_panel_refilter (FM_RESULTS_PANEL (self->results_panel));
  self->refilter_pending = FALSE;
  gtk_widget_queue_draw (self->page_view);
}

static void
item_notify (FmResultsItem *item, GParamSpec *pspec, FmDocumentTab *self)
{
  /* A result, an edit or an undone edit: not exported yet. */
  if (g_str_equal (pspec->name, "latex"))
    self->changes++;
  if (fm_results_panel_filter_follows (FM_RESULTS_PANEL (self->results_panel), pspec->name))
    self->refilter_pending = TRUE;
  /* Many results arrive together: redraw (and refilter, when the filter
   * looks at what changed) once for them. */
  if (self->refilter_idle == 0)
    self->refilter_idle = g_idle_add_once (refilter_soon_cb, self);
}

static int
compare_items (gconstpointer a, gconstpointer b, gpointer user_data)
{
  FmResultsItem *ia = (FmResultsItem *) a, *ib = (FmResultsItem *) b;
  graphene_rect_t ra, rb;

  if (fm_results_item_get_page (ia) != fm_results_item_get_page (ib))
    return fm_results_item_get_page (ia) - fm_results_item_get_page (ib);
  fm_results_item_get_rect (ia, &ra);
  fm_results_item_get_rect (ib, &rb);
  if (ra.origin.y != rb.origin.y)
    return ra.origin.y < rb.origin.y ? -1 : 1;
  return ra.origin.x < rb.origin.x ? -1 : ra.origin.x > rb.origin.x;
}

/* Detected regions arrive page by page in reading order and are appended;
 * a box drawn by hand goes in by page and position. */
static void
add_item (FmDocumentTab *self, FmResultsItem *item)
{
  g_signal_connect_object (item, "notify", G_CALLBACK (item_notify), self, 0);
  g_signal_connect_object (item, "edited", G_CALLBACK (item_edited), self, 0);
  if (fm_results_item_get_manual (item))
    g_list_store_insert_sorted (self->items, item, compare_items, NULL);
  else
    g_list_store_append (self->items, item);
}

FmResultsItem *
fm_document_tab_add_region (FmDocumentTab *self, int page, const graphene_rect_t *rect)
{
  /* A hand-drawn box has no font size: 0 lets the renderer use its default
   * scale and the engine estimate the glyph size from the ink. */
  FmRect box = { rect->origin.x, rect->origin.y,
                 rect->origin.x + rect->size.width, rect->origin.y + rect->size.height };
  g_autoptr(FmRegion) region = fm_region_new (page, FM_REGION_DISPLAY, &box);
  FmResultsItem *item = fm_results_item_new (region, TRUE);

  add_item (self, item);
  fm_page_view_set_selected (FM_PAGE_VIEW (self->page_view), item);
  fm_results_panel_select (FM_RESULTS_PANEL (self->results_panel), item);
  if (self->document != NULL && fm_engine_worker_get_state (self->worker) != FM_ENGINE_STATE_NO_MODEL)
    fm_engine_worker_submit (self->worker, self->document, item);
  g_object_unref (item);
  return item;
}

static void
region_drawn (FmPageView *view, int page, double x, double y, double w, double h, FmDocumentTab *self)
{
  graphene_rect_t rect;

  graphene_rect_init (&rect, (float) x, (float) y, (float) w, (float) h);
  fm_document_tab_add_region (self, page, &rect);
}

static void
page_item_activated (FmPageView *view, FmResultsItem *item, FmDocumentTab *self)
{
  fm_results_panel_select (FM_RESULTS_PANEL (self->results_panel), item);
}

static void
panel_item_selected (FmResultsPanel *panel, FmResultsItem *item, FmDocumentTab *self)
{
  fm_page_view_scroll_to_item (FM_PAGE_VIEW (self->page_view), item);
}

static void
thumb_activated (FmPageView *view, int page, FmDocumentTab *self)
{
  fm_page_view_go_to_page (FM_PAGE_VIEW (self->page_view), page);
}

static void
current_page_changed (FmPageView *view, GParamSpec *pspec, FmDocumentTab *self)
{
  int page = fm_page_view_get_current_page (view);

  if (self->document != NULL)
    fm_engine_worker_set_focus (self->worker, self->document, page);
  /* The list follows the page being read. */
  fm_results_panel_show_page (FM_RESULTS_PANEL (self->results_panel), page);
  /* The thumbnail of the current page is highlighted and kept in view. */
  fm_page_view_go_to_page (FM_PAGE_VIEW (self->thumbs_view), page);
  gtk_widget_queue_draw (self->thumbs_view);
}

static void
fm_document_tab_dispose (GObject *object)
{
  FmDocumentTab *self = FM_DOCUMENT_TAB (object);

  if (self->cancellable)
    g_cancellable_cancel (self->cancellable);
  if (self->find_cancellable)
    g_cancellable_cancel (self->find_cancellable);
  g_clear_object (&self->find_cancellable);
  g_clear_pointer (&self->hits, g_array_unref);
  if (self->document != NULL && self->worker != NULL)
    fm_engine_worker_cancel (self->worker, self->document);
  g_clear_handle_id (&self->refilter_idle, g_source_remove);
  g_clear_pointer (&self->box, gtk_widget_unparent);
  g_clear_object (&self->cancellable);
  g_clear_object (&self->document);
  g_clear_object (&self->items);
  g_clear_pointer (&self->undo, g_ptr_array_unref);
  g_clear_object (&self->worker);
  g_clear_object (&self->settings);
  G_OBJECT_CLASS (fm_document_tab_parent_class)->dispose (object);
}

static void
fm_document_tab_finalize (GObject *object)
{
  FmDocumentTab *self = FM_DOCUMENT_TAB (object);

  g_clear_object (&self->file);
  free_password (self->password);
  g_free (self->title);
  for (int i = 0; i < self->n_notes; i++)
    g_free (self->page_notes[i]);
  g_free (self->page_notes);
  g_clear_pointer (&self->page_sources, g_free);
  G_OBJECT_CLASS (fm_document_tab_parent_class)->finalize (object);
}

static void
fm_document_tab_get_property (GObject *object, guint prop_id, GValue *value, GParamSpec *pspec)
{
  switch (prop_id)
    {
    case PROP_DETECTING: g_value_set_boolean (value, FM_DOCUMENT_TAB (object)->detecting); break;
    case PROP_FINDING: g_value_set_boolean (value, FM_DOCUMENT_TAB (object)->find_cancellable != NULL); break;
    case PROP_CAN_UNDO: g_value_set_boolean (value, fm_document_tab_can_undo (FM_DOCUMENT_TAB (object))); break;
    default: G_OBJECT_WARN_INVALID_PROPERTY_ID (object, prop_id, pspec);
    }
}

static void
fm_document_tab_class_init (FmDocumentTabClass *klass)
{
  GObjectClass *object_class = G_OBJECT_CLASS (klass);

  object_class->dispose = fm_document_tab_dispose;
  object_class->finalize = fm_document_tab_finalize;
  object_class->get_property = fm_document_tab_get_property;
  gtk_widget_class_set_layout_manager_type (GTK_WIDGET_CLASS (klass), GTK_TYPE_BIN_LAYOUT);

  properties[PROP_DETECTING] = g_param_spec_boolean ("detecting", NULL, NULL, FALSE,
                                                     G_PARAM_READABLE | G_PARAM_STATIC_STRINGS);
  properties[PROP_CAN_UNDO] = g_param_spec_boolean ("can-undo", NULL, NULL, FALSE,
                                                    G_PARAM_READABLE | G_PARAM_STATIC_STRINGS);
  properties[PROP_FINDING] = g_param_spec_boolean ("finding", NULL, NULL, FALSE,
                                                   G_PARAM_READABLE | G_PARAM_STATIC_STRINGS);
  g_object_class_install_properties (object_class, N_PROPS, properties);

  signals[SIGNAL_LOADED] =
    g_signal_new ("loaded", G_TYPE_FROM_CLASS (klass), G_SIGNAL_RUN_LAST, 0, NULL, NULL, NULL,
                  G_TYPE_NONE, 0);
  signals[SIGNAL_LOAD_FAILED] =
    g_signal_new ("load-failed", G_TYPE_FROM_CLASS (klass), G_SIGNAL_RUN_LAST, 0, NULL, NULL, NULL,
                  G_TYPE_NONE, 1, G_TYPE_ERROR);
  signals[SIGNAL_DETECTED] =
    g_signal_new ("detected", G_TYPE_FROM_CLASS (klass), G_SIGNAL_RUN_LAST, 0, NULL, NULL, NULL,
                  G_TYPE_NONE, 0);
}

static void
fm_document_tab_init (FmDocumentTab *self)
{
  GtkWidget *thumbs_scroller;

  self->items = g_list_store_new (FM_TYPE_RESULTS_ITEM);
  self->undo = g_ptr_array_new_with_free_func ((GDestroyNotify) undo_step_free);
  self->cancellable = g_cancellable_new ();

  self->box = gtk_box_new (GTK_ORIENTATION_HORIZONTAL, 0);
  gtk_widget_set_parent (self->box, GTK_WIDGET (self));

  self->thumbs_view = fm_page_view_new ();
  fm_page_view_set_thumbnails (FM_PAGE_VIEW (self->thumbs_view), TRUE);
  thumbs_scroller = gtk_scrolled_window_new ();
  gtk_scrolled_window_set_policy (GTK_SCROLLED_WINDOW (thumbs_scroller), GTK_POLICY_NEVER, GTK_POLICY_AUTOMATIC);
  gtk_scrolled_window_set_child (GTK_SCROLLED_WINDOW (thumbs_scroller), self->thumbs_view);
  self->thumbs_revealer = gtk_revealer_new ();
  gtk_revealer_set_transition_type (GTK_REVEALER (self->thumbs_revealer), GTK_REVEALER_TRANSITION_TYPE_SLIDE_RIGHT);
  {
    /* The sidebar: page thumbnails, and the PDF's outline when it has one. */
    GtkWidget *sidebar = gtk_box_new (GTK_ORIENTATION_VERTICAL, 0);
    GtkWidget *switcher = gtk_stack_switcher_new ();
    GtkWidget *outline_scroller = gtk_scrolled_window_new ();
    GtkStackPage *page;

    self->sidebar_stack = gtk_stack_new ();
    gtk_widget_set_vexpand (self->sidebar_stack, TRUE);
    gtk_stack_add_titled (GTK_STACK (self->sidebar_stack), thumbs_scroller, "pages", _("Pages"));
    self->outline_list = gtk_list_box_new ();
    gtk_widget_add_css_class (self->outline_list, "navigation-sidebar");
    gtk_scrolled_window_set_policy (GTK_SCROLLED_WINDOW (outline_scroller), GTK_POLICY_NEVER, GTK_POLICY_AUTOMATIC);
    gtk_scrolled_window_set_child (GTK_SCROLLED_WINDOW (outline_scroller), self->outline_list);
    gtk_widget_set_size_request (outline_scroller, 220, -1);
    page = gtk_stack_add_titled (GTK_STACK (self->sidebar_stack), outline_scroller, "outline", _("Outline"));
    gtk_stack_page_set_visible (page, FALSE);
    g_signal_connect (self->outline_list, "row-activated", G_CALLBACK (outline_row_activated), self);
    gtk_stack_switcher_set_stack (GTK_STACK_SWITCHER (switcher), GTK_STACK (self->sidebar_stack));
    gtk_widget_set_margin_top (switcher, 6);
    gtk_widget_set_margin_bottom (switcher, 6);
    gtk_widget_set_halign (switcher, GTK_ALIGN_CENTER);
    gtk_box_append (GTK_BOX (sidebar), switcher);
    gtk_box_append (GTK_BOX (sidebar), self->sidebar_stack);
    gtk_revealer_set_child (GTK_REVEALER (self->thumbs_revealer), sidebar);
  }
  gtk_box_append (GTK_BOX (self->box), self->thumbs_revealer);
  g_signal_connect (self->thumbs_view, "page-activated", G_CALLBACK (thumb_activated), self);

  self->paned = gtk_paned_new (GTK_ORIENTATION_HORIZONTAL);
  gtk_widget_set_hexpand (self->paned, TRUE);
  gtk_paned_set_resize_end_child (GTK_PANED (self->paned), FALSE);
  gtk_paned_set_shrink_end_child (GTK_PANED (self->paned), FALSE);
  gtk_box_append (GTK_BOX (self->box), self->paned);

  self->page_view = fm_page_view_new ();
  self->page_scroller = gtk_scrolled_window_new ();
  gtk_widget_add_css_class (self->page_scroller, "fm-pages");
  gtk_widget_set_vexpand (self->page_scroller, TRUE);
  gtk_scrolled_window_set_child (GTK_SCROLLED_WINDOW (self->page_scroller), self->page_view);
  {
    /* Find, over the pages: entry, "3 of 12", previous and next. */
    GtkWidget *pages_box = gtk_box_new (GTK_ORIENTATION_VERTICAL, 0);
    GtkWidget *find_box = gtk_box_new (GTK_ORIENTATION_HORIZONTAL, 6);
    GtkWidget *prev = gtk_button_new_from_icon_name ("go-up-symbolic");
    GtkWidget *next = gtk_button_new_from_icon_name ("go-down-symbolic");
    GtkEventController *keys = gtk_shortcut_controller_new ();

    self->search_entry = gtk_search_entry_new ();
    gtk_widget_set_size_request (self->search_entry, 280, -1);
    g_object_set (self->search_entry, "placeholder-text", _("Find in the document"), NULL);
    self->search_label = gtk_label_new (NULL);
    gtk_widget_add_css_class (self->search_label, "dim-label");
    gtk_widget_add_css_class (self->search_label, "numeric");
    gtk_widget_set_tooltip_text (prev, _("Previous match (Shift+Enter)"));
    gtk_widget_set_tooltip_text (next, _("Next match (Enter)"));
    gtk_box_append (GTK_BOX (find_box), self->search_entry);
    gtk_box_append (GTK_BOX (find_box), prev);
    gtk_box_append (GTK_BOX (find_box), next);
    gtk_box_append (GTK_BOX (find_box), self->search_label);
    self->search_bar = gtk_search_bar_new ();
    gtk_search_bar_set_child (GTK_SEARCH_BAR (self->search_bar), find_box);
    gtk_search_bar_connect_entry (GTK_SEARCH_BAR (self->search_bar), GTK_EDITABLE (self->search_entry));
    gtk_search_bar_set_show_close_button (GTK_SEARCH_BAR (self->search_bar), TRUE);
    gtk_box_append (GTK_BOX (pages_box), self->search_bar);
    gtk_box_append (GTK_BOX (pages_box), self->page_scroller);
    gtk_paned_set_start_child (GTK_PANED (self->paned), pages_box);
    g_signal_connect (self->search_entry, "search-changed", G_CALLBACK (search_changed), self);
    g_signal_connect (self->search_entry, "activate", G_CALLBACK (search_activate), self);
    g_signal_connect (self->search_entry, "next-match", G_CALLBACK (search_activate), self);
    g_signal_connect (self->search_entry, "previous-match", G_CALLBACK (search_previous), self);
    g_signal_connect (next, "clicked", G_CALLBACK (next_clicked), self);
    g_signal_connect (prev, "clicked", G_CALLBACK (previous_clicked), self);
    g_signal_connect (self->search_bar, "notify::search-mode-enabled", G_CALLBACK (search_mode_changed), self);
    gtk_shortcut_controller_add_shortcut (GTK_SHORTCUT_CONTROLLER (keys),
      gtk_shortcut_new (gtk_keyval_trigger_new (GDK_KEY_Return, GDK_SHIFT_MASK),
                        gtk_callback_action_new (search_previous_shortcut, self, NULL)));
    gtk_shortcut_controller_add_shortcut (GTK_SHORTCUT_CONTROLLER (keys),
      gtk_shortcut_new (gtk_keyval_trigger_new (GDK_KEY_KP_Enter, GDK_SHIFT_MASK),
                        gtk_callback_action_new (search_previous_shortcut, self, NULL)));
    gtk_widget_add_controller (self->search_entry, keys);
  }
  fm_page_view_set_items (FM_PAGE_VIEW (self->page_view), G_LIST_MODEL (self->items));
  {
    /* Delete only where the boxes are: entries keep their own Delete key. */
    GtkEventController *shortcuts = gtk_shortcut_controller_new ();
    gtk_shortcut_controller_add_shortcut (GTK_SHORTCUT_CONTROLLER (shortcuts),
      gtk_shortcut_new (gtk_alternative_trigger_new (gtk_keyval_trigger_new (GDK_KEY_Delete, 0),
                                                     gtk_keyval_trigger_new (GDK_KEY_BackSpace, 0)),
                        gtk_named_action_new ("win.delete-region")));
    gtk_widget_add_controller (self->page_view, shortcuts);
  }
  g_signal_connect (self->page_view, "region-drawn", G_CALLBACK (region_drawn), self);
  g_signal_connect (self->page_view, "item-activated", G_CALLBACK (page_item_activated), self);
  g_signal_connect (self->page_view, "notify::current-page", G_CALLBACK (current_page_changed), self);

  self->results_panel = fm_results_panel_new ();
  gtk_widget_set_size_request (self->results_panel, 340, -1);
  fm_results_panel_set_items (FM_RESULTS_PANEL (self->results_panel), G_LIST_MODEL (self->items));
  gtk_paned_set_end_child (GTK_PANED (self->paned), self->results_panel);
  g_signal_connect (self->results_panel, "item-selected", G_CALLBACK (panel_item_selected), self);
}

static void
show_preview_changed (GSettings *settings, const char *key, FmDocumentTab *self)
{
  fm_results_panel_set_preview_enabled (FM_RESULTS_PANEL (self->results_panel),
                                        g_settings_get_boolean (settings, key));
}

FmDocumentTab *
fm_document_tab_new (GFile *file, const char *password, FmEngineWorker *worker, GSettings *settings)
{
  FmDocumentTab *self = g_object_new (FM_TYPE_DOCUMENT_TAB, NULL);
  g_autoptr(GTask) task = NULL;
  g_autoptr(GError) error = NULL;
  OpenData *data = g_new0 (OpenData, 1);
  g_autofree char *basename = g_file_get_basename (file);
  double threshold = g_settings_get_double (settings, "low-confidence-threshold");

  self->file = g_object_ref (file);
  self->password = g_strdup (password);
  self->title = g_strdup (basename);
  self->worker = g_object_ref (worker);
  self->settings = g_object_ref (settings);
  fm_results_panel_set_low_threshold (FM_RESULTS_PANEL (self->results_panel), threshold);
  fm_page_view_set_low_threshold (FM_PAGE_VIEW (self->page_view), threshold);
  fm_results_panel_set_preview_enabled (FM_RESULTS_PANEL (self->results_panel),
                                        g_settings_get_boolean (settings, "show-preview"));
  g_signal_connect_object (settings, "changed::show-preview", G_CALLBACK (show_preview_changed), self, 0);
  gtk_widget_set_visible (self->thumbs_revealer, TRUE);
  gtk_revealer_set_reveal_child (GTK_REVEALER (self->thumbs_revealer),
                                 g_settings_get_boolean (settings, "show-thumbnails"));

  data->password = g_strdup (password);
  task = g_task_new (file, self->cancellable, open_done, g_object_ref (self));
  g_task_set_task_data (task, data, (GDestroyNotify) open_data_free);
  /* The callback's reference on the tab is dropped with the task. */
  g_signal_connect_swapped (task, "notify::completed", G_CALLBACK (g_object_unref), self);
  /* Opened while GTK started: open_done then runs before the window's first
   * frame, which can show the first page already. */
  if (fm_early_open_try_claim (file, password, &data->document, &data->sizes, &data->n_pages, &error))
    {
      if (data->document != NULL)
        g_task_return_boolean (task, TRUE);
      else
        g_task_return_error (task, g_steal_pointer (&error));
      return self;
    }
  g_task_run_in_thread (task, open_thread);
  return self;
}

GFile *fm_document_tab_get_file (FmDocumentTab *self) { return self->file; }
FmDocument *fm_document_tab_get_document (FmDocumentTab *self) { return self->document; }
const char *fm_document_tab_get_title (FmDocumentTab *self) { return self->title; }
GListModel *fm_document_tab_get_items (FmDocumentTab *self) { return G_LIST_MODEL (self->items); }
FmPageView *fm_document_tab_get_page_view (FmDocumentTab *self) { return FM_PAGE_VIEW (self->page_view); }
FmResultsPanel *fm_document_tab_get_results_panel (FmDocumentTab *self) { return FM_RESULTS_PANEL (self->results_panel); }
gboolean fm_document_tab_get_detecting (FmDocumentTab *self) { return self->detecting; }

guint
fm_document_tab_recognize (FmDocumentTab *self)
{
  guint n = g_list_model_get_n_items (G_LIST_MODEL (self->items));
  guint queued = 0;

  if (self->document == NULL)
    return 0;
  fm_engine_worker_set_focus (self->worker, self->document,
                              fm_page_view_get_current_page (FM_PAGE_VIEW (self->page_view)));
  for (guint i = 0; i < n; i++)
    {
      g_autoptr(FmResultsItem) item = g_list_model_get_item (G_LIST_MODEL (self->items), i);
      FmResultState state = fm_results_item_get_state (item);
      if (!fm_results_item_is_formula (item))
        continue;
      if ((state == FM_RESULT_STATE_WAITING || state == FM_RESULT_STATE_FAILED) &&
          !fm_engine_worker_is_pending (self->worker, item))
        {
          fm_engine_worker_submit (self->worker, self->document, item);
          queued++;
        }
    }
  return queued;
}

void
fm_document_tab_stop (FmDocumentTab *self)
{
  if (!g_cancellable_is_cancelled (self->cancellable))
    fm_document_tab_save_position (self);
  g_cancellable_cancel (self->cancellable);
  if (self->find_cancellable != NULL)
    g_cancellable_cancel (self->find_cancellable);
  if (self->document != NULL)
    fm_engine_worker_cancel (self->worker, self->document);
}

gboolean
fm_document_tab_delete_selected (FmDocumentTab *self)
{
  FmResultsItem *selected = fm_page_view_get_selected (FM_PAGE_VIEW (self->page_view));
  guint position;

  UndoStep *step;

  if (selected == NULL || !g_list_store_find (self->items, selected, &position))
    return FALSE;
  step = g_new0 (UndoStep, 1);
  step->kind = UNDO_DELETE;
  step->item = g_object_ref (selected);
  step->position = position;
  g_list_store_remove (self->items, position);
  fm_page_view_set_selected (FM_PAGE_VIEW (self->page_view), NULL);
  self->changes++;
  push_undo (self, step);
  return TRUE;
}

void
fm_document_tab_set_thumbnails_visible (FmDocumentTab *self, gboolean visible)
{
  gtk_revealer_set_reveal_child (GTK_REVEALER (self->thumbs_revealer), visible);
}

const char *
fm_document_tab_get_page_note (FmDocumentTab *self, int page)
{
  if (self->page_notes == NULL || self->document == NULL || page < 0 ||
      page >= fm_document_get_n_pages (self->document))
    return NULL;
  return self->page_notes[page];
}

const char *
fm_document_tab_get_page_source (FmDocumentTab *self, int page)
{
  if (self->page_sources == NULL || self->document == NULL || page < 0 ||
      page >= fm_document_get_n_pages (self->document))
    return NULL;
  return self->page_sources[page];
}

int
fm_document_tab_get_pages_from_pixels (FmDocumentTab *self)
{
  return self->pages_from_pixels;
}

int
fm_document_tab_get_pages_detected (FmDocumentTab *self)
{
  return self->pages_detected;
}
