/* fe-cpu.c - the CPU backend: host memory and the op kernels.
 *
 * Shapes were checked by fe-ops.c. Heavy ops go through fe_sgemm (OpenBLAS or
 * the built-in kernels, fe-blas.c); the rest are loops, with AVX-512 versions
 * of the ones that sit on the per-token decode path. Scratch memory is
 * per thread and only ever grows, so a warm engine decodes without
 * allocating. */
#include "fe-internal.h"

#include <math.h>
#include <pthread.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>
#ifdef __linux__
#include <sys/mman.h>
#endif

#if defined(__x86_64__) && defined(__GNUC__)
#include <immintrin.h>
#define FE_HAVE_X86_KERNELS 1
/* GCC 12's AVX-512 headers build their "undefined" pass-through operands as
 * `__m512 __Y = __Y;`, which -Winit-self turns into -Wuninitialized noise at
 * every use; the operand is masked out by construction. */
#pragma GCC diagnostic ignored "-Wuninitialized"
#pragma GCC diagnostic ignored "-Wmaybe-uninitialized"
#endif

/* ------------------------------------------------------------------------ */
/* Big host blocks                                                          */

/* Blocks of 2 MiB and more (the weights, the states' arenas and KV caches,
 * the scratch of big ops) are mapped on their own and 2 MiB aligned, so
 * that the ones written whole can be advised onto 2 MiB pages
 * (fe_cpu_advise_huge: the weights, the encoder's arena, the scratch).
 * Why: an arena regrows with each bigger input, and every first touch of a
 * fresh 4 KiB page is a fault: 22 us each on the development VM (a
 * paravirtualised guest; 16384 touched pages cost 366 ms of CPU, 6 ms on
 * 2 MiB pages), which made an engine's first pass over a document's
 * formulas about 3x slower in the encoder than its second. Only the whole
 * 2 MiB extents inside a block become huge pages, so a block written whole
 * is resident no more than on 4 KiB pages; buffers only partly touched
 * (the KV caches, sized for the longest formula) are not advised. The
 * registry remembers each mapping's length for munmap. */
#if defined(__linux__) && defined(MAP_ANONYMOUS)
#define FE_HAVE_BIG_BLOCKS 1
static const size_t fe_big_min = (size_t)2 << 20;
typedef struct {
    void *p;
    size_t len;
} FeBigBlock;
static pthread_mutex_t fe_big_lock = PTHREAD_MUTEX_INITIALIZER;
static FeBigBlock *fe_big;
static size_t fe_big_n, fe_big_cap;

static bool fe_big_register(void *p, size_t len) {
    bool ok = true;
    pthread_mutex_lock(&fe_big_lock);
    if (fe_big_n == fe_big_cap) {
        size_t cap = fe_big_cap ? 2 * fe_big_cap : 16;
        FeBigBlock *b = realloc(fe_big, cap * sizeof *b);
        if (b) {
            fe_big = b;
            fe_big_cap = cap;
        } else {
            ok = false;
        }
    }
    if (ok)
        fe_big[fe_big_n++] = (FeBigBlock){p, len};
    pthread_mutex_unlock(&fe_big_lock);
    return ok;
}

/* n bytes (n >= fe_big_min) on a 2 MiB boundary; NULL when out of memory. */
static void *fe_big_alloc(size_t n) {
    const size_t huge = (size_t)2 << 20, page = 4096;
    size_t len = (n + page - 1) & ~(page - 1);
    if (len < n || len + huge < len)
        return NULL;
    char *m = mmap(NULL, len + huge, PROT_READ | PROT_WRITE, MAP_PRIVATE | MAP_ANONYMOUS, -1, 0);
    if (m == MAP_FAILED)
        return NULL;
    char *a = (char *)(((uintptr_t)m + huge - 1) & ~(uintptr_t)(huge - 1));
    if (a > m)
        munmap(m, (size_t)(a - m));
    if (m + len + huge > a + len)
        munmap(a + len, (size_t)(m + len + huge - (a + len)));
    if (!fe_big_register(a, len)) {
        munmap(a, len);
        return NULL;
    }
    return a;
}

/* Unmaps p if fe_big_alloc made it; false otherwise (heap memory). */
static bool fe_big_free(void *p) {
    size_t len = 0;
    pthread_mutex_lock(&fe_big_lock);
    for (size_t i = 0; i < fe_big_n; i++) {
        if (fe_big[i].p == p) {
            len = fe_big[i].len;
            fe_big[i] = fe_big[--fe_big_n];
            break;
        }
    }
    if (fe_big_n == 0) {
        free(fe_big);
        fe_big = NULL;
        fe_big_cap = 0;
    }
    pthread_mutex_unlock(&fe_big_lock);
    if (len)
        munmap(p, len);
    return len != 0;
}
#endif

/* 64-byte aligned host memory: big blocks mapped as above, the rest from
 * the heap. Free with fe_cpu_host_free. */
static void *fe_cpu_host_alloc(size_t n) {
    size_t rounded = (n + 63) & ~(size_t)63;
    if (rounded < n)
        return NULL;
#ifdef FE_HAVE_BIG_BLOCKS
    if (rounded >= fe_big_min)
        return fe_big_alloc(rounded);
#endif
    return aligned_alloc(64, rounded ? rounded : 64);
}

static void fe_cpu_host_free(void *p) {
    if (!p)
        return;
#ifdef FE_HAVE_BIG_BLOCKS
    if (fe_big_free(p))
        return;
#endif
    free(p);
}

/* ------------------------------------------------------------------------ */
/* Per-thread scratch                                                       */

static pthread_key_t fe_scratch_key;
static pthread_once_t fe_scratch_once = PTHREAD_ONCE_INIT;

/* Three buffers per thread: slot 0 for the ops' temporaries, slot 1 for the
 * bf16 copy of a matmul's input rows, slot 2 for the widened 16-bit weight
 * rows of a matmul's tasks (both reserved by the calling thread and read or
 * written by the pool's threads while the calling thread's own tasks may use
 * slot 0). */
enum { FE_SCRATCH_SLOTS = 3 };
typedef struct {
    float *data[FE_SCRATCH_SLOTS];
    size_t cap[FE_SCRATCH_SLOTS];
} FeScratch;

static void fe_scratch_destroy(void *p) {
    FeScratch *s = p;
    if (s) {
        for (int i = 0; i < FE_SCRATCH_SLOTS; i++)
            fe_cpu_host_free(s->data[i]);
        free(s);
    }
}

static void fe_scratch_key_init(void) { pthread_key_create(&fe_scratch_key, fe_scratch_destroy); }

/* A float buffer of at least n elements in a slot, private to this thread. */
static float *fe_scratch_slot(int slot, size_t n) {
    pthread_once(&fe_scratch_once, fe_scratch_key_init);
    FeScratch *s = pthread_getspecific(fe_scratch_key);
    if (!s) {
        s = calloc(1, sizeof *s);
        if (!s || pthread_setspecific(fe_scratch_key, s) != 0) {
            free(s);
            return NULL;
        }
    }
    if (n > s->cap[slot]) {
        if (n > SIZE_MAX / sizeof(float))
            return NULL;
        float *p = fe_cpu_host_alloc(n * sizeof(float));
        if (!p)
            return NULL;
        fe_cpu_advise_huge(p, n * sizeof(float)); /* written whole by the op that grew it */
        fe_cpu_host_free(s->data[slot]);
        s->data[slot] = p;
        s->cap[slot] = n;
    }
    return s->data[slot];
}

static float *fe_scratch(size_t n) { return fe_scratch_slot(0, n); }

float *fe_cpu_scratch(int slot, size_t n) {
    return slot >= 0 && slot < FE_SCRATCH_SLOTS ? fe_scratch_slot(slot, n) : NULL;
}

static fe_status fe_scratch_error(size_t n) {
    /* KiB, rounded up: a decode step's buffers are well under a MiB. */
    return fe_set_error(FE_ERR_OUT_OF_MEMORY, "CPU scratch: cannot allocate %zu KiB",
                        n / 256 + (n % 256 != 0)); /* n floats; no overflow for huge n */
}

/* ------------------------------------------------------------------------ */
/* Vector helpers                                                           */

static bool fe_use_avx512(void) {
#ifdef FE_HAVE_X86_KERNELS
    return fe_cpu_info()->avx512f;
#else
    return false;
#endif
}

/* AVX2+FMA without AVX-512 (most laptops, CI's runners): the decode step's
 * dot products and attention otherwise run in the portable loops, ~5x
 * slower (test-batch: 310 s -> see tests/README.md, "Suite time"). */
static bool fe_use_avx2(void) {
#ifdef FE_HAVE_X86_KERNELS
    const FeCpuInfo *ci = fe_cpu_info();
    return ci->avx2 && ci->fma;
#else
    return false;
#endif
}

static float fe_dot_scalar(const float *a, const float *b, int n) {
    /* Four partial sums: vectorisable order without -ffast-math. */
    float s0 = 0, s1 = 0, s2 = 0, s3 = 0;
    int i = 0;
    for (; i + 4 <= n; i += 4) {
        s0 += a[i] * b[i];
        s1 += a[i + 1] * b[i + 1];
        s2 += a[i + 2] * b[i + 2];
        s3 += a[i + 3] * b[i + 3];
    }
    for (; i < n; i++)
        s0 += a[i] * b[i];
    return (s0 + s1) + (s2 + s3);
}

#ifdef FE_HAVE_X86_KERNELS
/* Horizontal sum (the header's shuffle tree; see the pragma above). */
__attribute__((target("avx512f"))) static inline float fe_hsum512(__m512 v) {
    return _mm512_reduce_add_ps(v);
}

__attribute__((target("avx512f"))) static inline __m256 fe_hi256(__m512 v) {
    return _mm256_castpd_ps(_mm512_extractf64x4_pd(_mm512_castps_pd(v), 1));
}

/* The four horizontal sums of a0..a3 into y[0..3], sharing the shuffles. */
__attribute__((target("avx512f"))) static inline void fe_hsum4_512(__m512 a0, __m512 a1, __m512 a2,
                                                                   __m512 a3, float *y) {
    __m256 b0 = _mm256_add_ps(_mm512_castps512_ps256(a0), fe_hi256(a0));
    __m256 b1 = _mm256_add_ps(_mm512_castps512_ps256(a1), fe_hi256(a1));
    __m256 b2 = _mm256_add_ps(_mm512_castps512_ps256(a2), fe_hi256(a2));
    __m256 b3 = _mm256_add_ps(_mm512_castps512_ps256(a3), fe_hi256(a3));
    __m256 h = _mm256_hadd_ps(_mm256_hadd_ps(b0, b1), _mm256_hadd_ps(b2, b3));
    _mm_storeu_ps(y, _mm_add_ps(_mm256_castps256_ps128(h), _mm256_extractf128_ps(h, 1)));
}

/* Streaming a weight that does not fit in L2 runs ~1.4x faster when the next
 * rows are asked for while these are summed (bench/engine-cpu; the hardware
 * prefetcher alone ramps up too slowly on 0.5-2 KiB rows). */
static inline void fe_prefetch_rows(const void *next, size_t bytes) {
    for (size_t o = 0; o < bytes; o += 64)
        __builtin_prefetch((const char *)next + o, 0, 3);
}

__attribute__((target("avx512f"))) static float fe_dot_avx512(const float *a, const float *b,
                                                              int n) {
    __m512 acc0 = _mm512_setzero_ps(), acc1 = _mm512_setzero_ps();
    int i = 0;
    for (; i + 32 <= n; i += 32) {
        acc0 = _mm512_fmadd_ps(_mm512_loadu_ps(a + i), _mm512_loadu_ps(b + i), acc0);
        acc1 = _mm512_fmadd_ps(_mm512_loadu_ps(a + i + 16), _mm512_loadu_ps(b + i + 16), acc1);
    }
    for (; i + 16 <= n; i += 16)
        acc0 = _mm512_fmadd_ps(_mm512_loadu_ps(a + i), _mm512_loadu_ps(b + i), acc0);
    if (i < n) {
        __mmask16 m = (__mmask16)((1u << (n - i)) - 1);
        acc1 = _mm512_fmadd_ps(_mm512_maskz_loadu_ps(m, a + i), _mm512_maskz_loadu_ps(m, b + i),
                               acc1);
    }
    return fe_hsum512(_mm512_add_ps(acc0, acc1));
}

/* y[j] = dot(x, w[j]) for four rows of w at once, so x is loaded once;
 * prefetch: bytes of the following rows to ask for meanwhile (0 = none). */
__attribute__((target("avx512f"))) static void fe_dot4_avx512(const float *x,
                                                                       const float *w, size_t ldw,
                                                                       int k, float *y,
                                                                       size_t prefetch) {
    __m512 a0 = _mm512_setzero_ps(), a1 = _mm512_setzero_ps();
    __m512 a2 = _mm512_setzero_ps(), a3 = _mm512_setzero_ps();
    const float *w0 = w, *w1 = w + ldw, *w2 = w + 2 * ldw, *w3 = w + 3 * ldw;
    int i = 0;
    fe_prefetch_rows(w + 4 * ldw, prefetch);
    for (; i + 16 <= k; i += 16) {
        __m512 xv = _mm512_loadu_ps(x + i);
        a0 = _mm512_fmadd_ps(xv, _mm512_loadu_ps(w0 + i), a0);
        a1 = _mm512_fmadd_ps(xv, _mm512_loadu_ps(w1 + i), a1);
        a2 = _mm512_fmadd_ps(xv, _mm512_loadu_ps(w2 + i), a2);
        a3 = _mm512_fmadd_ps(xv, _mm512_loadu_ps(w3 + i), a3);
    }
    if (i < k) {
        __mmask16 m = (__mmask16)((1u << (k - i)) - 1);
        __m512 xv = _mm512_maskz_loadu_ps(m, x + i);
        a0 = _mm512_fmadd_ps(xv, _mm512_maskz_loadu_ps(m, w0 + i), a0);
        a1 = _mm512_fmadd_ps(xv, _mm512_maskz_loadu_ps(m, w1 + i), a1);
        a2 = _mm512_fmadd_ps(xv, _mm512_maskz_loadu_ps(m, w2 + i), a2);
        a3 = _mm512_fmadd_ps(xv, _mm512_maskz_loadu_ps(m, w3 + i), a3);
    }
    fe_hsum4_512(a0, a1, a2, a3, y);
}

__attribute__((target("avx512f"))) static void fe_axpy_avx512(float a, const float *x, float *y,
                                                              int n) {
    __m512 va = _mm512_set1_ps(a);
    int i = 0;
    for (; i + 16 <= n; i += 16)
        _mm512_storeu_ps(y + i, _mm512_fmadd_ps(va, _mm512_loadu_ps(x + i), _mm512_loadu_ps(y + i)));
    if (i < n) {
        __mmask16 m = (__mmask16)((1u << (n - i)) - 1);
        _mm512_mask_storeu_ps(y + i, m,
                              _mm512_fmadd_ps(va, _mm512_maskz_loadu_ps(m, x + i),
                                              _mm512_maskz_loadu_ps(m, y + i)));
    }
}
#endif

#ifdef FE_HAVE_X86_KERNELS
__attribute__((target("avx512f"))) static void fe_bias_relu_avx512(float *y, float bias,
                                                                  bool relu, size_t n) {
    __m512 vb = _mm512_set1_ps(bias), zero = _mm512_setzero_ps();
    size_t i = 0;
    for (; i < n; i += 16) {
        __mmask16 m = n - i >= 16 ? (__mmask16)0xffff : (__mmask16)((1u << (n - i)) - 1);
        __m512 t = _mm512_add_ps(_mm512_maskz_loadu_ps(m, y + i), vb);
        _mm512_mask_storeu_ps(y + i, m, relu ? _mm512_max_ps(t, zero) : t);
    }
}

__attribute__((target("avx512f"))) static void fe_add_avx512(const float *a, const float *b,
                                                             float *y, size_t n) {
    size_t i = 0;
    for (; i + 16 <= n; i += 16)
        _mm512_storeu_ps(y + i, _mm512_add_ps(_mm512_loadu_ps(a + i), _mm512_loadu_ps(b + i)));
    if (i < n) {
        __mmask16 m = (__mmask16)((1u << (n - i)) - 1);
        _mm512_mask_storeu_ps(y + i, m,
                              _mm512_add_ps(_mm512_maskz_loadu_ps(m, a + i),
                                            _mm512_maskz_loadu_ps(m, b + i)));
    }
}
#endif

#ifdef FE_HAVE_X86_KERNELS
/* AVX2 versions of the element-wise loops (bias/ReLU, add, GELU, the direct
 * convolution, layer norm's last pass) for CPUs without AVX-512, where these
 * ran one float at a time (~12 % of the paper's CPU on Zen 3, bench/RESULTS.md
 * "speed12r"). They do the portable loops' operations in the same order, one
 * rounding each, so they give the same bits: compiled for "avx2" alone, never
 * "fma", so that no compiler can contract a multiply and an add into one
 * (GCC's GNU modes and clang contract by default; meson's c_std=c11 turns
 * GCC's off, a clang build would not) as the portable code, built for
 * baseline x86-64, cannot either (tests/ops `/ops/elementwise/same-bits`). */
__attribute__((target("avx2"))) static void fe_bias_relu_avx2(float *y, float bias, bool relu,
                                                              size_t n) {
    __m256 vb = _mm256_set1_ps(bias), zero = _mm256_setzero_ps();
    size_t i = 0;
    for (; i + 8 <= n; i += 8) {
        __m256 t = _mm256_add_ps(_mm256_loadu_ps(y + i), vb);
        /* maxps gives its second operand (0) for a NaN, as !(t > 0) does */
        _mm256_storeu_ps(y + i, relu ? _mm256_max_ps(t, zero) : t);
    }
    for (; i < n; i++) {
        float t = y[i] + bias;
        y[i] = relu && !(t > 0.0f) ? 0.0f : t;
    }
}

__attribute__((target("avx2"))) static void fe_add_avx2(const float *a, const float *b, float *y,
                                                        size_t n) {
    size_t i = 0;
    for (; i + 8 <= n; i += 8)
        _mm256_storeu_ps(y + i, _mm256_add_ps(_mm256_loadu_ps(a + i), _mm256_loadu_ps(b + i)));
    for (; i < n; i++)
        y[i] = a[i] + b[i];
}
#endif

#ifdef FE_HAVE_X86_KERNELS
/* The tail of n % 8 floats as a masked load: lanes past n read as 0, so the
 * sum's order depends on n only, never on where the vectors sit. */
__attribute__((target("avx2,fma"))) static inline __m256i fe_tail_mask256(int r) {
    static const int32_t ones[16] = {-1, -1, -1, -1, -1, -1, -1, -1, 0, 0, 0, 0, 0, 0, 0, 0};
    return _mm256_loadu_si256((const __m256i *)(ones + 8 - r));
}

__attribute__((target("avx2,fma"))) static float fe_dot_avx2(const float *a, const float *b,
                                                            int n) {
    __m256 acc0 = _mm256_setzero_ps(), acc1 = _mm256_setzero_ps();
    int i = 0;
    for (; i + 16 <= n; i += 16) {
        acc0 = _mm256_fmadd_ps(_mm256_loadu_ps(a + i), _mm256_loadu_ps(b + i), acc0);
        acc1 = _mm256_fmadd_ps(_mm256_loadu_ps(a + i + 8), _mm256_loadu_ps(b + i + 8), acc1);
    }
    for (; i + 8 <= n; i += 8)
        acc0 = _mm256_fmadd_ps(_mm256_loadu_ps(a + i), _mm256_loadu_ps(b + i), acc0);
    if (i < n) {
        __m256i m = fe_tail_mask256(n - i);
        acc1 = _mm256_fmadd_ps(_mm256_maskload_ps(a + i, m), _mm256_maskload_ps(b + i, m), acc1);
    }
    __m256 v = _mm256_add_ps(acc0, acc1);
    __m128 h = _mm_add_ps(_mm256_castps256_ps128(v), _mm256_extractf128_ps(v, 1));
    h = _mm_add_ps(h, _mm_movehl_ps(h, h));
    h = _mm_add_ss(h, _mm_movehdup_ps(h));
    return _mm_cvtss_f32(h);
}

__attribute__((target("avx2,fma"))) static void fe_axpy_avx2(float a, const float *x, float *y,
                                                            int n) {
    __m256 va = _mm256_set1_ps(a);
    int i = 0;
    for (; i + 8 <= n; i += 8)
        _mm256_storeu_ps(y + i, _mm256_fmadd_ps(va, _mm256_loadu_ps(x + i), _mm256_loadu_ps(y + i)));
    for (; i < n; i++)
        y[i] = fmaf(a, x[i], y[i]);
}
#endif

#ifdef FE_HAVE_X86_KERNELS
/* Horizontal sums in one fixed order ((0+1)+(2+3)) + ((4+5)+(6+7)), alone
 * or four at a time, so a column or a key summed in a group of four gives
 * the number it gives alone: batched rows equal serial ones bit for bit. */
__attribute__((target("avx2,fma"))) static inline float fe_hsum256(__m256 v) {
    __m256 h = _mm256_hadd_ps(v, v);
    h = _mm256_hadd_ps(h, h);
    return _mm_cvtss_f32(_mm_add_ss(_mm256_castps256_ps128(h), _mm256_extractf128_ps(h, 1)));
}

__attribute__((target("avx2,fma"))) static inline void fe_hsum4_256(__m256 a0, __m256 a1,
                                                                    __m256 a2, __m256 a3,
                                                                    float *y) {
    __m256 h = _mm256_hadd_ps(_mm256_hadd_ps(a0, a1), _mm256_hadd_ps(a2, a3));
    _mm_storeu_ps(y, _mm_add_ps(_mm256_castps256_ps128(h), _mm256_extractf128_ps(h, 1)));
}

/* y[0] = dot(x, w): one accumulator, the order of one lane of fe_dot4_avx2. */
__attribute__((target("avx2,fma"))) static float fe_dot1_avx2(const float *x, const float *w,
                                                             int k) {
    __m256 a = _mm256_setzero_ps();
    int i = 0;
    for (; i + 8 <= k; i += 8)
        a = _mm256_fmadd_ps(_mm256_loadu_ps(x + i), _mm256_loadu_ps(w + i), a);
    if (i < k) {
        __m256i m = fe_tail_mask256(k - i);
        a = _mm256_fmadd_ps(_mm256_maskload_ps(x + i, m), _mm256_maskload_ps(w + i, m), a);
    }
    return fe_hsum256(a);
}

/* y[j] = dot(x, w[j]) for four rows of w (ldw apart), x loaded once. */
__attribute__((target("avx2,fma"))) static void fe_dot4_avx2(const float *x, const float *w,
                                                            size_t ldw, int k, float *y) {
    __m256 a0 = _mm256_setzero_ps(), a1 = _mm256_setzero_ps();
    __m256 a2 = _mm256_setzero_ps(), a3 = _mm256_setzero_ps();
    const float *w0 = w, *w1 = w + ldw, *w2 = w + 2 * ldw, *w3 = w + 3 * ldw;
    int i = 0;
    for (; i + 8 <= k; i += 8) {
        __m256 xv = _mm256_loadu_ps(x + i);
        a0 = _mm256_fmadd_ps(xv, _mm256_loadu_ps(w0 + i), a0);
        a1 = _mm256_fmadd_ps(xv, _mm256_loadu_ps(w1 + i), a1);
        a2 = _mm256_fmadd_ps(xv, _mm256_loadu_ps(w2 + i), a2);
        a3 = _mm256_fmadd_ps(xv, _mm256_loadu_ps(w3 + i), a3);
    }
    if (i < k) {
        __m256i m = fe_tail_mask256(k - i);
        __m256 xv = _mm256_maskload_ps(x + i, m);
        a0 = _mm256_fmadd_ps(xv, _mm256_maskload_ps(w0 + i, m), a0);
        a1 = _mm256_fmadd_ps(xv, _mm256_maskload_ps(w1 + i, m), a1);
        a2 = _mm256_fmadd_ps(xv, _mm256_maskload_ps(w2 + i, m), a2);
        a3 = _mm256_fmadd_ps(xv, _mm256_maskload_ps(w3 + i, m), a3);
    }
    fe_hsum4_256(a0, a1, a2, a3, y);
}

/* fe_dot4_avx2 for NR = 1-3 rows of x (ldx apart) at once, y's rows ldy
 * apart, with f32 weights or the model file's f16/bf16 ones widened in
 * registers (F16C's vcvtph2ps, a shift for bf16: exact). Each weight vector
 * is loaded once for the NR rows (the one-row kernel does five loads per four
 * multiply-adds, load-bound on Zen 3), and every sum keeps fe_dot4_avx2's
 * order (one 8-lane accumulator along k, then fe_hsum4_256), so a row's
 * numbers depend neither on the rows beside it nor on the weights' dtype.
 * Written out by hand: GCC -O2 keeps an array of accumulators in memory. */
#define FE_AVX2_ZERO4(a) __m256 a##0 = _mm256_setzero_ps(), a##1 = a##0, a##2 = a##0, a##3 = a##0
/* One weight vector (weight row q) into the NR rows' accumulators. */
#define FE_AVX2_COL(q, WV, NR)                                                                   \
    do {                                                                                         \
        __m256 wv = WV;                                                                          \
        a##q = _mm256_fmadd_ps(xa, wv, a##q);                                                    \
        if (NR > 1)                                                                              \
            b##q = _mm256_fmadd_ps(xb, wv, b##q);                                                \
        if (NR > 2)                                                                              \
            c##q = _mm256_fmadd_ps(xc, wv, c##q);                                                \
    } while (0)
/* Eight positions from i, n of them (k - i) before the end: the NR input
 * rows, then the four weight rows one at a time (3 x 4 accumulators, 3
 * inputs and one weight: 16 registers). Every load takes n; only the tail
 * loads (n < 8) read it. */
#define FE_AVX2_STEP(LOADX, LOADW, NR, n)                                                        \
    do {                                                                                         \
        __m256 xa = LOADX(x + i, n);                                                             \
        __m256 xb = NR > 1 ? LOADX(x + ldx + i, n) : xa;                                         \
        __m256 xc = NR > 2 ? LOADX(x + 2 * ldx + i, n) : xa;                                     \
        FE_AVX2_COL(0, LOADW(w + i, n), NR);                                                     \
        FE_AVX2_COL(1, LOADW(w + ldw + i, n), NR);                                               \
        FE_AVX2_COL(2, LOADW(w + 2 * ldw + i, n), NR);                                           \
        FE_AVX2_COL(3, LOADW(w + 3 * ldw + i, n), NR);                                           \
    } while (0)
#define FE_AVX2_LOAD_F32(p, n) _mm256_loadu_ps(p)
#define FE_AVX2_LOAD_F16(p, n) _mm256_cvtph_ps(_mm_loadu_si128((const __m128i *)(p)))
#define FE_AVX2_LOAD_BF16(p, n)                                                                \
    _mm256_castsi256_ps(                                                                       \
        _mm256_slli_epi32(_mm256_cvtepu16_epi32(_mm_loadu_si128((const __m128i *)(p))), 16))
/* The last n (< 8) floats, zero past them; the mask m is
 * fe_tail_mask256 (n), made once per tail. */
#define FE_AVX2_MASKED(p, n) _mm256_maskload_ps(p, m)
/* The last k % 8 weights of four rows as f32, zero past k (what the masked
 * load of their f32 copy gives). */
#define FE_AVX2_TAIL_F32(p, n) _mm256_maskload_ps(p, m)
/* 16-bit tails of n (< 8) weights through a zero-padded copy and the same
 * vector widening (+0.0 past k; no call inside the kernel, which made GCC
 * keep the accumulators on the stack). */
#define FE_AVX2_TAIL_HALF(p, n, LOAD)                                                            \
    __extension__({                                                                              \
        uint16_t t_[8] = {0};                                                                    \
        for (int q_ = 0; q_ < (n); q_++)                                                         \
            t_[q_] = (p)[q_];                                                                    \
        LOAD(t_, 8);                                                                             \
    })
#define FE_AVX2_TAIL_F16(p, n) FE_AVX2_TAIL_HALF(p, n, FE_AVX2_LOAD_F16)
#define FE_AVX2_TAIL_BF16(p, n) FE_AVX2_TAIL_HALF(p, n, FE_AVX2_LOAD_BF16)
#define FE_DEFINE_DOTNX4_AVX2(NAME, NR, WT, LOADW, TAILW, TARGET)                               \
    __attribute__((target(TARGET))) static void NAME(const float *x, size_t ldx, const WT *w,   \
                                                     size_t ldw, int k, float *y, size_t ldy) { \
        FE_AVX2_ZERO4(a);                                                                      \
        FE_AVX2_ZERO4(b);                                                                      \
        FE_AVX2_ZERO4(c);                                                                      \
        int i = 0;                                                                             \
        for (; i + 8 <= k; i += 8)                                                             \
            FE_AVX2_STEP(FE_AVX2_LOAD_F32, LOADW, NR, k - i);                                  \
        if (i < k) {                                                                           \
            __m256i m = fe_tail_mask256(k - i);                                                \
            FE_AVX2_STEP(FE_AVX2_MASKED, TAILW, NR, k - i);                                    \
        }                                                                                      \
        fe_hsum4_256(a0, a1, a2, a3, y);                                                       \
        if (NR > 1)                                                                            \
            fe_hsum4_256(b0, b1, b2, b3, y + ldy);                                             \
        if (NR > 2)                                                                            \
            fe_hsum4_256(c0, c1, c2, c3, y + 2 * ldy);                                         \
    }
#define FE_AVX2_HALF_TARGET "avx2,fma,f16c"
FE_DEFINE_DOTNX4_AVX2(fe_dot2x4_avx2, 2, float, FE_AVX2_LOAD_F32, FE_AVX2_TAIL_F32, "avx2,fma")
FE_DEFINE_DOTNX4_AVX2(fe_dot3x4_avx2, 3, float, FE_AVX2_LOAD_F32, FE_AVX2_TAIL_F32, "avx2,fma")
FE_DEFINE_DOTNX4_AVX2(fe_dot1x4_f16_avx2, 1, uint16_t, FE_AVX2_LOAD_F16, FE_AVX2_TAIL_F16,
                      FE_AVX2_HALF_TARGET)
FE_DEFINE_DOTNX4_AVX2(fe_dot2x4_f16_avx2, 2, uint16_t, FE_AVX2_LOAD_F16, FE_AVX2_TAIL_F16,
                      FE_AVX2_HALF_TARGET)
FE_DEFINE_DOTNX4_AVX2(fe_dot3x4_f16_avx2, 3, uint16_t, FE_AVX2_LOAD_F16, FE_AVX2_TAIL_F16,
                      FE_AVX2_HALF_TARGET)
FE_DEFINE_DOTNX4_AVX2(fe_dot1x4_bf16_avx2, 1, uint16_t, FE_AVX2_LOAD_BF16, FE_AVX2_TAIL_BF16,
                      FE_AVX2_HALF_TARGET)
FE_DEFINE_DOTNX4_AVX2(fe_dot2x4_bf16_avx2, 2, uint16_t, FE_AVX2_LOAD_BF16, FE_AVX2_TAIL_BF16,
                      FE_AVX2_HALF_TARGET)
FE_DEFINE_DOTNX4_AVX2(fe_dot3x4_bf16_avx2, 3, uint16_t, FE_AVX2_LOAD_BF16, FE_AVX2_TAIL_BF16,
                      FE_AVX2_HALF_TARGET)
#endif

/* y = max(y + bias, 0) with relu, y + bias without. Both versions turn a
 * NaN into 0 under ReLU (PyTorch keeps it); only a broken model makes NaNs,
 * and those are caught at the logits. */
static void fe_bias_relu(float *y, float bias, bool relu, size_t n) {
#ifdef FE_HAVE_X86_KERNELS
    if (fe_use_avx512()) {
        fe_bias_relu_avx512(y, bias, relu, n);
        return;
    }
    if (fe_use_avx2()) {
        fe_bias_relu_avx2(y, bias, relu, n);
        return;
    }
#endif
    for (size_t i = 0; i < n; i++) {
        float t = y[i] + bias;
        y[i] = relu && !(t > 0.0f) ? 0.0f : t;
    }
}

static void fe_add_rows(const float *a, const float *b, float *y, size_t n) {
#ifdef FE_HAVE_X86_KERNELS
    if (fe_use_avx512()) {
        fe_add_avx512(a, b, y, n);
        return;
    }
    if (fe_use_avx2()) {
        fe_add_avx2(a, b, y, n);
        return;
    }
#endif
    for (size_t i = 0; i < n; i++)
        y[i] = a[i] + b[i];
}

static float fe_dot(const float *a, const float *b, int n) {
#ifdef FE_HAVE_X86_KERNELS
    if (fe_use_avx512())
        return fe_dot_avx512(a, b, n);
    if (fe_use_avx2())
        return fe_dot_avx2(a, b, n);
#endif
    return fe_dot_scalar(a, b, n);
}

static void fe_axpy(float a, const float *x, float *y, int n) {
#ifdef FE_HAVE_X86_KERNELS
    if (fe_use_avx512()) {
        fe_axpy_avx512(a, x, y, n);
        return;
    }
    if (fe_use_avx2()) {
        fe_axpy_avx2(a, x, y, n);
        return;
    }
#endif
    for (int i = 0; i < n; i++)
        y[i] += a * x[i];
}

/* erf as a rational function on [-3.93, 3.93] (Eigen's fast erf, within a
 * few ulp of erff), so GELU vectorises; outside that range erf is +-1 in
 * float. */
#define FE_ERF_CLAMP 3.832506856900711f
static inline float fe_erf_fast(float x) {
    /* Exactly +-1 outside, so GELU of a large negative is 0, not -1e-6. */
    if (x <= -FE_ERF_CLAMP)
        return -1.0f;
    if (x >= FE_ERF_CLAMP)
        return 1.0f;
    float x2 = x * x;
    float p = -2.72614225801306e-10f;
    p = p * x2 + 2.77068142495902e-08f;
    p = p * x2 + -2.10102402082508e-06f;
    p = p * x2 + -5.69250639462346e-05f;
    p = p * x2 + -7.34990630326855e-04f;
    p = p * x2 + -2.95459980854025e-03f;
    p = p * x2 + -1.60960333262415e-02f;
    p = p * x;
    float q = -1.45660718464996e-05f;
    q = q * x2 + -2.13374055278905e-04f;
    q = q * x2 + -1.68282697438203e-03f;
    q = q * x2 + -7.37332916720468e-03f;
    q = q * x2 + -1.42647390514189e-02f;
    return p / q;
}

#ifdef FE_HAVE_X86_KERNELS
__attribute__((target("avx512f"))) static void fe_gelu_avx512(const float *x, float *y, size_t n) {
    const __m512 lo = _mm512_set1_ps(-FE_ERF_CLAMP), hi = _mm512_set1_ps(FE_ERF_CLAMP);
    const __m512 inv_sqrt2 = _mm512_set1_ps(0.70710678118654752f), half = _mm512_set1_ps(0.5f);
    const __m512 one = _mm512_set1_ps(1.0f);
    size_t i = 0;
    for (; i < n; i += 16) {
        __mmask16 m = n - i >= 16 ? (__mmask16)0xffff : (__mmask16)((1u << (n - i)) - 1);
        __m512 v = _mm512_maskz_loadu_ps(m, x + i);
        __m512 tu = _mm512_mul_ps(v, inv_sqrt2);
        __m512 t = _mm512_min_ps(_mm512_max_ps(tu, lo), hi);
        __m512 t2 = _mm512_mul_ps(t, t);
        __m512 p = _mm512_set1_ps(-2.72614225801306e-10f);
        p = _mm512_fmadd_ps(p, t2, _mm512_set1_ps(2.77068142495902e-08f));
        p = _mm512_fmadd_ps(p, t2, _mm512_set1_ps(-2.10102402082508e-06f));
        p = _mm512_fmadd_ps(p, t2, _mm512_set1_ps(-5.69250639462346e-05f));
        p = _mm512_fmadd_ps(p, t2, _mm512_set1_ps(-7.34990630326855e-04f));
        p = _mm512_fmadd_ps(p, t2, _mm512_set1_ps(-2.95459980854025e-03f));
        p = _mm512_fmadd_ps(p, t2, _mm512_set1_ps(-1.60960333262415e-02f));
        p = _mm512_mul_ps(p, t);
        __m512 q = _mm512_set1_ps(-1.45660718464996e-05f);
        q = _mm512_fmadd_ps(q, t2, _mm512_set1_ps(-2.13374055278905e-04f));
        q = _mm512_fmadd_ps(q, t2, _mm512_set1_ps(-1.68282697438203e-03f));
        q = _mm512_fmadd_ps(q, t2, _mm512_set1_ps(-7.37332916720468e-03f));
        q = _mm512_fmadd_ps(q, t2, _mm512_set1_ps(-1.42647390514189e-02f));
        __m512 erf = _mm512_div_ps(p, q);
        /* Exactly +-1 outside the fitted range, as in fe_erf_fast. */
        erf = _mm512_mask_blend_ps(_mm512_cmp_ps_mask(tu, lo, _CMP_LE_OQ), erf,
                                   _mm512_set1_ps(-1.0f));
        erf = _mm512_mask_blend_ps(_mm512_cmp_ps_mask(tu, hi, _CMP_GE_OQ), erf, one);
        __m512 r = _mm512_mul_ps(_mm512_mul_ps(half, v), _mm512_add_ps(one, erf));
        _mm512_mask_storeu_ps(y + i, m, r);
    }
}
#endif

#ifdef FE_HAVE_X86_KERNELS
/* fe_erf_fast's polynomial and 0.5 * x * (1 + erf) eight at a time, each
 * step the scalar loop's (a multiply, then an add: no FMA, see
 * fe_bias_relu_avx2), so the same bits; the lanes past the clamp get +-1
 * after the division, as the scalar code returns before it. */
__attribute__((target("avx2"))) static void fe_gelu_avx2(const float *x, float *y, size_t n) {
    const __m256 lo = _mm256_set1_ps(-FE_ERF_CLAMP), hi = _mm256_set1_ps(FE_ERF_CLAMP);
    const __m256 inv_sqrt2 = _mm256_set1_ps(0.70710678118654752f), half = _mm256_set1_ps(0.5f);
    const __m256 one = _mm256_set1_ps(1.0f);
#define FE_GELU_STEP(acc, c) acc = _mm256_add_ps(_mm256_mul_ps(acc, t2), _mm256_set1_ps(c))
    size_t i = 0;
    for (; i + 8 <= n; i += 8) {
        __m256 v = _mm256_loadu_ps(x + i);
        __m256 t = _mm256_mul_ps(v, inv_sqrt2);
        __m256 t2 = _mm256_mul_ps(t, t);
        __m256 p = _mm256_set1_ps(-2.72614225801306e-10f);
        FE_GELU_STEP(p, 2.77068142495902e-08f);
        FE_GELU_STEP(p, -2.10102402082508e-06f);
        FE_GELU_STEP(p, -5.69250639462346e-05f);
        FE_GELU_STEP(p, -7.34990630326855e-04f);
        FE_GELU_STEP(p, -2.95459980854025e-03f);
        FE_GELU_STEP(p, -1.60960333262415e-02f);
        p = _mm256_mul_ps(p, t);
        __m256 q = _mm256_set1_ps(-1.45660718464996e-05f);
        FE_GELU_STEP(q, -2.13374055278905e-04f);
        FE_GELU_STEP(q, -1.68282697438203e-03f);
        FE_GELU_STEP(q, -7.37332916720468e-03f);
        FE_GELU_STEP(q, -1.42647390514189e-02f);
        __m256 erf = _mm256_div_ps(p, q);
        erf = _mm256_blendv_ps(erf, _mm256_set1_ps(-1.0f), _mm256_cmp_ps(t, lo, _CMP_LE_OQ));
        erf = _mm256_blendv_ps(erf, one, _mm256_cmp_ps(t, hi, _CMP_GE_OQ));
        _mm256_storeu_ps(y + i, _mm256_mul_ps(_mm256_mul_ps(half, v), _mm256_add_ps(one, erf)));
    }
#undef FE_GELU_STEP
    for (; i < n; i++)
        y[i] = 0.5f * x[i] * (1.0f + fe_erf_fast(x[i] * 0.70710678118654752f));
}
#endif

static void fe_gelu_rows(const float *x, float *y, size_t n) {
#ifdef FE_HAVE_X86_KERNELS
    if (fe_use_avx512()) {
        fe_gelu_avx512(x, y, n);
        return;
    }
    if (fe_use_avx2()) {
        fe_gelu_avx2(x, y, n);
        return;
    }
#endif
    for (size_t i = 0; i < n; i++)
        y[i] = 0.5f * x[i] * (1.0f + fe_erf_fast(x[i] * 0.70710678118654752f));
}

/* ------------------------------------------------------------------------ */
/* matmul                                                                   */

/* Weights may be the model file's own 16-bit numbers (f16 or bf16), kept as
 * they are (fe-model.c): widening them to f32 is exact, so the products and
 * sums are those of the f32 path, bit for bit, while a decode step streams
 * half the bytes (decoding is bound by reading the weights). */
#ifdef FE_HAVE_X86_KERNELS
__attribute__((target("avx512f,avx512bw,avx512vl"))) static void
fe_widen_avx512(fe_dtype dt, const uint16_t *h, float *dst, size_t n) {
    for (size_t i = 0; i < n; i += 16) {
        __mmask16 m = n - i >= 16 ? (__mmask16)0xffff : (__mmask16)((1u << (n - i)) - 1);
        __m256i v = _mm256_maskz_loadu_epi16(m, h + i);
        __m512 f = dt == FE_DTYPE_F16
                       ? _mm512_cvtph_ps(v)
                       : _mm512_castsi512_ps(_mm512_slli_epi32(_mm512_cvtepu16_epi32(v), 16));
        _mm512_mask_storeu_ps(dst + i, m, f);
    }
}
#endif

#ifdef FE_HAVE_X86_KERNELS
/* The same on AVX2: vcvtph2ps (F16C) for f16, a shift for bf16; the last
 * n % 8 one by one. */
__attribute__((target("avx2,f16c"))) static void fe_widen_avx2(fe_dtype dt, const uint16_t *h,
                                                               float *dst, size_t n) {
    size_t i = 0;
    for (; i + 8 <= n; i += 8) {
        __m128i v = _mm_loadu_si128((const __m128i *)(h + i));
        __m256 f = dt == FE_DTYPE_F16
                       ? _mm256_cvtph_ps(v)
                       : _mm256_castsi256_ps(_mm256_slli_epi32(_mm256_cvtepu16_epi32(v), 16));
        _mm256_storeu_ps(dst + i, f);
    }
    for (; i < n; i++)
        dst[i] = dt == FE_DTYPE_F16 ? fe_f16_to_f32(h[i]) : fe_bf16_to_f32(h[i]);
}
#endif

static void fe_widen_row(fe_dtype dt, const void *src, size_t i0, float *dst, size_t n) {
#ifdef FE_HAVE_X86_KERNELS
    const FeCpuInfo *ci = fe_cpu_info();
    if (dt != FE_DTYPE_F32 && ci->avx512f && ci->avx512bw && ci->avx512vl) {
        fe_widen_avx512(dt, (const uint16_t *)src + i0, dst, n);
        return;
    }
    if (dt != FE_DTYPE_F32 && ci->avx2 && ci->f16c) {
        fe_widen_avx2(dt, (const uint16_t *)src + i0, dst, n);
        return;
    }
#endif
    if (dt == FE_DTYPE_F16) {
        const uint16_t *h = (const uint16_t *)src + i0;
        for (size_t i = 0; i < n; i++)
            dst[i] = fe_f16_to_f32(h[i]);
    } else if (dt == FE_DTYPE_BF16) {
        const uint16_t *h = (const uint16_t *)src + i0;
        for (size_t i = 0; i < n; i++)
            dst[i] = fe_bf16_to_f32(h[i]);
    } else {
        memcpy(dst, (const float *)src + i0, n * sizeof(float));
    }
}

typedef struct {
    const float *x, *b;
    const void *w;           /* [n, k] of wdt                               */
    fe_dtype wdt;
    float *y;
    int m, n, k;
    int n_chunk;
    bool gelu;
    /* x rounded to bf16 ([m, k], row stride k) when the weight is bf16_dot
     * and the CPU has AVX512_BF16; NULL otherwise. */
    const uint16_t *xb;
    /* 4 * k floats per task for widened weight rows (16-bit weights without
     * xb), reserved by fe_cpu_matmul before any task starts: a task cannot
     * fail, and one that summed another way would break exact rows. */
    float *wide;
} FeGemvJob;

/* Whether the AVX-512 gemv kernels take weights of this dtype: 16-bit rows
 * are loaded with AVX-512BW/VL, which a CPU with AVX-512F alone (Knights
 * Landing) lacks; those go to the AVX2 block. */
static bool fe_gemv_avx512_takes(fe_dtype wdt) {
    if (!fe_use_avx512())
        return false;
    const FeCpuInfo *ci = fe_cpu_info();
    return wdt == FE_DTYPE_F32 ||
           ((wdt == FE_DTYPE_F16 || wdt == FE_DTYPE_BF16) && ci->avx512bw && ci->avx512vl);
}

#ifdef FE_HAVE_X86_KERNELS
/* 16 weights of a 16-bit row as f32 lanes. */
__attribute__((target("avx512f,avx512bw,avx512vl"))) static inline __m512
fe_load_f16x16(const uint16_t *p, __mmask16 m) {
    return _mm512_cvtph_ps(_mm256_maskz_loadu_epi16(m, p));
}
__attribute__((target("avx512f,avx512bw,avx512vl"))) static inline __m512
fe_load_bf16x16(const uint16_t *p, __mmask16 m) {
    __m512i wide = _mm512_cvtepu16_epi32(_mm256_maskz_loadu_epi16(m, p));
    return _mm512_castsi512_ps(_mm512_slli_epi32(wide, 16));
}

/* fe_dot4_avx512 for 16-bit weight rows. */
#define FE_DEFINE_DOT4_HALF(NAME, LOAD, TARGET)                                                 \
    __attribute__((target(TARGET))) static void NAME(const float *x, const uint16_t *w,          \
                                                     size_t ldw, int k, float *y,                \
                                                     size_t prefetch) {                          \
        __m512 a0 = _mm512_setzero_ps(), a1 = _mm512_setzero_ps();                               \
        __m512 a2 = _mm512_setzero_ps(), a3 = _mm512_setzero_ps();                               \
        const uint16_t *w0 = w, *w1 = w + ldw, *w2 = w + 2 * ldw, *w3 = w + 3 * ldw;             \
        int i = 0;                                                                               \
        fe_prefetch_rows(w + 4 * ldw, prefetch);                                                 \
        for (; i + 16 <= k; i += 16) {                                                           \
            __m512 xv = _mm512_loadu_ps(x + i);                                                  \
            a0 = _mm512_fmadd_ps(xv, LOAD(w0 + i, 0xffff), a0);                                  \
            a1 = _mm512_fmadd_ps(xv, LOAD(w1 + i, 0xffff), a1);                                  \
            a2 = _mm512_fmadd_ps(xv, LOAD(w2 + i, 0xffff), a2);                                  \
            a3 = _mm512_fmadd_ps(xv, LOAD(w3 + i, 0xffff), a3);                                  \
        }                                                                                        \
        if (i < k) {                                                                             \
            __mmask16 m = (__mmask16)((1u << (k - i)) - 1);                                      \
            __m512 xv = _mm512_maskz_loadu_ps(m, x + i);                                         \
            a0 = _mm512_fmadd_ps(xv, LOAD(w0 + i, m), a0);                                       \
            a1 = _mm512_fmadd_ps(xv, LOAD(w1 + i, m), a1);                                       \
            a2 = _mm512_fmadd_ps(xv, LOAD(w2 + i, m), a2);                                       \
            a3 = _mm512_fmadd_ps(xv, LOAD(w3 + i, m), a3);                                       \
        }                                                                                        \
        fe_hsum4_512(a0, a1, a2, a3, y);                                                         \
    }
FE_DEFINE_DOT4_HALF(fe_dot4_f16_avx512, fe_load_f16x16, "avx512f,avx512bw,avx512vl")
FE_DEFINE_DOT4_HALF(fe_dot4_bf16_avx512, fe_load_bf16x16, "avx512f,avx512bw,avx512vl")

__attribute__((target("avx512f"))) static inline __m512 fe_load_f32x16(const float *p, __mmask16 m) {
    return _mm512_maskz_loadu_ps(m, p);
}

/* y[q][j] = dot(x[q], w[j]) for four input rows q and four weight rows j:
 * sixteen accumulators, so each load feeds four multiply-adds (one input row
 * at a time, fe_dot4_*, is bound by its loads). The sums run in the order
 * fe_dot4_* uses, so a row comes out the same either way. */
#define FE_DEFINE_DOT4X4(NAME, WT, LOAD, TARGET)                                                 \
    __attribute__((target(TARGET))) static void NAME(const float *x, size_t ldx, const WT *w,    \
                                                     size_t ldw, int k, float *y, size_t ldy) {  \
        __m512 a00 = _mm512_setzero_ps(), a01 = a00, a02 = a00, a03 = a00;                       \
        __m512 a10 = a00, a11 = a00, a12 = a00, a13 = a00;                                       \
        __m512 a20 = a00, a21 = a00, a22 = a00, a23 = a00;                                       \
        __m512 a30 = a00, a31 = a00, a32 = a00, a33 = a00;                                       \
        for (int i = 0; i < k; i += 16) {                                                        \
            __mmask16 m = k - i >= 16 ? (__mmask16)0xffff : (__mmask16)((1u << (k - i)) - 1);    \
            __m512 w0 = LOAD(w + i, m), w1 = LOAD(w + ldw + i, m);                               \
            __m512 w2 = LOAD(w + 2 * ldw + i, m), w3 = LOAD(w + 3 * ldw + i, m);                 \
            __m512 xv = _mm512_maskz_loadu_ps(m, x + i);                                         \
            a00 = _mm512_fmadd_ps(xv, w0, a00);                                                  \
            a01 = _mm512_fmadd_ps(xv, w1, a01);                                                  \
            a02 = _mm512_fmadd_ps(xv, w2, a02);                                                  \
            a03 = _mm512_fmadd_ps(xv, w3, a03);                                                  \
            xv = _mm512_maskz_loadu_ps(m, x + ldx + i);                                          \
            a10 = _mm512_fmadd_ps(xv, w0, a10);                                                  \
            a11 = _mm512_fmadd_ps(xv, w1, a11);                                                  \
            a12 = _mm512_fmadd_ps(xv, w2, a12);                                                  \
            a13 = _mm512_fmadd_ps(xv, w3, a13);                                                  \
            xv = _mm512_maskz_loadu_ps(m, x + 2 * ldx + i);                                      \
            a20 = _mm512_fmadd_ps(xv, w0, a20);                                                  \
            a21 = _mm512_fmadd_ps(xv, w1, a21);                                                  \
            a22 = _mm512_fmadd_ps(xv, w2, a22);                                                  \
            a23 = _mm512_fmadd_ps(xv, w3, a23);                                                  \
            xv = _mm512_maskz_loadu_ps(m, x + 3 * ldx + i);                                      \
            a30 = _mm512_fmadd_ps(xv, w0, a30);                                                  \
            a31 = _mm512_fmadd_ps(xv, w1, a31);                                                  \
            a32 = _mm512_fmadd_ps(xv, w2, a32);                                                  \
            a33 = _mm512_fmadd_ps(xv, w3, a33);                                                  \
        }                                                                                        \
        fe_hsum4_512(a00, a01, a02, a03, y);                                                     \
        fe_hsum4_512(a10, a11, a12, a13, y + ldy);                                               \
        fe_hsum4_512(a20, a21, a22, a23, y + 2 * ldy);                                           \
        fe_hsum4_512(a30, a31, a32, a33, y + 3 * ldy);                                           \
    }
FE_DEFINE_DOT4X4(fe_dot4x4_avx512, float, fe_load_f32x16, "avx512f")
FE_DEFINE_DOT4X4(fe_dot4x4_f16_avx512, uint16_t, fe_load_f16x16, "avx512f,avx512bw,avx512vl")
FE_DEFINE_DOT4X4(fe_dot4x4_bf16_avx512, uint16_t, fe_load_bf16x16, "avx512f,avx512bw,avx512vl")

/* The same for the 2 or 3 input rows left over after the blocks of four (a
 * batched decode step has any number of rows): each accumulator sees the
 * multiply-adds of fe_dot4_* in the same order, so a row's numbers do not
 * depend on how many rows share the pass, while each weight load still
 * feeds two or three rows. */
#define FE_DEFINE_DOTNX4(NAME, NR, WT, LOAD, TARGET)                                             \
    __attribute__((target(TARGET))) static void NAME(const float *x, size_t ldx, const WT *w,    \
                                                     size_t ldw, int k, float *y, size_t ldy) {  \
        __m512 a[NR][4];                                                                         \
        _Pragma("GCC unroll 4") for (int r = 0; r < NR; r++) {                                   \
            a[r][0] = a[r][1] = a[r][2] = a[r][3] = _mm512_setzero_ps();                         \
        }                                                                                        \
        for (int i = 0; i < k; i += 16) {                                                        \
            __mmask16 m = k - i >= 16 ? (__mmask16)0xffff : (__mmask16)((1u << (k - i)) - 1);    \
            __m512 w0 = LOAD(w + i, m), w1 = LOAD(w + ldw + i, m);                               \
            __m512 w2 = LOAD(w + 2 * ldw + i, m), w3 = LOAD(w + 3 * ldw + i, m);                 \
            _Pragma("GCC unroll 4") for (int r = 0; r < NR; r++) {                               \
                __m512 xv = _mm512_maskz_loadu_ps(m, x + r * ldx + i);                           \
                a[r][0] = _mm512_fmadd_ps(xv, w0, a[r][0]);                                      \
                a[r][1] = _mm512_fmadd_ps(xv, w1, a[r][1]);                                      \
                a[r][2] = _mm512_fmadd_ps(xv, w2, a[r][2]);                                      \
                a[r][3] = _mm512_fmadd_ps(xv, w3, a[r][3]);                                      \
            }                                                                                    \
        }                                                                                        \
        _Pragma("GCC unroll 4") for (int r = 0; r < NR; r++) {                                   \
            fe_hsum4_512(a[r][0], a[r][1], a[r][2], a[r][3], y + r * ldy);                       \
        }                                                                                        \
    }
FE_DEFINE_DOTNX4(fe_dot2x4_avx512, 2, float, fe_load_f32x16, "avx512f")
FE_DEFINE_DOTNX4(fe_dot2x4_f16_avx512, 2, uint16_t, fe_load_f16x16, "avx512f,avx512bw,avx512vl")
FE_DEFINE_DOTNX4(fe_dot2x4_bf16_avx512, 2, uint16_t, fe_load_bf16x16, "avx512f,avx512bw,avx512vl")
FE_DEFINE_DOTNX4(fe_dot3x4_avx512, 3, float, fe_load_f32x16, "avx512f")
FE_DEFINE_DOTNX4(fe_dot3x4_f16_avx512, 3, uint16_t, fe_load_f16x16, "avx512f,avx512bw,avx512vl")
FE_DEFINE_DOTNX4(fe_dot3x4_bf16_avx512, 3, uint16_t, fe_load_bf16x16, "avx512f,avx512bw,avx512vl")

/* bf16 x bf16 with f32 sums (FE_PRECISION_BF16 on AVX512_BF16 CPUs): one
 * vdpbf16ps does 32 multiply-adds off one 64-byte load of each operand, where
 * the widening kernels above need a conversion per 16 weights. NR input rows
 * (already bf16) by four weight rows; every accumulator sees the same
 * instructions in the same order whatever NR is, so a row's result does not
 * depend on how many rows share the pass (batched decoding = serial). */
#define FE_BF16_DOT_TARGET "avx512bf16,avx512f,avx512bw,avx512vl"
#define FE_DEFINE_DOTNX4_BF16DP(NAME, NR)                                                        \
    __attribute__((target(FE_BF16_DOT_TARGET))) static void NAME(                                 \
        const uint16_t *x, size_t ldx, const uint16_t *w, size_t ldw, int k, float *y,           \
        size_t ldy, size_t prefetch) {                                                           \
        __m512 a[NR][4];                                                                         \
        _Pragma("GCC unroll 4") for (int r = 0; r < NR; r++) {                                   \
            a[r][0] = a[r][1] = a[r][2] = a[r][3] = _mm512_setzero_ps();                         \
        }                                                                                        \
        if (prefetch)                                                                            \
            fe_prefetch_rows(w + 4 * ldw, prefetch);                                             \
        for (int i = 0; i < k; i += 32) {                                                        \
            __mmask32 m = k - i >= 32 ? (__mmask32)0xffffffffu                                   \
                                      : (__mmask32)((1u << (k - i)) - 1);                        \
            __m512bh w0 = (__m512bh)_mm512_maskz_loadu_epi16(m, w + i);                          \
            __m512bh w1 = (__m512bh)_mm512_maskz_loadu_epi16(m, w + ldw + i);                    \
            __m512bh w2 = (__m512bh)_mm512_maskz_loadu_epi16(m, w + 2 * ldw + i);                \
            __m512bh w3 = (__m512bh)_mm512_maskz_loadu_epi16(m, w + 3 * ldw + i);                \
            _Pragma("GCC unroll 4") for (int r = 0; r < NR; r++) {                               \
                __m512bh xv = (__m512bh)_mm512_maskz_loadu_epi16(m, x + r * ldx + i);            \
                a[r][0] = _mm512_dpbf16_ps(a[r][0], xv, w0);                                     \
                a[r][1] = _mm512_dpbf16_ps(a[r][1], xv, w1);                                     \
                a[r][2] = _mm512_dpbf16_ps(a[r][2], xv, w2);                                     \
                a[r][3] = _mm512_dpbf16_ps(a[r][3], xv, w3);                                     \
            }                                                                                    \
        }                                                                                        \
        _Pragma("GCC unroll 4") for (int r = 0; r < NR; r++) {                                   \
            fe_hsum4_512(a[r][0], a[r][1], a[r][2], a[r][3], y + r * ldy);                       \
        }                                                                                        \
    }
FE_DEFINE_DOTNX4_BF16DP(fe_dot1x4_bf16dp, 1)
FE_DEFINE_DOTNX4_BF16DP(fe_dot2x4_bf16dp, 2)
FE_DEFINE_DOTNX4_BF16DP(fe_dot3x4_bf16dp, 3)
FE_DEFINE_DOTNX4_BF16DP(fe_dot4x4_bf16dp, 4)

/* n floats to bf16, round to nearest even (vcvtneps2bf16). */
__attribute__((target(FE_BF16_DOT_TARGET))) static void fe_f32_to_bf16_avx512(const float *x,
                                                                             uint16_t *out,
                                                                             size_t n) {
    for (size_t i = 0; i < n; i += 16) {
        __mmask16 m = n - i >= 16 ? (__mmask16)0xffff : (__mmask16)((1u << (n - i)) - 1);
        __m256bh b = _mm512_cvtneps_pbh(_mm512_maskz_loadu_ps(m, x + i));
        _mm256_mask_storeu_epi16(out + i, m, (__m256i)b);
    }
}
#endif

/* Bulk conversions for loading a model: the same bits as fe_f16_to_f32 and
 * fe_f32_to_bf16 element by element (tests/engine checks every f16 and a
 * sweep of f32 patterns), sixteen at a time. A 7 M-parameter f16 file went
 * through one call per element twice, 14 M calls, about a tenth of the
 * loading's CPU time. */
#ifdef FE_HAVE_X86_KERNELS
/* Integer round to nearest even, as fe_f32_to_bf16: no flush of subnormals
 * (vcvtneps2bf16 treats subnormal inputs as zero), NaN made quiet. */
__attribute__((target("avx512f,avx512bw,avx512vl"))) static void
fe_round_bf16_avx512(const float *x, uint16_t *out, size_t n) {
    const __m512i abs_mask = _mm512_set1_epi32(0x7fffffff), inf = _mm512_set1_epi32(0x7f800000);
    const __m512i bias = _mm512_set1_epi32(0x7fff), one = _mm512_set1_epi32(1);
    for (size_t i = 0; i < n; i += 16) {
        __mmask16 m = n - i >= 16 ? (__mmask16)0xffff : (__mmask16)((1u << (n - i)) - 1);
        __m512i u = _mm512_castps_si512(_mm512_maskz_loadu_ps(m, x + i));
        __mmask16 nan = _mm512_cmpgt_epu32_mask(_mm512_and_si512(u, abs_mask), inf);
        __m512i r = _mm512_add_epi32(
            u, _mm512_add_epi32(bias, _mm512_and_si512(_mm512_srli_epi32(u, 16), one)));
        r = _mm512_srli_epi32(r, 16);
        r = _mm512_mask_mov_epi32(
            r, nan, _mm512_or_si512(_mm512_srli_epi32(u, 16), _mm512_set1_epi32(0x40)));
        _mm256_mask_storeu_epi16(out + i, m, _mm512_cvtepi32_epi16(r));
    }
}
#endif

void fe_cpu_widen_f16(const uint16_t *h, float *dst, size_t n) {
    fe_widen_row(FE_DTYPE_F16, h, 0, dst, n);
}

void fe_cpu_round_bf16(const float *x, uint16_t *out, size_t n) {
#ifdef FE_HAVE_X86_KERNELS
    const FeCpuInfo *ci = fe_cpu_info();
    if (ci->avx512f && ci->avx512bw && ci->avx512vl) {
        fe_round_bf16_avx512(x, out, n);
        return;
    }
#endif
    for (size_t i = 0; i < n; i++)
        out[i] = fe_f32_to_bf16(x[i]);
}

/* Model weights are written once and read for every image, all of them:
 * on 2 MiB pages they cost a few page faults instead of one per 4 KiB (a
 * fault is several microseconds in a VM, and the v1 model's 14 MB took
 * 3500 of them, a third of loading's CPU time). Only the whole 2 MiB
 * extents inside [p, p + n) are affected, and the kernel's setting decides
 * (transparent_hugepage "madvise" or "always"); a refusal changes nothing,
 * so the result is ignored. Not for buffers that are only partly touched
 * (arenas sized for the largest input): a huge page is resident whole. */
void fe_cpu_advise_huge(void *p, size_t n) {
#if defined(__linux__) && defined(MADV_HUGEPAGE)
    const uintptr_t huge = (uintptr_t)2 << 20;
    uintptr_t a = ((uintptr_t)p + huge - 1) & ~(huge - 1), b = ((uintptr_t)p + n) & ~(huge - 1);
    if (p && b > a)
        (void)madvise((void *)a, (size_t)(b - a), MADV_HUGEPAGE);
#else
    (void)p;
    (void)n;
#endif
}

/* Faults in [p, p + n) now, as zeroed pages (the contents are not kept):
 * for buffers a state will surely write soon but only in part, so that the
 * first formulas do not pay a fault per 4 KiB page (22 us each on the
 * development VM) while both of the pool's threads run. MADV_POPULATE_WRITE
 * (Linux 5.14) does it in one call (populating, MAP_POPULATE, measured 15 us
 * a page there against 22 touched: bench/RESULTS.md, "First touches");
 * elsewhere, or when refused, one write per page. */
void fe_cpu_prefault(void *p, size_t n) {
    if (!p || n == 0)
        return;
#if defined(__linux__)
#ifndef MADV_POPULATE_WRITE
#define MADV_POPULATE_WRITE 23
#endif
    const uintptr_t page = 4096;
    uintptr_t a = (uintptr_t)p & ~(page - 1), b = ((uintptr_t)p + n + page - 1) & ~(page - 1);
    if (madvise((void *)a, (size_t)(b - a), MADV_POPULATE_WRITE) == 0)
        return;
#endif
    volatile char *c = p;
    for (size_t i = 0; i < n; i += 4096)
        c[i] = 0;
    c[n - 1] = 0;
}

bool fe_cpu_keeps_half_weights(void) {
    const FeCpuInfo *ci = fe_cpu_info();
    if (ci->avx512f && ci->avx512bw && ci->avx512vl)
        return true;
    /* fe_gemv_block_avx2's kernels widen four f16/bf16 weight rows at a
     * time in their registers (F16C's vcvtph2ps, a shift for bf16) and sum
     * them as their f32 copy (the same products, bit for bit); without F16C
     * each four rows are widened into a scratch row first (fe_widen_row,
     * scalar), and f32 weights are faster. */
    return fe_use_avx2() && ci->f16c;
}

bool fe_cpu_has_bf16_dot(void) {
#ifdef FE_HAVE_X86_KERNELS
    const FeCpuInfo *ci = fe_cpu_info();
    return ci->avx512_bf16 && ci->avx512f && ci->avx512bw && ci->avx512vl;
#else
    return false;
#endif
}

#ifdef FE_HAVE_X86_KERNELS
/* The four kernels of one weight type (a type-traits table instead of one
 * copy of the blocking loop per dtype): NR = 4, 3, 2 input rows by four
 * weight rows, and one input row by four weight rows with the next rows
 * prefetched. x is f32, or bf16 for the bf16 dot (xb). The adapters give
 * every kernel one signature; each calls its typed kernel directly. */
typedef void (*FeGemvKernel)(const void *x, size_t ldx, const void *w, size_t ldw, int k,
                             float *y, size_t ldy, size_t prefetch);
typedef struct {
    FeGemvKernel rows[5];  /* [NR]: 1..4 input rows by four weight rows */
    bool bf16_input;       /* x is the bf16 copy (FeGemvJob.xb)          */
} FeGemvKernels;

#define FE_GEMV_ADAPT(NAME, TARGET, XT, WT, CALL)                                                \
    __attribute__((target(TARGET))) static void NAME(const void *xv, size_t ldx, const void *wv, \
                                                     size_t ldw, int k, float *y, size_t ldy,    \
                                                     size_t prefetch) {                          \
        const XT *x = xv;                                                                        \
        const WT *w = wv;                                                                        \
        (void)ldx;                                                                               \
        (void)ldy;                                                                               \
        (void)prefetch;                                                                          \
        CALL;                                                                                    \
    }
#define FE_HALF_TARGET "avx512f,avx512bw,avx512vl"
FE_GEMV_ADAPT(fe_gk_f32_1, "avx512f", float, float, fe_dot4_avx512(x, w, ldw, k, y, prefetch))
FE_GEMV_ADAPT(fe_gk_f32_2, "avx512f", float, float, fe_dot2x4_avx512(x, ldx, w, ldw, k, y, ldy))
FE_GEMV_ADAPT(fe_gk_f32_3, "avx512f", float, float, fe_dot3x4_avx512(x, ldx, w, ldw, k, y, ldy))
FE_GEMV_ADAPT(fe_gk_f32_4, "avx512f", float, float, fe_dot4x4_avx512(x, ldx, w, ldw, k, y, ldy))
FE_GEMV_ADAPT(fe_gk_f16_1, FE_HALF_TARGET, float, uint16_t,
              fe_dot4_f16_avx512(x, w, ldw, k, y, prefetch))
FE_GEMV_ADAPT(fe_gk_f16_2, FE_HALF_TARGET, float, uint16_t,
              fe_dot2x4_f16_avx512(x, ldx, w, ldw, k, y, ldy))
FE_GEMV_ADAPT(fe_gk_f16_3, FE_HALF_TARGET, float, uint16_t,
              fe_dot3x4_f16_avx512(x, ldx, w, ldw, k, y, ldy))
FE_GEMV_ADAPT(fe_gk_f16_4, FE_HALF_TARGET, float, uint16_t,
              fe_dot4x4_f16_avx512(x, ldx, w, ldw, k, y, ldy))
FE_GEMV_ADAPT(fe_gk_bf16_1, FE_HALF_TARGET, float, uint16_t,
              fe_dot4_bf16_avx512(x, w, ldw, k, y, prefetch))
FE_GEMV_ADAPT(fe_gk_bf16_2, FE_HALF_TARGET, float, uint16_t,
              fe_dot2x4_bf16_avx512(x, ldx, w, ldw, k, y, ldy))
FE_GEMV_ADAPT(fe_gk_bf16_3, FE_HALF_TARGET, float, uint16_t,
              fe_dot3x4_bf16_avx512(x, ldx, w, ldw, k, y, ldy))
FE_GEMV_ADAPT(fe_gk_bf16_4, FE_HALF_TARGET, float, uint16_t,
              fe_dot4x4_bf16_avx512(x, ldx, w, ldw, k, y, ldy))
FE_GEMV_ADAPT(fe_gk_bf16dp_1, FE_BF16_DOT_TARGET, uint16_t, uint16_t,
              fe_dot1x4_bf16dp(x, ldx, w, ldw, k, y, ldy, prefetch))
FE_GEMV_ADAPT(fe_gk_bf16dp_2, FE_BF16_DOT_TARGET, uint16_t, uint16_t,
              fe_dot2x4_bf16dp(x, ldx, w, ldw, k, y, ldy, 0))
FE_GEMV_ADAPT(fe_gk_bf16dp_3, FE_BF16_DOT_TARGET, uint16_t, uint16_t,
              fe_dot3x4_bf16dp(x, ldx, w, ldw, k, y, ldy, 0))
FE_GEMV_ADAPT(fe_gk_bf16dp_4, FE_BF16_DOT_TARGET, uint16_t, uint16_t,
              fe_dot4x4_bf16dp(x, ldx, w, ldw, k, y, ldy, 0))

static const FeGemvKernels fe_gemv_f32 = {{NULL, fe_gk_f32_1, fe_gk_f32_2, fe_gk_f32_3, fe_gk_f32_4},
                                          false};
static const FeGemvKernels fe_gemv_f16 = {{NULL, fe_gk_f16_1, fe_gk_f16_2, fe_gk_f16_3, fe_gk_f16_4},
                                          false};
static const FeGemvKernels fe_gemv_bf16 = {
    {NULL, fe_gk_bf16_1, fe_gk_bf16_2, fe_gk_bf16_3, fe_gk_bf16_4}, false};
static const FeGemvKernels fe_gemv_bf16dp = {
    {NULL, fe_gk_bf16dp_1, fe_gk_bf16dp_2, fe_gk_bf16dp_3, fe_gk_bf16dp_4}, true};

/* The kernels for this job on this CPU, or NULL (then the portable code). */
static const FeGemvKernels *fe_gemv_kernels(const FeGemvJob *j) {
    if (j->xb)
        return &fe_gemv_bf16dp; /* set only where fe_cpu_has_bf16_dot() */
    if (!fe_gemv_avx512_takes(j->wdt))
        return NULL;
    if (j->wdt == FE_DTYPE_F32)
        return &fe_gemv_f32;
    return j->wdt == FE_DTYPE_F16 ? &fe_gemv_f16 : &fe_gemv_bf16;
}

/* Input rows r0..r1 by weight rows n0.. in blocks of four with the kernels
 * kt; returns where the blocks stopped. Weight rows are outermost: four of
 * them stay in L1 while the input rows pass over them. */
static int fe_gemv_block_avx512(const FeGemvJob *j, const FeGemvKernels *kt, int r0, int r1,
                                int n0, int n1) {
    int m4 = r0 + ((r1 - r0) & ~3), c = n0, left = r1 - m4;
    size_t ldk = (size_t)j->k, ldn = (size_t)j->n;
    size_t wsize = fe_dtype_size(j->wdt), xsize = kt->bf16_input ? sizeof(uint16_t) : sizeof(float);
    const char *x = kt->bf16_input ? (const void *)j->xb : (const void *)j->x;
    /* The next four weight rows are asked for while these are summed: a
     * decode step streams its weights from memory (1.4x faster with it),
     * for one input row inside the one-row kernel, for several (a batched
     * decode step) here. */
    size_t ahead = r0 == 0 ? 4 * ldk * wsize : 0;
    for (; c + 4 <= n1; c += 4) {
        const char *wc = (const char *)j->w + (size_t)c * ldk * wsize;
        size_t pf = c + 8 <= n1 ? ahead : 0;
        if (r1 - r0 >= 2 && pf)
            fe_prefetch_rows(wc + 4 * ldk * wsize, pf);
        for (int r = r0; r < m4; r += 4)
            kt->rows[4](x + r * ldk * xsize, ldk, wc, ldk, j->k, j->y + r * ldn + c, ldn, 0);
        if (left)
            kt->rows[left](x + m4 * ldk * xsize, ldk, wc, ldk, j->k, j->y + m4 * ldn + c, ldn,
                           r1 - r0 >= 2 ? 0 : pf);
    }
    return c;
}
#endif

#ifdef FE_HAVE_X86_KERNELS
/* One input row by eight 16-bit weight rows: eight accumulators, so the
 * multiply-adds do not wait on each other's latency as the four of
 * fe_dot1x4_f16_avx2 do (a lone formula's decode step); each sum in that
 * kernel's order (one 8-lane accumulator along k, fe_hsum4_256 by fours), so
 * the same bits. */
#define FE_DEFINE_DOT1X8_AVX2(NAME, LOADW, TAILW)                                              \
    __attribute__((target(FE_AVX2_HALF_TARGET))) static void NAME(                             \
        const float *x, const uint16_t *w, size_t ldw, int k, float *y) {                      \
        FE_AVX2_ZERO4(a);                                                                      \
        FE_AVX2_ZERO4(b);                                                                      \
        int i = 0;                                                                             \
        for (; i + 8 <= k; i += 8) {                                                           \
            __m256 xv = _mm256_loadu_ps(x + i);                                                \
            FE_DOT1X8_COLS(LOADW, 8);                                                          \
        }                                                                                      \
        if (i < k) {                                                                           \
            __m256i m = fe_tail_mask256(k - i);                                                \
            __m256 xv = _mm256_maskload_ps(x + i, m);                                          \
            FE_DOT1X8_COLS(TAILW, k - i);                                                      \
        }                                                                                      \
        fe_hsum4_256(a0, a1, a2, a3, y);                                                       \
        fe_hsum4_256(b0, b1, b2, b3, y + 4);                                                   \
    }
#define FE_DOT1X8_COLS(LOADW, n)                                                               \
    do {                                                                                       \
        a0 = _mm256_fmadd_ps(xv, LOADW(w + i, n), a0);                                         \
        a1 = _mm256_fmadd_ps(xv, LOADW(w + ldw + i, n), a1);                                   \
        a2 = _mm256_fmadd_ps(xv, LOADW(w + 2 * ldw + i, n), a2);                               \
        a3 = _mm256_fmadd_ps(xv, LOADW(w + 3 * ldw + i, n), a3);                               \
        b0 = _mm256_fmadd_ps(xv, LOADW(w + 4 * ldw + i, n), b0);                               \
        b1 = _mm256_fmadd_ps(xv, LOADW(w + 5 * ldw + i, n), b1);                               \
        b2 = _mm256_fmadd_ps(xv, LOADW(w + 6 * ldw + i, n), b2);                               \
        b3 = _mm256_fmadd_ps(xv, LOADW(w + 7 * ldw + i, n), b3);                               \
    } while (0)
FE_DEFINE_DOT1X8_AVX2(fe_dot1x8_f16_avx2, FE_AVX2_LOAD_F16, FE_AVX2_TAIL_F16)
FE_DEFINE_DOT1X8_AVX2(fe_dot1x8_bf16_avx2, FE_AVX2_LOAD_BF16, FE_AVX2_TAIL_BF16)
/* Input rows r0..r1 by four weight rows (16-bit ones at w16 of j->wdt,
 * else f32 at w32), three input rows at a time, then two or one. Compiled
 * for AVX2+FMA: the 16-bit kernels (F16C) are called only with w16, which
 * fe_gemv_block_avx2 passes only where the CPU has F16C. */
__attribute__((target("avx2,fma"))) static void
fe_gemv_rows4_avx2(const FeGemvJob *j, int r0, int r1, const float *w32, const uint16_t *w16,
                   float *y) {
    size_t ldk = (size_t)j->k, ldn = (size_t)j->n;
    bool bf = j->wdt == FE_DTYPE_BF16;
    int r = r0;
    /* Three rows a pass, but four left are two and two: the one-row kernel's
     * four sums wait on each other's FMA latency (4 chains, half of Zen 3's
     * FMA rate), two rows have 8 chains. The grouping does not change a
     * row's sums. */
    for (; r + 3 <= r1 && r1 - r != 4; r += 3) {
        const float *x = j->x + r * ldk;
        float *yr = y + r * ldn;
        if (w32)
            fe_dot3x4_avx2(x, ldk, w32, ldk, j->k, yr, ldn);
        else if (bf)
            fe_dot3x4_bf16_avx2(x, ldk, w16, ldk, j->k, yr, ldn);
        else
            fe_dot3x4_f16_avx2(x, ldk, w16, ldk, j->k, yr, ldn);
    }
    if (r1 - r == 4) {
        const float *x = j->x + r * ldk;
        if (w32)
            fe_dot2x4_avx2(x, ldk, w32, ldk, j->k, y + r * ldn, ldn);
        else if (bf)
            fe_dot2x4_bf16_avx2(x, ldk, w16, ldk, j->k, y + r * ldn, ldn);
        else
            fe_dot2x4_f16_avx2(x, ldk, w16, ldk, j->k, y + r * ldn, ldn);
        r += 2;
    }
    const float *x = j->x + r * ldk;
    float *yr = y + r * ldn;
    if (r1 - r == 2) {
        if (w32)
            fe_dot2x4_avx2(x, ldk, w32, ldk, j->k, yr, ldn);
        else if (bf)
            fe_dot2x4_bf16_avx2(x, ldk, w16, ldk, j->k, yr, ldn);
        else
            fe_dot2x4_f16_avx2(x, ldk, w16, ldk, j->k, yr, ldn);
    } else if (r1 - r == 1) {
        if (w32)
            fe_dot4_avx2(x, w32, ldk, j->k, yr);
        else if (bf)
            fe_dot1x4_bf16_avx2(x, ldk, w16, ldk, j->k, yr, ldn);
        else
            fe_dot1x4_f16_avx2(x, ldk, w16, ldk, j->k, yr, ldn);
    }
}

/* Columns n0..n1 of rows r0..r1 on AVX2: four weight rows at a time for
 * each input row, the last n % 4 alone in the same order, so a row's
 * numbers never depend on how many rows share the step. f16/bf16 weights
 * (kept only with F16C: fe_cpu_keeps_half_weights) are widened in the
 * kernels' registers; the last n % 4 rows into wide (exact), so they give
 * what their f32 copy gives. */
__attribute__((target("avx2,fma"))) static int fe_gemv_block_avx2(const FeGemvJob *j, int r0,
                                                                  int r1, int n0, int n1,
                                                                  float *wide) {
    size_t ldk = (size_t)j->k, ldn = (size_t)j->n;
    bool f32 = j->wdt == FE_DTYPE_F32;
    size_t wsize = fe_dtype_size(j->wdt);
    bool in_regs = !f32 && fe_cpu_info()->f16c;
    int c = n0;
    if (in_regs && r1 - r0 == 1)
        for (; c + 8 <= n1; c += 8) {
            const uint16_t *wb = (const uint16_t *)j->w + (size_t)c * ldk;
            if (c + 16 <= n1)
                fe_prefetch_rows(wb + 8 * ldk, 8 * ldk * wsize);
            if (j->wdt == FE_DTYPE_BF16)
                fe_dot1x8_bf16_avx2(j->x + r0 * ldk, wb, ldk, j->k, j->y + r0 * ldn + c);
            else
                fe_dot1x8_f16_avx2(j->x + r0 * ldk, wb, ldk, j->k, j->y + r0 * ldn + c);
        }
    for (; c + 4 <= n1; c += 4) {
        const char *wb = (const char *)j->w + (size_t)c * ldk * wsize;
        if ((f32 || in_regs) && c + 8 <= n1)
            fe_prefetch_rows(wb + 4 * ldk * wsize, 4 * ldk * wsize);
        if (f32) {
            fe_gemv_rows4_avx2(j, r0, r1, (const float *)wb, NULL, j->y + c);
        } else if (in_regs) {
            fe_gemv_rows4_avx2(j, r0, r1, NULL, (const uint16_t *)wb, j->y + c);
        } else {
            fe_widen_row(j->wdt, j->w, (size_t)c * ldk, wide, 4 * ldk);
            fe_gemv_rows4_avx2(j, r0, r1, wide, NULL, j->y + c);
        }
    }
    for (; c < n1; c++) {
        const float *wc = (const float *)j->w + (size_t)c * ldk;
        if (!f32) {
            fe_widen_row(j->wdt, j->w, (size_t)c * ldk, wide, ldk);
            wc = wide;
        }
        for (int r = r0; r < r1; r++)
            j->y[r * ldn + c] = fe_dot1_avx2(j->x + r * ldk, wc, j->k);
    }
    return c;
}
#endif

/* Input rows per pass over the weights: their slice of x stays in L1/L2
 * while the weights stream past (the weights are read once per chunk). */
#define FE_GEMV_ROW_CHUNK 32

/* Columns n0..n1 of y for up to FE_GEMV_MAX_ROWS_SIMD input rows (a decode
 * step, beams, an encoder sequence of formula size): dot products straight
 * off the weight rows, no packing. Which code sums a row depends on the CPU
 * and the weight dtype only, never on m (so rows are exact). wide: this
 * task's 4 * k floats of FeGemvJob.wide (NULL for f32 weights). */
static void fe_gemv_columns(const FeGemvJob *j, int n0, int n1, float *wide) {
    int c = n0;
#ifdef FE_HAVE_X86_KERNELS
    const FeGemvKernels *kt = fe_gemv_kernels(j);
    if (kt)
        for (int r0 = 0; r0 < j->m; r0 += FE_GEMV_ROW_CHUNK)
            c = fe_gemv_block_avx512(j, kt, r0,
                                     r0 + FE_GEMV_ROW_CHUNK < j->m ? r0 + FE_GEMV_ROW_CHUNK : j->m,
                                     n0, n1);
    else if (fe_use_avx2())
        for (int r0 = 0; r0 < j->m; r0 += FE_GEMV_ROW_CHUNK)
            c = fe_gemv_block_avx2(j, r0, r0 + FE_GEMV_ROW_CHUNK < j->m ? r0 + FE_GEMV_ROW_CHUNK : j->m,
                                   n0, n1, wide);
#endif
    if (c < n1 && j->xb) {
        /* The last 1-3 weight rows of a bf16 dot: the same rounded inputs
         * (their products are exact in f32), summed in order. */
        for (; c < n1; c++)
            for (int r = 0; r < j->m; r++) {
                const uint16_t *xr = j->xb + (size_t)r * j->k;
                const uint16_t *wr = (const uint16_t *)j->w + (size_t)c * j->k;
                float s = 0.0f;
                for (int i = 0; i < j->k; i++)
                    s += fe_bf16_to_f32(xr[i]) * fe_bf16_to_f32(wr[i]);
                j->y[(size_t)r * j->n + c] = s;
            }
    }
    if (c < n1 && j->wdt != FE_DTYPE_F32) {
        /* Without the vector kernels: one widened weight row at a time. */
        for (; c < n1; c++) {
            fe_widen_row(j->wdt, j->w, (size_t)c * j->k, wide, (size_t)j->k);
            for (int r = 0; r < j->m; r++)
                j->y[(size_t)r * j->n + c] = fe_dot(j->x + (size_t)r * j->k, wide, j->k);
        }
    }
    for (; c < n1; c++)
        for (int r = 0; r < j->m; r++)
            j->y[(size_t)r * j->n + c] =
                fe_dot(j->x + (size_t)r * j->k, (const float *)j->w + (size_t)c * j->k, j->k);
    for (int r = 0; r < j->m; r++) {
        float *y = j->y + (size_t)r * j->n;
        if (j->b)
            fe_add_rows(y + n0, j->b + n0, y + n0, (size_t)(n1 - n0));
        if (j->gelu)
            fe_gelu_rows(y + n0, y + n0, (size_t)(n1 - n0));
    }
}

static void fe_gemv_task(void *ctx, int task) {
    FeGemvJob *j = ctx;
    int n0 = task * j->n_chunk;
    int n1 = n0 + j->n_chunk < j->n ? n0 + j->n_chunk : j->n;
    if (n0 < n1)
        fe_gemv_columns(j, n0, n1, j->wide ? j->wide + (size_t)task * 4 * (size_t)j->k : NULL);
}

/* Up to this many input rows a matmul reads the weights in place (no
 * packing): 4 with the portable code; with the AVX-512 kernels (four by four
 * blocks) or the AVX2 block up to FE_GEMV_MAX_ROWS_SIMD, a beam of up to
 * FE_MAX_BEAM rows. Longer sequences (the encoder's) go to OpenBLAS, which
 * was as fast or a little faster there in interleaved runs (bench-conv,
 * formulate-cli). */
#define FE_GEMV_MAX_ROWS 4
#ifndef FE_GEMV_MAX_ROWS_SIMD
#define FE_GEMV_MAX_ROWS_SIMD 32
#endif

int fe_cpu_matmul_exact_rows(fe_dtype weight_dtype) {
    /* The same choice as fe_gemv_columns: the AVX-512 kernels where they
     * take this dtype, else the AVX2 block (any dtype). */
    if (fe_gemv_avx512_takes(weight_dtype) || fe_use_avx2())
        return FE_GEMV_MAX_ROWS_SIMD;
    return FE_GEMV_MAX_ROWS;
}

static fe_status fe_cpu_matmul(const FeOpDesc *op) {
    const FeTensor *xt = op->src[0], *wt = op->src[1], *bt = op->src[2];
    int n = (int)wt->shape[0], k = (int)wt->shape[1];
    int m = k ? (int)(fe_tensor_nelements(xt) / k) : (int)(fe_tensor_nelements(op->dst) / (n ? n : 1));
    const float *x = fe_tensor_data(xt);
    const void *w = fe_tensor_data(wt);
    const float *b = bt ? fe_tensor_data(bt) : NULL;
    float *y = fe_tensor_data(op->dst);
    bool gelu = op->iparams[0] != 0;
    if (m == 0 || n == 0)
        return FE_OK;

    if (m <= fe_cpu_matmul_exact_rows(wt->dtype) && k > 0) {
        FeGemvJob job = {x, b, w, wt->dtype, y, m, n, k, n, gelu, NULL, NULL};
#ifdef FE_HAVE_X86_KERNELS
        if (wt->bf16_dot && wt->dtype == FE_DTYPE_BF16 && fe_cpu_has_bf16_dot()) {
            /* The rows of x in bf16 once, for every weight row to use (in
             * scratch slot 1: slot 0 serves the column tail; a decode step
             * allocates nothing once the buffers have grown). */
            size_t nx = (size_t)m * k;
            uint16_t *xb = (uint16_t *)fe_scratch_slot(1, (nx + 1) / 2);
            if (!xb)
                return fe_scratch_error((nx + 1) / 2);
            fe_f32_to_bf16_avx512(x, xb, nx);
            job.xb = xb;
        }
#endif
        int threads = fe_cpu_get_threads(), tasks = 1;
        /* One core streams a cached weight at ~80 GB/s (a 256 x 1024 one in
         * 13 us), about what waking a second thread costs, so a decode step's
         * weights are not split (tools: bench/gemm); an encoder sequence's
         * products are, by weight rows. */
        bool split = threads > 1 && (double)m * n * k >= (double)(1 << 21) && n >= 64;
        if (split) {
            job.n_chunk = ((n + threads - 1) / threads + 15) & ~15;
            tasks = (n + job.n_chunk - 1) / job.n_chunk;
        }
        if (wt->dtype != FE_DTYPE_F32 && !job.xb) {
            /* Widened weight rows for each task (the AVX2 block, the portable
             * loop), reserved here: out of memory is this call's error, not
             * a task falling back to sums in another order. */
            size_t nw = (size_t)tasks * 4 * (size_t)k;
            job.wide = fe_scratch_slot(2, nw);
            if (!job.wide)
                return fe_scratch_error(nw);
        }
        if (split)
            fe_cpu_parallel_for(tasks, fe_gemv_task, &job);
        else
            fe_gemv_columns(&job, 0, n, job.wide);
        return FE_OK;
    }

    if (wt->bf16_dot && wt->dtype == FE_DTYPE_BF16 && fe_cpu_has_bf16_dot() && k > 0 &&
        k % 2 == 0) {
        /* An encoder sequence in bf16 (fe-cpu-bf16.c), the weight read in place. */
        FE_TRY(fe_cpu_matmul_bf16(x, m, k, w, n, b, y));
        if (gelu)
            fe_gelu_rows(y, y, (size_t)m * n);
        return FE_OK;
    }
    const float *wf = w;
    if (wt->dtype != FE_DTYPE_F32 && k > 0) {
        /* Many rows (a wide beam): widen the weight once, then one GEMM. */
        float *wide = fe_scratch((size_t)n * k);
        if (!wide)
            return fe_scratch_error((size_t)n * k);
        fe_widen_row(wt->dtype, w, 0, wide, (size_t)n * k);
        wf = wide;
    }
    float beta = 0.0f;
    if (b) {
        for (int r = 0; r < m; r++)
            memcpy(y + (size_t)r * n, b, (size_t)n * sizeof(float));
        beta = 1.0f;
    }
    FE_TRY(fe_sgemm_with(FE_GEMM_AUTO, true, m, n, k, 1.0f, x, k > 0 ? k : 1, wf, k > 0 ? k : 1,
                         beta, y, n));
    if (gelu)
        fe_gelu_rows(y, y, (size_t)m * n);
    return FE_OK;
}

/* ------------------------------------------------------------------------ */
/* conv3x3 (pad 1): im2col tiles + sgemm, or direct for 1-2 input channels  */

typedef struct {
    const float *x;          /* one image [Cin, H, W]                       */
    float *col;              /* [Cin*9, p1-p0]                              */
    int cin, h, w;
    int p0, p1;              /* output pixel range of this tile             */
} FeIm2colJob;

static void fe_im2col_task(void *ctx, int ci) {
    const FeIm2colJob *j = ctx;
    int h = j->h, w = j->w, np = j->p1 - j->p0;
    const float *plane = j->x + (size_t)ci * h * w;
    for (int ky = 0; ky < 3; ky++)
        for (int kx = 0; kx < 3; kx++) {
            float *row = j->col + ((size_t)ci * 9 + ky * 3 + kx) * np;
            int p = j->p0;
            while (p < j->p1) {
                int oy = p / w, ox = p % w;
                int run = w - ox < j->p1 - p ? w - ox : j->p1 - p; /* rest of this output row */
                int iy = oy + ky - 1;
                float *dst = row + (p - j->p0);
                if (iy < 0 || iy >= h) {
                    memset(dst, 0, (size_t)run * sizeof(float));
                } else {
                    /* Pixels t with 0 <= ox + t + kx - 1 < w come from the row,
                     * the (at most one) others on either side are padding. */
                    const float *irow = plane + (size_t)iy * w;
                    int shift = ox + kx - 1; /* input column of pixel t = shift + t */
                    int t_lo = 1 - kx - ox > 0 ? 1 - kx - ox : 0;
                    int t_hi = w - ox - kx + 1 < run ? w - ox - kx + 1 : run;
                    for (int t = 0; t < t_lo; t++)
                        dst[t] = 0.0f;
                    if (t_hi > t_lo)
                        memcpy(dst + t_lo, irow + shift + t_lo,
                               (size_t)(t_hi - t_lo) * sizeof(float));
                    for (int t = t_hi > t_lo ? t_hi : t_lo; t < run; t++)
                        dst[t] = 0.0f;
                }
                p += run;
            }
        }
}

typedef struct {
    const float *x, *wt, *b;
    float *y;
    int cin, h, w;
    bool relu;
    int cout;
} FeDirectConvJob;

#ifdef FE_HAVE_X86_KERNELS
/* 16 output pixels at a time, all input planes and taps in one register;
 * masked loads give the zero padding at both row ends (masked-off lanes are
 * never read, so the loads one before the row start cannot fault). */
__attribute__((target("avx512f"))) static void fe_direct_conv_avx512(const FeDirectConvJob *j,
                                                                    int co) {
    int h = j->h, w = j->w;
    float *out = j->y + (size_t)co * h * w;
    __m512 bias = _mm512_set1_ps(j->b ? j->b[co] : 0.0f), zero = _mm512_setzero_ps();
    for (int oy = 0; oy < h; oy++) {
        float *orow = out + (size_t)oy * w;
        for (int ox = 0; ox < w; ox += 16) {
            int lanes = w - ox < 16 ? w - ox : 16;
            __mmask16 mc = (__mmask16)((1u << lanes) - 1);
            __mmask16 ml = ox == 0 ? (__mmask16)(mc & 0xfffe) : mc;
            __mmask16 mr = ox + 16 < w ? mc : (__mmask16)(mc >> 1);
            __m512 acc = bias;
            for (int ci = 0; ci < j->cin; ci++) {
                const float *plane = j->x + (size_t)ci * h * w;
                const float *k9 = j->wt + ((size_t)co * j->cin + ci) * 9;
                for (int ky = 0; ky < 3; ky++) {
                    int iy = oy + ky - 1;
                    if (iy < 0 || iy >= h)
                        continue;
                    const float *irow = plane + (size_t)iy * w + ox;
                    acc = _mm512_fmadd_ps(_mm512_set1_ps(k9[ky * 3]),
                                          _mm512_maskz_loadu_ps(ml, irow - 1), acc);
                    acc = _mm512_fmadd_ps(_mm512_set1_ps(k9[ky * 3 + 1]),
                                          _mm512_maskz_loadu_ps(mc, irow), acc);
                    acc = _mm512_fmadd_ps(_mm512_set1_ps(k9[ky * 3 + 2]),
                                          _mm512_maskz_loadu_ps(mr, irow + 1), acc);
                }
            }
            if (j->relu)
                acc = _mm512_max_ps(acc, zero);
            _mm512_mask_storeu_ps(orow + ox, mc, acc);
        }
    }
}
#endif

#ifdef FE_HAVE_X86_KERNELS
/* Four output channels at once: each masked load of the input serves four
 * multiply-adds instead of one, which is what limited the one-channel loop
 * (the first conv reads its single input plane 9 times per channel). */
__attribute__((target("avx512f"))) static void fe_direct_conv4_avx512(const FeDirectConvJob *j,
                                                                     int co) {
    int h = j->h, w = j->w;
    float *out = j->y + (size_t)co * h * w;
    size_t plane_out = (size_t)h * w;
    __m512 zero = _mm512_setzero_ps();
    __m512 b0 = _mm512_set1_ps(j->b ? j->b[co] : 0.0f);
    __m512 b1 = _mm512_set1_ps(j->b ? j->b[co + 1] : 0.0f);
    __m512 b2 = _mm512_set1_ps(j->b ? j->b[co + 2] : 0.0f);
    __m512 b3 = _mm512_set1_ps(j->b ? j->b[co + 3] : 0.0f);
    size_t wstride = (size_t)j->cin * 9; /* from one output channel's taps to the next */
    for (int oy = 0; oy < h; oy++) {
        for (int ox = 0; ox < w; ox += 16) {
            int lanes = w - ox < 16 ? w - ox : 16;
            __mmask16 mc = (__mmask16)((1u << lanes) - 1);
            __mmask16 ml = ox == 0 ? (__mmask16)(mc & 0xfffe) : mc;
            __mmask16 mr = ox + 16 < w ? mc : (__mmask16)(mc >> 1);
            __m512 a0 = b0, a1 = b1, a2 = b2, a3 = b3;
            for (int ci = 0; ci < j->cin; ci++) {
                const float *plane = j->x + (size_t)ci * h * w;
                const float *k9 = j->wt + ((size_t)co * j->cin + ci) * 9;
                for (int ky = 0; ky < 3; ky++) {
                    int iy = oy + ky - 1;
                    if (iy < 0 || iy >= h)
                        continue;
                    const float *irow = plane + (size_t)iy * w + ox;
                    __m512 vl = _mm512_maskz_loadu_ps(ml, irow - 1);
                    __m512 vc = _mm512_maskz_loadu_ps(mc, irow);
                    __m512 vr = _mm512_maskz_loadu_ps(mr, irow + 1);
                    const float *t = k9 + ky * 3;
#define FE_CONV_TAPS(acc, c)                                                                     \
    acc = _mm512_fmadd_ps(_mm512_set1_ps(t[(c) * wstride]), vl, acc);                            \
    acc = _mm512_fmadd_ps(_mm512_set1_ps(t[(c) * wstride + 1]), vc, acc);                        \
    acc = _mm512_fmadd_ps(_mm512_set1_ps(t[(c) * wstride + 2]), vr, acc);
                    FE_CONV_TAPS(a0, 0)
                    FE_CONV_TAPS(a1, 1)
                    FE_CONV_TAPS(a2, 2)
                    FE_CONV_TAPS(a3, 3)
#undef FE_CONV_TAPS
                }
            }
            if (j->relu) {
                a0 = _mm512_max_ps(a0, zero);
                a1 = _mm512_max_ps(a1, zero);
                a2 = _mm512_max_ps(a2, zero);
                a3 = _mm512_max_ps(a3, zero);
            }
            float *o = out + (size_t)oy * w + ox;
            _mm512_mask_storeu_ps(o, mc, a0);
            _mm512_mask_storeu_ps(o + plane_out, mc, a1);
            _mm512_mask_storeu_ps(o + 2 * plane_out, mc, a2);
            _mm512_mask_storeu_ps(o + 3 * plane_out, mc, a3);
        }
    }
}
#endif

/* Task t of a direct conv: output channels 4t..4t+3 (the last group may be
 * short). */
static void fe_direct_conv_task(void *ctx, int co);
static void fe_direct_conv_group_task(void *ctx, int group) {
    const FeDirectConvJob *j = ctx;
    int co = group * 4;
#ifdef FE_HAVE_X86_KERNELS
    if (fe_use_avx512() && co + 4 <= j->cout) {
        fe_direct_conv4_avx512(j, co);
        return;
    }
#endif
    for (int c = co; c < co + 4 && c < j->cout; c++)
        fe_direct_conv_task(ctx, c);
}

#ifdef FE_HAVE_X86_KERNELS
/* fe_direct_conv_task's loop with its interior eight pixels at a time: the
 * same products and sums in the same order ((k0 a + k1 b) + k2 c, then onto
 * the output; no FMA, see fe_bias_relu_avx2), so the same bits. */
__attribute__((target("avx2"))) static void fe_direct_conv_row_avx2(float *orow, const float *irow,
                                                                    const float *k3, int w) {
    __m256 v0 = _mm256_set1_ps(k3[0]), v1 = _mm256_set1_ps(k3[1]), v2 = _mm256_set1_ps(k3[2]);
    int ox = 1;
    for (; ox + 8 <= w - 1; ox += 8) {
        __m256 s = _mm256_add_ps(_mm256_mul_ps(v0, _mm256_loadu_ps(irow + ox - 1)),
                                 _mm256_mul_ps(v1, _mm256_loadu_ps(irow + ox)));
        s = _mm256_add_ps(s, _mm256_mul_ps(v2, _mm256_loadu_ps(irow + ox + 1)));
        _mm256_storeu_ps(orow + ox, _mm256_add_ps(_mm256_loadu_ps(orow + ox), s));
    }
    for (; ox < w - 1; ox++)
        orow[ox] += k3[0] * irow[ox - 1] + k3[1] * irow[ox] + k3[2] * irow[ox + 1];
}

__attribute__((target("avx2"))) static void fe_relu_avx2(float *y, int n) {
    __m256 zero = _mm256_setzero_ps();
    int i = 0;
    for (; i + 8 <= n; i += 8)
        _mm256_storeu_ps(y + i, _mm256_max_ps(_mm256_loadu_ps(y + i), zero));
    for (; i < n; i++)
        y[i] = y[i] > 0.0f ? y[i] : 0.0f;
}
#endif

/* One output channel of a conv with few input channels: nine shifted
 * multiply-adds per input plane, vectorised along the row. */
static void fe_direct_conv_task(void *ctx, int co) {
    const FeDirectConvJob *j = ctx;
#ifdef FE_HAVE_X86_KERNELS
    if (fe_use_avx512()) {
        fe_direct_conv_avx512(j, co);
        return;
    }
    bool avx2 = fe_use_avx2();
#endif
    int h = j->h, w = j->w;
    float *out = j->y + (size_t)co * h * w;
    float bias = j->b ? j->b[co] : 0.0f;
    for (int oy = 0; oy < h; oy++) {
        float *orow = out + (size_t)oy * w;
        for (int ox = 0; ox < w; ox++)
            orow[ox] = bias;
        for (int ci = 0; ci < j->cin; ci++) {
            const float *plane = j->x + (size_t)ci * h * w;
            const float *k9 = j->wt + ((size_t)co * j->cin + ci) * 9;
            for (int ky = 0; ky < 3; ky++) {
                int iy = oy + ky - 1;
                if (iy < 0 || iy >= h)
                    continue;
                const float *irow = plane + (size_t)iy * w;
                float k0 = k9[ky * 3], k1 = k9[ky * 3 + 1], k2 = k9[ky * 3 + 2];
                /* Interior without bounds tests; the two edge pixels apart. */
#ifdef FE_HAVE_X86_KERNELS
                if (avx2)
                    fe_direct_conv_row_avx2(orow, irow, k9 + ky * 3, w);
                else
#endif
                    for (int ox = 1; ox < w - 1; ox++)
                        orow[ox] += k0 * irow[ox - 1] + k1 * irow[ox] + k2 * irow[ox + 1];
                orow[0] += k1 * irow[0] + (w > 1 ? k2 * irow[1] : 0.0f);
                if (w > 1)
                    orow[w - 1] += k0 * irow[w - 2] + k1 * irow[w - 1];
            }
        }
#ifdef FE_HAVE_X86_KERNELS
        if (j->relu && avx2) {
            fe_relu_avx2(orow, w);
            continue;
        }
#endif
        if (j->relu)
            for (int ox = 0; ox < w; ox++)
                orow[ox] = orow[ox] > 0.0f ? orow[ox] : 0.0f;
    }
}

/* Column buffer budget per tile: big enough for efficient GEMMs, small
 * enough to stay in L2/L3 while the GEMM reads it. */
#define FE_IM2COL_FLOATS (1u << 20)

/* Below this many multiply-adds an op is not split over the pool's threads. */
#define FE_PARALLEL_MIN_MACS (4.0 * 1024 * 1024)

static fe_status fe_cpu_conv3x3(const FeOpDesc *op) {
    const FeTensor *xt = op->src[0], *wt = op->src[1], *bt = op->src[2];
    int batch = (int)xt->shape[0], cin = (int)xt->shape[1], h = (int)xt->shape[2],
        w = (int)xt->shape[3];
    int cout = (int)wt->shape[0];
    int hw = h * w, kdim = cin * 9;
    const float *x = fe_tensor_data(xt), *wd = fe_tensor_data(wt);
    const float *b = bt ? fe_tensor_data(bt) : NULL;
    float *y = fe_tensor_data(op->dst);
    bool relu = op->iparams[0] != 0;
    if (hw == 0 || cout == 0 || batch == 0)
        return FE_OK;

    if (wt->dtype != FE_DTYPE_F32) {
        if (wt->dtype == FE_DTYPE_BF16 && wt->bf16_dot && fe_cpu_bf16_conv_ok(cin)) {
            /* FE_PRECISION_BF16: im2col panels and vdpbf16ps (fe-cpu-bf16.c) */
            const uint16_t *w16 = fe_tensor_data(wt);
            for (int bi = 0; bi < batch; bi++)
                FE_TRY(fe_cpu_conv3x3_bf16(x + (size_t)bi * cin * hw, cin, h, w, w16, b, relu,
                                           cout, y + (size_t)bi * cout * hw));
            return FE_OK;
        }
        /* A 16-bit weight this CPU cannot multiply in bf16: the f32 path on
         * the widened (exact) weight, in slot 1 (slot 0 holds the columns). */
        size_t nw = (size_t)cout * kdim;
        float *wide = fe_scratch_slot(1, nw);
        if (!wide)
            return fe_scratch_error(nw);
        fe_widen_row(wt->dtype, fe_tensor_data(wt), 0, wide, nw);
        wd = wide;
    }

    if (cin <= 2) {
        for (int bi = 0; bi < batch; bi++) {
            FeDirectConvJob job = {x + (size_t)bi * cin * hw, wd, b, y + (size_t)bi * cout * hw,
                                   cin, h, w, relu, cout};
            int groups = (cout + 3) / 4;
            /* A wake-up costs microseconds (a time slice on a loaded machine):
             * small images stay on this thread. */
            if ((double)cout * hw * cin * 9 >= FE_PARALLEL_MIN_MACS)
                fe_cpu_parallel_for(groups, fe_direct_conv_group_task, &job);
            else
                for (int g = 0; g < groups; g++)
                    fe_direct_conv_group_task(&job, g);
        }
        return FE_OK;
    }

    int tile = (int)(FE_IM2COL_FLOATS / (unsigned)kdim);
    if (tile < 64)
        tile = 64;
    if (tile > hw)
        tile = hw;
    float *col = fe_scratch((size_t)kdim * tile);
    if (!col)
        return fe_scratch_error((size_t)kdim * tile);
    for (int bi = 0; bi < batch; bi++) {
        const float *xi = x + (size_t)bi * cin * hw;
        float *yi = y + (size_t)bi * cout * hw;
        for (int p0 = 0; p0 < hw; p0 += tile) {
            int p1 = p0 + tile < hw ? p0 + tile : hw, np = p1 - p0;
            FeIm2colJob job = {xi, col, cin, h, w, p0, p1};
            /* copying: worth a second thread only for big tiles */
            if ((size_t)kdim * np >= ((size_t)1 << 19))
                fe_cpu_parallel_for(cin, fe_im2col_task, &job);
            else
                for (int ci = 0; ci < cin; ci++)
                    fe_im2col_task(&job, ci);
            FE_TRY(fe_sgemm_with(FE_GEMM_AUTO, false, cout, np, kdim, 1.0f, wd, kdim, col, np,
                                 0.0f, yi + p0, hw));
            /* Bias and ReLU in one pass over the tile while it is in cache. */
            if (b || relu)
                for (int co = 0; co < cout; co++)
                    fe_bias_relu(yi + (size_t)co * hw + p0, b ? b[co] : 0.0f, relu, (size_t)np);
        }
    }
    return FE_OK;
}

/* ------------------------------------------------------------------------ */
/* Layout and elementwise ops                                               */

#ifdef FE_HAVE_X86_KERNELS
/* The common pools (2x2, 2x1, 1x1 copy) along whole rows: a vertical max of
 * ph rows, then for pw = 2 the max of even and odd lanes. */
__attribute__((target("avx512f"))) static void fe_maxpool_row_avx512(const float *r0, int w,
                                                                    int ph, int pw, int ow,
                                                                    float *orow) {
    const __m512i even = _mm512_set_epi32(30, 28, 26, 24, 22, 20, 18, 16, 14, 12, 10, 8, 6, 4, 2, 0);
    const __m512i odd = _mm512_set_epi32(31, 29, 27, 25, 23, 21, 19, 17, 15, 13, 11, 9, 7, 5, 3, 1);
    for (int ox = 0; ox < ow; ox += 16) {
        int lanes = ow - ox < 16 ? ow - ox : 16;
        __mmask16 mo = (__mmask16)((1u << lanes) - 1);
        if (pw == 1) {
            __m512 m = _mm512_maskz_loadu_ps(mo, r0 + ox);
            for (int dy = 1; dy < ph; dy++)
                m = _mm512_max_ps(m, _mm512_maskz_loadu_ps(mo, r0 + (size_t)dy * w + ox));
            _mm512_mask_storeu_ps(orow + ox, mo, m);
        } else {
            /* 2 * lanes input columns, in two halves of up to 16. */
            int in0 = 2 * lanes < 16 ? 2 * lanes : 16, in1 = 2 * lanes - in0;
            __mmask16 m0 = (__mmask16)((1u << in0) - 1), m1 = (__mmask16)((1u << in1) - 1);
            const float *src = r0 + 2 * ox;
            __m512 a = _mm512_maskz_loadu_ps(m0, src), b = _mm512_maskz_loadu_ps(m1, src + 16);
            for (int dy = 1; dy < ph; dy++) {
                a = _mm512_max_ps(a, _mm512_maskz_loadu_ps(m0, src + (size_t)dy * w));
                b = _mm512_max_ps(b, _mm512_maskz_loadu_ps(m1, src + (size_t)dy * w + 16));
            }
            __m512 m = _mm512_max_ps(_mm512_permutex2var_ps(a, even, b),
                                     _mm512_permutex2var_ps(a, odd, b));
            _mm512_mask_storeu_ps(orow + ox, mo, m);
        }
    }
}
#endif

#ifdef FE_HAVE_X86_KERNELS
/* One output row of fe_cpu_maxpool for windows 1 or 2 wide, eight outputs
 * at a time (returns how many it did), the window's pixels in the scalar
 * loop's order through maxps(v, m) = v > m ? v : m, so the same numbers
 * (NaNs included). Two wide: the even and odd pixels of 16 apart. */
__attribute__((target("avx2"))) static int fe_maxpool_row_avx2(const float *r0, int w, int ph,
                                                               int pw, int ow, float *orow) {
    int ox = 0;
    for (; ox + 8 <= ow; ox += 8) {
        __m256 m = _mm256_setzero_ps();
        for (int dy = 0; dy < ph; dy++) {
            const float *p = r0 + (size_t)dy * w + (size_t)ox * pw;
            if (pw == 1) {
                __m256 v = _mm256_loadu_ps(p);
                m = _mm256_max_ps(v, dy == 0 ? v : m);
                continue;
            }
            __m256 lo = _mm256_loadu_ps(p), hi = _mm256_loadu_ps(p + 8);
            /* [l0 l2 h0 h2 | l4 l6 h4 h6] -> [l0 l2 l4 l6 h0 h2 h4 h6] */
            __m256 ev = _mm256_castpd_ps(
                _mm256_permute4x64_pd(_mm256_castps_pd(_mm256_shuffle_ps(lo, hi, 0x88)), 0xd8));
            __m256 od = _mm256_castpd_ps(
                _mm256_permute4x64_pd(_mm256_castps_pd(_mm256_shuffle_ps(lo, hi, 0xdd)), 0xd8));
            m = _mm256_max_ps(ev, dy == 0 ? ev : m);
            m = _mm256_max_ps(od, m);
        }
        _mm256_storeu_ps(orow + ox, m);
    }
    return ox;
}
#endif

static fe_status fe_cpu_maxpool(const FeOpDesc *op) {
    const FeTensor *xt = op->src[0];
    int ph = op->iparams[0], pw = op->iparams[1];
    int64_t planes = xt->shape[0] * xt->shape[1];
    int h = (int)xt->shape[2], w = (int)xt->shape[3];
    int oh = h / ph, ow = w / pw;
    const float *x = fe_tensor_data(xt);
    float *y = fe_tensor_data(op->dst);
    for (int64_t p = 0; p < planes; p++) {
        const float *src = x + p * h * w;
        float *dst = y + p * oh * ow;
        for (int oy = 0; oy < oh; oy++) {
            float *orow = dst + (size_t)oy * ow;
            const float *r0 = src + (size_t)oy * ph * w;
#ifdef FE_HAVE_X86_KERNELS
            if (pw <= 2 && fe_use_avx512()) {
                fe_maxpool_row_avx512(r0, w, ph, pw, ow, orow);
                continue;
            }
            int ox = pw >= 1 && pw <= 2 && ph >= 1 && fe_use_avx2()
                         ? fe_maxpool_row_avx2(r0, w, ph, pw, ow, orow)
                         : 0;
#else
            int ox = 0;
#endif
            for (; ox < ow; ox++) {
                float m = r0[ox * pw];
                for (int dy = 0; dy < ph; dy++)
                    for (int dx = 0; dx < pw; dx++) {
                        float v = r0[(size_t)dy * w + ox * pw + dx];
                        m = v > m ? v : m;
                    }
                orow[ox] = m;
            }
        }
    }
    return FE_OK;
}

static fe_status fe_cpu_nchw_to_nlc(const FeOpDesc *op) {
    const FeTensor *xt = op->src[0];
    int64_t batch = xt->shape[0], c = xt->shape[1], hw = xt->shape[2] * xt->shape[3];
    const float *x = fe_tensor_data(xt);
    float *y = fe_tensor_data(op->dst);
    enum { BLK = 32 };
    for (int64_t bi = 0; bi < batch; bi++) {
        const float *src = x + bi * c * hw;
        float *dst = y + bi * c * hw;
        /* Blocked transpose: both sides touch whole cache lines. */
        for (int64_t c0 = 0; c0 < c; c0 += BLK)
            for (int64_t p0 = 0; p0 < hw; p0 += BLK) {
                int64_t c1 = c0 + BLK < c ? c0 + BLK : c, p1 = p0 + BLK < hw ? p0 + BLK : hw;
                for (int64_t p = p0; p < p1; p++)
                    for (int64_t ch = c0; ch < c1; ch++)
                        dst[p * c + ch] = src[ch * hw + p];
            }
    }
    return FE_OK;
}

static fe_status fe_cpu_add(const FeOpDesc *op) {
    const float *a = fe_tensor_data(op->src[0]), *b = fe_tensor_data(op->src[1]);
    float *y = fe_tensor_data(op->dst);
    int64_t n = fe_tensor_nelements(op->src[0]), nb = fe_tensor_nelements(op->src[1]);
    for (int64_t i0 = 0; i0 < n; i0 += nb)
        fe_add_rows(a + i0, b, y + i0, (size_t)nb);
    return FE_OK;
}

#ifdef FE_HAVE_X86_KERNELS
/* One row of fe_cpu_layernorm: the same two passes in double, eight lanes of
 * doubles at a time (the scalar loop waited on one add after another). */
__attribute__((target("avx512f"))) static void
fe_layernorm_row_avx512(const float *x, const float *g, const float *b, float *y, int64_t d,
                        float eps) {
    __m512d s0 = _mm512_setzero_pd(), s1 = _mm512_setzero_pd();
    for (int64_t i = 0; i < d; i += 16) {
        __mmask16 m = d - i >= 16 ? (__mmask16)0xffff : (__mmask16)((1u << (d - i)) - 1);
        __m512 v = _mm512_maskz_loadu_ps(m, x + i);
        s0 = _mm512_add_pd(s0, _mm512_cvtps_pd(_mm512_castps512_ps256(v)));
        s1 = _mm512_add_pd(s1, _mm512_cvtps_pd(fe_hi256(v)));
    }
    double mean = _mm512_reduce_add_pd(_mm512_add_pd(s0, s1)) / (double)d;
    __m512d vm = _mm512_set1_pd(mean);
    s0 = _mm512_setzero_pd();
    s1 = _mm512_setzero_pd();
    for (int64_t i = 0; i < d; i += 16) {
        __mmask16 m = d - i >= 16 ? (__mmask16)0xffff : (__mmask16)((1u << (d - i)) - 1);
        __m512 v = _mm512_maskz_loadu_ps(m, x + i);
        /* masked-off lanes are x = 0: keep them out of the sum */
        __m512d lo = _mm512_cvtps_pd(_mm512_castps512_ps256(v)), hi = _mm512_cvtps_pd(fe_hi256(v));
        __m512d t0 = _mm512_maskz_sub_pd((__mmask8)(m & 0xff), lo, vm);
        __m512d t1 = _mm512_maskz_sub_pd((__mmask8)(m >> 8), hi, vm);
        s0 = _mm512_fmadd_pd(t0, t0, s0);
        s1 = _mm512_fmadd_pd(t1, t1, s1);
    }
    double sq = _mm512_reduce_add_pd(_mm512_add_pd(s0, s1));
    __m512 rstd = _mm512_set1_ps((float)(1.0 / sqrt(sq / (double)d + eps)));
    __m512 fmean = _mm512_set1_ps((float)mean);
    for (int64_t i = 0; i < d; i += 16) {
        __mmask16 m = d - i >= 16 ? (__mmask16)0xffff : (__mmask16)((1u << (d - i)) - 1);
        __m512 t = _mm512_mul_ps(_mm512_sub_ps(_mm512_maskz_loadu_ps(m, x + i), fmean), rstd);
        t = _mm512_add_ps(_mm512_mul_ps(t, _mm512_maskz_loadu_ps(m, g + i)),
                          _mm512_maskz_loadu_ps(m, b + i));
        _mm512_mask_storeu_ps(y + i, m, t);
    }
}
#endif

#ifdef FE_HAVE_X86_KERNELS
/* The scalar layer norm's last pass, ((x - mean) * rstd) * g + b, eight at a
 * time with the same roundings (no FMA, see fe_bias_relu_avx2); returns how
 * many it did (whole vectors; the caller does the rest). Its two sums stay
 * scalar: in double one after another, their order is their bits. */
__attribute__((target("avx2"))) static int64_t fe_layernorm_scale_avx2(const float *x,
                                                                       const float *g,
                                                                       const float *b, float *y,
                                                                       int64_t d, float mean,
                                                                       float rstd) {
    __m256 vm = _mm256_set1_ps(mean), vr = _mm256_set1_ps(rstd);
    int64_t i = 0;
    for (; i + 8 <= d; i += 8) {
        __m256 t = _mm256_mul_ps(_mm256_sub_ps(_mm256_loadu_ps(x + i), vm), vr);
        t = _mm256_add_ps(_mm256_mul_ps(t, _mm256_loadu_ps(g + i)), _mm256_loadu_ps(b + i));
        _mm256_storeu_ps(y + i, t);
    }
    return i;
}
#endif

/* The mean and the sum of squared deviations of four rows of d floats (ld
 * = d apart), each summed in double in element order exactly as the
 * one-row loop in fe_cpu_layernorm sums it: four independent chains. */
static void fe_layernorm_sums4(const float *x, int64_t d, double mean[4], double sq[4]) {
    const float *x0 = x, *x1 = x + d, *x2 = x + 2 * d, *x3 = x + 3 * d;
    double s0 = 0.0, s1 = 0.0, s2 = 0.0, s3 = 0.0;
    for (int64_t i = 0; i < d; i++) {
        s0 += x0[i];
        s1 += x1[i];
        s2 += x2[i];
        s3 += x3[i];
    }
    double m0 = s0 / (double)d, m1 = s1 / (double)d, m2 = s2 / (double)d, m3 = s3 / (double)d;
    double q0 = 0.0, q1 = 0.0, q2 = 0.0, q3 = 0.0;
    for (int64_t i = 0; i < d; i++) {
        double t0 = x0[i] - m0, t1 = x1[i] - m1, t2 = x2[i] - m2, t3 = x3[i] - m3;
        q0 += t0 * t0;
        q1 += t1 * t1;
        q2 += t2 * t2;
        q3 += t3 * t3;
    }
    mean[0] = m0, mean[1] = m1, mean[2] = m2, mean[3] = m3;
    sq[0] = q0, sq[1] = q1, sq[2] = q2, sq[3] = q3;
}

static fe_status fe_cpu_layernorm(const FeOpDesc *op) {
    const FeTensor *xt = op->src[0];
    int64_t d = xt->shape[xt->ndim - 1], rows = fe_tensor_nelements(xt) / d;
    const float *x = fe_tensor_data(xt), *g = fe_tensor_data(op->src[1]),
                *bb = fe_tensor_data(op->src[2]);
    float *y = fe_tensor_data(op->dst);
    float eps = op->fparams[0];
#ifdef FE_HAVE_X86_KERNELS
    if (fe_use_avx512()) {
        for (int64_t r = 0; r < rows; r++)
            fe_layernorm_row_avx512(x + r * d, g, bb, y + r * d, d, eps);
        return FE_OK;
    }
#endif
    double mean4[4], sq4[4];
    for (int64_t r = 0; r < rows; r++) {
        const float *xr = x + r * d;
        float *yr = y + r * d;
        /* Two passes in double: exact enough for any row length. The rows
         * in whole groups of four have their sums taken together
         * (fe_layernorm_sums4: each in its own order, so the numbers of the
         * loop below; one sum alone waits on the add's latency at every
         * element). */
        double mean, sq;
        if (r < rows - rows % 4) {
            if (r % 4 == 0)
                fe_layernorm_sums4(xr, d, mean4, sq4);
            mean = mean4[r % 4];
            sq = sq4[r % 4];
        } else {
            double sum = 0.0;
            sq = 0.0;
            for (int64_t i = 0; i < d; i++)
                sum += xr[i];
            mean = sum / (double)d;
            for (int64_t i = 0; i < d; i++) {
                double t = xr[i] - mean;
                sq += t * t;
            }
        }
        float rstd = (float)(1.0 / sqrt(sq / (double)d + eps));
        float fmean = (float)mean;
        int64_t i = 0;
#ifdef FE_HAVE_X86_KERNELS
        if (fe_use_avx2())
            i = fe_layernorm_scale_avx2(xr, g, bb, yr, d, fmean, rstd);
#endif
        for (; i < d; i++)
            yr[i] = (xr[i] - fmean) * rstd * g[i] + bb[i];
    }
    return FE_OK;
}

static fe_status fe_cpu_gelu(const FeOpDesc *op) {
    fe_gelu_rows(fe_tensor_data(op->src[0]), fe_tensor_data(op->dst),
                 (size_t)fe_tensor_nelements(op->src[0]));
    return FE_OK;
}

static fe_status fe_cpu_log_softmax(const FeOpDesc *op) {
    const FeTensor *xt = op->src[0];
    int64_t n = xt->shape[xt->ndim - 1], rows = fe_tensor_nelements(xt) / n;
    const float *x = fe_tensor_data(xt);
    float *y = fe_tensor_data(op->dst);
    for (int64_t r = 0; r < rows; r++) {
        const float *xr = x + r * n;
        float *yr = y + r * n;
        float mx = -INFINITY;
        for (int64_t i = 0; i < n; i++)
            mx = xr[i] > mx ? xr[i] : mx;
        double sum = 0.0;
        for (int64_t i = 0; i < n; i++)
            sum += expf(xr[i] - mx);
        float lse = mx + (float)log(sum);
        for (int64_t i = 0; i < n; i++)
            yr[i] = xr[i] - lse;
    }
    return FE_OK;
}

static fe_status fe_cpu_topk(const FeOpDesc *op) {
    const FeTensor *xt = op->src[0];
    int k = op->iparams[0];
    int64_t n = xt->shape[xt->ndim - 1], rows = fe_tensor_nelements(xt) / n;
    const float *x = fe_tensor_data(xt);
    float *vals = fe_tensor_data(op->dst);
    int32_t *idx = fe_tensor_data(op->src[1]);
    for (int64_t r = 0; r < rows; r++) {
        const float *xr = x + r * n;
        float *vr = vals + r * k;
        int32_t *ir = idx + r * k;
        int have = 0;
        /* Insertion into a sorted list of k: k is a beam width, N a vocab. */
        for (int64_t i = 0; i < n; i++) {
            float v = xr[i] != xr[i] ? -INFINITY : xr[i]; /* NaN ranks last */
            if (have == k && !(v > vr[k - 1]))
                continue; /* equal values keep the lower index already in */
            int pos = have < k ? have : k - 1;
            while (pos > 0 && v > vr[pos - 1]) {
                vr[pos] = vr[pos - 1];
                ir[pos] = ir[pos - 1];
                pos--;
            }
            vr[pos] = v;
            ir[pos] = (int32_t)i;
            if (have < k)
                have++;
        }
    }
    return FE_OK;
}

static fe_status fe_cpu_embed(const FeOpDesc *op) {
    const FeTensor *tt = op->src[0], *pt = op->src[1], *it = op->src[2];
    int64_t vocab = tt->shape[0], d = tt->shape[1], nb = fe_tensor_nelements(it);
    const void *table = fe_tensor_data(tt);
    const float *pos = (const float *)fe_tensor_data(pt) + (int64_t)op->iparams[0] * d;
    float *y = fe_tensor_data(op->dst);
    for (int64_t b = 0; b < nb; b++) {
        int64_t id = it->dtype == FE_DTYPE_I32 ? ((const int32_t *)fe_tensor_data(it))[b]
                                               : ((const int64_t *)fe_tensor_data(it))[b];
        if (id < 0 || id >= vocab)
            return fe_set_error(FE_ERR_INVALID_ARGUMENT, "fe_embed: token id %lld outside [0, %lld)",
                                (long long)id, (long long)vocab);
        /* the row widened into the output, then the position added */
        fe_widen_row(tt->dtype, table, (size_t)(id * d), y + b * d, (size_t)d);
        for (int64_t i = 0; i < d; i++)
            y[b * d + i] += pos[i];
    }
    return FE_OK;
}

static fe_status fe_cpu_kv_write(const FeOpDesc *op) {
    const FeTensor *cache = op->dst;
    int64_t batch = cache->shape[0], tmax = cache->shape[1], d = cache->shape[2];
    const float *rows = fe_tensor_data(op->src[0]);
    float *c = fe_tensor_data(cache);
    for (int64_t b = 0; b < batch; b++)
        memcpy(c + (b * tmax + op->iparams[0]) * d, rows + b * d, (size_t)d * sizeof(float));
    return FE_OK;
}

/* ------------------------------------------------------------------------ */
/* attention                                                                */

/* Query rows per block: bounds the score scratch to QB x kv_len floats. */
#define FE_ATTN_QB 128

typedef struct {
    const float *q, *k, *v;
    float *y;
    int tq, tk_max, d, heads, dh, kv_len, q_pos0;
    bool causal;
    float scale;
    int q_blocks;
    fe_gemm_kernel kernel;
    /* decode (tq <= 2) with the AVX2 kernel and an even number of heads: two
     * heads a task through fe_attn_query2_avx2, the same numbers */
    bool pair_heads;
    bool failed;
} FeAttnJob;

static int fe_attn_visible(const FeAttnJob *j, int qi) {
    if (!j->causal)
        return j->kv_len;
    int lim = j->q_pos0 + qi + 1;
    return lim < j->kv_len ? lim : j->kv_len;
}

#ifdef FE_HAVE_X86_KERNELS
/* expf for 16 lanes: Cephes' polynomial on the reduced argument, 2^n by
 * scalef; within 2 ulp of expf over the softmax range (x <= 0). */
__attribute__((target("avx512f"))) static inline __m512 fe_exp512(__m512 x) {
    x = _mm512_max_ps(x, _mm512_set1_ps(-87.3f));
    x = _mm512_min_ps(x, _mm512_set1_ps(88.3f));
    __m512 n = _mm512_roundscale_ps(_mm512_mul_ps(x, _mm512_set1_ps(1.44269504088896341f)),
                                    _MM_FROUND_TO_NEAREST_INT | _MM_FROUND_NO_EXC);
    __m512 r = _mm512_fnmadd_ps(n, _mm512_set1_ps(0.693359375f), x);
    r = _mm512_fnmadd_ps(n, _mm512_set1_ps(-2.12194440e-4f), r);
    __m512 p = _mm512_set1_ps(1.9875691500e-4f);
    p = _mm512_fmadd_ps(p, r, _mm512_set1_ps(1.3981999507e-3f));
    p = _mm512_fmadd_ps(p, r, _mm512_set1_ps(8.3334519073e-3f));
    p = _mm512_fmadd_ps(p, r, _mm512_set1_ps(4.1665795894e-2f));
    p = _mm512_fmadd_ps(p, r, _mm512_set1_ps(1.6666665459e-1f));
    p = _mm512_fmadd_ps(p, r, _mm512_set1_ps(5.0000001201e-1f));
    p = _mm512_fmadd_ps(p, _mm512_mul_ps(r, r), _mm512_add_ps(r, _mm512_set1_ps(1.0f)));
    return _mm512_scalef_ps(p, n);
}

__attribute__((target("avx512f"))) static void fe_softmax_row_avx512(float *s, int n) {
    __m512 vmax = _mm512_set1_ps(-INFINITY);
    int i = 0;
    for (; i + 16 <= n; i += 16)
        vmax = _mm512_max_ps(vmax, _mm512_loadu_ps(s + i));
    if (i < n)
        vmax = _mm512_mask_max_ps(vmax, (__mmask16)((1u << (n - i)) - 1), vmax,
                                  _mm512_maskz_loadu_ps((__mmask16)((1u << (n - i)) - 1), s + i));
    float t[16] __attribute__((aligned(64)));
    _mm512_store_ps(t, vmax);
    float mx = t[0];
    for (int l = 1; l < 16; l++)
        mx = t[l] > mx ? t[l] : mx;
    __m512 vm = _mm512_set1_ps(mx), vsum = _mm512_setzero_ps();
    for (i = 0; i + 16 <= n; i += 16) {
        __m512 e = fe_exp512(_mm512_sub_ps(_mm512_loadu_ps(s + i), vm));
        _mm512_storeu_ps(s + i, e);
        vsum = _mm512_add_ps(vsum, e);
    }
    if (i < n) {
        __mmask16 m = (__mmask16)((1u << (n - i)) - 1);
        __m512 e = fe_exp512(_mm512_sub_ps(_mm512_maskz_loadu_ps(m, s + i), vm));
        _mm512_mask_storeu_ps(s + i, m, e);
        vsum = _mm512_add_ps(vsum, _mm512_maskz_mov_ps(m, e));
    }
    __m512 inv = _mm512_set1_ps(1.0f / fe_hsum512(vsum));
    for (i = 0; i + 16 <= n; i += 16)
        _mm512_storeu_ps(s + i, _mm512_mul_ps(_mm512_loadu_ps(s + i), inv));
    if (i < n) {
        __mmask16 m = (__mmask16)((1u << (n - i)) - 1);
        _mm512_mask_storeu_ps(s + i, m, _mm512_mul_ps(_mm512_maskz_loadu_ps(m, s + i), inv));
    }
}
#endif

/* softmax in place over n scores; returns nothing, the row sums to 1. */
#ifdef FE_HAVE_X86_KERNELS
/* The largest of s[0..] in whole vectors into *mx (returns how many it
 * looked at). The maximum of numbers is the same in any order; maxps keeps
 * its second operand for a NaN, so a NaN is never taken, as the scalar
 * s > mx ? s : mx never takes it. (A -0 and a +0 may swap: x - mx and
 * expf are the same for both.) */
__attribute__((target("avx2"))) static int fe_max_avx2(const float *s, int n, float *mx) {
    if (n < 8)
        return 0;
    __m256 m = _mm256_set1_ps(*mx);
    int i = 0;
    for (; i + 8 <= n; i += 8)
        m = _mm256_max_ps(_mm256_loadu_ps(s + i), m);
    __m128 h = _mm_max_ps(_mm256_extractf128_ps(m, 1), _mm256_castps256_ps128(m));
    h = _mm_max_ps(_mm_movehl_ps(h, h), h);
    h = _mm_max_ss(_mm_movehdup_ps(h), h);
    *mx = _mm_cvtss_f32(h);
    return i;
}

/* s[i] *= f in whole vectors (returns how many). */
__attribute__((target("avx2"))) static int fe_scale_avx2(float *s, int n, float f) {
    __m256 vf = _mm256_set1_ps(f);
    int i = 0;
    for (; i + 8 <= n; i += 8)
        _mm256_storeu_ps(s + i, _mm256_mul_ps(_mm256_loadu_ps(s + i), vf));
    return i;
}
#endif

static void fe_softmax_row(float *s, int n) {
#ifdef FE_HAVE_X86_KERNELS
    if (fe_use_avx512()) {
        fe_softmax_row_avx512(s, n);
        return;
    }
#endif
    float mx = -INFINITY;
    int i = 0;
#ifdef FE_HAVE_X86_KERNELS
    bool avx2 = fe_use_avx2();
    if (avx2)
        i = fe_max_avx2(s, n, &mx);
#endif
    for (; i < n; i++)
        mx = s[i] > mx ? s[i] : mx;
    /* the sum one by one: its order is its bits; expf eight at a time
     * where that gives libm's numbers (fe_expf_rows) */
    float sum = 0.0f;
    for (i = 0; i < n; i++)
        s[i] = s[i] - mx;
    fe_expf_rows(s, s, (size_t)n);
    for (i = 0; i < n; i++)
        sum += s[i];
    float inv = 1.0f / sum;
    i = 0;
#ifdef FE_HAVE_X86_KERNELS
    if (avx2)
        i = fe_scale_avx2(s, n, inv);
#endif
    for (; i < n; i++)
        s[i] *= inv;
}

#ifdef FE_HAVE_X86_KERNELS
/* Head widths up to this many floats keep the query and the output of one
 * head in registers for the whole pass over the keys. */
#define FE_ATTN_REG_DH 64

/* One query of one head (decode): scores, softmax, weighted sum of values,
 * with q and the running output held in zmm registers (dh in 16..64). */
__attribute__((target("avx512f"))) static void
fe_attn_query_avx512(const float *q, const float *k, const float *v, int ld, int dh, int n,
                     float scale, float *s, float *y) {
    int nv = dh / 16;
    __m512 q0 = _mm512_loadu_ps(q), q1 = nv > 1 ? _mm512_loadu_ps(q + 16) : _mm512_setzero_ps();
    __m512 q2 = nv > 2 ? _mm512_loadu_ps(q + 32) : _mm512_setzero_ps();
    __m512 q3 = nv > 3 ? _mm512_loadu_ps(q + 48) : _mm512_setzero_ps();
#define FE_QK(acc, kt)                                                                          \
    do {                                                                                        \
        acc = _mm512_mul_ps(q0, _mm512_loadu_ps(kt));                                           \
        if (nv > 1)                                                                             \
            acc = _mm512_fmadd_ps(q1, _mm512_loadu_ps((kt) + 16), acc);                         \
        if (nv > 2)                                                                             \
            acc = _mm512_fmadd_ps(q2, _mm512_loadu_ps((kt) + 32), acc);                         \
        if (nv > 3)                                                                             \
            acc = _mm512_fmadd_ps(q3, _mm512_loadu_ps((kt) + 48), acc);                         \
    } while (0)
    int t = 0;
    /* Four keys per horizontal reduction: the shuffles cost more than the
     * multiply-adds at head widths of 16-64. */
    for (; t + 4 <= n; t += 4) {
        __m512 c0, c1, c2, c3;
        FE_QK(c0, k + (size_t)t * ld);
        FE_QK(c1, k + (size_t)(t + 1) * ld);
        FE_QK(c2, k + (size_t)(t + 2) * ld);
        FE_QK(c3, k + (size_t)(t + 3) * ld);
        fe_hsum4_512(c0, c1, c2, c3, s + t);
        _mm_storeu_ps(s + t, _mm_mul_ps(_mm_loadu_ps(s + t), _mm_set1_ps(scale)));
    }
    for (; t < n; t++) {
        __m512 acc;
        FE_QK(acc, k + (size_t)t * ld);
        s[t] = scale * fe_hsum512(acc);
    }
#undef FE_QK
    fe_softmax_row(s, n);
    __m512 y0 = _mm512_setzero_ps(), y1 = _mm512_setzero_ps();
    __m512 y2 = _mm512_setzero_ps(), y3 = _mm512_setzero_ps();
    for (t = 0; t < n; t++) {
        const float *vt = v + (size_t)t * ld;
        __m512 p = _mm512_set1_ps(s[t]);
        y0 = _mm512_fmadd_ps(p, _mm512_loadu_ps(vt), y0);
        if (nv > 1)
            y1 = _mm512_fmadd_ps(p, _mm512_loadu_ps(vt + 16), y1);
        if (nv > 2)
            y2 = _mm512_fmadd_ps(p, _mm512_loadu_ps(vt + 32), y2);
        if (nv > 3)
            y3 = _mm512_fmadd_ps(p, _mm512_loadu_ps(vt + 48), y3);
    }
    _mm512_storeu_ps(y, y0);
    if (nv > 1)
        _mm512_storeu_ps(y + 16, y1);
    if (nv > 2)
        _mm512_storeu_ps(y + 32, y2);
    if (nv > 3)
        _mm512_storeu_ps(y + 48, y3);
}

/* The same on AVX2 for head widths 8..32 (q and y in up to four ymm each),
 * in two parts so that fe_attn_query2_avx2 can pair heads. The scores: keys
 * eight per pass (eight sums in flight: four waited on each other's FMA
 * latency), then four, then alone, each key's sum in the same order and
 * reduction (fe_hsum4_256 = fe_hsum256 per key), so the grouping does not
 * change its bits; then the softmax. */
__attribute__((target("avx2,fma"))) static void fe_attn_scores_avx2(const float *q,
                                                                    const float *k, int ld,
                                                                    int dh, int n, float scale,
                                                                    float *s) {
    int nv = dh / 8;
    __m256 z = _mm256_setzero_ps();
    __m256 q0 = _mm256_loadu_ps(q), q1 = nv > 1 ? _mm256_loadu_ps(q + 8) : z;
    __m256 q2 = nv > 2 ? _mm256_loadu_ps(q + 16) : z, q3 = nv > 3 ? _mm256_loadu_ps(q + 24) : z;
#define FE_QK8(acc, kt)                                                                         \
    do {                                                                                        \
        acc = _mm256_mul_ps(q0, _mm256_loadu_ps(kt));                                           \
        if (nv > 1)                                                                             \
            acc = _mm256_fmadd_ps(q1, _mm256_loadu_ps((kt) + 8), acc);                          \
        if (nv > 2)                                                                             \
            acc = _mm256_fmadd_ps(q2, _mm256_loadu_ps((kt) + 16), acc);                         \
        if (nv > 3)                                                                             \
            acc = _mm256_fmadd_ps(q3, _mm256_loadu_ps((kt) + 24), acc);                         \
    } while (0)
#define FE_QK_FOUR(t)                                                                           \
    do {                                                                                        \
        __m256 c0, c1, c2, c3;                                                                  \
        FE_QK8(c0, k + (size_t)(t) * ld);                                                       \
        FE_QK8(c1, k + (size_t)((t) + 1) * ld);                                                 \
        FE_QK8(c2, k + (size_t)((t) + 2) * ld);                                                 \
        FE_QK8(c3, k + (size_t)((t) + 3) * ld);                                                 \
        fe_hsum4_256(c0, c1, c2, c3, s + (t));                                                  \
        _mm_storeu_ps(s + (t), _mm_mul_ps(_mm_loadu_ps(s + (t)), _mm_set1_ps(scale)));          \
    } while (0)
    int t = 0;
    for (; t + 8 <= n; t += 8) {
        __m256 c0, c1, c2, c3, c4, c5, c6, c7;
        FE_QK8(c0, k + (size_t)t * ld);
        FE_QK8(c1, k + (size_t)(t + 1) * ld);
        FE_QK8(c2, k + (size_t)(t + 2) * ld);
        FE_QK8(c3, k + (size_t)(t + 3) * ld);
        FE_QK8(c4, k + (size_t)(t + 4) * ld);
        FE_QK8(c5, k + (size_t)(t + 5) * ld);
        FE_QK8(c6, k + (size_t)(t + 6) * ld);
        FE_QK8(c7, k + (size_t)(t + 7) * ld);
        fe_hsum4_256(c0, c1, c2, c3, s + t);
        fe_hsum4_256(c4, c5, c6, c7, s + t + 4);
        __m256 sv = _mm256_mul_ps(_mm256_loadu_ps(s + t), _mm256_set1_ps(scale));
        _mm256_storeu_ps(s + t, sv);
    }
    for (; t + 4 <= n; t += 4)
        FE_QK_FOUR(t);
    for (; t < n; t++) {
        __m256 acc;
        FE_QK8(acc, k + (size_t)t * ld);
        s[t] = scale * fe_hsum256(acc);
    }
#undef FE_QK_FOUR
#undef FE_QK8
    fe_softmax_row(s, n);
}

/* The weighted sum of values for one head: y (dh floats) = sum_t s[t] v[t],
 * one accumulator per eight floats of the head, t in order. */
__attribute__((target("avx2,fma"))) static void
fe_attn_query_avx2(const float *q, const float *k, const float *v, int ld, int dh, int n,
                   float scale, float *s, float *y) {
    int nv = dh / 8;
    __m256 z = _mm256_setzero_ps();
    fe_attn_scores_avx2(q, k, ld, dh, n, scale, s);
    __m256 y0 = z, y1 = z, y2 = z, y3 = z;
    for (int t = 0; t < n; t++) {
        const float *vt = v + (size_t)t * ld;
        __m256 p = _mm256_set1_ps(s[t]);
        y0 = _mm256_fmadd_ps(p, _mm256_loadu_ps(vt), y0);
        if (nv > 1)
            y1 = _mm256_fmadd_ps(p, _mm256_loadu_ps(vt + 8), y1);
        if (nv > 2)
            y2 = _mm256_fmadd_ps(p, _mm256_loadu_ps(vt + 16), y2);
        if (nv > 3)
            y3 = _mm256_fmadd_ps(p, _mm256_loadu_ps(vt + 24), y3);
    }
    _mm256_storeu_ps(y, y0);
    if (nv > 1)
        _mm256_storeu_ps(y + 8, y1);
    if (nv > 2)
        _mm256_storeu_ps(y + 16, y2);
    if (nv > 3)
        _mm256_storeu_ps(y + 24, y3);
}

/* Two heads side by side (the second dh floats on in q, k, v, y; s holds
 * 2n scores): each head's numbers are fe_attn_query_avx2's, but the weighted
 * sums of the two run together, eight accumulators instead of four that
 * each waited on its own FMA latency at every key. */
__attribute__((target("avx2,fma"))) static void
fe_attn_query2_avx2(const float *q, const float *k, const float *v, int ld, int dh, int n,
                    float scale, float *s, float *y) {
    int nv = dh / 8;
    __m256 z = _mm256_setzero_ps();
    fe_attn_scores_avx2(q, k, ld, dh, n, scale, s);
    fe_attn_scores_avx2(q + dh, k + dh, ld, dh, n, scale, s + n);
    __m256 y0 = z, y1 = z, y2 = z, y3 = z, u0 = z, u1 = z, u2 = z, u3 = z;
    for (int t = 0; t < n; t++) {
        const float *vt = v + (size_t)t * ld, *ut = vt + dh;
        __m256 p = _mm256_set1_ps(s[t]), pu = _mm256_set1_ps(s[n + t]);
        y0 = _mm256_fmadd_ps(p, _mm256_loadu_ps(vt), y0);
        u0 = _mm256_fmadd_ps(pu, _mm256_loadu_ps(ut), u0);
        if (nv > 1) {
            y1 = _mm256_fmadd_ps(p, _mm256_loadu_ps(vt + 8), y1);
            u1 = _mm256_fmadd_ps(pu, _mm256_loadu_ps(ut + 8), u1);
        }
        if (nv > 2) {
            y2 = _mm256_fmadd_ps(p, _mm256_loadu_ps(vt + 16), y2);
            u2 = _mm256_fmadd_ps(pu, _mm256_loadu_ps(ut + 16), u2);
        }
        if (nv > 3) {
            y3 = _mm256_fmadd_ps(p, _mm256_loadu_ps(vt + 24), y3);
            u3 = _mm256_fmadd_ps(pu, _mm256_loadu_ps(ut + 24), u3);
        }
    }
    __m256 out[8] = {y0, y1, y2, y3, u0, u1, u2, u3};
    for (int i = 0; i < nv; i++) {
        _mm256_storeu_ps(y + 8 * i, out[i]);
        _mm256_storeu_ps(y + dh + 8 * i, out[4 + i]);
    }
}
#endif

#ifdef FE_HAVE_X86_KERNELS
/* Whether fe_attn_one_query takes the AVX2 kernel for this head width. */
static bool fe_attn_avx2_takes(int dh) {
    return !fe_use_avx512() && fe_use_avx2() && dh >= 8 && dh % 8 == 0 && dh <= 32;
}
#endif

/* One query of one head over n keys (rows ld floats apart): the decode
 * step's attention, both over the one memory (fe_attn_task) and over each
 * row's own (fe_attn_rows_task), so that the two give the same numbers. s is
 * scratch for n scores. */
static void fe_attn_one_query(const float *q, const float *k, const float *v, int ld, int dh,
                              int n, float scale, float *s, float *y) {
#ifdef FE_HAVE_X86_KERNELS
    /* The register kernels load whole vectors of q, k, v and store whole
     * ones of y: a head narrower than one vector (dh 0, from D = 0) would
     * read and write past them. */
    if (fe_use_avx512() && dh >= 16 && dh % 16 == 0 && dh <= FE_ATTN_REG_DH) {
        fe_attn_query_avx512(q, k, v, ld, dh, n, scale, s, y);
        return;
    }
    if (fe_attn_avx2_takes(dh)) {
        fe_attn_query_avx2(q, k, v, ld, dh, n, scale, s, y);
        return;
    }
#endif
    for (int t = 0; t < n; t++)
        s[t] = scale * fe_dot(q, k + (size_t)t * ld, dh);
    fe_softmax_row(s, n);
    memset(y, 0, (size_t)dh * sizeof(float));
    for (int t = 0; t < n; t++)
        fe_axpy(s[t], v + (size_t)t * ld, y, dh);
}

static void fe_attn_task(void *ctx, int task) {
    FeAttnJob *j = ctx;
    int per = j->pair_heads ? 2 : 1;
    int qb = task % j->q_blocks, bh = task / j->q_blocks;
    int b = bh / (j->heads / per), h = bh % (j->heads / per) * per;
    int i0 = qb * FE_ATTN_QB, i1 = i0 + FE_ATTN_QB < j->tq ? i0 + FE_ATTN_QB : j->tq;
    int rows = i1 - i0, d = j->d, dh = j->dh;
    const float *q = j->q + ((size_t)b * j->tq + i0) * d + (size_t)h * dh;
    const float *k = j->k + (size_t)b * j->tk_max * d + (size_t)h * dh;
    const float *v = j->v + (size_t)b * j->tk_max * d + (size_t)h * dh;
    float *y = j->y + ((size_t)b * j->tq + i0) * d + (size_t)h * dh;
    /* Keys past the last visible one never matter for this block. */
    int kv = fe_attn_visible(j, i1 - 1);
    float *s = fe_scratch((size_t)rows * kv * per);
    if (!s) {
        j->failed = true;
        return;
    }

    if (rows <= 2) {
        /* Decode step: a few dot products per key, no GEMM set-up. */
        for (int r = 0; r < rows; r++) {
#ifdef FE_HAVE_X86_KERNELS
            if (j->pair_heads) {
                fe_attn_query2_avx2(q + (size_t)r * d, k, v, d, dh, fe_attn_visible(j, i0 + r),
                                    j->scale, s + (size_t)r * 2 * kv, y + (size_t)r * d);
                continue;
            }
#endif
            fe_attn_one_query(q + (size_t)r * d, k, v, d, dh, fe_attn_visible(j, i0 + r),
                              j->scale, s + (size_t)r * kv, y + (size_t)r * d);
        }
        return;
    }

    if (fe_sgemm_with(j->kernel, true, rows, kv, dh, j->scale, q, d, k, d, 0.0f, s, kv) != FE_OK) {
        j->failed = true;
        return;
    }
    for (int r = 0; r < rows; r++) {
        int vis = fe_attn_visible(j, i0 + r);
        float *sr = s + (size_t)r * kv;
        fe_softmax_row(sr, vis);
        for (int t = vis; t < kv; t++)
            sr[t] = 0.0f;
    }
    if (fe_sgemm_with(j->kernel, false, rows, dh, kv, 1.0f, s, kv, v, d, 0.0f, y, d) != FE_OK)
        j->failed = true;
}

static fe_gemm_kernel fe_best_builtin_kernel(void) {
    const FeCpuInfo *ci = fe_cpu_info();
    if (ci->avx512f)
        return FE_GEMM_BUILTIN_AVX512;
    if (ci->avx2 && ci->fma)
        return FE_GEMM_BUILTIN_AVX2;
    return FE_GEMM_BUILTIN_GENERIC;
}

static fe_status fe_cpu_attention(const FeOpDesc *op) {
    const FeTensor *qt = op->src[0], *kt = op->src[1];
    FeAttnJob job = {
        .q = fe_tensor_data(qt),
        .k = fe_tensor_data(kt),
        .v = fe_tensor_data(op->src[2]),
        .y = fe_tensor_data(op->dst),
        .tq = (int)qt->shape[1],
        .tk_max = (int)kt->shape[1],
        .d = (int)qt->shape[2],
        .heads = op->iparams[0],
        .kv_len = op->iparams[1],
        .causal = op->iparams[2] != 0,
        .q_pos0 = op->iparams[3],
    };
    int batch = (int)qt->shape[0];
    if (job.tq == 0 || batch == 0)
        return FE_OK;
    job.dh = job.d / job.heads;
    job.scale = 1.0f / sqrtf((float)job.dh);
    job.q_blocks = (job.tq + FE_ATTN_QB - 1) / FE_ATTN_QB;
    /* Heads run on the pool's threads, so each GEMM inside must stay on its
     * own thread. The usual path does: OpenBLAS runs single-threaded in the
     * engine's pool and a nested parallel_for runs inline (and OpenBLAS beats
     * the built-in kernel at these K = d_head shapes). Only when OpenBLAS
     * keeps its own threads (FE_BLAS_THREADS=openblas, fe-blas.c) would it
     * start them on top, so then the built-in kernel runs the heads. */
    static _Atomic int openblas_threads = -1; /* FE_BLAS_THREADS, read once, as fe-blas.c does */
    if (openblas_threads < 0) {
        const char *blas_threads = getenv("FE_BLAS_THREADS");
        openblas_threads = blas_threads && strcmp(blas_threads, "openblas") == 0;
    }
    job.kernel = openblas_threads ? fe_best_builtin_kernel() : FE_GEMM_AUTO;
#ifdef FE_HAVE_X86_KERNELS
    job.pair_heads = job.tq <= 2 && job.heads % 2 == 0 && fe_attn_avx2_takes(job.dh);
#endif
    int tasks = batch * (job.pair_heads ? job.heads / 2 : job.heads) * job.q_blocks;
    double work = (double)batch * job.tq * job.kv_len * job.d;
    /* Small (decode) attention is a few microseconds: cheaper than a wake-up. */
    if (work < 256.0 * 1024)
        for (int t = 0; t < tasks; t++)
            fe_attn_task(&job, t);
    else
        fe_cpu_parallel_for(tasks, fe_attn_task, &job);
    if (job.failed)
        return fe_set_error(FE_ERR_OUT_OF_MEMORY, "fe_attention: out of scratch memory");
    return FE_OK;
}

/* Each batch row over its own span of packed keys (FE_OP_ATTENTION_ROWS). */
typedef struct {
    const float *q, *k, *v;
    const int32_t *spans;
    float *y;
    int tq, d, heads, dh;
    float scale;
    /* two heads a task through fe_attn_query2_avx2 (the AVX2 path of
     * fe_attn_one_query, an even number of heads): the same numbers */
    bool pair_heads;
    bool failed;
} FeAttnRowsJob;

static void fe_attn_rows_task(void *ctx, int task) {
    FeAttnRowsJob *j = ctx;
    int per = j->pair_heads ? 2 : 1, tasks_per_row = j->heads / per;
    int r = task / tasks_per_row, h = task % tasks_per_row * per;
    int start = j->spans[2 * r], len = j->spans[2 * r + 1];
    float *s = fe_scratch((size_t)len * per);
    if (!s) {
        j->failed = true;
        return;
    }
    const float *k = j->k + (size_t)start * j->d + (size_t)h * j->dh;
    const float *v = j->v + (size_t)start * j->d + (size_t)h * j->dh;
    for (int i = 0; i < j->tq; i++) {
        size_t row = ((size_t)r * j->tq + i) * j->d + (size_t)h * j->dh;
#ifdef FE_HAVE_X86_KERNELS
        if (j->pair_heads) {
            fe_attn_query2_avx2(j->q + row, k, v, j->d, j->dh, len, j->scale, s, j->y + row);
            continue;
        }
#endif
        fe_attn_one_query(j->q + row, k, v, j->d, j->dh, len, j->scale, s, j->y + row);
    }
}

static fe_status fe_cpu_attention_rows(const FeOpDesc *op) {
    const FeTensor *qt = op->src[0], *kt = op->src[1];
    FeAttnRowsJob job = {
        .q = fe_tensor_data(qt),
        .k = fe_tensor_data(kt),
        .v = fe_tensor_data(op->src[2]),
        .spans = fe_tensor_data(op->src[3]),
        .y = fe_tensor_data(op->dst),
        .tq = (int)qt->shape[1],
        .d = (int)qt->shape[2],
        .heads = op->iparams[0],
    };
    int rows = (int)qt->shape[0], max_len = op->iparams[1];
    int64_t n_keys = kt->shape[0];
    if (rows == 0 || job.tq == 0)
        return FE_OK;
    double work = 0.0;
    for (int r = 0; r < rows; r++) {
        int64_t start = job.spans[2 * r], len = job.spans[2 * r + 1];
        if (start < 0 || len < 1 || len > max_len || start + len > n_keys)
            return fe_set_error(FE_ERR_INVALID_ARGUMENT,
                                "fe_attention_rows: row %d spans keys %lld+%lld of %lld "
                                "(max_len %d)",
                                r, (long long)start, (long long)len, (long long)n_keys, max_len);
        work += (double)job.tq * (double)len * job.d;
    }
    job.dh = job.d / job.heads;
    job.scale = 1.0f / sqrtf((float)job.dh);
#ifdef FE_HAVE_X86_KERNELS
    job.pair_heads = fe_attn_avx2_takes(job.dh) && job.heads % 2 == 0;
#endif
    int tasks = rows * (job.pair_heads ? job.heads / 2 : job.heads);
    /* The same threshold as fe_cpu_attention: one row's cross-attention
     * alone is a few microseconds, a batch of them is worth the pool. */
    if (work < 256.0 * 1024)
        for (int t = 0; t < tasks; t++)
            fe_attn_rows_task(&job, t);
    else
        fe_cpu_parallel_for(tasks, fe_attn_rows_task, &job);
    if (job.failed)
        return fe_set_error(FE_ERR_OUT_OF_MEMORY, "fe_attention_rows: out of scratch memory");
    return FE_OK;
}

/* ------------------------------------------------------------------------ */
/* The backend table                                                        */

static fe_status fe_cpu_buffer_alloc(FeDevice *dev, size_t size, void **out) {
    (void)dev;
    /* Big buffers start on a 2 MiB boundary (fe_big_alloc), so that the
     * weights and arenas get huge pages from their first byte. */
    *out = fe_cpu_host_alloc(size);
    if (!*out)
        return fe_set_error(FE_ERR_OUT_OF_MEMORY, "cpu: out of memory allocating %zu MiB",
                            size >> 20);
    return FE_OK;
}

static void fe_cpu_buffer_free(FeDevice *dev, void *data) {
    (void)dev;
    fe_cpu_host_free(data);
}

static fe_status fe_cpu_copy(FeDevice *dev, void *dst, const void *src, size_t n) {
    memmove(dst, src, n);
    return FE_OK;
}

static bool fe_cpu_supports_op(FeDevice *dev, const FeOpDesc *op) {
    /* Activations are f32. A matmul weight or an embedding table may be the
     * model file's f16/bf16 (widened exactly on the fly), a conv weight bf16
     * (FE_PRECISION_BF16); nothing else. */
    for (int i = 0; i < 6; i++) {
        if ((op->op == FE_OP_MATMUL && i == 1) || (op->op == FE_OP_EMBED && i == 0))
            continue;
        /* a conv weight in bf16 for the bf16 convolutions, or widened */
        if (op->op == FE_OP_CONV3X3 && i == 1)
            continue;
        const FeTensor *t = op->src[i];
        if (t && (t->dtype == FE_DTYPE_F16 || t->dtype == FE_DTYPE_BF16))
            return false;
    }
    return true;
}

static fe_status fe_cpu_compute(FeDevice *dev, const FeOpDesc *op) {
    switch (op->op) {
    case FE_OP_MATMUL: return fe_cpu_matmul(op);
    case FE_OP_CONV3X3: return fe_cpu_conv3x3(op);
    case FE_OP_MAXPOOL: return fe_cpu_maxpool(op);
    case FE_OP_NCHW_TO_NLC: return fe_cpu_nchw_to_nlc(op);
    case FE_OP_ADD: return fe_cpu_add(op);
    case FE_OP_LAYERNORM: return fe_cpu_layernorm(op);
    case FE_OP_GELU: return fe_cpu_gelu(op);
    case FE_OP_ATTENTION: return fe_cpu_attention(op);
    case FE_OP_EMBED: return fe_cpu_embed(op);
    case FE_OP_KV_WRITE: return fe_cpu_kv_write(op);
    case FE_OP_LOG_SOFTMAX: return fe_cpu_log_softmax(op);
    case FE_OP_TOPK: return fe_cpu_topk(op);
    case FE_OP_ATTENTION_ROWS: return fe_cpu_attention_rows(op);
    case FE_OP_COUNT:
    default: return fe_set_error(FE_ERR_INTERNAL, "cpu: op %d has no kernel", (int)op->op);
    }
}

static fe_status fe_cpu_synchronize(FeDevice *dev) { return FE_OK; }

static fe_status fe_cpu_memory_info(FeDevice *dev, uint64_t *free_bytes, uint64_t *total_bytes) {
    uint64_t total = 0, avail = 0;
    FILE *f = fopen("/proc/meminfo", "r");
    if (f) {
        char line[256];
        unsigned long long kb;
        while (fgets(line, sizeof line, f)) {
            if (sscanf(line, "MemTotal: %llu kB", &kb) == 1)
                total = kb * 1024ull;
            else if (sscanf(line, "MemAvailable: %llu kB", &kb) == 1)
                avail = kb * 1024ull;
        }
        fclose(f);
    }
    if (!total) {
        long pages = sysconf(_SC_PHYS_PAGES), avp = sysconf(_SC_AVPHYS_PAGES);
        long page = sysconf(_SC_PAGESIZE);
        total = pages > 0 && page > 0 ? (uint64_t)pages * (uint64_t)page : 0;
        avail = avp > 0 && page > 0 ? (uint64_t)avp * (uint64_t)page : 0;
    }
    if (free_bytes)
        *free_bytes = avail;
    if (total_bytes)
        *total_bytes = total;
    return FE_OK;
}

static const FeBackend fe_cpu_backend = {
    .name = "cpu",
    .buffer_alloc = fe_cpu_buffer_alloc,
    .buffer_free = fe_cpu_buffer_free,
    .upload = fe_cpu_copy,
    .download = fe_cpu_copy,
    .supports_op = fe_cpu_supports_op,
    .compute = fe_cpu_compute,
    .synchronize = fe_cpu_synchronize,
    .memory_info = fe_cpu_memory_info,
};

static FeDevice fe_cpu_dev = {
    .backend = &fe_cpu_backend,
    .index = 0,
    .id = "cpu",
    .backend_data = NULL,
};

FeDevice *fe_cpu_device(void) { return &fe_cpu_dev; }

/* bf16 when asked for or by default (auto) on a CPU with AVX512_BF16: the
 * matmuls and the convolutions after the first round their inputs to bf16
 * (vdpbf16ps, f32 sums; fe-model.c cpu_bf16, fe-cpu-bf16.c), encoder about
 * 2.4x and decoding 1.3x less CPU than fp32 and the same greedy LaTeX on
 * 99.6 % of the test split (1992/2000, none that fp32 read right read
 * wrong; bench/RESULTS.md, "bf16 by default"). fp32 elsewhere, and when
 * asked for. Only for the CPU device itself: a test's fake GPU (another
 * backend computing with these kernels, fe-cuda-loader.c) asks here too and
 * cannot hold bf16_dot weights. A model always fits: nothing is checked. */
static void fe_cpu_choose_matrices(FeDevice *dev, fe_precision asked, FeMatrixChoice *out) {
    memset(out, 0, sizeof *out);
    out->precision = FE_PRECISION_FP32;
    out->matrix_dtype = FE_DTYPE_F32;
    if ((asked == FE_PRECISION_BF16 || asked == FE_PRECISION_AUTO) && dev == &fe_cpu_dev &&
        fe_cpu_has_bf16_dot()) {
        out->precision = FE_PRECISION_BF16;
        out->matrix_dtype = FE_DTYPE_BF16;
        out->cpu_bf16_dot = true;
    }
}

const FeBackendModelOps fe_cpu_model_ops = {
    .model_fits = NULL,
    .choose_matrices = fe_cpu_choose_matrices,
    .wants_warm_up = NULL,
    .engine_bytes = NULL,
};
