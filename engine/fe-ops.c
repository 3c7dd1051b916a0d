/* fe-ops.c - the ops front-end: checks devices, dtypes and shapes once, for
 * every backend, then hands the op to the backend of the operands' device.
 * Backends can therefore trust the shapes described in fe-internal.h. */
#include "fe-internal.h"

#include <stdio.h>
#include <string.h>

const char *fe_op_name(fe_op op) {
    switch (op) {
    case FE_OP_MATMUL: return "fe_matmul";
    case FE_OP_CONV3X3: return "fe_conv3x3";
    case FE_OP_MAXPOOL: return "fe_maxpool";
    case FE_OP_NCHW_TO_NLC: return "fe_nchw_to_nlc";
    case FE_OP_ADD: return "fe_add";
    case FE_OP_LAYERNORM: return "fe_layernorm";
    case FE_OP_GELU: return "fe_gelu";
    case FE_OP_ATTENTION: return "fe_attention";
    case FE_OP_EMBED: return "fe_embed";
    case FE_OP_KV_WRITE: return "fe_kv_write";
    case FE_OP_LOG_SOFTMAX: return "fe_log_softmax";
    case FE_OP_TOPK: return "fe_topk";
    case FE_OP_ATTENTION_ROWS: return "fe_attention_rows";
    case FE_OP_COUNT:
    default: return "fe_unknown_op";
    }
}

static void fe_shape_text(const FeTensor *t, char *out, size_t len) {
    size_t used = (size_t)snprintf(out, len, "[");
    for (int i = 0; i < t->ndim && used < len; i++)
        used += (size_t)snprintf(out + used, len - used, "%s%lld", i ? ", " : "",
                                 (long long)t->shape[i]);
    if (used < len)
        snprintf(out + used, len - used, "]");
}

static fe_status fe_bad_shape(const FeOpDesc *op, const FeTensor *t, const char *role,
                              const char *want) {
    char shape[96];
    fe_shape_text(t, shape, sizeof shape);
    return fe_set_error(FE_ERR_INVALID_ARGUMENT, "%s: %s '%s' is %s %s, expected %s",
                        fe_op_name(op->op), role, t->name, fe_dtype_name(t->dtype), shape, want);
}

static bool fe_is_f32(const FeTensor *t) { return t->dtype == FE_DTYPE_F32; }
/* Weights may also be in a device's compute precision. */
static bool fe_is_float_weight(const FeTensor *t) {
    return t->dtype == FE_DTYPE_F32 || t->dtype == FE_DTYPE_F16 || t->dtype == FE_DTYPE_BF16;
}
static int64_t fe_last_dim(const FeTensor *t) { return t->ndim ? t->shape[t->ndim - 1] : 1; }

#define FE_REQUIRE(cond, t, role, want)                                                        \
    do {                                                                                       \
        if (!(cond))                                                                           \
            return fe_bad_shape(op, (t), (role), (want));                                      \
    } while (0)

static fe_status fe_check_matmul(const FeOpDesc *op) {
    const FeTensor *x = op->src[0], *w = op->src[1], *b = op->src[2], *y = op->dst;
    FE_REQUIRE(w && w->ndim == 2 && fe_is_float_weight(w), w ? w : y, "weight", "2-D [N, K]");
    int64_t n = w->shape[0], k = w->shape[1];
    FE_REQUIRE(x->ndim >= 1 && fe_is_f32(x) && fe_last_dim(x) == k, x, "input", "f32 [.., K]");
    int64_t m = fe_tensor_nelements(x) / (k ? k : 1);
    FE_REQUIRE(!b || (fe_is_f32(b) && fe_tensor_nelements(b) == n), b, "bias", "f32 [N]");
    FE_REQUIRE(fe_is_f32(y) && fe_last_dim(y) == n && fe_tensor_nelements(y) == m * n, y,
               "output", "f32 [.., N] with the input's rows");
    if (m > INT32_MAX || n > INT32_MAX || k > INT32_MAX)
        return fe_set_error(FE_ERR_UNSUPPORTED, "fe_matmul: sizes beyond 2^31");
    return FE_OK;
}

static fe_status fe_check_conv(const FeOpDesc *op) {
    const FeTensor *x = op->src[0], *w = op->src[1], *b = op->src[2], *y = op->dst;
    FE_REQUIRE(x->ndim == 4 && fe_is_f32(x), x, "input", "f32 [B, Cin, H, W]");
    FE_REQUIRE(w && w->ndim == 4 && fe_is_float_weight(w) && w->shape[1] == x->shape[1] &&
                   w->shape[2] == 3 && w->shape[3] == 3,
               w ? w : x, "weight", "[Cout, Cin, 3, 3]");
    FE_REQUIRE(!b || (fe_is_f32(b) && fe_tensor_nelements(b) == w->shape[0]), b, "bias",
               "f32 [Cout]");
    FE_REQUIRE(y->ndim == 4 && fe_is_f32(y) && y->shape[0] == x->shape[0] &&
                   y->shape[1] == w->shape[0] && y->shape[2] == x->shape[2] &&
                   y->shape[3] == x->shape[3],
               y, "output", "f32 [B, Cout, H, W]");
    return FE_OK;
}

static fe_status fe_check_maxpool(const FeOpDesc *op) {
    const FeTensor *x = op->src[0], *y = op->dst;
    int ph = op->iparams[0], pw = op->iparams[1];
    if (ph < 1 || pw < 1)
        return fe_set_error(FE_ERR_INVALID_ARGUMENT, "fe_maxpool: pool %dx%d", ph, pw);
    FE_REQUIRE(x->ndim == 4 && fe_is_f32(x) && x->shape[2] >= ph && x->shape[3] >= pw, x,
               "input", "f32 [B, C, H, W] at least one pool high and wide");
    FE_REQUIRE(y->ndim == 4 && fe_is_f32(y) && y->shape[0] == x->shape[0] &&
                   y->shape[1] == x->shape[1] && y->shape[2] == x->shape[2] / ph &&
                   y->shape[3] == x->shape[3] / pw,
               y, "output", "f32 [B, C, H/ph, W/pw]");
    return FE_OK;
}

static fe_status fe_check_nchw_to_nlc(const FeOpDesc *op) {
    const FeTensor *x = op->src[0], *y = op->dst;
    FE_REQUIRE(x->ndim == 4 && fe_is_f32(x), x, "input", "f32 [B, C, H, W]");
    FE_REQUIRE(y->ndim == 3 && fe_is_f32(y) && y->shape[0] == x->shape[0] &&
                   y->shape[1] == x->shape[2] * x->shape[3] && y->shape[2] == x->shape[1],
               y, "output", "f32 [B, H*W, C]");
    return FE_OK;
}

static fe_status fe_check_add(const FeOpDesc *op) {
    const FeTensor *a = op->src[0], *b = op->src[1], *y = op->dst;
    FE_REQUIRE(fe_is_f32(a), a, "a", "f32");
    FE_REQUIRE(b && fe_is_f32(b) && fe_tensor_nelements(b) > 0 &&
                   fe_tensor_nelements(a) % fe_tensor_nelements(b) == 0,
               b ? b : a, "b", "f32 whose size divides a's");
    FE_REQUIRE(fe_is_f32(y) && fe_tensor_nelements(y) == fe_tensor_nelements(a), y, "output",
               "f32 the size of a");
    return FE_OK;
}

static fe_status fe_check_layernorm(const FeOpDesc *op) {
    const FeTensor *x = op->src[0], *g = op->src[1], *bt = op->src[2], *y = op->dst;
    FE_REQUIRE(x->ndim >= 1 && fe_is_f32(x) && fe_last_dim(x) > 0, x, "input", "f32 [.., D]");
    int64_t d = fe_last_dim(x);
    FE_REQUIRE(g && fe_is_f32(g) && fe_tensor_nelements(g) == d, g ? g : x, "gamma", "f32 [D]");
    FE_REQUIRE(bt && fe_is_f32(bt) && fe_tensor_nelements(bt) == d, bt ? bt : x, "beta",
               "f32 [D]");
    FE_REQUIRE(fe_is_f32(y) && fe_tensor_nelements(y) == fe_tensor_nelements(x), y, "output",
               "f32 like the input");
    if (!(op->fparams[0] >= 0.0f))
        return fe_set_error(FE_ERR_INVALID_ARGUMENT, "fe_layernorm: eps %g", op->fparams[0]);
    return FE_OK;
}

static fe_status fe_check_same_size(const FeOpDesc *op) {
    const FeTensor *x = op->src[0], *y = op->dst;
    FE_REQUIRE(fe_is_f32(x) && x->ndim >= 1 && fe_last_dim(x) > 0, x, "input", "f32");
    FE_REQUIRE(fe_is_f32(y) && fe_tensor_nelements(y) == fe_tensor_nelements(x), y, "output",
               "f32 like the input");
    return FE_OK;
}

static fe_status fe_check_attention(const FeOpDesc *op) {
    const FeTensor *q = op->src[0], *k = op->src[1], *v = op->src[2], *y = op->dst;
    int heads = op->iparams[0], kv_len = op->iparams[1], q_pos0 = op->iparams[3];
    FE_REQUIRE(q->ndim == 3 && fe_is_f32(q), q, "q", "f32 [B, Tq, D]");
    FE_REQUIRE(k && k->ndim == 3 && fe_is_f32(k) && k->shape[0] == q->shape[0] &&
                   k->shape[2] == q->shape[2],
               k ? k : q, "k", "f32 [B, Tk, D]");
    FE_REQUIRE(v && v->ndim == 3 && fe_is_f32(v) && v->shape[0] == k->shape[0] &&
                   v->shape[1] == k->shape[1] && v->shape[2] == k->shape[2],
               v ? v : q, "v", "f32 shaped like k");
    FE_REQUIRE(y->ndim == 3 && fe_is_f32(y) && y->shape[0] == q->shape[0] &&
                   y->shape[1] == q->shape[1] && y->shape[2] == q->shape[2],
               y, "output", "f32 shaped like q");
    if (heads < 1 || q->shape[2] % heads != 0)
        return fe_set_error(FE_ERR_INVALID_ARGUMENT, "fe_attention: %d heads do not divide D=%lld",
                            heads, (long long)q->shape[2]);
    if (kv_len < 1 || kv_len > k->shape[1])
        return fe_set_error(FE_ERR_INVALID_ARGUMENT,
                            "fe_attention: kv_len %d outside [1, %lld]", kv_len,
                            (long long)k->shape[1]);
    if (q_pos0 < 0)
        return fe_set_error(FE_ERR_INVALID_ARGUMENT, "fe_attention: q_pos0 %d", q_pos0);
    return FE_OK;
}

static fe_status fe_check_attention_rows(const FeOpDesc *op) {
    const FeTensor *q = op->src[0], *k = op->src[1], *v = op->src[2], *spans = op->src[3];
    const FeTensor *y = op->dst;
    int heads = op->iparams[0], max_len = op->iparams[1];
    FE_REQUIRE(q->ndim == 3 && fe_is_f32(q), q, "q", "f32 [R, Tq, D]");
    FE_REQUIRE(k && k->ndim == 2 && fe_is_f32(k) && k->shape[1] == q->shape[2], k ? k : q, "k",
               "f32 [N, D]");
    FE_REQUIRE(v && v->ndim == 2 && fe_is_f32(v) && v->shape[0] == k->shape[0] &&
                   v->shape[1] == k->shape[1],
               v ? v : q, "v", "f32 shaped like k");
    FE_REQUIRE(spans && spans->dtype == FE_DTYPE_I32 &&
                   fe_tensor_nelements(spans) == 2 * q->shape[0],
               spans ? spans : q, "spans", "i32 [R, 2]");
    FE_REQUIRE(y->ndim == 3 && fe_is_f32(y) && y->shape[0] == q->shape[0] &&
                   y->shape[1] == q->shape[1] && y->shape[2] == q->shape[2],
               y, "output", "f32 shaped like q");
    if (heads < 1 || q->shape[2] % heads != 0)
        return fe_set_error(FE_ERR_INVALID_ARGUMENT,
                            "fe_attention_rows: %d heads do not divide D=%lld", heads,
                            (long long)q->shape[2]);
    if (max_len < 1 || max_len > k->shape[0])
        return fe_set_error(FE_ERR_INVALID_ARGUMENT,
                            "fe_attention_rows: max_len %d outside [1, %lld]", max_len,
                            (long long)k->shape[0]);
    if (q->shape[0] > INT32_MAX / 2 || k->shape[0] > INT32_MAX)
        return fe_set_error(FE_ERR_UNSUPPORTED, "fe_attention_rows: sizes beyond 2^31");
    return FE_OK;
}

static fe_status fe_check_embed(const FeOpDesc *op) {
    const FeTensor *table = op->src[0], *pos = op->src[1], *ids = op->src[2], *y = op->dst;
    FE_REQUIRE(table->ndim == 2 && fe_is_float_weight(table), table, "table", "[V, D]");
    int64_t d = table->shape[1];
    FE_REQUIRE(pos && pos->ndim == 2 && fe_is_float_weight(pos) && pos->shape[1] == d,
               pos ? pos : table, "positions", "[P, D]");
    FE_REQUIRE(ids && (ids->dtype == FE_DTYPE_I32 || ids->dtype == FE_DTYPE_I64), ids ? ids : table,
               "ids", "i32 or i64 [B]");
    FE_REQUIRE(fe_is_f32(y) && fe_last_dim(y) == d &&
                   fe_tensor_nelements(y) == fe_tensor_nelements(ids) * d,
               y, "output", "f32 [B, D]");
    int position = op->iparams[0];
    if (position < 0 || position >= pos->shape[0])
        return fe_set_error(FE_ERR_INVALID_ARGUMENT, "fe_embed: position %d outside [0, %lld)",
                            position, (long long)pos->shape[0]);
    return FE_OK;
}

static fe_status fe_check_kv_write(const FeOpDesc *op) {
    const FeTensor *cache = op->dst, *rows = op->src[0];
    FE_REQUIRE(cache->ndim == 3 && fe_is_f32(cache), cache, "cache", "f32 [B, Tmax, D]");
    FE_REQUIRE(fe_is_f32(rows) && fe_last_dim(rows) == cache->shape[2] &&
                   fe_tensor_nelements(rows) == cache->shape[0] * cache->shape[2],
               rows, "rows", "f32 [B, 1, D]");
    int pos = op->iparams[0];
    if (pos < 0 || pos >= cache->shape[1])
        return fe_set_error(FE_ERR_INVALID_ARGUMENT, "fe_kv_write: position %d outside [0, %lld)",
                            pos, (long long)cache->shape[1]);
    return FE_OK;
}

static fe_status fe_check_topk(const FeOpDesc *op) {
    const FeTensor *values = op->dst, *x = op->src[0], *idx = op->src[1];
    int k = op->iparams[0];
    FE_REQUIRE(x->ndim >= 1 && fe_is_f32(x) && fe_last_dim(x) > 0, x, "input", "f32 [B, N]");
    int64_t n = fe_last_dim(x), rows = fe_tensor_nelements(x) / n;
    if (k < 1 || k > n)
        return fe_set_error(FE_ERR_INVALID_ARGUMENT, "fe_topk: k=%d outside [1, %lld]", k,
                            (long long)n);
    FE_REQUIRE(fe_is_f32(values) && fe_tensor_nelements(values) == rows * k, values, "values",
               "f32 [B, k]");
    FE_REQUIRE(idx && idx->dtype == FE_DTYPE_I32 && fe_tensor_nelements(idx) == rows * k,
               idx ? idx : values, "indices", "i32 [B, k]");
    return FE_OK;
}

/* Ops whose kernels read inputs after writing outputs must not alias. */
static fe_status fe_check_no_alias(const FeOpDesc *op, int n) {
    for (int i = 0; i < n; i++) {
        const FeTensor *s = op->src[i];
        if (!s || s->buffer != op->dst->buffer)
            continue;
        size_t s0 = s->offset, s1 = s0 + fe_tensor_nbytes(s);
        size_t d0 = op->dst->offset, d1 = d0 + fe_tensor_nbytes(op->dst);
        if (s0 < d1 && d0 < s1)
            return fe_set_error(FE_ERR_INVALID_ARGUMENT, "%s: output '%s' overlaps input '%s'",
                                fe_op_name(op->op), op->dst->name, s->name);
    }
    return FE_OK;
}

/* The op as described has no kernel on the device. MATMUL and CONV3X3 are
 * refused for their weights' dtype (bf16 matrices on a CPU without
 * AVX512_BF16); any other op is named with its operands' dtypes, since its
 * src[1] is no weight (ATTENTION_ROWS' keys on a CUDA module older than the
 * op, TOPK's indices). */
static fe_status fe_unsupported(const FeOpDesc *op, const FeDevice *dev) {
    const char *name = fe_op_name(op->op);
    if (op->op == FE_OP_MATMUL || op->op == FE_OP_CONV3X3) {
        const FeTensor *w = op->src[1] ? op->src[1] : op->src[0];
        return fe_set_error(FE_ERR_UNSUPPORTED, "%s: device %s cannot run it with %s weights",
                            name, dev->id, fe_dtype_name(w->dtype));
    }
    char inputs[96] = "";
    size_t used = 0;
    for (int i = 0; i < 6 && used < sizeof inputs; i++)
        if (op->src[i])
            used += (size_t)snprintf(inputs + used, sizeof inputs - used, "%s%s",
                                     used ? ", " : "", fe_dtype_name(op->src[i]->dtype));
    return fe_set_error(FE_ERR_UNSUPPORTED,
                        "%s: device %s has no kernel for it (%s output; %s inputs)", name, dev->id,
                        fe_dtype_name(op->dst->dtype), inputs);
}

fe_status fe_op_compute(const FeOpDesc *op) {
    if (!op || (unsigned)op->op >= FE_OP_COUNT)
        return fe_set_error(FE_ERR_INVALID_ARGUMENT, "fe_op_compute: no op or unknown op");
    const char *name = fe_op_name(op->op);
    if (!op->dst || !op->src[0])
        return fe_set_error(FE_ERR_INVALID_ARGUMENT, "%s: NULL output or input tensor", name);
    const FeTensor *all[7] = {op->dst};
    for (int i = 0; i < 6; i++)
        all[i + 1] = op->src[i];
    FE_TRY(fe_check_same_device(name, 7, all));
    for (int i = 0; i < 7; i++)
        if (all[i] && (all[i]->ndim < 0 || all[i]->ndim > FE_MAX_DIMS ||
                       (!fe_tensor_nbytes(all[i]) && fe_tensor_nelements(all[i]) != 0)))
            return fe_set_error(FE_ERR_INVALID_ARGUMENT, "%s: tensor '%s' has a bad shape",
                                name, all[i]->name);

    switch (op->op) {
    case FE_OP_MATMUL:
        FE_TRY(fe_check_matmul(op));
        FE_TRY(fe_check_no_alias(op, 3));
        break;
    case FE_OP_CONV3X3:
        FE_TRY(fe_check_conv(op));
        FE_TRY(fe_check_no_alias(op, 3));
        break;
    case FE_OP_MAXPOOL: FE_TRY(fe_check_maxpool(op)); FE_TRY(fe_check_no_alias(op, 1)); break;
    case FE_OP_NCHW_TO_NLC:
        FE_TRY(fe_check_nchw_to_nlc(op));
        FE_TRY(fe_check_no_alias(op, 1));
        break;
    case FE_OP_ADD: FE_TRY(fe_check_add(op)); break;
    case FE_OP_LAYERNORM: FE_TRY(fe_check_layernorm(op)); break;
    case FE_OP_GELU:
    case FE_OP_LOG_SOFTMAX: FE_TRY(fe_check_same_size(op)); break;
    case FE_OP_ATTENTION:
        FE_TRY(fe_check_attention(op));
        FE_TRY(fe_check_no_alias(op, 3));
        break;
    case FE_OP_EMBED: FE_TRY(fe_check_embed(op)); break;
    case FE_OP_KV_WRITE: FE_TRY(fe_check_kv_write(op)); break;
    case FE_OP_TOPK: FE_TRY(fe_check_topk(op)); FE_TRY(fe_check_no_alias(op, 2)); break;
    case FE_OP_ATTENTION_ROWS:
        FE_TRY(fe_check_attention_rows(op));
        FE_TRY(fe_check_no_alias(op, 4));
        break;
    case FE_OP_COUNT:
    default: return fe_set_error(FE_ERR_INVALID_ARGUMENT, "unknown op %d", (int)op->op);
    }

    FeDevice *dev = fe_tensor_device(op->dst);
    if (dev->backend->supports_op && !dev->backend->supports_op(dev, op))
        return fe_unsupported(op, dev);
    return dev->backend->compute(dev, op);
}

bool fe_op_supported(const FeOpDesc *op) {
    if (!op || !op->dst || !op->dst->buffer || (unsigned)op->op >= FE_OP_COUNT)
        return false;
    FeDevice *dev = fe_tensor_device(op->dst);
    return !dev->backend->supports_op || dev->backend->supports_op(dev, op);
}

fe_status fe_matmul(FeTensor *y, const FeTensor *x, const FeTensor *w, const FeTensor *b,
                    bool gelu) {
    FeOpDesc op = {.op = FE_OP_MATMUL, .dst = y, .src = {x, w, b}, .iparams = {gelu}};
    return fe_op_compute(&op);
}

fe_status fe_conv3x3(FeTensor *y, const FeTensor *x, const FeTensor *w, const FeTensor *b,
                     bool relu) {
    FeOpDesc op = {.op = FE_OP_CONV3X3, .dst = y, .src = {x, w, b}, .iparams = {relu}};
    return fe_op_compute(&op);
}

fe_status fe_maxpool(FeTensor *y, const FeTensor *x, int ph, int pw) {
    FeOpDesc op = {.op = FE_OP_MAXPOOL, .dst = y, .src = {x}, .iparams = {ph, pw}};
    return fe_op_compute(&op);
}

fe_status fe_nchw_to_nlc(FeTensor *y, const FeTensor *x) {
    FeOpDesc op = {.op = FE_OP_NCHW_TO_NLC, .dst = y, .src = {x}};
    return fe_op_compute(&op);
}

fe_status fe_add(FeTensor *y, const FeTensor *a, const FeTensor *b) {
    FeOpDesc op = {.op = FE_OP_ADD, .dst = y, .src = {a, b}};
    return fe_op_compute(&op);
}

fe_status fe_layernorm(FeTensor *y, const FeTensor *x, const FeTensor *gamma,
                       const FeTensor *beta, float eps) {
    FeOpDesc op = {.op = FE_OP_LAYERNORM, .dst = y, .src = {x, gamma, beta}, .fparams = {eps}};
    return fe_op_compute(&op);
}

fe_status fe_gelu(FeTensor *y, const FeTensor *x) {
    FeOpDesc op = {.op = FE_OP_GELU, .dst = y, .src = {x}};
    return fe_op_compute(&op);
}

fe_status fe_attention(FeTensor *y, const FeTensor *q, const FeTensor *k, const FeTensor *v,
                       int n_heads, int kv_len, bool causal, int q_pos0) {
    FeOpDesc op = {.op = FE_OP_ATTENTION,
                   .dst = y,
                   .src = {q, k, v},
                   .iparams = {n_heads, kv_len, causal, q_pos0}};
    return fe_op_compute(&op);
}

fe_status fe_embed(FeTensor *y, const FeTensor *table, const FeTensor *pos, const FeTensor *ids,
                   int position) {
    FeOpDesc op = {.op = FE_OP_EMBED, .dst = y, .src = {table, pos, ids}, .iparams = {position}};
    return fe_op_compute(&op);
}

fe_status fe_kv_write(FeTensor *cache, const FeTensor *rows, int pos) {
    FeOpDesc op = {.op = FE_OP_KV_WRITE, .dst = cache, .src = {rows}, .iparams = {pos}};
    return fe_op_compute(&op);
}

fe_status fe_log_softmax(FeTensor *y, const FeTensor *x) {
    FeOpDesc op = {.op = FE_OP_LOG_SOFTMAX, .dst = y, .src = {x}};
    return fe_op_compute(&op);
}

fe_status fe_topk(FeTensor *values, FeTensor *indices, const FeTensor *x, int k) {
    FeOpDesc op = {.op = FE_OP_TOPK, .dst = values, .src = {x, indices}, .iparams = {k}};
    return fe_op_compute(&op);
}

fe_status fe_attention_rows(FeTensor *y, const FeTensor *q, const FeTensor *k, const FeTensor *v,
                            const FeTensor *spans, int n_heads, int max_len) {
    FeOpDesc op = {.op = FE_OP_ATTENTION_ROWS,
                   .dst = y,
                   .src = {q, k, v, spans},
                   .iparams = {n_heads, max_len}};
    return fe_op_compute(&op);
}
