/* fe-internal.h - shared by the engine's own files; not installed.
 *
 * Three layers, each in its own files:
 *   weights  (fe-json.c, fe-safetensors.c, fe-pickle.c, fe-zip.c, fe-config.c)
 *            a model file -> FeWeightFile: named host tensors + FeModelConfig + vocab
 *   runtime  (fe-tensor.c, fe-backend.c, fe-cpu.c, fe-cpuid.c, fe-blas.c, fe-ops.c)
 *            devices, buffers, tensors, the backend table and the ops front-end
 *   model    (fe-model.c, fe-decode.c, fe-preprocess.c, fe-tokens.c, fe-api.c)
 *            formulate-v1 built from weights with the ops, decoding, the public API
 */
#ifndef FE_INTERNAL_H
#define FE_INTERNAL_H

/* One header per concern (as ggml splits ggml-impl.h, ggml-backend-impl.h,
 * ggml-cpu.h); engine files include this one, the CUDA module only
 * fe-cuda-module.h -> fe-backend-impl.h -> fe-base.h. */
#include "fe-base.h"
#include "fe-config.h"
#include "fe-backend-impl.h"
#include "fe-cpu.h"
#include "fe-backend-model.h"

#endif /* FE_INTERNAL_H */
