/* fe-config.c - the formulate-v1 configuration (docs/model.md) and the list
 * of tensors it implies. */
#include "fe-weights-private.h"

#include <stdio.h>
#include <stdlib.h>
#include <string.h>

typedef enum { FE_KEY_INT, FE_KEY_FLOAT, FE_KEY_BOOL, FE_KEY_STRING, FE_KEY_CHANNELS, FE_KEY_POOLS } fe_key_kind;

typedef struct {
    const char *name;
    fe_key_kind kind;
    bool required;
    size_t offset;                 /* into FeModelConfig                      */
    double min, max;               /* inclusive range for numbers             */
} FeConfigKey;

#define FE_CFG(field) offsetof(FeModelConfig, field)

/* Bounds on what a config may make one image cost (fe_config_from_json):
 * ten times the shipped model's 256 x 1536 input, and 1 GiB for any one
 * buffer the config alone sizes. */
#define FE_CONFIG_MAX_INPUT_PIXELS (4LL << 20)
#define FE_CONFIG_MAX_BUFFER_BYTES (1LL << 30)

static const FeConfigKey fe_config_keys[] = {
    {"arch", FE_KEY_STRING, true, FE_CFG(arch), 0, 0},
    {"format_version", FE_KEY_INT, false, FE_CFG(format_version), 1, 1},
    {"in_channels", FE_KEY_INT, false, FE_CFG(in_channels), 1, 1},
    {"cnn_channels", FE_KEY_CHANNELS, false, FE_CFG(cnn_channels), 1, 4096},
    {"cnn_pool", FE_KEY_POOLS, false, FE_CFG(cnn_pool), 1, 16},
    {"d_model", FE_KEY_INT, false, FE_CFG(d_model), 4, 8192},
    {"n_heads", FE_KEY_INT, false, FE_CFG(n_heads), 1, 256},
    {"d_ff", FE_KEY_INT, false, FE_CFG(d_ff), 1, 65536},
    {"enc_layers", FE_KEY_INT, false, FE_CFG(enc_layers), 0, 64},
    {"dec_layers", FE_KEY_INT, false, FE_CFG(dec_layers), 1, 64},
    {"vocab_size", FE_KEY_INT, true, FE_CFG(vocab_size), 4, 1 << 20},
    {"max_tokens", FE_KEY_INT, false, FE_CFG(max_tokens), 2, 65536},
    {"tie_embeddings", FE_KEY_BOOL, false, FE_CFG(tie_embeddings), 0, 0},
    {"em_px", FE_KEY_INT, false, FE_CFG(em_px), 1, 1000},
    {"cc_median_em", FE_KEY_FLOAT, false, FE_CFG(cc_median_em), 1e-3, 10},
    {"max_height", FE_KEY_INT, false, FE_CFG(max_height), 16, 65536},
    {"max_width", FE_KEY_INT, false, FE_CFG(max_width), 8, 65536},
    {"ln_eps", FE_KEY_FLOAT, false, FE_CFG(ln_eps), 1e-30, 0.1},
    {"bn_eps", FE_KEY_FLOAT, false, FE_CFG(bn_eps), 1e-30, 0.1},
    {"pad_id", FE_KEY_INT, false, FE_CFG(pad_id), 0, 1 << 20},
    {"bos_id", FE_KEY_INT, false, FE_CFG(bos_id), 0, 1 << 20},
    {"eos_id", FE_KEY_INT, false, FE_CFG(eos_id), 0, 1 << 20},
    {"unk_id", FE_KEY_INT, false, FE_CFG(unk_id), 0, 1 << 20},
};
#define FE_N_CONFIG_KEYS (sizeof fe_config_keys / sizeof fe_config_keys[0])

static void fe_config_defaults(FeModelConfig *c) {
    static const int channels[] = {32, 64, 128, 256, 256};
    static const int pools[][2] = {{2, 2}, {2, 2}, {2, 2}, {2, 1}, {1, 1}};
    memset(c, 0, sizeof *c);
    c->format_version = 1;
    c->in_channels = 1;
    c->n_cnn = 5;
    for (int i = 0; i < 5; i++) {
        c->cnn_channels[i] = channels[i];
        c->cnn_pool[i][0] = pools[i][0];
        c->cnn_pool[i][1] = pools[i][1];
    }
    c->d_model = 256;
    c->n_heads = 8;
    c->d_ff = 1024;
    c->enc_layers = 2;
    c->dec_layers = 4;
    c->max_tokens = 256;
    c->tie_embeddings = true;
    c->em_px = 20;
    c->cc_median_em = 0.55f;
    c->max_height = 256;
    c->max_width = 1536;
    c->ln_eps = 1e-5f;
    c->bn_eps = 1e-5f;
    c->pad_id = 0;
    c->bos_id = 1;
    c->eos_id = 2;
    c->unk_id = 3;
}

static fe_status fe_config_int(const char *key, const FeJson *v, double min, double max,
                               int *out) {
    if (v->type != FE_JSON_NUMBER || !v->is_integer)
        return fe_set_error(FE_ERR_FORMAT, "config: '%s' must be an integer, not %s", key,
                            v->type == FE_JSON_NUMBER ? "a fraction" : fe_json_type_name(v->type));
    if ((double)v->integer < min || (double)v->integer > max)
        return fe_set_error(FE_ERR_FORMAT, "config: '%s' is %lld, must be in %.0f..%.0f", key,
                            (long long)v->integer, min, max);
    *out = (int)v->integer;
    return FE_OK;
}

static fe_status fe_config_key(const FeConfigKey *k, const FeJson *v, FeModelConfig *c) {
    char *field = (char *)c + k->offset;
    switch (k->kind) {
    case FE_KEY_INT:
        return fe_config_int(k->name, v, k->min, k->max, (int *)(void *)field);
    case FE_KEY_FLOAT: {
        float f;
        if (v->type != FE_JSON_NUMBER)
            return fe_set_error(FE_ERR_FORMAT, "config: '%s' must be a number, not %s", k->name,
                                fe_json_type_name(v->type));
        if (v->number < k->min || v->number > k->max)
            return fe_set_error(FE_ERR_FORMAT, "config: '%s' is %g, must be in %g..%g", k->name,
                                v->number, k->min, k->max);
        f = (float)v->number;
        memcpy(field, &f, sizeof f);
        return FE_OK;
    }
    case FE_KEY_BOOL:
        if (v->type != FE_JSON_BOOL)
            return fe_set_error(FE_ERR_FORMAT, "config: '%s' must be true or false, not %s",
                                k->name, fe_json_type_name(v->type));
        c->tie_embeddings = v->boolean;
        return FE_OK;
    case FE_KEY_STRING:
        if (v->type != FE_JSON_STRING)
            return fe_set_error(FE_ERR_FORMAT, "config: '%s' must be a string, not %s", k->name,
                                fe_json_type_name(v->type));
        if (strcmp(v->string, "formulate-v1") != 0)
            return fe_set_error(FE_ERR_UNSUPPORTED,
                                "config: arch '%.40s' is not supported (expected formulate-v1)",
                                v->string);
        snprintf(c->arch, sizeof c->arch, "%s", v->string);
        return FE_OK;
    case FE_KEY_CHANNELS:
        if (v->type != FE_JSON_ARRAY || v->n_items < 1 || v->n_items > FE_MAX_CNN_BLOCKS)
            return fe_set_error(FE_ERR_FORMAT,
                                "config: 'cnn_channels' must be an array of 1 to %d integers",
                                FE_MAX_CNN_BLOCKS);
        c->n_cnn = (int)v->n_items;
        for (size_t i = 0; i < v->n_items; i++)
            FE_TRY(fe_config_int("cnn_channels[]", &v->items[i], k->min, k->max,
                                 &c->cnn_channels[i]));
        return FE_OK;
    case FE_KEY_POOLS:
        if (v->type != FE_JSON_ARRAY || v->n_items < 1 || v->n_items > FE_MAX_CNN_BLOCKS)
            return fe_set_error(FE_ERR_FORMAT,
                                "config: 'cnn_pool' must be an array of 1 to %d [height, width] pairs",
                                FE_MAX_CNN_BLOCKS);
        /* n_cnn is compared with cnn_channels once every key is read. */
        for (size_t i = 0; i < v->n_items; i++) {
            const FeJson *pair = &v->items[i];
            if (pair->type != FE_JSON_ARRAY || pair->n_items != 2)
                return fe_set_error(FE_ERR_FORMAT,
                                    "config: cnn_pool[%zu] must be a [height, width] pair", i);
            FE_TRY(fe_config_int("cnn_pool[][]", &pair->items[0], k->min, k->max,
                                 &c->cnn_pool[i][0]));
            FE_TRY(fe_config_int("cnn_pool[][]", &pair->items[1], k->min, k->max,
                                 &c->cnn_pool[i][1]));
        }
        return FE_OK;
    default:
        return fe_set_error(FE_ERR_INTERNAL, "config: key kind %d", (int)k->kind);
    }
}

fe_status fe_config_from_json(const FeJson *object, FeModelConfig *out) {
    FeModelConfig c;
    bool seen[FE_N_CONFIG_KEYS] = {false};
    size_t n_pools = 0;
    int ph = 1, pw = 1;

    if (!object || object->type != FE_JSON_OBJECT)
        return fe_set_error(FE_ERR_FORMAT, "config: must be a JSON object, not %s",
                            object ? fe_json_type_name(object->type) : "nothing");
    fe_config_defaults(&c);
    for (size_t i = 0; i < object->n_items; i++) {
        size_t k;
        for (k = 0; k < FE_N_CONFIG_KEYS; k++)
            if (strcmp(object->keys[i], fe_config_keys[k].name) == 0)
                break;
        if (k == FE_N_CONFIG_KEYS)
            return fe_set_error(FE_ERR_FORMAT, "config: unknown key '%.60s'", object->keys[i]);
        if (seen[k])
            return fe_set_error(FE_ERR_FORMAT, "config: duplicate key '%s'", fe_config_keys[k].name);
        seen[k] = true;
        FE_TRY(fe_config_key(&fe_config_keys[k], &object->items[i], &c));
        if (fe_config_keys[k].kind == FE_KEY_POOLS)
            n_pools = object->items[i].n_items;
    }
    for (size_t k = 0; k < FE_N_CONFIG_KEYS; k++)
        if (fe_config_keys[k].required && !seen[k])
            return fe_set_error(FE_ERR_FORMAT, "config: missing key '%s'", fe_config_keys[k].name);

    /* Both lists default together; a file that sets one must set the other. */
    if (n_pools == 0)
        n_pools = 5;
    if ((int)n_pools != c.n_cnn)
        return fe_set_error(FE_ERR_FORMAT,
                            "config: cnn_pool has %zu entries but cnn_channels has %d", n_pools,
                            c.n_cnn);
    for (int i = 0; i < c.n_cnn; i++) {
        ph *= c.cnn_pool[i][0];
        pw *= c.cnn_pool[i][1];
        if (ph > 16 || pw > 16)
            break;
    }
    if (ph != 16)
        return fe_set_error(FE_ERR_FORMAT,
                            "config: cnn_pool heights multiply to %d, must be 16", ph);
    if (pw != 8 && pw != 16)
        return fe_set_error(FE_ERR_FORMAT,
                            "config: cnn_pool widths multiply to %d, must be 8 or 16", pw);
    c.height_stride = ph;
    c.width_stride = pw;
    if (c.d_model % c.n_heads != 0)
        return fe_set_error(FE_ERR_FORMAT, "config: n_heads %d does not divide d_model %d",
                            c.n_heads, c.d_model);
    /* 2-D sinusoidal positions: d_model/2 per axis, in sin/cos pairs. */
    if (c.d_model % 4 != 0)
        return fe_set_error(FE_ERR_FORMAT,
                            "config: d_model %d must be a multiple of 4 (2-D sin/cos positions)",
                            c.d_model);
    if (c.max_height % c.height_stride != 0 || c.max_width % c.width_stride != 0)
        return fe_set_error(FE_ERR_FORMAT,
                            "config: max_height %d / max_width %d must be multiples of the "
                            "strides %d / %d",
                            c.max_height, c.max_width, c.height_stride, c.width_stride);
    /* Each key is in range on its own, but the buffers are products: the
     * input image, the first conv block's activations and the decoder's
     * key/value cache. max_height = max_width = 65536 asked for 7.9 GB at
     * the first image; refuse such a file at load time instead. */
    if ((int64_t)c.max_height * c.max_width > FE_CONFIG_MAX_INPUT_PIXELS)
        return fe_set_error(FE_ERR_FORMAT,
                            "config: max_height %d x max_width %d is over the %lld pixel limit",
                            c.max_height, c.max_width, (long long)FE_CONFIG_MAX_INPUT_PIXELS);
    if ((int64_t)c.max_height * c.max_width * c.cnn_channels[0] * 4 > FE_CONFIG_MAX_BUFFER_BYTES)
        return fe_set_error(FE_ERR_FORMAT,
                            "config: the first conv block's %d channels at max_height %d x "
                            "max_width %d would take over %lld bytes",
                            c.cnn_channels[0], c.max_height, c.max_width,
                            (long long)FE_CONFIG_MAX_BUFFER_BYTES);
    if ((int64_t)c.dec_layers * 2 * c.max_tokens * c.d_model * 4 > FE_CONFIG_MAX_BUFFER_BYTES)
        return fe_set_error(FE_ERR_FORMAT,
                            "config: a %d-layer decoder with max_tokens %d and d_model %d needs a "
                            "key/value cache over %lld bytes per formula",
                            c.dec_layers, c.max_tokens, c.d_model,
                            (long long)FE_CONFIG_MAX_BUFFER_BYTES);
    {
        const int ids[4] = {c.pad_id, c.bos_id, c.eos_id, c.unk_id};
        static const char *const names[4] = {"pad_id", "bos_id", "eos_id", "unk_id"};
        for (int i = 0; i < 4; i++) {
            if (ids[i] >= c.vocab_size)
                return fe_set_error(FE_ERR_FORMAT, "config: %s %d is outside the vocabulary (%d)",
                                    names[i], ids[i], c.vocab_size);
            for (int j = 0; j < i; j++)
                if (ids[i] == ids[j])
                    return fe_set_error(FE_ERR_FORMAT, "config: %s and %s are both %d",
                                        names[j], names[i], ids[i]);
        }
    }
    *out = c;
    return FE_OK;
}

fe_status fe_config_parse(const char *json, size_t len, FeModelConfig *out) {
    FeJson *root;
    fe_status st;
    if (!json || !out)
        return fe_set_error(FE_ERR_INVALID_ARGUMENT, "fe_config_parse: NULL argument");
    FE_TRY(fe_json_parse(json, len, "config", &root));
    st = fe_config_from_json(root, out);
    fe_json_free(root);
    return st;
}

/* ------------------------------------------------------------------------ */

typedef struct {
    FeExpectedTensor *items;
    size_t n, cap;
    bool failed;
} FeExpectedList;

__attribute__((format(printf, 5, 6))) static void
fe_expect(FeExpectedList *l, bool optional, int ndim, const int64_t *shape, const char *fmt, ...) {
    va_list ap;
    FeExpectedTensor *t;
    if (l->failed)
        return;
    if (l->n == l->cap) {
        size_t cap = l->cap ? l->cap * 2 : 64;
        FeExpectedTensor *grown = realloc(l->items, cap * sizeof *grown);
        if (!grown) {
            l->failed = true;
            return;
        }
        l->items = grown;
        l->cap = cap;
    }
    t = &l->items[l->n++];
    memset(t, 0, sizeof *t);
    va_start(ap, fmt);
    vsnprintf(t->name, sizeof t->name, fmt, ap);
    va_end(ap);
    t->ndim = ndim;
    for (int i = 0; i < ndim; i++)
        t->shape[i] = shape[i];
    t->optional = optional;
}

#define FE_SHAPE(...) ((const int64_t[]){__VA_ARGS__})

static void fe_expect_linear(FeExpectedList *l, const char *prefix, int64_t out, int64_t in) {
    fe_expect(l, false, 2, FE_SHAPE(out, in), "%s.weight", prefix);
    fe_expect(l, false, 1, FE_SHAPE(out), "%s.bias", prefix);
}

static void fe_expect_norm(FeExpectedList *l, const char *prefix, int64_t d) {
    fe_expect(l, false, 1, FE_SHAPE(d), "%s.weight", prefix);
    fe_expect(l, false, 1, FE_SHAPE(d), "%s.bias", prefix);
}

static void fe_expect_attention(FeExpectedList *l, const char *prefix, int64_t d) {
    static const char *const parts[] = {"q", "k", "v", "o"};
    char name[64];
    for (int i = 0; i < 4; i++) {
        snprintf(name, sizeof name, "%s.%s", prefix, parts[i]);
        fe_expect_linear(l, name, d, d);
    }
}

static void fe_expect_mlp(FeExpectedList *l, const char *prefix, int64_t d, int64_t ff) {
    char name[64];
    snprintf(name, sizeof name, "%s.fc1", prefix);
    fe_expect_linear(l, name, ff, d);
    snprintf(name, sizeof name, "%s.fc2", prefix);
    fe_expect_linear(l, name, d, ff);
}

/* The pre-norm blocks of a transformer layer under "<layer>.": a LayerNorm
 * and the attention it feeds, or a LayerNorm and the MLP (the model's loader
 * walks the same blocks, fe-model.c). */
static void fe_expect_attention_block(FeExpectedList *l, const char *layer, const char *norm_part,
                                      const char *attn_part, int64_t d) {
    char name[64];
    snprintf(name, sizeof name, "%s.%s", layer, norm_part);
    fe_expect_norm(l, name, d);
    snprintf(name, sizeof name, "%s.%s", layer, attn_part);
    fe_expect_attention(l, name, d);
}

static void fe_expect_mlp_block(FeExpectedList *l, const char *layer, const char *norm_part,
                                int64_t d, int64_t ff) {
    char name[64];
    snprintf(name, sizeof name, "%s.%s", layer, norm_part);
    fe_expect_norm(l, name, d);
    snprintf(name, sizeof name, "%s.mlp", layer);
    fe_expect_mlp(l, name, d, ff);
}

FeExpectedTensor *fe_model_expected_tensors(const FeModelConfig *cfg, size_t *n) {
    FeExpectedList l = {0};
    char prefix[64];
    int64_t d = cfg->d_model, ff = cfg->d_ff, vocab = cfg->vocab_size;
    int64_t c_in = cfg->in_channels;

    *n = 0;
    for (int i = 0; i < cfg->n_cnn && i < FE_MAX_CNN_BLOCKS; i++) {
        int64_t c = cfg->cnn_channels[i];
        fe_expect(&l, false, 4, FE_SHAPE(c, c_in, 3, 3), "cnn.%d.conv.weight", i);
        fe_expect(&l, true, 1, FE_SHAPE(c), "cnn.%d.conv.bias", i);
        fe_expect(&l, false, 1, FE_SHAPE(c), "cnn.%d.bn.weight", i);
        fe_expect(&l, false, 1, FE_SHAPE(c), "cnn.%d.bn.bias", i);
        fe_expect(&l, false, 1, FE_SHAPE(c), "cnn.%d.bn.running_mean", i);
        fe_expect(&l, false, 1, FE_SHAPE(c), "cnn.%d.bn.running_var", i);
        fe_expect(&l, true, 0, NULL, "cnn.%d.bn.num_batches_tracked", i);
        c_in = c;
    }
    fe_expect_linear(&l, "enc.proj", d, c_in);
    for (int i = 0; i < cfg->enc_layers; i++) {
        snprintf(prefix, sizeof prefix, "enc.layers.%d", i);
        fe_expect_attention_block(&l, prefix, "ln1", "attn", d);
        fe_expect_mlp_block(&l, prefix, "ln2", d, ff);
    }
    fe_expect_norm(&l, "enc.norm", d);
    fe_expect(&l, false, 2, FE_SHAPE(vocab, d), "dec.tok_emb.weight");
    fe_expect(&l, false, 2, FE_SHAPE(cfg->max_tokens, d), "dec.pos_emb.weight");
    for (int i = 0; i < cfg->dec_layers; i++) {
        snprintf(prefix, sizeof prefix, "dec.layers.%d", i);
        fe_expect_attention_block(&l, prefix, "ln1", "self_attn", d);
        fe_expect_attention_block(&l, prefix, "ln2", "cross_attn", d);
        fe_expect_mlp_block(&l, prefix, "ln3", d, ff);
    }
    fe_expect_norm(&l, "dec.norm", d);
    /* A tied PyTorch model's state_dict lists the shared matrix under both
     * names, so the copy is allowed but not needed. */
    fe_expect(&l, cfg->tie_embeddings, 2, FE_SHAPE(vocab, d), "dec.out.weight");
    fe_expect(&l, false, 1, FE_SHAPE(vocab), "dec.out.bias");
    if (l.failed) {
        free(l.items);
        return NULL;
    }
    *n = l.n;
    return l.items;
}
