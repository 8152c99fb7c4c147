/*
 * Fuzz targets `tokenizer` and `api`: random bytes through the C tokenizer and (`api`: built with
 * FUZZ_WITH_LIBRARY, the library and a model linked) the public API. Built with libFuzzer (clang
 * -fsanitize=fuzzer,address,undefined, tests/fuzz/run.sh) or with the plain driver fuzz_replay_main.c under gcc
 * ASan+UBSan (the CI test, test_fuzz_short.py). Any broken invariant calls abort().
 *
 * Input layout: byte 0 = mode bits, byte 1 = max_tokens, the rest = text (cut at 4096 bytes, NUL-terminated;
 * an embedded NUL ends the text as for any C string).
 */
#include <stddef.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "bertl14.h"
#include "bertl14_tokenizer.h"
#include "fuzz_check.h"

extern const uint32_t fuzz_vocab_a[];
extern const uint32_t fuzz_vocab_b[];
extern const int16_t fuzz_weights[];
extern const uint32_t fuzz_model_vocab;
extern const uint32_t fuzz_weights_size, fuzz_vocab_b_size; /* bytes */
extern const int fuzz_have_model;

/* the replay driver prints how many inputs went all the way: text -> encode -> classify rounds (api), texts that
   tokenized (tokenizer) */
unsigned long long fuzz_deep_runs;
#ifdef FUZZ_WITH_LIBRARY
const char *const fuzz_deep_name = "encodes through the public API";
#else
const char *const fuzz_deep_name = "texts tokenized";
#endif

#define MAX_TEXT 4096
#define MAX_IDS 512

static void check_tokenizer(const uint32_t *section, const char *text, uint32_t max_tokens)
{
    int32_t ids[MAX_IDS], full[MAX_IDS];
    uint16_t offsets[2 * MAX_IDS];
    uint32_t count = 12345, full_count = 0, i;
    uint32_t vocab = bertl14_tokenizer_vocab_size(section);
    bertl14_status_t st = bertl14_tokenizer_run(section, text, ids, offsets, &count, max_tokens);
    size_t text_len = strlen(text);
    int valid = valid_utf8((const uint8_t *)text);

    if (max_tokens < 2) {
        CHECK(st == BERTL14_ERR_INVALID_SEQ_LEN && count == 0);
        return;
    }
    if (!valid) {
        CHECK(st == BERTL14_ERR_INVALID_UTF8 && count == 0);
        return;
    }
    CHECK(st == BERTL14_OK || st == BERTL14_ERR_TOKEN_OVERFLOW);
    CHECK(count >= 2 && count <= max_tokens);
    CHECK(ids[0] == bertl14_tokenizer_special_id(section, BERTL14_TOKEN_CLS));
    CHECK(ids[count - 1] == bertl14_tokenizer_special_id(section, BERTL14_TOKEN_SEP));
    for (i = 0; i < count; i++) {
        CHECK(ids[i] >= 0 && (uint32_t)ids[i] < vocab);
        /* byte spans inside the text, never empty for a piece; [CLS] and [SEP] 0, 0 */
        CHECK(offsets[2 * i] <= offsets[2 * i + 1] && offsets[2 * i + 1] <= text_len);
        CHECK((i == 0 || i == count - 1) ? offsets[2 * i + 1] == 0 : offsets[2 * i] < offsets[2 * i + 1] ||
              offsets[2 * i] == 0xFFFF);
    }
    if (st == BERTL14_ERR_TOKEN_OVERFLOW) {
        CHECK(count == max_tokens);
    }
#ifndef FUZZ_WITH_LIBRARY
    fuzz_deep_runs++;
#endif
    /* truncation keeps a prefix: the same text with the largest capacity starts with the same pieces */
    st = bertl14_tokenizer_run(section, text, full, NULL, &full_count, MAX_IDS);
    CHECK(st == BERTL14_OK || st == BERTL14_ERR_TOKEN_OVERFLOW);
    if (count < max_tokens || full_count == count) {
        CHECK(full_count == count && memcmp(full, ids, count * sizeof(int32_t)) == 0);
    } else {
        CHECK(full_count > count && memcmp(full, ids, (count - 1) * sizeof(int32_t)) == 0);
    }
}


#ifdef FUZZ_WITH_LIBRARY
static int8_t g_work[1 << 20];

static void check_api(uint8_t mode, const char *text, const uint8_t *data, size_t size)
{
    /* one context a max_seq_len, set up on first use (init reads every byte of the model: once is enough for the
       calls after it); a config with a short buffer or a wrong vocabulary size goes through init every time */
    static bertl14_ctx_t ctxs[65];
    static uint32_t needs[65];                       /* bertl14_required_work_buffer_size, 0 until asked */
    bertl14_ctx_t *ctx;
    bertl14_config_t cfg;
    bertl14_tensor_t out;
    bertl14_classification_t cls;
    int32_t ids[MAX_IDS];
    uint32_t count = 0, need, i;
    bertl14_status_t st;

    memset(&cfg, 0, sizeof cfg);
    cfg.max_seq_len = 2u + (uint32_t)(mode >> 3) % 63u; /* 2..64 */
    cfg.vocab_size = (mode & 0x80) && size > 0 ? fuzz_model_vocab + data[0] % 3u - 1u : fuzz_model_vocab;
    cfg.weights_ptr = fuzz_weights;
    cfg.vocab_offsets = fuzz_vocab_b;
    cfg.weights_size = fuzz_weights_size;
    cfg.vocab_offsets_size = fuzz_vocab_b_size;
    if (!needs[cfg.max_seq_len]) {
        needs[cfg.max_seq_len] = bertl14_required_work_buffer_size(fuzz_weights, fuzz_weights_size, cfg.max_seq_len);
        CHECK(needs[cfg.max_seq_len] > 0 && needs[cfg.max_seq_len] <= sizeof g_work);
        CHECK(bertl14_ctx_init(&ctxs[cfg.max_seq_len], &(bertl14_config_t){cfg.max_seq_len, fuzz_model_vocab, g_work,
              needs[cfg.max_seq_len], fuzz_weights, fuzz_vocab_b, fuzz_weights_size, fuzz_vocab_b_size}) == BERTL14_OK);
    }
    need = needs[cfg.max_seq_len];
    cfg.work_buffer_ptr = g_work;
    cfg.work_buffer_size = (mode & 0x04) ? need - 1u - (size > 1 ? data[1] % 64u : 0u) : need;
    if (cfg.work_buffer_size < need || cfg.vocab_size != fuzz_model_vocab) {
        static bertl14_ctx_t refused;
        st = bertl14_ctx_init(&refused, &cfg);
        CHECK(cfg.vocab_size != fuzz_model_vocab ? st == BERTL14_ERR_INVALID_CONFIG : st == BERTL14_ERR_BUFFER_TOO_SMALL);
        return;
    }
    ctx = &ctxs[cfg.max_seq_len];

    st = bertl14_ctx_tokenize(ctx, text, ids, &count, cfg.max_seq_len);
    if (st == BERTL14_OK || st == BERTL14_ERR_TOKEN_OVERFLOW) {
        CHECK(count >= 2 && count <= cfg.max_seq_len);
        CHECK(bertl14_ctx_encode(ctx, ids, count, &out) == BERTL14_OK);
        CHECK(bertl14_ctx_get_last_hidden_state(ctx, &out) == BERTL14_OK && out.dims[1] == count);
        CHECK(bertl14_ctx_classify(ctx, &cls) == BERTL14_OK && cls.label < cls.num_labels);
        fuzz_deep_runs++;
    } else {
        CHECK(st == BERTL14_ERR_INVALID_UTF8);
    }
    /* raw ids from the input bytes: any status, never a crash */
    count = (uint32_t)(size / 4u);
    if (count > MAX_IDS) count = MAX_IDS;
    for (i = 0; i < count; i++) {
        memcpy(&ids[i], data + 4u * i, 4);
        if (mode & 0x02) ids[i] = (int32_t)((uint32_t)ids[i] % (fuzz_model_vocab + 2u)) - 1;
    }
    st = bertl14_ctx_encode(ctx, ids, count, &out);
    CHECK(st == BERTL14_OK || st == BERTL14_ERR_INVALID_TOKEN || st == BERTL14_ERR_INVALID_SEQ_LEN);
    if (st == BERTL14_OK) {
        CHECK(bertl14_ctx_classify(ctx, &cls) == BERTL14_OK);
    }
}

#endif /* FUZZ_WITH_LIBRARY */

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size)
{
    char text[MAX_TEXT + 1];
    uint8_t mode;
    uint32_t max_tokens;
    size_t n;
    if (size < 2) {
        return 0;
    }
    mode = data[0];
    max_tokens = data[1];
    data += 2;
    size -= 2;
    n = size < MAX_TEXT ? size : MAX_TEXT;
    memcpy(text, data, n);
    text[n] = '\0';
    check_tokenizer((mode & 1) ? fuzz_vocab_a : fuzz_vocab_b, text, max_tokens);
#ifdef FUZZ_WITH_LIBRARY
    if (fuzz_have_model && (mode & 0x40)) {
        check_api(mode, text, data, size);
    }
#endif
    return 0;
}
