/* Attention context of one head: probabilities x values (docs/numerics.md "context"). */
#include "bertl14_kernels.h"
#include "bertl14_acle_emul.h"

void bertl14_attn_context_s8(const uint8_t *p, const int8_t *v, uint32_t v_stride, const uint32_t *sv,
                             uint32_t sv_stride, uint32_t n, uint32_t d, int16_t *ctx)
{
    int32_t c[128];
    if (d > 128u) {
        d = 128u; /* checked at init: head_dim <= 128 */
    }
    for (uint32_t i = 0; i < d; i++) {
        c[i] = 0;
    }
    for (uint32_t u = 0; u < n; u++) {
        if (p[u] == 0) {
            continue; /* contributes exactly 0 */
        }
        /* p <= 255, sv < 2^17: w < 2^17; sum_u w_u * 128 < 2^25 */
        const int32_t w = (int32_t)(((uint32_t)p[u] * sv[u * sv_stride] + 128u) >> 8);
        const int8_t *vu = v + u * v_stride;
        for (uint32_t i = 0; i < d; i++) {
            c[i] += w * vu[i];
        }
    }
    for (uint32_t i = 0; i < d; i++) {
        ctx[i] = (int16_t)bertl14_sat16(bertl14_rsr32(c[i], 8));
    }
}
