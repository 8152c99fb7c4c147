/* Integer LayerNorm with a 1/sqrt LUT (docs/numerics.md "Residual + LayerNorm"). The per-channel
 * steps run in 32-bit pieces (bertl14_rsr_mul: one SMULL; the DSP body's normalization: one SMMLA) when a bound
 * computed once per row proves them exact; otherwise the 64-bit formulas. The Helium body (BERTL14_USE_MVE) runs the
 * row's passes (sum and extremes, squares, normalization) four channels a vector, with the same bounds. */
#include "bertl14_kernels.h"
#include "bertl14_acle_emul.h"
#if defined(BERTL14_USE_MVE)
#include "bertl14_mve.h"
#endif

#if defined(BERTL14_USE_MVE)
/* The MVE loops' bodies: `full` (a constant after inlining) four lanes, else the lanes of p. Loads of a partial
 * vector are predicated (zero beyond), so they never read past the row. */
#define LD(full, p, plain, pred) ((full) ? (plain) : (pred))
#endif

static uint32_t bit_length64(uint64_t v)
{
    return v ? 64u - (uint32_t)__builtin_clzll(v) : 0u;   /* CLZ */
}

/* beta clamped to [-2^30, 2^30 - 1]: with |t| < 2^29 (g_shift >= 2) sat16(t + beta) is unchanged
 * (beyond 2^30 the sum saturates either way) and t + beta cannot overflow */
static inline int32_t clamp30(int32_t b)
{
#if defined(BERTL14_USE_DSP)
    return bertl14_ssat(b, 31);
#else
    return b > (1 << 30) - 1 ? (1 << 30) - 1 : (b < -(1 << 30) ? -(1 << 30) : b);
#endif
}

static inline int32_t ld_beta(const int32_t *beta, uint32_t c)
{
    return (int32_t)bertl14_ld32(beta + c);
}

#if !defined(BERTL14_USE_DSP) || defined(BERTL14_USE_MVE)
/* sum (r - mu)^2 when |r|, |mu| < 2^30: each deviation fits int32, each square one SMLAL (the DSP body takes the sum
 * of the squares in the first pass instead) */
static int64_t sum_sq_small(const int32_t *r, uint32_t n, int32_t mu)
{
    int64_t sq = 0;
#if defined(BERTL14_USE_MVE)
    const uint32_t n4 = n & ~3u;
    for (uint32_t c = 0; c < n4; c += 4u) {                    /* VMLALDAVA: four squares into the 64-bit sum */
        const int32x4_t dv = vsubq_n_s32(vldrwq_s32(r + c), mu);
        sq = vmlaldavaq_s32(sq, dv, dv);
    }
    if (n4 < n) {                                              /* the last 1..3 (zero lanes add nothing) */
        const mve_pred16_t p = vctp32q(n - n4);
        const int32x4_t dv = vsubq_x_n_s32(vldrwq_z_s32(r + n4, p), mu, p);
        sq = vmlaldavaq_p_s32(sq, dv, dv, p);
    }
#else
    for (uint32_t c = 0; c < n; c++) {
        const int32_t dv = r[c] - mu;
        sq += (int64_t)dv * dv;
    }
#endif
    return sq;
}
#endif

/* any int32 row: each |r - mu| < 2^32, so each square fits uint64; the sum saturates at INT64_MAX (a row no
 * converted model produces: its variance sums stay below 2^63, docs/numerics.md; the result is then only safe) */
BERTL14_COLD static int64_t sum_sq_generic(const int32_t *r, uint32_t n, int64_t mu)
{
    uint64_t sq = 0;
    for (uint32_t c = 0; c < n; c++) {
        const int64_t dv = r[c] - mu;
        const uint64_t a = (uint64_t)(dv < 0 ? -dv : dv), a2 = a * a;
        sq = a2 > (uint64_t)INT64_MAX - sq ? (uint64_t)INT64_MAX : sq + a2;
    }
    return (int64_t)sq;
}

BERTL14_COLD static void normalize_generic(const int32_t *r, uint32_t n, int64_t mu, int64_t g, int32_t n_shift,
                                           const int16_t *gamma, const int32_t *beta, int32_t g_shift, int16_t *y)
{
    for (uint32_t c = 0; c < n; c++) {
        const int64_t nc = bertl14_rsr((r[c] - mu) * g, n_shift);          /* (r - mu) / sigma in Q12 */
        y[c] = (int16_t)bertl14_sat16(bertl14_rsr(nc * gamma[c], g_shift) + ld_beta(beta, c)); /* * gamma + beta */
    }
}

#if defined(BERTL14_USE_MVE)
/* The normalization of four channels (the scalar fast loop's steps): nc = rsr((r - mu) * g, n_shift),
 * t = rsr(nc * gamma, g_shift) (VRSHL: the rounded shift cannot overflow, as the scalar sum cannot), y =
 * sat16(t + clamp30(beta)). beta may be unaligned: its 16 bytes are loaded as bytes. */
static inline __attribute__((always_inline)) void normalize4_mve(const int32_t *r, int32_t mu, int32_t g,
                                                                 int32_t n_shift, const int16_t *gamma,
                                                                 const int32_t *beta, int32_t g_shift, int16_t *y,
                                                                 uint32_t cnt)
{
    const int full = cnt == 4u;
    const mve_pred16_t p = vctp32q(cnt);
    const int32x4_t dv = vsubq_n_s32(LD(full, p, vldrwq_s32(r), vldrwq_z_s32(r, p)), mu);
    const int32x4_t nc = bertl14_rsr_mul_mve(dv, vdupq_n_s32(g), n_shift);
    const int32x4_t t = vrshlq_n_s32(vmulq_s32(nc, LD(full, p, vldrhq_s32(gamma), vldrhq_z_s32(gamma, p))), -g_shift);
    const int8_t *const b8 = (const int8_t *)(const void *)beta;
    const int32x4_t b = vreinterpretq_s32_s8(LD(full, p, vldrbq_s8(b8), vldrbq_z_s8(b8, vctp8q(4u * cnt))));
    const int32x4_t bc = vmaxq_s32(vminq_s32(b, vdupq_n_s32((1 << 30) - 1)), vdupq_n_s32(-(1 << 30)));
    const int32x4_t y16 = vreinterpretq_s32_s16(vqmovnbq_s32(vdupq_n_s16(0), vaddq_s32(t, bc)));   /* sat16 */
    if (full) {
        vstrhq_s32(y, y16);
    } else {
        vstrhq_p_s32(y, y16, p);
    }
}
#endif

void bertl14_layernorm_s32(const bertl14_layernorm_params *ln, const int32_t *r, uint32_t n, int16_t *y)
{
    const int16_t *const gamma = ln->gamma;
    const int32_t *const beta = ln->beta;
    const int64_t eps_q = ln->eps_q;
    const int32_t g_shift = ln->g_shift;
    int64_t sum = 0;
    int32_t lo = 0, hi = 0;
#if defined(BERTL14_USE_MVE)
    const uint32_t n4 = n & ~3u;
    for (uint32_t c = 0; c < n4; c += 4u) {                    /* VADDLVA (64-bit sum), VMINV, VMAXV */
        const int32x4_t v = vldrwq_s32(r + c);
        sum = vaddlvaq_s32(sum, v);
        lo = vminvq_s32(lo, v);
        hi = vmaxvq_s32(hi, v);
    }
    if (n4 < n) {
        const mve_pred16_t p = vctp32q(n - n4);
        const int32x4_t v = vldrwq_z_s32(r + n4, p);
        sum = vaddlvaq_p_s32(sum, v, p);
        lo = vminvq_p_s32(lo, v, p);
        hi = vmaxvq_p_s32(hi, v, p);
    }
#else
#if defined(BERTL14_USE_DSP)
    uint64_t sum_sq = 0;                               /* the DSP body: sum of r^2 as well (SMLAL), modulo 2^64 */
#endif
    for (uint32_t c = 0; c < n; c++) {
        sum += r[c];
#if defined(BERTL14_USE_DSP)
        sum_sq += (uint64_t)((int64_t)r[c] * r[c]);
#endif
        lo = r[c] < lo ? r[c] : lo;
        hi = r[c] > hi ? r[c] : hi;
    }
#endif
    const int64_t mu = bertl14_div_round(sum, (int64_t)n);                 /* mean */
    const int64_t dmax = hi - mu > mu - lo ? hi - mu : mu - lo;             /* >= every |r_c - mu| */
    /* |r| < 2^30 (always, in practice): r - mu fits int32 and each square is one SMLAL; n * dmax^2 < 2^63:
     * the sum cannot overflow (else the saturating loop: a row no converted model produces) */
    const int small = lo > -(1 << 30) && hi < (1 << 30);
    int64_t sq;
    if (small && 2u * bit_length64((uint64_t)dmax) + bit_length64(n) <= 63u) {
#if defined(BERTL14_USE_DSP) && !defined(BERTL14_USE_MVE)
        /* sum (r - mu)^2 = sum r^2 - mu (2 sum r - n mu): ring operations, exact modulo 2^64, and the value is below
         * 2^63 (the bound above): no second pass over the row */
        sq = (int64_t)(sum_sq - (uint64_t)mu * ((uint64_t)sum * 2u - (uint64_t)n * (uint64_t)mu));
#else
        sq = sum_sq_small(r, n, (int32_t)mu);
#endif
    } else {
        sq = sum_sq_generic(r, n, mu);
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
    if (small) {
        /* bound of |n_c| from the largest deviation; then |n_c * gamma_c| + rounding < 2^31 */
        const int64_t nmax = bertl14_rsr(dmax * g, n_shift) + 1;
        if (n_shift >= 1 && g_shift >= 2 && g_shift <= 30 &&
            nmax * 32768 + ((int64_t)1 << (g_shift - 1)) < ((int64_t)1 << 31)) {
            const int32_t mu32 = (int32_t)mu;
#if defined(BERTL14_USE_MVE)
            if (n_shift <= 62) {
                const uint32_t n4 = n & ~3u;
                for (uint32_t c = 0; c < n4; c += 4u) {
                    normalize4_mve(r + c, mu32, (int32_t)g, n_shift, gamma + c, beta + c, g_shift, y + c, 4u);
                }
                if (n4 < n) {
                    normalize4_mve(r + n4, mu32, (int32_t)g, n_shift, gamma + n4, beta + n4, g_shift, y + n4,
                                   n - n4);
                }
                return;
            }
#endif
#if defined(BERTL14_USE_DSP) && !defined(BERTL14_USE_MVE)
            /* (every row of intent-en in the benchmark takes it; others take the 64-bit loop) */
            if (n_shift >= 18 && n_shift <= 48 && g < (1 << 16)) {
                /* rsr(dv g, n_shift) = rsr(dv (g 2^15), 32 + sh), sh = n_shift - 17: one SMMLA with c = 2^(sh-1) and
                 * a shift (|dv| < 2^31, g 2^15 < 2^31; |high word| < 2^30, c <= 2^30) */
                const int32_t gb = (int32_t)g << 15, c1 = 1 << (n_shift - 18), sh = n_shift - 17;
                const int32_t half = 1 << (g_shift - 1);
                for (uint32_t c = 0; c < n; c++) {
                    const int32_t nc = bertl14_smmla(r[c] - mu32, gb, c1) >> sh;            /* (r - mu) / sigma */
                    const int32_t t = (nc * gamma[c] + half) >> g_shift;                    /* * gamma */
                    y[c] = (int16_t)bertl14_ssat(t + clamp30(ld_beta(beta, c)), 16);        /* + beta */
                }
                return;
            }
#else
            for (uint32_t c = 0; c < n; c++) {
                const int32_t nc = bertl14_rsr_mul(r[c] - mu32, (int32_t)g, n_shift); /* (r - mu) / sigma, Q12 */
                const int32_t b = ld_beta(beta, c);
                const int32_t t = (nc * gamma[c] + (1 << (g_shift - 1))) >> g_shift;      /* * gamma */
                y[c] = (int16_t)bertl14_sat16(t + clamp30(b));                            /* + beta */
            }
            return;
#endif
        }
    }
    normalize_generic(r, n, mu, g, n_shift, gamma, beta, g_shift, y);
}
