/* Dot products of rows of one block of four rows against rows of another (the attention's operands,
 * bertl14_kernels.h "blocks of four rows"): the steps the scores and the context kernels share, the portable one and
 * the DSP one. */
#ifndef BERTL14_BLOCK4_DOT_H
#define BERTL14_BLOCK4_DOT_H

#include "bertl14_kernels.h"
#include "bertl14_acle_emul.h"

/* The attention's assembly (this step and the kernels' loops around it) needs 13 of the core's registers in one
 * statement: GCC on Thumb-2 (clang's register allocator gives up on it; there the C form below runs). */
#if BERTL14_ACLE_NATIVE && defined(__GNUC__) && !defined(__clang__) && defined(__thumb2__)
#define BERTL14_BLOCK4_ASM 1
#else
#define BERTL14_BLOCK4_ASM 0
#endif

/* One chunk of four values (x0..x3, one row's) against the same chunk of the four rows of a block (b: 16 values, row
 * h's at 4h), added to acc[h]: one MLA a term (the portable bodies). */
static inline void bertl14_chunk_dot4(int32_t acc[4], int32_t x0, int32_t x1, int32_t x2, int32_t x3, const int16_t *b)
{
    acc[0] += x0 * b[0] + x1 * b[1] + x2 * b[2] + x3 * b[3];
    acc[1] += x0 * b[4] + x1 * b[5] + x2 * b[6] + x3 * b[7];
    acc[2] += x0 * b[8] + x1 * b[9] + x2 * b[10] + x3 * b[11];
    acc[3] += x0 * b[12] + x1 * b[13] + x2 * b[14] + x3 * b[15];
}

#if defined(BERTL14_USE_DSP)
/*
 * acc[0] = a_0 . b_0, acc[1] = a_0 . b_1, acc[2] = a_1 . b_0, acc[3] = a_1 . b_1 over `chunks` chunks of four
 * values, where a_0, a_1 are the rows at a and a + 4 of a block of four rows, b_0, b_1 those at b and b + 4 (a
 * chunk of the four rows is 16 values: the next chunk of a row is 16 values on). Per chunk two double-word loads
 * of a, two of b and eight SMLAD: 12 instructions for 16 MACs, the operands read once for two rows of the other.
 * Both pointers 4-byte aligned. GCC splits 64-bit loads whose halves are used separately into two LDR, hence the
 * assembly; it only reads memory (no memory clobber).
 */
#if BERTL14_BLOCK4_ASM
#define BL14_C2 "ldrd %[ya], %[yb], [%[pa], #8]\n\tldrd %[xa], %[xb], [%[pa]], #32\n\t" \
    "ldrd %[ba], %[bb], [%[pb], #8]\n\t" \
    "smlad %[a01], %[xa], %[ba], %[a01]\n\tsmlad %[a01], %[xb], %[bb], %[a01]\n\t" \
    "smlad %[a11], %[ya], %[ba], %[a11]\n\tsmlad %[a11], %[yb], %[bb], %[a11]\n\t" \
    "ldrd %[ba], %[bb], [%[pb]], #32\n\t" \
    "smlad %[a00], %[xa], %[ba], %[a00]\n\tsmlad %[a00], %[xb], %[bb], %[a00]\n\t" \
    "smlad %[a10], %[ya], %[ba], %[a10]\n\tsmlad %[a10], %[yb], %[bb], %[a10]\n\t"
static inline __attribute__((always_inline)) void bertl14_dot2x2_block4(const int16_t *a, const int16_t *b,
                                                                        uint32_t chunks, int32_t acc[4])
{
    int32_t a00, a01, a10, a11;
    uint32_t xa, xb, ya, yb, ba, bb, n = chunks;
    /* zero sums; four chunks an iteration (50 instructions, 64 MACs), then the last 1..3 chunks one at a time */
    __asm volatile("movs %[a00], #0\n\tmovs %[a01], #0\n\tmovs %[a10], #0\n\tmovs %[a11], #0\n\t"
                   "lsrs %[n], %[n], #2\n\tbeq 2f\n"
                   "1:\n\t" BL14_C2 BL14_C2 BL14_C2 BL14_C2 "subs %[n], %[n], #1\n\tbne 1b\n"
                   "2:\n\tands %[n], %[c], #3\n\tbeq 4f\n"
                   "3:\n\t" BL14_C2 "subs %[n], %[n], #1\n\tbne 3b\n"
                   "4:\n"
                   : [a00] "=&r"(a00), [a01] "=&r"(a01), [a10] "=&r"(a10), [a11] "=&r"(a11), [pa] "+r"(a), [pb] "+r"(b),
                     [n] "+&r"(n), [xa] "=&r"(xa), [xb] "=&r"(xb), [ya] "=&r"(ya), [yb] "=&r"(yb), [ba] "=&r"(ba),
                     [bb] "=&r"(bb)
                   : [c] "r"(chunks)
                   : "cc");
    acc[0] = a00;
    acc[1] = a01;
    acc[2] = a10;
    acc[3] = a11;
}
#undef BL14_DOT2X2
#undef BL14_C2
#else
/* The same with the (emulated) intrinsics. */
static inline void bertl14_dot2x2_block4(const int16_t *a, const int16_t *b, uint32_t chunks, int32_t acc[4])
{
    int32_t a00 = 0, a01 = 0, a10 = 0, a11 = 0;
    for (uint32_t c = 0; c < chunks; c++, a += 16, b += 16) {
        for (uint32_t h = 0; h < 4u; h += 2u) {
            const uint32_t x = bertl14_ld32(a + h), y = bertl14_ld32(a + 4 + h);
            const uint32_t u = bertl14_ld32(b + h), v = bertl14_ld32(b + 4 + h);
            a00 = bertl14_smlad(x, u, a00);
            a01 = bertl14_smlad(x, v, a01);
            a10 = bertl14_smlad(y, u, a10);
            a11 = bertl14_smlad(y, v, a11);
        }
    }
    acc[0] = a00;
    acc[1] = a01;
    acc[2] = a10;
    acc[3] = a11;
}
#endif
#endif

#endif /* BERTL14_BLOCK4_DOT_H */
