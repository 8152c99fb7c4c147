/* Attention context of a block of queries, one head (docs/numerics.md "context"): the weights w_ju = rsr(p_ju *
 * sv_u, 8) times the values, a matmul of two operands in blocks of four rows (bertl14_kernels.h): the weights'
 * rows (queries) and the transposed values' rows (channels), both over the padded keys. When every sv_u < 2^15
 * (then every w_ju < 2^15; the case in every converted model) the DSP body makes the weights as int16, two keys
 * a multiply-accumulate pair each (SMLABB/SMLATB from the probabilities unpacked by UXTB16), and takes two
 * channels against two queries a step (bertl14_dot2x2_block4: 12 instructions for 16 MACs). Else, and in the
 * portable body, one MLA a term, the weights made on the way. */
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
/* (p, sv) int16 halves: (p_lo * sv_lo + 128), (p_hi * sv_lo + 128) */
static inline int32_t mla_bb(uint32_t p, uint32_t sv)
{
    int32_t r;
    __asm("smlabb %0, %1, %2, %3" : "=r"(r) : "r"(p), "r"(sv), "r"(128));
    return r;
}
static inline int32_t mla_tb(uint32_t p, uint32_t sv)
{
    int32_t r;
    __asm("smlatb %0, %1, %2, %3" : "=r"(r) : "r"(p), "r"(sv), "r"(128));
    return r;
}
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
static inline int32_t mla_tb(uint32_t p, uint32_t sv) { return (int32_t)(p >> 16) * (int32_t)(sv & 0xFFFFu) + 128; }
static inline uint32_t uxtb16(uint32_t x) { return x & 0x00FF00FFu; }
static inline uint32_t uxtb16_ror8(uint32_t x) { return (x >> 8) & 0x00FF00FFu; }
static inline uint32_t pack_w(int32_t a, int32_t b) { return ((uint32_t)a >> 8) | (((uint32_t)b << 8) & 0xFFFF0000u); }
#endif

/* The weights of rows 0..nq-1 as int16 in blocks of four rows (len np), four keys a step, zero for the keys
 * beyond n; every sv_u < 2^15 */
static void weights16(const uint8_t *p, uint32_t nq, const uint32_t *sv, uint32_t n, int16_t *w)
{
    const uint32_t np = bertl14_attn_padded(n), groups = np / 4u;
    const uint32_t last = n % 4u ? 0xFFFFFFFFu >> (8u * (4u - n % 4u)) : 0xFFFFFFFFu;   /* the keys below n */
    for (uint32_t j = 0; j < nq; j++) {
        const uint8_t *const pj = p + j * np;
        uint32_t *wj = (uint32_t *)(void *)(w + 4u * j);
        for (uint32_t g = 0; g < groups; g++, wj += 8) {
            uint32_t p4 = bertl14_ld32(pj + 4u * g);
            p4 = g + 1u == groups ? p4 & last : p4;
            const uint32_t pe = uxtb16(p4), po = uxtb16_ror8(p4);               /* (p0, p2), (p1, p3) */
            const uint32_t *const s = sv + 4u * g;
            wj[0] = pack_w(mla_bb(pe, s[0]), mla_bb(po, s[1]));
            wj[1] = pack_w(mla_tb(pe, s[2]), mla_tb(po, s[3]));
        }
    }
}

/* Channels of rows c, c + 1 of the values (block base v, row c & 3) against queries j, j + 1 (rows of w): ctx of
 * the rows below nq and the channels below d */
static inline __attribute__((always_inline)) void tile(const int16_t *v, uint32_t c, const int16_t *w, uint32_t j,
                                                       uint32_t nq, uint32_t d, uint32_t chunks, int16_t *ctx,
                                                       uint32_t ctx_stride)
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
#endif

void bertl14_attn_context_s8(const bertl14_attn_params *ap, const uint8_t *p, uint32_t nq, const int16_t *v,
                             const uint32_t *sv, uint32_t sv_max, int16_t *w, int16_t *ctx, uint32_t ctx_stride)
{
    const uint32_t n = ap->n, d = ap->d, np = bertl14_attn_padded(n);
#if defined(BERTL14_USE_DSP)
    if (sv_max < 0x8000u) {
        weights16(p, nq, sv, n, w);
        const uint32_t chunks = np / 4u;
        for (uint32_t c = 0; c < d; c += 2u) {                      /* two channels (rows of a values block) */
            const int16_t *const vb = v + (c & ~3u) * np;
            tile(vb, c, w, 0, nq, d, chunks, ctx, ctx_stride);
            if (nq > 2u) {
                tile(vb, c, w, 2, nq, d, chunks, ctx, ctx_stride);
            }
        }
        return;
    }
#else
    (void)sv_max;                                                  /* the DSP body's test */
    (void)w;
#endif
    for (uint32_t j = 0; j < nq; j++) {                            /* one MLA a term */
        const uint8_t *const pj = p + j * np;
        for (uint32_t c = 0; c < d; c++) {
            const int16_t *const row = v + (c & ~3u) * np + 4u * (c & 3u);     /* key u at row[(u / 4) * 16 + u % 4] */
            int32_t acc = 0;
            for (uint32_t u = 0; u < n; u++) {
                acc += (int32_t)((pj[u] * sv[u] + 128u) >> 8) * row[(u & ~3u) * 4u + (u & 3u)];
            }
            ctx[j * ctx_stride + c] = out16(acc);
        }
    }
}
