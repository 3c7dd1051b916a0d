/* fe-preprocess.c - any formula image -> the model's ink image.
 *
 * Steps (the numbers are explained in docs/preprocessing.md):
 *   1. pixels -> gray (+ alpha), dark backgrounds inverted, contrast stretched
 *      from the background level (the median) to the darkest ink;
 *   2. crop to the bounding box of ink > 0.25;
 *   3. glyph scale: em_px_hint when given, else the em under which the
 *      connected components' (height, width) are most likely, by the density
 *      of fe-scale-prior.h (times em_factor: fe_recognize's scale search);
 *      scale = em_px / em, left at 1 when within +-10 % so already-right
 *      images are not blurred by resampling;
 *   4. resample (area averaging down, cubic up), capped so the result with
 *      its margin fits max_height x max_width;
 *   5. place at a margin of em_px/10 and pad with background to the strides.
 */
#include "fe-preprocess.h"
#include "fe-scale-prior.h"

#include <math.h>
#include <stdlib.h>
#include <string.h>

/* Images above this are refused before any allocation: 64 Mpixel is a
 * 8000x8000 scan, far beyond any formula crop. */
#define FE_MAX_INPUT_PIXELS (64LL * 1024 * 1024)
/* Binarisation for the ink box and the connected components. Low, because
 * at 96 dpi the hairlines of a 10 pt font cover well under half a pixel: at
 * 0.5 the glyphs fall apart into fragments and the median height halves. */
#define FE_INK_THRESHOLD 0.25f
/* Scale estimates this close to 1 leave the image untouched. */
#define FE_SCALE_TOLERANCE 0.10f

static int fe_bytes_per_pixel(fe_pixel_format f) {
    switch (f) {
    case FE_PIXEL_GRAY8: return 1;
    case FE_PIXEL_RGB8: return 3;
    case FE_PIXEL_RGBA8: return 4;
    default: return 0;
    }
}

fe_status fe_image_to_ink(const FeImage *image, float **out, bool *out_inverted) {
    if (!image || !out)
        return fe_set_error(FE_ERR_INVALID_ARGUMENT, "preprocess: NULL image");
    int bpp = fe_bytes_per_pixel(image->format);
    if (bpp == 0)
        return fe_set_error(FE_ERR_INVALID_ARGUMENT, "preprocess: unknown pixel format %d",
                            (int)image->format);
    if (!image->data || image->width <= 0 || image->height <= 0)
        return fe_set_error(FE_ERR_INVALID_ARGUMENT, "preprocess: empty image (%dx%d)",
                            image->width, image->height);
    if ((long long)image->width * image->height > FE_MAX_INPUT_PIXELS)
        return fe_set_error(FE_ERR_INVALID_ARGUMENT, "preprocess: image %dx%d is too large",
                            image->width, image->height);
    size_t stride = image->stride ? (size_t)image->stride : (size_t)image->width * bpp;
    if (stride < (size_t)image->width * bpp)
        return fe_set_error(FE_ERR_INVALID_ARGUMENT,
                            "preprocess: stride %d is smaller than a row (%d bytes)",
                            image->stride, image->width * bpp);

    int w = image->width, h = image->height;
    size_t n = (size_t)w * h;
    float *gray = malloc(n * sizeof(float));
    float *alpha = malloc(n * sizeof(float));
    if (!gray || !alpha) {
        free(gray);
        free(alpha);
        return fe_set_error(FE_ERR_OUT_OF_MEMORY, "preprocess: out of memory for %dx%d", w, h);
    }
    /* Histogram of opaque pixels: the median is the background level because
     * formula crops are mostly background. */
    size_t hist[256] = {0};
    size_t n_opaque = 0;
    for (int y = 0; y < h; y++) {
        const uint8_t *row = image->data + (size_t)y * stride;
        for (int x = 0; x < w; x++) {
            float g, a = 1.0f;
            const uint8_t *p = row + (size_t)x * bpp;
            switch (image->format) {
            case FE_PIXEL_GRAY8: g = p[0]; break;
            case FE_PIXEL_RGB8: g = 0.299f * p[0] + 0.587f * p[1] + 0.114f * p[2]; break;
            case FE_PIXEL_RGBA8:
                g = 0.299f * p[0] + 0.587f * p[1] + 0.114f * p[2];
                a = p[3] / 255.0f;
                break;
            default: g = 255.0f; break;
            }
            gray[(size_t)y * w + x] = g;
            alpha[(size_t)y * w + x] = a;
            if (a >= 0.5f) {
                int bin = (int)lrintf(g);
                hist[bin < 0 ? 0 : bin > 255 ? 255 : bin]++;
                n_opaque++;
            }
        }
    }
    int median = 255;
    if (n_opaque > 0) {
        size_t acc = 0;
        for (int i = 0; i < 256; i++) {
            acc += hist[i];
            if (acc * 2 >= n_opaque) {
                median = i;
                break;
            }
        }
    }
    /* Mostly transparent: a drawing on a clear background (a screenshot of
     * a dark-mode formula, say). The opaque shapes are the ink whatever their
     * colour. */
    bool shapes_are_ink = n_opaque * 2 < n;
    bool inverted = !shapes_are_ink && median < 128;
    float bg_ink = shapes_are_ink ? 0.0f : inverted ? median / 255.0f : 1.0f - median / 255.0f;
    float max_ink = 0.0f;
    for (size_t i = 0; i < n; i++) {
        float v = shapes_are_ink ? 1.0f : inverted ? gray[i] / 255.0f : 1.0f - gray[i] / 255.0f;
        /* Transparent pixels are background whatever their colour. */
        v = alpha[i] * v;
        gray[i] = v;
        if (v > max_ink)
            max_ink = v;
    }
    free(alpha);
    /* Stretch [background, darkest ink] to [0, 1] so gray paper and faint
     * print look like the clean renders the model was trained on. A range
     * under 0.1 is noise on a blank image: leave it blank. */
    float range = max_ink - bg_ink;
    for (size_t i = 0; i < n; i++) {
        float v = range >= 0.1f ? (gray[i] - bg_ink) / range : 0.0f;
        gray[i] = v < 0.0f ? 0.0f : v > 1.0f ? 1.0f : v;
    }
    *out = gray;
    if (out_inverted)
        *out_inverted = inverted;
    return FE_OK;
}

typedef struct {
    float height;  /* sub-pixel height, see fe_component_height */
    int width, bin_height;
} FeComponent;

static int fe_compare_float(const void *a, const void *b) {
    float x = *(const float *)a, y = *(const float *)b;
    return (x > y) - (x < y);
}

static float fe_median(float *v, int n) {
    qsort(v, (size_t)n, sizeof *v, fe_compare_float);
    return n % 2 ? v[n / 2] : 0.5f * (v[n / 2 - 1] + v[n / 2]);
}

static float fe_row_max(const float *ink, int w, int h, int y, int x0, int x1) {
    float m = 0.0f;
    if (y < 0 || y >= h)
        return 0.0f;
    for (int x = x0; x <= x1; x++)
        if (ink[(size_t)y * w + x] > m)
            m = ink[(size_t)y * w + x];
    return m;
}

/* Height with sub-pixel refinement: the binarised rows count 1 each, the
 * rows just above and below add their strongest ink (under the threshold)
 * within the component's columns. At 96 dpi a glyph edge that covers 20 % of
 * a row thus adds 0.2 instead of 0 or 1, so the estimate is not off by a
 * whole pixel (7 % of a 13 px em) depending on where it falls on the grid.
 * (Counting the partial coverage of the binarised edge rows too looks more
 * exact but is not: hairline curve tops cover far less of their row than the
 * glyph's extent into it, and the estimate shrinks at low resolution.) */
static float fe_component_height(const float *ink, int w, int h, int x0, int x1, int y0, int y1) {
    return (float)(y1 - y0 + 1) + fe_row_max(ink, w, h, y0 - 1, x0, x1) +
           fe_row_max(ink, w, h, y1 + 1, x0, x1);
}

/* The connected components of ink > FE_INK_THRESHOLD (8-connected: anti-
 * aliased diagonal strokes touch only at corners once binarised), lone
 * pixels dropped as noise. *out malloc'd; returns the count, -1 when out of
 * memory. */
static long fe_components(const float *ink, int w, int h, FeComponent **out) {
    size_t n = (size_t)w * h;
    uint8_t *seen = calloc(n, 1);
    int32_t *stack = malloc(n * sizeof *stack);
    size_t comp_cap = 256, n_comp = 0;
    FeComponent *comps = malloc(comp_cap * sizeof *comps);
    long result = -1;
    *out = NULL;
    if (!seen || !stack || !comps)
        goto out;
    for (size_t start = 0; start < n; start++) {
        if (seen[start] || ink[start] <= FE_INK_THRESHOLD)
            continue;
        size_t sp = 0;
        stack[sp++] = (int32_t)start;
        seen[start] = 1;
        int x0 = w, x1 = -1, y0 = h, y1 = -1;
        long area = 0;
        while (sp > 0) {
            int32_t p = stack[--sp];
            int px = p % w, py = p / w;
            area++;
            if (px < x0) x0 = px;
            if (px > x1) x1 = px;
            if (py < y0) y0 = py;
            if (py > y1) y1 = py;
            for (int dy = -1; dy <= 1; dy++) {
                int ny = py + dy;
                if (ny < 0 || ny >= h)
                    continue;
                for (int dx = -1; dx <= 1; dx++) {
                    int nx = px + dx;
                    if (nx < 0 || nx >= w)
                        continue;
                    size_t q = (size_t)ny * w + nx;
                    if (!seen[q] && ink[q] > FE_INK_THRESHOLD) {
                        seen[q] = 1;
                        stack[sp++] = (int32_t)q;
                    }
                }
            }
        }
        if (area < 2)
            continue;  /* a lone pixel is noise, not a glyph */
        if (n_comp == comp_cap) {
            comp_cap *= 2;
            FeComponent *grown = realloc(comps, comp_cap * sizeof *comps);
            if (!grown)
                goto out;
            comps = grown;
        }
        comps[n_comp].width = x1 - x0 + 1;
        comps[n_comp].bin_height = y1 - y0 + 1;
        comps[n_comp].height = fe_component_height(ink, w, h, x0, x1, y0, y1);
        n_comp++;
    }
    *out = comps;
    comps = NULL;
    result = (long)n_comp;
out:
    free(seen);
    free(stack);
    free(comps);
    return result;
}

float fe_estimate_em_px(const float *ink, int w, int h, float cc_median_em) {
    if (!ink || w <= 0 || h <= 0 || cc_median_em <= 0.0f)
        return 0.0f;
    FeComponent *comps = NULL;
    long n_comp = fe_components(ink, w, h, &comps);
    float *heights = NULL;
    float em = 0.0f;
    if (n_comp <= 0)
        goto out;
    heights = malloc((size_t)n_comp * sizeof *heights);
    if (!heights)
        goto out;
    /* Rules (fraction bars, minus, the strokes of =, overlines) say nothing
     * about the font size: their height is the line thickness. */
    int k = 0;
    for (long i = 0; i < n_comp; i++)
        if (comps[i].width < 3 * comps[i].bin_height)
            heights[k++] = comps[i].height;
    if (k == 0) {
        /* Only rules: use them anyway rather than nothing. */
        for (long i = 0; i < n_comp; i++)
            heights[k++] = comps[i].height;
    }
    float m0 = fe_median(heights, k);
    /* Dots (of i, j, \cdot, periods) are far below and big delimiters,
     * integral signs and radicals far above the typical glyph. */
    int k2 = 0;
    for (int i = 0; i < k; i++)
        if (heights[i] >= 0.4f * m0 && heights[i] <= 2.2f * m0)
            heights[k2++] = heights[i];
    float m = k2 > 0 ? fe_median(heights, k2) : m0;
    em = m / cc_median_em;
out:
    free(comps);
    free(heights);
    return em;
}

/* Search range and step of the maximum-likelihood em, in ln(pixels): 3 to
 * 400 px per em (a 5 pt font at 43 dpi to 40 pt at 720 dpi), 1 % steps. */
#define FE_MLE_LN_MIN 1.0986123f /* ln 3 */
#define FE_MLE_LN_MAX 5.9914645f /* ln 400 */
#define FE_MLE_LN_STEP 0.01f
#define FE_MLE_MIN_PX 2

static float fe_prior_log_density(float u, float v) {
    /* nearest bin; outside the table the density is the floor */
    float fr = (u - FE_PRIOR_U0) / FE_PRIOR_STEP, fc = (v - FE_PRIOR_V0) / FE_PRIOR_STEP;
    if (!(fr >= 0.0f) || !(fc >= 0.0f) || fr >= FE_PRIOR_ROWS || fc >= FE_PRIOR_COLS)
        return FE_PRIOR_FLOOR;
    return fe_scale_prior[(int)fr][(int)fc];
}

float fe_estimate_em_px_mle(const float *ink, int w, int h) {
    if (!ink || w <= 0 || h <= 0)
        return 0.0f;
    FeComponent *comps = NULL;
    long n_comp = fe_components(ink, w, h, &comps);
    float *lh = NULL, *lw = NULL;
    float em = 0.0f;
    if (n_comp <= 0)
        goto out;
    lh = malloc((size_t)n_comp * sizeof *lh);
    lw = malloc((size_t)n_comp * sizeof *lw);
    if (!lh || !lw)
        goto out;
    /* Components of at most FE_MLE_MIN_PX in both directions are left out
     * (the density was measured without them too): on a scan they are mostly
     * specks, which look like the dots of a much smaller font. Measured
     * (tools/eval/scale_study.py --degrade speckle --sets pdftoppm-300dpi,
     * 0.3 % two-pixel specks): estimate / true em 0.27 with them, 0.98
     * without; on the clean val study 3.6 % median error either way (87.2 vs
     * 86.9 % within 10 %). When nothing bigger exists they are all there is. */
    long n_big = 0;
    for (long i = 0; i < n_comp; i++)
        n_big += comps[i].width > FE_MLE_MIN_PX || comps[i].bin_height > FE_MLE_MIN_PX;
    long k = 0;
    for (long i = 0; i < n_comp; i++) {
        if (n_big > 0 && comps[i].width <= FE_MLE_MIN_PX && comps[i].bin_height <= FE_MLE_MIN_PX)
            continue;
        lh[k] = logf(comps[i].height > 0.5f ? comps[i].height : 0.5f);
        lw[k] = logf((float)comps[i].width);
        k++;
    }
    n_comp = k;
    /* A change of scale shifts every component by the same amount in log
     * units: the em is the shift that makes the image's (height, width)
     * pairs most likely under the density measured on renders of known em
     * (fe-scale-prior.h). Heights alone confuse x-height letters with
     * capitals and digits; with the widths the shapes tell them apart
     * (measured: median error 3.7 % vs 5.8 % with heights only and 17 %
     * for the median height, docs/preprocessing.md). */
    double best = -INFINITY;
    float best_ln = 0.0f;
    int steps = (int)((FE_MLE_LN_MAX - FE_MLE_LN_MIN) / FE_MLE_LN_STEP);
    for (int s = 0; s <= steps; s++) {
        float ln_em = FE_MLE_LN_MIN + s * FE_MLE_LN_STEP;
        double total = 0.0;
        for (long i = 0; i < n_comp; i++)
            total += fe_prior_log_density(lh[i] - ln_em, lw[i] - ln_em);
        if (total > best) {
            best = total;
            best_ln = ln_em;
        }
    }
    em = expf(best_ln);
out:
    free(comps);
    free(lh);
    free(lw);
    return em;
}

/* Per-axis resampling weights: output i reads src[first[i] .. first[i]+count[i]-1]
 * with weights w[i*span ...]. */
typedef struct {
    int *first, *count;
    float *weight;
    int span;
} FeAxisWeights;

static void fe_axis_free(FeAxisWeights *a) {
    free(a->first);
    free(a->count);
    free(a->weight);
}

static bool fe_axis_build(FeAxisWeights *a, int src_len, int dst_len) {
    double ratio = (double)src_len / dst_len;  /* source pixels per output pixel */
    a->span = dst_len < src_len ? (int)ceil(ratio) + 2 : 4;
    a->first = malloc((size_t)dst_len * sizeof(int));
    a->count = malloc((size_t)dst_len * sizeof(int));
    a->weight = calloc((size_t)dst_len * a->span, sizeof(float));
    if (!a->first || !a->count || !a->weight)
        return false;
    for (int i = 0; i < dst_len; i++) {
        float *wt = a->weight + (size_t)i * a->span;
        if (dst_len < src_len) {
            /* Area averaging: each output pixel is the mean of the source
             * interval it covers, partial pixels weighted by coverage. */
            double s0 = i * ratio, s1 = (i + 1) * ratio;
            int j0 = (int)floor(s0), j1 = (int)ceil(s1) - 1;
            if (j1 >= src_len)
                j1 = src_len - 1;
            a->first[i] = j0;
            a->count[i] = j1 - j0 + 1;
            for (int j = j0; j <= j1; j++) {
                double lo = j > s0 ? j : s0, hi = j + 1 < s1 ? j + 1 : s1;
                wt[j - j0] = (float)((hi - lo) / ratio);
            }
        } else {
            /* Cubic convolution (Keys, a = -0.5) with pixel centres aligned
             * (as PyTorch's align_corners=False), edge pixels repeated. It
             * keeps an enlarged glyph's edges closer to the crisp ones of the
             * training renders than bilinear does (measured on the val split:
             * docs/preprocessing.md). Its overshoot is clipped in fe_resize_ink. */
            const double A = -0.5;
            double sx = (i + 0.5) * ratio - 0.5;
            double base = floor(sx), t = sx - base;
            int j0 = (int)base - 1;
            int lo = j0 < 0 ? 0 : j0;
            int hi = j0 + 3 > src_len - 1 ? src_len - 1 : j0 + 3;
            if (lo > hi)
                lo = hi;
            a->first[i] = lo;
            a->count[i] = hi - lo + 1;
            for (int k = 0; k < 4; k++) {
                double d = fabs(t - (k - 1));
                double c = d <= 1.0   ? ((A + 2.0) * d - (A + 3.0)) * d * d + 1.0
                           : d < 2.0 ? ((A * d - 5.0 * A) * d + 8.0 * A) * d - 4.0 * A
                                     : 0.0;
                int j = j0 + k < lo ? lo : j0 + k > hi ? hi : j0 + k;
                wt[j - lo] += (float)c;
            }
        }
    }
    return true;
}

void fe_resize_ink(const float *src, int src_w, int src_h, float *dst, int dst_w, int dst_h) {
    FeAxisWeights ax = {0}, ay = {0};
    float *tmp = malloc((size_t)src_h * dst_w * sizeof(float));
    if (!tmp || !fe_axis_build(&ax, src_w, dst_w) || !fe_axis_build(&ay, src_h, dst_h)) {
        /* Callers size dst and check allocation through fe_preprocess_config;
         * on a failed scratch allocation leave a blank image, never garbage. */
        memset(dst, 0, (size_t)dst_w * dst_h * sizeof(float));
        goto out;
    }
    for (int y = 0; y < src_h; y++) {
        const float *row = src + (size_t)y * src_w;
        for (int x = 0; x < dst_w; x++) {
            const float *wt = ax.weight + (size_t)x * ax.span;
            float acc = 0.0f;
            for (int k = 0; k < ax.count[x]; k++)
                acc += wt[k] * row[ax.first[x] + k];
            tmp[(size_t)y * dst_w + x] = acc;
        }
    }
    for (int y = 0; y < dst_h; y++) {
        const float *wt = ay.weight + (size_t)y * ay.span;
        float *out = dst + (size_t)y * dst_w;
        for (int x = 0; x < dst_w; x++)
            out[x] = 0.0f;
        for (int k = 0; k < ay.count[y]; k++) {
            const float *row = tmp + (size_t)(ay.first[y] + k) * dst_w;
            float f = wt[k];
            for (int x = 0; x < dst_w; x++)
                out[x] += f * row[x];
        }
        for (int x = 0; x < dst_w; x++)
            out[x] = out[x] < 0.0f ? 0.0f : out[x] > 1.0f ? 1.0f : out[x];
    }
out:
    free(tmp);
    fe_axis_free(&ax);
    fe_axis_free(&ay);
}

static int fe_round_up(int v, int m) { return (v + m - 1) / m * m; }

fe_status fe_preprocess_config(const FeModelConfig *cfg, const FeImage *image, float **out,
                               int *out_height, int *out_width, float *out_scale) {
    return fe_preprocess_config_em(cfg, image, 1.0f, out, out_height, out_width, out_scale);
}

fe_status fe_preprocess_config_em(const FeModelConfig *cfg, const FeImage *image, float em_factor,
                                  float **out, int *out_height, int *out_width, float *out_scale) {
    if (!cfg || !out || !out_height || !out_width)
        return fe_set_error(FE_ERR_INVALID_ARGUMENT, "preprocess: NULL argument");
    *out = NULL;
    float *ink = NULL;
    FE_TRY(fe_image_to_ink(image, &ink, NULL));
    int w = image->width, h = image->height;

    int x0 = w, x1 = -1, y0 = h, y1 = -1;
    for (int y = 0; y < h; y++)
        for (int x = 0; x < w; x++)
            if (ink[(size_t)y * w + x] > FE_INK_THRESHOLD) {
                if (x < x0) x0 = x;
                if (x > x1) x1 = x;
                if (y < y0) y0 = y;
                if (y > y1) y1 = y;
            }
    int hs = cfg->height_stride, ws = cfg->width_stride;
    int margin = (int)lrintf(cfg->em_px / 10.0f);
    if (margin < 1)
        margin = 1;
    float scale = 1.0f;
    int crop_w = 0, crop_h = 0;
    if (x1 >= 0) {
        /* Keep one pixel of anti-aliasing around the binarised box. */
        x0 = x0 > 0 ? x0 - 1 : 0;
        y0 = y0 > 0 ? y0 - 1 : 0;
        x1 = x1 < w - 1 ? x1 + 1 : x1;
        y1 = y1 < h - 1 ? y1 + 1 : y1;
        crop_w = x1 - x0 + 1;
        crop_h = y1 - y0 + 1;
        float em;
        if (image->em_px_hint > 0.0f) {
            em = image->em_px_hint;
        } else {
            float *crop = malloc((size_t)crop_w * crop_h * sizeof(float));
            if (!crop) {
                free(ink);
                return fe_set_error(FE_ERR_OUT_OF_MEMORY, "preprocess: out of memory");
            }
            for (int y = 0; y < crop_h; y++)
                memcpy(crop + (size_t)y * crop_w, ink + (size_t)(y0 + y) * w + x0,
                       (size_t)crop_w * sizeof(float));
            em = fe_estimate_em_px_mle(crop, crop_w, crop_h) * em_factor;
            free(crop);
        }
        if (em > 0.0f)
            scale = cfg->em_px / em;
        if (fabsf(scale - 1.0f) <= FE_SCALE_TOLERANCE)
            scale = 1.0f;
        float avail_h = (float)(cfg->max_height - 2 * margin);
        float avail_w = (float)(cfg->max_width - 2 * margin);
        if (crop_h * scale > avail_h)
            scale = avail_h / crop_h;
        if (crop_w * scale > avail_w)
            scale = avail_w / crop_w;
    }
    int rw = 0, rh = 0;
    if (crop_w > 0) {
        rw = (int)lrintf(crop_w * scale);
        rh = (int)lrintf(crop_h * scale);
        if (rw < 1) rw = 1;
        if (rh < 1) rh = 1;
        if (rw > cfg->max_width - 2 * margin) rw = cfg->max_width - 2 * margin;
        if (rh > cfg->max_height - 2 * margin) rh = cfg->max_height - 2 * margin;
    }
    int oh = fe_round_up(rh + 2 * margin, hs);
    int ow = fe_round_up(rw + 2 * margin, ws);
    if (oh > cfg->max_height) oh = cfg->max_height / hs * hs;
    if (ow > cfg->max_width) ow = cfg->max_width / ws * ws;
    float *img = calloc((size_t)oh * ow, sizeof(float));
    if (!img) {
        free(ink);
        return fe_set_error(FE_ERR_OUT_OF_MEMORY, "preprocess: out of memory for %dx%d", ow, oh);
    }
    if (crop_w > 0) {
        float *src = malloc((size_t)crop_w * crop_h * sizeof(float));
        float *res = malloc((size_t)rw * rh * sizeof(float));
        if (!src || !res) {
            free(src);
            free(res);
            free(img);
            free(ink);
            return fe_set_error(FE_ERR_OUT_OF_MEMORY, "preprocess: out of memory");
        }
        for (int y = 0; y < crop_h; y++)
            memcpy(src + (size_t)y * crop_w, ink + (size_t)(y0 + y) * w + x0,
                   (size_t)crop_w * sizeof(float));
        if (rw == crop_w && rh == crop_h)
            memcpy(res, src, (size_t)rw * rh * sizeof(float));
        else
            fe_resize_ink(src, crop_w, crop_h, res, rw, rh);
        for (int y = 0; y < rh; y++)
            memcpy(img + (size_t)(y + margin) * ow + margin, res + (size_t)y * rw,
                   (size_t)rw * sizeof(float));
        free(src);
        free(res);
    }
    free(ink);
    *out = img;
    *out_height = oh;
    *out_width = ow;
    if (out_scale)
        *out_scale = scale;
    return FE_OK;
}
