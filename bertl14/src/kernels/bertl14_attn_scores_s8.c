/* Attention scores of one query row, one head (docs/numerics.md "Attention"). The DSP body
 * sign-extends the query once (two int16 pairs a word of four values), then takes two keys a pass:
 * per group of four channels one query LDRD, two key loads, four SXTB16 and four SMLAD for eight
 * MACs; the scaling is one SMULL when the scale product fits 31 bits. The Helium body (BERTL14_USE_MVE) takes
 * sixteen channels a VMLADAVA (int8 x int8 summed into 32 bits) and scales four keys a vector. */
#include "bertl14_kernels.h"
#include "bertl14_acle_emul.h"
#if defined(BERTL14_USE_MVE)
#include "bertl14_mve.h"
#endif

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

#if defined(BERTL14_USE_MVE)
/* The dot product of the query (held in q0, q1) with one key of D = 16 or 32 channels: one or two VMLADAVA. */
static inline __attribute__((always_inline)) int32_t dot_key(int8x16_t q0, int8x16_t q1, const int8_t *ku, uint32_t D)
{
    const int32_t a = vmladavq_s8(q0, vldrbq_s8(ku));
    return D == 32u ? vmladavaq_s8(a, q1, vldrbq_s8(ku + 16)) : a;
}

/* Heads of 16 or 32 channels with the fast scaling: four keys a pass, their dot products with the query loaded
 * once, then rsr(acc * m, shift) of the four at once (bertl14_rsr_mul_mve); a group whose m = sq * sk_u does not
 * fit 31 bits is scaled one key at a time. Returns the number of keys done (a multiple of four). */
static inline __attribute__((always_inline)) uint32_t scores_d(const int8_t *q, uint32_t sq, const int8_t *k,
                                                              uint32_t k_stride, const uint32_t *sk,
                                                              uint32_t sk_stride, uint32_t n, uint32_t D,
                                                              int32_t shift, int32_t *scores)
{
    const int8x16_t q0 = vldrbq_s8(q), q1 = D == 32u ? vldrbq_s8(q + 16) : q0;
    const uint32x4_t sk_off = vmulq_n_u32(vidupq_n_u32(0u, 1), sk_stride);
    const uint32x4_t sqv = vdupq_n_u32(sq);
    uint32_t u = 0;
    for (; u + 4u <= n; u += 4u) {
        const int8_t *const ku = k + u * k_stride;
        const int32_t a0 = dot_key(q0, q1, ku, D), a1 = dot_key(q0, q1, ku + k_stride, D);
        const int32_t a2 = dot_key(q0, q1, ku + 2u * k_stride, D), a3 = dot_key(q0, q1, ku + 3u * k_stride, D);
        const uint32x4_t sku = vldrwq_gather_shifted_offset_u32(sk + u * sk_stride, sk_off);
        const uint32x4_t m = vmulq_u32(sku, sqv);
        if (vmaxvq_u32(0u, vorrq_u32(vmulhq_u32(sku, sqv), vshrq_n_u32(m, 31))) != 0u) {
            scores[u] = scale_score(a0, sq, sk[u * sk_stride], shift, 1);
            scores[u + 1u] = scale_score(a1, sq, sk[(u + 1u) * sk_stride], shift, 1);
            scores[u + 2u] = scale_score(a2, sq, sk[(u + 2u) * sk_stride], shift, 1);
            scores[u + 3u] = scale_score(a3, sq, sk[(u + 3u) * sk_stride], shift, 1);
        } else {
            vstrwq_s32(scores + u, bertl14_rsr_mul_mve(bertl14_lanes_mve(a0, a1, a2, a3), vreinterpretq_s32_u32(m),
                                                       shift));
        }
    }
    return u;
}

static uint32_t scores_mve(const int8_t *q, uint32_t sq, const int8_t *k, uint32_t k_stride, const uint32_t *sk,
                           uint32_t sk_stride, uint32_t n, uint32_t d, int32_t shift, int32_t *scores)
{
    return d == 32u ? scores_d(q, sq, k, k_stride, sk, sk_stride, n, 32u, shift, scores)
                    : scores_d(q, sq, k, k_stride, sk, sk_stride, n, 16u, shift, scores);
}
#endif

void bertl14_attn_scores_s8(const bertl14_attn_params *ap, const int8_t *q, uint32_t sq, const int8_t *k,
                            const uint32_t *sk, int32_t *scores)
{
    const uint32_t n = ap->n, d = ap->d, k_stride = ap->k_stride, sk_stride = ap->scale_stride;
    const int32_t shift = ap->score_shift;
    const int fast = shift >= 21 && shift <= 62;
    uint32_t u = 0;
#if defined(BERTL14_USE_MVE)
    if (fast && (d == 16u || d == 32u)) {
        u = scores_mve(q, sq, k, k_stride, sk, sk_stride, n, d, shift, scores);
    }
    for (; u < n; u++) {                                   /* other d, the last keys, or a generic scaling */
        const int8_t *const ku = k + u * k_stride;
        int32_t acc = 0;
        for (uint32_t i = 0; i < d; i += 16u) {
            const mve_pred16_t p = vctp8q(d - i);
            acc = vmladavaq_s8(acc, vldrbq_z_s8(q + i, p), vldrbq_z_s8(ku + i, p));
        }
        scores[u] = scale_score(acc, sq, sk[u * sk_stride], shift, fast);
    }
#elif defined(BERTL14_USE_DSP)
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
