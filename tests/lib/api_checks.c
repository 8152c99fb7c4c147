/* Native checks of the public API (driven by test_api.py): every NULL argument, error codes,
 * sizing, the short calls' default context, dumps. Usage: api_checks WEIGHTS.bin VOCAB.bin LABELS TAGS
 * (the model's classifier labels and tag count, 0 for a model without that head) */
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "bertl14.h"

static int failures, checks;
#define CHECK(cond) do { checks++; if (!(cond)) { failures++; printf("FAIL %s:%d: %s\n", __FILE__, __LINE__, #cond); } } while (0)

static void *slurp(const char *path, size_t *len)
{
    FILE *f = fopen(path, "rb");
    if (!f) { perror(path); exit(2); }
    fseek(f, 0, SEEK_END);
    *len = (size_t)ftell(f);
    fseek(f, 0, SEEK_SET);
    void *p = malloc((*len + 3) & ~(size_t)3);
    if (fread(p, 1, *len, f) != *len) { exit(2); }
    fclose(f);
    return p;
}

static char out[1 << 16];
static size_t out_len;
static void hook(const char *s, size_t n, void *user)
{
    (void)user;
    if (out_len + n < sizeof out) { memcpy(out + out_len, s, n); out_len += n; out[out_len] = 0; }
}

int main(int argc, char **argv)
{
    if (argc != 5) { return 2; }
    size_t wlen, vlen;
    const int16_t *weights = slurp(argv[1], &wlen);
    const uint32_t *vocab = slurp(argv[2], &vlen);
    /* the heads the test built the model with: each call below expects the one status they imply */
    const uint32_t labels = (uint32_t)strtoul(argv[3], NULL, 10), num_tags = (uint32_t)strtoul(argv[4], NULL, 10);
    const uint32_t max_seq = 16, hidden = (uint32_t)((const uint32_t *)weights)[3];
    const uint32_t vocab_size = ((const uint32_t *)weights)[8];
    const uint32_t wsize = (uint32_t)wlen, vsize = (uint32_t)vlen;
    const uint32_t need = bertl14_required_work_buffer_size(weights, wsize, max_seq);
    printf("sizeof(bertl14_ctx_t)=%zu required=%u\n", sizeof(bertl14_ctx_t), need);
    CHECK(sizeof(bertl14_ctx_t) <= 4096);   /* cengine.CTX_BYTES */
    CHECK(need > 0);
    CHECK(bertl14_required_work_buffer_size(NULL, wsize, max_seq) == 0);
    CHECK(bertl14_required_work_buffer_size(weights, wsize, 0) == 0);
    CHECK(bertl14_required_work_buffer_size(weights, wsize, 513) == 0);
    CHECK(bertl14_required_work_buffer_size(weights, wsize, 8) < need);   /* grows with max_seq_len */
    CHECK(bertl14_required_work_buffer_size(weights, wsize - 4u, max_seq) == 0); /* not the size it declares */
    CHECK(bertl14_required_work_buffer_size(weights, 0, max_seq) == 0);
    int8_t *work = malloc(need + 64);
    bertl14_config_t cfg = {max_seq, vocab_size, work, need, weights, vocab, wsize, vsize};
    bertl14_ctx_t ctx;
    bertl14_tensor_t t;
    int32_t ids[16] = {2, 7, 9, 3};
    uint32_t count = 0;
    bertl14_classification_t cls;

    /* before init */
    memset(&ctx, 0, sizeof ctx);
    CHECK(bertl14_ctx_encode(&ctx, ids, 4, &t) == BERTL14_ERR_NOT_INITIALIZED);
    CHECK(bertl14_ctx_tokenize(&ctx, "hi", ids, &count, 16) == BERTL14_ERR_NOT_INITIALIZED);
    CHECK(bertl14_ctx_get_last_hidden_state(&ctx, &t) == BERTL14_ERR_NOT_INITIALIZED);
    CHECK(bertl14_ctx_classify(&ctx, &cls) == BERTL14_ERR_NOT_INITIALIZED);
    uint8_t tags[16];
    uint16_t offsets[32];
    const int32_t *tag_logits = NULL;
    CHECK(bertl14_ctx_tag(&ctx, tags, 16, &count) == BERTL14_ERR_NOT_INITIALIZED);
    CHECK(bertl14_ctx_tag_logits(&ctx, 0, &tag_logits) == BERTL14_ERR_NOT_INITIALIZED);
    CHECK(bertl14_ctx_tokenize_offsets(&ctx, "hi", ids, offsets, &count, 16) == BERTL14_ERR_NOT_INITIALIZED);
    CHECK(strcmp(bertl14_ctx_tag_name(&ctx, 0), "") == 0);

    /* NULL pointers */
    CHECK(bertl14_init(NULL) == BERTL14_ERR_NULL_POINTER);
    CHECK(bertl14_ctx_init(NULL, &cfg) == BERTL14_ERR_NULL_POINTER);
    CHECK(bertl14_ctx_init(&ctx, NULL) == BERTL14_ERR_NULL_POINTER);
    bertl14_config_t c2 = cfg; c2.work_buffer_ptr = NULL;
    CHECK(bertl14_ctx_init(&ctx, &c2) == BERTL14_ERR_NULL_POINTER);
    c2 = cfg; c2.weights_ptr = NULL;
    CHECK(bertl14_ctx_init(&ctx, &c2) == BERTL14_ERR_NULL_POINTER);
    c2 = cfg; c2.vocab_offsets = NULL;
    CHECK(bertl14_ctx_init(&ctx, &c2) == BERTL14_ERR_NULL_POINTER);

    /* configuration errors */
    c2 = cfg; c2.work_buffer_size = need - 1;
    CHECK(bertl14_ctx_init(&ctx, &c2) == BERTL14_ERR_BUFFER_TOO_SMALL);
    c2 = cfg; c2.vocab_size = vocab_size + 1;
    CHECK(bertl14_ctx_init(&ctx, &c2) == BERTL14_ERR_INVALID_CONFIG);
    c2 = cfg; c2.max_seq_len = 0;
    CHECK(bertl14_ctx_init(&ctx, &c2) == BERTL14_ERR_INVALID_CONFIG);
    c2 = cfg; c2.work_buffer_ptr = work + 1;
    CHECK(bertl14_ctx_init(&ctx, &c2) == BERTL14_ERR_INVALID_CONFIG);
    c2 = cfg; c2.weights_ptr = (const int16_t *)(const void *)vocab; c2.weights_size = vsize; /* not a blob */
    CHECK(bertl14_ctx_init(&ctx, &c2) == BERTL14_ERR_MODEL_FORMAT);
    c2 = cfg; c2.vocab_offsets = (const uint32_t *)(const void *)weights; c2.vocab_offsets_size = wsize;
    CHECK(bertl14_ctx_init(&ctx, &c2) == BERTL14_ERR_MODEL_FORMAT);    /* not a vocabulary section */

    /* the sizes: required, and exactly the sizes the data declare (their contents: test_model_checks.py) */
    c2 = cfg; c2.weights_size = 0;
    CHECK(bertl14_ctx_init(&ctx, &c2) == BERTL14_ERR_MODEL_SIZE);
    c2 = cfg; c2.weights_size = wsize - 4u;
    CHECK(bertl14_ctx_init(&ctx, &c2) == BERTL14_ERR_MODEL_SIZE);
    c2 = cfg; c2.vocab_offsets_size = 0;
    CHECK(bertl14_ctx_init(&ctx, &c2) == BERTL14_ERR_MODEL_SIZE);
    c2 = cfg; c2.vocab_offsets_size = vsize - 4u;
    CHECK(bertl14_ctx_init(&ctx, &c2) == BERTL14_ERR_MODEL_SIZE);
    c2 = cfg; c2.weights_ptr = (const int16_t *)(const void *)((const char *)weights + 2); /* misaligned */
    CHECK(bertl14_ctx_init(&ctx, &c2) == BERTL14_ERR_MODEL_FORMAT);
    for (int code = BERTL14_ERR_MODEL_FORMAT; code >= BERTL14_ERR_MODEL_RANGE; code--) {
        CHECK(strcmp(bertl14_status_str((bertl14_status_t)code), "unknown status") != 0);
    }

    /* a working context */
    CHECK(bertl14_ctx_init(&ctx, &cfg) == BERTL14_OK);
    CHECK(bertl14_ctx_get_last_hidden_state(&ctx, &t) == BERTL14_ERR_NOT_INITIALIZED); /* nothing encoded */
    CHECK(bertl14_ctx_tokenize(NULL, "hi", ids, &count, 16) == BERTL14_ERR_NULL_POINTER);
    CHECK(bertl14_ctx_tokenize(&ctx, NULL, ids, &count, 16) == BERTL14_ERR_NULL_POINTER);
    CHECK(bertl14_ctx_tokenize(&ctx, "hi", NULL, &count, 16) == BERTL14_ERR_NULL_POINTER);
    CHECK(bertl14_ctx_tokenize(&ctx, "hi", ids, NULL, 16) == BERTL14_ERR_NULL_POINTER);
    CHECK(bertl14_ctx_tokenize(&ctx, "\xff", ids, &count, 16) == BERTL14_ERR_INVALID_UTF8);
    CHECK(bertl14_ctx_encode(NULL, ids, 4, &t) == BERTL14_ERR_NULL_POINTER);
    CHECK(bertl14_ctx_encode(&ctx, NULL, 4, &t) == BERTL14_ERR_NULL_POINTER);
    CHECK(bertl14_ctx_encode(&ctx, ids, 4, NULL) == BERTL14_ERR_NULL_POINTER);
    CHECK(bertl14_ctx_encode(&ctx, ids, 0, &t) == BERTL14_ERR_INVALID_SEQ_LEN);
    CHECK(bertl14_ctx_encode(&ctx, ids, max_seq + 1, &t) == BERTL14_ERR_INVALID_SEQ_LEN);
    ids[1] = (int32_t)vocab_size;
    CHECK(bertl14_ctx_encode(&ctx, ids, 4, &t) == BERTL14_ERR_INVALID_TOKEN);
    ids[1] = -1;
    CHECK(bertl14_ctx_encode(&ctx, ids, 4, &t) == BERTL14_ERR_INVALID_TOKEN);
    ids[1] = 7;
    CHECK(bertl14_ctx_encode(&ctx, ids, 4, &t) == BERTL14_OK);
    CHECK(t.dtype == BERTL14_INT8 && t.dims[0] == 1 && t.dims[1] == 1 && t.dims[2] == hidden && t.dims[3] == 1);
    CHECK((int8_t *)t.data_ptr >= work && (int8_t *)t.data_ptr < work + need);
    bertl14_tensor_t all;
    CHECK(bertl14_ctx_get_last_hidden_state(NULL, &all) == BERTL14_ERR_NULL_POINTER);
    CHECK(bertl14_ctx_get_last_hidden_state(&ctx, NULL) == BERTL14_ERR_NULL_POINTER);
    CHECK(bertl14_ctx_get_last_hidden_state(&ctx, &all) == BERTL14_OK);
    CHECK(all.dims[1] == 4 && all.dims[2] == hidden && all.data_ptr == t.data_ptr);
    uint32_t scale = 0; int32_t fb = 0;
    CHECK(bertl14_ctx_output_scale(&ctx, 0, &scale, &fb) == BERTL14_OK && scale > 0);
    CHECK(bertl14_ctx_output_scale(&ctx, 4, &scale, &fb) == BERTL14_ERR_INVALID_SEQ_LEN);
    CHECK(bertl14_ctx_output_scale(NULL, 0, &scale, &fb) == BERTL14_ERR_NULL_POINTER);
    CHECK(bertl14_ctx_output_scale(&ctx, 0, NULL, &fb) == BERTL14_ERR_NULL_POINTER);
    CHECK(bertl14_ctx_output_scale(&ctx, 0, &scale, NULL) == BERTL14_ERR_NULL_POINTER);
    bertl14_dims_t dims;
    CHECK(bertl14_ctx_dims(&ctx, &dims) == BERTL14_OK && dims.hidden == hidden);
    CHECK(dims.num_labels == labels && dims.num_tags == num_tags);
    CHECK(bertl14_ctx_dims(NULL, &dims) == BERTL14_ERR_NULL_POINTER);
    CHECK(bertl14_ctx_dims(&ctx, NULL) == BERTL14_ERR_NULL_POINTER);
    CHECK(bertl14_ctx_classify(NULL, &cls) == BERTL14_ERR_NULL_POINTER);
    CHECK(bertl14_ctx_classify(&ctx, NULL) == BERTL14_ERR_NULL_POINTER);
    bertl14_status_t cs = bertl14_ctx_classify(&ctx, &cls);
    if (labels) {                                            /* a classifier head: an answer among its labels */
        CHECK(cs == BERTL14_OK);
        if (cs == BERTL14_OK) {
            CHECK(cls.num_labels == labels && cls.label < labels && cls.score_q16 <= 65535 && cls.score_milli <= 1000);
            CHECK(strlen(bertl14_ctx_label_name(&ctx, cls.label)) > 0);
            CHECK(strlen(bertl14_ctx_label_name(&ctx, labels - 1u)) > 0);
        }
    } else {                                                 /* an encoder only: no classifier, no label names */
        CHECK(cs == BERTL14_ERR_NO_CLASSIFIER);
    }
    CHECK(strcmp(bertl14_ctx_label_name(&ctx, labels), "") == 0); /* one past the last label */
    CHECK(strcmp(bertl14_ctx_label_name(&ctx, 100000), "") == 0);
    CHECK(strcmp(bertl14_ctx_label_name(NULL, 0), "") == 0);

    /* token classification (tags): every token of the last encode, before or after classify */
    uint32_t ntags = 99;
    CHECK(bertl14_ctx_tag(NULL, tags, 16, &ntags) == BERTL14_ERR_NULL_POINTER);
    CHECK(bertl14_ctx_tag(&ctx, NULL, 16, &ntags) == BERTL14_ERR_NULL_POINTER);
    CHECK(bertl14_ctx_tag(&ctx, tags, 16, NULL) == BERTL14_ERR_NULL_POINTER);
    CHECK(bertl14_ctx_tag_logits(NULL, 0, &tag_logits) == BERTL14_ERR_NULL_POINTER);
    CHECK(bertl14_ctx_tag_logits(&ctx, 0, NULL) == BERTL14_ERR_NULL_POINTER);
    CHECK(strcmp(bertl14_ctx_tag_name(NULL, 0), "") == 0);
    if (num_tags) {
        uint8_t again[16];
        CHECK(bertl14_ctx_tag(&ctx, tags, 16, &ntags) == BERTL14_OK && ntags == 4);
        for (uint32_t i = 0; i < ntags; i++) {
            CHECK(tags[i] < num_tags);
            CHECK(bertl14_ctx_tag_logits(&ctx, i, &tag_logits) == BERTL14_OK);
            uint32_t best = 0;
            for (uint32_t c = 1; c < num_tags; c++) {
                best = tag_logits[c] > tag_logits[best] ? c : best;
            }
            CHECK(best == tags[i]);                          /* the first largest logit */
        }
        CHECK(bertl14_ctx_tag_logits(&ctx, 4, &tag_logits) == BERTL14_ERR_INVALID_SEQ_LEN);
        CHECK(bertl14_ctx_tag(&ctx, again, 2, &ntags) == BERTL14_ERR_TOKEN_OVERFLOW && ntags == 2);
        CHECK(memcmp(again, tags, 2) == 0);
        if (cs == BERTL14_OK) {                              /* classify after tag: same logits; tag after: same tags */
            int32_t logits[4096];
            memcpy(logits, cls.logits, cls.num_labels * sizeof(int32_t));
            bertl14_classification_t cls2;
            CHECK(bertl14_ctx_classify(&ctx, &cls2) == BERTL14_OK);
            CHECK(memcmp(logits, cls2.logits, cls.num_labels * sizeof(int32_t)) == 0);
            CHECK(bertl14_ctx_tag(&ctx, again, 16, &ntags) == BERTL14_OK && memcmp(again, tags, 4) == 0);
            CHECK(memcmp(logits, cls2.logits, cls.num_labels * sizeof(int32_t)) == 0); /* the view survives */
        }
        CHECK(strcmp(bertl14_ctx_tag_name(&ctx, 0), "O") == 0);
        CHECK(strlen(bertl14_ctx_tag_name(&ctx, num_tags - 1)) > 0);
        CHECK(strcmp(bertl14_ctx_tag_name(&ctx, num_tags), "") == 0);
    } else {
        CHECK(bertl14_ctx_tag(&ctx, tags, 16, &ntags) == BERTL14_ERR_NO_TAGGER);
        CHECK(bertl14_ctx_tag_logits(&ctx, 0, &tag_logits) == BERTL14_ERR_NO_TAGGER);
        CHECK(strcmp(bertl14_ctx_tag_name(&ctx, 0), "") == 0);
    }

    /* tokens with their byte spans: the same tokenizer */
    int32_t ids1[16], ids2[16];
    uint32_t count1 = 0, count2 = 0;
    CHECK(bertl14_ctx_tokenize_offsets(NULL, "hi", ids2, offsets, &count2, 16) == BERTL14_ERR_NULL_POINTER);
    CHECK(bertl14_ctx_tokenize_offsets(&ctx, NULL, ids2, offsets, &count2, 16) == BERTL14_ERR_NULL_POINTER);
    CHECK(bertl14_ctx_tokenize_offsets(&ctx, "hi", NULL, offsets, &count2, 16) == BERTL14_ERR_NULL_POINTER);
    CHECK(bertl14_ctx_tokenize_offsets(&ctx, "hi", ids2, offsets, NULL, 16) == BERTL14_ERR_NULL_POINTER);
    CHECK(bertl14_ctx_tokenize(&ctx, "w7 w9, w12", ids1, &count1, 16) == BERTL14_OK);
    CHECK(bertl14_ctx_tokenize_offsets(&ctx, "w7 w9, w12", ids2, offsets, &count2, 16) == BERTL14_OK);
    CHECK(count2 == count1 && memcmp(ids1, ids2, count1 * sizeof(int32_t)) == 0);
    CHECK(count1 == 6 && offsets[0] == 0 && offsets[1] == 0 && offsets[2] == 0 && offsets[3] == 2);
    CHECK(offsets[4] == 3 && offsets[5] == 5 && offsets[6] == 5 && offsets[7] == 6 && offsets[8] == 7);
    CHECK(offsets[9] == 10 && offsets[10] == 0 && offsets[11] == 0);
    CHECK(bertl14_ctx_tokenize_offsets(&ctx, "w7 w9, w12", ids2, NULL, &count2, 16) == BERTL14_OK && count2 == 6);
    CHECK(bertl14_ctx_tokenize_offsets(&ctx, "w7 w9, w12", ids2, offsets, &count2, 3) == BERTL14_ERR_TOKEN_OVERFLOW);
    CHECK(count2 == 3 && offsets[2] == 0 && offsets[3] == 2 && offsets[4] == 0 && offsets[5] == 0);

    /* dumps */
    CHECK(bertl14_ctx_dump_tensor(&ctx, &t, "CLS_EMB") == BERTL14_ERR_NOT_INITIALIZED); /* no hook yet */
    CHECK(bertl14_ctx_set_output_hook(NULL, hook, NULL) == BERTL14_ERR_NULL_POINTER);
    CHECK(bertl14_ctx_set_output_hook(&ctx, NULL, NULL) == BERTL14_ERR_NULL_POINTER);
    CHECK(bertl14_ctx_set_output_hook(&ctx, hook, NULL) == BERTL14_OK);
    CHECK(bertl14_ctx_dump_tensor(NULL, &t, "X") == BERTL14_ERR_NULL_POINTER);
    CHECK(bertl14_ctx_dump_tensor(&ctx, NULL, "X") == BERTL14_ERR_NULL_POINTER);
    CHECK(bertl14_ctx_dump_tensor(&ctx, &t, NULL) == BERTL14_ERR_NULL_POINTER);
    out_len = 0;
    CHECK(bertl14_ctx_dump_tensor(&ctx, &t, "CLS_EMB") == BERTL14_OK);
    CHECK(out_len == strlen("CLS_EMB: ") + 5 * hidden);   /* "0x1a," per byte, last with "\n" */
    CHECK(strncmp(out, "CLS_EMB: 0x", 11) == 0 && out[out_len - 1] == '\n');
    {
        char expect[16];
        snprintf(expect, sizeof expect, "0x%02x", (unsigned)(uint8_t)((int8_t *)t.data_ptr)[0]);
        CHECK(strncmp(out + 9, expect, 4) == 0);
    }

    /* the calls on the default context (bertl14.h's short API) */
    CHECK(bertl14_set_output_hook(NULL, NULL) == BERTL14_ERR_NULL_POINTER);
    CHECK(bertl14_set_output_hook(hook, NULL) == BERTL14_OK);   /* before init: kept */
    CHECK(bertl14_encode(ids, 4, &t) == BERTL14_ERR_NOT_INITIALIZED);
    CHECK(bertl14_init(&cfg) == BERTL14_OK);
    int32_t tokens[16];
    uint32_t token_count = 0;
    CHECK(bertl14_tokenize("turn on the light", tokens, &token_count, 16) == BERTL14_OK && token_count >= 2);
    CHECK(bertl14_tokenize(NULL, tokens, &token_count, 16) == BERTL14_ERR_NULL_POINTER);
    bertl14_tensor_t cls_embedding;
    cls_embedding.data_ptr = work;
    CHECK(bertl14_encode(tokens, token_count, &cls_embedding) == BERTL14_OK);
    CHECK(bertl14_encode(NULL, token_count, &cls_embedding) == BERTL14_ERR_NULL_POINTER);
    CHECK(bertl14_get_last_hidden_state(&all) == BERTL14_OK && all.dims[1] == token_count);
    CHECK(bertl14_get_last_hidden_state(NULL) == BERTL14_ERR_NULL_POINTER);
    out_len = 0;
    CHECK(bertl14_dump_tensor(&cls_embedding, "CLS_EMB") == BERTL14_OK && out_len == 9 + 5 * hidden);
    CHECK(bertl14_dump_tensor(NULL, "CLS_EMB") == BERTL14_ERR_NULL_POINTER);
    CHECK(bertl14_classify(NULL) == BERTL14_ERR_NULL_POINTER);
    bertl14_classification_t dcls;
    CHECK(bertl14_classify(&dcls) == (labels ? BERTL14_OK : BERTL14_ERR_NO_CLASSIFIER));
    CHECK((strlen(bertl14_label_name(0)) > 0) == (labels > 0));
    CHECK(bertl14_tokenize_offsets("turn on the light", tokens, offsets, &token_count, 16) == BERTL14_OK);
    CHECK(token_count >= 2 && offsets[0] == 0 && offsets[2 * token_count - 1] == 0);
    CHECK(bertl14_encode(tokens, token_count, &cls_embedding) == BERTL14_OK);
    CHECK(bertl14_tag(tags, 16, &ntags) == (num_tags ? BERTL14_OK : BERTL14_ERR_NO_TAGGER));
    CHECK(bertl14_tag(NULL, 16, &ntags) == BERTL14_ERR_NULL_POINTER);
    CHECK(strcmp(bertl14_tag_name(0), num_tags ? "O" : "") == 0);
    CHECK(bertl14_default_ctx() != NULL);
    for (int s = 0; s >= -10; s--) {
        CHECK(strlen(bertl14_status_str((bertl14_status_t)s)) > 0);
    }
    CHECK(strcmp(bertl14_status_str((bertl14_status_t)-100), "unknown status") == 0);
    printf("%d checks, %d failures\n", checks, failures);
    return failures ? 1 : 0;
}
