/* Internal declarations shared by the library's translation units (not installed). */
#ifndef BERTL14_INTERNAL_H
#define BERTL14_INTERNAL_H

#include "bertl14.h"
#include "bertl14_kernels.h"

#define BERTL14_CTX_MAGIC 0x3134424Cu /* "LB14" */
#define BERTL14_TOKEN_BLOCK 4u          /* tokens a weight load is reused for (DSP linear kernel) */
#define BERTL14_MAX_HEAD_DIM 128u
#define BERTL14_MAX_SEQ 512u

/* The weight type of the linear layers, fixed when the library is built (CONFIG_BERTL14_WEIGHTS_INT8 / _INT16):
 * bertl14_linear is its kernel; the blob's flag bit 5 must say the same (bertl14_model_parse). */
#if defined(BERTL14_WEIGHTS_INT8)
typedef int8_t bertl14_weight_t;
#define bertl14_linear bertl14_linear_s8_w8
#define BERTL14_WEIGHT_FLAG BERTL14_FLAG_WEIGHTS_INT8
#else
typedef int16_t bertl14_weight_t;
#define bertl14_linear bertl14_linear_s8_w16
#define BERTL14_WEIGHT_FLAG 0u
#endif

/** One linear layer of the blob: weights [out][in] and its requantization. */
typedef struct {
    const bertl14_weight_t *w;
    uint32_t out, in;
    bertl14_requant_t rq;
} bertl14_linear_t;

/** One encoder layer as the forward pass needs it (pointers into the blob, derived shifts). */
typedef struct {
    bertl14_linear_t q, k, v, o;  /* attention projections (1/sqrt(d) folded into q) */
    bertl14_linear_t up, down;    /* FFN */
    int32_t score_shift;          /* (f_q + 8) + (f_k + 8) - F_SM: q.k of two scaled rows -> Q(F_SM) */
    bertl14_residual_params res1; /* h into the attention output: shift F_h + 8 + 12 - f_r1 */
    bertl14_layernorm_params ln1;
    int32_t f_up;                 /* GELU input/output exponent */
    const uint16_t *gelu_ism;
    bertl14_residual_params res2; /* h1 into the FFN output: shift ln1.f_out + 8 + 12 - f_r2 */
    bertl14_layernorm_params ln2;
} bertl14_layer_t;

/** Embeddings, pooler, classifier, token classifier (tagger). */
typedef struct {
    const void *word;             /* int8 [V][H] or INT4 [V][H/2] */
    const uint16_t *word_scale;
    int32_t word_shift;
    const int8_t *pos;            /* [P][H], token type 0 folded in */
    const uint16_t *pos_scale;
    int32_t pos_shift;
    bertl14_layernorm_params ln;              /* F_r = f_e */
    bertl14_linear_t pooler, classifier;
    const char *labels;           /* num_labels NUL-terminated names back to back */
    bertl14_linear_t tagger;      /* num_tags > 0 only: on every token's output row, logits Q10 */
    const char *tags;             /* num_tags NUL-terminated names */
} bertl14_head_t;

/* bertl14_model.c: the weights blob (docs/model-format.md) */
#define BERTL14_FLAG_INT4 1u
#define BERTL14_FLAG_PER_TENSOR 2u
#define BERTL14_FLAG_SMOOTHING 4u
#define BERTL14_FLAG_CLASSIFIER 8u
#define BERTL14_FLAG_TAGGER 16u
#define BERTL14_FLAG_WEIGHTS_INT8 32u  /* every linear's w is INT8 (swizzled groups of four), else INT16 */
#define BERTL14_MAX_TAGS 256u           /* tag ids are uint8_t */
/* every check of docs/model-format.md on the size bytes at weights; dims filled on BERTL14_OK */
bertl14_status_t bertl14_model_parse(const int16_t *weights, uint32_t size, bertl14_dims_t *dims);
void bertl14_model_layer(const int16_t *weights, const bertl14_dims_t *dims, uint32_t l, bertl14_layer_t *layer);
void bertl14_model_head(const int16_t *weights, const bertl14_dims_t *dims, bertl14_head_t *head);
int32_t bertl14_model_output_frac_bits(const int16_t *weights, const bertl14_dims_t *dims);

/* bertl14_encoder.c */
void bertl14_plan(const bertl14_dims_t *dims, uint32_t max_seq_len, bertl14_plan_t *plan);

#endif /* BERTL14_INTERNAL_H */
