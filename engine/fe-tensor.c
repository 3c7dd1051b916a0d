/* fe-tensor.c - buffers on a device, tensors carved out of them. */
#include "fe-internal.h"

#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#define FE_TENSOR_ALIGN 64

fe_status fe_buffer_new(FeDevice *device, size_t size, FeBuffer **out) {
    if (!device || !out)
        return fe_set_error(FE_ERR_INVALID_ARGUMENT, "fe_buffer_new: NULL device or out");
    *out = NULL;
    FeBuffer *buf = calloc(1, sizeof *buf);
    if (!buf)
        return fe_set_error(FE_ERR_OUT_OF_MEMORY, "out of host memory for a buffer header");
    /* Never hand a zero-byte request to a backend: some return NULL for it. */
    fe_status st = device->backend->buffer_alloc(device, size ? size : FE_TENSOR_ALIGN, &buf->data);
    if (st != FE_OK) {
        free(buf);
        return st;
    }
    buf->device = device;
    buf->size = size;
    buf->used = 0;
    buf->owns_data = true;
    *out = buf;
    return FE_OK;
}

fe_status fe_buffer_wrap(FeDevice *device, void *data, size_t size, FeBuffer **out) {
    if (!device || !out || (!data && size))
        return fe_set_error(FE_ERR_INVALID_ARGUMENT, "fe_buffer_wrap: NULL argument");
    *out = NULL;
    if (strcmp(device->backend->name, "cpu") != 0)
        return fe_set_error(FE_ERR_INVALID_ARGUMENT,
                            "fe_buffer_wrap: host memory cannot be wrapped on %s", device->id);
    FeBuffer *buf = calloc(1, sizeof *buf);
    if (!buf)
        return fe_set_error(FE_ERR_OUT_OF_MEMORY, "out of host memory for a buffer header");
    buf->device = device;
    buf->data = data;
    buf->size = size;
    buf->owns_data = false;
    *out = buf;
    return FE_OK;
}

void fe_buffer_free(FeBuffer *buffer) {
    if (!buffer)
        return;
    if (buffer->owns_data && buffer->data)
        buffer->device->backend->buffer_free(buffer->device, buffer->data);
    free(buffer);
}

size_t fe_tensor_nbytes(const FeTensor *t) {
    size_t elem = fe_dtype_size(t->dtype);
    if (!elem || t->ndim < 0 || t->ndim > FE_MAX_DIMS)
        return 0;
    size_t n = elem;
    for (int i = 0; i < t->ndim; i++) {
        if (t->shape[i] < 0)
            return 0;
        if (t->shape[i] != 0 && n > SIZE_MAX / (size_t)t->shape[i])
            return 0;
        n *= (size_t)t->shape[i];
    }
    return n;
}

fe_status fe_buffer_tensor(FeBuffer *arena, fe_dtype dtype, int ndim, const int64_t *shape,
                           const char *name, FeTensor *out) {
    if (!arena || !out || (ndim > 0 && !shape))
        return fe_set_error(FE_ERR_INVALID_ARGUMENT, "fe_buffer_tensor: NULL argument");
    if (ndim < 0 || ndim > FE_MAX_DIMS)
        return fe_set_error(FE_ERR_INVALID_ARGUMENT, "tensor '%s': %d dimensions (at most %d)",
                            name ? name : "", ndim, FE_MAX_DIMS);
    FeTensor t;
    memset(&t, 0, sizeof t);
    t.dtype = dtype;
    t.ndim = ndim;
    for (int i = 0; i < ndim; i++)
        t.shape[i] = shape[i];
    if (name)
        snprintf(t.name, sizeof t.name, "%s", name);
    size_t nbytes = fe_tensor_nbytes(&t);
    bool empty = false;
    for (int i = 0; i < ndim; i++)
        empty |= shape[i] == 0;
    if (!nbytes && !empty)
        return fe_set_error(FE_ERR_INVALID_ARGUMENT, "tensor '%s': bad dtype or shape",
                            t.name);
    size_t offset = (arena->used + FE_TENSOR_ALIGN - 1) & ~(size_t)(FE_TENSOR_ALIGN - 1);
    if (offset < arena->used || offset > arena->size || nbytes > arena->size - offset)
        return fe_set_error(FE_ERR_OUT_OF_MEMORY,
                            "arena on %s full: tensor '%s' needs %zu bytes, %zu of %zu used",
                            arena->device->id, t.name, nbytes, arena->used, arena->size);
    t.buffer = arena;
    t.offset = offset;
    arena->used = offset + nbytes;
    *out = t;
    return FE_OK;
}

void fe_buffer_reset(FeBuffer *arena) {
    if (arena)
        arena->used = 0;
}

static fe_status fe_tensor_transfer_check(const FeTensor *t, const void *host, size_t nbytes,
                                          const char *what) {
    if (!t || !t->buffer || (!host && nbytes))
        return fe_set_error(FE_ERR_INVALID_ARGUMENT, "%s: NULL tensor, buffer or host pointer",
                            what);
    size_t have = fe_tensor_nbytes(t);
    if (nbytes != have)
        return fe_set_error(FE_ERR_INVALID_ARGUMENT, "%s: tensor '%s' holds %zu bytes, not %zu",
                            what, t->name, have, nbytes);
    if (t->offset > t->buffer->size || nbytes > t->buffer->size - t->offset)
        return fe_set_error(FE_ERR_INTERNAL, "%s: tensor '%s' lies outside its buffer", what,
                            t->name);
    return FE_OK;
}

fe_status fe_tensor_upload(FeTensor *dst, const void *host, size_t nbytes) {
    FE_TRY(fe_tensor_transfer_check(dst, host, nbytes, "upload"));
    if (!nbytes)
        return FE_OK;
    FeDevice *dev = dst->buffer->device;
    return dev->backend->upload(dev, fe_tensor_data(dst), host, nbytes);
}

fe_status fe_tensor_download(const FeTensor *src, void *host, size_t nbytes) {
    FE_TRY(fe_tensor_transfer_check(src, host, nbytes, "download"));
    if (!nbytes)
        return FE_OK;
    FeDevice *dev = src->buffer->device;
    return dev->backend->download(dev, host, fe_tensor_data(src), nbytes);
}

fe_status fe_check_same_device(const char *op, int n, const FeTensor *const *tensors) {
    const FeDevice *first = NULL;
    for (int i = 0; i < n; i++) {
        if (!tensors[i])
            continue;
        const FeDevice *d = fe_tensor_device(tensors[i]);
        if (!d)
            return fe_set_error(FE_ERR_INVALID_ARGUMENT, "%s: tensor '%s' has no buffer", op,
                                tensors[i]->name);
        if (!first)
            first = d;
        else if (d != first)
            return fe_set_error(FE_ERR_DEVICE_MISMATCH, "device mismatch: %s vs %s in %s",
                                first->id, d->id, op);
    }
    return FE_OK;
}
