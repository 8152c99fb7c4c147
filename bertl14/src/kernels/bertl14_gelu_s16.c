/* tanh-approximation GELU with a 257-entry tanh LUT (docs/numerics.md "GELU"):
 * 0.5 x (1 + tanh(sqrt(2/pi) (x + 0.044715 x^3))). */
#include "bertl14_kernels.h"
#include "bertl14_acle_emul.h"

static inline int32_t tanh_q12(int32_t u)
{
    uint32_t a = u < 0 ? (uint32_t)(-(int64_t)u) : (uint32_t)u;
    int32_t t;
    if (a >= (8u << 12)) {
        t = 32768;
    } else {
        uint32_t i = a >> 7, f = a & 127u;
        int32_t l0 = bertl14_tanh_lut[i], l1 = bertl14_tanh_lut[i + 1];
        t = l0 + (((l1 - l0) * (int32_t)f + 64) >> 7);
    }
    return u < 0 ? -t : t;
}

int32_t bertl14_tanh_q12(int32_t u)
{
    return tanh_q12(u);
}

/* The same formula in 32-bit pieces (bit-identical): every product that can exceed 2^31 is one
 * 32 x 32 -> 64 multiply (bertl14_rsr_mul: SMULL), every other value is proven to fit int32 (bounds
 * in comments). */
static inline int32_t gelu_one(int32_t xv, int32_t up)
{
    int32_t xc = xv * (1 << up);                                                /* x in Q12, |xc| < 2^27 */
    xc = xc > (8 << 12) ? (8 << 12) : (xc < -(8 << 12) ? -(8 << 12) : xc);      /* tanh saturated beyond */
    const int32_t sq = (xc * xc + 2048) >> 12;                                  /* xc^2 <= 2^30: <= 2^18 */
#if defined(BERTL14_USE_DSP)
    /* rsr(a * b, n) as SMMULR of a, b pre-shifted by 32 - n in total (every operand < 2^31; the shifts of
     * signed values are multiplications by powers of two: the same LSL, defined for negative values) */
    const int32_t x3 = bertl14_smmulr(sq * (1 << 12), xc * (1 << 8));           /* x^3, |x3| <= 2^21 */
    const int32_t inner = xc + bertl14_smmulr(x3 * (1 << 9), 2930 << 7);        /* |inner| < 2^17 */
    const int32_t t = tanh_q12(bertl14_smmulr(inner * (1 << 14), 52290 << 2));
#else
    const int32_t x3 = bertl14_rsr_mul(sq, xc, 12);                             /* x^3, |x3| <= 2^21 */
    const int32_t inner = xc + bertl14_rsr_mul(x3, 2930, 16);                   /* x + 0.044715 x^3 */
    const int32_t t = tanh_q12(bertl14_rsr_mul(inner, 52290, 16));              /* tanh(sqrt(2/pi) inner) */
#endif
    /* |xv * (32768 + t)| <= 2^15 * 2^16: the rounded product fits int32 */
    return bertl14_sat16((xv * (32768 + t) + 32768) >> 16);                    /* 0.5 x (1 + t) */
}

/* sat16(rsr(x * ism, 12)): |x * ism| + 2048 < 2^31 (x int16, ism uint16); ism 4096 is the identity */
static inline int32_t smooth_one(int32_t x, uint32_t ism)
{
#if defined(BERTL14_USE_DSP)
    return bertl14_ssat((x * (int32_t)ism + 2048) >> 12, 16);
#else
    return bertl14_sat16((x * (int32_t)ism + 2048) >> 12);
#endif
}

/* GELU then smoothing of cnt contiguous values; channel k's factor at ism[k * ism_step]. */
BERTL14_NOINLINE static void gelu_span(int16_t *x, uint32_t cnt, const uint16_t *ism, uint32_t ism_step, int32_t up)
{
    for (uint32_t k = 0; k < cnt; k++, ism += ism_step) {
        x[k] = (int16_t)smooth_one(gelu_one(x[k], up), *ism);
    }
}

void bertl14_gelu_s16(int16_t *x, uint32_t n, int32_t f_in)
{
    static const uint16_t identity = 4096;
    gelu_span(x, n, &identity, 0, 12 - f_in);                                       /* up: 0..12 */
}

/* In memory order of the block layout: chunk c of token 0..tokens-1, then the tails. */
void bertl14_gelu_smooth_block_s16(int16_t *blk, const uint16_t *ism, uint32_t n, uint32_t tokens, int32_t f_in)
{
    const int32_t up = 12 - f_in;
    const uint32_t n4 = n & ~3u, tail = n - n4;
    for (uint32_t c = 0; c < n4; c += 4u) {
        for (uint32_t t = 0; t < tokens; t++, blk += 4) {
            gelu_span(blk, 4u, ism + c, 1u, up);
        }
    }
    for (uint32_t t = 0; t < tokens; t++, blk += tail) {
        gelu_span(blk, tail, ism + n4, 1u, up);
    }
}
