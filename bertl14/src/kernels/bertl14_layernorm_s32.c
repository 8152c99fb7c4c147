/* Integer LayerNorm with a 1/sqrt LUT (docs/numerics.md "Residual + LayerNorm"). */
#include <string.h>

#include "bertl14_kernels.h"

void bertl14_residual_s8(int32_t *y, const int8_t *h, uint32_t s_h, const uint16_t *u, int32_t shift, uint32_t n)
{
    for (uint32_t c = 0; c < n; c++) {
        /* |h * s_h * u| < 2^7 * 2^17 * 2^16: int64; u un-smooths channel c (4096 = identity) */
        y[c] = bertl14_sat32(y[c] + bertl14_rsr((int64_t)h[c] * s_h * u[c], shift));
    }
}

static uint32_t bit_length64(uint64_t v)
{
    return v ? 64u - (uint32_t)__builtin_clzll(v) : 0u;   /* CLZ */
}

void bertl14_layernorm_s32(const int32_t *r, uint32_t n, int64_t eps_q, const int16_t *gamma,
                           const int32_t *beta, int32_t g_shift, int16_t *y)
{
    int64_t sum = 0;
    int32_t lo = 0, hi = 0;
    for (uint32_t c = 0; c < n; c++) {
        sum += r[c];
        lo = r[c] < lo ? r[c] : lo;
        hi = r[c] > hi ? r[c] : hi;
    }
    const int64_t mu = bertl14_div_round(sum, (int64_t)n);                 /* mean */
    /* |r| < 2^30 (always, in practice): r - mu fits int32 and each square is one SMLAL */
    const int small = lo > -(1 << 30) && hi < (1 << 30);
    int64_t sq = 0;
    if (small) {
        const int32_t mu32 = (int32_t)mu;
        for (uint32_t c = 0; c < n; c++) {
            const int32_t dv = r[c] - mu32;
            sq += (int64_t)dv * dv;
        }
    } else {
        for (uint32_t c = 0; c < n; c++) {
            const int64_t dv = r[c] - mu;
            sq += dv * dv;
        }
    }
    const int64_t v = bertl14_div_round(sq, (int64_t)n) + eps_q;            /* variance + eps */
    int32_t e = (int32_t)bit_length64((uint64_t)v) - 16;                    /* m = v >> e in [2^14, 2^16) */
    if (e & 1) {
        e++;
    }
    const int64_t m = e >= 0 ? v >> e : v << -e;
    const uint32_t j = (uint32_t)(m >> 8) - 64u, f = (uint32_t)m & 255u;
    const int32_t l0 = bertl14_isqrt_lut[j], l1 = bertl14_isqrt_lut[j + 1];
    const int64_t g = l0 + bertl14_rsr((int64_t)(l1 - l0) * f, 8);         /* 2^22 / sqrt(m) */
    const int32_t n_shift = 22 + e / 2 - 12;
    for (uint32_t c = 0; c < n; c++) {
        int32_t b;
        memcpy(&b, beta + c, sizeof b);
        const int64_t nc = bertl14_rsr((r[c] - mu) * g, n_shift);          /* (r - mu) / sigma in Q12 */
        y[c] = (int16_t)bertl14_sat16(bertl14_rsr(nc * gamma[c], g_shift) + b); /* * gamma + beta */
    }
}
