/* fe-preprocess.h - preprocessing internals beyond fe-model.h's: the glyph
 * scale estimate and the candidate scales of fe_recognize's scale search
 * (docs/preprocessing.md). */
#ifndef FE_PREPROCESS_H
#define FE_PREPROCESS_H

#include "fe-model.h"

/* Glyph size (1 em in pixels) as the maximum-likelihood shift of the
 * connected components' (height, width) under the density of
 * fe-scale-prior.h, measured on renders of known glyph size. It needs no
 * constant of the model (unlike fe_estimate_em_px's cc_median_em), so a
 * retrained model keeps it. 0 when there is no ink. */
float fe_estimate_em_px_mle(const float *ink, int width, int height);

/* fe_preprocess_config with the estimated em (images without em_px_hint)
 * multiplied by em_factor: the candidates of the scale search. A hint is
 * used as it is. */
fe_status fe_preprocess_config_em(const FeModelConfig *cfg, const FeImage *image, float em_factor,
                                  float **out, int *out_height, int *out_width, float *out_scale);

#endif /* FE_PREPROCESS_H */
