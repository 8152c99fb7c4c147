/* LUT softmax: max-subtracted scores in Q10 -> probabilities in Q8 (docs/numerics.md "softmax",
 * v1.1: exp_q23 in base 2). Written in 32-bit pieces (bit-identical to the 64-bit formulas):
 * d = max - x_u fits uint32; e_u <= 2^23 and R <= 2^25, so p_u = (e_u * R + 2^39) >> 40 is the
 * high word of one UMULL, plus 128, shifted by 8 (the low word cannot change the result). */
#include "bertl14_kernels.h"

static inline uint32_t exp_q23_u32(uint32_t d)
{
    if (d >= 65536u) {
        return 0; /* k >= 24 */
    }
    const uint32_t z = (d * 23637u + 128u) >> 8;               /* d * log2(e) in Q16 */
    const uint32_t k = z >> 16, i = (z >> 8) & 255u, f = z & 255u;
    if (k >= 24u) {
        return 0;
    }
    const int32_t l0 = bertl14_exp_lut[i], l1 = bertl14_exp_lut[i + 1];
    const uint32_t m = (uint32_t)(l0 + (((l1 - l0) * (int32_t)f + 128) >> 8)); /* 2^-fr in Q15 */
    return k > 8u ? (m + (1u << (k - 9u))) >> (k - 8u) : m << (8u - k);
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
        const uint32_t v = (hi + 128u) >> 8;
        p[u] = (uint8_t)(v > 255u ? 255u : v);
    }
}

uint64_t bertl14_udiv64(uint64_t a, uint64_t b)
{
    uint64_t q = 0;
    if (b <= 0xFFFFu) {                                         /* every partial dividend < 2^32 */
        uint32_t rem = 0;
        for (int k = 48; k >= 0; k -= 16) {
            const uint32_t cur = (rem << 16) | (uint32_t)((a >> k) & 0xFFFFu);
            q = (q << 16) | (cur / (uint32_t)b);
            rem = cur % (uint32_t)b;
        }
        return q;
    }
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
