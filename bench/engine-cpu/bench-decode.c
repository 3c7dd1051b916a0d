/* bench-decode: the decoder step alone, serial against batched, in process
 * CPU time (bench/engine-cpu/README.md).
 *
 *   bench-decode MODEL.safetensors [--rows N] [--steps N] [--reps N]
 *                [--only serial|batched] IMAGE.png...
 *
 * The images (up to --rows, default 8) are preprocessed and encoded once, their
 * cross-attention K/V packed as fe_recognize's batched path packs them. Then
 * each rep runs, interleaved: "serial", every image alone for --steps steps
 * (fe_model_decode_step_rows with one row, as a serial decode does per image),
 * and "batched", all images together for --steps steps. Token ids are fixed
 * (4 + step), so both do the same work whatever the model emits. Prints the
 * median over reps of CPU microseconds per row-step of each, and their ratio.
 * --only runs one of the two (for a profiler).
 * Single-threaded unless FE_THREADS is set. */
#include "fe-model.h"
#include "fm-png.h"

#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>

static double cpu_us(void) {
    struct timespec ts;
    clock_gettime(CLOCK_PROCESS_CPUTIME_ID, &ts);
    return ts.tv_sec * 1e6 + ts.tv_nsec / 1e3;
}

static int cmp_double(const void *a, const void *b) {
    double x = *(const double *)a, y = *(const double *)b;
    return x < y ? -1 : x > y;
}

static int fail(const char *what) {
    fprintf(stderr, "bench-decode: %s: %s\n", what, fe_last_error());
    return 1;
}

int main(int argc, char **argv) {
    int rows_max = 8, steps = 48, reps = 7, n_paths = 0;
    const char *model = NULL, *paths[64], *only = NULL;
    for (int i = 1; i < argc; i++) {
        if (!strcmp(argv[i], "--rows") && i + 1 < argc)
            rows_max = atoi(argv[++i]);
        else if (!strcmp(argv[i], "--steps") && i + 1 < argc)
            steps = atoi(argv[++i]);
        else if (!strcmp(argv[i], "--reps") && i + 1 < argc)
            reps = atoi(argv[++i]);
        else if (!strcmp(argv[i], "--only") && i + 1 < argc)
            only = argv[++i];
        else if (!model)
            model = argv[i];
        else if (n_paths < 64)
            paths[n_paths++] = argv[i];
    }
    if (!model || n_paths == 0 || rows_max < 1 || rows_max > FE_MAX_BEAM || steps < 1 ||
        reps < 1) {
        fprintf(stderr, "usage: bench-decode MODEL [--rows N<=%d] [--steps N] [--reps N] "
                        "IMAGE.png...\n", FE_MAX_BEAM);
        return 2;
    }
    const char *threads = getenv("FE_THREADS");
    FeContextParams cp = fe_context_default_params();
    cp.device = "cpu";
    cp.n_threads = threads ? atoi(threads) : 1;
    FeContext *ctx;
    FeState *st;
    if (fe_context_load(model, &cp, &ctx) != FE_OK)
        return fail(model);
    if (fe_state_new(ctx, &st) != FE_OK)
        return fail("state");
    FeStateBuffers *sb = fe_state_buffers(st);
    const FeModelConfig *c = &sb->model->cfg;
    int rows = n_paths < rows_max ? n_paths : rows_max;
    if (steps > c->max_tokens)
        steps = c->max_tokens;
    float *pix[FE_MAX_BEAM];
    int h[FE_MAX_BEAM], w[FE_MAX_BEAM];
    int64_t tokens = 0;
    for (int r = 0; r < rows; r++) {
        FmPngImage png;
        char err[256];
        if (fm_png_load(paths[r], &png, err, sizeof err) != 0) {
            fprintf(stderr, "bench-decode: %s: %s\n", paths[r], err);
            return 1;
        }
        FeImage img = {.data = png.data, .width = png.width, .height = png.height,
                       .stride = png.stride, .format = png.format};
        float scale;
        if (fe_preprocess(ctx, &img, &pix[r], &h[r], &w[r], &scale) != FE_OK)
            return fail(paths[r]);
        fm_png_clear(&png);
        tokens += (int64_t)(h[r] / c->height_stride) * (w[r] / c->width_stride);
    }
    if (fe_model_batch_reserve(sb, rows, tokens) != FE_OK)
        return fail("reserve");
    int64_t enc_len_sum = 0;
    for (int r = 0; r < rows; r++) {
        if (fe_model_encode(sb, pix[r], h[r], w[r]) != FE_OK || fe_model_batch_add(sb, r) != FE_OK)
            return fail("encode");
        enc_len_sum += sb->enc_len;
        free(pix[r]);
    }
    int32_t spans[2 * FE_MAX_BEAM], ids[FE_MAX_BEAM];
    memcpy(spans, sb->host_spans, sizeof(int32_t) * 2 * rows);
    double *serial = calloc((size_t)reps, sizeof(double));
    double *batched = calloc((size_t)reps, sizeof(double));
    for (int rep = 0; rep < reps; rep++) {
        /* alternate which goes first */
        for (int k = 0; k < 2; k++) {
            bool do_serial = (k == 0) == (rep % 2 == 0);
            if (only && strcmp(only, do_serial ? "serial" : "batched") != 0)
                continue;
            double t0 = cpu_us();
            if (do_serial) {
                for (int r = 0; r < rows; r++) {
                    sb->host_spans[0] = spans[2 * r];
                    sb->host_spans[1] = spans[2 * r + 1];
                    for (int p = 0; p < steps; p++) {
                        ids[0] = p == 0 ? c->bos_id : 4 + p % (c->vocab_size - 4);
                        if (fe_model_decode_step_rows(sb, ids, 1, p) != FE_OK)
                            return fail("step");
                    }
                }
                serial[rep] = (cpu_us() - t0) / ((double)rows * steps);
            } else {
                memcpy(sb->host_spans, spans, sizeof(int32_t) * 2 * rows);
                for (int p = 0; p < steps; p++) {
                    for (int r = 0; r < rows; r++)
                        ids[r] = p == 0 ? c->bos_id : 4 + p % (c->vocab_size - 4);
                    if (fe_model_decode_step_rows(sb, ids, rows, p) != FE_OK)
                        return fail("step");
                }
                batched[rep] = (cpu_us() - t0) / ((double)rows * steps);
            }
        }
    }
    qsort(serial, (size_t)reps, sizeof(double), cmp_double);
    qsort(batched, (size_t)reps, sizeof(double), cmp_double);
    printf("model %s: d_model %d, %d decoder layers, vocab %d; %d rows (encoder lengths %.0f "
           "on average), %d steps, %d reps, %d thread%s\n",
           model, c->d_model, c->dec_layers, c->vocab_size, rows, (double)enc_len_sum / rows,
           steps, reps, cp.n_threads, cp.n_threads == 1 ? "" : "s");
    printf("serial  us/row-step %.1f (min %.1f, max %.1f)\n", serial[reps / 2], serial[0],
           serial[reps - 1]);
    printf("batched us/row-step %.1f (min %.1f, max %.1f)\n", batched[reps / 2], batched[0],
           batched[reps - 1]);
    printf("batched_speedup: %.2f\n", serial[reps / 2] / batched[reps / 2]);
    free(serial);
    free(batched);
    fe_state_free(st);
    fe_context_free(ctx);
    return 0;
}
