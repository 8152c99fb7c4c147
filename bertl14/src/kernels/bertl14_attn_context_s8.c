/* Attention context of one head: probabilities x values (docs/numerics.md "context"). The DSP body
 * computes the weights w_u once into the caller's scratch; when they all fit int16 it takes two keys
 * a SMLAD (PKHBT/PKHTB pair the two keys' values of one channel), else it walks the keys once per
 * tile of eight channels with the eight sums in registers (SXTB + MLA: w_u needs 17 bits). */
#include "bertl14_kernels.h"
#include "bertl14_acle_emul.h"

void bertl14_attn_context_s8(const uint8_t *p, const int8_t *v, uint32_t v_stride, const uint32_t *sv,
                             uint32_t sv_stride, uint32_t n, uint32_t d, int32_t *w, int16_t *ctx)
{
    uint32_t wor = 0;
    for (uint32_t u = 0; u < n; u++) {
        /* p <= 255, sv < 2^17: w < 2^17; sum_u w_u * 128 < 2^25 for n <= 512 */
        w[u] = (int32_t)(((uint32_t)p[u] * sv[u * sv_stride] + 128u) >> 8);
        wor |= (uint32_t)w[u];
    }
    uint32_t i = 0;
#if defined(BERTL14_USE_DSP)
    if (wor < 0x8000u && !(((uintptr_t)v | v_stride) & 3u)) {
        /* every w_u fits int16: two keys a SMLAD, (w_u, w_u+1) . (v[u][c], v[u+1][c]) */
        for (; i + 4u <= d; i += 4u) {                             /* four channels a pass */
            int32_t c0 = 0, c1 = 0, c2 = 0, c3 = 0;
            const int8_t *vu = v + i;
            const int32_t *wu = w, *const wend = w + (n & ~1u);
            for (; wu < wend; wu += 2, vu += 2u * v_stride) {
                const uint32_t wp = bertl14_pack_lo16((uint32_t)wu[0], (uint32_t)wu[1]);
                const uint32_t a = bertl14_ld32(vu), b = bertl14_ld32(vu + v_stride);
                const uint32_t ae = bertl14_sxtb16(a), be = bertl14_sxtb16(b);                       /* (a0, a2), (b0, b2) */
                const uint32_t ao = bertl14_sxtb16_ror8(a), bo = bertl14_sxtb16_ror8(b); /* (a1, a3), (b1, b3) */
                c0 = bertl14_smlad(wp, bertl14_pack_lo16(ae, be), c0);
                c2 = bertl14_smlad(wp, bertl14_pack_hi16(ae, be), c2);
                c1 = bertl14_smlad(wp, bertl14_pack_lo16(ao, bo), c1);
                c3 = bertl14_smlad(wp, bertl14_pack_hi16(ao, bo), c3);
            }
            if (n & 1u) {                                          /* the last key of an odd n */
                c0 += *wu * vu[0];
                c1 += *wu * vu[1];
                c2 += *wu * vu[2];
                c3 += *wu * vu[3];
            }
            ctx[i] = (int16_t)bertl14_ssat(bertl14_rsr32(c0, 8), 16);
            ctx[i + 1u] = (int16_t)bertl14_ssat(bertl14_rsr32(c1, 8), 16);
            ctx[i + 2u] = (int16_t)bertl14_ssat(bertl14_rsr32(c2, 8), 16);
            ctx[i + 3u] = (int16_t)bertl14_ssat(bertl14_rsr32(c3, 8), 16);
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
}
