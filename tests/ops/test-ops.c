/* test-ops.c - the runtime layer: every CPU op against a naive double
 * reference on random odd-sized inputs (outputs poisoned with NaN first),
 * each sgemm kernel, cpuid, the device registry and the CUDA module hook.
 * Run twice by meson: once as configured, once with FE_BLAS=builtin. */
#include "fe-internal.h"

#include <dlfcn.h>
#include <glib.h>
#include <glib/gstdio.h>
#include <malloc.h>
#include <math.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

/* ------------------------------------------------------------------------ */
/* Helpers                                                                  */

static FeBuffer *arena;

static void rand_fill(float *p, size_t n, float lo, float hi) {
    for (size_t i = 0; i < n; i++)
        p[i] = (float)g_test_rand_double_range(lo, hi);
}

static FeTensor make(fe_dtype dt, int ndim, const int64_t *shape, const char *name) {
    FeTensor t;
    fe_status st = fe_buffer_tensor(arena, dt, ndim, shape, name, &t);
    if (st != FE_OK)
        g_error("fe_buffer_tensor: %s", fe_last_error());
    /* Poison: a kernel that skips an element leaves a NaN the check finds. */
    if (dt == FE_DTYPE_F32) {
        float *d = fe_tensor_data(&t);
        for (int64_t i = 0; i < fe_tensor_nelements(&t); i++)
            d[i] = NAN;
    }
    return t;
}

static FeTensor make_rand(int ndim, const int64_t *shape, const char *name, float lo, float hi) {
    FeTensor t = make(FE_DTYPE_F32, ndim, shape, name);
    rand_fill(fe_tensor_data(&t), (size_t)fe_tensor_nelements(&t), lo, hi);
    return t;
}

static void assert_close(const char *what, const float *got, const double *ref, size_t n,
                         double atol, double rtol) {
    for (size_t i = 0; i < n; i++) {
        double err = fabs((double)got[i] - ref[i]);
        if (!(err <= atol + rtol * fabs(ref[i])))
            g_error("%s: element %zu is %.9g, reference %.9g (|err| %.3g)", what, i, got[i],
                    ref[i], err);
    }
}

static void arena_setup(void) {
    if (!arena)
        g_assert_cmpint(fe_buffer_new(fe_cpu_device(), 256u << 20, &arena), ==, FE_OK);
    fe_buffer_reset(arena);
}

/* ------------------------------------------------------------------------ */
/* cpuid                                                                    */

static bool cpuinfo_has_flag(const char *flag) {
    gchar *text = NULL;
    if (!g_file_get_contents("/proc/cpuinfo", &text, NULL, NULL))
        return false;
    bool found = false;
    gchar **lines = g_strsplit(text, "\n", -1);
    for (gchar **l = lines; *l && !found; l++) {
        if (!g_str_has_prefix(*l, "flags"))
            continue;
        gchar **words = g_strsplit_set(strchr(*l, ':') ? strchr(*l, ':') + 1 : *l, " \t", -1);
        for (gchar **w = words; *w; w++)
            if (strcmp(*w, flag) == 0)
                found = true;
        g_strfreev(words);
        break;
    }
    g_strfreev(lines);
    g_free(text);
    return found;
}

static void test_cpuid_report(void) {
    const FeCpuInfo *ci = fe_cpu_info();
    g_test_message("cpu: %s (%s family %d model %d), %d cores; sse4.2=%d avx=%d avx2=%d fma=%d "
                   "avx512f=%d bw=%d vl=%d avx512_bf16=%d amx_bf16=%d amx_tile=%d",
                   ci->brand, ci->vendor, ci->family, ci->model, ci->n_cores, ci->sse42, ci->avx,
                   ci->avx2, ci->fma, ci->avx512f, ci->avx512bw, ci->avx512vl, ci->avx512_bf16,
                   ci->amx_bf16, ci->amx_tile);
    g_test_message("gemm: %s", fe_cpu_gemm_path());
    g_assert_cmpint(ci->n_cores, ==, (int)sysconf(_SC_NPROCESSORS_ONLN));
    g_assert_true(ci->brand[0] != '\0');
    g_assert_true(fe_cpu_info() == ci);
#if defined(__x86_64__) && defined(__linux__)
    /* The kernel lists a flag only when it also saves that state, which is
     * what our xgetbv check asks too: the two must agree, under the cap of
     * FE_CPU_ISA when this suite runs with one (tests/ops/meson.build). */
    const char *isa = g_getenv("FE_CPU_ISA");
    bool portable = isa && strcmp(isa, "portable") == 0;
    bool no512 = portable || (isa && strcmp(isa, "avx2") == 0);
    g_test_message("FE_CPU_ISA=%s", isa ? isa : "(unset)");
    g_assert_cmpint(ci->sse42, ==, cpuinfo_has_flag("sse4_2"));
    g_assert_cmpint(ci->avx, ==, !portable && cpuinfo_has_flag("avx"));
    g_assert_cmpint(ci->avx2, ==, !portable && cpuinfo_has_flag("avx2"));
    g_assert_cmpint(ci->fma, ==, !portable && cpuinfo_has_flag("fma"));
    g_assert_cmpint(ci->f16c, ==, !portable && cpuinfo_has_flag("f16c"));
    g_assert_cmpint(ci->avx512f, ==, !no512 && cpuinfo_has_flag("avx512f"));
    g_assert_cmpint(ci->avx512bw, ==, !no512 && cpuinfo_has_flag("avx512bw"));
    g_assert_cmpint(ci->avx512vl, ==, !no512 && cpuinfo_has_flag("avx512vl"));
    g_assert_cmpint(ci->avx512_bf16, ==, !no512 && cpuinfo_has_flag("avx512_bf16"));
    if (no512 || !cpuinfo_has_flag("amx_bf16"))
        g_assert_false(ci->amx_bf16);
#endif
}

static void log_to_stderr(fe_log_level level, const char *message, void *user_data) {
    (void)level;
    (void)user_data;
    fprintf(stderr, "%s\n", message);
}

/* FE_CPU_ISA caps what the kernels use (fe-cpuid.c), read once per process:
 * each value in a child process. */
static void test_cpuid_isa_cap(void) {
    if (g_test_subprocess()) {
        const FeCpuInfo *ci = fe_cpu_info();
        /* An ignored value is said through the log (main silences it) at
         * the first use, not on stderr before main. */
        fe_set_log_callback(log_to_stderr, NULL);
        (void)fe_cpu_gemm_path();
        fe_set_log_callback(NULL, NULL);
        printf("avx=%d avx2=%d fma=%d avx512f=%d bw=%d vl=%d bf16=%d amx=%d rows f32 %d f16 %d "
               "bf16 %d\n",
               ci->avx, ci->avx2, ci->fma, ci->avx512f, ci->avx512bw, ci->avx512vl,
               ci->avx512_bf16, ci->amx_bf16 || ci->amx_tile,
               fe_cpu_matmul_exact_rows(FE_DTYPE_F32), fe_cpu_matmul_exact_rows(FE_DTYPE_F16),
               fe_cpu_matmul_exact_rows(FE_DTYPE_BF16));
        return;
    }
#if defined(__x86_64__) && defined(__linux__)
    gchar *old = g_strdup(g_getenv("FE_CPU_ISA"));
    g_setenv("FE_CPU_ISA", "portable", TRUE);
    g_test_trap_subprocess(NULL, 0, G_TEST_SUBPROCESS_DEFAULT);
    g_test_trap_assert_passed();
    g_test_trap_assert_stdout("avx=0 avx2=0 fma=0 avx512f=0 bw=0 vl=0 bf16=0 amx=0 "
                              "rows f32 4 f16 4 bf16 4\n");
    g_setenv("FE_CPU_ISA", "avx2", TRUE);
    g_test_trap_subprocess(NULL, 0, G_TEST_SUBPROCESS_DEFAULT);
    g_test_trap_assert_passed();
    bool avx2 = cpuinfo_has_flag("avx2") && cpuinfo_has_flag("fma");
    int rows = avx2 ? 32 : 4;
    gchar *want = g_strdup_printf("avx=%d avx2=%d fma=%d avx512f=0 bw=0 vl=0 bf16=0 amx=0 rows "
                                  "f32 %d f16 %d bf16 %d\n",
                                  cpuinfo_has_flag("avx"), cpuinfo_has_flag("avx2"),
                                  cpuinfo_has_flag("fma"), rows, rows, rows);
    g_test_trap_assert_stdout(want);
    g_free(want);
    /* A value the engine does not know: nothing capped, and said so. */
    g_setenv("FE_CPU_ISA", "sse2", TRUE);
    g_test_trap_subprocess(NULL, 0, G_TEST_SUBPROCESS_DEFAULT);
    g_test_trap_assert_passed();
    g_test_trap_assert_stderr("*FE_CPU_ISA=sse2 is not avx512, avx2 or portable; ignored*");
    want = g_strdup_printf("avx=%d avx2=%d *", cpuinfo_has_flag("avx"), cpuinfo_has_flag("avx2"));
    g_test_trap_assert_stdout(want);
    g_free(want);
    if (old)
        g_setenv("FE_CPU_ISA", old, TRUE);
    else
        g_unsetenv("FE_CPU_ISA");
    g_free(old);
#else
    g_test_skip("FE_CPU_ISA caps x86 instruction sets");
#endif
}

static void test_gemm_path(void) {
    const char *path = fe_cpu_gemm_path();
    const char *choice = g_getenv("FE_BLAS");
    fe_gemm_kernel k = fe_gemm_active_kernel();
    const FeCpuInfo *ci = fe_cpu_info();
    g_test_message("GEMM path: %s", path);
    if (choice && strcmp(choice, "builtin") == 0) {
        g_assert_cmpint(k, !=, FE_GEMM_OPENBLAS);
        g_assert_nonnull(strstr(path, "built-in"));
        g_assert_nonnull(strstr(path, "FE_BLAS=builtin"));
        if (ci->avx512f)
            g_assert_cmpint(k, ==, FE_GEMM_BUILTIN_AVX512);
        return;
    }
    if (strstr(path, "kernels here")) {
        /* OpenBLAS loaded with kernels narrower than this AVX-512 CPU: the
         * engine's own AVX-512 sgemm instead (fe-blas.c). */
        g_assert_true(ci->avx512f);
        g_assert_cmpint(k, ==, FE_GEMM_BUILTIN_AVX512);
        g_assert_true(g_str_has_prefix(path, "built-in AVX-512 sgemm (cpuid: "));
        g_assert_null(strcasestr(path, "skylakex"));
        return;
    }
    if (k != FE_GEMM_OPENBLAS) {
        g_assert_nonnull(strstr(path, "OpenBLAS not found"));
        g_test_skip("OpenBLAS is not installed: the built-in path is tested instead");
        return;
    }
    g_assert_true(g_str_has_prefix(path, "OpenBLAS "));
    g_assert_nonnull(strstr(path, "kernels (cpuid: "));
    if (ci->avx512f && ci->avx512bw && ci->avx512vl && strstr(path, "set by engine")) {
        /* The engine chose the kernels: OpenBLAS must have taken them. */
        g_assert_cmpstr(g_getenv("OPENBLAS_CORETYPE"), ==, "SkylakeX");
        g_assert_nonnull(strcasestr(path, "skylakex"));
    }
}

/* A library that does not load: the engine says so and uses its own sgemm. */
static void test_gemm_missing_openblas(void) {
    if (g_test_subprocess()) {
        float a[6] = {1, 2, 3, 4, 5, 6}, b[6] = {1, 0, 0, 0, 1, 1}, c[4];
        printf("path: %s\n", fe_cpu_gemm_path());
        g_assert_cmpint(fe_gemm_active_kernel(), !=, FE_GEMM_OPENBLAS);
        fe_sgemm(true, 2, 2, 3, 1.0f, a, 3, b, 3, 0.0f, c, 2);
        /* [1 2 3; 4 5 6] * [1 0 0; 0 1 1]^T */
        g_assert_cmpfloat(c[0], ==, 1.0f);
        g_assert_cmpfloat(c[1], ==, 5.0f);
        g_assert_cmpfloat(c[2], ==, 4.0f);
        g_assert_cmpfloat(c[3], ==, 11.0f);
        g_assert_cmpint(fe_sgemm_with(FE_GEMM_OPENBLAS, true, 2, 2, 3, 1.0f, a, 3, b, 3, 0.0f, c, 2),
                        ==, FE_ERR_UNSUPPORTED);
        return;
    }
    g_setenv("FE_BLAS", "/nonexistent/libopenblas.so.0", TRUE);
    g_test_trap_subprocess(NULL, 0, G_TEST_SUBPROCESS_DEFAULT);
    g_test_trap_assert_passed();
    g_test_trap_assert_stdout("*path: built-in * sgemm (cpuid: *; FE_BLAS library has no "
                              "cblas_sgemm or does not load)*");
    g_unsetenv("FE_BLAS");
}

/* A kernel set the user chose is left alone, and reported as theirs. */
static void test_gemm_user_coretype(void) {
    if (g_test_subprocess()) {
        printf("path: %s\n", fe_cpu_gemm_path());
        return;
    }
    const FeCpuInfo *ci = fe_cpu_info();
    const char *choice = g_getenv("FE_BLAS");
    if (!(ci->avx2 && ci->fma) || (choice && strcmp(choice, "builtin") == 0) ||
        strstr(fe_cpu_gemm_path(), "OpenBLAS not found")) {
        g_test_skip("needs OpenBLAS and an AVX2 CPU");
        return;
    }
    gchar *old = g_strdup(g_getenv("OPENBLAS_CORETYPE"));
    g_setenv("OPENBLAS_CORETYPE", "Haswell", TRUE);
    g_test_trap_subprocess(NULL, 0, G_TEST_SUBPROCESS_DEFAULT);
    g_test_trap_assert_passed();
    /* OpenBLAS takes the user's kernels; on an AVX-512 CPU the engine then
     * multiplies with its own AVX-512 sgemm and says why. */
    if (ci->avx512f && !(choice && choice[0]))
        g_test_trap_assert_stdout("*path: built-in AVX-512 sgemm (cpuid: *; OpenBLAS * has Haswell "
                                  "kernels here, OPENBLAS_CORETYPE set by user)*");
    else
        g_test_trap_assert_stdout("*path: OpenBLAS * Haswell kernels (cpuid: *; "
                                  "OPENBLAS_CORETYPE set by user)*");
    if (old)
        g_setenv("OPENBLAS_CORETYPE", old, TRUE);
    else
        g_unsetenv("OPENBLAS_CORETYPE");
    g_free(old);
}

/* ------------------------------------------------------------------------ */
/* sgemm, every kernel                                                      */

static void ref_gemm(bool bt, int m, int n, int k, float alpha, const float *a, int lda,
                     const float *b, int ldb, float beta, const float *c0, int ldc, double *out) {
    for (int i = 0; i < m; i++)
        for (int j = 0; j < n; j++) {
            double s = 0;
            for (int p = 0; p < k; p++)
                s += (double)a[i * lda + p] * (bt ? b[j * ldb + p] : b[p * ldb + j]);
            out[i * n + j] = alpha * s + (beta != 0.0f ? beta * (double)c0[i * ldc + j] : 0.0);
        }
}

static void check_gemm_kernel(fe_gemm_kernel kernel) {
    static const int sizes[][3] = {
        {1, 1, 1}, {7, 13, 5}, {6, 32, 16}, {37, 45, 71}, {1, 257, 96}, {130, 70, 300},
        {13, 600, 256}, {200, 33, 9}, {64, 64, 0},
    };
    for (size_t s = 0; s < G_N_ELEMENTS(sizes); s++)
        for (int variant = 0; variant < 4; variant++) {
            int m = sizes[s][0], n = sizes[s][1], k = sizes[s][2];
            bool bt = variant & 1;
            float beta = variant & 2 ? 0.5f : 0.0f;
            float alpha = variant == 3 ? -1.25f : 1.0f;
            int lda = k + 3, ldb = (bt ? k : n) + 2, ldc = n + 5;
            float *a = g_new(float, (size_t)m * lda + 1);
            float *b = g_new(float, (size_t)(bt ? n : k) * ldb + 1);
            float *c = g_new(float, (size_t)m * ldc + 1);
            float *c0 = g_new(float, (size_t)m * ldc + 1);
            double *ref = g_new(double, (size_t)m * n + 1);
            rand_fill(a, (size_t)m * lda, -1, 1);
            rand_fill(b, (size_t)(bt ? n : k) * ldb, -1, 1);
            if (beta != 0.0f)
                rand_fill(c, (size_t)m * ldc, -1, 1);
            else
                for (size_t i = 0; i < (size_t)m * ldc; i++)
                    c[i] = NAN; /* beta = 0 must not read C */
            memcpy(c0, c, (size_t)m * ldc * sizeof(float));
            ref_gemm(bt, m, n, k, alpha, a, lda, b, ldb, beta, c0, ldc, ref);
            fe_status st = fe_sgemm_with(kernel, bt, m, n, k, alpha, a, lda, b, ldb, beta, c, ldc);
            if (st != FE_OK)
                g_error("sgemm: %s", fe_last_error());
            for (int i = 0; i < m; i++) {
                float *row = g_new(float, (size_t)n + 1);
                memcpy(row, c + (size_t)i * ldc, (size_t)n * sizeof(float));
                char what[96];
                snprintf(what, sizeof what, "%s %dx%dx%d bt=%d row %d",
                         fe_gemm_kernel_name(kernel), m, n, k, bt, i);
                assert_close(what, row, ref + (size_t)i * n, (size_t)n, 1e-5 * (k + 1), 1e-5);
                /* The padding between rows is untouched. */
                for (int j = n; j < ldc && i < m - 1; j++)
                    g_assert_true(memcmp(&c[(size_t)i * ldc + j], &c0[(size_t)i * ldc + j],
                                         sizeof(float)) == 0);
                g_free(row);
            }
            g_free(a);
            g_free(b);
            g_free(c);
            g_free(c0);
            g_free(ref);
        }
}

static void test_gemm_kernel(gconstpointer data) {
    fe_gemm_kernel kernel = (fe_gemm_kernel)GPOINTER_TO_INT(data);
    float a = 1, b = 1, c = 0;
    fe_status st = fe_sgemm_with(kernel, false, 1, 1, 1, 1, &a, 1, &b, 1, 0, &c, 1);
    if (st == FE_ERR_UNSUPPORTED) {
        g_test_message("%s", fe_last_error());
        g_test_skip("kernel not available here");
        return;
    }
    g_assert_cmpint(st, ==, FE_OK);
    check_gemm_kernel(kernel);
    /* The same through one and several threads. */
    int threads = fe_cpu_get_threads();
    fe_cpu_set_threads(1);
    check_gemm_kernel(kernel);
    fe_cpu_set_threads(3);
    check_gemm_kernel(kernel);
    fe_cpu_set_threads(threads);
}

static void test_gemm_bad_sizes(void) {
    float x = 0;
    g_assert_cmpint(fe_sgemm_with(FE_GEMM_BUILTIN_GENERIC, false, 2, 2, 2, 1, &x, 1, &x, 2, 0, &x,
                                  2),
                    ==, FE_ERR_INVALID_ARGUMENT);
    g_assert_nonnull(strstr(fe_last_error(), "lda=1"));
}

/* ------------------------------------------------------------------------ */
/* Ops                                                                      */

static double gelu_ref(double x) { return 0.5 * x * (1.0 + erf(x / sqrt(2.0))); }

static void check_matmul(int m, int n, int k, bool bias, bool gelu) {
    arena_setup();
    int64_t xs[3] = {1, m, k}, ws[2] = {n, k}, bs[1] = {n}, ys[3] = {1, m, n};
    FeTensor x = make_rand(3, xs, "x", -1, 1), w = make_rand(2, ws, "w", -0.5f, 0.5f);
    FeTensor b = make_rand(1, bs, "b", -1, 1), y = make(FE_DTYPE_F32, 3, ys, "y");
    g_assert_cmpint(fe_matmul(&y, &x, &w, bias ? &b : NULL, gelu), ==, FE_OK);
    double *ref = g_new(double, (size_t)m * n);
    const float *xd = fe_tensor_data(&x), *wd = fe_tensor_data(&w), *bd = fe_tensor_data(&b);
    for (int i = 0; i < m; i++)
        for (int j = 0; j < n; j++) {
            double s = bias ? bd[j] : 0.0;
            for (int p = 0; p < k; p++)
                s += (double)xd[i * k + p] * wd[j * k + p];
            ref[i * n + j] = gelu ? gelu_ref(s) : s;
        }
    char what[64];
    snprintf(what, sizeof what, "matmul %dx%dx%d bias=%d gelu=%d", m, n, k, bias, gelu);
    assert_close(what, fe_tensor_data(&y), ref, (size_t)m * n, 2e-5 * k, 1e-5);
    g_free(ref);
}

static void test_matmul(void) {
    /* m <= fe_cpu_matmul_exact_rows (4 portable, 32 with AVX2 or AVX-512)
     * takes the in-place dot-product path, larger m the sgemm. */
    const int shapes[][3] = {{1, 256, 256}, {1, 601, 255}, {3, 1024, 256}, {4, 37, 19},
                             {5, 33, 17},   {37, 45, 71},  {130, 257, 96}, {1, 1, 1}};
    for (size_t i = 0; i < G_N_ELEMENTS(shapes); i++)
        for (int v = 0; v < 4; v++)
            check_matmul(shapes[i][0], shapes[i][1], shapes[i][2], v & 1, v & 2);
}

/* A 16-bit weight's value, decoded here rather than by the engine's
 * fe_f16_to_f32 / fe_bf16_to_f32 (the reference below shares no code with
 * what it checks). */
static double half_value(uint16_t h, fe_dtype dt) {
    if (dt == FE_DTYPE_BF16) {
        uint32_t u = (uint32_t)h << 16;
        float f;
        memcpy(&f, &u, sizeof f);
        return f;
    }
    int e = (h >> 10) & 0x1f, mant = h & 0x3ff;
    double v = e == 0 ? ldexp(mant, -24) : ldexp(1024 + mant, e - 25);
    g_assert_cmpint(e, !=, 0x1f);
    return h & 0x8000 ? -v : v;
}

/* A matmul weight or embedding table in f16 / bf16 (the model file's own
 * numbers, kept by the CPU loader for the decoder) gives exactly what the f32
 * copy of the same numbers gives: widening is exact and the sums run in the
 * same order. Both the dot-product path (m <= fe_cpu_matmul_exact_rows: 4
 * portable, 32 with AVX2 or AVX-512) and the GEMM path beyond it. Both
 * results are also held against a double-precision sum of the 16-bit
 * values decoded independently (the two paths could share one mistake). */
static void test_matmul_half_weights(void) {
    const int shapes[][3] = {{1, 256, 256}, {1, 601, 255}, {3, 1024, 256}, {4, 37, 19},
                             {9, 45, 71},   {1, 3, 5},      {2, 38, 23},    {5, 42, 264}};
    for (int dt = 0; dt < 2; dt++) {
        fe_dtype half = dt == 0 ? FE_DTYPE_F16 : FE_DTYPE_BF16;
        for (size_t i = 0; i < G_N_ELEMENTS(shapes); i++) {
            arena_setup();
            int m = shapes[i][0], n = shapes[i][1], k = shapes[i][2];
            int64_t xs[2] = {m, k}, ws[2] = {n, k}, bs[1] = {n}, ys[2] = {m, n};
            FeTensor x = make_rand(2, xs, "x", -1, 1), w32 = make_rand(2, ws, "w32", -1, 1);
            FeTensor w16 = make(half, 2, ws, "w16"), b = make_rand(1, bs, "b", -1, 1);
            FeTensor y32 = make(FE_DTYPE_F32, 2, ys, "y32"), y16 = make(FE_DTYPE_F32, 2, ys, "y16");
            float *wd = fe_tensor_data(&w32);
            uint16_t *hd = fe_tensor_data(&w16);
            for (int64_t j = 0; j < (int64_t)n * k; j++) {
                /* round the f32 copy to the half value, so both hold one number */
                hd[j] = half == FE_DTYPE_F16 ? fe_f32_to_f16(wd[j]) : fe_f32_to_bf16(wd[j]);
                wd[j] = half == FE_DTYPE_F16 ? fe_f16_to_f32(hd[j]) : fe_bf16_to_f32(hd[j]);
            }
            for (int gelu = 0; gelu < 2; gelu++) {
                g_assert_cmpint(fe_matmul(&y32, &x, &w32, &b, gelu), ==, FE_OK);
                g_assert_cmpint(fe_matmul(&y16, &x, &w16, &b, gelu), ==, FE_OK);
                g_assert_cmpmem(fe_tensor_data(&y16), (size_t)m * n * sizeof(float),
                                fe_tensor_data(&y32), (size_t)m * n * sizeof(float));
                double *ref = g_new(double, (size_t)m * n);
                const float *xd = fe_tensor_data(&x), *bd = fe_tensor_data(&b);
                for (int r = 0; r < m; r++)
                    for (int c = 0; c < n; c++) {
                        double sum = bd[c];
                        for (int p = 0; p < k; p++)
                            sum += (double)xd[(size_t)r * k + p] * half_value(hd[(size_t)c * k + p], half);
                        ref[(size_t)r * n + c] = gelu ? gelu_ref(sum) : sum;
                    }
                char what[64];
                snprintf(what, sizeof what, "half matmul %dx%dx%d dtype=%d gelu=%d", m, n, k, half, gelu);
                assert_close(what, fe_tensor_data(&y16), ref, (size_t)m * n, 2e-5 * k, 1e-5);
                g_free(ref);
            }
            /* the embedding: row id of the table plus the position row */
            int64_t ps[2] = {3, k}, is[1] = {2}, es[2] = {2, k};
            FeTensor pos = make_rand(2, ps, "pos", -1, 1), ids = make(FE_DTYPE_I32, 1, is, "ids");
            FeTensor e32 = make(FE_DTYPE_F32, 2, es, "e32"), e16 = make(FE_DTYPE_F32, 2, es, "e16");
            int32_t *idd = fe_tensor_data(&ids);
            idd[0] = n - 1;
            idd[1] = 0;
            g_assert_cmpint(fe_embed(&e32, &w32, &pos, &ids, 2), ==, FE_OK);
            g_assert_cmpint(fe_embed(&e16, &w16, &pos, &ids, 2), ==, FE_OK);
            g_assert_cmpmem(fe_tensor_data(&e16), 2 * (size_t)k * sizeof(float),
                            fe_tensor_data(&e32), 2 * (size_t)k * sizeof(float));
        }
    }
}

/* Up to fe_cpu_matmul_exact_rows(dtype) rows, each row of a matmul has the
 * bits it has alone (batched decoding gives the serial tokens because of
 * it): every m up to that count on an odd shape, and the shapes of a decode
 * step with n, k tails, threaded (2 threads split the larger ones by weight
 * rows), for f32, f16 and bf16 weights, with bias and GELU. */
static void check_matmul_rows_alone(int m, int n, int k, fe_dtype wdt, bool gelu) {
    arena_setup();
    int64_t xs[2] = {m, k}, ws[2] = {n, k}, bs[1] = {n}, ys[2] = {m, n};
    int64_t x1s[2] = {1, k}, y1s[2] = {1, n};
    FeTensor x = make_rand(2, xs, "x", -1, 1), w32 = make_rand(2, ws, "w32", -1, 1);
    FeTensor b = make_rand(1, bs, "b", -1, 1), y = make(FE_DTYPE_F32, 2, ys, "y");
    FeTensor x1 = make(FE_DTYPE_F32, 2, x1s, "x1"), y1 = make(FE_DTYPE_F32, 2, y1s, "y1");
    FeTensor w = w32;
    if (wdt != FE_DTYPE_F32) {
        w = make(wdt, 2, ws, "w16");
        const float *wd = fe_tensor_data(&w32);
        uint16_t *hd = fe_tensor_data(&w);
        for (int64_t j = 0; j < (int64_t)n * k; j++)
            hd[j] = wdt == FE_DTYPE_F16 ? fe_f32_to_f16(wd[j]) : fe_f32_to_bf16(wd[j]);
    }
    g_assert_cmpint(fe_matmul(&y, &x, &w, &b, gelu), ==, FE_OK);
    const float *xd = fe_tensor_data(&x), *yd = fe_tensor_data(&y);
    for (int r = 0; r < m; r++) {
        memcpy(fe_tensor_data(&x1), xd + (size_t)r * k, (size_t)k * sizeof(float));
        g_assert_cmpint(fe_matmul(&y1, &x1, &w, &b, gelu), ==, FE_OK);
        if (memcmp(fe_tensor_data(&y1), yd + (size_t)r * n, (size_t)n * sizeof(float)) != 0)
            g_test_message("matmul %dx%dx%d %s gelu=%d: row %d differs from the row alone", m,
                           n, k, fe_dtype_name(wdt), gelu, r);
        g_assert_cmpmem(fe_tensor_data(&y1), (size_t)n * sizeof(float), yd + (size_t)r * n,
                        (size_t)n * sizeof(float));
    }
}

static void test_matmul_exact_rows(void) {
    /* the last shape splits across the 2 threads at any cap (m n k >= 2^21 with m = 4 on
     * the portable loops), so each task's widened-weight slice runs threaded too */
    const int shapes[][3] = {{5, 33, 17}, {9, 45, 71}, {32, 601, 255}, {32, 1024, 256},
                             {32, 2048, 512}};
    const fe_dtype dtypes[] = {FE_DTYPE_F32, FE_DTYPE_F16, FE_DTYPE_BF16};
    int saved = fe_cpu_get_threads();
    fe_cpu_set_threads(2);
    for (size_t d = 0; d < G_N_ELEMENTS(dtypes); d++) {
        int exact = fe_cpu_matmul_exact_rows(dtypes[d]);
        g_assert_cmpint(exact, >=, 4);
        g_test_message("%s weights: %d exact rows", fe_dtype_name(dtypes[d]), exact);
        for (int m = 1; m <= exact; m++)
            check_matmul_rows_alone(m, 33, 17, dtypes[d], m & 1);
        for (size_t i = 0; i < G_N_ELEMENTS(shapes); i++)
            check_matmul_rows_alone(MIN(shapes[i][0], exact), shapes[i][1], shapes[i][2],
                                    dtypes[d], i & 1);
    }
    fe_cpu_set_threads(saved);
}

/* FE_PRECISION_BF16 on the CPU: a bf16_dot weight is multiplied in bf16
 * (the input rows rounded to bf16, vdpbf16ps, f32 sums). Against a double
 * reference of the same bf16 numbers the sums are f32-accurate; against the
 * exact f32 path (unrounded inputs) within bf16's rounding of the inputs;
 * and a row gives the same bits whatever rows share the call (batched
 * decoding must give the serial tokens). Decode-path shapes (m <= 32: tails
 * of k, of n, 1-3 leftover rows, the threaded split) and one GEMM-path shape
 * (m > 32: the weight widened exactly, no bf16 dot). */
static void test_matmul_bf16_dot(void) {
    if (!fe_cpu_has_bf16_dot()) {
        g_test_skip("this CPU has no AVX512_BF16 (with AVX-512F/BW/VL): the bf16 dot "
                    "path is not used here, the CPU runs bf16 requests in fp32");
        return;
    }
    const int shapes[][3] = {{1, 256, 256}, {1, 601, 255}, {2, 64, 1024}, {3, 37, 19},
                             {4, 1024, 256}, {7, 45, 71},  {9, 2048, 256}, {32, 130, 96},
                             {33, 40, 64},   {1, 3, 5},    {50, 13, 70}, {97, 8, 18},
                             {49, 45, 2},    {33, 40, 63}};
    int saved = fe_cpu_get_threads();
    fe_cpu_set_threads(2);
    for (size_t i = 0; i < G_N_ELEMENTS(shapes); i++) {
        arena_setup();
        int m = shapes[i][0], n = shapes[i][1], k = shapes[i][2];
        int64_t xs[2] = {m, k}, ws[2] = {n, k}, bs[1] = {n}, ys[2] = {m, n};
        int64_t x1s[2] = {1, k}, y1s[2] = {1, n};
        FeTensor x = make_rand(2, xs, "x", -1, 1), w32 = make_rand(2, ws, "w32", -1, 1);
        FeTensor wb = make(FE_DTYPE_BF16, 2, ws, "wb"), b = make_rand(1, bs, "b", -1, 1);
        FeTensor y32 = make(FE_DTYPE_F32, 2, ys, "y32"), yb = make(FE_DTYPE_F32, 2, ys, "yb");
        FeTensor x1 = make(FE_DTYPE_F32, 2, x1s, "x1"), y1 = make(FE_DTYPE_F32, 2, y1s, "y1");
        wb.bf16_dot = true;
        float *wd = fe_tensor_data(&w32);
        const float *xd = fe_tensor_data(&x), *bd = fe_tensor_data(&b);
        uint16_t *hd = fe_tensor_data(&wb);
        for (int64_t j = 0; j < (int64_t)n * k; j++) {
            hd[j] = fe_f32_to_bf16(wd[j]);
            wd[j] = fe_bf16_to_f32(hd[j]);
        }
        g_assert_cmpint(fe_matmul(&y32, &x, &w32, &b, false), ==, FE_OK);
        g_assert_cmpint(fe_matmul(&yb, &x, &wb, &b, false), ==, FE_OK);
        const float *gy = fe_tensor_data(&yb), *ry = fe_tensor_data(&y32);
        double max_rel = 0.0;
        for (int r = 0; r < m; r++)
            for (int c = 0; c < n; c++) {
                double s = bd[c], s_rounded = bd[c], mag = fabs(bd[c]);
                for (int p = 0; p < k; p++) {
                    double xv = xd[r * k + p], xr = fe_bf16_to_f32(fe_f32_to_bf16(xd[r * k + p]));
                    s += xv * wd[c * k + p];
                    s_rounded += xr * wd[c * k + p];
                    mag += fabs(xv * wd[c * k + p]);
                }
                double got = gy[r * n + c];
                /* m > 32 is the bf16 GEMM (fe-cpu-bf16.c) for an even k, the
                 * exact f32 result off the widened weight for an odd one */
                double want = m > 32 && k % 2 ? s : s_rounded;
                if (!(fabs(got - want) <= 1e-6 * mag + 1e-6))
                    g_error("bf16 dot %dx%dx%d [%d,%d]: %.9g, reference %.9g (sum |x w| %.3g)",
                            m, n, k, r, c, got, want, mag);
                /* against the f32 path: bf16 rounds each input by at most 2^-9 */
                if (!(fabs(got - ry[r * n + c]) <= (1.0 / 256) * mag + 1e-5))
                    g_error("bf16 dot %dx%dx%d [%d,%d]: %.9g, f32 path %.9g", m, n, k, r, c, got,
                            (double)ry[r * n + c]);
                if (mag > 0)
                    max_rel = fmax(max_rel, fabs(got - ry[r * n + c]) / mag);
            }
        if (g_test_verbose())
            g_printerr("bf16 dot %dx%dx%d: max |bf16 - f32| / sum|x w| = %.2e\n", m, n, k, max_rel);
        /* row by row alone: the same bits */
        for (int r = 0; r < m; r++) {
            memcpy(fe_tensor_data(&x1), xd + (size_t)r * k, (size_t)k * sizeof(float));
            g_assert_cmpint(fe_matmul(&y1, &x1, &wb, &b, false), ==, FE_OK);
            if (m <= 32)
                g_assert_cmpmem(fe_tensor_data(&y1), (size_t)n * sizeof(float), gy + (size_t)r * n,
                                (size_t)n * sizeof(float));
        }
    }
    fe_cpu_set_threads(saved);
}

/* The worker pool: every task runs exactly once per call, whatever the task
 * count, when the caller finishes before a helper wakes, and when two threads
 * call at once (the second runs inline). */
typedef struct {
    int *hits;
    int n;
} PoolJob;

static void pool_task(void *ctx, int task) {
    PoolJob *j = ctx;
    g_assert_cmpint(task, >=, 0);
    g_assert_cmpint(task, <, j->n);
    __atomic_fetch_add(&j->hits[task], 1, __ATOMIC_RELAXED);
}

static gpointer pool_hammer(gpointer data) {
    int rounds = GPOINTER_TO_INT(data);
    int hits[64];
    for (int r = 0; r < rounds; r++) {
        int n = 1 + r % 64;
        memset(hits, 0, sizeof hits);
        PoolJob j = {hits, n};
        fe_cpu_parallel_for(n, pool_task, &j);
        for (int t = 0; t < n; t++)
            g_assert_cmpint(hits[t], ==, 1);
    }
    return NULL;
}

/* The model loader's bulk conversions (fe_cpu_widen_f16, fe_cpu_round_bf16)
 * give the bits of the scalar fe_f16_to_f32 / fe_f32_to_bf16: every f16,
 * and f32 patterns covering zeros, subnormals, round-to-even ties, the
 * carry into the exponent, infinities and NaNs, at lengths that leave a
 * masked tail. */
static uint32_t bits_of(float f) {
    uint32_t u;
    memcpy(&u, &f, sizeof u);
    return u;
}

/* Host blocks of 2 MiB and more are mapped on their own, 2 MiB aligned (so
 * that the ones advised onto huge pages get them from the first byte), the
 * rest come from the heap; each is freed the way it was made, in any order,
 * and the per-thread scratch grows through the same allocator. */
static void test_cpu_big_blocks(void) {
    const size_t mib = (size_t)1 << 20;
    const size_t sizes[] = {100, 2 * mib - 64, 2 * mib, 3 * mib + 5, 9 * mib, 64 * 1024};
    enum { N = sizeof sizes / sizeof sizes[0] };
    FeBuffer *b[N];
    for (int round = 0; round < 2; round++) {
        for (int i = 0; i < N; i++) {
            g_assert_cmpint(fe_buffer_new(fe_cpu_device(), sizes[i], &b[i]), ==, FE_OK);
            uintptr_t a = (uintptr_t)b[i]->data;
            g_assert_cmpuint(a % 64, ==, 0);
            if (sizes[i] >= 2 * mib)
                g_assert_cmpuint(a % (2 * mib), ==, 0);
            memset(b[i]->data, 0x5a + i, sizes[i]);
        }
        for (int i = 0; i < N; i++) { /* no block overlaps another */
            const unsigned char *d = b[i]->data;
            g_assert_cmpuint(d[0], ==, (unsigned char)(0x5a + i));
            g_assert_cmpuint(d[sizes[i] - 1], ==, (unsigned char)(0x5a + i));
        }
        /* freed out of order: odd ones first, then the even ones backwards */
        for (int i = 1; i < N; i += 2)
            fe_buffer_free(b[i]);
        for (int i = (N - 1) & ~1; i >= 0; i -= 2)
            fe_buffer_free(b[i]);
    }
    /* the scratch grows from heap-sized to mapped and stays usable */
    float *s = fe_cpu_scratch(0, 1000);
    g_assert_nonnull(s);
    s[999] = 1.0f;
    s = fe_cpu_scratch(0, 3 * mib / sizeof(float) + 1);
    g_assert_nonnull(s);
    g_assert_cmpuint((uintptr_t)s % 64, ==, 0);
    s[3 * mib / sizeof(float)] = 2.0f;
    g_assert_true(fe_cpu_scratch(0, 10) == s); /* never shrinks */
}

static void test_cpu_convert(void) {
    enum { NH = 65536 };
    uint16_t *h = g_new(uint16_t, NH + 1);
    float *f = g_new(float, NH + 1);
    for (int i = 0; i < NH; i++)
        h[i] = (uint16_t)i;
    for (size_t n = NH; n + 16 > NH; n -= 5) { /* full vectors and a ragged tail */
        memset(f, 0xff, (NH + 1) * sizeof(float));
        fe_cpu_widen_f16(h, f, n);
        for (size_t i = 0; i < n; i++) {
            float want = fe_f16_to_f32(h[i]);
            if (isnan(want))
                g_assert_true(isnan(f[i]));
            else
                g_assert_cmphex(bits_of(f[i]), ==, bits_of(want));
        }
        g_assert_cmphex(bits_of(f[n]), ==, 0xffffffffu); /* nothing past the end */
    }

    enum { NF = 1 << 17 };
    float *x = g_new(float, NF);
    uint16_t *b = g_new(uint16_t, NF + 1);
    static const uint32_t special[] = {0x00000000u, 0x80000000u, 0x00000001u, 0x00008000u,
                                       0x00018000u, 0x0000ffffu, 0x007fffffu, 0x00800000u,
                                       0x3f808000u, 0x3f818000u, 0x3f80ffffu, 0x3f817fffu,
                                       0x7f7fffffu, 0x7f7f8000u, 0x7f800000u, 0xff800000u,
                                       0x7f800001u, 0x7fc00000u, 0xffffffffu, 0x7fbfffffu};
    size_t ns = sizeof special / sizeof *special;
    for (size_t i = 0; i < NF; i++) {
        uint32_t u = i < ns ? special[i] : (uint32_t)i * 0x9e3779b1u; /* spread over all patterns */
        if (i >= ns && i % 7 == 0)
            u = (u & 0xffff0000u) | 0x8000u; /* exact ties */
        memcpy(&x[i], &u, sizeof u);
    }
    for (size_t n = NF; n + 16 > NF; n -= 3) {
        b[n] = 0xabcd;
        fe_cpu_round_bf16(x, b, n);
        for (size_t i = 0; i < n; i++)
            g_assert_cmphex(b[i], ==, fe_f32_to_bf16(x[i]));
        g_assert_cmphex(b[n], ==, 0xabcd);
    }
    fe_cpu_round_bf16(x, b, 0);
    fe_cpu_widen_f16(h, f, 0);

    /* The page advice only ever changes how memory is backed. */
    size_t big = (size_t)5 << 20;
    unsigned char *p = malloc(big);
    g_assert_nonnull(p);
    fe_cpu_advise_huge(p, big);
    memset(p, 7, big);
    g_assert_cmpuint(p[big - 1], ==, 7);
    fe_cpu_advise_huge(p + 1, 100);
    fe_cpu_advise_huge(NULL, 0);
    free(p);
    g_free(h);
    g_free(f);
    g_free(x);
    g_free(b);
}

static void test_pool_parallel_for(void) {
    int saved = fe_cpu_get_threads();
    for (int threads = 1; threads <= 4; threads++) {
        fe_cpu_set_threads(threads);
        pool_hammer(GINT_TO_POINTER(3000));
        GThread *a = g_thread_new("pool-a", pool_hammer, GINT_TO_POINTER(2000));
        GThread *b = g_thread_new("pool-b", pool_hammer, GINT_TO_POINTER(2000));
        g_thread_join(a);
        g_thread_join(b);
    }
    fe_cpu_set_threads(saved);
}

static void test_gelu(void) {
    arena_setup();
    int64_t s[2] = {3, 1001};
    FeTensor x = make_rand(2, s, "x", -8, 8), y = make(FE_DTYPE_F32, 2, s, "y");
    float *xd = fe_tensor_data(&x);
    xd[0] = 0.0f;
    xd[1] = -0.0f;
    xd[2] = 1e-20f;
    xd[3] = 50.0f;
    xd[4] = -50.0f;
    g_assert_cmpint(fe_gelu(&y, &x), ==, FE_OK);
    double ref[3 * 1001];
    for (int i = 0; i < 3 * 1001; i++)
        ref[i] = gelu_ref(xd[i]);
    /* 3e-6 absolute: for x near -5.5, 0.5*x*(1+erf) cancels, and a few
     * float ulps of erf near -1 (6e-8 each) times |x|/2 reach 1e-6 (seed
     * R02Se1f6f4f9a5d6bc64bd07c1420982a4cf failed at 1e-6: 3.07e-7 against
     * -6.98e-7); a wrong erf or a wrong constant is off by far more. */
    assert_close("gelu", fe_tensor_data(&y), ref, 3 * 1001, 3e-6, 2e-6);
    /* in place */
    g_assert_cmpint(fe_gelu(&x, &x), ==, FE_OK);
    assert_close("gelu in place", fe_tensor_data(&x), ref, 3 * 1001, 3e-6, 2e-6);
}

/* A 3x3 "same" convolution in double: ref[] (ReLU applied when asked) and,
 * when mag is not NULL, each output's sum of |terms| for a rounding bound.
 * round_x_bf16 rounds the inputs to bf16 first, as the bf16 path packs them. */
static void conv3x3_reference(const float *xd, const float *wd, const float *bd, int batch, int cin,
                              int cout, int h, int w, bool relu, bool round_x_bf16, double *ref,
                              double *mag) {
    for (int bi = 0; bi < batch; bi++)
        for (int co = 0; co < cout; co++)
            for (int oy = 0; oy < h; oy++)
                for (int ox = 0; ox < w; ox++) {
                    double s = bd ? bd[co] : 0.0, m = bd ? fabs(bd[co]) : 0.0;
                    for (int ci = 0; ci < cin; ci++)
                        for (int ky = 0; ky < 3; ky++)
                            for (int kx = 0; kx < 3; kx++) {
                                int iy = oy + ky - 1, ix = ox + kx - 1;
                                if (iy < 0 || iy >= h || ix < 0 || ix >= w)
                                    continue;
                                float xv = xd[((bi * cin + ci) * h + iy) * w + ix];
                                double xr = round_x_bf16 ? fe_bf16_to_f32(fe_f32_to_bf16(xv)) : xv;
                                double t = xr * wd[((co * cin + ci) * 3 + ky) * 3 + kx];
                                s += t;
                                m += fabs(t);
                            }
                    size_t i = (((size_t)bi * cout + co) * h + oy) * w + ox;
                    ref[i] = relu && s < 0 ? 0.0 : s;
                    if (mag)
                        mag[i] = m;
                }
}

static void check_conv(int batch, int cin, int cout, int h, int w, bool bias, bool relu) {
    arena_setup();
    int64_t xs[4] = {batch, cin, h, w}, ws[4] = {cout, cin, 3, 3}, bs[1] = {cout},
            ys[4] = {batch, cout, h, w};
    FeTensor x = make_rand(4, xs, "x", -1, 1), wt = make_rand(4, ws, "w", -0.5f, 0.5f);
    FeTensor b = make_rand(1, bs, "b", -1, 1), y = make(FE_DTYPE_F32, 4, ys, "y");
    g_assert_cmpint(fe_conv3x3(&y, &x, &wt, bias ? &b : NULL, relu), ==, FE_OK);
    size_t n = (size_t)batch * cout * h * w;
    double *ref = g_new(double, n);
    conv3x3_reference(fe_tensor_data(&x), fe_tensor_data(&wt), bias ? fe_tensor_data(&b) : NULL,
                      batch, cin, cout, h, w, relu, false, ref, NULL);
    char what[80];
    snprintf(what, sizeof what, "conv3x3 b%d %d->%d %dx%d bias=%d relu=%d", batch, cin, cout, h,
             w, bias, relu);
    assert_close(what, fe_tensor_data(&y), ref, n, 1e-5 * cin * 9, 1e-5);
    g_free(ref);
}

/* The bf16 convolution (FE_PRECISION_BF16, fe-cpu-bf16.c): the sums of the
 * bf16-rounded inputs and weights, within f32 rounding of a double reference;
 * the same weight without bf16_dot runs the f32 path on its widened values. */
static void check_conv_bf16(int batch, int cin, int cout, int h, int w, bool bias, bool relu) {
    arena_setup();
    int64_t xs[4] = {batch, cin, h, w}, ws[4] = {cout, cin, 3, 3}, bs[1] = {cout},
            ys[4] = {batch, cout, h, w};
    FeTensor x = make_rand(4, xs, "x", -1, 1), w32 = make_rand(4, ws, "w", -0.5f, 0.5f);
    FeTensor wb = make(FE_DTYPE_BF16, 4, ws, "wb"), b = make_rand(1, bs, "b", -1, 1);
    FeTensor y = make(FE_DTYPE_F32, 4, ys, "y"), yw = make(FE_DTYPE_F32, 4, ys, "yw");
    FeTensor y32 = make(FE_DTYPE_F32, 4, ys, "y32");
    float *wd = fe_tensor_data(&w32);
    uint16_t *hd = fe_tensor_data(&wb);
    for (int64_t j = 0; j < fe_tensor_nelements(&w32); j++) {
        hd[j] = fe_f32_to_bf16(wd[j]);
        wd[j] = fe_bf16_to_f32(hd[j]);
    }
    const float *bp = bias ? fe_tensor_data(&b) : NULL;
    /* widened: the f32 path's bits */
    g_assert_cmpint(fe_conv3x3(&y32, &x, &w32, bias ? &b : NULL, relu), ==, FE_OK);
    g_assert_cmpint(fe_conv3x3(&yw, &x, &wb, bias ? &b : NULL, relu), ==, FE_OK);
    size_t n = (size_t)batch * cout * h * w;
    g_assert_cmpmem(fe_tensor_data(&yw), n * sizeof(float), fe_tensor_data(&y32),
                    n * sizeof(float));
    wb.bf16_dot = true;
    g_assert_cmpint(fe_conv3x3(&y, &x, &wb, bias ? &b : NULL, relu), ==, FE_OK);
    const float *got = fe_tensor_data(&y);
    double *ref = g_new(double, n), *mag = g_new(double, n);
    conv3x3_reference(fe_tensor_data(&x), wd, bp, batch, cin, cout, h, w, relu, true, ref, mag);
    for (size_t i = 0; i < n; i++)
        if (!(fabs(got[i] - ref[i]) <= 1e-6 * mag[i] + 1e-6))
            g_error("bf16 conv b%d %d->%d %dx%d [output %zu]: %.9g, reference %.9g", batch, cin,
                    cout, h, w, i, got[i], ref[i]);
    g_free(ref);
    g_free(mag);
}

static void test_conv3x3_bf16(void) {
    if (!fe_cpu_has_bf16_dot()) {
        g_test_skip("this CPU has no AVX512_BF16: FE_PRECISION_BF16 keeps the f32 convolutions");
        return;
    }
    g_assert_false(fe_cpu_bf16_conv_ok(1));
    g_assert_false(fe_cpu_bf16_conv_ok(3));
    int saved = fe_cpu_get_threads();
    for (int threads = 1; threads <= 2; threads++) {
        fe_cpu_set_threads(threads);
        check_conv_bf16(1, 2, 3, 5, 37, true, true);    /* rows cross the 48-pixel panels */
        check_conv_bf16(2, 4, 13, 3, 50, false, true);  /* M tail (13 = 8 + 5), batch */
        check_conv_bf16(1, 6, 8, 1, 1, true, false);    /* one pixel */
        check_conv_bf16(1, 16, 9, 7, 16, true, true);   /* rows of exactly 16 */
        check_conv_bf16(1, 34, 17, 9, 33, true, false); /* K = 306 */
        /* several tasks of several panels: K = 1152 */
        check_conv_bf16(1, 128, 16, 6, 61, true, true);
    }
    fe_cpu_set_threads(saved);
    /* an odd Cin*9 is refused (the loader keeps such a weight f32) */
    arena_setup();
    int64_t xs[4] = {1, 3, 4, 4}, ws[4] = {2, 3, 3, 3}, ys[4] = {1, 2, 4, 4};
    FeTensor x = make_rand(4, xs, "x", -1, 1), wb = make(FE_DTYPE_BF16, 4, ws, "wb");
    FeTensor y = make(FE_DTYPE_F32, 4, ys, "y");
    g_assert_cmpint(fe_cpu_conv3x3_bf16(fe_tensor_data(&x), 3, 4, 4, fe_tensor_data(&wb), NULL,
                                        false, 2, fe_tensor_data(&y)),
                    ==, FE_ERR_UNSUPPORTED);
}

static void test_conv3x3(void) {
    check_conv(1, 1, 7, 17, 23, true, true);    /* direct path */
    check_conv(2, 2, 5, 9, 1, false, false);    /* direct, one column */
    check_conv(2, 3, 9, 11, 13, true, true);    /* im2col */
    check_conv(1, 5, 4, 1, 7, true, false);     /* one row */
    check_conv(1, 33, 17, 19, 45, false, true);
    /* Big enough for several im2col tiles (K = 1152 -> 910 pixels a tile). */
    check_conv(1, 128, 8, 33, 41, true, true);
}

/* FNV-1a of n floats' bits, as text. */
static void hash_floats(GString *out, const char *what, const float *p, size_t n) {
    uint64_t h = 1469598103934665603ull;
    const unsigned char *b = (const unsigned char *)p;
    for (size_t i = 0; i < n * sizeof(float); i++)
        h = (h ^ b[i]) * 1099511628211ull;
    g_string_append_printf(out, "%s=%016llx\n", what, (unsigned long long)h);
}

/* The element-wise ops on fixed inputs (GELU with its clamp and special
 * values, the direct convolution with and without bias and ReLU, add, layer
 * norm's last pass, max pooling 1 and 2 wide): their outputs' hashes. */
static GString *elementwise_hashes(void) {
    GString *out = g_string_new(NULL);
    GRand *rand = g_rand_new_with_seed(20261127);
    arena_setup();
    int64_t gs[1] = {1003}, cs[4] = {2, 2, 9, 45}, ws[4] = {5, 2, 3, 3}, bs[1] = {5},
            ys[4] = {2, 5, 9, 45}, ls[2] = {7, 259}, lg[1] = {259};
    FeTensor gx = make(FE_DTYPE_F32, 1, gs, "gx"), gy = make(FE_DTYPE_F32, 1, gs, "gy");
    FeTensor x = make(FE_DTYPE_F32, 4, cs, "x"), w = make(FE_DTYPE_F32, 4, ws, "w");
    FeTensor b = make(FE_DTYPE_F32, 1, bs, "b"), y = make(FE_DTYPE_F32, 4, ys, "y");
    FeTensor lx = make(FE_DTYPE_F32, 2, ls, "lx"), lgm = make(FE_DTYPE_F32, 1, lg, "lg");
    FeTensor lb = make(FE_DTYPE_F32, 1, lg, "lb"), ly = make(FE_DTYPE_F32, 2, ls, "ly");
    FeTensor *all[] = {&gx, &x, &w, &b, &lx, &lgm, &lb};
    for (size_t t = 0; t < G_N_ELEMENTS(all); t++) {
        float *d = fe_tensor_data(all[t]);
        for (int64_t i = 0; i < fe_tensor_nelements(all[t]); i++)
            d[i] = (float)g_rand_double_range(rand, -6, 6);
    }
    float *gd = fe_tensor_data(&gx);
    const float special[] = {0.0f, -0.0f, 1e-20f, 50.0f, -50.0f, 5.42f, -5.42f, NAN, INFINITY,
                             -INFINITY, 3.8325068f, -3.8325068f};
    for (size_t i = 0; i < G_N_ELEMENTS(special); i++)
        gd[100 + 7 * i] = special[i];
    g_assert_cmpint(fe_gelu(&gy, &gx), ==, FE_OK);
    hash_floats(out, "gelu", fe_tensor_data(&gy), 1003);
    for (int variant = 0; variant < 4; variant++) {
        g_assert_cmpint(fe_conv3x3(&y, &x, &w, variant & 1 ? &b : NULL, variant & 2), ==, FE_OK);
        char name[32];
        snprintf(name, sizeof name, "conv%d", variant);
        hash_floats(out, name, fe_tensor_data(&y), (size_t)fe_tensor_nelements(&y));
    }
    g_assert_cmpint(fe_add(&ly, &lx, &lb), ==, FE_OK);
    hash_floats(out, "add", fe_tensor_data(&ly), 7 * 259);
    g_assert_cmpint(fe_layernorm(&ly, &lx, &lgm, &lb, 1e-5f), ==, FE_OK);
    hash_floats(out, "layernorm", fe_tensor_data(&ly), 7 * 259);
    for (int pw = 1; pw <= 2; pw++) {
        int64_t ps[4] = {2, 5, 9 / 2, 45 / pw};
        FeTensor py = make(FE_DTYPE_F32, 4, ps, "py");
        g_assert_cmpint(fe_maxpool(&py, &y, 2, pw), ==, FE_OK);
        hash_floats(out, pw == 1 ? "maxpool21" : "maxpool22", fe_tensor_data(&py),
                    (size_t)fe_tensor_nelements(&py));
    }
    g_rand_free(rand);
    return out;
}

/* The AVX2 element-wise loops give the portable loops' bits (they do the
 * same operations in the same order, no FMA): these outputs decide the
 * model's readings, and a paper read on an AVX2 CPU must read as on any. */
static void test_elementwise_same_bits(void) {
    if (g_test_subprocess()) {
        GString *h = elementwise_hashes();
        const char *to = g_getenv("FE_TEST_HASHES_TO");
        if (to)
            g_assert_true(g_file_set_contents(to, h->str, -1, NULL));
        else
            printf("%s", h->str);
        g_string_free(h, TRUE);
        return;
    }
#if defined(__x86_64__) && defined(__linux__)
    if (!cpuinfo_has_flag("avx2") || !cpuinfo_has_flag("fma"))
        g_test_message("no AVX2+FMA here: both runs take the portable loops");
    /* Both sides in children with FE_CPU_ISA set: on an AVX-512 host this
     * process takes the AVX-512 kernels, which were never bit-identical
     * (the direct convolution fuses its multiply-adds, layer norm sums 16
     * lanes at a time); the claim is about the AVX2 loops. The AVX2 child
     * writes its hashes to a file, the portable child's stdout must match. */
    gchar *old = g_strdup(g_getenv("FE_CPU_ISA")), *path = NULL, *here = NULL;
    int fd = g_file_open_tmp("fe-same-bits-XXXXXX", &path, NULL);
    g_assert_cmpint(fd, >=, 0);
    close(fd);
    g_setenv("FE_CPU_ISA", "avx2", TRUE);
    g_setenv("FE_TEST_HASHES_TO", path, TRUE);
    g_test_trap_subprocess(NULL, 0, G_TEST_SUBPROCESS_DEFAULT);
    g_test_trap_assert_passed();
    g_unsetenv("FE_TEST_HASHES_TO");
    g_assert_true(g_file_get_contents(path, &here, NULL, NULL));
    g_assert_true(strstr(here, "layernorm=") != NULL);
    g_setenv("FE_CPU_ISA", "portable", TRUE);
    g_test_trap_subprocess(NULL, 0, G_TEST_SUBPROCESS_DEFAULT);
    g_test_trap_assert_passed();
    g_test_trap_assert_stdout(here);
    if (old)
        g_setenv("FE_CPU_ISA", old, TRUE);
    else
        g_unsetenv("FE_CPU_ISA");
    g_unlink(path);
    g_free(old);
    g_free(path);
    g_free(here);
#else
    g_test_skip("FE_CPU_ISA caps x86 instruction sets");
#endif
}

static void test_maxpool(void) {
    const int cases[][4] = {{9, 13, 2, 2}, {8, 7, 2, 1}, {5, 5, 1, 1}, {7, 9, 3, 2},
                            {4, 77, 2, 2}, {6, 45, 2, 1}, {3, 64, 2, 2}, {4, 33, 1, 3}};
    for (size_t c = 0; c < G_N_ELEMENTS(cases); c++) {
        arena_setup();
        int h = cases[c][0], w = cases[c][1], ph = cases[c][2], pw = cases[c][3];
        int oh = h / ph, ow = w / pw;
        int64_t xs[4] = {2, 3, h, w}, ys[4] = {2, 3, oh, ow};
        FeTensor x = make_rand(4, xs, "x", -5, 5), y = make(FE_DTYPE_F32, 4, ys, "y");
        g_assert_cmpint(fe_maxpool(&y, &x, ph, pw), ==, FE_OK);
        const float *xd = fe_tensor_data(&x);
        double *ref = g_new(double, 6 * oh * ow);
        for (int p = 0; p < 6; p++)
            for (int oy = 0; oy < oh; oy++)
                for (int ox = 0; ox < ow; ox++) {
                    double m = -INFINITY;
                    for (int dy = 0; dy < ph; dy++)
                        for (int dx = 0; dx < pw; dx++)
                            m = fmax(m, xd[(p * h + oy * ph + dy) * w + ox * pw + dx]);
                    ref[(p * oh + oy) * ow + ox] = m;
                }
        assert_close("maxpool", fe_tensor_data(&y), ref, (size_t)6 * oh * ow, 0, 0);
        g_free(ref);
    }
    arena_setup();
    int64_t xs[4] = {1, 1, 4, 4}, bad[4] = {1, 1, 3, 2};
    FeTensor x = make_rand(4, xs, "x", 0, 1), y = make(FE_DTYPE_F32, 4, bad, "y");
    g_assert_cmpint(fe_maxpool(&y, &x, 2, 2), ==, FE_ERR_INVALID_ARGUMENT);
    g_assert_nonnull(strstr(fe_last_error(), "fe_maxpool: output 'y'"));
}

static void test_nchw_to_nlc(void) {
    arena_setup();
    int b = 2, c = 37, h = 3, w = 45;
    int64_t xs[4] = {b, c, h, w}, ys[3] = {b, h * w, c};
    FeTensor x = make_rand(4, xs, "x", -1, 1), y = make(FE_DTYPE_F32, 3, ys, "y");
    g_assert_cmpint(fe_nchw_to_nlc(&y, &x), ==, FE_OK);
    const float *xd = fe_tensor_data(&x);
    double *ref = g_new(double, (size_t)b * c * h * w);
    for (int bi = 0; bi < b; bi++)
        for (int ch = 0; ch < c; ch++)
            for (int p = 0; p < h * w; p++)
                ref[(bi * h * w + p) * c + ch] = xd[(bi * c + ch) * h * w + p];
    assert_close("nchw_to_nlc", fe_tensor_data(&y), ref, (size_t)b * c * h * w, 0, 0);
    g_free(ref);
}

static void test_add(void) {
    arena_setup();
    int64_t as[3] = {2, 7, 33}, bs[1] = {33}, bad[1] = {32};
    FeTensor a = make_rand(3, as, "a", -1, 1), b = make_rand(1, bs, "b", -1, 1);
    FeTensor y = make(FE_DTYPE_F32, 3, as, "y");
    g_assert_cmpint(fe_add(&y, &a, &b), ==, FE_OK);
    const float *ad = fe_tensor_data(&a), *bd = fe_tensor_data(&b);
    double ref[2 * 7 * 33];
    for (int i = 0; i < 2 * 7 * 33; i++)
        ref[i] = (double)ad[i] + bd[i % 33];
    assert_close("add broadcast", fe_tensor_data(&y), ref, G_N_ELEMENTS(ref), 1e-7, 1e-7);
    /* same shape, in place */
    FeTensor a2 = make_rand(3, as, "a2", -1, 1);
    const float *a2d = fe_tensor_data(&a2);
    double ref2[2 * 7 * 33];
    for (int i = 0; i < 2 * 7 * 33; i++)
        ref2[i] = (double)ad[i] + a2d[i];
    g_assert_cmpint(fe_add(&a, &a, &a2), ==, FE_OK);
    assert_close("add in place", fe_tensor_data(&a), ref2, G_N_ELEMENTS(ref2), 1e-7, 1e-7);
    FeTensor bb = make_rand(1, bad, "b32", -1, 1);
    g_assert_cmpint(fe_add(&y, &a, &bb), ==, FE_ERR_INVALID_ARGUMENT);
}

static void test_layernorm(void) {
    arena_setup();
    int rows = 5, d = 257;
    int64_t xs[2] = {rows, d}, gs[1] = {d};
    FeTensor x = make_rand(2, xs, "x", -3, 7), g = make_rand(1, gs, "g", 0.5f, 1.5f);
    FeTensor b = make_rand(1, gs, "b", -1, 1), y = make(FE_DTYPE_F32, 2, xs, "y");
    g_assert_cmpint(fe_layernorm(&y, &x, &g, &b, 1e-5f), ==, FE_OK);
    const float *xd = fe_tensor_data(&x), *gd = fe_tensor_data(&g), *bd = fe_tensor_data(&b);
    double *ref = g_new(double, (size_t)rows * d);
    for (int r = 0; r < rows; r++) {
        double mean = 0, var = 0;
        for (int i = 0; i < d; i++)
            mean += xd[r * d + i];
        mean /= d;
        for (int i = 0; i < d; i++)
            var += (xd[r * d + i] - mean) * (xd[r * d + i] - mean);
        var /= d;
        for (int i = 0; i < d; i++)
            ref[r * d + i] = (xd[r * d + i] - mean) / sqrt(var + 1e-5) * gd[i] + bd[i];
    }
    assert_close("layernorm", fe_tensor_data(&y), ref, (size_t)rows * d, 1e-5, 1e-5);
    g_free(ref);
}

/* Rows normalised together (their sums four rows at a time) give each
 * row's numbers alone, bit for bit: 11 rows = two groups of four and three
 * rows by themselves, against each row as a one-row tensor. */
static void test_layernorm_rows_alone(void) {
    arena_setup();
    int rows = 11, d = 256;
    int64_t xs[2] = {rows, d}, gs[1] = {d}, one[2] = {1, d};
    FeTensor x = make_rand(2, xs, "x", -3, 7), g = make_rand(1, gs, "g", 0.5f, 1.5f);
    FeTensor b = make_rand(1, gs, "b", -1, 1), y = make(FE_DTYPE_F32, 2, xs, "y");
    g_assert_cmpint(fe_layernorm(&y, &x, &g, &b, 1e-5f), ==, FE_OK);
    for (int r = 0; r < rows; r++) {
        FeTensor xr = make(FE_DTYPE_F32, 2, one, "xr"), yr = make(FE_DTYPE_F32, 2, one, "yr");
        memcpy(fe_tensor_data(&xr), (const float *)fe_tensor_data(&x) + (size_t)r * d,
               (size_t)d * sizeof(float));
        g_assert_cmpint(fe_layernorm(&yr, &xr, &g, &b, 1e-5f), ==, FE_OK);
        g_assert_cmpint(memcmp(fe_tensor_data(&yr), (const float *)fe_tensor_data(&y) + (size_t)r * d,
                               (size_t)d * sizeof(float)), ==, 0);
    }
}

/* fe_expf_rows against the linked expf, bit for bit: every 251st float bit
 * pattern (all ranges, NaNs and infinities among them), every float in
 * three dense stretches the softmax lives in (just below 0, around -1 and
 * -20), odd lengths and in place: a wrong table index, lane or constant
 * moves many of them. (A product fused or not changes about one result in
 * ten million, below what this samples: FE_TEST_EXPF_STRIDE=1 compares all
 * 2^32 floats, bench/RESULTS.md "speed12s".) Where the CPU
 * has AVX2 and FMA and the libm is glibc's, the vector path must be the one
 * taken: a self-check that failed would silently drop it. */
static void expf_rows_check(const float *x, size_t n) {
    float *y = g_new(float, n), *z = g_new(float, n + 1);
    fe_expf_rows(x, y, n);
    memcpy(z + 1, x, n * sizeof(float));
    fe_expf_rows(z + 1, z + 1, n); /* in place, unaligned */
    for (size_t i = 0; i < n; i++) {
        float e = expf(x[i]);
        if (isnan(e)) {
            g_assert_true(isnan(y[i]) && isnan(z[i + 1]));
            continue;
        }
        if (memcmp(&e, &y[i], sizeof e) != 0 || memcmp(&e, &z[i + 1], sizeof e) != 0)
            g_error("expf(%a) = %a, fe_expf_rows gave %a / %a", x[i], e, y[i], z[i + 1]);
    }
    g_free(y);
    g_free(z);
}

static void test_expf_rows_same_bits(void) {
#if defined(__x86_64__) && defined(__GLIBC__)
    const FeCpuInfo *ci = fe_cpu_info();
    if (ci->avx2 && ci->fma)
        g_assert_true(fe_expf_rows_vectorised());
#endif
    enum { CHUNK = 1 << 16 };
    float *x = g_new(float, CHUNK);
    size_t n = 0;
    /* FE_TEST_EXPF_STRIDE=1: all 2^32 floats (about a minute of CPU) */
    const char *stride_env = g_getenv("FE_TEST_EXPF_STRIDE");
    uint64_t stride = stride_env && atoi(stride_env) > 0 ? (uint64_t)atoi(stride_env) : 251;
    for (uint64_t u = 0; u < (1ull << 32); u += stride) {
        uint32_t b = (uint32_t)u;
        memcpy(&x[n++], &b, sizeof b);
        if (n == CHUNK) {
            expf_rows_check(x, n);
            n = 0;
        }
    }
    expf_rows_check(x, n);
    const float starts[] = {-0.0f, -1.0f, -20.0f};
    for (size_t s = 0; s < G_N_ELEMENTS(starts); s++) {
        uint32_t b;
        memcpy(&b, &starts[s], sizeof b);
        for (int c = 0; c < 8; c++) {
            for (int i = 0; i < CHUNK; i++) {
                uint32_t v = b + (uint32_t)(c * CHUNK + i);
                memcpy(&x[i], &v, sizeof v);
            }
            expf_rows_check(x, CHUNK);
        }
    }
    const float special[] = {0.0f,      -0.0f,    1.0f,     -1.0f,    88.72f,   88.73f,
                             -87.9f,    -88.0f,   -103.9f,  -104.0f,  -150.0f,  INFINITY,
                             -INFINITY, NAN,      0x1p-149f, -0x1p-149f, 1e-30f,   -5.5f,
                             3.25f,     -0.6931472f, 42.0f};
    for (size_t len = 1; len <= G_N_ELEMENTS(special); len++)
        expf_rows_check(special, len);
    g_free(x);
}

static void test_log_softmax(void) {
    arena_setup();
    int rows = 3, n = 601;
    int64_t xs[2] = {rows, n};
    FeTensor x = make_rand(2, xs, "x", -20, 20), y = make(FE_DTYPE_F32, 2, xs, "y");
    g_assert_cmpint(fe_log_softmax(&y, &x), ==, FE_OK);
    const float *xd = fe_tensor_data(&x);
    double *ref = g_new(double, (size_t)rows * n);
    for (int r = 0; r < rows; r++) {
        double mx = -INFINITY, s = 0;
        for (int i = 0; i < n; i++)
            mx = fmax(mx, xd[r * n + i]);
        for (int i = 0; i < n; i++)
            s += exp(xd[r * n + i] - mx);
        for (int i = 0; i < n; i++)
            ref[r * n + i] = xd[r * n + i] - mx - log(s);
    }
    assert_close("log_softmax", fe_tensor_data(&y), ref, (size_t)rows * n, 2e-5, 1e-6);
    g_free(ref);
}

static void test_topk(void) {
    arena_setup();
    int rows = 3, n = 301, k = 5;
    int64_t xs[2] = {rows, n}, ks[2] = {rows, k};
    FeTensor x = make_rand(2, xs, "x", -1, 1), v = make(FE_DTYPE_F32, 2, ks, "v");
    FeTensor idx = make(FE_DTYPE_I32, 2, ks, "idx");
    float *xd = fe_tensor_data(&x);
    /* row 1: ties at the top resolve to the lower index; a NaN ranks last */
    xd[n + 10] = 5.0f;
    xd[n + 3] = 5.0f;
    xd[n + 200] = 4.0f;
    xd[n + 0] = NAN;
    g_assert_cmpint(fe_topk(&v, &idx, &x, k), ==, FE_OK);
    const float *vd = fe_tensor_data(&v);
    const int32_t *id = fe_tensor_data(&idx);
    for (int r = 0; r < rows; r++) {
        /* reference: repeated argmax with lower index on ties */
        bool *taken = g_new0(bool, n);
        for (int j = 0; j < k; j++) {
            int best = -1;
            for (int i = 0; i < n; i++) {
                float xv = xd[r * n + i];
                if (taken[i] || isnan(xv))
                    continue;
                if (best < 0 || xv > xd[r * n + best])
                    best = i;
            }
            taken[best] = true;
            g_assert_cmpint(id[r * k + j], ==, best);
            g_assert_cmpfloat(vd[r * k + j], ==, xd[r * n + best]);
        }
        g_free(taken);
    }
    g_assert_cmpint(id[k + 0], ==, 3);
    g_assert_cmpint(id[k + 1], ==, 10);
    g_assert_cmpint(id[k + 2], ==, 200);
    g_assert_cmpint(fe_topk(&v, &idx, &x, n + 1), ==, FE_ERR_INVALID_ARGUMENT);
}

static void test_embed_kv_write(void) {
    arena_setup();
    int vocab = 37, d = 19, npos = 11, batch = 3, tmax = 7;
    int64_t ts[2] = {vocab, d}, ps[2] = {npos, d}, is[1] = {batch}, ys[3] = {batch, 1, d};
    FeTensor table = make_rand(2, ts, "tok", -1, 1), pos = make_rand(2, ps, "pos", -1, 1);
    FeTensor ids32 = make(FE_DTYPE_I32, 1, is, "ids32"), ids64 = make(FE_DTYPE_I64, 1, is, "ids64");
    FeTensor y = make(FE_DTYPE_F32, 3, ys, "y");
    int32_t *i32 = fe_tensor_data(&ids32);
    int64_t *i64 = fe_tensor_data(&ids64);
    const int want[3] = {0, 36, 5};
    for (int b = 0; b < batch; b++) {
        i32[b] = want[b];
        i64[b] = want[b];
    }
    const float *td = fe_tensor_data(&table), *pd = fe_tensor_data(&pos);
    double ref[3 * 19];
    for (int b = 0; b < batch; b++)
        for (int i = 0; i < d; i++)
            ref[b * d + i] = (double)td[want[b] * d + i] + pd[4 * d + i];
    g_assert_cmpint(fe_embed(&y, &table, &pos, &ids32, 4), ==, FE_OK);
    assert_close("embed i32", fe_tensor_data(&y), ref, (size_t)batch * d, 1e-7, 1e-7);
    g_assert_cmpint(fe_embed(&y, &table, &pos, &ids64, 4), ==, FE_OK);
    assert_close("embed i64", fe_tensor_data(&y), ref, (size_t)batch * d, 1e-7, 1e-7);
    g_assert_cmpint(fe_embed(&y, &table, &pos, &ids32, npos), ==, FE_ERR_INVALID_ARGUMENT);
    i32[1] = vocab;
    g_assert_cmpint(fe_embed(&y, &table, &pos, &ids32, 0), ==, FE_ERR_INVALID_ARGUMENT);
    g_assert_cmpstr(fe_last_error(), ==, "fe_embed: token id 37 outside [0, 37)");

    int64_t cs[3] = {batch, tmax, d};
    FeTensor cache = make(FE_DTYPE_F32, 3, cs, "cache");
    g_assert_cmpint(fe_kv_write(&cache, &y, 6), ==, FE_OK);
    const float *cd = fe_tensor_data(&cache), *yd = fe_tensor_data(&y);
    for (int b = 0; b < batch; b++) {
        g_assert_true(memcmp(cd + ((size_t)b * tmax + 6) * d, yd + (size_t)b * d,
                             (size_t)d * sizeof(float)) == 0);
        g_assert_true(isnan(cd[((size_t)b * tmax + 5) * d])); /* other rows untouched */
    }
    g_assert_cmpint(fe_kv_write(&cache, &y, tmax), ==, FE_ERR_INVALID_ARGUMENT);
}

static void ref_attention(const float *q, const float *k, const float *v, int batch, int tq,
                          int tkmax, int d, int heads, int kv_len, bool causal, int q_pos0,
                          double *out) {
    int dh = d / heads;
    double *s = g_new(double, kv_len);
    for (int b = 0; b < batch; b++)
        for (int h = 0; h < heads; h++)
            for (int i = 0; i < tq; i++) {
                int vis = causal ? MIN(kv_len, q_pos0 + i + 1) : kv_len;
                double mx = -INFINITY, sum = 0;
                for (int t = 0; t < vis; t++) {
                    double acc = 0;
                    for (int c = 0; c < dh; c++)
                        acc += (double)q[((size_t)b * tq + i) * d + h * dh + c] *
                               k[((size_t)b * tkmax + t) * d + h * dh + c];
                    s[t] = acc / sqrt((double)dh);
                    mx = fmax(mx, s[t]);
                }
                for (int t = 0; t < vis; t++)
                    sum += (s[t] = exp(s[t] - mx));
                for (int c = 0; c < dh; c++) {
                    double acc = 0;
                    for (int t = 0; t < vis; t++)
                        acc += s[t] / sum * v[((size_t)b * tkmax + t) * d + h * dh + c];
                    out[((size_t)b * tq + i) * d + h * dh + c] = acc;
                }
            }
    g_free(s);
}

static void check_attention(int batch, int tq, int tkmax, int d, int heads, int kv_len,
                            bool causal, int q_pos0) {
    arena_setup();
    int64_t qs[3] = {batch, tq, d}, ks[3] = {batch, tkmax, d};
    FeTensor q = make_rand(3, qs, "q", -2, 2), k = make_rand(3, ks, "k", -2, 2);
    FeTensor v = make_rand(3, ks, "v", -1, 1), y = make(FE_DTYPE_F32, 3, qs, "y");
    /* Rows past kv_len are NaN: reading them would show. */
    float *kd = fe_tensor_data(&k), *vd = fe_tensor_data(&v);
    for (int b = 0; b < batch; b++)
        for (int t = kv_len; t < tkmax; t++)
            for (int c = 0; c < d; c++)
                kd[((size_t)b * tkmax + t) * d + c] = vd[((size_t)b * tkmax + t) * d + c] = NAN;
    g_assert_cmpint(fe_attention(&y, &q, &k, &v, heads, kv_len, causal, q_pos0), ==, FE_OK);
    double *ref = g_new(double, (size_t)batch * tq * d);
    ref_attention(fe_tensor_data(&q), kd, vd, batch, tq, tkmax, d, heads, kv_len, causal, q_pos0,
                  ref);
    char what[96];
    snprintf(what, sizeof what, "attention b%d tq%d tk%d/%d d%d h%d causal=%d pos0=%d", batch, tq,
             kv_len, tkmax, d, heads, causal, q_pos0);
    assert_close(what, fe_tensor_data(&y), ref, (size_t)batch * tq * d, 2e-5, 1e-4);
    g_free(ref);
}

/* D = 0 (a head of no width): nothing to compute and nothing written. The
 * vector kernels load and store whole registers, so an unguarded one wrote
 * 8 (AVX2) or 16 (AVX-512) floats into whatever followed the empty output;
 * here a guard tensor that follows it in the arena. */
static void test_attention_empty_head(void) {
    arena_setup();
    int64_t es[3] = {1, 1, 0}, ps[1] = {16}, gs[1] = {32};
    FeTensor q = make(FE_DTYPE_F32, 3, es, "q"), k = make(FE_DTYPE_F32, 3, es, "k");
    FeTensor v = make(FE_DTYPE_F32, 3, es, "v");
    FeTensor pad = make(FE_DTYPE_F32, 1, ps, "pad"); /* what q, k, v would be read from */
    FeTensor y = make(FE_DTYPE_F32, 3, es, "y");
    FeTensor guard = make(FE_DTYPE_F32, 1, gs, "guard");
    float *pd = fe_tensor_data(&pad), *gd = fe_tensor_data(&guard);
    for (int i = 0; i < 16; i++)
        pd[i] = 2.0f;
    for (int i = 0; i < 32; i++)
        gd[i] = 7.0f;
    g_assert_cmpint(fe_attention(&y, &q, &k, &v, 1, 1, false, 0), ==, FE_OK);
    for (int i = 0; i < 32; i++)
        if (gd[i] != 7.0f)
            g_error("fe_attention with D = 0 wrote %g at float %d past its empty output", gd[i],
                    i);
}

static void test_attention(void) {
    check_attention(1, 1, 9, 24, 3, 5, true, 4);        /* decode step, KV cache */
    check_attention(3, 1, 17, 64, 8, 17, true, 16);     /* beam of 3, full cache */
    check_attention(2, 1, 37, 32, 4, 37, false, 0);     /* cross-attention, one query */
    check_attention(1, 37, 37, 48, 6, 37, true, 0);     /* causal prefill */
    check_attention(2, 45, 130, 32, 2, 129, false, 0);  /* encoder-like, gemm path */
    check_attention(1, 300, 300, 16, 1, 300, false, 0); /* several query blocks */
    check_attention(1, 3, 11, 8, 2, 10, true, 7);       /* 3 queries at positions 7..9 */
    /* Decode with the head in registers: d_head 16, 32, 48, 64; 80 falls back. */
    check_attention(2, 1, 40, 32, 2, 33, true, 32);
    check_attention(2, 1, 40, 256, 8, 33, true, 32);
    check_attention(1, 2, 20, 96, 2, 20, true, 18);
    check_attention(1, 1, 50, 128, 2, 50, false, 0);
    check_attention(1, 1, 10, 160, 2, 7, false, 0);
    check_attention(4, 1, 300, 256, 8, 300, false, 0);  /* cross-attention, beam 4, pool */
}

static void test_bad_shapes(void) {
    arena_setup();
    int64_t xs[2] = {3, 8}, ws[2] = {5, 7}, ys[2] = {3, 5};
    FeTensor x = make_rand(2, xs, "x", 0, 1), w = make_rand(2, ws, "w", 0, 1);
    FeTensor y = make(FE_DTYPE_F32, 2, ys, "y");
    g_assert_cmpint(fe_matmul(&y, &x, &w, NULL, false), ==, FE_ERR_INVALID_ARGUMENT);
    g_assert_cmpstr(fe_last_error(), ==,
                    "fe_matmul: input 'x' is f32 [3, 8], expected f32 [.., K]");
    g_assert_cmpint(fe_matmul(&x, &x, &x, NULL, false), ==, FE_ERR_INVALID_ARGUMENT);
    /* in-place matmul would read what it already wrote */
    int64_t sq[2] = {8, 8};
    FeTensor s = make_rand(2, sq, "s", 0, 1), ws8 = make_rand(2, sq, "w8", 0, 1);
    g_assert_cmpint(fe_matmul(&s, &s, &ws8, NULL, false), ==, FE_ERR_INVALID_ARGUMENT);
    g_assert_nonnull(strstr(fe_last_error(), "overlaps"));
    g_assert_cmpint(fe_matmul(&y, NULL, &w, NULL, false), ==, FE_ERR_INVALID_ARGUMENT);
    /* arena exhaustion is an error, not a crash */
    FeBuffer *small = NULL;
    FeTensor t;
    int64_t big[1] = {1000};
    g_assert_cmpint(fe_buffer_new(fe_cpu_device(), 100, &small), ==, FE_OK);
    g_assert_cmpint(fe_buffer_tensor(small, FE_DTYPE_F32, 1, big, "big", &t), ==,
                    FE_ERR_OUT_OF_MEMORY);
    g_assert_nonnull(strstr(fe_last_error(), "arena on cpu full"));
    fe_buffer_free(small);
}

/* ------------------------------------------------------------------------ */
/* No allocation on the decode path once warm                               */

static void decode_step(FeTensor *x, FeTensor *h, FeTensor *w1, FeTensor *w2, FeTensor *g,
                        FeTensor *b, FeTensor *kc, FeTensor *vc, FeTensor *q, FeTensor *att,
                        FeTensor *logits, FeTensor *lp, FeTensor *tv, FeTensor *ti, int pos) {
    g_assert_cmpint(fe_layernorm(h, x, g, b, 1e-5f), ==, FE_OK);
    g_assert_cmpint(fe_matmul(q, h, w1, b, false), ==, FE_OK);
    g_assert_cmpint(fe_kv_write(kc, q, pos), ==, FE_OK);
    g_assert_cmpint(fe_kv_write(vc, q, pos), ==, FE_OK);
    g_assert_cmpint(fe_attention(att, q, kc, vc, 8, pos + 1, true, pos), ==, FE_OK);
    g_assert_cmpint(fe_add(x, x, att), ==, FE_OK);
    g_assert_cmpint(fe_matmul(logits, x, w2, NULL, false), ==, FE_OK);
    g_assert_cmpint(fe_log_softmax(lp, logits), ==, FE_OK);
    g_assert_cmpint(fe_topk(tv, ti, lp, 4), ==, FE_OK);
}

static void test_decode_no_alloc(void) {
    arena_setup();
    int d = 256, vocab = 600, tmax = 64;
    int64_t xs[3] = {1, 1, d}, ws[2] = {d, d}, w2s[2] = {vocab, d}, ds[1] = {d},
            cs[3] = {1, tmax, d}, ls[2] = {1, vocab}, ks[2] = {1, 4};
    FeTensor x = make_rand(3, xs, "x", -1, 1), h = make(FE_DTYPE_F32, 3, xs, "h");
    FeTensor w1 = make_rand(2, ws, "w1", -0.1f, 0.1f), w2 = make_rand(2, w2s, "w2", -0.1f, 0.1f);
    FeTensor g = make_rand(1, ds, "g", 0.9f, 1.1f), b = make_rand(1, ds, "b", -0.1f, 0.1f);
    FeTensor kc = make(FE_DTYPE_F32, 3, cs, "kc"), vc = make(FE_DTYPE_F32, 3, cs, "vc");
    FeTensor q = make(FE_DTYPE_F32, 3, xs, "q"), att = make(FE_DTYPE_F32, 3, xs, "att");
    FeTensor logits = make(FE_DTYPE_F32, 2, ls, "logits"), lp = make(FE_DTYPE_F32, 2, ls, "lp");
    FeTensor tv = make(FE_DTYPE_F32, 2, ks, "tv"), ti = make(FE_DTYPE_I32, 2, ks, "ti");
    decode_step(&x, &h, &w1, &w2, &g, &b, &kc, &vc, &q, &att, &logits, &lp, &tv, &ti, 0);
    decode_step(&x, &h, &w1, &w2, &g, &b, &kc, &vc, &q, &att, &logits, &lp, &tv, &ti, 1);
    struct mallinfo2 before = mallinfo2();
    for (int pos = 2; pos < tmax; pos++)
        decode_step(&x, &h, &w1, &w2, &g, &b, &kc, &vc, &q, &att, &logits, &lp, &tv, &ti, pos);
    struct mallinfo2 after = mallinfo2();
    g_assert_cmpuint(after.uordblks, ==, before.uordblks);
    g_assert_cmpuint(after.hblkhd, ==, before.hblkhd);
    if (!fe_cpu_has_bf16_dot())
        return;
    /* the same with bf16 weights multiplied in bf16 (FE_PRECISION_BF16) */
    FeTensor wb1 = make(FE_DTYPE_BF16, 2, ws, "wb1"), wb2 = make(FE_DTYPE_BF16, 2, w2s, "wb2");
    wb1.bf16_dot = wb2.bf16_dot = true;
    const float *f1 = fe_tensor_data(&w1), *f2 = fe_tensor_data(&w2);
    uint16_t *h1 = fe_tensor_data(&wb1), *h2 = fe_tensor_data(&wb2);
    for (int i = 0; i < d * d; i++)
        h1[i] = fe_f32_to_bf16(f1[i]);
    for (int i = 0; i < vocab * d; i++)
        h2[i] = fe_f32_to_bf16(f2[i]);
    decode_step(&x, &h, &wb1, &wb2, &g, &b, &kc, &vc, &q, &att, &logits, &lp, &tv, &ti, 0);
    decode_step(&x, &h, &wb1, &wb2, &g, &b, &kc, &vc, &q, &att, &logits, &lp, &tv, &ti, 1);
    before = mallinfo2();
    for (int pos = 2; pos < tmax; pos++)
        decode_step(&x, &h, &wb1, &wb2, &g, &b, &kc, &vc, &q, &att, &logits, &lp, &tv, &ti, pos);
    after = mallinfo2();
    g_assert_cmpuint(after.uordblks, ==, before.uordblks);
    g_assert_cmpuint(after.hblkhd, ==, before.hblkhd);
}

/* ------------------------------------------------------------------------ */
/* Devices                                                                  */

/* A test-only backend: host memory under another id, so tensors on it are
 * real but "elsewhere". */
static fe_status fake_alloc(FeDevice *dev, size_t size, void **out) {
    *out = g_malloc0(size);
    return FE_OK;
}
static void fake_free(FeDevice *dev, void *data) { g_free(data); }
static fe_status fake_copy(FeDevice *dev, void *dst, const void *src, size_t n) {
    memcpy(dst, src, n);
    return FE_OK;
}
static int fake_computes;
static fe_status fake_compute(FeDevice *dev, const FeOpDesc *op) {
    fake_computes++;
    return FE_OK;
}
static const FeBackend fake_backend = {
    .name = "fake",
    .buffer_alloc = fake_alloc,
    .buffer_free = fake_free,
    .upload = fake_copy,
    .download = fake_copy,
    .compute = fake_compute,
};
static FeDevice fake_device = {.backend = &fake_backend, .index = 0, .id = "fake:0"};

static size_t fake_list(FeDeviceInfo *out, size_t max, char *reason, size_t reason_len) {
    if (out && max >= 1) {
        memset(out, 0, sizeof *out);
        snprintf(out->id, sizeof out->id, "fake:0");
        snprintf(out->name, sizeof out->name, "Test device");
        out->kind = FE_DEVICE_CUDA;
        out->available = true;
    }
    return 1;
}
static fe_status fake_open(int index, FeDevice **out) {
    if (index != 0)
        return fe_set_error(FE_ERR_DEVICE, "fake:%d does not exist", index);
    *out = &fake_device;
    return FE_OK;
}
static const FeBackendModule fake_module = {
    .abi_version = FE_BACKEND_ABI_VERSION,
    .name = "fake",
    .kind = FE_DEVICE_CUDA,
    .list_devices = fake_list,
    .open_device = fake_open,
};

static void ensure_fake_registered(void) {
    static bool done;
    if (!done) {
        g_assert_cmpint(fe_backend_register_module(&fake_module), ==, FE_OK);
        done = true;
    }
}

static void test_device_mismatch(void) {
    arena_setup();
    ensure_fake_registered();
    FeDevice *fake = NULL;
    g_assert_cmpint(fe_device_open("fake:0", &fake), ==, FE_OK);
    g_assert_true(fake == &fake_device);
    FeDevice *missing = NULL;
    g_assert_cmpint(fe_device_open("fake:1", &missing), ==, FE_ERR_DEVICE);
    g_assert_null(missing);

    FeBuffer *fb = NULL;
    g_assert_cmpint(fe_buffer_new(fake, 4096, &fb), ==, FE_OK);
    int64_t xs[2] = {2, 4}, ws[2] = {3, 4}, ys[2] = {2, 3};
    FeTensor x = make_rand(2, xs, "x", 0, 1), y = make(FE_DTYPE_F32, 2, ys, "y");
    FeTensor w;
    g_assert_cmpint(fe_buffer_tensor(fb, FE_DTYPE_F32, 2, ws, "w", &w), ==, FE_OK);
    float host[12] = {0};
    g_assert_cmpint(fe_tensor_upload(&w, host, sizeof host), ==, FE_OK);
    g_assert_cmpint(fe_tensor_upload(&w, host, 4), ==, FE_ERR_INVALID_ARGUMENT);

    fake_computes = 0;
    g_assert_cmpint(fe_matmul(&y, &x, &w, NULL, false), ==, FE_ERR_DEVICE_MISMATCH);
    g_assert_cmpstr(fe_last_error(), ==, "device mismatch: cpu vs fake:0 in fe_matmul");
    g_assert_cmpint(fake_computes, ==, 0);

    /* All on the fake device: dispatch goes to its backend, not the CPU's. */
    FeTensor fx, fy;
    g_assert_cmpint(fe_buffer_tensor(fb, FE_DTYPE_F32, 2, xs, "fx", &fx), ==, FE_OK);
    g_assert_cmpint(fe_buffer_tensor(fb, FE_DTYPE_F32, 2, ys, "fy", &fy), ==, FE_OK);
    g_assert_cmpint(fe_matmul(&fy, &fx, &w, NULL, false), ==, FE_OK);
    g_assert_cmpint(fake_computes, ==, 1);
    g_assert_cmpint(fe_gelu(&fy, &y), ==, FE_ERR_DEVICE_MISMATCH);
    g_assert_cmpstr(fe_last_error(), ==, "device mismatch: fake:0 vs cpu in fe_gelu");
    fe_buffer_free(fb);
}

static const FeDeviceInfo *find_dev(const FeDeviceInfo *devs, size_t n, const char *id) {
    for (size_t i = 0; i < n; i++)
        if (strcmp(devs[i].id, id) == 0)
            return &devs[i];
    return NULL;
}

static void test_devices_list_no_cuda(void) {
    if (g_test_subprocess()) {
        FeDeviceInfo devs[8];
        size_t n = fe_devices_list(devs, G_N_ELEMENTS(devs));
        g_assert_cmpuint(n, ==, fe_devices_list(NULL, 0));
        g_assert_cmpuint(n, >=, 2);
        g_assert_cmpstr(devs[0].id, ==, "cpu");
        g_assert_true(devs[0].available);
        g_assert_cmpuint(devs[0].total_memory, >, 0);
        g_assert_nonnull(strstr(devs[0].detail, "GEMM: "));
        printf("cpu: %s | %s\n", devs[0].name, devs[0].detail);
        const FeDeviceInfo *cuda = find_dev(devs, n, "cuda");
        g_assert_nonnull(cuda);
        g_assert_false(cuda->available);
        g_assert_cmpint(cuda->kind, ==, FE_DEVICE_CUDA);
        printf("cuda: %s\n", cuda->unavailable_reason);
        FeDevice *dev = NULL;
        g_assert_cmpint(fe_device_open("cuda:0", &dev), ==, FE_ERR_DEVICE);
        g_assert_true(g_str_has_prefix(fe_last_error(), "device 'cuda:0' unavailable: "));
        g_assert_cmpint(fe_device_open("tpu:0", &dev), ==, FE_ERR_INVALID_ARGUMENT);
        g_assert_cmpint(fe_device_open("cuda:x", &dev), ==, FE_ERR_INVALID_ARGUMENT);
        g_assert_cmpint(fe_device_open("cpu", &dev), ==, FE_OK);
        g_assert_true(dev == fe_cpu_device());
        return;
    }
    /* No module anywhere: "not built". */
    g_setenv("FE_CUDA_MODULE", "/nonexistent/libformulate-cuda.so", TRUE);
    g_test_trap_subprocess(NULL, 0, G_TEST_SUBPROCESS_DEFAULT);
    g_test_trap_assert_passed();
    g_test_trap_assert_stdout("*cuda: CUDA backend not built*");
    g_test_trap_assert_stdout("*cpu: *GEMM: *");
    g_unsetenv("FE_CUDA_MODULE");
}

static void test_devices_list_broken_module(void) {
    if (g_test_subprocess()) {
        FeDeviceInfo devs[8];
        size_t n = fe_devices_list(devs, G_N_ELEMENTS(devs));
        const FeDeviceInfo *cuda = find_dev(devs, n, "cuda");
        g_assert_nonnull(cuda);
        printf("cuda: %s\n", cuda->unavailable_reason);
        return;
    }
    /* The module file is there but does not load (as when libcudart is
     * missing): "CUDA libraries not installed (<loader message>)". */
    gchar *dir = g_dir_make_tmp("fe-ops-XXXXXX", NULL);
    gchar *path = g_build_filename(dir, "libformulate-cuda.so", NULL);
    g_assert_true(g_file_set_contents(path, "not an ELF file", -1, NULL));
    g_setenv("FE_CUDA_MODULE", path, TRUE);
    g_test_trap_subprocess(NULL, 0, G_TEST_SUBPROCESS_DEFAULT);
    g_test_trap_assert_passed();
    g_test_trap_assert_stdout("*cuda: CUDA libraries not installed (*)*");
    g_unsetenv("FE_CUDA_MODULE");
    g_unlink(path);
    g_rmdir(dir);
    g_free(path);
    g_free(dir);
}

static void test_devices_list_module_without_driver(void) {
    const char *module = g_getenv("FE_TEST_FAKE_CUDA_MODULE");
    if (g_test_subprocess()) {
        FeDeviceInfo devs[8];
        size_t n = fe_devices_list(devs, G_N_ELEMENTS(devs));
        const FeDeviceInfo *cuda = find_dev(devs, n, "cuda");
        g_assert_nonnull(cuda);
        g_assert_false(cuda->available);
        printf("cuda: %s\n", cuda->unavailable_reason);
        FeDevice *dev = NULL;
        g_assert_cmpint(fe_device_open("cuda:0", &dev), ==, FE_ERR_DEVICE);
        printf("open: %s\n", fe_last_error());
        return;
    }
    if (!module || access(module, R_OK) != 0) {
        g_test_skip("FE_TEST_FAKE_CUDA_MODULE not set (run through meson test)");
        return;
    }
    g_setenv("FE_CUDA_MODULE", module, TRUE);
    g_test_trap_subprocess(NULL, 0, G_TEST_SUBPROCESS_DEFAULT);
    g_test_trap_assert_passed();
    g_test_trap_assert_stdout("*cuda: no CUDA driver\n*");
    /* The module's error came back through the host table. */
    g_test_trap_assert_stdout("*open: cuda:0: no CUDA driver*");
    g_unsetenv("FE_CUDA_MODULE");
}

/* Without the NVIDIA driver the real module is not even loaded: cuBLAS and the
 * CUDA runtime would map ~60 MB into every process for nothing. Runs where the
 * build has its module and the machine has no libcuda.so.1. */
static void test_devices_list_no_driver_no_cublas(void) {
    if (g_test_subprocess()) {
        FeDeviceInfo devs[8];
        size_t n = fe_devices_list(devs, G_N_ELEMENTS(devs));
        const FeDeviceInfo *cuda = find_dev(devs, n, "cuda");
        g_assert_nonnull(cuda);
        printf("cuda: %s\n", cuda->unavailable_reason);
        gchar *maps = NULL;
        g_assert_true(g_file_get_contents("/proc/self/maps", &maps, NULL, NULL));
        printf("cublas mapped: %s\n", strstr(maps, "libcublas") ? "yes" : "no");
        printf("cudart mapped: %s\n", strstr(maps, "libcudart") ? "yes" : "no");
        g_free(maps);
        return;
    }
    const char *build_root = g_getenv("FE_BUILD_ROOT");
    gchar *module = build_root ? g_build_filename(build_root, "kernels", "libformulate-cuda.so", NULL)
                               : NULL;
    void *driver = dlopen("libcuda.so.1", RTLD_LAZY | RTLD_LOCAL);
    if (driver) {
        dlclose(driver);
        g_test_skip("the NVIDIA driver is installed here");
    } else if (!module || access(module, R_OK) != 0) {
        g_test_skip("this build has no CUDA module (-Dcuda=disabled)");
    } else {
        g_unsetenv("FE_CUDA_MODULE");
        g_test_trap_subprocess(NULL, 0, G_TEST_SUBPROCESS_DEFAULT);
        g_test_trap_assert_passed();
        g_test_trap_assert_stdout("*cuda: no CUDA driver\n*");
        g_test_trap_assert_stdout("*cublas mapped: no\n*");
        g_test_trap_assert_stdout("*cudart mapped: no\n*");
    }
    g_free(module);
}

static void test_devices_list_fake(void) {
    ensure_fake_registered();
    FeDeviceInfo devs[8];
    size_t n = fe_devices_list(devs, G_N_ELEMENTS(devs));
    const FeDeviceInfo *f = find_dev(devs, n, "fake:0");
    g_assert_nonnull(f);
    g_assert_true(f->available);
    /* Truncated output still counts everything. */
    FeDeviceInfo one;
    g_assert_cmpuint(fe_devices_list(&one, 1), ==, n);
    g_assert_cmpstr(one.id, ==, "cpu");
    g_assert_cmpint(fe_backend_register_module(&fake_module), ==, FE_ERR_INVALID_ARGUMENT);
}

int main(int argc, char **argv) {
    g_test_init(&argc, &argv, NULL);
    fe_set_log_callback(NULL, NULL);

    g_test_add_func("/ops/cpuid/report", test_cpuid_report);
    g_test_add_func("/ops/cpuid/isa-cap", test_cpuid_isa_cap);
    g_test_add_func("/ops/gemm/path", test_gemm_path);
    for (int k = FE_GEMM_OPENBLAS; k < FE_GEMM_COUNT; k++) {
        gchar *name = g_strdup_printf("/ops/gemm/kernel/%s", fe_gemm_kernel_name(k));
        for (char *p = name; *p; p++)
            if (*p == ' ' || *p == '+')
                *p = '-';
        g_test_add_data_func_full(name, GINT_TO_POINTER(k), test_gemm_kernel, NULL);
        g_free(name);
    }
    g_test_add_func("/ops/gemm/bad-sizes", test_gemm_bad_sizes);
    g_test_add_func("/ops/gemm/missing-openblas", test_gemm_missing_openblas);
    g_test_add_func("/ops/gemm/user-coretype", test_gemm_user_coretype);
    g_test_add_func("/ops/matmul", test_matmul);
    g_test_add_func("/ops/matmul/half-weights", test_matmul_half_weights);
    g_test_add_func("/ops/matmul/exact-rows", test_matmul_exact_rows);
    g_test_add_func("/ops/matmul/bf16-dot", test_matmul_bf16_dot);
    g_test_add_func("/ops/cpu/convert", test_cpu_convert);
    g_test_add_func("/ops/cpu/big-blocks", test_cpu_big_blocks);
    g_test_add_func("/ops/pool/parallel-for", test_pool_parallel_for);
    g_test_add_func("/ops/gelu", test_gelu);
    g_test_add_func("/ops/conv3x3", test_conv3x3);
    g_test_add_func("/ops/conv3x3/bf16", test_conv3x3_bf16);
    g_test_add_func("/ops/maxpool", test_maxpool);
    g_test_add_func("/ops/elementwise/same-bits", test_elementwise_same_bits);
    g_test_add_func("/ops/nchw-to-nlc", test_nchw_to_nlc);
    g_test_add_func("/ops/add", test_add);
    g_test_add_func("/ops/layernorm", test_layernorm);
    g_test_add_func("/ops/layernorm/rows-alone", test_layernorm_rows_alone);
    g_test_add_func("/ops/log-softmax", test_log_softmax);
    g_test_add_func("/ops/expf/same-bits", test_expf_rows_same_bits);
    g_test_add_func("/ops/topk", test_topk);
    g_test_add_func("/ops/embed-kv-write", test_embed_kv_write);
    g_test_add_func("/ops/attention", test_attention);
    g_test_add_func("/ops/attention/empty-head", test_attention_empty_head);
    g_test_add_func("/ops/bad-shapes", test_bad_shapes);
    g_test_add_func("/ops/decode-no-alloc", test_decode_no_alloc);
    g_test_add_func("/ops/device/mismatch", test_device_mismatch);
    g_test_add_func("/ops/device/list-no-cuda", test_devices_list_no_cuda);
    g_test_add_func("/ops/device/list-broken-module", test_devices_list_broken_module);
    g_test_add_func("/ops/device/list-module-without-driver",
                    test_devices_list_module_without_driver);
    g_test_add_func("/ops/device/list-no-driver-no-cublas", test_devices_list_no_driver_no_cublas);
    g_test_add_func("/ops/device/list-fake", test_devices_list_fake);
    int rc = g_test_run();
    fe_buffer_free(arena);
    return rc;
}
