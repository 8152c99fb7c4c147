/**
 * @file bertl14.h
 * @brief bertl14: BERT-style text encoders on Cortex-M. The one public header.
 *
 * Seed-style calls (bertl14_init, bertl14_tokenize, bertl14_encode, ...) use one default context
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

/** Status codes. The seed's codes keep their names; 0 is success. */
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
} bertl14_status_t;

/** Element types of a tensor view. */
typedef enum {
    BERTL14_INT8 = 0,
    BERTL14_INT16 = 1,
    BERTL14_FLOAT32 = 2,
    BERTL14_INT32 = 3,
} bertl14_dtype_t;

/* The seed's spellings of the dtypes. */
#define INT8 BERTL14_INT8
#define INT16 BERTL14_INT16
#define FLOAT32 BERTL14_FLOAT32

/** Library configuration (seed 3.2). Fields after vocab_offsets are optional (zero = default). */
typedef struct {
    uint32_t max_seq_len;          /**< longest sequence incl. [CLS] and [SEP]; 1..512 and <= the model's positions */
    uint32_t vocab_size;           /**< must equal the model's vocabulary size (checked) */
    int8_t *work_buffer_ptr;       /**< caller's RAM for all activations (4-byte aligned) */
    uint32_t work_buffer_size;     /**< bytes at work_buffer_ptr */
    const int16_t *weights_ptr;    /**< the converter's bertl14_weights[] (flash) */
    const uint32_t *vocab_offsets; /**< the converter's bertl14_vocab_offsets[] (first-byte index; vocabulary follows) */
} bertl14_config_t;

/** A view into the work buffer (seed 2.2): no data is copied. */
typedef struct {
    void *data_ptr;
    uint32_t dims[4];
    bertl14_dtype_t dtype;
} bertl14_tensor_t;

/* The API (bertl14_init, bertl14_tokenize, bertl14_encode, bertl14_get_last_hidden_state,
 * bertl14_dump_tensor, the context forms, the classifier and bertl14_required_work_buffer_size)
 * is declared below by the library. */

#ifdef __cplusplus
}
#endif

#endif /* BERTL14_H */
