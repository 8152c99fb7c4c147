/* Attention scores of one query row, one head (docs/numerics.md "Attention"). */
#include "bertl14_kernels.h"
#include "bertl14_acle_emul.h"

void bertl14_attn_scores_s8(const int8_t *q, uint32_t sq, const int8_t *k, uint32_t k_stride,
                            const uint32_t *sk, uint32_t sk_stride, uint32_t n, uint32_t d,
                            int32_t shift, int32_t *scores)
{
#if defined(BERTL14_USE_DSP)
    const uint32_t groups = (d % 4u == 0u) ? d / 4u : 0u;     /* SIMD only for whole groups of four */
#endif
    for (uint32_t u = 0; u < n; u++) {
        const int8_t *ku = k + u * k_stride;
        int32_t acc = 0;
#if defined(BERTL14_USE_DSP)
        if (groups) {
            for (uint32_t g = 0; g < groups; g++) {                /* (q0,q2).(k0,k2) + (q1,q3).(k1,k3) */
                const uint32_t wq = bertl14_ld32(q + 4 * g), wk = bertl14_ld32(ku + 4 * g);
                acc = __smlad(__sxtb16(wq), __sxtb16(wk), acc);
                acc = __smlad(__sxtb16(bertl14_ror8(wq)), __sxtb16(bertl14_ror8(wk)), acc);
            }
        } else
#endif
        {
            for (uint32_t i = 0; i < d; i++) {
                acc += (int32_t)q[i] * (int32_t)ku[i];
            }
        }
        /* scale product < 2^34, |acc| < 2^21 for d <= 128: int64; one SMULL when the scale fits 31 bits */
        const uint64_t m = (uint64_t)sq * sk[u * sk_stride];
        const int64_t pr = m < 0x80000000u ? (int64_t)acc * (int32_t)(uint32_t)m : (int64_t)acc * (int64_t)m;
        scores[u] = bertl14_sat32(bertl14_rsr(pr, shift));
    }
}
