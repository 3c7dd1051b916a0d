/* fe-cuda-loader.h - the engine's side of the CUDA module (fe-cuda-loader.c).
 *
 * fe-backend.c dlopen()s libformulate-cuda.so and registers its generic
 * FeBackendModule. This file adds what is CUDA-specific and must work on any
 * machine, GPU or not:
 *   - the VRAM plan of a model (weights in the device precision, activation
 *     arenas, KV caches, workspace) and the check against a device's free
 *     memory, which the device choice uses to fall back to the CPU; the
 *     environment variable FE_CUDA_FAKE_FREE_MB=N caps the free memory seen by
 *     the check at N MiB so the fallback can be tested anywhere;
 *   - the module's extras (engine bytes on the device, trim, CUDA graphs),
 *     found with dladdr() on a device's backend table, so they need no second
 *     search for the library.
 */
#ifndef FE_CUDA_LOADER_H
#define FE_CUDA_LOADER_H

#include "fe-internal.h"

typedef struct {
    uint64_t weights;        /* every tensor of the model in the precision      */
    uint64_t activations;    /* encoder arena (CNN ping-pong + transformer) x states */
    uint64_t kv_cache;       /* cross K/V x states + self K/V for the beams      */
    uint64_t workspace;      /* im2col / operand conversion + cuBLAS workspace   */
    uint64_t margin;         /* allocator rounding and fragmentation             */
    uint64_t total;
} FeCudaVramPlan;

/* Bytes formulate-v1 needs on a GPU for that config: `states` FeStates each
 * decoding up to `beams` rows. precision AUTO means fp16. */
fe_status fe_cuda_plan_vram(const FeModelConfig *cfg, fe_precision precision, int states,
                            int beams, FeCudaVramPlan *out);

/* free_bytes capped by FE_CUDA_FAKE_FREE_MB when that is set to a number. */
uint64_t fe_cuda_effective_free(uint64_t free_bytes);

/* FE_OK when the plan fits in free_bytes (after fe_cuda_effective_free);
 * otherwise FE_ERR_OUT_OF_MEMORY with a message such as "cuda:0: the model
 * needs 212 MiB (weights 12, activations 170, KV cache 18, workspace 12),
 * 10 MiB free". */
fe_status fe_cuda_check_plan(const char *device_id, const FeCudaVramPlan *plan,
                             uint64_t free_bytes);

/* The same against a live device's memory_info: the call the device choice
 * makes before loading weights onto a GPU. */
fe_status fe_cuda_device_fits(FeDevice *dev, const FeModelConfig *cfg, fe_precision precision,
                              int states, int beams);

/* Module extras. A device that is not a CUDA module device answers 0 /
 * FE_ERR_UNSUPPORTED. */
bool fe_cuda_is_device(const FeDevice *dev);
uint64_t fe_cuda_engine_bytes(FeDevice *dev);
fe_status fe_cuda_trim(FeDevice *dev);
fe_status fe_cuda_set_tf32(FeDevice *dev, bool allow);

typedef struct FeCudaGraph FeCudaGraph;
/* Records the ops issued on dev between begin and end into a CUDA graph
 * (no transfers, synchronisation or workspace growth in between) and replays
 * them with one launch; the recorded ops keep their pointers and params. */
fe_status fe_cuda_graph_begin(FeDevice *dev);
fe_status fe_cuda_graph_end(FeDevice *dev, FeCudaGraph **out);
fe_status fe_cuda_graph_launch(FeDevice *dev, FeCudaGraph *graph);
void fe_cuda_graph_free(FeDevice *dev, FeCudaGraph *graph);

#endif /* FE_CUDA_LOADER_H */
