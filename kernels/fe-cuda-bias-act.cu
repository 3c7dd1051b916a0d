/* fe-cuda-bias-act.cu - bias + activation epilogue for GEMM and convolution.
 *
 * cuBLAS writes the f32 product; this pass adds the bias and applies ReLU or
 * the exact (erf) GELU in place. cuBLASLt's fused GELU epilogue is the tanh
 * approximation, which formulate-v1 does not use, hence a separate pass. */
#include "fe-cuda-common.h"

__device__ __forceinline__ float fe_apply_act(float v, int act) {
    if (act == FE_CUDA_ACT_RELU)
        return v > 0.0f ? v : 0.0f;
    if (act == FE_CUDA_ACT_GELU)
        return 0.5f * v * (1.0f + erff(v * 0.70710678118654752f));
    return v;
}

template <typename T>
static __global__ void bias_act_kernel(float *y, int64_t n, const T *bias, int64_t n_bias,
                                       int64_t inner, int act) {
    for (int64_t i = blockIdx.x * (int64_t)blockDim.x + threadIdx.x; i < n;
         i += (int64_t)gridDim.x * blockDim.x) {
        float v = y[i];
        if (bias)
            v += fe_load_f32(bias, (i / inner) % n_bias);
        y[i] = fe_apply_act(v, act);
    }
}

struct BiasActLauncher {
    template <typename T>
    static fe_status run(cudaStream_t stream, float *y, int64_t n, const void *bias,
                         int64_t n_bias, int64_t inner, int act) {
        const int threads = 256;
        bias_act_kernel<T><<<fe_cuda_blocks(n, threads), threads, 0, stream>>>(
            y, n, (const T *)bias, n_bias, inner, act);
        FE_CUDA_CHECK_LAUNCH();
        return FE_OK;
    }
};

extern "C" fe_status fe_cuda_bias_act(FeCudaDevice *dev, float *y, int64_t n, const void *bias,
                                      fe_dtype bias_dtype, int64_t n_bias, int64_t inner,
                                      fe_cuda_act act) {
    if (n <= 0 || (!bias && act == FE_CUDA_ACT_NONE))
        return FE_OK;
    if (bias && (n_bias <= 0 || inner <= 0))
        return fe_cuda_fail(FE_ERR_INVALID_ARGUMENT, "fe_cuda_bias_act: bad bias layout");
    if (!bias)
        bias_dtype = FE_DTYPE_F32;
    return FE_CUDA_DISPATCH_FLOAT(bias_dtype, BiasActLauncher, dev->stream, y, n, bias,
                                  n_bias > 0 ? n_bias : 1, inner > 0 ? inner : 1, (int)act);
}
