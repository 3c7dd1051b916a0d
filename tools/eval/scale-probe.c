/* scale-probe.c - connected-component measurements of formula images, for
 * studying the engine's glyph-scale estimate (tools/eval/scale_study.py).
 *
 * Usage: eval-scale-probe CC_MEDIAN_EM < requests > json-lines
 *        eval-scale-probe --recognize MODEL [SCALE_CANDIDATES] < requests > json-lines
 *
 * Requests as eval-engine-inputs (little endian, repeated to EOF):
 *   int32 width, int32 height, int32 channels (1 = gray, 3 = RGB),
 *   float32 (ignored), then width*height*channels uint8 pixels.
 * One JSON line per request: the engine's median-height estimate with the
 * given cc_median_em ("em"), its maximum-likelihood estimate ("em_mle", the
 * one preprocessing uses), and every component of ink > 0.25 (8-connected, two
 * pixels or more) as [x0, y0, x1, y1, sub-pixel height, binarised area,
 * horizontal runs, vertical runs, ink mass]. The pixels go through the
 * engine's own fe_image_to_ink(), so the study sees the engine's ink.
 * With --recognize the request's float is the em_px_hint (any value, unlike
 * formulate-cli's integer --em-px) and each line is the engine's greedy
 * result: {"latex", "conf_mean", "conf_min", "scale", "ms", "cpu_ms"} (wall
 * and process CPU milliseconds of all candidates), with
 * FeRecognizeParams.scale_candidates = SCALE_CANDIDATES when given.
 */
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "fe-preprocess.h"

static int read_exact(void *buf, size_t n) { return fread(buf, 1, n, stdin) == n ? 0 : -1; }

static void components(const float *ink, int w, int h) {
    size_t n = (size_t)w * h;
    uint8_t *seen = calloc(n, 1);
    int32_t *stack = malloc(n * sizeof *stack);
    int32_t *pix = malloc(n * sizeof *pix);
    bool first = true;
    if (!seen || !stack || !pix)
        goto out;
    for (size_t start = 0; start < n; start++) {
        if (seen[start] || ink[start] <= 0.25f)
            continue;
        size_t sp = 0, np = 0;
        stack[sp++] = (int32_t)start;
        seen[start] = 1;
        int x0 = w, x1 = -1, y0 = h, y1 = -1;
        double mass = 0;
        while (sp > 0) {
            int32_t p = stack[--sp];
            pix[np++] = p;
            int px = p % w, py = p / w;
            mass += ink[p];
            if (px < x0) x0 = px;
            if (px > x1) x1 = px;
            if (py < y0) y0 = py;
            if (py > y1) y1 = py;
            for (int dy = -1; dy <= 1; dy++)
                for (int dx = -1; dx <= 1; dx++) {
                    int nx = px + dx, ny = py + dy;
                    if (nx < 0 || ny < 0 || nx >= w || ny >= h)
                        continue;
                    size_t q = (size_t)ny * w + nx;
                    if (!seen[q] && ink[q] > 0.25f) {
                        seen[q] = 1;
                        stack[sp++] = (int32_t)q;
                    }
                }
        }
        if (np < 2)
            continue;
        /* runs: a pixel of this component whose left (upper) neighbour is
         * not ink starts a horizontal (vertical) run */
        long hr = 0, vr = 0;
        for (size_t k = 0; k < np; k++) {
            int px = pix[k] % w, py = pix[k] / w;
            if (px == 0 || ink[(size_t)py * w + px - 1] <= 0.25f) hr++;
            if (py == 0 || ink[(size_t)(py - 1) * w + px] <= 0.25f) vr++;
        }
        float top = 0, bot = 0;
        for (int x = x0; x <= x1; x++) {
            if (y0 > 0 && ink[(size_t)(y0 - 1) * w + x] > top) top = ink[(size_t)(y0 - 1) * w + x];
            if (y1 < h - 1 && ink[(size_t)(y1 + 1) * w + x] > bot) bot = ink[(size_t)(y1 + 1) * w + x];
        }
        printf("%s[%d,%d,%d,%d,%.3f,%zu,%ld,%ld,%.2f]", first ? "" : ",", x0, y0, x1, y1,
               (double)(y1 - y0 + 1) + top + bot, np, hr, vr, mass);
        first = false;
    }
out:
    free(seen);
    free(stack);
    free(pix);
}

static void json_string(const char *s) {
    putchar('"');
    for (; *s; s++) {
        if (*s == '"' || *s == '\\')
            printf("\\%c", *s);
        else if ((unsigned char)*s < 0x20)
            printf("\\u%04x", *s);
        else
            putchar(*s);
    }
    putchar('"');
}

int main(int argc, char **argv) {
    FeContext *ctx = NULL;
    FeState *st = NULL;
    int candidates = -1;
    if ((argc == 3 || argc == 4) && strcmp(argv[1], "--recognize") == 0) {
        if (argc == 4)
            candidates = atoi(argv[3]);
        FeContextParams params = fe_context_default_params();
        params.device = "cpu";
        params.n_threads = 1;
        if (fe_context_load(argv[2], &params, &ctx) != FE_OK || fe_state_new(ctx, &st) != FE_OK) {
            fprintf(stderr, "eval-scale-probe: %s\n", fe_last_error());
            fe_context_free(ctx);
            return 1;
        }
    } else if (argc != 2) {
        fprintf(stderr, "usage: eval-scale-probe CC_MEDIAN_EM < requests > json-lines\n");
        return 1;
    }
    float cc = ctx ? 0.0f : (float)atof(argv[1]);
    for (;;) {
        int32_t head[3];
        float hint;
        size_t n = fread(head, sizeof head[0], 3, stdin);
        if (n == 0 && feof(stdin))
            break;
        if (n != 3 || read_exact(&hint, sizeof hint) != 0 || head[0] <= 0 || head[1] <= 0 ||
            (head[2] != 1 && head[2] != 3) || head[0] > 1 << 16 || head[1] > 1 << 16) {
            fprintf(stderr, "eval-scale-probe: malformed request\n");
            return 1;
        }
        size_t bytes = (size_t)head[0] * head[1] * head[2];
        uint8_t *data = malloc(bytes);
        if (!data || read_exact(data, bytes) != 0) {
            fprintf(stderr, "eval-scale-probe: truncated request\n");
            free(data);
            return 1;
        }
        FeImage img = {.data = data, .width = head[0], .height = head[1],
                       .format = head[2] == 1 ? FE_PIXEL_GRAY8 : FE_PIXEL_RGB8,
                       .em_px_hint = hint};
        float *ink = NULL;
        if (ctx) {
            FeRecognizeParams rp = fe_recognize_default_params();
            if (candidates >= 0)
                rp.scale_candidates = candidates;
            FeResult res = {0};
            if (fe_recognize(st, &img, 1, &rp, &res) == FE_OK) {
                printf("{\"latex\":");
                json_string(res.latex);
                printf(",\"conf_mean\":%.5f,\"conf_min\":%.5f,\"scale\":%.5f,\"ms\":%.2f,"
                       "\"cpu_ms\":%.2f}\n",
                       (double)res.confidence_mean, (double)res.confidence_min, (double)res.scale,
                       res.preprocess_ms + res.encoder_ms + res.decoder_ms,
                       res.preprocess_cpu_ms + res.encoder_cpu_ms + res.decoder_cpu_ms);
            } else {
                printf("{\"error\":");
                json_string(fe_last_error());
                printf("}\n");
            }
            fe_result_clear(&res);
        } else if (fe_image_to_ink(&img, &ink, NULL) != FE_OK) {
            printf("{\"error\": true}\n");
        } else {
            printf("{\"w\":%d,\"h\":%d,\"em\":%.4f,\"em_mle\":%.4f,\"comps\":[", head[0],
                   head[1], (double)fe_estimate_em_px(ink, head[0], head[1], cc),
                   (double)fe_estimate_em_px_mle(ink, head[0], head[1]));
            components(ink, head[0], head[1]);
            printf("]}\n");
        }
        free(ink);
        free(data);
        fflush(stdout);
    }
    fe_state_free(st);
    fe_context_free(ctx);
    return 0;
}
