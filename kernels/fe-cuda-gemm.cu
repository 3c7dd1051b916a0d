/* fe-cuda-gemm.cu - the linear layers: cuBLAS cublasGemmEx.
 *
 * Activations are f32 and weights are in the device precision. cuBLAS wants
 * both operands in one type, so for f16/bf16 weights the activation rows are
 * converted into the device workspace first (a memory-bound pass far cheaper
 * than the GEMM), then multiplied with fp32 accumulation into an f32 result.
 * f32 weights use TF32 tensor cores unless the device was told otherwise. */
#include "fe-cuda-common.h"

/* No kernel of its own: the conversion and epilogue kernels live in
 * fe-cuda-elementwise.cu and fe-cuda-bias-act.cu; this launcher only drives
 * cuBLAS on the stream. */
static fe_status launch_gemm_ex(cublasHandle_t handle, cudaStream_t stream, bool allow_tf32,
                                bool b_trans, int m, int n, int k, const void *a, int64_t lda,
                                int64_t stride_a, const void *b, int64_t ldb, int64_t stride_b,
                                float *c, int64_t ldc, int64_t stride_c, int batch,
                                fe_dtype dtype) {
    /* Row-major C[m,n] = A[m,k] * op(B) is column-major C^T[n,m] = op(B)^T A^T:
     * cuBLAS sees B first. B[n,k] (b_trans) read as column-major k x n needs
     * OP_T; B[k,n] read as column-major n x k needs OP_N. */
    const float alpha = 1.0f, beta = 0.0f;
    cudaDataType_t t = fe_cuda_data_type(dtype);
    cublasComputeType_t compute = CUBLAS_COMPUTE_32F;
    if (dtype == FE_DTYPE_F32 && allow_tf32)
        compute = CUBLAS_COMPUTE_32F_FAST_TF32;
    /* The handle was bound to the device's stream once, at creation: calling
     * cublasSetStream here would also reset cuBLAS to its own workspace pool
     * (see the cuBLAS docs), undoing cublasSetWorkspace. */
    (void)stream;
    if (batch == 1) {
        FE_CUBLAS_CHECK(cublasGemmEx(handle, b_trans ? CUBLAS_OP_T : CUBLAS_OP_N, CUBLAS_OP_N, n,
                                     m, k, &alpha, b, t, (int)ldb, a, t, (int)lda, &beta, c,
                                     CUDA_R_32F, (int)ldc, compute, CUBLAS_GEMM_DEFAULT));
    } else {
        FE_CUBLAS_CHECK(cublasGemmStridedBatchedEx(
            handle, b_trans ? CUBLAS_OP_T : CUBLAS_OP_N, CUBLAS_OP_N, n, m, k, &alpha, b, t,
            (int)ldb, stride_b, a, t, (int)lda, stride_a, &beta, c, CUDA_R_32F, (int)ldc,
            stride_c, batch, compute, CUBLAS_GEMM_DEFAULT));
    }
    return FE_OK;
}

extern "C" fe_status fe_cuda_gemm_raw(FeCudaDevice *dev, bool b_trans, int m, int n, int k,
                                      const void *a, int64_t lda, int64_t stride_a,
                                      const void *b, int64_t ldb, int64_t stride_b, float *c,
                                      int64_t ldc, int64_t stride_c, int batch, fe_dtype dtype) {
    if (m <= 0 || n <= 0 || batch <= 0)
        return FE_OK;
    if (!fe_cuda_is_float_dtype(dtype))
        return fe_cuda_fail(FE_ERR_UNSUPPORTED, "fe_cuda_gemm: %s operands",
                            dtype == FE_DTYPE_I8 ? "i8" : "non-float");
    if (dtype == FE_DTYPE_BF16 && dev->cc_major < 8)
        return fe_cuda_fail(FE_ERR_UNSUPPORTED,
                            "bf16 GEMM needs compute capability 8.0, %s has %d.%d",
                            dev->base.id, dev->cc_major, dev->cc_minor);
    return launch_gemm_ex(dev->cublas, dev->stream, dev->allow_tf32, b_trans, m, n, k, a, lda,
                          stride_a, b, ldb, stride_b, c, ldc, stride_c, batch, dtype);
}

extern "C" fe_status fe_cuda_gemm(FeCudaDevice *dev, float *y, const float *x, const void *w,
                                  fe_dtype w_dtype, const void *bias, fe_dtype bias_dtype,
                                  int64_t M, int N, int K, bool gelu) {
    if (M <= 0 || N <= 0)
        return FE_OK;
    if (M > INT32_MAX || (int64_t)M * K > ((int64_t)1 << 40))
        return fe_cuda_fail(FE_ERR_UNSUPPORTED, "fe_cuda_gemm: %lld rows is too many",
                            (long long)M);
    const void *a = x;
    if (w_dtype != FE_DTYPE_F32) {
        void *xa;
        FE_CUDA_TRY(fe_cuda_workspace(dev, (size_t)M * K * fe_cuda_dtype_size(w_dtype), &xa));
        FE_CUDA_TRY(fe_cuda_convert_from_f32(dev, xa, w_dtype, x, M * K));
        a = xa;
    }
    FE_CUDA_TRY(fe_cuda_gemm_raw(dev, true, (int)M, N, K, a, K, 0, w, K, 0, y, N, 0, 1,
                                 w_dtype));
    return fe_cuda_bias_act(dev, y, M * N, bias, bias_dtype, N, 1,
                            gelu ? FE_CUDA_ACT_GELU : FE_CUDA_ACT_NONE);
}
