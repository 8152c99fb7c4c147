/* LUT softmax: max-subtracted scores in Q10 -> probabilities in Q8 (docs/numerics.md "softmax",
 * v1.1: exp_q23 in base 2). Written in 32-bit pieces (bit-identical to the 64-bit formulas):
 * d = max - x_u fits uint32; e_u <= 2^23 and R <= 2^25, so p_u = (e_u * R + 2^39) >> 40 is the
 * high word of one UMULL, plus 128, shifted by 8 (the low word cannot change the result). The Helium body
 * (BERTL14_USE_MVE) runs each pass on four scores a vector, the LUT's two entries by gathers. */
#include "bertl14_kernels.h"
#include "bertl14_acle_emul.h"
#if defined(BERTL14_USE_MVE)
#include "bertl14_mve.h"
#endif

#if !defined(BERTL14_USE_MVE)
static inline uint32_t exp_q23_u32(uint32_t d)
{
    if (d >= 17035u) {
        return 0; /* exactly the d with k >= 24 (and no overflow of d * 23637 below) */
    }
    const uint32_t z = (d * 23637u + 128u) >> 8;               /* d * log2(e) in Q16 */
    const uint32_t k = z >> 16, i = (z >> 8) & 255u, f = z & 255u;
    const int32_t l0 = bertl14_exp_lut[i], l1 = bertl14_exp_lut[i + 1];
    const uint32_t m = (uint32_t)(l0 + (((l1 - l0) * (int32_t)f + 128) >> 8)); /* 2^-fr in Q15 */
    /* rsr(m, k - 8) for every k in 0..23 at once: m << (8 - k) is exact for k <= 8 and the rounding
     * term 2^(k-1) then cannot carry into the result */
    return ((m << 8) + ((1u << k) >> 1)) >> k;
}
#endif

#if defined(BERTL14_USE_MVE)
/* exp_q23_u32 of four lanes, the same steps (the interpolation's product is negative: a signed shift). d is
 * clamped to 17800 first: every d >= 17035 then has k >= 24, and k >= 24 rounds (m * 2^8 + 2^(k-1)) >> k to 0 for
 * every m < 2^15 it can have (d = 17035 gives m = 32764), so no lane needs to be cleared afterwards. */
static inline uint32x4_t exp_q23_mve(uint32x4_t d)
{
    const uint32x4_t z = vrshrq_n_u32(vmulq_n_u32(vminq_u32(d, vdupq_n_u32(17800u)), 23637u), 8); /* d log2(e) */
    const uint32x4_t k = vshrq_n_u32(z, 16), i = vandq_u32(vshrq_n_u32(z, 8), vdupq_n_u32(255u));
    const int32x4_t f = vreinterpretq_s32_u32(vandq_u32(z, vdupq_n_u32(255u)));
    const int32x4_t l0 = vreinterpretq_s32_u32(vldrhq_gather_shifted_offset_u32(bertl14_exp_lut, i));
    const int32x4_t l1 = vreinterpretq_s32_u32(vldrhq_gather_shifted_offset_u32(bertl14_exp_lut + 1, i));
    const int32x4_t m = vaddq_s32(l0, vrshrq_n_s32(vmulq_s32(vsubq_s32(l1, l0), f), 8));      /* 2^-fr in Q15 */
    /* rsr(m, k - 8) = (m * 2^8 + 2^(k-1)) >> k, a rounding shift right by k (VRSHL by -k) */
    return vrshlq_u32(vshlq_n_u32(vreinterpretq_u32_s32(m), 8), vnegq_s32(vreinterpretq_s32_u32(k)));
}

/* e_u = exp(x_u - max) of four scores (the last 1..3: `full` 0, lanes pu) into `scores`; their sum added to *sum */
static inline __attribute__((always_inline)) void exp_pass(int32_t *scores, int32_t mx, int full, mve_pred16_t pu,
                                                           uint64_t *sum)
{
    const int32x4_t x = full ? vldrwq_s32(scores) : vldrwq_z_s32(scores, pu);
    const uint32x4_t e = exp_q23_mve(vsubq_u32(vdupq_n_u32((uint32_t)mx), vreinterpretq_u32_s32(x)));
    if (full) {
        vstrwq_s32(scores, vreinterpretq_s32_u32(e));
        *sum = vaddlvaq_u32(*sum, e);
    } else {
        vstrwq_p_s32(scores, vreinterpretq_s32_u32(e), pu);
        *sum = vaddlvaq_p_u32(*sum, e, pu);
    }
}

/* p_u = min(255, (hi(e_u * r) + 128) >> 8) of four scores (or the last 1..3) */
static inline __attribute__((always_inline)) void norm_pass(const int32_t *scores, uint32_t r, uint8_t *p, int full,
                                                            mve_pred16_t pu)
{
    const uint32x4_t e = vreinterpretq_u32_s32(full ? vldrwq_s32(scores) : vldrwq_z_s32(scores, pu));
    const uint32x4_t v = vminq_u32(vrshrq_n_u32(vmulhq_u32(e, vdupq_n_u32(r)), 8), vdupq_n_u32(255u));
    if (full) {
        vstrbq_u32(p, v);
    } else {
        vstrbq_p_u32(p, v, pu);
    }
}

/* Each pass on whole vectors of four scores, then the last 1..3 scores with the other lanes predicated off. */
void bertl14_softmax_s32(int32_t *scores, uint32_t n, uint8_t *p)
{
    const uint32_t n4 = n & ~3u;
    const mve_pred16_t tail = vctp32q(n - n4);
    int32_t mx = scores[0];
    for (uint32_t u = 0; u < n4; u += 4u) {
        mx = vmaxvq_s32(mx, vldrwq_s32(scores + u));
    }
    if (n4 < n) {
        mx = vmaxvq_p_s32(mx, vldrwq_z_s32(scores + n4, tail), tail);
    }
    uint64_t sum = 0; /* <= 512 * 2^23 */
    for (uint32_t u = 0; u < n4; u += 4u) {
        exp_pass(scores + u, mx, 1, tail, &sum);
    }
    if (n4 < n) {
        exp_pass(scores + n4, mx, 0, tail, &sum);
    }
    const uint32_t r = (uint32_t)bertl14_udiv_round((uint64_t)1 << 48, sum); /* <= 2^25 */
    for (uint32_t u = 0; u < n4; u += 4u) {
        norm_pass(scores + u, r, p + u, 1, tail);
    }
    if (n4 < n) {
        norm_pass(scores + n4, r, p + n4, 0, tail);
    }
}
#else
void bertl14_softmax_s32(int32_t *scores, uint32_t n, uint8_t *p)
{
    int32_t mx = scores[0];
    for (uint32_t u = 1; u < n; u++) {
        mx = scores[u] > mx ? scores[u] : mx;
    }
    uint64_t sum = 0; /* <= 512 * 2^23 */
    for (uint32_t u = 0; u < n; u++) {
        const uint32_t e = exp_q23_u32((uint32_t)mx - (uint32_t)scores[u]);   /* e_u = exp(x_u - max) */
        scores[u] = (int32_t)e;
        sum += e;
    }
    const uint32_t r = (uint32_t)bertl14_udiv_round((uint64_t)1 << 48, sum); /* <= 2^25 */
    for (uint32_t u = 0; u < n; u++) {
        const uint32_t hi = (uint32_t)(((uint64_t)(uint32_t)scores[u] * r) >> 32);
        const uint32_t v = (hi + 128u) >> 8;                   /* < 2^18 */
#if defined(BERTL14_USE_DSP)
        p[u] = (uint8_t)bertl14_usat((int32_t)v, 8);
#else
        p[u] = (uint8_t)(v > 255u ? 255u : v);
#endif
    }
}
#endif
