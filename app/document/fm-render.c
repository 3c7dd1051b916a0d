/* fm-render.c - Poppler + Cairo rendering with a pixel cap. */
#include "fm-render.h"

#include <math.h>
#include <stdlib.h>
#include <string.h>
#include "fm-huge-pages.h"

double
fm_render_scale_for_font (double font_size_pt,
                          int    em_px)
{
  /* Text layers carry 0 or garbage sizes for some Type 3 fonts; 10 pt is the
   * most common body size and keeps the crop usable. A size over 1000 pt is
   * real on a scaled-up page: clamped, not reset, or its crops would be
   * rendered 100 times too large and exceed the render cap. */
  if (!isfinite (font_size_pt) || font_size_pt < 0.5)
    font_size_pt = 10.0;
  else if (font_size_pt > 1000.0)
    font_size_pt = 1000.0;
  if (em_px <= 0)
    em_px = FM_RENDER_DEFAULT_EM_PX;
  return (double) em_px / font_size_pt;
}

double
fm_render_fit_scale (double width_pt,
                     double height_pt,
                     double wanted_scale)
{
  double scale = wanted_scale;

  if (!(width_pt > 0) || !(height_pt > 0) || !(scale > 0) || !isfinite (scale))
    return 0;
  if (width_pt * scale > FM_RENDER_MAX_SIDE)
    scale = FM_RENDER_MAX_SIDE / width_pt;
  if (height_pt * scale > FM_RENDER_MAX_SIDE)
    scale = FM_RENDER_MAX_SIDE / height_pt;
  if (width_pt * height_pt * scale * scale > FM_RENDER_MAX_PIXELS)
    scale = sqrt (FM_RENDER_MAX_PIXELS / (width_pt * height_pt));
  /* ceil() in the render may add a pixel per side; stay safely inside. */
  return scale * 0.999;
}

/* The pixel size of a render of area at scale, or FALSE with the error that
 * says why none can be made: an empty area, a bad scale, over the limits. */
static gboolean
render_size (PopplerPage  *page,
             const FmRect *area,
             double        scale,
             double       *w_px,
             double       *h_px,
             GError      **error)
{
  if (!isfinite (scale) || scale <= 0 ||
      !isfinite (area->x0) || !isfinite (area->y0) || !isfinite (area->x1) || !isfinite (area->y1) ||
      area->x1 <= area->x0 || area->y1 <= area->y0)
    {
      g_set_error (error, FM_DOCUMENT_ERROR, FM_DOCUMENT_ERROR_RENDER,
                   "page %d: cannot render an empty area or at scale %g",
                   poppler_page_get_index (page) + 1, scale);
      return FALSE;
    }
  *w_px = MAX (ceil ((area->x1 - area->x0) * scale - 1e-6), 1);
  *h_px = MAX (ceil ((area->y1 - area->y0) * scale - 1e-6), 1);
  if (*w_px > FM_RENDER_MAX_SIDE || *h_px > FM_RENDER_MAX_SIDE || *w_px * *h_px > FM_RENDER_MAX_PIXELS)
    {
      g_set_error (error, FM_DOCUMENT_ERROR, FM_DOCUMENT_ERROR_RENDER,
                   "page %d: a render of %.0f x %.0f pixels is above the limit of %d pixels",
                   poppler_page_get_index (page) + 1, *w_px, *h_px, FM_RENDER_MAX_PIXELS);
      return FALSE;
    }
  return TRUE;
}

/* The pixels of the images made here are kept for the next image when
 * freed (two of them, up to 8 MiB each): the text reader crops every formula
 * at 6 px/pt and detection paints a page in bands, and each fresh buffer of
 * that size came from new pages, a page fault per 4 KiB (22 us each on the
 * development VM: 2500 of them for a 10-page paper). Every image made here
 * is painted white before it is drawn on, so old pixels never show. */
#define KEPT_PIXELS 2
#define KEPT_PIXELS_MAX ((gsize) 8 << 20)
#define KEPT_PIXELS_MIN ((gsize) 64 << 10)

typedef struct {
  guint8 *data;
  gsize cap;
} Pixels;

static GMutex kept_pixels_lock;
static Pixels kept_pixels[KEPT_PIXELS];
static const cairo_user_data_key_t pixels_key;

/* A buffer of at least n bytes: a kept one, else a new one (NULL if none).
 * A larger one than is ever kept (a 300 dpi page for the scan analysis: 34
 * MB) is painted white whole at once, so it comes on 2 MiB pages: a few
 * faults instead of 8 000 (about 0.2 s of CPU on the development VM);
 * pixels_give frees it. */
static Pixels *
pixels_take (gsize n)
{
  Pixels *px = g_new0 (Pixels, 1);
  int best = -1;

  if (n <= KEPT_PIXELS_MAX)
    {
      g_mutex_lock (&kept_pixels_lock);
      for (int i = 0; i < KEPT_PIXELS; i++)
        if (kept_pixels[i].data && kept_pixels[i].cap >= n &&
            (best < 0 || kept_pixels[i].cap < kept_pixels[best].cap))
          best = i;
      if (best >= 0)
        {
          *px = kept_pixels[best];
          kept_pixels[best] = (Pixels) { NULL, 0 };
        }
      g_mutex_unlock (&kept_pixels_lock);
    }
  if (px->data == NULL)
    {
      px->data = n > KEPT_PIXELS_MAX ? fm_try_alloc_written_whole (n) : g_try_malloc (n);
      px->cap = n;
    }
  if (px->data == NULL)
    g_clear_pointer (&px, g_free);
  return px;
}

/* The surface's destroy notify: the buffer goes back (in place of the
 * smallest kept one, if that is smaller) or is freed. */
static void
pixels_give (gpointer data)
{
  Pixels *px = data;
  int slot = -1;

  if (px->cap <= KEPT_PIXELS_MAX)
    {
      g_mutex_lock (&kept_pixels_lock);
      for (int i = 0; i < KEPT_PIXELS; i++)
        if (slot < 0 || kept_pixels[i].cap < kept_pixels[slot].cap)
          slot = i;
      if (kept_pixels[slot].cap < px->cap)
        {
          Pixels old = kept_pixels[slot];

          kept_pixels[slot] = *px;
          *px = old;
        }
      g_mutex_unlock (&kept_pixels_lock);
    }
  g_free (px->data);
  g_free (px);
}

/* A w_px x h_px ARGB image, or NULL with the error. */
static cairo_surface_t *
new_image (PopplerPage *page, double w_px, double h_px, GError **error)
{
  int stride = cairo_format_stride_for_width (CAIRO_FORMAT_ARGB32, (int) w_px);
  gsize n = stride > 0 && h_px >= 1 ? (gsize) stride * (gsize) h_px : 0;
  cairo_surface_t *surface = NULL;
  Pixels *px;

  if (n >= KEPT_PIXELS_MIN && (px = pixels_take (n)) != NULL)
    {
      surface = cairo_image_surface_create_for_data (px->data, CAIRO_FORMAT_ARGB32,
                                                     (int) w_px, (int) h_px, stride);
      if (cairo_surface_status (surface) != CAIRO_STATUS_SUCCESS ||
          cairo_surface_set_user_data (surface, &pixels_key, px, pixels_give) != CAIRO_STATUS_SUCCESS)
        {
          cairo_surface_destroy (surface);
          pixels_give (px);
          surface = NULL;
        }
    }
  if (surface == NULL)
    surface = cairo_image_surface_create (CAIRO_FORMAT_ARGB32, (int) w_px, (int) h_px);

  if (cairo_surface_status (surface) != CAIRO_STATUS_SUCCESS)
    {
      g_set_error (error, FM_DOCUMENT_ERROR, FM_DOCUMENT_ERROR_RENDER,
                   "page %d: cannot allocate a %.0f x %.0f image: %s",
                   poppler_page_get_index (page) + 1, w_px, h_px,
                   cairo_status_to_string (cairo_surface_status (surface)));
      cairo_surface_destroy (surface);
      return NULL;
    }
  return surface;
}

/* The error of a drawing that Cairo failed. */
static void
set_render_error (PopplerPage *page, cairo_status_t status, GError **error)
{
  g_set_error (error, FM_DOCUMENT_ERROR, FM_DOCUMENT_ERROR_RENDER,
               "page %d cannot be rendered: %s",
               poppler_page_get_index (page) + 1, cairo_status_to_string (status));
}

/* A white w_px x h_px ARGB image and a context drawing on it, or NULL with
 * the error. */
static cairo_surface_t *
white_canvas (PopplerPage *page, double w_px, double h_px, cairo_t **cr, GError **error)
{
  cairo_surface_t *surface = new_image (page, w_px, h_px, error);

  if (surface == NULL)
    return NULL;
  *cr = cairo_create (surface);
  cairo_set_source_rgb (*cr, 1, 1, 1);
  cairo_paint (*cr);
  return surface;
}

/* Ends the drawing of white_canvas: its image, or NULL with the error when
 * Cairo failed on the way. */
static cairo_surface_t *
finish_canvas (PopplerPage *page, cairo_t *cr, cairo_surface_t *surface, GError **error)
{
  cairo_status_t status = cairo_status (cr);

  cairo_destroy (cr);
  cairo_surface_flush (surface);
  if (status != CAIRO_STATUS_SUCCESS)
    {
      set_render_error (page, status, error);
      cairo_surface_destroy (surface);
      return NULL;
    }
  return surface;
}

cairo_surface_t *
fm_render_page_rect_locked (PopplerPage  *page,
                            const FmRect *rect,
                            double        scale,
                            GError      **error)
{
  FmRect area;
  double pw = 0, ph = 0, w_px, h_px;
  cairo_surface_t *surface;
  cairo_t *cr;

  poppler_page_get_size (page, &pw, &ph);
  if (rect)
    area = *rect;
  else
    area = (FmRect) { 0, 0, pw, ph };
  if (!render_size (page, &area, scale, &w_px, &h_px, error))
    return NULL;
  surface = white_canvas (page, w_px, h_px, &cr, error);
  if (surface == NULL)
    return NULL;
  cairo_scale (cr, scale, scale);
  cairo_translate (cr, -area.x0, -area.y0);
  /* poppler_page_render applies the page's /Rotate, like the text layout. */
  poppler_page_render (page, cr);
  return finish_canvas (page, cr, surface, error);
}

/* A page drawn at one scale, kept as Cairo's record of the drawing (glyph
 * runs, paths, images) so that many crops of it cost one pass of Poppler over
 * the page: Poppler re-reads the content stream and rebuilds every font on
 * the page (embedded font files inflated and parsed) for each render, however
 * small the rectangle, and a page of formulas was rendered three times per
 * formula (issue 15). Recorded at the crop's scale, so that everything Poppler
 * decides from the device transform (hairline widths, rules snapped to whole
 * pixels, image downsampling) is decided as for a direct render; replayed at a
 * whole-pixel offset, the crop is pixel for pixel the direct render of the
 * same pixel-aligned rectangle (checked on the bench paper: 524 of 524). */
/* A page of formulas asks for up to five scales: detection's, the text
 * reader's and recognition's crops at the font sizes on the page (the bench
 * paper: 1-3 of them); the one used least recently goes first. */
#define RECORDINGS_PER_PAGE 6

typedef struct {
  struct {
    double scale;
    cairo_surface_t *surface;
    guint64 used;  /* clock at the last use */
  } item[RECORDINGS_PER_PAGE];
  guint64 clock;
} PageRecordings;

static void
page_recordings_free (gpointer data)
{
  PageRecordings *pr = data;

  for (int i = 0; i < RECORDINGS_PER_PAGE; i++)
    if (pr->item[i].surface)
      cairo_surface_destroy (pr->item[i].surface);
  g_free (pr);
}

/* The page's recording at scale (borrowed: the page owns it), made on first
 * use. The recordings live on the PopplerPage, which the document keeps among
 * its recent pages (fm_document_get_page_locked), and go with it. */
static cairo_surface_t *
page_recording_locked (PopplerPage *page,
                       double       scale,
                       GError     **error)
{
  PageRecordings *pr = g_object_get_data (G_OBJECT (page), "fm-render-recordings");
  cairo_surface_t *rec;
  cairo_t *cr;
  cairo_status_t status;
  guint slot;

  if (pr == NULL)
    {
      pr = g_new0 (PageRecordings, 1);
      g_object_set_data_full (G_OBJECT (page), "fm-render-recordings", pr, page_recordings_free);
    }
  pr->clock++;
  for (int i = 0; i < RECORDINGS_PER_PAGE; i++)
    if (pr->item[i].surface && pr->item[i].scale == scale)
      {
        pr->item[i].used = pr->clock;
        return pr->item[i].surface;
      }

  rec = cairo_recording_surface_create (CAIRO_CONTENT_COLOR_ALPHA, NULL);
  cr = cairo_create (rec);
  cairo_scale (cr, scale, scale);
  poppler_page_render (page, cr);
  status = cairo_status (cr);
  cairo_destroy (cr);
  if (status == CAIRO_STATUS_SUCCESS)
    status = cairo_surface_status (rec);
  if (status != CAIRO_STATUS_SUCCESS)
    {
      set_render_error (page, status, error);
      cairo_surface_destroy (rec);
      return NULL;
    }
  slot = 0;
  for (guint i = 1; i < RECORDINGS_PER_PAGE; i++)
    if (pr->item[i].used < pr->item[slot].used)
      slot = i;
  if (pr->item[slot].surface)
    cairo_surface_destroy (pr->item[slot].surface);
  pr->item[slot].scale = scale;
  pr->item[slot].surface = rec;
  pr->item[slot].used = pr->clock;
  return rec;
}

/* The w_px x h_px image of the page's recording at scale whose top-left
 * corner is the recording's pixel (x_px, y_px), not necessarily whole. */
static cairo_surface_t *
replay_recording_locked (PopplerPage *page,
                         double       scale,
                         double       x_px,
                         double       y_px,
                         double       w_px,
                         double       h_px,
                         GError     **error)
{
  cairo_surface_t *rec, *surface;
  cairo_t *cr;

  if (fabs (x_px) > G_MAXINT / 2 || fabs (y_px) > G_MAXINT / 2)
    {
      g_set_error (error, FM_DOCUMENT_ERROR, FM_DOCUMENT_ERROR_RENDER,
                   "page %d: a crop at %.0f, %.0f pixels is out of range",
                   poppler_page_get_index (page) + 1, x_px, y_px);
      return NULL;
    }
  rec = page_recording_locked (page, scale, error);
  if (rec == NULL)
    return NULL;
  surface = white_canvas (page, w_px, h_px, &cr, error);
  if (surface == NULL)
    return NULL;
  cairo_set_source_surface (cr, rec, -x_px, -y_px);
  cairo_paint (cr);
  return finish_canvas (page, cr, surface, error);
}

cairo_surface_t *
fm_render_page_crop_locked (PopplerPage  *page,
                            const FmRect *rect,
                            double        scale,
                            FmRect       *drawn,
                            GError      **error)
{
  double w_px, h_px, x_px, y_px;
  cairo_surface_t *surface;

  g_return_val_if_fail (rect != NULL, NULL);

  /* The size of the direct render of rect; its corner on the nearest pixel
   * of the page's grid at this scale. */
  if (!render_size (page, rect, scale, &w_px, &h_px, error))
    return NULL;
  x_px = round (rect->x0 * scale);
  y_px = round (rect->y0 * scale);
  surface = replay_recording_locked (page, scale, x_px, y_px, w_px, h_px, error);
  if (surface != NULL && drawn)
    *drawn = (FmRect) { x_px / scale, y_px / scale, (x_px + w_px) / scale, (y_px + h_px) / scale };
  return surface;
}

/* Cut from the page's recording at rect's own corner. The pixels differ
 * from a direct render only where Poppler placed something by the device's
 * pixel grid (rules and strokes snapped to whole pixels, hairlines widened):
 * on the bench paper 30 of its 242 crops differ somewhere (pixel diff). */
static cairo_surface_t *
page_rect_replayed_locked (PopplerPage  *page,
                           const FmRect *rect,
                           double        scale,
                           GError      **error)
{
  double w_px, h_px;

  if (!render_size (page, rect, scale, &w_px, &h_px, error))
    return NULL;
  return replay_recording_locked (page, scale, rect->x0 * scale, rect->y0 * scale, w_px, h_px, error);
}

/* A crop from the page's recording as gray: at rect's own corner when
 * exact, else at the nearest whole pixel (its rectangle into drawn). */
static FmGrayImage *
recorded_gray (FmDocument   *doc,
               int           page_index,
               const FmRect *rect,
               double        scale,
               gboolean      exact,
               FmRect       *drawn,
               GError      **error)
{
  PopplerPage *page;
  cairo_surface_t *surface = NULL;
  FmGrayImage *image;

  g_return_val_if_fail (FM_IS_DOCUMENT (doc), NULL);
  g_return_val_if_fail (rect != NULL, NULL);

  if (!fm_document_check_page_images (doc, page_index, error))
    return NULL;
  fm_document_lock (doc);
  page = fm_document_get_page_locked (doc, page_index, error);
  if (page)
    {
      surface = exact ? page_rect_replayed_locked (page, rect, scale, error)
                      : fm_render_page_crop_locked (page, rect, scale, drawn, error);
      g_object_unref (page);
    }
  fm_document_unlock (doc);
  if (surface == NULL)
    return NULL;
  image = fm_gray_image_new_from_surface (surface);
  cairo_surface_destroy (surface);
  return image;
}

FmGrayImage *
fm_render_page_crop_gray (FmDocument   *doc,
                          int           page_index,
                          const FmRect *rect,
                          double        scale,
                          FmRect       *drawn,
                          GError      **error)
{
  return recorded_gray (doc, page_index, rect, scale, FALSE, drawn, error);
}

FmGrayImage *
fm_render_page_rect_replayed_gray (FmDocument   *doc,
                                   int           page_index,
                                   const FmRect *rect,
                                   double        scale,
                                   GError      **error)
{
  return recorded_gray (doc, page_index, rect, scale, TRUE, NULL, error);
}

cairo_surface_t *
fm_render_page_rect (FmDocument   *doc,
                     int           page_index,
                     const FmRect *rect,
                     double        scale,
                     GError      **error)
{
  PopplerPage *page;
  cairo_surface_t *surface = NULL;

  g_return_val_if_fail (FM_IS_DOCUMENT (doc), NULL);

  /* Poppler decodes a page's image whole whatever the render's size, and
   * draws nothing (a blank page, no error) when that allocation fails: an
   * oversized scan is refused before, for the page view, crops and the scan
   * analysis alike. */
  if (!fm_document_check_page_images (doc, page_index, error))
    return NULL;
  fm_document_lock (doc);
  page = fm_document_get_page_locked (doc, page_index, error);
  if (page)
    {
      surface = fm_render_page_rect_locked (page, rect, scale, error);
      g_object_unref (page);
    }
  fm_document_unlock (doc);
  return surface;
}

/* Rec. 601 luma of a premultiplied ARGB pixel over white. */
static inline guint8
luma_over_white (guint32 p)
{
  guint a = (p >> 24) & 0xff;
  /* Premultiplied colour over white: c + (255 - a). */
  guint r = ((p >> 16) & 0xff) + 255 - a;
  guint g = ((p >> 8) & 0xff) + 255 - a;
  guint b = (p & 0xff) + 255 - a;
  guint v = (r * 77 + g * 150 + b * 29 + 128) >> 8;

  return (guint8) MIN (v, 255u);
}

FmGrayImage *
fm_gray_image_new (int width,
                   int height)
{
  FmGrayImage *image;

  g_return_val_if_fail (width > 0 && height > 0, NULL);
  image = g_new0 (FmGrayImage, 1);
  image->width = width;
  image->height = height;
  image->stride = width;
  /* Written whole at once (a 300 dpi page's is 8 MB). */
  image->pixels = fm_alloc_written_whole ((gsize) width * (gsize) height, NULL);
  memset (image->pixels, 255, (gsize) width * (gsize) height);
  return image;
}

void
fm_gray_image_free (FmGrayImage *image)
{
  if (image == NULL)
    return;
  g_free (image->pixels);
  g_free (image);
}

FmGrayImage *
fm_gray_image_new_from_surface (cairo_surface_t *surface)
{
  FmGrayImage *image;
  const guint8 *src;
  int w, h, stride;
  cairo_format_t format;

  g_return_val_if_fail (surface != NULL, NULL);
  format = cairo_image_surface_get_format (surface);
  g_return_val_if_fail (format == CAIRO_FORMAT_ARGB32 || format == CAIRO_FORMAT_RGB24, NULL);

  cairo_surface_flush (surface);
  w = cairo_image_surface_get_width (surface);
  h = cairo_image_surface_get_height (surface);
  stride = cairo_image_surface_get_stride (surface);
  src = cairo_image_surface_get_data (surface);
  image = fm_gray_image_new (w, h);

  for (int y = 0; y < h; y++)
    {
      const guint32 *row = (const guint32 *) (const void *) (src + (gsize) y * stride);
      guint8 *out = image->pixels + (gsize) y * image->stride;

      if (format == CAIRO_FORMAT_ARGB32)
        for (int x = 0; x < w; x++)
          out[x] = luma_over_white (row[x]);
      else
        for (int x = 0; x < w; x++)
          out[x] = luma_over_white (row[x] | 0xff000000u);
    }
  return image;
}

guint8 *
fm_render_page_ink_locked (PopplerPage *page,
                           double       scale,
                           guint8       below,
                           int         *width,
                           int         *height,
                           GError     **error)
{
  /* Bands of the page's recording, so that no page-sized ARGB image (17 MB
   * at 3 px/pt, painted white, filled, read once and freed: page faults and
   * memset for every page) is ever made; the bands are whole-pixel crops of
   * the same drawing, so the ink is that of one render of the whole page. */
  enum { BAND_ROWS = 64 };
  double pw = 0, ph = 0, w_px, h_px;
  cairo_surface_t *rec, *band;
  guint8 *ink;
  int w, h;

  poppler_page_get_size (page, &pw, &ph);
  if (!render_size (page, &(FmRect) { 0, 0, pw, ph }, scale, &w_px, &h_px, error))
    return NULL;
  w = (int) w_px;
  h = (int) h_px;
  rec = page_recording_locked (page, scale, error);
  if (rec == NULL)
    return NULL;
  band = new_image (page, w, MIN (h, BAND_ROWS), error);
  if (band == NULL)
    return NULL;
  ink = fm_alloc_written_whole ((gsize) w * h, NULL);   /* 4-5 MB at 3 px/pt, written whole */
  for (int y0 = 0; y0 < h; y0 += BAND_ROWS)
    {
      int rows = MIN (BAND_ROWS, h - y0), stride = cairo_image_surface_get_stride (band);
      cairo_t *cr = cairo_create (band);
      cairo_status_t status;
      const guint8 *data;

      cairo_set_source_rgb (cr, 1, 1, 1);
      cairo_paint (cr);
      cairo_set_source_surface (cr, rec, 0, -y0);
      cairo_paint (cr);
      status = cairo_status (cr);
      cairo_destroy (cr);
      if (status != CAIRO_STATUS_SUCCESS)
        {
          set_render_error (page, status, error);
          cairo_surface_destroy (band);
          g_free (ink);
          return NULL;
        }
      cairo_surface_flush (band);
      data = cairo_image_surface_get_data (band);
      for (int y = 0; y < rows; y++)
        {
          const guint32 *row = (const guint32 *) (const void *) (data + (gsize) y * stride);
          guint8 *out = ink + (gsize) (y0 + y) * w;
          int x = 0;

          /* Most of a page is paper: white is never ink, four at a time. */
          for (; x + 4 <= w; x += 4)
            {
              guint64 a, b;
              memcpy (&a, row + x, 8);
              memcpy (&b, row + x + 2, 8);
              if ((a & b) == G_GUINT64_CONSTANT (0xffffffffffffffff))
                memset (out + x, 0, 4);
              else
                for (int k = x; k < x + 4; k++)
                  out[k] = row[k] != 0xffffffffu && luma_over_white (row[k]) < below;
            }
          for (; x < w; x++)
            out[x] = row[x] != 0xffffffffu && luma_over_white (row[x]) < below;
        }
    }
  cairo_surface_destroy (band);
  *width = w;
  *height = h;
  return ink;
}

FmGrayImage *
fm_render_page_rect_gray (FmDocument   *doc,
                          int           page_index,
                          const FmRect *rect,
                          double        scale,
                          GError      **error)
{
  cairo_surface_t *surface = fm_render_page_rect (doc, page_index, rect, scale, error);
  FmGrayImage *image;

  if (surface == NULL)
    return NULL;
  image = fm_gray_image_new_from_surface (surface);
  cairo_surface_destroy (surface);
  return image;
}

typedef struct {
  int page_index;
  gboolean has_rect;
  FmRect rect;
  double scale;
} RenderData;

static void
render_thread (GTask        *task,
               gpointer      source_object,
               gpointer      task_data,
               GCancellable *cancellable)
{
  RenderData *data = task_data;
  GError *error = NULL;
  cairo_surface_t *surface;

  if (g_task_return_error_if_cancelled (task))
    return;
  surface = fm_render_page_rect (FM_DOCUMENT (source_object), data->page_index,
                                 data->has_rect ? &data->rect : NULL, data->scale, &error);
  if (surface)
    g_task_return_pointer (task, surface, (GDestroyNotify) cairo_surface_destroy);
  else
    g_task_return_error (task, error);
}

void
fm_render_page_rect_async (FmDocument          *doc,
                           int                  page_index,
                           const FmRect        *rect,
                           double               scale,
                           GCancellable        *cancellable,
                           GAsyncReadyCallback  callback,
                           gpointer             user_data)
{
  g_autoptr(GTask) task = g_task_new (doc, cancellable, callback, user_data);
  RenderData *data = g_new0 (RenderData, 1);

  data->page_index = page_index;
  data->has_rect = rect != NULL;
  if (rect)
    data->rect = *rect;
  data->scale = scale;
  g_task_set_source_tag (task, fm_render_page_rect_async);
  g_task_set_task_data (task, data, g_free);
  g_task_run_in_thread (task, render_thread);
}

cairo_surface_t *
fm_render_page_rect_finish (FmDocument   *doc,
                            GAsyncResult *result,
                            GError      **error)
{
  g_return_val_if_fail (g_task_is_valid (result, doc), NULL);
  return g_task_propagate_pointer (G_TASK (result), error);
}
