/* fe-cuda-topk.cu - the k best (value, index) pairs per row, best first,
 * ties to the lower index (the CPU backend's order, so beams agree).
 *
 * k is the beam width (small), N the vocabulary: one block per row makes k
 * passes, each a block-wide arg-max over the entries ranked after the
 * previous winner. No sort buffer, no atomics, deterministic. NaN ranks last. */
#include "fe-cuda-common.h"

#include <climits>

#define FE_TOPK_THREADS 256

/* (va, ia) ranks before (vb, ib) */
__device__ __forceinline__ bool fe_ranks_before(float va, int ia, float vb, int ib) {
    return va > vb || (va == vb && ia < ib);
}

static __global__ void topk_kernel(float *values, int32_t *indices, const float *x, int N,
                                   int k) {
    __shared__ float sv[FE_TOPK_THREADS];
    __shared__ int si[FE_TOPK_THREADS];
    const float *xr = x + (int64_t)blockIdx.x * N;
    float prev_v = INFINITY;
    int prev_i = -1;
    for (int t = 0; t < k; t++) {
        float best_v = -INFINITY;
        int best_i = INT_MAX;
        for (int j = threadIdx.x; j < N; j += blockDim.x) {
            float v = xr[j];
            if (isnan(v))
                v = -INFINITY;
            bool after_prev = t == 0 || fe_ranks_before(prev_v, prev_i, v, j);
            if (after_prev && fe_ranks_before(v, j, best_v, best_i))
                best_v = v, best_i = j;
        }
        sv[threadIdx.x] = best_v;
        si[threadIdx.x] = best_i;
        __syncthreads();
        for (int s = blockDim.x / 2; s > 0; s >>= 1) {
            if (threadIdx.x < s &&
                fe_ranks_before(sv[threadIdx.x + s], si[threadIdx.x + s], sv[threadIdx.x],
                                si[threadIdx.x])) {
                sv[threadIdx.x] = sv[threadIdx.x + s];
                si[threadIdx.x] = si[threadIdx.x + s];
            }
            __syncthreads();
        }
        prev_v = sv[0];
        prev_i = si[0];
        if (threadIdx.x == 0) {
            values[(int64_t)blockIdx.x * k + t] = prev_v;
            indices[(int64_t)blockIdx.x * k + t] = prev_i;
        }
        __syncthreads();
    }
}

static fe_status launch_topk(cudaStream_t stream, float *values, int32_t *indices,
                             const float *x, int B, int N, int k) {
    topk_kernel<<<B, FE_TOPK_THREADS, 0, stream>>>(values, indices, x, N, k);
    FE_CUDA_CHECK_LAUNCH();
    return FE_OK;
}

extern "C" fe_status fe_cuda_topk(FeCudaDevice *dev, float *values, int32_t *indices,
                                  const float *x, int B, int N, int k) {
    if (B <= 0)
        return FE_OK;
    if (k <= 0 || k > N)
        return fe_cuda_fail(FE_ERR_INVALID_ARGUMENT, "fe_cuda_topk: k = %d of %d", k, N);
    return launch_topk(dev->stream, values, indices, x, B, N, k);
}
