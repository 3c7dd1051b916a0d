/* fm-page-view.c - scrolling, zooming page view with formula boxes. */
#include "fm-page-view.h"
#include "fm-startup-log.h"

#include <math.h>

#include "fm-render.h"
#include "fm-early-open.h"

#define PAGE_GAP 12.0          /* px between pages and around them */
#define THUMB_WIDTH 120.0      /* px width of a thumbnail page */
#define ZOOM_MIN 0.1
#define ZOOM_MAX 8.0
#define ZOOM_STEP 1.2
/* Pages this far outside the view keep their render; further ones drop it. */
#define KEEP_PAGES 3
/* A drag shorter than this is a click. */
#define DRAG_THRESHOLD 4.0

typedef struct {
  double width, height;        /* points */
  GdkTexture *texture;         /* shares its pixels with surface */
  cairo_surface_t *surface;    /* the render, ARGB32 */
  GskRenderNode *cairo_node;   /* the render for the cairo renderer, kept between frames */
  graphene_rect_t cairo_node_area;
  double texture_scale;        /* device pixels per point it was asked for (the render
                                * itself is a hair smaller: fm_render_fit_scale) */
  GCancellable *cancellable;   /* non-NULL while a render is running */
  double pending_scale;        /* the asked scale of that render */
} Page;

struct _FmPageView {
  GtkWidget parent_instance;

  FmDocument *document;
  Page *pages;
  int n_pages;
  GListModel *items;
  FmResultsItem *selected;

  gboolean thumbnails;
  double low_threshold;
  double zoom;                 /* px per point (thumbnails: computed) */
  gboolean fit_width;
  gboolean fit_page;           /* zoom follows the widget so a whole page shows */
  int pending_page;            /* go there once laid out (a remembered position), or -1 */
  guint n_painted;

  GtkAdjustment *hadjustment;
  GtkAdjustment *vadjustment;
  GtkScrollablePolicy hscroll_policy;
  GtkScrollablePolicy vscroll_policy;
  double content_width, content_height;
  double *page_top;            /* px from content top, per page */

  guint update_idle;
  int current_page;

  /* Find: FmPageHit of every match, the one shown now. */
  GArray *hits;
  int current_hit;

  /* Rubber band while drawing a region by hand. */
  gboolean dragging;
  int drag_page;
  double drag_x0, drag_y0, drag_x1, drag_y1;  /* widget coords */
};

enum {
  PROP_0,
  PROP_ZOOM,
  PROP_CURRENT_PAGE,
  PROP_SELECTED,
  PROP_FIT_WIDTH,
  N_PROPS,
  PROP_HADJUSTMENT,
  PROP_VADJUSTMENT,
  PROP_HSCROLL_POLICY,
  PROP_VSCROLL_POLICY,
};
static GParamSpec *properties[N_PROPS];

enum {
  SIGNAL_REGION_DRAWN,
  SIGNAL_PAGE_ACTIVATED,
  SIGNAL_ITEM_ACTIVATED,
  SIGNAL_PAINTED,
  N_SIGNALS
};
static guint signals[N_SIGNALS];

G_DEFINE_FINAL_TYPE_WITH_CODE (FmPageView, fm_page_view, GTK_TYPE_WIDGET,
                               G_IMPLEMENT_INTERFACE (GTK_TYPE_SCROLLABLE, NULL))

static void queue_update (FmPageView *self);

static double
effective_zoom (FmPageView *self)
{
  return self->zoom;
}

static void
drop_render (Page *page)
{
  if (page->cancellable)
    {
      g_cancellable_cancel (page->cancellable);
      g_clear_object (&page->cancellable);
    }
  g_clear_object (&page->texture);
  g_clear_pointer (&page->surface, cairo_surface_destroy);
  g_clear_pointer (&page->cairo_node, gsk_render_node_unref);
  page->texture_scale = 0;
}

static void
clear_pages (FmPageView *self)
{
  for (int i = 0; i < self->n_pages; i++)
    drop_render (&self->pages[i]);
  g_clear_pointer (&self->pages, g_free);
  g_clear_pointer (&self->page_top, g_free);
  self->n_pages = 0;
}

/* Content layout at the current zoom: pages stacked, centred. */
static void
layout_pages (FmPageView *self)
{
  double y = PAGE_GAP;
  double max_w = 0;

  for (int i = 0; i < self->n_pages; i++)
    {
      /* Whole pixels: a page drawn at a fractional offset makes the
       * software renderer filter the whole texture on every frame. */
      self->page_top[i] = y;
      y += ceil (self->pages[i].height * self->zoom) + PAGE_GAP;
      max_w = MAX (max_w, self->pages[i].width * self->zoom);
    }
  self->content_height = y;
  self->content_width = max_w + 2 * PAGE_GAP;
}

/* Page rectangle in content coordinates. */
static void
page_rect (FmPageView *self, int index, graphene_rect_t *r)
{
  double view_w = MAX (self->content_width, gtk_widget_get_width (GTK_WIDGET (self)));
  double w = self->pages[index].width * self->zoom;
  double h = self->pages[index].height * self->zoom;

  graphene_rect_init (r, floor ((view_w - w) / 2), self->page_top[index], ceil (w), ceil (h));
}

static double
hvalue (FmPageView *self)
{
  return self->hadjustment ? gtk_adjustment_get_value (self->hadjustment) : 0;
}

static double
vvalue (FmPageView *self)
{
  return self->vadjustment ? gtk_adjustment_get_value (self->vadjustment) : 0;
}

static void
configure_adjustments (FmPageView *self)
{
  double w = gtk_widget_get_width (GTK_WIDGET (self));
  double h = gtk_widget_get_height (GTK_WIDGET (self));

  if (self->hadjustment)
    gtk_adjustment_configure (self->hadjustment,
                              CLAMP (hvalue (self), 0, MAX (0, self->content_width - w)),
                              0, MAX (self->content_width, w), w * 0.1, w * 0.9, w);
  if (self->vadjustment)
    gtk_adjustment_configure (self->vadjustment,
                              CLAMP (vvalue (self), 0, MAX (0, self->content_height - h)),
                              0, MAX (self->content_height, h), h * 0.1, h * 0.9, h);
}

static double
fit_width_of_widest (double max_pt, int width, double fallback)
{
  if (max_pt <= 0 || width <= 2 * PAGE_GAP)
    return fallback;
  return CLAMP ((width - 2 * PAGE_GAP) / max_pt, ZOOM_MIN, ZOOM_MAX);
}

double
fm_page_view_fit_width_zoom_for (const double *sizes, int n_pages, int width, double fallback)
{
  double max_pt = 0;

  for (int i = 0; i < n_pages; i++)
    max_pt = MAX (max_pt, sizes[2 * i]);
  return fit_width_of_widest (max_pt, width, fallback);
}

static double
fit_width_zoom (FmPageView *self, int width)
{
  double max_pt = 0;

  for (int i = 0; i < self->n_pages; i++)
    max_pt = MAX (max_pt, self->pages[i].width);
  return fit_width_of_widest (max_pt, width, self->zoom);
}

/* The zoom at which the largest page fits in width x height whole. */
static double
fit_page_zoom (FmPageView *self, int width, int height)
{
  double max_w = 0, max_h = 0;

  for (int i = 0; i < self->n_pages; i++)
    {
      max_w = MAX (max_w, self->pages[i].width);
      max_h = MAX (max_h, self->pages[i].height);
    }
  if (max_w <= 0 || max_h <= 0 || width <= 2 * PAGE_GAP || height <= 2 * PAGE_GAP)
    return self->zoom;
  return CLAMP (MIN ((width - 2 * PAGE_GAP) / max_w, (height - 2 * PAGE_GAP) / max_h), ZOOM_MIN, ZOOM_MAX);
}

/* Changes the zoom keeping the point under (anchor_x, anchor_y) of the view
 * where it is: vertically at the same fraction of its page (the gaps between
 * pages do not scale with the zoom, so a scroll offset scaled by the zoom
 * would drift by a gap per page above it: pages further on in a long
 * document), horizontally in proportion. Ctrl+scroll anchors at the pointer;
 * a new width (the sidebar opened or closed, the window resized, fit width or
 * fit page) at the top left, so the page being read stays in view. */
static void
apply_zoom (FmPageView *self, double zoom, double anchor_x, double anchor_y)
{
  double old = self->zoom;
  double cx, y, frac;
  int page = 0;

  zoom = CLAMP (zoom, ZOOM_MIN, ZOOM_MAX);
  if (fabs (zoom - old) < 1e-6 || self->n_pages == 0)
    {
      self->zoom = zoom;
      return;
    }
  cx = (hvalue (self) + anchor_x) / old;
  y = vvalue (self) + anchor_y;
  for (int i = 0; i < self->n_pages; i++)
    if (self->page_top[i] <= y)
      page = i;
  frac = (y - self->page_top[page]) / (ceil (self->pages[page].height * old) + PAGE_GAP);
  self->zoom = zoom;
  layout_pages (self);
  configure_adjustments (self);
  if (self->hadjustment)
    gtk_adjustment_set_value (self->hadjustment, cx * zoom - anchor_x);
  if (self->vadjustment)
    gtk_adjustment_set_value (self->vadjustment,
                              self->page_top[page] +
                              frac * (ceil (self->pages[page].height * zoom) + PAGE_GAP) - anchor_y);
  g_object_notify_by_pspec (G_OBJECT (self), properties[PROP_ZOOM]);
  queue_update (self);
  gtk_widget_queue_draw (GTK_WIDGET (self));
}

/* ---------------------------------------------------------------------- */
/* Rendering                                                              */

typedef struct {
  FmPageView *self;            /* weak pointer */
  int index;
  double scale;
  GCancellable *cancellable;
  gboolean early;              /* the render made while GTK started (fm-early-open.c) */
} RenderRequest;

static GdkTexture *
texture_from_surface (cairo_surface_t *surface)
{
  int w = cairo_image_surface_get_width (surface);
  int h = cairo_image_surface_get_height (surface);
  int stride = cairo_image_surface_get_stride (surface);
  g_autoptr(GBytes) bytes = NULL;

  cairo_surface_flush (surface);
  /* The texture borrows the surface's pixels: one copy of a page in memory. */
  bytes = g_bytes_new_with_free_func (cairo_image_surface_get_data (surface), (gsize) stride * h,
                                      (GDestroyNotify) cairo_surface_destroy,
                                      cairo_surface_reference (surface));
  /* Cairo's ARGB32 is premultiplied, native-endian 32-bit words. */
  return gdk_memory_texture_new (w, h,
                                 G_BYTE_ORDER == G_LITTLE_ENDIAN
                                   ? GDK_MEMORY_B8G8R8A8_PREMULTIPLIED
                                   : GDK_MEMORY_A8R8G8B8_PREMULTIPLIED,
                                 bytes, stride);
}

static void
set_page_render (FmPageView *self, int index, double scale, cairo_surface_t *surface)
{
  Page *page = &self->pages[index];

  g_clear_object (&page->texture);
  g_clear_pointer (&page->surface, cairo_surface_destroy);
  g_clear_pointer (&page->cairo_node, gsk_render_node_unref);
  page->texture = texture_from_surface (surface);
  page->surface = cairo_surface_reference (surface);
  page->texture_scale = scale;
  self->n_painted++;
  fm_startup_log ("first-page-rendered");
  gtk_widget_queue_draw (GTK_WIDGET (self));
  g_signal_emit (self, signals[SIGNAL_PAINTED], 0, index);
}

static void
render_done (GObject *source, GAsyncResult *result, gpointer user_data)
{
  RenderRequest *req = user_data;
  g_autoptr(GError) error = NULL;
  cairo_surface_t *surface = req->early
    ? fm_early_open_take_render_finish (FM_DOCUMENT (source), result, &error)
    : fm_render_page_rect_finish (FM_DOCUMENT (source), result, &error);
  FmPageView *self = req->self;

  if (self != NULL && !g_cancellable_is_cancelled (req->cancellable) &&
      req->index < self->n_pages)
    {
      Page *page = &self->pages[req->index];

      if (page->cancellable == req->cancellable)
        g_clear_object (&page->cancellable);
      if (surface != NULL)
        set_page_render (self, req->index, req->scale, surface);
      else if (error != NULL)
        g_warning ("page %d: %s", req->index + 1, error->message);
    }
  if (self != NULL)
    g_object_remove_weak_pointer (G_OBJECT (self), (gpointer *) &req->self);
  g_clear_pointer (&surface, cairo_surface_destroy);
  g_object_unref (req->cancellable);
  g_free (req);
}

static void
request_render (FmPageView *self, int index, double scale)
{
  Page *page = &self->pages[index];
  RenderRequest *req;

  if (page->cancellable != NULL)
    {
      if (fabs (page->pending_scale - scale) < 1e-6)
        return;
      g_cancellable_cancel (page->cancellable);
      g_clear_object (&page->cancellable);
    }
  page->cancellable = g_cancellable_new ();
  page->pending_scale = scale;
  req = g_new0 (RenderRequest, 1);
  req->self = self;
  g_object_add_weak_pointer (G_OBJECT (self), (gpointer *) &req->self);
  req->index = index;
  /* Remembered as asked, not as fitted: fm_render_fit_scale always shrinks a
   * little, and comparing the fitted scale with the view's asked for a new
   * render of every visible page on every update. */
  req->scale = scale;
  req->cancellable = g_object_ref (page->cancellable);
  if (!self->thumbnails && fm_early_open_has_render (self->document, index, scale))
    {
      req->early = TRUE;
      fm_early_open_take_render_async (self->document, index, page->cancellable, render_done, req);
      return;
    }
  fm_render_page_rect_async (self->document, index, NULL,
                             fm_render_fit_scale (page->width, page->height, scale),
                             page->cancellable, render_done, req);
}

static void
visible_range (FmPageView *self, int *first, int *last)
{
  double top = vvalue (self);
  double bottom = top + gtk_widget_get_height (GTK_WIDGET (self));

  *first = self->n_pages;
  *last = -1;
  for (int i = 0; i < self->n_pages; i++)
    {
      double y0 = self->page_top[i];
      double y1 = y0 + self->pages[i].height * self->zoom;
      if (y1 >= top && y0 <= bottom)
        {
          *first = MIN (*first, i);
          *last = MAX (*last, i);
        }
    }
}

static gboolean
update_cb (gpointer data)
{
  FmPageView *self = data;
  int first, last;
  double scale;
  int current;

  self->update_idle = 0;
  if (self->document == NULL || self->n_pages == 0)
    return G_SOURCE_REMOVE;

  visible_range (self, &first, &last);
  scale = self->zoom * gtk_widget_get_scale_factor (GTK_WIDGET (self));
  for (int i = 0; i < self->n_pages; i++)
    {
      Page *page = &self->pages[i];
      if (i >= first - 1 && i <= last + 1)
        {
          if (page->texture == NULL || fabs (page->texture_scale - scale) > 1e-6)
            request_render (self, i, scale);
        }
      else if (i < first - KEEP_PAGES || i > last + KEEP_PAGES)
        drop_render (page);
    }
  if (!self->thumbnails)
    fm_early_open_release (self->document);

  current = first < self->n_pages ? first : 0;
  /* The page that fills most of the view's top half counts as current. */
  if (first < last)
    {
      double mid = vvalue (self) + gtk_widget_get_height (GTK_WIDGET (self)) / 3.0;
      for (int i = first; i <= last; i++)
        if (self->page_top[i] <= mid)
          current = i;
    }
  if (current != self->current_page)
    {
      self->current_page = current;
      g_object_notify_by_pspec (G_OBJECT (self), properties[PROP_CURRENT_PAGE]);
    }
  return G_SOURCE_REMOVE;
}

static void
queue_update (FmPageView *self)
{
  if (self->update_idle == 0)
    self->update_idle = g_idle_add_full (G_PRIORITY_HIGH_IDLE + 20, update_cb, self, NULL);
}

/* ---------------------------------------------------------------------- */
/* Drawing                                                                */

static void
box_colour (FmResultsItem *item, GdkRGBA *colour)
{
  /* Display math blue, inline math green; failures red. */
  if (fm_results_item_get_state (item) == FM_RESULT_STATE_FAILED)
    gdk_rgba_parse (colour, "#e01b24");
  else if (fm_results_item_get_kind (item) == FM_REGION_DISPLAY)
    gdk_rgba_parse (colour, "#1c71d8");
  else if (fm_results_item_get_kind (item) == FM_REGION_INLINE)
    gdk_rgba_parse (colour, "#2ec27e");
  else
    gdk_rgba_parse (colour, "#9a9996");
}

static void
draw_box (FmPageView *self, GtkSnapshot *snapshot, FmResultsItem *item,
          const graphene_rect_t *page_area)
{
  graphene_rect_t rect, box;
  GdkRGBA colour;
  FmResultState state = fm_results_item_get_state (item);
  gboolean selected = item == self->selected;
  gboolean low = fm_results_item_is_low_confidence (item, self->low_threshold);
  float width;
  GskRoundedRect outline;

  fm_results_item_get_rect (item, &rect);
  graphene_rect_init (&box,
                      page_area->origin.x + rect.origin.x * self->zoom - 2,
                      page_area->origin.y + rect.origin.y * self->zoom - 2,
                      rect.size.width * self->zoom + 4,
                      rect.size.height * self->zoom + 4);
  box_colour (item, &colour);

  /* Waiting: faint; running: tinted; done: solid; low confidence: orange fill. */
  if (selected || state == FM_RESULT_STATE_RUNNING || low)
    {
      GdkRGBA fill = colour;
      if (low)
        gdk_rgba_parse (&fill, "#ff7800");
      fill.alpha = selected ? 0.25f : 0.15f;
      gtk_snapshot_append_color (snapshot, &fill, &box);
    }
  colour.alpha = state == FM_RESULT_STATE_WAITING ? 0.45f : 0.9f;
  width = selected ? 3.0f : (state == FM_RESULT_STATE_DONE ? 1.5f : 1.0f);
  gsk_rounded_rect_init_from_rect (&outline, &box, 2);
  {
    const float widths[4] = { width, width, width, width };
    const GdkRGBA colours[4] = { colour, colour, colour, colour };
    gtk_snapshot_append_border (snapshot, &outline, widths, colours);
  }
}

/* GTK 4.8's cairo renderer (software rendering, and the GUI tests) has no
 * culling and no texture cache: in every frame with any damage anywhere in
 * the window, it copies each page texture into a new, zeroed cairo surface.
 * For a 905 x 1171 page that was 25-35 ms of the main thread per frame, two
 * frames per formula result (its row, its box), and the main loop's longest
 * busy stretches during recognition (tests/gui /gui/recognition, 2026-11-25).
 * A cairo node painted once per render and kept costs nothing in frames that
 * do not touch it (the same node: no damage) and, in frames that do, cairo
 * sends only the damaged part. A GPU renderer keeps the texture node: it
 * uploads a texture once and keeps it. */
static void
append_page_render (FmPageView *self, GtkSnapshot *snapshot, Page *page, const graphene_rect_t *area)
{
  GtkNative *native = gtk_widget_get_native (GTK_WIDGET (self));
  GskRenderer *renderer = native != NULL ? gtk_native_get_renderer (native) : NULL;

  /* The cairo node's surface has one pixel per logical pixel: at a scale
   * factor above 1 it would blur the page. */
  if (renderer == NULL || !GSK_IS_CAIRO_RENDERER (renderer) || page->surface == NULL ||
      gtk_widget_get_scale_factor (GTK_WIDGET (self)) != 1)
    {
      gtk_snapshot_append_texture (snapshot, page->texture, area);
      return;
    }
  if (page->cairo_node == NULL || !graphene_rect_equal (&page->cairo_node_area, area))
    {
      cairo_t *cr;

      g_clear_pointer (&page->cairo_node, gsk_render_node_unref);
      page->cairo_node = gsk_cairo_node_new (area);
      page->cairo_node_area = *area;
      cr = gsk_cairo_node_get_draw_context (page->cairo_node);
      cairo_translate (cr, area->origin.x, area->origin.y);
      cairo_scale (cr, area->size.width / cairo_image_surface_get_width (page->surface),
                   area->size.height / cairo_image_surface_get_height (page->surface));
      cairo_set_source_surface (cr, page->surface, 0, 0);
      cairo_paint (cr);
      cairo_destroy (cr);
    }
  gtk_snapshot_append_node (snapshot, page->cairo_node);
}

static void
first_page_frame_painted (GdkFrameClock *clock, gpointer data)
{
  g_signal_handlers_disconnect_by_func (clock, first_page_frame_painted, data);
  fm_startup_log ("first-page-painted");
}

/* The start-up milestone when the frame that holds the first page is on
 * screen: its snapshot is only the start of that frame (on a loaded machine
 * the cairo renderer's paint of the first frame took 0.4-0.9 s more). */
static void
log_first_page_painted (GtkWidget *widget)
{
  static gboolean logged;
  GdkFrameClock *clock = gtk_widget_get_frame_clock (widget);

  if (logged || clock == NULL)
    return;
  logged = TRUE;
  fm_startup_log ("first-page-snapshot");
  g_signal_connect (clock, "after-paint", G_CALLBACK (first_page_frame_painted), NULL);
}

static void
fm_page_view_snapshot (GtkWidget *widget, GtkSnapshot *snapshot)
{
  FmPageView *self = FM_PAGE_VIEW (widget);
  int first, last;
  GdkRGBA white = { 1, 1, 1, 1 };
  GdkRGBA shadow = { 0, 0, 0, 0.2f };
  graphene_rect_t clip;

  if (self->n_pages == 0)
    return;

  graphene_rect_init (&clip, 0, 0, gtk_widget_get_width (widget), gtk_widget_get_height (widget));
  gtk_snapshot_push_clip (snapshot, &clip);
  gtk_snapshot_save (snapshot);
  gtk_snapshot_translate (snapshot, &GRAPHENE_POINT_INIT (-(float) round (hvalue (self)), -(float) round (vvalue (self))));

  visible_range (self, &first, &last);
  for (int i = first; i <= last; i++)
    {
      Page *page = &self->pages[i];
      graphene_rect_t area;
      GskRoundedRect rounded;

      page_rect (self, i, &area);
      gsk_rounded_rect_init_from_rect (&rounded, &area, 0);
      gtk_snapshot_append_outset_shadow (snapshot, &rounded, &shadow, 0, 1, 1, 3);
      gtk_snapshot_append_color (snapshot, &white, &area);
      if (page->texture != NULL)
        {
          /* A render for this zoom is within a pixel or two of the page (the
           * fitted scale is 0.1 % smaller, sides are rounded): draw it pixel
           * for pixel, a plain copy, not stretched by a pixel (blurred).
           * Another zoom's render is stretched until the new one arrives. */
          graphene_rect_t tex_area = area;
          int scale_factor = gtk_widget_get_scale_factor (widget);
          double tex_w = gdk_texture_get_width (page->texture);
          double tex_h = gdk_texture_get_height (page->texture);
          if (fabs (tex_w - area.size.width * scale_factor) <= 2.0 &&
              fabs (tex_h - area.size.height * scale_factor) <= 2.0)
            {
              tex_area.size.width = (float) (tex_w / scale_factor);
              tex_area.size.height = (float) (tex_h / scale_factor);
            }
          append_page_render (self, snapshot, page, &tex_area);
          log_first_page_painted (widget);
        }

      if (!self->thumbnails && self->items != NULL)
        {
          guint n = g_list_model_get_n_items (self->items);
          for (guint k = 0; k < n; k++)
            {
              g_autoptr(FmResultsItem) item = g_list_model_get_item (self->items, k);
              if (fm_results_item_get_page (item) == i)
                draw_box (self, snapshot, item, &area);
            }
        }
      if (!self->thumbnails && self->hits != NULL)
        for (guint k = 0; k < self->hits->len; k++)
          {
            const FmPageHit *hit = &g_array_index (self->hits, FmPageHit, k);
            /* Yellow marker; the current match orange, as in document viewers. */
            GdkRGBA mark = (int) k == self->current_hit ? (GdkRGBA) { 1.0f, 0.47f, 0.0f, 0.45f }
                                                       : (GdkRGBA) { 0.96f, 0.83f, 0.18f, 0.45f };
            graphene_rect_t r;

            if (hit->page != i)
              continue;
            graphene_rect_init (&r, area.origin.x + hit->rect.origin.x * self->zoom - 1,
                                area.origin.y + hit->rect.origin.y * self->zoom - 1,
                                hit->rect.size.width * self->zoom + 2, hit->rect.size.height * self->zoom + 2);
            gtk_snapshot_append_color (snapshot, &mark, &r);
          }
      if (self->thumbnails && i == self->current_page)
        {
          GdkRGBA accent;
          const float widths[4] = { 3, 3, 3, 3 };
          GdkRGBA colours[4];
          gdk_rgba_parse (&accent, "#3584e4");
          for (int c = 0; c < 4; c++)
            colours[c] = accent;
          gtk_snapshot_append_border (snapshot, &rounded, widths, colours);
        }
    }
  gtk_snapshot_restore (snapshot);

  if (self->dragging)
    {
      GdkRGBA band = { 0.11f, 0.44f, 0.85f, 0.2f };
      graphene_rect_t r;
      GskRoundedRect rr;
      const float widths[4] = { 1, 1, 1, 1 };
      GdkRGBA border = { 0.11f, 0.44f, 0.85f, 1 };
      GdkRGBA borders[4] = { border, border, border, border };

      graphene_rect_init (&r, MIN (self->drag_x0, self->drag_x1), MIN (self->drag_y0, self->drag_y1),
                          fabs (self->drag_x1 - self->drag_x0), fabs (self->drag_y1 - self->drag_y0));
      gtk_snapshot_append_color (snapshot, &band, &r);
      gsk_rounded_rect_init_from_rect (&rr, &r, 0);
      gtk_snapshot_append_border (snapshot, &rr, widths, borders);
    }
  gtk_snapshot_pop (snapshot);
}

/* ---------------------------------------------------------------------- */
/* Size                                                                    */

static void
fm_page_view_measure (GtkWidget *widget, GtkOrientation orientation, int for_size,
                      int *minimum, int *natural, int *min_baseline, int *nat_baseline)
{
  FmPageView *self = FM_PAGE_VIEW (widget);

  *minimum = 0;
  if (orientation == GTK_ORIENTATION_HORIZONTAL)
    *natural = self->thumbnails ? (int) (THUMB_WIDTH + 2 * PAGE_GAP) : (int) self->content_width;
  else
    *natural = (int) self->content_height;
  if (self->thumbnails && orientation == GTK_ORIENTATION_HORIZONTAL)
    *minimum = *natural;
}

/* The render made while GTK started (fm-early-open.c), when it is done and
 * of a page in view at this zoom: taken in the layout, the frame being made
 * shows it (update_cb would ask for it only after that frame). */
static void
adopt_early_render (FmPageView *self)
{
  double scale = self->zoom * gtk_widget_get_scale_factor (GTK_WIDGET (self));
  int first, last;

  if (self->thumbnails || self->document == NULL || gtk_widget_get_height (GTK_WIDGET (self)) <= 0)
    return;
  visible_range (self, &first, &last);
  for (int i = first; i <= last; i++)
    {
      cairo_surface_t *surface;
      if (self->pages[i].texture != NULL || self->pages[i].cancellable != NULL)
        continue;
      surface = fm_early_open_take_render_now (self->document, i, scale);
      if (surface != NULL)
        {
          set_page_render (self, i, scale, surface);
          cairo_surface_destroy (surface);
        }
    }
}

static void
fm_page_view_size_allocate (GtkWidget *widget, int width, int height, int baseline)
{
  FmPageView *self = FM_PAGE_VIEW (widget);

  if (self->n_pages > 0 && (self->fit_width || self->fit_page || self->thumbnails))
    {
      double zoom = self->thumbnails ? fit_width_zoom (self, (int) (THUMB_WIDTH + 2 * PAGE_GAP))
                    : self->fit_page ? fit_page_zoom (self, width, height)
                                     : fit_width_zoom (self, width);
      if (fabs (zoom - self->zoom) > 1e-4)
        apply_zoom (self, zoom, 0, 0);
    }
  configure_adjustments (self);
  if (self->pending_page >= 0 && self->n_pages > 0 && height > 0)
    {
      int page = MIN (self->pending_page, self->n_pages - 1);
      self->pending_page = -1;
      /* Only the scroll position here: the current page is reported by the
       * update that follows, not in the middle of the window's layout (its
       * header bar shows the page number). */
      if (self->vadjustment != NULL)
        gtk_adjustment_set_value (self->vadjustment, self->page_top[page] - PAGE_GAP);
    }
  adopt_early_render (self);
  queue_update (self);
}

/* ---------------------------------------------------------------------- */
/* Input                                                                  */

/* Widget point -> page index and point on it in PDF points. */
static gboolean
hit_page (FmPageView *self, double wx, double wy, int *page, double *px, double *py)
{
  double cx = wx + hvalue (self), cy = wy + vvalue (self);

  for (int i = 0; i < self->n_pages; i++)
    {
      graphene_rect_t area;
      page_rect (self, i, &area);
      if (graphene_rect_contains_point (&area, &GRAPHENE_POINT_INIT ((float) cx, (float) cy)))
        {
          *page = i;
          *px = (cx - area.origin.x) / self->zoom;
          *py = (cy - area.origin.y) / self->zoom;
          return TRUE;
        }
    }
  return FALSE;
}

static FmResultsItem *
hit_item (FmPageView *self, int page, double px, double py)
{
  guint n = self->items ? g_list_model_get_n_items (self->items) : 0;
  FmResultsItem *best = NULL;
  double best_area = G_MAXDOUBLE;
  double slop = 3.0 / self->zoom;

  /* The smallest box under the pointer wins, so inline boxes inside a
   * display box stay reachable. */
  for (guint k = 0; k < n; k++)
    {
      g_autoptr(FmResultsItem) item = g_list_model_get_item (self->items, k);
      graphene_rect_t r;

      if (fm_results_item_get_page (item) != page)
        continue;
      fm_results_item_get_rect (item, &r);
      if (px >= r.origin.x - slop && px <= r.origin.x + r.size.width + slop &&
          py >= r.origin.y - slop && py <= r.origin.y + r.size.height + slop &&
          r.size.width * r.size.height < best_area)
        {
          best = item;
          best_area = r.size.width * r.size.height;
        }
    }
  return best;
}

static void
drag_begin (GtkGestureDrag *gesture, double x, double y, FmPageView *self)
{
  double px, py;

  gtk_widget_grab_focus (GTK_WIDGET (self));
  self->dragging = FALSE;
  self->drag_x0 = self->drag_x1 = x;
  self->drag_y0 = self->drag_y1 = y;
  if (!hit_page (self, x, y, &self->drag_page, &px, &py))
    self->drag_page = -1;
}

static void
drag_update (GtkGestureDrag *gesture, double dx, double dy, FmPageView *self)
{
  if (self->thumbnails || self->drag_page < 0)
    return;
  if (!self->dragging && hypot (dx, dy) < DRAG_THRESHOLD)
    return;
  self->dragging = TRUE;
  self->drag_x1 = self->drag_x0 + dx;
  self->drag_y1 = self->drag_y0 + dy;
  gtk_widget_queue_draw (GTK_WIDGET (self));
}

static void
drag_end (GtkGestureDrag *gesture, double dx, double dy, FmPageView *self)
{
  int page;
  double px, py;

  if (self->dragging)
    {
      graphene_rect_t area;
      double x0, y0, x1, y1;

      self->dragging = FALSE;
      gtk_widget_queue_draw (GTK_WIDGET (self));
      page_rect (self, self->drag_page, &area);
      /* Clamp the band to its page, then to points. */
      x0 = (MIN (self->drag_x0, self->drag_x0 + dx) + hvalue (self) - area.origin.x) / self->zoom;
      x1 = (MAX (self->drag_x0, self->drag_x0 + dx) + hvalue (self) - area.origin.x) / self->zoom;
      y0 = (MIN (self->drag_y0, self->drag_y0 + dy) + vvalue (self) - area.origin.y) / self->zoom;
      y1 = (MAX (self->drag_y0, self->drag_y0 + dy) + vvalue (self) - area.origin.y) / self->zoom;
      x0 = CLAMP (x0, 0, self->pages[self->drag_page].width);
      x1 = CLAMP (x1, 0, self->pages[self->drag_page].width);
      y0 = CLAMP (y0, 0, self->pages[self->drag_page].height);
      y1 = CLAMP (y1, 0, self->pages[self->drag_page].height);
      if (x1 - x0 >= 2 && y1 - y0 >= 2)
        g_signal_emit (self, signals[SIGNAL_REGION_DRAWN], 0, self->drag_page, x0, y0, x1 - x0, y1 - y0);
      return;
    }

  if (!hit_page (self, self->drag_x0, self->drag_y0, &page, &px, &py))
    {
      fm_page_view_set_selected (self, NULL);
      return;
    }
  if (self->thumbnails)
    g_signal_emit (self, signals[SIGNAL_PAGE_ACTIVATED], 0, page);
  else
    {
      FmResultsItem *item = hit_item (self, page, px, py);
      fm_page_view_set_selected (self, item);
      if (item != NULL)
        g_signal_emit (self, signals[SIGNAL_ITEM_ACTIVATED], 0, item);
    }
}

/* Where the pointer is over the view, in its coordinates; (x, y) unchanged
 * when that is not known. GTK 4.8's scroll events on X11 carry no position
 * (gdk_event_get_position() fails, leaving NaN), so the pointer is asked for. */
static void
pointer_position (FmPageView *self, GtkEventController *controller, double *x, double *y)
{
  GtkNative *native = gtk_widget_get_native (GTK_WIDGET (self));
  GdkSeat *seat = gdk_display_get_default_seat (gtk_widget_get_display (GTK_WIDGET (self)));
  GdkDevice *device = seat != NULL ? gdk_seat_get_pointer (seat) : NULL;  /* the logical pointer */
  GdkEvent *event = gtk_event_controller_get_current_event (controller);
  double sx, sy, nx, ny, tx, ty;

  if (native == NULL)
    return;
  if (event == NULL || !gdk_event_get_position (event, &sx, &sy) || isnan (sx) || isnan (sy))
    {
      if (device == NULL ||
          !gdk_surface_get_device_position (gtk_native_get_surface (native), device, &sx, &sy, NULL))
        return;
    }
  /* Surface coordinates -> the native widget's -> ours. */
  gtk_native_get_surface_transform (native, &nx, &ny);
  if (gtk_widget_translate_coordinates (GTK_WIDGET (native), GTK_WIDGET (self),
                                        sx - nx, sy - ny, &tx, &ty))
    {
      *x = tx;
      *y = ty;
    }
}

static gboolean
scroll_cb (GtkEventControllerScroll *controller, double dx, double dy, FmPageView *self)
{
  GdkModifierType state = gtk_event_controller_get_current_event_state (GTK_EVENT_CONTROLLER (controller));
  double x = gtk_widget_get_width (GTK_WIDGET (self)) / 2.0;
  double y = gtk_widget_get_height (GTK_WIDGET (self)) / 2.0;

  if (self->thumbnails || !(state & GDK_CONTROL_MASK) || dy == 0)
    return FALSE;
  pointer_position (self, GTK_EVENT_CONTROLLER (controller), &x, &y);
  self->fit_width = FALSE;
  self->fit_page = FALSE;
  apply_zoom (self, self->zoom * pow (ZOOM_STEP, -dy), x, y);
  return TRUE;
}

/* ---------------------------------------------------------------------- */
/* GObject                                                                */

static void
adjustment_changed (GtkAdjustment *adjustment, FmPageView *self)
{
  queue_update (self);
  gtk_widget_queue_draw (GTK_WIDGET (self));
}

static void
set_adjustment (FmPageView *self, GtkAdjustment **slot, GtkAdjustment *adjustment)
{
  if (*slot == adjustment)
    return;
  if (*slot)
    {
      g_signal_handlers_disconnect_by_func (*slot, adjustment_changed, self);
      g_object_unref (*slot);
    }
  if (adjustment == NULL)
    adjustment = gtk_adjustment_new (0, 0, 0, 0, 0, 0);
  *slot = g_object_ref_sink (adjustment);
  g_signal_connect (adjustment, "value-changed", G_CALLBACK (adjustment_changed), self);
  configure_adjustments (self);
}

static void
fm_page_view_get_property (GObject *object, guint prop_id, GValue *value, GParamSpec *pspec)
{
  FmPageView *self = FM_PAGE_VIEW (object);

  switch (prop_id)
    {
    case PROP_ZOOM: g_value_set_double (value, self->zoom); break;
    case PROP_CURRENT_PAGE: g_value_set_int (value, self->current_page); break;
    case PROP_SELECTED: g_value_set_object (value, self->selected); break;
    case PROP_FIT_WIDTH: g_value_set_boolean (value, self->fit_width); break;
    case PROP_HADJUSTMENT: g_value_set_object (value, self->hadjustment); break;
    case PROP_VADJUSTMENT: g_value_set_object (value, self->vadjustment); break;
    case PROP_HSCROLL_POLICY: g_value_set_enum (value, self->hscroll_policy); break;
    case PROP_VSCROLL_POLICY: g_value_set_enum (value, self->vscroll_policy); break;
    default: G_OBJECT_WARN_INVALID_PROPERTY_ID (object, prop_id, pspec);
    }
}

static void
fm_page_view_set_property (GObject *object, guint prop_id, const GValue *value, GParamSpec *pspec)
{
  FmPageView *self = FM_PAGE_VIEW (object);

  switch (prop_id)
    {
    case PROP_ZOOM: fm_page_view_set_zoom (self, g_value_get_double (value)); break;
    case PROP_SELECTED: fm_page_view_set_selected (self, g_value_get_object (value)); break;
    case PROP_FIT_WIDTH: fm_page_view_set_fit_width (self, g_value_get_boolean (value)); break;
    case PROP_HADJUSTMENT: set_adjustment (self, &self->hadjustment, g_value_get_object (value)); break;
    case PROP_VADJUSTMENT: set_adjustment (self, &self->vadjustment, g_value_get_object (value)); break;
    case PROP_HSCROLL_POLICY: self->hscroll_policy = g_value_get_enum (value); gtk_widget_queue_resize (GTK_WIDGET (self)); break;
    case PROP_VSCROLL_POLICY: self->vscroll_policy = g_value_get_enum (value); gtk_widget_queue_resize (GTK_WIDGET (self)); break;
    default: G_OBJECT_WARN_INVALID_PROPERTY_ID (object, prop_id, pspec);
    }
}

static void
items_changed (GListModel *model, guint position, guint removed, guint added, FmPageView *self)
{
  if (self->selected != NULL && removed > 0)
    {
      gboolean found = FALSE;
      guint n = g_list_model_get_n_items (model);
      for (guint k = 0; k < n && !found; k++)
        {
          g_autoptr(GObject) item = g_list_model_get_item (model, k);
          found = item == (GObject *) self->selected;
        }
      if (!found)
        fm_page_view_set_selected (self, NULL);
    }
  gtk_widget_queue_draw (GTK_WIDGET (self));
}

static void
fm_page_view_dispose (GObject *object)
{
  FmPageView *self = FM_PAGE_VIEW (object);

  g_clear_handle_id (&self->update_idle, g_source_remove);
  clear_pages (self);
  g_clear_object (&self->document);
  if (self->items)
    g_signal_handlers_disconnect_by_func (self->items, items_changed, self);
  g_clear_object (&self->items);
  g_clear_object (&self->selected);
  g_clear_pointer (&self->hits, g_array_unref);
  if (self->hadjustment)
    g_signal_handlers_disconnect_by_func (self->hadjustment, adjustment_changed, self);
  if (self->vadjustment)
    g_signal_handlers_disconnect_by_func (self->vadjustment, adjustment_changed, self);
  g_clear_object (&self->hadjustment);
  g_clear_object (&self->vadjustment);
  G_OBJECT_CLASS (fm_page_view_parent_class)->dispose (object);
}

static void
fm_page_view_class_init (FmPageViewClass *klass)
{
  GObjectClass *object_class = G_OBJECT_CLASS (klass);
  GtkWidgetClass *widget_class = GTK_WIDGET_CLASS (klass);

  object_class->dispose = fm_page_view_dispose;
  object_class->get_property = fm_page_view_get_property;
  object_class->set_property = fm_page_view_set_property;
  widget_class->snapshot = fm_page_view_snapshot;
  widget_class->measure = fm_page_view_measure;
  widget_class->size_allocate = fm_page_view_size_allocate;

  properties[PROP_ZOOM] = g_param_spec_double ("zoom", NULL, NULL, ZOOM_MIN, ZOOM_MAX, 1.0,
                                               G_PARAM_READWRITE | G_PARAM_EXPLICIT_NOTIFY | G_PARAM_STATIC_STRINGS);
  properties[PROP_CURRENT_PAGE] = g_param_spec_int ("current-page", NULL, NULL, 0, G_MAXINT, 0,
                                                    G_PARAM_READABLE | G_PARAM_STATIC_STRINGS);
  properties[PROP_SELECTED] = g_param_spec_object ("selected", NULL, NULL, FM_TYPE_RESULTS_ITEM,
                                                   G_PARAM_READWRITE | G_PARAM_EXPLICIT_NOTIFY | G_PARAM_STATIC_STRINGS);
  properties[PROP_FIT_WIDTH] = g_param_spec_boolean ("fit-width", NULL, NULL, TRUE,
                                                     G_PARAM_READWRITE | G_PARAM_EXPLICIT_NOTIFY | G_PARAM_STATIC_STRINGS);
  g_object_class_install_properties (object_class, N_PROPS, properties);
  g_object_class_override_property (object_class, PROP_HADJUSTMENT, "hadjustment");
  g_object_class_override_property (object_class, PROP_VADJUSTMENT, "vadjustment");
  g_object_class_override_property (object_class, PROP_HSCROLL_POLICY, "hscroll-policy");
  g_object_class_override_property (object_class, PROP_VSCROLL_POLICY, "vscroll-policy");

  signals[SIGNAL_REGION_DRAWN] =
    g_signal_new ("region-drawn", G_TYPE_FROM_CLASS (klass), G_SIGNAL_RUN_LAST, 0, NULL, NULL, NULL,
                  G_TYPE_NONE, 5, G_TYPE_INT, G_TYPE_DOUBLE, G_TYPE_DOUBLE, G_TYPE_DOUBLE, G_TYPE_DOUBLE);
  signals[SIGNAL_PAGE_ACTIVATED] =
    g_signal_new ("page-activated", G_TYPE_FROM_CLASS (klass), G_SIGNAL_RUN_LAST, 0, NULL, NULL, NULL,
                  G_TYPE_NONE, 1, G_TYPE_INT);
  signals[SIGNAL_ITEM_ACTIVATED] =
    g_signal_new ("item-activated", G_TYPE_FROM_CLASS (klass), G_SIGNAL_RUN_LAST, 0, NULL, NULL, NULL,
                  G_TYPE_NONE, 1, FM_TYPE_RESULTS_ITEM);
  signals[SIGNAL_PAINTED] =
    g_signal_new ("painted", G_TYPE_FROM_CLASS (klass), G_SIGNAL_RUN_LAST, 0, NULL, NULL, NULL,
                  G_TYPE_NONE, 1, G_TYPE_INT);

  gtk_widget_class_set_css_name (widget_class, "fm-page-view");
}

static void
fm_page_view_init (FmPageView *self)
{
  GtkGesture *drag = gtk_gesture_drag_new ();
  GtkEventController *scroll = gtk_event_controller_scroll_new (GTK_EVENT_CONTROLLER_SCROLL_VERTICAL);

  self->zoom = 1.0;
  self->low_threshold = 0.6;
  self->fit_width = TRUE;
  self->pending_page = -1;
  gtk_widget_set_focusable (GTK_WIDGET (self), TRUE);
  gtk_widget_set_overflow (GTK_WIDGET (self), GTK_OVERFLOW_HIDDEN);

  gtk_gesture_single_set_button (GTK_GESTURE_SINGLE (drag), GDK_BUTTON_PRIMARY);
  g_signal_connect (drag, "drag-begin", G_CALLBACK (drag_begin), self);
  g_signal_connect (drag, "drag-update", G_CALLBACK (drag_update), self);
  g_signal_connect (drag, "drag-end", G_CALLBACK (drag_end), self);
  gtk_widget_add_controller (GTK_WIDGET (self), GTK_EVENT_CONTROLLER (drag));

  g_signal_connect (scroll, "scroll", G_CALLBACK (scroll_cb), self);
  gtk_widget_add_controller (GTK_WIDGET (self), scroll);
}

GtkWidget *
fm_page_view_new (void)
{
  return g_object_new (FM_TYPE_PAGE_VIEW, NULL);
}

void
fm_page_view_set_document (FmPageView *self, FmDocument *document,
                           const double *sizes, int n_pages)
{
  g_return_if_fail (FM_IS_PAGE_VIEW (self));

  clear_pages (self);
  g_set_object (&self->document, document);
  self->n_painted = 0;
  self->current_page = 0;
  if (document != NULL && n_pages > 0)
    {
      self->n_pages = n_pages;
      self->pages = g_new0 (Page, n_pages);
      self->page_top = g_new0 (double, n_pages);
      for (int i = 0; i < n_pages; i++)
        {
          self->pages[i].width = sizes[2 * i];
          self->pages[i].height = sizes[2 * i + 1];
        }
      layout_pages (self);
    }
  else
    self->content_width = self->content_height = 0;
  if (self->vadjustment)
    gtk_adjustment_set_value (self->vadjustment, 0);
  gtk_widget_queue_resize (GTK_WIDGET (self));
  queue_update (self);
}

void
fm_page_view_set_items (FmPageView *self, GListModel *items)
{
  if (self->items == items)
    return;
  if (self->items)
    g_signal_handlers_disconnect_by_func (self->items, items_changed, self);
  g_set_object (&self->items, items);
  if (items)
    g_signal_connect (items, "items-changed", G_CALLBACK (items_changed), self);
  gtk_widget_queue_draw (GTK_WIDGET (self));
}

void
fm_page_view_set_thumbnails (FmPageView *self, gboolean thumbnails)
{
  self->thumbnails = thumbnails;
  self->fit_width = FALSE;
  gtk_widget_queue_resize (GTK_WIDGET (self));
}

double
fm_page_view_get_zoom (FmPageView *self)
{
  return self->zoom;
}

void
fm_page_view_set_zoom (FmPageView *self, double zoom)
{
  g_return_if_fail (FM_IS_PAGE_VIEW (self));
  self->fit_page = FALSE;
  if (self->fit_width)
    {
      self->fit_width = FALSE;
      g_object_notify_by_pspec (G_OBJECT (self), properties[PROP_FIT_WIDTH]);
    }
  if (self->n_pages == 0)
    {
      self->zoom = CLAMP (zoom, ZOOM_MIN, ZOOM_MAX);
      g_object_notify_by_pspec (G_OBJECT (self), properties[PROP_ZOOM]);
      return;
    }
  apply_zoom (self, zoom, gtk_widget_get_width (GTK_WIDGET (self)) / 2.0, 0);
}

void
fm_page_view_zoom_in (FmPageView *self)
{
  fm_page_view_set_zoom (self, effective_zoom (self) * ZOOM_STEP);
}

void
fm_page_view_zoom_out (FmPageView *self)
{
  fm_page_view_set_zoom (self, effective_zoom (self) / ZOOM_STEP);
}

void
fm_page_view_set_fit_width (FmPageView *self, gboolean fit_width)
{
  if (fit_width)
    self->fit_page = FALSE;
  if (self->fit_width == fit_width)
    return;
  self->fit_width = fit_width;
  g_object_notify_by_pspec (G_OBJECT (self), properties[PROP_FIT_WIDTH]);
  if (fit_width && self->n_pages > 0 && gtk_widget_get_width (GTK_WIDGET (self)) > 0)
    apply_zoom (self, fit_width_zoom (self, gtk_widget_get_width (GTK_WIDGET (self))), 0, 0);
}

gboolean
fm_page_view_get_fit_width (FmPageView *self)
{
  return self->fit_width;
}

void
fm_page_view_set_fit_page (FmPageView *self, gboolean fit_page)
{
  if (fit_page && self->fit_width)
    {
      self->fit_width = FALSE;
      g_object_notify_by_pspec (G_OBJECT (self), properties[PROP_FIT_WIDTH]);
    }
  self->fit_page = fit_page;
  if (fit_page && self->n_pages > 0 && gtk_widget_get_width (GTK_WIDGET (self)) > 0)
    {
      int page = self->current_page;
      apply_zoom (self, fit_page_zoom (self, gtk_widget_get_width (GTK_WIDGET (self)),
                                       gtk_widget_get_height (GTK_WIDGET (self))), 0, 0);
      fm_page_view_go_to_page (self, page);
    }
}

gboolean
fm_page_view_get_fit_page (FmPageView *self)
{
  return self->fit_page;
}

void
fm_page_view_set_initial_page (FmPageView *self, int page)
{
  self->pending_page = page;
  gtk_widget_queue_allocate (GTK_WIDGET (self));
}

int
fm_page_view_get_current_page (FmPageView *self)
{
  return self->current_page;
}

void
fm_page_view_go_to_page (FmPageView *self, int page)
{
  if (page < 0 || page >= self->n_pages || self->vadjustment == NULL)
    return;
  gtk_adjustment_set_value (self->vadjustment, self->page_top[page] - PAGE_GAP);
  /* Report the new page at once (the idle would, a frame later). */
  if (self->current_page != page)
    {
      self->current_page = page;
      g_object_notify_by_pspec (G_OBJECT (self), properties[PROP_CURRENT_PAGE]);
    }
  gtk_widget_queue_draw (GTK_WIDGET (self));
}

FmResultsItem *
fm_page_view_get_selected (FmPageView *self)
{
  return self->selected;
}

void
fm_page_view_set_selected (FmPageView *self, FmResultsItem *item)
{
  if (g_set_object (&self->selected, item))
    {
      g_object_notify_by_pspec (G_OBJECT (self), properties[PROP_SELECTED]);
      gtk_widget_queue_draw (GTK_WIDGET (self));
    }
}

void
fm_page_view_scroll_to_item (FmPageView *self, FmResultsItem *item)
{
  graphene_rect_t r;

  fm_page_view_set_selected (self, item);
  fm_results_item_get_rect (item, &r);
  fm_page_view_scroll_to_rect (self, fm_results_item_get_page (item), &r);
}

void
fm_page_view_set_hits (FmPageView *self, GArray *hits, int current)
{
  g_clear_pointer (&self->hits, g_array_unref);
  self->hits = hits != NULL ? g_array_ref (hits) : NULL;
  self->current_hit = current;
  if (hits != NULL && current >= 0 && (guint) current < hits->len)
    {
      const FmPageHit *hit = &g_array_index (hits, FmPageHit, current);
      fm_page_view_scroll_to_rect (self, hit->page, &hit->rect);
    }
  gtk_widget_queue_draw (GTK_WIDGET (self));
}

void
fm_page_view_scroll_to_rect (FmPageView *self, int page, const graphene_rect_t *rect)
{
  graphene_rect_t area, r = *rect;
  double h = gtk_widget_get_height (GTK_WIDGET (self));
  double w = gtk_widget_get_width (GTK_WIDGET (self));
  double top, left;

  if (page < 0 || page >= self->n_pages || self->vadjustment == NULL)
    return;
  page_rect (self, page, &area);
  top = area.origin.y + r.origin.y * self->zoom;
  left = area.origin.x + r.origin.x * self->zoom;
  /* Leave it alone when already fully visible. */
  if (top < vvalue (self) || top + r.size.height * self->zoom > vvalue (self) + h)
    gtk_adjustment_set_value (self->vadjustment, top + r.size.height * self->zoom / 2 - h / 2);
  if (self->hadjustment && (left < hvalue (self) || left + r.size.width * self->zoom > hvalue (self) + w))
    gtk_adjustment_set_value (self->hadjustment, left - PAGE_GAP);
}

guint
fm_page_view_get_n_painted (FmPageView *self)
{
  return self->n_painted;
}

gboolean
fm_page_view_get_page_area (FmPageView *self, int page, graphene_rect_t *area)
{
  if (page < 0 || page >= self->n_pages)
    return FALSE;
  page_rect (self, page, area);
  area->origin.x -= (float) hvalue (self);
  area->origin.y -= (float) vvalue (self);
  return TRUE;
}

void
fm_page_view_set_low_threshold (FmPageView *self, double threshold)
{
  self->low_threshold = threshold;
  gtk_widget_queue_draw (GTK_WIDGET (self));
}
