/* fe-cuda-softmax.cu - softmax / log-softmax over the last dim, one block
 * per row (rows are the vocabulary logits of each beam: a few hundred to a
 * few thousand entries). */
#include "fe-cuda-common.h"

#define FE_SM_THREADS 256

__device__ __forceinline__ float fe_block_reduce(float v, float *scratch, bool is_max) {
    for (int o = 16; o > 0; o >>= 1) {
        float other = __shfl_xor_sync(0xffffffffu, v, o);
        v = is_max ? fmaxf(v, other) : v + other;
    }
    const int warp = threadIdx.x / 32, lane = threadIdx.x % 32;
    __syncthreads();
    if (lane == 0)
        scratch[warp] = v;
    __syncthreads();
    const int n_warps = blockDim.x / 32;
    v = lane < n_warps ? scratch[lane] : (is_max ? -INFINITY : 0.0f);
    for (int o = 16; o > 0; o >>= 1) {
        float other = __shfl_xor_sync(0xffffffffu, v, o);
        v = is_max ? fmaxf(v, other) : v + other;
    }
    return v;
}

template <bool LOG>
static __global__ void softmax_kernel(float *y, const float *x, int N) {
    __shared__ float scratch[32];
    const float *xr = x + (int64_t)blockIdx.x * N;
    float *yr = y + (int64_t)blockIdx.x * N;
    float m = -INFINITY;
    for (int i = threadIdx.x; i < N; i += blockDim.x)
        m = fmaxf(m, xr[i]);
    m = fe_block_reduce(m, scratch, true);
    float s = 0.0f;
    for (int i = threadIdx.x; i < N; i += blockDim.x)
        s += expf(xr[i] - m);
    s = fe_block_reduce(s, scratch, false);
    if (LOG) {
        const float lse = m + logf(s);
        for (int i = threadIdx.x; i < N; i += blockDim.x)
            yr[i] = xr[i] - lse;
    } else {
        const float inv = 1.0f / s;
        for (int i = threadIdx.x; i < N; i += blockDim.x)
            yr[i] = expf(xr[i] - m) * inv;
    }
}

static fe_status launch_softmax(cudaStream_t stream, float *y, const float *x, int64_t rows,
                                int N, bool log_softmax) {
    for (int64_t r0 = 0; r0 < rows; r0 += 65535 * 32) {
        unsigned n = (unsigned)(rows - r0 < 65535 * 32 ? rows - r0 : 65535 * 32);
        if (log_softmax)
            softmax_kernel<true><<<n, FE_SM_THREADS, 0, stream>>>(y + r0 * N, x + r0 * N, N);
        else
            softmax_kernel<false><<<n, FE_SM_THREADS, 0, stream>>>(y + r0 * N, x + r0 * N, N);
        FE_CUDA_CHECK_LAUNCH();
    }
    return FE_OK;
}

extern "C" fe_status fe_cuda_softmax(FeCudaDevice *dev, float *y, const float *x, int64_t rows,
                                     int N, bool log_softmax) {
    if (rows <= 0 || N <= 0)
        return FE_OK;
    return launch_softmax(dev->stream, y, x, rows, N, log_softmax);
}
