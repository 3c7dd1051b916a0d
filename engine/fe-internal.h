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
    /* private: the file's bytes (read whole, malloc'd) and owned buffers */
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
    /* A bf16 weight the CPU may multiply in bf16 (vdpbf16ps: the activations
     * rounded to bf16, products summed in f32) instead of widening it to f32:
     * set by the loader for FE_PRECISION_BF16 on a CPU with AVX512_BF16. */
    bool bf16_dot;
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

/* Wraps memory the caller owns (e.g. a weight mapping) as a buffer without
 * copying; CPU devices only. fe_buffer_free leaves the memory alone. */
fe_status fe_buffer_wrap(FeDevice *device, void *data, size_t size, FeBuffer **out);
/* Bytes a tensor of that shape takes; 0 on overflow or a bad dtype. */
size_t fe_tensor_nbytes(const FeTensor *t);


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
    FE_OP_ATTENTION_ROWS,   /* attention, each batch row over its own key span */
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
/* FeOpDesc conventions (what a backend reads; fe-ops.c has checked shapes):
 *   MATMUL      src x [..,K], w [N,K], b [N] or NULL; iparams[0] = gelu;
 *               dst [..,N] (rows M = nelements(x) / K)
 *   CONV3X3     src x [B,Cin,H,W], w [Cout,Cin,3,3], b [Cout] or NULL;
 *               iparams[0] = relu; dst [B,Cout,H,W]
 *   MAXPOOL     src x [B,C,H,W]; iparams = ph, pw; dst [B,C,H/ph,W/pw] (floor)
 *   NCHW_TO_NLC src x [B,C,H,W]; dst [B,H*W,C]
 *   ADD         src a, b; nelements(a) % nelements(b) == 0; dst like a
 *   LAYERNORM   src x [..,D], gamma [D], beta [D]; fparams[0] = eps
 *   GELU        src x; dst like x
 *   ATTENTION   src q [B,Tq,D], k, v [B,Tkmax,D]; iparams = n_heads, kv_len,
 *               causal, q_pos0; dst [B,Tq,D]
 *   EMBED       src table [V,D], pos [P,D], ids i32 or i64 [B]; iparams[0] =
 *               position; dst [B,D] or [B,1,D]
 *   KV_WRITE    dst cache [B,Tmax,D]; src rows [B,1,D] or [B,D]; iparams[0] = pos
 *   LOG_SOFTMAX src x [..,N]; dst like x
 *   TOPK        dst values f32 [B,k]; src[0] x [B,N], src[1] indices i32 [B,k]
 *               (a second output); iparams[0] = k; best first, ties -> lower index
 *   ATTENTION_ROWS  src q [R,Tq,D], k, v [N,D] (the key/value rows of every
 *               batch row packed one after another), spans i32 [R,2] on the
 *               device: row r's queries see keys start_r .. start_r+len_r-1
 *               (no mask inside the span); iparams = n_heads, max_len (a bound
 *               on every len_r, 1..N: shared-memory sizing on a GPU);
 *               dst [R,Tq,D]. The spans live on the device, so the front-end
 *               checks only their shape; a backend refuses (CPU) or clamps
 *               (GPU) a span outside [0, N) or longer than max_len. This is the
 *               cross-attention of a multi-image batch: each image's decoder
 *               row reads its own encoder memory, of its own length.
 * Every op may run in place (dst == src[0]) except MATMUL, CONV3X3,
 * NCHW_TO_NLC, ATTENTION, ATTENTION_ROWS and TOPK. */

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
/* Whether the operands' device has a kernel for the op as described (its
 * backend's supports_op; true when the backend has no such hook). Lets the
 * model pick another way (serial decoding) before it starts, instead of
 * failing at the first step. No shape checks. */
bool fe_op_supported(const FeOpDesc *op);

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
/* q [R,Tq,D]; k, v [N,D]; spans i32 [R,2] = (start, len) per row, every len
 * in 1..max_len (FE_OP_ATTENTION_ROWS). Per row the same numbers as
 * fe_attention of that row alone over k/v rows start..start+len-1 on the
 * CPU backend. */
fe_status fe_attention_rows(FeTensor *y, const FeTensor *q, const FeTensor *k, const FeTensor *v,
                            const FeTensor *spans, int n_heads, int max_len);

/* ------------------------------------------------------------------------ */
/* Backend modules                                                          */

/* Device registry and the backend-module hook.
 *
 * The CPU backend is always there. Other backends (CUDA) are modules: either
 * linked in and registered with fe_backend_register_module(), or a shared
 * library "libformulate-cuda.so" that the engine dlopen()s the first time
 * devices are listed or opened. That library exports
 *     const FeBackendModule *fe_cuda_backend_module(const FeBackendHost *host);
 * (FE_CUDA_MODULE_ENTRY) and must not call engine symbols directly: the engine
 * is a static library with hidden symbols, so a module reports errors and logs
 * through the FeBackendHost function table it is given. It is looked for at
 * $FE_CUDA_MODULE (a full path; when set, nowhere else), else in the
 * executable's directory, <exe dir>/../lib/formulate, then the dynamic
 * loader's path. When it cannot be used,
 * fe_devices_list() shows one unavailable "cuda" entry whose reason is
 * "CUDA backend not built" (no module file found), "CUDA libraries not
 * installed (<dlerror>)" (the module exists but its CUDA libraries do not
 * load), or whatever the module says through list_devices (e.g. "no CUDA
 * driver"). Tests register fake modules in-process (tests/ops). */
#define FE_BACKEND_ABI_VERSION 1
#define FE_CUDA_MODULE_NAME "libformulate-cuda.so"
#define FE_CUDA_MODULE_ENTRY "fe_cuda_backend_module"

typedef struct {
    int abi_version;                                    /* FE_BACKEND_ABI_VERSION */
    fe_status (*set_error)(fe_status status, const char *fmt, ...)
        __attribute__((format(printf, 2, 3)));
    void (*log)(fe_log_level level, const char *fmt, ...) __attribute__((format(printf, 2, 3)));
    const char *(*op_name)(fe_op op);
} FeBackendHost;

typedef struct FeBackendModule {
    int abi_version;                                    /* FE_BACKEND_ABI_VERSION */
    const char *name;                                   /* "cuda", "fake"      */
    fe_device_kind kind;
    /* Fills up to max entries (out may be NULL) and returns how many devices the
     * module has. Returning 0 means "none usable": it then writes why into
     * reason (e.g. "no CUDA driver") and fe_devices_list shows one unavailable
     * entry named after the module. */
    size_t (*list_devices)(FeDeviceInfo *out, size_t max, char *reason, size_t reason_len);
    /* The device with that ordinal, initialised on first use and kept for the
     * process; sets the error (through the host table) when it cannot be used. */
    fe_status (*open_device)(int index, FeDevice **out);
} FeBackendModule;

typedef const FeBackendModule *(*FeBackendModuleEntry)(const FeBackendHost *host);

/* Adds a module (linked-in backend or a test's fake device). At most 8. */
fe_status fe_backend_register_module(const FeBackendModule *module);
/* "cpu", "cuda:1", "cuda" (= cuda:0), "fake:0" -> the device, or an error
 * that says why (FE_ERR_DEVICE, message includes the unavailable reason). */
fe_status fe_device_open(const char *id, FeDevice **out);

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
/* The CPU's entry of fe_devices_list, without looking for other backends
 * (which may load the CUDA module and its libraries). */
void fe_cpu_device_info(FeDeviceInfo *out);
/* Which GEMM path the CPU backend uses, e.g. "OpenBLAS 0.3.21 SkylakeX
 * kernels (cpuid: AVX-512F, AMX-BF16; OPENBLAS_CORETYPE set by engine)".
 * The first call (or first GEMM, or fe_devices_list) loads OpenBLAS and may
 * setenv() OPENBLAS_CORETYPE and OPENBLAS_NUM_THREADS=1 for it (unless set):
 * programs should make it early in main, before they start other threads. */
const char *fe_cpu_gemm_path(void);
void fe_cpu_set_threads(int n);
/* Up to how many input rows the CPU matmul computes each output row exactly
 * as it would for that row alone (the in-place dot-product path, whose sums
 * do not depend on the row count), for weights of that dtype. Batched
 * decoding keeps its rows within this so that it gives the serial tokens. */
int fe_cpu_matmul_exact_rows(fe_dtype weight_dtype);
/* Whether this CPU multiplies bf16_dot weights in bf16 (AVX512_BF16 with
 * AVX-512F/BW/VL, and the engine built for x86-64 with GCC or Clang). */
bool fe_cpu_has_bf16_dot(void);
int fe_cpu_get_threads(void);
/* A float buffer of at least n elements private to the calling thread, in
 * one of two slots (0: an op's temporaries; 1: an operand copy that the
 * pool's threads read while their own tasks use slot 0). Grows, never
 * shrinks; NULL when out of memory. */
float *fe_cpu_scratch(int slot, size_t n);

/* bf16 x bf16 with f32 sums (fe-cpu-bf16.c, AVX512_BF16), for weights marked
 * bf16_dot: a 3x3 conv (pad 1) of one image x [cin, h, w] with weights
 * [cout, cin*9] and y = relu?(conv + bias) [cout, h, w]; and y[m, n] =
 * x[m, k] W[n, k]^T + bias. FE_ERR_UNSUPPORTED where the CPU lacks
 * AVX512_BF16, or for an odd cin*9 / k (fe_cpu_bf16_conv_ok). */
bool fe_cpu_bf16_conv_ok(int cin);
fe_status fe_cpu_conv3x3_bf16(const float *x, int cin, int h, int w, const uint16_t *wt,
                              const float *bias, bool relu, int cout, float *y);
fe_status fe_cpu_matmul_bf16(const float *x, int m, int k, const uint16_t *w, int n,
                             const float *bias, float *y);

/* Row-major single-precision GEMM used by the CPU ops:
 *   C[M,N] = alpha * A[M,K] * op(B) + beta * C,
 *   op(B) = B[K,N] (b_trans false, ldb >= N) or B[N,K]^T (b_trans true, ldb >= K).
 * fe_sgemm takes the path fe_cpu_gemm_path() reports: OpenBLAS loaded at run
 * time with kernels chosen from cpuid, or the engine's own blocked kernels
 * when OpenBLAS is absent or FE_BLAS=builtin is set in the environment
 * (FE_BLAS=/path/libopenblas.so.0 picks a library). No allocation once warm. */
typedef enum {
    FE_GEMM_AUTO = 0,        /* whatever fe_cpu_gemm_path() says            */
    FE_GEMM_OPENBLAS,
    FE_GEMM_BUILTIN_AVX512,
    FE_GEMM_BUILTIN_AVX2,    /* AVX2 + FMA                                  */
    FE_GEMM_BUILTIN_GENERIC, /* portable C                                  */
    FE_GEMM_COUNT
} fe_gemm_kernel;

void fe_sgemm(bool b_trans, int m, int n, int k, float alpha, const float *a, int lda,
              const float *b, int ldb, float beta, float *c, int ldc);
/* The same through one named kernel (tests, bench/gemm): FE_ERR_UNSUPPORTED
 * when that kernel cannot run here (no OpenBLAS, CPU lacks the ISA). */
fe_status fe_sgemm_with(fe_gemm_kernel kernel, bool b_trans, int m, int n, int k, float alpha,
                        const float *a, int lda, const float *b, int ldb, float beta, float *c,
                        int ldc);
const char *fe_gemm_kernel_name(fe_gemm_kernel kernel);
/* The kernel FE_GEMM_AUTO resolves to. */
fe_gemm_kernel fe_gemm_active_kernel(void);

/* The CPU backend's worker pool (fe-cpu-pool.c): runs fn(ctx, task) for task
 * in [0, n_tasks) on up to fe_cpu_get_threads() threads, the caller among
 * them, and returns when all are done. Workers are created once and kept;
 * a call made while the pool is busy (another FeState's thread) runs inline. */
typedef void (*FeParallelFn)(void *ctx, int task);
void fe_cpu_parallel_for(int n_tasks, FeParallelFn fn, void *ctx);

#endif /* FE_INTERNAL_H */
