/* tanh-approximation GELU with a 257-entry tanh LUT (docs/numerics.md "GELU"):
 * 0.5 x (1 + tanh(sqrt(2/pi) (x + 0.044715 x^3))). */
#include "bertl14_kernels.h"

int32_t bertl14_tanh_q12(int32_t u)
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

/* The same formula in 32-bit pieces (bit-identical): every product that can exceed 2^31 is one
 * 32 x 32 -> 64 multiply (SMULL), every other value is proven to fit int32 (bounds in comments). */
static inline int32_t rsr64c(int64_t p, int n)
{
    return (int32_t)((p + ((int64_t)1 << (n - 1))) >> n);
}

void bertl14_gelu_s16(int16_t *x, uint32_t n, int32_t f_in)
{
    const int32_t up = 12 - f_in;                                                   /* 0..12 */
    for (uint32_t k = 0; k < n; k++) {
        const int32_t xv = x[k];
        int32_t xc = xv * (1 << up);                                                /* x in Q12, |xc| < 2^27 */
        xc = xc > (8 << 12) ? (8 << 12) : (xc < -(8 << 12) ? -(8 << 12) : xc);      /* tanh saturated beyond */
        const int32_t sq = (xc * xc + 2048) >> 12;                                  /* xc^2 <= 2^30: < 2^19 */
        const int32_t x3 = rsr64c((int64_t)sq * xc, 12);                            /* x^3, < 2^22 */
        const int32_t inner = xc + rsr64c((int64_t)x3 * 2930, 16);                  /* x + 0.044715 x^3 */
        const int32_t t = bertl14_tanh_q12(rsr64c((int64_t)inner * 52290, 16));     /* tanh(sqrt(2/pi) inner) */
        /* |xv * (32768 + t)| <= 2^15 * 2^16: the rounded product fits int32 */
        x[k] = (int16_t)bertl14_sat16(rsr64c((int64_t)xv * (32768 + t), 16));      /* 0.5 x (1 + t) */
    }
}

void bertl14_smooth_s16(int16_t *x, const uint16_t *ism, uint32_t n)
{
    for (uint32_t c = 0; c < n; c++) {
        x[c] = (int16_t)bertl14_sat16(bertl14_rsr((int64_t)x[c] * ism[c], 12));
    }
}

void bertl14_smooth_block_s16(int16_t *blk, const uint16_t *ism, uint32_t n, uint32_t tokens)
{
    /* walk the block in memory order: chunk c of token 0..tokens-1, then the tails */
    const uint32_t n4 = n & ~3u;
    uint32_t c = 0, t = 0, j = 0;                             /* channel chunk start, token, lane */
    for (uint32_t k = 0; k < n * tokens; k++) {
        const uint32_t ch = c + j;
        blk[k] = (int16_t)bertl14_sat16(bertl14_rsr((int64_t)blk[k] * ism[ch], 12));
        const uint32_t width = c < n4 ? 4u : n - n4;
        if (++j == width) {                                    /* next token, then next chunk */
            j = 0;
            if (++t == tokens) {
                t = 0;
                c += width;
            }
        }
    }
}
