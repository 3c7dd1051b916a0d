/* fe-cuda-device.cu - the module's entry point, device discovery, memory
 * (tracked allocations, workspace, pinned staging), transfers and CUDA graphs.
 *
 * The engine dlopen()s this library and calls fe_cuda_backend_module() with
 * its host table; everything below reports errors through that table. The
 * op dispatcher is in fe-cuda-backend.cu. */
#include "fe-cuda-common.h"

#include <dlfcn.h>
#include <stdarg.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include <new>

#include <cublas_api.h>

const FeBackendHost *fe_cuda_host = NULL;

/* Defined in fe-cuda-backend.cu. */
extern "C" bool fe_cuda_supports_op(FeDevice *dev, const FeOpDesc *op);
extern "C" fe_status fe_cuda_compute(FeDevice *dev, const FeOpDesc *op);

/* Oldest GPU generation the fat binary has code for (sm_75, Turing). */
#define FE_CUDA_MIN_CC_MAJOR 7
#define FE_CUDA_MIN_CC_MINOR 5
/* Pinned staging: two halves of this size, so a copy overlaps the memcpy. */
#define FE_CUDA_STAGING_HALF ((size_t)8 << 20)
/* cuBLAS workspace we own, so graph capture never makes cuBLAS allocate. */
#define FE_CUBLAS_WORKSPACE ((size_t)32 << 20)
#define FE_CUDA_MAX_DEVICES 64

/* ------------------------------------------------------------------------ */
/* Errors                                                                   */

extern "C" fe_status fe_cuda_fail(fe_status status, const char *fmt, ...) {
    char msg[512];
    va_list ap;
    va_start(ap, fmt);
    vsnprintf(msg, sizeof msg, fmt, ap);
    va_end(ap);
    if (fe_cuda_host && fe_cuda_host->set_error)
        return fe_cuda_host->set_error(status, "%s", msg);
    fprintf(stderr, "formulate-cuda: %s\n", msg);
    return status;
}

extern "C" fe_status fe_cuda_report(cudaError_t err, const char *call, const char *file,
                                    int line) {
    const char *base = strrchr(file, '/');
    fe_status st = err == cudaErrorMemoryAllocation ? FE_ERR_OUT_OF_MEMORY : FE_ERR_DEVICE;
    /* clear a sticky launch error so the next call is not blamed for it */
    (void)cudaGetLastError();
    return fe_cuda_fail(st, "%s failed: %s (%s) at %s:%d", call, cudaGetErrorName(err),
                        cudaGetErrorString(err), base ? base + 1 : file, line);
}

static const char *cublas_status_name(cublasStatus_t st) {
    switch (st) {
    case CUBLAS_STATUS_SUCCESS: return "CUBLAS_STATUS_SUCCESS";
    case CUBLAS_STATUS_NOT_INITIALIZED: return "CUBLAS_STATUS_NOT_INITIALIZED";
    case CUBLAS_STATUS_ALLOC_FAILED: return "CUBLAS_STATUS_ALLOC_FAILED";
    case CUBLAS_STATUS_INVALID_VALUE: return "CUBLAS_STATUS_INVALID_VALUE";
    case CUBLAS_STATUS_ARCH_MISMATCH: return "CUBLAS_STATUS_ARCH_MISMATCH";
    case CUBLAS_STATUS_MAPPING_ERROR: return "CUBLAS_STATUS_MAPPING_ERROR";
    case CUBLAS_STATUS_EXECUTION_FAILED: return "CUBLAS_STATUS_EXECUTION_FAILED";
    case CUBLAS_STATUS_INTERNAL_ERROR: return "CUBLAS_STATUS_INTERNAL_ERROR";
    case CUBLAS_STATUS_NOT_SUPPORTED: return "CUBLAS_STATUS_NOT_SUPPORTED";
    case CUBLAS_STATUS_LICENSE_ERROR: return "CUBLAS_STATUS_LICENSE_ERROR";
    default: return "CUBLAS_STATUS_(unknown)";
    }
}

extern "C" fe_status fe_cublas_report(cublasStatus_t st, const char *call, const char *file,
                                      int line) {
    const char *base = strrchr(file, '/');
    return fe_cuda_fail(st == CUBLAS_STATUS_ALLOC_FAILED ? FE_ERR_OUT_OF_MEMORY : FE_ERR_DEVICE,
                        "%s failed: %s at %s:%d", call, cublas_status_name(st),
                        base ? base + 1 : file, line);
}

/* ------------------------------------------------------------------------ */
/* NVML (optional): GPU utilisation for the device list. Loaded with dlopen so
 * that the module does not need the driver's management library.          */

typedef int (*nvml_init_fn)(void);
typedef int (*nvml_by_pci_fn)(const char *, void **);
typedef struct { unsigned int gpu, memory; } fe_nvml_utilization;
typedef int (*nvml_util_fn)(void *, fe_nvml_utilization *);

static struct {
    std::once_flag once;
    bool ok;
    nvml_by_pci_fn by_pci;
    nvml_util_fn utilization;
} fe_nvml;

static void nvml_load(void) {
    void *h = dlopen("libnvidia-ml.so.1", RTLD_NOW | RTLD_LOCAL);
    if (!h)
        return;
    nvml_init_fn init = (nvml_init_fn)dlsym(h, "nvmlInit_v2");
    fe_nvml.by_pci = (nvml_by_pci_fn)dlsym(h, "nvmlDeviceGetHandleByPciBusId_v2");
    fe_nvml.utilization = (nvml_util_fn)dlsym(h, "nvmlDeviceGetUtilizationRates");
    fe_nvml.ok = init && fe_nvml.by_pci && fe_nvml.utilization && init() == 0;
}

/* GPU utilisation in percent, or -1 when NVML is not there. */
static int nvml_utilization(int ordinal) {
    std::call_once(fe_nvml.once, nvml_load);
    if (!fe_nvml.ok)
        return -1;
    char bus[32];
    if (cudaDeviceGetPCIBusId(bus, sizeof bus, ordinal) != cudaSuccess)
        return -1;
    void *handle = NULL;
    fe_nvml_utilization u;
    if (fe_nvml.by_pci(bus, &handle) != 0 || fe_nvml.utilization(handle, &u) != 0)
        return -1;
    return (int)u.gpu;
}

/* ------------------------------------------------------------------------ */
/* Discovery                                                                */

static void set_reason(char *reason, size_t len, const char *fmt, ...)
    __attribute__((format(printf, 3, 4)));
static void set_reason(char *reason, size_t len, const char *fmt, ...) {
    if (!reason || len == 0)
        return;
    va_list ap;
    va_start(ap, fmt);
    vsnprintf(reason, len, fmt, ap);
    va_end(ap);
}

/* The device count, or 0 with the reason the engine shows in its list. */
static int probe_devices(char *reason, size_t reason_len) {
    int driver = 0;
    cudaError_t err = cudaDriverGetVersion(&driver);
    if (err != cudaSuccess || driver == 0) {
        (void)cudaGetLastError();
        set_reason(reason, reason_len, "no CUDA driver");
        return 0;
    }
    if (driver < (CUDART_VERSION / 1000) * 1000) {
        set_reason(reason, reason_len, "driver too old for CUDA %d (it supports CUDA %d.%d)",
                   CUDART_VERSION / 1000, driver / 1000, (driver % 1000) / 10);
        return 0;
    }
    int n = 0;
    err = cudaGetDeviceCount(&n);
    if (err == cudaErrorInsufficientDriver) {
        (void)cudaGetLastError();
        set_reason(reason, reason_len, "driver too old for CUDA %d", CUDART_VERSION / 1000);
        return 0;
    }
    if (err != cudaSuccess || n <= 0) {
        (void)cudaGetLastError();
        if (err == cudaSuccess || err == cudaErrorNoDevice)
            set_reason(reason, reason_len, "no CUDA device");
        else
            set_reason(reason, reason_len, "no CUDA device (%s)", cudaGetErrorString(err));
        return 0;
    }
    return n;
}

static bool cc_supported(int major, int minor) {
    return major > FE_CUDA_MIN_CC_MAJOR ||
           (major == FE_CUDA_MIN_CC_MAJOR && minor >= FE_CUDA_MIN_CC_MINOR);
}

static void fill_info(int ordinal, FeDeviceInfo *info) {
    memset(info, 0, sizeof *info);
    snprintf(info->id, sizeof info->id, "cuda:%d", ordinal);
    info->kind = FE_DEVICE_CUDA;
    info->index = ordinal;
    cudaDeviceProp prop;
    cudaError_t err = cudaGetDeviceProperties(&prop, ordinal);
    if (err != cudaSuccess) {
        (void)cudaGetLastError();
        snprintf(info->name, sizeof info->name, "CUDA device %d", ordinal);
        snprintf(info->unavailable_reason, sizeof info->unavailable_reason,
                 "cannot query the device: %s", cudaGetErrorString(err));
        return;
    }
    snprintf(info->name, sizeof info->name, "%.127s", prop.name);
    info->compute_major = prop.major;
    info->compute_minor = prop.minor;
    info->total_memory = prop.totalGlobalMem;
    int prev = -1;
    (void)cudaGetDevice(&prev);
    size_t free_b = 0, total_b = 0;
    /* cudaMemGetInfo needs a context on that device (created here once) */
    if (cudaSetDevice(ordinal) == cudaSuccess && cudaMemGetInfo(&free_b, &total_b) == cudaSuccess) {
        info->free_memory = free_b;
        info->total_memory = total_b;
    } else {
        (void)cudaGetLastError();
    }
    if (prev >= 0)
        (void)cudaSetDevice(prev);
    int driver = 0;
    (void)cudaDriverGetVersion(&driver);
    int util = nvml_utilization(ordinal);
    char util_text[48] = "";
    if (util >= 0)
        snprintf(util_text, sizeof util_text, ", %d%% busy (NVML)", util);
    snprintf(info->detail, sizeof info->detail,
             "sm_%d%d, %d SMs, CUDA runtime %d.%d, driver %d.%d, cuBLAS %d.%d%s", prop.major,
             prop.minor, prop.multiProcessorCount, CUDART_VERSION / 1000,
             (CUDART_VERSION % 1000) / 10, driver / 1000, (driver % 1000) / 10,
             CUBLAS_VER_MAJOR, CUBLAS_VER_MINOR, util_text);
    if (!cc_supported(prop.major, prop.minor)) {
        snprintf(info->unavailable_reason, sizeof info->unavailable_reason,
                 "compute capability %d.%d is older than the %d.%d this build supports",
                 prop.major, prop.minor, FE_CUDA_MIN_CC_MAJOR, FE_CUDA_MIN_CC_MINOR);
        return;
    }
    info->available = true;
}

static size_t list_devices(FeDeviceInfo *out, size_t max, char *reason, size_t reason_len) {
    int n = probe_devices(reason, reason_len);
    for (int i = 0; i < n && out && (size_t)i < max; i++)
        fill_info(i, &out[i]);
    return (size_t)(n > 0 ? n : 0);
}

/* ------------------------------------------------------------------------ */
/* Memory                                                                   */

static fe_status track(FeCudaDevice *dev, void *ptr, size_t size) {
    if (dev->n_allocs == dev->cap_allocs) {
        size_t cap = dev->cap_allocs ? dev->cap_allocs * 2 : 64;
        FeCudaAllocation *a =
            (FeCudaAllocation *)realloc(dev->allocs, cap * sizeof(FeCudaAllocation));
        if (!a)
            return fe_cuda_fail(FE_ERR_OUT_OF_MEMORY, "out of host memory");
        dev->allocs = a;
        dev->cap_allocs = cap;
    }
    dev->allocs[dev->n_allocs].ptr = ptr;
    dev->allocs[dev->n_allocs].size = size;
    dev->n_allocs++;
    dev->alloc_bytes += size;
    return FE_OK;
}

/* Frees the workspace and the staging buffers (the caller holds the lock). */
static fe_status trim_locked(FeCudaDevice *dev) {
    FE_CUDA_CHECK(cudaStreamSynchronize(dev->stream));
    if (dev->workspace) {
        FE_CUDA_CHECK(cudaFree(dev->workspace));
        dev->workspace = NULL;
        dev->workspace_size = 0;
    }
    if (dev->staging) {
        FE_CUDA_CHECK(cudaFreeHost(dev->staging));
        dev->staging = NULL;
        dev->staging_size = 0;
    }
    return FE_OK;
}

extern "C" fe_status fe_cuda_workspace(FeCudaDevice *dev, size_t bytes, void **out) {
    if (bytes <= dev->workspace_size && dev->workspace) {
        *out = dev->workspace;
        return FE_OK;
    }
    if (dev->capturing)
        return fe_cuda_fail(FE_ERR_UNSUPPORTED,
                            "the CUDA workspace must grow to %zu bytes during graph capture; "
                            "run the step once before capturing it",
                            bytes);
    /* grow by at least half again so a slowly rising size does not reallocate each time */
    size_t size = bytes + bytes / 2;
    if (size < ((size_t)4 << 20))
        size = (size_t)4 << 20;
    if (dev->workspace) {
        /* the stream may still read the old workspace */
        FE_CUDA_CHECK(cudaStreamSynchronize(dev->stream));
        FE_CUDA_CHECK(cudaFree(dev->workspace));
        dev->workspace = NULL;
        dev->workspace_size = 0;
    }
    cudaError_t err = cudaMalloc(&dev->workspace, size);
    if (err != cudaSuccess) {
        (void)cudaGetLastError();
        dev->workspace = NULL;
        return fe_cuda_fail(FE_ERR_OUT_OF_MEMORY,
                            "%s: cannot allocate %zu MiB of workspace: %s", dev->base.id,
                            size >> 20, cudaGetErrorString(err));
    }
    dev->workspace_size = size;
    *out = dev->workspace;
    return FE_OK;
}

static fe_status ensure_staging(FeCudaDevice *dev) {
    if (dev->staging)
        return FE_OK;
    cudaError_t err = cudaHostAlloc(&dev->staging, 2 * FE_CUDA_STAGING_HALF, cudaHostAllocDefault);
    if (err != cudaSuccess) {
        (void)cudaGetLastError();
        dev->staging = NULL;
        return FE_OK;   /* no pinned memory: transfers go pageable, slower but correct */
    }
    dev->staging_size = 2 * FE_CUDA_STAGING_HALF;
    return FE_OK;
}

/* Each backend entry takes the device lock and makes the device current on
 * the calling thread (the runtime's current device is per thread). */
#define FE_CUDA_ENTER(dev)                                                     \
    std::lock_guard<std::mutex> fe__guard(*(dev)->lock);                       \
    FE_CUDA_CHECK(cudaSetDevice((dev)->ordinal))

static fe_status buffer_alloc(FeDevice *base, size_t size, void **out) {
    FeCudaDevice *dev = fe_cuda_dev(base);
    FE_CUDA_ENTER(dev);
    void *p = NULL;
    cudaError_t err = cudaMalloc(&p, size ? size : 256);
    if (err != cudaSuccess) {
        (void)cudaGetLastError();
        size_t free_b = 0, total_b = 0;
        (void)cudaMemGetInfo(&free_b, &total_b);
        return fe_cuda_fail(err == cudaErrorMemoryAllocation ? FE_ERR_OUT_OF_MEMORY
                                                             : FE_ERR_DEVICE,
                            "%s: cudaMalloc of %zu bytes failed: %s (%zu MiB free of %zu MiB)",
                            base->id, size, cudaGetErrorString(err), free_b >> 20,
                            total_b >> 20);
    }
    fe_status st = track(dev, p, size ? size : 256);
    if (st != FE_OK) {
        (void)cudaFree(p);
        return st;
    }
    *out = p;
    return FE_OK;
}

static void buffer_free(FeDevice *base, void *data) {
    if (!data)
        return;
    FeCudaDevice *dev = fe_cuda_dev(base);
    std::lock_guard<std::mutex> guard(*dev->lock);
    if (cudaSetDevice(dev->ordinal) != cudaSuccess)
        (void)cudaGetLastError();
    for (size_t i = 0; i < dev->n_allocs; i++) {
        if (dev->allocs[i].ptr != data)
            continue;
        dev->alloc_bytes -= dev->allocs[i].size;
        dev->allocs[i] = dev->allocs[--dev->n_allocs];
        /* cudaFree waits for the device, so pending kernels finish first */
        if (cudaFree(data) != cudaSuccess)
            (void)cudaGetLastError();
        if (dev->n_allocs == 0 && trim_locked(dev) != FE_OK)
            (void)cudaGetLastError();
        return;
    }
    if (fe_cuda_host && fe_cuda_host->log)
        fe_cuda_host->log(FE_LOG_WARN, "%s: freeing %p, which this device did not allocate",
                          base->id, data);
}

static fe_status upload(FeDevice *base, void *dst, const void *host, size_t n) {
    FeCudaDevice *dev = fe_cuda_dev(base);
    FE_CUDA_ENTER(dev);
    if (dev->capturing)
        return fe_cuda_fail(FE_ERR_UNSUPPORTED, "%s: no uploads inside a CUDA graph capture",
                            base->id);
    FE_CUDA_TRY(ensure_staging(dev));
    if (!dev->staging) {
        FE_CUDA_CHECK(cudaMemcpyAsync(dst, host, n, cudaMemcpyHostToDevice, dev->stream));
        FE_CUDA_CHECK(cudaStreamSynchronize(dev->stream));
        return FE_OK;
    }
    /* The caller may free `host` when we return: copy through the pinned halves,
     * waiting only until a half's previous transfer has left it. */
    size_t off = 0;
    int half = 0;
    while (off < n) {
        size_t len = n - off < FE_CUDA_STAGING_HALF ? n - off : FE_CUDA_STAGING_HALF;
        char *stage = (char *)dev->staging + half * FE_CUDA_STAGING_HALF;
        FE_CUDA_CHECK(cudaEventSynchronize(dev->staging_done[half]));
        memcpy(stage, (const char *)host + off, len);
        FE_CUDA_CHECK(cudaMemcpyAsync((char *)dst + off, stage, len, cudaMemcpyHostToDevice,
                                      dev->stream));
        FE_CUDA_CHECK(cudaEventRecord(dev->staging_done[half], dev->stream));
        off += len;
        half ^= 1;
    }
    return FE_OK;
}

static fe_status check_error_flag(FeCudaDevice *dev) {
    /* on our stream: it does not wait for the legacy default stream */
    int flag = 0;
    FE_CUDA_CHECK(cudaMemcpyAsync(&flag, dev->error_flag, sizeof flag, cudaMemcpyDeviceToHost,
                                  dev->stream));
    FE_CUDA_CHECK(cudaStreamSynchronize(dev->stream));
    if (flag == 0)
        return FE_OK;
    FE_CUDA_CHECK(cudaMemsetAsync(dev->error_flag, 0, sizeof(int), dev->stream));
    if (flag & FE_CUDA_FLAG_BAD_TOKEN_ID)
        return fe_cuda_fail(FE_ERR_INVALID_ARGUMENT,
                            "%s: a token id outside the vocabulary reached the embedding",
                            dev->base.id);
    return fe_cuda_fail(FE_ERR_INTERNAL, "%s: kernel error flag 0x%x", dev->base.id, flag);
}

static fe_status download(FeDevice *base, void *host, const void *src, size_t n) {
    FeCudaDevice *dev = fe_cuda_dev(base);
    FE_CUDA_ENTER(dev);
    if (dev->capturing)
        return fe_cuda_fail(FE_ERR_UNSUPPORTED, "%s: no downloads inside a CUDA graph capture",
                            base->id);
    FE_CUDA_TRY(ensure_staging(dev));
    if (!dev->staging || n <= 4096) {
        /* small reads (logits of a step) are latency-bound: one direct copy */
        FE_CUDA_CHECK(cudaMemcpyAsync(host, src, n, cudaMemcpyDeviceToHost, dev->stream));
        FE_CUDA_CHECK(cudaStreamSynchronize(dev->stream));
        return check_error_flag(dev);
    }
    /* Pipelined: chunk i+1 copies into one half while chunk i leaves the other. */
    size_t off = 0, pending_off = 0, pending_len = 0;
    int half = 0;
    while (off < n || pending_len) {
        size_t len = 0;
        if (off < n) {
            len = n - off < FE_CUDA_STAGING_HALF ? n - off : FE_CUDA_STAGING_HALF;
            char *stage = (char *)dev->staging + half * FE_CUDA_STAGING_HALF;
            FE_CUDA_CHECK(cudaMemcpyAsync(stage, (const char *)src + off, len,
                                          cudaMemcpyDeviceToHost, dev->stream));
            FE_CUDA_CHECK(cudaEventRecord(dev->staging_done[half], dev->stream));
        }
        if (pending_len) {
            int ph = half ^ 1;
            FE_CUDA_CHECK(cudaEventSynchronize(dev->staging_done[ph]));
            memcpy((char *)host + pending_off, (char *)dev->staging + ph * FE_CUDA_STAGING_HALF,
                   pending_len);
        }
        pending_off = off;
        pending_len = len;
        off += len;
        half ^= 1;
    }
    return check_error_flag(dev);
}

static fe_status memory_info(FeDevice *base, uint64_t *free_bytes, uint64_t *total_bytes) {
    FeCudaDevice *dev = fe_cuda_dev(base);
    FE_CUDA_ENTER(dev);
    size_t f = 0, t = 0;
    FE_CUDA_CHECK(cudaMemGetInfo(&f, &t));
    if (free_bytes)
        *free_bytes = f;
    if (total_bytes)
        *total_bytes = t;
    return FE_OK;
}

static fe_status synchronize(FeDevice *base) {
    FeCudaDevice *dev = fe_cuda_dev(base);
    FE_CUDA_ENTER(dev);
    if (dev->capturing)
        return FE_OK;   /* nothing runs while recording */
    FE_CUDA_CHECK(cudaStreamSynchronize(dev->stream));
    return check_error_flag(dev);
}

static bool supports_op_locked(FeDevice *base, const FeOpDesc *op) {
    return fe_cuda_supports_op(base, op);
}

static fe_status compute(FeDevice *base, const FeOpDesc *op) {
    FeCudaDevice *dev = fe_cuda_dev(base);
    FE_CUDA_ENTER(dev);
    return fe_cuda_compute(base, op);
}

static const FeBackend fe_cuda_backend = {
    "cuda",
    buffer_alloc,
    buffer_free,
    upload,
    download,
    supports_op_locked,
    compute,
    synchronize,
    memory_info,
};

/* ------------------------------------------------------------------------ */
/* Devices                                                                  */

static std::mutex fe_devices_lock;
static FeCudaDevice *fe_devices[FE_CUDA_MAX_DEVICES];

static fe_status device_create(int ordinal, FeCudaDevice **out) {
    FeCudaDevice *dev = (FeCudaDevice *)calloc(1, sizeof *dev);
    if (!dev)
        return fe_cuda_fail(FE_ERR_OUT_OF_MEMORY, "out of host memory");
    dev->lock = new (std::nothrow) std::mutex();
    if (!dev->lock) {
        free(dev);
        return fe_cuda_fail(FE_ERR_OUT_OF_MEMORY, "out of host memory");
    }
    dev->base.backend = &fe_cuda_backend;
    dev->base.index = ordinal;
    snprintf(dev->base.id, sizeof dev->base.id, "cuda:%d", ordinal);
    dev->base.backend_data = dev;
    dev->ordinal = ordinal;
    const char *tf32 = getenv("FE_CUDA_TF32");
    dev->allow_tf32 = !(tf32 && strcmp(tf32, "0") == 0);

    cudaDeviceProp prop;
    fe_status st = FE_OK;
    cudaError_t err = cudaSetDevice(ordinal);
    if (err == cudaSuccess)
        err = cudaGetDeviceProperties(&prop, ordinal);
    if (err != cudaSuccess) {
        st = fe_cuda_report(err, "cudaGetDeviceProperties", __FILE__, __LINE__);
        goto fail;
    }
    dev->cc_major = prop.major;
    dev->cc_minor = prop.minor;
    if (!cc_supported(prop.major, prop.minor)) {
        st = fe_cuda_fail(FE_ERR_UNSUPPORTED,
                          "cuda:%d (%s) has compute capability %d.%d; this build needs %d.%d",
                          ordinal, prop.name, prop.major, prop.minor, FE_CUDA_MIN_CC_MAJOR,
                          FE_CUDA_MIN_CC_MINOR);
        goto fail;
    }
    if ((err = cudaStreamCreateWithFlags(&dev->stream, cudaStreamNonBlocking)) != cudaSuccess ||
        (err = cudaEventCreateWithFlags(&dev->staging_done[0], cudaEventDisableTiming)) !=
            cudaSuccess ||
        (err = cudaEventCreateWithFlags(&dev->staging_done[1], cudaEventDisableTiming)) !=
            cudaSuccess ||
        (err = cudaMalloc((void **)&dev->error_flag, sizeof(int))) != cudaSuccess ||
        (err = cudaMemset(dev->error_flag, 0, sizeof(int))) != cudaSuccess ||
        /* the memset ran on the legacy stream; ours does not wait for it */
        (err = cudaDeviceSynchronize()) != cudaSuccess) {
        st = fe_cuda_report(err, "creating the stream, events and error flag", __FILE__,
                            __LINE__);
        goto fail;
    }
    {
        /* the cuBLAS workspace lives as long as the device: it is not one of the
         * engine's buffers, so it stays out of the allocation list */
        cublasStatus_t cs = cublasCreate(&dev->cublas);
        if (cs == CUBLAS_STATUS_SUCCESS)
            cs = cublasSetStream(dev->cublas, dev->stream);
        if (cs == CUBLAS_STATUS_SUCCESS) {
            if ((err = cudaMalloc(&dev->cublas_workspace, FE_CUBLAS_WORKSPACE)) != cudaSuccess) {
                dev->cublas_workspace = NULL;
                st = fe_cuda_report(err, "cudaMalloc(cuBLAS workspace)", __FILE__, __LINE__);
                goto fail;
            }
            cs = cublasSetWorkspace(dev->cublas, dev->cublas_workspace, FE_CUBLAS_WORKSPACE);
        }
        if (cs != CUBLAS_STATUS_SUCCESS) {
            st = fe_cublas_report(cs, "cublasCreate / cublasSetWorkspace", __FILE__, __LINE__);
            goto fail;
        }
    }
    *out = dev;
    return FE_OK;
fail:
    if (dev->cublas)
        cublasDestroy(dev->cublas);
    if (dev->cublas_workspace)
        cudaFree(dev->cublas_workspace);
    if (dev->error_flag)
        cudaFree(dev->error_flag);
    if (dev->staging_done[0])
        cudaEventDestroy(dev->staging_done[0]);
    if (dev->staging_done[1])
        cudaEventDestroy(dev->staging_done[1]);
    if (dev->stream)
        cudaStreamDestroy(dev->stream);
    (void)cudaGetLastError();
    free(dev->allocs);
    delete dev->lock;
    free(dev);
    return st;
}

static fe_status open_device(int index, FeDevice **out) {
    char reason[160] = "";
    int n = probe_devices(reason, sizeof reason);
    if (n == 0)
        return fe_cuda_fail(FE_ERR_DEVICE, "cuda:%d: %s", index, reason);
    if (index < 0 || index >= n || index >= FE_CUDA_MAX_DEVICES)
        return fe_cuda_fail(FE_ERR_DEVICE, "cuda:%d: there %s %d CUDA device%s", index,
                            n == 1 ? "is" : "are", n, n == 1 ? "" : "s");
    std::lock_guard<std::mutex> guard(fe_devices_lock);
    if (!fe_devices[index]) {
        FeCudaDevice *dev = NULL;
        FE_CUDA_TRY(device_create(index, &dev));
        fe_devices[index] = dev;
    }
    *out = &fe_devices[index]->base;
    return FE_OK;
}

/* ------------------------------------------------------------------------ */
/* Extras: engine bytes, trim, graphs                                       */

struct FeCudaGraph {
    cudaGraph_t graph;
    cudaGraphExec_t exec;
};

static uint64_t engine_bytes(FeDevice *base) {
    FeCudaDevice *dev = fe_cuda_dev(base);
    std::lock_guard<std::mutex> guard(*dev->lock);
    return dev->alloc_bytes + dev->workspace_size + FE_CUBLAS_WORKSPACE + sizeof(int);
}

static fe_status trim(FeDevice *base) {
    FeCudaDevice *dev = fe_cuda_dev(base);
    FE_CUDA_ENTER(dev);
    if (dev->capturing)
        return fe_cuda_fail(FE_ERR_UNSUPPORTED, "%s: cannot trim during graph capture",
                            base->id);
    return trim_locked(dev);
}

static fe_status graph_begin(FeDevice *base) {
    FeCudaDevice *dev = fe_cuda_dev(base);
    FE_CUDA_ENTER(dev);
    if (dev->capturing)
        return fe_cuda_fail(FE_ERR_INVALID_ARGUMENT, "%s: a graph capture is already running",
                            base->id);
    FE_CUDA_CHECK(cudaStreamBeginCapture(dev->stream, cudaStreamCaptureModeThreadLocal));
    dev->capturing = true;
    return FE_OK;
}

static fe_status graph_end(FeDevice *base, FeCudaGraph **out) {
    FeCudaDevice *dev = fe_cuda_dev(base);
    FE_CUDA_ENTER(dev);
    if (!dev->capturing)
        return fe_cuda_fail(FE_ERR_INVALID_ARGUMENT, "%s: no graph capture is running",
                            base->id);
    dev->capturing = false;
    /* end the capture first in every case, so the stream is usable again */
    cudaGraph_t graph = NULL;
    cudaError_t err = cudaStreamEndCapture(dev->stream, &graph);
    if (err != cudaSuccess)
        return fe_cuda_report(err, "cudaStreamEndCapture", __FILE__, __LINE__);
    FeCudaGraph *g = (FeCudaGraph *)calloc(1, sizeof *g);
    if (!g) {
        cudaGraphDestroy(graph);
        return fe_cuda_fail(FE_ERR_OUT_OF_MEMORY, "out of host memory");
    }
    g->graph = graph;
    err = cudaGraphInstantiate(&g->exec, g->graph, 0);
    if (err != cudaSuccess) {
        cudaGraphDestroy(g->graph);
        free(g);
        return fe_cuda_report(err, "cudaGraphInstantiate", __FILE__, __LINE__);
    }
    *out = g;
    return FE_OK;
}

static fe_status graph_launch(FeDevice *base, FeCudaGraph *graph) {
    FeCudaDevice *dev = fe_cuda_dev(base);
    FE_CUDA_ENTER(dev);
    if (!graph)
        return fe_cuda_fail(FE_ERR_INVALID_ARGUMENT, "graph_launch: no graph");
    FE_CUDA_CHECK(cudaGraphLaunch(graph->exec, dev->stream));
    return FE_OK;
}

static void graph_free(FeCudaGraph *graph) {
    if (!graph)
        return;
    if (graph->exec)
        cudaGraphExecDestroy(graph->exec);
    if (graph->graph)
        cudaGraphDestroy(graph->graph);
    free(graph);
}

static void set_tf32(FeDevice *base, bool allow) {
    FeCudaDevice *dev = fe_cuda_dev(base);
    std::lock_guard<std::mutex> guard(*dev->lock);
    dev->allow_tf32 = allow;
}

static const FeCudaModuleExtras fe_cuda_extras = {
    FE_CUDA_EXTRAS_ABI_VERSION,
    CUDART_VERSION,
    engine_bytes,
    trim,
    graph_begin,
    graph_end,
    graph_launch,
    graph_free,
    set_tf32,
};

static const FeBackendModule fe_cuda_module = {
    FE_BACKEND_ABI_VERSION,
    "cuda",
    FE_DEVICE_CUDA,
    list_devices,
    open_device,
};

extern "C" __attribute__((visibility("default"))) const FeBackendModule *
fe_cuda_backend_module(const FeBackendHost *host) {
    if (!host || host->abi_version != FE_BACKEND_ABI_VERSION)
        return NULL;
    fe_cuda_host = host;
    return &fe_cuda_module;
}

extern "C" __attribute__((visibility("default"))) const FeCudaModuleExtras *
fe_cuda_module_extras(void) {
    return &fe_cuda_extras;
}
