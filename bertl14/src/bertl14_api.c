/* Public API glue: argument checks, the short calls on the default context, status strings,
 * tensor dumps through the application's output hook. The encoder itself is bertl14_encoder.c. */
/* Cold code: compiled for size (bertl14/sources.cmake). */
#include "bertl14.h"
#include "bertl14_internal.h"
#include "bertl14_tokenizer.h"

/* The only writable global of the library: the context the short calls use. */
static bertl14_ctx_t g_default_ctx;

bertl14_ctx_t *bertl14_default_ctx(void) { return &g_default_ctx; }

const char *bertl14_status_str(bertl14_status_t status)
{
    switch (status) {
    case BERTL14_OK: return "ok";
    case BERTL14_ERR_INVALID_CONFIG: return "invalid configuration or model data (check vocab_size, max_seq_len and the weights array)";
    case BERTL14_ERR_BUFFER_TOO_SMALL: return "work buffer too small (see bertl14_required_work_buffer_size)";
    case BERTL14_ERR_TOKEN_OVERFLOW: return "input truncated to max_tokens";
    case BERTL14_ERR_INVALID_SEQ_LEN: return "sequence length is 0 or above max_seq_len";
    case BERTL14_ERR_NULL_POINTER: return "a required pointer argument is NULL";
    case BERTL14_ERR_INVALID_UTF8: return "input text is not valid UTF-8";
    case BERTL14_ERR_NOT_INITIALIZED: return "context not initialised (call bertl14_init first)";
    case BERTL14_ERR_NO_CLASSIFIER: return "model has no classifier head";
    case BERTL14_ERR_INVALID_TOKEN: return "token id outside the vocabulary";
    case BERTL14_ERR_NO_TAGGER: return "model has no token tagging head";
    case BERTL14_ERR_MODEL_FORMAT: return "model data not in this version's format: convert the model again";
    case BERTL14_ERR_MODEL_SIZE: return "model data size is not weights_size / vocab_offsets_size of the config";
    case BERTL14_ERR_MODEL_CORRUPT: return "model data checksum mismatch: convert and flash the model again";
    case BERTL14_ERR_MODEL_LAYOUT: return "model data sections do not match its dimensions: convert it again";
    case BERTL14_ERR_MODEL_RANGE: return "model dimension or parameter out of range (docs/model-format.md)";
    }
    return "unknown status";
}

/* the one tokenizer: bertl14_ctx_tokenize is this call without offsets */
bertl14_status_t bertl14_ctx_tokenize_offsets(const bertl14_ctx_t *ctx, const char *text, int32_t *tokens,
                                              uint16_t *offsets, uint32_t *token_count, uint32_t max_tokens)
{
    if (!ctx || !text || !tokens || !token_count) {
        return BERTL14_ERR_NULL_POINTER;
    }
    if (ctx->initialized != BERTL14_CTX_MAGIC) {
        return BERTL14_ERR_NOT_INITIALIZED;
    }
    return bertl14_tokenizer_run(ctx->config.vocab_offsets, text, tokens, offsets, token_count, max_tokens);
}

bertl14_status_t bertl14_ctx_tokenize(const bertl14_ctx_t *ctx, const char *text, int32_t *tokens,
                                      uint32_t *token_count, uint32_t max_tokens)
{
    return bertl14_ctx_tokenize_offsets(ctx, text, tokens, NULL, token_count, max_tokens);
}

bertl14_status_t bertl14_ctx_set_output_hook(bertl14_ctx_t *ctx, bertl14_write_fn write, void *user)
{
    if (!ctx || !write) {
        return BERTL14_ERR_NULL_POINTER;
    }
    ctx->write = write;
    ctx->write_user = user;
    return BERTL14_OK;
}

static uint32_t dtype_size(bertl14_dtype_t t)
{
    return t == BERTL14_INT8 ? 1u : (t == BERTL14_INT16 ? 2u : 4u);
}

bertl14_status_t bertl14_ctx_dump_tensor(const bertl14_ctx_t *ctx, const bertl14_tensor_t *tensor, const char *name)
{
    static const char hex[] = "0123456789abcdef";
    if (!ctx || !tensor || !name || !tensor->data_ptr) {
        return BERTL14_ERR_NULL_POINTER;
    }
    if (!ctx->write) {
        return BERTL14_ERR_NOT_INITIALIZED;
    }
    uint32_t count = dtype_size(tensor->dtype);
    for (int i = 0; i < 4; i++) {
        count *= tensor->dims[i] ? tensor->dims[i] : 1u;
    }
    const uint8_t *bytes = (const uint8_t *)tensor->data_ptr;
    uint32_t len = 0;
    while (name[len]) {
        len++;
    }
    ctx->write(name, len, ctx->write_user);
    ctx->write(": ", 2, ctx->write_user);
    char chunk[5 * 16];
    uint32_t n = 0;
    for (uint32_t i = 0; i < count; i++) {
        if (i) {
            chunk[n++] = ',';
        }
        chunk[n++] = '0';
        chunk[n++] = 'x';
        chunk[n++] = hex[bytes[i] >> 4];
        chunk[n++] = hex[bytes[i] & 15u];
        if (n > sizeof chunk - 5) {
            ctx->write(chunk, n, ctx->write_user);
            n = 0;
        }
    }
    chunk[n++] = '\n';
    ctx->write(chunk, n, ctx->write_user);
    return BERTL14_OK;
}

/* ---- the short calls ---------------------------------------------------------------------- */

bertl14_status_t bertl14_init(const bertl14_config_t *config)
{
    /* keep a hook registered before init */
    bertl14_write_fn write = g_default_ctx.write;
    void *user = g_default_ctx.write_user;
    bertl14_status_t st = bertl14_ctx_init(&g_default_ctx, config);
    g_default_ctx.write = write;
    g_default_ctx.write_user = user;
    return st;
}

bertl14_status_t bertl14_tokenize(const char *text, int32_t *tokens, uint32_t *token_count, uint32_t max_tokens)
{
    return bertl14_ctx_tokenize(&g_default_ctx, text, tokens, token_count, max_tokens);
}

bertl14_status_t bertl14_encode(const int32_t *input_ids, uint32_t seq_len, bertl14_tensor_t *output)
{
    return bertl14_ctx_encode(&g_default_ctx, input_ids, seq_len, output);
}

bertl14_status_t bertl14_get_last_hidden_state(bertl14_tensor_t *output)
{
    return bertl14_ctx_get_last_hidden_state(&g_default_ctx, output);
}

bertl14_status_t bertl14_dump_tensor(const bertl14_tensor_t *tensor, const char *name)
{
    return bertl14_ctx_dump_tensor(&g_default_ctx, tensor, name);
}

bertl14_status_t bertl14_set_output_hook(bertl14_write_fn write, void *user)
{
    return bertl14_ctx_set_output_hook(&g_default_ctx, write, user);
}

bertl14_status_t bertl14_classify(bertl14_classification_t *result)
{
    return bertl14_ctx_classify(&g_default_ctx, result);
}

const char *bertl14_label_name(uint32_t idx)
{
    return bertl14_ctx_label_name(&g_default_ctx, idx);
}

bertl14_status_t bertl14_tokenize_offsets(const char *text, int32_t *tokens, uint16_t *offsets,
                                          uint32_t *token_count, uint32_t max_tokens)
{
    return bertl14_ctx_tokenize_offsets(&g_default_ctx, text, tokens, offsets, token_count, max_tokens);
}

bertl14_status_t bertl14_tag(uint8_t *tags, uint32_t max_tokens, uint32_t *count)
{
    return bertl14_ctx_tag(&g_default_ctx, tags, max_tokens, count);
}

const char *bertl14_tag_name(uint32_t idx)
{
    return bertl14_ctx_tag_name(&g_default_ctx, idx);
}
