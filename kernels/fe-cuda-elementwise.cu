/* fe-cuda-elementwise.cu - GELU, broadcast add and f32 -> f16/bf16 conversion. */
#include "fe-cuda-common.h"

static __global__ void gelu_kernel(float *y, const float *x, int64_t n) {
    for (int64_t i = blockIdx.x * (int64_t)blockDim.x + threadIdx.x; i < n;
         i += (int64_t)gridDim.x * blockDim.x) {
        float v = x[i];
        /* exact erf form, as PyTorch's nn.GELU() default */
        y[i] = 0.5f * v * (1.0f + erff(v * 0.70710678118654752f));
    }
}

static fe_status launch_gelu(cudaStream_t stream, float *y, const float *x, int64_t n) {
    const int threads = 256;
    gelu_kernel<<<fe_cuda_blocks(n, threads), threads, 0, stream>>>(y, x, n);
    FE_CUDA_CHECK_LAUNCH();
    return FE_OK;
}

extern "C" fe_status fe_cuda_gelu(FeCudaDevice *dev, float *y, const float *x, int64_t n) {
    if (n <= 0)
        return FE_OK;
    return launch_gelu(dev->stream, y, x, n);
}

template <typename T>
static __global__ void add_kernel(float *y, const float *a, const T *b, int64_t n, int64_t nb) {
    for (int64_t i = blockIdx.x * (int64_t)blockDim.x + threadIdx.x; i < n;
         i += (int64_t)gridDim.x * blockDim.x)
        y[i] = a[i] + fe_load_f32(b, i % nb);
}

struct AddLauncher {
    template <typename T>
    static fe_status run(cudaStream_t stream, float *y, const float *a, const void *b, int64_t n,
                         int64_t nb) {
        const int threads = 256;
        add_kernel<T><<<fe_cuda_blocks(n, threads), threads, 0, stream>>>(y, a, (const T *)b, n,
                                                                          nb);
        FE_CUDA_CHECK_LAUNCH();
        return FE_OK;
    }
};

extern "C" fe_status fe_cuda_add(FeCudaDevice *dev, float *y, const float *a, const void *b,
                                 fe_dtype b_dtype, int64_t n, int64_t nb) {
    if (n <= 0)
        return FE_OK;
    if (nb <= 0 || n % nb != 0)
        return fe_cuda_fail(FE_ERR_INVALID_ARGUMENT,
                            "fe_cuda_add: %lld elements do not broadcast over %lld",
                            (long long)n, (long long)nb);
    return FE_CUDA_DISPATCH_FLOAT(b_dtype, AddLauncher, dev->stream, y, a, b, n, nb);
}

template <typename T>
static __global__ void convert_kernel(T *dst, const float *src, int64_t n) {
    for (int64_t i = blockIdx.x * (int64_t)blockDim.x + threadIdx.x; i < n;
         i += (int64_t)gridDim.x * blockDim.x)
        dst[i] = fe_from_f32<T>(src[i]);
}

struct ConvertLauncher {
    template <typename T>
    static fe_status run(cudaStream_t stream, void *dst, const float *src, int64_t n) {
        const int threads = 256;
        convert_kernel<T><<<fe_cuda_blocks(n, threads), threads, 0, stream>>>((T *)dst, src, n);
        FE_CUDA_CHECK_LAUNCH();
        return FE_OK;
    }
};

extern "C" fe_status fe_cuda_convert_from_f32(FeCudaDevice *dev, void *dst, fe_dtype dtype,
                                              const float *src, int64_t n) {
    if (n <= 0)
        return FE_OK;
    if (!fe_cuda_is_float_dtype(dtype))
        return fe_cuda_fail(FE_ERR_UNSUPPORTED, "fe_cuda_convert_from_f32: dtype %d", (int)dtype);
    return FE_CUDA_DISPATCH_FLOAT(dtype, ConvertLauncher, dev->stream, dst, src, n);
}
