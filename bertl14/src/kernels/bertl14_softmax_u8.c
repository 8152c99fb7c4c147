/* LUT softmax: max-subtracted scores in Q10 -> probabilities in Q8 (docs/numerics.md "softmax"). */
#include "bertl14_kernels.h"

void bertl14_softmax_u8(int32_t *scores, uint32_t n, uint8_t *p)
{
    int32_t mx = scores[0];
    for (uint32_t u = 1; u < n; u++) {
        mx = scores[u] > mx ? scores[u] : mx;
    }
    uint32_t sum = 0; /* n <= 512 terms <= 32768: < 2^25 */
    for (uint32_t u = 0; u < n; u++) {
        uint32_t dlt = (uint32_t)(mx - scores[u]);
        int32_t e = 0;
        if (dlt < (8u << 10)) {
            uint32_t i = dlt >> 5, f = dlt & 31u;
            int32_t l0 = bertl14_exp_lut[i], l1 = bertl14_exp_lut[i + 1];
            e = l0 + (((l1 - l0) * (int32_t)f + 16) >> 5);
        }
        scores[u] = e;
        sum += (uint32_t)e;
    }
    const uint64_t r = bertl14_udiv_round((uint64_t)1 << 32, sum); /* sum >= 32768 */
    for (uint32_t u = 0; u < n; u++) {
        uint64_t v = ((uint64_t)(uint32_t)scores[u] * r + (1u << 23)) >> 24;
        p[u] = (uint8_t)(v > 255u ? 255u : v);
    }
}
