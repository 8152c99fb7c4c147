/* Residual add (docs/numerics.md "Residual + LayerNorm"): the INT8 row h (scale s_h), un-smoothed per channel,
 * added into the sublayer's int32 output in place with saturation. 32-bit pieces (bertl14_rsr_mul: one SMULL; the
 * DSP body: one SMMLA) when the row's bounds prove them exact, else the 64-bit formula; the Helium body
 * (BERTL14_USE_MVE) adds four channels a vector. */
#include "bertl14_kernels.h"
#include "bertl14_acle_emul.h"
#if defined(BERTL14_USE_MVE)
#include "bertl14_mve.h"
#endif

#if !defined(BERTL14_USE_DSP) || defined(BERTL14_USE_MVE)
/* sat32(a + b) */
static inline int32_t add_sat32(int32_t a, int32_t b)
{
#if defined(BERTL14_USE_DSP)
    return bertl14_qadd(a, b);
#else
    return bertl14_sat32((int64_t)a + b);
#endif
}
#endif

BERTL14_COLD static void residual_generic(int32_t *y, const int8_t *h, uint32_t s_h, const uint16_t *u,
                                          int32_t shift, uint32_t n)
{
    for (uint32_t c = 0; c < n; c++) {
        /* |h * s_h * u| < 2^7 * 2^17 * 2^16: int64; u un-smooths channel c (4096 = identity) */
        y[c] = bertl14_sat32(y[c] + bertl14_rsr((int64_t)h[c] * s_h * u[c], shift));
    }
}

#if defined(BERTL14_USE_MVE)
/* The MVE loops' bodies: `full` (a constant after inlining) four lanes, else the lanes of p. Loads of a partial
 * vector are predicated (zero beyond), so they never read past the row. */
#define LD(full, p, plain, pred) ((full) ? (plain) : (pred))

/* residual of four channels: y = sat32(y + rsr(h * s_h * u, shift)) */
static inline __attribute__((always_inline)) void residual4_mve(int32_t *y, const int8_t *h, uint32_t s_h,
                                                                const uint16_t *u, int32_t shift, int full,
                                                                mve_pred16_t p)
{
    const int32x4_t hs = vmulq_n_s32(LD(full, p, vldrbq_s32(h), vldrbq_z_s32(h, p)), (int32_t)s_h);
    const uint32x4_t uv = LD(full, p, vldrhq_u32(u), vldrhq_z_u32(u, p));
    const int32x4_t r = vqaddq_s32(LD(full, p, vldrwq_s32(y), vldrwq_z_s32(y, p)),
                                   bertl14_rsr_mul_mve(hs, vreinterpretq_s32_u32(uv), shift));
    if (full) {
        vstrwq_s32(y, r);
    } else {
        vstrwq_p_s32(y, r, p);
    }
}
#endif

void bertl14_residual_s8(const bertl14_residual_params *rp, int32_t *y, const int8_t *h, uint32_t s_h, uint32_t n)
{
    const uint16_t *const u = rp->u;
    const int32_t shift = rp->shift;
#if defined(BERTL14_USE_DSP) && !defined(BERTL14_USE_MVE)
    if (shift < 11 || s_h >= (1u << 17)) {
#else
    if (shift < 9 || s_h >= (1u << 17)) {
#endif
        residual_generic(y, h, s_h, u, shift, n);
        return;
    }
    /* |h * s_h| < 2^24 fits int32; |h * s_h * u| < 2^40, so its rsr by >= 9 fits int32 */
#if defined(BERTL14_USE_MVE)
    if (shift <= 62) {
        const uint32_t n4 = n & ~3u;
        for (uint32_t c = 0; c < n4; c += 4u) {                /* four channels a vector */
            residual4_mve(y + c, h + c, s_h, u + c, shift, 1, 0);
        }
        if (n4 < n) {                                          /* the last 1..3, lanes predicated */
            residual4_mve(y + n4, h + n4, s_h, u + n4, shift, 0, vctp32q(n - n4));
        }
        return;
    }
#endif
#if defined(BERTL14_USE_DSP) && !defined(BERTL14_USE_MVE)
    if (shift <= 41) {
        /* rsr(h u s_h, shift) = rsr((h u 2^8)(s_h 2^14), 32 + sh), sh = shift - 10: one SMMLA with c = 2^(sh-1) and a
         * shift (|h u| < 2^23, s_h 2^14 < 2^31; |high word| < 2^30, c <= 2^30; the converted models: shift 12) */
        const int32_t b = (int32_t)(s_h << 14), c = 1 << (shift - 11), sh = shift - 10;
        for (uint32_t i = 0; i < n; i++) {
            y[i] = bertl14_qadd(y[i], bertl14_smmla(h[i] * (int32_t)u[i] * 256, b, c) >> sh);
        }
        return;
    }
    residual_generic(y, h, s_h, u, shift, n);
#else
    for (uint32_t c = 0; c < n; c++) {
        y[c] = add_sat32(y[c], bertl14_rsr_mul(h[c] * (int32_t)s_h, u[c], shift));
    }
#endif
}
