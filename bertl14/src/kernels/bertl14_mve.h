/**
 * @file bertl14_mve.h
 * @brief The Helium (M-profile Vector Extension, MVE) primitives of the kernels' MVE bodies: arm_mve.h, and the
 *        vector forms of docs/numerics.md's integer primitives, each lane exactly the scalar primitive of
 *        bertl14_kernels.h. Included only where BERTL14_USE_MVE is defined: the MVE bodies run on cores with the
 *        extension (Cortex-M55, M85) and have no host emulation (their bit-exactness is checked on the emulated
 *        core: `bertl14 check-bitexact --target qemu --board mps3_an547`).
 */
#ifndef BERTL14_MVE_H
#define BERTL14_MVE_H

#include <arm_mve.h>
#include <stdint.h>

#if !defined(__ARM_FEATURE_MVE)
#error "BERTL14_USE_MVE needs a core with the M-profile Vector Extension (e.g. -mcpu=cortex-m55)"
#endif

/**
 * bertl14_rsr_mul on four lanes: rsr(a * b, n) for 1 <= n <= 62 when each result fits int32, from the 64-bit
 * products' high words h (VMULH, floor(a b / 2^32)) and low words l (VMUL): n < 32: h * 2^(32-n) + rsr(l, n) with
 * l unsigned (VRSHL rounds without overflow, so a carry out of the low word lands in the sum); n = 32: VRMULH;
 * n > 32: rsr(h, n - 32) (the low word cannot change floor((a b + 2^(n-1)) / 2^n) then).
 */
static inline int32x4_t bertl14_rsr_mul_mve(int32x4_t a, int32x4_t b, int32_t n)
{
    if (n > 32) {
        return vrshlq_n_s32(vmulhq_s32(a, b), 32 - n);
    }
    if (n == 32) {
        return vrmulhq_s32(a, b);
    }
    const uint32x4_t lo = vreinterpretq_u32_s32(vmulq_s32(a, b));
    return vaddq_s32(vshlq_r_s32(vmulhq_s32(a, b), 32 - n), vreinterpretq_s32_u32(vrshlq_n_u32(lo, -n)));
}

/** Four int32 lanes from four scalars (the sums of four VMLADAVA). */
static inline int32x4_t bertl14_lanes_mve(int32_t a0, int32_t a1, int32_t a2, int32_t a3)
{
    int32x4_t v = vdupq_n_s32(a0);
    v = vsetq_lane_s32(a1, v, 1);
    v = vsetq_lane_s32(a2, v, 2);
    return vsetq_lane_s32(a3, v, 3);
}

#endif /* BERTL14_MVE_H */
