/* Linear layer: INT16 weights x INT8 activations (held as int16), per-channel requantization
 * (docs/numerics.md "Linear layer"). The input is a token block in the interleaved block layout
 * (bertl14_kernels.h): the four channels 4c..4c+3 of every token of the block sit next to each
 * other, so the DSP body walks ONE activation pointer with double-word loads and reuses each pair of
 * weights for four tokens (SMLAD: two MACs an instruction); each weight row streams from flash once
 * per block. Requantization is done in 32-bit pieces where the shift allows it (bit-identical). */
#include "bertl14_kernels.h"
#include "bertl14_acle_emul.h"

static inline int32_t ld_bias(const int32_t *b, uint32_t o)
{
    return (int32_t)bertl14_ld32(b + o);
}

/* y = rsr(acc * s * M, S) + B, then sat16 / sat32. |acc| < 2^31, s <= 66050 (< 2^17), M < 2^15. */
static inline int64_t requant(int32_t acc, uint32_t s, int32_t mult, int32_t shift, int32_t bias)
{
    return bertl14_rsr((int64_t)acc * (int64_t)s * mult, shift) + bias;
}

/* The general requantized store (out of line: one copy for every caller). */
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


/* Output element (token t, channel o): row-major with y_stride, or the block layout (y_stride 0). */
static inline uint32_t out_index(uint32_t t, uint32_t o, uint32_t tokens, uint32_t out, uint32_t y_stride)
{
    return y_stride ? t * y_stride + o : bertl14_block_index(t, o, tokens, out);
}

#if defined(BERTL14_USE_DSP)
#if BERTL14_ACLE_NATIVE && defined(__GNUC__) && defined(__thumb2__)
/* Blocks of exactly four tokens (the encoder's case): the chunks of the four tokens are contiguous,
 * so one activation pointer walks the block with post-incremented LDRD; per chunk of four
 * channels 1 weight LDRD + 4 activation LDRD + 8 SMLAD = 13 instructions for 16 MACs, four chunks
 * an iteration (+2 loop instructions: 0.84 instructions a MAC). GCC splits 64-bit loads whose
 * halves are used separately into two LDR, hence the assembly. The assembly only reads memory that
 * this function never writes (weights, the input block), so it declares no memory clobber: the
 * compiler may keep the requantization parameters in registers across it. */
#define BL14_C4 "ldrd %[w0], %[w1], [%[pw]], #8\n\t" \
    "ldrd %[xa], %[xb], [%[px]], #8\n\tsmlad %[a0], %[w0], %[xa], %[a0]\n\tsmlad %[a0], %[w1], %[xb], %[a0]\n\t" \
    "ldrd %[xa], %[xb], [%[px]], #8\n\tsmlad %[a1], %[w0], %[xa], %[a1]\n\tsmlad %[a1], %[w1], %[xb], %[a1]\n\t" \
    "ldrd %[xa], %[xb], [%[px]], #8\n\tsmlad %[a2], %[w0], %[xa], %[a2]\n\tsmlad %[a2], %[w1], %[xb], %[a2]\n\t" \
    "ldrd %[xa], %[xb], [%[px]], #8\n\tsmlad %[a3], %[w0], %[xa], %[a3]\n\tsmlad %[a3], %[w1], %[xb], %[a3]\n\t"
static inline void dot4_contig(const int16_t *w, const int16_t *px, uint32_t chunks, int32_t acc[4])
{
    int32_t a0 = 0, a1 = 0, a2 = 0, a3 = 0;
    uint32_t w0, w1, xa, xb;
    uint32_t quads = chunks >> 2, rest = chunks & 3u;
    if (quads) {                                   /* four chunks an iteration: 54 instructions, 64 MACs */
        __asm volatile("1:\n\t" BL14_C4 BL14_C4 BL14_C4 BL14_C4 "subs %[n], %[n], #1\n\tbne 1b\n\t"
                       : [a0] "+r"(a0), [a1] "+r"(a1), [a2] "+r"(a2), [a3] "+r"(a3), [pw] "+r"(w), [px] "+r"(px),
                         [n] "+r"(quads), [w0] "=&r"(w0), [w1] "=&r"(w1), [xa] "=&r"(xa), [xb] "=&r"(xb)
                       :
                       : "cc");
    }
    if (rest) {                                    /* the last 1..3 chunks */
        __asm volatile("1:\n\t" BL14_C4 "subs %[n], %[n], #1\n\tbne 1b\n\t"
                       : [a0] "+r"(a0), [a1] "+r"(a1), [a2] "+r"(a2), [a3] "+r"(a3), [pw] "+r"(w), [px] "+r"(px),
                         [n] "+r"(rest), [w0] "=&r"(w0), [w1] "=&r"(w1), [xa] "=&r"(xa), [xb] "=&r"(xb)
                       :
                       : "cc");
    }
    acc[0] = a0;
    acc[1] = a1;
    acc[2] = a2;
    acc[3] = a3;
}
#undef BL14_C4

/* Blocks of 1..3 tokens (the end of a sentence): one chunk an iteration, the same scheme. */
#define BL14_X(acc) "ldrd %[xa], %[xb], [%[px]], #8\n\t" "smlad " acc ", %[w0], %[xa], " acc "\n\t" \
                    "smlad " acc ", %[w1], %[xb], " acc "\n\t"
static inline void dot_small_contig(const int16_t *w, const int16_t *px, uint32_t chunks, uint32_t nb, int32_t acc[4])
{
    int32_t a0 = 0, a1 = 0, a2 = 0;
    uint32_t w0, w1, xa, xb, n = chunks;
    if (n == 0) {
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
    acc[3] = 0;                                    /* every entry defined: GCC cannot tell acc[3] is unused here */
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

#if defined(BERTL14_USE_DSP)
/* The encoder's case: a block of 1..4 tokens, whole chunks, aligned. Per output channel: the nb
 * dot products in one pass over its weight row, then nb requantized stores. With shift >= 33
 * (every layer of the converted models we measured: 35..40) and s * M < 2^31 a store is one SMMLA,
 * one shift, QADD, SSAT; otherwise the 64-bit formula. */
static inline int32_t rq_fast(int32_t acc, uint32_t m, int32_t c, int32_t sh, int32_t bias)
{
    /* (acc * m + 2^(31+sh)) >> (32+sh) for sh >= 1 is (c + hi(acc * m)) >> sh with c = 2^(sh-1): one SMMLA
     * (2^(31+sh) is a whole number of high words); |hi| < 2^30 and c <= 2^30 cannot overflow */
    return bertl14_qadd(bertl14_smmla(acc, (int32_t)m, c) >> sh, bias);
}

static inline void put(int16_t *y16, int32_t *y32, uint32_t idx, int32_t v)
{
    if (y16) {
        y16[idx] = (int16_t)bertl14_ssat(v, 16);
    } else {
        y32[idx] = v;
    }
}

static void linear_block(const int16_t *x, const uint32_t *x_scale, uint32_t nb, uint32_t in, const int16_t *w,
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
    /* output index of token j: o + j * step (row-major: y_stride; block layout: the chunk stride) */
    const uint32_t step_rows = y_stride, tail_start = out & ~3u;
    const int16_t *const mults = rq->mult, *const shifts = rq->shift;
    const int32_t *const biases = rq->bias;
    for (uint32_t o = 0; o < out; o++, w += in) {
        int32_t acc[4];
#if BERTL14_ACLE_NATIVE && defined(__GNUC__) && defined(__thumb2__)
        if (nb == 4u) {
            dot4_contig(w, x, in / 4u, acc);
        } else
#endif
        {
            dot_small_contig(w, x, in / 4u, nb, acc);
        }
        const int32_t mult = mults[o], shift = shifts[o], bias = ld_bias(biases, o);
        const uint32_t base = y_stride ? o : bertl14_block_index(0, o, nb, out);
        const uint32_t step = y_stride ? step_rows : (o < tail_start ? 4u : out - tail_start);
        if (shift >= 33 && shift <= 63 && smax * (uint32_t)mult < 0x80000000u) {
            const int32_t sh = shift - 32, c = 1 << (sh - 1);
            put(y16, y32, base, rq_fast(acc[0], sc[0] * (uint32_t)mult, c, sh, bias));
            if (nb > 1u) {
                put(y16, y32, base + step, rq_fast(acc[1], sc[1] * (uint32_t)mult, c, sh, bias));
            }
            if (nb > 2u) {
                put(y16, y32, base + 2u * step, rq_fast(acc[2], sc[2] * (uint32_t)mult, c, sh, bias));
            }
            if (nb > 3u) {
                put(y16, y32, base + 3u * step, rq_fast(acc[3], sc[3] * (uint32_t)mult, c, sh, bias));
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

void bertl14_linear_s16(const int16_t *x, const uint32_t *x_scale, uint32_t tokens, uint32_t in,
                        const int16_t *w, uint32_t out, const bertl14_requant_t *rq,
                        int16_t *y16, int32_t *y32, uint32_t y_stride)
{
#if defined(BERTL14_USE_DSP)
    /* word loads: 4-byte aligned weight rows and activations, whole chunks (else the portable loop) */
    const int dsp = !(((uintptr_t)w | (uintptr_t)x) & 3u) && !(in & 3u);
    if (dsp && tokens <= 4u) {
        linear_block(x, x_scale, tokens, in, w, out, rq, y16, y32, y_stride);
        return;
    }
#endif
    for (uint32_t o = 0; o < out; o++) {                         /* portable (and > 4 tokens) */
        const int16_t *wo = w + (uint32_t)o * in;
        const int32_t mult = rq->mult[o], shift = rq->shift[o], bias = ld_bias(rq->bias, o);
        for (uint32_t t = 0; t < tokens; t++) {
#if defined(BERTL14_USE_DSP)
            int32_t acc = 0;                                   /* rare here: kept small, not fast */
            for (uint32_t i = 0; i < in; i++) {
                acc += wo[i] * x[bertl14_block_index(t, i, tokens, in)];
            }
#else
            const int32_t acc = dot_block_c(wo, x, t, tokens, in);
#endif
            store_requant(y16, y32, out_index(t, o, tokens, out, y_stride), acc, x_scale[t], mult, shift, bias);
        }
    }
}
