/* fe-cuda-backend.cu - FeOpDesc -> the fe_cuda_* entry of each op family.
 *
 * fe-ops.c has already checked devices and shapes (see the FeOpDesc
 * conventions in fe-internal.h); this file reads the descriptor, checks what
 * only this backend cares about (dtypes it has kernels for, bf16 needing
 * compute capability 8.0) and enqueues the work on the device's stream. */
#include "fe-cuda-common.h"

static const char *op_name(fe_op op) {
    if (fe_cuda_host && fe_cuda_host->op_name)
        return fe_cuda_host->op_name(op);
    return "op";
}

static inline const void *tdata(const FeTensor *t) {
    return t ? (const void *)fe_tensor_data(t) : NULL;
}
static inline float *fdata(const FeTensor *t) {
    return (float *)fe_tensor_data(t);
}
static inline int64_t last_dim(const FeTensor *t) {
    return t->ndim > 0 ? t->shape[t->ndim - 1] : 1;
}

static bool is_f32(const FeTensor *t) {
    return t && t->dtype == FE_DTYPE_F32;
}
/* A weight operand: absent (optional), or a float dtype this device multiplies. */
static bool weight_ok(const FeCudaDevice *dev, const FeTensor *t, bool gemm) {
    if (!t)
        return true;
    if (!fe_cuda_is_float_dtype(t->dtype))
        return false;
    if (gemm && t->dtype == FE_DTYPE_BF16 && dev->cc_major < 8)
        return false;
    return true;
}

extern "C" bool fe_cuda_supports_op(FeDevice *base, const FeOpDesc *op) {
    const FeCudaDevice *dev = fe_cuda_dev(base);
    const FeTensor *const *s = op->src;
    switch (op->op) {
    case FE_OP_MATMUL:
    case FE_OP_CONV3X3:
        return is_f32(op->dst) && is_f32(s[0]) && s[1] && weight_ok(dev, s[1], true) &&
               weight_ok(dev, s[2], false);
    case FE_OP_MAXPOOL:
    case FE_OP_NCHW_TO_NLC:
    case FE_OP_GELU:
    case FE_OP_LOG_SOFTMAX:
        return is_f32(op->dst) && is_f32(s[0]);
    case FE_OP_ADD:
        return is_f32(op->dst) && is_f32(s[0]) && s[1] && weight_ok(dev, s[1], false);
    case FE_OP_LAYERNORM:
        return is_f32(op->dst) && is_f32(s[0]) && s[1] && s[2] && weight_ok(dev, s[1], false) &&
               s[1]->dtype == s[2]->dtype;
    case FE_OP_ATTENTION:
        return is_f32(op->dst) && is_f32(s[0]) && is_f32(s[1]) && is_f32(s[2]);
    case FE_OP_ATTENTION_ROWS:
        return is_f32(op->dst) && is_f32(s[0]) && is_f32(s[1]) && is_f32(s[2]) && s[3] &&
               s[3]->dtype == FE_DTYPE_I32;
    case FE_OP_EMBED:
        return is_f32(op->dst) && s[0] && s[1] && s[2] && weight_ok(dev, s[0], false) &&
               s[0]->dtype == s[1]->dtype &&
               (s[2]->dtype == FE_DTYPE_I32 || s[2]->dtype == FE_DTYPE_I64);
    case FE_OP_KV_WRITE:
        return is_f32(op->dst) && is_f32(s[0]);
    case FE_OP_TOPK:
        return is_f32(op->dst) && is_f32(s[0]) && s[1] && s[1]->dtype == FE_DTYPE_I32;
    case FE_OP_COUNT:
    default:
        return false;
    }
}

static fe_status compute_attention(FeCudaDevice *dev, const FeOpDesc *op) {
    const FeTensor *q = op->src[0], *k = op->src[1], *v = op->src[2];
    const int D = (int)last_dim(q);
    const int Tq = q->ndim >= 2 ? (int)q->shape[q->ndim - 2] : 1;
    const int Tk_max = k->ndim >= 2 ? (int)k->shape[k->ndim - 2] : 1;
    const int64_t B = fe_tensor_nelements(q) / ((int64_t)Tq * D);
    if (fe_tensor_nelements(k) != B * Tk_max * D || fe_tensor_nelements(v) != B * Tk_max * D)
        return fe_cuda_fail(FE_ERR_INVALID_ARGUMENT, "%s: q, k and v differ in batch or width",
                            op_name(op->op));
    return fe_cuda_attention(dev, fdata(op->dst), fdata(q), fdata(k), fdata(v), (int)B, Tq,
                             Tk_max, D, op->iparams[0], op->iparams[1], op->iparams[2] != 0,
                             op->iparams[3]);
}

extern "C" fe_status fe_cuda_compute(FeDevice *base, const FeOpDesc *op) {
    FeCudaDevice *dev = fe_cuda_dev(base);
    const FeTensor *const *s = op->src;
    FeTensor *dst = op->dst;
    if (!fe_cuda_supports_op(base, op))
        return fe_cuda_fail(FE_ERR_UNSUPPORTED, "%s: %s has no kernel for these dtypes%s",
                            base->id, op_name(op->op),
                            dev->cc_major < 8 ? " (bf16 needs compute capability 8.0)" : "");
    switch (op->op) {
    case FE_OP_MATMUL: {
        const FeTensor *x = s[0], *w = s[1], *b = s[2];
        const int N = (int)w->shape[0], K = (int)w->shape[1];
        const int64_t M = fe_tensor_nelements(x) / K;
        return fe_cuda_gemm(dev, fdata(dst), fdata(x), tdata(w), w->dtype, tdata(b),
                            b ? b->dtype : FE_DTYPE_F32, M, N, K, op->iparams[0] != 0);
    }
    case FE_OP_CONV3X3: {
        const FeTensor *x = s[0], *w = s[1], *b = s[2];
        return fe_cuda_conv3x3(dev, fdata(dst), fdata(x), tdata(w), w->dtype, tdata(b),
                               b ? b->dtype : FE_DTYPE_F32, (int)x->shape[0], (int)x->shape[1],
                               (int)x->shape[2], (int)x->shape[3], (int)w->shape[0],
                               op->iparams[0] != 0);
    }
    case FE_OP_MAXPOOL: {
        const FeTensor *x = s[0];
        return fe_cuda_maxpool(dev, fdata(dst), fdata(x), (int)x->shape[0], (int)x->shape[1],
                               (int)x->shape[2], (int)x->shape[3], op->iparams[0],
                               op->iparams[1]);
    }
    case FE_OP_NCHW_TO_NLC: {
        const FeTensor *x = s[0];
        return fe_cuda_nchw_to_nlc(dev, fdata(dst), fdata(x), (int)x->shape[0],
                                   (int)x->shape[1], (int)(x->shape[2] * x->shape[3]));
    }
    case FE_OP_ADD:
        return fe_cuda_add(dev, fdata(dst), fdata(s[0]), tdata(s[1]), s[1]->dtype,
                           fe_tensor_nelements(dst), fe_tensor_nelements(s[1]));
    case FE_OP_LAYERNORM: {
        const int64_t D = last_dim(s[0]);
        return fe_cuda_layernorm(dev, fdata(dst), fdata(s[0]), tdata(s[1]), tdata(s[2]),
                                 s[1]->dtype, fe_tensor_nelements(s[0]) / D, (int)D,
                                 op->fparams[0]);
    }
    case FE_OP_GELU:
        return fe_cuda_gelu(dev, fdata(dst), fdata(s[0]), fe_tensor_nelements(s[0]));
    case FE_OP_ATTENTION:
        return compute_attention(dev, op);
    case FE_OP_ATTENTION_ROWS: {
        const FeTensor *q = s[0], *k = s[1];
        return fe_cuda_attention_rows(dev, fdata(dst), fdata(q), fdata(k), fdata(s[2]),
                                      (const int32_t *)fe_tensor_data(s[3]), (int)q->shape[0],
                                      (int)q->shape[1], (int)k->shape[0], (int)q->shape[2],
                                      op->iparams[0], op->iparams[1]);
    }
    case FE_OP_EMBED: {
        const FeTensor *table = s[0], *pos = s[1], *ids = s[2];
        const int position = op->iparams[0];
        if (position < 0 || position >= pos->shape[0])
            return fe_cuda_fail(FE_ERR_INVALID_ARGUMENT,
                                "%s: position %d outside the %lld learned positions",
                                op_name(op->op), position, (long long)pos->shape[0]);
        return fe_cuda_embed(dev, fdata(dst), tdata(table), table->dtype, tdata(pos),
                             pos->dtype, tdata(ids), ids->dtype == FE_DTYPE_I64,
                             (int)fe_tensor_nelements(ids), (int)table->shape[1],
                             (int)table->shape[0], position);
    }
    case FE_OP_KV_WRITE: {
        return fe_cuda_kv_write(dev, fdata(dst), fdata(s[0]), (int)dst->shape[0],
                                (int)dst->shape[1], (int)dst->shape[2], op->iparams[0]);
    }
    case FE_OP_LOG_SOFTMAX: {
        const int64_t N = last_dim(s[0]);
        return fe_cuda_softmax(dev, fdata(dst), fdata(s[0]), fe_tensor_nelements(s[0]) / N,
                               (int)N, true);
    }
    case FE_OP_TOPK: {
        const FeTensor *x = s[0];
        const int64_t N = last_dim(x);
        return fe_cuda_topk(dev, fdata(dst), (int32_t *)fe_tensor_data(s[1]), fdata(x),
                            (int)(fe_tensor_nelements(x) / N), (int)N, op->iparams[0]);
    }
    case FE_OP_COUNT:
    default:
        return fe_cuda_fail(FE_ERR_UNSUPPORTED, "%s: unknown op %d", base->id, (int)op->op);
    }
}
