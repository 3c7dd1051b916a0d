/* fe-backend-model.h - the questions fe-api.c asks the backend that holds a
 * device when it loads a model there, as ggml's device interface answers
 * "supports", "memory" and "type": does the model fit, which precision do
 * the matrices get, is a first run worth doing, how many bytes does the
 * engine hold there.
 *
 * These are not entries of FeBackend (fe-backend-impl.h): that table is the
 * module ABI, and the questions take the model's configuration, which a
 * module never sees (fe-config.h). So every backend kind answers in an
 * engine-side table: the CPU backend for itself (fe-cpu.c), a backend
 * module's devices through the engine's GPU side (fe-cuda-loader.c: the VRAM
 * plan and the module's extras). fe_backend_model_ops() gives the table of
 * a device's backend. Not installed. */
#ifndef FE_BACKEND_MODEL_H
#define FE_BACKEND_MODEL_H

#include "fe-backend-impl.h"
#include "fe-config.h"

/* What the loader does with the asked precision on a device. */
typedef struct {
    fe_precision precision;        /* what the runtime info reports            */
    fe_dtype matrix_dtype;         /* linear / conv weights, embedding tables  */
    bool cpu_bf16_dot;             /* bf16 weights multiplied in bf16 (CPU)    */
    char note[160];                /* a warning for the context's log, or ""  */
} FeMatrixChoice;

typedef struct {
    /* FE_OK when a model of cfg in that precision fits on the device for
     * `states` states decoding up to `beams` rows each; otherwise the error
     * says why (the device choice "auto" then uses the CPU). NULL: always. */
    fe_status (*model_fits)(FeDevice *dev, const FeModelConfig *cfg, fe_precision precision,
                            int states, int beams);
    /* The precision the matrices are kept in for the asked one. */
    void (*choose_matrices)(FeDevice *dev, fe_precision asked, FeMatrixChoice *out);
    /* Whether a small first run right after loading pays off (first-use
     * costs of a GPU, fe-api.c fe_context_warm_up). NULL: no. */
    bool (*wants_warm_up)(const FeDevice *dev);
    /* Bytes the engine holds on the device, given what the context counts
     * itself (weights + states). NULL: that count. */
    uint64_t (*engine_bytes)(FeDevice *dev, uint64_t counted);
} FeBackendModelOps;

extern const FeBackendModelOps fe_cpu_model_ops;    /* fe-cpu.c         */
extern const FeBackendModelOps fe_module_model_ops; /* fe-cuda-loader.c */

/* The table of the device's backend: the CPU's for the CPU device, the
 * module side's for a backend module's device. */
const FeBackendModelOps *fe_backend_model_ops(const FeDevice *dev);

/* The FeDeviceInfo of an open device (fe_devices_list's entry; the CPU's
 * without listing, which would load the CUDA module). */
fe_status fe_device_info_of(FeDevice *dev, FeDeviceInfo *out);

#endif /* FE_BACKEND_MODEL_H */
