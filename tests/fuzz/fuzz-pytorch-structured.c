/* fuzz-pytorch-structured.c - structure-aware libFuzzer target for .pt files.
 *
 * Byte-level mutation of a torch.save() archive almost never gets past the
 * zip and pickle framing to the tensor arithmetic, which is where the stride-0
 * heap overflow of issue 18 was: shape (2^31, 2^31), stride 0 over one
 * element made numel * esize wrap. So an input that does not start with "PK"
 * is read as decisions (fuzz-structured.h) that build a valid zip with a
 * valid protocol-2 pickle of a state dict and its storages, where shapes,
 * strides, offsets, dtypes, claimed storage sizes and storage sharing are
 * adversarial. An input that starts with "PK" is parsed as it is, so the
 * bad-input corpus seeds it too. */
#include "fe-internal.h"
#include "fe-weights-private.h"
#include "fuzz-structured.h"

#include <stdio.h>

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size);

static const char *const storage_names[] = {
    "FloatStorage", "HalfStorage", "BFloat16Storage", "DoubleStorage", "LongStorage",
    "IntStorage",   "ShortStorage", "CharStorage",    "ByteStorage",   "BoolStorage",
};

/* Pickle integers the way Python does: BININT1/BININT2/BININT, else LONG1. */
static void pk_int(FuzzBuf *p, uint64_t v) {
    if (v < 256) {
        fuzz_put(p, "K", 1);
        fuzz_put_le(p, v, 1);
    } else if (v < 65536) {
        fuzz_put(p, "M", 1);
        fuzz_put_le(p, v, 2);
    } else if (v < (1ull << 31)) {
        fuzz_put(p, "J", 1);
        fuzz_put_le(p, v, 4);
    } else {
        /* LONG1, 9 bytes so that values >= 2^63 stay positive */
        fuzz_put(p, "\x8a\x09", 2);
        fuzz_put_le(p, v, 8);
        fuzz_put(p, "\0", 1);
    }
}

static void pk_str(FuzzBuf *p, const char *s) {
    fuzz_put(p, "X", 1);
    fuzz_put_le(p, strlen(s), 4);
    fuzz_put_str(p, s);
}

typedef struct {
    char name[64];
    uint64_t crc_unused;
    FuzzBuf body;
} ZipEntry;

static void zip_build(FuzzBuf *out, ZipEntry *e, int n) {
    FuzzBuf central = {0};
    uint64_t offsets[16];
    for (int i = 0; i < n; i++) {
        size_t nl = strlen(e[i].name);
        offsets[i] = out->len;
        fuzz_put_le(out, 0x04034b50u, 4);
        fuzz_put_le(out, 20, 2); /* version */
        fuzz_put_le(out, 0, 2);  /* flags */
        fuzz_put_le(out, 0, 2);  /* stored */
        fuzz_put_le(out, 0, 4);  /* time, date */
        fuzz_put_le(out, 0, 4);  /* crc: not checked by the reader */
        fuzz_put_le(out, e[i].body.len, 4);
        fuzz_put_le(out, e[i].body.len, 4);
        fuzz_put_le(out, nl, 2);
        fuzz_put_le(out, 0, 2);
        fuzz_put(out, e[i].name, nl);
        if (e[i].body.len)
            fuzz_put(out, e[i].body.data, e[i].body.len);
    }
    uint64_t cd_offset = out->len;
    for (int i = 0; i < n; i++) {
        size_t nl = strlen(e[i].name);
        fuzz_put_le(&central, 0x02014b50u, 4);
        fuzz_put_le(&central, 20, 2);
        fuzz_put_le(&central, 20, 2);
        fuzz_put_le(&central, 0, 2);
        fuzz_put_le(&central, 0, 2);
        fuzz_put_le(&central, 0, 4);
        fuzz_put_le(&central, 0, 4);
        fuzz_put_le(&central, e[i].body.len, 4);
        fuzz_put_le(&central, e[i].body.len, 4);
        fuzz_put_le(&central, nl, 2);
        fuzz_put_le(&central, 0, 2);
        fuzz_put_le(&central, 0, 2);
        fuzz_put_le(&central, 0, 2);
        fuzz_put_le(&central, 0, 2);
        fuzz_put_le(&central, 0, 4);
        fuzz_put_le(&central, offsets[i], 4);
        fuzz_put(&central, e[i].name, nl);
    }
    fuzz_put(out, central.data, central.len);
    fuzz_put_le(out, 0x06054b50u, 4);
    fuzz_put_le(out, 0, 4);
    fuzz_put_le(out, (uint64_t)n, 2);
    fuzz_put_le(out, (uint64_t)n, 2);
    fuzz_put_le(out, central.len, 4);
    fuzz_put_le(out, cd_offset, 4);
    fuzz_put_le(out, 0, 2);
    free(central.data);
}

/* Decisions -> a torch.save()-shaped archive in out. */
static void build_archive(FuzzSource *s, FuzzBuf *out) {
    ZipEntry entries[16];
    int n_storages = 1 + (int)fuzz_below(s, 4);
    int n_tensors = 1 + (int)fuzz_below(s, 6);
    FuzzBuf *pkl;

    memset(entries, 0, sizeof entries);
    snprintf(entries[0].name, sizeof entries[0].name, "archive/data.pkl");
    pkl = &entries[0].body;

    /* Storages: real bytes (0..255) and a claimed element count that may
     * exceed them; dtype per storage. */
    unsigned storage_dtype[4];
    uint64_t storage_numel[4];
    for (int k = 0; k < n_storages; k++) {
        size_t bytes = fuzz_below(s, 256);
        storage_dtype[k] = fuzz_below(s, 10);
        storage_numel[k] = fuzz_below(s, 4) ? bytes / 4 : fuzz_number(s, 128);
        snprintf(entries[1 + k].name, sizeof entries[1 + k].name, "archive/data/%d", k);
        for (size_t b = 0; b < bytes; b++) {
            uint8_t v = (uint8_t)fuzz_bits(s, 1);
            fuzz_put(&entries[1 + k].body, &v, 1);
        }
    }

    fuzz_put(pkl, "\x80\x02", 2);
    fuzz_put_str(pkl, "ccollections\nOrderedDict\n)R(");
    for (int t = 0; t < n_tensors; t++) {
        int k = (int)fuzz_below(s, (unsigned)n_storages);
        int ndim = (int)fuzz_below(s, 9);
        bool v2 = fuzz_below(s, 8) != 0;
        char name[32], key[8];
        uint64_t shape[8];

        snprintf(name, sizeof name, "t.%d", t);
        pk_str(pkl, name);
        fuzz_put_str(pkl, v2 ? "ctorch._utils\n_rebuild_tensor_v2\n("
                             : "ctorch._utils\n_rebuild_tensor\n(");
        /* the persistent id ('storage', torch.XStorage, key, 'cpu', numel) */
        fuzz_put(pkl, "(", 1);
        pk_str(pkl, "storage");
        fuzz_put_str(pkl, "ctorch\n");
        fuzz_put_str(pkl, storage_names[storage_dtype[k]]);
        fuzz_put(pkl, "\n", 1);
        snprintf(key, sizeof key, "%d", k);
        pk_str(pkl, key);
        pk_str(pkl, "cpu");
        pk_int(pkl, storage_numel[k] & INT64_MAX);
        fuzz_put(pkl, "tQ", 2);
        pk_int(pkl, fuzz_number(s, 16) & INT64_MAX); /* offset */
        fuzz_put(pkl, "(", 1);
        for (int d = 0; d < ndim; d++) {
            shape[d] = fuzz_number(s, 8) & INT64_MAX;
            pk_int(pkl, shape[d]);
        }
        fuzz_put(pkl, "t(", 2);
        /* strides: contiguous, zero, transposed or anything */
        uint64_t expect = 1;
        unsigned mode = fuzz_below(s, 4);
        for (int d = ndim - 1; d >= 0; d--) {
            uint64_t stride = mode == 0   ? expect
                              : mode == 1 ? 0
                                          : fuzz_number(s, 8) & INT64_MAX;
            expect *= shape[d] ? shape[d] : 1;
            shape[d] = stride; /* reuse: pickled in order below */
        }
        for (int d = 0; d < ndim; d++)
            pk_int(pkl, shape[d]);
        fuzz_put(pkl, "t", 1);
        if (v2)
            fuzz_put_str(pkl, "\x89" "ccollections\nOrderedDict\n)R");
        fuzz_put(pkl, "tR", 2);
    }
    fuzz_put_str(pkl, "u.");
    zip_build(out, entries, 1 + n_storages);
    for (int i = 0; i < 1 + n_storages; i++)
        free(entries[i].body.data);
}

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size) {
    FeWeightFile *wf = calloc(1, sizeof *wf);
    FuzzBuf built = {0};
    const uint8_t *file = data;
    size_t file_len = size;
    fe_status st;

    if (!wf)
        return 0;
    fe_set_log_callback(NULL, NULL);
    if (!(size >= 2 && data[0] == 'P' && data[1] == 'K')) {
        FuzzSource s = {data, size, 0};
        build_archive(&s, &built);
        file = built.data;
        file_len = built.len;
    }
    st = fe_pytorch_parse(file, file_len, wf);
    /* Read every byte each entry claims, so a span past the storage shows. */
    for (size_t i = 0; st == FE_OK && i < wf->n_entries; i++) {
        const FeWeightEntry *e = &wf->entries[i];
        volatile uint8_t sink = 0;
        for (size_t b = 0; b < e->nbytes; b++)
            sink ^= ((const uint8_t *)e->data)[b];
        (void)sink;
    }
    fe_weights_close(wf);
    free(built.data);
    return 0;
}
