/**
 * @file bertl14_kernels.h
 * @brief Internal kernels of bertl14 and the integer primitives of docs/numerics.md.
 *
 * Naming: one op a file, `bertl14_<op>_<type>.c`, its functions named after it. `<type>` is the element type of
 * the activation the op reads: s8, s16, s32 (int8/16/32 values), u8. Two exceptions, each the one of its kind:
 * an op that adds a row into its int32 output in place (residual) names the row it adds; an op whose input is a
 * weight table (embedding) names the table's type (s8, s4). An op with two weight types appends the weight type
 * as `_w<bits>`: bertl14_linear_s8_w16.c (INT16 weights), bertl14_linear_s8_w8.c (INT8 weights). A file may
 * export the layouts of its op (a row, a token of a block, the block in place) and the op fused with the next
 * step where the encoder needs it; the static-inline steps that two kernel files share live in small internal
 * headers (bertl14_quantize.h, bertl14_linear_store.h, bertl14_block4_dot.h), the primitives every kernel uses below.
 *
 * Every kernel has a portable C body and, when BERTL14_USE_DSP is defined, a body written with ACLE DSP
 * intrinsics (emulated in C on hosts without them). The ops that gain from vectors (linear, softmax, GELU,
 * LayerNorm, the residual, row quantization) also have a Helium body, used when
 * BERTL14_USE_MVE is defined (Cortex-M55 and other cores with the M-profile Vector Extension; bertl14_mve.h):
 * it sits in the op's own file under #if defined(BERTL14_USE_MVE), before the DSP body, which it replaces; the
 * other ops keep their DSP body (an MVE build defines both). Every body computes the same bits.
 */
#ifndef BERTL14_KERNELS_H
#define BERTL14_KERNELS_H

#include <stdint.h>
#include <string.h>

/* Rarely taken exact fallbacks: out of line and compiled for size. */
#if defined(__GNUC__)
#define BERTL14_COLD __attribute__((cold, noinline))
#define BERTL14_NOINLINE __attribute__((noinline))
#else
#define BERTL14_COLD
#define BERTL14_NOINLINE
#endif

/* ---- fixed exponents (docs/numerics.md) ---------------------------------------------------- */
#define BERTL14_ROW_SCALE_BITS 8  /**< a row scale's fraction bits: real(q) = q * s * 2^-(F + 8) */
#define BERTL14_F_SM 10           /**< exponent of the attention scores the softmax takes, Q(F_SM) */
#define BERTL14_UNIT_BITS 12      /**< Q12: smoothing factors, the normalized LayerNorm row, tanh's input */

/* ---- loads and stores ---------------------------------------------------------------------- */

/** The 32-bit word at p (any alignment), read as bytes: the one way the library reads memory as another type
 *  than it was written with (four int8 values, two int16 values, an int32 field of the int16 weights blob), so
 *  no load breaks C's aliasing rules. GCC and Clang compile it to one load (LDR on Armv7-M). */
static inline uint32_t bertl14_ld32(const void *p)
{
    uint32_t v;
    memcpy(&v, p, sizeof v);
    return v;
}

/** p, promised 4-byte aligned (a kernel checked it): bertl14_ld32(BERTL14_ALIGNED4(p)) is the same load, and
 *  the compiler may then fold the pointer's increment into it (LDR with writeback). */
#if defined(__GNUC__)
#define BERTL14_ALIGNED4(p) __builtin_assume_aligned((p), 4)
#else
#define BERTL14_ALIGNED4(p) (p)
#endif

/** Store the 32-bit word v at p (any alignment), as bytes: one STR. */
static inline void bertl14_st32(void *p, uint32_t v)
{
    memcpy(p, &v, sizeof v);
}

/* ---- primitives (docs/numerics.md "Primitives") ---------------------------------------- */

/** rsr(x, n): round-half-up arithmetic shift right by n (n < 0 shifts left). */
static inline int64_t bertl14_rsr(int64_t x, int32_t n)
{
    if (n > 0) {
        return (x + ((int64_t)1 << (n - 1))) >> n;
    }
    if (n == 0) {
        return x;
    }
    return (int64_t)((uint64_t)x << (uint32_t)(-n));
}

/** rsr on 32-bit values for n >= 1 when x + 2^(n-1) cannot overflow. */
static inline int32_t bertl14_rsr32(int32_t x, int32_t n)
{
    return (x + (1 << (n - 1))) >> n;
}

/**
 * rsr(a * b, n) for int32 a, b and 1 <= n <= 62 when the result fits int32: one 32 x 32 -> 64
 * multiply (SMULL) and two or three 32-bit operations instead of a 64-bit shift sequence.
 */
static inline int32_t bertl14_rsr_mul(int32_t a, int32_t b, int32_t n)
{
    const uint64_t r = (uint64_t)1 << (n - 1);
    uint32_t lo = (uint32_t)r, hi = (uint32_t)(r >> 32);
#if defined(__GNUC__) && defined(__thumb2__)
    __asm("smlal %0, %1, %2, %3" : "+r"(lo), "+r"(hi) : "r"(a), "r"(b));   /* (hi, lo) += a * b */
#else
    const uint64_t p = (((uint64_t)hi << 32) | lo) + (uint64_t)((int64_t)a * b);
    lo = (uint32_t)p;
    hi = (uint32_t)(p >> 32);
#endif
    if (n >= 32) {
        return (int32_t)hi >> (n - 32);                 /* floor(p / 2^n) from the high word */
    }
    return (int32_t)((lo >> n) | (hi << (32 - n)));     /* the low word of p >> n */
}

static inline int32_t bertl14_sat8(int64_t x) { return x > 127 ? 127 : (x < -128 ? -128 : (int32_t)x); }
static inline int32_t bertl14_sat16(int64_t x) { return x > 32767 ? 32767 : (x < -32768 ? -32768 : (int32_t)x); }
static inline int32_t bertl14_sat32(int64_t x)
{
    return x > INT32_MAX ? INT32_MAX : (x < INT32_MIN ? INT32_MIN : (int32_t)x);
}

/** floor(a / b), b > 0, without the libgcc 64-bit division helper (its 700 bytes would not fit
 *  the library's budget): 16-bit digits with 32-bit UDIV when b < 2^16, else shift and subtract. */
uint64_t bertl14_udiv_u64(uint64_t a, uint64_t b); /* bertl14_udiv_u64.c */

/** div_round(a, b), b > 0: sign(a) * ((|a| + b/2) / b), truncating division. */
static inline int64_t bertl14_div_round(int64_t a, int64_t b)
{
    const uint64_t h = (uint64_t)b / 2u;
    return a < 0 ? -(int64_t)bertl14_udiv_u64((uint64_t)-a + h, (uint64_t)b) : (int64_t)bertl14_udiv_u64((uint64_t)a + h, (uint64_t)b);
}

/** unsigned div_round. */
static inline uint64_t bertl14_udiv_round(uint64_t a, uint64_t b) { return bertl14_udiv_u64(a + b / 2u, b); }

/* ---- lookup tables (bertl14_luts.c, generated by scripts/bertl14_tools/reference/gen_luts.py) ------ */
extern const uint16_t bertl14_exp_lut[257];   /**< round(32768 * 2^(-i/256)) */
extern const uint16_t bertl14_tanh_lut[257];  /**< round(32768 * tanh(i/32)) */
extern const uint16_t bertl14_isqrt_lut[193]; /**< round(2^22 / sqrt((j + 64) * 256)) */

/**
 * exp_q23(d): exp(-d) in Q23 for d >= 0 in Q10 (numerics "softmax", v1.1; the classifier's score): 2^-(d log2 e)
 * with the fraction from the LUT, interpolated, and the integer part as a shift.
 */
static inline uint32_t bertl14_exp_q23(uint64_t d)
{
    if (d >= 65536u) {
        return 0; /* k >= 24 */
    }
    const uint32_t z = ((uint32_t)d * 23637u + 128u) >> 8;     /* d * log2(e) in Q16; < 2^31 */
    const uint32_t k = z >> 16, fr = z & 65535u;
    if (k >= 24u) {
        return 0;
    }
    const uint32_t i = fr >> 8, f = fr & 255u;
    const int32_t l0 = bertl14_exp_lut[i], l1 = bertl14_exp_lut[i + 1];
    const uint32_t m = (uint32_t)(l0 + (((l1 - l0) * (int32_t)f + 128) >> 8)); /* 2^-fr in Q15 */
    return k > 8u ? (m + (1u << (k - 9u))) >> (k - 8u) : m << (8u - k);
}

/** tanh of u in Q12 -> Q15 through the tanh LUT (|u| >= 8<<12 saturates to +-32768). */
static inline int32_t bertl14_tanh_q12(int32_t u)
{
    const uint32_t a = u < 0 ? (uint32_t)(-(int64_t)u) : (uint32_t)u;
    int32_t t;
    if (a >= (8u << 12)) {
        t = 32768;
    } else {
        const uint32_t i = a >> 7, f = a & 127u;
        const int32_t l0 = bertl14_tanh_lut[i], l1 = bertl14_tanh_lut[i + 1];
        t = l0 + (((l1 - l0) * (int32_t)f + 64) >> 7);
    }
    return u < 0 ? -t : t;
}

/* ---- kernels ------------------------------------------------------------------------------ */

/* bertl14_quantize_row_s16.c */

/**
 * Row quantization (numerics "quantize_row_s8"): q_i = sat8(rsr(x_i * inv, 24)) with
 * s = max(1, ceil(256 * max|x| / 127)), inv = div_round(2^32, s). Writes int8 values into q8 (if
 * not NULL) and/or the same values widened to int16 into q16 (if not NULL; the matmul input form).
 * @return the row scale s (real(q) = q * s * 2^-(F + 8)).
 */
uint32_t bertl14_quantize_row_s16(const int16_t *x, uint32_t n, int8_t *q8, int16_t *q16);

/** Scale of a row: max(1, ceil(256 * max|x| / 127)). */
uint32_t bertl14_row_scale_s16(const int16_t *x, uint32_t n);

/* bertl14_widen_s8.c */

/** Widen count int8 values to int16. */
void bertl14_widen_s8(const int8_t *x, uint32_t count, int16_t *y);

/*
 * Block layout of the linear kernel's input: `tokens` rows of n int16 values stored so that the
 * four channels 4c..4c+3 of every token of the block are adjacent (chunk c of token t at
 * (c * tokens + t) * 4), the last n % 4 channels of each token (the tail) densely after all full
 * chunks. For tokens == 1 it is the plain row. One pointer then serves every token of the block.
 */
static inline uint32_t bertl14_block_index(uint32_t t, uint32_t i, uint32_t tokens, uint32_t n)
{
    const uint32_t n4 = n & ~3u;
    return i < n4 ? ((i >> 2) * tokens + t) * 4u + (i & 3u) : n4 * tokens + t * (n - n4) + (i - n4);
}

/** Widen `tokens` int8 rows of n values (row-major) into the block layout. */
void bertl14_widen_block_s8(const int8_t *rows, uint32_t tokens, uint32_t n, int16_t *blk);

/** quantize_row_s8 of one contiguous row x (token t of a block of `tokens`): int8 values into q8
 *  (if not NULL) and into the block layout at blk (if not NULL). @return the row scale s. */
uint32_t bertl14_quantize_row_block_s16(const int16_t *x, uint32_t n, int8_t *q8, int16_t *blk, uint32_t t,
                                        uint32_t tokens);

/* bertl14_quantize_block_s16.c */

/** quantize_row_s8 in place of token t of a block-layout tensor (its n values become int8 values
 *  held as int16). @return the row scale s. */
uint32_t bertl14_quantize_block_s16(int16_t *blk, uint32_t n, uint32_t t, uint32_t tokens);

/** bertl14_quantize_block_s16 when m = max |x| of the token's values is known (the producing pass took it).
 *  Portable and DSP bodies (an MVE build quantizes through bertl14_quantize_block_s16). */
uint32_t bertl14_quantize_block_max_s16(int16_t *blk, uint32_t n, uint32_t t, uint32_t tokens, uint32_t m);

/* bertl14_linear_s8_w16.c, bertl14_linear_s8_w8.c */

/** Per-output-channel requantization of a linear layer (numerics "Linear layer"). */
typedef struct {
    const int16_t *mult;  /**< M_o in [2^14, 2^15) */
    const int16_t *shift; /**< S_o */
    const int32_t *bias;  /**< B_o in Q(F_out) (may be unaligned in flash: read with bertl14_ld32) */
} bertl14_requant_t;

/** Shape of a linear kernel call: `tokens` rows of `in` values in, `tokens` rows of `out` values out. */
typedef struct {
    uint32_t tokens;   /**< rows of x and y (the encoder's blocks: 1..4 tokens; more run the portable loop) */
    uint32_t in;       /**< input channels: values in a row of x and in a row of w */
    uint32_t out;      /**< output channels: rows of w, values in a row of y */
    uint32_t y_stride; /**< elements between output rows; 0: y16 in the block layout (tokens x out) */
} bertl14_linear_dims;

/**
 * Linear layer, INT16 weights x INT8 activations, several tokens a weight load:
 * acc[t,o] = sum_i x[t,i] * w[o,i]; y[t,o] = rsr(acc * s_t * M_o, S_o) + B_o, then sat16 into
 * y16 (if y16 != NULL) or sat32 into y32.
 * @param x        `tokens` rows of `in` int16 values in the int8 range, in the block layout
 *                 (bertl14_block_index; 4-byte aligned for the DSP body's word loads)
 * @param x_scale  s_t per token row
 * @param w        weights [out][in] int16
 */
void bertl14_linear_s8_w16(const bertl14_linear_dims *dims, const bertl14_requant_t *rq, const int16_t *x,
                           const uint32_t *x_scale, const int16_t *w, int16_t *y16, int32_t *y32);

/**
 * Linear layer, INT8 weights (one scale per output channel, folded into M_o and S_o) x INT8 activations: the
 * formula and the arguments of bertl14_linear_s8_w16, with w [out][in] int8 in the blob's order (each group of four
 * weights 4c..4c+3 of a row stored as 4c, 4c+2, 4c+1, 4c+3; a row's last in % 4 in order) and the activations in
 * -127..127 (row quantization's range; the DSP body's requantization relies on it). Compiled into the
 * library (next to bertl14_linear_s8_w16) only when BERTL14_WEIGHTS_INT8 is defined.
 */
void bertl14_linear_s8_w8(const bertl14_linear_dims *dims, const bertl14_requant_t *rq, const int16_t *x,
                          const uint32_t *x_scale, const int8_t *w, int16_t *y16, int32_t *y32);

/* bertl14_attn_scores_s8.c, bertl14_softmax_s32.c, bertl14_attn_context_s8.c */

/*
 * The attention's operands are blocks of four rows: rows r..r+3 (r a multiple of 4) of `len` int16 values in the
 * block layout of four tokens (bertl14_block_index(r & 3, i, 4, len)), one block after the other. So are the
 * queries of a block (rows: queries), one head's keys (rows: keys, len d), one head's values transposed (rows:
 * channels, len: the padded key count), and the context kernel's weights (rows: queries, len: the padded key
 * count). The DSP body then takes two rows of one block against two rows of another with double-word loads.
 */

/** Keys rounded up to a multiple of 16 (whole groups of four chunks): the row length of the transposed values, the
 *  weights, the probabilities and the scores, and the row count of the keys. */
static inline uint32_t bertl14_attn_padded(uint32_t n) { return (n + 15u) & ~15u; }

/** Index of value i of row r in blocks of four rows of len values (see above). */
static inline uint32_t bertl14_block4_index(uint32_t r, uint32_t i, uint32_t len)
{
    return (r & ~3u) * len + bertl14_block_index(r & 3u, i, 4u, len);
}

/** Shapes and score shift of one layer's attention, the same for every head and block of queries. */
typedef struct {
    uint32_t n;            /**< keys: tokens of the sequence (the rows below are bertl14_attn_padded(n) long) */
    uint32_t d;            /**< head dimension: values in one head's slice of a row */
    int32_t score_shift;   /**< the scores' shift to Q(F_SM): f_q + f_k + 16 - F_SM */
} bertl14_attn_params;

/**
 * Attention scores of nq (1..4) query rows against n keys, one head:
 * x_ju = sat32(rsr(sum_i q[j,i]*k[u,i] * (sq_j * sk_u), score_shift)).
 * @param q       the queries: one block of four rows of d values in the int8 range (rows beyond nq unused)
 * @param sq      their row scales (nq)
 * @param k       the keys: blocks of four rows of d values in the int8 range (n rows; a last block's rows
 *                beyond n unused)
 * @param sk      the keys' scales, bertl14_attn_padded(n) words (those beyond n unused)
 * @param sk_max  max of sk[0..n-1] (the fast scaling's test)
 * @param scores  row j (n scores of query j) at scores + j * bertl14_attn_padded(n); four rows of room
 * @param max     max[j]: the largest of row j's scores
 */
void bertl14_attn_scores_s8(const bertl14_attn_params *ap, const int16_t *q, const uint32_t *sq, uint32_t nq,
                            const int16_t *k, const uint32_t *sk, uint32_t sk_max, int32_t *scores, int32_t *max);

/**
 * LUT softmax of the attention (numerics "softmax", v1.2): n (1..512) scores in Q(F_SM) -> probabilities p_u in
 * Q8 (uint8). @p max is the largest of the n scores (the caller's). `scores` is used as scratch: it is left
 * holding e_u = exp_q22(x_u, max).
 */
void bertl14_softmax_s32(int32_t *scores, uint32_t n, int32_t max, uint8_t *p);

/**
 * Attention context of nq (1..4) query rows, one head: w_ju = rsr(p_ju * sv_u, 8); c[j,c] = sum_u w_ju * v[u,c];
 * ctx[j,c] = sat16(rsr(c[j,c], 8)).
 * @param p       row j (n probabilities) at p + j * bertl14_attn_padded(n); four rows of room
 * @param v       the values transposed: blocks of four rows (channels) of bertl14_attn_padded(n) values in the
 *                int8 range (d rows; key u at u); those of the keys beyond n must be finite, any value
 * @param sv      the values' scales, bertl14_attn_padded(n) words (those beyond n zero); sv_max the largest
 * @param w       scratch of bertl14_attn_context_s8_get_buffer_size bytes, 4-byte aligned (may be the scores)
 * @param ctx     row j's d outputs at ctx + j * ctx_stride
 */
void bertl14_attn_context_s8(const bertl14_attn_params *ap, const uint8_t *p, uint32_t nq, const int16_t *v,
                             const uint32_t *sv, uint32_t sv_max, int16_t *w, int16_t *ctx, uint32_t ctx_stride);

/** Scratch bytes bertl14_attn_context_s8 needs for n keys: the weights of four rows. */
static inline uint32_t bertl14_attn_context_s8_get_buffer_size(uint32_t n)
{
    return 4u * bertl14_attn_padded(n) * (uint32_t)sizeof(int16_t);
}

/* bertl14_gelu_s16.c */

/** tanh-LUT GELU in place on int16 values in Q(f_in), 0 <= f_in <= 12 (numerics "GELU"). */
void bertl14_gelu_s16(int16_t *x, uint32_t n, int32_t f_in);

/** GELU then smooth_s16 (x_c = sat16(rsr(x_c * ism_c, 12))), in place on a block-layout tensor of
 *  `tokens` rows of n channels in Q(f_in), one pass. */
void bertl14_gelu_smooth_block_s16(int16_t *blk, const uint16_t *ism, uint32_t n, uint32_t tokens, int32_t f_in);

/** bertl14_gelu_smooth_block_s16, then bertl14_quantize_block_s16 of each token (scale[t]: its row scale),
 *  the quantization's max |x| taken in the GELU pass. */
void bertl14_gelu_quantize_block_s16(int16_t *blk, const uint16_t *ism, uint32_t n, uint32_t tokens, int32_t f_in,
                                     uint32_t *scale);

/* bertl14_residual_s8.c */

/** Parameters of one residual add (the blob's, with the shift derived from its exponents). */
typedef struct {
    const uint16_t *u; /**< un-smoothing factor per channel, Q12 (4096: none) */
    int32_t shift;     /**< F_h + 8 + 12 - F_r: the INT8 row times its scale and u, to Q(F_r) of the sum */
} bertl14_residual_params;

/** residual_add_s32: y_c = sat32(y_c + rsr(h_c * s_h * u_c, shift)) on n channels (int32 y in place), h an INT8
 *  row with its scale s_h. */
void bertl14_residual_s8(const bertl14_residual_params *rp, int32_t *y, const int8_t *h, uint32_t s_h, uint32_t n);

/* bertl14_embedding_s8.c, bertl14_embedding_s4.c */

/** Quantization of one token's two embedding rows: each row's scale and its table's shift. */
typedef struct {
    uint32_t word_scale; /**< the word row's scale (the blob's uint16 per vocabulary entry) */
    int32_t word_shift;  /**< the word table's shift */
    uint32_t pos_scale;  /**< the position row's scale (token type 0 folded into the row) */
    int32_t pos_shift;   /**< the position table's shift */
} bertl14_embedding_quant;

/** Whether an embedding lookup runs in 32-bit pieces: both shifts 1..31 and both scales < 2^16 (the blob's uint16), so
 *  |x * scale| < 2^23 and the rounding term (<= 2^30) fit int32, and rsr is (x * scale + 2^(shift-1)) >> shift. */
static inline int bertl14_embedding_fast(const bertl14_embedding_quant *q)
{
    return q->word_shift >= 1 && q->word_shift <= 31 && q->pos_shift >= 1 && q->pos_shift <= 31 &&
           q->word_scale < 65536u && q->pos_scale < 65536u;
}

/** Embedding lookup of one token (embedding_s8 / embedding_s4) into e (int32, Q(f_e)), n channels:
 *  e_c = rsr(word[c] * word_scale, word_shift) + rsr(pos[c] * pos_scale, pos_shift). */
void bertl14_embedding_s8(const int8_t *word, const int8_t *pos, const bertl14_embedding_quant *q, uint32_t n,
                          int32_t *e);
/** The same with an INT4 word row, two channels a byte (low nibble the even channel). */
void bertl14_embedding_s4(const uint8_t *word, const int8_t *pos, const bertl14_embedding_quant *q, uint32_t n,
                          int32_t *e);

/* bertl14_layernorm_s32.c */

/** Parameters of one LayerNorm (the blob's, with the shifts derived from its exponents). */
typedef struct {
    const int16_t *gamma; /**< scale per channel, Q(F_G) */
    const int32_t *beta;  /**< shift per channel, Q(F_out) (may be unaligned in flash) */
    int64_t eps_q;        /**< max(1, round(eps * 2^(2 F_r))) */
    int32_t g_shift;      /**< 12 + F_G - F_out */
    int32_t f_out;        /**< F_out: exponent of the output (and of the INT8 rows made from it) */
} bertl14_layernorm_params;

/** Integer LayerNorm (numerics "LayerNorm") of one row r of n int32 values in Q(F_r) -> int16 y in Q(F_out). */
void bertl14_layernorm_s32(const bertl14_layernorm_params *ln, const int32_t *r, uint32_t n, int16_t *y);

#endif /* BERTL14_KERNELS_H */
