/* floor(a / b) for 64-bit a, b without libgcc's 64-bit division helpers (docs/numerics.md "Primitives"). */
#include "bertl14_kernels.h"

/* (u1 * 2^32 + u0) / v for u1 < v (the quotient fits 32 bits): Knuth's algorithm D with 16-bit digits,
 * two 32-bit UDIVs and at most two corrections each (Hacker's Delight, divlu). */
static uint32_t divlu(uint32_t u1, uint32_t u0, uint32_t v)
{
    const uint32_t s = (uint32_t)__builtin_clz(v);             /* normalize: top bit of v set */
    v <<= s;
    const uint32_t vn1 = v >> 16, vn0 = v & 0xFFFFu;
    const uint32_t un32 = (u1 << s) | ((u0 >> (31u - s)) >> 1);
    const uint32_t un10 = u0 << s, un1 = un10 >> 16, un0 = un10 & 0xFFFFu;
    uint32_t q1 = un32 / vn1, rhat = un32 - q1 * vn1;
    while (q1 >= 0x10000u || q1 * vn0 > ((rhat << 16) | un1)) {
        q1--;
        rhat += vn1;
        if (rhat >= 0x10000u) {
            break;
        }
    }
    const uint32_t un21 = (un32 << 16) + un1 - q1 * v;
    uint32_t q0 = un21 / vn1;
    rhat = un21 - q0 * vn1;
    while (q0 >= 0x10000u || q0 * vn0 > ((rhat << 16) | un0)) {
        q0--;
        rhat += vn1;
        if (rhat >= 0x10000u) {
            break;
        }
    }
    return (q1 << 16) | q0;
}

uint64_t bertl14_udiv_u64(uint64_t a, uint64_t b)
{
    const uint32_t ah = (uint32_t)(a >> 32), al = (uint32_t)a;
    if (b >> 32 == 0) {                                         /* 32-bit divisor: UDIV, or divlu */
        const uint32_t v = (uint32_t)b;
        if (ah == 0) {
            return al / v;
        }
        return ((uint64_t)(ah / v) << 32) | divlu(ah % v, al, v);
    }
    uint64_t q = 0;                                             /* rare: shift and subtract */
    if (a < b) {
        return 0;
    }
    int sh = __builtin_clzll(b) - __builtin_clzll(a);           /* quotient bits - 1 */
    b <<= sh;
    for (;; b >>= 1) {
        q <<= 1;
        if (a >= b) {
            a -= b;
            q |= 1u;
        }
        if (sh-- == 0) {
            return q;
        }
    }
}
