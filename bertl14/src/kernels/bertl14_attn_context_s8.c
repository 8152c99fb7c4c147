/* Attention context of a block of queries, one head (docs/numerics.md "context"): the weights w_ju = rsr(p_ju *
 * sv_u, 8) times the values, a matmul of two operands in blocks of four rows (bertl14_kernels.h): the weights'
 * rows (queries) and the transposed values' rows (channels), both over the padded keys. When every sv_u < 2^15
 * (then every w_ju < 2^15; the case in every converted model) the DSP body makes the weights as int16, two keys
 * a multiply-accumulate pair each (SMLABB/SMLATB from the probabilities unpacked by UXTB16), and takes two
 * channels against two queries a step (bertl14_dot2x2_block4: 12 instructions for 16 MACs). Else, and in the
 * portable body, one MLA a term: a query's weights made once, then four channels against them. */
#include "bertl14_kernels.h"
#include "bertl14_acle_emul.h"
#include "bertl14_block4_dot.h"

/* ctx = sat16(rsr(c, 8)); sum_u w_u * 128 < 2^26 for n <= 512 (w < 2^17, sum p <= 256 + n/2) */
static inline int16_t out16(int32_t c)
{
#if defined(BERTL14_USE_DSP)
    return (int16_t)bertl14_ssat(bertl14_rsr32(c, 8), 16);
#else
    return (int16_t)bertl14_sat16(bertl14_rsr32(c, 8));
#endif
}

#if defined(BERTL14_USE_DSP)
#if BERTL14_ACLE_NATIVE && defined(__GNUC__)
/* p * sv + 128 of a half of p and a half of sv (b: the low, t: the high half), as int16 */
#define BL14_MLA(xy) \
    static inline int32_t mla_##xy(uint32_t p, uint32_t sv) \
    { \
        int32_t r; \
        __asm("smla" #xy " %0, %1, %2, %3" : "=r"(r) : "r"(p), "r"(sv), "r"(128)); \
        return r; \
    }
BL14_MLA(bb)
BL14_MLA(bt)
BL14_MLA(tb)
BL14_MLA(tt)
#undef BL14_MLA
static inline uint32_t uxtb16(uint32_t x)
{
    uint32_t r;
    __asm("uxtb16 %0, %1" : "=r"(r) : "r"(x));
    return r;
}
static inline uint32_t uxtb16_ror8(uint32_t x)
{
    uint32_t r;
    __asm("uxtb16 %0, %1, ror #8" : "=r"(r) : "r"(x));
    return r;
}
/* (a >> 8) in the low half, (b >> 8) in the high half, for 0 <= a, b < 2^23 */
static inline uint32_t pack_w(int32_t a, int32_t b)
{
    uint32_t r;
    __asm("pkhbt %0, %1, %2, lsl #8" : "=r"(r) : "r"((uint32_t)a >> 8), "r"(b));
    return r;
}
#else
static inline int32_t mla_bb(uint32_t p, uint32_t sv) { return (int32_t)(p & 0xFFFFu) * (int32_t)(sv & 0xFFFFu) + 128; }
static inline int32_t mla_bt(uint32_t p, uint32_t sv) { return (int32_t)(p & 0xFFFFu) * (int32_t)(sv >> 16) + 128; }
static inline int32_t mla_tb(uint32_t p, uint32_t sv) { return (int32_t)(p >> 16) * (int32_t)(sv & 0xFFFFu) + 128; }
static inline int32_t mla_tt(uint32_t p, uint32_t sv) { return (int32_t)(p >> 16) * (int32_t)(sv >> 16) + 128; }
static inline uint32_t uxtb16(uint32_t x) { return x & 0x00FF00FFu; }
static inline uint32_t uxtb16_ror8(uint32_t x) { return (x >> 8) & 0x00FF00FFu; }
static inline uint32_t pack_w(int32_t a, int32_t b) { return ((uint32_t)a >> 8) | (((uint32_t)b << 8) & 0xFFFF0000u); }
#endif

/* The weights of the four rows as int16 in blocks of four rows (len np; those of rows beyond nq are not used),
 * four keys a step: the keys' scales loaded once for the rows and packed in pairs (SMLAxy takes either half);
 * every sv_u < 2^15, and zero beyond n (so are those weights) */
static inline __attribute__((always_inline)) void weights_row(const uint8_t *p, uint32_t sv01, uint32_t sv23,
                                                              uint32_t *wj)
{
    const uint32_t p4 = bertl14_ld32(p);
    const uint32_t pe = uxtb16(p4), po = uxtb16_ror8(p4);                   /* (p0, p2), (p1, p3) */
    wj[0] = pack_w(mla_bb(pe, sv01), mla_bt(po, sv01));
    wj[1] = pack_w(mla_tb(pe, sv23), mla_tt(po, sv23));
}

static void weights16(const uint8_t *p, const uint32_t *sv, uint32_t n, int16_t *w)
{
    const uint32_t np = bertl14_attn_padded(n);
    uint32_t *wg = (uint32_t *)(void *)w;                                   /* row j's chunk: words 2j, 2j + 1 */
    const uint8_t *const p1 = p + np, *const p2 = p1 + np, *const p3 = p2 + np;
    for (uint32_t u = 0; u < np; u += 4u, wg += 8) {                       /* all four rows: no test a row */
        const uint32_t sv01 = bertl14_pack_lo16(sv[u], sv[u + 1u]), sv23 = bertl14_pack_lo16(sv[u + 2u], sv[u + 3u]);
        weights_row(p + u, sv01, sv23, wg);
        weights_row(p1 + u, sv01, sv23, wg + 2);
        weights_row(p2 + u, sv01, sv23, wg + 4);
        weights_row(p3 + u, sv01, sv23, wg + 6);
    }
}

/* Channels of rows c, c + 1 of the values (block base v, row c & 3) against queries j, j + 1 (rows of w): ctx of
 * the rows below nq and the channels below d */
static void tile(const int16_t *v, uint32_t c, const int16_t *w, uint32_t j, uint32_t nq, uint32_t d, uint32_t chunks,
                 int16_t *ctx, uint32_t ctx_stride)
{
    int32_t acc[4];
    bertl14_dot2x2_block4(v + 4u * (c & 3u), w + 4u * j, chunks, acc);
    int16_t *const o = ctx + j * ctx_stride + c;
    o[0] = out16(acc[0]);
    if (c + 1u < d) {
        o[1] = out16(acc[2]);
    }
    if (j + 1u < nq) {
        o[ctx_stride] = out16(acc[1]);
        if (c + 1u < d) {
            o[ctx_stride + 1u] = out16(acc[3]);
        }
    }
}

#if BERTL14_BLOCK4_ASM
/* Every channel (d % 4 == 0) of a query pair (rows w, w + 4 of the weights) in assembly, two channels a tile
 * (bertl14_dot2x2_block4's scheme; the sums start at 128, the rounding of rsr(c, 8)), the outputs of a channel pair
 * saturated (SSAT) and packed into one word a row; the loop's state in a frame on the stack, r7 left to a frame
 * pointer. o0, o1: the rows' outputs, 4-byte aligned. */
#define BL14_C2 "ldrd r10, r11, [r0, #8]\n\tldrd r8, r9, [r0], #32\n\tldrd r12, lr, [r1, #8]\n\t" \
    "smlad r4, r8, r12, r4\n\tsmlad r4, r9, lr, r4\n\tsmlad r6, r10, r12, r6\n\tsmlad r6, r11, lr, r6\n\t" \
    "ldrd r12, lr, [r1], #32\n\t" \
    "smlad r3, r8, r12, r3\n\tsmlad r3, r9, lr, r3\n\tsmlad r5, r10, r12, r5\n\tsmlad r5, r11, lr, r5\n\t"
/* ctx[j][c] r3, ctx[j][c + 1] r5, ctx[j + 1][c] r4, ctx[j + 1][c + 1] r6 */
#define BL14_TILE "movs r3, #128\n\tmovs r4, #128\n\tmovs r5, #128\n\tmovs r6, #128\n\t" \
    "ldrd r1, r2, [sp, #0]\n" \
    "2:\n\t" BL14_C2 BL14_C2 BL14_C2 BL14_C2 "subs r2, r2, #1\n\tbne 2b\n\t" \
    "ssat r3, #16, r3, asr #8\n\tssat r5, #16, r5, asr #8\n\tssat r4, #16, r4, asr #8\n\t" \
    "ssat r6, #16, r6, asr #8\n\tpkhbt r3, r3, r5, lsl #16\n\tpkhbt r4, r4, r6, lsl #16\n\t" \
    "ldrd r8, r9, [sp, #16]\n\tstr r3, [r8], #4\n\tstr r4, [r9], #4\n\tstrd r8, r9, [sp, #16]\n\t"
static void pair_asm(const int16_t *v, const int16_t *w, uint32_t np, uint32_t d, int16_t *o0, int16_t *o1)
{
    uint32_t frame[8] = {(uint32_t)(uintptr_t)w, np / 16u, 0, 8u * np - 16u, (uint32_t)(uintptr_t)o0,
                         (uint32_t)(uintptr_t)o1, (uint32_t)(uintptr_t)(o0 + d), 0};
    register const int16_t *r0 __asm("r0") = v;
    register const uint32_t *r1 __asm("r1") = frame;
    __asm volatile("sub sp, sp, #32\n\t"
                   "ldrd r2, r3, [r1, #0]\n\tstrd r2, r3, [sp, #0]\n\t"
                   "ldrd r2, r3, [r1, #8]\n\tstrd r2, r3, [sp, #8]\n\t"
                   "ldrd r2, r3, [r1, #16]\n\tstrd r2, r3, [sp, #16]\n\tldr r2, [r1, #24]\n\tstr r2, [sp, #24]\n"
                   /* channels 0, 1 of a block, then 2, 3 (back 8 np - 16 bytes), then the next block (back 16) */
                   "1:\n\t" BL14_TILE "ldr r12, [sp, #12]\n\tsub r0, r0, r12\n\t" BL14_TILE "sub r0, r0, #16\n\t"
                   "ldr r12, [sp, #24]\n\tcmp r8, r12\n\tbne 1b\n\t"
                   "add sp, sp, #32"
                   : "+r"(r0), "+r"(r1)
                   :
                   : "r2", "r3", "r4", "r5", "r6", "r8", "r9", "r10", "r11", "r12", "lr", "cc", "memory");
}
#undef BL14_TILE
#undef BL14_C2
#define BL14_PAIR_ASM 1
#else
#define BL14_PAIR_ASM 0
#endif
#endif

/* The portable body (with the DSP kernels: scales of 2^15 and more, rare). */
#if defined(BERTL14_USE_DSP)
BERTL14_COLD
#endif
static void context_rows(const uint8_t *p, uint32_t nq, uint32_t n, uint32_t d, const int16_t *v, const uint32_t *sv,
                         int16_t *w, int16_t *ctx, uint32_t ctx_stride)
{
    const uint32_t np = bertl14_attn_padded(n);
    /* one MLA a term: a query's weights made once into the scratch (as int32: sv_u may exceed 2^15 here), then a
     * block of four channels against them, key chunk by key chunk (the padded keys weigh 0: sv_u = 0 there) */
    int32_t *const wj = (int32_t *)(void *)w;
    const uint32_t d4 = d & ~3u;
    for (uint32_t j = 0; j < nq; j++) {
        const uint8_t *const pj = p + j * np;
        for (uint32_t u = 0; u < np; u++) {
            wj[u] = (int32_t)((pj[u] * sv[u] + 128u) >> 8);
        }
        int16_t *const cj = ctx + j * ctx_stride;
        for (uint32_t c = 0; c < d4; c += 4u) {                     /* channel c + h, key u at blk[u / 4 * 16 + 4 h + u % 4] */
            const int16_t *blk = v + c * np;
            int32_t acc[4] = {0, 0, 0, 0};
            for (uint32_t u = 0; u < np; u += 4u, blk += 16) {
                bertl14_chunk_dot4(acc, wj[u], wj[u + 1u], wj[u + 2u], wj[u + 3u], blk);
            }
            cj[c] = out16(acc[0]);
            cj[c + 1u] = out16(acc[1]);
            cj[c + 2u] = out16(acc[2]);
            cj[c + 3u] = out16(acc[3]);
        }
        for (uint32_t c = d4; c < d; c++) {                         /* the last block's channels */
            const int16_t *const row = v + d4 * np + 4u * (c - d4);
            int32_t acc = 0;
            for (uint32_t u = 0; u < np; u++) {
                acc += wj[u] * row[(u & ~3u) * 4u + (u & 3u)];
            }
            cj[c] = out16(acc);
        }
    }
}

void bertl14_attn_context_s8(const bertl14_attn_params *ap, const uint8_t *p, uint32_t nq, const int16_t *v,
                             const uint32_t *sv, uint32_t sv_max, int16_t *w, int16_t *ctx, uint32_t ctx_stride)
{
    const uint32_t n = ap->n, d = ap->d;
#if defined(BERTL14_USE_DSP)
    if (sv_max < 0x8000u) {
        const uint32_t np = bertl14_attn_padded(n);
        weights16(p, sv, n, w);
        const uint32_t chunks = np / 4u;
        uint32_t j = 0;
#if BL14_PAIR_ASM
        if (d % 4u == 0u && !(((uintptr_t)ctx | (ctx_stride * 2u)) & 3u)) {  /* whole pairs in assembly */
            for (; j + 2u <= nq; j += 2u) {
                pair_asm(v, w + 4u * j, np, d, ctx + j * ctx_stride, ctx + (j + 1u) * ctx_stride);
            }
        }
#endif
        for (; j < nq; j += 2u) {                                   /* two queries (rows of the weights) */
            for (uint32_t c = 0; c < d; c += 2u) {                  /* two channels (rows of a values block) */
                tile(v + (c & ~3u) * np, c, w, j, nq, d, chunks, ctx, ctx_stride);
            }
        }
        return;
    }
#else
    (void)sv_max;                                                  /* the DSP body's test */
#endif
    context_rows(p, nq, n, d, v, sv, w, ctx, ctx_stride);
}
