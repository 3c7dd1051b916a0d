/* fe-cuda-attention.cu - multi-head scaled dot-product attention with a KV
 * cache, in one fused kernel.
 *
 * One block per (query row, head, batch item). The query's head slice sits in
 * shared memory; each of the kWarps warps takes every kWarps-th key, its lanes read the
 * key's head slice (contiguous, coalesced) and reduce the dot product with
 * shuffles; the scores stay in shared memory for the softmax; then each warp
 * accumulates its keys' value rows per lane-owned dimension and the warps'
 * partial sums are added at the end. Nothing but q, k, v and y touches global
 * memory, which is what the decoder's one-row steps (Tq = 1, keys = the KV
 * cache, or the encoder output for cross-attention) need: one launch per
 * attention, no score matrix round trip. The same kernel serves
 * FE_OP_ATTENTION_ROWS (a multi-image batch's cross-attention): each batch
 * item then reads its own span of packed key/value rows. */
#include "fe-cuda-common.h"

#define FE_ATT_MAX_DH 256               /* 8 dims per lane */
/* Long key sequences (cross-attention over a wide image, one query row per
 * decode step) get twice the warps per block: few blocks, much work each. */
#define FE_ATT_LONG_KEYS 1024

/* spans (FE_OP_ATTENTION_ROWS): when not NULL, batch item b reads the key
 * and value rows spans[2b] .. spans[2b] + spans[2b+1] - 1 of k and v, which
 * are [n_total, D] (every item's rows packed), at most kv_len of them; a span
 * outside the rows is clamped to them (the host checked it; a bad one must
 * not read out of bounds). Otherwise k and v are [B, Tk_max, D]. */
template <int kWarps>
static __global__ void attention_kernel(float *y, const float *q, const float *k, const float *v,
                                        int Tq, int Tk_max, int D, int dh, int kv_len,
                                        bool causal, int q_pos0, float scale,
                                        const int32_t *spans, int n_total) {
    extern __shared__ float smem[];
    float *q_s = smem;                                  /* [dh]                 */
    float *part = q_s + dh;                             /* [kWarps][dh]   */
    float *red = part + kWarps * dh;              /* [32]                 */
    float *scores = red + 32;                           /* [kv_len]             */

    const int i = blockIdx.x, h = blockIdx.y, b = blockIdx.z;
    const int warp = threadIdx.x / 32, lane = threadIdx.x % 32;
    int n_keys = kv_len;
    if (causal) {
        int visible = q_pos0 + i + 1;
        if (visible < n_keys)
            n_keys = visible;
    }
    float *yr = y + ((int64_t)b * Tq + i) * D + (int64_t)h * dh;
    if (n_keys <= 0) {
        for (int d = threadIdx.x; d < dh; d += blockDim.x)
            yr[d] = 0.0f;
        return;
    }
    const float *qr = q + ((int64_t)b * Tq + i) * D + (int64_t)h * dh;
    int64_t first = (int64_t)b * Tk_max;
    if (spans) {
        int start = spans[2 * b], len = spans[2 * b + 1];
        start = start < 0 ? 0 : start > n_total ? n_total : start;
        len = len < 0 ? 0 : len;
        if (len > n_total - start)
            len = n_total - start;
        if (len < n_keys)
            n_keys = len;
        first = start;
        if (n_keys <= 0) {
            for (int d = threadIdx.x; d < dh; d += blockDim.x)
                yr[d] = 0.0f;
            return;
        }
    }
    const float *kb = k + first * D + (int64_t)h * dh;
    const float *vb = v + first * D + (int64_t)h * dh;
    for (int d = threadIdx.x; d < dh; d += blockDim.x)
        q_s[d] = qr[d] * scale;
    __syncthreads();

    /* scores */
    for (int j = warp; j < n_keys; j += kWarps) {
        const float *kr = kb + (int64_t)j * D;
        float s = 0.0f;
        for (int d = lane; d < dh; d += 32)
            s += q_s[d] * kr[d];
        for (int o = 16; o > 0; o >>= 1)
            s += __shfl_xor_sync(0xffffffffu, s, o);
        if (lane == 0)
            scores[j] = s;
    }
    __syncthreads();

    /* softmax: max, exp, sum */
    float m = -INFINITY;
    for (int j = threadIdx.x; j < n_keys; j += blockDim.x)
        m = fmaxf(m, scores[j]);
    for (int o = 16; o > 0; o >>= 1)
        m = fmaxf(m, __shfl_xor_sync(0xffffffffu, m, o));
    if (lane == 0)
        red[warp] = m;
    __syncthreads();
    m = red[0];
    for (int w = 1; w < kWarps; w++)
        m = fmaxf(m, red[w]);
    __syncthreads();
    float s = 0.0f;
    for (int j = threadIdx.x; j < n_keys; j += blockDim.x) {
        float e = expf(scores[j] - m);
        scores[j] = e;
        s += e;
    }
    for (int o = 16; o > 0; o >>= 1)
        s += __shfl_xor_sync(0xffffffffu, s, o);
    if (lane == 0)
        red[warp] = s;
    __syncthreads();
    float total = 0.0f;
    for (int w = 0; w < kWarps; w++)
        total += red[w];

    /* weighted sum of the value rows */
    float acc[FE_ATT_MAX_DH / 32];
#pragma unroll
    for (int t = 0; t < FE_ATT_MAX_DH / 32; t++)
        acc[t] = 0.0f;
    for (int j = warp; j < n_keys; j += kWarps) {
        const float p = scores[j];
        const float *vr = vb + (int64_t)j * D;
#pragma unroll
        for (int t = 0; t < FE_ATT_MAX_DH / 32; t++) {
            int d = lane + 32 * t;
            if (d < dh)
                acc[t] += p * vr[d];
        }
    }
#pragma unroll
    for (int t = 0; t < FE_ATT_MAX_DH / 32; t++) {
        int d = lane + 32 * t;
        if (d < dh)
            part[warp * dh + d] = acc[t];
    }
    __syncthreads();
    const float inv = 1.0f / total;
    for (int d = threadIdx.x; d < dh; d += blockDim.x) {
        float o = 0.0f;
        for (int w = 0; w < kWarps; w++)
            o += part[w * dh + d];
        yr[d] = o * inv;
    }
}

template <int kWarps>
static fe_status launch_attention(cudaStream_t stream, int device_ordinal, float *y,
                                  const float *q, const float *k, const float *v, int B, int Tq,
                                  int Tk_max, int D, int n_heads, int kv_len, bool causal,
                                  int q_pos0, const int32_t *spans, int n_total) {
    const int dh = D / n_heads;
    size_t smem = ((size_t)dh * (1 + kWarps) + 32 + (size_t)kv_len) * sizeof(float);
    if (smem > 48 * 1024) {
        /* long key sequences (wide images) need the opt-in shared memory */
        int max_optin = 0;
        FE_CUDA_CHECK(cudaDeviceGetAttribute(&max_optin, cudaDevAttrMaxSharedMemoryPerBlockOptin,
                                             device_ordinal));
        if (smem > (size_t)max_optin)
            return fe_cuda_fail(FE_ERR_UNSUPPORTED,
                                "fe_cuda_attention: %d keys need %zu bytes of shared memory, "
                                "the device allows %d",
                                kv_len, smem, max_optin);
        FE_CUDA_CHECK(cudaFuncSetAttribute(attention_kernel<kWarps>,
                                           cudaFuncAttributeMaxDynamicSharedMemorySize,
                                           (int)smem));
    }
    dim3 grid(Tq, n_heads, B);
    attention_kernel<kWarps><<<grid, kWarps * 32, smem, stream>>>(
        y, q, k, v, Tq, Tk_max, D, dh, kv_len, causal, q_pos0, 1.0f / sqrtf((float)dh), spans,
        n_total);
    FE_CUDA_CHECK_LAUNCH();
    return FE_OK;
}

extern "C" fe_status fe_cuda_attention(FeCudaDevice *dev, float *y, const float *q,
                                       const float *k, const float *v, int B, int Tq, int Tk_max,
                                       int D, int n_heads, int kv_len, bool causal, int q_pos0) {
    if (B <= 0 || Tq <= 0)
        return FE_OK;
    if (n_heads <= 0 || D % n_heads != 0)
        return fe_cuda_fail(FE_ERR_INVALID_ARGUMENT, "fe_cuda_attention: %d heads for width %d",
                            n_heads, D);
    if (D / n_heads > FE_ATT_MAX_DH)
        return fe_cuda_fail(FE_ERR_UNSUPPORTED, "fe_cuda_attention: head size %d > %d",
                            D / n_heads, FE_ATT_MAX_DH);
    if (kv_len < 0 || kv_len > Tk_max)
        return fe_cuda_fail(FE_ERR_INVALID_ARGUMENT, "fe_cuda_attention: kv_len %d of %d rows",
                            kv_len, Tk_max);
    if (Tq > INT32_MAX || n_heads > 65535 || B > 65535)
        return fe_cuda_fail(FE_ERR_UNSUPPORTED, "fe_cuda_attention: grid too large");
    if (kv_len >= FE_ATT_LONG_KEYS)
        return launch_attention<8>(dev->stream, dev->ordinal, y, q, k, v, B, Tq, Tk_max, D,
                                   n_heads, kv_len, causal, q_pos0, nullptr, 0);
    return launch_attention<4>(dev->stream, dev->ordinal, y, q, k, v, B, Tq, Tk_max, D, n_heads,
                               kv_len, causal, q_pos0, nullptr, 0);
}

extern "C" fe_status fe_cuda_attention_rows(FeCudaDevice *dev, float *y, const float *q,
                                            const float *k, const float *v,
                                            const int32_t *spans, int R, int Tq, int n_total,
                                            int D, int n_heads, int max_len) {
    if (R <= 0 || Tq <= 0)
        return FE_OK;
    if (n_heads <= 0 || D % n_heads != 0)
        return fe_cuda_fail(FE_ERR_INVALID_ARGUMENT,
                            "fe_cuda_attention_rows: %d heads for width %d", n_heads, D);
    if (D / n_heads > FE_ATT_MAX_DH)
        return fe_cuda_fail(FE_ERR_UNSUPPORTED, "fe_cuda_attention_rows: head size %d > %d",
                            D / n_heads, FE_ATT_MAX_DH);
    if (max_len < 1 || max_len > n_total)
        return fe_cuda_fail(FE_ERR_INVALID_ARGUMENT,
                            "fe_cuda_attention_rows: max_len %d of %d rows", max_len, n_total);
    if (n_heads > 65535 || R > 65535)
        return fe_cuda_fail(FE_ERR_UNSUPPORTED, "fe_cuda_attention_rows: grid too large");
    /* Tk_max 0: the spans, not the batch index, place each item's keys */
    if (max_len >= FE_ATT_LONG_KEYS)
        return launch_attention<8>(dev->stream, dev->ordinal, y, q, k, v, R, Tq, 0, D, n_heads,
                                   max_len, false, 0, spans, n_total);
    return launch_attention<4>(dev->stream, dev->ordinal, y, q, k, v, R, Tq, 0, D, n_heads,
                               max_len, false, 0, spans, n_total);
}
