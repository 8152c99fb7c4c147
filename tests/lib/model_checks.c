/* bertl14_init on model data read from files (driven by test_model_checks.py, built with ASan + UBSan):
 *   model_checks MAX_SEQ_LEN WEIGHTS VOCAB [WEIGHTS VOCAB ...]
 * Each file is read into a heap buffer of exactly its size and passed with that size, so a read past the data
 * is a sanitizer report. For each pair one line: "<init status> <required work buffer size> <run>", where <run>
 * is "-" when init failed, else "ok" once tokenize, encode, classify and tag (the heads the model has) all
 * succeeded on a sentence, or the status code of the first call that did not. */
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "bertl14.h"

static int8_t g_work[1 << 20];

static void *slurp(const char *path, uint32_t *len)
{
    FILE *f = fopen(path, "rb");
    if (!f) {
        perror(path);
        exit(2);
    }
    fseek(f, 0, SEEK_END);
    *len = (uint32_t)ftell(f);
    fseek(f, 0, SEEK_SET);
    void *p = malloc(*len ? *len : 1u);
    if (!p || fread(p, 1, *len, f) != *len) {
        exit(2);
    }
    fclose(f);
    return p;
}

static int run(bertl14_ctx_t *ctx, uint32_t max_seq)
{
    bertl14_dims_t dims;
    bertl14_tensor_t out;
    bertl14_classification_t cls;
    int32_t ids[512];
    uint8_t tags[512];
    uint32_t n = 0, count = 0;
    int st = bertl14_ctx_tokenize(ctx, "turn on w1 w2 w3 w42 xyz", ids, &n, max_seq);
    if (st != BERTL14_OK && st != BERTL14_ERR_TOKEN_OVERFLOW) {
        return st;
    }
    if ((st = bertl14_ctx_encode(ctx, ids, n, &out)) != BERTL14_OK || (st = bertl14_ctx_dims(ctx, &dims)) != 0) {
        return st;
    }
    if (dims.num_labels) {
        if ((st = bertl14_ctx_classify(ctx, &cls)) != BERTL14_OK) {
            return st;
        }
        (void)strlen(bertl14_ctx_label_name(ctx, cls.label));
    }
    if (dims.num_tags) {
        if ((st = bertl14_ctx_tag(ctx, tags, n, &count)) != BERTL14_OK) {
            return st;
        }
        (void)strlen(bertl14_ctx_tag_name(ctx, tags[0]));
    }
    return BERTL14_OK;
}

int main(int argc, char **argv)
{
    static bertl14_ctx_t ctx;
    if (argc < 4 || argc % 2) {
        fprintf(stderr, "usage: model_checks MAX_SEQ_LEN WEIGHTS VOCAB [WEIGHTS VOCAB ...]\n");
        return 2;
    }
    const uint32_t max_seq = (uint32_t)atoi(argv[1]);
    for (int i = 2; i + 1 < argc; i += 2) {
        uint32_t wsize, vsize;
        const int16_t *weights = slurp(argv[i], &wsize);
        const uint32_t *vocab = slurp(argv[i + 1], &vsize);
        fprintf(stderr, "case %d: %s %s\n", i / 2 - 1, argv[i], argv[i + 1]); /* names the case a report stops at */
        const uint32_t need = bertl14_required_work_buffer_size(weights, wsize, max_seq);
        const uint32_t vocab_size = wsize >= 64u ? ((const uint32_t *)(const void *)weights)[8] : 0u;
        bertl14_config_t cfg = {max_seq, vocab_size, g_work, sizeof g_work, weights, vocab, wsize, vsize};
        const int st = bertl14_ctx_init(&ctx, &cfg);
        if (st == BERTL14_OK) {
            const int r = run(&ctx, max_seq);
            if (r == BERTL14_OK) {
                printf("%d %u ok\n", st, need);
            } else {
                printf("%d %u %d\n", st, need, r);
            }
        } else {
            printf("%d %u -\n", st, need);
        }
        fflush(stdout);
        free((void *)weights);
        free((void *)vocab);
    }
    return 0;
}
