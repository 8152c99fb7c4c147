/* Embedding lookup (docs/numerics.md "Embeddings"): INT4 word row (two channels a byte) + position row
 * (token type 0 folded in), each with a uint16 row scale and a per-table shift, into Q(f_e). */
/* Once a token: compiled for size (bertl14/sources.cmake). */
#include "bertl14_kernels.h"

void bertl14_embedding_s4(const uint8_t *word, const int8_t *pos, const bertl14_embedding_quant *q, uint32_t n,
                          int32_t *e)
{
    const int fast = bertl14_embedding_fast(q);                     /* 32-bit pieces, the same integers */
    for (uint32_t c = 0; c < n; c++) {
        const uint32_t byte = word[c >> 1];
        const uint32_t nib = (c & 1u) ? byte >> 4 : byte & 15u;   /* low nibble = even channel */
        const int32_t w = (int32_t)nib - (int32_t)((nib & 8u) << 1); /* two's complement nibble */
        if (fast) {
            e[c] = ((w * (int32_t)q->word_scale + (1 << (q->word_shift - 1))) >> q->word_shift) +
                   ((pos[c] * (int32_t)q->pos_scale + (1 << (q->pos_shift - 1))) >> q->pos_shift);
        } else {
            e[c] = (int32_t)(bertl14_rsr((int64_t)w * q->word_scale, q->word_shift) +
                             bertl14_rsr((int64_t)pos[c] * q->pos_scale, q->pos_shift));
        }
    }
}
