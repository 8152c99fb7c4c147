/* The integer encoder: work-buffer plan, forward pass, pooler + classifier, token classifier (tags).
 * Numerics: docs/numerics.md. One commented line a step; kernels in kernels/. */
/* Cold code: compiled for size (bertl14/sources.cmake). */
#include <string.h>

#include "bertl14_internal.h"
#include "bertl14_profile.h"
#include "bertl14_tokenizer.h"



static uint32_t align4(uint32_t x) { return (x + 3u) & ~3u; }
static uint32_t max3(uint32_t a, uint32_t b, uint32_t c) { return a > b ? (a > c ? a : c) : (b > c ? b : c); }

void bertl14_plan(const bertl14_dims_t *dims, uint32_t n, bertl14_plan_t *p)
{
    const uint32_t B = BERTL14_TOKEN_BLOCK, H = dims->hidden, I = dims->intermediate, d = dims->head_dim;
    const uint32_t heads = dims->max_heads_kept, A = heads * d, np = bertl14_attn_padded(n);
    const uint32_t X = max3(H, A, 1u), Y = max3(H, dims->num_labels, 1u);
    uint32_t off = 0;
#define TAKE(field, bytes) do { p->field = off; off += align4(bytes); } while (0)
    TAKE(h, n * H);                  /* residual stream, int8 */
    TAKE(h_scale, n * 4u);
    TAKE(k, heads * np * d * 2u);    /* keys, int16, a head's in blocks of four keys */
    TAKE(k_scale, heads * np * 4u);  /* a head's together */
    TAKE(v, heads * align4(d) * np * 2u); /* values, int16, a head's transposed in blocks of four channels */
    TAKE(v_scale, heads * np * 4u);
    TAKE(kv_max, heads * 2u * 4u);   /* the largest key and value scale of each head */
    TAKE(x16, B * X * 2u);           /* matmul input rows */
    TAKE(x_scale, B * 4u);
    TAKE(q16, B * A * 2u);           /* projection output */
    TAKE(q, heads * B * d * 2u);     /* queries, int16, a head's a block of four rows */
    TAKE(q_scale, heads * B * 4u);
    TAKE(ctx16, B * A * 2u);         /* attention context */
    TAKE(scores, B * np * 4u);       /* the block's scores, one head; then the context's weights */
    TAKE(probs, B * np);
    TAKE(y32, B * Y * 4u);           /* sublayer output + residual */
    TAKE(ln16, B * H * 2u);          /* LayerNorm output */
    TAKE(h1, B * H);                 /* attention block output */
    TAKE(h1_scale, B * 4u);
    TAKE(up16, B * I * 2u);          /* FFN intermediate */
    TAKE(tag32, dims->num_tags * 4u); /* one token's tag logits; 0 bytes without a tagger */
#undef TAKE
    p->total = off;
}

uint32_t bertl14_required_work_buffer_size(const int16_t *weights, uint32_t weights_size, uint32_t max_seq_len)
{
    bertl14_dims_t dims;
    bertl14_plan_t plan;
    if (!weights || max_seq_len == 0 || max_seq_len > BERTL14_MAX_SEQ) {
        return 0;
    }
    if (bertl14_model_parse(weights, weights_size, &dims) != BERTL14_OK || max_seq_len > dims.max_position) {
        return 0;
    }
    bertl14_plan(&dims, max_seq_len, &plan);
    return plan.total;
}

bertl14_status_t bertl14_ctx_init(bertl14_ctx_t *ctx, const bertl14_config_t *config)
{
    if (!ctx || !config) {
        return BERTL14_ERR_NULL_POINTER;
    }
    memset(ctx, 0, sizeof *ctx);
    if (!config->work_buffer_ptr || !config->weights_ptr || !config->vocab_offsets) {
        return BERTL14_ERR_NULL_POINTER;
    }
    bertl14_status_t st = bertl14_model_parse(config->weights_ptr, config->weights_size, &ctx->dims);
    if (st != BERTL14_OK) {
        return st;
    }
    if (config->max_seq_len == 0 || config->max_seq_len > BERTL14_MAX_SEQ ||
        config->max_seq_len > ctx->dims.max_position || config->vocab_size != ctx->dims.vocab_size ||
        ((uintptr_t)config->work_buffer_ptr & 3u)) {
        return BERTL14_ERR_INVALID_CONFIG;
    }
    st = bertl14_tokenizer_validate(config->vocab_offsets, config->vocab_offsets_size);
    if (st != BERTL14_OK) {
        return st;
    }
    if (bertl14_tokenizer_vocab_size(config->vocab_offsets) != ctx->dims.vocab_size) {
        return BERTL14_ERR_INVALID_CONFIG;                                     /* not this model's vocabulary */
    }
    bertl14_plan(&ctx->dims, config->max_seq_len, &ctx->plan);
    if (config->work_buffer_size < ctx->plan.total) {
        return BERTL14_ERR_BUFFER_TOO_SMALL;
    }
    ctx->config = *config;
    ctx->out_frac_bits = bertl14_model_output_frac_bits(config->weights_ptr, &ctx->dims);
    ctx->initialized = BERTL14_CTX_MAGIC;
    return BERTL14_OK;
}

/* ---- forward pass -------------------------------------------------------------------------- */

#define BUF(ctx, field, type) ((type *)(void *)((ctx)->config.work_buffer_ptr + (ctx)->plan.field))

/* y = x W^T + b of nb token rows of x (block layout, scales xs), sat16 into y16 or sat32 into y32; out_stride as
 * bertl14_linear_dims.y_stride */
static void linear(const bertl14_linear_t *lin, const int16_t *x, const uint32_t *xs, uint32_t nb, int16_t *y16,
                   int32_t *y32, uint32_t out_stride)
{
    const bertl14_linear_dims dims = {nb, lin->in, lin->out, out_stride};
    bertl14_linear(&dims, &lin->rq, x, xs, lin->w, y16, y32);
}

/* Token t's slice of head hd in a [tokens][heads * d] tensor (the projection output, the contexts). */
static inline uint32_t head_at(uint32_t t, uint32_t hd, uint32_t heads, uint32_t d) { return (t * heads + hd) * d; }

/* The attention's operands (bertl14_kernels.h, blocks of four rows), each head's after the other: the block's
 * queries (rows: the block's tokens), the keys (rows: tokens), the values transposed (rows: channels). */
enum { QUERIES, KEYS, VALUES };

/* Linear projection of nb token rows followed by row quantization per head (Q, K, V) into the attention's operands:
 * token t0 + j is row (QUERIES: column of the values) t0 + j of head hd's operand at dst + hd * (the operand's
 * size), its scale at dst_scale[hd * (B or the padded key count) + t0 + j]. */
static void project_heads(bertl14_ctx_t *ctx, const bertl14_linear_t *lin, uint32_t nb, uint32_t t0, uint32_t n,
                          int kind, int16_t *dst, uint32_t *dst_scale)
{
    const uint32_t d = ctx->dims.head_dim, heads = ctx->dims.max_heads_kept, A = heads * d;
    const uint32_t np = bertl14_attn_padded(n);
    const uint32_t size = kind == QUERIES ? BERTL14_TOKEN_BLOCK * d : kind == KEYS ? np * d : align4(d) * np;
    const uint32_t scale_stride = kind == QUERIES ? BERTL14_TOKEN_BLOCK : np;
    int16_t *q16 = BUF(ctx, q16, int16_t);
    BERTL14_STAGE(QKV);
    linear(lin, BUF(ctx, x16, int16_t), BUF(ctx, x_scale, uint32_t), nb, q16, NULL, A); /* y = x W^T + b, sat16 */
    BERTL14_STAGE(QUANT);
    int8_t *const row = BUF(ctx, q, int8_t);                                    /* free while K, V are made */
    for (uint32_t j = 0; j < nb; j++) {
        const uint32_t r = t0 + j;
        for (uint32_t hd = 0; hd < heads; hd++) {                               /* INT8 per (token, head) */
            int16_t *const base = dst + hd * size;
            const int16_t *const x = q16 + head_at(j, hd, heads, d);
            uint32_t *const s = dst_scale + hd * scale_stride + r;
            if (kind != VALUES) {                                               /* row r of a block */
                *s = bertl14_quantize_row_block_s16(x, d, NULL, base + (r & ~3u) * d, r & 3u, 4u);
                continue;
            }
            *s = bertl14_quantize_row_s16(x, d, row, NULL);
            int16_t *const col = base + (r >> 2) * 16u + (r & 3u);              /* key r of channel 0 */
            for (uint32_t c = 0; c < d; c++) {
                col[(c & ~3u) * np + 4u * (c & 3u)] = row[c];                   /* transposed */
            }
        }
    }
}

/* The largest of a head's n scales (a kernel's fast-path test). */
static uint32_t scale_max(const uint32_t *s, uint32_t n)
{
    uint32_t m = 0;
    for (uint32_t u = 0; u < n; u++) {
        m = s[u] > m ? s[u] : m;
    }
    return m;
}

/* Widen nb INT8 rows of h (with their scales) into the matmul input block (block layout). */
static void load_rows(bertl14_ctx_t *ctx, const int8_t *rows, const uint32_t *scales, uint32_t nb, uint32_t width)
{
    BERTL14_STAGE(QUANT);
    bertl14_widen_block_s8(rows, nb, width, BUF(ctx, x16, int16_t));
    memcpy(BUF(ctx, x_scale, uint32_t), scales, nb * sizeof(uint32_t));
}

/* Embeddings of n tokens -> h0 (INT8 rows); token type 0 is folded into the position table. */
static void embed(bertl14_ctx_t *ctx, const bertl14_head_t *E, const int32_t *ids, uint32_t n)
{
    const uint32_t H = ctx->dims.hidden;
    const int int4 = (ctx->dims.flags & BERTL14_FLAG_INT4) != 0;
    int8_t *h = BUF(ctx, h, int8_t);
    uint32_t *hs = BUF(ctx, h_scale, uint32_t);
    int32_t *e = BUF(ctx, y32, int32_t);
    int16_t *ln16 = BUF(ctx, ln16, int16_t);
    for (uint32_t t = 0; t < n; t++) {
        const uint32_t id = (uint32_t)ids[t];
        BERTL14_STAGE(EMBED);
        const bertl14_embedding_quant q = {E->word_scale[id], E->word_shift, E->pos_scale[t], E->pos_shift};
        if (int4) {                                                              /* e = word[id] + pos[t] */
            bertl14_embedding_s4((const uint8_t *)E->word + id * (H / 2u), E->pos + t * H, &q, H, e);
        } else {
            bertl14_embedding_s8((const int8_t *)E->word + id * H, E->pos + t * H, &q, H, e);
        }
        BERTL14_STAGE(LAYERNORM);
        bertl14_layernorm_s32(&E->ln, e, H, ln16);                                /* LN(e) */
        BERTL14_STAGE(QUANT);
        hs[t] = bertl14_quantize_row_s16(ln16, H, h + t * H, NULL);               /* h0 INT8 rows */
    }
}

static void layer_forward(bertl14_ctx_t *ctx, const bertl14_layer_t *L, uint32_t n)
{
    const uint32_t B = BERTL14_TOKEN_BLOCK, H = ctx->dims.hidden, d = ctx->dims.head_dim;
    const uint32_t heads = ctx->dims.max_heads_kept, A = heads * d, I = L->up.out, np = bertl14_attn_padded(n);
    int8_t *h = BUF(ctx, h, int8_t);
    int16_t *k = BUF(ctx, k, int16_t), *v = BUF(ctx, v, int16_t), *q = BUF(ctx, q, int16_t);
    uint32_t *hs = BUF(ctx, h_scale, uint32_t), *ks = BUF(ctx, k_scale, uint32_t), *vs = BUF(ctx, v_scale, uint32_t);
    uint32_t *kvm = BUF(ctx, kv_max, uint32_t);
    int16_t *x16 = BUF(ctx, x16, int16_t), *ctx16 = BUF(ctx, ctx16, int16_t), *ln16 = BUF(ctx, ln16, int16_t);
    int16_t *up16 = BUF(ctx, up16, int16_t);
    uint32_t *xs = BUF(ctx, x_scale, uint32_t), *qs = BUF(ctx, q_scale, uint32_t), *h1s = BUF(ctx, h1_scale, uint32_t);
    int8_t *h1 = BUF(ctx, h1, int8_t);
    int32_t *y32 = BUF(ctx, y32, int32_t), *scores = BUF(ctx, scores, int32_t);
    uint8_t *probs = BUF(ctx, probs, uint8_t);
    const bertl14_attn_params ap = {n, d, L->score_shift};
    int32_t smax[BERTL14_TOKEN_BLOCK];                                           /* the rows' largest scores */

    for (uint32_t t0 = 0; t0 < n; t0 += B) {                                      /* K, V of every token */
        const uint32_t nb = n - t0 < B ? n - t0 : B;
        load_rows(ctx, h + t0 * H, hs + t0, nb, H);
        project_heads(ctx, &L->k, nb, t0, n, KEYS, k, ks);                        /* k = h Wk^T + bk */
        project_heads(ctx, &L->v, nb, t0, n, VALUES, v, vs);                      /* v = h Wv^T + bv, v^T */
    }
    for (uint32_t hd = 0; hd < heads; hd++) {
        kvm[hd] = scale_max(ks + hd * np, n);
        kvm[heads + hd] = scale_max(vs + hd * np, n);
        memset(vs + hd * np + n, 0, (np - n) * sizeof(uint32_t));                /* the padded keys weigh 0 */
    }
    for (uint32_t t0 = 0; t0 < n; t0 += B) {                                      /* then a block of queries */
        const uint32_t nb = n - t0 < B ? n - t0 : B;
        load_rows(ctx, h + t0 * H, hs + t0, nb, H);
        project_heads(ctx, &L->q, nb, 0, n, QUERIES, q, qs);                      /* q = h Wq^T + bq, 1/sqrt(d) in */
        for (uint32_t hd = 0; hd < heads; hd++) {                                 /* one head, the block's rows */
            BERTL14_STAGE(SCORES);
            bertl14_attn_scores_s8(&ap, q + hd * B * d, qs + hd * B, nb, k + hd * np * d, ks + hd * np, kvm[hd],
                                   scores, smax);                                 /* x = q.k */
            BERTL14_STAGE(SOFTMAX);
            for (uint32_t j = 0; j < nb; j++) {
                bertl14_softmax_s32(scores + j * np, n, smax[j], probs + j * np); /* p = softmax(x) */
            }
            BERTL14_STAGE(CONTEXT);
            bertl14_attn_context_s8(&ap, probs, nb, v + hd * align4(d) * np, vs + hd * np, kvm[heads + hd],
                                    (int16_t *)(void *)scores, ctx16 + hd * d, A); /* c = sum_u p_u v_u */
        }
        BERTL14_STAGE(QUANT);
        for (uint32_t j = 0; j < nb; j++) {
            xs[j] = bertl14_quantize_row_block_s16(ctx16 + j * A, A, NULL, x16, j, nb); /* INT8 context row */
        }
        BERTL14_STAGE(ATTN_OUT);
        linear(&L->o, x16, xs, nb, NULL, y32, H);                                 /* a = c Wo^T + bo */
        for (uint32_t j = 0; j < nb; j++) {
            BERTL14_STAGE(LAYERNORM);
            bertl14_residual_s8(&L->res1, y32 + j * H, h + (t0 + j) * H, hs[t0 + j], H); /* r = a + h */
            bertl14_layernorm_s32(&L->ln1, y32 + j * H, H, ln16 + j * H);         /* h1 = LN1(r) */
            BERTL14_STAGE(QUANT);
            h1s[j] = bertl14_quantize_row_block_s16(ln16 + j * H, H, h1 + j * H, x16, j, nb); /* INT8 h1 rows */
        }
        BERTL14_STAGE(FFN_UP);
        linear(&L->up, x16, h1s, nb, up16, NULL, 0);                              /* u = h1 Wi^T + bi (block layout) */
        BERTL14_STAGE(GELU);
        bertl14_gelu_quantize_block_s16(up16, L->gelu_ism, I, nb, L->f_up, xs);   /* g' = GELU(u) / sm, INT8 in place */
        BERTL14_STAGE(FFN_DOWN);
        linear(&L->down, up16, xs, nb, NULL, y32, H);                             /* f = g Wo2^T + bo2 */
        for (uint32_t j = 0; j < nb; j++) {
            BERTL14_STAGE(LAYERNORM);
            bertl14_residual_s8(&L->res2, y32 + j * H, h1 + j * H, h1s[j], H);    /* r = f + h1 */
            bertl14_layernorm_s32(&L->ln2, y32 + j * H, H, ln16 + j * H);         /* h = LN2(r) */
            BERTL14_STAGE(QUANT);
            hs[t0 + j] = bertl14_quantize_row_s16(ln16 + j * H, H, h + (t0 + j) * H, NULL); /* in place */
        }
    }
}

bertl14_status_t bertl14_ctx_encode(bertl14_ctx_t *ctx, const int32_t *input_ids, uint32_t seq_len,
                                    bertl14_tensor_t *output)
{
    if (!ctx || !input_ids || !output) {
        return BERTL14_ERR_NULL_POINTER;
    }
    if (ctx->initialized != BERTL14_CTX_MAGIC) {
        return BERTL14_ERR_NOT_INITIALIZED;
    }
    if (seq_len == 0 || seq_len > ctx->config.max_seq_len) {
        return BERTL14_ERR_INVALID_SEQ_LEN;
    }
    for (uint32_t t = 0; t < seq_len; t++) {
        if (input_ids[t] < 0 || (uint32_t)input_ids[t] >= ctx->dims.vocab_size) {
            return BERTL14_ERR_INVALID_TOKEN;
        }
    }
    ctx->seq_len = 0;
    bertl14_head_t head;
    bertl14_model_head(ctx->config.weights_ptr, &ctx->dims, &head);
    embed(ctx, &head, input_ids, seq_len);                                        /* h0 = LN(word + pos) */
    for (uint32_t l = 0; l < ctx->dims.num_layers; l++) {                         /* h = layer_l(h) */
        bertl14_layer_t layer;
        bertl14_model_layer(ctx->config.weights_ptr, &ctx->dims, l, &layer);
        layer_forward(ctx, &layer, seq_len);
    }
    BERTL14_STAGE(OTHER);
    ctx->seq_len = seq_len;
    output->data_ptr = BUF(ctx, h, int8_t);                                       /* [CLS] row */
    output->dims[0] = 1;
    output->dims[1] = 1;
    output->dims[2] = ctx->dims.hidden;
    output->dims[3] = 1;
    output->dtype = BERTL14_INT8;
    return BERTL14_OK;
}

bertl14_status_t bertl14_ctx_get_last_hidden_state(const bertl14_ctx_t *ctx, bertl14_tensor_t *output)
{
    if (!ctx || !output) {
        return BERTL14_ERR_NULL_POINTER;
    }
    if (ctx->initialized != BERTL14_CTX_MAGIC || ctx->seq_len == 0) {
        return BERTL14_ERR_NOT_INITIALIZED;
    }
    output->data_ptr = ctx->config.work_buffer_ptr + ctx->plan.h;
    output->dims[0] = 1;
    output->dims[1] = ctx->seq_len;
    output->dims[2] = ctx->dims.hidden;
    output->dims[3] = 1;
    output->dtype = BERTL14_INT8;
    return BERTL14_OK;
}

bertl14_status_t bertl14_ctx_output_scale(const bertl14_ctx_t *ctx, uint32_t token, uint32_t *scale, int32_t *frac_bits)
{
    if (!ctx || !scale || !frac_bits) {
        return BERTL14_ERR_NULL_POINTER;
    }
    if (ctx->initialized != BERTL14_CTX_MAGIC || ctx->seq_len == 0) {
        return BERTL14_ERR_NOT_INITIALIZED;
    }
    if (token >= ctx->seq_len) {
        return BERTL14_ERR_INVALID_SEQ_LEN;
    }
    *scale = bertl14_ld32(ctx->config.work_buffer_ptr + ctx->plan.h_scale + 4u * token);
    *frac_bits = ctx->out_frac_bits;
    return BERTL14_OK;
}

bertl14_status_t bertl14_ctx_dims(const bertl14_ctx_t *ctx, bertl14_dims_t *dims)
{
    if (!ctx || !dims) {
        return BERTL14_ERR_NULL_POINTER;
    }
    if (ctx->initialized != BERTL14_CTX_MAGIC) {
        return BERTL14_ERR_NOT_INITIALIZED;
    }
    *dims = ctx->dims;
    return BERTL14_OK;
}

/* ---- heads: pooler + classifier on [CLS], token classifier on every row ------------------- */

/* Checks of the head calls; fills head. The heads read the output rows h and never write them. */
BERTL14_NOINLINE static bertl14_status_t head_ready(const bertl14_ctx_t *ctx, bertl14_head_t *head,
                                                    uint32_t present, bertl14_status_t absent)
{
    if (ctx->initialized != BERTL14_CTX_MAGIC || ctx->seq_len == 0) {
        return BERTL14_ERR_NOT_INITIALIZED;
    }
    bertl14_model_head(ctx->config.weights_ptr, &ctx->dims, head);
    return present ? BERTL14_OK : absent;
}

/* y = lin(output row t) (sat32): the row widened into x16 with its scale */
static void row_linear(bertl14_ctx_t *ctx, uint32_t t, const bertl14_linear_t *lin, int32_t *y)
{
    const uint32_t H = ctx->dims.hidden;
    load_rows(ctx, BUF(ctx, h, int8_t) + t * H, BUF(ctx, h_scale, uint32_t) + t, 1, H);
    BERTL14_STAGE(CLASSIFIER);
    linear(lin, BUF(ctx, x16, int16_t), BUF(ctx, x_scale, uint32_t), 1, NULL, y, lin->out);
}

static uint32_t first_argmax(const int32_t *y, uint32_t n)
{
    uint32_t best = 0;
    for (uint32_t c = 1; c < n; c++) {
        best = y[c] > y[best] ? c : best;
    }
    return best;
}

bertl14_status_t bertl14_ctx_classify(bertl14_ctx_t *ctx, bertl14_classification_t *result)
{
    if (!ctx || !result) {
        return BERTL14_ERR_NULL_POINTER;
    }
    bertl14_head_t head;
    bertl14_status_t st = head_ready(ctx, &head, ctx->dims.flags & BERTL14_FLAG_CLASSIFIER,
                                     BERTL14_ERR_NO_CLASSIFIER);
    if (st != BERTL14_OK) {
        return st;
    }
    const uint32_t H = ctx->dims.hidden, C = ctx->dims.num_labels;
    int16_t *x16 = BUF(ctx, x16, int16_t), *ln16 = BUF(ctx, ln16, int16_t);
    uint32_t *xs = BUF(ctx, x_scale, uint32_t);
    int32_t *y32 = BUF(ctx, y32, int32_t);
    row_linear(ctx, 0, &head.pooler, y32);                                        /* z = cls Wp^T + bp (Q12) */
    for (uint32_t c = 0; c < H; c++) {
        ln16[c] = (int16_t)bertl14_sat16(bertl14_tanh_q12(y32[c]));             /* pooled = tanh(z) (Q15) */
    }
    xs[0] = bertl14_quantize_row_s16(ln16, H, NULL, x16);                          /* INT8 pooled row */
    linear(&head.classifier, x16, xs, 1, NULL, y32, C);                          /* logits (Q10) */
    st = bertl14_classify_allowed(y32, C, NULL, result);                          /* argmax, its softmax (Q16) */
    BERTL14_STAGE(OTHER);
    return st;
}

/* Tag logits of output row `token` in the tagger's own region, so a classification's logits stay valid */
bertl14_status_t bertl14_ctx_tag_logits(bertl14_ctx_t *ctx, uint32_t token, const int32_t **logits)
{
    if (!ctx || !logits) {
        return BERTL14_ERR_NULL_POINTER;
    }
    bertl14_head_t head;
    bertl14_status_t st = head_ready(ctx, &head, ctx->dims.num_tags, BERTL14_ERR_NO_TAGGER);
    if (st == BERTL14_OK && token >= ctx->seq_len) {
        st = BERTL14_ERR_INVALID_SEQ_LEN;
    }
    if (st == BERTL14_OK) {
        *logits = BUF(ctx, tag32, int32_t);
        row_linear(ctx, token, &head.tagger, BUF(ctx, tag32, int32_t));          /* logits = h_t Wt^T + bt (Q10) */
    }
    return st;
}

bertl14_status_t bertl14_ctx_tag(bertl14_ctx_t *ctx, uint8_t *tags, uint32_t max_tokens, uint32_t *count)
{
    bertl14_head_t head;
    bertl14_status_t st = !ctx || !tags || !count ? BERTL14_ERR_NULL_POINTER
                                                : head_ready(ctx, &head, ctx->dims.num_tags, BERTL14_ERR_NO_TAGGER);
    if (st != BERTL14_OK) {
        return st;                                                                /* no tagger, nothing encoded */
    }
    const uint32_t H = ctx->dims.hidden, T = ctx->dims.num_tags, n = ctx->seq_len < max_tokens ? ctx->seq_len : max_tokens;
    /* a block of tokens a weight load (the linear kernel's fast form): their logits in the FFN's region, free
     * after encoding, when they fit (else one token at a time in the tagger's own) */
    const uint32_t B = T * 4u <= ctx->dims.intermediate * 2u ? BERTL14_TOKEN_BLOCK : 1u;
    int32_t *y = B > 1u ? BUF(ctx, up16, int32_t) : BUF(ctx, tag32, int32_t);
    for (uint32_t t0 = 0; t0 < n; t0 += B) {
        const uint32_t nb = n - t0 < B ? n - t0 : B;
        load_rows(ctx, BUF(ctx, h, int8_t) + t0 * H, BUF(ctx, h_scale, uint32_t) + t0, nb, H);
        BERTL14_STAGE(CLASSIFIER);
        linear(&head.tagger, BUF(ctx, x16, int16_t), BUF(ctx, x_scale, uint32_t), nb, NULL, y, T); /* h_t Wt^T + bt */
        for (uint32_t j = 0; j < nb; j++) {
            tags[t0 + j] = (uint8_t)first_argmax(y + j * T, T);                  /* first argmax */
        }
    }
    BERTL14_STAGE(OTHER);
    *count = n;
    return n < ctx->seq_len ? BERTL14_ERR_TOKEN_OVERFLOW : BERTL14_OK;
}

/* name idx of the labels (tags = 0) or the tags: NUL-terminated strings back to back in the blob */
BERTL14_NOINLINE static const char *name_at(const bertl14_ctx_t *ctx, uint32_t idx, int tags)
{
    if (!ctx || ctx->initialized != BERTL14_CTX_MAGIC || idx >= (tags ? ctx->dims.num_tags : ctx->dims.num_labels)) {
        return "";
    }
    bertl14_head_t head;
    bertl14_model_head(ctx->config.weights_ptr, &ctx->dims, &head);
    const char *s = tags ? head.tags : head.labels;
    while (idx--) {
        while (*s++) {
        }
    }
    return s;
}

const char *bertl14_ctx_label_name(const bertl14_ctx_t *ctx, uint32_t idx) { return name_at(ctx, idx, 0); }

const char *bertl14_ctx_tag_name(const bertl14_ctx_t *ctx, uint32_t idx) { return name_at(ctx, idx, 1); }
