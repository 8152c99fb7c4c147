/* Attention scores of a block of queries, one head (docs/numerics.md "Attention"): a matmul of the block's query
 * rows with the keys, both in blocks of four rows (bertl14_kernels.h). The DSP body takes two keys against two
 * queries a step (bertl14_dot2x2_block4: 12 instructions for 16 MACs) and scales a score with one multiply and
 * one SMMULR (shift <= 32) or SMMLA and a shift (shift > 32) when every scale product fits 31 bits; the row's
 * maximum is kept on the way, so the softmax needs no pass of its own for it. */
#include "bertl14_kernels.h"
#include "bertl14_acle_emul.h"
#include "bertl14_block4_dot.h"

/* sat32(rsr(acc * (sq * sk), shift)) in 64 bits */
BERTL14_NOINLINE static int32_t scale_score(int32_t acc, uint32_t sq, uint32_t sk, int32_t shift)
{
    return bertl14_sat32(bertl14_rsr((int64_t)acc * (int64_t)((uint64_t)sq * sk), shift));
}

#if defined(BERTL14_USE_DSP)
/* rsr(acc * m, shift) for m = sq' * sk < 2^31 and |acc| < 2^23: shift <= 32 (sq' = sq << (32 - shift)): the
 * rounded high word of acc * m; shift > 32 (sq' = sq): the high word of acc * m + c * 2^32, c = 2^(shift - 33),
 * shifted right by shift - 32. The result fits 32 bits: no saturation. */
static inline __attribute__((always_inline)) int32_t scale_fast(int32_t acc, uint32_t m, int32_t c, int32_t sh,
                                                                int wide)
{
    return wide ? bertl14_smmla(acc, (int32_t)m, c) >> sh : bertl14_smmulr(acc, (int32_t)m);
}

/* A query pair's rows: the scales as scale_fast takes them, the rows, each row's maximum so far (the assembly
 * below reads them, and writes the maxima, by these offsets). */
typedef struct {
    uint32_t sq[2];
    int32_t *row[2];
    int32_t max[2];
} pair_rows;

#if BERTL14_BLOCK4_ASM
/* Heads of 32 channels, shift <= 32: the keys u..n4-1 (whole blocks of four) against the pair, in assembly, so
 * the tile's 12 registers (bertl14_dot2x2_block4's scheme, eight chunks unrolled, the first with SMUAD) and the
 * scaling, the stores and the maxima share the core's 13 (r7 left to a frame pointer): the pair's rows live in a
 * frame on the stack. Per two keys: 96 instructions for the 128 MACs, 29 for the four scores. */
#define BL14_K_1(a, b) "smuad " a ", " b "\n\t"
#define BL14_K_0(a, b) "smlad " a ", " b ", " a "\n\t"
#define BL14_K(first, a, b) BL14_K_##first(a, b)
#define BL14_T(f) "ldrd r10, r11, [r0, #8]\n\tldrd r8, r9, [r0], #32\n\tldrd r12, lr, [r1, #8]\n\t" \
    BL14_K(f, "r4", "r8, r12") "smlad r4, r9, lr, r4\n\t" BL14_K(f, "r6", "r10, r12") "smlad r6, r11, lr, r6\n\t" \
    "ldrd r12, lr, [r1], #32\n\t" \
    BL14_K(f, "r3", "r8, r12") "smlad r3, r9, lr, r3\n\t" BL14_K(f, "r5", "r10, r12") "smlad r5, r11, lr, r5\n\t"
#define BL14_TILE BL14_T(1) BL14_T(0) BL14_T(0) BL14_T(0) BL14_T(0) BL14_T(0) BL14_T(0) BL14_T(0)
/* scores (k0, q0) r3, (k1, q0) r5, (k0, q1) r4, (k1, q1) r6: scaled, stored, the maxima kept */
#define BL14_EPI "ldrd r8, r9, [r2], #8\n\tldrd r10, r11, [sp, #0]\n\t" \
    "mul r12, r8, r10\n\tsmmulr r3, r3, r12\n\tmul r12, r9, r10\n\tsmmulr r5, r5, r12\n\t" \
    "mul r12, r8, r11\n\tsmmulr r4, r4, r12\n\tmul r12, r9, r11\n\tsmmulr r6, r6, r12\n\t" \
    "ldrd r8, r9, [sp, #8]\n\tstrd r3, r5, [r8], #8\n\tstrd r4, r6, [r9], #8\n\tstrd r8, r9, [sp, #8]\n\t" \
    "ldrd r10, r11, [sp, #16]\n\t" \
    "cmp r3, r10\n\tit gt\n\tmovgt r10, r3\n\tcmp r5, r10\n\tit gt\n\tmovgt r10, r5\n\t" \
    "cmp r4, r11\n\tit gt\n\tmovgt r11, r4\n\tcmp r6, r11\n\tit gt\n\tmovgt r11, r6\n\t" \
    "strd r10, r11, [sp, #16]\n\tsub r1, r1, #256\n\t"
static void pair_d32_asm(const int16_t *k, const int16_t *q, const uint32_t *sk, const uint32_t *sk_end,
                         pair_rows *pr)
{
    register const int16_t *r0 __asm("r0") = k;
    register const int16_t *r1 __asm("r1") = q;
    register const uint32_t *r2 __asm("r2") = sk;
    register const uint32_t *r3 __asm("r3") = sk_end;
    register pair_rows *r4 __asm("r4") = pr;
    __asm volatile("sub sp, sp, #32\n\t"
                   "ldrd r8, r9, [r4, #0]\n\tstrd r8, r9, [sp, #0]\n\t"
                   "ldrd r8, r9, [r4, #8]\n\tstrd r8, r9, [sp, #8]\n\t"
                   "ldrd r8, r9, [r4, #16]\n\tstrd r8, r9, [sp, #16]\n\t"
                   "strd r3, r4, [sp, #24]\n"
                   /* keys 0, 1 of a block, then keys 2, 3 (back 240 bytes), then the next block (back 16) */
                   "1:\n\t" BL14_TILE BL14_EPI "sub r0, r0, #240\n\t" BL14_TILE BL14_EPI "sub r0, r0, #16\n\t"
                   "ldr r12, [sp, #24]\n\tcmp r2, r12\n\tbne 1b\n\t"
                   "ldr r4, [sp, #28]\n\tldrd r8, r9, [sp, #16]\n\tstrd r8, r9, [r4, #16]\n\t"
                   "add sp, sp, #32"
                   : "+r"(r0), "+r"(r1), "+r"(r2), "+r"(r3), "+r"(r4)
                   :
                   : "r5", "r6", "r8", "r9", "r10", "r11", "r12", "lr", "cc", "memory");
}
#undef BL14_EPI
#undef BL14_TILE
#undef BL14_T
#undef BL14_K
#undef BL14_K_0
#undef BL14_K_1
#define BL14_PAIR_D32 1
#else
#define BL14_PAIR_D32 0
#endif

/* Two queries (rows q, q + 4 of the block) against the keys u0..n-1 (u0 even): their scores into pr's rows,
 * their maxima into pr's; two keys a step (bertl14_dot2x2_block4) */
static void scores_pair(const int16_t *q, const int16_t *k, const uint32_t *sk, uint32_t u0, uint32_t n, uint32_t d,
                        int32_t c, int32_t sh, int wide, pair_rows *pr)
{
    int32_t m0 = pr->max[0], m1 = pr->max[1], acc[4];
    int32_t *const r0 = pr->row[0], *const r1 = pr->row[1];
    const uint32_t chunks = d / 4u, sq0 = pr->sq[0], sq1 = pr->sq[1];
    for (uint32_t u = u0; u < n; u += 2u) {               /* keys u, u + 1: rows 0, 1 or 2, 3 of a block */
        bertl14_dot2x2_block4(k + (u & ~3u) * d + 4u * (u & 3u), q, chunks, acc);
        const uint32_t k0 = sk[u], k1 = sk[u + 1u];       /* k1: an odd n's last pair reads a scale unused */
        const int32_t s00 = scale_fast(acc[0], sq0 * k0, c, sh, wide), s01 = scale_fast(acc[1], sq1 * k0, c, sh, wide);
        r0[u] = s00;
        r1[u] = s01;
        m0 = s00 > m0 ? s00 : m0;
        m1 = s01 > m1 ? s01 : m1;
        if (u + 1u < n) {
            const int32_t s10 = scale_fast(acc[2], sq0 * k1, c, sh, wide);
            const int32_t s11 = scale_fast(acc[3], sq1 * k1, c, sh, wide);
            r0[u + 1u] = s10;
            r1[u + 1u] = s11;
            m0 = s10 > m0 ? s10 : m0;
            m1 = s11 > m1 ? s11 : m1;
        }
    }
    pr->max[0] = m0;
    pr->max[1] = m1;
}

/* Every query pair of the block with the fast scaling; sqs[j] as scale_fast takes it, 0 beyond nq (that row's
 * scores land in the scores' room and are not used) */
static void scores_dsp(const int16_t *q, const uint32_t *sqs, uint32_t nq, const int16_t *k, const uint32_t *sk,
                       uint32_t n, uint32_t d, int32_t shift, int32_t *scores, int32_t *max)
{
    const uint32_t np = bertl14_attn_padded(n);
    const int wide = shift > 32;
    const int32_t sh = wide ? shift - 32 : 0, c = wide ? (int32_t)1 << (sh - 1) : 0;
    for (uint32_t j = 0; j < nq; j += 2u) {
        pair_rows pr = {{sqs[j], sqs[j + 1u]}, {scores + j * np, scores + (j + 1u) * np}, {INT32_MIN, INT32_MIN}};
        uint32_t u = 0;
#if BL14_PAIR_D32
        if (!wide && d == 32u && n >= 4u) {               /* whole blocks of keys in assembly, then the rest */
            u = n & ~3u;
            pair_d32_asm(k, q + 4u * j, sk, sk + u, &pr);
        }
#endif
        scores_pair(q + 4u * j, k, sk, u, n, d, c, sh, wide, &pr);
        max[j] = pr.max[0];
        if (j + 1u < nq) {
            max[j + 1u] = pr.max[1];
        }
    }
}
#endif

/* The portable body (with the DSP kernels: shapes and scales outside the fast cases, rare): a query against a block
 * of four keys at a time, one MLA a term, the scores scaled in 64 bits. */
#if defined(BERTL14_USE_DSP)
BERTL14_COLD
#endif
static void scores_rows(const int16_t *q, const uint32_t *sq, uint32_t nq, const int16_t *k, const uint32_t *sk,
                        uint32_t n, uint32_t d, int32_t shift, int32_t *scores, int32_t *max)
{
    const uint32_t np = bertl14_attn_padded(n);
    for (uint32_t j = 0; j < nq; j++) {
        int32_t *const row = scores + j * np, mx = INT32_MIN;
        for (uint32_t u0 = 0; u0 < n; u0 += 4u) {
            const int16_t *const kb = k + u0 * d;            /* the keys' block: chunk c of key u0 + h at 16 c + 4 h */
            const uint32_t nk = n - u0 < 4u ? n - u0 : 4u;   /* the block's keys (a last block's others unused) */
            int32_t acc[4] = {0, 0, 0, 0};
            if (d % 4u == 0u && nk == 4u) {
                const int16_t *qc = q + 4u * j, *kc = kb;    /* chunk c of query j at 16 c + 4 j */
                for (uint32_t c = 0; c < d; c += 4u, qc += 16, kc += 16) {
                    bertl14_chunk_dot4(acc, qc[0], qc[1], qc[2], qc[3], kc);
                }
            } else {
                for (uint32_t h = 0; h < nk; h++) {
                    for (uint32_t i = 0; i < d; i++) {
                        acc[h] += q[bertl14_block_index(j, i, 4u, d)] * kb[bertl14_block_index(h, i, 4u, d)];
                    }
                }
            }
            for (uint32_t h = 0; h < nk; h++) {
                row[u0 + h] = scale_score(acc[h], sq[j], sk[u0 + h], shift);
                mx = row[u0 + h] > mx ? row[u0 + h] : mx;
            }
        }
        max[j] = mx;
    }
}

void bertl14_attn_scores_s8(const bertl14_attn_params *ap, const int16_t *q, const uint32_t *sq, uint32_t nq,
                            const int16_t *k, const uint32_t *sk, uint32_t sk_max, int32_t *scores, int32_t *max)
{
    const uint32_t n = ap->n, d = ap->d;
    const int32_t shift = ap->score_shift;
#if defined(BERTL14_USE_DSP)
    if (d % 4u == 0u && d <= 128u && shift >= 21 && shift <= 62) {
        /* the fast scaling when every sq' * sk_u < 2^31 (sq' = sq << (32 - shift) for shift <= 32) */
        const uint32_t lift = shift < 32 ? 32u - (uint32_t)shift : 0u;
        uint32_t sqs[4] = {0, 0, 0, 0}, sq_max = 0;
        for (uint32_t j = 0; j < nq; j++) {
            sqs[j] = sq[j] << lift;
            sq_max = sq[j] > sq_max ? sq[j] : sq_max;
        }
        if (((uint64_t)sq_max << lift) * sk_max < 0x80000000u) {
            scores_dsp(q, sqs, nq, k, sk, n, d, shift, scores, max);
            return;
        }
    }
#else
    (void)sk_max;                                         /* the DSP body's test */
#endif
    scores_rows(q, sq, nq, k, sk, n, d, shift, scores, max);
}
