/* fe-cpu.h - the CPU backend's facts and kernels: cpuid, the GEMM paths,
 * the bf16 kernels and the worker pool (fe-cpuid.c, fe-blas.c, fe-cpu*.c).
 * Not installed. */
#ifndef FE_CPU_H
#define FE_CPU_H

#include "fe-base.h"

/* ------------------------------------------------------------------------ */
/* CPU facts                                                                */

typedef struct {
    char vendor[16];
    char brand[64];
    int family, model;
    bool sse42, avx, avx2, fma, f16c, avx512f, avx512bw, avx512vl, avx512_bf16, amx_bf16,
        amx_tile;
    int n_cores;                   /* online logical CPUs                      */
} FeCpuInfo;

/* What the CPU and the OS allow, read once. FE_CPU_ISA in the environment caps
 * it for the engine's own kernels: "avx2" clears the AVX-512 and AMX flags,
 * "portable" also AVX, AVX2, FMA and F16C (so the portable loops run, f16
 * model weights are widened to f32 at load, and OpenBLAS is given a pre-AVX
 * core type), "avx512" or unset changes nothing. For tests
 * and comparisons (tests/README.md); the results stay within the ops' own
 * tolerances, not bit for bit, between two caps. */
const FeCpuInfo *fe_cpu_info(void);
/* The FE_CPU_ISA value fe_cpu_info() ignored because it is no cap, or NULL.
 * fe_cpu_gemm_path()'s first call says it once through fe_log (the detection
 * may run before main, when no log callback can be set yet). */
const char *fe_cpu_isa_ignored(void);
/* The CPU's entry of fe_devices_list, without looking for other backends
 * (which may load the CUDA module and its libraries). */
void fe_cpu_device_info(FeDeviceInfo *out);
/* Which GEMM path the CPU backend uses, e.g. "OpenBLAS 0.3.21 SkylakeX
 * kernels (cpuid: AVX-512F, AMX-BF16; OPENBLAS_CORETYPE set by engine)".
 * The first call (or first GEMM, or fe_devices_list) loads OpenBLAS; the
 * OPENBLAS_CORETYPE and OPENBLAS_NUM_THREADS=1 it reads were set before
 * main() (fe-blas.c's constructor), so it changes no environment. Where
 * OpenBLAS was loaded by someone else first, it says so once (fe_log). */
const char *fe_cpu_gemm_path(void);
void fe_cpu_set_threads(int n);
/* Up to how many input rows the CPU matmul computes each output row exactly
 * as it would for that row alone (the in-place dot-product path, whose sums
 * do not depend on the row count), for weights of that dtype. Batched
 * decoding keeps its rows within this so that it gives the serial tokens. */
int fe_cpu_matmul_exact_rows(fe_dtype weight_dtype);
/* Whether this CPU multiplies bf16_dot weights in bf16 (AVX512_BF16 with
 * AVX-512F/BW/VL, and the engine built for x86-64 with GCC or Clang). */
bool fe_cpu_has_bf16_dot(void);
/* Whether the CPU matmul and embedding kernels read a model file's f16/bf16
 * matrices in place at full speed (widening in registers, exact): AVX-512
 * with BW/VL, or AVX2 with FMA and F16C. The loader keeps those matrices
 * 16-bit there (half the bytes per decode step, the same numbers). */
bool fe_cpu_keeps_half_weights(void);
int fe_cpu_get_threads(void);
/* n f16 numbers widened to f32, and n floats rounded to bf16: the same bits
 * as fe_f16_to_f32 / fe_f32_to_bf16 one by one, vectorised where the CPU
 * has AVX-512 (loading a model). */
void fe_cpu_widen_f16(const uint16_t *h, float *dst, size_t n);
void fe_cpu_round_bf16(const float *x, uint16_t *out, size_t n);
/* Asks the kernel for 2 MiB pages under [p, p + n) (Linux madvise
 * MADV_HUGEPAGE; nothing elsewhere): for big buffers that are filled whole
 * right away, like a model's weights. Before the first write. */
void fe_cpu_advise_huge(void *p, size_t n);
/* Faults in the pages under [p, p + n) (zeroed; contents not kept) so that
 * later writes take no page faults: MADV_POPULATE_WRITE, else a write per
 * page. For a state's buffers at load (fe_state_new). */
void fe_cpu_prefault(void *p, size_t n);
/* A float buffer of at least n elements private to the calling thread, in
 * one of two slots (0: an op's temporaries; 1: an operand copy that the
 * pool's threads read while their own tasks use slot 0). Grows, never
 * shrinks; NULL when out of memory. */
float *fe_cpu_scratch(int slot, size_t n);

/* bf16 x bf16 with f32 sums (fe-cpu-bf16.c, AVX512_BF16), for weights marked
 * bf16_dot: a 3x3 conv (pad 1) of one image x [cin, h, w] with weights
 * [cout, cin*9] and y = relu?(conv + bias) [cout, h, w]; and y[m, n] =
 * x[m, k] W[n, k]^T + bias. FE_ERR_UNSUPPORTED where the CPU lacks
 * AVX512_BF16, or for an odd cin*9 / k (fe_cpu_bf16_conv_ok). */
bool fe_cpu_bf16_conv_ok(int cin);
fe_status fe_cpu_conv3x3_bf16(const float *x, int cin, int h, int w, const uint16_t *wt,
                              const float *bias, bool relu, int cout, float *y);
fe_status fe_cpu_matmul_bf16(const float *x, int m, int k, const uint16_t *w, int n,
                             const float *bias, float *y);

/* Row-major single-precision GEMM used by the CPU ops:
 *   C[M,N] = alpha * A[M,K] * op(B) + beta * C,
 *   op(B) = B[K,N] (b_trans false, ldb >= N) or B[N,K]^T (b_trans true, ldb >= K).
 * fe_sgemm takes the path fe_cpu_gemm_path() reports: OpenBLAS loaded at run
 * time with kernels chosen from cpuid, or the engine's own blocked kernels
 * when OpenBLAS is absent or FE_BLAS=builtin is set in the environment
 * (FE_BLAS=/path/libopenblas.so.0 picks a library). No allocation once warm. */
typedef enum {
    FE_GEMM_AUTO = 0,        /* whatever fe_cpu_gemm_path() says            */
    FE_GEMM_OPENBLAS,
    FE_GEMM_BUILTIN_AVX512,
    FE_GEMM_BUILTIN_AVX2,    /* AVX2 + FMA                                  */
    FE_GEMM_BUILTIN_GENERIC, /* portable C                                  */
    FE_GEMM_COUNT
} fe_gemm_kernel;

void fe_sgemm(bool b_trans, int m, int n, int k, float alpha, const float *a, int lda,
              const float *b, int ldb, float beta, float *c, int ldc);
/* The same through one named kernel (tests, bench/gemm): FE_ERR_UNSUPPORTED
 * when that kernel cannot run here (no OpenBLAS, CPU lacks the ISA). */
fe_status fe_sgemm_with(fe_gemm_kernel kernel, bool b_trans, int m, int n, int k, float alpha,
                        const float *a, int lda, const float *b, int ldb, float beta, float *c,
                        int ldc);
const char *fe_gemm_kernel_name(fe_gemm_kernel kernel);
/* The kernel FE_GEMM_AUTO resolves to. */
fe_gemm_kernel fe_gemm_active_kernel(void);

/* The CPU backend's worker pool (fe-cpu-pool.c): runs fn(ctx, task) for task
 * in [0, n_tasks) on up to fe_cpu_get_threads() threads, the caller among
 * them, and returns when all are done. Workers are created once and kept;
 * a call made while the pool is busy (another FeState's thread) runs inline. */
typedef void (*FeParallelFn)(void *ctx, int task);
void fe_cpu_parallel_for(int n_tasks, FeParallelFn fn, void *ctx);

/* y[i] = expf(x[i]) for n floats (y may be x), the numbers of the expf the
 * engine is linked to, bit for bit (fe-cpu-expf.c): eight at a time in AVX2
 * where that gives them, else one by one. */
void fe_expf_rows(const float *x, float *y, size_t n);
/* Whether fe_expf_rows takes its vector path on this CPU and libm. */
bool fe_expf_rows_vectorised(void);

#endif /* FE_CPU_H */
