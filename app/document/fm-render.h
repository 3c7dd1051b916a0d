/* fm-render.h - pages and page rectangles to Cairo images and 8-bit gray.
 *
 * Rectangles are in PDF points on the displayed page (rotation applied, origin
 * top-left, y down), the same space as Poppler's text layout. A render at
 * `scale` has scale pixels per point. Every render paints a white background
 * first, so transparent PDFs come out as black ink on white.
 */
#pragma once

#include <cairo.h>
#include "fm-document.h"

G_BEGIN_DECLS

typedef struct {
  double x0, y0, x1, y1;   /* points; x0 <= x1, y0 <= y1 */
} FmRect;

/* 8-bit gray, 0 = black ink, 255 = white paper; row stride in bytes. */
typedef struct {
  guint8 *pixels;
  int width;
  int height;
  int stride;
} FmGrayImage;

/* The model's glyph size (docs/model.md: em_px, 20 for formulate-v1). */
#define FM_RENDER_DEFAULT_EM_PX 20
/* At most this many pixels in one render (64 Mi pixels = 256 MiB of ARGB):
 * a 200 x 200 inch page at 1 pixel per point would need 207 M. */
#define FM_RENDER_MAX_PIXELS (64 * 1024 * 1024)
/* Cairo's own limit on an image surface side. */
#define FM_RENDER_MAX_SIDE 32767

/* Pixels per point so that a font of font_size_pt points is em_px pixels tall:
 * em_px / font_size_pt. Non-positive or absurd sizes fall back to 10 pt and a
 * non-positive em_px to FM_RENDER_DEFAULT_EM_PX. */
double fm_render_scale_for_font (double font_size_pt,
                                 int    em_px);

/* The largest scale <= wanted at which a width x height point area stays
 * within FM_RENDER_MAX_PIXELS and FM_RENDER_MAX_SIDE. */
double fm_render_fit_scale (double width_pt,
                            double height_pt,
                            double wanted_scale);

/* Renders rect of a page (whole page when rect is NULL) at scale. The result
 * is ceil(width * scale) x ceil(height * scale) ARGB32 pixels; a render beyond
 * the pixel cap is refused with FM_DOCUMENT_ERROR_RENDER. */
cairo_surface_t *fm_render_page_rect (FmDocument   *doc,
                                      int           page_index,
                                      const FmRect *rect,
                                      double        scale,
                                      GError      **error);
/* The same with the document lock already held and the page in hand. */
cairo_surface_t *fm_render_page_rect_locked (PopplerPage  *page,
                                             const FmRect *rect,
                                             double        scale,
                                             GError      **error);

/* Crops for the text reader: rect cut from the page drawn
 * whole at scale, its corner moved to the nearest pixel of that drawing (at
 * most half a pixel), the size as fm_render_page_rect's. Many crops of a page
 * at one scale cost one pass of Poppler over the page (the page keeps the
 * drawing while the document keeps the page). drawn, when not NULL, gets the
 * rectangle the pixels cover. */
cairo_surface_t *fm_render_page_crop_locked (PopplerPage  *page,
                                             const FmRect *rect,
                                             double        scale,
                                             FmRect       *drawn,
                                             GError      **error);
FmGrayImage *fm_render_page_crop_gray (FmDocument   *doc,
                                       int           page_index,
                                       const FmRect *rect,
                                       double        scale,
                                       FmRect       *drawn,
                                       GError      **error);

/* rect as fm_render_page_rect_gray draws it (the same size, its corner at
 * rect's own, not moved to a whole pixel), cut from the page's recording at
 * scale: one pass of Poppler per page and scale for all the crops of a page
 * (what recognition uses). The pixels are the direct render's except where
 * Poppler placed something by the pixel grid of the device it drew on (rules
 * and strokes snapped to whole pixels, hairlines widened): there the
 * recording's grid is the page's, the direct render's the crop's. */
FmGrayImage *fm_render_page_rect_replayed_gray (FmDocument   *doc,
                                                int           page_index,
                                                const FmRect *rect,
                                                double        scale,
                                                GError      **error);

/* The whole page at scale as 1 byte a pixel: 1 where the gray of
 * fm_gray_image_new_from_surface would be below `below`, else 0 (g_free
 * it). The same pixels as a render of the whole page, made band by band
 * from the page's recording. */
guint8 *fm_render_page_ink_locked (PopplerPage *page,
                                   double       scale,
                                   guint8       below,
                                   int         *width,
                                   int         *height,
                                   GError     **error);

/* ARGB32/RGB24 surface -> gray (Rec. 601 luma of the colour over white). */
FmGrayImage *fm_gray_image_new_from_surface (cairo_surface_t *surface);
FmGrayImage *fm_gray_image_new (int width, int height);
void         fm_gray_image_free (FmGrayImage *image);
G_DEFINE_AUTOPTR_CLEANUP_FUNC (FmGrayImage, fm_gray_image_free)

/* Render + gray in one call (what the crop code and the data tools use). */
FmGrayImage *fm_render_page_rect_gray (FmDocument   *doc,
                                       int           page_index,
                                       const FmRect *rect,
                                       double        scale,
                                       GError      **error);

/* Off the main thread, for the window: result is a cairo_surface_t. */
void             fm_render_page_rect_async  (FmDocument          *doc,
                                             int                  page_index,
                                             const FmRect        *rect,
                                             double               scale,
                                             GCancellable        *cancellable,
                                             GAsyncReadyCallback  callback,
                                             gpointer             user_data);
cairo_surface_t *fm_render_page_rect_finish (FmDocument   *doc,
                                             GAsyncResult *result,
                                             GError      **error);

G_END_DECLS
