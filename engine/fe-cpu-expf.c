/* fe-cpu-expf.c - expf of whole rows, eight at a time, with libm's bits.
 *
 * The softmax of every attention row and the decode step's log-sum-exp
 * called libm's expf once per score (3 % of the paper's CPU samples on the
 * AVX2 VM, bench/RESULTS.md "issue 12, speed12s"); their sums stay one by
 * one in their old order, so only the exponentials are vectorised here.
 *
 * glibc (2.28 on) computes expf in double: k = round(x * 32/ln2), a 32-entry
 * table of 2^(i/32) and a cubic in r = x * 32/ln2 - k. Its x86-64 FMA
 * variant (__expf_fma, what an AVX2+FMA CPU gets) fuses these steps as this
 * file does, operation for operation, so on glibc the results are expf's
 * bit for bit (tests/ops /ops/expf/same-bits compares every float in the
 * ranges the engine uses). Another libm may round differently: the first
 * call compares this code with the expf the engine is linked to on 4096
 * arguments and, if one differs, every call goes to expf one by one. (A
 * libm with the same algorithm but no fused multiply-add - musl, or glibc
 * with its FMA variant tuned off - passes that check yet differs on about
 * 2 of the 2.2e9 floats under |x| = 88: the last bit of a softmax weight.)
 * Arguments at or past |x| = 88 (overflow, underflow, NaN) also go to expf.
 *
 * The table and constants are derived from Arm's optimized-routines (Copyright
 * (c) Arm Limited, MIT OR Apache-2.0 WITH LLVM-exception) as shipped in glibc
 * (LGPL-2.1-or-later); both licences allow their use in this GPL-3.0-or-later
 * program. */
#include "fe-internal.h"

#include <math.h>
#include <pthread.h>
#include <stdbool.h>
#include <stdint.h>
#include <string.h>

#if defined(__x86_64__) && defined(__GNUC__)
#include <immintrin.h>
#define FE_EXPF_X86 1
#endif

#ifdef FE_EXPF_X86
/* glibc's __exp2f_data for expf (sysdeps/ieee754/flt-32/e_exp2f_data.c):
 * T[i] = bits(2^(i/32)) - (i << 52) / 32, the scaled cubic, 32/ln2 and the
 * rounding shift 0x1.8p52. */
static const int64_t fe_expf_tab[32] = {
    0x3ff0000000000000, 0x3fefd9b0d3158574, 0x3fefb5586cf9890f, 0x3fef9301d0125b51,
    0x3fef72b83c7d517b, 0x3fef54873168b9aa, 0x3fef387a6e756238, 0x3fef1e9df51fdee1,
    0x3fef06fe0a31b715, 0x3feef1a7373aa9cb, 0x3feedea64c123422, 0x3feece086061892d,
    0x3feebfdad5362a27, 0x3feeb42b569d4f82, 0x3feeab07dd485429, 0x3feea47eb03a5585,
    0x3feea09e667f3bcd, 0x3fee9f75e8ec5f74, 0x3feea11473eb0187, 0x3feea589994cce13,
    0x3feeace5422aa0db, 0x3feeb737b0cdc5e5, 0x3feec49182a3f090, 0x3feed503b23e255d,
    0x3feee89f995ad3ad, 0x3feeff76f2fb5e47, 0x3fef199bdd85529c, 0x3fef3720dcef9069,
    0x3fef5818dcfba487, 0x3fef7c97337b9b5f, 0x3fefa4afa2a490da, 0x3fefd0765b6e4540,
};
#define FE_EXPF_INVLN2N 0x1.71547652b82fep+5
#define FE_EXPF_SHIFT 0x1.8p+52
#define FE_EXPF_C0 0x1.c6af84b912394p-20
#define FE_EXPF_C1 0x1.ebfce50fac4f3p-13
#define FE_EXPF_C2 0x1.62e42ff0c52d6p-6

/* Four lanes in double: __expf_fma's steps in its order. Only fused
 * multiply-adds and the two products below: no add follows a product, so
 * the compiler has nothing to contract. */
__attribute__((target("avx2,fma"))) static inline __m128 fe_expf4_avx2(__m128 x) {
    __m256d xd = _mm256_cvtps_pd(x);
    __m256d inv = _mm256_set1_pd(FE_EXPF_INVLN2N), shift = _mm256_set1_pd(FE_EXPF_SHIFT);
    __m256d kd = _mm256_fmadd_pd(inv, xd, shift);
    __m256i ki = _mm256_castpd_si256(kd);
    kd = _mm256_sub_pd(kd, shift);
    __m256d r = _mm256_fmsub_pd(inv, xd, kd);
    __m256i t = _mm256_i64gather_epi64((const long long *)fe_expf_tab,
                                       _mm256_and_si256(ki, _mm256_set1_epi64x(31)), 8);
    t = _mm256_add_epi64(t, _mm256_slli_epi64(ki, 47));
    __m256d z = _mm256_fmadd_pd(_mm256_set1_pd(FE_EXPF_C0), r, _mm256_set1_pd(FE_EXPF_C1));
    __m256d r2 = _mm256_mul_pd(r, r);
    __m256d y = _mm256_fmadd_pd(r, _mm256_set1_pd(FE_EXPF_C2), _mm256_set1_pd(1.0));
    y = _mm256_fmadd_pd(z, r2, y);
    y = _mm256_mul_pd(y, _mm256_castsi256_pd(t));
    return _mm256_cvtpd_ps(y);
}

/* y[i] = expf(x[i]) for whole groups of eight; returns how many. A group
 * with an argument at or past |x| = 88 (glibc's special cases) or a NaN
 * goes to expf. */
__attribute__((target("avx2,fma"))) static size_t fe_expf_avx2(const float *x, float *y,
                                                             size_t n) {
    const __m256i top = _mm256_set1_epi32(0x7ff), limit = _mm256_set1_epi32(0x42a);
    size_t i = 0;
    for (; i + 8 <= n; i += 8) {
        __m256 v = _mm256_loadu_ps(x + i);
        __m256i abstop = _mm256_and_si256(_mm256_srli_epi32(_mm256_castps_si256(v), 20), top);
        if (!_mm256_testz_si256(_mm256_cmpgt_epi32(abstop, limit), _mm256_set1_epi32(-1))) {
            for (size_t j = i; j < i + 8; j++)
                y[j] = expf(x[j]);
            continue;
        }
        __m128 lo = fe_expf4_avx2(_mm256_castps256_ps128(v));
        __m128 hi = fe_expf4_avx2(_mm256_extractf128_ps(v, 1));
        _mm256_storeu_ps(y + i, _mm256_set_m128(hi, lo));
    }
    return i;
}

static bool fe_expf_vector_ok;
static pthread_once_t fe_expf_once = PTHREAD_ONCE_INIT;

/* The vector path only where it gives the linked expf's numbers: checked
 * on 4096 arguments spread over [-88, 88) and the softmax's (-1, 0]. */
static void fe_expf_check(void) {
    const FeCpuInfo *ci = fe_cpu_info();
    if (!(ci->avx2 && ci->fma))
        return;
    float x[4096], y[4096];
    for (int i = 0; i < 4096; i++)
        x[i] = i < 2048 ? -88.0f + (float)i * (176.0f / 2048.0f) + (float)i * 1e-5f
                        : -(float)(i - 2048) / 2048.0f * 0.999f;
    fe_expf_avx2(x, y, 4096);
    for (int i = 0; i < 4096; i++) {
        float e = expf(x[i]);
        if (memcmp(&e, &y[i], sizeof e) != 0)
            return;
    }
    fe_expf_vector_ok = true;
}
#endif

bool fe_expf_rows_vectorised(void) {
#ifdef FE_EXPF_X86
    pthread_once(&fe_expf_once, fe_expf_check);
    return fe_expf_vector_ok;
#else
    return false;
#endif
}

void fe_expf_rows(const float *x, float *y, size_t n) {
    size_t i = 0;
#ifdef FE_EXPF_X86
    if (fe_expf_rows_vectorised())
        i = fe_expf_avx2(x, y, n);
#endif
    for (; i < n; i++)
        y[i] = expf(x[i]);
}
