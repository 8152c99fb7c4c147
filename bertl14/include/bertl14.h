/**
 * @file bertl14.h
 * @brief bertl14: BERT-style text encoders on Cortex-M. The one public header.
 *
 * The short calls (bertl14_init, bertl14_tokenize, bertl14_encode, ...) use one default context
 * that bertl14_init() sets up. The bertl14_ctx_* forms take an explicit context so that two models
 * or two tasks can run side by side with no hidden state.
 *
 * Every call returns a bertl14_status_t; nothing allocates memory; all activations live in the
 * caller's work buffer. Numerics: docs/numerics.md. Model data layout: docs/model-format.md.
 */
#ifndef BERTL14_H
#define BERTL14_H

#include <stddef.h>
#include <stdint.h>

#ifdef __cplusplus
extern "C" {
#endif

/** Status codes; 0 is success. */
typedef enum {
    BERTL14_OK = 0,
    BERTL14_ERR_INVALID_CONFIG = -1,   /**< config field out of range, or model data not recognised */
    BERTL14_ERR_BUFFER_TOO_SMALL = -2, /**< work buffer smaller than bertl14_required_work_buffer_size() */
    BERTL14_ERR_TOKEN_OVERFLOW = -3,   /**< input truncated to max_tokens; the truncated result is usable */
    BERTL14_ERR_INVALID_SEQ_LEN = -4,  /**< seq_len is 0 or above max_seq_len */
    BERTL14_ERR_NULL_POINTER = -5,     /**< a required pointer argument is NULL */
    BERTL14_ERR_INVALID_UTF8 = -6,     /**< input text is not valid UTF-8 */
    BERTL14_ERR_NOT_INITIALIZED = -7,  /**< context used before bertl14_init / bertl14_ctx_init */
    BERTL14_ERR_NO_CLASSIFIER = -8,    /**< model has no pooler + classifier head */
    BERTL14_ERR_INVALID_TOKEN = -9,    /**< a token id is outside the vocabulary */
    BERTL14_ERR_NO_TAGGER = -10,       /**< model has no token classification (tagging) head */
    /* Model data checks of bertl14_init (docs/model-format.md, "Checks"): the first failing check answers. */
    BERTL14_ERR_MODEL_FORMAT = -11,    /**< not model data of this format version (magic, version, flags, alignment) */
    BERTL14_ERR_MODEL_SIZE = -12,      /**< the data's length (weights_size, vocab_offsets_size) is not the length it declares */
    BERTL14_ERR_MODEL_CORRUPT = -13,   /**< checksum mismatch: the data was changed after conversion */
    BERTL14_ERR_MODEL_LAYOUT = -14,    /**< a section or table outside the data, out of order, or not the size the dimensions need */
    BERTL14_ERR_MODEL_RANGE = -15,     /**< a dimension or quantization parameter outside the range the kernels are exact for */
} bertl14_status_t;

/** Element types of a tensor view. Like every name of the library's headers they carry the BERTL14_ prefix:
 *  vendor headers define INT8, INT16 and FLOAT32 themselves. */
typedef enum {
    BERTL14_INT8 = 0,
    BERTL14_INT16 = 1,
    BERTL14_FLOAT32 = 2,
    BERTL14_INT32 = 3,
} bertl14_dtype_t;

/** Library configuration (the work buffer, its size, and the model data's sizes). Every field is required. */
typedef struct {
    uint32_t max_seq_len;          /**< longest sequence incl. [CLS] and [SEP]; 1..512 and <= the model's positions */
    uint32_t vocab_size;           /**< must equal the model's vocabulary size (checked) */
    int8_t *work_buffer_ptr;       /**< caller's RAM for all activations (4-byte aligned) */
    uint32_t work_buffer_size;     /**< bytes at work_buffer_ptr */
    const int16_t *weights_ptr;    /**< the converter's bertl14_weights[] (flash) */
    const uint32_t *vocab_offsets; /**< the converter's bertl14_vocab_offsets[] (first-byte index; vocabulary follows) */
    uint32_t weights_size;         /**< bytes at weights_ptr (BERTL14_WEIGHTS_SIZE): nothing past them is read */
    uint32_t vocab_offsets_size;   /**< bytes at vocab_offsets (BERTL14_VOCAB_SECTION_SIZE): nothing past them is read */
} bertl14_config_t;

/** A view into the work buffer: no data is copied. */
typedef struct {
    void *data_ptr;
    uint32_t dims[4];
    bertl14_dtype_t dtype;
} bertl14_tensor_t;

/** Output hook: bertl14_dump_tensor() writes its text through it (e.g. to a UART). */
typedef void (*bertl14_write_fn)(const char *text, size_t len, void *user);

/** Work-buffer plan: byte offsets of every activation, computed once at init (see bertl14_ctx_t). */
typedef struct {
    uint32_t h;          /**< int8 [max_seq][hidden]: the residual stream / layer input */
    uint32_t h_scale;    /**< uint32 [max_seq]: row scales of h */
    uint32_t k;          /**< int16 [heads][max_seq + 15 & ~15][head_dim]: keys, row-quantized per head (blocks of 4 keys) */
    uint32_t k_scale;    /**< uint32 [heads][max_seq + 15 & ~15] */
    uint32_t v;          /**< int16 [heads][head_dim + 3 & ~3][max_seq + 15 & ~15]: values, transposed (blocks of 4 channels) */
    uint32_t v_scale;    /**< uint32 [heads][max_seq + 15 & ~15] */
    uint32_t kv_max;     /**< uint32 [2][heads]: each head's largest key scale, then value scale */
    uint32_t x16;        /**< int16 [block][max(hidden, attn, inter)]: matmul input rows */
    uint32_t x_scale;    /**< uint32 [block]: their row scales */
    uint32_t q16;        /**< int16 [block][attn]: Q/K/V projection output */
    uint32_t q;          /**< int16 [heads][block][head_dim]: queries, row-quantized per head (a block of rows) */
    uint32_t q_scale;    /**< uint32 [heads][block] */
    uint32_t ctx16;      /**< int16 [block][attn]: attention context */
    uint32_t scores;     /**< int32 [block][max_seq + 15 & ~15]: the block's scores (one head), then the weights */
    uint32_t probs;      /**< uint8 [block][max_seq + 15 & ~15]: their probabilities */
    uint32_t y32;        /**< int32 [block][max(hidden, labels)]: sublayer output / residual sum */
    uint32_t ln16;       /**< int16 [block][hidden]: LayerNorm output */
    uint32_t h1;         /**< int8 [block][hidden]: attention block output (FFN residual) */
    uint32_t h1_scale;   /**< uint32 [block] */
    uint32_t up16;       /**< int16 [block][inter]: FFN up / GELU / its quantized form */
    uint32_t tag32;      /**< int32 [num_tags]: one token's tag logits (own region: classify's logits stay valid) */
    uint32_t total;      /**< bytes */
} bertl14_plan_t;

/** Model dimensions read from the weights blob at init. */
typedef struct {
    uint32_t hidden, num_layers, num_heads, head_dim, intermediate;
    uint32_t max_heads_kept;   /**< heads per layer after pruning (the same in every layer) */
    uint32_t max_position, vocab_size, num_labels;
    uint32_t num_tags;         /**< outputs of the token classification head (0: none) */
    uint32_t flags;            /**< blob flags (INT4 embeddings, classifier present, tagger present, ...) */
} bertl14_dims_t;

/**
 * A bertl14 instance. Fields are internal (read-only for applications); allocate one statically
 * and pass it to the bertl14_ctx_* calls. All activations live in the work buffer it points to.
 */
typedef struct {
    uint32_t initialized;        /**< magic once bertl14_ctx_init succeeded */
    bertl14_config_t config;
    bertl14_dims_t dims;
    bertl14_plan_t plan;
    int32_t out_frac_bits;       /**< F of the encoder output rows (last LayerNorm's f_out) */
    uint32_t seq_len;            /**< tokens of the last successful encode (0: none yet) */
    bertl14_write_fn write;
    void *write_user;
} bertl14_ctx_t;

/** Result of bertl14_classify(). */
typedef struct {
    uint32_t label;              /**< index of the first largest logit */
    uint32_t score_q16;          /**< softmax probability of label in Q16 (65535 ~ 1.0) */
    uint32_t score_milli;        /**< the same in thousandths: (score_q16 * 1000 + 32768) >> 16 */
    const int32_t *logits;       /**< num_labels logits in Q10 (view into the work buffer) */
    uint32_t num_labels;
} bertl14_classification_t;

/* ---- the short calls (one default context set up by bertl14_init) ----------------------- */

/** Validate the configuration and the model data and plan the work buffer. Every byte of both
 *  arrays is checked once (sizes, checksums, section table, dimensions, parameter ranges: docs/model-format.md,
 *  "Checks"), so no later call reads outside them or runs a kernel outside its proven range.
 *  @return BERTL14_OK, BERTL14_ERR_NULL_POINTER, BERTL14_ERR_INVALID_CONFIG (config disagrees with the model),
 *          BERTL14_ERR_MODEL_FORMAT, _SIZE, _CORRUPT, _LAYOUT, _RANGE (the model data), BERTL14_ERR_BUFFER_TOO_SMALL */
bertl14_status_t bertl14_init(const bertl14_config_t *config);

/** WordPiece tokenization: [CLS] ... [SEP] ids into tokens (capacity max_tokens).
 *  @return BERTL14_OK, BERTL14_ERR_TOKEN_OVERFLOW (truncated, usable), BERTL14_ERR_INVALID_UTF8, ... */
bertl14_status_t bertl14_tokenize(const char *text, int32_t *tokens, uint32_t *token_count, uint32_t max_tokens);

/** Run the encoder; output becomes a view of the INT8 [CLS] row {1, 1, hidden, 1} in the work buffer.
 *  Its real value is q * bertl14_row_scale(...) (see bertl14_ctx_output_scale). */
bertl14_status_t bertl14_encode(const int32_t *input_ids, uint32_t seq_len, bertl14_tensor_t *output);

/** View of the last layer's INT8 rows of every token {1, seq_len, hidden, 1} of the last encode. */
bertl14_status_t bertl14_get_last_hidden_state(bertl14_tensor_t *output);

/** Write `NAME: 0x1a,0xff,...\n` (the tensor's bytes) through the output hook. */
bertl14_status_t bertl14_dump_tensor(const bertl14_tensor_t *tensor, const char *name);

/** Register the output hook of the default context (may be called before bertl14_init). */
bertl14_status_t bertl14_set_output_hook(bertl14_write_fn write, void *user);

/** Pooler + classifier on the last encode's [CLS] row. */
bertl14_status_t bertl14_classify(bertl14_classification_t *result);

/** Label name of class idx of the default context's model ("" if out of range or none). */
const char *bertl14_label_name(uint32_t idx);

/** bertl14_tokenize that also gives each token's byte span in @p text: offsets[2i], offsets[2i+1] = start,
 *  end (exclusive) of token i ([CLS] and [SEP]: 0, 0; a "##" piece: its bytes of the word; 65535 caps
 *  offsets beyond). @p offsets holds 2 * max_tokens values (NULL: ids only, i.e. bertl14_tokenize).
 *  Same ids and statuses as bertl14_tokenize: it is the same tokenizer. */
bertl14_status_t bertl14_tokenize_offsets(const char *text, int32_t *tokens, uint16_t *offsets,
                                          uint32_t *token_count, uint32_t max_tokens);

/** Token classification (slot tags) of every token of the last encode: tags[i] = first index of the
 *  largest tag logit of token i (int32 logits in Q10, as the classifier's), for the first
 *  min(seq_len, max_tokens) tokens; *count = how many were written. Works before or after bertl14_classify.
 *  @return BERTL14_OK, BERTL14_ERR_TOKEN_OVERFLOW (max_tokens < seq_len: the first max_tokens written),
 *          BERTL14_ERR_NO_TAGGER, BERTL14_ERR_NOT_INITIALIZED (nothing encoded), BERTL14_ERR_NULL_POINTER */
bertl14_status_t bertl14_tag(uint8_t *tags, uint32_t max_tokens, uint32_t *count);

/** Tag name of tag idx of the default context's model ("" if out of range or no tagger). */
const char *bertl14_tag_name(uint32_t idx);

/** The default context (for the bertl14_ctx_* calls, e.g. to read scales). */
bertl14_ctx_t *bertl14_default_ctx(void);

/* ---- explicit-context forms ---------------------------------------------------------------- */

bertl14_status_t bertl14_ctx_init(bertl14_ctx_t *ctx, const bertl14_config_t *config);
bertl14_status_t bertl14_ctx_tokenize(const bertl14_ctx_t *ctx, const char *text, int32_t *tokens,
                                      uint32_t *token_count, uint32_t max_tokens);
bertl14_status_t bertl14_ctx_encode(bertl14_ctx_t *ctx, const int32_t *input_ids, uint32_t seq_len,
                                    bertl14_tensor_t *output);
bertl14_status_t bertl14_ctx_get_last_hidden_state(const bertl14_ctx_t *ctx, bertl14_tensor_t *output);
bertl14_status_t bertl14_ctx_dump_tensor(const bertl14_ctx_t *ctx, const bertl14_tensor_t *tensor, const char *name);
bertl14_status_t bertl14_ctx_set_output_hook(bertl14_ctx_t *ctx, bertl14_write_fn write, void *user);
bertl14_status_t bertl14_ctx_classify(bertl14_ctx_t *ctx, bertl14_classification_t *result);
const char *bertl14_ctx_label_name(const bertl14_ctx_t *ctx, uint32_t idx);

/** bertl14_tokenize_offsets on ctx: ids and byte spans come from the one tokenizer bertl14_ctx_tokenize runs. */
bertl14_status_t bertl14_ctx_tokenize_offsets(const bertl14_ctx_t *ctx, const char *text, int32_t *tokens,
                                              uint16_t *offsets, uint32_t *token_count, uint32_t max_tokens);

/** bertl14_tag on ctx. Reads only the last encode's output rows, which bertl14_ctx_classify keeps. */
bertl14_status_t bertl14_ctx_tag(bertl14_ctx_t *ctx, uint8_t *tags, uint32_t max_tokens, uint32_t *count);

/** Tag name of tag idx of ctx's model ("" if out of range or no tagger). */
const char *bertl14_ctx_tag_name(const bertl14_ctx_t *ctx, uint32_t idx);

/** The num_tags tag logits (int32, Q10) of token `token` of the last encode, as a view into the work
 *  buffer valid until the next tag call (bertl14_classify leaves it alone).
 *  @return BERTL14_OK, BERTL14_ERR_INVALID_SEQ_LEN (token >= seq_len), BERTL14_ERR_NO_TAGGER,
 *          BERTL14_ERR_NOT_INITIALIZED, BERTL14_ERR_NULL_POINTER */
bertl14_status_t bertl14_ctx_tag_logits(bertl14_ctx_t *ctx, uint32_t token, const int32_t **logits);

/** Row scale s of token row `token` of the last encode's INT8 output (real = q * s * 2^-(F + 8)),
 *  and the fixed-point exponent F of that output. */
bertl14_status_t bertl14_ctx_output_scale(const bertl14_ctx_t *ctx, uint32_t token, uint32_t *scale,
                                          int32_t *frac_bits);

/** Model dimensions of an initialised context. */
bertl14_status_t bertl14_ctx_dims(const bertl14_ctx_t *ctx, bertl14_dims_t *dims);

/* ---- sizing and diagnostics --------------------------------------------------------------- */

/** Exact work-buffer bytes bertl14_init needs for this model at max_seq_len (0 if the weights_size bytes at
 *  weights fail bertl14_init's checks of the weights or max_seq_len is out of range). */
uint32_t bertl14_required_work_buffer_size(const int16_t *weights, uint32_t weights_size, uint32_t max_seq_len);

/** A short English description of a status code. */
const char *bertl14_status_str(bertl14_status_t status);

/* ---- a label among allowed ones (bertl14_classify_allowed.c) -------------------------------------- */

/**
 * The first largest of @p logits among the labels @p allowed lets answer, and its softmax probability over the
 * allowed labels (the answer's probability given that only those may answer), computed as bertl14_classify
 * computes its top score (with every label allowed the result is the same bits). E.g. the firmware's domain rule:
 * only the intents that accept the domain of a device named in the text.
 * @param logits     num_labels logits in Q10 (a bertl14_classification_t's logits)
 * @param allowed    bit c % 32 of allowed[c / 32] set: label c may answer; NULL, or no label allowed: every label
 * @param result     label, score_q16, score_milli; logits and num_labels as given (may be the classification
 *                   the logits came from)
 * @return BERTL14_OK, BERTL14_ERR_NULL_POINTER, BERTL14_ERR_NO_CLASSIFIER (num_labels 0)
 */
bertl14_status_t bertl14_classify_allowed(const int32_t *logits, uint32_t num_labels, const uint32_t *allowed,
                                          bertl14_classification_t *result);

#ifdef __cplusplus
}
#endif

#endif /* BERTL14_H */
