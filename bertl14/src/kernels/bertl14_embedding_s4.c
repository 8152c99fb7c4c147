/* Embedding lookup (docs/numerics.md "Embeddings"): INT4 word row (two channels a byte) + position row
 * (token type 0 folded in), each with a uint16 row scale and a per-table shift, into Q(f_e). */
/* Once a token: compiled for size (bertl14/sources.cmake). */
#include "bertl14_kernels.h"

void bertl14_embedding_s4(const uint8_t *word, const int8_t *pos, const bertl14_embedding_quant *q, uint32_t n,
                          int32_t *e)
{
    for (uint32_t c = 0; c < n; c++) {
        const uint32_t byte = word[c >> 1];
        const uint32_t nib = (c & 1u) ? byte >> 4 : byte & 15u;   /* low nibble = even channel */
        const int32_t w = (int32_t)nib - (int32_t)((nib & 8u) << 1); /* two's complement nibble */
        e[c] = (int32_t)(bertl14_rsr((int64_t)w * q->word_scale, q->word_shift) +
                         bertl14_rsr((int64_t)pos[c] * q->pos_scale, q->pos_shift));
    }
}
