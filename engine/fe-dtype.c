/* fe-dtype.c - element types and half-precision conversions. */
#include "fe-internal.h"

#include <string.h>

static const struct {
    const char *name;
    size_t size;
} fe_dtypes[FE_DTYPE_COUNT] = {
    [FE_DTYPE_F32] = {"f32", 4},  [FE_DTYPE_F16] = {"f16", 2}, [FE_DTYPE_BF16] = {"bf16", 2},
    [FE_DTYPE_F64] = {"f64", 8},  [FE_DTYPE_I64] = {"i64", 8}, [FE_DTYPE_I32] = {"i32", 4},
    [FE_DTYPE_I16] = {"i16", 2},  [FE_DTYPE_I8] = {"i8", 1},   [FE_DTYPE_U8] = {"u8", 1},
    [FE_DTYPE_BOOL] = {"bool", 1},
};

size_t fe_dtype_size(fe_dtype dtype) {
    return (unsigned)dtype < FE_DTYPE_COUNT ? fe_dtypes[dtype].size : 0;
}

const char *fe_dtype_name(fe_dtype dtype) {
    return (unsigned)dtype < FE_DTYPE_COUNT ? fe_dtypes[dtype].name : "?";
}

static uint32_t fe_float_bits(float f) {
    uint32_t u;
    memcpy(&u, &f, sizeof u);
    return u;
}

static float fe_bits_float(uint32_t u) {
    float f;
    memcpy(&f, &u, sizeof f);
    return f;
}

float fe_f16_to_f32(uint16_t h) {
    uint32_t sign = (uint32_t)(h & 0x8000) << 16;
    uint32_t exp = (h >> 10) & 0x1f;
    uint32_t mant = h & 0x3ff;
    if (exp == 0) {
        /* zero or subnormal: value = mant * 2^-24 */
        float v = (float)mant * (1.0f / 16777216.0f);
        return sign ? -v : v;
    }
    if (exp == 31)
        return fe_bits_float(sign | 0x7f800000u | (mant << 13));
    return fe_bits_float(sign | ((exp + 112) << 23) | (mant << 13));
}

uint16_t fe_f32_to_f16(float f) {
    uint32_t u = fe_float_bits(f);
    uint32_t sign = (u >> 16) & 0x8000;
    int32_t exp = (int32_t)((u >> 23) & 0xff);
    uint32_t mant = u & 0x7fffff;
    if (exp == 0xff)
        return (uint16_t)(sign | 0x7c00 | (mant ? 0x200 : 0));
    int32_t e = exp - 127 + 15;
    if (e >= 31)
        return (uint16_t)(sign | 0x7c00);
    if (e <= 0) {
        if (e < -10)
            return (uint16_t)sign;
        mant |= 0x800000;
        uint32_t shift = (uint32_t)(14 - e);
        uint32_t half = mant >> shift;
        uint32_t rem = mant & ((1u << shift) - 1);
        uint32_t halfway = 1u << (shift - 1);
        if (rem > halfway || (rem == halfway && (half & 1)))
            half++;
        return (uint16_t)(sign | half);
    }
    uint32_t half = sign | ((uint32_t)e << 10) | (mant >> 13);
    uint32_t rem = mant & 0x1fff;
    if (rem > 0x1000 || (rem == 0x1000 && (half & 1)))
        half++; /* may carry into the exponent: that is the correct rounding */
    return (uint16_t)half;
}

float fe_bf16_to_f32(uint16_t b) { return fe_bits_float((uint32_t)b << 16); }

uint16_t fe_f32_to_bf16(float f) {
    uint32_t u = fe_float_bits(f);
    if ((u & 0x7fffffff) > 0x7f800000)
        return (uint16_t)((u >> 16) | 0x40); /* quiet NaN */
    u += 0x7fff + ((u >> 16) & 1);
    return (uint16_t)(u >> 16);
}
