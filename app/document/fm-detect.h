/* fm-detect.h - find formulas in born-digital PDF pages from the text layer.
 *
 * The method (docs/detection.md): classify every glyph of Poppler's text layout
 * by font and character, cut Poppler's lines into chunks at wide gaps, call
 * math-dominated chunks with no text beside them display formulas (merging
 * stacked ones into one block: fractions, limits, aligned rows), find inline
 * runs inside text chunks, pair equation numbers with displays, and fit each
 * box to the ink of one render of the page so that rules the text layer does
 * not know about (fraction bars, radical overlines) are inside.
 */
#pragma once

#include "fm-region.h"

G_BEGIN_DECLS

typedef enum {
  FM_DETECT_RULE_FULL,               /* ours                                    */
  FM_DETECT_RULE_PDFMATHTRANSLATE,   /* the bare font rule, for the bench       */
} FmDetectRule;

typedef struct {
  FmDetectRule rule;
  gboolean refine_with_bitmap;       /* fit boxes to rendered ink (default on)  */
} FmDetectOptions;

FmDetectOptions fm_detect_default_options (void);

/* Regions of one page (0-based), in reading order, as a GPtrArray of FmRegion
 * (owning). A page without any text gives FM_DOCUMENT_ERROR_NO_TEXT_LAYER. */
GPtrArray *fm_detect_page (FmDocument            *doc,
                           int                    page_index,
                           const FmDetectOptions *options,
                           GError               **error);

/* Gives back the page-sized scratch maps that detection keeps between pages
 * (call when a document's detection has ended and no page is being
 * detected by this caller; another document's detection may go on). */
void fm_detect_release_scratch (void);

G_END_DECLS
