/* fe-api.c - the public API of fe.h on top of the model layer. */
#include "fe-preprocess.h"

#include <math.h>
#include <pthread.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>

struct FeContext {
    FeModel model;
    FeModelInfo info;
    FeRuntimeInfo runtime;
    char **vocab;
    int n_vocab;
    FeCalibration calibration;     /* present == false: confidence = mean prob */
    fe_log_callback log_callback;
    void *log_user_data;
    /* bytes of state buffers on the device, for runtime_info */
    pthread_mutex_t lock;
    uint64_t state_bytes;
};

struct FeState {
    FeContext *ctx;
    FeStateBuffers sb;
    int *tokens;                   /* [max_tokens]                             */
    uint64_t bytes;
};

FeStateBuffers *fe_state_buffers(FeState *state) { return state ? &state->sb : NULL; }

static void fe_context_log(const FeContext *ctx, fe_log_level level, const char *fmt, ...)
    __attribute__((format(printf, 3, 4)));
static void fe_context_log(const FeContext *ctx, fe_log_level level, const char *fmt, ...) {
    char msg[512];
    va_list ap;
    va_start(ap, fmt);
    vsnprintf(msg, sizeof msg, fmt, ap);
    va_end(ap);
    if (ctx && ctx->log_callback)
        ctx->log_callback(level, msg, ctx->log_user_data);
    else
        fe_log(level, "%s", msg);
}

FeContextParams fe_context_default_params(void) {
    FeContextParams p;
    memset(&p, 0, sizeof p);
    p.device = "auto";
    p.precision = FE_PRECISION_AUTO;
    p.n_threads = 0;
    p.config_path = NULL;
    p.log_callback = NULL;
    p.log_user_data = NULL;
    return p;
}

/* ------------------------------------------------------------------------ */
/* Device choice                                                            */

static bool fe_is_cuda_id(const char *s) {
    if (strcmp(s, "cuda") == 0)
        return true;
    if (strncmp(s, "cuda:", 5) != 0 || !s[5])
        return false;
    for (const char *p = s + 5; *p; p++)
        if (*p < '0' || *p > '9')
            return false;
    return true;
}

fe_status fe_device_choose(const char *request, FeDevice **out_device, bool *fell_back,
                           char *reason, size_t reason_size) {
    *out_device = NULL;
    *fell_back = false;
    if (reason_size)
        reason[0] = '\0';
    if (!request || !*request || strcmp(request, "auto") == 0) {
        /* The best usable GPU, else the CPU with the reason none was taken. */
        FeDeviceInfo devs[16];
        size_t n = fe_devices_list(devs, 16);
        if (n > 16)
            n = 16;
        char why[256] = "";
        for (size_t i = 0; i < n; i++) {
            if (devs[i].kind != FE_DEVICE_CUDA)
                continue;
            if (!devs[i].available) {
                if (!why[0])
                    snprintf(why, sizeof why, "no CUDA device: %.200s", devs[i].unavailable_reason);
                continue;
            }
            if (fe_device_open(devs[i].id, out_device) == FE_OK)
                return FE_OK;
            snprintf(why, sizeof why, "%.31s failed: %.200s", devs[i].id, fe_last_error());
        }
        if (!why[0])
            snprintf(why, sizeof why, "no CUDA device");
        *fell_back = true;
        snprintf(reason, reason_size, "%.255s", why);
        fe_clear_error();
        return fe_device_open("cpu", out_device);
    }
    if (strcmp(request, "cpu") == 0)
        return fe_device_open("cpu", out_device);
    if (fe_is_cuda_id(request))
        return fe_device_open(request, out_device);
    if (strcmp(request, "all") == 0 || strchr(request, ',')) {
        /* Splitting batches across GPUs is not implemented; a set naming one
         * usable GPU runs on it, anything more is refused rather than
         * silently using one. */
        FeDeviceInfo devs[16];
        size_t n = fe_devices_list(devs, 16);
        if (n > 16)
            n = 16;
        int usable = 0;
        const char *first = NULL;
        char why[256] = "no CUDA device";
        for (size_t i = 0; i < n; i++) {
            if (devs[i].kind != FE_DEVICE_CUDA)
                continue;
            bool named = strcmp(request, "all") == 0;
            if (!named) {
                const char *p = request;
                size_t idl = strlen(devs[i].id);
                while (p && *p) {
                    if (strncmp(p, devs[i].id, idl) == 0 && (p[idl] == ',' || p[idl] == '\0'))
                        named = true;
                    p = strchr(p, ',');
                    if (p)
                        p++;
                }
            }
            if (!named)
                continue;
            if (devs[i].available) {
                usable++;
                if (!first)
                    first = devs[i].id;
            } else {
                snprintf(why, sizeof why, "%s", devs[i].unavailable_reason);
            }
        }
        if (usable == 0)
            return fe_set_error(FE_ERR_DEVICE, "device '%s': %s", request, why);
        if (usable > 1)
            return fe_set_error(FE_ERR_UNSUPPORTED,
                                "device '%s': splitting batches across %d GPUs is not implemented; "
                                "name one GPU", request, usable);
        return fe_device_open(first, out_device);
    }
    return fe_set_error(FE_ERR_INVALID_ARGUMENT,
                        "unknown device '%s' (expected auto, cpu, cuda:N or all)", request);
}

/* ------------------------------------------------------------------------ */
/* Context                                                                  */

/* A formula crop for warming up: height x width pixels rounded down to the
 * model's strides (capped by its largest input), with one rule of ink; NULL
 * when out of memory. */
static float *fe_warm_up_crop(const FeModelConfig *c, int height, int width, int *out_h,
                              int *out_w) {
    int h = height - height % c->height_stride, w = width - width % c->width_stride;
    if (h > c->max_height)
        h = c->max_height - c->max_height % c->height_stride;
    if (w > c->max_width)
        w = c->max_width - c->max_width % c->width_stride;
    if (h <= 0)
        h = c->height_stride;
    if (w <= 0)
        w = c->width_stride;
    float *pixels = calloc((size_t)h * w, sizeof *pixels);
    if (!pixels)
        return NULL;
    for (int x = w / 8; x < w - w / 8; x++)
        pixels[(size_t)(h / 2) * w + x] = 1.0f;
    *out_h = h;
    *out_w = w;
    return pixels;
}

/* One small encode and two decoder steps on a fresh GPU context, so that the
 * first formula a person waits for does not pay for what CUDA does on first
 * use: loading our kernels and cuBLAS's into the device (lazy module loading,
 * the default since CUDA 12), cuBLAS picking its algorithms, the first buffers
 * of the device's pool (a freed state's buffers stay there for the next one).
 * Measured on an H200 before this warm-up: 124 ms for the first formula after
 * load, 3 ms a formula after it (bench/RESULTS.md, "GPU proof, 2026-11-26").
 * The image is a typical display crop's size, 64 x 512 pixels. */
static fe_status fe_context_warm_up(FeContext *ctx) {
    int h, w;
    float *pixels = fe_warm_up_crop(&ctx->model.cfg, 64, 512, &h, &w);
    if (!pixels)
        return fe_set_error(FE_ERR_OUT_OF_MEMORY, "out of memory");
    FeState *state = NULL;
    fe_status st = fe_state_new(ctx, &state);
    if (st == FE_OK)
        st = fe_state_encode(state, pixels, h, w);
    if (st == FE_OK) {
        int tokens[2], n = 0;
        st = fe_state_decode_greedy(state, tokens, 2, &n, NULL);
    }
    fe_state_free(state);
    free(pixels);
    return st;
}

fe_status fe_context_load(const char *path, const FeContextParams *params,
                          FeContext **out_context) {
    if (!path || !out_context)
        return fe_set_error(FE_ERR_INVALID_ARGUMENT, "fe_context_load: NULL path or output");
    *out_context = NULL;
    FeContextParams p = params ? *params : fe_context_default_params();
    fe_clear_error();

    FeContext *ctx = calloc(1, sizeof *ctx);
    if (!ctx)
        return fe_set_error(FE_ERR_OUT_OF_MEMORY, "out of memory");
    pthread_mutex_init(&ctx->lock, NULL);
    ctx->log_callback = p.log_callback;
    ctx->log_user_data = p.log_user_data;

    FeDevice *dev = NULL;
    bool fell_back = false;
    char reason[256];
    fe_status st = fe_device_choose(p.device, &dev, &fell_back, reason, sizeof reason);
    if (st != FE_OK) {
        fe_context_free(ctx);
        return st;
    }
    if (p.n_threads > 0)
        fe_cpu_set_threads(p.n_threads);

    FeWeightFile *wf = NULL;
    st = fe_weights_open(path, p.config_path, &wf);
    if (st != FE_OK) {
        fe_context_free(ctx);
        return st;
    }
    /* auto: a device the model does not fit on (a GPU's weights, arenas and
     * KV caches for the widest beam) is passed over for the CPU. Its backend
     * answers (fe-backend-model.h); with FE_CUDA_FAKE_FREE_MB=10 a GPU's
     * answer is no on any GPU. */
    const FeBackendModelOps *ops = fe_backend_model_ops(dev);
    if ((!p.device || !*p.device || strcmp(p.device, "auto") == 0) && ops->model_fits &&
        ops->model_fits(dev, &wf->config, p.precision, 1, FE_MAX_BEAM) != FE_OK) {
        fell_back = true;
        snprintf(reason, sizeof reason, "%.255s", fe_last_error());
        fe_clear_error();
        dev = fe_cpu_device();
        ops = fe_backend_model_ops(dev);
    }
    FeMatrixChoice mc;
    ops->choose_matrices(dev, p.precision, &mc);
    if (mc.note[0])
        fe_context_log(ctx, FE_LOG_WARN, "%s", mc.note);
    fe_precision precision = mc.precision;
    fe_dtype matrix_dtype = mc.matrix_dtype;
    bool cpu_bf16_dot = mc.cpu_bf16_dot;
    st = cpu_bf16_dot ? fe_model_load_cpu_bf16(&ctx->model, wf, dev)
                      : fe_model_load_as(&ctx->model, wf, dev, matrix_dtype);
    if (st != FE_OK) {
        fe_prefix_error(st, "%s", path);
        fe_weights_close(wf);
        fe_context_free(ctx);
        return st;
    }
    /* The vocabulary outlives the mapping, which is released now that the
     * weights are on the device. */
    ctx->vocab = calloc((size_t)wf->n_vocab, sizeof(char *));
    ctx->n_vocab = wf->n_vocab;
    st = ctx->vocab ? FE_OK : fe_set_error(FE_ERR_OUT_OF_MEMORY, "out of memory");
    for (int i = 0; st == FE_OK && i < wf->n_vocab; i++) {
        ctx->vocab[i] = strdup(wf->vocab[i]);
        if (!ctx->vocab[i])
            st = fe_set_error(FE_ERR_OUT_OF_MEMORY, "out of memory");
    }
    /* The confidence calibration is optional: without it (or with one this
     * engine cannot use) the model reads formulas as before. */
    for (int i = 0; st == FE_OK && i < wf->n_meta; i++) {
        if (strcmp(wf->meta_keys[i], "formulate.calibration") != 0)
            continue;
        char ignored[160];
        st = fe_calibration_parse(wf->meta_values[i], &ctx->calibration, ignored, sizeof ignored);
        if (st != FE_OK)
            fe_prefix_error(st, "%s", path);
        else if (!ctx->calibration.present)
            fe_context_log(ctx, FE_LOG_WARN, "%s: %s; confidence is the mean token probability",
                           path, ignored);
    }
    /* weights dtype: the dtype of the file's first floating tensor */
    const char *wdtype = "f32";
    for (size_t i = 0; i < wf->n_entries; i++) {
        fe_dtype dt = wf->entries[i].dtype;
        if (dt == FE_DTYPE_F32 || dt == FE_DTYPE_F16 || dt == FE_DTYPE_BF16) {
            wdtype = fe_dtype_name(dt);
            break;
        }
    }
    FeModelInfo *mi = &ctx->info;
    const FeModelConfig *c = &ctx->model.cfg;
    snprintf(mi->arch, sizeof mi->arch, "%s", c->arch);
    mi->format_version = c->format_version;
    mi->d_model = c->d_model;
    mi->n_heads = c->n_heads;
    mi->d_ff = c->d_ff;
    mi->enc_layers = c->enc_layers;
    mi->dec_layers = c->dec_layers;
    mi->vocab_size = c->vocab_size;
    mi->max_tokens = c->max_tokens;
    mi->em_px = c->em_px;
    mi->max_height = c->max_height;
    mi->max_width = c->max_width;
    mi->height_stride = c->height_stride;
    mi->width_stride = c->width_stride;
    mi->n_parameters = ctx->model.n_parameters;
    snprintf(mi->source_format, sizeof mi->source_format, "%s", wf->format);
    snprintf(mi->weights_dtype, sizeof mi->weights_dtype, "%s", wdtype);
    mi->calibrated = ctx->calibration.present;
    snprintf(mi->calibration_target, sizeof mi->calibration_target, "%s",
             ctx->calibration.target);
    mi->review_threshold = ctx->calibration.review_threshold;
    fe_weights_close(wf);
    if (st != FE_OK) {
        fe_context_free(ctx);
        return st;
    }

    FeRuntimeInfo *ri = &ctx->runtime;
    fe_device_info_of(dev, &ri->device);
    ri->precision = precision;
    if (precision == FE_PRECISION_FP32 &&
        (p.precision == FE_PRECISION_FP16 || p.precision == FE_PRECISION_BF16))
        fe_context_log(ctx, FE_LOG_INFO, "%s runs in fp32: %s", dev->id,
                       p.precision == FE_PRECISION_BF16
                           ? "bf16 on the CPU needs AVX512_BF16"
                           : "fp16 is for GPUs (the CPU's reduced precision is bf16)");
    ri->fell_back = fell_back;
    if (fell_back) {
        snprintf(ri->fallback_reason, sizeof ri->fallback_reason, "%s", reason);
        fe_context_log(ctx, FE_LOG_INFO, "device auto: using the CPU (%s)", reason);
    }
    snprintf(ri->gemm_path, sizeof ri->gemm_path, "%s",
             strcmp(dev->id, "cpu") == 0 ? fe_cpu_gemm_path() : dev->backend->name);
    ri->weights_bytes = ctx->model.weights_bytes;
    if (ops->wants_warm_up && ops->wants_warm_up(dev)) {
        st = fe_context_warm_up(ctx);
        if (st != FE_OK) {
            fe_prefix_error(st, "%s: a first run on %s", path, dev->id);
            fe_context_free(ctx);
            return st;
        }
    }
    fe_clear_error();
    *out_context = ctx;
    return FE_OK;
}

void fe_context_free(FeContext *context) {
    if (!context)
        return;
    fe_model_free(&context->model);
    if (context->vocab)
        for (int i = 0; i < context->n_vocab; i++)
            free(context->vocab[i]);
    free(context->vocab);
    pthread_mutex_destroy(&context->lock);
    free(context);
}

const FeModelInfo *fe_context_model_info(const FeContext *context) {
    return context ? &context->info : NULL;
}

fe_status fe_context_runtime_info(const FeContext *context, FeRuntimeInfo *out) {
    if (!context || !out)
        return fe_set_error(FE_ERR_INVALID_ARGUMENT, "fe_context_runtime_info: NULL argument");
    *out = context->runtime;
    FeContext *ctx = (FeContext *)context;  /* the lock guards a counter only */
    pthread_mutex_lock(&ctx->lock);
    out->engine_bytes = ctx->runtime.weights_bytes + ctx->state_bytes;
    pthread_mutex_unlock(&ctx->lock);
    FeDevice *dev = context->model.device;
    /* The backend may count more than the context does (a GPU module: all
     * its buffers plus its workspace and cuBLAS workspace). */
    const FeBackendModelOps *ops = dev ? fe_backend_model_ops(dev) : NULL;
    if (ops && ops->engine_bytes)
        out->engine_bytes = ops->engine_bytes(dev, out->engine_bytes);
    if (dev && dev->backend && dev->backend->memory_info) {
        uint64_t f = 0, t = 0;
        if (dev->backend->memory_info(dev, &f, &t) == FE_OK) {
            out->device_free = f;
            out->device_total = t;
            out->device.free_memory = f;
            out->device.total_memory = t;
        }
    }
    return FE_OK;
}

const char *fe_context_token_text(const FeContext *context, int token_id) {
    if (!context || token_id < 0 || token_id >= context->n_vocab)
        return NULL;
    return context->vocab[token_id];
}

/* ------------------------------------------------------------------------ */
/* State                                                                    */

static uint64_t fe_state_device_bytes(const FeStateBuffers *sb) {
    return fe_state_buffers_device_bytes(sb);
}

static fe_status fe_state_reserve(FeState *state, int beams);

/* Positions of each decoder row's K/V faulted in when a CPU state is made
 * (4 MiB for the v1 model's 8 rows): 86 % of the test split's formulas are
 * no longer (median 22 tokens, 90th percentile 76). */
#define FE_PREPARE_TOKENS 64
/* The crop a CPU state's first encode is sized for: an inline formula's at
 * the model's em_px (a text line is 32-48 px high once scaled). Larger
 * crops still grow the buffers when they come; sizing for a display's
 * 64 x 512 here raised the sample PDF's peak RSS by another 2-4 MiB, close to
 * issue 15's 80 MiB (bench/RESULTS.md, "The cold first pass"). */
#define FE_PREPARE_HEIGHT 48
#define FE_PREPARE_WIDTH 384

/* A fresh CPU state does now, while the model loads (the window does that on
 * its engine thread), what its first formulas would otherwise pay for:
 * the KV caches' first positions of the default batch's decoder rows
 * faulted in (the rows themselves are made with the state, at that size:
 * fe_state_initial_rows),
 * and one encode of a typical crop, which sizes the encoder's arena, starts
 * the pool's threads and grows every thread's scratch. On the development
 * VM a first touch of a page costs 22 us and the first pass of a fresh
 * engine ran about twice as slow as the second (bench/RESULTS.md, "The
 * cold first pass"). The warm-up's encoding is dropped: nothing is encoded
 * afterwards, as before. */
static fe_status fe_state_prepare_cpu(FeState *state) {
    FeStateBuffers *sb = &state->sb;
    FE_TRY(fe_state_buffers_prepare(sb, sb->beam_capacity, FE_PREPARE_TOKENS));
    FE_TRY(fe_state_reserve(state, 1)); /* the context's byte count */
    int h, w;
    float *pixels = fe_warm_up_crop(&sb->model->cfg, FE_PREPARE_HEIGHT, FE_PREPARE_WIDTH, &h, &w);
    if (!pixels)
        return fe_set_error(FE_ERR_OUT_OF_MEMORY, "out of memory");
    fe_status st = fe_state_encode(state, pixels, h, w);
    free(pixels);
    sb->enc_len = 0;
    sb->cross_ready = false;
    return st;
}

/* The decoder rows a fresh state is made with: on the CPU those of
 * fe_recognize's default batch, made once here rather than for 1 row and
 * again for the batch (an allocation and its first touches more at load);
 * elsewhere 1, grown by the first recognition (a GPU state's warm-up and
 * one-formula use stay small). */
static int fe_state_initial_rows(FeContext *context) {
    if (strcmp(context->model.device->id, "cpu") != 0)
        return 1;
    FeRecognizeParams params = fe_recognize_default_params();
    return fe_recognize_batch_size(&context->model, &params);
}

fe_status fe_state_new(FeContext *context, FeState **out_state) {
    if (!context || !out_state)
        return fe_set_error(FE_ERR_INVALID_ARGUMENT, "fe_state_new: NULL argument");
    *out_state = NULL;
    FeState *st = calloc(1, sizeof *st);
    if (!st)
        return fe_set_error(FE_ERR_OUT_OF_MEMORY, "out of memory");
    st->ctx = context;
    st->tokens = malloc((size_t)context->model.cfg.max_tokens * sizeof(int));
    if (!st->tokens) {
        free(st);
        return fe_set_error(FE_ERR_OUT_OF_MEMORY, "out of memory");
    }
    fe_status s = fe_state_buffers_init(&st->sb, &context->model, fe_state_initial_rows(context));
    if (s != FE_OK) {
        free(st->tokens);
        free(st);
        return s;
    }
    st->bytes = fe_state_device_bytes(&st->sb);
    pthread_mutex_lock(&context->lock);
    context->state_bytes += st->bytes;
    pthread_mutex_unlock(&context->lock);
    if (strcmp(context->model.device->id, "cpu") == 0 && (s = fe_state_prepare_cpu(st)) != FE_OK) {
        fe_state_free(st);
        return s;
    }
    *out_state = st;
    return FE_OK;
}

void fe_state_free(FeState *state) {
    if (!state)
        return;
    pthread_mutex_lock(&state->ctx->lock);
    state->ctx->state_bytes -= state->bytes;
    pthread_mutex_unlock(&state->ctx->lock);
    fe_state_buffers_free(&state->sb);
    free(state->tokens);
    free(state);
}

/* Grows the decoder buffers for a beam width and keeps the context's byte
 * count right. */
static fe_status fe_state_reserve(FeState *state, int beams) {
    FE_TRY(fe_state_buffers_reserve_beams(&state->sb, beams));
    uint64_t now = fe_state_device_bytes(&state->sb);
    if (now != state->bytes) {
        pthread_mutex_lock(&state->ctx->lock);
        state->ctx->state_bytes += now - state->bytes;
        pthread_mutex_unlock(&state->ctx->lock);
        state->bytes = now;
    }
    return FE_OK;
}

FeRecognizeParams fe_recognize_default_params(void) {
    FeRecognizeParams p;
    memset(&p, 0, sizeof p);
    p.beam_width = 1;
    p.max_tokens = 0;
    p.max_repeats = 4;
    p.length_penalty = 0.6f;
    p.scale_candidates = 3;
    p.constraints = NULL;
    /* measured on the test split with the oracle symbols (docs/model.md):
     * the hard mask reads about as many formulas exactly but, once it
     * forbids what the model sees, lets it run on through free structure
     * tokens (worse edit distance); penalty 3 with <eos> penalty 4 has the
     * best BLEU in greedy and beam 4 */
    p.symbol_penalty = 3.0f;
    p.eos_unused_penalty = 4.0f;
    return p;
}

void fe_result_clear(FeResult *result) {
    if (!result)
        return;
    free(result->latex);
    free(result->token_ids);
    memset(result, 0, sizeof *result);
}

fe_status fe_preprocess(const FeContext *context, const FeImage *image, float **out_pixels,
                        int *out_height, int *out_width, float *out_scale) {
    if (!context)
        return fe_set_error(FE_ERR_INVALID_ARGUMENT, "fe_preprocess: NULL context");
    return fe_preprocess_config(&context->model.cfg, image, out_pixels, out_height, out_width,
                                out_scale);
}

fe_status fe_state_encode(FeState *state, const float *pixels, int height, int width) {
    if (!state)
        return fe_set_error(FE_ERR_INVALID_ARGUMENT, "fe_state_encode: NULL state");
    FE_TRY(fe_model_encode(&state->sb, pixels, height, width));
    return fe_state_reserve(state, 1); /* the encoder's buffers may have grown */
}

fe_status fe_state_encoder_output(FeState *state, const float **out, int *n_tokens, int *d_model) {
    if (!state || !out)
        return fe_set_error(FE_ERR_INVALID_ARGUMENT, "fe_state_encoder_output: NULL argument");
    FeStateBuffers *sb = &state->sb;
    if (sb->enc_len <= 0)
        return fe_set_error(FE_ERR_INVALID_ARGUMENT, "fe_state_encoder_output: nothing encoded");
    int d = sb->model->cfg.d_model;
    FeTensor view = sb->enc_out;
    view.ndim = 2;
    view.shape[0] = sb->enc_len;
    view.shape[1] = d;
    FE_TRY(fe_tensor_download(&view, sb->host_enc_out, (size_t)sb->enc_len * d * sizeof(float)));
    *out = sb->host_enc_out;
    if (n_tokens)
        *n_tokens = sb->enc_len;
    if (d_model)
        *d_model = d;
    return FE_OK;
}

fe_status fe_state_decode_greedy(FeState *state, int *tokens, int max_tokens, int *n_tokens,
                                 float *first_logits) {
    if (!state || !tokens || !n_tokens || max_tokens <= 0)
        return fe_set_error(FE_ERR_INVALID_ARGUMENT, "fe_state_decode_greedy: bad argument");
    FeDecodeOptions opt = {.beam_width = 1, .max_tokens = max_tokens, .max_repeats = 0,
                           .first_logits = first_logits};
    FeDecodeOutput out = {.tokens = state->tokens};
    FE_TRY(fe_decode_greedy(&state->sb, &opt, &out));
    int n = out.n_tokens < max_tokens ? out.n_tokens : max_tokens;
    memcpy(tokens, out.tokens, (size_t)n * sizeof(int));
    *n_tokens = n;
    return FE_OK;
}

char *fe_detokenize(const FeContext *context, const int *ids, int n) {
    if (!context) {
        fe_set_error(FE_ERR_INVALID_ARGUMENT, "fe_detokenize: NULL context");
        return NULL;
    }
    return fe_detokenize_vocab(context->vocab, context->n_vocab, &context->model.cfg, ids, n);
}

/* Glyph-scale search (FeRecognizeParams.scale_candidates): the candidates
 * (fe_scale_candidate_factor, shared with the batched path in fe-decode.c)
 * span the estimated em x FE_SCALE_SEARCH_SPAN^[-1, 1], geometrically
 * spaced. Measured on the val split (docs/preprocessing.md): the estimate
 * is within +-10 % of the true em for 87 % of the images, and the most
 * confident of 3 or 5 candidates over +-15 % beats the estimate alone. */

/* ------------------------------------------------------------------------ */
/* Confidence (fe.h, "Confidence"; features and calibration: fe-calibration.c) */

fe_status fe_confidence_features(const FeContext *context, const int *token_ids, int n_tokens,
                                 const float *token_probs, int n_probs, bool stopped,
                                 float *out) {
    if (!context || !out || (n_tokens > 0 && !token_ids) || (n_probs > 0 && !token_probs) ||
        n_tokens < 0 || n_probs < 0)
        return fe_set_error(FE_ERR_INVALID_ARGUMENT, "fe_confidence_features: bad argument");
    FeProbStats ps;
    fe_prob_stats(token_probs, n_probs, &ps);
    fe_confidence_features_from(context->vocab, context->n_vocab, token_ids, n_tokens, &ps,
                                stopped, out);
    return FE_OK;
}

float fe_context_calibrated_confidence(const FeContext *context, const float *features) {
    if (!context || !features || !context->calibration.present)
        return -1.0f;
    return fe_calibration_apply(&context->calibration, features);
}

static fe_status fe_recognize_one(FeState *state, const FeImage *image,
                                  const FeSymbolConstraint *symbols, const FeRecognizeParams *p,
                                  FeResult *res) {
    FeContext *ctx = state->ctx;
    int n_cand = fe_scale_candidate_count(image, p->scale_candidates);
    float tried[FE_MAX_SCALE_CANDIDATES];
    int n_tried = 0, max_tokens = ctx->model.cfg.max_tokens;
    int *best_tokens = NULL;
    FeDecodeOutput best = {0};
    int best_w = 0, best_h = 0;
    float best_scale = 1.0f;
    bool have_best = false;
    double pre_ms = 0, enc_ms = 0, dec_ms = 0, pre_cpu = 0, enc_cpu = 0, dec_cpu = 0;
    fe_status st = FE_OK;
    /* made before the decode, reset by it for each candidate */
    FeConstraint *constraint = NULL;
    FE_TRY(fe_constraint_new(ctx->vocab, ctx->n_vocab, &ctx->model.cfg, symbols, p->beam_width,
                             p->symbol_penalty, p->eos_unused_penalty, &constraint));
    if (n_cand > 1) {
        best_tokens = malloc((size_t)max_tokens * sizeof(int));
        if (!best_tokens) {
            fe_constraint_free(constraint);
            return fe_set_error(FE_ERR_OUT_OF_MEMORY, "out of memory");
        }
    }
    /* The estimate first, then outwards alternating below and above it, so a
     * tie keeps the estimate. An even count tries one more below. */
    for (int c = 0; c < n_cand; c++) {
        float factor = fe_scale_candidate_factor(n_cand, c);
        float *pixels = NULL;
        int h = 0, w = 0;
        float scale = 1.0f;
        double t0 = fe_wall_ms(), c0 = fe_cpu_ms();
        st = fe_preprocess_config_em(&ctx->model.cfg, image, factor, &pixels, &h, &w, &scale);
        if (st != FE_OK)
            break;
        double t1 = fe_wall_ms(), c1 = fe_cpu_ms();
        pre_ms += t1 - t0;
        pre_cpu += c1 - c0;
        /* Candidates that preprocess alike (both within the tolerance of
         * em_px, or both capped by max_width) would decode alike. */
        bool seen = false;
        for (int k = 0; k < n_tried; k++)
            seen = seen || tried[k] == scale;
        if (seen) {
            free(pixels);
            continue;
        }
        tried[n_tried++] = scale;
        st = fe_model_encode(&state->sb, pixels, h, w);
        free(pixels);
        if (st == FE_OK)
            st = fe_state_reserve(state, 1); /* counts the encoder's buffers if they grew */
        if (st == FE_OK)
            st = fe_model_cross_kv(&state->sb);
        if (st != FE_OK)
            break;
        double t2 = fe_wall_ms(), c2 = fe_cpu_ms();
        FeDecodeOptions opt = {
            .beam_width = p->beam_width,
            .max_tokens = p->max_tokens,
            .max_repeats = p->max_repeats,
            .length_penalty = p->length_penalty,
            .abort_callback = p->abort_callback,
            .abort_user_data = p->abort_user_data,
            .constraint = constraint,
        };
        FeDecodeOutput out = {.tokens = state->tokens};
        st = p->beam_width <= 1 ? fe_decode_greedy(&state->sb, &opt, &out)
                                : fe_decode_beam(&state->sb, &opt, &out);
        if (st != FE_OK)
            break;
        double t3 = fe_wall_ms(), c3 = fe_cpu_ms();
        enc_ms += t2 - t1;
        enc_cpu += c2 - c1;
        dec_ms += t3 - t2;
        dec_cpu += c3 - c2;
        if (!have_best || out.confidence_mean > best.confidence_mean) {
            best = out;
            if (best_tokens) {
                memcpy(best_tokens, out.tokens, (size_t)out.n_tokens * sizeof(int));
                best.tokens = best_tokens;
            }
            best_w = w;
            best_h = h;
            best_scale = scale;
            have_best = true;
        }
    }
    res->unknown_symbols = fe_constraint_unknown(constraint);
    fe_constraint_free(constraint);
    if (st != FE_OK) {
        free(best_tokens);
        return st;
    }
    char *latex;
    st = fe_detokenize_decoded(ctx->vocab, ctx->n_vocab, &ctx->model.cfg, best.tokens,
                               best.n_tokens, &latex);
    int *ids =
        st == FE_OK ? malloc((size_t)(best.n_tokens > 0 ? best.n_tokens : 1) * sizeof(int)) : NULL;
    if (!latex || !ids) {
        free(latex);
        free(ids);
        free(best_tokens);
        return st != FE_OK ? st : fe_set_error(FE_ERR_OUT_OF_MEMORY, "out of memory");
    }
    memcpy(ids, best.tokens, (size_t)best.n_tokens * sizeof(int));
    free(best_tokens);
    res->latex = latex;
    res->token_ids = ids;
    res->n_tokens = best.n_tokens;
    best.tokens = ids; /* best_tokens is freed */
    fe_result_set_confidence(ctx->vocab, ctx->n_vocab, &ctx->calibration, &best, res);
    res->hit_length_limit = best.hit_length_limit;
    res->repetition_stopped = best.repetition_stopped;
    res->input_width = best_w;
    res->input_height = best_h;
    res->scale = best_scale;
    /* all candidates together: what the image cost */
    res->preprocess_ms = pre_ms;
    res->encoder_ms = enc_ms;
    res->decoder_ms = dec_ms;
    res->preprocess_cpu_ms = pre_cpu;
    res->encoder_cpu_ms = enc_cpu;
    res->decoder_cpu_ms = dec_cpu;
    return FE_OK;
}

fe_status fe_recognize(FeState *state, const FeImage *images, size_t n,
                       const FeRecognizeParams *params, FeResult *results) {
    if (!state || (n > 0 && (!images || !results)))
        return fe_set_error(FE_ERR_INVALID_ARGUMENT, "fe_recognize: NULL argument");
    FeRecognizeParams p = params ? *params : fe_recognize_default_params();
    if (p.beam_width < 1)
        p.beam_width = 1;
    if (p.beam_width > FE_MAX_BEAM)
        return fe_set_error(FE_ERR_INVALID_ARGUMENT, "beam width %d is above %d", p.beam_width,
                            FE_MAX_BEAM);
    if (p.max_tokens < 0 || p.max_repeats < 0 || !(p.length_penalty >= 0.0f))
        return fe_set_error(FE_ERR_INVALID_ARGUMENT,
                            "fe_recognize: negative max_tokens, max_repeats or length_penalty");
    if (p.scale_candidates < 0 || p.scale_candidates > FE_MAX_SCALE_CANDIDATES)
        return fe_set_error(FE_ERR_INVALID_ARGUMENT, "fe_recognize: scale_candidates %d is not in 0..%d",
                            p.scale_candidates, FE_MAX_SCALE_CANDIDATES);
    if (p.max_batch < 0)
        return fe_set_error(FE_ERR_INVALID_ARGUMENT, "fe_recognize: max_batch %d", p.max_batch);
    if (p.recheck && n > 0 && !p.rechecked)
        return fe_set_error(FE_ERR_INVALID_ARGUMENT, "fe_recognize: recheck without rechecked");
    memset(results, 0, n * sizeof *results);
    if (p.recheck)
        memset(p.rechecked, 0, n * sizeof *p.rechecked);
    /* Greedy: several images (and scale candidates) decoded together
     * (fe-decode.c, docs/model.md); their buffers grow before decoding. */
    int batch = fe_recognize_batch_size(state->sb.model, &p);
    if (batch > 1 && n > 0) {
        FE_TRY(fe_state_reserve(state, batch));
        fe_status st = fe_recognize_batched(&state->sb, state->ctx->vocab, state->ctx->n_vocab,
                                            &state->ctx->calibration, images, n, &p, batch,
                                            results);
        fe_status acc = fe_state_reserve(state, 1); /* counts what grew */
        return st != FE_OK ? st : acc;
    }
    /* Buffers for the beam width are made before the first image, so no
     * decode step ever allocates. */
    FE_TRY(fe_state_reserve(state, p.beam_width));
    for (size_t i = 0; i < n; i++) {
        if (p.abort_callback && p.abort_callback(p.abort_user_data))
            return fe_set_error(FE_ERR_ABORTED, "recognition aborted");
        fe_status st = fe_recognize_one(state, &images[i],
                                        p.constraints ? &p.constraints[i] : NULL, &p, &results[i]);
        const FeSymbolConstraint *again =
            st == FE_OK && p.recheck ? p.recheck(p.recheck_user_data, i, &results[i]) : NULL;
        if (again) {
            st = fe_recognize_one(state, &images[i], again, &p, &p.rechecked[i]);
            if (st != FE_OK)
                fe_result_clear(&p.rechecked[i]);
            if (st != FE_ERR_ABORTED)
                st = FE_OK; /* a failed recheck: the first reading stands */
        }
        if (st != FE_OK) {
            fe_result_clear(&results[i]);
            if (n > 1 && st != FE_ERR_ABORTED)
                fe_prefix_error(st, "image %zu", i);
            return st;
        }
        if (p.progress_callback)
            p.progress_callback((int)(i + 1), (int)n, p.progress_user_data);
    }
    return FE_OK;
}
