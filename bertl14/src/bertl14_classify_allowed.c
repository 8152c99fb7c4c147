/* bertl14_classify_allowed (bertl14.h): the best label among those the caller allows, from a classification's
 * logits, and its softmax score over the allowed labels. The firmware uses it for the registry's domain rule
 * (app/src/intent.c, docs/registry.md): a sentence that names a fan may only answer the intents that accept a fan,
 * and the score is the probability of the answer given that knowledge (the softmax restricted to the allowed
 * labels), so that a threshold still means what it means for a plain answer. It is computed as
 * bertl14_ctx_classify computes its top score (numerics "softmax": exp_q23 of each logit's distance to the largest
 * one, bertl14_kernels.h) over the allowed labels; with every label allowed the two are the same bits. Python twin:
 * bertl14_tools.reference.answer.classify_allowed. */
#include "bertl14.h"
#include "bertl14_internal.h"

bertl14_status_t bertl14_classify_allowed(const int32_t *logits, uint32_t num_labels, const uint32_t *allowed,
                                          bertl14_classification_t *result)
{
    if (!logits || !result) {
        return BERTL14_ERR_NULL_POINTER;
    }
    if (num_labels == 0u) {
        return BERTL14_ERR_NO_CLASSIFIER;
    }
    uint32_t best = UINT32_MAX;
    for (;;) {
        for (uint32_t c = 0; c < num_labels; c++) {
            if ((!allowed || ((allowed[c >> 5] >> (c & 31u)) & 1u)) &&
                (best == UINT32_MAX || logits[c] > logits[best])) {
                best = c;                                                     /* first argmax of the allowed */
            }
        }
        if (best != UINT32_MAX) {
            break;
        }
        allowed = NULL; /* nothing allowed: the plain argmax */
    }
    const int32_t top = logits[best]; /* the largest allowed logit */
    uint64_t sum = 0;
    for (uint32_t c = 0; c < num_labels; c++) {                               /* softmax denominator */
        if (!allowed || ((allowed[c >> 5] >> (c & 31u)) & 1u)) {
            /* top >= logits[c]: their difference is exact in uint32 (and exp_q23 is 0 from 2^16 on) */
            sum += bertl14_exp_q23((uint32_t)top - (uint32_t)logits[c]);
        }
    }
    const uint32_t num = bertl14_exp_q23(0u);                                 /* exp(logit[best] - top), Q23 */
    const uint64_t q16 = bertl14_udiv_round((uint64_t)num << 16, sum);        /* p(best) in Q16 */
    result->label = best;
    result->score_q16 = q16 > 65535u ? 65535u : (uint32_t)q16;
    result->score_milli = (result->score_q16 * 1000u + 32768u) >> 16;
    result->logits = logits;
    result->num_labels = num_labels;
    return BERTL14_OK;
}
