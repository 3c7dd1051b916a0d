/* fe-base.h - what every part of the engine (and the CUDA module) shares:
 * the error convention and the element types. Not installed. */
#ifndef FE_BASE_H
#define FE_BASE_H

#include "fe.h"

#include <stdarg.h>
#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>

/* ------------------------------------------------------------------------ */
/* Errors: every failing internal function sets the thread's message and
 * returns the status, so callers just propagate:  FE_TRY(fe_x(...));        */

fe_status fe_set_error(fe_status status, const char *fmt, ...)
    __attribute__((format(printf, 2, 3)));
/* Prefix the current message: "loading x.safetensors: <old message>". */
fe_status fe_prefix_error(fe_status status, const char *fmt, ...)
    __attribute__((format(printf, 2, 3)));
void fe_clear_error(void);
void fe_log(fe_log_level level, const char *fmt, ...) __attribute__((format(printf, 2, 3)));

#define FE_TRY(expr)                                                           \
    do {                                                                       \
        fe_status fe__st = (expr);                                             \
        if (fe__st != FE_OK)                                                   \
            return fe__st;                                                     \
    } while (0)

/* ------------------------------------------------------------------------ */
/* Data types                                                               */

typedef enum {
    FE_DTYPE_F32 = 0,
    FE_DTYPE_F16,
    FE_DTYPE_BF16,
    FE_DTYPE_F64,
    FE_DTYPE_I64,
    FE_DTYPE_I32,
    FE_DTYPE_I16,
    FE_DTYPE_I8,
    FE_DTYPE_U8,
    FE_DTYPE_BOOL,
    FE_DTYPE_COUNT
} fe_dtype;

size_t fe_dtype_size(fe_dtype dtype);
const char *fe_dtype_name(fe_dtype dtype);      /* "f32", "f16", ...           */
float fe_f16_to_f32(uint16_t h);
uint16_t fe_f32_to_f16(float f);
float fe_bf16_to_f32(uint16_t b);
uint16_t fe_f32_to_bf16(float f);               /* round to nearest even      */

#endif /* FE_BASE_H */
