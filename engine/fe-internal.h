/* fe-internal.h - shared by the engine's own files; not installed.
 *
 * Three layers, each in its own files:
 *   weights  (fe-json.c, fe-safetensors.c, fe-pickle.c, fe-zip.c, fe-config.c)
 *            a model file -> FeWeightFile: named host tensors + FeModelConfig + vocab
 *   runtime  (fe-tensor.c, fe-backend.c, fe-cpu.c, fe-cpuid.c, fe-blas.c, fe-ops.c)
 *            devices, buffers, tensors, the backend table and the ops front-end
 *   model    (fe-model.c, fe-decode.c, fe-preprocess.c, fe-tokens.c, fe-api.c)
 *            formulate-v1 built from weights with the ops, decoding, the public API
 */
#ifndef FE_INTERNAL_H
#define FE_INTERNAL_H

#include "fe.h"

#include <stdarg.h>
#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>

/* ------------------------------------------------------------------------ */
/* Errors: every failing internal function sets the thread's message and
 * returns the status, so callers just propagate:  FE_TRY(fe_x(...));        */

fe_status fe_set_error(fe_status status, const char *fmt, ...)
    __attribute__((format(printf, 2, 3)));
/* Prefix the current message: "loading x.safetensors: <old message>". */
fe_status fe_prefix_error(fe_status status, const char *fmt, ...)
    __attribute__((format(printf, 2, 3)));
void fe_clear_error(void);
void fe_log(fe_log_level level, const char *fmt, ...) __attribute__((format(printf, 2, 3)));

#define FE_TRY(expr)                                                           \
    do {                                                                       \
        fe_status fe__st = (expr);                                             \
        if (fe__st != FE_OK)                                                   \
            return fe__st;                                                     \
    } while (0)

/* ------------------------------------------------------------------------ */
/* Data types                                                               */

typedef enum {
    FE_DTYPE_F32 = 0,
    FE_DTYPE_F16,
    FE_DTYPE_BF16,
    FE_DTYPE_F64,
    FE_DTYPE_I64,
    FE_DTYPE_I32,
    FE_DTYPE_I16,
    FE_DTYPE_I8,
    FE_DTYPE_U8,
    FE_DTYPE_BOOL,
    FE_DTYPE_COUNT
} fe_dtype;

size_t fe_dtype_size(fe_dtype dtype);
const char *fe_dtype_name(fe_dtype dtype);      /* "f32", "f16", ...           */
float fe_f16_to_f32(uint16_t h);
uint16_t fe_f32_to_f16(float f);
float fe_bf16_to_f32(uint16_t b);
uint16_t fe_f32_to_bf16(float f);               /* round to nearest even      */

/* ------------------------------------------------------------------------ */
/* Model configuration (JSON "formulate.config"; see docs/model.md)          */

#define FE_MAX_CNN_BLOCKS 16

typedef struct {
    char arch[32];                 /* "formulate-v1"                           */
    int format_version;            /* 1                                        */
    int in_channels;               /* 1                                        */
    int n_cnn;                     /* number of conv blocks                    */
    int cnn_channels[FE_MAX_CNN_BLOCKS];
    int cnn_pool[FE_MAX_CNN_BLOCKS][2];   /* (height, width) pool after block i */
    int d_model, n_heads, d_ff;
    int enc_layers, dec_layers;
    int vocab_size, max_tokens;
    bool tie_embeddings;
    int em_px;
    float cc_median_em;            /* median connected-component height / em   */
    int max_height, max_width;
    float ln_eps, bn_eps;
    int pad_id, bos_id, eos_id, unk_id;
    /* derived */
    int height_stride, width_stride;
} FeModelConfig;

/* Parses and validates the config JSON (every key known and in range, pools
 * multiply to a height stride of 16 and a width stride of 8 or 16,
 * d_model % n_heads == 0, ...). */
fe_status fe_config_parse(const char *json, size_t len, FeModelConfig *out);

/* ------------------------------------------------------------------------ */
/* Weight files                                                             */

typedef struct {
    char *name;
    fe_dtype dtype;
    int ndim;
    int64_t shape[8];
    const void *data;              /* into the mapping, or into owned memory   */
    size_t nbytes;
} FeWeightEntry;

typedef struct {
    char format[16];               /* "safetensors" or "pytorch"               */
    FeWeightEntry *entries;
    size_t n_entries;
    FeModelConfig config;
    char **vocab;                  /* vocab_size NUL-terminated strings        */
    int n_vocab;
    /* __metadata__ of safetensors (or the .pt sidecar's keys), for reporting */
    char **meta_keys, **meta_values;
    int n_meta;
    /* private: mapping and owned buffers */
    void *map_base;
    size_t map_len;
    void **owned;
    size_t n_owned;
} FeWeightFile;

/* Opens a .safetensors or .pt (by content, not extension), maps it, checks
 * every header field, parses config + vocab and checks that every tensor the
 * config needs is present with the right shape (fe_model_expected_tensors).
 * config_path: the .pt sidecar (NULL = default name). */
fe_status fe_weights_open(const char *path, const char *config_path, FeWeightFile **out);
void fe_weights_close(FeWeightFile *wf);
const FeWeightEntry *fe_weights_find(const FeWeightFile *wf, const char *name);
/* Converts any float entry to a newly malloc'd f32 array (caller frees). */
fe_status fe_weights_to_f32(const FeWeightEntry *e, float **out);

/* Lower-level parsers, fuzzed on their own. They take a byte span (the
 * mapping) and fill wf's entries / metadata; data pointers point into it. */
fe_status fe_safetensors_parse(const uint8_t *data, size_t len, FeWeightFile *wf);
fe_status fe_pytorch_parse(const uint8_t *data, size_t len, FeWeightFile *wf);

/* The tensors formulate-v1 needs for a config: name + shape. Optional ones
 * (conv bias, num_batches_tracked, untied output weight) are marked. */
typedef struct {
    char name[64];
    int ndim;
    int64_t shape[4];
    bool optional;
} FeExpectedTensor;
/* Returns a malloc'd array; *n receives its length. */
FeExpectedTensor *fe_model_expected_tensors(const FeModelConfig *cfg, size_t *n);

/* ------------------------------------------------------------------------ */
/* Devices, buffers, tensors                                                */

typedef struct FeBackend FeBackend;
typedef struct FeDevice FeDevice;
typedef struct FeBuffer FeBuffer;
typedef struct FeTensor FeTensor;

struct FeDevice {
    const FeBackend *backend;
    int index;
    char id[32];                   /* "cpu", "cuda:0"                          */
    void *backend_data;
};

struct FeBuffer {
    FeDevice *device;
    void *data;                    /* host pointer (cpu) or device pointer     */
    size_t size;
    size_t used;                   /* arena bump offset                        */
    bool owns_data;
};

#define FE_MAX_DIMS 4
struct FeTensor {
    fe_dtype dtype;
    int ndim;
    int64_t shape[FE_MAX_DIMS];    /* outermost first, like PyTorch            */
    FeBuffer *buffer;
    size_t offset;                 /* bytes into buffer->data; contiguous     */
    char name[64];
};

static inline int64_t fe_tensor_nelements(const FeTensor *t) {
    int64_t n = 1;
    for (int i = 0; i < t->ndim; i++)
        n *= t->shape[i];
    return n;
}
static inline void *fe_tensor_data(const FeTensor *t) {
    return (char *)t->buffer->data + t->offset;
}
static inline FeDevice *fe_tensor_device(const FeTensor *t) {
    return t->buffer ? t->buffer->device : NULL;
}

FeDevice *fe_cpu_device(void);

fe_status fe_buffer_new(FeDevice *device, size_t size, FeBuffer **out);
void fe_buffer_free(FeBuffer *buffer);
/* Carves a contiguous tensor out of an arena buffer (64-byte aligned). */
fe_status fe_buffer_tensor(FeBuffer *arena, fe_dtype dtype, int ndim, const int64_t *shape,
                           const char *name, FeTensor *out);
void fe_buffer_reset(FeBuffer *arena);   /* frees every tensor carved from it  */

fe_status fe_tensor_upload(FeTensor *dst, const void *host, size_t nbytes);
fe_status fe_tensor_download(const FeTensor *src, void *host, size_t nbytes);

/* "device mismatch: cpu vs cuda:0 in fe_matmul" when the non-NULL tensors do
 * not all live on one device. */
fe_status fe_check_same_device(const char *op, int n, const FeTensor *const *tensors);

/* ------------------------------------------------------------------------ */
/* Ops: the front-end checks devices, dtypes and shapes, then dispatches to
 * the backend of the operands' device. Activations are f32; weights may be
 * f32 (CPU) or the device precision (GPU).                                */

typedef enum {
    FE_OP_MATMUL = 0,       /* y[M,N] = x[M,K] * w[N,K]^T + b[N] (+ gelu)      */
    FE_OP_CONV3X3,          /* NCHW, pad 1, stride 1, + bias, + relu           */
    FE_OP_MAXPOOL,          /* kernel = stride = (ph, pw)                      */
    FE_OP_NCHW_TO_NLC,      /* [B,C,H,W] -> [B,H*W,C]                          */
    FE_OP_ADD,              /* y = a + b (b broadcast over leading dims)       */
    FE_OP_LAYERNORM,        /* over the last dim                               */
    FE_OP_GELU,             /* exact erf form                                  */
    FE_OP_ATTENTION,        /* multi-head scaled dot-product                   */
    FE_OP_EMBED,            /* y[B,D] = table[ids[b]] + pos[positions[b]]      */
    FE_OP_KV_WRITE,         /* copy rows into the KV cache at a position       */
    FE_OP_LOG_SOFTMAX,      /* over the last dim                               */
    FE_OP_TOPK,             /* k best (value, index) per row                   */
    FE_OP_COUNT
} fe_op;

const char *fe_op_name(fe_op op);

typedef struct {
    fe_op op;
    FeTensor *dst;
    const FeTensor *src[6];
    int iparams[8];
    float fparams[4];
} FeOpDesc;

/* The backend table (ggml-style). One per backend kind; each device points at
 * its backend. Every function returns a status and sets the message. */
struct FeBackend {
    const char *name;                                   /* "cpu", "cuda"       */
    fe_status (*buffer_alloc)(FeDevice *dev, size_t size, void **out_data);
    void (*buffer_free)(FeDevice *dev, void *data);
    fe_status (*upload)(FeDevice *dev, void *dst, const void *host, size_t n);
    fe_status (*download)(FeDevice *dev, void *host, const void *src, size_t n);
    bool (*supports_op)(FeDevice *dev, const FeOpDesc *op);
    fe_status (*compute)(FeDevice *dev, const FeOpDesc *op);
    fe_status (*synchronize)(FeDevice *dev);
    fe_status (*memory_info)(FeDevice *dev, uint64_t *free_bytes, uint64_t *total_bytes);
};

fe_status fe_op_compute(const FeOpDesc *op);   /* checks + dispatch            */

/* Convenience wrappers that build an FeOpDesc and call fe_op_compute. */
fe_status fe_matmul(FeTensor *y, const FeTensor *x, const FeTensor *w, const FeTensor *b,
                    bool gelu);
fe_status fe_conv3x3(FeTensor *y, const FeTensor *x, const FeTensor *w, const FeTensor *b,
                     bool relu);
fe_status fe_maxpool(FeTensor *y, const FeTensor *x, int ph, int pw);
fe_status fe_nchw_to_nlc(FeTensor *y, const FeTensor *x);
fe_status fe_add(FeTensor *y, const FeTensor *a, const FeTensor *b);
fe_status fe_layernorm(FeTensor *y, const FeTensor *x, const FeTensor *gamma,
                       const FeTensor *beta, float eps);
fe_status fe_gelu(FeTensor *y, const FeTensor *x);
/* q [B,Tq,D]; k, v [B,Tkmax,D] of which the first kv_len rows are used;
 * causal: query i (absolute position q_pos0 + i) sees keys <= its position. */
fe_status fe_attention(FeTensor *y, const FeTensor *q, const FeTensor *k, const FeTensor *v,
                       int n_heads, int kv_len, bool causal, int q_pos0);
fe_status fe_embed(FeTensor *y, const FeTensor *table, const FeTensor *pos,
                   const FeTensor *ids, int position);
/* cache [B,Tmax,D]; rows [B,1,D] written at position pos. */
fe_status fe_kv_write(FeTensor *cache, const FeTensor *rows, int pos);
fe_status fe_log_softmax(FeTensor *y, const FeTensor *x);
/* values/indices [B,k] of x [B,N]. indices are i32. */
fe_status fe_topk(FeTensor *values, FeTensor *indices, const FeTensor *x, int k);

/* ------------------------------------------------------------------------ */
/* CPU facts                                                                */

typedef struct {
    char vendor[16];
    char brand[64];
    int family, model;
    bool sse42, avx, avx2, fma, avx512f, avx512bw, avx512vl, avx512_bf16, amx_bf16, amx_tile;
    int n_cores;                   /* online logical CPUs                      */
} FeCpuInfo;

const FeCpuInfo *fe_cpu_info(void);
/* Which GEMM path the CPU backend uses, e.g. "OpenBLAS 0.3.21 (SkylakeX
 * kernels, chosen from cpuid: AVX-512F)". */
const char *fe_cpu_gemm_path(void);
void fe_cpu_set_threads(int n);

#endif /* FE_INTERNAL_H */
