/* Embedding lookup (docs/numerics.md "Embeddings"): INT8 word row + position row
 * (token type 0 folded in), each with a uint16 row scale and a per-table shift, into Q(f_e). */
/* Once a token: compiled for size (bertl14/sources.cmake). */
#include "bertl14_kernels.h"

void bertl14_embedding_s8(const int8_t *word, const int8_t *pos, const bertl14_embedding_quant *q, uint32_t n,
                          int32_t *e)
{
    if (bertl14_embedding_fast(q)) {                                /* 32-bit pieces, the same integers */
        const int32_t ws = (int32_t)q->word_scale, ps = (int32_t)q->pos_scale;
        const int32_t wsh = q->word_shift, psh = q->pos_shift, wr = 1 << (wsh - 1), pr = 1 << (psh - 1);
        for (uint32_t c = 0; c < n; c++) {
            e[c] = ((word[c] * ws + wr) >> wsh) + ((pos[c] * ps + pr) >> psh);
        }
        return;
    }
    for (uint32_t c = 0; c < n; c++) {
        e[c] = (int32_t)(bertl14_rsr((int64_t)word[c] * q->word_scale, q->word_shift) +
                         bertl14_rsr((int64_t)pos[c] * q->pos_scale, q->pos_shift));
    }
}
