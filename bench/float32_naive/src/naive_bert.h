/* A straightforward float32 BERT encoder + classifier: the baseline of `bertl14 bench`. */
#ifndef NAIVE_BERT_H
#define NAIVE_BERT_H
#include <stdint.h>

/** Encode ids[0..n-1] (n <= FM_MAX_SEQ) and write FM_LABELS logits. @return bytes of activation buffers. */
uint32_t naive_bert(const int32_t *ids, uint32_t n, float *logits);

#endif
