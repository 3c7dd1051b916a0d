/* fe-safetensors.c - the safetensors container: an 8-byte little-endian
 * header length, a JSON header naming every tensor's dtype, shape and byte
 * span, then the data section. Every field is checked before any pointer into
 * the data is handed out. */
#include "fe-weights-private.h"

#include <stdio.h>
#include <stdlib.h>
#include <string.h>

/* Real headers are a few hundred bytes per tensor; 100 MB is the reference
 * implementation's limit too. */
#define FE_SAFETENSORS_MAX_HEADER (100u << 20)

static const struct {
    const char *name;
    fe_dtype dtype;
} fe_st_dtypes[] = {
    {"F32", FE_DTYPE_F32}, {"F16", FE_DTYPE_F16}, {"BF16", FE_DTYPE_BF16},
    {"F64", FE_DTYPE_F64}, {"I64", FE_DTYPE_I64}, {"I32", FE_DTYPE_I32},
    {"I16", FE_DTYPE_I16}, {"I8", FE_DTYPE_I8},   {"U8", FE_DTYPE_U8},
    {"BOOL", FE_DTYPE_BOOL},
};

typedef struct {
    uint64_t begin, end;
    size_t entry;
} FeSpan;

static int fe_span_cmp(const void *a, const void *b) {
    const FeSpan *x = a, *y = b;
    if (x->begin != y->begin)
        return x->begin < y->begin ? -1 : 1;
    return x->end < y->end ? -1 : x->end > y->end;
}

static fe_status fe_st_tensor(const char *name, const FeJson *t, const uint8_t *data_section,
                              uint64_t data_len, FeWeightFile *wf, FeSpan *span) {
    const FeJson *dtype = NULL, *shape = NULL, *offsets = NULL;
    int64_t dims[8];
    uint64_t count = 1, nbytes, begin, end;
    size_t d;
    fe_dtype dt = FE_DTYPE_COUNT;
    char shape_text[160];

    if (t->type != FE_JSON_OBJECT)
        return fe_set_error(FE_ERR_FORMAT, "tensor '%.80s': header entry must be an object",
                            name);
    for (size_t i = 0; i < t->n_items; i++) {
        const char *k = t->keys[i];
        const FeJson **slot = strcmp(k, "dtype") == 0          ? &dtype
                              : strcmp(k, "shape") == 0        ? &shape
                              : strcmp(k, "data_offsets") == 0 ? &offsets
                                                               : NULL;
        if (!slot)
            return fe_set_error(FE_ERR_FORMAT, "tensor '%.80s': unknown header field '%.40s'",
                                name, k);
        if (*slot)
            return fe_set_error(FE_ERR_FORMAT, "tensor '%.80s': field '%s' given twice", name,
                                k);
        *slot = &t->items[i];
    }
    if (!dtype || !shape || !offsets)
        return fe_set_error(FE_ERR_FORMAT, "tensor '%.80s': no '%s' field", name,
                            !dtype ? "dtype" : !shape ? "shape" : "data_offsets");
    if (dtype->type != FE_JSON_STRING)
        return fe_set_error(FE_ERR_FORMAT, "tensor '%.80s': dtype must be a string", name);
    for (d = 0; d < sizeof fe_st_dtypes / sizeof fe_st_dtypes[0]; d++)
        if (strcmp(dtype->string, fe_st_dtypes[d].name) == 0)
            dt = fe_st_dtypes[d].dtype;
    if (dt == FE_DTYPE_COUNT)
        return fe_set_error(FE_ERR_UNSUPPORTED, "tensor '%.80s': unknown dtype '%.20s'", name,
                            dtype->string);
    if (shape->type != FE_JSON_ARRAY || shape->n_items > 8)
        return fe_set_error(FE_ERR_FORMAT,
                            "tensor '%.80s': shape must be an array of at most 8 sizes", name);
    for (d = 0; d < shape->n_items; d++) {
        const FeJson *s = &shape->items[d];
        if (s->type != FE_JSON_NUMBER || !s->is_integer || s->integer < 0)
            return fe_set_error(FE_ERR_FORMAT,
                                "tensor '%.80s': shape entries must be non-negative integers",
                                name);
        dims[d] = s->integer;
        if (__builtin_mul_overflow(count, (uint64_t)s->integer, &count))
            return fe_set_error(FE_ERR_FORMAT, "tensor '%.80s': shape is too large", name);
    }
    if (offsets->type != FE_JSON_ARRAY || offsets->n_items != 2 ||
        offsets->items[0].type != FE_JSON_NUMBER || !offsets->items[0].is_integer ||
        offsets->items[1].type != FE_JSON_NUMBER || !offsets->items[1].is_integer ||
        offsets->items[0].integer < 0 || offsets->items[1].integer < 0)
        return fe_set_error(FE_ERR_FORMAT,
                            "tensor '%.80s': data_offsets must be two non-negative integers",
                            name);
    begin = (uint64_t)offsets->items[0].integer;
    end = (uint64_t)offsets->items[1].integer;
    if (begin > end || end > data_len)
        return fe_set_error(FE_ERR_FORMAT,
                            "tensor '%.80s': data_offsets [%llu, %llu] are outside the data "
                            "section (%llu bytes)",
                            name, (unsigned long long)begin, (unsigned long long)end,
                            (unsigned long long)data_len);
    fe_weights_shape_string((int)shape->n_items, dims, shape_text, sizeof shape_text);
    if (__builtin_mul_overflow(count, (uint64_t)fe_dtype_size(dt), &nbytes))
        return fe_set_error(FE_ERR_FORMAT, "tensor '%.80s': shape %s of %s is too large", name,
                            shape_text, fe_dtype_name(dt));
    if (nbytes != end - begin)
        return fe_set_error(FE_ERR_FORMAT,
                            "tensor '%.80s': shape %s of %s needs %llu bytes but data_offsets "
                            "span %llu",
                            name, shape_text, fe_dtype_name(dt), (unsigned long long)nbytes,
                            (unsigned long long)(end - begin));
    span->begin = begin;
    span->end = end;
    span->entry = wf->n_entries;
    return fe_weights_add_entry(wf, name, dt, (int)shape->n_items, dims, data_section + begin,
                                (size_t)nbytes);
}

static fe_status fe_st_metadata(const FeJson *meta, FeWeightFile *wf) {
    if (meta->type != FE_JSON_OBJECT)
        return fe_set_error(FE_ERR_FORMAT, "__metadata__ must be an object of strings");
    /* Keys are compared pairwise below; real files have a handful. */
    if (meta->n_items > 1024)
        return fe_set_error(FE_ERR_FORMAT, "__metadata__ has %zu keys, at most 1024 allowed",
                            meta->n_items);
    for (size_t i = 0; i < meta->n_items; i++) {
        const FeJson *v = &meta->items[i];
        if (v->type != FE_JSON_STRING)
            return fe_set_error(FE_ERR_FORMAT, "__metadata__ value '%.60s' must be a string",
                                meta->keys[i]);
        for (size_t j = 0; j < i; j++)
            if (strcmp(meta->keys[j], meta->keys[i]) == 0)
                return fe_set_error(FE_ERR_FORMAT, "__metadata__ key '%.60s' given twice",
                                    meta->keys[i]);
        FE_TRY(fe_weights_add_meta(wf, meta->keys[i], v->string, v->string_len));
    }
    return FE_OK;
}

static fe_status fe_st_parse_header(const FeJson *root, const uint8_t *data_section,
                                    uint64_t data_len, FeWeightFile *wf) {
    FeSpan *spans;
    size_t n_spans = 0;
    bool seen_meta = false;
    fe_status st = FE_OK;

    if (root->type != FE_JSON_OBJECT)
        return fe_set_error(FE_ERR_FORMAT, "safetensors header must be a JSON object");
    spans = malloc((root->n_items ? root->n_items : 1) * sizeof *spans);
    if (!spans)
        return fe_set_error(FE_ERR_OUT_OF_MEMORY, "out of memory reading the header");
    for (size_t i = 0; i < root->n_items && st == FE_OK; i++) {
        if (strcmp(root->keys[i], "__metadata__") == 0) {
            if (seen_meta)
                st = fe_set_error(FE_ERR_FORMAT, "__metadata__ given twice");
            else
                st = fe_st_metadata(&root->items[i], wf);
            seen_meta = true;
            continue;
        }
        if (root->keys[i][0] == '\0')
            st = fe_set_error(FE_ERR_FORMAT, "a tensor has an empty name");
        else
            st = fe_st_tensor(root->keys[i], &root->items[i], data_section, data_len, wf,
                              &spans[n_spans]);
        if (st == FE_OK)
            n_spans++;
    }
    if (st == FE_OK)
        st = fe_weights_check_unique_names(wf);
    if (st == FE_OK && n_spans > 1) {
        FeSpan *prev = NULL;
        qsort(spans, n_spans, sizeof *spans, fe_span_cmp);
        for (size_t i = 0; i < n_spans && st == FE_OK; i++) {
            if (spans[i].begin == spans[i].end)
                continue; /* empty tensors occupy nothing */
            if (prev && spans[i].begin < prev->end)
                st = fe_set_error(FE_ERR_FORMAT,
                                  "tensors '%.60s' and '%.60s' overlap (bytes %llu..%llu and "
                                  "%llu..%llu of the data section)",
                                  wf->entries[prev->entry].name, wf->entries[spans[i].entry].name,
                                  (unsigned long long)prev->begin, (unsigned long long)prev->end,
                                  (unsigned long long)spans[i].begin,
                                  (unsigned long long)spans[i].end);
            prev = &spans[i];
        }
    }
    free(spans);
    return st;
}

fe_status fe_safetensors_parse(const uint8_t *data, size_t len, FeWeightFile *wf) {
    uint64_t header_len = 0;
    FeJson *root;
    fe_status st;

    if (!data || !wf)
        return fe_set_error(FE_ERR_INVALID_ARGUMENT, "fe_safetensors_parse: NULL argument");
    if (len < 8)
        return fe_set_error(FE_ERR_FORMAT,
                            "truncated: %zu bytes, too short for the safetensors header length",
                            len);
    for (int i = 7; i >= 0; i--)
        header_len = (header_len << 8) | data[i];
    if (header_len > len - 8)
        return fe_set_error(FE_ERR_FORMAT,
                            "header length %llu is past the end of the file (%zu bytes)",
                            (unsigned long long)header_len, len);
    if (header_len > FE_SAFETENSORS_MAX_HEADER)
        return fe_set_error(FE_ERR_FORMAT, "header length %llu is over the %u byte limit",
                            (unsigned long long)header_len, FE_SAFETENSORS_MAX_HEADER);
    FE_TRY(fe_json_parse((const char *)data + 8, (size_t)header_len, "safetensors header",
                         &root));
    st = fe_st_parse_header(root, data + 8 + header_len, len - 8 - header_len, wf);
    fe_json_free(root);
    return st;
}
