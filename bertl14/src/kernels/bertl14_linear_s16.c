/* Linear layer: INT16 weights x INT8 activations (held as int16), per-channel requantization
 * (docs/numerics.md "Linear layer"). The input is a token block in the interleaved block layout
 * (bertl14_kernels.h): the four channels 4c..4c+3 of every token of the block sit next to each
 * other, so the DSP body walks ONE activation pointer with double-word loads and reuses each pair of
 * weights for four tokens (SMLAD: two MACs an instruction); each weight row streams from flash once
 * per block. Requantization is done in 32-bit pieces where the shift allows it (bit-identical).
 * The Helium body (BERTL14_USE_MVE) takes eight weights a vector and gathers the same eight channels of each token
 * of the block (two chunks, one word-gather), so one VMLADAVA does eight MACs; the block's requantization is one
 * vector of its tokens. */
#include "bertl14_kernels.h"
#include "bertl14_acle_emul.h"
#if defined(BERTL14_USE_MVE)
#include "bertl14_mve.h"
#endif

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

#if defined(BERTL14_USE_DSP) && !defined(BERTL14_USE_MVE)
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

#if defined(BERTL14_USE_MVE)
/* The nb (1..4, a compile-time constant in each copy) dot products of one weight row: eight weights (one VLDRH)
 * against the same eight channels of each token, chunks 2j and 2j+1, which are 4 * nb values apart in the block
 * layout: one gather of four words (VLDRW) at word offsets off[t] = {2t, 2t + 1, 2nb + 2t, 2nb + 2t + 1} from the
 * pair's start, one VMLADAVA. A last single chunk (in % 8 == 4) is the same with the upper lanes predicated off.
 * Returns the nb sums as the lanes of one vector (0 beyond nb). */
static inline __attribute__((always_inline)) int32x4_t dot_mve(const int16_t *w, const int32_t *px, uint32_t pairs,
                                                              uint32_t nb, int single, const uint32x4_t off[4])
{
    int32_t a0 = 0, a1 = 0, a2 = 0, a3 = 0;
    const uint32_t pair_words = 4u * nb;
    for (uint32_t j = 0; j < pairs; j++, w += 8, px += pair_words) {
        const int16x8_t wv = vldrhq_s16(w);
        a0 = vmladavaq_s16(a0, wv, vreinterpretq_s16_s32(vldrwq_gather_shifted_offset_s32(px, off[0])));
        if (nb > 1u) {
            a1 = vmladavaq_s16(a1, wv, vreinterpretq_s16_s32(vldrwq_gather_shifted_offset_s32(px, off[1])));
        }
        if (nb > 2u) {
            a2 = vmladavaq_s16(a2, wv, vreinterpretq_s16_s32(vldrwq_gather_shifted_offset_s32(px, off[2])));
        }
        if (nb > 3u) {
            a3 = vmladavaq_s16(a3, wv, vreinterpretq_s16_s32(vldrwq_gather_shifted_offset_s32(px, off[3])));
        }
    }
    if (single) {
        const mve_pred16_t p = vctp32q(2);
        const int16x8_t wv = vldrhq_z_s16(w, vctp16q(4));
        a0 = vmladavaq_s16(a0, wv, vreinterpretq_s16_s32(vldrwq_gather_shifted_offset_z_s32(px, off[0], p)));
        if (nb > 1u) {
            a1 = vmladavaq_s16(a1, wv, vreinterpretq_s16_s32(vldrwq_gather_shifted_offset_z_s32(px, off[1], p)));
        }
        if (nb > 2u) {
            a2 = vmladavaq_s16(a2, wv, vreinterpretq_s16_s32(vldrwq_gather_shifted_offset_z_s32(px, off[2], p)));
        }
        if (nb > 3u) {
            a3 = vmladavaq_s16(a3, wv, vreinterpretq_s16_s32(vldrwq_gather_shifted_offset_z_s32(px, off[3], p)));
        }
    }
    return bertl14_lanes_mve(a0, a1, a2, a3);
}

/* A block of nb (1..4) tokens, whole chunks, x 4-byte aligned. Per output channel: the nb dot products, then their
 * requantization as one vector of nb lanes: with shift >= 33 and s * M < 2^31 (the DSP body's fast case) the high
 * word of acc * s * M (VMULH) plus 2^(sh-1), shifted right by sh = shift - 32, QADD of the bias, saturated to 16
 * bits (VQMOVNB) where the output is int16, and one scatter store of the nb results; otherwise the 64-bit formula.
 * One copy a block size, so the dot products' loop has no test of nb. */
static inline __attribute__((always_inline)) void linear_block_n(const int16_t *x, const uint32_t *x_scale,
                                                                 uint32_t nb, uint32_t in, const int16_t *w,
                                                                 uint32_t out, const bertl14_requant_t *rq,
                                                                 int16_t *y16, int32_t *y32, uint32_t y_stride)
{
    const mve_pred16_t pt = vctp32q(nb);                                     /* a lane a token */
    const uint32x4_t sc = vldrwq_z_u32(x_scale, pt);                         /* s_t (0 beyond nb) */
    const uint32_t smax = vmaxvq_u32(0u, sc);
    const uint32x4_t lane = vidupq_n_u32(0u, 1);                             /* 0, 1, 2, 3 */
    /* {0, 1, 2nb, 2nb + 1}: the two words of a chunk and of the next chunk of token 0 */
    const uint32x4_t off0 = vaddq_u32(vandq_u32(lane, vdupq_n_u32(1u)), vmulq_n_u32(vshrq_n_u32(lane, 1), 2u * nb));
    const uint32x4_t off[4] = {off0, vaddq_n_u32(off0, 2u), vaddq_n_u32(off0, 4u), vaddq_n_u32(off0, 6u)};
    const uint32_t pairs = in / 8u;
    const int single = (in & 4u) != 0u;
    const int32_t *const xw = (const int32_t *)(const void *)x;
    /* output element offsets of the nb results: y_stride apart (row-major), or 4 / the tail's width apart (block) */
    const uint32_t tail_start = y_stride ? out : out & ~3u;
    const uint32x4_t out_main = vmulq_n_u32(lane, y_stride ? y_stride : 4u);
    const uint32x4_t out_tail = vmulq_n_u32(lane, out - (out & ~3u));
    const int16_t *const mults = rq->mult, *const shifts = rq->shift;
    const int32_t *const biases = rq->bias;
    for (uint32_t o = 0; o < out; o++, w += in) {
        const int32x4_t acc = dot_mve(w, xw, pairs, nb, single, off);
        const int32_t mult = mults[o], shift = shifts[o], bias = ld_bias(biases, o);
        const uint32_t base = y_stride ? o : bertl14_block_index(0, o, nb, out);
        if (shift >= 33 && shift <= 63 && smax * (uint32_t)mult < 0x80000000u) {
            const int32_t sh = shift - 32;
            const int32x4_t m = vreinterpretq_s32_u32(vmulq_n_u32(sc, (uint32_t)mult));
            int32x4_t v = vshlq_r_s32(vaddq_n_s32(vmulhq_s32(acc, m), 1 << (sh - 1)), -sh);
            v = vqaddq_n_s32(v, bias);
            const uint32x4_t where = o < tail_start ? out_main : out_tail;
            if (y16) {
                /* sat16 into the low half of each lane; the store keeps the low halves */
                const int16x8_t s16 = vqmovnbq_s32(vreinterpretq_s16_s32(v), v);
                vstrhq_scatter_shifted_offset_p_s32(y16 + base, where, vreinterpretq_s32_s16(s16), pt);
            } else {
                vstrwq_scatter_shifted_offset_p_s32(y32 + base, where, v, pt);
            }
        } else {
            const uint32_t step = o < tail_start ? (y_stride ? y_stride : 4u) : out - (out & ~3u);
            int32_t a[4];
            vstrwq_s32(a, acc);
            for (uint32_t t = 0; t < nb; t++) {
                store_requant(y16, y32, base + t * step, a[t], x_scale[t], mult, shift, bias);
            }
        }
    }
}

static void linear_block(const int16_t *x, const uint32_t *x_scale, uint32_t nb, uint32_t in, const int16_t *w,
                         uint32_t out, const bertl14_requant_t *rq, int16_t *y16, int32_t *y32, uint32_t y_stride)
{
    if (nb == 4u) {
        linear_block_n(x, x_scale, 4u, in, w, out, rq, y16, y32, y_stride);
    } else if (nb == 3u) {
        linear_block_n(x, x_scale, 3u, in, w, out, rq, y16, y32, y_stride);
    } else if (nb == 2u) {
        linear_block_n(x, x_scale, 2u, in, w, out, rq, y16, y32, y_stride);
    } else {
        linear_block_n(x, x_scale, 1u, in, w, out, rq, y16, y32, y_stride);
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
