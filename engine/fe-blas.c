/* fe-blas.c - single-precision GEMM for the CPU backend.
 *
 * OpenBLAS is not linked at build time: it is dlopen()ed at first use. The
 * reason is kernel selection. Debian's OpenBLAS 0.3.21 (DYNAMIC_ARCH) does not
 * know Sapphire Rapids and falls back to its "Prescott" SSE3 kernels, about a
 * fifth of the machine's sgemm rate. OpenBLAS reads OPENBLAS_CORETYPE once, in
 * its library constructor, so the engine sets it from its own cpuid reading
 * (unless the user set it) *before* the library is loaded.
 *
 * When OpenBLAS is missing, or FE_BLAS=builtin, the engine uses its own
 * blocked sgemm (packed panels, register-tiled micro-kernels for AVX-512 and
 * AVX2+FMA compiled with target attributes and picked at run time, plus a
 * portable C one), split over the CPU pool's threads. */
#include "fe-internal.h"

#include <dlfcn.h>
#include <math.h>
#include <pthread.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <strings.h>

#if defined(__x86_64__) && defined(__GNUC__)
#include <immintrin.h>
#define FE_HAVE_X86_KERNELS 1
#endif

/* ------------------------------------------------------------------------ */
/* OpenBLAS at run time                                                     */

enum { FE_CBLAS_ROW_MAJOR = 101, FE_CBLAS_NO_TRANS = 111, FE_CBLAS_TRANS = 112 };

typedef void (*fe_cblas_sgemm_fn)(int order, int trans_a, int trans_b, int m, int n, int k,
                                  float alpha, const float *a, int lda, const float *b, int ldb,
                                  float beta, float *c, int ldc);

static struct {
    void *handle;
    fe_cblas_sgemm_fn sgemm;
    void (*set_num_threads)(int);
    char *(*get_config)(void);
    char *(*get_corename)(void);
    int threads_set;          /* last value given to openblas_set_num_threads */
} fe_openblas;

static pthread_once_t fe_blas_once = PTHREAD_ONCE_INIT;
/* Who runs OpenBLAS's threads. By default the engine does: OpenBLAS runs
 * single-threaded inside the engine's pool, which splits each GEMM. OpenBLAS's
 * own workers busy-wait between calls (about 2^28 cycles), which on a small,
 * shared machine steals the cores the engine's other ops (im2col, attention)
 * and other processes need. FE_BLAS_THREADS=openblas restores them (bench). */
static bool fe_openblas_own_threads;
static fe_gemm_kernel fe_gemm_active = FE_GEMM_BUILTIN_GENERIC;
static char fe_gemm_path_text[256];

/* OpenBLAS's name for the best kernel set this CPU can run. */
static const char *fe_openblas_coretype_for(const FeCpuInfo *ci) {
    if (ci->avx512f && ci->avx512bw && ci->avx512vl)
        return "SkylakeX";
    if (ci->avx2 && ci->fma)
        return "Haswell";
    if (ci->avx)
        return "Sandybridge";
    if (ci->sse42)
        return "Nehalem";
    return NULL;
}

static void fe_cpu_features_text(const FeCpuInfo *ci, char *out, size_t len) {
    out[0] = '\0';
    const struct {
        bool on;
        const char *name;
    } feats[] = {
        {ci->avx512f, "AVX-512F"}, {ci->avx512_bf16, "AVX512_BF16"}, {ci->amx_bf16, "AMX-BF16"},
    };
    for (size_t i = 0; i < sizeof feats / sizeof feats[0]; i++) {
        if (!feats[i].on)
            continue;
        size_t used = strlen(out);
        snprintf(out + used, len - used, "%s%s", used ? ", " : "", feats[i].name);
    }
    if (!out[0])
        snprintf(out, len, "%s", ci->avx2 && ci->fma ? "AVX2, FMA" : ci->avx ? "AVX" : "SSE");
}

static bool fe_openblas_bind(void *h) {
    fe_openblas.sgemm = (fe_cblas_sgemm_fn)dlsym(h, "cblas_sgemm");
    *(void **)&fe_openblas.set_num_threads = dlsym(h, "openblas_set_num_threads");
    *(void **)&fe_openblas.get_config = dlsym(h, "openblas_get_config");
    *(void **)&fe_openblas.get_corename = dlsym(h, "openblas_get_corename");
    if (!fe_openblas.sgemm) {
        fe_openblas.set_num_threads = NULL;
        return false;
    }
    fe_openblas.handle = h;
    return true;
}

/* Whether OpenBLAS's kernel set (its core name) leaves this CPU's AVX-512
 * unused while the engine's own AVX-512 kernels could use it. */
static bool fe_openblas_avx512_wasted(const FeCpuInfo *ci, const char *core) {
#ifdef FE_HAVE_X86_KERNELS
    if (!ci->avx512f || !core)
        return false;
    static const char *const avx512_cores[] = {"skylakex", "cooperlake", "sapphirerapids",
                                               "zen4", "zen5"};
    for (size_t i = 0; i < sizeof avx512_cores / sizeof *avx512_cores; i++)
        if (strcasecmp(core, avx512_cores[i]) == 0)
            return false;
    return true;
#else
    (void)ci;
    (void)core;
    return false;
#endif
}

static void fe_builtin_choose(const FeCpuInfo *ci) {
#ifdef FE_HAVE_X86_KERNELS
    if (ci->avx512f)
        fe_gemm_active = FE_GEMM_BUILTIN_AVX512;
    else if (ci->avx2 && ci->fma)
        fe_gemm_active = FE_GEMM_BUILTIN_AVX2;
    else
#endif
        fe_gemm_active = FE_GEMM_BUILTIN_GENERIC;
    (void)ci;
}

static const char *const fe_openblas_candidates[] = {
    "libopenblas.so.0",
    "libopenblasp-r0.3.21.so",
    "/usr/lib/x86_64-linux-gnu/openblas-pthread/libopenblas.so.0",
    "libopenblas.so",
};
#define FE_OPENBLAS_N_CANDIDATES (sizeof fe_openblas_candidates / sizeof *fe_openblas_candidates)

/* What fe_blas_environment() did with OPENBLAS_CORETYPE (NULL: nothing, FE_BLAS=builtin). */
static const char *fe_blas_env_note;
/* OpenBLAS was in the process when fe_blas_environment() ran. */
static bool fe_blas_env_preloaded;

/* An OpenBLAS someone else has loaded already (a handle to dlclose), or NULL. */
static void *fe_openblas_find_loaded(void) {
    void *h = NULL;
    for (size_t i = 0; !h && i < FE_OPENBLAS_N_CANDIDATES; i++)
        h = dlopen(fe_openblas_candidates[i], RTLD_NOW | RTLD_NOLOAD);
    return h;
}

/* OPENBLAS_CORETYPE and OPENBLAS_NUM_THREADS must be in the environment
 * before OpenBLAS is loaded (its constructor reads them), and setenv() may
 * move or free the environment array under any thread calling getenv(): a
 * formulate-cli detection thread died in getenv() (SIGSEGV, libc getenv+157)
 * while the main thread loaded the model and fe_blas_init() set them. So
 * they are set here, before main() and its threads, and fe_blas_init(),
 * whenever it runs, only loads the library. */
__attribute__((constructor)) static void fe_blas_environment(void) {
    const char *choice = getenv("FE_BLAS");
    if (choice && strcmp(choice, "builtin") == 0)
        return;
    const char *threads_env = getenv("FE_BLAS_THREADS");
    const char *user_coretype = getenv("OPENBLAS_CORETYPE");
    bool explicit_lib = choice && choice[0] && strcmp(choice, "openblas") != 0;
    void *h = explicit_lib ? NULL : fe_openblas_find_loaded();

    fe_openblas_own_threads = threads_env && strcmp(threads_env, "openblas") == 0;
    /* Already in the process (linked by someone else): its constructor has
     * run, the kernels are chosen, nothing to set. */
    if (h) {
        fe_blas_env_preloaded = true;
        fe_blas_env_note = "loaded before the engine: OPENBLAS_CORETYPE not applied";
        dlclose(h);
        return;
    }
    fe_blas_env_note = "OPENBLAS_CORETYPE set by engine";
    if (user_coretype && user_coretype[0]) {
        fe_blas_env_note = "OPENBLAS_CORETYPE set by user";
    } else {
        const char *core = fe_openblas_coretype_for(fe_cpu_info());
        if (core)
            setenv("OPENBLAS_CORETYPE", core, 0);
        else
            fe_blas_env_note = "OpenBLAS's own detection";
    }
    /* No idle OpenBLAS workers when the pool does the threading. */
    if (!fe_openblas_own_threads)
        setenv("OPENBLAS_NUM_THREADS", "1", 0);
}

/* OpenBLAS was loaded before the engine's first use of it. Said once (the
 * caller runs once) through the log, because the variables the constructor
 * set then did nothing for it (loaded before the engine), or did only if
 * the host left them as they were (loaded after the constructor, say by a
 * host that dlopens it): either way the kernels are not the engine's doing. */
static void fe_openblas_say_preloaded(const char *core) {
    if (fe_blas_env_preloaded)
        fe_log(FE_LOG_WARN, "OpenBLAS was loaded before the engine: the OPENBLAS_CORETYPE "
               "and OPENBLAS_NUM_THREADS the engine sets were not applied (its kernels: %s)",
               core ? core : "default");
    else
        fe_log(FE_LOG_WARN, "OpenBLAS was loaded by the host program after the engine set "
               "OPENBLAS_CORETYPE and OPENBLAS_NUM_THREADS (before main) and before its first "
               "use: it read them as the environment had them then (its kernels: %s)",
               core ? core : "default");
}

static void fe_blas_init(void) {
    const FeCpuInfo *ci = fe_cpu_info();
    const char *choice = getenv("FE_BLAS");
    char feats[96];
    char why[160] = "";
    fe_cpu_features_text(ci, feats, sizeof feats);
    if (fe_cpu_isa_ignored())
        fe_log(FE_LOG_WARN, "FE_CPU_ISA=%s is not avx512, avx2 or portable; ignored",
               fe_cpu_isa_ignored());

    fe_builtin_choose(ci);
    if (choice && strcmp(choice, "builtin") == 0) {
        snprintf(why, sizeof why, "FE_BLAS=builtin");
    } else {
        const char *coretype_note = fe_blas_env_note ? fe_blas_env_note : "OpenBLAS's own detection";
        bool explicit_lib = choice && choice[0] && strcmp(choice, "openblas") != 0;
        void *h = explicit_lib ? NULL : fe_openblas_find_loaded();
        bool loaded_by_other = h != NULL;

        if (h && !fe_blas_env_preloaded)
            coretype_note = "loaded by the host after the engine's constructor";
        else if (h)
            coretype_note = "loaded before the engine: OPENBLAS_CORETYPE not applied";
        if (!h && explicit_lib)
            h = dlopen(choice, RTLD_NOW | RTLD_LOCAL);
        for (size_t i = 0; !explicit_lib && !h && i < FE_OPENBLAS_N_CANDIDATES; i++)
            h = dlopen(fe_openblas_candidates[i], RTLD_NOW | RTLD_LOCAL);

        if (h && fe_openblas_bind(h)) {
            char version[64] = "OpenBLAS";
            const char *config = fe_openblas.get_config ? fe_openblas.get_config() : NULL;
            const char *core = fe_openblas.get_corename ? fe_openblas.get_corename() : NULL;
            if (loaded_by_other)
                fe_openblas_say_preloaded(core);
            if (config) {
                /* "OpenBLAS 0.3.21 DYNAMIC_ARCH NO_AFFINITY SkylakeX MAX_THREADS=64" */
                int words = 0;
                size_t i = 0;
                for (; config[i] && i < sizeof version - 1; i++) {
                    if (config[i] == ' ' && ++words == 2)
                        break;
                    version[i] = config[i];
                }
                version[i] = '\0';
            }
            if (!fe_openblas_own_threads && fe_openblas.set_num_threads) {
                fe_openblas.set_num_threads(1);
                fe_openblas.threads_set = 1;
            }
            if (fe_openblas_avx512_wasted(ci, core) && !(choice && choice[0])) {
                /* An AVX-512 CPU, but OpenBLAS runs narrower kernels (the
                 * environment pins OPENBLAS_CORETYPE=Haswell, or OpenBLAS
                 * 0.3.21 guessed for an AMD CPU): the engine's AVX-512 sgemm is
                 * faster there (bench-conv, v1 convolutions, one thread: 102-110
                 * GFLOP/s per CPU-second against 76-77 with OpenBLAS's Haswell
                 * kernels; OpenBLAS's SkylakeX kernels do 123-128, so they stay
                 * when OpenBLAS has them). OpenBLAS stays loaded for
                 * fe_sgemm_with(FE_GEMM_OPENBLAS) (the bench's reference). */
                snprintf(fe_gemm_path_text, sizeof fe_gemm_path_text,
                         "built-in AVX-512 sgemm (cpuid: %s; %s has %s kernels here, %s)", feats,
                         version, core ? core : "default", coretype_note);
                fe_gemm_active = FE_GEMM_BUILTIN_AVX512;
                fe_log(FE_LOG_DEBUG, "GEMM: %s", fe_gemm_path_text);
                return;
            }
            snprintf(fe_gemm_path_text, sizeof fe_gemm_path_text,
                     "%s %s kernels (cpuid: %s; %s)", version, core ? core : "default", feats,
                     coretype_note);
            fe_gemm_active = FE_GEMM_OPENBLAS;
            fe_log(FE_LOG_DEBUG, "GEMM: %s", fe_gemm_path_text);
            return;
        }
        if (h)
            dlclose(h);
        snprintf(why, sizeof why, "%s",
                 explicit_lib ? "FE_BLAS library has no cblas_sgemm or does not load"
                              : "OpenBLAS not found");
    }
    snprintf(fe_gemm_path_text, sizeof fe_gemm_path_text, "built-in %s sgemm (cpuid: %s; %s)",
             fe_gemm_kernel_name(fe_gemm_active), feats, why);
    fe_log(FE_LOG_DEBUG, "GEMM: %s", fe_gemm_path_text);
}

const char *fe_cpu_gemm_path(void) {
    pthread_once(&fe_blas_once, fe_blas_init);
    return fe_gemm_path_text;
}

fe_gemm_kernel fe_gemm_active_kernel(void) {
    pthread_once(&fe_blas_once, fe_blas_init);
    return fe_gemm_active;
}

const char *fe_gemm_kernel_name(fe_gemm_kernel kernel) {
    switch (kernel) {
    case FE_GEMM_AUTO: return "auto";
    case FE_GEMM_OPENBLAS: return "OpenBLAS";
    case FE_GEMM_BUILTIN_AVX512: return "AVX-512";
    case FE_GEMM_BUILTIN_AVX2: return "AVX2+FMA";
    case FE_GEMM_BUILTIN_GENERIC: return "portable C";
    case FE_GEMM_COUNT:
    default: return "?";
    }
}

/* ------------------------------------------------------------------------ */
/* Built-in blocked sgemm                                                   */

/* A micro-kernel computes one full MR x NR tile from packed panels:
 *   C = alpha * sum_k a[k*MR + i] * b[k*NR + j]  (+ beta * C when beta != 0)
 * It never reads C when beta == 0, so C may hold garbage (NaN) on entry. */
typedef void (*fe_micro_kernel)(int kc, const float *a, const float *b, float *c, int ldc,
                                float alpha, float beta);

#define FE_EDGE_TILE_MAX 256 /* floats: >= mr * nr of every kernel below */
typedef struct {
    int mr, nr;
    int kc, mc, nc;
    fe_micro_kernel kernel;
} FeGemmShape;

#define FE_GEN_MR 4
#define FE_GEN_NR 16
static void fe_kernel_generic(int kc, const float *a, const float *b, float *c, int ldc,
                              float alpha, float beta) {
    float acc[FE_GEN_MR][FE_GEN_NR] = {{0}};
    for (int k = 0; k < kc; k++) {
        for (int i = 0; i < FE_GEN_MR; i++) {
            float ai = a[k * FE_GEN_MR + i];
            for (int j = 0; j < FE_GEN_NR; j++)
                acc[i][j] += ai * b[k * FE_GEN_NR + j];
        }
    }
    for (int i = 0; i < FE_GEN_MR; i++)
        for (int j = 0; j < FE_GEN_NR; j++)
            c[i * ldc + j] = alpha * acc[i][j] + (beta != 0.0f ? beta * c[i * ldc + j] : 0.0f);
}

#ifdef FE_HAVE_X86_KERNELS
/* 6 x 32: twelve zmm accumulators, two B vectors and a broadcast fit in the
 * 32 registers with room for the loads to be scheduled ahead. */
#define FE_512_MR 6
#define FE_512_NR 32
__attribute__((target("avx512f"))) static void
fe_kernel_avx512(int kc, const float *a, const float *b, float *c, int ldc, float alpha,
                 float beta) {
    __m512 c00 = _mm512_setzero_ps(), c01 = _mm512_setzero_ps();
    __m512 c10 = _mm512_setzero_ps(), c11 = _mm512_setzero_ps();
    __m512 c20 = _mm512_setzero_ps(), c21 = _mm512_setzero_ps();
    __m512 c30 = _mm512_setzero_ps(), c31 = _mm512_setzero_ps();
    __m512 c40 = _mm512_setzero_ps(), c41 = _mm512_setzero_ps();
    __m512 c50 = _mm512_setzero_ps(), c51 = _mm512_setzero_ps();
    for (int k = 0; k < kc; k++) {
        __m512 b0 = _mm512_loadu_ps(b), b1 = _mm512_loadu_ps(b + 16);
        __m512 ai;
        ai = _mm512_set1_ps(a[0]); c00 = _mm512_fmadd_ps(ai, b0, c00); c01 = _mm512_fmadd_ps(ai, b1, c01);
        ai = _mm512_set1_ps(a[1]); c10 = _mm512_fmadd_ps(ai, b0, c10); c11 = _mm512_fmadd_ps(ai, b1, c11);
        ai = _mm512_set1_ps(a[2]); c20 = _mm512_fmadd_ps(ai, b0, c20); c21 = _mm512_fmadd_ps(ai, b1, c21);
        ai = _mm512_set1_ps(a[3]); c30 = _mm512_fmadd_ps(ai, b0, c30); c31 = _mm512_fmadd_ps(ai, b1, c31);
        ai = _mm512_set1_ps(a[4]); c40 = _mm512_fmadd_ps(ai, b0, c40); c41 = _mm512_fmadd_ps(ai, b1, c41);
        ai = _mm512_set1_ps(a[5]); c50 = _mm512_fmadd_ps(ai, b0, c50); c51 = _mm512_fmadd_ps(ai, b1, c51);
        a += FE_512_MR;
        b += FE_512_NR;
    }
    __m512 va = _mm512_set1_ps(alpha), vb = _mm512_set1_ps(beta);
#define FE_512_STORE(row, x0, x1)                                                              \
    do {                                                                                       \
        float *cr = c + (row) * ldc;                                                           \
        __m512 y0 = _mm512_mul_ps(va, x0), y1 = _mm512_mul_ps(va, x1);                         \
        if (beta != 0.0f) {                                                                    \
            y0 = _mm512_fmadd_ps(vb, _mm512_loadu_ps(cr), y0);                                 \
            y1 = _mm512_fmadd_ps(vb, _mm512_loadu_ps(cr + 16), y1);                            \
        }                                                                                      \
        _mm512_storeu_ps(cr, y0);                                                              \
        _mm512_storeu_ps(cr + 16, y1);                                                         \
    } while (0)
    FE_512_STORE(0, c00, c01);
    FE_512_STORE(1, c10, c11);
    FE_512_STORE(2, c20, c21);
    FE_512_STORE(3, c30, c31);
    FE_512_STORE(4, c40, c41);
    FE_512_STORE(5, c50, c51);
#undef FE_512_STORE
}

/* 6 x 16: twelve ymm accumulators of the sixteen. */
#define FE_256_MR 6
#define FE_256_NR 16
__attribute__((target("avx2,fma"))) static void
fe_kernel_avx2(int kc, const float *a, const float *b, float *c, int ldc, float alpha,
               float beta) {
    __m256 c00 = _mm256_setzero_ps(), c01 = _mm256_setzero_ps();
    __m256 c10 = _mm256_setzero_ps(), c11 = _mm256_setzero_ps();
    __m256 c20 = _mm256_setzero_ps(), c21 = _mm256_setzero_ps();
    __m256 c30 = _mm256_setzero_ps(), c31 = _mm256_setzero_ps();
    __m256 c40 = _mm256_setzero_ps(), c41 = _mm256_setzero_ps();
    __m256 c50 = _mm256_setzero_ps(), c51 = _mm256_setzero_ps();
    for (int k = 0; k < kc; k++) {
        __m256 b0 = _mm256_loadu_ps(b), b1 = _mm256_loadu_ps(b + 8);
        __m256 ai;
        ai = _mm256_broadcast_ss(a + 0); c00 = _mm256_fmadd_ps(ai, b0, c00); c01 = _mm256_fmadd_ps(ai, b1, c01);
        ai = _mm256_broadcast_ss(a + 1); c10 = _mm256_fmadd_ps(ai, b0, c10); c11 = _mm256_fmadd_ps(ai, b1, c11);
        ai = _mm256_broadcast_ss(a + 2); c20 = _mm256_fmadd_ps(ai, b0, c20); c21 = _mm256_fmadd_ps(ai, b1, c21);
        ai = _mm256_broadcast_ss(a + 3); c30 = _mm256_fmadd_ps(ai, b0, c30); c31 = _mm256_fmadd_ps(ai, b1, c31);
        ai = _mm256_broadcast_ss(a + 4); c40 = _mm256_fmadd_ps(ai, b0, c40); c41 = _mm256_fmadd_ps(ai, b1, c41);
        ai = _mm256_broadcast_ss(a + 5); c50 = _mm256_fmadd_ps(ai, b0, c50); c51 = _mm256_fmadd_ps(ai, b1, c51);
        a += FE_256_MR;
        b += FE_256_NR;
    }
    __m256 va = _mm256_set1_ps(alpha), vb = _mm256_set1_ps(beta);
#define FE_256_STORE(row, x0, x1)                                                              \
    do {                                                                                       \
        float *cr = c + (row) * ldc;                                                           \
        __m256 y0 = _mm256_mul_ps(va, x0), y1 = _mm256_mul_ps(va, x1);                         \
        if (beta != 0.0f) {                                                                    \
            y0 = _mm256_fmadd_ps(vb, _mm256_loadu_ps(cr), y0);                                 \
            y1 = _mm256_fmadd_ps(vb, _mm256_loadu_ps(cr + 8), y1);                             \
        }                                                                                      \
        _mm256_storeu_ps(cr, y0);                                                              \
        _mm256_storeu_ps(cr + 8, y1);                                                          \
    } while (0)
    FE_256_STORE(0, c00, c01);
    FE_256_STORE(1, c10, c11);
    FE_256_STORE(2, c20, c21);
    FE_256_STORE(3, c30, c31);
    FE_256_STORE(4, c40, c41);
    FE_256_STORE(5, c50, c51);
#undef FE_256_STORE
}
#endif

static bool fe_gemm_shape_for(fe_gemm_kernel kernel, FeGemmShape *s) {
    const FeCpuInfo *ci = fe_cpu_info();
    switch (kernel) {
#ifdef FE_HAVE_X86_KERNELS
    case FE_GEMM_BUILTIN_AVX512:
        if (!ci->avx512f)
            return false;
        *s = (FeGemmShape){FE_512_MR, FE_512_NR, 256, 144, 1024, fe_kernel_avx512};
        return true;
    case FE_GEMM_BUILTIN_AVX2:
        if (!(ci->avx2 && ci->fma))
            return false;
        *s = (FeGemmShape){FE_256_MR, FE_256_NR, 256, 144, 1024, fe_kernel_avx2};
        return true;
#endif
    case FE_GEMM_BUILTIN_GENERIC:
        *s = (FeGemmShape){FE_GEN_MR, FE_GEN_NR, 256, 128, 1024, fe_kernel_generic};
        return true;
    case FE_GEMM_AUTO:
    case FE_GEMM_OPENBLAS:
    case FE_GEMM_COUNT:
    default:
        (void)ci;
        return false;
    }
}

/* Per-thread packing buffers: grown, never shrunk, so a warm engine (and
 * every pool worker) packs without allocating; freed when the thread ends. */
typedef struct {
    float *a, *b;
    size_t a_cap, b_cap;
} FeGemmScratch;
static pthread_key_t fe_gemm_scratch_key;
static pthread_once_t fe_gemm_scratch_once = PTHREAD_ONCE_INIT;

static void fe_gemm_scratch_free(void *p) {
    FeGemmScratch *sc = p;
    if (sc) {
        free(sc->a);
        free(sc->b);
        free(sc);
    }
}

static void fe_gemm_scratch_key_init(void) {
    pthread_key_create(&fe_gemm_scratch_key, fe_gemm_scratch_free);
}

static FeGemmScratch *fe_gemm_scratch(void) {
    pthread_once(&fe_gemm_scratch_once, fe_gemm_scratch_key_init);
    FeGemmScratch *sc = pthread_getspecific(fe_gemm_scratch_key);
    if (!sc) {
        sc = calloc(1, sizeof *sc);
        if (sc && pthread_setspecific(fe_gemm_scratch_key, sc) != 0) {
            free(sc);
            sc = NULL;
        }
    }
    return sc;
}

static float *fe_scratch_grow(float **p, size_t *cap, size_t n) {
    if (n > *cap) {
        float *q = aligned_alloc(64, ((n * sizeof(float) + 63) / 64) * 64);
        if (!q)
            return NULL;
        free(*p);
        *p = q;
        *cap = n;
    }
    return *p;
}

static void fe_pack_a(const float *a, int lda, int mc, int kc, int mr, float *out) {
    for (int i0 = 0; i0 < mc; i0 += mr) {
        int rows = mc - i0 < mr ? mc - i0 : mr;
        for (int k = 0; k < kc; k++) {
            for (int i = 0; i < rows; i++)
                out[k * mr + i] = a[(size_t)(i0 + i) * lda + k];
            for (int i = rows; i < mr; i++)
                out[k * mr + i] = 0.0f;
        }
        out += (size_t)kc * mr;
    }
}

static void fe_pack_b(bool b_trans, const float *b, int ldb, int kc, int nc, int nr, float *out) {
    for (int j0 = 0; j0 < nc; j0 += nr) {
        int cols = nc - j0 < nr ? nc - j0 : nr;
        if (b_trans) {
            /* b is [N,K]: column j of op(B) is row j of b, contiguous in k. */
            for (int j = 0; j < cols; j++) {
                const float *src = b + (size_t)(j0 + j) * ldb;
                for (int k = 0; k < kc; k++)
                    out[k * nr + j] = src[k];
            }
        } else {
            for (int k = 0; k < kc; k++)
                memcpy(out + k * nr, b + (size_t)k * ldb + j0, (size_t)cols * sizeof(float));
        }
        if (cols < nr)
            for (int k = 0; k < kc; k++)
                for (int j = cols; j < nr; j++)
                    out[k * nr + j] = 0.0f;
        out += (size_t)kc * nr;
    }
}

typedef struct {
    const FeGemmShape *s;
    bool b_trans;
    int m, n, k;
    float alpha, beta;
    const float *a, *b;
    int lda, ldb, ldc;
    float *c;
    int chunk;                /* rows (split_m) or columns per task          */
    bool split_m;
    bool failed;
} FeGemmJob;

static void fe_openblas_block(const FeGemmJob *job, int i0, int i1, int j0, int j1) {
    const float *bsub = job->b_trans ? job->b + (size_t)j0 * job->ldb : job->b + j0;
    fe_openblas.sgemm(FE_CBLAS_ROW_MAJOR, FE_CBLAS_NO_TRANS,
                      job->b_trans ? FE_CBLAS_TRANS : FE_CBLAS_NO_TRANS, i1 - i0, j1 - j0, job->k,
                      job->alpha, job->a + (size_t)i0 * job->lda, job->lda, bsub, job->ldb,
                      job->beta, job->c + (size_t)i0 * job->ldc + j0, job->ldc);
}

/* C[i_begin:i_end, j_begin:j_end] of the job, single-threaded. A job
 * without a shape runs on OpenBLAS (one thread per call, see below). */
static bool fe_gemm_block(const FeGemmJob *job, int i_begin, int i_end, int j_begin, int j_end) {
    const FeGemmShape *s = job->s;
    if (!s) {
        fe_openblas_block(job, i_begin, i_end, j_begin, j_end);
        return true;
    }
    FeGemmScratch *sc = fe_gemm_scratch();
    int mr = s->mr, nr = s->nr;
    int rows_total = i_end - i_begin;
    int mc_max = rows_total < s->mc ? rows_total : s->mc;
    int nc_max = j_end - j_begin < s->nc ? j_end - j_begin : s->nc;
    int kc_max = job->k < s->kc ? job->k : s->kc;
    size_t a_need = (size_t)((mc_max + mr - 1) / mr) * mr * kc_max;
    size_t b_need = (size_t)((nc_max + nr - 1) / nr) * nr * kc_max;
    if (!sc)
        return false;
    float *ap = fe_scratch_grow(&sc->a, &sc->a_cap, a_need);
    float *bp = fe_scratch_grow(&sc->b, &sc->b_cap, b_need);
    float edge[FE_EDGE_TILE_MAX] __attribute__((aligned(64)));
    if (!ap || !bp)
        return false;

    for (int jc = j_begin; jc < j_end; jc += s->nc) {
        int nc = j_end - jc < s->nc ? j_end - jc : s->nc;
        for (int pc = 0; pc < job->k; pc += s->kc) {
            int kc = job->k - pc < s->kc ? job->k - pc : s->kc;
            float beta = pc == 0 ? job->beta : 1.0f;
            const float *bsrc = job->b_trans ? job->b + (size_t)jc * job->ldb + pc
                                             : job->b + (size_t)pc * job->ldb + jc;
            fe_pack_b(job->b_trans, bsrc, job->ldb, kc, nc, nr, bp);
            for (int ic = i_begin; ic < i_end; ic += s->mc) {
                int mc = i_end - ic < s->mc ? i_end - ic : s->mc;
                fe_pack_a(job->a + (size_t)ic * job->lda + pc, job->lda, mc, kc, mr, ap);
                for (int jr = 0; jr < nc; jr += nr) {
                    int cols = nc - jr < nr ? nc - jr : nr;
                    const float *bpanel = bp + (size_t)(jr / nr) * nr * kc;
                    for (int ir = 0; ir < mc; ir += mr) {
                        int rows = mc - ir < mr ? mc - ir : mr;
                        const float *apanel = ap + (size_t)(ir / mr) * mr * kc;
                        float *ct = job->c + (size_t)(ic + ir) * job->ldc + jc + jr;
                        if (rows == mr && cols == nr) {
                            s->kernel(kc, apanel, bpanel, ct, job->ldc, job->alpha, beta);
                        } else {
                            s->kernel(kc, apanel, bpanel, edge, nr, job->alpha, 0.0f);
                            for (int i = 0; i < rows; i++)
                                for (int j = 0; j < cols; j++) {
                                    float *cv = ct + (size_t)i * job->ldc + j;
                                    *cv = edge[i * nr + j] + (beta != 0.0f ? beta * *cv : 0.0f);
                                }
                        }
                    }
                }
            }
        }
    }
    return true;
}

static void fe_gemm_task(void *ctx, int task) {
    FeGemmJob *job = ctx;
    int total = job->split_m ? job->m : job->n;
    int b0 = task * job->chunk;
    int b1 = b0 + job->chunk < total ? b0 + job->chunk : total;
    if (b0 >= b1)
        return;
    bool ok = job->split_m ? fe_gemm_block(job, b0, b1, 0, job->n)
                           : fe_gemm_block(job, 0, job->m, b0, b1);
    if (!ok)
        job->failed = true;
}

/* C *= beta when there is nothing to multiply (k == 0). */
static void fe_gemm_scale_only(int m, int n, float beta, float *c, int ldc) {
    for (int i = 0; i < m; i++)
        for (int j = 0; j < n; j++)
            c[(size_t)i * ldc + j] = beta == 0.0f ? 0.0f : beta * c[(size_t)i * ldc + j];
}

/* Runs a GEMM on the built-in kernels (s) or OpenBLAS (s == NULL), split
 * over the engine's pool. */
static fe_status fe_sgemm_split(const FeGemmShape *s, bool b_trans, int m, int n, int k,
                                float alpha, const float *a, int lda, const float *b, int ldb,
                                float beta, float *c, int ldc) {
    if (k == 0) {
        fe_gemm_scale_only(m, n, beta, c, ldc);
        return FE_OK;
    }
    FeGemmJob job = {s, b_trans, m, n, k, alpha, beta, a, b, lda, ldb, ldc, c, n, false, false};
    int threads = fe_cpu_get_threads();
    /* OpenBLAS blocks: whole cache lines of C per column split. */
    FeGemmShape units = s ? *s : (FeGemmShape){8, 16, 0, 0, 0, NULL};
    double flops = 2.0 * m * n * k;
    int n_tasks = 1;
    /* Split only when each thread gets real work (a wake-up costs a few
     * microseconds), along the longer side: each task packs its own copy of
     * the other operand, so that one should be the small one. */
    if (threads > 1 && flops > 4e6) {
        job.split_m = m >= n;
        int unit = job.split_m ? units.mr : units.nr;
        int total = job.split_m ? m : n;
        int panels = (total + unit - 1) / unit;
        if (panels >= 2) {
            n_tasks = threads < panels ? threads : panels;
            int per = (panels + n_tasks - 1) / n_tasks;
            job.chunk = per * unit;
            n_tasks = (total + job.chunk - 1) / job.chunk;
        }
    }
    if (n_tasks == 1)
        fe_gemm_task(&job, 0);
    else
        fe_cpu_parallel_for(n_tasks, fe_gemm_task, &job);
    if (job.failed)
        return fe_set_error(FE_ERR_OUT_OF_MEMORY, "sgemm: cannot allocate packing buffers");
    return FE_OK;
}

static void fe_openblas_threads(void) {
    int t = fe_cpu_get_threads();
    if (fe_openblas.set_num_threads && fe_openblas.threads_set != t) {
        fe_openblas.set_num_threads(t);
        fe_openblas.threads_set = t;
    }
}

fe_status fe_sgemm_with(fe_gemm_kernel kernel, bool b_trans, int m, int n, int k, float alpha,
                        const float *a, int lda, const float *b, int ldb, float beta, float *c,
                        int ldc) {
    pthread_once(&fe_blas_once, fe_blas_init);
    if (m < 0 || n < 0 || k < 0 || lda < (k > 0 ? k : 1) || ldc < (n > 0 ? n : 1) ||
        ldb < (b_trans ? (k > 0 ? k : 1) : (n > 0 ? n : 1)))
        return fe_set_error(FE_ERR_INVALID_ARGUMENT, "sgemm: bad sizes m=%d n=%d k=%d lda=%d "
                            "ldb=%d ldc=%d", m, n, k, lda, ldb, ldc);
    if (m == 0 || n == 0)
        return FE_OK;
    if (kernel == FE_GEMM_AUTO)
        kernel = fe_gemm_active;
    if (kernel == FE_GEMM_OPENBLAS) {
        if (!fe_openblas.sgemm)
            return fe_set_error(FE_ERR_UNSUPPORTED, "sgemm: OpenBLAS is not loaded (%s)",
                                fe_gemm_path_text);
        if (k == 0) {
            fe_gemm_scale_only(m, n, beta, c, ldc);
            return FE_OK;
        }
        if (fe_openblas_own_threads) {
            fe_openblas_threads();
            fe_openblas.sgemm(FE_CBLAS_ROW_MAJOR, FE_CBLAS_NO_TRANS,
                              b_trans ? FE_CBLAS_TRANS : FE_CBLAS_NO_TRANS, m, n, k, alpha, a,
                              lda, b, ldb, beta, c, ldc);
            return FE_OK;
        }
        return fe_sgemm_split(NULL, b_trans, m, n, k, alpha, a, lda, b, ldb, beta, c, ldc);
    }
    FeGemmShape s;
    if (!fe_gemm_shape_for(kernel, &s))
        return fe_set_error(FE_ERR_UNSUPPORTED, "sgemm: the %s kernel cannot run on this CPU",
                            fe_gemm_kernel_name(kernel));
    return fe_sgemm_split(&s, b_trans, m, n, k, alpha, a, lda, b, ldb, beta, c, ldc);
}

void fe_sgemm(bool b_trans, int m, int n, int k, float alpha, const float *a, int lda,
              const float *b, int ldb, float beta, float *c, int ldc) {
    if (fe_sgemm_with(FE_GEMM_AUTO, b_trans, m, n, k, alpha, a, lda, b, ldb, beta, c, ldc) ==
        FE_OK)
        return;
    /* Only a failed scratch allocation gets here; the portable kernel needs
     * just as much, so finish with plain loops rather than leave C wrong. */
    for (int i = 0; i < m; i++)
        for (int j = 0; j < n; j++) {
            float acc = 0.0f;
            for (int p = 0; p < k; p++)
                acc += a[(size_t)i * lda + p] *
                       (b_trans ? b[(size_t)j * ldb + p] : b[(size_t)p * ldb + j]);
            float *cv = c + (size_t)i * ldc + j;
            *cv = alpha * acc + (beta != 0.0f ? beta * *cv : 0.0f);
        }
}
