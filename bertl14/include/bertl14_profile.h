/**
 * @file bertl14_profile.h
 * @brief Optional stage hooks for benchmarks (bertl14 bench): compiled in only when the library is built
 *        with BERTL14_PROFILE defined; otherwise every hook is an empty macro (no code, no state).
 *
 * With BERTL14_PROFILE the library calls bertl14_profile_stage(stage) each time the forward pass
 * moves to another stage; the application provides that function (e.g. reads a cycle counter and
 * adds the time since the previous call to the previous stage). tests/target/src/main.c is one.
 */
#ifndef BERTL14_PROFILE_H
#define BERTL14_PROFILE_H

/** Stages of one inference (the granularity of the benchmark's breakdown). */
typedef enum {
    BERTL14_STAGE_OTHER = 0,   /**< outside any stage below (API glue, the application) */
    BERTL14_STAGE_TOKENIZE,    /**< WordPiece tokenizer (marked by the application around bertl14_tokenize) */
    BERTL14_STAGE_EMBED,       /**< embedding lookup (word + position) */
    BERTL14_STAGE_QUANT,       /**< INT8 row quantization and widening of matmul inputs */
    BERTL14_STAGE_QKV,         /**< Q, K, V projections (linear kernel) */
    BERTL14_STAGE_SCORES,      /**< attention scores q.k (one head, one query row) */
    BERTL14_STAGE_SOFTMAX,     /**< LUT softmax */
    BERTL14_STAGE_CONTEXT,     /**< probabilities x values */
    BERTL14_STAGE_ATTN_OUT,    /**< attention output projection Wo (linear kernel) */
    BERTL14_STAGE_FFN_UP,      /**< FFN up projection (linear kernel) */
    BERTL14_STAGE_GELU,        /**< tanh-LUT GELU and the GELU-output smoothing */
    BERTL14_STAGE_FFN_DOWN,    /**< FFN down projection (linear kernel) */
    BERTL14_STAGE_LAYERNORM,   /**< residual adds and the integer LayerNorms (embedding LN included) */
    BERTL14_STAGE_CLASSIFIER,  /**< pooler, classifier and score; the token classifier (tags) */
    BERTL14_STAGE_COUNT
} bertl14_stage_t;

#if defined(BERTL14_PROFILE)
/** Provided by the application when the library is built with BERTL14_PROFILE. */
void bertl14_profile_stage(bertl14_stage_t stage);
#define BERTL14_STAGE(s) bertl14_profile_stage(BERTL14_STAGE_##s)
#else
#define BERTL14_STAGE(s) ((void)0)
#endif

#endif /* BERTL14_PROFILE_H */
