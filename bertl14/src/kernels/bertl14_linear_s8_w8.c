/* Linear layer: INT8 weights (one symmetric scale per output channel, folded into the requantization) x INT8
 * activations held as int16 in the block layout (bertl14_kernels.h), per-channel requantization: the integers of
 * the INT16 kernel's formula (docs/numerics.md section 4b). The encoder calls it instead of bertl14_linear_s8_w16
 * when BERTL14_WEIGHTS_INT8 is defined (CONFIG_BERTL14_WEIGHTS_INT8); without it this file compiles to nothing.
 *
 * The blob stores every group of four weights 4c..4c+3 of a row in the order 4c, 4c+2, 4c+1, 4c+3
 * (docs/model-format.md): SXTB16 of the group's word is then the int16 pair (4c, 4c+1) and SXTB16 of the word
 * rotated by 8 bits the pair (4c+2, 4c+3), the order of the activations, so the DSP body widens four weights
 * with two instructions and multiplies them with SMLAD as the INT16 kernel does (CMSIS-NN's arm_nn_mat_mult
 * idea, with the reordering done once by the converter instead of at run time): a channel against the block's four
 * tokens, per chunk of four inputs two SXTB16, two LDMIA of two tokens' chunk and eight SMLAD, three chunks'
 * weights one LDMIA. Widening costs what the INT16 kernel's second read of each weight row costs, so INT8 weights
 * take no more instructions a MAC than INT16 ones. INT8 weights give requantization shifts about 8 below the INT16
 * ones; the DSP body lifts the sums so that the shift is 32 (one SMMULR, as the INT16 kernel's S = 32 store). The
 * Helium build (MVE) runs the INT16 kernel's Helium body (bertl14_linear_mve.h) with the weights widened as they
 * load. Every body computes the same bits. */
#include "bertl14_kernels.h"
#include "bertl14_acle_emul.h"

#if defined(BERTL14_WEIGHTS_INT8)   /* an INT16 library does not carry it (tests/lib/test_footprint.py) */
#include "bertl14_linear_store.h"

/* Portable: one token's dot product over the block layout (full chunks with the swizzle undone, then the tail). */
static int32_t dot_block_c(const int8_t *w, const int16_t *x, uint32_t t, uint32_t tokens, uint32_t in)
{
    const uint32_t n4 = in & ~3u, tail = in - n4;
    int32_t a = 0;
    const int16_t *px = x + 4u * t;
    for (uint32_t i = 0; i < n4; i += 4) {
        a += w[i] * px[0] + w[i + 2] * px[1] + w[i + 1] * px[2] + w[i + 3] * px[3];
        px += 4u * tokens;
    }
    const int16_t *xt = x + n4 * tokens + t * tail;
    for (uint32_t i = 0; i < tail; i++) {
        a += w[n4 + i] * xt[i];
    }
    return a;
}

#if defined(BERTL14_USE_MVE)
/* The Helium body (bertl14_linear_mve.h) with INT8 weights: eight weights one VLDRB.S16 (widened as they load, in
 * the blob's order 4c, 4c+2, 4c+1, 4c+3), a token's same eight channels one gather of eight halfwords (VLDRH) at
 * the offsets {0, 2, 1, 3, 4nb, 4nb + 2, 4nb + 1, 4nb + 3} + 4t, so the instructions are the INT16 body's. */
#include "bertl14_mve.h"
#define BL14_W_T int8_t
#define BL14_OFF_T uint16x8_t
#define BL14_OFFSETS(nb, off0, off) \
    const uint16x8_t off0 = vaddq_u16(bl14_swizzle16(), \
                                      vmulq_n_u16(vshrq_n_u16(vidupq_n_u16(0u, 1), 2), (uint16_t)(4u * (nb)))); \
    const uint16x8_t off[4] = {off0, vaddq_n_u16(off0, 4u), vaddq_n_u16(off0, 8u), vaddq_n_u16(off0, 12u)}
#define BL14_LDW(p) vldrbq_s16(p)
#define BL14_LDW_Z(p, pred) vldrbq_z_s16(p, pred)
#define BL14_GATHER(px, off) vldrhq_gather_shifted_offset_s16((const int16_t *)(const void *)(px), off)
#define BL14_GATHER_Z(px, off) \
    vldrhq_gather_shifted_offset_z_s16((const int16_t *)(const void *)(px), off, vctp16q(4))
#define BL14_ASM_LDW(q, p) "vldrb.s16 %q[" q "], [%[" p "]], #8\n\t"
#define BL14_ASM_GATHER(q, o) "vldrh.u16 %q[" q "], [%[px], %q[" o "], uxtw #1]\n\t"
#define BL14_LDX_ROW(px) vldrhq_gather_shifted_offset_s16(px, bl14_swizzle8())
#define BL14_LDX_ROW_Z(px, pred) vldrhq_gather_shifted_offset_z_s16(px, bl14_swizzle8(), pred)
#define BL14_LIFT 1
/* The blob's order within a group of four: lanes 0, 2, 1, 3 (twice: a chunk pair of one token's block values, or
 * eight values of a row). */
static inline uint16x8_t bl14_swizzle16(void)
{
    const uint16x8_t i = vidupq_n_u16(0u, 1);                                /* 0..7 */
    return vorrq_u16(vshlq_n_u16(vandq_u16(i, vdupq_n_u16(1u)), 1), vandq_u16(vshrq_n_u16(i, 1), vdupq_n_u16(1u)));
}
static inline uint16x8_t bl14_swizzle8(void)
{
    return vaddq_u16(bl14_swizzle16(), vandq_u16(vidupq_n_u16(0u, 1), vdupq_n_u16(4u)));
}
#include "bertl14_linear_mve.h"
#elif defined(BERTL14_USE_DSP)
#if BERTL14_ACLE_NATIVE && defined(__GNUC__) && defined(__thumb2__)
/* The encoder's blocks of four tokens (block4_frame, bertl14_linear_store.h), per channel: the four dot products, the
 * block's chunks contiguous, two tokens' chunk (four words) one LDMIA. Per chunk of four inputs two SXTB16 (the
 * group's four weights, widened), two LDMIA and eight SMLAD; the weights come three chunks (three words) an LDMIA,
 * and the loop runs BL14_GROUPS such groups between two tests of the end: 12.46 instructions for 16 MACs over a
 * row of 96 inputs (the INT16 kernel's 2 x 2 tiles: 12.5). No register is left for a counter: the loop ends when
 * the activation pointer reaches the block's end (on the stack), and a row enters it part-way (Duff's device: the
 * first N % 3 chunks by a stub, then the group that leaves whole passes), entries computed once a call. Then the
 * four stores: for S in 33..63 and M <= mlimit y = sat(qadd(smmla(acc, s * M, 2^(S-33)) >> (S-32), B)) (rq_fast);
 * for S <= 32 (INT8 weights give shifts about 8 below the INT16 ones) with j = 32 - S <= jsafe the sums lifted by
 * 2^j and y = sat(qadd(smmulr(acc 2^j, s * M), B)), rsr(acc 2^j s M, 32) being the same value. Returns 0 when the
 * channels are done, 1 at a channel outside these cases (its unlifted sums in f->acc, the pointers past it, f->d
 * and f->left still on it). */
#define BL14_GROUPS 8
#define BL14_C8(wr) "sxtb16 lr, " wr "\n\tsxtb16 " wr ", " wr ", ror #8\n\t" \
    "ldmia r0!, {r8, r9, r10, r11}\n\t" \
    "smlad r4, lr, r8, r4\n\tsmlad r4, " wr ", r9, r4\n\t" \
    "smlad r5, lr, r10, r5\n\tsmlad r5, " wr ", r11, r5\n\t" \
    "ldmia r0!, {r8, r9, r10, r11}\n\t" \
    "smlad r6, lr, r8, r6\n\tsmlad r6, " wr ", r9, r6\n\t" \
    "smlad r7, lr, r10, r7\n\tsmlad r7, " wr ", r11, r7\n\t"
#define BL14_G3 "ldmia r1!, {r2, r3, r12}\n\t" BL14_C8("r2") BL14_C8("r3") BL14_C8("r12")
#define BL14_STR(x) #x
#define BL14_XSTR(x) BL14_STR(x)
__attribute__((naked, noinline)) static uint32_t block4_channels(block4_frame *f __attribute__((unused)))
{
    __asm volatile(
        "push {r4, r5, r6, r7, r8, r9, r10, r11, lr}\n\t"
        "sub sp, sp, #20\n\t"                                 /* [sp]: f, +4: the block's end, +8: a row's entry, */
        "str r0, [sp]\n\t"                                    /* +12: the entry group after a stub */
        BL14_SELECT_STORE                                      /* the stores: one LDR to PC a channel */
        "ldrd r3, r2, [r0, #0]\n\t"                           /* x, quads */
        "lsl r2, r2, #2\n\t"                                  /* N = in / 4 chunks */
        "add r3, r3, r2, lsl #5\n\t"                          /* the block's end: x + 32 N bytes */
        "str r3, [sp, #4]\n\t"
        "movs r3, #3\n\t"
        "udiv r4, r2, r3\n\t"                                 /* N / 3 groups */
        "mls r5, r4, r3, r2\n\t"                              /* N % 3 chunks first, by a stub */
        "rsb r4, r4, #0\n\t"
        "and r4, r4, #" BL14_XSTR(BL14_GROUPS) " - 1\n\t"     /* groups skipped in the first pass */
        "adr r6, 20f\n\t"
        "adr r7, 21f\n\t"
        "sub r7, r7, r6\n\t"                                  /* bytes a group */
        "mla r4, r4, r7, r6\n\t"
        "orr r4, r4, #1\n\t"
        "str r4, [sp, #12]\n\t"
        "cmp r5, #1\n\t"
        "blo 13f\n\t"
        "adr r4, 23f\n\t"                                     /* one chunk first */
        "beq 13f\n\t"
        "adr r4, 24f\n"                                       /* two */
        "13:\n\t"
        "orr r4, r4, #1\n\t"
        "str r4, [sp, #8]\n\t"
        "ldr r1, [r0, #48]\n"
        "1:\n\t"
        "ldrd r4, r5, [r0, #84]\n\tldrd r6, r7, [r0, #84]\n\t"
        "ldr r0, [r0, #0]\n\t"                                /* px = x */
        "ldr pc, [sp, #8]\n"
        "23:\n\t"
        "ldr r12, [r1], #4\n\t" BL14_C8("r12")
        "ldr pc, [sp, #12]\n"
        "24:\n\t"
        "ldrd r3, r12, [r1], #8\n\t" BL14_C8("r3") BL14_C8("r12")
        "ldr pc, [sp, #12]\n"
        "20:\n\t" BL14_G3
        "21:\n\t" BL14_G3
        ".rept " BL14_XSTR(BL14_GROUPS) " - 2\n\t" BL14_G3 ".endr\n\t"
        "ldr r8, [sp, #4]\n\t"
        "cmp r0, r8\n\t"
        "bne 20b\n\t"
        "ldr r0, [sp]\n\t"
        "ldrd r2, r3, [r0, #52]\n\t"                          /* M, B pointers */
        BL14_LOAD_REQUANT                                      /* S, M, B */
        "strd r2, r3, [r0, #52]\n\t"
        "cmp r8, r11\n\t"
        "bhi 4f\n\t"
        "sub r9, r9, #33\n\t"
        "cmp r9, #30\n\t"
        "bhi 6f\n\t"                                          /* S outside 33..63 */
        BL14_RQ_SMMLA4                                         /* rq_fast */
        "7:\n\t"
        BL14_TO_STORES                                         /* d, left, step; token 2's output */
        "10:\n\t"
        BL14_STORE16
        "bne 1b\n\t"
        "b 9f\n"
        "3:\n\t"
        BL14_STORE32
        "bne 1b\n"
        "9:\n\t"                                              /* the run done: the next one, if any */
        BL14_NEXT_RUN
        "6:\n\t"                                              /* S <= 32: j = 32 - S <= jsafe lifts the sums */
        "mvn r9, r9\n\t"                                      /* (S > 63 gives j < 0: refused unsigned) */
        "ldr r11, [r0, #96]\n\t"
        "cmp r9, r11\n\t"
        "bhi 4f\n\t"
        BL14_RQ_SMMULR4(BL14_LIFT_R9)
        "b 7b\n"
        "4:\n\t"
        "strd r4, r5, [r0, #60]\n\t"
        "strd r6, r7, [r0, #68]\n\t"
        "str r1, [r0, #48]\n\t"
        "movs r0, #1\n\t"
        "add sp, sp, #20\n\t"
        "pop {r4, r5, r6, r7, r8, r9, r10, r11, pc}\n"
        "8:\n\t"
        "str r1, [r0, #48]\n\t"
        "movs r0, #0\n\t"
        "add sp, sp, #20\n\t"
        "pop {r4, r5, r6, r7, r8, r9, r10, r11, pc}\n\t");
}
#undef BL14_C8
#undef BL14_G3
#undef BL14_STR
#undef BL14_XSTR
#undef BL14_GROUPS

/* Blocks of 1..3 tokens (the end of a sentence, the heads' single rows): two chunks a step (one weight LDRD, four
 * SXTB16, the activations by LDMIA of four words for one or two tokens, by LDRD for three, four SMLAD a token);
 * an odd last chunk is left to the caller. */
#define BL14_W2 "ldrd %[wa], %[wb], [%[pw]], #8\n\tsxtb16 %[wl], %[wa]\n\tsxtb16 %[wa], %[wa], ror #8\n\t" \
                "sxtb16 %[wh], %[wb]\n\tsxtb16 %[wb], %[wb], ror #8\n\t"
#define BL14_X2(acc) "ldrd %[xa], %[xb], [%[px]], #8\n\tsmlad " acc ", %[wl], %[xa], " acc "\n\t" \
                     "smlad " acc ", %[wa], %[xb], " acc "\n\t"
#define BL14_Y2(acc) "ldrd %[xa], %[xb], [%[px]], #8\n\tsmlad " acc ", %[wh], %[xa], " acc "\n\t" \
                     "smlad " acc ", %[wb], %[xb], " acc "\n\t"
static inline void dot_small_pairs(const int8_t *w, const int16_t *px, uint32_t pairs, uint32_t nb, int32_t acc[4])
{
    int32_t a0 = 0, a1 = 0, a2 = 0;
    uint32_t wa, wb, wl, wh, xa, xb, n = pairs;
    if (n == 0) {
    } else if (nb == 3u) {
        __asm volatile("1:\n\t" BL14_W2 BL14_X2("%[a0]") BL14_X2("%[a1]") BL14_X2("%[a2]")
                       BL14_Y2("%[a0]") BL14_Y2("%[a1]") BL14_Y2("%[a2]") "subs %[n], %[n], #1\n\tbne 1b\n\t"
                       : [a0] "+r"(a0), [a1] "+r"(a1), [a2] "+r"(a2), [pw] "+r"(w), [px] "+r"(px), [n] "+r"(n),
                         [wa] "=&r"(wa), [wb] "=&r"(wb), [wl] "=&r"(wl), [wh] "=&r"(wh), [xa] "=&r"(xa), [xb] "=&r"(xb)
                       :
                       : "cc");
    } else if (nb == 2u) {                         /* a chunk of both tokens: one LDMIA */
        __asm volatile("1:\n\t" BL14_W2 "ldmia %[px]!, {r2, r3, r4, r5}\n\t"
                       "smlad %[a0], %[wl], r2, %[a0]\n\tsmlad %[a0], %[wa], r3, %[a0]\n\t"
                       "smlad %[a1], %[wl], r4, %[a1]\n\tsmlad %[a1], %[wa], r5, %[a1]\n\t"
                       "ldmia %[px]!, {r2, r3, r4, r5}\n\t"
                       "smlad %[a0], %[wh], r2, %[a0]\n\tsmlad %[a0], %[wb], r3, %[a0]\n\t"
                       "smlad %[a1], %[wh], r4, %[a1]\n\tsmlad %[a1], %[wb], r5, %[a1]\n\t"
                       "subs %[n], %[n], #1\n\tbne 1b\n\t"
                       : [a0] "+r"(a0), [a1] "+r"(a1), [pw] "+r"(w), [px] "+r"(px), [n] "+r"(n),
                         [wa] "=&r"(wa), [wb] "=&r"(wb), [wl] "=&r"(wl), [wh] "=&r"(wh)
                       :
                       : "r2", "r3", "r4", "r5", "cc");
    } else {                                       /* two chunks of the one token: one LDMIA */
        __asm volatile("1:\n\t" BL14_W2 "ldmia %[px]!, {r2, r3, r4, r5}\n\t"
                       "smlad %[a0], %[wl], r2, %[a0]\n\tsmlad %[a0], %[wa], r3, %[a0]\n\t"
                       "smlad %[a0], %[wh], r4, %[a0]\n\tsmlad %[a0], %[wb], r5, %[a0]\n\t"
                       "subs %[n], %[n], #1\n\tbne 1b\n\t"
                       : [a0] "+r"(a0), [pw] "+r"(w), [px] "+r"(px), [n] "+r"(n),
                         [wa] "=&r"(wa), [wb] "=&r"(wb), [wl] "=&r"(wl), [wh] "=&r"(wh)
                       :
                       : "r2", "r3", "r4", "r5", "cc");
    }
    acc[0] = a0;
    acc[1] = a1;
    acc[2] = a2;
    acc[3] = 0;
}
#undef BL14_W2
#undef BL14_X2
#undef BL14_Y2
#endif

/* Blocks of nb (1..4) tokens, one chunk a step, added to acc (host emulation; on the core the last odd chunk of
 * a small block). */
BERTL14_NOINLINE static void dot_small(const int8_t *w, const int16_t *px, uint32_t chunks, uint32_t nb,
                                      int32_t acc[4])
{
    int32_t a0 = acc[0], a1 = acc[1], a2 = acc[2], a3 = acc[3];
    for (uint32_t c = 0; c < chunks; c++, w += 4) {
        const uint32_t ww = bertl14_ld32(BERTL14_ALIGNED4(w));
        const uint32_t wl = bertl14_sxtb16(ww), wh = bertl14_sxtb16_ror8(ww);
        a0 = bertl14_smlad(wl, bertl14_ld32(BERTL14_ALIGNED4(px)), a0);
        a0 = bertl14_smlad(wh, bertl14_ld32(BERTL14_ALIGNED4(px + 2)), a0);
        px += 4;
        if (nb > 1u) {
            a1 = bertl14_smlad(wl, bertl14_ld32(BERTL14_ALIGNED4(px)), a1);
            a1 = bertl14_smlad(wh, bertl14_ld32(BERTL14_ALIGNED4(px + 2)), a1);
            px += 4;
        }
        if (nb > 2u) {
            a2 = bertl14_smlad(wl, bertl14_ld32(BERTL14_ALIGNED4(px)), a2);
            a2 = bertl14_smlad(wh, bertl14_ld32(BERTL14_ALIGNED4(px + 2)), a2);
            px += 4;
        }
        if (nb > 3u) {
            a3 = bertl14_smlad(wl, bertl14_ld32(BERTL14_ALIGNED4(px)), a3);
            a3 = bertl14_smlad(wh, bertl14_ld32(BERTL14_ALIGNED4(px + 2)), a3);
            px += 4;
        }
    }
    acc[0] = a0;
    acc[1] = a1;
    acc[2] = a2;
    acc[3] = a3;
}

/* |a| for a >= 0, |a| - 1 below: a << j fits int32 iff mag(a) >> (31 - j) is 0. */
static inline uint32_t mag(int32_t a)
{
    return (uint32_t)(a ^ (a >> 31));
}

/* A block of 1..4 tokens, whole chunks, aligned: per output channel the nb dot products in one pass over its
 * weight row, then nb requantized stores. */
static void linear_block(const int16_t *x, const uint32_t *x_scale, uint32_t nb, uint32_t in, const int8_t *w,
                         uint32_t out, const bertl14_requant_t *rq, int16_t *y16, int32_t *y32, uint32_t y_stride)
{
    uint32_t sc[4];
    const uint32_t smax = block_scales(x_scale, nb, sc);
    const uint32_t tail_start = out & ~3u;
    const int16_t *const mults = rq->mult, *const shifts = rq->shift;
    const int32_t *const biases = rq->bias;
    const uint32_t jsafe = int8_lift_limit(in);             /* a lift by j <= jsafe fits every sum */
    uint32_t o = 0;
#if BERTL14_ACLE_NATIVE && defined(__GNUC__) && defined(__thumb2__)
    if (nb == 4u && in && !(in & 15u)) {
        const uint32_t todo = y_stride ? out : tail_start;
        w = block4_run(block4_channels, w, x, in, sc, mult_limit(smax), jsafe, rq, todo, out, y16, y32, y_stride);
        o = todo;
    }
#endif
    for (; o < out; o++, w += in) {
        int32_t acc[4] = {0, 0, 0, 0};
#if BERTL14_ACLE_NATIVE && defined(__GNUC__) && defined(__thumb2__)
        if (nb == 4u) {                                 /* in % 16 != 0: rare */
            dot_small(w, x, in / 4u, nb, acc);
        } else {
            const uint32_t pairs = in / 8u;
            dot_small_pairs(w, x, pairs, nb, acc);
            if (in & 4u) {                              /* the odd last chunk */
                dot_small(w + 8u * pairs, x + 8u * pairs * nb, 1u, nb, acc);
            }
        }
#else
        dot_small(w, x, in / 4u, nb, acc);
#endif
        const int32_t mult = mults[o], shift = shifts[o], bias = ld_bias(biases, o);
        const uint32_t base = y_stride ? o : bertl14_block_index(0, o, nb, out);
        const uint32_t step = y_stride ? y_stride : (o < tail_start ? 4u : out - tail_start);
        /* INT8 weights give shifts about 8 below the INT16 ones (24..40 on the converted models): the sums are
         * lifted by j = max(0, 33 - S) bits, rsr(acc * 2^j * s * M, S + j) being the same value, when every
         * token's acc * 2^j fits 32 bits (j <= jsafe: the layer's bound; else each sum tested, the unused tokens'
         * acc being 0) and s * M < 2^31; else the 64-bit formula */
        const uint32_t j = shift < 33 ? (uint32_t)(33 - shift) : 0u;
        if (j <= 24u && smax * (uint32_t)mult < 0x80000000u &&
            (j <= jsafe || ((mag(acc[0]) | mag(acc[1]) | mag(acc[2]) | mag(acc[3])) >> (31u - j)) == 0u)) {
            const int32_t lifted[4] = {(int32_t)((uint32_t)acc[0] << j), (int32_t)((uint32_t)acc[1] << j),
                                       (int32_t)((uint32_t)acc[2] << j), (int32_t)((uint32_t)acc[3] << j)};
            store_fast_tokens(y16, y32, base, step, nb, lifted, sc, (uint32_t)mult, shift + (int32_t)j - 32, bias);
        } else {
            store_requant_tokens(y16, y32, base, step, nb, acc, sc, mult, shift, bias);
        }
    }
}
#endif

/* Token by token (the portable body; with the DSP kernels more than four tokens, or rows the word loads cannot take:
 * rare, kept small) */
#if defined(BERTL14_USE_DSP)
BERTL14_COLD
#endif
static void linear_rows(const bertl14_linear_dims *dims, const bertl14_requant_t *rq, const int16_t *x,
                        const uint32_t *x_scale, const int8_t *w, int16_t *y16, int32_t *y32)
{
    const uint32_t tokens = dims->tokens, in = dims->in, out = dims->out;
    for (uint32_t o = 0; o < out; o++, w += in) {
        const int32_t mult = rq->mult[o], shift = rq->shift[o], bias = ld_bias(rq->bias, o);
        for (uint32_t t = 0; t < tokens; t++) {
            store_requant(y16, y32, out_index(t, o, tokens, out, dims->y_stride), dot_block_c(w, x, t, tokens, in),
                          x_scale[t], mult, shift, bias);
        }
    }
}

void bertl14_linear_s8_w8(const bertl14_linear_dims *dims, const bertl14_requant_t *rq, const int16_t *x,
                          const uint32_t *x_scale, const int8_t *w, int16_t *y16, int32_t *y32)
{
    const uint32_t tokens = dims->tokens, in = dims->in, out = dims->out, y_stride = dims->y_stride;
#if defined(BERTL14_USE_MVE)
    /* halfword gathers: 4-byte aligned activations, whole chunks (else the portable loop) */
    if (tokens <= 4u && !((uintptr_t)x & 3u) && !(in & 3u)) {
        linear_block(x, x_scale, tokens, in, w, out, rq, y16, y32, y_stride);
        return;
    }
#elif defined(BERTL14_USE_DSP)
    /* word loads: 4-byte aligned weight rows and activations, whole chunks (else the portable loop) */
    if (tokens <= 4u && !(((uintptr_t)w | (uintptr_t)x) & 3u) && !(in & 3u)) {
        linear_block(x, x_scale, tokens, in, w, out, rq, y16, y32, y_stride);
        return;
    }
#endif
    linear_rows(dims, rq, x, x_scale, w, y16, y32);               /* portable (and > 4 tokens) */
}
#endif /* BERTL14_WEIGHTS_INT8 */
