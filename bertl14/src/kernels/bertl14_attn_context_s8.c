/* Attention context of one head: probabilities x values (docs/numerics.md "context"). The DSP body
 * computes the weights w_u once into the caller's scratch; when they all fit int16 it takes two keys
 * a SMLAD (PKHBT/PKHTB pair the two keys' values of one channel), else it walks the keys once per
 * tile of eight channels with the eight sums in registers (SXTB + MLA: w_u needs 17 bits). The Helium body
 * (BERTL14_USE_MVE) computes the weights four a vector, then walks the keys once per tile of sixteen channels, the
 * sixteen sums in four vectors: each key's values widened to 32 bits (VLDRB.S32) and multiplied by w_u (VMLA). */
#include "bertl14_kernels.h"
#include "bertl14_acle_emul.h"
#if defined(BERTL14_USE_MVE)
#include "bertl14_mve.h"
#endif

void bertl14_attn_context_s8(const uint8_t *p, const int8_t *v, uint32_t v_stride, const uint32_t *sv,
                             uint32_t sv_stride, uint32_t n, uint32_t d, int32_t *w, int16_t *ctx)
{
#if defined(BERTL14_USE_MVE)
    /* w_u = (p_u * sv_u + 128) >> 8, four a vector (p widened from bytes, sv gathered: sv_stride words apart) */
    const uint32x4_t sv_off = vmulq_n_u32(vidupq_n_u32(0u, 1), sv_stride);
    for (uint32_t u = 0; u < n; u += 4u) {
        const mve_pred16_t pu = vctp32q(n - u);
        const uint32x4_t pv = vldrbq_z_u32(p + u, pu);
        const uint32x4_t s = vldrwq_gather_shifted_offset_z_u32(sv + u * sv_stride, sv_off, pu);
        vstrwq_p_s32(w + u, vreinterpretq_s32_u32(vrshrq_n_u32(vmulq_u32(pv, s), 8)), pu);
    }
    uint32_t i = 0;
    for (; i + 16u <= d; i += 16u) {                               /* sixteen channels a pass */
        int32x4_t c0 = vdupq_n_s32(0), c1 = c0, c2 = c0, c3 = c0;
        const int8_t *vu = v + i;
        for (uint32_t u = 0; u < n; u++, vu += v_stride) {
            const int32_t wu = w[u];
            c0 = vmlaq_n_s32(c0, vldrbq_s32(vu), wu);
            c1 = vmlaq_n_s32(c1, vldrbq_s32(vu + 4), wu);
            c2 = vmlaq_n_s32(c2, vldrbq_s32(vu + 8), wu);
            c3 = vmlaq_n_s32(c3, vldrbq_s32(vu + 12), wu);
        }
        /* ctx = sat16(rsr(c, 8)): the rounding shift (VRSHR) is exact, VQMOVNB saturates into the low halves */
        vstrhq_s32(ctx + i, vreinterpretq_s32_s16(vqmovnbq_s32(vdupq_n_s16(0), vrshrq_n_s32(c0, 8))));
        vstrhq_s32(ctx + i + 4, vreinterpretq_s32_s16(vqmovnbq_s32(vdupq_n_s16(0), vrshrq_n_s32(c1, 8))));
        vstrhq_s32(ctx + i + 8, vreinterpretq_s32_s16(vqmovnbq_s32(vdupq_n_s16(0), vrshrq_n_s32(c2, 8))));
        vstrhq_s32(ctx + i + 12, vreinterpretq_s32_s16(vqmovnbq_s32(vdupq_n_s16(0), vrshrq_n_s32(c3, 8))));
    }
    for (; i < d; i += 4u) {                                       /* the last 1..15 channels, four a pass */
        const mve_pred16_t pc = vctp32q(d - i);
        int32x4_t c = vdupq_n_s32(0);
        const int8_t *vu = v + i;
        for (uint32_t u = 0; u < n; u++, vu += v_stride) {
            c = vmlaq_n_s32(c, vldrbq_z_s32(vu, pc), w[u]);
        }
        vstrhq_p_s32(ctx + i, vreinterpretq_s32_s16(vqmovnbq_s32(vdupq_n_s16(0), vrshrq_n_s32(c, 8))), pc);
    }
#else
    uint32_t wor = 0;
    for (uint32_t u = 0; u < n; u++) {
        /* p <= 255, sv < 2^17: w < 2^17; sum_u w_u * 128 < 2^25 for n <= 512 */
        w[u] = (int32_t)(((uint32_t)p[u] * sv[u * sv_stride] + 128u) >> 8);
        wor |= (uint32_t)w[u];
    }
    uint32_t i = 0;
#if defined(BERTL14_USE_DSP)
    if (wor < 0x8000u && !(((uintptr_t)v | v_stride) & 3u)) {
        /* every w_u fits int16: two keys a SMLAD, (w_u, w_u+1) . (v[u][c], v[u+1][c]); the pairs packed once, in
         * place (pair j into word j <= 2j: ascending j never overwrites a weight still to be read) */
        const uint32_t pairs = n / 2u;
        const int32_t wlast = n ? w[n - 1u] : 0;                   /* the last key of an odd n */
        for (uint32_t j = 0; j < pairs; j++) {
            w[j] = (int32_t)bertl14_pack_lo16((uint32_t)w[2u * j], (uint32_t)w[2u * j + 1u]);
        }
        const uint32_t *const wend = (const uint32_t *)w + pairs;
        for (; i + 4u <= d; i += 4u) {                             /* four channels a pass */
            int32_t c0 = 0, c1 = 0, c2 = 0, c3 = 0;
            const int8_t *vu = v + i;
            for (const uint32_t *wu = (const uint32_t *)w; wu < wend; wu++, vu += 2u * v_stride) {
                const uint32_t wp = *wu;
                const uint32_t a = bertl14_ld32(vu), b = bertl14_ld32(vu + v_stride);
                const uint32_t ae = bertl14_sxtb16(a), be = bertl14_sxtb16(b);                       /* (a0, a2), (b0, b2) */
                const uint32_t ao = bertl14_sxtb16_ror8(a), bo = bertl14_sxtb16_ror8(b); /* (a1, a3), (b1, b3) */
                c0 = bertl14_smlad(wp, bertl14_pack_lo16(ae, be), c0);
                c2 = bertl14_smlad(wp, bertl14_pack_hi16(ae, be), c2);
                c1 = bertl14_smlad(wp, bertl14_pack_lo16(ao, bo), c1);
                c3 = bertl14_smlad(wp, bertl14_pack_hi16(ao, bo), c3);
            }
            if (n & 1u) {                                          /* the last key of an odd n */
                c0 += wlast * vu[0];
                c1 += wlast * vu[1];
                c2 += wlast * vu[2];
                c3 += wlast * vu[3];
            }
            ctx[i] = (int16_t)bertl14_ssat(bertl14_rsr32(c0, 8), 16);
            ctx[i + 1u] = (int16_t)bertl14_ssat(bertl14_rsr32(c1, 8), 16);
            ctx[i + 2u] = (int16_t)bertl14_ssat(bertl14_rsr32(c2, 8), 16);
            ctx[i + 3u] = (int16_t)bertl14_ssat(bertl14_rsr32(c3, 8), 16);
        }
        for (; i < d; i++) {                                       /* the last 1..3 channels, the same pairs */
            int32_t c = 0;
            const int8_t *vu = v + i;
            for (const uint32_t *wu = (const uint32_t *)w; wu < wend; wu++, vu += 2u * v_stride) {
                c += (int32_t)(*wu & 0xFFFFu) * vu[0] + (int32_t)(*wu >> 16) * vu[v_stride];
            }
            if (n & 1u) {
                c += wlast * vu[0];
            }
            ctx[i] = (int16_t)bertl14_sat16(bertl14_rsr32(c, 8));
        }
    } else if (!(((uintptr_t)v | v_stride) & 3u)) {
        for (; i + 8u <= d; i += 8u) {                             /* eight channels a pass */
            int32_t c0 = 0, c1 = 0, c2 = 0, c3 = 0, c4 = 0, c5 = 0, c6 = 0, c7 = 0;
            const int8_t *vu = v + i;
            for (uint32_t u = 0; u < n; u++, vu += v_stride) {
                const int32_t wu = w[u];
                const uint32_t a = bertl14_ld32(vu), b = bertl14_ld32(vu + 4);
                c0 += wu * (int8_t)a;
                c1 += wu * (int8_t)(a >> 8);
                c2 += wu * (int8_t)(a >> 16);
                c3 += wu * ((int32_t)a >> 24);
                c4 += wu * (int8_t)b;
                c5 += wu * (int8_t)(b >> 8);
                c6 += wu * (int8_t)(b >> 16);
                c7 += wu * ((int32_t)b >> 24);
            }
            ctx[i] = (int16_t)bertl14_ssat(bertl14_rsr32(c0, 8), 16);
            ctx[i + 1u] = (int16_t)bertl14_ssat(bertl14_rsr32(c1, 8), 16);
            ctx[i + 2u] = (int16_t)bertl14_ssat(bertl14_rsr32(c2, 8), 16);
            ctx[i + 3u] = (int16_t)bertl14_ssat(bertl14_rsr32(c3, 8), 16);
            ctx[i + 4u] = (int16_t)bertl14_ssat(bertl14_rsr32(c4, 8), 16);
            ctx[i + 5u] = (int16_t)bertl14_ssat(bertl14_rsr32(c5, 8), 16);
            ctx[i + 6u] = (int16_t)bertl14_ssat(bertl14_rsr32(c6, 8), 16);
            ctx[i + 7u] = (int16_t)bertl14_ssat(bertl14_rsr32(c7, 8), 16);
        }
    }
#else
    (void)wor;                                                     /* the DSP body's test */
#endif
    for (; i < d; i++) {                                           /* one channel a pass */
        int32_t c = 0;
        const int8_t *vu = v + i;
        for (uint32_t u = 0; u < n; u++, vu += v_stride) {
            c += w[u] * *vu;
        }
        ctx[i] = (int16_t)bertl14_sat16(bertl14_rsr32(c, 8));
    }
#endif
}
