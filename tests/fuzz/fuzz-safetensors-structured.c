/* fuzz-safetensors-structured.c - structure-aware libFuzzer target for
 * .safetensors files: an input that does not look like one (a plausible
 * header length, then '{') is read as decisions (fuzz-structured.h) that
 * build a well-formed JSON header whose dtypes, shapes and data_offsets are
 * adversarial (products that wrap, spans past the data, overlaps, reversed
 * spans) over a data section of chosen length. A real file is parsed as it
 * is, so the bad-input corpus seeds this target too. */
#include "fe-internal.h"
#include "fe-weights-private.h"
#include "fuzz-structured.h"

#include <inttypes.h>
#include <stdio.h>

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size);

static const char *const dtype_names[] = {
    "F32", "F16", "BF16", "F64", "I64", "I32", "I16", "I8", "U8", "BOOL", "F8_E4M3", "",
};

static void put_u64(FuzzBuf *b, uint64_t v, bool negative) {
    char text[32];
    snprintf(text, sizeof text, negative ? "-%" PRIu64 : "%" PRIu64, v);
    fuzz_put_str(b, text);
}

static void build_file(FuzzSource *s, FuzzBuf *out) {
    FuzzBuf header = {0};
    int n = (int)fuzz_below(s, 6);
    uint64_t data_len = fuzz_below(s, 4) ? fuzz_bits(s, 1) : fuzz_bits(s, 2) % 4096;
    uint64_t cursor = 0;

    fuzz_put(&header, "{", 1);
    if (fuzz_below(s, 2))
        fuzz_put_str(&header, "\"__metadata__\": {\"k\": \"v\"}");
    for (int t = 0; t < n; t++) {
        unsigned dtype = fuzz_below(s, sizeof dtype_names / sizeof dtype_names[0]);
        int ndim = (int)fuzz_below(s, 10);
        uint64_t begin, end;
        char name[32];

        if (header.len > 1)
            fuzz_put(&header, ", ", 2);
        snprintf(name, sizeof name, "\"t.%d\": {", fuzz_below(s, 8) ? t : 0); /* duplicates too */
        fuzz_put_str(&header, name);
        fuzz_put_str(&header, "\"dtype\": \"");
        fuzz_put_str(&header, dtype_names[dtype]);
        fuzz_put_str(&header, "\", \"shape\": [");
        for (int d = 0; d < ndim; d++) {
            if (d)
                fuzz_put(&header, ", ", 2);
            put_u64(&header, fuzz_number(s, 8), fuzz_below(s, 16) == 0);
        }
        fuzz_put_str(&header, "], \"data_offsets\": [");
        /* next to the previous tensor, overlapping it, or anywhere */
        switch (fuzz_below(s, 3)) {
        case 0: begin = cursor; break;
        case 1: begin = cursor ? cursor - 1 - fuzz_below(s, (unsigned)(cursor < 255 ? cursor : 255)) : 0; break;
        default: begin = fuzz_number(s, data_len + 1); break;
        }
        end = fuzz_below(s, 2) ? begin + fuzz_number(s, 64) : fuzz_number(s, data_len + 1);
        put_u64(&header, begin, false);
        fuzz_put(&header, ", ", 2);
        put_u64(&header, end, fuzz_below(s, 16) == 0);
        fuzz_put_str(&header, "]}");
        if (end > cursor && end - cursor < (1u << 20))
            cursor = end;
    }
    fuzz_put(&header, "}", 1);
    /* the reference writer pads the header with spaces to 8 bytes */
    while (header.len % 8)
        fuzz_put(&header, " ", 1);
    fuzz_put_le(out, fuzz_below(s, 32) ? header.len : fuzz_number(s, header.len + 16), 8);
    fuzz_put(out, header.data, header.len);
    for (uint64_t i = 0; i < data_len; i++) {
        uint8_t v = (uint8_t)fuzz_bits(s, 1);
        fuzz_put(out, &v, 1);
    }
    free(header.data);
}

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size) {
    FeWeightFile *wf = calloc(1, sizeof *wf);
    FuzzBuf built = {0};
    const uint8_t *file = data;
    size_t file_len = size;
    uint64_t header_len = 0;
    fe_status st;

    if (!wf)
        return 0;
    fe_set_log_callback(NULL, NULL);
    for (int i = 7; size >= 9 && i >= 0; i--)
        header_len = (header_len << 8) | data[i];
    if (!(size >= 9 && data[8] == '{' && header_len <= size - 8)) {
        FuzzSource s = {data, size, 0};
        build_file(&s, &built);
        file = built.data;
        file_len = built.len;
    }
    st = fe_safetensors_parse(file, file_len, wf);
    for (size_t i = 0; st == FE_OK && i < wf->n_entries; i++) {
        float *f = NULL;
        if (fe_weights_to_f32(&wf->entries[i], &f) == FE_OK)
            free(f);
    }
    if (st == FE_OK)
        st = fe_weights_apply_metadata(wf);
    fe_weights_close(wf);
    free(built.data);
    return 0;
}
