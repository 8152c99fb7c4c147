/* float32 BERT as users write it first: every layer has its own activation buffers (static, sized
 * for FM_MAX_SEQ tokens), the full attention matrix of every head, libm's expf/tanhf/sqrtf.
 * The weights are the unquantized model's (float_model.c, written by `bertl14 bench`). */
#include <math.h>
#include <string.h>

#include "float_model.h"
#include "naive_bert.h"

#define N FM_MAX_SEQ
#define H FM_HIDDEN
#define A (FM_HEADS * FM_HEAD_DIM)
#define I FM_INTERMEDIATE

typedef struct {
    float q[N][A], k[N][A], v[N][A];
    float scores[FM_HEADS][N][N];
    float ctx[N][A], attn[N][H], h1[N][H], ffn[N][I], out[N][H];
} layer_buffers_t;

static float emb[N][H];
static layer_buffers_t buf[FM_LAYERS];
static float pooled[H];

static void layernorm(float *x, const float *g, const float *b)
{
    float mu = 0.f, var = 0.f;
    for (int c = 0; c < H; c++) {
        mu += x[c];
    }
    mu /= H;
    for (int c = 0; c < H; c++) {
        var += (x[c] - mu) * (x[c] - mu);
    }
    const float inv = 1.f / sqrtf(var / H + FM_LN_EPS);
    for (int c = 0; c < H; c++) {
        x[c] = (x[c] - mu) * inv * g[c] + b[c];
    }
}

static void linear(const float *x, const float *w, const float *b, int in, int out, float *y)
{
    for (int o = 0; o < out; o++) {
        float acc = b[o];
        for (int i = 0; i < in; i++) {
            acc += x[i] * w[o * in + i];
        }
        y[o] = acc;
    }
}

uint32_t naive_bert(const int32_t *ids, uint32_t n, float *logits)
{
    for (uint32_t t = 0; t < n; t++) {                                 /* embeddings + LN */
        for (int c = 0; c < H; c++) {
            emb[t][c] = fm_word[ids[t] * H + c] + fm_pos[t * H + c] + fm_type0[c];
        }
        layernorm(emb[t], fm_emb_ln_g, fm_emb_ln_b);
    }
    const float scale = 1.f / sqrtf((float)FM_HEAD_DIM);
    float (*x)[H] = emb;
    for (int l = 0; l < FM_LAYERS; l++) {
        const fm_layer_t *L = &fm_layers[l];
        layer_buffers_t *B = &buf[l];
        for (uint32_t t = 0; t < n; t++) {                             /* Q, K, V */
            linear(x[t], L->wq, L->bq, H, A, B->q[t]);
            linear(x[t], L->wk, L->bk, H, A, B->k[t]);
            linear(x[t], L->wv, L->bv, H, A, B->v[t]);
        }
        for (int hd = 0; hd < FM_HEADS; hd++) {                        /* softmax(q k^T / sqrt(d)) v */
            for (uint32_t t = 0; t < n; t++) {
                float mx = -1e30f, sum = 0.f;
                for (uint32_t u = 0; u < n; u++) {
                    float s = 0.f;
                    for (int d = 0; d < FM_HEAD_DIM; d++) {
                        s += B->q[t][hd * FM_HEAD_DIM + d] * B->k[u][hd * FM_HEAD_DIM + d];
                    }
                    B->scores[hd][t][u] = s * scale;
                    mx = s * scale > mx ? s * scale : mx;
                }
                for (uint32_t u = 0; u < n; u++) {
                    B->scores[hd][t][u] = expf(B->scores[hd][t][u] - mx);
                    sum += B->scores[hd][t][u];
                }
                for (int d = 0; d < FM_HEAD_DIM; d++) {
                    float c = 0.f;
                    for (uint32_t u = 0; u < n; u++) {
                        c += B->scores[hd][t][u] * B->v[u][hd * FM_HEAD_DIM + d];
                    }
                    B->ctx[t][hd * FM_HEAD_DIM + d] = c / sum;
                }
            }
        }
        for (uint32_t t = 0; t < n; t++) {
            linear(B->ctx[t], L->wo, L->bo, A, H, B->attn[t]);          /* output projection + residual + LN */
            for (int c = 0; c < H; c++) {
                B->h1[t][c] = B->attn[t][c] + x[t][c];
            }
            layernorm(B->h1[t], L->ln1_g, L->ln1_b);
            linear(B->h1[t], L->wi, L->bi, H, I, B->ffn[t]);           /* FFN with tanh GELU */
            for (int c = 0; c < I; c++) {
                const float u = B->ffn[t][c];
                B->ffn[t][c] = 0.5f * u * (1.f + tanhf(0.7978845608f * (u + 0.044715f * u * u * u)));
            }
            linear(B->ffn[t], L->wo2, L->bo2, I, H, B->out[t]);
            for (int c = 0; c < H; c++) {
                B->out[t][c] += B->h1[t][c];
            }
            layernorm(B->out[t], L->ln2_g, L->ln2_b);
        }
        x = B->out;
    }
#if FM_LABELS > 0
    linear(x[0], fm_pooler_w, fm_pooler_b, H, H, pooled);              /* pooler + classifier */
    for (int c = 0; c < H; c++) {
        pooled[c] = tanhf(pooled[c]);
    }
    linear(pooled, fm_cls_w, fm_cls_b, H, FM_LABELS, logits);
#else
    (void)logits;
#endif
    return (uint32_t)(sizeof emb + sizeof buf + sizeof pooled);
}
