/* bench-engine-gpu.c - formulate's side of bench/engine-gpu: encode + greedy
 * decode of N preprocessed images on one device, timed, as images/second.
 *
 *   bench-engine-gpu MODEL IMAGES.f32 HEIGHT WIDTH STEPS DEVICE PRECISION BATCH...
 *
 * IMAGES.f32 holds raw float32 images [n][HEIGHT][WIDTH] (ink = 1); a batch of
 * B takes images 0..B-1 (cycling). Every decode runs exactly STEPS steps when
 * the model never emits EOS (run.sh makes such a model), so both sides do the
 * same work. PRECISION: fp32, fp16 or bf16. One line per batch:
 *   batch=B images_per_s=X ms_per_image=Y
 */
#include "fe.h"

#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>

static double now_s(void) {
    struct timespec ts;
    clock_gettime(CLOCK_MONOTONIC, &ts);
    return ts.tv_sec + ts.tv_nsec * 1e-9;
}

static int fail(const char *what) {
    fprintf(stderr, "bench-engine-gpu: %s: %s\n", what, fe_last_error());
    return 1;
}

static int run_batch(FeState *st, const float *images, int n_images, int h, int w, int steps,
                     int batch, int *tokens) {
    int n_tok = 0;
    /* warm-up: kernels loaded, workspace grown, caches filled */
    if (fe_state_encode(st, images, h, w) != FE_OK)
        return fail("encode");
    if (fe_state_decode_greedy(st, tokens, steps, &n_tok, NULL) != FE_OK)
        return fail("decode");
    double t0 = now_s();
    long total_tokens = 0;
    for (int b = 0; b < batch; b++) {
        const float *img = images + (size_t)(b % n_images) * h * w;
        if (fe_state_encode(st, img, h, w) != FE_OK)
            return fail("encode");
        if (fe_state_decode_greedy(st, tokens, steps, &n_tok, NULL) != FE_OK)
            return fail("decode");
        total_tokens += n_tok;
    }
    double dt = now_s() - t0;
    printf("batch=%d images_per_s=%.3f ms_per_image=%.3f tokens=%ld\n", batch, batch / dt,
           dt * 1e3 / batch, total_tokens);
    fflush(stdout);
    return 0;
}

/* The same images through fe_recognize: preprocessing, then batched greedy
 * decoding (up to 32 rows a step, FeRecognizeParams.max_batch), as the app
 * runs it. The repetition guard is off, so random weights decode to the
 * length limit like the serial loop; a row stops early only at EOS, so the
 * rate per token is printed beside the rate per image. */
static int run_recognize(FeState *st, const float *images, int n_images, int h, int w, int steps,
                         int batch) {
    uint8_t *gray = malloc((size_t)batch * h * w);
    FeImage *imgs = calloc((size_t)batch, sizeof *imgs);
    FeResult *res = calloc((size_t)batch, sizeof *res);
    if (!gray || !imgs || !res) {
        free(gray); free(imgs); free(res);
        return fail("out of memory");
    }
    for (int b = 0; b < batch; b++) {
        const float *img = images + (size_t)(b % n_images) * h * w;
        for (size_t k = 0; k < (size_t)h * w; k++) {
            float ink = img[k] < 0 ? 0 : img[k] > 1 ? 1 : img[k];
            gray[(size_t)b * h * w + k] = (uint8_t)(255.0f * (1.0f - ink) + 0.5f);
        }
        imgs[b] = (FeImage){ .data = gray + (size_t)b * h * w, .width = w, .height = h,
                             .format = FE_PIXEL_GRAY8, .em_px_hint = 20.0f };
    }
    FeRecognizeParams rp = fe_recognize_default_params();
    rp.max_tokens = steps;
    rp.max_repeats = 0;
    rp.max_batch = batch < 32 ? batch : 32;
    int rc = 0;
    for (int round = 0; round < 2 && rc == 0; round++) { /* round 0 warms up */
        double t0 = now_s();
        if (fe_recognize(st, imgs, (size_t)batch, &rp, res) != FE_OK) {
            rc = fail("fe_recognize");
            break;
        }
        double dt = now_s() - t0;
        long total_tokens = 0;
        for (int b = 0; b < batch; b++) {
            total_tokens += res[b].n_tokens + 1;
            fe_result_clear(&res[b]);
        }
        if (round == 1)
            printf("recognize batch=%d images_per_s=%.3f ms_per_image=%.3f tokens=%ld "
                   "tokens_per_s=%.1f\n", batch, batch / dt, dt * 1e3 / batch, total_tokens,
                   total_tokens / dt);
    }
    free(gray); free(imgs); free(res);
    return rc;
}

int main(int argc, char **argv) {
    if (argc < 9) {
        fprintf(stderr,
                "usage: %s MODEL IMAGES.f32 HEIGHT WIDTH STEPS DEVICE PRECISION BATCH...\n",
                argv[0]);
        return 2;
    }
    const char *model = argv[1], *images_path = argv[2], *device = argv[6], *prec = argv[7];
    int h = atoi(argv[3]), w = atoi(argv[4]), steps = atoi(argv[5]);
    if (h <= 0 || w <= 0 || steps <= 0) {
        fprintf(stderr, "bench-engine-gpu: bad HEIGHT, WIDTH or STEPS\n");
        return 2;
    }
    FILE *f = fopen(images_path, "rb");
    if (!f) {
        perror(images_path);
        return 1;
    }
    fseek(f, 0, SEEK_END);
    long len = ftell(f);
    fseek(f, 0, SEEK_SET);
    size_t per = (size_t)h * w * sizeof(float);
    int n_images = (int)(len / (long)per);
    if (n_images < 1 || (size_t)len != per * (size_t)n_images) {
        fprintf(stderr, "bench-engine-gpu: %s is not [n][%d][%d] float32\n", images_path, h, w);
        fclose(f);
        return 1;
    }
    float *images = malloc((size_t)len);
    if (!images || fread(images, 1, (size_t)len, f) != (size_t)len) {
        fprintf(stderr, "bench-engine-gpu: cannot read %s\n", images_path);
        fclose(f);
        return 1;
    }
    fclose(f);

    FeContextParams cp = fe_context_default_params();
    cp.device = device;
    cp.precision = strcmp(prec, "fp32") == 0   ? FE_PRECISION_FP32
                   : strcmp(prec, "bf16") == 0 ? FE_PRECISION_BF16
                                               : FE_PRECISION_FP16;
    FeContext *ctx = NULL;
    if (fe_context_load(model, &cp, &ctx) != FE_OK)
        return fail(model);
    FeRuntimeInfo ri;
    if (fe_context_runtime_info(ctx, &ri) == FE_OK)
        printf("device=%s name=\"%s\" precision=%d fell_back=%d weights_MiB=%.1f\n",
               ri.device.id, ri.device.name, (int)ri.precision, ri.fell_back,
               ri.weights_bytes / 1048576.0);
    FeState *st = NULL;
    if (fe_state_new(ctx, &st) != FE_OK)
        return fail("fe_state_new");
    int *tokens = malloc(sizeof(int) * (size_t)steps);
    int rc = tokens ? 0 : 1;
    const char *mode = getenv("BENCH_MODE"); /* "recognize": also fe_recognize, batched */
    for (int i = 8; i < argc && rc == 0; i++)
        rc = run_batch(st, images, n_images, h, w, steps, atoi(argv[i]), tokens);
    for (int i = 8; i < argc && rc == 0 && mode && strcmp(mode, "recognize") == 0; i++)
        rc = run_recognize(st, images, n_images, h, w, steps, atoi(argv[i]));
    free(tokens);
    free(images);
    fe_state_free(st);
    fe_context_free(ctx);
    return rc;
}
