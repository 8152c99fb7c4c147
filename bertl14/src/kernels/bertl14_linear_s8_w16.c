/* Linear layer: INT16 weights x INT8 activations (held as int16), per-channel requantization
 * (docs/numerics.md "Linear layer"). The input is a token block in the interleaved block layout
 * (bertl14_kernels.h): the four channels 4c..4c+3 of every token of the block sit next to each
 * other, so the DSP body walks ONE activation pointer with double-word loads (SMLAD: two MACs an
 * instruction); for the encoder's blocks of four tokens two weight rows against two tokens a step
 * (2 x 2 tiles: each loaded pair of weights serves two tokens, each pair of activations two channels),
 * each weight row read twice a block, smaller blocks each pair of weights for all their tokens.
 * Requantization is done in 32-bit pieces where the shift allows it (bit-identical).
 * The Helium body (BERTL14_USE_MVE; bertl14_linear_mve.h, shared with the INT8 kernel) takes eight weights a
 * vector and gathers the same eight channels of each token of the block (two chunks, one word-gather), so one
 * VMLADAVA does eight MACs, two weight rows a pass; the requantization runs four output channels a vector. */
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
/* The Helium body (bertl14_linear_mve.h) with INT16 weights: eight weights one VLDRH, a token's same eight channels
 * (chunks 2j, 2j + 1, 4 * nb values apart in the block layout) one gather of four words (VLDRW) at the word offsets
 * {0, 1, 2nb, 2nb + 1} + 2t. */
#define BL14_W_T int16_t
#define BL14_OFF_T uint32x4_t
#define BL14_OFFSETS(nb, off0, off) \
    const uint32x4_t idx = vidupq_n_u32(0u, 1); /* 0, 1, 2, 3 */ \
    const uint32x4_t off0 = vaddq_u32(vandq_u32(idx, vdupq_n_u32(1u)), vmulq_n_u32(vshrq_n_u32(idx, 1), 2u * (nb))); \
    const uint32x4_t off[4] = {off0, vaddq_n_u32(off0, 2u), vaddq_n_u32(off0, 4u), vaddq_n_u32(off0, 6u)}
#define BL14_LDW(p) vldrhq_s16(p)
#define BL14_LDW_Z(p, pred) vldrhq_z_s16(p, pred)
#define BL14_GATHER(px, off) vreinterpretq_s16_s32(vldrwq_gather_shifted_offset_s32(px, off))
#define BL14_GATHER_Z(px, off) vreinterpretq_s16_s32(vldrwq_gather_shifted_offset_z_s32(px, off, vctp32q(2)))
#define BL14_ASM_LDW(q, p) "vldrh.16 %q[" q "], [%[" p "]], #16\n\t"
#define BL14_ASM_GATHER(q, o) "vldrw.u32 %q[" q "], [%[px], %q[" o "], uxtw #2]\n\t"
#define BL14_LDX_ROW(px) vldrhq_s16(px)
#define BL14_LDX_ROW_Z(px, pred) vldrhq_z_s16(px, pred)
#define BL14_LIFT 0
#include "bertl14_linear_mve.h"
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
