/* bench-conv - the encoder's convolutions on the CPU, one at a time, as the
 * engine runs them (fe_conv3x3: im2col tiles + GEMM, or direct for one input
 * channel), against the machine's sgemm rate.
 *
 *   BUILD/bench/engine-cpu/bench-conv [--preset v1|small] [--height H] [--width W]
 *                                     [--threads N] [--budget SECONDS]
 *
 * Rows: each conv block of formulate-v1 (docs/model.md) at the size it sees for
 * an H x W input (default 48 x 224, a typical one-line formula after
 * preprocessing), then OpenBLAS sgemm on 1024^3 and on the layer's own GEMM
 * shape. Rates are GFLOP per CPU-second of the whole process (all threads):
 * on a shared machine the wall clock mostly measures the other users, CPU time
 * measures the work. "of sgemm" = the conv's rate / the 1024^3 sgemm rate.
 * "bf16" (on AVX512_BF16 CPUs): the same op with the weight in bf16, as
 * FE_PRECISION_BF16 runs it (fe-cpu-bf16.c; the first conv stays f32). */
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

static void fill(float *p, size_t n, unsigned seed) {
    for (size_t i = 0; i < n; i++)
        p[i] = (float)(((i + seed) * 7919u) % 1000u) / 1000.0f - 0.5f;
}

/* GFLOP per CPU-second of fn over repeated runs within budget (median of 5
 * batches). */
typedef fe_status (*RunFn)(void *ctx);
static double rate(RunFn fn, void *ctx, double flops, double budget) {
    double r[5];
    if (fn(ctx) != FE_OK) /* warm-up */
        return -1.0;
    for (int b = 0; b < 5; b++) {
        int reps = 0;
        double c0 = cpu_s(), c1;
        do {
            if (fn(ctx) != FE_OK)
                return -1.0;
            reps++;
            c1 = cpu_s();
        } while (c1 - c0 < budget / 5);
        r[b] = flops * reps / (c1 - c0) / 1e9;
    }
    for (int i = 0; i < 5; i++)
        for (int j = i + 1; j < 5; j++)
            if (r[j] < r[i]) {
                double t = r[i];
                r[i] = r[j];
                r[j] = t;
            }
    return r[2];
}

typedef struct {
    FeTensor y, x, w, b;
} ConvCtx;
static fe_status run_conv(void *p) {
    ConvCtx *c = p;
    return fe_conv3x3(&c->y, &c->x, &c->w, &c->b, true);
}

typedef struct {
    FeTensor y, x, w, b;
    bool gelu;
} LinearCtx;
static fe_status run_linear(void *p) {
    LinearCtx *c = p;
    return fe_matmul(&c->y, &c->x, &c->w, &c->b, c->gelu);
}

/* GFLOP/s of fe_matmul y[L,N] = x[L,K] W[N,K]^T + b (the encoder's linears). */
/* The weight as bf16 marked bf16_dot (what FE_PRECISION_BF16 loads). */
static void to_bf16_weight(FeTensor *w) {
    float *f = fe_tensor_data(w);
    uint16_t *h = (uint16_t *)f;
    int64_t n = fe_tensor_nelements(w);
    for (int64_t i = 0; i < n; i++)
        h[i] = fe_f32_to_bf16(f[i]); /* in place: h[i] overwrites bytes already read */
    w->dtype = FE_DTYPE_BF16;
    w->bf16_dot = true;
}

static double linear_rate(int l, int n, int k, bool gelu, bool bf16, double budget) {
    FeBuffer *buf;
    if (fe_buffer_new(fe_cpu_device(), ((size_t)l * n + (size_t)l * k + (size_t)n * k + n) * 4 + 256,
                      &buf) != FE_OK)
        return -1.0;
    LinearCtx c = {.gelu = gelu};
    int64_t ys[2] = {l, n}, xs[2] = {l, k}, ws[2] = {n, k}, bs[1] = {n};
    fe_buffer_tensor(buf, FE_DTYPE_F32, 2, ys, "y", &c.y);
    fe_buffer_tensor(buf, FE_DTYPE_F32, 2, xs, "x", &c.x);
    fe_buffer_tensor(buf, FE_DTYPE_F32, 2, ws, "w", &c.w);
    fe_buffer_tensor(buf, FE_DTYPE_F32, 1, bs, "b", &c.b);
    fill(fe_tensor_data(&c.x), (size_t)l * k, 6);
    fill(fe_tensor_data(&c.w), (size_t)n * k, 7);
    fill(fe_tensor_data(&c.b), (size_t)n, 8);
    if (bf16)
        to_bf16_weight(&c.w);
    double r = rate(run_linear, &c, 2.0 * l * n * k, budget);
    fe_buffer_free(buf);
    return r;
}

typedef struct {
    int m, n, k;
    float *a, *b, *c;
} GemmCtx;
static fe_status run_gemm(void *p) {
    GemmCtx *g = p;
    return fe_sgemm_with(FE_GEMM_OPENBLAS, false, g->m, g->n, g->k, 1.0f, g->a, g->k, g->b, g->n,
                         0.0f, g->c, g->n);
}

static double gemm_rate(int m, int n, int k, double budget) {
    GemmCtx g = {m, n, k, malloc(sizeof(float) * m * k), malloc(sizeof(float) * k * n),
                 malloc(sizeof(float) * m * n)};
    double r = -1.0;
    if (g.a && g.b && g.c) {
        fill(g.a, (size_t)m * k, 1);
        fill(g.b, (size_t)k * n, 2);
        r = rate(run_gemm, &g, 2.0 * m * n * k, budget);
    }
    free(g.a);
    free(g.b);
    free(g.c);
    return r;
}

int main(int argc, char **argv) {
    int height = 48, width = 224, threads = 0;
    double budget = 1.0;
    const char *preset = "v1";
    for (int i = 1; i < argc; i++) {
        if (!strcmp(argv[i], "--height") && i + 1 < argc)
            height = atoi(argv[++i]);
        else if (!strcmp(argv[i], "--width") && i + 1 < argc)
            width = atoi(argv[++i]);
        else if (!strcmp(argv[i], "--threads") && i + 1 < argc)
            threads = atoi(argv[++i]);
        else if (!strcmp(argv[i], "--budget") && i + 1 < argc)
            budget = atof(argv[++i]);
        else if (!strcmp(argv[i], "--preset") && i + 1 < argc)
            preset = argv[++i];
        else {
            fprintf(stderr, "usage: %s [--preset v1|small] [--height H] [--width W] [--threads N] "
                            "[--budget S]\n", argv[0]);
            return 2;
        }
    }
    static const int v1[5] = {32, 64, 128, 256, 256}, small[5] = {16, 32, 64, 128, 128};
    bool is_small = strcmp(preset, "small") == 0;
    int d = is_small ? 128 : 256, dff = is_small ? 512 : 1024;
    static const int pool[5][2] = {{2, 2}, {2, 2}, {2, 2}, {2, 1}, {1, 1}};
    const int *chans = strcmp(preset, "small") == 0 ? small : v1;
    fe_cpu_set_threads(threads);
    printf("GEMM: %s; threads %d; input %d x %d (%s)\n", fe_cpu_gemm_path(), fe_cpu_get_threads(),
           height, width, preset);
    double ref = gemm_rate(1024, 1024, 1024, budget);
    printf("sgemm 1024^3 (OpenBLAS, engine pool): %.1f GFLOP/s per CPU-second\n\n", ref);
    bool bf16 = fe_cpu_has_bf16_dot();
    printf("%-6s %-22s %10s %10s %9s %14s %10s\n", "block", "conv (Cin->Cout @ HxW)", "MFLOP",
           "GFLOP/s", "of sgemm", "its GEMM alone", "bf16");
    FeDevice *cpu = fe_cpu_device();
    int h = height, w = width, cin = 1;
    double total_flops = 0, total_cpu = 0, total_cpu_bf16 = 0;
    for (int i = 0; i < 5; i++) {
        int cout = chans[i];
        FeBuffer *buf;
        size_t nx = (size_t)cin * h * w, ny = (size_t)cout * h * w, nw = (size_t)cout * cin * 9;
        if (fe_buffer_new(cpu, (nx + ny + nw + cout) * 4 + 4 * 64, &buf) != FE_OK)
            return 1;
        ConvCtx c;
        int64_t xs[4] = {1, cin, h, w}, ys[4] = {1, cout, h, w}, ws[4] = {cout, cin, 3, 3},
                bs[1] = {cout};
        fe_buffer_tensor(buf, FE_DTYPE_F32, 4, xs, "x", &c.x);
        fe_buffer_tensor(buf, FE_DTYPE_F32, 4, ys, "y", &c.y);
        fe_buffer_tensor(buf, FE_DTYPE_F32, 4, ws, "w", &c.w);
        fe_buffer_tensor(buf, FE_DTYPE_F32, 1, bs, "b", &c.b);
        fill(fe_tensor_data(&c.x), nx, 3);
        fill(fe_tensor_data(&c.w), nw, 4);
        fill(fe_tensor_data(&c.b), (size_t)cout, 5);
        double flops = 2.0 * 9 * cin * cout * h * w;
        double r = rate(run_conv, &c, flops, budget);
        double g = cin > 1 ? gemm_rate(cout, h * w, cin * 9, budget) : 0.0;
        /* bf16 (FE_PRECISION_BF16): the same conv with the weight rounded;
         * the first layer stays f32 there (fe-model.c). */
        double rb = r;
        if (bf16 && fe_cpu_bf16_conv_ok(cin)) {
            to_bf16_weight(&c.w);
            rb = rate(run_conv, &c, flops, budget);
        }
        char what[64];
        snprintf(what, sizeof what, "%d->%d @ %dx%d", cin, cout, h, w);
        if (cin > 1)
            printf("%-6d %-22s %10.1f %10.1f %8.0f%% %14.1f %10.1f\n", i, what, flops / 1e6, r,
                   100.0 * r / ref, g, rb);
        else
            printf("%-6d %-22s %10.1f %10.1f %8.0f%% %14s %10.1f\n", i, what, flops / 1e6, r,
                   100.0 * r / ref, "(direct)", rb);
        total_flops += flops;
        total_cpu += flops / (r * 1e9);
        total_cpu_bf16 += flops / (rb * 1e9);
        fe_buffer_free(buf);
        h /= pool[i][0];
        w /= pool[i][1];
        cin = cout;
    }
    printf("\nall convolutions: %.1f MFLOP in %.2f ms CPU = %.1f GFLOP/s per CPU-second (%.0f%% of "
           "sgemm)\n", total_flops / 1e6, total_cpu * 1e3, total_flops / total_cpu / 1e9,
           100.0 * total_flops / total_cpu / 1e9 / ref);
    if (bf16)
        printf("all convolutions, bf16: %.2f ms CPU = %.1f GFLOP/s per CPU-second\n",
               total_cpu_bf16 * 1e3, total_flops / total_cpu_bf16 / 1e9);

    /* The transformer's linears at the encoder's sequence length. */
    int l = h * w;
    struct {
        const char *what;
        int n, k;
        bool gelu;
    } lin[] = {{"enc.proj", d, cin, false}, {"q/k/v/o, cross K/V", d, d, false},
               {"mlp.fc1 + GELU", dff, d, true}, {"mlp.fc2", d, dff, false}};
    printf("\n%-22s %-16s %10s %10s %9s %10s\n", "linear (L = tokens)", "x[L,K] W[N,K]^T",
           "MFLOP", "GFLOP/s", "of sgemm", "bf16");
    for (size_t i = 0; i < sizeof lin / sizeof *lin; i++) {
        char shape[48];
        snprintf(shape, sizeof shape, "%dx%dx%d", l, lin[i].n, lin[i].k);
        double r = linear_rate(l, lin[i].n, lin[i].k, lin[i].gelu, false, budget);
        double rb = bf16 ? linear_rate(l, lin[i].n, lin[i].k, lin[i].gelu, true, budget) : 0.0;
        printf("%-22s %-16s %10.2f %10.1f %8.0f%% %10.1f\n", lin[i].what, shape,
               2.0 * l * lin[i].n * lin[i].k / 1e6, r, 100.0 * r / ref, rb);
    }
    return 0;
}
