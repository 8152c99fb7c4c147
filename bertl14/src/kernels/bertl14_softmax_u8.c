/* LUT softmax: max-subtracted scores in Q10 -> probabilities in Q8 (docs/numerics.md "softmax",
 * v1.1: exp_q23 in base 2). */
#include "bertl14_kernels.h"

void bertl14_softmax_u8(int32_t *scores, uint32_t n, uint8_t *p)
{
    int32_t mx = scores[0];
    for (uint32_t u = 1; u < n; u++) {
        mx = scores[u] > mx ? scores[u] : mx;
    }
    uint64_t sum = 0; /* <= 512 * 2^23 */
    for (uint32_t u = 0; u < n; u++) {
        const uint32_t e = bertl14_exp_q23((uint64_t)((int64_t)mx - scores[u])); /* e_u = exp(x_u - max) */
        scores[u] = (int32_t)e;
        sum += e;
    }
    const uint64_t r = bertl14_udiv_round((uint64_t)1 << 48, sum);            /* <= 2^25 */
    for (uint32_t u = 0; u < n; u++) {
        const uint64_t v = ((uint64_t)(uint32_t)scores[u] * r + ((uint64_t)1 << 39)) >> 40;
        p[u] = (uint8_t)(v > 255u ? 255u : v);
    }
}
