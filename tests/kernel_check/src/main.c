/*
 * Kernel check image: every kernel of the library as this build compiled it (the board's DSP and Helium bodies)
 * against the portable kernels (ref_ names, CMakeLists.txt) on the emulated core, on seeded random inputs and the
 * edges each body treats apart (tails, misalignment, scale and shift ranges, saturation, fallbacks). Outputs are
 * compared byte for byte, and so are the scratch buffers a kernel leaves defined (softmax's exp values). Prints on
 * the console, then waits:
 *
 *   KCHECK <kernel> cases=<n> mismatches=<m>      one line a kernel; the first mismatching cases as
 *   KCHECK mismatch <kernel> case=<i>             (at most 20 in all)
 *   KCHECK done mismatches=<total>
 */
#include <stdint.h>
#include <string.h>

#include "bertl14_kernels.h"
#include "platform.h"
#include "raw_out.h"

/* the portable kernels, compiled with the ref_ prefix */
#define REF(name) extern __typeof__(bertl14_##name) ref_##name;
REF(linear_s8_w16)
REF(linear_s8_w8)
REF(attn_scores_s8)
REF(softmax_s32)
REF(attn_context_s8)
REF(gelu_s16)
REF(gelu_smooth_block_s16)
REF(gelu_quantize_block_s16)
REF(layernorm_s32)
REF(residual_s8)
REF(quantize_row_s16)
REF(quantize_row_block_s16)
REF(quantize_block_s16)
REF(widen_block_s8)
REF(row_scale_s16)
REF(embedding_s8)
REF(embedding_s4)
#undef REF

/* what the platform layer expects of an application (its RX interrupt is never enabled here) */
ringbuf_t app_rx_ring;
void app_rx_notify_from_isr(void) {}

/* ---- output --------------------------------------------------------------------------------------------- */
static uint32_t cases, mismatches, shown, total;

static void check(const char *kernel, const void *a, const void *b, uint32_t bytes, uint32_t caseno)
{
    if (memcmp(a, b, bytes) != 0) {
        mismatches++;
        if (shown++ < 20u) {
            raw_puts("KCHECK mismatch ");
            raw_puts(kernel);
            raw_puts(" case=");
            raw_put_dec(caseno);
            raw_puts("\n");
        }
    }
}

static void report(const char *kernel)
{
    raw_puts("KCHECK ");
    raw_puts(kernel);
    raw_puts(" cases=");
    raw_put_dec(cases);
    raw_puts(" mismatches=");
    raw_put_dec(mismatches);
    raw_puts("\n");
    total += mismatches;
    cases = mismatches = 0;
}

/* ---- inputs --------------------------------------------------------------------------------------------- */
static uint32_t seed = 12345u;

static uint32_t rnd(void)                      /* xorshift32 */
{
    seed ^= seed << 13;
    seed ^= seed >> 17;
    seed ^= seed << 5;
    return seed;
}

static int32_t rr(int32_t lo, int32_t hi)      /* uniform in [lo, hi] */
{
    return lo + (int32_t)(rnd() % (uint32_t)(hi - lo + 1));
}

static int16_t xb[6 * 256 + 8] __attribute__((aligned(8)));
static int16_t wbuf[256 * 96 + 8] __attribute__((aligned(8)));
static int16_t y16a[6 * 256 + 8], y16b[6 * 256 + 8];
static int32_t y32a[6 * 256 + 8], y32b[6 * 256 + 8];
static int16_t mult[256], shf[256];
static int32_t bias[257];
static uint32_t xsc[8];

/* One random linear case (case c, the mult/shf/bias and xsc above) of the kernel for INT8 (w8) or INT16 weights against
 * its portable body: its bias row aligned or not, int16 outputs in the block layout or row-major, or int32 outputs
 * row-major (the encoder's layouts) */
static void run_linear(int w8, uint32_t tokens, uint32_t in, uint32_t out, const int16_t *x, const void *w, uint32_t c)
{
    const int32_t *b = (const int32_t *)(const void *)((const char *)bias + (c % 19u == 0u ? 2 : 0));
    const bertl14_requant_t rq = {mult, shf, b};
    const uint32_t mode = rnd() % 3u, ys = mode == 0u ? 0u : out + (uint32_t)rr(0, 3);
    const int rows32 = mode == 2u && ys != 0u;
    memset(y16a, 0x55, sizeof y16a);
    memset(y16b, 0x55, sizeof y16b);
    memset(y32a, 0x55, sizeof y32a);
    memset(y32b, 0x55, sizeof y32b);
    const bertl14_linear_dims dims = {tokens, in, out, ys};
    int16_t *const ya16 = rows32 ? NULL : y16a, *const yb16 = rows32 ? NULL : y16b;
    int32_t *const ya32 = rows32 ? y32a : NULL, *const yb32 = rows32 ? y32b : NULL;
    if (w8) {
        ref_linear_s8_w8(&dims, &rq, x, xsc, (const int8_t *)w, ya16, ya32);
        bertl14_linear_s8_w8(&dims, &rq, x, xsc, (const int8_t *)w, yb16, yb32);
    } else {
        ref_linear_s8_w16(&dims, &rq, x, xsc, (const int16_t *)w, ya16, ya32);
        bertl14_linear_s8_w16(&dims, &rq, x, xsc, (const int16_t *)w, yb16, yb32);
    }
    check(w8 ? "linear_s8_w8" : "linear_s8_w16", rows32 ? (const void *)y32a : (const void *)y16a,
          rows32 ? (const void *)y32b : (const void *)y16b, rows32 ? sizeof y32a : sizeof y16a, c);
}

/* linear_s8_w16: 1..6 tokens (the encoder's blocks are 1..4), in with in % 8 == 4 and odd chunk counts, misaligned
 * x or w (the slow paths), every requantization branch (shift 1..64, scale products beyond 31 bits, saturating
 * biases, unaligned bias, quads mixing shift 32 and 33), int16 and int32 outputs, row-major and block layouts */
static void check_linear(void)
{
    static const uint32_t ins[] = {4, 8, 12, 16, 20, 36, 96, 100, 256};
    static const uint32_t outs[] = {1, 2, 3, 5, 43, 96};
    for (uint32_t c = 0; c < 400u; c++, cases++) {
        const uint32_t tokens = (uint32_t)rr(1, c % 7u == 0u ? 6 : 4), in = ins[rnd() % 9u], out = outs[rnd() % 6u];
        const int mis = c % 23u == 0u;
        const int16_t *x = xb + (mis && (c & 1u) ? 1 : 0);
        const int16_t *w = wbuf + (mis && !(c & 1u) ? 1 : 0);
        for (uint32_t i = 0; i < tokens * in + 2u; i++) {
            xb[i] = (int16_t)rr(-128, 127);
        }
        const int wide = c % 5u == 0u;
        for (uint32_t i = 0; i < in * out + 2u; i++) {
            wbuf[i] = (int16_t)(wide ? rr(-32768, 32767) : rr(-3000, 3000));
        }
        for (uint32_t o = 0; o < out; o++) {
            const uint32_t m = c % 11u;
            mult[o] = (int16_t)rr(16384, 32767);
            shf[o] = (int16_t)(m == 0u ? rr(1, 64) : m == 1u ? rr(20, 33) : m == 2u ? rr(32, 34) : rr(33, 42));
            bias[o] = c % 13u == 0u ? (int32_t)rnd() : rr(-100000, 100000);
        }
        for (uint32_t t = 0; t < tokens; t++) {
            xsc[t] = c % 9u == 0u ? (uint32_t)rr(1, 66050) : c % 17u == 0u ? (uint32_t)rr(60000, 66050)
                                                                          : (uint32_t)rr(1, 2000);
        }
        run_linear(0, tokens, in, out, x, w, c);
    }
    report("linear_s8_w16");
}

static int8_t w8buf[256 * 96 + 8] __attribute__((aligned(8)));

/* linear_s8_w8 (built with BERTL14_WEIGHTS_INT8, CMakeLists.txt): 1..6 tokens, rows whose length is or is not a
 * multiple of 4 (multiples of 16 whose chunk count leaves 0, 1 and 2 over three: the DSP loop's entries), misaligned x or w (the portable loop on every core), activations in -127..127 (the kernel's
 * contract) with saturated rows whose sums do not fit once lifted by 2^(33 - S), every shift 1..62 (the 64-bit
 * formula below 9, the lift around 33), scale products s * M at and beyond 2^31 (s up to 66050, the largest row
 * scale), saturating and unaligned biases; int16 outputs in the block layout and row-major, int32 outputs
 * row-major (the encoder's layouts) */
static void check_linear_w8(void)
{
    static const uint32_t ins[] = {4, 8, 12, 16, 20, 32, 36, 48, 80, 96, 100, 256, 1, 2, 3, 6, 30, 50, 99};
    static const uint32_t outs[] = {1, 2, 3, 5, 43, 96};
    for (uint32_t c = 0; c < 400u; c++, cases++) {
        const uint32_t tokens = (uint32_t)rr(1, c % 7u == 0u ? 6 : 4), out = outs[rnd() % 6u];
        const uint32_t in = ins[rnd() % (c % 3u == 0u ? 19u : 12u)];
        const int mis = c % 23u == 0u, sat = c % 8u == 3u, big = c % 17u == 0u;   /* big: s * M about 2^31 */
        const int16_t *x = xb + (mis && (c & 1u) ? 1 : 0);
        const int8_t *w = w8buf + (mis && !(c & 1u) ? rr(1, 3) : 0);
        for (uint32_t i = 0; i < tokens * in + 2u; i++) {
            xb[i] = (int16_t)(sat ? (rnd() % 10u ? 127 : -127) : rr(-127, 127));
        }
        for (uint32_t i = 0; i < in * out + 4u; i++) {
            w8buf[i] = (int8_t)(sat && (i / in) % 2u == 0u ? 127 : rr(-128, 127));
        }
        for (uint32_t o = 0; o < out; o++) {
            const uint32_t m = c % 11u;
            mult[o] = (int16_t)(big ? rr(32200, 32767) : rr(16384, 32767));
            shf[o] = (int16_t)(m == 0u ? rr(1, 62) : m == 1u ? rr(1, 12) : m == 2u ? rr(30, 34) : rr(24, 40));
            bias[o] = c % 13u == 0u ? (int32_t)rnd() : rr(-100000, 100000);
        }
        for (uint32_t t = 0; t < tokens; t++) {
            xsc[t] = big ? (uint32_t)rr(65300, 66050) : c % 9u == 0u ? (uint32_t)rr(1, 66050) : (uint32_t)rr(1, 4096);
        }
        run_linear(1, tokens, in, out, x, w, c);
    }
    report("linear_s8_w8");
}

static int16_t q16[4 * 128] __attribute__((aligned(8))), kv16[512 * 20 + 64] __attribute__((aligned(8)));
static uint32_t kvs[512 * 4];
static int32_t s32a[4 * 512], s32b[4 * 512], mxa[4], mxb[4];

/* attn_scores_s8: 1..4 queries, head sizes 4..128 (32 takes the DSP body's assembly), 1..512 keys (odd counts, a
 * last partial block), shifts 0..64, scale products beyond 31 bits; the rows' scores and maxima */
static void check_scores(void)
{
    static const uint32_t ds[] = {4, 6, 8, 16, 24, 32, 32, 36, 48, 64, 128};
    for (uint32_t c = 0; c < 300u; c++, cases++) {
        const uint32_t d = ds[rnd() % 11u], nq = (uint32_t)rr(1, 4);
        uint32_t n = (uint32_t)(c % 29u == 0u ? rr(100, 512) : rr(1, 40));
        if (bertl14_attn_padded(n) * d > 512u * 20u) {
            n = 512u * 20u / d & ~3u;
        }
        const uint32_t np = bertl14_attn_padded(n);
        for (uint32_t i = 0; i < 4u * d; i++) {
            q16[i] = (int16_t)rr(-128, 127);
        }
        for (uint32_t i = 0; i < np * d; i++) {
            kv16[i] = (int16_t)rr(-128, 127);
        }
        uint32_t sk_max = 0, sq[4];
        for (uint32_t i = 0; i < np; i++) {
            kvs[i] = c % 5u == 0u ? (uint32_t)rr(1, 0x7fffffff) : (uint32_t)rr(1, c % 3u ? 30000 : 66050);
            sk_max = i < n && kvs[i] > sk_max ? kvs[i] : sk_max;
        }
        for (uint32_t j = 0; j < 4u; j++) {
            sq[j] = c % 5u == 1u ? (uint32_t)rr(1, 0x7fffffff) : (uint32_t)rr(1, c % 3u ? 30000 : 66050);
        }
        const int32_t shift = c % 6u == 0u ? rr(0, 64) : c % 6u == 1u ? rr(21, 40) : rr(30, 33);
        const bertl14_attn_params ap = {n, d, shift};
        ref_attn_scores_s8(&ap, q16, sq, nq, kv16, kvs, sk_max, s32a, mxa);
        bertl14_attn_scores_s8(&ap, q16, sq, nq, kv16, kvs, sk_max, s32b, mxb);
        for (uint32_t j = 0; j < nq; j++) {
            check("attn_scores_s8", s32a + j * np, s32b + j * np, n * 4u, c);
        }
        check("attn_scores_s8", mxa, mxb, nq * 4u, c);
    }
    report("attn_scores_s8");
}

static int32_t sm_in[512];
static uint8_t pa[512], pb[512];

/* softmax_s32: 1..70 and 512 scores, narrow and full int32 ranges, ties, extremes; the probabilities and the exp
 * values the kernel leaves in its scratch */
static void check_softmax(void)
{
    for (uint32_t c = 0; c < 300u; c++, cases++) {
        const uint32_t n = (uint32_t)(c % 31u == 0u ? 512 : rr(1, 70)), kind = c % 6u;
        for (uint32_t i = 0; i < n; i++) {
            sm_in[i] = kind == 0u ? rr(-(1 << 14), 1 << 14) : kind == 1u ? (int32_t)rnd() : kind == 2u ? 0
                     : kind == 3u ? (i & 1u ? INT32_MIN : INT32_MAX) : kind == 4u ? rr(-20000, 20000) : rr(-3000, 300);
        }
        memcpy(s32a, sm_in, n * 4u);
        memcpy(s32b, sm_in, n * 4u);
        memset(pa, 0, sizeof pa);
        memset(pb, 0, sizeof pb);
        int32_t max = sm_in[0];
        for (uint32_t i = 1; i < n; i++) {
            max = sm_in[i] > max ? sm_in[i] : max;
        }
        ref_softmax_s32(s32a, n, max, pa);
        bertl14_softmax_s32(s32b, n, max, pb);
        check("softmax_s32", pa, pb, sizeof pa, c);
        check("softmax_s32", s32a, s32b, n * 4u, c);
    }
    report("softmax_s32");
}

static int16_t ctxa[4 * 132], ctxb[4 * 132], wsc[4 * 512] __attribute__((aligned(8)));
static uint8_t pq8[4 * 512];

/* attn_context_s8: 1..4 queries, head sizes 4..128 (odd and not a multiple of 4), 1..512 keys (probabilities and
 * values beyond n that must not count, their scales zero), output strides beyond d, weights of 16 and 17 bits */
static void check_context(void)
{
    static const uint32_t ds[] = {4, 6, 8, 12, 16, 24, 32, 36, 48, 64, 128};
    for (uint32_t c = 0; c < 300u; c++, cases++) {
        const uint32_t d = ds[rnd() % 11u], d4 = (d + 3u) & ~3u, nq = (uint32_t)rr(1, 4);
        uint32_t n = (uint32_t)(c % 29u == 0u ? rr(100, 512) : rr(1, 40));
        if (bertl14_attn_padded(n) * d4 > 512u * 20u) {
            n = 512u * 20u / d4 & ~3u;
        }
        const uint32_t np = bertl14_attn_padded(n), stride = d + (uint32_t)rr(0, 4);
        for (uint32_t i = 0; i < 4u * np; i++) {
            pq8[i] = (uint8_t)(c % 4u == 0u ? rr(0, 255) : rr(0, 20));
        }
        for (uint32_t i = 0; i < d4 * np; i++) {
            kv16[i] = (int16_t)rr(-128, 127);
        }
        uint32_t sv_max = 0;
        for (uint32_t i = 0; i < np; i++) {
            kvs[i] = i >= n ? 0u : c % 3u == 0u ? (uint32_t)rr(1, 131071) : (uint32_t)rr(1, 30000);
            sv_max = i < n && kvs[i] > sv_max ? kvs[i] : sv_max;
        }
        memset(ctxa, 0x55, sizeof ctxa);
        memset(ctxb, 0x55, sizeof ctxb);
        const bertl14_attn_params ap = {n, d, 0};
        ref_attn_context_s8(&ap, pq8, nq, kv16, kvs, sv_max, wsc, ctxa, stride);
        bertl14_attn_context_s8(&ap, pq8, nq, kv16, kvs, sv_max, wsc, ctxb, stride);
        check("attn_context_s8", ctxa, ctxb, sizeof ctxa, c);
    }
    report("attn_context_s8");
}

static int16_t ga[65536], gb[65536];
static uint16_t ism[256];

/* GELU: every int16 input for each input exponent 0..12; the smoothed block form (1..4 tokens, 6, 254 and 256
 * channels, factors up to 65535), and that form with the row quantization (its row scales) */
static void check_gelu(void)
{
    for (int32_t f = 0; f <= 12; f++, cases += 3u) {
        for (uint32_t i = 0; i < 65536u; i++) {
            ga[i] = gb[i] = (int16_t)(i - 32768u);
        }
        ref_gelu_s16(ga, 65536u, f);
        bertl14_gelu_s16(gb, 65536u, f);
        check("gelu_s16", ga, gb, sizeof ga, (uint32_t)f);
        const uint32_t n = f == 3 ? 6u : f == 4 ? 254u : 256u, tokens = (uint32_t)(f % 4) + 1u;
        for (uint32_t i = 0; i < n; i++) {
            ism[i] = (uint16_t)(f % 3 == 0 ? rr(0, 65535) : rr(2000, 8000));
        }
        for (uint32_t i = 0; i < n * tokens; i++) {
            ga[i] = gb[i] = (int16_t)rr(-32768, 32767);
        }
        ref_gelu_smooth_block_s16(ga, ism, n, tokens, f);
        bertl14_gelu_smooth_block_s16(gb, ism, n, tokens, f);
        check("gelu_s16", ga, gb, n * tokens * 2u, (uint32_t)f);
        uint32_t sa[4], sb[4];
        for (uint32_t i = 0; i < n * tokens; i++) {
            ga[i] = gb[i] = (int16_t)(f == 5 && i % 3u ? 0 : rr(-32768, 32767));
        }
        ref_gelu_quantize_block_s16(ga, ism, n, tokens, f, sa);
        bertl14_gelu_quantize_block_s16(gb, ism, n, tokens, f, sb);
        check("gelu_s16", ga, gb, n * tokens * 2u, (uint32_t)f);
        check("gelu_s16", sa, sb, tokens * 4u, (uint32_t)f);
    }
    report("gelu_s16");
}

static int32_t row[1024], ra[1024], rb[1024], beta[1025];
static int16_t gamma_[1024], lna[1024], lnb[1024];
static int8_t hres[1024];
static uint16_t uu[1024];

/* layernorm_s32 and residual_s8: 1..1024 channels, rows of amplitude 3 .. 2^30 and full int32, eps up to 2^61
 * (normalization shifts below, at and above 32), unaligned beta, gamma shifts 0..33; residual scales beyond 2^17,
 * shifts 0..50 */
static void check_layernorm(void)
{
    for (uint32_t c = 0; c < 300u; c++, cases++) {
        const uint32_t n = (uint32_t)(c % 10u == 0u ? rr(1, 9) : c % 3u ? 96 : rr(10, 1024)), k = c % 7u;
        const int32_t amp = k == 0u ? INT32_MAX : k == 1u ? 3 : k == 2u ? (1 << 30) - 1
                          : k == 3u ? rr(1 << 27, 1 << 29) : rr(1, 1 << 24);
        for (uint32_t i = 0; i < n; i++) {
            row[i] = amp == INT32_MAX ? (int32_t)rnd() : rr(-amp, amp);
            gamma_[i] = (int16_t)rr(-32768, 32767);
            beta[i + 1u] = c % 11u == 0u ? (int32_t)rnd() : rr(-40000, 40000);
            hres[i] = (int8_t)rr(-128, 127);
            uu[i] = (uint16_t)(c % 3u ? rr(1000, 9000) : rr(0, 65535));
        }
        const int64_t eps = c % 5u == 0u ? (int64_t)1 << rr(0, 61) : rr(1, 1000);
        const int32_t gs = c % 13u == 0u ? rr(0, 33) : rr(2, 20);
        const int32_t *b = c % 2u ? beta + 1 : (const int32_t *)(const void *)((const char *)beta + 2);
        const bertl14_layernorm_params ln = {gamma_, b, eps, gs, 0};
        ref_layernorm_s32(&ln, row, n, lna);
        bertl14_layernorm_s32(&ln, row, n, lnb);
        check("layernorm_s32", lna, lnb, n * 2u, c);
        const uint32_t s_h = c % 5u == 0u ? (uint32_t)rr(1, 1 << 20) : (uint32_t)rr(1, 66050);
        const int32_t shift = c % 6u == 0u ? rr(0, 50) : rr(9, 30);
        memcpy(ra, row, n * 4u);
        memcpy(rb, row, n * 4u);
        const bertl14_residual_params rp = {uu, shift};
        ref_residual_s8(&rp, ra, hres, s_h, n);
        bertl14_residual_s8(&rp, rb, hres, s_h, n);
        check("layernorm_s32", ra, rb, n * 4u, c);
    }
    report("layernorm_s32 residual_s8");
}

static int16_t qx[1025], ba[4096], bb[4096], q16a[1024], q16b[1024];
static int8_t q8a[1024], q8b[1024], rows8[4096];

/* row quantization in every form (row, block layout, in place, row scale) and widen_block: all-zero, tiny, -32768
 * and full-range rows of 1..1024 values, 1..4 tokens, a misaligned row */
static void check_quantize(void)
{
    for (uint32_t c = 0; c < 300u; c++, cases++) {
        uint32_t n = (uint32_t)(c % 10u == 0u ? rr(1, 9) : c % 3u ? 96 : rr(10, 1024));
        const uint32_t kind = c % 5u;
        for (uint32_t i = 0; i < n + 1u; i++) {
            qx[i] = (int16_t)(kind == 0u ? 0 : kind == 1u ? rr(-3, 3) : kind == 2u ? (i == 3u ? -32768 : rr(-100, 100))
                                                                                  : rr(-32768, 32767));
        }
        const int16_t *x = qx + (c % 17u == 0u ? 1 : 0);
        memset(q8a, 0, sizeof q8a);
        memset(q8b, 0, sizeof q8b);
        memset(q16a, 0, sizeof q16a);
        memset(q16b, 0, sizeof q16b);
        uint32_t sa = ref_quantize_row_s16(x, n, q8a, q16a), sb = bertl14_quantize_row_s16(x, n, q8b, q16b);
        check("quantize_row_s16", q8a, q8b, sizeof q8a, c);
        check("quantize_row_s16", q16a, q16b, sizeof q16a, c);
        check("quantize_row_s16", &sa, &sb, sizeof sa, c);
        const uint32_t tokens = (uint32_t)rr(1, 4), t = (uint32_t)rr(0, (int32_t)tokens - 1);
        if (n * tokens > 4096u) {
            n = 4096u / tokens;
        }
        for (uint32_t i = 0; i < n * tokens; i++) {
            ba[i] = bb[i] = (int16_t)rr(-32768, 32767);
        }
        sa = ref_quantize_row_block_s16(x, n, c % 2u ? q8a : NULL, ba, t, tokens);
        sb = bertl14_quantize_row_block_s16(x, n, c % 2u ? q8b : NULL, bb, t, tokens);
        check("quantize_row_s16", ba, bb, n * tokens * 2u, c);
        check("quantize_row_s16", q8a, q8b, sizeof q8a, c);
        check("quantize_row_s16", &sa, &sb, sizeof sa, c);
        sa = ref_quantize_block_s16(ba, n, t, tokens);
        sb = bertl14_quantize_block_s16(bb, n, t, tokens);
        check("quantize_row_s16", ba, bb, n * tokens * 2u, c);
        check("quantize_row_s16", &sa, &sb, sizeof sa, c);
        for (uint32_t i = 0; i < n * tokens; i++) {
            rows8[i] = (int8_t)rr(-128, 127);
        }
        ref_widen_block_s8(rows8, tokens, n, ba);
        bertl14_widen_block_s8(rows8, tokens, n, bb);
        check("quantize_row_s16", ba, bb, n * tokens * 2u, c);
        sa = ref_row_scale_s16(x, n);
        sb = bertl14_row_scale_s16(x, n);
        check("quantize_row_s16", &sa, &sb, sizeof sa, c);
    }
    report("quantize_row_s16");
}

static uint8_t e4[512];
static int8_t e8[1024], pos8[1024];

/* embedding_s8 / embedding_s4: 1..1024 channels, scales and shifts over their ranges */
static void check_embedding(void)
{
    for (uint32_t c = 0; c < 200u; c++, cases++) {
        const uint32_t n = (uint32_t)(c % 2u ? 96 : 2 * rr(1, 512));
        for (uint32_t i = 0; i < n; i++) {
            e8[i] = (int8_t)rr(-128, 127);
            pos8[i] = (int8_t)rr(-128, 127);
            e4[i / 2u] = (uint8_t)rnd();
        }
        const uint32_t ws = (uint32_t)rr(1, 66050), ps = (uint32_t)rr(1, 66050);
        const int32_t wsh = rr(0, 20), psh = rr(0, 20);
        const bertl14_embedding_quant q = {ws, wsh, ps, psh};
        ref_embedding_s8(e8, pos8, &q, n, ra);
        bertl14_embedding_s8(e8, pos8, &q, n, rb);
        check("embedding", ra, rb, n * 4u, c);
        ref_embedding_s4(e4, pos8, &q, n, ra);
        bertl14_embedding_s4(e4, pos8, &q, n, rb);
        check("embedding", ra, rb, n * 4u, c);
    }
    report("embedding");
}

int main(void)
{
    platform_init();
    raw_puts("KCHECK start\n");
    check_linear();
    check_linear_w8();
    check_scores();
    check_softmax();
    check_context();
    check_gelu();
    check_layernorm();
    check_quantize();
    check_embedding();
    raw_puts("KCHECK done mismatches=");
    raw_put_dec(total);
    raw_puts("\n");
    for (;;) {
        platform_wait_for_interrupt();
    }
}
