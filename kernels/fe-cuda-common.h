/* fe-cuda-common.h - shared by the .cu files of libformulate-cuda.so.
 *
 * Every kernel family (one .cu each) has a `static __global__` kernel, a
 * `static` launcher that takes a cudaStream_t, and an `extern "C"` entry
 * fe_cuda_<op>(FeCudaDevice *dev, ...) that the op dispatcher
 * (fe-cuda-backend.cu) calls. Entries only enqueue work on the device's
 * stream; errors come back as fe_status with a message set through the
 * engine's host table (never abort()).
 */
#ifndef FE_CUDA_COMMON_H
#define FE_CUDA_COMMON_H

#include <cublas_v2.h>
#include <cuda_bf16.h>
#include <cuda_fp16.h>
#include <cuda_runtime.h>

#include <mutex>

#include "fe-cuda-module.h"

/* The engine's host table, set by the module entry point. */
extern const FeBackendHost *fe_cuda_host;

/* ------------------------------------------------------------------------ */
/* Errors                                                                   */

extern "C" fe_status fe_cuda_report(cudaError_t err, const char *call, const char *file, int line);
extern "C" fe_status fe_cublas_report(cublasStatus_t st, const char *call, const char *file,
                                      int line);
/* Formats a message through the host table (or stderr before it is set). */
extern "C" fe_status fe_cuda_fail(fe_status status, const char *fmt, ...)
    __attribute__((format(printf, 2, 3)));

/* Turn every CUDA / cuBLAS status into an engine error naming the call, the
 * file and the line, and return it from the enclosing function. */
#define FE_CUDA_CHECK(call)                                                    \
    do {                                                                       \
        cudaError_t fe__err = (call);                                          \
        if (fe__err != cudaSuccess)                                            \
            return fe_cuda_report(fe__err, #call, __FILE__, __LINE__);         \
    } while (0)

#define FE_CUBLAS_CHECK(call)                                                  \
    do {                                                                       \
        cublasStatus_t fe__st = (call);                                        \
        if (fe__st != CUBLAS_STATUS_SUCCESS)                                   \
            return fe_cublas_report(fe__st, #call, __FILE__, __LINE__);        \
    } while (0)

/* After a <<<>>> launch: launch-configuration errors show up here. */
#define FE_CUDA_CHECK_LAUNCH() FE_CUDA_CHECK(cudaGetLastError())

#define FE_CUDA_TRY(expr)                                                      \
    do {                                                                       \
        fe_status fe__s = (expr);                                              \
        if (fe__s != FE_OK)                                                    \
            return fe__s;                                                      \
    } while (0)

/* ------------------------------------------------------------------------ */
/* The device                                                               */

typedef struct FeCudaAllocation {
    void *ptr;
    size_t size;
} FeCudaAllocation;

/* One per CUDA ordinal, created on first open and kept for the process. The
 * FeDevice comes first so that a FeDevice * from the engine is one of these. */
typedef struct FeCudaDevice {
    FeDevice base;
    int ordinal;
    int cc_major, cc_minor;
    std::mutex *lock;              /* one stream and one cuBLAS handle: serialise */
    cudaStream_t stream;
    cublasHandle_t cublas;
    void *cublas_workspace;        /* ours, so graph capture never makes cuBLAS allocate */
    bool allow_tf32;
    bool capturing;                /* inside graph_begin / graph_end          */
    /* scratch for operand conversion and im2col, grown on demand */
    void *workspace;
    size_t workspace_size;
    /* pinned staging for uploads / downloads: two halves, double buffered */
    void *staging;
    size_t staging_size;
    cudaEvent_t staging_done[2];
    /* device flag set by kernels that find bad input (embedding ids) */
    int *error_flag;
    /* live allocations handed to the engine */
    FeCudaAllocation *allocs;
    size_t n_allocs, cap_allocs;
    uint64_t alloc_bytes;
} FeCudaDevice;

static inline FeCudaDevice *fe_cuda_dev(FeDevice *dev) {
    return (FeCudaDevice *)dev;
}

/* Makes sure dev->workspace holds at least `bytes` (reallocates when not
 * capturing a graph; during capture a growth is an error). */
extern "C" fe_status fe_cuda_workspace(FeCudaDevice *dev, size_t bytes, void **out);

/* Error-flag bits kernels may set (checked at synchronize). */
#define FE_CUDA_FLAG_BAD_TOKEN_ID 1

/* ------------------------------------------------------------------------ */
/* Element types                                                            */

/* Weights on the GPU are f16, bf16 or f32; activations are always f32. */
template <typename T> __device__ __forceinline__ float fe_load_f32(const T *p, int64_t i);
template <> __device__ __forceinline__ float fe_load_f32<float>(const float *p, int64_t i) {
    return p[i];
}
template <> __device__ __forceinline__ float fe_load_f32<__half>(const __half *p, int64_t i) {
    return __half2float(p[i]);
}
template <>
__device__ __forceinline__ float fe_load_f32<__nv_bfloat16>(const __nv_bfloat16 *p, int64_t i) {
    return __bfloat162float(p[i]);
}

template <typename T> __device__ __forceinline__ T fe_from_f32(float v);
template <> __device__ __forceinline__ float fe_from_f32<float>(float v) { return v; }
template <> __device__ __forceinline__ __half fe_from_f32<__half>(float v) {
    return __float2half_rn(v);
}
template <> __device__ __forceinline__ __nv_bfloat16 fe_from_f32<__nv_bfloat16>(float v) {
    return __float2bfloat16_rn(v);
}

static inline bool fe_cuda_is_float_dtype(fe_dtype d) {
    return d == FE_DTYPE_F32 || d == FE_DTYPE_F16 || d == FE_DTYPE_BF16;
}

static inline size_t fe_cuda_dtype_size(fe_dtype d) {
    switch (d) {
    case FE_DTYPE_F32: case FE_DTYPE_I32: return 4;
    case FE_DTYPE_F16: case FE_DTYPE_BF16: case FE_DTYPE_I16: return 2;
    case FE_DTYPE_F64: case FE_DTYPE_I64: return 8;
    case FE_DTYPE_I8: case FE_DTYPE_U8: case FE_DTYPE_BOOL: return 1;
    case FE_DTYPE_COUNT: default: return 0;
    }
}

/* cuBLAS element type of a float dtype. */
static inline cudaDataType_t fe_cuda_data_type(fe_dtype d) {
    return d == FE_DTYPE_F16 ? CUDA_R_16F : d == FE_DTYPE_BF16 ? CUDA_R_16BF : CUDA_R_32F;
}

/* Calls F::template run<T>(args...) with T the C++ type of a float dtype. */
#define FE_CUDA_DISPATCH_FLOAT(dtype, F, ...)                                  \
    ((dtype) == FE_DTYPE_F16    ? F::template run<__half>(__VA_ARGS__)         \
     : (dtype) == FE_DTYPE_BF16 ? F::template run<__nv_bfloat16>(__VA_ARGS__)  \
                                : F::template run<float>(__VA_ARGS__))

static inline unsigned fe_cuda_blocks(int64_t n, int threads) {
    int64_t b = (n + threads - 1) / threads;
    return (unsigned)(b > 65535 * 16 ? 65535 * 16 : b); /* kernels grid-stride */
}

/* ------------------------------------------------------------------------ */
/* Entry points (one family per .cu)                                        */

extern "C" {

/* Activation op for epilogues. */
typedef enum { FE_CUDA_ACT_NONE = 0, FE_CUDA_ACT_RELU, FE_CUDA_ACT_GELU } fe_cuda_act;

/* fe-cuda-bias-act.cu: y[i] = act(y[i] + bias[(i / inner) % n_bias]) over n elements;
 * bias may be NULL (activation only). */
fe_status fe_cuda_bias_act(FeCudaDevice *dev, float *y, int64_t n, const void *bias,
                           fe_dtype bias_dtype, int64_t n_bias, int64_t inner, fe_cuda_act act);

/* fe-cuda-elementwise.cu */
fe_status fe_cuda_gelu(FeCudaDevice *dev, float *y, const float *x, int64_t n);
/* y = a + b[i % nb]; b f32 or a float weight dtype. */
fe_status fe_cuda_add(FeCudaDevice *dev, float *y, const float *a, const void *b,
                      fe_dtype b_dtype, int64_t n, int64_t nb);
/* f32 -> dtype (f16/bf16/f32) into dst. */
fe_status fe_cuda_convert_from_f32(FeCudaDevice *dev, void *dst, fe_dtype dtype,
                                   const float *src, int64_t n);

/* fe-cuda-gemm.cu: y[M,N] = x[M,K] w[N,K]^T (+ bias, + gelu). fp16/bf16
 * operands with fp32 accumulation, or fp32 with TF32 tensor cores. */
fe_status fe_cuda_gemm(FeCudaDevice *dev, float *y, const float *x, const void *w,
                       fe_dtype w_dtype, const void *bias, fe_dtype bias_dtype, int64_t M,
                       int N, int K, bool gelu);
/* Row-major C[m,n] (ldc) = A[m,k] (lda) * B[n,k]^T (ldb), batched with
 * strides; operands already in `dtype`, C f32. For the GEMM users. */
fe_status fe_cuda_gemm_raw(FeCudaDevice *dev, bool b_trans, int m, int n, int k,
                           const void *a, int64_t lda, int64_t stride_a, const void *b,
                           int64_t ldb, int64_t stride_b, float *c, int64_t ldc,
                           int64_t stride_c, int batch, fe_dtype dtype);

/* fe-cuda-conv.cu: NCHW 3x3 conv, pad 1, stride 1 (im2col + GEMM), + bias, + relu. */
fe_status fe_cuda_conv3x3(FeCudaDevice *dev, float *y, const float *x, const void *w,
                          fe_dtype w_dtype, const void *bias, fe_dtype bias_dtype, int B,
                          int Cin, int H, int W, int Cout, bool relu);

/* fe-cuda-pool.cu */
fe_status fe_cuda_maxpool(FeCudaDevice *dev, float *y, const float *x, int B, int C, int H,
                          int W, int ph, int pw);
fe_status fe_cuda_nchw_to_nlc(FeCudaDevice *dev, float *y, const float *x, int B, int C,
                              int HW);

/* fe-cuda-layernorm.cu */
fe_status fe_cuda_layernorm(FeCudaDevice *dev, float *y, const float *x, const void *gamma,
                            const void *beta, fe_dtype w_dtype, int64_t rows, int D, float eps);

/* fe-cuda-softmax.cu: over the last dim of [rows, N]. */
fe_status fe_cuda_softmax(FeCudaDevice *dev, float *y, const float *x, int64_t rows, int N,
                          bool log_softmax);

/* fe-cuda-attention.cu: q [B,Tq,D], k/v [B,Tkmax,D] (first kv_len rows). One
 * fused kernel: scores, softmax and the weighted sum never leave the SM. */
fe_status fe_cuda_attention(FeCudaDevice *dev, float *y, const float *q, const float *k,
                            const float *v, int B, int Tq, int Tk_max, int D, int n_heads,
                            int kv_len, bool causal, int q_pos0);
/* q [R,Tq,D]; k/v [n_total,D]; spans i32 [R,2] on the device: row r sees keys
 * spans[2r] .. +spans[2r+1] (at most max_len; clamped to the rows). */
fe_status fe_cuda_attention_rows(FeCudaDevice *dev, float *y, const float *q, const float *k,
                                 const float *v, const int32_t *spans, int R, int Tq,
                                 int n_total, int D, int n_heads, int max_len);

/* fe-cuda-embed.cu */
fe_status fe_cuda_embed(FeCudaDevice *dev, float *y, const void *table, fe_dtype table_dtype,
                        const void *pos, fe_dtype pos_dtype, const void *ids, bool ids_i64,
                        int B, int D, int V, int position);
fe_status fe_cuda_kv_write(FeCudaDevice *dev, float *cache, const float *rows, int B, int Tmax,
                           int D, int pos);

/* fe-cuda-topk.cu: best k (value, index) per row of x [B,N]; ties -> lower index. */
fe_status fe_cuda_topk(FeCudaDevice *dev, float *values, int32_t *indices, const float *x, int B,
                       int N, int k);

} /* extern "C" */

#endif /* FE_CUDA_COMMON_H */
