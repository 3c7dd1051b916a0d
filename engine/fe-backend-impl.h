/* fe-backend-impl.h - the runtime's contract: devices, buffers, tensors, the
 * ops front-end and the backend table a device implements, and the hook
 * through which a backend module (the CUDA library in kernels/) registers.
 * A module includes this (through fe-cuda-module.h) and nothing about weight
 * files, model configurations or the CPU's kernels. Not installed. */
#ifndef FE_BACKEND_IMPL_H
#define FE_BACKEND_IMPL_H

#include "fe-base.h"

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

#endif /* FE_BACKEND_IMPL_H */
