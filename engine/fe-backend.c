/* fe-backend.c - the device registry: the CPU, backend modules (CUDA, loaded
 * at run time from libformulate-cuda.so, see fe-internal.h), and the public
 * fe_devices_list(). */
#include "fe-internal.h"

#include <dlfcn.h>
#include <limits.h>
#include <pthread.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

#define FE_MAX_MODULES 8

static pthread_mutex_t fe_modules_lock = PTHREAD_MUTEX_INITIALIZER;
static const FeBackendModule *fe_modules[FE_MAX_MODULES];
static int fe_n_modules;

static pthread_once_t fe_cuda_once = PTHREAD_ONCE_INIT;
static char fe_cuda_reason[160];

static const FeBackendHost fe_backend_host = {
    .abi_version = FE_BACKEND_ABI_VERSION,
    .set_error = fe_set_error,
    .log = fe_log,
    .op_name = fe_op_name,
};

static const FeBackendModule *fe_module_find(const char *name, size_t len) {
    const FeBackendModule *found = NULL;
    pthread_mutex_lock(&fe_modules_lock);
    for (int i = 0; i < fe_n_modules && !found; i++)
        if (strlen(fe_modules[i]->name) == len && strncmp(fe_modules[i]->name, name, len) == 0)
            found = fe_modules[i];
    pthread_mutex_unlock(&fe_modules_lock);
    return found;
}

fe_status fe_backend_register_module(const FeBackendModule *module) {
    if (!module || !module->name || !module->list_devices || !module->open_device)
        return fe_set_error(FE_ERR_INVALID_ARGUMENT, "backend module: missing name or functions");
    if (module->abi_version != FE_BACKEND_ABI_VERSION)
        return fe_set_error(FE_ERR_UNSUPPORTED,
                            "backend module '%s' speaks ABI %d, the engine ABI %d", module->name,
                            module->abi_version, FE_BACKEND_ABI_VERSION);
    if (strcmp(module->name, "cpu") == 0)
        return fe_set_error(FE_ERR_INVALID_ARGUMENT, "backend module: 'cpu' is built in");
    fe_status st = FE_OK;
    pthread_mutex_lock(&fe_modules_lock);
    for (int i = 0; i < fe_n_modules; i++)
        if (strcmp(fe_modules[i]->name, module->name) == 0)
            st = fe_set_error(FE_ERR_INVALID_ARGUMENT, "backend module '%s' registered twice",
                              module->name);
    if (st == FE_OK && fe_n_modules == FE_MAX_MODULES)
        st = fe_set_error(FE_ERR_UNSUPPORTED, "more than %d backend modules", FE_MAX_MODULES);
    if (st == FE_OK)
        fe_modules[fe_n_modules++] = module;
    pthread_mutex_unlock(&fe_modules_lock);
    return st;
}

/* Tries one candidate. Returns the handle, or NULL with *exists telling
 * whether the file was there (then the failure is its CUDA dependencies). */
static void *fe_cuda_try(const char *path, bool *exists, char *err, size_t err_len) {
    bool has_slash = strchr(path, '/') != NULL;
    if (has_slash && access(path, F_OK) != 0)
        return NULL;
    void *h = dlopen(path, RTLD_NOW | RTLD_LOCAL);
    if (h) {
        *exists = true;
        return h;
    }
    const char *e = dlerror();
    if (!e)
        e = "unknown dlopen error";
    /* For a bare name the loader searched; "libformulate-cuda.so: cannot open
     * shared object file" means it is not there at all. */
    if (!has_slash && strncmp(e, FE_CUDA_MODULE_NAME ":", strlen(FE_CUDA_MODULE_NAME ":")) == 0)
        return NULL;
    *exists = true;
    snprintf(err, err_len, "%s", e);
    return NULL;
}

/* Whether the NVIDIA driver's user-space library is there (libcuda.so.1,
 * installed with the driver, never by the CUDA toolkit alone). */
static bool fe_cuda_driver_present(void) {
    void *driver = dlopen("libcuda.so.1", RTLD_LAZY | RTLD_LOCAL);
    if (!driver)
        return false;
    dlclose(driver);
    return true;
}

static void fe_cuda_load(void) {
    char candidates[5][PATH_MAX];
    int n = 0;
    const char *env = getenv("FE_CUDA_MODULE");
    bool exists = false;
    char err[512] = "";
    void *h = NULL;

    if (fe_module_find("cuda", 4))
        return; /* linked in */
    /* An explicit FE_CUDA_MODULE is the only place looked at: that is what
     * someone who sets it means, and it lets tests pin the outcome. */
    if (env && env[0])
        snprintf(candidates[n++], PATH_MAX, "%s", env);
    char exe[PATH_MAX];
    ssize_t len = n ? -1 : readlink("/proc/self/exe", exe, sizeof exe - 1);
    if (len > 0) {
        exe[len] = '\0';
        char *slash = strrchr(exe, '/');
        if (slash) {
            *slash = '\0';
            snprintf(candidates[n++], PATH_MAX, "%.*s/%s", PATH_MAX - 64, exe, FE_CUDA_MODULE_NAME);
            snprintf(candidates[n++], PATH_MAX, "%.*s/../lib/formulate/%s", PATH_MAX - 64, exe,
                     FE_CUDA_MODULE_NAME);
#ifdef FE_BUILD_ROOT
            /* Uninstalled programs (build/app/formulate-cli, tests) use the
             * module of their own build tree, never an installed one. */
            size_t root_len = strlen(FE_BUILD_ROOT);
            if (strncmp(exe, FE_BUILD_ROOT, root_len) == 0 && (exe[root_len] == '/' || !exe[root_len]))
                snprintf(candidates[n++], PATH_MAX, "%s/kernels/%s", FE_BUILD_ROOT,
                         FE_CUDA_MODULE_NAME);
#endif
        }
    }
    if (!(env && env[0]))
        snprintf(candidates[n++], PATH_MAX, "%s", FE_CUDA_MODULE_NAME);

    for (int i = 0; i < n && !h; i++) {
        /* The module pulls in cuBLAS and the CUDA runtime, ~60 MB mapped and
         * a slow load, which are of no use without the NVIDIA driver: look for
         * the driver's library first. An explicit FE_CUDA_MODULE is loaded as
         * asked (tests pin the module's own outcome with it); a bare name is
         * only known to exist once dlopen() found it. */
        if (!(env && env[0]) && strchr(candidates[i], '/') != NULL &&
            access(candidates[i], F_OK) == 0 && !fe_cuda_driver_present()) {
            snprintf(fe_cuda_reason, sizeof fe_cuda_reason, "no CUDA driver");
            return;
        }
        h = fe_cuda_try(candidates[i], &exists, err, sizeof err);
        if (!h && exists)
            break; /* found but broken: say so rather than look further */
    }
    if (!h) {
        if (exists)
            snprintf(fe_cuda_reason, sizeof fe_cuda_reason, "CUDA libraries not installed (%s)",
                     err);
        else
            snprintf(fe_cuda_reason, sizeof fe_cuda_reason, "CUDA backend not built");
        return;
    }
    FeBackendModuleEntry entry;
    *(void **)&entry = dlsym(h, FE_CUDA_MODULE_ENTRY);
    const FeBackendModule *module = entry ? entry(&fe_backend_host) : NULL;
    if (!module) {
        snprintf(fe_cuda_reason, sizeof fe_cuda_reason, "%s has no usable %s", FE_CUDA_MODULE_NAME,
                 FE_CUDA_MODULE_ENTRY);
        dlclose(h);
        return;
    }
    if (fe_backend_register_module(module) != FE_OK) {
        snprintf(fe_cuda_reason, sizeof fe_cuda_reason, "%s", fe_last_error());
        fe_clear_error();
        dlclose(h);
        return;
    }
    /* The handle stays open for the life of the process: devices and their
     * function tables live in it. */
}

static void fe_modules_init(void) { pthread_once(&fe_cuda_once, fe_cuda_load); }

void fe_cpu_device_info(FeDeviceInfo *d) {
    const FeCpuInfo *ci = fe_cpu_info();
    memset(d, 0, sizeof *d);
    snprintf(d->id, sizeof d->id, "cpu");
    snprintf(d->name, sizeof d->name, "%s", ci->brand);
    d->kind = FE_DEVICE_CPU;
    d->index = 0;
    d->available = true;
    FeDevice *cpu = fe_cpu_device();
    cpu->backend->memory_info(cpu, &d->free_memory, &d->total_memory);
    const char *isa = ci->avx512f ? "AVX-512" : ci->avx2 && ci->fma ? "AVX2" : ci->avx ? "AVX"
                                                                                      : "SSE";
    int threads = fe_cpu_get_threads();
    snprintf(d->detail, sizeof d->detail, "%s%s%s; GEMM: %s, %d thread%s", isa,
             ci->avx512_bf16 ? " AVX512_BF16" : "", ci->amx_bf16 ? " AMX-BF16" : "",
             fe_cpu_gemm_path(), threads, threads == 1 ? "" : "s");
}

size_t fe_devices_list(FeDeviceInfo *out, size_t max) {
    size_t count = 0;
    char reason[160];
    fe_modules_init();

    if (out && count < max)
        fe_cpu_device_info(&out[count]);
    count++;

    const FeBackendModule *mods[FE_MAX_MODULES];
    int n_mods;
    bool have_cuda = false;
    pthread_mutex_lock(&fe_modules_lock);
    n_mods = fe_n_modules;
    memcpy(mods, fe_modules, sizeof mods);
    pthread_mutex_unlock(&fe_modules_lock);

    for (int i = 0; i < n_mods; i++) {
        have_cuda |= strcmp(mods[i]->name, "cuda") == 0;
        reason[0] = '\0';
        size_t room = out && count < max ? max - count : 0;
        size_t n = mods[i]->list_devices(room ? out + count : NULL, room, reason, sizeof reason);
        if (n > 0) {
            count += n;
            continue;
        }
        if (out && count < max) {
            FeDeviceInfo *d = &out[count];
            memset(d, 0, sizeof *d);
            snprintf(d->id, sizeof d->id, "%s", mods[i]->name);
            snprintf(d->name, sizeof d->name, "%s", mods[i]->name);
            d->kind = mods[i]->kind;
            snprintf(d->unavailable_reason, sizeof d->unavailable_reason, "%s",
                     reason[0] ? reason : "no devices");
        }
        count++;
    }
    if (!have_cuda) {
        if (out && count < max) {
            FeDeviceInfo *d = &out[count];
            memset(d, 0, sizeof *d);
            snprintf(d->id, sizeof d->id, "cuda");
            snprintf(d->name, sizeof d->name, "NVIDIA GPU");
            d->kind = FE_DEVICE_CUDA;
            snprintf(d->unavailable_reason, sizeof d->unavailable_reason, "%s", fe_cuda_reason);
        }
        count++;
    }
    return count;
}

fe_status fe_device_open(const char *id, FeDevice **out) {
    if (!id || !out)
        return fe_set_error(FE_ERR_INVALID_ARGUMENT, "fe_device_open: NULL id or out");
    *out = NULL;
    if (strcmp(id, "cpu") == 0) {
        *out = fe_cpu_device();
        return *out ? FE_OK : fe_set_error(FE_ERR_INTERNAL, "the CPU device is missing");
    }
    fe_modules_init();
    const char *colon = strchr(id, ':');
    size_t name_len = colon ? (size_t)(colon - id) : strlen(id);
    long index = 0;
    if (colon) {
        char *end = NULL;
        index = strtol(colon + 1, &end, 10);
        if (end == colon + 1 || *end || index < 0 || index > 1024)
            return fe_set_error(FE_ERR_INVALID_ARGUMENT,
                                "device '%s': expected name:N, e.g. cuda:0", id);
    }
    const FeBackendModule *m = fe_module_find(id, name_len);
    if (!m) {
        if (name_len == 4 && strncmp(id, "cuda", 4) == 0)
            return fe_set_error(FE_ERR_DEVICE, "device '%s' unavailable: %s", id, fe_cuda_reason);
        return fe_set_error(FE_ERR_INVALID_ARGUMENT, "unknown device '%s' (try cpu or cuda:0)", id);
    }
    return m->open_device((int)index, out);
}

const FeBackendModelOps *fe_backend_model_ops(const FeDevice *dev) {
    return dev == fe_cpu_device() ? &fe_cpu_model_ops : &fe_module_model_ops;
}

fe_status fe_device_info_of(FeDevice *dev, FeDeviceInfo *out) {
    if (dev == fe_cpu_device()) {
        /* Listing every device would load the CUDA module (150 MB of cuBLAS
         * mapped) into a process that asked for the CPU. */
        fe_cpu_device_info(out);
        return FE_OK;
    }
    FeDeviceInfo devs[16];
    size_t n = fe_devices_list(devs, 16);
    if (n > 16)
        n = 16;
    for (size_t i = 0; i < n; i++)
        if (strcmp(devs[i].id, dev->id) == 0) {
            *out = devs[i];
            return FE_OK;
        }
    memset(out, 0, sizeof *out);
    snprintf(out->id, sizeof out->id, "%s", dev->id);
    snprintf(out->name, sizeof out->name, "%s", dev->id);
    out->kind = strncmp(dev->id, "cuda", 4) == 0 ? FE_DEVICE_CUDA : FE_DEVICE_CPU;
    out->index = dev->index;
    out->available = true;
    return FE_OK;
}
