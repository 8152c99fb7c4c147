/**
 * @file bertl14_acle_emul.h
 * @brief The ACLE DSP intrinsics the kernels use: the real ones on a Cortex-M with the DSP
 *        extension, a bit-exact C emulation everywhere else (so the DSP code paths run and are
 *        tested on the host too).
 */
#ifndef BERTL14_ACLE_EMUL_H
#define BERTL14_ACLE_EMUL_H

#include <stdint.h>

/* Every intrinsic is used through a bertl14_ name (the __ names are the compiler's): on a core with the DSP
 * extension it is the ACLE intrinsic itself, elsewhere a bit-exact C emulation. */
#if defined(__ARM_FEATURE_DSP) && __ARM_FEATURE_DSP && !defined(BERTL14_FORCE_ACLE_EMUL)
#include <arm_acle.h>
#define BERTL14_ACLE_NATIVE 1

static inline int32_t bertl14_smlad(uint32_t x, uint32_t y, int32_t acc)
{
    return __smlad((int16x2_t)x, (int16x2_t)y, acc);
}
static inline uint32_t bertl14_sxtb16(uint32_t x) { return (uint32_t)__sxtb16((int8x4_t)x); }
static inline int32_t bertl14_qadd(int32_t a, int32_t b) { return __qadd(a, b); }
/* The saturation width is an immediate of the instruction: these two stay macros. */
#define bertl14_usat(x, bits) ((uint32_t)__usat((x), (bits)))
#define bertl14_ssat(x, bits) ((int32_t)__ssat((x), (bits)))
#else
#define BERTL14_ACLE_NATIVE 0

/* SMLAD: acc + lo(x)*lo(y) + hi(x)*hi(y) (16-bit signed halves, 32-bit wrapping sum). */
static inline int32_t bertl14_smlad(uint32_t x, uint32_t y, int32_t acc)
{
    int32_t p0 = (int32_t)(int16_t)(x & 0xFFFFu) * (int32_t)(int16_t)(y & 0xFFFFu);
    int32_t p1 = (int32_t)(int16_t)(x >> 16) * (int32_t)(int16_t)(y >> 16);
    return (int32_t)((uint32_t)acc + (uint32_t)p0 + (uint32_t)p1);
}

/* SXTB16: sign-extend bytes 0 and 2 into the two halfwords. */
static inline uint32_t bertl14_sxtb16(uint32_t x)
{
    uint32_t lo = (uint32_t)(uint16_t)(int16_t)(int8_t)(x & 0xFFu);
    uint32_t hi = (uint32_t)(uint16_t)(int16_t)(int8_t)((x >> 16) & 0xFFu);
    return lo | (hi << 16);
}

/* QADD: saturating 32-bit signed addition. */
static inline int32_t bertl14_qadd(int32_t a, int32_t b)
{
    int64_t s = (int64_t)a + b;
    return s > INT32_MAX ? INT32_MAX : (s < INT32_MIN ? INT32_MIN : (int32_t)s);
}

/* USAT: saturate to [0, 2^bits - 1]. */
static inline uint32_t bertl14_usat(int32_t x, uint32_t bits)
{
    const int32_t hi = (int32_t)((1u << bits) - 1u);
    return (uint32_t)(x > hi ? hi : (x < 0 ? 0 : x));
}

/* SSAT: saturate to a signed `bits`-bit range. */
static inline int32_t bertl14_ssat(int32_t x, uint32_t bits)
{
    int32_t hi = (int32_t)((1u << (bits - 1u)) - 1u);
    int32_t lo = -hi - 1;
    return x > hi ? hi : (x < lo ? lo : x);
}
#endif

/* Lane-wise max / min of two pairs of int16 (SSUB16 sets GE per lane, SEL picks). */
#if BERTL14_ACLE_NATIVE && defined(__GNUC__)
static inline uint32_t bertl14_smax16x2(uint32_t a, uint32_t b)
{
    uint32_t r;
    __asm("ssub16 %0, %1, %2\n\tsel %0, %1, %2" : "=&r"(r) : "r"(a), "r"(b) : "cc");
    return r;
}
static inline uint32_t bertl14_smin16x2(uint32_t a, uint32_t b)
{
    uint32_t r;
    __asm("ssub16 %0, %1, %2\n\tsel %0, %2, %1" : "=&r"(r) : "r"(a), "r"(b) : "cc");
    return r;
}
#else
static inline uint32_t bertl14_lanes16(uint32_t a, uint32_t b, int want_max)
{
    uint32_t r = 0;
    for (int k = 0; k < 32; k += 16) {
        const int16_t x = (int16_t)(a >> k), y = (int16_t)(b >> k);
        r |= (uint32_t)(uint16_t)((x >= y) == (want_max != 0) ? x : y) << k;
    }
    return r;
}
static inline uint32_t bertl14_smax16x2(uint32_t a, uint32_t b) { return bertl14_lanes16(a, b, 1); }
static inline uint32_t bertl14_smin16x2(uint32_t a, uint32_t b) { return bertl14_lanes16(a, b, 0); }
#endif

/* PKHBT (lo(a), lo(b)) and PKHTB (hi(a), hi(b)) as int16 pairs; SXTB16 of x rotated right by 8
 * (bytes 1 and 3). GCC builds these from shifts and masks otherwise. */
#if BERTL14_ACLE_NATIVE && defined(__GNUC__)
static inline uint32_t bertl14_pack_lo16(uint32_t a, uint32_t b)
{
    uint32_t r;
    __asm("pkhbt %0, %1, %2, lsl #16" : "=r"(r) : "r"(a), "r"(b));
    return r;
}
static inline uint32_t bertl14_pack_hi16(uint32_t a, uint32_t b)
{
    uint32_t r;
    __asm("pkhtb %0, %2, %1, asr #16" : "=r"(r) : "r"(a), "r"(b));
    return r;
}
static inline uint32_t bertl14_sxtb16_ror8(uint32_t x)
{
    uint32_t r;
    __asm("sxtb16 %0, %1, ror #8" : "=r"(r) : "r"(x));
    return r;
}
#else
static inline uint32_t bertl14_pack_lo16(uint32_t a, uint32_t b) { return (a & 0xFFFFu) | (b << 16); }
static inline uint32_t bertl14_pack_hi16(uint32_t a, uint32_t b) { return (a >> 16) | (b & 0xFFFF0000u); }
static inline uint32_t bertl14_sxtb16_ror8(uint32_t x) { return bertl14_sxtb16((x >> 8) | (x << 24)); }
#endif

/* SMMULR: (a * b + 2^31) >> 32, the rounded high word of the 64-bit product. */
#if BERTL14_ACLE_NATIVE && defined(__GNUC__)
static inline int32_t bertl14_smmulr(int32_t a, int32_t b)
{
    int32_t r;
    __asm("smmulr %0, %1, %2" : "=r"(r) : "r"(a), "r"(b));
    return r;
}
#else
static inline int32_t bertl14_smmulr(int32_t a, int32_t b)
{
    return (int32_t)(((int64_t)a * b + ((int64_t)1 << 31)) >> 32);
}
#endif

/* SMMLA: c + the high word of a * b (exactly (c * 2^32 + a * b) >> 32). */
#if BERTL14_ACLE_NATIVE && defined(__GNUC__)
static inline int32_t bertl14_smmla(int32_t a, int32_t b, int32_t c)
{
    int32_t r;
    __asm("smmla %0, %1, %2, %3" : "=r"(r) : "r"(a), "r"(b), "r"(c));
    return r;
}
#else
static inline int32_t bertl14_smmla(int32_t a, int32_t b, int32_t c)
{
    return (int32_t)(((int64_t)c * 4294967296LL + (int64_t)a * b) >> 32);
}
#endif

/* SMMLS: the high word of c * 2^32 - a * b (exactly (c * 2^32 - a * b) >> 32, floor). */
#if BERTL14_ACLE_NATIVE && defined(__GNUC__)
static inline int32_t bertl14_smmls(int32_t a, int32_t b, int32_t c)
{
    int32_t r;
    __asm("smmls %0, %1, %2, %3" : "=r"(r) : "r"(a), "r"(b), "r"(c));
    return r;
}
#else
static inline int32_t bertl14_smmls(int32_t a, int32_t b, int32_t c)
{
    return (int32_t)(((int64_t)c * 4294967296LL - (int64_t)a * b) >> 32);
}
#endif

/* USAT of x >> 8 (arithmetic) to 5 bits: [0, 31], one USAT with its ASR #8 operand. */
#if BERTL14_ACLE_NATIVE && defined(__GNUC__)
static inline uint32_t bertl14_usat5_asr8(int32_t x)
{
    uint32_t r;
    __asm("usat %0, #5, %1, asr #8" : "=r"(r) : "r"(x));
    return r;
}
#else
static inline uint32_t bertl14_usat5_asr8(int32_t x)
{
    const int32_t v = x >> 8;
    return v < 0 ? 0u : v > 31 ? 31u : (uint32_t)v;
}
#endif

/* SMLAWB / SMLAWT: (a * the bottom / top signed halfword of b + c * 2^16) >> 16, from the exact 48-bit sum. */
#if BERTL14_ACLE_NATIVE && defined(__GNUC__)
static inline int32_t bertl14_smlawb(int32_t a, uint32_t b, int32_t c)
{
    int32_t r;
    __asm("smlawb %0, %1, %2, %3" : "=r"(r) : "r"(a), "r"(b), "r"(c));
    return r;
}
static inline int32_t bertl14_smlawt(int32_t a, uint32_t b, int32_t c)
{
    int32_t r;
    __asm("smlawt %0, %1, %2, %3" : "=r"(r) : "r"(a), "r"(b), "r"(c));
    return r;
}
#else
static inline int32_t bertl14_smlawb(int32_t a, uint32_t b, int32_t c)
{
    return (int32_t)(((int64_t)a * (int16_t)(b & 0xFFFFu) + (int64_t)c * 65536) >> 16);
}
static inline int32_t bertl14_smlawt(int32_t a, uint32_t b, int32_t c)
{
    return (int32_t)(((int64_t)a * (int16_t)(b >> 16) + (int64_t)c * 65536) >> 16);
}
#endif

/* Rotate right by 8 (folded into SXTB16's ROR operand by the compiler on Cortex-M). */
static inline uint32_t bertl14_ror8(uint32_t x)
{
    return (x >> 8) | (x << 24);
}

#endif /* BERTL14_ACLE_EMUL_H */
