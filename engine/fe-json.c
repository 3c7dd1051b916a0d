/* fe-json.c - strict JSON for model headers, configs and vocabularies. */
#include "fe-json.h"

#include <locale.h>
#include <math.h>
#include <pthread.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

/* A hostile "[0,0,0,...]" would otherwise cost ~100 bytes of tree per input
 * byte; a real safetensors header has a few nodes per tensor. */
#define FE_JSON_MAX_NODES (1u << 20)
#define FE_JSON_MAX_NUMBER_CHARS 128

typedef struct {
    const char *text;
    size_t len;
    size_t pos;
    const char *what;
    int depth;
    size_t n_nodes;
    bool failed;
} FeJsonParser;

static locale_t fe_json_c_locale;
static pthread_once_t fe_json_locale_once = PTHREAD_ONCE_INIT;

/* strtod follows LC_NUMERIC, and the GTK app calls setlocale(LC_ALL, ""): in a
 * German locale "1e-5" would still parse but "0.55" would stop at the '.'. */
static void fe_json_init_locale(void) {
    fe_json_c_locale = newlocale(LC_ALL_MASK, "C", (locale_t)0);
}

static fe_status fe_json_fail(FeJsonParser *p, const char *reason) {
    size_t line = 1, column = 1;
    size_t end = p->pos < p->len ? p->pos : p->len;
    for (size_t i = 0; i < end; i++) {
        if (p->text[i] == '\n') {
            line++;
            column = 1;
        } else {
            column++;
        }
    }
    p->failed = true;
    return fe_set_error(FE_ERR_FORMAT, "%s: invalid JSON at line %zu column %zu: %s", p->what,
                        line, column, reason);
}

const char *fe_json_type_name(fe_json_type type) {
    switch (type) {
    case FE_JSON_NULL: return "null";
    case FE_JSON_BOOL: return "a boolean";
    case FE_JSON_NUMBER: return "a number";
    case FE_JSON_STRING: return "a string";
    case FE_JSON_ARRAY: return "an array";
    case FE_JSON_OBJECT: return "an object";
    default: return "?";
    }
}

static void fe_json_clear(FeJson *j) {
    free(j->string);
    for (size_t i = 0; i < j->n_items; i++) {
        fe_json_clear(&j->items[i]);
        if (j->keys)
            free(j->keys[i]);
    }
    free(j->items);
    free(j->keys);
    memset(j, 0, sizeof *j);
}

void fe_json_free(FeJson *json) {
    if (!json)
        return;
    fe_json_clear(json);
    free(json);
}

const FeJson *fe_json_get(const FeJson *object, const char *key) {
    if (!object || object->type != FE_JSON_OBJECT)
        return NULL;
    for (size_t i = 0; i < object->n_items; i++)
        if (strcmp(object->keys[i], key) == 0)
            return &object->items[i];
    return NULL;
}

static void fe_json_skip_ws(FeJsonParser *p) {
    while (p->pos < p->len) {
        char c = p->text[p->pos];
        if (c != ' ' && c != '\t' && c != '\n' && c != '\r')
            break;
        p->pos++;
    }
}

static bool fe_json_literal(FeJsonParser *p, const char *word) {
    size_t n = strlen(word);
    if (p->len - p->pos < n || memcmp(p->text + p->pos, word, n) != 0)
        return false;
    p->pos += n;
    return true;
}

typedef struct {
    char *data;
    size_t len, cap;
} FeJsonBuf;

static bool fe_json_buf_put(FeJsonBuf *b, const char *bytes, size_t n) {
    if (b->len + n + 1 > b->cap) {
        size_t cap = b->cap ? b->cap : 16;
        char *grown;
        while (cap < b->len + n + 1)
            cap *= 2;
        grown = realloc(b->data, cap);
        if (!grown)
            return false;
        b->data = grown;
        b->cap = cap;
    }
    memcpy(b->data + b->len, bytes, n);
    b->len += n;
    b->data[b->len] = '\0';
    return true;
}

static int fe_json_hex4(const char *s) {
    int v = 0;
    for (int i = 0; i < 4; i++) {
        char c = s[i];
        v <<= 4;
        if (c >= '0' && c <= '9')
            v |= c - '0';
        else if (c >= 'a' && c <= 'f')
            v |= c - 'a' + 10;
        else if (c >= 'A' && c <= 'F')
            v |= c - 'A' + 10;
        else
            return -1;
    }
    return v;
}

static size_t fe_json_utf8_encode(uint32_t cp, char out[4]) {
    if (cp < 0x80) {
        out[0] = (char)cp;
        return 1;
    }
    if (cp < 0x800) {
        out[0] = (char)(0xC0 | (cp >> 6));
        out[1] = (char)(0x80 | (cp & 0x3F));
        return 2;
    }
    if (cp < 0x10000) {
        out[0] = (char)(0xE0 | (cp >> 12));
        out[1] = (char)(0x80 | ((cp >> 6) & 0x3F));
        out[2] = (char)(0x80 | (cp & 0x3F));
        return 3;
    }
    out[0] = (char)(0xF0 | (cp >> 18));
    out[1] = (char)(0x80 | ((cp >> 12) & 0x3F));
    out[2] = (char)(0x80 | ((cp >> 6) & 0x3F));
    out[3] = (char)(0x80 | (cp & 0x3F));
    return 4;
}

/* Length of the well-formed UTF-8 sequence at s (at most avail bytes), or 0. */
static size_t fe_json_utf8_valid(const unsigned char *s, size_t avail) {
    uint32_t cp;
    size_t n;
    if (s[0] < 0x80)
        return 1;
    if (s[0] >= 0xC2 && s[0] <= 0xDF) {
        n = 2;
        cp = s[0] & 0x1F;
    } else if (s[0] >= 0xE0 && s[0] <= 0xEF) {
        n = 3;
        cp = s[0] & 0x0F;
    } else if (s[0] >= 0xF0 && s[0] <= 0xF4) {
        n = 4;
        cp = s[0] & 0x07;
    } else {
        return 0;
    }
    if (avail < n)
        return 0;
    for (size_t i = 1; i < n; i++) {
        if ((s[i] & 0xC0) != 0x80)
            return 0;
        cp = (cp << 6) | (s[i] & 0x3F);
    }
    /* overlong forms, UTF-16 surrogates and code points past U+10FFFF */
    if ((n == 3 && cp < 0x800) || (n == 4 && cp < 0x10000) || cp > 0x10FFFF ||
        (cp >= 0xD800 && cp <= 0xDFFF))
        return 0;
    return n;
}

static fe_status fe_json_parse_string(FeJsonParser *p, char **out, size_t *out_len) {
    FeJsonBuf buf = {0};
    p->pos++; /* opening quote */
    if (!fe_json_buf_put(&buf, "", 0))
        return fe_set_error(FE_ERR_OUT_OF_MEMORY, "%s: out of memory reading JSON", p->what);
    for (;;) {
        unsigned char c;
        size_t start;
        if (p->pos >= p->len) {
            free(buf.data);
            return fe_json_fail(p, "unterminated string");
        }
        c = (unsigned char)p->text[p->pos];
        if (c == '"') {
            p->pos++;
            break;
        }
        if (c < 0x20) {
            free(buf.data);
            return fe_json_fail(p, "control character in string");
        }
        if (c == '\\') {
            char tmp[4];
            size_t n = 1;
            if (p->pos + 1 >= p->len) {
                free(buf.data);
                return fe_json_fail(p, "unterminated string");
            }
            switch (p->text[p->pos + 1]) {
            case '"': tmp[0] = '"'; break;
            case '\\': tmp[0] = '\\'; break;
            case '/': tmp[0] = '/'; break;
            case 'b': tmp[0] = '\b'; break;
            case 'f': tmp[0] = '\f'; break;
            case 'n': tmp[0] = '\n'; break;
            case 'r': tmp[0] = '\r'; break;
            case 't': tmp[0] = '\t'; break;
            case 'u': {
                int hi = p->len - p->pos >= 6 ? fe_json_hex4(p->text + p->pos + 2) : -1;
                uint32_t cp;
                if (hi < 0) {
                    free(buf.data);
                    return fe_json_fail(p, "bad \\u escape");
                }
                cp = (uint32_t)hi;
                if (hi >= 0xDC00 && hi <= 0xDFFF) {
                    free(buf.data);
                    return fe_json_fail(p, "lone low surrogate in \\u escape");
                }
                if (hi >= 0xD800 && hi <= 0xDBFF) {
                    int lo = (p->len - p->pos >= 12 && p->text[p->pos + 6] == '\\' &&
                              p->text[p->pos + 7] == 'u')
                                 ? fe_json_hex4(p->text + p->pos + 8)
                                 : -1;
                    if (lo < 0xDC00 || lo > 0xDFFF) {
                        free(buf.data);
                        return fe_json_fail(p, "high surrogate without low surrogate");
                    }
                    cp = 0x10000 + (((uint32_t)hi - 0xD800) << 10) + ((uint32_t)lo - 0xDC00);
                    p->pos += 6;
                }
                if (cp == 0) {
                    free(buf.data);
                    return fe_json_fail(p, "\\u0000 is not allowed in strings");
                }
                n = fe_json_utf8_encode(cp, tmp);
                p->pos += 4;
                break;
            }
            default:
                free(buf.data);
                return fe_json_fail(p, "unknown escape in string");
            }
            p->pos += 2;
            if (!fe_json_buf_put(&buf, tmp, n)) {
                free(buf.data);
                return fe_set_error(FE_ERR_OUT_OF_MEMORY, "%s: out of memory reading JSON",
                                    p->what);
            }
            continue;
        }
        /* Copy a run of plain bytes at once, validating UTF-8 on the way. */
        start = p->pos;
        while (p->pos < p->len) {
            unsigned char d = (unsigned char)p->text[p->pos];
            size_t n;
            if (d == '"' || d == '\\' || d < 0x20)
                break;
            n = fe_json_utf8_valid((const unsigned char *)p->text + p->pos,
                                          p->len - p->pos);
            if (n == 0) {
                free(buf.data);
                return fe_json_fail(p, "invalid UTF-8 in string");
            }
            p->pos += n;
        }
        if (!fe_json_buf_put(&buf, p->text + start, p->pos - start)) {
            free(buf.data);
            return fe_set_error(FE_ERR_OUT_OF_MEMORY, "%s: out of memory reading JSON", p->what);
        }
    }
    *out = buf.data;
    *out_len = buf.len;
    return FE_OK;
}

static fe_status fe_json_parse_number(FeJsonParser *p, FeJson *j) {
    size_t start = p->pos;
    bool integral = true;
    bool overflow = false;
    bool negative = false;
    uint64_t magnitude = 0;
    char tmp[FE_JSON_MAX_NUMBER_CHARS + 1];
    char *end = NULL;

    if (p->text[p->pos] == '-') {
        negative = true;
        p->pos++;
    }
    if (p->pos >= p->len || p->text[p->pos] < '0' || p->text[p->pos] > '9')
        return fe_json_fail(p, "expected a digit");
    if (p->text[p->pos] == '0') {
        p->pos++;
        if (p->pos < p->len && p->text[p->pos] >= '0' && p->text[p->pos] <= '9')
            return fe_json_fail(p, "leading zero in number");
    } else {
        while (p->pos < p->len && p->text[p->pos] >= '0' && p->text[p->pos] <= '9') {
            unsigned d = (unsigned)(p->text[p->pos] - '0');
            if (magnitude > (UINT64_MAX - d) / 10)
                overflow = true;
            else
                magnitude = magnitude * 10 + d;
            p->pos++;
        }
    }
    if (p->pos < p->len && p->text[p->pos] == '.') {
        integral = false;
        p->pos++;
        if (p->pos >= p->len || p->text[p->pos] < '0' || p->text[p->pos] > '9')
            return fe_json_fail(p, "expected a digit after '.'");
        while (p->pos < p->len && p->text[p->pos] >= '0' && p->text[p->pos] <= '9')
            p->pos++;
    }
    if (p->pos < p->len && (p->text[p->pos] == 'e' || p->text[p->pos] == 'E')) {
        integral = false;
        p->pos++;
        if (p->pos < p->len && (p->text[p->pos] == '+' || p->text[p->pos] == '-'))
            p->pos++;
        if (p->pos >= p->len || p->text[p->pos] < '0' || p->text[p->pos] > '9')
            return fe_json_fail(p, "expected a digit in exponent");
        while (p->pos < p->len && p->text[p->pos] >= '0' && p->text[p->pos] <= '9')
            p->pos++;
    }
    if (p->pos - start > FE_JSON_MAX_NUMBER_CHARS)
        return fe_json_fail(p, "number too long");
    memcpy(tmp, p->text + start, p->pos - start);
    tmp[p->pos - start] = '\0';

    pthread_once(&fe_json_locale_once, fe_json_init_locale);
    if (fe_json_c_locale == (locale_t)0)
        return fe_set_error(FE_ERR_OUT_OF_MEMORY, "%s: cannot create the C locale", p->what);
    j->type = FE_JSON_NUMBER;
    j->number = strtod_l(tmp, &end, fe_json_c_locale);
    if (!isfinite(j->number))
        return fe_json_fail(p, "number out of range");
    if (integral && !overflow &&
        (negative ? magnitude <= (uint64_t)INT64_MAX + 1 : magnitude <= (uint64_t)INT64_MAX)) {
        j->is_integer = true;
        j->integer = negative ? (int64_t)(0 - magnitude) : (int64_t)magnitude;
    }
    return FE_OK;
}

static fe_status fe_json_parse_value(FeJsonParser *p, FeJson *j);

static fe_status fe_json_append(FeJsonParser *p, FeJson *parent, size_t *cap, FeJson *child,
                                char *key) {
    if (parent->n_items == *cap) {
        size_t ncap = *cap ? *cap * 2 : 4;
        FeJson *items = realloc(parent->items, ncap * sizeof *items);
        if (!items)
            return fe_set_error(FE_ERR_OUT_OF_MEMORY, "%s: out of memory reading JSON", p->what);
        parent->items = items;
        if (parent->type == FE_JSON_OBJECT) {
            char **keys = realloc(parent->keys, ncap * sizeof *keys);
            if (!keys)
                return fe_set_error(FE_ERR_OUT_OF_MEMORY, "%s: out of memory reading JSON",
                                    p->what);
            parent->keys = keys;
        }
        *cap = ncap;
    }
    parent->items[parent->n_items] = *child;
    if (parent->type == FE_JSON_OBJECT)
        parent->keys[parent->n_items] = key;
    parent->n_items++;
    return FE_OK;
}

static fe_status fe_json_parse_container(FeJsonParser *p, FeJson *j, bool object) {
    size_t cap = 0;
    j->type = object ? FE_JSON_OBJECT : FE_JSON_ARRAY;
    if (++p->depth > FE_JSON_MAX_DEPTH)
        return fe_json_fail(p, "nested too deeply");
    p->pos++;
    fe_json_skip_ws(p);
    if (p->pos < p->len && p->text[p->pos] == (object ? '}' : ']')) {
        p->pos++;
        p->depth--;
        return FE_OK;
    }
    for (;;) {
        char *key = NULL;
        size_t key_len = 0;
        FeJson child = {0};
        fe_status st;

        fe_json_skip_ws(p);
        if (object) {
            if (p->pos >= p->len || p->text[p->pos] != '"')
                return fe_json_fail(p, "expected a string key");
            FE_TRY(fe_json_parse_string(p, &key, &key_len));
            fe_json_skip_ws(p);
            if (p->pos >= p->len || p->text[p->pos] != ':') {
                free(key);
                return fe_json_fail(p, "expected ':' after key");
            }
            p->pos++;
        }
        st = fe_json_parse_value(p, &child);
        if (st == FE_OK)
            st = fe_json_append(p, j, &cap, &child, key);
        if (st != FE_OK) {
            fe_json_clear(&child);
            free(key);
            return st;
        }
        fe_json_skip_ws(p);
        if (p->pos >= p->len)
            return fe_json_fail(p, object ? "unterminated object" : "unterminated array");
        if (p->text[p->pos] == ',') {
            p->pos++;
            continue;
        }
        if (p->text[p->pos] == (object ? '}' : ']')) {
            p->pos++;
            break;
        }
        return fe_json_fail(p, object ? "expected ',' or '}'" : "expected ',' or ']'");
    }
    p->depth--;
    return FE_OK;
}

static fe_status fe_json_parse_value(FeJsonParser *p, FeJson *j) {
    fe_status st = FE_OK;
    memset(j, 0, sizeof *j);
    fe_json_skip_ws(p);
    if (p->pos >= p->len)
        return fe_json_fail(p, "unexpected end of text");
    if (++p->n_nodes > FE_JSON_MAX_NODES)
        return fe_json_fail(p, "too many values");
    j->src_begin = p->pos;
    switch (p->text[p->pos]) {
    case '{': st = fe_json_parse_container(p, j, true); break;
    case '[': st = fe_json_parse_container(p, j, false); break;
    case '"':
        j->type = FE_JSON_STRING;
        st = fe_json_parse_string(p, &j->string, &j->string_len);
        break;
    case 't':
    case 'f':
    case 'n':
        if (fe_json_literal(p, "true")) {
            j->type = FE_JSON_BOOL;
            j->boolean = true;
        } else if (fe_json_literal(p, "false")) {
            j->type = FE_JSON_BOOL;
        } else if (fe_json_literal(p, "null")) {
            j->type = FE_JSON_NULL;
        } else {
            st = fe_json_fail(p, "unknown literal");
        }
        break;
    default:
        if (p->text[p->pos] == '-' || (p->text[p->pos] >= '0' && p->text[p->pos] <= '9'))
            st = fe_json_parse_number(p, j);
        else
            st = fe_json_fail(p, "unexpected character");
        break;
    }
    j->src_end = p->pos;
    return st;
}

fe_status fe_json_parse(const char *text, size_t len, const char *what, FeJson **out) {
    FeJsonParser p = {.text = text, .len = len, .what = what ? what : "JSON"};
    FeJson *root;
    fe_status st;

    *out = NULL;
    if (!text && len)
        return fe_set_error(FE_ERR_INVALID_ARGUMENT, "%s: no text", p.what);
    root = calloc(1, sizeof *root);
    if (!root)
        return fe_set_error(FE_ERR_OUT_OF_MEMORY, "%s: out of memory reading JSON", p.what);
    st = fe_json_parse_value(&p, root);
    if (st == FE_OK) {
        fe_json_skip_ws(&p);
        if (p.pos != len)
            st = fe_json_fail(&p, "text after the JSON value");
    }
    if (st != FE_OK) {
        fe_json_free(root);
        return st;
    }
    *out = root;
    return FE_OK;
}
