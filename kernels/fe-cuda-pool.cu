/* fe-cuda-pool.cu - max pooling (kernel = stride) and the NCHW -> [B, H*W, C]
 * flattening that turns the CNN's feature map into the encoder's sequence. */
#include "fe-cuda-common.h"

static __global__ void maxpool_kernel(float *y, const float *x, int B, int C, int H, int W,
                                      int ph, int pw) {
    const int Ho = H / ph, Wo = W / pw;
    const int64_t total = (int64_t)B * C * Ho * Wo;
    for (int64_t i = blockIdx.x * (int64_t)blockDim.x + threadIdx.x; i < total;
         i += (int64_t)gridDim.x * blockDim.x) {
        int ox = (int)(i % Wo);
        int oy = (int)((i / Wo) % Ho);
        int64_t bc = i / ((int64_t)Wo * Ho);
        const float *src = x + bc * H * (int64_t)W + (int64_t)oy * ph * W + (int64_t)ox * pw;
        float m = -INFINITY;
        for (int dy = 0; dy < ph; dy++)
            for (int dx = 0; dx < pw; dx++)
                m = fmaxf(m, src[(int64_t)dy * W + dx]);
        y[i] = m;
    }
}

static fe_status launch_maxpool(cudaStream_t stream, float *y, const float *x, int B, int C,
                                int H, int W, int ph, int pw) {
    const int threads = 256;
    int64_t total = (int64_t)B * C * (H / ph) * (W / pw);
    if (total <= 0)
        return FE_OK;
    maxpool_kernel<<<fe_cuda_blocks(total, threads), threads, 0, stream>>>(y, x, B, C, H, W, ph,
                                                                           pw);
    FE_CUDA_CHECK_LAUNCH();
    return FE_OK;
}

extern "C" fe_status fe_cuda_maxpool(FeCudaDevice *dev, float *y, const float *x, int B, int C,
                                     int H, int W, int ph, int pw) {
    if (ph <= 0 || pw <= 0)
        return fe_cuda_fail(FE_ERR_INVALID_ARGUMENT, "fe_cuda_maxpool: pool %dx%d", ph, pw);
    return launch_maxpool(dev->stream, y, x, B, C, H, W, ph, pw);
}

/* Tiled transpose per image: x [C, HW] -> y [HW, C], through shared memory so
 * that both the reads and the writes are coalesced. */
#define FE_TILE 32
static __global__ void nchw_to_nlc_kernel(float *y, const float *x, int C, int HW) {
    __shared__ float tile[FE_TILE][FE_TILE + 1];
    const int64_t b = blockIdx.z;
    const float *xb = x + b * C * (int64_t)HW;
    float *yb = y + b * C * (int64_t)HW;
    int p = blockIdx.x * FE_TILE + threadIdx.x;
    for (int j = threadIdx.y; j < FE_TILE; j += blockDim.y) {
        int c = blockIdx.y * FE_TILE + j;
        if (c < C && p < HW)
            tile[j][threadIdx.x] = xb[(int64_t)c * HW + p];
    }
    __syncthreads();
    int c = blockIdx.y * FE_TILE + threadIdx.x;
    for (int j = threadIdx.y; j < FE_TILE; j += blockDim.y) {
        int pp = blockIdx.x * FE_TILE + j;
        if (c < C && pp < HW)
            yb[(int64_t)pp * C + c] = tile[threadIdx.x][j];
    }
}

static fe_status launch_nchw_to_nlc(cudaStream_t stream, float *y, const float *x, int B, int C,
                                    int HW) {
    if (B <= 0 || C <= 0 || HW <= 0)
        return FE_OK;
    if (B > 65535 || (C + FE_TILE - 1) / FE_TILE > 65535)
        return fe_cuda_fail(FE_ERR_UNSUPPORTED, "fe_cuda_nchw_to_nlc: batch %d x %d channels", B,
                            C);
    dim3 grid((HW + FE_TILE - 1) / FE_TILE, (C + FE_TILE - 1) / FE_TILE, B);
    dim3 block(FE_TILE, 8);
    nchw_to_nlc_kernel<<<grid, block, 0, stream>>>(y, x, C, HW);
    FE_CUDA_CHECK_LAUNCH();
    return FE_OK;
}

extern "C" fe_status fe_cuda_nchw_to_nlc(FeCudaDevice *dev, float *y, const float *x, int B,
                                         int C, int HW) {
    return launch_nchw_to_nlc(dev->stream, y, x, B, C, HW);
}
