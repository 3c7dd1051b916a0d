/* fe-model.c - formulate-v1 (docs/model.md) built from a weight file with the
 * ops front-end: loading with BatchNorm folding, the per-state buffers, the
 * encoder forward and one decoder step.
 *
 * Every activation lives in per-state buffers: the encoder's grow to the
 * largest input encoded so far (an image no larger than one before allocates
 * nothing on the device), the decoder's are sized for the beam width before
 * the first step, so decoding allocates nothing at all; a multi-image batch's
 * packed cross-attention K/V grow before its first step too. A forward pass
 * only takes views of them. */
#include "fe-model.h"

#include <math.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#define FE_ALIGN 64

static size_t fe_align_up(size_t v) { return (v + FE_ALIGN - 1) / FE_ALIGN * FE_ALIGN; }

/* A view of `base` starting `offset` elements in, with a new shape; the views
 * never outgrow the capacity they were carved with. */
static fe_status fe_view(FeTensor *out, const FeTensor *base, int64_t offset, int ndim,
                         int64_t d0, int64_t d1, int64_t d2, int64_t d3) {
    int64_t shape[4] = {d0, d1, d2, d3};
    int64_t n = 1;
    *out = *base;
    out->ndim = ndim;
    for (int i = 0; i < 4; i++) {
        out->shape[i] = i < ndim ? shape[i] : 0;
        if (i < ndim)
            n *= shape[i];
    }
    if (offset < 0 || offset + n > fe_tensor_nelements(base))
        return fe_set_error(FE_ERR_INTERNAL,
                            "view of %lld elements at %lld exceeds '%s' (%lld elements)",
                            (long long)n, (long long)offset, base->name,
                            (long long)fe_tensor_nelements(base));
    for (int i = 0; i < 4; i++)
        out->shape[i] = i < ndim ? shape[i] : 1;
    out->offset = base->offset + (size_t)offset * fe_dtype_size(base->dtype);
    return FE_OK;
}

/* ------------------------------------------------------------------------ */
/* Loading                                                                  */

typedef struct {
    const FeWeightFile *wf;
    FeBuffer *buffer;      /* NULL while counting bytes                        */
    size_t bytes;
    uint64_t n_parameters;
    /* dtype of the matrices (linear and conv weights, embedding tables) on the
     * device: f32, or f16 / bf16 on a GPU (docs/cuda.md). Biases and norms stay
     * f32, as the ops take them. */
    fe_dtype matrix_dtype;
    /* CPU with AVX-512 or AVX2+F16C (fe_cpu_keeps_half_weights: matmul
     * kernels that widen exactly on the fly): the linear layers' matrices
     * and the token embedding stay in the file's own f16 or bf16. Widening
     * them is exact, so the results do not change, and a decode step,
     * which is bound by streaming its weights, reads half the bytes (so
     * does the encoder, whose weights come from memory again for each
     * image). The convolutions (folded with BatchNorm, no longer the file's
     * numbers) and the positional table are f32. Elsewhere all f32.
     * (Before 2026-11-27 AVX2 CPUs got f32 matrices: a Zen 3 decode step
     * streamed twice the bytes; bench/RESULTS.md "The paper end to end
     * again".) */
    bool keep_file_half;
    /* FE_PRECISION_BF16 on a CPU with AVX512_BF16: the same matrices (linear
     * layers, token embedding, convolutions after the first) rounded to bf16
     * and marked bf16_dot, so the matmuls (the decoder's in place, the
     * encoder's longer ones and the convolutions through fe-cpu-bf16.c)
     * multiply in bf16 with f32 sums. Not exact: opt-in (fe-api.c). */
    bool cpu_bf16;
    /* The device's tensors are host memory (the CPU backend): 16-bit matrices
     * are rounded straight into them. */
    bool host_tensors;
    /* One f32 buffer for every tensor's conversion (and one for the 16-bit
     * rounding elsewhere), grown to the largest: a malloc per tensor faulted
     * in fresh pages for each of the big ones. Freed by model_load. */
    float *tmp;
    size_t tmp_cap;
    uint16_t *half;
    size_t half_cap;
} FeLoader;

/* A loader buffer of at least `bytes`, its contents not kept. */
static void *fe_loader_grow(void **p, size_t *cap, size_t bytes) {
    if (bytes <= *cap && *p)
        return *p;
    free(*p);
    *cap = 0;
    *p = malloc(bytes ? bytes : 1);
    if (*p) {
        *cap = bytes;
        fe_cpu_advise_huge(*p, bytes); /* written whole by each conversion */
    }
    return *p;
}

/* The file's entry for a matrix that stays in its f16/bf16 (keep_file_half),
 * or NULL when it is converted to matrix_dtype like the rest. */
static const FeWeightEntry *fe_loader_kept_half(const FeLoader *ld, const char *name, int ndim,
                                                int64_t n) {
    if (ndim != 2 || !ld->keep_file_half || ld->cpu_bf16 || ld->matrix_dtype != FE_DTYPE_F32 ||
        strcmp(name, "dec.pos_emb.weight") == 0)
        return NULL;
    const FeWeightEntry *e = fe_weights_find(ld->wf, name);
    if (!e || (e->dtype != FE_DTYPE_F16 && e->dtype != FE_DTYPE_BF16) ||
        e->nbytes != (size_t)n * sizeof(uint16_t))
        return NULL;
    return e;
}

static fe_status fe_loader_carve(FeLoader *ld, FeTensor *t, const char *name, int ndim,
                                 const int64_t *shape, const float *host) {
    int64_t n = 1;
    for (int i = 0; i < ndim; i++)
        n *= shape[i];
    fe_dtype dt = ndim >= 2 ? ld->matrix_dtype : FE_DTYPE_F32;
    /* Convolutions too, except the first (one input channel: an odd Cin*9,
     * and the direct f32 kernel does it in a fraction of the encoder's time). */
    bool bf16_dot = ld->cpu_bf16 && ((ndim == 2 && strcmp(name, "dec.pos_emb.weight") != 0) ||
                                     (ndim == 4 && fe_cpu_bf16_conv_ok((int)shape[1])));
    if (bf16_dot)
        dt = FE_DTYPE_BF16;
    const FeWeightEntry *e = fe_loader_kept_half(ld, name, ndim, n);
    if (e) {
        /* the file's 16-bit numbers, unchanged */
        if (!ld->buffer) {
            ld->bytes += fe_align_up((size_t)n * sizeof(uint16_t)) + FE_ALIGN;
            return FE_OK;
        }
        FE_TRY(fe_buffer_tensor(ld->buffer, e->dtype, ndim, shape, name, t));
        return fe_tensor_upload(t, e->data, e->nbytes);
    }
    size_t es = fe_dtype_size(dt);
    if (!ld->buffer) {
        ld->bytes += fe_align_up((size_t)n * es) + FE_ALIGN;
        return FE_OK;
    }
    FE_TRY(fe_buffer_tensor(ld->buffer, dt, ndim, shape, name, t));
    t->bf16_dot = bf16_dot;
    if (dt == FE_DTYPE_F32)
        return fe_tensor_upload(t, host, (size_t)n * sizeof(float));
    uint16_t *half = ld->host_tensors ? fe_tensor_data(t)
                                      : fe_loader_grow((void **)&ld->half, &ld->half_cap,
                                                       (size_t)n * sizeof(uint16_t));
    if (!half)
        return fe_set_error(FE_ERR_OUT_OF_MEMORY, "out of memory converting '%s'", name);
    if (dt == FE_DTYPE_BF16)
        fe_cpu_round_bf16(host, half, (size_t)n); /* fe_f32_to_bf16's bits, vectorised */
    else
        for (int64_t i = 0; i < n; i++)
            half[i] = fe_f32_to_f16(host[i]);
    return ld->host_tensors ? FE_OK : fe_tensor_upload(t, half, (size_t)n * sizeof(uint16_t));
}

/* Finds `name` and checks its element count against the config's. */
static fe_status fe_loader_find(FeLoader *ld, const char *name, int64_t expected,
                                const FeWeightEntry **out) {
    const FeWeightEntry *e = fe_weights_find(ld->wf, name);
    *out = NULL;
    if (!e)
        return fe_set_error(FE_ERR_FORMAT, "tensor '%s' is missing", name);
    int64_t n = 1;
    for (int i = 0; i < e->ndim; i++)
        n *= e->shape[i];
    if (n != expected)
        return fe_set_error(FE_ERR_FORMAT, "tensor '%s' has %lld elements, the config needs %lld",
                            name, (long long)n, (long long)expected);
    *out = e;
    return FE_OK;
}

/* Finds `name`, checks its element count, converts to f32 (malloc'd). */
static fe_status fe_loader_host(FeLoader *ld, const char *name, int64_t expected, float **out) {
    const FeWeightEntry *e;
    *out = NULL;
    FE_TRY(fe_loader_find(ld, name, expected, &e));
    return fe_weights_to_f32(e, out);
}

/* The same into the loader's conversion buffer (valid until the next call). */
static fe_status fe_loader_host_tmp(FeLoader *ld, const char *name, int64_t expected,
                                    float **out) {
    const FeWeightEntry *e;
    *out = NULL;
    FE_TRY(fe_loader_find(ld, name, expected, &e));
    float *host = fe_loader_grow((void **)&ld->tmp, &ld->tmp_cap, (size_t)expected * sizeof(float));
    if (!host)
        return fe_set_error(FE_ERR_OUT_OF_MEMORY, "out of memory converting tensor '%s'", name);
    FE_TRY(fe_weights_convert_f32(e, host));
    *out = host;
    return FE_OK;
}

static fe_status fe_loader_tensor(FeLoader *ld, FeTensor *t, const char *name, int ndim,
                                  int64_t d0, int64_t d1) {
    int64_t shape[2] = {d0, d1};
    int64_t n = ndim == 1 ? d0 : d0 * d1;
    if (!ld->buffer) {
        ld->n_parameters += (uint64_t)n;
        return fe_loader_carve(ld, t, name, ndim, shape, NULL);
    }
    if (fe_loader_kept_half(ld, name, ndim, n))
        return fe_loader_carve(ld, t, name, ndim, shape, NULL); /* kept as the file has it */
    float *host;
    FE_TRY(fe_loader_host_tmp(ld, name, n, &host));
    return fe_loader_carve(ld, t, name, ndim, shape, host);
}

static fe_status fe_loader_linear(FeLoader *ld, FeLinear *lin, const char *prefix, int out_dim,
                                  int in_dim) {
    char name[96];
    snprintf(name, sizeof name, "%s.weight", prefix);
    FE_TRY(fe_loader_tensor(ld, &lin->weight, name, 2, out_dim, in_dim));
    snprintf(name, sizeof name, "%s.bias", prefix);
    return fe_loader_tensor(ld, &lin->bias, name, 1, out_dim, 0);
}

static fe_status fe_loader_norm(FeLoader *ld, FeNorm *norm, const char *prefix, int dim) {
    char name[96];
    snprintf(name, sizeof name, "%s.weight", prefix);
    FE_TRY(fe_loader_tensor(ld, &norm->weight, name, 1, dim, 0));
    snprintf(name, sizeof name, "%s.bias", prefix);
    return fe_loader_tensor(ld, &norm->bias, name, 1, dim, 0);
}

static fe_status fe_loader_attention(FeLoader *ld, FeAttentionWeights *a, const char *prefix,
                                     int d) {
    char name[96];
    FeLinear *lins[4] = {&a->q, &a->k, &a->v, &a->o};
    const char *names[4] = {"q", "k", "v", "o"};
    for (int i = 0; i < 4; i++) {
        snprintf(name, sizeof name, "%s.%s", prefix, names[i]);
        FE_TRY(fe_loader_linear(ld, lins[i], name, d, d));
    }
    return FE_OK;
}

/* The pre-norm blocks a transformer layer is made of, under "<layer>.": a
 * LayerNorm and the attention it feeds, or a LayerNorm and the MLP. An
 * encoder layer is ln1 + attn, ln2 + mlp; a decoder layer ln1 + self_attn,
 * ln2 + cross_attn, ln3 + mlp (the names fe_model_expected_tensors checks). */
static fe_status fe_loader_attention_block(FeLoader *ld, const char *layer, const char *norm_part,
                                           FeNorm *norm, const char *attn_part,
                                           FeAttentionWeights *attn, int d) {
    char name[64];
    snprintf(name, sizeof name, "%s.%s", layer, norm_part);
    FE_TRY(fe_loader_norm(ld, norm, name, d));
    snprintf(name, sizeof name, "%s.%s", layer, attn_part);
    return fe_loader_attention(ld, attn, name, d);
}

static fe_status fe_loader_mlp_block(FeLoader *ld, const char *layer, const char *norm_part,
                                     FeNorm *norm, FeLinear *fc1, FeLinear *fc2, int d, int d_ff) {
    char name[64];
    snprintf(name, sizeof name, "%s.%s", layer, norm_part);
    FE_TRY(fe_loader_norm(ld, norm, name, d));
    snprintf(name, sizeof name, "%s.mlp.fc1", layer);
    FE_TRY(fe_loader_linear(ld, fc1, name, d_ff, d));
    snprintf(name, sizeof name, "%s.mlp.fc2", layer);
    return fe_loader_linear(ld, fc2, name, d, d_ff);
}

/* Conv + BatchNorm (eval) -> one conv with bias (docs/model.md):
 * s = gamma / sqrt(var + eps), W' = W s, b' = (b - mean) s + beta. */
static fe_status fe_loader_conv(FeLoader *ld, FeModel *m, int i, int c_in, int c_out) {
    int64_t wshape[4] = {c_out, c_in, 3, 3};
    int64_t bshape[1] = {c_out};
    char name[96];
    if (!ld->buffer) {
        ld->n_parameters += (uint64_t)c_out * c_in * 9 + 2u * (uint64_t)c_out;
        snprintf(name, sizeof name, "cnn.%d.conv.bias", i);
        if (fe_weights_find(ld->wf, name))
            ld->n_parameters += (uint64_t)c_out;
        FE_TRY(fe_loader_carve(ld, NULL, name, 4, wshape, NULL));
        return fe_loader_carve(ld, NULL, name, 1, bshape, NULL);
    }
    float *w = NULL, *b = NULL, *gamma = NULL, *beta = NULL, *mean = NULL, *var = NULL;
    fe_status st;
    snprintf(name, sizeof name, "cnn.%d.conv.weight", i);
    if ((st = fe_loader_host_tmp(ld, name, (int64_t)c_out * c_in * 9, &w)) != FE_OK)
        goto out;
    snprintf(name, sizeof name, "cnn.%d.conv.bias", i);
    if (fe_weights_find(ld->wf, name) && (st = fe_loader_host(ld, name, c_out, &b)) != FE_OK)
        goto out;
    snprintf(name, sizeof name, "cnn.%d.bn.weight", i);
    if ((st = fe_loader_host(ld, name, c_out, &gamma)) != FE_OK)
        goto out;
    snprintf(name, sizeof name, "cnn.%d.bn.bias", i);
    if ((st = fe_loader_host(ld, name, c_out, &beta)) != FE_OK)
        goto out;
    snprintf(name, sizeof name, "cnn.%d.bn.running_mean", i);
    if ((st = fe_loader_host(ld, name, c_out, &mean)) != FE_OK)
        goto out;
    snprintf(name, sizeof name, "cnn.%d.bn.running_var", i);
    if ((st = fe_loader_host(ld, name, c_out, &var)) != FE_OK)
        goto out;
    {
        float *fb = malloc((size_t)c_out * sizeof(float));
        if (!fb) {
            st = fe_set_error(FE_ERR_OUT_OF_MEMORY, "out of memory folding cnn.%d", i);
            goto out;
        }
        for (int o = 0; o < c_out; o++) {
            /* double: the fold must not add error beyond f32 rounding of the
             * result, the tests compare with PyTorch at 1e-4 */
            double s = gamma[o] / sqrt((double)var[o] + (double)m->cfg.bn_eps);
            for (int k = 0; k < c_in * 9; k++)
                w[(size_t)o * c_in * 9 + k] = (float)(w[(size_t)o * c_in * 9 + k] * s);
            fb[o] = (float)(((b ? b[o] : 0.0) - mean[o]) * s + beta[o]);
        }
        snprintf(name, sizeof name, "cnn.%d.conv.weight", i);
        st = fe_loader_carve(ld, &m->conv_weight[i], name, 4, wshape, w);
        if (st == FE_OK) {
            snprintf(name, sizeof name, "cnn.%d.conv.bias", i);
            st = fe_loader_carve(ld, &m->conv_bias[i], name, 1, bshape, fb);
        }
        free(fb);
    }
out:
    free(b);
    free(gamma);
    free(beta);
    free(mean);
    free(var);
    return st;
}

static fe_status fe_model_walk(FeLoader *ld, FeModel *m) {
    const FeModelConfig *c = &m->cfg;
    char prefix[64];
    int c_in = c->in_channels;
    for (int i = 0; i < c->n_cnn; i++) {
        FE_TRY(fe_loader_conv(ld, m, i, c_in, c->cnn_channels[i]));
        c_in = c->cnn_channels[i];
    }
    int d = c->d_model;
    FE_TRY(fe_loader_linear(ld, &m->enc_proj, "enc.proj", d, c_in));
    for (int l = 0; l < c->enc_layers; l++) {
        FeEncoderLayer *L = &m->enc[l];
        snprintf(prefix, sizeof prefix, "enc.layers.%d", l);
        FE_TRY(fe_loader_attention_block(ld, prefix, "ln1", &L->ln1, "attn", &L->attn, d));
        FE_TRY(fe_loader_mlp_block(ld, prefix, "ln2", &L->ln2, &L->fc1, &L->fc2, d, c->d_ff));
    }
    FE_TRY(fe_loader_norm(ld, &m->enc_norm, "enc.norm", d));
    FE_TRY(fe_loader_tensor(ld, &m->tok_emb, "dec.tok_emb.weight", 2, c->vocab_size, d));
    FE_TRY(fe_loader_tensor(ld, &m->pos_emb, "dec.pos_emb.weight", 2, c->max_tokens, d));
    for (int l = 0; l < c->dec_layers; l++) {
        FeDecoderLayer *L = &m->dec[l];
        snprintf(prefix, sizeof prefix, "dec.layers.%d", l);
        FE_TRY(fe_loader_attention_block(ld, prefix, "ln1", &L->ln1, "self_attn", &L->self_attn,
                                         d));
        FE_TRY(fe_loader_attention_block(ld, prefix, "ln2", &L->ln2, "cross_attn", &L->cross_attn,
                                         d));
        FE_TRY(fe_loader_mlp_block(ld, prefix, "ln3", &L->ln3, &L->fc1, &L->fc2, d, c->d_ff));
    }
    FE_TRY(fe_loader_norm(ld, &m->dec_norm, "dec.norm", d));
    if (c->tie_embeddings) {
        if (ld->buffer)
            m->out_weight = m->tok_emb;
    } else {
        FE_TRY(fe_loader_tensor(ld, &m->out_weight, "dec.out.weight", 2, c->vocab_size, d));
        }
    return fe_loader_tensor(ld, &m->out_bias, "dec.out.bias", 1, c->vocab_size, 0);
}

/* pe_n(p)[2j] = sin(p 10000^(-2j/n)), [2j+1] = cos(...), n = d_model / 2. */
static void fe_sinusoid_table(float *table, int positions, int n) {
    for (int p = 0; p < positions; p++)
        for (int j = 0; j < n / 2; j++) {
            double freq = pow(10000.0, -2.0 * j / n);
            table[(size_t)p * n + 2 * j] = (float)sin(p * freq);
            table[(size_t)p * n + 2 * j + 1] = (float)cos(p * freq);
        }
}

fe_status fe_model_load(FeModel *model, const FeWeightFile *wf, FeDevice *device) {
    return fe_model_load_as(model, wf, device, FE_DTYPE_F32);
}

static fe_status model_load(FeModel *model, const FeWeightFile *wf, FeDevice *device,
                            fe_dtype matrix_dtype, bool cpu_bf16_dot);

fe_status fe_model_load_as(FeModel *model, const FeWeightFile *wf, FeDevice *device,
                           fe_dtype matrix_dtype) {
    return model_load(model, wf, device, matrix_dtype, false);
}

fe_status fe_model_load_cpu_bf16(FeModel *model, const FeWeightFile *wf, FeDevice *device) {
    return model_load(model, wf, device, FE_DTYPE_BF16, true);
}

static fe_status model_load(FeModel *model, const FeWeightFile *wf, FeDevice *device,
                            fe_dtype matrix_dtype, bool cpu_bf16_dot) {
    if (matrix_dtype != FE_DTYPE_F32 && matrix_dtype != FE_DTYPE_F16 &&
        matrix_dtype != FE_DTYPE_BF16)
        return fe_set_error(FE_ERR_INVALID_ARGUMENT, "fe_model_load_as: weights in %s",
                            fe_dtype_name(matrix_dtype));
    memset(model, 0, sizeof *model);
    model->cfg = wf->config;
    model->device = device;
    const FeModelConfig *c = &model->cfg;
    if (c->d_model % 4 != 0)
        return fe_set_error(FE_ERR_UNSUPPORTED,
                            "d_model %d: the 2-D sinusoid needs a multiple of 4", c->d_model);
    model->enc = calloc(c->enc_layers > 0 ? (size_t)c->enc_layers : 1, sizeof *model->enc);
    model->dec = calloc(c->dec_layers > 0 ? (size_t)c->dec_layers : 1, sizeof *model->dec);
    int rows = c->max_height / c->height_stride, cols = c->max_width / c->width_stride;
    model->pe_rows = malloc((size_t)rows * (c->d_model / 2) * sizeof(float));
    model->pe_cols = malloc((size_t)cols * (c->d_model / 2) * sizeof(float));
    if (!model->enc || !model->dec || !model->pe_rows || !model->pe_cols) {
        fe_model_free(model);
        return fe_set_error(FE_ERR_OUT_OF_MEMORY, "out of memory building the model");
    }
    fe_sinusoid_table(model->pe_rows, rows, c->d_model / 2);
    fe_sinusoid_table(model->pe_cols, cols, c->d_model / 2);

    bool cpu = strcmp(device->backend->name, "cpu") == 0;
    FeLoader ld = {.wf = wf, .matrix_dtype = matrix_dtype,
                   .keep_file_half = cpu && fe_cpu_keeps_half_weights(),
                   .host_tensors = cpu};
    if (cpu_bf16_dot) {
        /* The positional table, norms and the first convolution stay f32. */
        if (!cpu || !fe_cpu_has_bf16_dot()) {
            fe_model_free(model);
            return fe_set_error(FE_ERR_UNSUPPORTED, "bf16 matmuls need the CPU device with "
                                "AVX512_BF16 (fe_model_load_cpu_bf16)");
        }
        ld.matrix_dtype = FE_DTYPE_F32;
        ld.cpu_bf16 = true;
    }
    fe_status st = fe_model_walk(&ld, model);  /* counting pass */
    if (st == FE_OK)
        st = fe_buffer_new(device, ld.bytes, &model->weights);
    if (st == FE_OK && cpu)
        fe_cpu_advise_huge(model->weights->data, model->weights->size); /* written whole next */
    if (st == FE_OK) {
        model->n_parameters = ld.n_parameters;
        model->weights_bytes = ld.bytes;
        ld.buffer = model->weights;
        st = fe_model_walk(&ld, model);
    }
    free(ld.tmp);
    free(ld.half);
    if (st != FE_OK) {
        fe_model_free(model);
        return st;
    }
    return FE_OK;
}

void fe_model_free(FeModel *model) {
    if (!model)
        return;
    fe_buffer_free(model->weights);
    free(model->enc);
    free(model->dec);
    free(model->pe_rows);
    free(model->pe_cols);
    memset(model, 0, sizeof *model);
}

/* ------------------------------------------------------------------------ */
/* State buffers                                                            */

typedef struct {
    FeTensor *t;
    fe_dtype dtype;
    int64_t n;
    const char *name;
} FeCarve;

static fe_status fe_carve_all(FeDevice *dev, FeBuffer **arena, FeCarve *list, int count) {
    size_t bytes = 0;
    for (int i = 0; i < count; i++)
        bytes += fe_align_up((size_t)list[i].n * fe_dtype_size(list[i].dtype)) + FE_ALIGN;
    FE_TRY(fe_buffer_new(dev, bytes, arena));
    for (int i = 0; i < count; i++)
        FE_TRY(fe_buffer_tensor(*arena, list[i].dtype, 1, &list[i].n, list[i].name, list[i].t));
    return FE_OK;
}

/* Floats of one CNN ping-pong buffer for an input of height x width: the
 * largest activation on the way (the first conv's output, usually). */
static int64_t fe_cnn_floats(const FeModelConfig *c, int64_t h, int64_t w) {
    int64_t cap = h * w * c->in_channels;
    for (int i = 0; i < c->n_cnn; i++) {
        if (h * w * c->cnn_channels[i] > cap)
            cap = h * w * c->cnn_channels[i];
        h /= c->cnn_pool[i][0];
        w /= c->cnn_pool[i][1];
    }
    return cap;
}

/* The encoder's buffers are made by the first encode and grow to the largest
 * input seen: sizing them for the model's cap (256 x 1536 px) took 194 MB
 * per state for the v1 model, almost all of it never touched by
 * formula-sized crops. */
static void fe_state_free_encoder(FeStateBuffers *sb) {
    fe_buffer_free(sb->enc_arena);
    sb->enc_arena = NULL;
    free(sb->cross_k);
    free(sb->cross_v);
    free(sb->host_pos);
    free(sb->host_enc_out);
    sb->cross_k = sb->cross_v = NULL;
    sb->host_pos = sb->host_enc_out = NULL;
    sb->enc_cnn_capacity = sb->enc_token_capacity = 0;
    sb->enc_len = 0;
    sb->cross_ready = false;
}

/* (Re)makes the encoder's buffers for cnn_cap floats per CNN buffer and lmax
 * tokens. The previous encoding is gone afterwards. */
static fe_status fe_state_alloc_encoder(FeStateBuffers *sb, int64_t cnn_cap, int64_t lmax) {
    const FeModel *model = sb->model;
    const FeModelConfig *c = &model->cfg;
    fe_state_free_encoder(sb);
    sb->n_encoder_allocs++;
    int64_t d = c->d_model;
    sb->cross_k = calloc((size_t)(c->dec_layers > 0 ? c->dec_layers : 1), sizeof(FeTensor));
    sb->cross_v = calloc((size_t)(c->dec_layers > 0 ? c->dec_layers : 1), sizeof(FeTensor));
    sb->host_pos = malloc((size_t)(lmax * d) * sizeof(float));
    sb->host_enc_out = malloc((size_t)(lmax * d) * sizeof(float));
    FeCarve *list = calloc((size_t)(16 + 2 * c->dec_layers), sizeof *list);
    if (!sb->cross_k || !sb->cross_v || !sb->host_pos || !sb->host_enc_out || !list) {
        free(list);
        fe_state_free_encoder(sb);
        return fe_set_error(FE_ERR_OUT_OF_MEMORY, "out of memory for the state");
    }
    int n = 0;
    list[n++] = (FeCarve){&sb->cnn_a, FE_DTYPE_F32, cnn_cap, "cnn_a"};
    list[n++] = (FeCarve){&sb->cnn_b, FE_DTYPE_F32, cnn_cap, "cnn_b"};
    list[n++] = (FeCarve){&sb->enc_x, FE_DTYPE_F32, lmax * d, "enc_x"};
    list[n++] = (FeCarve){&sb->enc_h, FE_DTYPE_F32, lmax * d, "enc_h"};
    list[n++] = (FeCarve){&sb->enc_q, FE_DTYPE_F32, lmax * d, "enc_q"};
    list[n++] = (FeCarve){&sb->enc_k, FE_DTYPE_F32, lmax * d, "enc_k"};
    list[n++] = (FeCarve){&sb->enc_v, FE_DTYPE_F32, lmax * d, "enc_v"};
    list[n++] = (FeCarve){&sb->enc_att, FE_DTYPE_F32, lmax * d, "enc_att"};
    list[n++] = (FeCarve){&sb->enc_ff, FE_DTYPE_F32, lmax * c->d_ff, "enc_ff"};
    list[n++] = (FeCarve){&sb->enc_out, FE_DTYPE_F32, lmax * d, "enc_out"};
    list[n++] = (FeCarve){&sb->enc_pos, FE_DTYPE_F32, lmax * d, "enc_pos"};
    for (int l = 0; l < c->dec_layers; l++) {
        list[n++] = (FeCarve){&sb->cross_k[l], FE_DTYPE_F32, lmax * d, "cross_k"};
        list[n++] = (FeCarve){&sb->cross_v[l], FE_DTYPE_F32, lmax * d, "cross_v"};
    }
    fe_status st = fe_carve_all(model->device, &sb->enc_arena, list, n);
    free(list);
    if (st != FE_OK) {
        fe_state_free_encoder(sb);
        return st;
    }
    /* The input that grew it writes (nearly) all of it: on 2 MiB pages,
     * regrowing costs a few faults instead of one per 4 KiB (fe-cpu.c). */
    if (strcmp(model->device->backend->name, "cpu") == 0)
        fe_cpu_advise_huge(sb->enc_arena->data, sb->enc_arena->size);
    sb->enc_cnn_capacity = cnn_cap;
    sb->enc_token_capacity = lmax;
    return FE_OK;
}

/* Grows the encoder's buffers (never shrinks them): one allocation for all
 * n inputs, where growing input by input would make one for each larger
 * crop (and fault its pages in again). */
fe_status fe_model_encoder_reserve(FeStateBuffers *sb, const int *heights, const int *widths,
                                   int n) {
    const FeModelConfig *c = &sb->model->cfg;
    int64_t cnn = 0, tokens = 0;
    for (int i = 0; i < n; i++) {
        int h = heights[i], w = widths[i];
        if (h <= 0 || w <= 0 || h > c->max_height || w > c->max_width)
            continue;
        int64_t f = fe_cnn_floats(c, h, w);
        int64_t t = (int64_t)(h / c->height_stride) * (w / c->width_stride);
        if (f > cnn)
            cnn = f;
        if (t > tokens)
            tokens = t;
    }
    if (cnn == 0 || (sb->enc_arena && cnn <= sb->enc_cnn_capacity &&
                     tokens <= sb->enc_token_capacity))
        return FE_OK;
    int64_t cnn_cap = cnn > sb->enc_cnn_capacity ? cnn : sb->enc_cnn_capacity;
    int64_t lmax = tokens > sb->enc_token_capacity ? tokens : sb->enc_token_capacity;
    return fe_state_alloc_encoder(sb, cnn_cap, lmax);
}

fe_status fe_state_buffers_init(FeStateBuffers *sb, const FeModel *model, int rows) {
    memset(sb, 0, sizeof *sb);
    sb->model = model;
    /* the encoder's buffers come with the first encode */
    fe_status st = fe_state_buffers_reserve_beams(sb, rows);
    if (st != FE_OK) {
        fe_state_buffers_free(sb);
        return st;
    }
    return FE_OK;
}

static void fe_state_free_decoder(FeStateBuffers *sb) {
    fe_buffer_free(sb->dec_arena);
    sb->dec_arena = NULL;
    free(sb->self_k);
    free(sb->self_v);
    free(sb->host_logits);
    free(sb->host_kv);
    free(sb->host_ids);
    free(sb->beam_tokens);
    free(sb->beam_new_tokens);
    free(sb->beam_probs);
    free(sb->beam_new_probs);
    free(sb->beam_len);
    free(sb->beam_parent);
    free(sb->beam_score);
    free(sb->cand_beam);
    free(sb->cand_token);
    free(sb->cand_score);
    free(sb->cand_prob);
    free(sb->topk_index);
    free(sb->fin_tokens);
    free(sb->fin_len);
    free(sb->fin_n_probs);
    free(sb->fin_probs);
    free(sb->fin_score);
    free(sb->fin_repetition);
    free(sb->fin_length_limit);
    free(sb->host_spans);
    free(sb->batch_slot);
    free(sb->batch_perm);
    free(sb->batch_ids);
    sb->host_spans = NULL;
    sb->batch_slot = sb->batch_perm = NULL;
    sb->batch_ids = NULL;
    sb->self_k = sb->self_v = NULL;
    sb->host_logits = NULL;
    sb->host_kv = NULL;
    sb->host_ids = NULL;
    sb->beam_tokens = sb->beam_new_tokens = NULL;
    sb->beam_probs = sb->beam_new_probs = NULL;
    sb->beam_len = sb->beam_parent = NULL;
    sb->beam_score = NULL;
    sb->cand_beam = sb->cand_token = NULL;
    sb->cand_score = NULL;
    sb->cand_prob = NULL;
    sb->topk_index = NULL;
    sb->fin_tokens = sb->fin_len = sb->fin_n_probs = NULL;
    sb->fin_probs = NULL;
    sb->fin_score = NULL;
    sb->fin_repetition = sb->fin_length_limit = NULL;
    sb->beam_capacity = 0;
}

fe_status fe_state_buffers_reserve_beams(FeStateBuffers *sb, int beams) {
    if (beams < 1 || beams > FE_MAX_BEAM)
        return fe_set_error(FE_ERR_INVALID_ARGUMENT, "beam width %d is outside 1..%d", beams,
                            FE_MAX_BEAM);
    if (beams <= sb->beam_capacity)
        return FE_OK;
    fe_state_free_decoder(sb);
    sb->n_decoder_allocs++;
    const FeModelConfig *c = &sb->model->cfg;
    int64_t B = beams, d = c->d_model, T = c->max_tokens, V = c->vocab_size;
    int nl = c->dec_layers > 0 ? c->dec_layers : 1;
    sb->self_k = calloc((size_t)nl, sizeof(FeTensor));
    sb->self_v = calloc((size_t)nl, sizeof(FeTensor));
    sb->host_logits = malloc((size_t)(B * V) * sizeof(float));
    sb->host_kv = malloc((size_t)(B * T * d) * sizeof(float));
    sb->host_ids = malloc((size_t)B * sizeof(int32_t));
    sb->beam_tokens = malloc((size_t)(B * T) * sizeof(int));
    sb->beam_new_tokens = malloc((size_t)(B * T) * sizeof(int));
    sb->beam_probs = malloc((size_t)(B * T) * sizeof(float));
    sb->beam_new_probs = malloc((size_t)(B * T) * sizeof(float));
    sb->beam_len = malloc((size_t)B * 2 * sizeof(int));
    sb->beam_parent = malloc((size_t)B * sizeof(int));
    sb->beam_score = malloc((size_t)B * 2 * sizeof(double));
    sb->cand_beam = malloc((size_t)(B * B) * sizeof(int));
    sb->cand_token = malloc((size_t)(B * B) * sizeof(int));
    sb->cand_score = malloc((size_t)(B * B) * sizeof(double));
    sb->cand_prob = malloc((size_t)(B * B) * sizeof(float));
    sb->topk_index = malloc((size_t)B * sizeof(int));
    sb->fin_tokens = malloc((size_t)(B * T) * sizeof(int));
    sb->fin_len = malloc((size_t)B * sizeof(int));
    sb->fin_n_probs = malloc((size_t)B * sizeof(int));
    sb->fin_probs = malloc((size_t)(B * (T + 1)) * sizeof(float));
    sb->fin_score = malloc((size_t)B * sizeof(double));
    sb->fin_repetition = malloc((size_t)B * sizeof(bool));
    sb->fin_length_limit = malloc((size_t)B * sizeof(bool));
    sb->host_spans = malloc((size_t)B * 2 * sizeof(int32_t));
    sb->batch_slot = malloc((size_t)B * sizeof(int));
    sb->batch_perm = malloc((size_t)B * sizeof(int));
    sb->batch_ids = malloc((size_t)B * sizeof(int32_t));
    FeCarve *list = calloc((size_t)(16 + 2 * nl), sizeof *list);
    if (!sb->self_k || !sb->self_v || !sb->host_logits || !sb->host_kv || !sb->host_ids ||
        !sb->beam_tokens || !sb->beam_new_tokens || !sb->beam_probs || !sb->beam_new_probs ||
        !sb->beam_len || !sb->beam_parent || !sb->beam_score || !sb->cand_beam ||
        !sb->cand_token || !sb->cand_score || !sb->cand_prob || !sb->topk_index ||
        !sb->fin_tokens || !sb->fin_len || !sb->fin_n_probs || !sb->fin_probs || !sb->fin_score ||
        !sb->fin_repetition || !sb->fin_length_limit || !sb->host_spans || !sb->batch_slot ||
        !sb->batch_perm || !sb->batch_ids || !list) {
        free(list);
        fe_state_free_decoder(sb);
        return fe_set_error(FE_ERR_OUT_OF_MEMORY, "out of memory for %d beams", beams);
    }
    int n = 0;
    list[n++] = (FeCarve){&sb->dec_ids, FE_DTYPE_I32, B, "dec_ids"};
    list[n++] = (FeCarve){&sb->batch_spans, FE_DTYPE_I32, B * 2, "batch_spans"};
    list[n++] = (FeCarve){&sb->dec_x, FE_DTYPE_F32, B * d, "dec_x"};
    list[n++] = (FeCarve){&sb->dec_h, FE_DTYPE_F32, B * d, "dec_h"};
    list[n++] = (FeCarve){&sb->dec_q, FE_DTYPE_F32, B * d, "dec_q"};
    list[n++] = (FeCarve){&sb->dec_k, FE_DTYPE_F32, B * d, "dec_k"};
    list[n++] = (FeCarve){&sb->dec_v, FE_DTYPE_F32, B * d, "dec_v"};
    list[n++] = (FeCarve){&sb->dec_att, FE_DTYPE_F32, B * d, "dec_att"};
    list[n++] = (FeCarve){&sb->dec_ff, FE_DTYPE_F32, B * c->d_ff, "dec_ff"};
    list[n++] = (FeCarve){&sb->dec_logits, FE_DTYPE_F32, B * V, "dec_logits"};
    for (int l = 0; l < c->dec_layers; l++) {
        list[n++] = (FeCarve){&sb->self_k[l], FE_DTYPE_F32, B * T * d, "self_k"};
        list[n++] = (FeCarve){&sb->self_v[l], FE_DTYPE_F32, B * T * d, "self_v"};
    }
    fe_status st = fe_carve_all(sb->model->device, &sb->dec_arena, list, n);
    free(list);
    if (st != FE_OK) {
        fe_state_free_decoder(sb);
        return st;
    }
    sb->beam_capacity = beams;
    return FE_OK;
}

fe_status fe_state_buffers_prepare(FeStateBuffers *sb, int rows, int tokens) {
    FE_TRY(fe_state_buffers_reserve_beams(sb, rows));
    const FeModelConfig *c = &sb->model->cfg;
    int64_t T = c->max_tokens, d = c->d_model;
    if (tokens > T)
        tokens = (int)T;
    if (tokens <= 0 || strcmp(sb->model->device->backend->name, "cpu") != 0)
        return FE_OK;
    /* row r of a layer's cache is [T, d] at r * T * d (fe_cpu_kv_write) */
    size_t bytes = (size_t)tokens * (size_t)d * sizeof(float);
    for (int l = 0; l < c->dec_layers; l++)
        for (int r = 0; r < rows; r++) {
            fe_cpu_prefault((float *)fe_tensor_data(&sb->self_k[l]) + r * T * d, bytes);
            fe_cpu_prefault((float *)fe_tensor_data(&sb->self_v[l]) + r * T * d, bytes);
        }
    return FE_OK;
}

static void fe_state_free_batch(FeStateBuffers *sb) {
    fe_buffer_free(sb->batch_arena);
    sb->batch_arena = NULL;
    free(sb->batch_k);
    free(sb->batch_v);
    sb->batch_k = sb->batch_v = NULL;
    sb->batch_token_capacity = sb->batch_tokens = 0;
}

fe_status fe_model_batch_reserve(FeStateBuffers *sb, int rows, int64_t tokens) {
    const FeModelConfig *c = &sb->model->cfg;
    FE_TRY(fe_state_buffers_reserve_beams(sb, rows));
    sb->batch_tokens = 0;
    if (tokens < 1)
        tokens = 1;
    if (sb->batch_arena && tokens <= sb->batch_token_capacity)
        return FE_OK;
    fe_state_free_batch(sb);
    sb->n_decoder_allocs++;
    int nl = c->dec_layers > 0 ? c->dec_layers : 1;
    int64_t d = c->d_model;
    sb->batch_k = calloc((size_t)nl, sizeof(FeTensor));
    sb->batch_v = calloc((size_t)nl, sizeof(FeTensor));
    FeCarve *list = calloc((size_t)(2 * nl), sizeof *list);
    if (!sb->batch_k || !sb->batch_v || !list) {
        free(list);
        fe_state_free_batch(sb);
        return fe_set_error(FE_ERR_OUT_OF_MEMORY, "out of memory for a batch of %d images",
                            rows);
    }
    int n = 0;
    for (int l = 0; l < c->dec_layers; l++) {
        list[n++] = (FeCarve){&sb->batch_k[l], FE_DTYPE_F32, tokens * d, "batch_k"};
        list[n++] = (FeCarve){&sb->batch_v[l], FE_DTYPE_F32, tokens * d, "batch_v"};
    }
    fe_status st = n ? fe_carve_all(sb->model->device, &sb->batch_arena, list, n)
                     : fe_buffer_new(sb->model->device, FE_ALIGN, &sb->batch_arena);
    free(list);
    if (st != FE_OK) {
        fe_state_free_batch(sb);
        return st;
    }
    /* the batch's cross K/V fill it whole (as the encoder's arena) */
    if (strcmp(sb->model->device->backend->name, "cpu") == 0)
        fe_cpu_advise_huge(sb->batch_arena->data, sb->batch_arena->size);
    sb->batch_token_capacity = tokens;
    return FE_OK;
}

uint64_t fe_state_buffers_device_bytes(const FeStateBuffers *sb) {
    return (sb->enc_arena ? sb->enc_arena->size : 0) + (sb->dec_arena ? sb->dec_arena->size : 0) +
           (sb->batch_arena ? sb->batch_arena->size : 0);
}

void fe_state_buffers_free(FeStateBuffers *sb) {
    if (!sb)
        return;
    fe_state_free_batch(sb);
    fe_state_free_decoder(sb);
    fe_state_free_encoder(sb);
    memset(sb, 0, sizeof *sb);
}

/* ------------------------------------------------------------------------ */
/* Forward                                                                  */

/* x += Attention(LN(x)) or MLP(LN(x)) pieces shared by encoder and decoder:
 * rows x [n, d]. */
static fe_status fe_linear(FeTensor *y, const FeTensor *x, const FeLinear *lin, bool gelu) {
    return fe_matmul(y, x, &lin->weight, &lin->bias, gelu);
}

fe_status fe_model_encode(FeStateBuffers *sb, const float *pixels, int height, int width) {
    const FeModel *m = sb->model;
    const FeModelConfig *c = &m->cfg;
    if (!pixels)
        return fe_set_error(FE_ERR_INVALID_ARGUMENT, "encode: NULL pixels");
    if (height <= 0 || width <= 0 || height % c->height_stride || width % c->width_stride ||
        height > c->max_height || width > c->max_width)
        return fe_set_error(FE_ERR_INVALID_ARGUMENT,
                            "encode: image %dx%d must be a positive multiple of %dx%d within %dx%d",
                            width, height, c->width_stride, c->height_stride, c->max_width,
                            c->max_height);
    sb->enc_len = 0;
    sb->cross_ready = false;
    FE_TRY(fe_model_encoder_reserve(sb, &height, &width, 1));
    FeTensor cur, next;
    int64_t ch = c->in_channels, h = height, w = width;
    FE_TRY(fe_view(&cur, &sb->cnn_a, 0, 4, 1, ch, h, w));
    FE_TRY(fe_tensor_upload(&cur, pixels, (size_t)(h * w) * sizeof(float)));
    const FeTensor *bufs[2] = {&sb->cnn_a, &sb->cnn_b};
    int cur_buf = 0;
    for (int i = 0; i < c->n_cnn; i++) {
        ch = c->cnn_channels[i];
        FE_TRY(fe_view(&next, bufs[1 - cur_buf], 0, 4, 1, ch, h, w));
        FE_TRY(fe_conv3x3(&next, &cur, &m->conv_weight[i], &m->conv_bias[i], true));
        cur = next;
        cur_buf = 1 - cur_buf;
        int ph = c->cnn_pool[i][0], pw = c->cnn_pool[i][1];
        if (ph != 1 || pw != 1) {
            h /= ph;
            w /= pw;
            FE_TRY(fe_view(&next, bufs[1 - cur_buf], 0, 4, 1, ch, h, w));
            FE_TRY(fe_maxpool(&next, &cur, ph, pw));
            cur = next;
            cur_buf = 1 - cur_buf;
        }
    }
    int64_t L = h * w, d = c->d_model;
    FeTensor seq, seq2d;
    FE_TRY(fe_view(&seq, bufs[1 - cur_buf], 0, 3, 1, L, ch, 0));
    FE_TRY(fe_nchw_to_nlc(&seq, &cur));
    FE_TRY(fe_view(&seq2d, bufs[1 - cur_buf], 0, 2, L, ch, 0, 0));

    FeTensor x, hbuf, q, k, v, att, ff, pos, out;
    FE_TRY(fe_view(&x, &sb->enc_x, 0, 2, L, d, 0, 0));
    FE_TRY(fe_view(&hbuf, &sb->enc_h, 0, 2, L, d, 0, 0));
    FE_TRY(fe_view(&ff, &sb->enc_ff, 0, 2, L, c->d_ff, 0, 0));
    FE_TRY(fe_view(&pos, &sb->enc_pos, 0, 2, L, d, 0, 0));
    FE_TRY(fe_view(&out, &sb->enc_out, 0, 2, L, d, 0, 0));
    FE_TRY(fe_linear(&x, &seq2d, &m->enc_proj, false));

    /* token (y, x) gets concat(pe(y), pe(x)) */
    int half = (int)d / 2;
    for (int64_t yy = 0; yy < h; yy++)
        for (int64_t xx = 0; xx < w; xx++) {
            float *row = sb->host_pos + (size_t)(yy * w + xx) * d;
            memcpy(row, m->pe_rows + (size_t)yy * half, (size_t)half * sizeof(float));
            memcpy(row + half, m->pe_cols + (size_t)xx * half, (size_t)half * sizeof(float));
        }
    FE_TRY(fe_tensor_upload(&pos, sb->host_pos, (size_t)(L * d) * sizeof(float)));
    FE_TRY(fe_add(&x, &x, &pos));

    for (int l = 0; l < c->enc_layers; l++) {
        const FeEncoderLayer *E = &m->enc[l];
        FeTensor q3, k3, v3, att3;
        FE_TRY(fe_layernorm(&hbuf, &x, &E->ln1.weight, &E->ln1.bias, c->ln_eps));
        FE_TRY(fe_view(&q, &sb->enc_q, 0, 2, L, d, 0, 0));
        FE_TRY(fe_view(&k, &sb->enc_k, 0, 2, L, d, 0, 0));
        FE_TRY(fe_view(&v, &sb->enc_v, 0, 2, L, d, 0, 0));
        FE_TRY(fe_view(&att, &sb->enc_att, 0, 2, L, d, 0, 0));
        FE_TRY(fe_linear(&q, &hbuf, &E->attn.q, false));
        FE_TRY(fe_linear(&k, &hbuf, &E->attn.k, false));
        FE_TRY(fe_linear(&v, &hbuf, &E->attn.v, false));
        FE_TRY(fe_view(&q3, &sb->enc_q, 0, 3, 1, L, d, 0));
        FE_TRY(fe_view(&k3, &sb->enc_k, 0, 3, 1, L, d, 0));
        FE_TRY(fe_view(&v3, &sb->enc_v, 0, 3, 1, L, d, 0));
        FE_TRY(fe_view(&att3, &sb->enc_att, 0, 3, 1, L, d, 0));
        FE_TRY(fe_attention(&att3, &q3, &k3, &v3, c->n_heads, (int)L, false, 0));
        FE_TRY(fe_linear(&hbuf, &att, &E->attn.o, false));
        FE_TRY(fe_add(&x, &x, &hbuf));
        FE_TRY(fe_layernorm(&hbuf, &x, &E->ln2.weight, &E->ln2.bias, c->ln_eps));
        FE_TRY(fe_linear(&ff, &hbuf, &E->fc1, true));
        FE_TRY(fe_linear(&hbuf, &ff, &E->fc2, false));
        FE_TRY(fe_add(&x, &x, &hbuf));
    }
    FE_TRY(fe_layernorm(&out, &x, &m->enc_norm.weight, &m->enc_norm.bias, c->ln_eps));
    sb->enc_len = (int)L;
    sb->enc_grid_h = (int)h;
    sb->enc_grid_w = (int)w;
    return FE_OK;
}

fe_status fe_model_cross_kv(FeStateBuffers *sb) {
    const FeModel *m = sb->model;
    const FeModelConfig *c = &m->cfg;
    if (sb->enc_len <= 0)
        return fe_set_error(FE_ERR_INVALID_ARGUMENT, "decode: no encoder output (encode first)");
    if (sb->cross_ready)
        return FE_OK;
    int64_t L = sb->enc_len, d = c->d_model;
    FeTensor enc, k, v;
    FE_TRY(fe_view(&enc, &sb->enc_out, 0, 2, L, d, 0, 0));
    for (int l = 0; l < c->dec_layers; l++) {
        FE_TRY(fe_view(&k, &sb->cross_k[l], 0, 2, L, d, 0, 0));
        FE_TRY(fe_view(&v, &sb->cross_v[l], 0, 2, L, d, 0, 0));
        FE_TRY(fe_linear(&k, &enc, &m->dec[l].cross_attn.k, false));
        FE_TRY(fe_linear(&v, &enc, &m->dec[l].cross_attn.v, false));
    }
    sb->cross_ready = true;
    return FE_OK;
}

/* One decoder step for rows 0..n_rows-1. per_row: row r cross-attends to the
 * packed batch K/V rows sb->host_spans[r] (multi-image batches); otherwise
 * every row to the one encoding's K/V (beams of one image). */
static fe_status fe_decode_step(FeStateBuffers *sb, const int32_t *ids, int n_rows, int position,
                                bool per_row) {
    const FeModel *m = sb->model;
    const FeModelConfig *c = &m->cfg;
    if (n_rows < 1 || n_rows > sb->beam_capacity)
        return fe_set_error(FE_ERR_INTERNAL, "decode step: %d rows, capacity %d", n_rows,
                            sb->beam_capacity);
    if (position < 0 || position >= c->max_tokens)
        return fe_set_error(FE_ERR_INTERNAL, "decode step: position %d outside 0..%d", position,
                            c->max_tokens - 1);
    int64_t B = n_rows, d = c->d_model, T = c->max_tokens, L = sb->enc_len;
    int max_len = 0;
    FeTensor spans;
    if (per_row) {
        for (int r = 0; r < n_rows; r++) {
            int32_t start = sb->host_spans[2 * r], len = sb->host_spans[2 * r + 1];
            if (start < 0 || len < 1 || start + (int64_t)len > sb->batch_tokens)
                return fe_set_error(FE_ERR_INTERNAL,
                                    "decode step: row %d spans %d+%d of %lld batch rows", r, start,
                                    len, (long long)sb->batch_tokens);
            if (len > max_len)
                max_len = len;
        }
        FE_TRY(fe_view(&spans, &sb->batch_spans, 0, 2, B, 2, 0, 0));
        FE_TRY(fe_tensor_upload(&spans, sb->host_spans, (size_t)B * 2 * sizeof(int32_t)));
    } else {
        FE_TRY(fe_model_cross_kv(sb));
    }
    FeTensor idt, x, h, q, kk, vv, att, ff, logits, q3, k3, v3, att3, kc, vc;
    FE_TRY(fe_view(&idt, &sb->dec_ids, 0, 1, B, 0, 0, 0));
    memcpy(sb->host_ids, ids, (size_t)B * sizeof(int32_t));
    FE_TRY(fe_tensor_upload(&idt, sb->host_ids, (size_t)B * sizeof(int32_t)));
    FE_TRY(fe_view(&x, &sb->dec_x, 0, 2, B, d, 0, 0));
    FE_TRY(fe_view(&h, &sb->dec_h, 0, 2, B, d, 0, 0));
    FE_TRY(fe_view(&q, &sb->dec_q, 0, 2, B, d, 0, 0));
    FE_TRY(fe_view(&kk, &sb->dec_k, 0, 2, B, d, 0, 0));
    FE_TRY(fe_view(&vv, &sb->dec_v, 0, 2, B, d, 0, 0));
    FE_TRY(fe_view(&att, &sb->dec_att, 0, 2, B, d, 0, 0));
    FE_TRY(fe_view(&ff, &sb->dec_ff, 0, 2, B, c->d_ff, 0, 0));
    FE_TRY(fe_view(&logits, &sb->dec_logits, 0, 2, B, c->vocab_size, 0, 0));
    FE_TRY(fe_view(&q3, &sb->dec_q, 0, 3, B, 1, d, 0));
    FE_TRY(fe_view(&k3, &sb->dec_k, 0, 3, B, 1, d, 0));
    FE_TRY(fe_view(&v3, &sb->dec_v, 0, 3, B, 1, d, 0));
    FE_TRY(fe_view(&att3, &sb->dec_att, 0, 3, B, 1, d, 0));
    FE_TRY(fe_embed(&x, &m->tok_emb, &m->pos_emb, &idt, position));
    for (int l = 0; l < c->dec_layers; l++) {
        const FeDecoderLayer *D = &m->dec[l];
        /* causal self-attention over the cache: this step's K/V go in at
         * `position`, the query sees positions 0..position */
        FE_TRY(fe_layernorm(&h, &x, &D->ln1.weight, &D->ln1.bias, c->ln_eps));
        FE_TRY(fe_linear(&q, &h, &D->self_attn.q, false));
        FE_TRY(fe_linear(&kk, &h, &D->self_attn.k, false));
        FE_TRY(fe_linear(&vv, &h, &D->self_attn.v, false));
        FE_TRY(fe_view(&kc, &sb->self_k[l], 0, 3, B, T, d, 0));
        FE_TRY(fe_view(&vc, &sb->self_v[l], 0, 3, B, T, d, 0));
        FE_TRY(fe_kv_write(&kc, &k3, position));
        FE_TRY(fe_kv_write(&vc, &v3, position));
        FE_TRY(fe_attention(&att3, &q3, &kc, &vc, c->n_heads, position + 1, true, position));
        FE_TRY(fe_linear(&h, &att, &D->self_attn.o, false));
        FE_TRY(fe_add(&x, &x, &h));
        FE_TRY(fe_layernorm(&h, &x, &D->ln2.weight, &D->ln2.bias, c->ln_eps));
        FE_TRY(fe_linear(&q, &h, &D->cross_attn.q, false));
        if (per_row) {
            /* cross-attention: each row over its own image's K/V, one op */
            FeTensor bk, bv;
            FE_TRY(fe_view(&bk, &sb->batch_k[l], 0, 2, sb->batch_tokens, d, 0, 0));
            FE_TRY(fe_view(&bv, &sb->batch_v[l], 0, 2, sb->batch_tokens, d, 0, 0));
            FE_TRY(fe_attention_rows(&att3, &q3, &bk, &bv, &spans, c->n_heads, max_len));
        } else {
            /* cross-attention: every row reads the one encoding, so it runs
             * per row against K/V computed once per image */
            FE_TRY(fe_view(&kc, &sb->cross_k[l], 0, 3, 1, L, d, 0));
            FE_TRY(fe_view(&vc, &sb->cross_v[l], 0, 3, 1, L, d, 0));
            for (int64_t r = 0; r < B; r++) {
                FeTensor qr, ar;
                FE_TRY(fe_view(&qr, &sb->dec_q, r * d, 3, 1, 1, d, 0));
                FE_TRY(fe_view(&ar, &sb->dec_att, r * d, 3, 1, 1, d, 0));
                FE_TRY(fe_attention(&ar, &qr, &kc, &vc, c->n_heads, (int)L, false, 0));
            }
        }
        FE_TRY(fe_linear(&h, &att, &D->cross_attn.o, false));
        FE_TRY(fe_add(&x, &x, &h));
        FE_TRY(fe_layernorm(&h, &x, &D->ln3.weight, &D->ln3.bias, c->ln_eps));
        FE_TRY(fe_linear(&ff, &h, &D->fc1, true));
        FE_TRY(fe_linear(&h, &ff, &D->fc2, false));
        FE_TRY(fe_add(&x, &x, &h));
    }
    FE_TRY(fe_layernorm(&h, &x, &m->dec_norm.weight, &m->dec_norm.bias, c->ln_eps));
    FE_TRY(fe_matmul(&logits, &h, &m->out_weight, &m->out_bias, false));
    return fe_tensor_download(&logits, sb->host_logits,
                              (size_t)(B * c->vocab_size) * sizeof(float));
}

fe_status fe_model_decode_step(FeStateBuffers *sb, const int32_t *ids, int n_rows, int position) {
    return fe_decode_step(sb, ids, n_rows, position, false);
}

fe_status fe_model_decode_step_rows(FeStateBuffers *sb, const int32_t *ids, int n_rows,
                                    int position) {
    if (!sb->batch_arena)
        return fe_set_error(FE_ERR_INTERNAL, "decode step: no batch (fe_model_batch_reserve)");
    return fe_decode_step(sb, ids, n_rows, position, true);
}

fe_status fe_model_batch_add(FeStateBuffers *sb, int row) {
    const FeModel *m = sb->model;
    const FeModelConfig *c = &m->cfg;
    if (sb->enc_len <= 0)
        return fe_set_error(FE_ERR_INVALID_ARGUMENT, "batch: no encoder output (encode first)");
    if (row < 0 || row >= sb->beam_capacity || !sb->batch_arena)
        return fe_set_error(FE_ERR_INTERNAL, "batch: row %d outside the reserved %d", row,
                            sb->batch_arena ? sb->beam_capacity : 0);
    int64_t L = sb->enc_len, d = c->d_model, start = sb->batch_tokens;
    if (start + L > sb->batch_token_capacity)
        return fe_set_error(FE_ERR_INTERNAL, "batch: %lld + %lld encoder rows exceed the %lld reserved",
                            (long long)start, (long long)L, (long long)sb->batch_token_capacity);
    /* the same products as fe_model_cross_kv, written at the image's place */
    FeTensor enc, k, v;
    FE_TRY(fe_view(&enc, &sb->enc_out, 0, 2, L, d, 0, 0));
    for (int l = 0; l < c->dec_layers; l++) {
        FE_TRY(fe_view(&k, &sb->batch_k[l], start * d, 2, L, d, 0, 0));
        FE_TRY(fe_view(&v, &sb->batch_v[l], start * d, 2, L, d, 0, 0));
        FE_TRY(fe_linear(&k, &enc, &m->dec[l].cross_attn.k, false));
        FE_TRY(fe_linear(&v, &enc, &m->dec[l].cross_attn.v, false));
    }
    sb->host_spans[2 * row] = (int32_t)start;
    sb->host_spans[2 * row + 1] = (int32_t)L;
    sb->batch_tokens = start + L;
    return FE_OK;
}

bool fe_model_batch_supported(const FeModel *m, int *exact_rows) {
    const FeModelConfig *c = &m->cfg;
    if (exact_rows)
        *exact_rows = 0;
    if (c->dec_layers < 1)
        return false;
    /* A descriptor shaped like a step's, for the backend's supports_op,
     * which looks at shapes and types only: on a buffer without data, so
     * that a state can ask before its decoder rows are made (and make them
     * once, for the batch: fe_state_new). */
    FeBuffer none = {.device = m->device};
    FeTensor q = {.dtype = FE_DTYPE_F32, .buffer = &none}, y = q, kv = q;
    FeTensor spans = {.dtype = FE_DTYPE_I32, .buffer = &none};
    q.ndim = y.ndim = 3;
    q.shape[0] = y.shape[0] = 1;
    q.shape[1] = y.shape[1] = 1;
    q.shape[2] = y.shape[2] = c->d_model;
    kv.ndim = 2;
    kv.shape[0] = 1;
    kv.shape[1] = c->d_model;
    spans.ndim = 2;
    spans.shape[0] = 1;
    spans.shape[1] = 2;
    FeOpDesc op = {.op = FE_OP_ATTENTION_ROWS,
                   .dst = &y,
                   .src = {&q, &kv, &kv, &spans},
                   .iparams = {c->n_heads, 1}};
    if (!fe_op_supported(&op))
        return false;
    if (exact_rows && strcmp(m->device->backend->name, "cpu") == 0) {
        /* every matmul of a step: the smallest promise over their weights */
        int rows = fe_cpu_matmul_exact_rows(m->out_weight.dtype);
        const FeDecoderLayer *D = &m->dec[0];
        const FeTensor *w[] = {&D->self_attn.q.weight, &D->cross_attn.o.weight, &D->fc1.weight,
                               &D->fc2.weight};
        for (size_t i = 0; i < sizeof w / sizeof w[0]; i++) {
            int r = fe_cpu_matmul_exact_rows(w[i]->dtype);
            if (r < rows)
                rows = r;
        }
        *exact_rows = rows;
    }
    return true;
}

fe_status fe_model_reorder_cache(FeStateBuffers *sb, const int *parent, int n_rows,
                                 int n_positions) {
    const FeModelConfig *c = &sb->model->cfg;
    int64_t d = c->d_model, T = c->max_tokens;
    bool identity = true;
    for (int r = 0; r < n_rows; r++)
        if (parent[r] != r)
            identity = false;
    if (identity || n_positions <= 0)
        return FE_OK;
    size_t row_bytes = (size_t)(n_positions * d) * sizeof(float);
    for (int l = 0; l < c->dec_layers; l++) {
        FeTensor *caches[2] = {&sb->self_k[l], &sb->self_v[l]};
        for (int which = 0; which < 2; which++) {
            FeTensor view;
            /* Read every source before writing any row: row r's old contents
             * may be another row's parent. */
            for (int r = 0; r < n_rows; r++) {
                if (parent[r] == r)
                    continue;
                FE_TRY(fe_view(&view, caches[which], (int64_t)parent[r] * T * d, 2, n_positions,
                               d, 0, 0));
                FE_TRY(fe_tensor_download(&view, sb->host_kv + (size_t)r * T * d, row_bytes));
            }
            for (int r = 0; r < n_rows; r++) {
                if (parent[r] == r)
                    continue;
                FE_TRY(fe_view(&view, caches[which], (int64_t)r * T * d, 2, n_positions, d, 0, 0));
                FE_TRY(fe_tensor_upload(&view, sb->host_kv + (size_t)r * T * d, row_bytes));
            }
        }
    }
    return FE_OK;
}
