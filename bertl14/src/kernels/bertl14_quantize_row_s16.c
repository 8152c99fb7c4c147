/* Dynamic row quantization to INT8 (docs/numerics.md "Row quantization"). The Helium body (BERTL14_USE_MVE)
 * takes max |x| eight values a VMAXAV and quantizes four a vector (the DSP body's SMMULR is VRMULH). */
#include "bertl14_quantize.h"

uint32_t bertl14_row_scale_s16(const int16_t *x, uint32_t n)
{
    return scale_of(max_abs_s16(x, n));
}

uint32_t bertl14_quantize_row_s16(const int16_t *x, uint32_t n, int8_t *q8, int16_t *q16)
{
    return bertl14_quantize_row_block_s16(x, n, q8, q16, 0, 1);
}

/* Token t's values in a block of `tokens` (bertl14_block_index): chunks of four, 4 * tokens apart,
 * then the dense tail. */
uint32_t bertl14_quantize_row_block_s16(const int16_t *x, uint32_t n, int8_t *q8, int16_t *blk, uint32_t t,
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
#elif defined(BERTL14_USE_DSP)
    /* four values a step, each quantized once for both outputs: two word loads (LDR: any alignment), SMLAWx + SSAT a
     * value, four byte stores, two pairs (PKHBT) stored as a chunk of the block */
    const uint32_t n4 = n & ~3u;
    int16_t *p = blk ? blk + 4u * t : NULL;
    for (uint32_t i = 0; i < n4; i += 4u) {
        const uint32_t w0 = bertl14_ld32(x + i), w1 = bertl14_ld32(x + i + 2);
        const int32_t a = quantize_lo(w0, inv), b = quantize_hi(w0, inv);
        const int32_t c = quantize_lo(w1, inv), d = quantize_hi(w1, inv);
        if (q8) {
            q8[i] = (int8_t)a;
            q8[i + 1u] = (int8_t)b;
            q8[i + 2u] = (int8_t)c;
            q8[i + 3u] = (int8_t)d;
        }
        if (p) {
            bertl14_st32(p, bertl14_pack_lo16((uint32_t)a, (uint32_t)b));
            bertl14_st32(p + 2, bertl14_pack_lo16((uint32_t)c, (uint32_t)d));
            p += 4u * tokens;
        }
    }
    int16_t *r = blk ? blk + n4 * tokens + t * (n - n4) : NULL;
    for (uint32_t i = n4; i < n; i++) {                        /* the tail: dense after the block's chunks */
        const int32_t q = quantize_lo((uint16_t)x[i], inv);
        if (q8) {
            q8[i] = (int8_t)q;
        }
        if (r) {
            *r++ = (int16_t)q;
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
