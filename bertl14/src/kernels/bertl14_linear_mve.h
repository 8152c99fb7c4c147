/* The Helium (MVE) body of the linear kernels, written once for both weight types: included by
 * bertl14_linear_s8_w16.c (INT16 weights) and bertl14_linear_s8_w8.c (INT8 weights) after they define
 *   BL14_W_T                    the weight type
 *   BL14_OFF_T, BL14_OFFSETS    the activation gathers' offset vector and how a block's offsets are made
 *   BL14_LDW, BL14_LDW_Z        eight weights as int16 lanes (VLDRH; INT8: VLDRB.S16, which widens them), predicated
 *   BL14_GATHER, BL14_GATHER_Z  a token's activations in the weights' lane order; _Z: the first chunk only
 *   BL14_ASM_LDW, BL14_ASM_GATHER   the same two loads in the assembly loop
 *   BL14_LDX_ROW, BL14_LDX_ROW_Z    eight values of a row-major token in the weights' lane order
 *   BL14_LIFT                   1: shifts under 32 lift the sums (INT8 weights, bertl14_linear_store.h int8_lift_limit)
 * The weights' lane order is the blob's: INT8 rows store each group of four as 4c, 4c+2, 4c+1, 4c+3, so the INT8
 * gathers take the activations in that order (one gather either way), and the products are the same. */
#ifndef BERTL14_LINEAR_MVE_H
#define BERTL14_LINEAR_MVE_H

#include "bertl14_mve.h"

/* Dot products of weight rows with the tokens of the block, into acc[t][lane] (token t, channel o + lane). Eight
 * weights (one load, BL14_LDW) against the same eight channels of a token, chunks 2j and 2j+1, which are 4 * nb
 * values apart in the block layout: one gather (BL14_GATHER; INT16 weights: four words at the word offsets
 * {2t, 2t + 1, 2nb + 2t, 2nb + 2t + 1} from the pair's start), one VMLADAVA (eight MACs). A last single chunk (in % 8 == 4) is the same with the upper
 * lanes predicated off (single_mve). */
static inline __attribute__((always_inline)) int32_t single_mve(int32_t s, const BL14_W_T *pw, const int32_t *px,
                                                                BL14_OFF_T off)
{
    return vmladavaq_s16(s, BL14_LDW_Z(pw, vctp16q(4)), BL14_GATHER_Z(px, off));
}

/* A block of four tokens (the encoder's case), two weight rows (w, w + in) a pass: per pair of chunks two weight loads,
 * four gathers and eight VMLADAVA, 17 instructions for 64 MACs, in assembly: GCC 12 keeps neither the eight sums
 * in the even registers VMLADAVA needs (constraint Te) nor the offsets in vector registers across its own loop.
 * The assembly only reads memory this function never writes (the weights, the input block): no memory clobber. */
static void dot2_block4(const BL14_W_T *w, uint32_t in, const int16_t *x, const BL14_OFF_T off[4], int32_t acc[4][4],
                        uint32_t lane)
{
    const BL14_W_T *p0 = w, *p1 = w + in;
    const int32_t *px = (const int32_t *)(const void *)x;
    uint32_t n = in / 8u;
    int32_t s0 = 0, s1 = 0, s2 = 0, s3 = 0, t0 = 0, t1 = 0, t2 = 0, t3 = 0;
    if (n) {
        int16x8_t wa, wb, xa, xb;
        __asm volatile("movs %[s0], #0\n\tmovs %[s1], #0\n\tmovs %[s2], #0\n\tmovs %[s3], #0\n\t"
                       "movs %[t0], #0\n\tmovs %[t1], #0\n\tmovs %[t2], #0\n\tmovs %[t3], #0\n"
                       "1:\n\t"
                       BL14_ASM_LDW("wa", "p0")
                       BL14_ASM_LDW("wb", "p1")
                       BL14_ASM_GATHER("xa", "o0")
                       BL14_ASM_GATHER("xb", "o1")
                       "vmladava.s16 %[s0], %q[wa], %q[xa]\n\t"
                       "vmladava.s16 %[t0], %q[wb], %q[xa]\n\t"
                       BL14_ASM_GATHER("xa", "o2")
                       "vmladava.s16 %[s1], %q[wa], %q[xb]\n\t"
                       "vmladava.s16 %[t1], %q[wb], %q[xb]\n\t"
                       BL14_ASM_GATHER("xb", "o3")
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
 * eight activations (one load of the row, four of weights, four VMLADAVA), into acc[0][0..3]. */
BERTL14_NOINLINE static void dot4_row(const BL14_W_T *w, uint32_t in, const int16_t *x, int32_t acc[4][4])
{
    const BL14_W_T *p0 = w, *p1 = w + in, *p2 = p1 + in, *p3 = p2 + in;
    const int16_t *px = x;
    int32_t s0 = 0, s1 = 0, s2 = 0, s3 = 0;
    for (uint32_t n = in / 8u; n; n--, p0 += 8, p1 += 8, p2 += 8, p3 += 8, px += 8) {
        const int16x8_t xv = BL14_LDX_ROW(px);
        s0 = vmladavaq_s16(s0, BL14_LDW(p0), xv);
        s1 = vmladavaq_s16(s1, BL14_LDW(p1), xv);
        s2 = vmladavaq_s16(s2, BL14_LDW(p2), xv);
        s3 = vmladavaq_s16(s3, BL14_LDW(p3), xv);
    }
    if (in & 4u) {                                                           /* the last four channels */
        const mve_pred16_t p = vctp16q(4);
        const int16x8_t xv = BL14_LDX_ROW_Z(px, p);
        s0 = vmladavaq_s16(s0, BL14_LDW_Z(p0, p), xv);
        s1 = vmladavaq_s16(s1, BL14_LDW_Z(p1, p), xv);
        s2 = vmladavaq_s16(s2, BL14_LDW_Z(p2, p), xv);
        s3 = vmladavaq_s16(s3, BL14_LDW_Z(p3, p), xv);
    }
    acc[0][0] = s0;
    acc[0][1] = s1;
    acc[0][2] = s2;
    acc[0][3] = s3;
}

/* One weight row, token by token (blocks of 1..3 tokens, and a last odd channel): off0 the offsets of token 0 */
BERTL14_NOINLINE static void dot1_mve(const BL14_W_T *w, uint32_t in, const int16_t *x, uint32_t nb, BL14_OFF_T off0,
                     int32_t acc[4][4], uint32_t lane)
{
    for (uint32_t t = 0; t < nb; t++) {
        const BL14_W_T *pw = w;
        const int32_t *px = (const int32_t *)(const void *)x + 2u * t;
        int32_t s = 0;
        for (uint32_t j = 0; j < in / 8u; j++, pw += 8, px += 4u * nb) {
            s = vmladavaq_s16(s, BL14_LDW(pw), BL14_GATHER(px, off0));
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
static void linear_block(const int16_t *x, const uint32_t *x_scale, uint32_t nb, uint32_t in, const BL14_W_T *w,
                         uint32_t out, const bertl14_requant_t *rq, int16_t *y16, int32_t *y32, uint32_t y_stride)
{
    uint32_t smax = 0;
    for (uint32_t t = 0; t < nb; t++) {
        smax = x_scale[t] > smax ? x_scale[t] : smax;
    }
#if BL14_LIFT
    const uint32_t jsafe = int8_lift_limit(in);
#endif
    const int16_t *const mults = rq->mult, *const shifts = rq->shift;
    const int32_t *const biases = rq->bias;
    int32_t acc[4][4];
    BL14_OFFSETS(nb, off0, off);                                             /* token t's gather offsets */
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
            const int32x4_t mult = vldrhq_s32(mults + o);
            const uint32_t mmax = (uint32_t)vmaxvq_s32(0, mult);
#if BL14_LIFT
            /* INT8 weights: a shift under 32 takes the sums lifted by 2^j, j = 32 - shift <= jsafe, and shift 32 */
            const int32x4_t lift = vmaxq_s32(vsubq_s32(vdupq_n_s32(32), vldrhq_s32(shifts + o)), vdupq_n_s32(0));
            const int32x4_t shift = vaddq_s32(vldrhq_s32(shifts + o), lift);
            const int lifts_fit = (uint32_t)vmaxvq_s32(0, lift) <= jsafe;
#define BL14_LIFTED(v) vshlq_s32(v, lift)
#else
            const int32x4_t shift = vldrhq_s32(shifts + o);
            const int lifts_fit = 1;
#define BL14_LIFTED(v) (v)
#endif
            /* every lane's shift - 32 in 0..31 (as unsigned), and smax * M < 2^31 */
            if (lifts_fit && vmaxvq_u32(0u, vreinterpretq_u32_s32(vsubq_n_s32(shift, 32))) <= 31u &&
                smax * mmax < 0x80000000u) {
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
                        const int32x4_t v = requant4(BL14_LIFTED(vldrwq_s32(acc[t])), m, c, nsh, bias, has32, at32);
                        vstrhq_s32(d, vreinterpretq_s32_s16(vqmovnbq_s32(vreinterpretq_s16_s32(v), v)));
                    }
                } else {
                    int32_t *d = y32 + first;
                    for (uint32_t t = 0; t < nb; t++, d += step) {
                        const int32x4_t m = vmulq_n_s32(mult, (int32_t)x_scale[t]);
                        vstrwq_s32(d, requant4(BL14_LIFTED(vldrwq_s32(acc[t])), m, c, nsh, bias, has32, at32));
                    }
                }
                continue;
            }
#undef BL14_LIFTED
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

#endif /* BERTL14_LINEAR_MVE_H */
