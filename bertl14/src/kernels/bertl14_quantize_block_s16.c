/* Row quantization of one token of a block-layout tensor in place (docs/numerics.md "Row quantization"): its max |x|
 * over the token's chunks (VMAXAV four values a vector in the Helium body; value by value elsewhere, the encoder's
 * rows coming with their max), then each value requantized. */
#include "bertl14_quantize.h"

uint32_t bertl14_quantize_block_s16(int16_t *blk, uint32_t n, uint32_t t, uint32_t tokens)
{
#if defined(BERTL14_USE_MVE)
    const uint32_t n4 = n & ~3u, tail = n - n4, step = 4u * tokens;
    int16_t *const first = blk + 4u * t, *const rest = blk + n4 * tokens + t * tail;
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
    uint32_t m = 0;              /* max |x| of the token's values (the encoder's GELU rows take the max in their pass) */
    for (uint32_t i = 0; i < n; i++) {
        const int32_t v = blk[bertl14_block_index(t, i, tokens, n)];
        const uint32_t a = (uint32_t)(v < 0 ? -v : v);
        m = a > m ? a : m;
    }
    return bertl14_quantize_block_max_s16(blk, n, t, tokens, m);
#endif
}

#if !defined(BERTL14_USE_MVE)
uint32_t bertl14_quantize_block_max_s16(int16_t *blk, uint32_t n, uint32_t t, uint32_t tokens, uint32_t m)
{
    const uint32_t n4 = n & ~3u, tail = n - n4, step = 4u * tokens;
    int16_t *const first = blk + 4u * t, *const rest = blk + n4 * tokens + t * tail;
    const uint32_t s = scale_of((int32_t)m);
    const int32_t inv = inv_scale(s);
#if defined(BERTL14_USE_DSP)
    for (int16_t *p = first; p < first + n4 * tokens; p += step) {   /* a chunk: two words in, two words out */
        const uint32_t w0 = bertl14_ld32(p), w1 = bertl14_ld32(p + 2);
        bertl14_st32(p, quantize_pair(w0, inv));
        bertl14_st32(p + 2, quantize_pair(w1, inv));
    }
#else
    for (int16_t *p = first; p < first + n4 * tokens; p += step) {
        p[0] = (int16_t)quantize_one(p[0], inv);
        p[1] = (int16_t)quantize_one(p[1], inv);
        p[2] = (int16_t)quantize_one(p[2], inv);
        p[3] = (int16_t)quantize_one(p[3], inv);
    }
#endif
    for (uint32_t i = 0; i < tail; i++) {
        rest[i] = (int16_t)quantize_one(rest[i], inv);
    }
    return s;
}
#endif
