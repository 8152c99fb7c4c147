/* Dynamic row quantization to INT8 (docs/numerics.md "Row quantization"). The Helium body (BERTL14_USE_MVE)
 * takes max |x| eight values a VMAXAV and quantizes four a vector (the DSP body's SMMULR is VRMULH). */
#include "bertl14_kernels.h"
#include "bertl14_acle_emul.h"
#if defined(BERTL14_USE_MVE)
#include "bertl14_mve.h"
#endif

/* max |x_i| of n int16 values (32768 for -32768). */
static int32_t max_abs_s16(const int16_t *x, uint32_t n)
{
#if defined(BERTL14_USE_MVE)
    uint32_t m = 0, i = 0;                                     /* VMAXAV: |x| as unsigned, so |-32768| = 32768 */
    for (; i + 8u <= n; i += 8u) {
        m = vmaxavq_s16((uint16_t)m, vldrhq_s16(x + i));
    }
    if (i < n) {
        m = vmaxavq_p_s16((uint16_t)m, vldrhq_z_s16(x + i, vctp16q(n - i)), vctp16q(n - i));
    }
    return (int32_t)m;
#else
    int32_t hi = 0, lo = 0;
    uint32_t i = 0;
#if defined(BERTL14_USE_DSP)
    if (!((uintptr_t)x & 3u)) {                                /* two lanes a word: SSUB16 + SEL */
        const int16_t *const xa = BERTL14_ALIGNED4(x);
        uint32_t mx = 0, mn = 0;
        for (; i + 2u <= n; i += 2u) {
            const uint32_t w = bertl14_ld32(xa + i);
            mx = bertl14_smax16x2(mx, w);
            mn = bertl14_smin16x2(mn, w);
        }
        hi = (int16_t)(mx & 0xFFFFu) > (int16_t)(mx >> 16) ? (int16_t)(mx & 0xFFFFu) : (int16_t)(mx >> 16);
        lo = (int16_t)(mn & 0xFFFFu) < (int16_t)(mn >> 16) ? (int16_t)(mn & 0xFFFFu) : (int16_t)(mn >> 16);
    }
#endif
    for (; i < n; i++) {
        hi = x[i] > hi ? x[i] : hi;
        lo = x[i] < lo ? x[i] : lo;
    }
    return hi > -lo ? hi : -lo;
#endif
}

static inline uint32_t scale_of(int32_t m)
{
    const uint32_t s = ((uint32_t)m * 256u + 126u) / 127u;    /* ceil(256 m / 127) */
    return s ? s : 1u;
}

uint32_t bertl14_row_scale_s16(const int16_t *x, uint32_t n)
{
    return scale_of(max_abs_s16(x, n));
}

/* inv = div_round(2^32, s) with 32-bit divisions (UDIV): 2^32 = Q s + R + 1 with Q = (2^32 - 1) / s,
 * R = (2^32 - 1) % s, so (2^32 + s/2) / s = Q + (R + 1 + s/2) / s, the last quotient 0 or 1.
 * s < 3 only for an all-zero row (m = 0), whose q are 0 whatever inv: 0 then, so inv fits int32. */
static inline int32_t inv_scale(uint32_t s)
{
    if (s < 3u) {
        return 0;
    }
    const uint32_t q = 0xFFFFFFFFu / s, r = 0xFFFFFFFFu - q * s;
    return (int32_t)(q + ((uint64_t)r + 1u + s / 2u >= s ? 1u : 0u));
}

#if !defined(BERTL14_USE_MVE)
/* q = sat8(rsr(x * inv, 24)); |x * inv| < 2^47: one SMULL, |rsr| < 2^23 */
static inline int32_t quantize_one(int32_t x, int32_t inv)
{
#if defined(BERTL14_USE_DSP)
    /* |x << 8| <= 2^23, inv < 2^31: (x 2^8 inv + 2^31) >> 32 = (x inv + 2^23) >> 24, one SMMULR */
    return bertl14_ssat(bertl14_smmulr(x * 256, inv), 8);
#else
    return bertl14_sat8(bertl14_rsr_mul(x, inv, 24));
#endif
}
#endif

#if defined(BERTL14_USE_MVE)
/* quantize_one of cnt (1..4) values: sat8(VRMULH(x * 2^8, inv)), as the DSP body's SMMULR */
static inline __attribute__((always_inline)) int32x4_t quantize4_mve(const int16_t *x, int32_t inv, uint32_t cnt)
{
    const int32x4_t v = cnt == 4u ? vldrhq_s32(x) : vldrhq_z_s32(x, vctp32q(cnt));
    const int32x4_t q = vrmulhq_s32(vshlq_n_s32(v, 8), vdupq_n_s32(inv));
    return vmaxq_s32(vminq_s32(q, vdupq_n_s32(127)), vdupq_n_s32(-128));
}

static inline __attribute__((always_inline)) void store16_mve(int16_t *p, int32x4_t q, uint32_t cnt)
{
    if (cnt == 4u) {
        vstrhq_s32(p, q);
    } else {
        vstrhq_p_s32(p, q, vctp32q(cnt));
    }
}

static inline __attribute__((always_inline)) void store8_mve(int8_t *p, int32x4_t q, uint32_t cnt)
{
    if (cnt == 4u) {
        vstrbq_s32(p, q);
    } else {
        vstrbq_p_s32(p, q, vctp32q(cnt));
    }
}
#endif

uint32_t bertl14_quantize_row_s8(const int16_t *x, uint32_t n, int8_t *q8, int16_t *q16)
{
    return bertl14_quantize_row_block_s8(x, n, q8, q16, 0, 1);
}

/* Token t's values in a block of `tokens` (bertl14_block_index): chunks of four, 4 * tokens apart,
 * then the dense tail. */
uint32_t bertl14_quantize_row_block_s8(const int16_t *x, uint32_t n, int8_t *q8, int16_t *blk, uint32_t t,
                                       uint32_t tokens)
{
    const uint32_t s = bertl14_row_scale_s16(x, n);
    const int32_t inv = inv_scale(s);
#if defined(BERTL14_USE_MVE)
    const uint32_t n4 = n & ~3u;
    int16_t *p = blk ? blk + 4u * t : NULL;
    for (uint32_t i = 0; i < n4; i += 4u) {                    /* four values (one chunk of the block) a vector */
        const int32x4_t q = quantize4_mve(x + i, inv, 4u);
        if (q8) {
            store8_mve(q8 + i, q, 4u);
        }
        if (p) {
            store16_mve(p, q, 4u);
            p += 4u * tokens;
        }
    }
    if (n4 < n) {                                              /* the tail: dense after the block's chunks */
        const int32x4_t q = quantize4_mve(x + n4, inv, n - n4);
        if (q8) {
            store8_mve(q8 + n4, q, n - n4);
        }
        if (blk) {
            store16_mve(blk + n4 * tokens + t * (n - n4), q, n - n4);
        }
    }
#else
    if (q8) {
        for (uint32_t i = 0; i < n; i++) {
            q8[i] = (int8_t)quantize_one(x[i], inv);
        }
    }
    if (blk) {
        const uint32_t n4 = n & ~3u;
        int16_t *p = blk + 4u * t;
        for (uint32_t i = 0; i < n4; i += 4u, p += 4u * tokens) {
            p[0] = (int16_t)quantize_one(x[i], inv);
            p[1] = (int16_t)quantize_one(x[i + 1u], inv);
            p[2] = (int16_t)quantize_one(x[i + 2u], inv);
            p[3] = (int16_t)quantize_one(x[i + 3u], inv);
        }
        p = blk + n4 * tokens + t * (n - n4);
        for (uint32_t i = n4; i < n; i++) {
            *p++ = (int16_t)quantize_one(x[i], inv);
        }
    }
#endif
    return s;
}

uint32_t bertl14_quantize_block_inplace_s8(int16_t *blk, uint32_t n, uint32_t t, uint32_t tokens)
{
    const uint32_t n4 = n & ~3u, tail = n - n4, step = 4u * tokens;
    int16_t *const first = blk + 4u * t, *const rest = blk + n4 * tokens + t * tail;
#if defined(BERTL14_USE_MVE)
    uint32_t mm = 0;
    for (int16_t *p = first; p < first + n4 * tokens; p += step) {   /* max |x| of the token's chunks */
        mm = vmaxavq_s32(mm, vldrhq_s32(p));
    }
    if (tail) {
        mm = vmaxavq_p_s32(mm, vldrhq_z_s32(rest, vctp32q(tail)), vctp32q(tail));
    }
    const uint32_t sc = scale_of((int32_t)mm);
    const int32_t iv = inv_scale(sc);
    for (int16_t *p = first; p < first + n4 * tokens; p += step) {
        store16_mve(p, quantize4_mve(p, iv, 4u), 4u);
    }
    if (tail) {
        store16_mve(rest, quantize4_mve(rest, iv, tail), tail);
    }
    return sc;
#else
    (void)step;
    int32_t m = max_abs_s16(rest, tail);
    for (uint32_t i = 0; i < n4; i += 4u) {                      /* max |x| of the token's values */
        const int32_t a = max_abs_s16(first + i * tokens, 4u);
        m = a > m ? a : m;
    }
    return bertl14_quantize_block_inplace_max_s8(blk, n, t, tokens, (uint32_t)m);
#endif
}

#if defined(BERTL14_USE_MVE)
/* The Helium GELU pass, then each token's quantization with its VMAXAV max (the DSP and portable bodies take the max
 * in the GELU pass: bertl14_gelu_s16.c) */
void bertl14_gelu_quantize_block_s16(int16_t *blk, const uint16_t *ism, uint32_t n, uint32_t tokens, int32_t f_in,
                                     uint32_t *scale)
{
    bertl14_gelu_smooth_block_s16(blk, ism, n, tokens, f_in);
    for (uint32_t t = 0; t < tokens; t++) {
        scale[t] = bertl14_quantize_block_inplace_s8(blk, n, t, tokens);
    }
}
#else
uint32_t bertl14_quantize_block_inplace_max_s8(int16_t *blk, uint32_t n, uint32_t t, uint32_t tokens, uint32_t m)
{
    const uint32_t n4 = n & ~3u, tail = n - n4, step = 4u * tokens;
    int16_t *const first = blk + 4u * t, *const rest = blk + n4 * tokens + t * tail;
    const uint32_t s = scale_of((int32_t)m);
    const int32_t inv = inv_scale(s);
    for (int16_t *p = first; p < first + n4 * tokens; p += step) {
        p[0] = (int16_t)quantize_one(p[0], inv);
        p[1] = (int16_t)quantize_one(p[1], inv);
        p[2] = (int16_t)quantize_one(p[2], inv);
        p[3] = (int16_t)quantize_one(p[3], inv);
    }
    for (uint32_t i = 0; i < tail; i++) {
        rest[i] = (int16_t)quantize_one(rest[i], inv);
    }
    return s;
}
#endif

void bertl14_widen_s8_s16(const int8_t *x, uint32_t count, int16_t *y)
{
    for (uint32_t i = 0; i < count; i++) {
        y[i] = x[i];
    }
}

void bertl14_widen_block_s8_s16(const int8_t *rows, uint32_t tokens, uint32_t n, int16_t *blk)
{
    const uint32_t n4 = n & ~3u, tail = n - n4;
    for (uint32_t c = 0; c < n4; c += 4) {                       /* chunk c of every token, in order */
        for (uint32_t t = 0; t < tokens; t++, blk += 4) {
#if defined(BERTL14_USE_MVE)
            vstrhq_s32(blk, vldrbq_s32(rows + t * n + c));   /* four bytes widened, four halfwords stored */
#elif defined(BERTL14_USE_DSP)
            const uint32_t w = bertl14_ld32(rows + t * n + c);
            const uint32_t even = bertl14_sxtb16(w), odd = bertl14_sxtb16(bertl14_ror8(w));   /* (x0, x2), (x1, x3) */
            const uint32_t lo = (even & 0xFFFFu) | (odd << 16), hi = (even >> 16) | (odd & 0xFFFF0000u);
            bertl14_st32(blk, lo);
            bertl14_st32(blk + 2, hi);
#else
            bertl14_widen_s8_s16(rows + t * n + c, 4, blk);
#endif
        }
    }
    for (uint32_t t = 0; t < tokens; t++, blk += tail) {
        bertl14_widen_s8_s16(rows + t * n + n4, tail, blk);
    }
}
