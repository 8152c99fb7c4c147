/* Attention context of one head: probabilities x values (docs/numerics.md "context"). The DSP body
 * computes the weights w_u once into the caller's scratch, then walks the keys once per tile of
 * eight channels with the eight sums in registers (SXTB + MLA: w_u needs 17 bits). */
#include "bertl14_kernels.h"
#include "bertl14_acle_emul.h"

void bertl14_attn_context_s8(const uint8_t *p, const int8_t *v, uint32_t v_stride, const uint32_t *sv,
                             uint32_t sv_stride, uint32_t n, uint32_t d, int32_t *w, int16_t *ctx)
{
    for (uint32_t u = 0; u < n; u++) {
        /* p <= 255, sv < 2^17: w < 2^17; sum_u w_u * 128 < 2^25 for n <= 512 */
        w[u] = (int32_t)(((uint32_t)p[u] * sv[u * sv_stride] + 128u) >> 8);
    }
    uint32_t i = 0;
#if defined(BERTL14_USE_DSP)
    if (!(((uintptr_t)v | v_stride) & 3u)) {
        for (; i + 8u <= d; i += 8u) {                             /* eight channels a pass */
            int32_t c0 = 0, c1 = 0, c2 = 0, c3 = 0, c4 = 0, c5 = 0, c6 = 0, c7 = 0;
            const int8_t *vu = v + i;
            for (uint32_t u = 0; u < n; u++, vu += v_stride) {
                const int32_t wu = w[u];
                const uint32_t a = *(const uint32_t *)(const void *)vu, b = *(const uint32_t *)(const void *)(vu + 4);
                c0 += wu * (int8_t)a;
                c1 += wu * (int8_t)(a >> 8);
                c2 += wu * (int8_t)(a >> 16);
                c3 += wu * ((int32_t)a >> 24);
                c4 += wu * (int8_t)b;
                c5 += wu * (int8_t)(b >> 8);
                c6 += wu * (int8_t)(b >> 16);
                c7 += wu * ((int32_t)b >> 24);
            }
            ctx[i] = (int16_t)__ssat(bertl14_rsr32(c0, 8), 16);
            ctx[i + 1u] = (int16_t)__ssat(bertl14_rsr32(c1, 8), 16);
            ctx[i + 2u] = (int16_t)__ssat(bertl14_rsr32(c2, 8), 16);
            ctx[i + 3u] = (int16_t)__ssat(bertl14_rsr32(c3, 8), 16);
            ctx[i + 4u] = (int16_t)__ssat(bertl14_rsr32(c4, 8), 16);
            ctx[i + 5u] = (int16_t)__ssat(bertl14_rsr32(c5, 8), 16);
            ctx[i + 6u] = (int16_t)__ssat(bertl14_rsr32(c6, 8), 16);
            ctx[i + 7u] = (int16_t)__ssat(bertl14_rsr32(c7, 8), 16);
        }
    }
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
