/* The steps of row quantization (docs/numerics.md "Row quantization") that its kernels share:
 * bertl14_quantize_row_s16.c (a contiguous row) and bertl14_quantize_block_s16.c (a token of a block in place). */
#ifndef BERTL14_QUANTIZE_H
#define BERTL14_QUANTIZE_H

#include "bertl14_kernels.h"
#include "bertl14_acle_emul.h"
#if defined(BERTL14_USE_MVE)
#include "bertl14_mve.h"
#endif

#if defined(BERTL14_USE_DSP) && !defined(BERTL14_USE_MVE)
/* max |x| of the int16 lanes of running maxima mx and minima mn (SMAX16x2 / SMIN16x2 of 0 and the values) */
static inline int32_t max_abs_lanes(uint32_t mx, uint32_t mn)
{
    const int32_t hi = (int16_t)(mx & 0xFFFFu) > (int16_t)(mx >> 16) ? (int16_t)(mx & 0xFFFFu) : (int16_t)(mx >> 16);
    const int32_t lo = (int16_t)(mn & 0xFFFFu) < (int16_t)(mn >> 16) ? (int16_t)(mn & 0xFFFFu) : (int16_t)(mn >> 16);
    return hi > -lo ? hi : -lo;
}
#endif

/* max |x_i| of n int16 values (32768 for -32768). */
static inline int32_t max_abs_s16(const int16_t *x, uint32_t n)
{
#if defined(BERTL14_USE_MVE)
    uint32_t m = 0, i = 0;                                     /* VMAXAV: |x| as unsigned, so |-32768| = 32768 */
    for (; i + 8u <= n; i += 8u) {
        m = vmaxavq_s16((uint16_t)m, vldrhq_s16(x + i));
    }
    if (i < n) {
        m = vmaxavq_p_s16((uint16_t)m, vldrhq_z_s16(x + i, vctp16q(n - i)), vctp16q(n - i));
    }
    return (int32_t)m;
#else
    int32_t hi = 0, lo = 0;
    uint32_t i = 0;
#if defined(BERTL14_USE_DSP)
    uint32_t mx = 0, mn = 0;                                   /* two lanes a word (LDR, any alignment) */
    for (; i + 2u <= n; i += 2u) {
        const uint32_t w = bertl14_ld32(x + i);
        mx = bertl14_smax16x2(mx, w);
        mn = bertl14_smin16x2(mn, w);
    }
    hi = max_abs_lanes(mx, mn);
#endif
    for (; i < n; i++) {
        hi = x[i] > hi ? x[i] : hi;
        lo = x[i] < lo ? x[i] : lo;
    }
    return hi > -lo ? hi : -lo;
#endif
}

static inline uint32_t scale_of(int32_t m)
{
    const uint32_t s = ((uint32_t)m * 256u + 126u) / 127u;    /* ceil(256 m / 127) */
    return s ? s : 1u;
}


/* inv = div_round(2^32, s) with 32-bit divisions (UDIV): 2^32 = Q s + R + 1 with Q = (2^32 - 1) / s,
 * R = (2^32 - 1) % s, so (2^32 + s/2) / s = Q + (R + 1 + s/2) / s, the last quotient 0 or 1.
 * s < 3 only for an all-zero row (m = 0), whose q are 0 whatever inv: 0 then, so inv fits int32. */
static inline int32_t inv_scale(uint32_t s)
{
    if (s < 3u) {
        return 0;
    }
    const uint32_t q = 0xFFFFFFFFu / s, r = 0xFFFFFFFFu - q * s;
    return (int32_t)(q + ((uint64_t)r + 1u + s / 2u >= s ? 1u : 0u));
}

#if !defined(BERTL14_USE_MVE)
/* q = sat8(rsr(x * inv, 24)); |x * inv| < 2^47: one SMULL, |rsr| < 2^23 */
static inline int32_t quantize_one(int32_t x, int32_t inv)
{
#if defined(BERTL14_USE_DSP)
    /* |x << 8| <= 2^23, inv < 2^31: (x 2^8 inv + 2^31) >> 32 = (x inv + 2^23) >> 24, one SMMULR */
    return bertl14_ssat(bertl14_smmulr(x * 256, inv), 8);
#else
    return bertl14_sat8(bertl14_rsr_mul(x, inv, 24));
#endif
}
#endif

#if defined(BERTL14_USE_DSP) && !defined(BERTL14_USE_MVE)
/* quantize_one of the bottom and of the top value of a word of two int16, |x inv| < 2^46: SMLAWB / SMLAWT with
 * 2^7 * 2^16 added give (x inv + 2^23) >> 16, SSAT of that >> 8 the rounded q (the two shifts floor once): two
 * instructions a value, on the packed word. */
static inline int32_t quantize_lo(uint32_t w, int32_t inv)
{
    return bertl14_ssat(bertl14_smlawb(inv, w, 128) >> 8, 8);
}

static inline int32_t quantize_hi(uint32_t w, int32_t inv)
{
    return bertl14_ssat(bertl14_smlawt(inv, w, 128) >> 8, 8);
}

/* The int16 pair (q_lo, q_hi) of a word, quantized (PKHBT) */
static inline uint32_t quantize_pair(uint32_t w, int32_t inv)
{
    return bertl14_pack_lo16((uint32_t)quantize_lo(w, inv), (uint32_t)quantize_hi(w, inv));
}
#endif

#if defined(BERTL14_USE_MVE)
/* quantize_one of cnt (1..4) values: sat8(VRMULH(x * 2^8, inv)), as the DSP body's SMMULR */
static inline __attribute__((always_inline)) int32x4_t quantize4_mve(const int16_t *x, int32_t inv, uint32_t cnt)
{
    const int32x4_t v = cnt == 4u ? vldrhq_s32(x) : vldrhq_z_s32(x, vctp32q(cnt));
    const int32x4_t q = vrmulhq_s32(vshlq_n_s32(v, 8), vdupq_n_s32(inv));
    return vmaxq_s32(vminq_s32(q, vdupq_n_s32(127)), vdupq_n_s32(-128));
}

static inline __attribute__((always_inline)) void store16_mve(int16_t *p, int32x4_t q, uint32_t cnt)
{
    if (cnt == 4u) {
        vstrhq_s32(p, q);
    } else {
        vstrhq_p_s32(p, q, vctp32q(cnt));
    }
}

static inline __attribute__((always_inline)) void store8_mve(int8_t *p, int32x4_t q, uint32_t cnt)
{
    if (cnt == 4u) {
        vstrbq_s32(p, q);
    } else {
        vstrbq_p_s32(p, q, vctp32q(cnt));
    }
}
#endif

#endif /* BERTL14_QUANTIZE_H */
