/* fe-cuda-embed.cu - decoder step input (token embedding gather + learned
 * position) and the KV-cache row write. */
#include "fe-cuda-common.h"

template <typename T>
static __global__ void embed_kernel(float *y, const T *table, const T *pos, const void *ids,
                                    bool ids_i64, int D, int V, int position, int *error_flag) {
    const int b = blockIdx.x;
    int64_t id = ids_i64 ? ((const int64_t *)ids)[b] : (int64_t)((const int32_t *)ids)[b];
    float *yr = y + (int64_t)b * D;
    if (id < 0 || id >= V) {
        /* ids live on the device, so the check happens here; the host sees
         * the flag at the next synchronize and reports it */
        if (threadIdx.x == 0)
            atomicOr(error_flag, FE_CUDA_FLAG_BAD_TOKEN_ID);
        for (int d = threadIdx.x; d < D; d += blockDim.x)
            yr[d] = 0.0f;
        return;
    }
    for (int d = threadIdx.x; d < D; d += blockDim.x)
        yr[d] = fe_load_f32(table, id * D + d) + fe_load_f32(pos, (int64_t)position * D + d);
}

template <typename T> struct EmbedTyped {
    static fe_status launch(cudaStream_t stream, float *y, const void *table, const void *pos,
                            const void *ids, bool ids_i64, int B, int D, int V, int position,
                            int *error_flag) {
        int threads = D < 256 ? ((D + 31) / 32) * 32 : 256;
        embed_kernel<T><<<B, threads, 0, stream>>>(y, (const T *)table, (const T *)pos, ids,
                                                   ids_i64, D, V, position, error_flag);
        FE_CUDA_CHECK_LAUNCH();
        return FE_OK;
    }
};

struct EmbedLauncher {
    template <typename T>
    static fe_status run(cudaStream_t stream, float *y, const void *table, const void *pos,
                         const void *ids, bool ids_i64, int B, int D, int V, int position,
                         int *error_flag) {
        return EmbedTyped<T>::launch(stream, y, table, pos, ids, ids_i64, B, D, V, position,
                                     error_flag);
    }
};

extern "C" fe_status fe_cuda_embed(FeCudaDevice *dev, float *y, const void *table,
                                   fe_dtype table_dtype, const void *pos, fe_dtype pos_dtype,
                                   const void *ids, bool ids_i64, int B, int D, int V,
                                   int position) {
    if (B <= 0 || D <= 0)
        return FE_OK;
    if (table_dtype != pos_dtype)
        return fe_cuda_fail(FE_ERR_UNSUPPORTED,
                            "fe_cuda_embed: token and position tables differ in dtype");
    return FE_CUDA_DISPATCH_FLOAT(table_dtype, EmbedLauncher, dev->stream, y, table, pos, ids,
                                  ids_i64, B, D, V, position, dev->error_flag);
}

/* cache [B, Tmax, D] <- rows [B, D] at row `pos` of every batch item: a
 * strided 2-D copy, which the copy engine does without a kernel. */
static fe_status launch_kv_write(cudaStream_t stream, float *cache, const float *rows, int B,
                                 int Tmax, int D, int pos) {
    FE_CUDA_CHECK(cudaMemcpy2DAsync(cache + (int64_t)pos * D, (size_t)Tmax * D * sizeof(float),
                                    rows, (size_t)D * sizeof(float), (size_t)D * sizeof(float),
                                    (size_t)B, cudaMemcpyDeviceToDevice, stream));
    return FE_OK;
}

extern "C" fe_status fe_cuda_kv_write(FeCudaDevice *dev, float *cache, const float *rows, int B,
                                      int Tmax, int D, int pos) {
    if (B <= 0 || D <= 0)
        return FE_OK;
    if (pos < 0 || pos >= Tmax)
        return fe_cuda_fail(FE_ERR_INVALID_ARGUMENT,
                            "fe_cuda_kv_write: position %d outside the cache of %d rows", pos,
                            Tmax);
    return launch_kv_write(dev->stream, cache, rows, B, Tmax, D, pos);
}
