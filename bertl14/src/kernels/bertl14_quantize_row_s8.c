/* Dynamic row quantization to INT8 (docs/numerics.md "Row quantization"). */
#include "bertl14_kernels.h"
#include "bertl14_acle_emul.h"

uint32_t bertl14_row_scale_s16(const int16_t *x, uint32_t n)
{
    int32_t m = 0;
    for (uint32_t i = 0; i < n; i++) {
        int32_t a = x[i] < 0 ? -x[i] : x[i];
        m = a > m ? a : m;
    }
    uint32_t s = ((uint32_t)m * 256u + 126u) / 127u; /* ceil(256 m / 127) */
    return s ? s : 1u;
}

/* inv = div_round(2^32, s), s >= 1, with 32-bit divisions (UDIV on Cortex-M): 2^32 = Q s + R + 1
 * with Q = (2^32 - 1) / s, R = (2^32 - 1) % s, so (2^32 + s/2) / s = Q + (R + 1 + s/2) / s, where
 * the last quotient is 0 or 1. */
static inline int64_t inv_scale(uint32_t s)
{
    const uint32_t q = 0xFFFFFFFFu / s, r = 0xFFFFFFFFu - q * s;
    return (int64_t)q + ((uint64_t)r + 1u + s / 2u >= s ? 1 : 0);
}

/* q = sat8(rsr(x * inv, 24)); |x * inv| < 2^47 (SMULL on Cortex-M) */
static inline int32_t quantize_one(int32_t x, int64_t inv)
{
    int64_t v = ((int64_t)x * inv + ((int64_t)1 << 23)) >> 24;
#if defined(BERTL14_USE_DSP)
    return __ssat((int32_t)v, 8); /* |v| < 2^23 */
#else
    return bertl14_sat8(v);
#endif
}

/* Positions of token t's n values in a block of `tokens` (bertl14_block_index), in channel order:
 * chunks of four, 4 * tokens apart, then the dense tail. */
typedef struct {
    int16_t *p;
    uint32_t i, n4, skip;
} walk_t;

static inline walk_t walk_start(int16_t *blk, uint32_t t, uint32_t tokens, uint32_t n)
{
    walk_t w = {blk + 4u * t, 0, n & ~3u, 4u * (tokens - 1u)};
    if (w.n4 == 0) {
        w.p = blk + t * n;
    }
    return w;
}

static inline void walk_next(walk_t *w, int16_t *blk, uint32_t t, uint32_t tokens, uint32_t n)
{
    w->p++;
    if (++w->i < w->n4) {
        if ((w->i & 3u) == 0) {
            w->p += w->skip;                                   /* next chunk of this token */
        }
    } else if (w->i == w->n4) {
        w->p = blk + w->n4 * tokens + t * (n - w->n4);         /* the tail */
    }
}

uint32_t bertl14_quantize_row_s8(const int16_t *x, uint32_t n, int8_t *q8, int16_t *q16)
{
    return bertl14_quantize_row_block_s8(x, n, q8, q16, 0, 1);
}

uint32_t bertl14_quantize_row_block_s8(const int16_t *x, uint32_t n, int8_t *q8, int16_t *blk, uint32_t t,
                                       uint32_t tokens)
{
    const uint32_t s = bertl14_row_scale_s16(x, n);
    const int64_t inv = inv_scale(s);
    walk_t w = walk_start(blk, t, tokens, n);
    for (uint32_t i = 0; i < n; i++) {
        const int32_t q = quantize_one(x[i], inv);
        if (q8) {
            q8[i] = (int8_t)q;
        }
        if (blk) {
            *w.p = (int16_t)q;
            walk_next(&w, blk, t, tokens, n);
        }
    }
    return s;
}

uint32_t bertl14_quantize_block_inplace_s8(int16_t *blk, uint32_t n, uint32_t t, uint32_t tokens)
{
    int32_t m = 0;
    walk_t w = walk_start(blk, t, tokens, n);
    for (uint32_t i = 0; i < n; i++) {                           /* max |x| of the token's values */
        const int32_t a = *w.p < 0 ? -*w.p : *w.p;
        m = a > m ? a : m;
        walk_next(&w, blk, t, tokens, n);
    }
    uint32_t s = ((uint32_t)m * 256u + 126u) / 127u;              /* as bertl14_row_scale_s16 */
    s = s ? s : 1u;
    const int64_t inv = inv_scale(s);
    w = walk_start(blk, t, tokens, n);
    for (uint32_t i = 0; i < n; i++) {
        *w.p = (int16_t)quantize_one(*w.p, inv);
        walk_next(&w, blk, t, tokens, n);
    }
    return s;
}

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
#if defined(BERTL14_USE_DSP)
            const uint32_t w = bertl14_ld32(rows + t * n + c);
            const uint32_t even = __sxtb16(w), odd = __sxtb16(bertl14_ror8(w));   /* (x0, x2), (x1, x3) */
            const uint32_t lo = (even & 0xFFFFu) | (odd << 16), hi = (even >> 16) | (odd & 0xFFFF0000u);
            memcpy(blk, &lo, 4);
            memcpy(blk + 2, &hi, 4);
#else
            bertl14_widen_s8_s16(rows + t * n + c, 4, blk);
#endif
        }
    }
    for (uint32_t t = 0; t < tokens; t++, blk += tail) {
        bertl14_widen_s8_s16(rows + t * n + n4, tail, blk);
    }
}
