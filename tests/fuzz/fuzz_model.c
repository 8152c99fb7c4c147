/*
 * Fuzz target `model`: mutated weights blobs and vocabulary sections through bertl14_init and inference. Each input
 * edits one of two valid models (gen_fuzz_data.py: 2 layers, INT8 embedding, both heads and smoothing; 1 layer, INT4
 * embedding, 3 of 4 heads, no heads; their linear weights INT16, or INT8 when the library is built with BERTL14_WEIGHTS_INT8) and
 * their vocabulary section (fuzz_vocab_m, every table filled), copies both into heap buffers of exactly their (changed) sizes
 * and passes those sizes, so a read past the data is an AddressSanitizer report. Whatever init accepts must then
 * tokenize, encode, classify and tag without a sanitizer report; any broken invariant calls abort().
 *
 * Input: byte 0 mode, byte 1 weights size change, byte 2 vocabulary size change, byte 3 max_seq_len, then edits of
 * 8 bytes: region, index (uint16), operation, value (uint32), all little-endian.
 *   mode bit 0: model 1 instead of model 0       bit 1: recompute the weights checksum after the edits
 *   bit 2: recompute the vocabulary checksum      bit 3: change the weights size by size_change(byte 1) words
 *   (bit 6: by (int8)byte1 bytes)   bit 4: change the vocabulary size by size_change(byte 2) words
 *   bit 5: write the new size into the blob's header (then it agrees with its size: the later checks run)
 *   bit 7: also encode raw ids read from the edits' bytes
 *   region & 7: 0 a header or section table word, 1 a word of emb_params or of a layer's params, 2 an element of a
 *   mult or shift array, 3 any weights word, 4 any weights byte, 5 a vocabulary header word, 6 any vocabulary word,
 *   7 a vocabulary piece entry (start or continuation table)
 *   operation & 3: 0 set, 1 xor, 2 add, 3 set to the sign-extended low byte
 */
#include <stddef.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "bertl14.h"
#include "fuzz_check.h"

#if defined(BERTL14_WEIGHTS_INT8)             /* the library built for INT8 weights runs the INT8 twins */
#define fuzz_model0 fuzz_model0_w8
#define fuzz_model1 fuzz_model1_w8
#define fuzz_model0_size fuzz_model0_w8_size
#define fuzz_model1_size fuzz_model1_w8_size
#endif
extern const int16_t fuzz_model0[], fuzz_model1[];
extern const uint32_t fuzz_model0_size, fuzz_model1_size;
extern const uint32_t fuzz_vocab_m[];
extern const uint32_t fuzz_vocab_m_size;
extern const int fuzz_have_model;

unsigned long long fuzz_deep_runs;           /* accepted models that ran a sentence (the replay driver prints it) */
const char *const fuzz_deep_name = "edited models accepted and run";

#define MAX_BYTES (1u << 18)
#define VOCAB_HDR 256u                       /* the header follows the 256-word first-byte index */

static uint8_t g_w[MAX_BYTES], g_v[MAX_BYTES];
static int8_t g_work[1 << 20];

static uint32_t rd32(const uint8_t *p) { return (uint32_t)p[0] | (uint32_t)p[1] << 8 | (uint32_t)p[2] << 16 | (uint32_t)p[3] << 24; }
static void wr32(uint8_t *p, uint32_t v) { p[0] = (uint8_t)v; p[1] = (uint8_t)(v >> 8); p[2] = (uint8_t)(v >> 16); p[3] = (uint8_t)(v >> 24); }

/* words added (> 0) or cut (< 0): (int8)b words up to +-63, then steps of 128 words (up to 8192: a whole model) */
static int32_t size_change(uint8_t b)
{
    const int32_t d = (int8_t)b, m = d < 0 ? -d : d, words = m < 64 ? m : (m - 63) * 128;
    return d < 0 ? -words : words;
}

static uint32_t apply(uint32_t old, uint32_t op, uint32_t value)
{
    switch (op & 3u) {
    case 0: return value;
    case 1: return old ^ value;
    case 2: return old + value;
    default: return (uint32_t)(int32_t)(int8_t)(value & 0xFFu);
    }
}

/* byte offset of word k of section s of the original blob o */
static uint32_t section_at(const uint8_t *o, uint32_t s, uint32_t k) { return rd32(o + 64u + 8u * s) + 4u * k; }

/* one edit of w (wsize bytes) or v (vsize bytes); places are found in the original model o and vocabulary ov */
static void edit(uint8_t *w, uint32_t wsize, uint8_t *v, uint32_t vsize, const uint8_t *o, const uint8_t *ov,
                 const uint8_t *e)
{
    const uint32_t region = e[0] & 7u, index = e[1] | (uint32_t)e[2] << 8, op = e[3], value = rd32(e + 4);
    const uint32_t layers = rd32(o + 8), sections = rd32(o + 52), tail = 7u + 32u * layers;
    const uint32_t *vh = (const uint32_t *)(const void *)(ov + 4u * VOCAB_HDR);
    uint32_t at;                              /* byte offset of the 32-bit word to change */
    switch (region) {
    case 0: at = 4u * (index % (16u + 2u * sections)); break;
    case 1: {
        const uint32_t p = (index >> 8) % (layers + 1u);
        at = p == 0 ? section_at(o, 4, (index & 0xFFu) % 8u) : section_at(o, 7u + 32u * (p - 1u), (index & 0xFFu) % 16u);
        break;
    }
    case 2: {                                  /* an int16 of a mult or shift array: the layers' six linears, pooler,
                                                  classifier and (when the model has it) the token classifier */
        const uint32_t heads = sections > tail + 9u ? 3u : 2u, lin = (index >> 8) % (6u * layers + heads);
        const uint32_t s = lin < 6u * layers ? 8u + 32u * (lin / 6u) + 4u * (lin % 6u)
                                             : tail + (uint32_t[]){0u, 4u, 9u}[lin - 6u * layers];
        const uint32_t part = s + 1u + (index & 1u), n = rd32(o + 64u + 8u * part + 4u);
        if (n < 2u) {
            return;
        }
        at = rd32(o + 64u + 8u * part) + 2u * (((index >> 1) & 0x7Fu) % (n / 2u));
        if (at + 2u <= wsize) {
            const uint32_t x = apply((uint32_t)(w[at] | w[at + 1] << 8), op, value);
            w[at] = (uint8_t)x;
            w[at + 1] = (uint8_t)(x >> 8);
        }
        return;
    }
    case 3: at = 4u * (uint32_t)(((uint64_t)index * (wsize / 4u)) >> 16); break;
    case 4:
        at = (uint32_t)(((uint64_t)index * wsize) >> 16);
        if (at < wsize) {
            w[at] = (uint8_t)apply(w[at], op, value);
        }
        return;
    case 5: at = 4u * (VOCAB_HDR + index % 31u); break;
    case 6: at = 4u * (uint32_t)(((uint64_t)index * (vsize / 4u)) >> 16); break;
    default: {                                 /* a piece entry: start (even index) or continuation (odd) table */
        const uint32_t n = (index & 1u) ? vh[17] : vh[14], table = (index & 1u) ? vh[19] : vh[15];
        if (n == 0) {
            return;
        }
        at = 4u * (table + (index >> 1) % n);
        break;
    }
    }
    uint8_t *base = region >= 5u ? v : w;
    const uint32_t size = region >= 5u ? vsize : wsize;
    if (size >= 4u && at <= size - 4u) {
        wr32(base + at, apply(rd32(base + at), op, value));
    }
}

/* tokenize, encode, classify and tag a text on an accepted model: every call answers, with a status in its list */
static void run(bertl14_ctx_t *ctx, const char *text, uint32_t max_seq, const int32_t *raw, uint32_t n_raw)
{
    bertl14_dims_t dims;
    bertl14_tensor_t out;
    bertl14_classification_t cls;
    int32_t ids[64];
    uint16_t offsets[128];
    uint8_t tags[64];
    uint32_t n = 0, count = 0, scale = 0;
    int32_t frac = 0;
    CHECK(bertl14_ctx_dims(ctx, &dims) == BERTL14_OK && max_seq <= 64u);
    bertl14_status_t st = bertl14_ctx_tokenize_offsets(ctx, text, ids, offsets, &n, max_seq);
    if (max_seq < 2u) {
        CHECK(st == BERTL14_ERR_INVALID_SEQ_LEN);
        return;
    }
    CHECK(st == BERTL14_OK || st == BERTL14_ERR_TOKEN_OVERFLOW);
    for (uint32_t i = 0; i < n; i++) {
        CHECK(ids[i] >= 0 && (uint32_t)ids[i] < dims.vocab_size);
    }
    CHECK(bertl14_ctx_encode(ctx, ids, n, &out) == BERTL14_OK && out.dims[2] == dims.hidden);
    CHECK(bertl14_ctx_output_scale(ctx, n - 1u, &scale, &frac) == BERTL14_OK);
    if (dims.num_labels) {
        CHECK(bertl14_ctx_classify(ctx, &cls) == BERTL14_OK && cls.label < dims.num_labels);
        CHECK(cls.score_q16 <= 65535u);
        (void)strlen(bertl14_ctx_label_name(ctx, cls.label));
        (void)strlen(bertl14_ctx_label_name(ctx, dims.num_labels - 1u));
    } else {
        CHECK(bertl14_ctx_classify(ctx, &cls) == BERTL14_ERR_NO_CLASSIFIER);
    }
    if (dims.num_tags) {
        CHECK(bertl14_ctx_tag(ctx, tags, n, &count) == BERTL14_OK && count == n);
        for (uint32_t i = 0; i < n; i++) {
            CHECK(tags[i] < dims.num_tags);
            (void)strlen(bertl14_ctx_tag_name(ctx, tags[i]));
        }
    } else {
        CHECK(bertl14_ctx_tag(ctx, tags, n, &count) == BERTL14_ERR_NO_TAGGER);
    }
    if (n_raw) {                               /* raw ids: any status of encode's list, never a crash */
        st = bertl14_ctx_encode(ctx, raw, n_raw, &out);
        CHECK(st == BERTL14_OK || st == BERTL14_ERR_INVALID_TOKEN || st == BERTL14_ERR_INVALID_SEQ_LEN);
    }
    fuzz_deep_runs++;
}

static const char *const k_texts[4] = {"Turn on the light in the Kitchen, please!", "what's the temperature?",
                                       "打开客厅的灯 café", "a b c d e f g h i j k l m n o p q r s t u v w x y z"};

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size)
{
    static bertl14_ctx_t ctx;
    int32_t raw[64];
    uint32_t n_raw = 0;
    if (!fuzz_have_model || size < 4) {
        return 0;
    }
    const uint8_t mode = data[0];
    const int16_t *model = (mode & 1u) ? fuzz_model1 : fuzz_model0;
    const uint32_t msize = (mode & 1u) ? fuzz_model1_size : fuzz_model0_size;
    memcpy(g_w, model, msize);
    memcpy(g_v, fuzz_vocab_m, fuzz_vocab_m_size);
    uint32_t wsize = msize, vsize = fuzz_vocab_m_size;
    const size_t n_edits = (size - 4u) / 8u;
    CHECK(msize + 4u * 8192u <= MAX_BYTES && fuzz_vocab_m_size + 4u * 8192u <= MAX_BYTES); /* room to grow */
    for (size_t i = 0; i < n_edits && i < 64u; i++) {
        edit(g_w, wsize, g_v, vsize, (const uint8_t *)model, (const uint8_t *)fuzz_vocab_m, data + 4u + 8u * i);
    }
    if (mode & 0x08u) {                       /* shorter (a cut array) or longer (zeros after it) */
        const int32_t d = (mode & 0x40u) ? (int8_t)data[1] : 4 * size_change(data[1]);
        wsize = d < 0 && (uint32_t)-d > wsize ? 0u : (uint32_t)((int32_t)wsize + d);
        if (d > 0) {
            memset(g_w + msize, 0, (size_t)d);
        }
    }
    if (mode & 0x10u) {
        const int32_t d = 4 * size_change(data[2]);
        vsize = d < 0 && (uint32_t)-d > vsize ? 0u : (uint32_t)((int32_t)vsize + d);
        if (d > 0) {
            memset(g_v + fuzz_vocab_m_size, 0, (size_t)d);
        }
    }
    if ((mode & 0x20u) && wsize >= 64u) {
        wr32(g_w + 48, wsize);                /* total_bytes: the cut blob then agrees with its size */
    }
    if ((mode & 0x02u) && wsize >= 8u && !(wsize & 3u)) {
        uint32_t sum = 0;                      /* weights: the last word is the sum of all the others */
        for (uint32_t i = 0; i + 4u < wsize; i += 4u) {
            sum += rd32(g_w + i);
        }
        wr32(g_w + wsize - 4u, sum);
    }
    if ((mode & 0x04u) && vsize >= 4u * (VOCAB_HDR + 31u)) {
        uint32_t sum = 0;                      /* vocabulary: HDR_CHECKSUM (30) is the sum of all the other words */
        wr32(g_v + 4u * (VOCAB_HDR + 30u), 0);
        for (uint32_t i = 0; i + 4u <= vsize; i += 4u) {
            sum += rd32(g_v + i);
        }
        wr32(g_v + 4u * (VOCAB_HDR + 30u), sum);
    }
    if (mode & 0x80u) {
        n_raw = (uint32_t)((size - 4u) / 4u);
        n_raw = n_raw > 64u ? 64u : n_raw;
        memcpy(raw, data + 4, 4u * n_raw);
    }

    /* exactly sized copies: a read past the data is a sanitizer report */
    int16_t *weights = malloc(wsize ? wsize : 1u);
    uint32_t *vocab = malloc(vsize ? vsize : 1u);
    CHECK(weights && vocab);
    memcpy(weights, g_w, wsize);
    memcpy(vocab, g_v, vsize);
    const uint32_t max_seq = 1u + data[3] % 20u;            /* beyond the models' 16 and 12 positions too */
    const uint32_t need = bertl14_required_work_buffer_size(weights, wsize, max_seq);
    bertl14_config_t cfg = {max_seq, wsize >= 36u ? rd32(g_w + 32) : 0u, g_work, sizeof g_work, weights, vocab,
                            wsize, vsize};
    const bertl14_status_t st = bertl14_ctx_init(&ctx, &cfg);
    CHECK(st <= BERTL14_OK && st >= BERTL14_ERR_MODEL_RANGE);
    CHECK(st != BERTL14_ERR_NULL_POINTER && st != BERTL14_ERR_TOKEN_OVERFLOW && st != BERTL14_ERR_INVALID_UTF8);
    if (st == BERTL14_OK) {
        CHECK(need > 0u && need <= sizeof g_work);
        run(&ctx, k_texts[(mode >> 1) & 3u], max_seq, raw, n_raw);
    }
    if (need > 0u) {                           /* the weights passed: init answers for the config or the vocabulary */
        CHECK(st == BERTL14_OK || st == BERTL14_ERR_INVALID_CONFIG || st == BERTL14_ERR_BUFFER_TOO_SMALL ||
              st == BERTL14_ERR_MODEL_FORMAT || st == BERTL14_ERR_MODEL_SIZE || st == BERTL14_ERR_MODEL_CORRUPT ||
              st == BERTL14_ERR_MODEL_LAYOUT);
    }
    if (n_edits == 0 && !(mode & 0x18u)) {
        CHECK(st == (max_seq <= ((mode & 1u) ? 12u : 16u) ? BERTL14_OK : BERTL14_ERR_INVALID_CONFIG));
    }
    free(weights);
    free(vocab);
    return 0;
}
