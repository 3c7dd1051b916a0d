/* fm-glyph-net.h - the glyph net of the scanned pages' word classifier
 * (fm-scan.c): whether a word's pixels look like math, from its glyph crop
 * (word_glyphs), beside what the word classifier makes of Tesseract's
 * reading. Weights: fm-scan-glyphs.h (tools/pdf-truth/train-scan-glyphs.py).
 */
#pragma once

#include <glib.h>

G_BEGIN_DECLS

/* The crop the net reads: rows x columns, 8-bit, ink high, paper 0. */
#define FM_GLYPH_NET_ROWS 24
#define FM_GLYPH_NET_COLS 96

/* The net's logit that the word in glyphs is math (positive: math).
 * Thread-safe: scratch on the stack of the caller's thread. */
float fm_glyph_net_logit (const guint8 *glyphs);

/* The weights of the final logit: a the word classifier's logit, b the
 * glyph net's, c the bias; single: the single-letter words' (the first
 * reading's) or the others' (the mean of the two readings'). */
void fm_glyph_net_weights (gboolean single, float *a, float *b, float *c);

/* For the test that the forward pass is the trained net's: the crop the
 * training script computed a logit of, and that logit. */
void  fm_glyph_net_check_crop (guint8 *glyphs);
float fm_glyph_net_check_logit (void);

G_END_DECLS
