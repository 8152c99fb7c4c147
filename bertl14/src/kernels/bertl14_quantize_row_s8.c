/* Dynamic row quantization to INT8 (docs/numerics.md "Row quantization"). */
#include "bertl14_kernels.h"
#include "bertl14_acle_emul.h"

uint32_t bertl14_row_scale_s16(const int16_t *x, uint32_t n)
{
    int32_t m = 0;
    for (uint32_t i = 0; i < n; i++) {
        int32_t a = x[i] < 0 ? -x[i] : x[i];
        m = a > m ? a : m;
    }
    uint32_t s = ((uint32_t)m * 256u + 126u) / 127u; /* ceil(256 m / 127) */
    return s ? s : 1u;
}

void bertl14_quantize_with_scale_s8(const int16_t *x, uint32_t n, uint32_t s, int8_t *q8, int16_t *q16)
{
    const int64_t inv = (int64_t)bertl14_udiv_round((uint64_t)1 << 32, s);
    for (uint32_t i = 0; i < n; i++) {
        /* |x * inv| < 2^47; the rounding shift needs 64 bits (SMULL on Cortex-M) */
        int64_t v = ((int64_t)x[i] * inv + ((int64_t)1 << 23)) >> 24;
#if defined(BERTL14_USE_DSP)
        int32_t q = __ssat((int32_t)v, 8); /* |v| < 2^23 */
#else
        int32_t q = bertl14_sat8(v);
#endif
        if (q8) {
            q8[i] = (int8_t)q;
        }
        if (q16) {
            q16[i] = (int16_t)q;
        }
    }
}

uint32_t bertl14_quantize_row_s8(const int16_t *x, uint32_t n, int8_t *q8, int16_t *q16)
{
    uint32_t s = bertl14_row_scale_s16(x, n);
    bertl14_quantize_with_scale_s8(x, n, s, q8, q16);
    return s;
}

void bertl14_widen_s8_s16(const int8_t *x, uint32_t count, int16_t *y)
{
    uint32_t i = 0;
#if defined(BERTL14_USE_DSP)
    for (; i + 4 <= count; i += 4) {
        uint32_t w = bertl14_ld32(x + i);
        uint32_t even = __sxtb16(w);            /* x0, x2 */
        uint32_t odd = __sxtb16(bertl14_ror8(w));   /* x1, x3 */
        uint32_t lo = (even & 0xFFFFu) | (odd << 16);
        uint32_t hi = (even >> 16) | (odd & 0xFFFF0000u);
        memcpy(y + i, &lo, 4);
        memcpy(y + i + 2, &hi, 4);
    }
#endif
    for (; i < count; i++) {
        y[i] = x[i];
    }
}
