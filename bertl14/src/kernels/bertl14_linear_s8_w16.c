/* Linear layer: INT16 weights x INT8 activations (held as int16), per-channel requantization
 * (docs/numerics.md "Linear layer"). The input is a token block in the interleaved block layout
 * (bertl14_kernels.h): the four channels 4c..4c+3 of every token of the block sit next to each
 * other, so the DSP body walks ONE activation pointer with double-word loads (SMLAD: two MACs an
 * instruction); for the encoder's blocks of four tokens two weight rows against two tokens a step
 * (2 x 2 tiles: each loaded pair of weights serves two tokens, each pair of activations two channels),
 * each weight row read twice a block, smaller blocks each pair of weights for all their tokens.
 * Requantization is done in 32-bit pieces where the shift allows it (bit-identical).
 * The Helium body (BERTL14_USE_MVE) takes eight weights a vector and gathers the same eight channels of each token
 * of the block (two chunks, one word-gather), so one VMLADAVA does eight MACs, two weight rows a pass; the
 * requantization runs four output channels a vector. */
#include "bertl14_kernels.h"
#include "bertl14_acle_emul.h"
#include "bertl14_linear_store.h"
#if defined(BERTL14_USE_MVE)
#include "bertl14_mve.h"
#endif

#if defined(BERTL14_USE_DSP) && !defined(BERTL14_USE_MVE)
#if BERTL14_ACLE_NATIVE && defined(__GNUC__) && defined(__thumb2__)
/* Two output channels a pass (rows o and o + 1 of the weights): their dot products with tokens 0, 1 and then with
 * tokens 2, 3 as 2 x 2 tiles, per chunk of four inputs the two tokens' chunks (two activation LDRD), each weight row's
 * four values (two weight LDRD: the rows are read twice, once a token pair) and eight SMLAD, 12 instructions for 16
 * MACs (four chunks an iteration: 0.78 instructions a MAC), then the stores of channel o and of channel o + 1: for S
 * in 33..63 and M <= mlimit y = sat(qadd(smmla(acc, s * M, 2^(S-33)) >> (S-32), B)) (rq_fast), for S = 32 (the
 * FFN's down projection has some) sat(qadd(smmulr(acc, s * M), B)). Runs are of an even number of channels (the
 * caller leaves an odd last one to the per-channel loop): an odd `left` is the second channel of a pair, its sums in
 * f->acc1. All fourteen registers are in use in the dot loops: the frame's address waits on the stack, the M and B
 * pointers in the frame. Returns 0 when the channels are done, 1 at a channel outside these cases, its sums in
 * f->acc and the pointers past it (past the pair for w), f->d and f->left still on it. GCC splits 64-bit loads whose
 * halves are used separately into two LDR and keeps little in registers around the loop, hence the assembly. */
#define BL14_C2(pa, at, au, pb, bt, bu) "ldrd r10, r11, [r0, #8]\n\tldrd r8, r9, [r0], #32\n\t" \
    "ldrd r2, r3, [" pa "], #8\n\t" \
    "smlad " at ", r8, r2, " at "\n\tsmlad " at ", r9, r3, " at "\n\t" \
    "smlad " au ", r10, r2, " au "\n\tsmlad " au ", r11, r3, " au "\n\t" \
    "ldrd r2, r3, [" pb "], #8\n\t" \
    "smlad " bt ", r8, r2, " bt "\n\tsmlad " bt ", r9, r3, " bt "\n\t" \
    "smlad " bu ", r10, r2, " bu "\n\tsmlad " bu ", r11, r3, " bu "\n\t"
#define BL14_CA BL14_C2("r1", "r4", "r5", "r12", "r6", "r7")   /* row o: r4, r5; row o + 1: r6, r7 */
#define BL14_CB BL14_C2("r12", "r6", "r7", "r1", "r4", "r5")   /* row o: r6, r7; row o + 1: r4, r5 */
__attribute__((naked, noinline)) static uint32_t block4_channels(block4_frame *f __attribute__((unused)))
{
    __asm volatile(
        "push {r0, r4, r5, r6, r7, r8, r9, r10, r11, lr}\n\t"  /* f at [sp] */
        BL14_SELECT_STORE                                      /* the stores: one LDR to PC a channel */
        "ldr r1, [r0, #48]\n\t"
        "ldrd r2, r3, [r0, #52]\n\t"
        "ldr r10, [r0, #36]\n\t"
        "lsls r11, r10, #31\n\t"
        "bne 23f\n"                                            /* left odd: a pair's second channel */
        "1:\n\t"                                               /* channels o, o + 1 */
        "strd r2, r3, [r0, #52]\n\t"
        "ldrd r4, r5, [r0, #84]\n\tldrd r6, r7, [r0, #84]\n\t"
        "ldrd r0, lr, [r0, #0]\n\t"                            /* px = x (tokens 0, 1), n = quads */
        "add r12, r1, lr, lsl #5\n"                            /* row o + 1 */
        "2:\n\t" BL14_CA BL14_CA BL14_CA BL14_CA "subs lr, lr, #1\n\tbne 2b\n\t"
        "ldr r0, [sp]\n\t"
        "strd r4, r5, [r0, #60]\n\t"                           /* o: tokens 0, 1 */
        "strd r6, r7, [r0, #100]\n\t"                          /* o + 1: tokens 0, 1 */
        "ldrd r4, r5, [r0, #84]\n\tldrd r6, r7, [r0, #84]\n\t"
        "ldrd r0, lr, [r0, #116]\n\t"                          /* px = x + 8 (tokens 2, 3), n */
        "sub r12, r1, lr, lsl #5\n"                            /* row o (r1: row o + 1) */
        "13:\n\t" BL14_CB BL14_CB BL14_CB BL14_CB "subs lr, lr, #1\n\tbne 13b\n\t"
        "ldr r0, [sp]\n\t"
        "strd r4, r5, [r0, #108]\n\t"                          /* o + 1: tokens 2, 3 */
        "ldrd r4, r5, [r0, #60]\n\t"                           /* o: r4..r7 */
        "ldrd r2, r3, [r0, #52]\n"
        "14:\n\t"
        BL14_LOAD_REQUANT                                      /* S, M, B */
        "sub r9, r9, #33\n\t"
        "cmp r8, r11\n\t"
        "bhi 4f\n\t"
        "cmp r9, #30\n\t"
        "bhi 6f\n\t"                                           /* S outside 33..63 */
        BL14_RQ_SMMLA4                                         /* rq_fast */
        "7:\n\t"
        BL14_TO_STORES                                         /* d, left, step; token 2's output */
        "10:\n\t"
        BL14_STORE16
        "beq 5f\n\t"
        "lsls r11, r10, #31\n\t"
        "beq 1b\n\t"                                           /* left even: the next pair */
        "b 23f\n"
        "3:\n\t"
        BL14_STORE32
        "beq 5f\n\t"
        "lsls r11, r10, #31\n\t"
        "beq 1b\n"
        "23:\n\t"                                              /* channel o + 1 */
        "ldrd r4, r5, [r0, #100]\n\tldrd r6, r7, [r0, #108]\n\t"
        "b 14b\n"
        "5:\n\t"                                               /* the run done: the next one, if any */
        BL14_NEXT_RUN
        "8:\n\t"
        "str r1, [r0, #48]\n\t"
        "strd r2, r3, [r0, #52]\n\t"
        "movs r0, #0\n\t"
        "add sp, sp, #4\n\t"
        "pop {r4, r5, r6, r7, r8, r9, r10, r11, pc}\n"
        "4:\n\t"
        "strd r4, r5, [r0, #60]\n\t"
        "strd r6, r7, [r0, #68]\n\t"
        "str r1, [r0, #48]\n\t"
        "strd r2, r3, [r0, #52]\n\t"
        "movs r0, #1\n\t"
        "add sp, sp, #4\n\t"
        "pop {r4, r5, r6, r7, r8, r9, r10, r11, pc}\n"
        "6:\n\t"                                               /* S = 32: rsr(acc * m, 32) is SMMULR */
        "adds r9, r9, #1\n\t"
        "bne 4b\n\t"
        BL14_RQ_SMMULR4(BL14_NO_LIFT)
        "b 7b\n\t");
}
#undef BL14_CA
#undef BL14_CB
#undef BL14_C2

/* Blocks of 1..4 tokens (the end of a sentence, and the rare cases block4_channels leaves): one chunk an
 * iteration, the same loads and SMLAD. */
#define BL14_X(acc) "ldrd %[xa], %[xb], [%[px]], #8\n\t" "smlad " acc ", %[w0], %[xa], " acc "\n\t" \
                    "smlad " acc ", %[w1], %[xb], " acc "\n\t"
static inline void dot_small_contig(const int16_t *w, const int16_t *px, uint32_t chunks, uint32_t nb, int32_t acc[4])
{
    int32_t a0 = 0, a1 = 0, a2 = 0, a3 = 0;
    uint32_t w0, w1, xa, xb, n = chunks;
    if (n == 0) {
    } else if (nb == 4) {
        __asm volatile("1:\n\tldrd %[w0], %[w1], [%[pw]], #8\n\t" BL14_X("%[a0]") BL14_X("%[a1]") BL14_X("%[a2]")
                       BL14_X("%[a3]") "subs %[n], %[n], #1\n\tbne 1b\n\t"
                       : [a0] "+r"(a0), [a1] "+r"(a1), [a2] "+r"(a2), [a3] "+r"(a3), [pw] "+r"(w), [px] "+r"(px),
                         [n] "+r"(n), [w0] "=&r"(w0), [w1] "=&r"(w1), [xa] "=&r"(xa), [xb] "=&r"(xb)
                       :
                       : "cc");
    } else if (nb == 3) {
        __asm volatile("1:\n\tldrd %[w0], %[w1], [%[pw]], #8\n\t" BL14_X("%[a0]") BL14_X("%[a1]") BL14_X("%[a2]")
                       "subs %[n], %[n], #1\n\tbne 1b\n\t"
                       : [a0] "+r"(a0), [a1] "+r"(a1), [a2] "+r"(a2), [pw] "+r"(w), [px] "+r"(px), [n] "+r"(n),
                         [w0] "=&r"(w0), [w1] "=&r"(w1), [xa] "=&r"(xa), [xb] "=&r"(xb)
                       :
                       : "cc");
    } else if (nb == 2) {
        __asm volatile("1:\n\tldrd %[w0], %[w1], [%[pw]], #8\n\t" BL14_X("%[a0]") BL14_X("%[a1]")
                       "subs %[n], %[n], #1\n\tbne 1b\n\t"
                       : [a0] "+r"(a0), [a1] "+r"(a1), [pw] "+r"(w), [px] "+r"(px), [n] "+r"(n),
                         [w0] "=&r"(w0), [w1] "=&r"(w1), [xa] "=&r"(xa), [xb] "=&r"(xb)
                       :
                       : "cc");
    } else {
        __asm volatile("1:\n\tldrd %[w0], %[w1], [%[pw]], #8\n\t" BL14_X("%[a0]")
                       "subs %[n], %[n], #1\n\tbne 1b\n\t"
                       : [a0] "+r"(a0), [pw] "+r"(w), [px] "+r"(px), [n] "+r"(n),
                         [w0] "=&r"(w0), [w1] "=&r"(w1), [xa] "=&r"(xa), [xb] "=&r"(xb)
                       :
                       : "cc");
    }
    acc[0] = a0;
    acc[1] = a1;
    acc[2] = a2;
    acc[3] = a3;
}
#undef BL14_X
#else
/* One token of a block of `stride / 4` tokens over the full chunks (host emulation path). */
static inline int32_t dot1_block(const int16_t *w, const int16_t *px, uint32_t chunks, uint32_t stride)
{
    int32_t a = 0;
    for (uint32_t c = 0; c < chunks; c++, w += 4, px += stride) {
        a = bertl14_smlad(bertl14_ld32(BERTL14_ALIGNED4(w)), bertl14_ld32(BERTL14_ALIGNED4(px)), a);
        a = bertl14_smlad(bertl14_ld32(BERTL14_ALIGNED4(w + 2)), bertl14_ld32(BERTL14_ALIGNED4(px + 2)), a);
    }
    return a;
}

static inline void dot_small_contig(const int16_t *w, const int16_t *px, uint32_t chunks, uint32_t nb, int32_t acc[4])
{
    for (uint32_t t = 0; t < nb; t++) {
        acc[t] = dot1_block(w, px + 4u * t, chunks, 4u * nb);
    }
}
#endif
#endif

#if defined(BERTL14_USE_MVE)
/* Dot products of weight rows with the tokens of the block, into acc[t][lane] (token t, channel o + lane). Eight
 * weights (one VLDRH) against the same eight channels of a token, chunks 2j and 2j+1, which are 4 * nb values apart
 * in the block layout: one gather of four words (VLDRW) at the word offsets {2t, 2t + 1, 2nb + 2t, 2nb + 2t + 1}
 * from the pair's start, one VMLADAVA (eight MACs). A last single chunk (in % 8 == 4) is the same with the upper
 * lanes predicated off (single_mve). */
static inline __attribute__((always_inline)) int32_t single_mve(int32_t s, const int16_t *pw, const int32_t *px,
                                                                uint32x4_t off)
{
    return vmladavaq_s16(s, vldrhq_z_s16(pw, vctp16q(4)),
                         vreinterpretq_s16_s32(vldrwq_gather_shifted_offset_z_s32(px, off, vctp32q(2))));
}

/* A block of four tokens (the encoder's case), two weight rows (w, w + in) a pass: per pair of chunks two VLDRH,
 * four gathers and eight VMLADAVA, 17 instructions for 64 MACs, in assembly: GCC 12 keeps neither the eight sums
 * in the even registers VMLADAVA needs (constraint Te) nor the offsets in vector registers across its own loop.
 * The assembly only reads memory this function never writes (the weights, the input block): no memory clobber. */
static void dot2_block4(const int16_t *w, uint32_t in, const int16_t *x, const uint32x4_t off[4], int32_t acc[4][4],
                        uint32_t lane)
{
    const int16_t *p0 = w, *p1 = w + in;
    const int32_t *px = (const int32_t *)(const void *)x;
    uint32_t n = in / 8u;
    int32_t s0 = 0, s1 = 0, s2 = 0, s3 = 0, t0 = 0, t1 = 0, t2 = 0, t3 = 0;
    if (n) {
        int16x8_t wa, wb, xa, xb;
        __asm volatile("movs %[s0], #0\n\tmovs %[s1], #0\n\tmovs %[s2], #0\n\tmovs %[s3], #0\n\t"
                       "movs %[t0], #0\n\tmovs %[t1], #0\n\tmovs %[t2], #0\n\tmovs %[t3], #0\n"
                       "1:\n\t"
                       "vldrh.16 %q[wa], [%[p0]], #16\n\t"
                       "vldrh.16 %q[wb], [%[p1]], #16\n\t"
                       "vldrw.u32 %q[xa], [%[px], %q[o0], uxtw #2]\n\t"
                       "vldrw.u32 %q[xb], [%[px], %q[o1], uxtw #2]\n\t"
                       "vmladava.s16 %[s0], %q[wa], %q[xa]\n\t"
                       "vmladava.s16 %[t0], %q[wb], %q[xa]\n\t"
                       "vldrw.u32 %q[xa], [%[px], %q[o2], uxtw #2]\n\t"
                       "vmladava.s16 %[s1], %q[wa], %q[xb]\n\t"
                       "vmladava.s16 %[t1], %q[wb], %q[xb]\n\t"
                       "vldrw.u32 %q[xb], [%[px], %q[o3], uxtw #2]\n\t"
                       "vmladava.s16 %[s2], %q[wa], %q[xa]\n\t"
                       "vmladava.s16 %[t2], %q[wb], %q[xa]\n\t"
                       "adds %[px], %[px], #64\n\t"
                       "vmladava.s16 %[s3], %q[wa], %q[xb]\n\t"
                       "vmladava.s16 %[t3], %q[wb], %q[xb]\n\t"
                       "subs %[n], %[n], #1\n\t"
                       "bne 1b"
                       : [s0] "=&Te"(s0), [s1] "=&Te"(s1), [s2] "=&Te"(s2), [s3] "=&Te"(s3), [t0] "=&Te"(t0),
                         [t1] "=&Te"(t1), [t2] "=&Te"(t2), [t3] "=&Te"(t3), [p0] "+r"(p0), [p1] "+r"(p1),
                         [px] "+r"(px), [n] "+r"(n), [wa] "=&w"(wa), [wb] "=&w"(wb), [xa] "=&w"(xa), [xb] "=&w"(xb)
                       : [o0] "w"(off[0]), [o1] "w"(off[1]), [o2] "w"(off[2]), [o3] "w"(off[3])
                       : "cc");
    }
    if (in & 4u) {
        s0 = single_mve(s0, p0, px, off[0]);
        s1 = single_mve(s1, p0, px, off[1]);
        s2 = single_mve(s2, p0, px, off[2]);
        s3 = single_mve(s3, p0, px, off[3]);
        t0 = single_mve(t0, p1, px, off[0]);
        t1 = single_mve(t1, p1, px, off[1]);
        t2 = single_mve(t2, p1, px, off[2]);
        t3 = single_mve(t3, p1, px, off[3]);
    }
    acc[0][lane] = s0;
    acc[1][lane] = s1;
    acc[2][lane] = s2;
    acc[3][lane] = s3;
    acc[0][lane + 1u] = t0;
    acc[1][lane + 1u] = t1;
    acc[2][lane + 1u] = t2;
    acc[3][lane + 1u] = t3;
}

/* A single token (the heads: pooler, classifier, tagger) is a plain row: four weight rows a pass against the same
 * eight activations (one VLDRH of the row, four of weights, four VMLADAVA), into acc[0][0..3]. */
BERTL14_NOINLINE static void dot4_row(const int16_t *w, uint32_t in, const int16_t *x, int32_t acc[4][4])
{
    const int16_t *p0 = w, *p1 = w + in, *p2 = p1 + in, *p3 = p2 + in, *px = x;
    int32_t s0 = 0, s1 = 0, s2 = 0, s3 = 0;
    for (uint32_t n = in / 8u; n; n--, p0 += 8, p1 += 8, p2 += 8, p3 += 8, px += 8) {
        const int16x8_t xv = vldrhq_s16(px);
        s0 = vmladavaq_s16(s0, vldrhq_s16(p0), xv);
        s1 = vmladavaq_s16(s1, vldrhq_s16(p1), xv);
        s2 = vmladavaq_s16(s2, vldrhq_s16(p2), xv);
        s3 = vmladavaq_s16(s3, vldrhq_s16(p3), xv);
    }
    if (in & 4u) {                                                           /* the last four channels */
        const mve_pred16_t p = vctp16q(4);
        const int16x8_t xv = vldrhq_z_s16(px, p);
        s0 = vmladavaq_s16(s0, vldrhq_z_s16(p0, p), xv);
        s1 = vmladavaq_s16(s1, vldrhq_z_s16(p1, p), xv);
        s2 = vmladavaq_s16(s2, vldrhq_z_s16(p2, p), xv);
        s3 = vmladavaq_s16(s3, vldrhq_z_s16(p3, p), xv);
    }
    acc[0][0] = s0;
    acc[0][1] = s1;
    acc[0][2] = s2;
    acc[0][3] = s3;
}

/* One weight row, token by token (blocks of 1..3 tokens, and a last odd channel): off0 the offsets of token 0 */
BERTL14_NOINLINE static void dot1_mve(const int16_t *w, uint32_t in, const int16_t *x, uint32_t nb, uint32x4_t off0,
                     int32_t acc[4][4], uint32_t lane)
{
    for (uint32_t t = 0; t < nb; t++) {
        const int16_t *pw = w;
        const int32_t *px = (const int32_t *)(const void *)x + 2u * t;
        int32_t s = 0;
        for (uint32_t j = 0; j < in / 8u; j++, pw += 8, px += 4u * nb) {
            s = vmladavaq_s16(s, vldrhq_s16(pw), vreinterpretq_s16_s32(vldrwq_gather_shifted_offset_s32(px, off0)));
        }
        acc[t][lane] = in & 4u ? single_mve(s, pw, px, off0) : s;
    }
}

/* rsr(acc * m, 32 + sh) + bias of four output channels, sat32 (VQADD): for sh >= 1 the high word of the product
 * (VMULH) plus c = 2^(sh-1), shifted right by sh (nsh = -sh, VSHL by each lane's count); for sh = 0 (shift 32)
 * the rounded high word (VRMULH) in the lanes at32 (has32: some lane has sh = 0). |acc * m| < 2^62: every
 * result fits 32 bits before the bias. */
static inline __attribute__((always_inline)) int32x4_t requant4(int32x4_t acc, int32x4_t m, int32x4_t c,
                                                                int32x4_t nsh, int32x4_t bias, int has32,
                                                                mve_pred16_t at32)
{
    int32x4_t v = vshlq_s32(vaddq_s32(vmulhq_s32(acc, m), c), nsh);
    if (has32) {
        v = vpselq_s32(vrmulhq_s32(acc, m), v, at32);
    }
    return vqaddq_s32(v, bias);
}

/* A block of nb (1..4) tokens, whole chunks, x 4-byte aligned. Four output channels a pass: their dot products,
 * then, when all four have shift 32..63 and s * M < 2^31 for every token (the DSP body's fast case, and shift 32),
 * the requantization of a token's four results as one vector (lanes: the channels; requant4), saturated to 16 bits
 * (VQMOVNB) where the output is int16, and one store of four adjacent outputs (a chunk of the block layout, or four
 * channels of a row). Other channels, and the last out % 4, take the 64-bit formula. */
static void linear_block(const int16_t *x, const uint32_t *x_scale, uint32_t nb, uint32_t in, const int16_t *w,
                         uint32_t out, const bertl14_requant_t *rq, int16_t *y16, int32_t *y32, uint32_t y_stride)
{
    uint32_t smax = 0;
    for (uint32_t t = 0; t < nb; t++) {
        smax = x_scale[t] > smax ? x_scale[t] : smax;
    }
    const int16_t *const mults = rq->mult, *const shifts = rq->shift;
    const int32_t *const biases = rq->bias;
    int32_t acc[4][4];
    const uint32x4_t idx = vidupq_n_u32(0u, 1);                              /* 0, 1, 2, 3 */
    /* {0, 1, 2nb, 2nb + 1}: the two words of a chunk and of the next chunk of token 0; + 2t: token t */
    const uint32x4_t off0 = vaddq_u32(vandq_u32(idx, vdupq_n_u32(1u)), vmulq_n_u32(vshrq_n_u32(idx, 1), 2u * nb));
    const uint32x4_t off[4] = {off0, vaddq_n_u32(off0, 2u), vaddq_n_u32(off0, 4u), vaddq_n_u32(off0, 6u)};
    for (uint32_t o = 0; o < out; o += 4u) {
        const uint32_t cnt = out - o < 4u ? out - o : 4u;
        uint32_t j = 0;
        if (nb == 4u) {
            for (; j + 2u <= cnt; j += 2u) {
                dot2_block4(w + (o + j) * in, in, x, off, acc, j);
            }
        } else if (nb == 1u && cnt == 4u) {
            dot4_row(w + o * in, in, x, acc);
            j = 4u;
        }
        for (; j < cnt; j++) {
            dot1_mve(w + (o + j) * in, in, x, nb, off0, acc, j);
        }
        if (cnt == 4u) {
            const int32x4_t mult = vldrhq_s32(mults + o), shift = vldrhq_s32(shifts + o);
            const uint32_t mmax = (uint32_t)vmaxvq_s32(0, mult);
            /* every lane's shift - 32 in 0..31 (as unsigned), and smax * M < 2^31 */
            if (vmaxvq_u32(0u, vreinterpretq_u32_s32(vsubq_n_s32(shift, 32))) <= 31u && smax * mmax < 0x80000000u) {
                const int32x4_t sh = vsubq_n_s32(shift, 32), nsh = vnegq_s32(sh);
                const int32x4_t c = vshlq_s32(vdupq_n_s32(1), vsubq_n_s32(sh, 1));   /* 2^(sh-1); 0 where sh = 0 */
                const mve_pred16_t at32 = vcmpeqq_n_s32(sh, 0);
                const int has32 = vminvq_s32(INT32_MAX, sh) == 0;
                /* the four biases (they may be unaligned): their bytes */
                const int32x4_t bias = vreinterpretq_s32_s8(vldrbq_s8((const int8_t *)(const void *)(biases + o)));
                /* token t's four outputs: y_stride apart (row-major), or the next chunk of the block layout */
                const uint32_t first = y_stride ? o : (o >> 2) * nb * 4u, step = y_stride ? y_stride : 4u;
                if (y16) {
                    int16_t *d = y16 + first;
                    for (uint32_t t = 0; t < nb; t++, d += step) {
                        const int32x4_t m = vmulq_n_s32(mult, (int32_t)x_scale[t]);
                        const int32x4_t v = requant4(vldrwq_s32(acc[t]), m, c, nsh, bias, has32, at32);
                        vstrhq_s32(d, vreinterpretq_s32_s16(vqmovnbq_s32(vreinterpretq_s16_s32(v), v)));
                    }
                } else {
                    int32_t *d = y32 + first;
                    for (uint32_t t = 0; t < nb; t++, d += step) {
                        const int32x4_t m = vmulq_n_s32(mult, (int32_t)x_scale[t]);
                        vstrwq_s32(d, requant4(vldrwq_s32(acc[t]), m, c, nsh, bias, has32, at32));
                    }
                }
                continue;
            }
        }
        for (uint32_t j = 0; j < cnt; j++) {
            const int32_t mult = mults[o + j], shift = shifts[o + j], bias = ld_bias(biases, o + j);
            for (uint32_t t = 0; t < nb; t++) {
                store_requant(y16, y32, out_index(t, o + j, nb, out, y_stride), acc[t][j], x_scale[t], mult, shift,
                              bias);
            }
        }
    }
}
#endif

#if !defined(BERTL14_USE_DSP)
/* Portable: one token's dot product over the block layout (full chunks, then the dense tail). */
static inline int32_t dot_block_c(const int16_t *w, const int16_t *x, uint32_t t, uint32_t tokens, uint32_t in)
{
    const uint32_t n4 = in & ~3u, tail = in - n4;
    int32_t a = 0;
    const int16_t *px = x + 4u * t;
    for (uint32_t i = 0; i < n4; i += 4) {
        a += w[i] * px[0] + w[i + 1] * px[1] + w[i + 2] * px[2] + w[i + 3] * px[3];
        px += 4u * tokens;
    }
    const int16_t *xt = x + n4 * tokens + t * tail;
    for (uint32_t i = 0; i < tail; i++) {
        a += w[n4 + i] * xt[i];
    }
    return a;
}
#endif

#if defined(BERTL14_USE_DSP) && !defined(BERTL14_USE_MVE)
/* The output channels of a block of nb (1..4) tokens, whole chunks, aligned: per channel the nb dot products in
 * one pass over its weight row, then nb requantized stores, token t of channel o at base + t * step. With S in
 * 33..63 and s * M < 2^31 (M <= mlimit) a store is one SMMLA, one shift, QADD, SSAT (every layer of the converted
 * models we measured: S 35..40); otherwise the 64-bit formula. The encoder's blocks of four tokens go through
 * block4_channels on the core. */
static void linear_block(const int16_t *x, const uint32_t *x_scale, uint32_t nb, uint32_t in, const int16_t *w,
                         uint32_t out, const bertl14_requant_t *rq, int16_t *y16, int32_t *y32, uint32_t y_stride)
{
    uint32_t sc[4];
    const uint32_t smax = block_scales(x_scale, nb, sc);
    const uint32_t tail_start = out & ~3u;
    const uint32_t mlimit = mult_limit(smax), chunks = in / 4u;
    uint32_t o = 0;
#if BERTL14_ACLE_NATIVE && defined(__GNUC__) && defined(__thumb2__)
    if (nb == 4u && in && !(in & 15u)) {
        const uint32_t todo = y_stride ? out & ~1u : tail_start;     /* runs of pairs of channels */
        w = block4_run(block4_channels, w, x, in, sc, mlimit, 0u, rq, todo, out, y16, y32, y_stride);
        o = todo;
    }
#endif
    for (; o < out; o++, w += in) {
        int32_t acc[4];
        dot_small_contig(w, x, chunks, nb, acc);
        const int32_t mult = rq->mult[o], shift = rq->shift[o], bias = ld_bias(rq->bias, o);
        const uint32_t base = y_stride ? o : bertl14_block_index(0, o, nb, out);
        const uint32_t step = y_stride ? y_stride : (o < tail_start ? 4u : out - tail_start);
        const uint32_t e = (uint32_t)(shift - 33);                  /* S 33..63: e 0..30 */
        if (e <= 30u && (uint32_t)mult <= mlimit) {
            store_fast_tokens(y16, y32, base, step, nb, acc, sc, (uint32_t)mult, (int32_t)e + 1, bias);
        } else {
            store_requant_tokens(y16, y32, base, step, nb, acc, sc, mult, shift, bias);
        }
    }
}

#endif

#if defined(BERTL14_USE_DSP)
/* More than four tokens, or rows the word loads cannot take (misaligned, in % 4 != 0): rare with these kernels,
 * kept small. */
BERTL14_COLD static void linear_rare(const bertl14_linear_dims *dims, const bertl14_requant_t *rq, const int16_t *x,
                                     const uint32_t *x_scale, const int16_t *w, int16_t *y16, int32_t *y32)
{
    const uint32_t tokens = dims->tokens, in = dims->in, out = dims->out;
    for (uint32_t o = 0; o < out; o++, w += in) {
        for (uint32_t t = 0; t < tokens; t++) {
            int32_t acc = 0;
            for (uint32_t i = 0; i < in; i++) {
                acc += w[i] * x[bertl14_block_index(t, i, tokens, in)];
            }
            store_requant(y16, y32, out_index(t, o, tokens, out, dims->y_stride), acc, x_scale[t], rq->mult[o],
                          rq->shift[o], ld_bias(rq->bias, o));
        }
    }
}
#endif

void bertl14_linear_s8_w16(const bertl14_linear_dims *dims, const bertl14_requant_t *rq, const int16_t *x,
                           const uint32_t *x_scale, const int16_t *w, int16_t *y16, int32_t *y32)
{
    const uint32_t tokens = dims->tokens, in = dims->in, out = dims->out, y_stride = dims->y_stride;
#if defined(BERTL14_USE_MVE)
    /* word gathers: 4-byte aligned activations, whole chunks (else the portable loop) */
    if (tokens <= 4u && !((uintptr_t)x & 3u) && !(in & 3u)) {
        linear_block(x, x_scale, tokens, in, w, out, rq, y16, y32, y_stride);
        return;
    }
#elif defined(BERTL14_USE_DSP)
    /* word loads: 4-byte aligned weight rows and activations, whole chunks (else the portable loop) */
    const int dsp = !(((uintptr_t)w | (uintptr_t)x) & 3u) && !(in & 3u);
    if (dsp && tokens <= 4u) {
        linear_block(x, x_scale, tokens, in, w, out, rq, y16, y32, y_stride);
        return;
    }
#endif
#if defined(BERTL14_USE_DSP)
    linear_rare(dims, rq, x, x_scale, w, y16, y32);
#else
    for (uint32_t o = 0; o < out; o++) {                         /* portable */
        const int16_t *wo = w + (uint32_t)o * in;
        const int32_t mult = rq->mult[o], shift = rq->shift[o], bias = ld_bias(rq->bias, o);
        for (uint32_t t = 0; t < tokens; t++) {
            store_requant(y16, y32, out_index(t, o, tokens, out, y_stride), dot_block_c(wo, x, t, tokens, in),
                          x_scale[t], mult, shift, bias);
        }
    }
#endif
}
