/* tanh-approximation GELU with a 257-entry tanh LUT (docs/numerics.md "GELU"):
 * 0.5 x (1 + tanh(sqrt(2/pi) (x + 0.044715 x^3))). */
#include "bertl14_kernels.h"

int32_t bertl14_tanh_q12(int32_t u)
{
    uint32_t a = u < 0 ? (uint32_t)(-(int64_t)u) : (uint32_t)u;
    int32_t t;
    if (a >= (8u << 12)) {
        t = 32768;
    } else {
        uint32_t i = a >> 7, f = a & 127u;
        int32_t l0 = bertl14_tanh_lut[i], l1 = bertl14_tanh_lut[i + 1];
        t = l0 + (((l1 - l0) * (int32_t)f + 64) >> 7);
    }
    return u < 0 ? -t : t;
}

void bertl14_gelu_s16(int16_t *x, uint32_t n, int32_t f_in)
{
    for (uint32_t k = 0; k < n; k++) {
        const int64_t xv = x[k];
        const int64_t x12 = bertl14_rsr(xv, f_in - 12);                                /* x in Q12 */
        const int64_t x3 = bertl14_rsr(bertl14_rsr(x12 * x12, 12) * x12, 12);          /* x^3 */
        const int64_t inner = x12 + bertl14_rsr(x3 * 2930, 16);                        /* x + 0.044715 x^3 */
        const int64_t u = bertl14_rsr(inner * 52290, 16);                              /* * sqrt(2/pi) */
        const int32_t t = bertl14_tanh_q12(u > INT32_MAX ? INT32_MAX : (u < -INT32_MAX ? -INT32_MAX : (int32_t)u));
        x[k] = (int16_t)bertl14_sat16(bertl14_rsr(xv * (32768 + t), 16));              /* 0.5 x (1 + t) */
    }
}
