/* fe-cuda-layernorm.cu - LayerNorm over the last dim (biased variance, as
 * PyTorch). One block per row; two passes over the row (mean, then the
 * centred sum of squares) because the one-pass formula loses digits when the
 * mean is large next to the spread. The two sums are kept in double like the
 * CPU backend's: a row is a few hundred elements, so the reductions cost
 * nothing next to the memory traffic even at consumer GPUs' fp64 rate, and a
 * float sum of a row with mean 100 is already off in the 5th digit. */
#include "fe-cuda-common.h"

#define FE_LN_THREADS 256

__device__ __forceinline__ double fe_block_sum(double v, double *scratch) {
    for (int o = 16; o > 0; o >>= 1)
        v += __shfl_xor_sync(0xffffffffu, v, o);
    const int warp = threadIdx.x / 32, lane = threadIdx.x % 32;
    __syncthreads();                    /* scratch may still be read by a previous call */
    if (lane == 0)
        scratch[warp] = v;
    __syncthreads();
    const int n_warps = blockDim.x / 32;
    v = lane < n_warps ? scratch[lane] : 0.0;
    for (int o = 16; o > 0; o >>= 1)
        v += __shfl_xor_sync(0xffffffffu, v, o);
    return v;
}

template <typename T>
static __global__ void layernorm_kernel(float *y, const float *x, const T *gamma, const T *beta,
                                        int D, float eps) {
    __shared__ double scratch[32];
    const float *xr = x + (int64_t)blockIdx.x * D;
    float *yr = y + (int64_t)blockIdx.x * D;
    double s = 0.0;
    for (int i = threadIdx.x; i < D; i += blockDim.x)
        s += xr[i];
    const double mean = fe_block_sum(s, scratch) / (double)D;
    double ss = 0.0;
    for (int i = threadIdx.x; i < D; i += blockDim.x) {
        double d = (double)xr[i] - mean;
        ss += d * d;
    }
    const float rstd = (float)(1.0 / sqrt(fe_block_sum(ss, scratch) / (double)D + (double)eps));
    const float fmean = (float)mean;
    /* every thread has read its elements above, so y may alias x */
    for (int i = threadIdx.x; i < D; i += blockDim.x)
        yr[i] = (xr[i] - fmean) * rstd * fe_load_f32(gamma, i) + fe_load_f32(beta, i);
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
