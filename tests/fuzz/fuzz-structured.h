/* fuzz-structured.h - the byte source of the structure-aware fuzzers: the
 * input is read as a string of decisions (how many tensors, which dtype,
 * which shape...), so every input builds a well-formed container whose
 * numbers are the hostile part. Header-only, shared by two targets. */
#ifndef FUZZ_STRUCTURED_H
#define FUZZ_STRUCTURED_H

#include <stddef.h>
#include <stdint.h>
#include <stdlib.h>
#include <string.h>

typedef struct {
    const uint8_t *data;
    size_t len, pos;
} FuzzSource;

static uint64_t fuzz_bits(FuzzSource *s, int bytes) {
    uint64_t v = 0;
    for (int i = 0; i < bytes; i++)
        v = (v << 8) | (s->pos < s->len ? s->data[s->pos++] : 0);
    return v;
}

static unsigned fuzz_below(FuzzSource *s, unsigned n) {
    return n ? (unsigned)(fuzz_bits(s, 1) % n) : 0;
}

/* A size, stride or offset: mostly the values where arithmetic breaks
 * (0, 1, powers of two whose products wrap, the int64 edge), sometimes small,
 * sometimes any 64-bit value. */
static uint64_t fuzz_number(FuzzSource *s, uint64_t small_bound) {
    static const uint64_t edges[] = {
        0, 1, 2, 3, 7, 8, 16, 255, 256, 1u << 14, 1u << 16, (1ull << 31) - 1, 1ull << 31,
        1ull << 32, (1ull << 32) - 1, 1ull << 40, 1ull << 62, (1ull << 63) - 1, 1ull << 63,
        UINT64_MAX,
    };
    switch (fuzz_below(s, 4)) {
    case 0:
    case 1: return edges[fuzz_below(s, sizeof edges / sizeof edges[0])];
    case 2: return small_bound ? fuzz_bits(s, 1) % small_bound : 0;
    default: return fuzz_bits(s, 8);
    }
}

typedef struct {
    uint8_t *data;
    size_t len, cap;
} FuzzBuf;

static void fuzz_put(FuzzBuf *b, const void *p, size_t n) {
    if (b->len + n > b->cap) {
        size_t cap = b->cap ? b->cap * 2 : 256;
        while (cap < b->len + n)
            cap *= 2;
        uint8_t *grown = realloc(b->data, cap);
        if (!grown)
            abort(); /* the harness itself, not the code under test */
        b->data = grown;
        b->cap = cap;
    }
    memcpy(b->data + b->len, p, n);
    b->len += n;
}

static void fuzz_put_le(FuzzBuf *b, uint64_t v, int bytes) {
    for (int i = 0; i < bytes; i++) {
        uint8_t c = (uint8_t)(v >> (8 * i));
        fuzz_put(b, &c, 1);
    }
}

static void fuzz_put_str(FuzzBuf *b, const char *s) { fuzz_put(b, s, strlen(s)); }

#endif
