/* The output side the linear kernels share (bertl14_linear_s8_w16.c, bertl14_linear_s8_w8.c): bias loads, the
 * requantized store y = rsr(acc * s * M, S) + B with sat16 / sat32 (docs/numerics.md "Linear layer"), the output
 * index of the two layouts, and the DSP build's one-SMMLA store. Include after bertl14_kernels.h and
 * bertl14_acle_emul.h. */
#ifndef BERTL14_LINEAR_STORE_H
#define BERTL14_LINEAR_STORE_H

#include <stdint.h>

static inline int32_t ld_bias(const int32_t *b, uint32_t o)
{
    return (int32_t)bertl14_ld32(b + o);
}

/* y = rsr(acc * s * M, S) + B, then sat16 / sat32. |acc| < 2^31, s <= 66050 (< 2^17), M < 2^15. */
static inline int64_t requant(int32_t acc, uint32_t s, int32_t mult, int32_t shift, int32_t bias)
{
    return bertl14_rsr((int64_t)acc * (int64_t)s * mult, shift) + bias;
}

/* The general requantized store (out of line: a file that includes this header calls it). */
#if defined(BERTL14_USE_DSP)
BERTL14_COLD                            /* the accelerated bodies' rare case */
#endif
static void store_requant(int16_t *y16, int32_t *y32, uint32_t idx, int32_t acc, uint32_t s, int32_t mult,
                          int32_t shift, int32_t bias)
{
    const int64_t v = requant(acc, s, mult, shift, bias);
    if (y16) {
        y16[idx] = (int16_t)bertl14_sat16(v);
    } else {
        y32[idx] = bertl14_sat32(v);
    }
}

/* INT8 weights: the largest j with every sum of a layer of `in` inputs times 2^j within int32 (|acc| <= 127 * 128 * in:
 * activations -127..127, weights -128..127), at most 24: the lift the accelerated bodies may apply to all sums. */
static inline uint32_t int8_lift_limit(uint32_t in)
{
    const uint32_t bound = 127u * 128u * in;
    if (bound == 0u) {
        return 24u;
    }
    const uint32_t lead = (uint32_t)__builtin_clz(bound);         /* bound * 2^j < 2^31 for j <= lead - 1 */
    return lead == 0u ? 0u : (lead - 1u < 24u ? lead - 1u : 24u);
}

/* Output element (token t, channel o): row-major with y_stride, or the block layout (y_stride 0). */
static inline uint32_t out_index(uint32_t t, uint32_t o, uint32_t tokens, uint32_t out, uint32_t y_stride)
{
    return y_stride ? t * y_stride + o : bertl14_block_index(t, o, tokens, out);
}

#if defined(BERTL14_USE_DSP)
/* rsr(acc * m, 32 + sh) + bias, sat32, for sh >= 1 and |acc * m| < 2^62: (c + hi(acc * m)) >> sh with
 * c = 2^(sh-1) is one SMMLA (2^(31+sh) is a whole number of high words; |hi| < 2^30 and c <= 2^30 cannot
 * overflow), a shift and QADD. */
static inline int32_t rq_fast(int32_t acc, uint32_t m, int32_t c, int32_t sh, int32_t bias)
{
    return bertl14_qadd(bertl14_smmla(acc, (int32_t)m, c) >> sh, bias);
}

/* Store a requantized value: sat16 into y16, or as it is into y32. */
static inline void put(int16_t *y16, int32_t *y32, uint32_t idx, int32_t v)
{
    if (y16) {
        y16[idx] = (int16_t)bertl14_ssat(v, 16);
    } else {
        y32[idx] = v;
    }
}

/* The row scales of a block of nb (1..4) tokens, 0 for the tokens it does not have; returns the largest. */
static inline uint32_t block_scales(const uint32_t *x_scale, uint32_t nb, uint32_t sc[4])
{
    sc[0] = x_scale[0];
    sc[1] = nb > 1u ? x_scale[1] : 0u;
    sc[2] = nb > 2u ? x_scale[2] : 0u;
    sc[3] = nb > 3u ? x_scale[3] : 0u;
    uint32_t smax = sc[0] > sc[1] ? sc[0] : sc[1];
    smax = sc[2] > smax ? sc[2] : smax;
    return sc[3] > smax ? sc[3] : smax;
}

/* The largest M with s * M < 2^31 for every scale s <= smax: one compare a channel instead of a multiply and a
 * test (M is positive, bertl14_model.c). */
static inline uint32_t mult_limit(uint32_t smax)
{
    return smax ? 0x7FFFFFFFu / smax : 0xFFFFFFFFu;
}

/* The general stores of one output channel's nb (1..4) tokens, token t at base + t * step (out of line: the rare
 * case). */
BERTL14_COLD static void store_requant_tokens(int16_t *y16, int32_t *y32, uint32_t base, uint32_t step,
                                                  uint32_t nb, const int32_t acc[4], const uint32_t sc[4],
                                                  int32_t mult, int32_t shift, int32_t bias)
{
    for (uint32_t t = 0; t < nb; t++, base += step) {
        store_requant(y16, y32, base, acc[t], sc[t], mult, shift, bias);
    }
}

/* The fast stores of one output channel's nb (1..4) tokens (rq_fast with c = 2^(sh-1)), token t at base + t * step. */
static inline void store_fast_tokens(int16_t *y16, int32_t *y32, uint32_t base, uint32_t step, uint32_t nb,
                                     const int32_t acc[4], const uint32_t sc[4], uint32_t mult, int32_t sh,
                                     int32_t bias)
{
    const int32_t c = 1 << (sh - 1);
    for (uint32_t t = 0; t < nb; t++, base += step) {
        put(y16, y32, base, rq_fast(acc[t], sc[t] * mult, c, sh, bias));
    }
}

#if BERTL14_ACLE_NATIVE && defined(__GNUC__) && defined(__thumb2__)
/* The state of a kernel's block4_channels (assembly: the offsets are its operands): the encoder's blocks of four
 * tokens with in % 16 == 0, every output channel's dot products and stores in the fast cases. */
typedef struct {
    const int16_t *x;      /*  0: the block (chunks contiguous) */
    uint32_t quads;        /*  4: in / 16 */
    uint32_t sc[4];        /*  8: s of the four tokens */
    int32_t shift_off;     /* 24: bytes from a channel's M to its S (rq->shift - rq->mult) */
    uint32_t mlimit;       /* 28: the largest M with s * M < 2^31 for the four tokens (mult_limit) */
    uint8_t *d;            /* 32: token 0's output of the current channel */
    uint32_t left;         /* 36: channels left, the current one included */
    uint32_t step;         /* 40: bytes from a token's output to the next token's */
    uint32_t out16;        /* 44: nonzero: sat16 into int16 outputs; 0: int32 outputs */
    const void *w;         /* 48: the current channel's weight row */
    const int16_t *mult;   /* 52: its M */
    const int32_t *bias;   /* 56: its B */
    int32_t acc[4];        /* 60: the four sums of a channel left to the caller */
    uint32_t groups;       /* 76: runs of `left` channels after this one (the block layout's chunks) */
    uint32_t gskip;        /* 80: bytes from the end of a run to the next run's first output */
    uint32_t zero[2];      /* 84: 0, 0 (one LDRD clears two sums) */
    uint32_t store;        /* 92: the address of the stores for out16 (set by block4_channels) */
    uint32_t jsafe;        /* 96: INT8 weights: the largest lift 2^j every sum of the layer takes (else 0) */
    int32_t acc1[4];       /* 100: INT16 weights: the sums of the second channel of a pair */
    const int16_t *x23;    /* 116: x + 8, tokens 2 and 3 of the block's first chunk */
    uint32_t quads23;      /* 120: in / 16 (next to x23 for one LDRD) */
} block4_frame;

/* The assembly both kernels' block4_channels share, as strings. Their contract: the frame in r0; the channel's four
 * sums in r4..r7 (tokens 0..3); r2, r3 the channel's M and B pointers; the kernel's labels 1 (the next channel),
 * 3 (int32 stores), 8 (done) and 10 (int16 stores). */

/* Which stores a channel takes (int16 or int32 outputs), chosen once a call: their address, Thumb bit set, in
 * f->store for one LDR to PC a channel. Defines labels 11 and 12. */
#define BL14_SELECT_STORE \
    "ldr r11, [r0, #44]\n\tcmp r11, #0\n\tbeq 11f\n\tadr r11, 10f\n\tb 12f\n" \
    "11:\n\tadr r11, 3f\n" \
    "12:\n\torr r11, r11, #1\n\tstr r11, [r0, #92]\n\t"

/* The channel's S in r9, M in r8 (M and S pointers advanced: r2), B in r10 (r3 advanced); r11 = mlimit. */
#define BL14_LOAD_REQUANT \
    "ldrd r9, r11, [r0, #24]\n\tldrsh r9, [r2, r9]\n\tldrsh r8, [r2], #2\n\tldr r10, [r3], #4\n\t"

/* S in 33..63 (r9 = S - 33 <= 30): c = 2^(S-33) in r11, sh = S - 32 in r9, then the four tokens'
 * qadd(smmla(acc, s * M, c) >> sh, B) (rq_fast) in r4..r7. */
#define BL14_RQ_SMMLA_TOKEN(acc, s) \
    "mul " s ", " s ", r8\n\tsmmla " acc ", " acc ", " s ", r11\n\tasr " acc ", " acc ", r9\n\tqadd " acc ", " acc ", r10\n\t"
#define BL14_RQ_SMMLA4 \
    "movs r11, #1\n\tlsl r11, r11, r9\n\tadd r9, r9, #1\n\t" \
    "ldrd r12, lr, [r0, #8]\n\t" BL14_RQ_SMMLA_TOKEN("r4", "r12") BL14_RQ_SMMLA_TOKEN("r5", "lr") \
    "ldrd r12, lr, [r0, #16]\n\t" BL14_RQ_SMMLA_TOKEN("r6", "r12") BL14_RQ_SMMLA_TOKEN("r7", "lr")

/* S + j = 32: the four tokens' qadd(smmulr(acc 2^j, s * M), B), LIFT(acc) the lift of a sum by r9 bits (or
 * nothing when j = 0). */
#define BL14_NO_LIFT(acc) ""
#define BL14_LIFT_R9(acc) "lsl " acc ", " acc ", r9\n\t"
#define BL14_RQ_SMMULR_TOKEN(LIFT, acc, s) \
    LIFT(acc) "mul " s ", " s ", r8\n\tsmmulr " acc ", " acc ", " s "\n\tqadd " acc ", " acc ", r10\n\t"
#define BL14_RQ_SMMULR4(LIFT) \
    "ldrd r12, lr, [r0, #8]\n\t" BL14_RQ_SMMULR_TOKEN(LIFT, "r4", "r12") BL14_RQ_SMMULR_TOKEN(LIFT, "r5", "lr") \
    "ldrd r12, lr, [r0, #16]\n\t" BL14_RQ_SMMULR_TOKEN(LIFT, "r6", "r12") BL14_RQ_SMMULR_TOKEN(LIFT, "r7", "lr")

/* The four outputs' addresses (token 0's r8, the step r9, token 2's r12; r10 = channels left), then to the stores. */
#define BL14_TO_STORES \
    "ldrd r8, r10, [r0, #32]\n\tldr r9, [r0, #40]\n\tadd r12, r8, r9, lsl #1\n\tldr pc, [r0, #92]\n"

/* The stores of the four tokens, sat16 into int16 outputs or int32 as they are; then one channel fewer left
 * (flags set by the SUBS). */
#define BL14_STORE16 \
    "ssat r4, #16, r4\n\tssat r5, #16, r5\n\tssat r6, #16, r6\n\tssat r7, #16, r7\n\t" \
    "strh r5, [r8, r9]\n\tstrh r6, [r12]\n\tstrh r7, [r12, r9]\n\tstrh r4, [r8], #2\n\t" \
    "subs r10, r10, #1\n\tstrd r8, r10, [r0, #32]\n\t"
#define BL14_STORE32 \
    "str r5, [r8, r9]\n\tstr r6, [r12]\n\tstr r7, [r12, r9]\n\tstr r4, [r8], #4\n\t" \
    "subs r10, r10, #1\n\tstrd r8, r10, [r0, #32]\n\t"

/* A run of channels done (block layout: the four channels of a chunk): the next run's first output, or done. */
#define BL14_NEXT_RUN \
    "ldrd r10, r11, [r0, #76]\n\tcmp r10, #0\n\tbeq 8f\n\tsub r10, r10, #1\n\tstr r10, [r0, #76]\n\t" \
    "add r8, r8, r11\n\tmovs r10, #4\n\tstrd r8, r10, [r0, #32]\n\tb 1b\n"


/* Channels [0, todo) of a block of four tokens through `channels` (a kernel's block4_channels), the ones it leaves by
 * the 64-bit formula; row-major: one run of every channel, block layout: runs of the four channels of a chunk.
 * Returns the weight row after channel todo - 1. */
static inline __attribute__((always_inline)) const void *block4_run(uint32_t (*channels)(block4_frame *),
                                                                    const void *w, const int16_t *x, uint32_t in,
                                                                    const uint32_t sc[4], uint32_t mlimit,
                                                                    uint32_t jsafe, const bertl14_requant_t *rq,
                                                                    uint32_t todo, uint32_t out, int16_t *y16,
                                                                    int32_t *y32, uint32_t y_stride)
{
    const uint32_t esz = y16 ? 2u : 4u;
    block4_frame f = {x, in / 16u, {sc[0], sc[1], sc[2], sc[3]},
                      (int32_t)((uintptr_t)rq->shift - (uintptr_t)rq->mult), mlimit,
                      y16 ? (uint8_t *)y16 : (uint8_t *)y32, y_stride ? todo : 4u, (y_stride ? y_stride : 4u) * esz,
                      y16 != NULL, w, rq->mult, rq->bias, {0, 0, 0, 0}, y_stride ? 0u : todo / 4u - 1u, 12u * esz,
                      {0, 0}, 0u, jsafe, {0, 0, 0, 0}, x + 8, in / 16u};
    while (todo && channels(&f)) {                             /* a channel outside the fast cases */
        const uint32_t c = todo - f.left - 4u * f.groups;
        store_requant_tokens(y16, y32, y_stride ? c : bertl14_block_index(0, c, 4u, out), f.step / esz, 4u, f.acc,
                             sc, rq->mult[c], rq->shift[c], ld_bias(rq->bias, c));
        f.d += esz;
        if (--f.left == 0u) {
            if (f.groups == 0u) {
                break;
            }
            f.groups--;
            f.d += f.gskip;
            f.left = 4u;
        }
    }
    return todo ? f.w : w;
}
#endif
#endif

#endif /* BERTL14_LINEAR_STORE_H */
