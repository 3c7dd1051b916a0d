/* fm-mathtext-delim.h: sized delimiters from their ink, for the text-layer
 * reader (fm-mathtext.c). pdfLaTeX's math extension fonts (CMEX10, LMEX,
 * txexs) put \bigl( at code 0x00, \Biggl( at 0x20, \bigr\} at 0x09,
 * \bigl\langle / \bigr\rangle at 0x0A / 0x0B and build every sized | and \|
 * from the repeaters 0x0C / 0x0D: Poppler's text layer drops these codes
 * (NUL, space and the control codes it takes for white space), so the
 * region holds their ink without a glyph. */
#pragma once

#include <glib.h>

G_BEGIN_DECLS

/* One connected piece of ink: mask[y * width + x] != 0 is ink. */
typedef struct {
  const guint8 *mask;
  int width;
  int height;
} FmInkShape;

/* The delimiter that a tall piece of ink draws: '(' ')' '[' ']' '{' '}',
 * U+27E8 / U+27E9 (angle brackets), U+230A / U+230B (floor), U+2308 / U+2309
 * (ceiling) or '|'; 0 when its shape is none of them. em_px: the pixels of
 * the region's em (strokes and serifs are measured against it). */
gunichar fm_mathtext_delim_shape (const FmInkShape *shape, double em_px);

/* Whether a is b mirrored left to right, within the pixel rounding of two
 * glyphs drawn at different x (the partner of a sized delimiter whose other
 * half the text layer kept: \bigr) for a lost \bigl(). */
gboolean fm_mathtext_delim_mirrors (const FmInkShape *a, const FmInkShape *b);

G_END_DECLS
