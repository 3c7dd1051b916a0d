/* fe-cuda-module.h - what libformulate-cuda.so offers beyond the generic
 * backend-module hook of fe-backend-impl.h (FeBackendModule / FE_CUDA_MODULE_ENTRY).
 *
 * Plain C so that both sides can include it: the module (CUDA C++, kernels/)
 * and the engine's loader (engine/fe-cuda-loader.c). The engine is a static
 * library with hidden symbols, so the module never calls engine functions; the
 * loader looks these extras up with dlsym(FE_CUDA_MODULE_EXTRAS_ENTRY) after
 * the generic entry has been resolved.
 */
#ifndef FE_CUDA_MODULE_H
#define FE_CUDA_MODULE_H

#ifdef __cplusplus
extern "C" {
#endif

#include "fe-backend-impl.h"

#define FE_CUDA_EXTRAS_ABI_VERSION 1
#define FE_CUDA_MODULE_EXTRAS_ENTRY "fe_cuda_module_extras"

typedef struct FeCudaGraph FeCudaGraph;

typedef struct {
    int abi_version;                    /* FE_CUDA_EXTRAS_ABI_VERSION            */
    int runtime_version;                /* CUDART_VERSION the module was built with */
    /* Bytes the module holds on the device for the engine: live buffers plus
     * its scratch (conversion / im2col workspace). */
    uint64_t (*engine_bytes)(FeDevice *dev);
    /* Frees the scratch workspace and pinned staging buffers now. The module
     * also does this by itself when the last buffer of a device is freed, so
     * unloading a model returns the device to its level before loading. */
    fe_status (*trim)(FeDevice *dev);
    /* CUDA graphs: records every op issued on dev between begin and end (no
     * synchronisation, no allocation in between) and replays it with one
     * launch. The recorded ops keep their pointers and parameters. */
    fe_status (*graph_begin)(FeDevice *dev);
    fe_status (*graph_end)(FeDevice *dev, FeCudaGraph **out);
    fe_status (*graph_launch)(FeDevice *dev, FeCudaGraph *graph);
    void (*graph_free)(FeCudaGraph *graph);
    /* fp32 GEMMs use TF32 tensor cores (default) or exact fp32. */
    void (*set_tf32)(FeDevice *dev, bool allow);
} FeCudaModuleExtras;

typedef const FeCudaModuleExtras *(*FeCudaModuleExtrasEntry)(void);

#ifdef __cplusplus
}
#endif

#endif /* FE_CUDA_MODULE_H */
