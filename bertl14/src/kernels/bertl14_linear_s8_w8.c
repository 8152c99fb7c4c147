/* Linear layer: INT8 weights (one symmetric scale per output channel, folded into the requantization) x INT8
 * activations held as int16 in the block layout (bertl14_kernels.h), per-channel requantization: the integers of
 * the INT16 kernel's formula (docs/numerics.md section 4b). The encoder calls it instead of bertl14_linear_s8_w16
 * when BERTL14_WEIGHTS_INT8 is defined (CONFIG_BERTL14_WEIGHTS_INT8); without it this file compiles to nothing.
 *
 * The blob stores every group of four weights 4c..4c+3 of a row in the order 4c, 4c+2, 4c+1, 4c+3
 * (docs/model-format.md): SXTB16 of the group's word is then the int16 pair (4c, 4c+1) and SXTB16 of the word
 * rotated by 8 bits the pair (4c+2, 4c+3), the order of the activations, so the DSP body widens four weights
 * with two instructions and multiplies them with SMLAD as the INT16 kernel does (CMSIS-NN's arm_nn_mat_mult
 * idea, with the reordering done once by the converter instead of at run time): per two chunks of four channels
 * and four tokens one weight LDRD, four SXTB16, four LDMIA of two tokens' chunk and sixteen SMLAD. INT8 weights
 * give requantization shifts about 8 below the INT16 ones; the DSP body lifts the sums by the difference to use
 * the INT16 kernel's one-SMMLA store. The Helium build (MVE) uses this DSP body: there is no Helium body for INT8
 * weights. Every body computes the same bits. */
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

#if defined(BERTL14_USE_DSP)
#if BERTL14_ACLE_NATIVE && defined(__GNUC__) && defined(__thumb2__)
/* Blocks of exactly four tokens (the encoder's case): the block's chunks are contiguous, two tokens' chunk (four
 * words) one LDMIA into r2..r5. Per chunk of four channels: two SXTB16 (the group's four weights, widened), two
 * LDMIA, eight SMLAD; one weight LDRD every two chunks: 50 instructions for 64 MACs a four-chunk iteration with the
 * loop (the INT16 kernel: 54). The assembly only reads memory this function never writes (the weights, the input
 * block): no memory clobber; r2..r5 are named in it, hence clobbered. */
#define BL14_C8(wr) "sxtb16 %[wl], " wr "\n\tsxtb16 " wr ", " wr ", ror #8\n\t" \
    "ldmia %[px]!, {r2, r3, r4, r5}\n\t" \
    "smlad %[a0], %[wl], r2, %[a0]\n\tsmlad %[a0], " wr ", r3, %[a0]\n\t" \
    "smlad %[a1], %[wl], r4, %[a1]\n\tsmlad %[a1], " wr ", r5, %[a1]\n\t" \
    "ldmia %[px]!, {r2, r3, r4, r5}\n\t" \
    "smlad %[a2], %[wl], r2, %[a2]\n\tsmlad %[a2], " wr ", r3, %[a2]\n\t" \
    "smlad %[a3], %[wl], r4, %[a3]\n\tsmlad %[a3], " wr ", r5, %[a3]\n\t"
static inline void dot4_contig(const int8_t *w, const int16_t *px, uint32_t chunks, int32_t acc[4])
{
    int32_t a0 = 0, a1 = 0, a2 = 0, a3 = 0;
    uint32_t wa, wb, wl;
    uint32_t quads = chunks >> 2, rest = chunks & 3u;
    if (quads) {                                   /* four chunks an iteration */
        __asm volatile("1:\n\tldrd %[wa], %[wb], [%[pw]], #8\n\t" BL14_C8("%[wa]") BL14_C8("%[wb]")
                       "ldrd %[wa], %[wb], [%[pw]], #8\n\t" BL14_C8("%[wa]") BL14_C8("%[wb]")
                       "subs %[n], %[n], #1\n\tbne 1b\n\t"
                       : [a0] "+r"(a0), [a1] "+r"(a1), [a2] "+r"(a2), [a3] "+r"(a3), [pw] "+r"(w), [px] "+r"(px),
                         [n] "+r"(quads), [wa] "=&r"(wa), [wb] "=&r"(wb), [wl] "=&r"(wl)
                       :
                       : "r2", "r3", "r4", "r5", "cc");
    }
    if (rest) {                                    /* the last 1..3 chunks, one a word */
        __asm volatile("1:\n\tldr %[wa], [%[pw]], #4\n\t" BL14_C8("%[wa]") "subs %[n], %[n], #1\n\tbne 1b\n\t"
                       : [a0] "+r"(a0), [a1] "+r"(a1), [a2] "+r"(a2), [a3] "+r"(a3), [pw] "+r"(w), [px] "+r"(px),
                         [n] "+r"(rest), [wa] "=&r"(wa), [wl] "=&r"(wl)
                       :
                       : "r2", "r3", "r4", "r5", "cc");
    }
    acc[0] = a0;
    acc[1] = a1;
    acc[2] = a2;
    acc[3] = a3;
}
#undef BL14_C8

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
static inline void dot_small(const int8_t *w, const int16_t *px, uint32_t chunks, uint32_t nb, int32_t acc[4])
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
    uint32_t sc[4], smax;
    sc[0] = x_scale[0];
    sc[1] = nb > 1u ? x_scale[1] : 0u;
    sc[2] = nb > 2u ? x_scale[2] : 0u;
    sc[3] = nb > 3u ? x_scale[3] : 0u;
    smax = sc[0] > sc[1] ? sc[0] : sc[1];
    smax = sc[2] > smax ? sc[2] : smax;
    smax = sc[3] > smax ? sc[3] : smax;
    const uint32_t tail_start = out & ~3u;
    const int16_t *const mults = rq->mult, *const shifts = rq->shift;
    const int32_t *const biases = rq->bias;
    /* |acc| <= 127 * 128 * in (activations -127..127, weights -128..127): a lift by j <= jsafe fits every sum */
    uint32_t jsafe = 0;
    while (jsafe < 24u && ((uint64_t)(127u * 128u * in) << (jsafe + 1u)) < 0x80000000u) {
        jsafe++;
    }
    for (uint32_t o = 0; o < out; o++, w += in) {
        int32_t acc[4] = {0, 0, 0, 0};
#if BERTL14_ACLE_NATIVE && defined(__GNUC__) && defined(__thumb2__)
        if (nb == 4u) {
            dot4_contig(w, x, in / 4u, acc);
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
            const int32_t sh = shift + (int32_t)j - 32, c = 1 << (sh - 1);
            put(y16, y32, base, rq_fast((int32_t)((uint32_t)acc[0] << j), sc[0] * (uint32_t)mult, c, sh, bias));
            if (nb > 1u) {
                put(y16, y32, base + step, rq_fast((int32_t)((uint32_t)acc[1] << j), sc[1] * (uint32_t)mult, c, sh,
                                                   bias));
            }
            if (nb > 2u) {
                put(y16, y32, base + 2u * step, rq_fast((int32_t)((uint32_t)acc[2] << j), sc[2] * (uint32_t)mult, c,
                                                        sh, bias));
            }
            if (nb > 3u) {
                put(y16, y32, base + 3u * step, rq_fast((int32_t)((uint32_t)acc[3] << j), sc[3] * (uint32_t)mult, c,
                                                        sh, bias));
            }
        } else {                          /* constant indices: acc[] and sc[] stay in registers */
            store_requant(y16, y32, base, acc[0], sc[0], mult, shift, bias);
            if (nb > 1u) {
                store_requant(y16, y32, base + step, acc[1], sc[1], mult, shift, bias);
            }
            if (nb > 2u) {
                store_requant(y16, y32, base + 2u * step, acc[2], sc[2], mult, shift, bias);
            }
            if (nb > 3u) {
                store_requant(y16, y32, base + 3u * step, acc[3], sc[3], mult, shift, bias);
            }
        }
    }
}
#endif

void bertl14_linear_s8_w8(const bertl14_linear_dims *dims, const bertl14_requant_t *rq, const int16_t *x,
                          const uint32_t *x_scale, const int8_t *w, int16_t *y16, int32_t *y32)
{
    const uint32_t tokens = dims->tokens, in = dims->in, out = dims->out, y_stride = dims->y_stride;
#if defined(BERTL14_USE_DSP)
    /* word loads: 4-byte aligned weight rows and activations, whole chunks (else the portable loop) */
    if (tokens <= 4u && !(((uintptr_t)w | (uintptr_t)x) & 3u) && !(in & 3u)) {
        linear_block(x, x_scale, tokens, in, w, out, rq, y16, y32, y_stride);
        return;
    }
#endif
    for (uint32_t o = 0; o < out; o++) {                         /* portable (and > 4 tokens) */
        const int8_t *wo = w + (uint32_t)o * in;
        const int32_t mult = rq->mult[o], shift = rq->shift[o], bias = ld_bias(rq->bias, o);
        for (uint32_t t = 0; t < tokens; t++) {
            store_requant(y16, y32, out_index(t, o, tokens, out, y_stride), dot_block_c(wo, x, t, tokens, in),
                          x_scale[t], mult, shift, bias);
        }
    }
}
#endif /* BERTL14_WEIGHTS_INT8 */
