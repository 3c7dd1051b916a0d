/* fake-cuda-module.c - a libformulate-cuda.so that loads and reports no
 * driver, the way the real module does on a machine without one. It speaks
 * only through the FeBackendHost table, as a real module must. */
#include "fe-internal.h"

#include <stdio.h>

static const FeBackendHost *fake_host;

static size_t fake_list_devices(FeDeviceInfo *out, size_t max, char *reason, size_t reason_len) {
    (void)out;
    (void)max;
    snprintf(reason, reason_len, "no CUDA driver");
    return 0;
}

static fe_status fake_open_device(int index, FeDevice **out) {
    *out = NULL;
    return fake_host->set_error(FE_ERR_DEVICE, "cuda:%d: no CUDA driver", index);
}

static const FeBackendModule fake_module = {
    .abi_version = FE_BACKEND_ABI_VERSION,
    .name = "cuda",
    .kind = FE_DEVICE_CUDA,
    .list_devices = fake_list_devices,
    .open_device = fake_open_device,
};

__attribute__((visibility("default"))) const FeBackendModule *
fe_cuda_backend_module(const FeBackendHost *host);

const FeBackendModule *fe_cuda_backend_module(const FeBackendHost *host) {
    if (!host || host->abi_version != FE_BACKEND_ABI_VERSION)
        return NULL;
    fake_host = host;
    return &fake_module;
}
