/* render-crops.c - every page of a preview PDF -> ink-cropped 8-bit gray images.
 *
 * Usage: render-crops [--em-px N] [--margin PX] [--max-width W] [--max-height H]
 *                     FILE.pdf FONT_SIZE_PT > records
 *
 * The training renders must match what the app feeds the model, so the
 * pixels come from the app's own renderer (fm-render: Poppler + Cairo,
 * white background, Rec. 601 gray) at the app's scale rule
 * fm_render_scale_for_font (font_pt, em_px), and the connected-component
 * statistic comes from the engine's own fe_estimate_em_px, so the
 * `cc_median_em` written into meta.json is measured exactly the way the
 * engine measures it at run time.
 *
 * Output on stdout, one record per page, native byte order (little endian
 * on every machine we build on):
 *   int32 page, int32 status, int32 width, int32 height,
 *   float32 cc_median_px (engine's median component height, 0 when none),
 *   then width*height uint8 pixels (0 = ink, 255 = paper) when status == 0.
 * status: 0 ok, 1 blank page, 2 larger than the caps, 3 render error.
 */
#include <errno.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "crop-record.h"
#include "fm-render.h"
#include "fe-model.h"

enum {
  CROP_OK = 0,
  CROP_BLANK = 1,
  CROP_TOO_BIG = 2,
  CROP_RENDER_ERROR = 3,
};

/* Anti-aliasing leaves faint pixels at glyph edges; anything lighter than
 * this counts as paper when finding the ink box. */
#define INK_LEVEL 250

typedef struct {
  int em_px;
  int margin;
  int max_width;
  int max_height;
} CropOptions;

static int
write_record (int page, int status, int width, int height, float cc_px,
              const guint8 *pixels)
{
  return crop_record_write (page, status, width, height, &cc_px, sizeof cc_px,
                            status == CROP_OK ? pixels : NULL);
}

/* Crops image to its ink box plus margin (white where the margin leaves the
 * page) and writes the record. */
static int
emit_crop (int page, const FmGrayImage *img, const CropOptions *opt)
{
  int x0 = img->width, y0 = img->height, x1 = -1, y1 = -1;
  int w, h, rc;
  guint8 *crop;
  float *ink, cc_px;

  for (int y = 0; y < img->height; y++)
    {
      const guint8 *row = img->pixels + (size_t) y * img->stride;
      for (int x = 0; x < img->width; x++)
        if (row[x] < INK_LEVEL)
          {
            if (x < x0) x0 = x;
            if (x > x1) x1 = x;
            if (y < y0) y0 = y;
            if (y > y1) y1 = y;
          }
    }
  if (x1 < 0)
    return write_record (page, CROP_BLANK, 0, 0, 0.0f, NULL);

  w = x1 - x0 + 1 + 2 * opt->margin;
  h = y1 - y0 + 1 + 2 * opt->margin;
  if (w > opt->max_width || h > opt->max_height)
    return write_record (page, CROP_TOO_BIG, w, h, 0.0f, NULL);

  crop = g_malloc ((size_t) w * h);
  ink = g_malloc ((size_t) w * h * sizeof *ink);
  memset (crop, 255, (size_t) w * h);
  for (int y = y0; y <= y1; y++)
    memcpy (crop + (size_t) (y - y0 + opt->margin) * w + opt->margin,
            img->pixels + (size_t) y * img->stride + x0, (size_t) (x1 - x0 + 1));
  for (size_t i = 0; i < (size_t) w * h; i++)
    ink[i] = 1.0f - crop[i] / 255.0f;
  /* cc_median_em = 1 makes the estimate the median component height itself. */
  cc_px = fe_estimate_em_px (ink, w, h, 1.0f);
  rc = write_record (page, CROP_OK, w, h, cc_px, crop);
  g_free (ink);
  g_free (crop);
  return rc;
}

static gboolean
parse_int (const char *s, int *out)
{
  char *end = NULL;
  long v;

  errno = 0;
  v = strtol (s, &end, 10);
  if (errno || !end || *end || v <= 0 || v > 1 << 20)
    return FALSE;
  *out = (int) v;
  return TRUE;
}

int
main (int argc, char **argv)
{
  CropOptions opt = { FM_RENDER_DEFAULT_EM_PX, 2, 1536, 256 };
  const char *path = NULL;
  const char *size_arg = NULL;
  g_autoptr (GError) error = NULL;
  g_autoptr (FmDocument) doc = NULL;
  char *end = NULL;
  double font_pt, scale;
  int n_pages;

  for (int i = 1; i < argc; i++)
    {
      int *target = NULL;
      if (strcmp (argv[i], "--em-px") == 0)
        target = &opt.em_px;
      else if (strcmp (argv[i], "--margin") == 0)
        target = &opt.margin;
      else if (strcmp (argv[i], "--max-width") == 0)
        target = &opt.max_width;
      else if (strcmp (argv[i], "--max-height") == 0)
        target = &opt.max_height;
      if (target)
        {
          if (i + 1 >= argc || !parse_int (argv[i + 1], target))
            {
              fprintf (stderr, "render-crops: %s needs a positive integer\n", argv[i]);
              return 2;
            }
          i++;
        }
      else if (!path)
        path = argv[i];
      else if (!size_arg)
        size_arg = argv[i];
      else
        {
          fprintf (stderr, "render-crops: unexpected argument %s\n", argv[i]);
          return 2;
        }
    }
  if (!path || !size_arg)
    {
      fprintf (stderr, "usage: render-crops [--em-px N] [--margin PX] [--max-width W] "
               "[--max-height H] FILE.pdf FONT_SIZE_PT\n");
      return 2;
    }
  font_pt = strtod (size_arg, &end);
  if (!end || *end || font_pt <= 0.0)
    {
      fprintf (stderr, "render-crops: bad font size %s\n", size_arg);
      return 2;
    }

  doc = fm_document_new_for_path (path, NULL, &error);
  if (!doc)
    {
      fprintf (stderr, "render-crops: %s\n", error->message);
      return 1;
    }

  scale = fm_render_scale_for_font (font_pt, opt.em_px);
  n_pages = fm_document_get_n_pages (doc);
  for (int page = 0; page < n_pages; page++)
    {
      g_autoptr (GError) page_error = NULL;
      g_autoptr (FmGrayImage) img = fm_render_page_rect_gray (doc, page, NULL, scale,
                                                             &page_error);
      int rc;
      if (!img)
        {
          fprintf (stderr, "render-crops: page %d: %s\n", page + 1, page_error->message);
          rc = write_record (page, CROP_RENDER_ERROR, 0, 0, 0.0f, NULL);
        }
      else
        rc = emit_crop (page, img, &opt);
      if (rc != 0)
        {
          fprintf (stderr, "render-crops: write failed: %s\n", g_strerror (errno));
          return 1;
        }
    }
  if (fflush (stdout) != 0)
    return 1;
  return 0;
}
