/* bertl14_classify_allowed (bertl14.h): the best label among those the caller allows, from a classification's
 * logits, and its softmax score. The firmware uses it for the registry's domain rule (app/src/intent.c, docs/
 * registry.md): a sentence that names a fan may only answer the intents that accept a fan. The score is computed
 * as bertl14_ctx_classify computes its top score (numerics "softmax": exp_q23 of each logit's distance to the
 * largest one, bertl14_kernels.h), generalised to a label that need not be the largest: the same denominator and
 * exp_q23(max - logit[label]) << 16 in place of 2^39; for the plain argmax the two are the same bits. Python twin:
 * bertl14_tools.answer.classify_allowed. */
/* Cold code (only sentences that name a device of a known domain): compiled for size, as bertl14_api.c. */
#if defined(__GNUC__) && !defined(__clang__)
#pragma GCC optimize("Os")
#endif
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
    uint32_t top = 0, best = UINT32_MAX;
    for (uint32_t c = 0; c < num_labels; c++) {
        top = logits[c] > logits[top] ? c : top;                              /* first argmax of all */
        if (!allowed || ((allowed[c >> 5] >> (c & 31u)) & 1u)) {
            best = (best == UINT32_MAX || logits[c] > logits[best]) ? c : best; /* first argmax of the allowed */
        }
    }
    if (best == UINT32_MAX) { /* nothing allowed: the plain argmax */
        best = top;
    }
    uint64_t sum = 0, num = 0;
    for (uint32_t c = 0; c < num_labels; c++) {                               /* softmax denominator */
        const uint32_t e = bertl14_exp_q23((uint64_t)((int64_t)logits[top] - logits[c]));
        sum += e;
        num = c == best ? (uint64_t)e << 16 : num;                            /* exp(logit[best] - max), Q39 */
    }
    const uint64_t q16 = bertl14_udiv_round(num, sum);                        /* p(best) in Q16 */
    result->label = best;
    result->score_q16 = q16 > 65535u ? 65535u : (uint32_t)q16;
    result->score_milli = (result->score_q16 * 1000u + 32768u) >> 16;
    result->logits = logits;
    result->num_labels = num_labels;
    return BERTL14_OK;
}
