/* fe-weights.c - opening a model file: mapping, format detection, config and
 * vocabulary, and the check that the tensors match the config. */
#include "fe-weights-private.h"

#include <errno.h>
#include <fcntl.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <unistd.h>

/* A sidecar holds a config and a few thousand tokens; anything bigger is not one. */
#define FE_SIDECAR_MAX_BYTES (64u << 20)

const char *fe_weights_shape_string(int ndim, const int64_t *shape, char *buf, size_t size) {
    size_t used = 0;
    if (size == 0)
        return buf;
    used += (size_t)snprintf(buf, size, "[");
    for (int i = 0; i < ndim && used < size; i++)
        used += (size_t)snprintf(buf + used, size - used, "%s%lld", i ? ", " : "",
                                 (long long)shape[i]);
    if (used < size)
        snprintf(buf + used, size - used, "]");
    return buf;
}

fe_status fe_weights_add_entry(FeWeightFile *wf, const char *name, fe_dtype dtype, int ndim,
                               const int64_t *shape, const void *data, size_t nbytes) {
    FeWeightEntry *e;
    if (ndim < 0 || ndim > 8)
        return fe_set_error(FE_ERR_FORMAT, "tensor '%.80s' has %d dimensions, at most 8 allowed",
                            name, ndim);
    /* Grow by doubling; capacity is implied by powers of two of n_entries. */
    if ((wf->n_entries & (wf->n_entries - 1)) == 0) {
        size_t cap = wf->n_entries ? wf->n_entries * 2 : 16;
        if (wf->n_entries == 0 || cap > 16) {
            FeWeightEntry *grown = realloc(wf->entries, cap * sizeof *grown);
            if (!grown)
                return fe_set_error(FE_ERR_OUT_OF_MEMORY, "out of memory for tensor entries");
            wf->entries = grown;
        }
    }
    e = &wf->entries[wf->n_entries];
    memset(e, 0, sizeof *e);
    e->name = strdup(name);
    if (!e->name)
        return fe_set_error(FE_ERR_OUT_OF_MEMORY, "out of memory for tensor entries");
    e->dtype = dtype;
    e->ndim = ndim;
    for (int i = 0; i < ndim; i++)
        e->shape[i] = shape[i];
    e->data = data;
    e->nbytes = nbytes;
    wf->n_entries++;
    return FE_OK;
}

fe_status fe_weights_add_owned(FeWeightFile *wf, void *block) {
    void **grown = realloc(wf->owned, (wf->n_owned + 1) * sizeof *grown);
    if (!grown) {
        free(block);
        return fe_set_error(FE_ERR_OUT_OF_MEMORY, "out of memory");
    }
    wf->owned = grown;
    wf->owned[wf->n_owned++] = block;
    return FE_OK;
}

fe_status fe_weights_add_meta(FeWeightFile *wf, const char *key, const char *value,
                              size_t value_len) {
    char **keys = realloc(wf->meta_keys, (size_t)(wf->n_meta + 1) * sizeof *keys);
    char **values;
    if (!keys)
        return fe_set_error(FE_ERR_OUT_OF_MEMORY, "out of memory for metadata");
    wf->meta_keys = keys;
    values = realloc(wf->meta_values, (size_t)(wf->n_meta + 1) * sizeof *values);
    if (!values)
        return fe_set_error(FE_ERR_OUT_OF_MEMORY, "out of memory for metadata");
    wf->meta_values = values;
    keys[wf->n_meta] = strdup(key);
    values[wf->n_meta] = malloc(value_len + 1);
    if (!keys[wf->n_meta] || !values[wf->n_meta]) {
        free(keys[wf->n_meta]);
        free(values[wf->n_meta]);
        return fe_set_error(FE_ERR_OUT_OF_MEMORY, "out of memory for metadata");
    }
    memcpy(values[wf->n_meta], value, value_len);
    values[wf->n_meta][value_len] = '\0';
    wf->n_meta++;
    return FE_OK;
}

static int fe_weights_cmp_names(const void *a, const void *b) {
    const FeWeightEntry *const *x = a, *const *y = b;
    return strcmp((*x)->name, (*y)->name);
}

fe_status fe_weights_check_unique_names(const FeWeightFile *wf) {
    const FeWeightEntry **sorted;
    fe_status st = FE_OK;
    if (wf->n_entries < 2)
        return FE_OK;
    sorted = malloc(wf->n_entries * sizeof *sorted);
    if (!sorted)
        return fe_set_error(FE_ERR_OUT_OF_MEMORY, "out of memory checking tensor names");
    for (size_t i = 0; i < wf->n_entries; i++)
        sorted[i] = &wf->entries[i];
    qsort(sorted, wf->n_entries, sizeof *sorted, fe_weights_cmp_names);
    for (size_t i = 1; i < wf->n_entries && st == FE_OK; i++)
        if (strcmp(sorted[i - 1]->name, sorted[i]->name) == 0)
            st = fe_set_error(FE_ERR_FORMAT, "duplicate tensor name '%.80s'", sorted[i]->name);
    free(sorted);
    return st;
}

static const char *fe_weights_meta(const FeWeightFile *wf, const char *key) {
    for (int i = 0; i < wf->n_meta; i++)
        if (strcmp(wf->meta_keys[i], key) == 0)
            return wf->meta_values[i];
    return NULL;
}

static fe_status fe_weights_set_vocab(FeWeightFile *wf, const FeJson *vocab, const char *what) {
    if (!vocab || vocab->type != FE_JSON_ARRAY)
        return fe_set_error(FE_ERR_FORMAT, "%s must be a JSON array of token strings, not %s",
                            what, vocab ? fe_json_type_name(vocab->type) : "missing");
    if (vocab->n_items != (size_t)wf->config.vocab_size)
        return fe_set_error(FE_ERR_FORMAT,
                            "%s has %zu tokens but config vocab_size is %d", what,
                            vocab->n_items, wf->config.vocab_size);
    wf->vocab = calloc(vocab->n_items ? vocab->n_items : 1, sizeof *wf->vocab);
    if (!wf->vocab)
        return fe_set_error(FE_ERR_OUT_OF_MEMORY, "out of memory for the vocabulary");
    for (size_t i = 0; i < vocab->n_items; i++) {
        const FeJson *t = &vocab->items[i];
        if (t->type != FE_JSON_STRING)
            return fe_set_error(FE_ERR_FORMAT, "%s[%zu] must be a string, not %s", what, i,
                                fe_json_type_name(t->type));
        if (t->string_len == 0)
            return fe_set_error(FE_ERR_FORMAT, "%s[%zu] is an empty token", what, i);
        wf->vocab[i] = strdup(t->string);
        if (!wf->vocab[i])
            return fe_set_error(FE_ERR_OUT_OF_MEMORY, "out of memory for the vocabulary");
        wf->n_vocab = (int)i + 1;
    }
    return FE_OK;
}

fe_status fe_weights_apply_metadata(FeWeightFile *wf) {
    const char *format = fe_weights_meta(wf, "format");
    const char *version = fe_weights_meta(wf, "formulate.format_version");
    const char *config = fe_weights_meta(wf, "formulate.config");
    const char *vocab = fe_weights_meta(wf, "formulate.vocab");
    FeJson *json;
    fe_status st;

    if (!config || !vocab)
        return fe_set_error(FE_ERR_FORMAT,
                            "no formulate.%s in the safetensors __metadata__: not a Formulate "
                            "model (export it with the tools/ exporter)",
                            config ? "vocab" : "config");
    if (format && strcmp(format, "formulate") != 0)
        return fe_set_error(FE_ERR_FORMAT, "__metadata__ format is '%.40s', expected 'formulate'",
                            format);
    if (!version)
        return fe_set_error(FE_ERR_FORMAT, "no formulate.format_version in __metadata__");
    if (strcmp(version, "1") != 0)
        return fe_set_error(FE_ERR_UNSUPPORTED,
                            "formulate.format_version '%.20s' is not supported (this engine "
                            "reads version 1)",
                            version);
    FE_TRY(fe_json_parse(config, strlen(config), "formulate.config", &json));
    st = fe_config_from_json(json, &wf->config);
    fe_json_free(json);
    FE_TRY(st);
    FE_TRY(fe_json_parse(vocab, strlen(vocab), "formulate.vocab", &json));
    st = fe_weights_set_vocab(wf, json, "formulate.vocab");
    fe_json_free(json);
    return st;
}

fe_status fe_weights_apply_sidecar(FeWeightFile *wf, const char *text, size_t len) {
    FeJson *json;
    fe_status st = FE_OK;
    const FeJson *config, *vocab;

    FE_TRY(fe_json_parse(text, len, "sidecar", &json));
    if (json->type != FE_JSON_OBJECT) {
        fe_json_free(json);
        return fe_set_error(FE_ERR_FORMAT,
                            "sidecar must be a JSON object {\"config\": {...}, \"vocab\": [...]}");
    }
    config = fe_json_get(json, "config");
    vocab = fe_json_get(json, "vocab");
    if (!config || !vocab) {
        fe_json_free(json);
        return fe_set_error(FE_ERR_FORMAT, "sidecar has no \"%s\" member",
                            config ? "vocab" : "config");
    }
    /* Keep the members for reporting, named like the safetensors metadata. */
    for (size_t i = 0; i < json->n_items && st == FE_OK; i++) {
        const FeJson *v = &json->items[i];
        const char *key = json->keys[i];
        if (strcmp(key, "config") == 0)
            key = "formulate.config";
        else if (strcmp(key, "vocab") == 0)
            key = "formulate.vocab";
        if (v->type == FE_JSON_STRING)
            st = fe_weights_add_meta(wf, key, v->string, v->string_len);
        else
            st = fe_weights_add_meta(wf, key, text + v->src_begin, v->src_end - v->src_begin);
    }
    if (st == FE_OK)
        st = fe_config_from_json(config, &wf->config);
    if (st == FE_OK)
        st = fe_weights_set_vocab(wf, vocab, "sidecar vocab");
    fe_json_free(json);
    return st;
}

static bool fe_dtype_is_float(fe_dtype d) {
    return d == FE_DTYPE_F32 || d == FE_DTYPE_F16 || d == FE_DTYPE_BF16 || d == FE_DTYPE_F64;
}

static bool fe_weights_name_ends(const char *name, const char *suffix) {
    size_t n = strlen(name), s = strlen(suffix);
    return n >= s && strcmp(name + n - s, suffix) == 0;
}

fe_status fe_weights_check_tensors(const FeWeightFile *wf) {
    size_t n_expected = 0;
    FeExpectedTensor *expected = fe_model_expected_tensors(&wf->config, &n_expected);
    fe_status st = FE_OK;
    char have[128], need[128];

    if (!expected)
        return fe_set_error(FE_ERR_OUT_OF_MEMORY, "out of memory listing the model's tensors");
    for (size_t i = 0; i < n_expected && st == FE_OK; i++) {
        const FeExpectedTensor *x = &expected[i];
        const FeWeightEntry *e = fe_weights_find(wf, x->name);
        bool counter = fe_weights_name_ends(x->name, ".num_batches_tracked");
        bool same = e && e->ndim == x->ndim;
        if (!e) {
            if (!x->optional)
                st = fe_set_error(FE_ERR_FORMAT, "missing tensor '%s' %s", x->name,
                                  fe_weights_shape_string(x->ndim, x->shape, need, sizeof need));
            continue;
        }
        for (int d = 0; same && d < x->ndim; d++)
            same = e->shape[d] == x->shape[d];
        /* BatchNorm's step counter is bookkeeping: any integer scalar will do. */
        if (counter && e->dtype != FE_DTYPE_I64 && e->dtype != FE_DTYPE_I32)
            st = fe_set_error(FE_ERR_FORMAT, "tensor '%s' has dtype %s, needs an integer",
                              x->name, fe_dtype_name(e->dtype));
        else if (!counter && !fe_dtype_is_float(e->dtype))
            st = fe_set_error(FE_ERR_FORMAT,
                              "tensor '%s' has dtype %s, needs a float type (f32, f16, bf16)",
                              x->name, fe_dtype_name(e->dtype));
        else if (!same && !(counter && e->ndim == 1 && e->shape[0] == 1))
            st = fe_set_error(FE_ERR_FORMAT, "tensor '%s' %s needs %s", x->name,
                              fe_weights_shape_string(e->ndim, e->shape, have, sizeof have),
                              fe_weights_shape_string(x->ndim, x->shape, need, sizeof need));
    }
    for (size_t i = 0; i < wf->n_entries && st == FE_OK; i++) {
        size_t j;
        for (j = 0; j < n_expected; j++)
            if (strcmp(wf->entries[i].name, expected[j].name) == 0)
                break;
        if (j == n_expected)
            st = fe_set_error(FE_ERR_FORMAT,
                              "unexpected tensor '%.80s': not part of formulate-v1 with this "
                              "config",
                              wf->entries[i].name);
    }
    free(expected);
    return st;
}

const FeWeightEntry *fe_weights_find(const FeWeightFile *wf, const char *name) {
    if (!wf || !name)
        return NULL;
    for (size_t i = 0; i < wf->n_entries; i++)
        if (strcmp(wf->entries[i].name, name) == 0)
            return &wf->entries[i];
    return NULL;
}

fe_status fe_weights_convert_f32(const FeWeightEntry *e, float *f) {
    if (!e || !f)
        return fe_set_error(FE_ERR_INVALID_ARGUMENT, "fe_weights_convert_f32: NULL argument");
    if (!fe_dtype_is_float(e->dtype))
        return fe_set_error(FE_ERR_UNSUPPORTED, "tensor '%s' has dtype %s, not a float type",
                            e->name, fe_dtype_name(e->dtype));
    size_t n = e->nbytes / fe_dtype_size(e->dtype);
    const uint8_t *src = e->data;
    /* memcpy per element: mapped data need not be aligned for its type. */
    switch (e->dtype) {
    case FE_DTYPE_F32:
        memcpy(f, src, n * sizeof *f);
        break;
    case FE_DTYPE_F16:
    case FE_DTYPE_BF16:
        if (e->dtype == FE_DTYPE_F16 && ((uintptr_t)src & 1) == 0) {
            fe_cpu_widen_f16((const uint16_t *)src, f, n); /* the same bits, vectorised */
            break;
        }
        for (size_t i = 0; i < n; i++) {
            uint16_t h;
            memcpy(&h, src + 2 * i, 2);
            f[i] = e->dtype == FE_DTYPE_F16 ? fe_f16_to_f32(h) : fe_bf16_to_f32(h);
        }
        break;
    case FE_DTYPE_F64:
        for (size_t i = 0; i < n; i++) {
            double d;
            memcpy(&d, src + 8 * i, 8);
            f[i] = (float)d;
        }
        break;
    case FE_DTYPE_I64:
    case FE_DTYPE_I32:
    case FE_DTYPE_I16:
    case FE_DTYPE_I8:
    case FE_DTYPE_U8:
    case FE_DTYPE_BOOL:
    case FE_DTYPE_COUNT:
    default:
        return fe_set_error(FE_ERR_INTERNAL, "fe_weights_convert_f32: dtype %d", (int)e->dtype);
    }
    return FE_OK;
}

fe_status fe_weights_to_f32(const FeWeightEntry *e, float **out) {
    if (!e || !out)
        return fe_set_error(FE_ERR_INVALID_ARGUMENT, "fe_weights_to_f32: NULL argument");
    *out = NULL;
    if (!fe_dtype_is_float(e->dtype))
        return fe_set_error(FE_ERR_UNSUPPORTED, "tensor '%s' has dtype %s, not a float type",
                            e->name, fe_dtype_name(e->dtype));
    size_t n = e->nbytes / fe_dtype_size(e->dtype);
    float *f = malloc(n ? n * sizeof *f : 1);
    if (!f)
        return fe_set_error(FE_ERR_OUT_OF_MEMORY, "out of memory converting tensor '%s'",
                            e->name);
    fe_status st = fe_weights_convert_f32(e, f);
    if (st != FE_OK) {
        free(f);
        return st;
    }
    *out = f;
    return FE_OK;
}

void fe_weights_close(FeWeightFile *wf) {
    if (!wf)
        return;
    for (size_t i = 0; i < wf->n_entries; i++)
        free(wf->entries[i].name);
    free(wf->entries);
    if (wf->vocab)
        for (int i = 0; i < wf->n_vocab; i++)
            free(wf->vocab[i]);
    free(wf->vocab);
    for (int i = 0; i < wf->n_meta; i++) {
        free(wf->meta_keys[i]);
        free(wf->meta_values[i]);
    }
    free(wf->meta_keys);
    free(wf->meta_values);
    for (size_t i = 0; i < wf->n_owned; i++)
        free(wf->owned[i]);
    free(wf->owned);
    free(wf->map_base);
    free(wf);
}

static const char *fe_weights_basename(const char *path) {
    const char *slash = strrchr(path, '/');
    return slash ? slash + 1 : path;
}

/* "<dir>/model.pt" -> "<dir>/model.json": the extension after the last dot of
 * the file name is replaced, or ".json" appended when there is none. */
static char *fe_weights_sidecar_path(const char *path) {
    const char *base = fe_weights_basename(path);
    const char *dot = strrchr(base, '.');
    size_t stem = dot && dot != base ? (size_t)(dot - path) : strlen(path);
    char *out = malloc(stem + sizeof ".json");
    if (!out)
        return NULL;
    memcpy(out, path, stem);
    memcpy(out + stem, ".json", sizeof ".json");
    return out;
}

static fe_status fe_weights_read_sidecar(FeWeightFile *wf, const char *path) {
    /* Non-blocking open and a regular-file check, as for the model: a FIFO
     * named as the sidecar must not hang the load. */
    int fd = open(path, O_RDONLY | O_CLOEXEC | O_NONBLOCK);
    struct stat sb;
    FILE *f;
    char *text;
    long size;
    fe_status st;

    if (fd < 0)
        return fe_set_error(FE_ERR_IO,
                            "a .pt holds only tensors; its config and vocabulary sidecar %s "
                            "cannot be opened: %s",
                            path, strerror(errno));
    if (fstat(fd, &sb) != 0 || !S_ISREG(sb.st_mode)) {
        close(fd);
        return fe_set_error(FE_ERR_IO, "sidecar %s: not a regular file", path);
    }
    fcntl(fd, F_SETFL, fcntl(fd, F_GETFL) & ~O_NONBLOCK);
    f = fdopen(fd, "rb");
    if (!f) {
        int err = errno;
        close(fd);
        return fe_set_error(FE_ERR_IO, "cannot read sidecar %s: %s", path, strerror(err));
    }
    if (fseek(f, 0, SEEK_END) != 0 || (size = ftell(f)) < 0 || fseek(f, 0, SEEK_SET) != 0) {
        int err = errno; /* before fclose, which may set errno */
        fclose(f);
        return fe_set_error(FE_ERR_IO, "cannot read sidecar %s: %s", path, strerror(err));
    }
    if ((unsigned long)size > FE_SIDECAR_MAX_BYTES) {
        fclose(f);
        return fe_set_error(FE_ERR_FORMAT, "sidecar %s is %ld bytes, more than a sidecar can be",
                            path, size);
    }
    text = malloc((size_t)size + 1);
    if (!text) {
        fclose(f);
        return fe_set_error(FE_ERR_OUT_OF_MEMORY, "out of memory reading sidecar %s", path);
    }
    if (fread(text, 1, (size_t)size, f) != (size_t)size) {
        free(text);
        fclose(f);
        return fe_set_error(FE_ERR_IO, "cannot read sidecar %s", path);
    }
    fclose(f);
    st = fe_weights_apply_sidecar(wf, text, (size_t)size);
    if (st != FE_OK)
        fe_prefix_error(st, "%s", fe_weights_basename(path));
    free(text);
    return st;
}

static uint64_t fe_weights_le64(const uint8_t *b) {
    uint64_t v = 0;
    for (int i = 7; i >= 0; i--)
        v = (v << 8) | b[i];
    return v;
}

static fe_status fe_weights_load(const char *path, const char *config_path, FeWeightFile *wf) {
    const uint8_t *bytes = wf->map_base;
    size_t len = wf->map_len;

    if (len >= 4 && memcmp(bytes, "PK\x03\x04", 4) == 0) {
        char *sidecar = NULL;
        fe_status st;
        snprintf(wf->format, sizeof wf->format, "pytorch");
        FE_TRY(fe_pytorch_parse(bytes, len, wf));
        if (!config_path)
            sidecar = fe_weights_sidecar_path(path);
        if (!config_path && !sidecar)
            return fe_set_error(FE_ERR_OUT_OF_MEMORY, "out of memory");
        st = fe_weights_read_sidecar(wf, config_path ? config_path : sidecar);
        free(sidecar);
        FE_TRY(st);
    } else if (len >= 2 && bytes[0] == 0x80 && bytes[1] >= 2 && bytes[1] <= 5) {
        return fe_set_error(FE_ERR_UNSUPPORTED,
                            "legacy (non-zip) PyTorch file; re-save it with torch.save() from "
                            "PyTorch 1.6 or newer");
    } else if (len >= 9 && (bytes[8] == '{' || fe_weights_le64(bytes) <= len - 8)) {
        /* A safetensors header starts with '{' right after its length; a
         * length that fits the file is also taken as one, so a broken header
         * gets the safetensors parser's specific message. */
        snprintf(wf->format, sizeof wf->format, "safetensors");
        FE_TRY(fe_safetensors_parse(bytes, len, wf));
        FE_TRY(fe_weights_apply_metadata(wf));
    } else if (len < 9) {
        return fe_set_error(FE_ERR_FORMAT,
                            "file is too short (%zu bytes) for a safetensors or PyTorch model",
                            len);
    } else {
        return fe_set_error(FE_ERR_FORMAT,
                            "not a safetensors or PyTorch zip file (unrecognised first bytes)");
    }
    return fe_weights_check_tensors(wf);
}

fe_status fe_weights_open(const char *path, const char *config_path, FeWeightFile **out) {
    struct stat sb;
    FeWeightFile *wf;
    void *map;
    int fd;
    fe_status st;

    if (!path || !out)
        return fe_set_error(FE_ERR_INVALID_ARGUMENT, "fe_weights_open: NULL argument");
    *out = NULL;
    /* O_NONBLOCK: opening a FIFO would otherwise wait for a writer forever;
     * it is refused below as not a regular file; the flag is cleared before
     * the read. */
    fd = open(path, O_RDONLY | O_CLOEXEC | O_NONBLOCK);
    if (fd < 0)
        return fe_set_error(FE_ERR_IO, "%s: cannot open: %s", path, strerror(errno));
    if (fstat(fd, &sb) != 0) {
        int err = errno;
        close(fd);
        return fe_set_error(FE_ERR_IO, "%s: cannot stat: %s", path, strerror(err));
    }
    if (!S_ISREG(sb.st_mode)) {
        close(fd);
        return fe_set_error(FE_ERR_IO, "%s: not a regular file", path);
    }
    if (sb.st_size == 0) {
        close(fd);
        return fe_set_error(FE_ERR_FORMAT, "%s: file is empty", fe_weights_basename(path));
    }
    if ((uint64_t)sb.st_size > SIZE_MAX) {
        close(fd);
        return fe_set_error(FE_ERR_UNSUPPORTED, "%s: too large to map", path);
    }
    /* Read whole, not mapped: a mapped file that shrinks while the model
     * loads (a training run rewriting it) kills the process with SIGBUS.
     * The bytes live only until the model has its own copies
     * (fe_context_load closes the file), so this costs no steady memory. */
    map = malloc((size_t)sb.st_size);
    if (!map) {
        close(fd);
        return fe_set_error(FE_ERR_OUT_OF_MEMORY, "%s: out of memory reading %lld bytes", path,
                            (long long)sb.st_size);
    }
    fe_cpu_advise_huge(map, (size_t)sb.st_size); /* read whole: no 4 KiB fault per page */
    fcntl(fd, F_SETFL, fcntl(fd, F_GETFL) & ~O_NONBLOCK);
    for (size_t done = 0; done < (size_t)sb.st_size;) {
        ssize_t n = read(fd, (uint8_t *)map + done, (size_t)sb.st_size - done);
        if (n < 0 && errno == EINTR)
            continue;
        if (n <= 0) {
            int err = errno;
            close(fd);
            free(map);
            if (n == 0)
                return fe_set_error(FE_ERR_IO, "%s: the file changed while it was being read",
                                    path);
            return fe_set_error(FE_ERR_IO, "%s: cannot read: %s", path, strerror(err));
        }
        done += (size_t)n;
    }
    close(fd);
    wf = calloc(1, sizeof *wf);
    if (!wf) {
        free(map);
        return fe_set_error(FE_ERR_OUT_OF_MEMORY, "%s: out of memory", path);
    }
    wf->map_base = map;
    wf->map_len = (size_t)sb.st_size;
    st = fe_weights_load(path, config_path, wf);
    if (st != FE_OK) {
        fe_prefix_error(st, "%s", fe_weights_basename(path));
        fe_weights_close(wf);
        return st;
    }
    *out = wf;
    return FE_OK;
}
