/* LUT softmax of the attention: scores in Q10 and their maximum -> probabilities in Q8 (docs/numerics.md
 * "softmax", v1.2). e_u = exp_q22(x_u, max): z = (max - x_u) log2(e) in Q8 by one SMMLS against the row's term
 * MC, its fraction an EXP_LUT entry (no interpolation), its integer part a right shift clamped to 31 (USAT); the
 * sum fits uint32 (n <= 512, e <= 2^22); one reciprocal R = (2^32 - 1) / (sum >> 8) <= 2^18 a row (UDIV), and
 * p_u = min(255, rsr(e_u * R, 32)), one SMMULR and a USAT. On the core the DSP body's two passes are assembly
 * loops of four scores (GCC neither pairs the loads and stores into LDRD/STRD nor keeps the loop free of moves):
 * 8.5 and 4 instructions a score. The Helium body (BERTL14_USE_MVE) runs each pass on four scores a vector, the
 * LUT entries by a gather. */
#include "bertl14_kernels.h"
#include "bertl14_acle_emul.h"
#if defined(BERTL14_USE_MVE)
#include "bertl14_mve.h"
#endif

#define LOG2E_Q30 1549082005 /* round(log2(e) * 2^30), odd: d * LOG2E_Q30 / 2^32 is d log2(e) in Q8, d in Q10 */

/* MC = ceil(max * LOG2E_Q30 / 2^32): hi(MC * 2^32 - x * LOG2E_Q30) is 0 at the maximum */
static inline int32_t max_term(int32_t max)
{
    return (int32_t)(((int64_t)max * LOG2E_Q30 + 0xFFFFFFFFLL) >> 32);
}

#if !defined(BERTL14_USE_MVE)
/* exp(x - max) in Q22 from x and mc = max_term(max): z = (max - x) log2(e) in Q8, 0 <= z < 2^31 (one SMMLS) */
static inline uint32_t exp_q22(int32_t x, int32_t mc)
{
    const int32_t z = bertl14_smmls(x, LOG2E_Q30, mc);
#if defined(BERTL14_USE_DSP)
    const uint32_t k = bertl14_usat5_asr8(z);
#else
    const uint32_t k = (uint32_t)z >> 8 < 31u ? (uint32_t)z >> 8 : 31u;
#endif
    return ((uint32_t)bertl14_exp_lut[(uint32_t)z & 255u] << 7) >> k; /* the entry is <= 2^15: k = 31 gives 0 */
}

/* min(255, rsr(e * r, 32)) for e <= 2^22, r <= 2^18 (both positive as int32) */
static inline uint32_t prob_q8(uint32_t e, uint32_t r)
{
#if defined(BERTL14_USE_DSP)
    return bertl14_usat(bertl14_smmulr((int32_t)e, (int32_t)r), 8);
#else
    const uint32_t v = (uint32_t)(((uint64_t)e * r + 0x80000000u) >> 32);
    return v > 255u ? 255u : v;
#endif
}

#if defined(BERTL14_USE_DSP) && BERTL14_ACLE_NATIVE && defined(__GNUC__) && defined(__thumb2__)
/* e_u of two scores: LDRD, then per score SMMLS, UXTB, USAT (k, ASR #8), LDRH, LSL, LSR, ADD; STRD */
#define BL14_EXP2 "ldrd %[a], %[b], [%[s]]\n\t" \
    "smmls %[a], %[a], %[c], %[mc]\n\tsmmls %[b], %[b], %[c], %[mc]\n\t" \
    "uxtb %[i], %[a]\n\tuxtb %[j], %[b]\n\tusat %[a], #5, %[a], asr #8\n\tusat %[b], #5, %[b], asr #8\n\t" \
    "ldrh %[i], [%[t], %[i], lsl #1]\n\tldrh %[j], [%[t], %[j], lsl #1]\n\t" \
    "lsl %[i], %[i], #7\n\tlsl %[j], %[j], #7\n\tlsr %[i], %[i], %[a]\n\tlsr %[j], %[j], %[b]\n\t" \
    "add %[sum], %[sum], %[i]\n\tadd %[sum], %[sum], %[j]\n\tstrd %[i], %[j], [%[s]], #8\n\t"
/* p_u of two scores: LDRD, per score SMMULR, USAT, STRB */
#define BL14_NORM2 "ldrd %[a], %[b], [%[s]], #8\n\tsmmulr %[a], %[a], %[r]\n\tsmmulr %[b], %[b], %[r]\n\t" \
    "usat %[a], #8, %[a]\n\tusat %[b], #8, %[b]\n\tstrb %[a], [%[p]], #1\n\tstrb %[b], [%[p]], #1\n\t"
#define BL14_SOFTMAX_ASM 1
#else
#define BL14_SOFTMAX_ASM 0
#endif

/* Each pass four scores an iteration (DSP assembly on the core), then the last 0..3 (or all on the host). */
void bertl14_softmax_s32(int32_t *scores, uint32_t n, int32_t max, uint8_t *p)
{
    const int32_t mc = max_term(max);
    uint32_t sum = 0, u = 0; /* sum <= 512 * 2^22 */
#if BL14_SOFTMAX_ASM
    const uint32_t n4 = n & ~3u;
    if (n4 != 0u) {
        int32_t *s = scores;
        const int32_t *const end = scores + n4;
        uint32_t a, b, i, j;
        __asm volatile("1:\n\t" BL14_EXP2 BL14_EXP2 "cmp %[s], %[end]\n\tbne 1b\n\t"
                       : [s] "+r"(s), [sum] "+r"(sum), [a] "=&r"(a), [b] "=&r"(b), [i] "=&r"(i), [j] "=&r"(j)
                       : [end] "r"(end), [c] "r"(LOG2E_Q30), [mc] "r"(mc), [t] "r"(bertl14_exp_lut)
                       : "cc", "memory");
        u = n4;
    }
#endif
    for (; u < n; u++) {
        const uint32_t e = exp_q22(scores[u], mc);
        scores[u] = (int32_t)e;
        sum += e;
    }
    /* sum >= 2^22 (the maximum's e): r <= 2^18; a max above every score (a caller's error) gives zeros, not a trap */
    const uint32_t r = sum >> 8 ? 0xFFFFFFFFu / (sum >> 8) : 0u;
    u = 0;
#if BL14_SOFTMAX_ASM
    if (n4 != 0u) {
        const int32_t *s = scores;
        uint8_t *q = p;
        const uint8_t *const end = p + n4;
        uint32_t a, b;
        __asm volatile("1:\n\t" BL14_NORM2 BL14_NORM2 "cmp %[p], %[end]\n\tbne 1b\n\t"
                       : [s] "+r"(s), [p] "+r"(q), [a] "=&r"(a), [b] "=&r"(b)
                       : [end] "r"(end), [r] "r"(r)
                       : "cc", "memory");
        u = n4;
    }
#endif
    for (; u < n; u++) {
        p[u] = (uint8_t)prob_q8((uint32_t)scores[u], r);
    }
}
#else
/* exp_q22 of four lanes: z = mc - ceil(x C / 2^32) (the SMMLS of the scalar body: VMULH gives the floor, and
 * x C has a fraction for every x != 0 since C is odd), the shift a VSHL by -k */
static inline uint32x4_t exp_q22_mve(int32x4_t x, int32_t mc)
{
    const int32x4_t z0 = vsubq_s32(vdupq_n_s32(mc), vmulhq_s32(x, vdupq_n_s32(LOG2E_Q30)));
    const uint32x4_t z = vreinterpretq_u32_s32(vsubq_m_n_s32(z0, z0, 1, vcmpneq_n_s32(x, 0)));
    const int32x4_t k = vreinterpretq_s32_u32(vminq_u32(vshrq_n_u32(z, 8), vdupq_n_u32(31u)));
    const uint32x4_t m = vldrhq_gather_shifted_offset_u32(bertl14_exp_lut, vandq_u32(z, vdupq_n_u32(255u)));
    return vshlq_u32(vshlq_n_u32(m, 7), vnegq_s32(k));
}

/* e_u = exp(x_u - max) of four scores (the last 1..3: `full` 0, lanes pu) into `scores`; their sum added to *sum */
static inline __attribute__((always_inline)) void exp_pass(int32_t *scores, int32_t mc, int full, mve_pred16_t pu,
                                                           uint32_t *sum)
{
    const int32x4_t x = full ? vldrwq_s32(scores) : vldrwq_z_s32(scores, pu);
    const uint32x4_t e = exp_q22_mve(x, mc);
    if (full) {
        vstrwq_s32(scores, vreinterpretq_s32_u32(e));
        *sum = vaddvaq_u32(*sum, e);
    } else {
        vstrwq_p_s32(scores, vreinterpretq_s32_u32(e), pu);
        *sum = vaddvaq_p_u32(*sum, e, pu);
    }
}

/* p_u = min(255, rsr(e_u * r, 32)) of four scores (or the last 1..3) */
static inline __attribute__((always_inline)) void norm_pass(const int32_t *scores, uint32_t r, uint8_t *p, int full,
                                                            mve_pred16_t pu)
{
    const uint32x4_t e = vreinterpretq_u32_s32(full ? vldrwq_s32(scores) : vldrwq_z_s32(scores, pu));
    const uint32x4_t v = vminq_u32(vrmulhq_u32(e, vdupq_n_u32(r)), vdupq_n_u32(255u));
    if (full) {
        vstrbq_u32(p, v);
    } else {
        vstrbq_p_u32(p, v, pu);
    }
}

/* Each pass on whole vectors of four scores, then the last 1..3 scores with the other lanes predicated off. */
void bertl14_softmax_s32(int32_t *scores, uint32_t n, int32_t max, uint8_t *p)
{
    const uint32_t n4 = n & ~3u;
    const mve_pred16_t tail = vctp32q(n - n4);
    const int32_t mc = max_term(max);
    uint32_t sum = 0; /* <= 512 * 2^22 */
    for (uint32_t u = 0; u < n4; u += 4u) {
        exp_pass(scores + u, mc, 1, tail, &sum);
    }
    if (n4 < n) {
        exp_pass(scores + n4, mc, 0, tail, &sum);
    }
    /* sum >= 2^22 (the maximum's e): r <= 2^18; a max above every score (a caller's error) gives zeros, not a trap */
    const uint32_t r = sum >> 8 ? 0xFFFFFFFFu / (sum >> 8) : 0u;
    for (uint32_t u = 0; u < n4; u += 4u) {
        norm_pass(scores + u, r, p + u, 1, tail);
    }
    if (n4 < n) {
        norm_pass(scores + n4, r, p + n4, 0, tail);
    }
}
#endif
