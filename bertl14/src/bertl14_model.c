/* Reading the weights blob (docs/model-format.md, version 2): the checks of every byte at init (size, checksum,
 * section table against the dimensions, parameter ranges) and section lookup. Nothing is copied: every tensor is
 * a pointer into the caller's (flash) array. */
/* Cold code: compiled for size (bertl14/sources.cmake). */
#include <string.h>

#include "bertl14_internal.h"
#include "bertl14_vocab_section.h"

#define MAGIC 0x34314C42u /* "BL14" */
#define FORMAT_VERSION 2u
#define HEADER_BYTES 64u
#define GLOBAL_SECTIONS 7u
#define LAYER_SECTIONS 32u
#define TAIL_SECTIONS 9u
#define TAGGER_SECTIONS 5u /* optional, after the tail: token classifier w, mult, shift, bias, tag names */
#define NAMES UINT64_MAX   /* section_bytes: a names section (its size is checked by names_ok) */
#define ROW_ABS_SUM_MAX 16909320u /* (2^31 - 1) / 127: 127 * sum |w| of a row stays an int32 accumulator */

static uint32_t word(const int16_t *blob, uint32_t i)
{
    return bertl14_ld32((const uint8_t *)blob + 4u * i);
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

/* the first n int32 values of a params section, copied out of the int16 blob (never read as int32 in place) */
static void params(const int16_t *blob, uint32_t s, int32_t *p, uint32_t n)
{
    memcpy(p, section(blob, s, NULL), 4u * n);
}

/* section s holds exactly n NUL-terminated UTF-8 names (the name lookups walk them) */
static int names_ok(const int16_t *blob, uint32_t s, uint32_t n)
{
    uint32_t size, i = 0, cp;
    const uint8_t *names = (const uint8_t *)section(blob, s, &size);
    if (size && names[size - 1u]) {
        return 0;
    }
    while (i < size) {                                  /* stops at each NUL: the last byte is one */
        const uint32_t len = names[i] ? bertl14_utf8_decode(names + i, &cp) : 1u;
        if (len == 0) {
            return 0;
        }
        n -= names[i] == 0;
        i += len;
    }
    return n == 0;
}

/* the six linears of a layer (q k v o i o2): out, in as indices of {H, A*d, I} */
static const uint8_t k_layer_linears[6] = {0x10, 0x10, 0x10, 0x01, 0x20, 0x02};

/* bytes of section s as the dimensions fix them (docs/model-format.md), NAMES for a names section */
static uint64_t section_bytes(const bertl14_dims_t *m, uint32_t s)
{
    const uint32_t H = m->hidden, tail = GLOBAL_SECTIONS + LAYER_SECTIONS * m->num_layers;
    const uint32_t d3[3] = {H, m->max_heads_kept * m->head_dim, m->intermediate};
    uint32_t out, in, k;
    if (s < GLOBAL_SECTIONS) {                          /* word_q (INT4: half), word_scale, pos_q, pos_scale, ... */
        const uint64_t V = m->vocab_size, P = m->max_position;
        const uint64_t g[GLOBAL_SECTIONS] = {V * H >> (m->flags & BERTL14_FLAG_INT4), 2u * V, P * H, 2u * P, 32u,
                                             2u * H, 4u * H};
        return g[s];
    }
    if (s < tail) {
        k = (s - GLOBAL_SECTIONS) % LAYER_SECTIONS;
        if (k == 0) {
            return 64u;                                 /* params */
        }
        if (k >= 25u) {                                 /* ln1_gamma ln1_beta ln2_gamma ln2_beta res1_u res2_u gelu_ism */
            return (k == 26u || k == 28u ? 4u : 2u) * (k == 31u ? d3[2] : H);
        }
        out = d3[k_layer_linears[(k - 1u) / 4u] >> 4];
        in = d3[k_layer_linears[(k - 1u) / 4u] & 15u];
        k = (k - 1u) % 4u;
    } else {
        k = s - tail;                                   /* pooler, classifier, labels, tagger, tags */
        if (k == 8u || k == 13u) {
            return NAMES;
        }
        out = k < 4u ? (m->num_labels ? H : 0u) : (k < 8u ? m->num_labels : m->num_tags);
        in = H;
        k = (k - (k > 8u)) % 4u;
    }
    return k == 0 ? (uint64_t)sizeof(bertl14_weight_t) * out * in : (k == 3u ? 4u : 2u) * (uint64_t)out; /* w, mult, shift, bias */
}

/* out rows of linear section s: mult in [2^14, 2^15), shift in [1, 62], 127 * sum |w| < 2^31 */
static int linear_ok(const int16_t *blob, uint32_t s, uint32_t out, uint32_t in)
{
    const bertl14_weight_t *w = (const bertl14_weight_t *)section(blob, s, NULL);
    const int16_t *mult = (const int16_t *)section(blob, s + 1u, NULL), *shift = (const int16_t *)section(blob, s + 2u, NULL);
    for (uint32_t o = 0; o < out; o++, w += in) {
        uint32_t sum = 0;
        for (uint32_t i = 0; i < in; i++) {
            sum += (uint32_t)(w[i] < 0 ? -w[i] : w[i]);  /* <= 16384 * 32768: no wrap */
        }
        if (mult[o] < (1 << 14) || shift[o] < 1 || shift[o] > 62 || sum > ROW_ABS_SUM_MAX) {
            return 0;
        }
    }
    return 1;
}

/* n uint16 factors of section s in 1..65535 (smoothing: 4096 is the identity) */
static int factors_ok(const int16_t *blob, uint32_t s, uint32_t n)
{
    const uint16_t *u = (const uint16_t *)section(blob, s, NULL);
    for (uint32_t i = 0; i < n; i++) {
        if (u[i] == 0) {
            return 0;
        }
    }
    return 1;
}

static int in_range(int32_t v, int32_t lo, int32_t hi) { return v >= lo && v <= hi; }

/* exponents of a LayerNorm (f_g, f_out, eps_q at p): g_shift = BERTL14_UNIT_BITS + f_g - f_out for the kernel */
static int ln_ok(const int32_t *p)
{
    return in_range(p[0], -31, 31) && in_range(p[1], -31, 31) && in_range(BERTL14_UNIT_BITS + p[0] - p[1], -3, 62) && p[2] >= 1;
}

/* parameters of the kernels' proven ranges (docs/model-format.md, "Checks", ranges) */
static int params_ok(const int16_t *blob, const bertl14_dims_t *m)
{
    const uint32_t H = m->hidden, tail = GLOBAL_SECTIONS + LAYER_SECTIONS * m->num_layers;
    const uint32_t d3[3] = {H, m->max_heads_kept * m->head_dim, m->intermediate};
    int32_t e[6], p[12];
    params(blob, 4, e, 6);                              /* f_e word_shift pos_shift f_g f_out eps_q */
    int32_t f_h = e[4];
    if (!in_range(e[0], -31, 31) || !in_range(e[1], -7, 62) || !in_range(e[2], -7, 62) || !ln_ok(e + 3)) {
        return 0;
    }
    for (uint32_t l = 0; l < m->num_layers; l++) {
        const uint32_t b = GLOBAL_SECTIONS + LAYER_SECTIONS * l;
        params(blob, b, p, 12);                         /* f_q f_k f_v f_r1 f_up f_r2 ln1(f_g f_out eps) ln2(...) */
        for (uint32_t i = 0; i < 6u; i++) {
            if (!in_range(p[i], -31, 31) || !linear_ok(blob, b + 1u + 4u * i, d3[k_layer_linears[i] >> 4],
                                                       d3[k_layer_linears[i] & 15u]) ||
                (i < 3u && !factors_ok(blob, b + 29u + i, i == 2u ? d3[2] : H))) {
                return 0;
            }
        }
        if (!in_range(p[0] + p[1] + 6, -7, 62) || !in_range(f_h + 20 - p[3], -22, 62) || !in_range(p[4], 0, 12) ||
            !ln_ok(p + 6) || !in_range(p[7] + 20 - p[5], -22, 62) || !ln_ok(p + 9)) {
            return 0;
        }
        f_h = p[10];
    }
    return linear_ok(blob, tail, m->num_labels ? H : 0u, H) && linear_ok(blob, tail + 4u, m->num_labels, H) &&
           (!m->num_tags || linear_ok(blob, tail + TAIL_SECTIONS, m->num_tags, H));
}

bertl14_status_t bertl14_model_parse(const int16_t *weights, uint32_t size, bertl14_dims_t *dims)
{
    if (!weights || !dims) {
        return BERTL14_ERR_NULL_POINTER;
    }
    if (size < HEADER_BYTES) {
        return BERTL14_ERR_MODEL_SIZE;                  /* not even a header */
    }
    if (((uintptr_t)weights & 3u) || word(weights, 0) != MAGIC || word(weights, 1) != FORMAT_VERSION) {
        return BERTL14_ERR_MODEL_FORMAT;
    }
    const uint32_t total = word(weights, 12), words = size / 4u;
    if (total != size || (size & 3u)) {
        return BERTL14_ERR_MODEL_SIZE;                  /* truncated, extended, or another array's size */
    }
    dims->flags = word(weights, 11);
    if ((dims->flags & ~63u) || (dims->flags & BERTL14_FLAG_PER_TENSOR)) {
        return BERTL14_ERR_MODEL_FORMAT;                /* per-tensor activation scales: Python reference only */
    }
    if ((dims->flags & BERTL14_FLAG_WEIGHTS_INT8) != BERTL14_WEIGHT_FLAG) {
        return BERTL14_ERR_MODEL_FORMAT;                /* INT8 weights and an INT16 library, or the other way */
    }
    uint32_t sum = 0;
    for (uint32_t i = 0; i + 1u < words; i++) {
        sum += word(weights, i);
    }
    if (sum != word(weights, words - 1u)) {
        return BERTL14_ERR_MODEL_CORRUPT;               /* the last word is the sum of all the others */
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
    dims->num_tags = word(weights, 15);
    const uint32_t L = dims->num_layers, H = dims->hidden, A = dims->max_heads_kept, d = dims->head_dim;
    const uint32_t S = word(weights, 13), table = word(weights, 14), T = dims->num_tags;
    if (L == 0 || L > 64 || H < 2 || H > 4096 || (H & 1u) || d == 0 || d > BERTL14_MAX_HEAD_DIM || A == 0 ||
        A > 4096u / d || A > dims->num_heads || dims->intermediate == 0 || dims->intermediate > 16384 ||
        dims->vocab_size == 0 || dims->vocab_size > 0x7FFFFFFFu || dims->max_position == 0 ||
        dims->num_labels > 4096 || T > BERTL14_MAX_TAGS) {
        return BERTL14_ERR_MODEL_RANGE;
    }
    const uint32_t tail = GLOBAL_SECTIONS + LAYER_SECTIONS * L;
    if (((dims->flags & BERTL14_FLAG_CLASSIFIER) != 0) != (dims->num_labels != 0) ||
        ((dims->flags & BERTL14_FLAG_TAGGER) != 0) != (T != 0) ||
        S != tail + TAIL_SECTIONS + (T ? TAGGER_SECTIONS : 0u) || table != HEADER_BYTES || table + 8u * S > size - 4u) {
        return BERTL14_ERR_MODEL_LAYOUT;
    }
    uint32_t end = table + 8u * S;                      /* sections in table order, after the table, before the checksum */
    for (uint32_t s = 0; s < S; s++) {
        const uint32_t off = word(weights, table / 4u + 2u * s), bytes = word(weights, table / 4u + 2u * s + 1u);
        const uint64_t need = section_bytes(dims, s);
        if ((off & 3u) || off < end || off > size - 4u || bytes > size - 4u - off || (need != NAMES && bytes != need)) {
            return BERTL14_ERR_MODEL_LAYOUT;
        }
        end = off + bytes;
    }
    if (!names_ok(weights, tail + TAIL_SECTIONS - 1u, dims->num_labels) || (T && !names_ok(weights, S - 1u, T))) {
        return BERTL14_ERR_MODEL_LAYOUT;
    }
    return params_ok(weights, dims) ? BERTL14_OK : BERTL14_ERR_MODEL_RANGE;
}

static void linear(const int16_t *blob, uint32_t s, uint32_t out, uint32_t in, bertl14_linear_t *lin)
{
    lin->w = (const bertl14_weight_t *)section(blob, s, NULL);
    lin->rq.mult = (const int16_t *)section(blob, s + 1u, NULL);
    lin->rq.shift = (const int16_t *)section(blob, s + 2u, NULL);
    lin->rq.bias = (const int32_t *)section(blob, s + 3u, NULL);
    lin->out = out;
    lin->in = in;
}

static void layernorm(const int16_t *blob, uint32_t gamma_s, int32_t f_g, int32_t f_out, int32_t eps_q,
                      bertl14_layernorm_params *ln)
{
    ln->gamma = (const int16_t *)section(blob, gamma_s, NULL);
    ln->beta = (const int32_t *)section(blob, gamma_s + 1u, NULL);
    ln->eps_q = eps_q;
    ln->g_shift = BERTL14_UNIT_BITS + f_g - f_out;                      /* Q12 normalized row * gamma -> Q(f_out) */
    ln->f_out = f_out;
}

/* F of the layer input h: the previous LN's f_out */
static int32_t input_frac_bits(const int16_t *blob, uint32_t l)
{
    int32_t p[11];
    if (l == 0) {
        params(blob, 4, p, 5);                          /* f_out of the embedding LayerNorm */
        return p[4];
    }
    params(blob, GLOBAL_SECTIONS + LAYER_SECTIONS * (l - 1u), p, 11);
    return p[10];
}

void bertl14_model_layer(const int16_t *blob, const bertl14_dims_t *dims, uint32_t l, bertl14_layer_t *L)
{
    const uint32_t base = GLOBAL_SECTIONS + LAYER_SECTIONS * l, H = dims->hidden, I = dims->intermediate;
    const uint32_t A = dims->max_heads_kept * dims->head_dim;
    int32_t p[12];
    params(blob, base, p, 12);             /* f_q f_k f_v f_r1 f_up f_r2 ln1(f_g f_out eps) ln2(f_g f_out eps) */
    linear(blob, base + 1u, A, H, &L->q);
    linear(blob, base + 5u, A, H, &L->k);
    linear(blob, base + 9u, A, H, &L->v);
    linear(blob, base + 13u, H, A, &L->o);
    linear(blob, base + 17u, I, H, &L->up);
    linear(blob, base + 21u, H, I, &L->down);
    L->score_shift = p[0] + BERTL14_ROW_SCALE_BITS + p[1] + BERTL14_ROW_SCALE_BITS - BERTL14_F_SM; /* q.k -> Q(F_SM) */
    L->res1.shift = input_frac_bits(blob, l) + BERTL14_ROW_SCALE_BITS + BERTL14_UNIT_BITS - p[3]; /* h * s_h * u */
    layernorm(blob, base + 25u, p[6], p[7], p[8], &L->ln1);
    L->f_up = p[4];
    L->res2.shift = p[7] + BERTL14_ROW_SCALE_BITS + BERTL14_UNIT_BITS - p[5];     /* h1 * s_h1 * u -> Q(f_r2) */
    layernorm(blob, base + 27u, p[9], p[10], p[11], &L->ln2);
    L->res1.u = (const uint16_t *)section(blob, base + 29u, NULL);
    L->res2.u = (const uint16_t *)section(blob, base + 30u, NULL);
    L->gelu_ism = (const uint16_t *)section(blob, base + 31u, NULL);
}

void bertl14_model_head(const int16_t *blob, const bertl14_dims_t *dims, bertl14_head_t *head)
{
    int32_t p[6];
    params(blob, 4, p, 6);              /* f_e word_shift pos_shift f_g f_out eps_q */
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
