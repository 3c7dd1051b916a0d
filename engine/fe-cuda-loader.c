/* fe-cuda-loader.c - the CUDA module's engine side: VRAM planning for the
 * device choice and the module's extras (see fe-cuda-loader.h).
 *
 * The dlopen() of libformulate-cuda.so itself is in fe-backend.c (the device
 * registry), which gives the module's devices their backend table; the
 * extras are looked up from that table's address with dladdr(), so both
 * always talk to the same copy of the library. */
#include "fe-cuda-loader.h"

#include "fe-cuda-module.h"

#include <dlfcn.h>
#include <errno.h>
#include <pthread.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#define FE_MIB ((uint64_t)1 << 20)
/* Must match the module (kernels/fe-cuda-device.cu, kernels/fe-cuda-conv.cu). */
#define FE_CUDA_CUBLAS_WORKSPACE ((uint64_t)32 << 20)
#define FE_CUDA_IM2COL_BUDGET ((uint64_t)256 << 20)

/* ------------------------------------------------------------------------ */
/* VRAM plan                                                                */

static uint64_t fe_precision_bytes(fe_precision p) {
    return p == FE_PRECISION_FP32 ? 4 : 2;   /* AUTO = fp16 on a GPU */
}

/* Parameters of formulate-v1 as loaded on a device: BatchNorm folded into the
 * convolutions (weight + bias per block), everything else as in docs/model.md. */
static uint64_t fe_model_parameters(const FeModelConfig *c) {
    uint64_t d = (uint64_t)c->d_model, ff = (uint64_t)c->d_ff, v = (uint64_t)c->vocab_size;
    uint64_t n = 0, cin = (uint64_t)c->in_channels;
    for (int i = 0; i < c->n_cnn; i++) {
        uint64_t cout = (uint64_t)c->cnn_channels[i];
        n += cout * cin * 9 + cout;
        cin = cout;
    }
    uint64_t linear = d * d + d, ln = 2 * d, mlp = d * ff + ff + ff * d + d;
    n += cin * d + d;                                            /* enc.proj      */
    n += (uint64_t)c->enc_layers * (4 * linear + 2 * ln + mlp);
    n += ln;                                                     /* enc.norm      */
    n += v * d + (uint64_t)c->max_tokens * d;                    /* tok, pos emb  */
    n += (uint64_t)c->dec_layers * (8 * linear + 3 * ln + mlp);
    n += ln + v;                                                 /* dec.norm, out.bias */
    if (!c->tie_embeddings)
        n += v * d;
    return n;
}

fe_status fe_cuda_plan_vram(const FeModelConfig *c, fe_precision precision, int states,
                            int beams, FeCudaVramPlan *out) {
    if (!c || !out)
        return fe_set_error(FE_ERR_INVALID_ARGUMENT, "fe_cuda_plan_vram: NULL argument");
    if (states < 1 || beams < 1)
        return fe_set_error(FE_ERR_INVALID_ARGUMENT,
                            "fe_cuda_plan_vram: %d states x %d beams", states, beams);
    if (c->height_stride <= 0 || c->width_stride <= 0 || c->d_model <= 0)
        return fe_set_error(FE_ERR_INVALID_ARGUMENT, "fe_cuda_plan_vram: config not validated");
    memset(out, 0, sizeof *out);
    const uint64_t f32 = 4, wbytes = fe_precision_bytes(precision);
    const uint64_t d = (uint64_t)c->d_model, ff = (uint64_t)c->d_ff;
    const uint64_t T = (uint64_t)c->max_tokens, V = (uint64_t)c->vocab_size;
    const uint64_t L = (uint64_t)(c->max_height / c->height_stride) *
                       (uint64_t)(c->max_width / c->width_stride);

    out->weights = fe_model_parameters(c) * wbytes;

    /* Per state, as fe_state_buffers_init sizes them: two CNN ping-pong
     * buffers as large as the largest activation, the encoder's eight [L, d]
     * buffers and one [L, d_ff]; plus the largest im2col patch matrix. */
    uint64_t h = (uint64_t)c->max_height, w = (uint64_t)c->max_width;
    uint64_t ch = (uint64_t)c->in_channels, cnn_cap = h * w * ch, im2col = 0;
    for (int i = 0; i < c->n_cnn; i++) {
        uint64_t cols = ch * 9 * h * w * wbytes;   /* input channels x 9 x pixels */
        if (cols > im2col)
            im2col = cols;
        ch = (uint64_t)c->cnn_channels[i];
        if (h * w * ch > cnn_cap)
            cnn_cap = h * w * ch;
        h /= (uint64_t)c->cnn_pool[i][0];
        w /= (uint64_t)c->cnn_pool[i][1];
    }
    if (im2col > FE_CUDA_IM2COL_BUDGET)
        im2col = FE_CUDA_IM2COL_BUDGET;            /* the module works in chunks */
    uint64_t encoder = (2 * cnn_cap + 8 * L * d + L * ff) * f32;
    uint64_t decoder = ((uint64_t)beams * (6 * d + ff + V) + (uint64_t)beams) * f32;
    out->activations = (uint64_t)states * (encoder + decoder);

    uint64_t cross = (uint64_t)c->dec_layers * 2 * L * d * f32;
    uint64_t self = (uint64_t)c->dec_layers * 2 * (uint64_t)beams * T * d * f32;
    out->kv_cache = (uint64_t)states * (cross + self);

    /* one workspace per device (ops are serialised on its stream): the larger
     * of im2col and the f32 -> f16 copy of the widest GEMM input, grown by
     * half again as the module does, plus the cuBLAS workspace */
    uint64_t convert = precision == FE_PRECISION_FP32 ? 0 : L * (ff > d ? ff : d) * wbytes;
    uint64_t ws = im2col > convert ? im2col : convert;
    out->workspace = ws + ws / 2 + FE_CUDA_CUBLAS_WORKSPACE;

    uint64_t sum = out->weights + out->activations + out->kv_cache + out->workspace;
    out->margin = sum / 20 + 64 * FE_MIB;          /* 5% + allocator granularity */
    out->total = sum + out->margin;
    return FE_OK;
}

uint64_t fe_cuda_effective_free(uint64_t free_bytes) {
    const char *env = getenv("FE_CUDA_FAKE_FREE_MB");
    if (!env || !*env)
        return free_bytes;
    char *end = NULL;
    errno = 0;
    unsigned long long mb = strtoull(env, &end, 10);
    if (errno || end == env || *end || env[0] == '-') {
        fe_log(FE_LOG_WARN, "FE_CUDA_FAKE_FREE_MB='%s' is not a number of MiB; ignored", env);
        return free_bytes;
    }
    uint64_t fake = (uint64_t)mb * FE_MIB;
    return fake < free_bytes ? fake : free_bytes;
}

static unsigned long long fe_mib_up(uint64_t b) {
    return (unsigned long long)((b + FE_MIB - 1) / FE_MIB);
}

fe_status fe_cuda_check_plan(const char *device_id, const FeCudaVramPlan *plan,
                             uint64_t free_bytes) {
    if (!plan)
        return fe_set_error(FE_ERR_INVALID_ARGUMENT, "fe_cuda_check_plan: NULL plan");
    uint64_t avail = fe_cuda_effective_free(free_bytes);
    if (plan->total <= avail)
        return FE_OK;
    return fe_set_error(FE_ERR_OUT_OF_MEMORY,
                        "%s: the model needs %llu MiB (weights %llu, activations %llu, "
                        "KV cache %llu, workspace %llu, margin %llu), %llu MiB free%s",
                        device_id ? device_id : "cuda", fe_mib_up(plan->total),
                        fe_mib_up(plan->weights), fe_mib_up(plan->activations),
                        fe_mib_up(plan->kv_cache), fe_mib_up(plan->workspace),
                        fe_mib_up(plan->margin), (unsigned long long)(avail / FE_MIB),
                        avail < free_bytes ? " (FE_CUDA_FAKE_FREE_MB)" : "");
}

fe_status fe_cuda_device_fits(FeDevice *dev, const FeModelConfig *cfg, fe_precision precision,
                              int states, int beams) {
    if (!dev || !dev->backend || !dev->backend->memory_info)
        return fe_set_error(FE_ERR_INVALID_ARGUMENT, "fe_cuda_device_fits: not a device");
    FeCudaVramPlan plan;
    FE_TRY(fe_cuda_plan_vram(cfg, precision, states, beams, &plan));
    uint64_t free_b = 0, total_b = 0;
    FE_TRY(dev->backend->memory_info(dev, &free_b, &total_b));
    return fe_cuda_check_plan(dev->id, &plan, free_b);
}

/* ------------------------------------------------------------------------ */
/* Module extras                                                            */

static pthread_mutex_t fe_extras_lock = PTHREAD_MUTEX_INITIALIZER;
static const FeBackend *fe_extras_backend;
static const FeCudaModuleExtras *fe_extras;

bool fe_cuda_is_device(const FeDevice *dev) {
    return dev && dev->backend && dev->backend->name && strcmp(dev->backend->name, "cuda") == 0;
}

static const FeCudaModuleExtras *fe_cuda_extras_of(FeDevice *dev) {
    if (!fe_cuda_is_device(dev))
        return NULL;
    const FeCudaModuleExtras *x = NULL;
    pthread_mutex_lock(&fe_extras_lock);
    if (fe_extras_backend == dev->backend) {
        x = fe_extras;
    } else {
        /* The backend table lives inside the module: its address names the file. */
        Dl_info info;
        if (dladdr((const void *)dev->backend, &info) && info.dli_fname) {
            void *h = dlopen(info.dli_fname, RTLD_NOW | RTLD_NOLOAD | RTLD_LOCAL);
            if (h) {
                FeCudaModuleExtrasEntry entry;
                *(void **)&entry = dlsym(h, FE_CUDA_MODULE_EXTRAS_ENTRY);
                const FeCudaModuleExtras *cand = entry ? entry() : NULL;
                if (cand && cand->abi_version == FE_CUDA_EXTRAS_ABI_VERSION)
                    x = cand;
                /* drops only the reference taken here; fe-backend.c keeps its own */
                dlclose(h);
            }
        }
        fe_extras_backend = dev->backend;
        fe_extras = x;
    }
    pthread_mutex_unlock(&fe_extras_lock);
    return x;
}

static fe_status fe_cuda_no_extras(const FeDevice *dev, const char *what) {
    return fe_set_error(FE_ERR_UNSUPPORTED, "%s: %s needs a device of libformulate-cuda.so",
                        dev ? dev->id : "(null)", what);
}

uint64_t fe_cuda_engine_bytes(FeDevice *dev) {
    const FeCudaModuleExtras *x = fe_cuda_extras_of(dev);
    return x ? x->engine_bytes(dev) : 0;
}

fe_status fe_cuda_trim(FeDevice *dev) {
    const FeCudaModuleExtras *x = fe_cuda_extras_of(dev);
    return x ? x->trim(dev) : fe_cuda_no_extras(dev, "trim");
}

fe_status fe_cuda_set_tf32(FeDevice *dev, bool allow) {
    const FeCudaModuleExtras *x = fe_cuda_extras_of(dev);
    if (!x)
        return fe_cuda_no_extras(dev, "TF32 control");
    x->set_tf32(dev, allow);
    return FE_OK;
}

fe_status fe_cuda_graph_begin(FeDevice *dev) {
    const FeCudaModuleExtras *x = fe_cuda_extras_of(dev);
    return x ? x->graph_begin(dev) : fe_cuda_no_extras(dev, "a CUDA graph");
}

fe_status fe_cuda_graph_end(FeDevice *dev, FeCudaGraph **out) {
    const FeCudaModuleExtras *x = fe_cuda_extras_of(dev);
    return x ? x->graph_end(dev, out) : fe_cuda_no_extras(dev, "a CUDA graph");
}

fe_status fe_cuda_graph_launch(FeDevice *dev, FeCudaGraph *graph) {
    const FeCudaModuleExtras *x = fe_cuda_extras_of(dev);
    return x ? x->graph_launch(dev, graph) : fe_cuda_no_extras(dev, "a CUDA graph");
}

void fe_cuda_graph_free(FeDevice *dev, FeCudaGraph *graph) {
    const FeCudaModuleExtras *x = fe_cuda_extras_of(dev);
    if (x && graph)
        x->graph_free(graph);
}

/* ------------------------------------------------------------------------ */
/* The module side's answers to fe-api.c (fe-backend-model.h)              */

static fe_status fe_module_model_fits(FeDevice *dev, const FeModelConfig *cfg,
                                      fe_precision precision, int states, int beams) {
    return fe_cuda_device_fits(dev, cfg, precision, states, beams);
}

/* A GPU keeps the matrices (linear / conv weights, embedding tables) in half
 * precision unless fp32 is asked for (docs/cuda.md); bf16 needs compute
 * capability 8.0. A module that is not libformulate-cuda.so (a test's fake
 * GPU computing with the CPU's kernels) has no half-precision kernels: it
 * gets the CPU's answer. */
static void fe_module_choose_matrices(FeDevice *dev, fe_precision asked, FeMatrixChoice *out) {
    if (!fe_cuda_is_device(dev)) {
        fe_cpu_model_ops.choose_matrices(dev, asked, out);
        return;
    }
    memset(out, 0, sizeof *out);
    out->precision = FE_PRECISION_FP32;
    out->matrix_dtype = FE_DTYPE_F32;
    if (asked == FE_PRECISION_FP32)
        return;
    bool bf16 = asked == FE_PRECISION_BF16;
    FeDeviceInfo di;
    if (bf16 && fe_device_info_of(dev, &di) == FE_OK && di.compute_major < 8) {
        snprintf(out->note, sizeof out->note, "%s has compute capability %d.%d: fp16, not bf16",
                 dev->id, di.compute_major, di.compute_minor);
        bf16 = false;
    }
    out->precision = bf16 ? FE_PRECISION_BF16 : FE_PRECISION_FP16;
    out->matrix_dtype = bf16 ? FE_DTYPE_BF16 : FE_DTYPE_F16;
}

static bool fe_module_wants_warm_up(const FeDevice *dev) { return fe_cuda_is_device(dev); }

/* The CUDA module counts every byte it holds on the device: all buffers plus
 * its workspace and cuBLAS workspace. */
static uint64_t fe_module_engine_bytes(FeDevice *dev, uint64_t counted) {
    return fe_cuda_is_device(dev) ? fe_cuda_engine_bytes(dev) : counted;
}

const FeBackendModelOps fe_module_model_ops = {
    .model_fits = fe_module_model_fits,
    .choose_matrices = fe_module_choose_matrices,
    .wants_warm_up = fe_module_wants_warm_up,
    .engine_bytes = fe_module_engine_bytes,
};
