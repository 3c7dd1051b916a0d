/* fe-cuda-conv.cu - 3x3 convolution, pad 1, stride 1, NCHW: im2col + GEMM.
 *
 * im2col writes the patches of a chunk of images, already in the weight
 * precision, into the device workspace; one strided-batched GEMM per chunk
 * multiplies them with the [Cout, Cin*9] weights straight into NCHW output,
 * and the bias + ReLU epilogue finishes in place. Chunks keep the workspace
 * bounded (FE_CUDA_IM2COL_BUDGET) for large batches of wide images. */
#include "fe-cuda-common.h"

#define FE_CUDA_IM2COL_BUDGET ((size_t)256 << 20)

/* cols[b][ci*9 + ky*3 + kx][oy*W + ox] = x[b][ci][oy+ky-1][ox+kx-1] (0 outside). */
template <typename T>
static __global__ void im2col3x3_kernel(T *cols, const float *x, int nb, int Cin, int H, int W) {
    const int64_t HW = (int64_t)H * W;
    const int64_t total = (int64_t)nb * Cin * 9 * HW;
    for (int64_t i = blockIdx.x * (int64_t)blockDim.x + threadIdx.x; i < total;
         i += (int64_t)gridDim.x * blockDim.x) {
        int64_t p = i % HW;
        int64_t r = i / HW;             /* b * Cin*9 + kidx */
        int kidx = (int)(r % (Cin * 9));
        int64_t b = r / (Cin * 9);
        int ci = kidx / 9, kk = kidx % 9;
        int oy = (int)(p / W), ox = (int)(p % W);
        int iy = oy + kk / 3 - 1, ix = ox + kk % 3 - 1;
        float v = 0.0f;
        if (iy >= 0 && iy < H && ix >= 0 && ix < W)
            v = x[((b * Cin + ci) * H + iy) * (int64_t)W + ix];
        cols[i] = fe_from_f32<T>(v);
    }
}

struct Im2colLauncher {
    template <typename T>
    static fe_status run(cudaStream_t stream, void *cols, const float *x, int nb, int Cin, int H,
                         int W) {
        const int threads = 256;
        int64_t total = (int64_t)nb * Cin * 9 * H * W;
        im2col3x3_kernel<T><<<fe_cuda_blocks(total, threads), threads, 0, stream>>>(
            (T *)cols, x, nb, Cin, H, W);
        FE_CUDA_CHECK_LAUNCH();
        return FE_OK;
    }
};

extern "C" fe_status fe_cuda_conv3x3(FeCudaDevice *dev, float *y, const float *x, const void *w,
                                     fe_dtype w_dtype, const void *bias, fe_dtype bias_dtype,
                                     int B, int Cin, int H, int W, int Cout, bool relu) {
    if (B <= 0 || Cout <= 0 || H <= 0 || W <= 0)
        return FE_OK;
    const int64_t HW = (int64_t)H * W;
    const int K = Cin * 9;
    if (HW > INT32_MAX)
        return fe_cuda_fail(FE_ERR_UNSUPPORTED, "fe_cuda_conv3x3: %dx%d image is too large", H, W);
    const size_t per_image = (size_t)K * HW * fe_cuda_dtype_size(w_dtype);
    int chunk = (int)(FE_CUDA_IM2COL_BUDGET / (per_image ? per_image : 1));
    if (chunk < 1)
        chunk = 1;
    if (chunk > B)
        chunk = B;
    void *cols;
    FE_CUDA_TRY(fe_cuda_workspace(dev, per_image * chunk, &cols));
    for (int b0 = 0; b0 < B; b0 += chunk) {
        int nb = B - b0 < chunk ? B - b0 : chunk;
        FE_CUDA_TRY(FE_CUDA_DISPATCH_FLOAT(w_dtype, Im2colLauncher, dev->stream, cols,
                                           x + (int64_t)b0 * Cin * HW, nb, Cin, H, W));
        /* Per image, row-major Y[Cout, HW] = W[Cout, K] * cols[K, HW]: A = W
         * (shared, stride 0), B = cols (not transposed). */
        FE_CUDA_TRY(fe_cuda_gemm_raw(dev, false, Cout, (int)HW, K, w, K, 0, cols, HW,
                                     (int64_t)K * HW, y + (int64_t)b0 * Cout * HW, HW,
                                     (int64_t)Cout * HW, nb, w_dtype));
    }
    return fe_cuda_bias_act(dev, y, (int64_t)B * Cout * HW, bias, bias_dtype, Cout, HW,
                            relu ? FE_CUDA_ACT_RELU : FE_CUDA_ACT_NONE);
}
