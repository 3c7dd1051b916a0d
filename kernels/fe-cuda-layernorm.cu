/* fe-cuda-layernorm.cu - LayerNorm over the last dim (biased variance, as
 * PyTorch). One block per row; two passes over the row (mean, then the
 * centred sum of squares) because the one-pass formula loses digits when the
 * mean is large next to the spread. */
#include "fe-cuda-common.h"

#define FE_LN_THREADS 256

__device__ __forceinline__ float fe_block_sum(float v, float *scratch) {
    for (int o = 16; o > 0; o >>= 1)
        v += __shfl_xor_sync(0xffffffffu, v, o);
    const int warp = threadIdx.x / 32, lane = threadIdx.x % 32;
    __syncthreads();                    /* scratch may still be read by a previous call */
    if (lane == 0)
        scratch[warp] = v;
    __syncthreads();
    const int n_warps = blockDim.x / 32;
    v = lane < n_warps ? scratch[lane] : 0.0f;
    for (int o = 16; o > 0; o >>= 1)
        v += __shfl_xor_sync(0xffffffffu, v, o);
    return v;
}

template <typename T>
static __global__ void layernorm_kernel(float *y, const float *x, const T *gamma, const T *beta,
                                        int D, float eps) {
    __shared__ float scratch[32];
    const float *xr = x + (int64_t)blockIdx.x * D;
    float *yr = y + (int64_t)blockIdx.x * D;
    float s = 0.0f;
    for (int i = threadIdx.x; i < D; i += blockDim.x)
        s += xr[i];
    const float mean = fe_block_sum(s, scratch) / (float)D;
    float ss = 0.0f;
    for (int i = threadIdx.x; i < D; i += blockDim.x) {
        float d = xr[i] - mean;
        ss += d * d;
    }
    const float rstd = rsqrtf(fe_block_sum(ss, scratch) / (float)D + eps);
    /* every thread has read its elements above, so y may alias x */
    for (int i = threadIdx.x; i < D; i += blockDim.x)
        yr[i] = (xr[i] - mean) * rstd * fe_load_f32(gamma, i) + fe_load_f32(beta, i);
}

struct LayerNormLauncher {
    template <typename T>
    static fe_status run(cudaStream_t stream, float *y, const float *x, const void *gamma,
                         const void *beta, int64_t rows, int D, float eps) {
        for (int64_t r0 = 0; r0 < rows; r0 += 65535 * 32) {
            int64_t n = rows - r0 < 65535 * 32 ? rows - r0 : 65535 * 32;
            layernorm_kernel<T><<<(unsigned)n, FE_LN_THREADS, 0, stream>>>(
                y + r0 * D, x + r0 * D, (const T *)gamma, (const T *)beta, D, eps);
            FE_CUDA_CHECK_LAUNCH();
        }
        return FE_OK;
    }
};

extern "C" fe_status fe_cuda_layernorm(FeCudaDevice *dev, float *y, const float *x,
                                       const void *gamma, const void *beta, fe_dtype w_dtype,
                                       int64_t rows, int D, float eps) {
    if (rows <= 0 || D <= 0)
        return FE_OK;
    return FE_CUDA_DISPATCH_FLOAT(w_dtype, LayerNormLauncher, dev->stream, y, x, gamma, beta,
                                  rows, D, eps);
}
