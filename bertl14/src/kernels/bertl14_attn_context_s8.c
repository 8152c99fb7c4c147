/* Attention context of one head: probabilities x values (docs/numerics.md "context"), the values stored transposed
 * (each channel's values of the n keys contiguous), so each output channel is one dot product over the keys. The
 * weights w_u are computed once into the caller's scratch; when they all fit int16 (the case in every converted
 * model: w_u <= p_u * s_v / 256) the DSP body packs them once as pairs of keys two apart, (w_4g, w_4g+2) and
 * (w_4g+1, w_4g+3), which is what SXTB16 makes of four keys' values of a channel: per four keys and two channels
 * two word loads, four SXTB16 and four SMLAD. Else (and for the last n % 4 keys) one MLA a value. The Helium body
 * (BERTL14_USE_MVE) computes the weights four a vector, stored as int16 by a narrowing store (int32, computed again,
 * when one needs 17 bits), and takes four channels a pass: per eight keys one weight load, four VLDRB.S16 and four
 * VMLADAVA, unpredicated but for the last n % 8 keys; the four sums are rounded and saturated as one vector. */
#include "bertl14_kernels.h"
#include "bertl14_acle_emul.h"
#if defined(BERTL14_USE_MVE)
#include "bertl14_mve.h"
#endif

#if defined(BERTL14_USE_MVE)
/* w_u = (p_u * sv_u + 128) >> 8 four a vector (p widened from bytes, sv gathered: sv_stride words apart) into w as
 * int16 (narrow: the low halves, w's first 2n bytes; exact when every w_u < 2^15) or int32; returns the OR of all of
 * them (p <= 255, sv < 2^17: w < 2^17, so >= 2^15 iff some w_u is) */
static inline uint32_t weights_mve(const uint8_t *p, const uint32_t *sv, uint32_t sv_stride, uint32_t n, int32_t *w,
                                   int narrow)
{
    const uint32x4_t sv_off = vmulq_n_u32(vidupq_n_u32(0u, 1), sv_stride);
    uint32x4_t orv = vdupq_n_u32(0u);
    for (uint32_t u = 0; u < n; u += 4u) {
        const mve_pred16_t pu = vctp32q(n - u);
        const uint32x4_t pv = vldrbq_z_u32(p + u, pu);
        const uint32x4_t s = vldrwq_gather_shifted_offset_z_u32(sv + u * sv_stride, sv_off, pu);
        const uint32x4_t wv = vrshrq_n_u32(vmulq_u32(pv, s), 8);                /* zero in the lanes beyond n */
        orv = vorrq_u32(orv, wv);
        if (narrow) {
            vstrhq_p_s32((int16_t *)(void *)w + u, vreinterpretq_s32_u32(wv), pu);
        } else {
            vstrwq_p_s32(w + u, vreinterpretq_s32_u32(wv), pu);
        }
    }
    return vmaxvq_u32(0u, orv);
}
#else
/* w_u = (p_u * sv_u + 128) >> 8 into w; returns the OR of all of them (p <= 255, sv < 2^17: w < 2^17) */
static inline uint32_t weights(const uint8_t *p, const uint32_t *sv, uint32_t sv_stride, uint32_t n, int32_t *w)
{
    uint32_t wor = 0;
    for (uint32_t u = 0; u < n; u++) {
        w[u] = (int32_t)(((uint32_t)p[u] * sv[u * sv_stride] + 128u) >> 8);
        wor |= (uint32_t)w[u];
    }
    return wor;
}

/* ctx = sat16(rsr(c, 8)); sum_u w_u * 128 < 2^25 for n <= 512, so c + 128 cannot overflow */
static inline int16_t out16(int32_t c)
{
#if defined(BERTL14_USE_DSP)
    return (int16_t)bertl14_ssat(bertl14_rsr32(c, 8), 16);
#else
    return (int16_t)bertl14_sat16(bertl14_rsr32(c, 8));
#endif
}

/* sum_u w_u * row[u] for keys u0..n-1, one MLA a value */
static inline int32_t dot_tail(const int32_t *w, const int8_t *row, uint32_t u0, uint32_t n, int32_t c)
{
    for (uint32_t u = u0; u < n; u++) {
        c += w[u] * row[u];
    }
    return c;
}
#endif

void bertl14_attn_context_s8(const bertl14_attn_params *ap, const uint8_t *p, const int8_t *v, const uint32_t *sv,
                             int32_t *w, int16_t *ctx)
{
    const uint32_t n = ap->n, d = ap->d, v_stride = ap->v_stride, sv_stride = ap->scale_stride;
#if defined(BERTL14_USE_MVE)
    if (weights_mve(p, sv, sv_stride, n, w, 1) < 0x8000u) {
        /* int16 weights (w16); eight keys a VMLADAVA, the last n % 8 with the lanes beyond n predicated off */
        const int16_t *const w16 = (const int16_t *)(const void *)w;
        const uint32_t n8 = n & ~7u;
        const mve_pred16_t pt = vctp16q(n - n8);
        uint32_t c = 0;
        for (; c + 4u <= d; c += 4u) {                             /* four channels a pass, one weight load */
            const int8_t *r0 = v + c * v_stride, *r1 = r0 + v_stride, *r2 = r1 + v_stride, *r3 = r2 + v_stride;
            const int16_t *wp = w16;
            int32_t a0 = 0, a1 = 0, a2 = 0, a3 = 0;
            for (uint32_t u = 0; u < n8; u += 8u) {
                const int16x8_t wv = vld1q_s16(wp);
                a0 = vmladavaq_s16(a0, vldrbq_s16(r0), wv);
                a1 = vmladavaq_s16(a1, vldrbq_s16(r1), wv);
                a2 = vmladavaq_s16(a2, vldrbq_s16(r2), wv);
                a3 = vmladavaq_s16(a3, vldrbq_s16(r3), wv);
                wp += 8;
                r0 += 8;
                r1 += 8;
                r2 += 8;
                r3 += 8;
            }
            if (n8 < n) {                                          /* zero beyond n: those lanes add nothing */
                const int16x8_t wv = vldrhq_z_s16(wp, pt);
                a0 = vmladavaq_s16(a0, vldrbq_z_s16(r0, pt), wv);
                a1 = vmladavaq_s16(a1, vldrbq_z_s16(r1, pt), wv);
                a2 = vmladavaq_s16(a2, vldrbq_z_s16(r2, pt), wv);
                a3 = vmladavaq_s16(a3, vldrbq_z_s16(r3, pt), wv);
            }
            /* ctx = sat16(rsr(a, 8)): VRSHR is exact, VQMOVNB saturates into the low halves */
            const int32x4_t a = vrshrq_n_s32(bertl14_lanes_mve(a0, a1, a2, a3), 8);
            vstrhq_s32(ctx + c, vreinterpretq_s32_s16(vqmovnbq_s32(vdupq_n_s16(0), a)));
        }
        for (; c < d; c++) {                                       /* the last 1..3 channels */
            const int8_t *const r = v + c * v_stride;
            int32_t acc = 0;
            for (uint32_t u = 0; u < n; u += 8u) {
                const mve_pred16_t pu = vctp16q(n - u);
                acc = vmladavaq_s16(acc, vldrbq_z_s16(r + u, pu), vldrhq_z_s16(w16 + u, pu));
            }
            ctx[c] = (int16_t)bertl14_sat16(bertl14_rsr32(acc, 8));
        }
        return;
    }
    (void)weights_mve(p, sv, sv_stride, n, w, 0);                  /* 17-bit weights, as int32 */
    for (uint32_t c = 0; c < d; c++) {                             /* four keys a VMLADAVA */
        const int8_t *const row = v + c * v_stride;
        int32_t acc = 0;
        for (uint32_t u = 0; u < n; u += 4u) {
            const mve_pred16_t pu = vctp32q(n - u);
            acc = vmladavaq_p_s32(acc, vldrbq_z_s32(row + u, pu), vldrwq_z_s32(w + u, pu), pu);
        }
        ctx[c] = (int16_t)bertl14_sat16(bertl14_rsr32(acc, 8));
    }
#else
    const uint32_t wor = weights(p, sv, sv_stride, n, w);
    uint32_t c = 0;
#if defined(BERTL14_USE_DSP)
    if (wor < 0x8000u) {
        /* four keys' weights as two int16 pairs, in place: group g's pair words 2g, 2g + 1 come from words 4g..4g+3
         * (read first); the last n % 4 weights (words 4G..n-1) stay as they are */
        const uint32_t groups = n / 4u;
        for (uint32_t g = 0; g < groups; g++) {
            const uint32_t w0 = (uint32_t)w[4u * g], w1 = (uint32_t)w[4u * g + 1u];
            const uint32_t w2 = (uint32_t)w[4u * g + 2u], w3 = (uint32_t)w[4u * g + 3u];
            w[2u * g] = (int32_t)bertl14_pack_lo16(w0, w2);
            w[2u * g + 1u] = (int32_t)bertl14_pack_lo16(w1, w3);
        }
        const uint32_t *const wp = (const uint32_t *)w;
        for (; c + 2u <= d; c += 2u) {                              /* two channels a pass */
            const int8_t *const r0 = v + c * v_stride, *const r1 = r0 + v_stride;
            int32_t a0 = 0, a1 = 0;
            for (uint32_t g = 0; g < groups; g++) {
                const uint32_t e = wp[2u * g], o = wp[2u * g + 1u];
                const uint32_t x0 = bertl14_ld32(r0 + 4u * g), x1 = bertl14_ld32(r1 + 4u * g);
                a0 = bertl14_smlad(e, bertl14_sxtb16(x0), a0);           /* w_4g v_4g + w_4g+2 v_4g+2 */
                a0 = bertl14_smlad(o, bertl14_sxtb16_ror8(x0), a0);      /* w_4g+1 v_4g+1 + w_4g+3 v_4g+3 */
                a1 = bertl14_smlad(e, bertl14_sxtb16(x1), a1);
                a1 = bertl14_smlad(o, bertl14_sxtb16_ror8(x1), a1);
            }
            ctx[c] = out16(dot_tail(w, r0, 4u * groups, n, a0));
            ctx[c + 1u] = out16(dot_tail(w, r1, 4u * groups, n, a1));
        }
        if (c < d) {                                                /* an odd d's last channel */
            const int8_t *const r0 = v + c * v_stride;
            int32_t a0 = 0;
            for (uint32_t g = 0; g < groups; g++) {
                const uint32_t x0 = bertl14_ld32(r0 + 4u * g);
                a0 = bertl14_smlad(wp[2u * g], bertl14_sxtb16(x0), a0);
                a0 = bertl14_smlad(wp[2u * g + 1u], bertl14_sxtb16_ror8(x0), a0);
            }
            ctx[c] = out16(dot_tail(w, r0, 4u * groups, n, a0));
        }
        return;
    }
#else
    (void)wor;                                                     /* the DSP body's test */
#endif
    for (; c < d; c++) {                                           /* one channel a pass */
        ctx[c] = out16(dot_tail(w, v + c * v_stride, 0, n, 0));
    }
#endif
}
