/* fm-region.h - one found formula (or equation number) on a page. */
#pragma once

#include "fm-render.h"

G_BEGIN_DECLS

typedef enum {
  FM_REGION_DISPLAY,   /* a formula on its own line(s)                  */
  FM_REGION_INLINE,    /* a formula inside a line of text               */
  FM_REGION_NUMBER,    /* an equation number such as (3.1)              */
} FmRegionKind;

/* Where a formula's LaTeX came from, so a person knows why to trust it. */
typedef enum {
  FM_PROVENANCE_NONE = 0,     /* not recognised (yet)                         */
  FM_PROVENANCE_IMAGE,        /* the image model read the rendered crop       */
  FM_PROVENANCE_TEXT,         /* the PDF's text layer, read with certainty    */
  FM_PROVENANCE_TEXT_IMAGE,   /* the text layer was unsure: the model decided */
} FmProvenance;

typedef struct {
  int page;              /* 0-based page index                              */
  FmRegionKind kind;
  FmRect box;            /* PDF points, displayed page, origin top-left     */
  double font_size;      /* median font size of its glyphs, points          */
  char *text;            /* what the text layer says is there (UTF-8)       */
  int label_of;          /* NUMBER: index of the display region it labels, else -1 */
  /* What recognition crops (fm_recognize_prepare_page); empty = box. */
  FmRect crop_box;
  /* Filled by recognition; latex NULL until then. */
  char *latex;
  double confidence;
  double recognize_ms;
  FmProvenance provenance;
} FmRegion;

FmRegion   *fm_region_new  (int page, FmRegionKind kind, const FmRect *box);
FmRegion   *fm_region_copy (const FmRegion *region);
void        fm_region_free (FmRegion *region);
G_DEFINE_AUTOPTR_CLEANUP_FUNC (FmRegion, fm_region_free)

const char *fm_region_kind_to_string (FmRegionKind kind);
/* "image", "text layer", "text layer + image model"; NULL for NONE. */
const char *fm_provenance_to_string  (FmProvenance provenance);

/* Scale the crop of a region is rendered at: fm_render_scale_for_font of its
 * font size, so that one em is em_px pixels. */
double      fm_region_crop_scale (const FmRegion *region, int em_px);

/* The region's crop (crop_box, or box when crop_box is empty) with
 * margin_em ems of white around it, in 8-bit gray. */
FmGrayImage *fm_region_render_crop (FmDocument     *doc,
                                    const FmRegion *region,
                                    int             em_px,
                                    double          margin_em,
                                    GError        **error);

/* Intersection over union of two boxes (0 when either is empty). */
double      fm_rect_iou (const FmRect *a, const FmRect *b);

G_END_DECLS
