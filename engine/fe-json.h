/* fe-json.h - the weights layer's strict JSON reader (internal, not installed).
 *
 * The engine may not use GLib, and model files come from anywhere, so this is
 * a small RFC 8259 parser that accepts nothing else: no comments, no trailing
 * commas, no NaN, valid UTF-8 only, bounded nesting depth. Object keys are
 * kept in file order and duplicates are kept too: callers that care (tensor
 * names, config keys) check them with a message that names the real problem.
 */
#ifndef FE_JSON_H
#define FE_JSON_H

#include "fe-internal.h"

/* Deeper nesting than this is refused; formulate files need depth 3. */
#define FE_JSON_MAX_DEPTH 64

typedef enum {
    FE_JSON_NULL = 0,
    FE_JSON_BOOL,
    FE_JSON_NUMBER,
    FE_JSON_STRING,
    FE_JSON_ARRAY,
    FE_JSON_OBJECT,
} fe_json_type;

typedef struct FeJson FeJson;
struct FeJson {
    fe_json_type type;
    bool boolean;
    double number;
    bool is_integer;          /* written without fraction/exponent, fits int64 */
    int64_t integer;
    char *string;             /* NUL-terminated UTF-8; "\u0000" is refused    */
    size_t string_len;
    FeJson *items;            /* array elements / object values               */
    char **keys;              /* object keys, parallel to items               */
    size_t n_items;
    size_t src_begin, src_end; /* byte span of this value in the source text  */
};

/* Parses len bytes of text. On error the message reads
 * "<what>: invalid JSON at line L column C: <reason>". */
fe_status fe_json_parse(const char *text, size_t len, const char *what, FeJson **out);
void fe_json_free(FeJson *json);

/* First member named key of an object, or NULL. */
const FeJson *fe_json_get(const FeJson *object, const char *key);
const char *fe_json_type_name(fe_json_type type);

#endif /* FE_JSON_H */
