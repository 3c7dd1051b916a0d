/* fm-region.c - found regions and their crops. */
#include "fm-region.h"

FmRegion *
fm_region_new (int page, FmRegionKind kind, const FmRect *box)
{
  FmRegion *region = g_new0 (FmRegion, 1);

  region->page = page;
  region->kind = kind;
  if (box)
    region->box = *box;
  region->label_of = -1;
  region->confidence = -1;
  return region;
}

FmRegion *
fm_region_copy (const FmRegion *region)
{
  FmRegion *copy = g_memdup2 (region, sizeof *region);

  copy->text = g_strdup (region->text);
  copy->latex = g_strdup (region->latex);
  return copy;
}

void
fm_region_free (FmRegion *region)
{
  if (region == NULL)
    return;
  g_free (region->text);
  g_free (region->latex);
  g_free (region);
}

const char *
fm_region_kind_to_string (FmRegionKind kind)
{
  switch (kind)
    {
    case FM_REGION_DISPLAY: return "display";
    case FM_REGION_INLINE: return "inline";
    case FM_REGION_NUMBER: return "number";
    default: return "unknown";
    }
}

const char *
fm_provenance_to_string (FmProvenance provenance)
{
  switch (provenance)
    {
    case FM_PROVENANCE_IMAGE: return "image";
    case FM_PROVENANCE_TEXT: return "text layer";
    case FM_PROVENANCE_TEXT_IMAGE: return "text layer + image model";
    case FM_PROVENANCE_NONE:
    default: return NULL;
    }
}

double
fm_region_crop_scale (const FmRegion *region, int em_px)
{
  return fm_render_scale_for_font (region->font_size, em_px);
}

FmGrayImage *
fm_region_render_crop (FmDocument     *doc,
                       const FmRegion *region,
                       int             em_px,
                       double          margin_em,
                       GError        **error)
{
  double size = region->font_size > 0 ? region->font_size : 10.0;
  double margin = margin_em * size;
  const FmRect *box = region->crop_box.x1 > region->crop_box.x0 &&
                      region->crop_box.y1 > region->crop_box.y0 ? &region->crop_box : &region->box;
  FmRect area = {
    box->x0 - margin, box->y0 - margin,
    box->x1 + margin, box->y1 + margin,
  };

  return fm_render_page_rect_replayed_gray (doc, region->page, &area,
                                            fm_region_crop_scale (region, em_px), error);
}

double
fm_rect_iou (const FmRect *a, const FmRect *b)
{
  double ix = MIN (a->x1, b->x1) - MAX (a->x0, b->x0);
  double iy = MIN (a->y1, b->y1) - MAX (a->y0, b->y0);
  double inter, area_a, area_b;

  if (ix <= 0 || iy <= 0)
    return 0;
  inter = ix * iy;
  area_a = (a->x1 - a->x0) * (a->y1 - a->y0);
  area_b = (b->x1 - b->x0) * (b->y1 - b->y0);
  return inter / (area_a + area_b - inter);
}
