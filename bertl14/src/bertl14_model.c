/* Reading the weights blob (docs/model-format.md, version 1): header check and section lookup.
 * Nothing is copied: every tensor is a pointer into the caller's (flash) array. */
/* Cold code (setup, parsing, the tokenizer: a few thousand instructions a sentence) is compiled for
 * size so the kernels' speed fits the core library's 16 KB budget (tests/lib/test_footprint.py). */
#if defined(__GNUC__) && !defined(__clang__)
#pragma GCC optimize("Os")
#endif
#include <string.h>

#include "bertl14_internal.h"

#define MAGIC 0x34314C42u /* "BL14" */
#define HEADER_WORDS 16u
#define GLOBAL_SECTIONS 7u
#define LAYER_SECTIONS 32u
#define TAIL_SECTIONS 9u
#define TAGGER_SECTIONS 5u /* optional, after the tail: token classifier w, mult, shift, bias, tag names */

static uint32_t word(const int16_t *blob, uint32_t i)
{
    uint32_t v;
    memcpy(&v, (const uint8_t *)blob + 4u * i, sizeof v);
    return v;
}

/* byte offset and size of section s */
static const void *section(const int16_t *blob, uint32_t s, uint32_t *size)
{
    const uint32_t table = word(blob, 14) / 4u;
    if (size) {
        *size = word(blob, table + 2u * s + 1u);
    }
    return (const uint8_t *)blob + word(blob, table + 2u * s);
}

static const int32_t *params(const int16_t *blob, uint32_t s) { return (const int32_t *)section(blob, s, NULL); }

/* section s holds exactly n NUL-terminated names (the name lookups walk them) */
static int names_ok(const int16_t *blob, uint32_t s, uint32_t n)
{
    uint32_t size, nuls = 0;
    const char *names = (const char *)section(blob, s, &size);
    for (uint32_t i = 0; i < size; i++) {
        nuls += names[i] == 0;
    }
    return nuls == n && (size == 0 || names[size - 1u] == 0);
}

bertl14_status_t bertl14_model_parse(const int16_t *weights, bertl14_dims_t *dims)
{
    if (!weights || !dims) {
        return BERTL14_ERR_NULL_POINTER;
    }
    if (((uintptr_t)weights & 3u) || word(weights, 0) != MAGIC || word(weights, 1) != 1u) {
        return BERTL14_ERR_INVALID_CONFIG;
    }
    dims->num_layers = word(weights, 2);
    dims->hidden = word(weights, 3);
    dims->num_heads = word(weights, 4);
    dims->max_heads_kept = word(weights, 5);
    dims->head_dim = word(weights, 6);
    dims->intermediate = word(weights, 7);
    dims->vocab_size = word(weights, 8);
    dims->max_position = word(weights, 9);
    dims->num_labels = word(weights, 10);
    dims->flags = word(weights, 11);
    dims->num_tags = word(weights, 15);
    const uint32_t L = dims->num_layers, H = dims->hidden, A = dims->max_heads_kept, d = dims->head_dim;
    const uint32_t total = word(weights, 12), S = word(weights, 13), table = word(weights, 14), T = dims->num_tags;
    const uint32_t tail = GLOBAL_SECTIONS + LAYER_SECTIONS * L;
    if (L == 0 || L > 64 || H == 0 || H > 4096 || (H & 1u) || A == 0 || d == 0 || d > BERTL14_MAX_HEAD_DIM ||
        A * d > 4096 || dims->intermediate == 0 || dims->intermediate > 16384 || dims->vocab_size == 0 ||
        dims->max_position == 0 || dims->num_labels > 4096 || (dims->flags & ~31u) ||
        (dims->flags & BERTL14_FLAG_PER_TENSOR) ||
        ((dims->flags & BERTL14_FLAG_CLASSIFIER) != 0) != (dims->num_labels != 0) ||
        ((dims->flags & BERTL14_FLAG_TAGGER) != 0) != (T != 0) || T > BERTL14_MAX_TAGS ||
        S != tail + TAIL_SECTIONS + (T ? TAGGER_SECTIONS : 0u) || table != 64u || (total & 3u) ||
        total < table + 8u * S) {
        return BERTL14_ERR_INVALID_CONFIG; /* per-tensor activation scales: Python reference only */
    }
    for (uint32_t s = 0; s < S; s++) {      /* every section inside the blob and aligned */
        const uint32_t off = word(weights, table / 4u + 2u * s), size = word(weights, table / 4u + 2u * s + 1u);
        if ((off & 3u) || off > total || size > total - off) {
            return BERTL14_ERR_INVALID_CONFIG;
        }
    }
    if (!names_ok(weights, tail + TAIL_SECTIONS - 1u, dims->num_labels) || (T && !names_ok(weights, S - 1u, T))) {
        return BERTL14_ERR_INVALID_CONFIG;
    }
    return BERTL14_OK;
}

static void linear(const int16_t *blob, uint32_t s, uint32_t out, uint32_t in, bertl14_linear_t *lin)
{
    lin->w = (const int16_t *)section(blob, s, NULL);
    lin->rq.mult = (const int16_t *)section(blob, s + 1u, NULL);
    lin->rq.shift = (const int16_t *)section(blob, s + 2u, NULL);
    lin->rq.bias = (const int32_t *)section(blob, s + 3u, NULL);
    lin->out = out;
    lin->in = in;
}

static void layernorm(const int16_t *blob, uint32_t gamma_s, int32_t f_g, int32_t f_out, int32_t eps_q,
                      bertl14_ln_t *ln)
{
    ln->gamma = (const int16_t *)section(blob, gamma_s, NULL);
    ln->beta = (const int32_t *)section(blob, gamma_s + 1u, NULL);
    ln->eps_q = eps_q;
    ln->g_shift = 12 + f_g - f_out;
    ln->f_out = f_out;
}

/* F of the layer input h: the previous LN's f_out */
static int32_t input_frac_bits(const int16_t *blob, uint32_t l)
{
    return l == 0 ? params(blob, 4)[4] : params(blob, GLOBAL_SECTIONS + LAYER_SECTIONS * (l - 1u))[10];
}

void bertl14_model_layer(const int16_t *blob, const bertl14_dims_t *dims, uint32_t l, bertl14_layer_t *L)
{
    const uint32_t base = GLOBAL_SECTIONS + LAYER_SECTIONS * l, H = dims->hidden, I = dims->intermediate;
    const uint32_t A = dims->max_heads_kept * dims->head_dim;
    const int32_t *p = params(blob, base); /* f_q f_k f_v f_r1 f_up f_r2 ln1(f_g f_out eps) ln2(f_g f_out eps) */
    linear(blob, base + 1u, A, H, &L->q);
    linear(blob, base + 5u, A, H, &L->k);
    linear(blob, base + 9u, A, H, &L->v);
    linear(blob, base + 13u, H, A, &L->o);
    linear(blob, base + 17u, I, H, &L->up);
    linear(blob, base + 21u, H, I, &L->down);
    L->score_shift = p[0] + p[1] + 16 - 10;
    L->res1_shift = input_frac_bits(blob, l) + 8 + 12 - p[3];
    layernorm(blob, base + 25u, p[6], p[7], p[8], &L->ln1);
    L->f_up = p[4];
    L->res2_shift = p[7] + 8 + 12 - p[5];
    layernorm(blob, base + 27u, p[9], p[10], p[11], &L->ln2);
    L->res1_u = (const uint16_t *)section(blob, base + 29u, NULL);
    L->res2_u = (const uint16_t *)section(blob, base + 30u, NULL);
    L->gelu_ism = (const uint16_t *)section(blob, base + 31u, NULL);
}

void bertl14_model_head(const int16_t *blob, const bertl14_dims_t *dims, bertl14_head_t *head)
{
    const int32_t *p = params(blob, 4); /* f_e word_shift pos_shift f_g f_out eps_q */
    const uint32_t tail = GLOBAL_SECTIONS + LAYER_SECTIONS * dims->num_layers;
    head->word = section(blob, 0, NULL);
    head->word_scale = (const uint16_t *)section(blob, 1, NULL);
    head->word_shift = p[1];
    head->pos = (const int8_t *)section(blob, 2, NULL);
    head->pos_scale = (const uint16_t *)section(blob, 3, NULL);
    head->pos_shift = p[2];
    layernorm(blob, 5, p[3], p[4], p[5], &head->ln);
    linear(blob, tail, dims->hidden, dims->hidden, &head->pooler);
    linear(blob, tail + 4u, dims->num_labels, dims->hidden, &head->classifier);
    head->labels = (const char *)section(blob, tail + 8u, NULL);
    if (dims->num_tags) {
        linear(blob, tail + TAIL_SECTIONS, dims->num_tags, dims->hidden, &head->tagger);
        head->tags = (const char *)section(blob, tail + TAIL_SECTIONS + 4u, NULL);
    }
}

int32_t bertl14_model_output_frac_bits(const int16_t *blob, const bertl14_dims_t *dims)
{
    return input_frac_bits(blob, dims->num_layers);
}
