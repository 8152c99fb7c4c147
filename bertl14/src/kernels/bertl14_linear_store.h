/* The output side the linear kernels share (bertl14_linear_s8_w16.c, bertl14_linear_s8_w8.c): bias loads, the
 * requantized store y = rsr(acc * s * M, S) + B with sat16 / sat32 (docs/numerics.md "Linear layer"), the output
 * index of the two layouts, and the DSP build's one-SMMLA store. Include after bertl14_kernels.h and
 * bertl14_acle_emul.h. */
#ifndef BERTL14_LINEAR_STORE_H
#define BERTL14_LINEAR_STORE_H

#include <stdint.h>

static inline int32_t ld_bias(const int32_t *b, uint32_t o)
{
    return (int32_t)bertl14_ld32(b + o);
}

/* y = rsr(acc * s * M, S) + B, then sat16 / sat32. |acc| < 2^31, s <= 66050 (< 2^17), M < 2^15. */
static inline int64_t requant(int32_t acc, uint32_t s, int32_t mult, int32_t shift, int32_t bias)
{
    return bertl14_rsr((int64_t)acc * (int64_t)s * mult, shift) + bias;
}

/* The general requantized store (out of line: one copy for every caller of a kernel file; a file that includes this
 * header calls it). */
static void store_requant(int16_t *y16, int32_t *y32, uint32_t idx, int32_t acc, uint32_t s, int32_t mult,
                          int32_t shift, int32_t bias)
{
    const int64_t v = requant(acc, s, mult, shift, bias);
    if (y16) {
        y16[idx] = (int16_t)bertl14_sat16(v);
    } else {
        y32[idx] = bertl14_sat32(v);
    }
}

/* Output element (token t, channel o): row-major with y_stride, or the block layout (y_stride 0). */
static inline uint32_t out_index(uint32_t t, uint32_t o, uint32_t tokens, uint32_t out, uint32_t y_stride)
{
    return y_stride ? t * y_stride + o : bertl14_block_index(t, o, tokens, out);
}

#if defined(BERTL14_USE_DSP)
/* rsr(acc * m, 32 + sh) + bias, sat32, for sh >= 1 and |acc * m| < 2^62: (c + hi(acc * m)) >> sh with
 * c = 2^(sh-1) is one SMMLA (2^(31+sh) is a whole number of high words; |hi| < 2^30 and c <= 2^30 cannot
 * overflow), a shift and QADD. */
static inline int32_t rq_fast(int32_t acc, uint32_t m, int32_t c, int32_t sh, int32_t bias)
{
    return bertl14_qadd(bertl14_smmla(acc, (int32_t)m, c) >> sh, bias);
}

/* Store a requantized value: sat16 into y16, or as it is into y32. */
static inline void put(int16_t *y16, int32_t *y32, uint32_t idx, int32_t v)
{
    if (y16) {
        y16[idx] = (int16_t)bertl14_ssat(v, 16);
    } else {
        y32[idx] = v;
    }
}
#endif

#endif /* BERTL14_LINEAR_STORE_H */
