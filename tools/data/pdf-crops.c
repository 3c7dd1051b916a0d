/* pdf-crops.c - every formula the app finds in a PDF, as the model sees it.
 *
 * Usage: pdf-crops --model FILE [--crop line|box] FILE.pdf > records
 *
 * The training samples of tools/data/pdf_crops.py must be what the image
 * model is given at run time, so nothing here re-implements the pipeline:
 * pages are detected by fm-page-queue with fm_detect_default_options (as
 * `formulate-cli pdf`), crop boxes come from fm_recognize_prepare_page
 * (crop rule `line` by default, as the app), pixels from
 * fm_region_render_crop at FM_RENDER_DEFAULT_EM_PX with
 * FM_RECOGNIZE_CROP_MARGIN_EM (neighbours' ink, Poppler/Cairo at the app's
 * scale), and the image the encoder reads from the engine's own
 * fe_preprocess (contrast, crop to ink, the font-size hint's scale, cap,
 * margin, stride padding) with the model's config. The model's weights are
 * loaded only for that config; nothing is recognised.
 *
 * Output on stdout, one record per detected region that is not an
 * equation number, native byte order (little endian where we build):
 *   int32 page (0-based), int32 status, int32 width, int32 height,
 *   char kind[12] (fm_region_kind_to_string, NUL padded),
 *   float32 box[4] (x0, y0, x1, y1: PDF points, origin top-left, as the
 *   JSON of formulate-cli), float32 font_size, float32 scale (the engine's
 *   resize factor), then width*height uint8 pixels (0 = ink, 255 = paper)
 *   when status == 0: fe_preprocess's output, stride padding included, so
 *   a training batch rounds it up to exactly the engine's input.
 * status: 0 ok, 1 render error, 2 preprocess error (blank crop).
 */
#include <math.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "crop-record.h"
#include "fe.h"
#include "fm-document.h"
#include "fm-page-queue.h"
#include "fm-recognize.h"
#include "fm-region.h"
#include "fm-render.h"

enum {
  CROP_OK = 0,
  CROP_RENDER_ERROR = 1,
  CROP_PREPROCESS_ERROR = 2,
};

/* The fields between the record's head and its pixels. */
typedef struct {
  char kind[12];
  float f[6];
} RegionFields;
_Static_assert (sizeof (RegionFields) == 12 + 6 * sizeof (float), "no padding in the record");

static int
write_record (const FmRegion *r, int status, int width, int height, float scale,
              const guint8 *pixels)
{
  RegionFields fields = { { 0 }, { (float) r->box.x0, (float) r->box.y0, (float) r->box.x1,
                                   (float) r->box.y1, (float) r->font_size, scale } };

  strncpy (fields.kind, fm_region_kind_to_string (r->kind), sizeof fields.kind - 1);
  return crop_record_write (r->page, status, width, height, &fields, sizeof fields,
                            status == CROP_OK ? pixels : NULL);
}

/* One region: its crop through the engine's preprocessing. The font-size
 * hint is fm-recognize.c's (recognize_tasks): the size times the crop's
 * scale when the size is sane, else 0 (the engine estimates). */
static int
emit_region (FmDocument *doc, const FeContext *ctx, const FmRegion *region)
{
  g_autoptr(GError) error = NULL;
  FmGrayImage *gray = fm_region_render_crop (doc, region, FM_RENDER_DEFAULT_EM_PX,
                                             FM_RECOGNIZE_CROP_MARGIN_EM, &error);
  double font_size = region->font_size;
  float *ink = NULL, scale = 0;
  int h = 0, w = 0, rc;
  guint8 *pixels;
  FeImage image;

  if (gray == NULL)
    return write_record (region, CROP_RENDER_ERROR, 0, 0, 0, NULL);
  image = (FeImage) {
    .data = gray->pixels, .width = gray->width, .height = gray->height, .stride = gray->stride,
    .format = FE_PIXEL_GRAY8,
    .em_px_hint = font_size >= 0.5 && font_size <= 1000
                  ? (float) (font_size * fm_region_crop_scale (region, FM_RENDER_DEFAULT_EM_PX)) : 0.0f,
  };
  if (fe_preprocess (ctx, &image, &ink, &h, &w, &scale) != FE_OK)
    {
      fm_gray_image_free (gray);
      return write_record (region, CROP_PREPROCESS_ERROR, 0, 0, 0, NULL);
    }
  fm_gray_image_free (gray);
  pixels = g_malloc ((size_t) w * h);
  for (size_t i = 0; i < (size_t) w * h; i++)
    {
      float v = ink[i] < 0 ? 0 : ink[i] > 1 ? 1 : ink[i];
      pixels[i] = (guint8) lrintf (255.0f * (1.0f - v));
    }
  free (ink);
  rc = write_record (region, CROP_OK, w, h, scale, pixels);
  g_free (pixels);
  return rc;
}

/* Every page in order, as formulate-cli pdf walks them. */
static int
run (FmDocument *doc, const FeContext *ctx, FmCropRule rule)
{
  int n_pages = fm_document_get_n_pages (doc);
  g_autofree int *pages = g_new (int, n_pages + 1);
  FmDetectOptions dopts = fm_detect_default_options ();
  FmPageQueue *queue;
  int rc = 0;

  for (int i = 0; i < n_pages; i++)
    pages[i] = i;
  queue = fm_page_queue_new (doc, &dopts, pages, (guint) n_pages, NULL, NULL);
  fm_page_queue_start (queue);
  for (int i = 0; i < n_pages && rc == 0; i++)
    {
      FmPageDetection det = fm_page_queue_take (queue, (guint) i);
      if (det.regions == NULL)
        {
          fprintf (stderr, "pdf-crops: page %d: %s\n", i + 1, det.error ? det.error->message : "?");
          g_clear_error (&det.error);
          continue;
        }
      fm_recognize_prepare_page (doc, det.regions, 0, rule);
      for (guint k = 0; k < det.regions->len && rc == 0; k++)
        {
          const FmRegion *r = det.regions->pdata[k];
          if (r->kind != FM_REGION_NUMBER)
            rc = emit_region (doc, ctx, r);
        }
      g_ptr_array_unref (det.regions);
    }
  fm_page_queue_free (queue);
  return rc;
}

int
main (int argc, char **argv)
{
  const char *model = NULL, *pdf = NULL;
  FmCropRule rule = FM_CROP_RULE_DEFAULT;
  FeContextParams cp = fe_context_default_params ();
  g_autoptr(GError) error = NULL;
  FmDocument *doc;
  FeContext *ctx = NULL;
  int rc;

  for (int i = 1; i < argc; i++)
    {
      if (strcmp (argv[i], "--model") == 0 && i + 1 < argc)
        model = argv[++i];
      else if (strcmp (argv[i], "--crop") == 0 && i + 1 < argc)
        {
          if (!fm_crop_rule_from_string (argv[++i], &rule))
            {
              fprintf (stderr, "pdf-crops: unknown crop rule %s (line or box)\n", argv[i]);
              return 2;
            }
        }
      else if (pdf == NULL && argv[i][0] != '-')
        pdf = argv[i];
      else
        {
          fprintf (stderr, "usage: pdf-crops --model FILE [--crop line|box] FILE.pdf > records\n");
          return 2;
        }
    }
  if (model == NULL || pdf == NULL)
    {
      fprintf (stderr, "usage: pdf-crops --model FILE [--crop line|box] FILE.pdf > records\n");
      return 2;
    }
  cp.device = "cpu";
  cp.n_threads = 1;
  if (fe_context_load (model, &cp, &ctx) != FE_OK)
    {
      fprintf (stderr, "pdf-crops: %s\n", fe_last_error ());
      return 1;
    }
  doc = fm_document_new_for_path (pdf, NULL, &error);
  if (doc == NULL)
    {
      fprintf (stderr, "pdf-crops: %s\n", error->message);
      fe_context_free (ctx);
      return 1;
    }
  rc = run (doc, ctx, rule);
  if (rc != 0)
    fprintf (stderr, "pdf-crops: write failed\n");
  g_object_unref (doc);
  fe_context_free (ctx);
  return rc == 0 ? 0 : 1;
}
