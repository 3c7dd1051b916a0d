/* fm-mathtext.h - a region's formula read from the PDF's text layer.
 *
 * Born-digital PDFs hold every symbol of a formula: Poppler gives each glyph's
 * character, font, size and box, and fraction bars and radical rules are ink.
 * This reader maps glyphs to LaTeX by their font (docs/text-layer.md) and
 * parses their 2-D layout (baseline, scripts, fractions, radicals, big
 * operators with limits) into the project's normalised token form
 * (tools/data/latex_tokens.py). It says CERTAIN only when every glyph is mapped
 * and the layout left no choice; otherwise the image model should decide,
 * helped by the symbols the glyphs back.
 */
#pragma once

#include "fm-document.h"
#include "fm-region.h"

G_BEGIN_DECLS

typedef enum {
  FM_MATHTEXT_CERTAIN,
  FM_MATHTEXT_UNCERTAIN,
  FM_MATHTEXT_UNAVAILABLE
} FmMathTextVerdict;

typedef struct {
  FmMathTextVerdict verdict;
  char      *latex;    /* the formula in the project's normalised form; NULL only when UNAVAILABLE        */
  char      *reason;   /* why it is not CERTAIN (unknown glyph, no ToUnicode, Type 3 font, ambiguous layout…) */
  gboolean   unsure_spelling; /* UNCERTAIN over a choice between spellings that look alike on the page
                                  (fm-mathtext.c's list of such reasons): an image reading that agrees is no
                                  confirmation of it                                                   */
  GPtrArray *symbols;  /* char*: the LaTeX symbol tokens the glyphs back, one per glyph use (\alpha, x, 2, +, \sum…),
                          for constrained decoding when the image model must take over; may be empty          */
} FmMathTextResult;

/* Takes the document lock itself. Never returns an empty latex: uncertain is better than wrong. */
FmMathTextResult *fm_mathtext_read_region (FmDocument *doc, const FmRegion *region, GError **error);
void              fm_mathtext_result_free  (FmMathTextResult *result);

/* One glyph's LaTeX by its character and (subset-stripped or full) font
 * name: "x" for CMMI's x, "\\mathbb{R}" for MSBM's R, "\\alpha", "\\sum";
 * NULL when the glyph has no known meaning (an unmapped code, a private-use
 * character). Exposed for the per-font-family tests. The result is newly
 * allocated. */
char *fm_mathtext_glyph_latex (gunichar c, const char *font_name);
/* Is word an operator name the reader writes as a command (sin -> \sin)? */
gboolean fm_mathtext_is_operator_word (const char *word);

G_END_DECLS
