/* fe-cpu-bf16.c - bf16 GEMM with f32 sums for the encoder's convolutions and
 * long matmuls (FE_PRECISION_BF16 on CPUs with AVX512_BF16).
 *
 * Why: the fp32 encoder is bound by FMA throughput (bench-conv: 100-130
 * GFLOP/s per CPU-second on the v1 convolutions), while one vdpbf16ps does 32
 * multiply-adds, twice an FMA's 16, off operands half the size. PyTorch's
 * bf16 autocast (oneDNN) does the same rounding: activations and weights to
 * bf16, products summed in f32.
 *
 * One micro-kernel serves both users: C[m, n] = sum_k A[m, k] B[k, n], with A
 * row-major bf16 (a weight matrix as the model stores it, K even; a pair of
 * neighbouring k is one 32-bit word that vdpbf16ps takes as a broadcast) and
 * B packed by the caller into panels of FE_BF_NR columns, pair-interleaved:
 * panel[p * NR + j] = (B[2p, j], B[2p + 1, j]) as two bf16 in one word.
 *   - conv: A = weights [Cout, Cin*9], B = the image's im2col columns, packed
 *     straight from the f32 planes (no f32 column buffer), C = [Cout, H*W].
 *   - matmul y = x W^T: A = W [N, K], B = x^T (the rows of x packed as
 *     columns), C^T = y: the tile is stored transposed. The weight is read in
 *     place, so no second (packed) copy of it is kept.
 * The tile's sums do not depend on the tile's neighbours: every output is
 * the same k-ordered vdpbf16ps chain whatever M, N or the thread split. */
#include "fe-internal.h"

#include <stdint.h>
#include <string.h>

#if defined(__x86_64__) && defined(__GNUC__)
#include <immintrin.h>
#define FE_HAVE_X86_KERNELS 1
/* See fe-cpu.c: GCC 12's AVX-512 headers trip -Wuninitialized. */
#pragma GCC diagnostic ignored "-Wuninitialized"
#pragma GCC diagnostic ignored "-Wmaybe-uninitialized"
#endif

#ifdef FE_HAVE_X86_KERNELS

/* 8 rows x 48 columns: 24 zmm accumulators, 3 for B, 1 for the broadcast.
 * Per k pair: 3 B loads and 8 broadcasts feed 24 vdpbf16ps. 8 divides every
 * channel count and model width of the presets. */
#define FE_BF_MR 8
#define FE_BF_NR 48
#define FE_BF_TARGET "avx512bf16,avx512f,avx512bw,avx512vl"

/* A 32-bit word read out of a bf16 array (two neighbouring k). */
typedef uint32_t fe_u32_alias __attribute__((may_alias, aligned(2)));

typedef struct {
    const uint16_t *a;  /* [m, lda] bf16, pairs of k at even offsets   */
    size_t lda;         /* even                                        */
    int m, kp;          /* rows of A; k pairs                          */
    const float *bias;  /* [m] or NULL                                 */
    bool relu;
    float *c;
    size_t ldc;
    bool c_trans;       /* C[m][n] at c[n * ldc + m] instead of c[m * ldc + n] */
} FeBf16Gemm;

/* One MR x NR tile: rows m0.. of A by one packed panel (columns n0..n0+ncols
 * of C). Rows past m are computed off row m0 and not stored. */
__attribute__((target(FE_BF_TARGET))) static void fe_bf16_tile(const FeBf16Gemm *g, int m0,
                                                              const uint32_t *panel, int n0,
                                                              int ncols) {
    int rows = g->m - m0 < FE_BF_MR ? g->m - m0 : FE_BF_MR;
    const fe_u32_alias *a[FE_BF_MR];
    for (int r = 0; r < FE_BF_MR; r++)
        a[r] = (const fe_u32_alias *)(g->a + (size_t)(m0 + (r < rows ? r : 0)) * g->lda);
    __m512 acc[FE_BF_MR][3];
#pragma GCC unroll 8
    for (int r = 0; r < FE_BF_MR; r++)
        acc[r][0] = acc[r][1] = acc[r][2] = _mm512_setzero_ps();
    const uint32_t *b = panel;
    for (int p = 0; p < g->kp; p++, b += FE_BF_NR) {
        __m512bh b0 = (__m512bh)_mm512_loadu_si512(b);
        __m512bh b1 = (__m512bh)_mm512_loadu_si512(b + 16);
        __m512bh b2 = (__m512bh)_mm512_loadu_si512(b + 32);
#pragma GCC unroll 8
        for (int r = 0; r < FE_BF_MR; r++) {
            __m512bh ar = (__m512bh)_mm512_set1_epi32((int)a[r][p]);
            acc[r][0] = _mm512_dpbf16_ps(acc[r][0], ar, b0);
            acc[r][1] = _mm512_dpbf16_ps(acc[r][1], ar, b1);
            acc[r][2] = _mm512_dpbf16_ps(acc[r][2], ar, b2);
        }
    }
    const __m512 zero = _mm512_setzero_ps();
#pragma GCC unroll 8
    for (int r = 0; r < FE_BF_MR; r++) {
        __m512 bias = _mm512_set1_ps(g->bias && r < rows ? g->bias[m0 + r] : 0.0f);
        for (int v = 0; v < 3; v++) {
            acc[r][v] = _mm512_add_ps(acc[r][v], bias);
            if (g->relu)
                acc[r][v] = _mm512_max_ps(acc[r][v], zero);
        }
    }
    if (!g->c_trans) {
#pragma GCC unroll 8
        for (int r = 0; r < FE_BF_MR; r++) {
            if (r >= rows)
                break;
            float *cr = g->c + (size_t)(m0 + r) * g->ldc + n0;
            for (int v = 0; v < 3; v++) {
                int left = ncols - 16 * v;
                if (left <= 0)
                    break;
                __mmask16 mk = left >= 16 ? (__mmask16)0xffff : (__mmask16)((1u << left) - 1);
                _mm512_mask_storeu_ps(cr + 16 * v, mk, acc[r][v]);
            }
        }
        return;
    }
    /* y = C^T: each column of the tile is rows m0.. of one output row. */
    if (rows == FE_BF_MR) {
        /* Eight floats per output row: an 8 x 16 transpose in registers per
         * 16 columns (unpack, shuffle, then 128-bit lanes paired up). */
        for (int v = 0; v < 3 && 16 * v < ncols; v++) {
            __m512 t0 = _mm512_unpacklo_ps(acc[0][v], acc[1][v]);
            __m512 t1 = _mm512_unpackhi_ps(acc[0][v], acc[1][v]);
            __m512 t2 = _mm512_unpacklo_ps(acc[2][v], acc[3][v]);
            __m512 t3 = _mm512_unpackhi_ps(acc[2][v], acc[3][v]);
            __m512 t4 = _mm512_unpacklo_ps(acc[4][v], acc[5][v]);
            __m512 t5 = _mm512_unpackhi_ps(acc[4][v], acc[5][v]);
            __m512 t6 = _mm512_unpacklo_ps(acc[6][v], acc[7][v]);
            __m512 t7 = _mm512_unpackhi_ps(acc[6][v], acc[7][v]);
            /* u[q] lane L: rows 0-3 of column 4L + q; u[4 + q]: rows 4-7 */
            __m512 u[8] = {
                _mm512_shuffle_ps(t0, t2, _MM_SHUFFLE(1, 0, 1, 0)),
                _mm512_shuffle_ps(t0, t2, _MM_SHUFFLE(3, 2, 3, 2)),
                _mm512_shuffle_ps(t1, t3, _MM_SHUFFLE(1, 0, 1, 0)),
                _mm512_shuffle_ps(t1, t3, _MM_SHUFFLE(3, 2, 3, 2)),
                _mm512_shuffle_ps(t4, t6, _MM_SHUFFLE(1, 0, 1, 0)),
                _mm512_shuffle_ps(t4, t6, _MM_SHUFFLE(3, 2, 3, 2)),
                _mm512_shuffle_ps(t5, t7, _MM_SHUFFLE(1, 0, 1, 0)),
                _mm512_shuffle_ps(t5, t7, _MM_SHUFFLE(3, 2, 3, 2)),
            };
            for (int q = 0; q < 4; q++) {
                /* [lane 0 | lane 0 of rows 4-7 | lane 1 | lane 1 ...]: columns q, 4 + q */
                __m512 lo = _mm512_shuffle_f32x4(u[q], u[4 + q], _MM_SHUFFLE(1, 0, 1, 0));
                __m512 hi = _mm512_shuffle_f32x4(u[q], u[4 + q], _MM_SHUFFLE(3, 2, 3, 2));
                lo = _mm512_shuffle_f32x4(lo, lo, _MM_SHUFFLE(3, 1, 2, 0));
                hi = _mm512_shuffle_f32x4(hi, hi, _MM_SHUFFLE(3, 1, 2, 0));
                __m256 out[4] = {
                    _mm512_castps512_ps256(lo),
                    _mm256_castpd_ps(_mm512_extractf64x4_pd(_mm512_castps_pd(lo), 1)),
                    _mm512_castps512_ps256(hi),
                    _mm256_castpd_ps(_mm512_extractf64x4_pd(_mm512_castps_pd(hi), 1)),
                };
                for (int L = 0; L < 4; L++) {
                    int col = 16 * v + 4 * L + q;
                    if (col < ncols)
                        _mm256_storeu_ps(g->c + (size_t)(n0 + col) * g->ldc + m0, out[L]);
                }
            }
        }
        return;
    }
    float tile[FE_BF_MR][FE_BF_NR] __attribute__((aligned(64)));
#pragma GCC unroll 8
    for (int r = 0; r < FE_BF_MR; r++)
        for (int v = 0; v < 3; v++)
            _mm512_store_ps(&tile[r][16 * v], acc[r][v]);
    for (int j = 0; j < ncols; j++)
        for (int r = 0; r < rows; r++)
            g->c[(size_t)(n0 + j) * g->ldc + m0 + r] = tile[r][j];
}

/* Lane order that interleaves _mm512_cvtne2ps_pbh(hi, lo)'s two halves:
 * output word j = (lo[j], hi[j]). */
__attribute__((target(FE_BF_TARGET))) static inline __m512i fe_bf16_interleave_index(void) {
    return _mm512_set_epi16(31, 15, 30, 14, 29, 13, 28, 12, 27, 11, 26, 10, 25, 9, 24, 8, 23, 7,
                            22, 6, 21, 5, 20, 4, 19, 3, 18, 2, 17, 1, 16, 0);
}

/* ------------------------------------------------------------------------ */
/* conv3x3 (pad 1)                                                          */

typedef struct {
    const float *x;  /* one image [cin, h, w]                              */
    int cin, h, w, hw, kdim;
    FeBf16Gemm g;
    int panels, per_task;
    /* k -> (ci << 4) | tap (ky*3 + kx), for k < 2 * kp; tap 9 past kdim */
    const uint32_t *taps;
    bool failed;
} FeBf16ConvJob;

/* Packs output pixels p0..p0+NR of the image's im2col matrix as one panel
 * (pixels past hw zero). Per run of pixels within one output row, the nine
 * taps' offsets and masks (zero where the 3x3 window leaves the image) are
 * worked out once; then each k pair is two masked loads, one conversion,
 * one interleave and one store. */
__attribute__((target(FE_BF_TARGET))) static void fe_bf16_pack_im2col(const FeBf16ConvJob *j,
                                                                     int p0, uint32_t *panel) {
    int end = p0 + FE_BF_NR < j->hw ? p0 + FE_BF_NR : j->hw;
    int valid = end - p0, kp = j->g.kp;
    size_t hw = (size_t)j->hw;
    const __m512i ilv = fe_bf16_interleave_index();
    for (int p = p0; p < end;) {
        int oy = p / j->w, ox = p % j->w;
        int len = j->w - ox < end - p ? j->w - ox : end - p;
        for (int c = 0; c < len; c += 16) {
            int n = len - c < 16 ? len - c : 16;
            /* taps 0..8, and 9 = past the last k (zero) */
            __mmask16 mask[10];
            ptrdiff_t off[10];
            for (int t = 0; t < 9; t++) {
                int iy = oy + t / 3 - 1, ix = ox + c + t % 3 - 1;
                __mmask16 m = (__mmask16)((1u << n) - 1);
                if (ix < 0)
                    m &= (__mmask16)~1u; /* lane 0 is the left padding; never read */
                if (ix + n > j->w)
                    m &= (__mmask16)((1u << (j->w - ix)) - 1); /* the right padding */
                mask[t] = iy < 0 || iy >= j->h ? 0 : m;
                off[t] = mask[t] ? (ptrdiff_t)iy * j->w + ix : 0;
            }
            mask[9] = 0;
            off[9] = 0;
            __mmask32 mk = n == 16 ? (__mmask32)0xffffffffu : (__mmask32)((1u << (2 * n)) - 1);
            uint16_t *dst = (uint16_t *)panel + 2 * (p - p0 + c);
            const uint32_t *tap = j->taps;
            for (int pr = 0; pr < kp; pr++, tap += 2, dst += 2 * FE_BF_NR) {
                uint32_t t0 = tap[0] & 15, t1 = tap[1] & 15;
                const float *x0 = j->x + (size_t)(tap[0] >> 4) * hw;
                const float *x1 = j->x + (size_t)(tap[1] >> 4) * hw;
                __m512 v0 = _mm512_maskz_loadu_ps(mask[t0], x0 + off[t0]);
                __m512 v1 = _mm512_maskz_loadu_ps(mask[t1], x1 + off[t1]);
                __m512i pk = _mm512_permutexvar_epi16(ilv, (__m512i)_mm512_cvtne2ps_pbh(v1, v0));
                _mm512_mask_storeu_epi16(dst, mk, pk);
            }
        }
        p += len;
    }
    if (valid < FE_BF_NR)
        for (int pr = 0; pr < kp; pr++)
            memset((uint16_t *)(panel + (size_t)pr * FE_BF_NR) + 2 * valid, 0,
                   (size_t)(FE_BF_NR - valid) * 2 * sizeof(uint16_t));
}

/* Runs all of A (every MR block) over panels first..first+count: the A block
 * stays in L1 while the task's panels, packed once, come from L2. */
static void fe_bf16_run_panels(const FeBf16Gemm *g, const uint32_t *panels, int first, int count,
                               int n_total) {
    size_t panel_words = (size_t)g->kp * FE_BF_NR;
    for (int m0 = 0; m0 < g->m; m0 += FE_BF_MR)
        for (int q = 0; q < count; q++) {
            int n0 = (first + q) * FE_BF_NR;
            int ncols = n_total - n0 < FE_BF_NR ? n_total - n0 : FE_BF_NR;
            fe_bf16_tile(g, m0, panels + (size_t)q * panel_words, n0, ncols);
        }
}

static void fe_bf16_conv_task(void *ctx, int task) {
    FeBf16ConvJob *j = ctx;
    int first = task * j->per_task;
    int count = j->panels - first < j->per_task ? j->panels - first : j->per_task;
    if (count <= 0)
        return;
    size_t panel_words = (size_t)j->g.kp * FE_BF_NR;
    uint32_t *buf = (uint32_t *)fe_cpu_scratch(0, panel_words * (size_t)count);
    if (!buf) {
        j->failed = true;
        return;
    }
    for (int q = 0; q < count; q++)
        fe_bf16_pack_im2col(j, (first + q) * FE_BF_NR, buf + (size_t)q * panel_words);
    fe_bf16_run_panels(&j->g, buf, first, count, j->hw);
}

/* Panels per task: what fits in about half the L2 with the A block, and at
 * least one task per thread when there are enough panels. */
static int fe_bf16_panels_per_task(int panels, int kp, bool parallel) {
    size_t panel_bytes = (size_t)kp * FE_BF_NR * sizeof(uint32_t);
    int per = (int)((384u * 1024u) / panel_bytes);
    if (per < 1)
        per = 1;
    int threads = parallel ? fe_cpu_get_threads() : 1;
    if (threads > 1) {
        int even = (panels + threads - 1) / threads;
        if (even < per)
            per = even;
    }
    return per;
}

#define FE_BF16_PARALLEL_MIN_MACS (4.0 * 1024 * 1024)

#endif /* FE_HAVE_X86_KERNELS */

bool fe_cpu_bf16_conv_ok(int cin) {
#ifdef FE_HAVE_X86_KERNELS
    return fe_cpu_has_bf16_dot() && cin > 0 && (cin * 9) % 2 == 0;
#else
    (void)cin;
    return false;
#endif
}

fe_status fe_cpu_conv3x3_bf16(const float *x, int cin, int h, int w, const uint16_t *wt,
                              const float *bias, bool relu, int cout, float *y) {
#ifdef FE_HAVE_X86_KERNELS
    if (!fe_cpu_bf16_conv_ok(cin))
        return fe_set_error(FE_ERR_UNSUPPORTED, "bf16 conv: needs AVX512_BF16 and an even "
                            "Cin*9 (Cin %d)", cin);
    FeBf16ConvJob job = {.x = x, .cin = cin, .h = h, .w = w, .hw = h * w, .kdim = cin * 9};
    job.g = (FeBf16Gemm){.a = wt, .lda = (size_t)cin * 9, .m = cout, .kp = cin * 9 / 2,
                         .bias = bias, .relu = relu, .c = y, .ldc = (size_t)h * w};
    if (job.hw == 0 || cout == 0)
        return FE_OK;
    job.panels = (job.hw + FE_BF_NR - 1) / FE_BF_NR;
    /* The tap table in slot 1 (the tasks' panels use their own slot 0). */
    uint32_t *taps = (uint32_t *)fe_cpu_scratch(1, (size_t)job.g.kp * 2);
    if (!taps)
        return fe_set_error(FE_ERR_OUT_OF_MEMORY, "bf16 conv: out of scratch memory");
    for (int k = 0; k < job.g.kp * 2; k++)
        taps[k] = k < job.kdim ? (uint32_t)(k / 9) << 4 | (uint32_t)(k % 9) : 9u;
    job.taps = taps;
    bool parallel = (double)cout * job.hw * job.kdim >= FE_BF16_PARALLEL_MIN_MACS;
    job.per_task = fe_bf16_panels_per_task(job.panels, job.g.kp, parallel);
    int tasks = (job.panels + job.per_task - 1) / job.per_task;
    if (parallel && tasks > 1)
        fe_cpu_parallel_for(tasks, fe_bf16_conv_task, &job);
    else
        for (int t = 0; t < tasks; t++)
            fe_bf16_conv_task(&job, t);
    if (job.failed)
        return fe_set_error(FE_ERR_OUT_OF_MEMORY, "bf16 conv: out of scratch memory");
    return FE_OK;
#else
    (void)x; (void)cin; (void)h; (void)w; (void)wt; (void)bias; (void)relu; (void)cout; (void)y;
    return fe_set_error(FE_ERR_UNSUPPORTED, "bf16 conv: not built for this CPU");
#endif
}

/* ------------------------------------------------------------------------ */
/* matmul y[m, n] = x[m, k] W[n, k]^T + b                                   */

#ifdef FE_HAVE_X86_KERNELS
typedef struct {
    FeBf16Gemm g;
    const uint32_t *panels;
    int n_tokens, panels_total, per_task;
} FeBf16MatmulJob;

static void fe_bf16_matmul_task(void *ctx, int task) {
    FeBf16MatmulJob *j = ctx;
    int first = task * j->per_task;
    int count = j->panels_total - first < j->per_task ? j->panels_total - first : j->per_task;
    if (count > 0)
        fe_bf16_run_panels(&j->g, j->panels + (size_t)first * j->g.kp * FE_BF_NR, first, count,
                           j->n_tokens);
}

/* Rows t0..t0+NR of x [m, k] (f32) as one panel: word (p, j) = the bf16 of
 * x[t0 + j][2p], x[t0 + j][2p + 1]; rows past m are zero. */
__attribute__((target(FE_BF_TARGET))) static void fe_bf16_pack_rows(const float *x, int m, int k,
                                                                   int t0, uint32_t *panel) {
    int kp = k / 2;
    uint32_t words[16] __attribute__((aligned(64)));
    for (int jj = 0; jj < FE_BF_NR; jj++) {
        int t = t0 + jj;
        if (t >= m) {
            for (int p = 0; p < kp; p++)
                panel[(size_t)p * FE_BF_NR + jj] = 0;
            continue;
        }
        const float *row = x + (size_t)t * k;
        for (int i = 0; i < k; i += 32) {
            int n = k - i < 32 ? k - i : 32; /* even */
            int n0 = n < 16 ? n : 16, n1 = n - n0;
            __m512 lo = _mm512_maskz_loadu_ps((__mmask16)((1u << n0) - 1), row + i);
            __m512 hi = _mm512_maskz_loadu_ps((__mmask16)((1u << n1) - 1), row + i + 16);
            /* cvtne2ps_pbh(hi, lo): bf16 of k = i..i+31 in order, two per word */
            _mm512_store_si512(words, (__m512i)_mm512_cvtne2ps_pbh(hi, lo));
            for (int q = 0; q < n / 2; q++)
                panel[(size_t)(i / 2 + q) * FE_BF_NR + jj] = words[q];
        }
    }
}
#endif

fe_status fe_cpu_matmul_bf16(const float *x, int m, int k, const uint16_t *w, int n,
                             const float *bias, float *y) {
#ifdef FE_HAVE_X86_KERNELS
    if (!fe_cpu_has_bf16_dot() || k % 2 != 0)
        return fe_set_error(FE_ERR_UNSUPPORTED, "bf16 matmul: needs AVX512_BF16 and an even K "
                            "(K %d)", k);
    if (m == 0 || n == 0)
        return FE_OK;
    if (k == 0) {
        for (int r = 0; r < m; r++)
            for (int c = 0; c < n; c++)
                y[(size_t)r * n + c] = bias ? bias[c] : 0.0f;
        return FE_OK;
    }
    FeBf16MatmulJob job = {.n_tokens = m};
    job.g = (FeBf16Gemm){.a = w, .lda = (size_t)k, .m = n, .kp = k / 2, .bias = bias,
                         .c = y, .ldc = (size_t)n, .c_trans = true};
    job.panels_total = (m + FE_BF_NR - 1) / FE_BF_NR;
    size_t panel_words = (size_t)job.g.kp * FE_BF_NR;
    /* Slot 1: the tasks run on slot-0 users' threads too (fe-cpu.c). */
    uint32_t *panels = (uint32_t *)fe_cpu_scratch(1, panel_words * (size_t)job.panels_total);
    if (!panels)
        return fe_set_error(FE_ERR_OUT_OF_MEMORY, "bf16 matmul: out of scratch memory");
    for (int q = 0; q < job.panels_total; q++)
        fe_bf16_pack_rows(x, m, k, q * FE_BF_NR, panels + (size_t)q * panel_words);
    job.panels = panels;
    bool parallel = (double)m * n * k >= FE_BF16_PARALLEL_MIN_MACS;
    int threads = parallel ? fe_cpu_get_threads() : 1;
    /* By token panels while there are enough for every thread; the weight
     * (read in place) is shared through the L3. */
    job.per_task = (job.panels_total + threads - 1) / threads;
    int tasks = (job.panels_total + job.per_task - 1) / job.per_task;
    if (tasks > 1)
        fe_cpu_parallel_for(tasks, fe_bf16_matmul_task, &job);
    else
        fe_bf16_matmul_task(&job, 0);
    return FE_OK;
#else
    (void)x; (void)m; (void)k; (void)w; (void)n; (void)bias; (void)y;
    return fe_set_error(FE_ERR_UNSUPPORTED, "bf16 matmul: not built for this CPU");
#endif
}
