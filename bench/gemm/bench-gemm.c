/* bench-gemm - sgemm GFLOP/s of every CPU GEMM path at formulate-v1 shapes.
 *
 *   build-ops/bench/gemm/bench-gemm [--quick] [--threads N]
 *
 * Rows: the encoder's linear layers (x[L,K] * W[N,K]^T) at the largest input
 * (256 x 1536 px -> L = 3072 tokens) and a typical one (64 x 512 -> L = 256),
 * the convolutions' im2col GEMMs (W[Cout, Cin*9] * col[Cin*9, pixels]), and a
 * square 1024^3 product as the machine's reference rate. Columns: OpenBLAS as
 * the engine loads it (kernels from cpuid), then the engine's own kernels.
 * To see what Debian's OpenBLAS does on its own on this CPU, run with
 * OPENBLAS_CORETYPE=Prescott (what it detects) to compare; with
 * FE_BLAS_THREADS=openblas, OpenBLAS's own threads instead of the engine's
 * pool split the work. */
#include "fe-internal.h"

#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>

static double cpu_s(void) {
    struct timespec ts;
    clock_gettime(CLOCK_PROCESS_CPUTIME_ID, &ts);
    return (double)ts.tv_sec + ts.tv_nsec * 1e-9;
}

static double now_s(void) {
    struct timespec ts;
    clock_gettime(CLOCK_MONOTONIC, &ts);
    return (double)ts.tv_sec + ts.tv_nsec * 1e-9;
}

typedef struct {
    const char *what;
    bool b_trans;
    int m, n, k;
} Shape;

/* Best-of wall-clock timing within a time budget: GFLOP/s, or -1 when the
 * kernel cannot run here. *per_core receives GFLOP per CPU-second of the
 * whole process (all its threads) over the same runs: on a shared machine,
 * where the wall clock mostly measures the other users, that is the stable
 * figure (the machine's rate is about per_core x cores). */
static double measure(fe_gemm_kernel kernel, const Shape *s, double budget_s, double *per_core) {
    size_t an = (size_t)s->m * s->k, bn = (size_t)s->n * s->k, cn = (size_t)s->m * s->n;
    float *a = aligned_alloc(64, ((an * 4 + 63) / 64) * 64);
    float *b = aligned_alloc(64, ((bn * 4 + 63) / 64) * 64);
    float *c = aligned_alloc(64, ((cn * 4 + 63) / 64) * 64);
    double best = -1.0;
    if (!a || !b || !c)
        goto out;
    for (size_t i = 0; i < an; i++)
        a[i] = (float)((i * 7919) % 1000) / 1000.0f - 0.5f;
    for (size_t i = 0; i < bn; i++)
        b[i] = (float)((i * 104729) % 1000) / 1000.0f - 0.5f;
    int lda = s->k, ldb = s->b_trans ? s->k : s->n;
    if (fe_sgemm_with(kernel, s->b_trans, s->m, s->n, s->k, 1.0f, a, lda, b, ldb, 0.0f, c, s->n) !=
        FE_OK)
        goto out; /* also the warm-up */
    double flops = 2.0 * s->m * s->n * s->k, t_end = now_s() + budget_s;
    double best_t = 1e30;
    int reps = 0;
    double cpu0 = cpu_s();
    do {
        double t0 = now_s();
        fe_sgemm_with(kernel, s->b_trans, s->m, s->n, s->k, 1.0f, a, lda, b, ldb, 0.0f, c, s->n);
        double t = now_s() - t0;
        best_t = t < best_t ? t : best_t;
        reps++;
    } while (now_s() < t_end || reps < 3);
    *per_core = flops * reps / (cpu_s() - cpu0) * 1e-9;
    best = flops / best_t * 1e-9;
out:
    free(a);
    free(b);
    free(c);
    return best;
}

int main(int argc, char **argv) {
    bool quick = false;
    for (int i = 1; i < argc; i++) {
        if (strcmp(argv[i], "--quick") == 0)
            quick = true;
        else if (strcmp(argv[i], "--threads") == 0 && i + 1 < argc)
            fe_cpu_set_threads(atoi(argv[++i]));
        else {
            fprintf(stderr, "usage: %s [--quick] [--threads N]\n", argv[0]);
            return 2;
        }
    }
    static const Shape shapes[] = {
        {"square 1024^3 (reference)", false, 1024, 1024, 1024},
    {"square 2048^3 (reference)", false, 2048, 2048, 2048},
        {"enc q/k/v/o  L=3072", true, 3072, 256, 256},
        {"enc fc1      L=3072", true, 3072, 1024, 256},
        {"enc fc2      L=3072", true, 3072, 256, 1024},
        {"enc fc1      L=256", true, 256, 1024, 256},
        {"enc q/k/v/o  L=256", true, 256, 256, 256},
        {"conv2 im2col 32->64", false, 64, 3640, 288},
        {"conv3 im2col 64->128", false, 128, 1820, 576},
        {"conv5 im2col 256->256", false, 256, 455, 2304},
        {"dec logits   beam 4", true, 4, 600, 256},
    };
    const fe_gemm_kernel kernels[] = {FE_GEMM_OPENBLAS, FE_GEMM_BUILTIN_AVX512,
                                      FE_GEMM_BUILTIN_AVX2, FE_GEMM_BUILTIN_GENERIC};
    const FeCpuInfo *ci = fe_cpu_info();
    printf("CPU: %s, %d threads\n", ci->brand, fe_cpu_get_threads());
    printf("GEMM path (auto): %s\n", fe_cpu_gemm_path());
    const char *ct = getenv("OPENBLAS_CORETYPE");
    const char *bt = getenv("FE_BLAS_THREADS");
    printf("OPENBLAS_CORETYPE=%s, threads: %s\n\n", ct ? ct : "(unset)",
           bt && strcmp(bt, "openblas") == 0 ? "OpenBLAS's own" : "engine pool");
    printf("GFLOP/s as best wall-clock rate / rate per busy core (CPU time)\n");
    printf("%-26s %5s %5s %5s", "shape", "M", "N", "K");
    for (size_t k = 0; k < sizeof kernels / sizeof *kernels; k++)
        printf(" %15s", fe_gemm_kernel_name(kernels[k]));
    printf("\n");
    for (size_t s = 0; s < sizeof shapes / sizeof *shapes; s++) {
        printf("%-26s %5d %5d %5d", shapes[s].what, shapes[s].m, shapes[s].n, shapes[s].k);
        fflush(stdout);
        for (size_t k = 0; k < sizeof kernels / sizeof *kernels; k++) {
            /* The portable kernel is only a safety net: time it on one shape. */
            if (kernels[k] == FE_GEMM_BUILTIN_GENERIC && s != 2) {
                printf(" %15s", "-");
                continue;
            }
            double per_core = 0;
            double g = measure(kernels[k], &shapes[s], quick ? 0.1 : 0.5, &per_core);
            if (g < 0)
                printf(" %15s", "n/a");
            else
                printf(" %7.1f/%7.1f", g, per_core);
            fflush(stdout);
        }
        printf("\n");
    }
    return 0;
}
