/* Attention scores of one query row, one head (docs/numerics.md "Attention"). The DSP body
 * sign-extends the query once (two int16 pairs a word of four values), then takes two keys a pass:
 * per group of four channels one query LDRD, two key loads, four SXTB16 and four SMLAD for eight
 * MACs; the scaling is one SMULL when the scale product fits 31 bits. */
#include "bertl14_kernels.h"
#include "bertl14_acle_emul.h"

/* sat32(rsr(acc * (sq * sk), shift)) in 64 bits */
BERTL14_NOINLINE static int32_t scale_score_generic(int32_t acc, uint64_t m, int32_t shift)
{
    return bertl14_sat32(bertl14_rsr((int64_t)acc * (int64_t)m, shift));
}

/* sat32(rsr(acc * (sq * sk), shift)); |acc| <= 2^21 for d <= 128 */
static inline int32_t scale_score(int32_t acc, uint32_t sq, uint32_t sk, int32_t shift, int fast)
{
    const uint64_t m = (uint64_t)sq * sk;
    if (fast && m < 0x80000000u) {
        return bertl14_rsr_mul(acc, (int32_t)(sq * sk), shift);   /* |acc * m| < 2^52, shift >= 21: fits */
    }
    return scale_score_generic(acc, m, shift);
}

void bertl14_attn_scores_s8(const int8_t *q, uint32_t sq, const int8_t *k, uint32_t k_stride,
                            const uint32_t *sk, uint32_t sk_stride, uint32_t n, uint32_t d,
                            int32_t shift, int32_t *scores)
{
    const int fast = shift >= 21 && shift <= 62;
    uint32_t u = 0;
#if defined(BERTL14_USE_DSP)
    if (d % 4u == 0u && d <= 128u && !(((uintptr_t)k | k_stride) & 3u)) {
        uint32_t qx[64];                                   /* (q0, q2), (q1, q3) of each group of four */
        const uint32_t groups = d / 4u;
        for (uint32_t g = 0; g < groups; g++) {
            const uint32_t wq = bertl14_ld32(q + 4u * g);
            qx[2u * g] = bertl14_sxtb16(wq);
            qx[2u * g + 1u] = bertl14_sxtb16(bertl14_ror8(wq));
        }
        for (; u + 2u <= n; u += 2u) {                     /* two keys a pass */
            const int8_t *const k0 = BERTL14_ALIGNED4(k + u * k_stride);
            const int8_t *const k1 = BERTL14_ALIGNED4(k + (u + 1u) * k_stride);
            int32_t a0 = 0, a1 = 0;
            for (uint32_t g = 0; g < groups; g++) {
                const uint32_t qe = qx[2u * g], qo = qx[2u * g + 1u];
                const uint32_t w0 = bertl14_ld32(k0 + 4u * g), w1 = bertl14_ld32(k1 + 4u * g);
                a0 = bertl14_smlad(qe, bertl14_sxtb16(w0), a0);
                a0 = bertl14_smlad(qo, bertl14_sxtb16_ror8(w0), a0);
                a1 = bertl14_smlad(qe, bertl14_sxtb16(w1), a1);
                a1 = bertl14_smlad(qo, bertl14_sxtb16_ror8(w1), a1);
            }
            scores[u] = scale_score(a0, sq, sk[u * sk_stride], shift, fast);
            scores[u + 1u] = scale_score(a1, sq, sk[(u + 1u) * sk_stride], shift, fast);
        }
    }
#endif
    for (; u < n; u++) {
        const int8_t *ku = k + u * k_stride;
        int32_t acc = 0;
        for (uint32_t i = 0; i < d; i++) {
            acc += (int32_t)q[i] * (int32_t)ku[i];
        }
        scores[u] = scale_score(acc, sq, sk[u * sk_stride], shift, fast);
    }
}
