/* LUT softmax: max-subtracted scores in Q10 -> probabilities in Q8 (docs/numerics.md "softmax",
 * v1.1: exp_q23 in base 2). Written in 32-bit pieces (bit-identical to the 64-bit formulas):
 * d = max - x_u fits uint32; e_u <= 2^23 and R <= 2^25, so p_u = (e_u * R + 2^39) >> 40 is the
 * high word of one UMULL, plus 128, shifted by 8 (the low word cannot change the result). */
#include "bertl14_kernels.h"
#include "bertl14_acle_emul.h"

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

void bertl14_softmax_u8(int32_t *scores, uint32_t n, uint8_t *p)
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

/* (u1 * 2^32 + u0) / v for u1 < v (the quotient fits 32 bits): Knuth's algorithm D with 16-bit digits,
 * two 32-bit UDIVs and at most two corrections each (Hacker's Delight, divlu). */
static uint32_t divlu(uint32_t u1, uint32_t u0, uint32_t v)
{
    const uint32_t s = (uint32_t)__builtin_clz(v);             /* normalize: top bit of v set */
    v <<= s;
    const uint32_t vn1 = v >> 16, vn0 = v & 0xFFFFu;
    const uint32_t un32 = (u1 << s) | ((u0 >> (31u - s)) >> 1);
    const uint32_t un10 = u0 << s, un1 = un10 >> 16, un0 = un10 & 0xFFFFu;
    uint32_t q1 = un32 / vn1, rhat = un32 - q1 * vn1;
    while (q1 >= 0x10000u || q1 * vn0 > ((rhat << 16) | un1)) {
        q1--;
        rhat += vn1;
        if (rhat >= 0x10000u) {
            break;
        }
    }
    const uint32_t un21 = (un32 << 16) + un1 - q1 * v;
    uint32_t q0 = un21 / vn1;
    rhat = un21 - q0 * vn1;
    while (q0 >= 0x10000u || q0 * vn0 > ((rhat << 16) | un0)) {
        q0--;
        rhat += vn1;
        if (rhat >= 0x10000u) {
            break;
        }
    }
    return (q1 << 16) | q0;
}

uint64_t bertl14_udiv64(uint64_t a, uint64_t b)
{
    const uint32_t ah = (uint32_t)(a >> 32), al = (uint32_t)a;
    if (b >> 32 == 0) {                                         /* 32-bit divisor: UDIV, or divlu */
        const uint32_t v = (uint32_t)b;
        if (ah == 0) {
            return al / v;
        }
        return ((uint64_t)(ah / v) << 32) | divlu(ah % v, al, v);
    }
    uint64_t q = 0;                                             /* rare: shift and subtract */
    if (a < b) {
        return 0;
    }
    int sh = __builtin_clzll(b) - __builtin_clzll(a);           /* quotient bits - 1 */
    b <<= sh;
    for (;; b >>= 1) {
        q <<= 1;
        if (a >= b) {
            a -= b;
            q |= 1u;
        }
        if (sh-- == 0) {
            return q;
        }
    }
}
