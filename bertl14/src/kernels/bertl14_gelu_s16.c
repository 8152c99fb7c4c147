/* tanh-approximation GELU with a 257-entry tanh LUT (docs/numerics.md "GELU"):
 * 0.5 x (1 + tanh(sqrt(2/pi) (x + 0.044715 x^3))). The Helium body (BERTL14_USE_MVE) computes four values a
 * vector with the DSP body's SMMULR steps (VRMULH) and the table's two entries by gathers. */
#include "bertl14_kernels.h"
#include "bertl14_acle_emul.h"
#include "bertl14_quantize.h"
#if defined(BERTL14_USE_MVE)
#include "bertl14_mve.h"
#endif

#if !defined(BERTL14_USE_DSP)
/* The same formula in 32-bit pieces (bit-identical): every product that can exceed 2^31 is one
 * 32 x 32 -> 64 multiply (bertl14_rsr_mul: SMULL), every other value is proven to fit int32 (bounds
 * in comments). */
static inline int32_t gelu_one(int32_t xv, int32_t up)
{
    int32_t xc = xv * (1 << up);                                                /* x in Q12, |xc| < 2^27 */
    xc = xc > (8 << 12) ? (8 << 12) : (xc < -(8 << 12) ? -(8 << 12) : xc);      /* tanh saturated beyond */
    const int32_t sq = (xc * xc + 2048) >> 12;                                  /* xc^2 <= 2^30: <= 2^18 */
    const int32_t x3 = bertl14_rsr_mul(sq, xc, 12);                             /* x^3, |x3| <= 2^21 */
    const int32_t inner = xc + bertl14_rsr_mul(x3, 2930, 16);                   /* x + 0.044715 x^3 */
    const int32_t t = bertl14_tanh_q12(bertl14_rsr_mul(inner, 52290, 16));      /* tanh(sqrt(2/pi) inner) */
    /* |xv * (32768 + t)| <= 2^15 * 2^16: the rounded product fits int32 */
    return bertl14_sat16((xv * (32768 + t) + 32768) >> 16);                    /* 0.5 x (1 + t) */
}

/* sat16(rsr(x * ism, 12)): |x * ism| + 2048 < 2^31 (x int16, ism uint16); ism 4096 is the identity */
static inline int32_t smooth_one(int32_t x, uint32_t ism)
{
    return bertl14_sat16((x * (int32_t)ism + 2048) >> 12);
}
#endif

#if defined(BERTL14_USE_DSP) && !defined(BERTL14_USE_MVE)
/* smooth_one(gelu_one(xv, up), ism), the same bits in fewer instructions: rsr(a * b, n) as SMMULR of a, b pre-shifted
 * by 32 - n in total (every operand < 2^31; the shifts of signed values are multiplications by powers of two: the
 * same LSL, defined for negative values); the clamp of x to +-8 in Q12 is SSAT (32767 instead of 32768: tanh is
 * saturated for both, and the result takes xv, not the clamped value); |u| is clamped to 32767 by USAT (the table's
 * entries 250..256 are all 32768, the saturated value) and the two entries l0, l1 are one LDR (two halfwords, any
 * alignment); the signs by the mask u >> 31. */
static inline int32_t gelu_smooth_dsp(int32_t xv, int32_t up, uint32_t ism)
{
    const int32_t xc = bertl14_ssat(xv * (1 << up), 16);                         /* x in Q12, clamped */
    const int32_t sq = (xc * xc + 2048) >> 12;                                  /* <= 2^18 */
    const int32_t x3 = bertl14_smmulr(sq * (1 << 12), xc * (1 << 8));           /* x^3, |x3| <= 2^21 */
    const int32_t inner = xc + bertl14_smmulr(x3 * (1 << 9), 2930 << 7);        /* |inner| < 2^17 */
    const int32_t u = bertl14_smmulr(inner * (1 << 14), 52290 << 2);
    const int32_t sgn = u >> 31;
    const uint32_t a = bertl14_usat((u ^ sgn) - sgn, 15);                       /* |u|, at most 32767 */
    const uint32_t l = bertl14_ld32(bertl14_tanh_lut + (a >> 7));               /* l0 | l1 << 16 */
    const int32_t l0 = (int32_t)(l & 0xFFFFu);
    const int32_t ta = l0 + ((((int32_t)(l >> 16) - l0) * (int32_t)(a & 127u) + 64) >> 7);
    const int32_t t = (ta ^ sgn) - sgn;                                         /* tanh(u) in Q15 */
    const int32_t g = bertl14_ssat((xv * (32768 + t) + 32768) >> 16, 16);       /* 0.5 x (1 + t) */
    return bertl14_ssat((g * (int32_t)ism + 2048) >> 12, 16);                   /* smoothed */
}

/* The same, out of line: the rare values (row tails, unaligned rows, the unsmoothed API) */
BERTL14_NOINLINE static int32_t gelu_smooth_one(int32_t xv, int32_t up, uint32_t ism)
{
    return gelu_smooth_dsp(xv, up, ism);
}
#endif

#if defined(BERTL14_USE_MVE)
/* gelu_one then smooth_one of four lanes (x: int16 values widened; ism: the channels' factors). Every step is the
 * DSP body's: SMMULR is VRMULH; |u| is clamped to 8 << 12 - 1 before the table (entries 250..256 are all 32768,
 * the saturated value); sat16 by VQMOVNB into the low halves of the lanes, kept by the narrowing store. */
static inline int32x4_t gelu_smooth_mve(int32x4_t x, int32x4_t ism, int32_t up)
{
    const int32x4_t lim = vdupq_n_s32(8 << 12);
    const int32x4_t xc = vmaxq_s32(vminq_s32(vshlq_r_s32(x, up), lim), vnegq_s32(lim));  /* x in Q12, clamped */
    const int32x4_t sq = vrshrq_n_s32(vmulq_s32(xc, xc), 12);                            /* <= 2^18 */
    const int32x4_t x3 = vrmulhq_s32(vshlq_n_s32(sq, 12), vshlq_n_s32(xc, 8));           /* x^3 */
    const int32x4_t inner = vaddq_s32(xc, vrmulhq_s32(vshlq_n_s32(x3, 9), vdupq_n_s32(2930 << 7)));
    const int32x4_t u = vrmulhq_s32(vshlq_n_s32(inner, 14), vdupq_n_s32(52290 << 2));
    const int32x4_t a = vminq_s32(vabsq_s32(u), vdupq_n_s32((8 << 12) - 1));           /* bertl14_tanh_q12(u) */
    const uint32x4_t i = vreinterpretq_u32_s32(vshrq_n_s32(a, 7));
    const int32x4_t f = vandq_s32(a, vdupq_n_s32(127));
    const int32x4_t l0 = vreinterpretq_s32_u32(vldrhq_gather_shifted_offset_u32(bertl14_tanh_lut, i));
    const int32x4_t l1 = vreinterpretq_s32_u32(vldrhq_gather_shifted_offset_u32(bertl14_tanh_lut + 1, i));
    const int32x4_t ta = vaddq_s32(l0, vrshrq_n_s32(vmulq_s32(vsubq_s32(l1, l0), f), 7));
    const int32x4_t t = vpselq_s32(vnegq_s32(ta), ta, vcmpltq_n_s32(u, 0));
    const int32x4_t g = vrshrq_n_s32(vmulq_s32(x, vaddq_n_s32(t, 32768)), 16);           /* 0.5 x (1 + t) */
    const int32x4_t g16 = vmovlbq_s16(vqmovnbq_s32(vdupq_n_s16(0), g));                  /* sat16 */
    return vrshrq_n_s32(vmulq_s32(g16, ism), 12);                                       /* smooth, sat16 below */
}

/* GELU then smoothing of cnt (<= 4) contiguous values with the factors ismv (lanes predicated beyond cnt) */
static inline __attribute__((always_inline)) void gelu4_mve(int16_t *x, uint32_t cnt, int32x4_t ismv, int32_t up)
{
    const mve_pred16_t p = vctp32q(cnt);
    const int32x4_t y = gelu_smooth_mve(cnt == 4u ? vldrhq_s32(x) : vldrhq_z_s32(x, p), ismv, up);
    const int32x4_t y16 = vreinterpretq_s32_s16(vqmovnbq_s32(vdupq_n_s16(0), y));
    if (cnt == 4u) {
        vstrhq_s32(x, y16);
    } else {
        vstrhq_p_s32(x, y16, p);
    }
}

void bertl14_gelu_s16(int16_t *x, uint32_t n, int32_t f_in)
{
    const int32x4_t identity = vdupq_n_s32(4096);
    const int32_t up = 12 - f_in;                                                    /* up: 0..12 */
    uint32_t i = 0;
    for (; i + 4u <= n; i += 4u) {
        gelu4_mve(x + i, 4u, identity, up);
    }
    if (i < n) {
        gelu4_mve(x + i, n - i, identity, up);
    }
}

/* In memory order of the block layout: chunk c of token 0..tokens-1 (one vector each, the chunk's four factors
 * loaded once), then each token's tail. */
void bertl14_gelu_smooth_block_s16(int16_t *blk, const uint16_t *ism, uint32_t n, uint32_t tokens, int32_t f_in)
{
    const int32_t up = 12 - f_in;
    const uint32_t n4 = n & ~3u, tail = n - n4;
    for (uint32_t c = 0; c < n4; c += 4u) {
        const int32x4_t ismv = vreinterpretq_s32_u32(vldrhq_u32(ism + c));
        for (uint32_t t = 0; t < tokens; t++, blk += 4) {
            gelu4_mve(blk, 4u, ismv, up);
        }
    }
    if (tail) {
        const int32x4_t ismv = vreinterpretq_s32_u32(vldrhq_z_u32(ism + n4, vctp32q(tail)));
        for (uint32_t t = 0; t < tokens; t++, blk += tail) {
            gelu4_mve(blk, tail, ismv, up);
        }
    }
}

/* The Helium GELU pass, then each token's quantization with its VMAXAV max (the DSP and portable bodies take the max
 * in the GELU pass, below) */
void bertl14_gelu_quantize_block_s16(int16_t *blk, const uint16_t *ism, uint32_t n, uint32_t tokens, int32_t f_in,
                                     uint32_t *scale)
{
    bertl14_gelu_smooth_block_s16(blk, ism, n, tokens, f_in);
    for (uint32_t t = 0; t < tokens; t++) {
        scale[t] = bertl14_quantize_block_s16(blk, n, t, tokens);
    }
}
#else
/* GELU then smoothing of cnt contiguous values; channel k's factor at ism[k * ism_step]. Returns the largest
 * |result| and m, whichever is larger. */
BERTL14_NOINLINE static uint32_t gelu_span(int16_t *x, uint32_t cnt, const uint16_t *ism, uint32_t ism_step,
                                           int32_t up, uint32_t m)
{
    for (uint32_t k = 0; k < cnt; k++, ism += ism_step) {
#if defined(BERTL14_USE_DSP)
        const int32_t g = gelu_smooth_one(x[k], up, *ism);
#else
        const int32_t g = smooth_one(gelu_one(x[k], up), *ism);
#endif
        const uint32_t a = (uint32_t)(g < 0 ? -g : g);
        m = a > m ? a : m;
        x[k] = (int16_t)g;
    }
    return m;
}

void bertl14_gelu_s16(int16_t *x, uint32_t n, int32_t f_in)
{
    static const uint16_t identity = 4096;
    (void)gelu_span(x, n, &identity, 0, 12 - f_in, 0);                              /* up: 0..12 */
}

/* In memory order of the block layout: chunk c of token 0..tokens-1, then the tails. */
void bertl14_gelu_smooth_block_s16(int16_t *blk, const uint16_t *ism, uint32_t n, uint32_t tokens, int32_t f_in)
{
    const int32_t up = 12 - f_in;
    const uint32_t n4 = n & ~3u, tail = n - n4;
    for (uint32_t c = 0; c < n4; c += 4u) {
        for (uint32_t t = 0; t < tokens; t++, blk += 4) {
            (void)gelu_span(blk, 4u, ism + c, 1u, up, 0);
        }
    }
    for (uint32_t t = 0; t < tokens; t++, blk += tail) {
        (void)gelu_span(blk, tail, ism + n4, 1u, up, 0);
    }
}

#if defined(BERTL14_USE_DSP)
/* GELU and smoothing of two values in place (one word), their extremes kept two lanes a word
 * (SSUB16 + SEL) in *mx, *mn */
static inline void gelu_pair_dsp(int16_t *x, const uint16_t *ism, int32_t up, uint32_t *mx, uint32_t *mn)
{
    const uint32_t w = bertl14_ld32(x);                          /* LDR: any alignment */
    const uint32_t g = bertl14_pack_lo16((uint32_t)gelu_smooth_dsp((int16_t)(w & 0xFFFFu), up, ism[0]),
                                         (uint32_t)gelu_smooth_dsp((int32_t)w >> 16, up, ism[1]));
    bertl14_st32(x, g);
    *mx = bertl14_smax16x2(*mx, g);
    *mn = bertl14_smin16x2(*mn, g);
}
#endif

/* Token by token (its chunks 4 * tokens apart, then its tail), keeping the token's largest |value| (the row
 * quantization's max), then that token's quantization. */
void bertl14_gelu_quantize_block_s16(int16_t *blk, const uint16_t *ism, uint32_t n, uint32_t tokens, int32_t f_in,
                                     uint32_t *scale)
{
    const int32_t up = 12 - f_in;
    const uint32_t n4 = n & ~3u, tail = n - n4;
    for (uint32_t t = 0; t < tokens; t++) {
#if defined(BERTL14_USE_DSP)
        uint32_t mx = 0, mn = 0;
        int16_t *p = blk + 4u * t;
        for (uint32_t c = 0; c < n4; c += 2u) {                /* a chunk's two words, then the next chunk */
            gelu_pair_dsp(p, ism + c, up, &mx, &mn);
            p += c & 2u ? 4u * tokens - 2u : 2u;
        }
        const uint32_t m = gelu_span(blk + n4 * tokens + t * tail, tail, ism + n4, 1u, up,
                                     (uint32_t)max_abs_lanes(mx, mn));
#else
        uint32_t m = gelu_span(blk + n4 * tokens + t * tail, tail, ism + n4, 1u, up, 0);
        for (uint32_t c = 0; c < n4; c += 4u) {
            m = gelu_span(blk + c * tokens + 4u * t, 4u, ism + c, 1u, up, m);
        }
#endif
        scale[t] = bertl14_quantize_block_max_s16(blk, n, t, tokens, m);
    }
}
#endif
