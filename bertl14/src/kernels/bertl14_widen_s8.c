/* INT8 rows widened to int16, the linear kernels' input form (a row, or the block layout of bertl14_block_index). */
#include "bertl14_kernels.h"
#include "bertl14_acle_emul.h"
#if defined(BERTL14_USE_MVE)
#include "bertl14_mve.h"
#endif

void bertl14_widen_s8(const int8_t *x, uint32_t count, int16_t *y)
{
    for (uint32_t i = 0; i < count; i++) {
        y[i] = x[i];
    }
}

void bertl14_widen_block_s8(const int8_t *rows, uint32_t tokens, uint32_t n, int16_t *blk)
{
    const uint32_t n4 = n & ~3u, tail = n - n4;
    for (uint32_t c = 0; c < n4; c += 4) {                       /* chunk c of every token, in order */
        for (uint32_t t = 0; t < tokens; t++, blk += 4) {
#if defined(BERTL14_USE_MVE)
            vstrhq_s32(blk, vldrbq_s32(rows + t * n + c));   /* four bytes widened, four halfwords stored */
#elif defined(BERTL14_USE_DSP)
            const uint32_t w = bertl14_ld32(rows + t * n + c);
            const uint32_t even = bertl14_sxtb16(w), odd = bertl14_sxtb16_ror8(w);   /* (x0, x2), (x1, x3) */
            bertl14_st32(blk, bertl14_pack_lo16(even, odd));                          /* PKHBT: (x0, x1) */
            bertl14_st32(blk + 2, bertl14_pack_hi16(even, odd));                      /* PKHTB: (x2, x3) */
#else
            bertl14_widen_s8(rows + t * n + c, 4, blk);
#endif
        }
    }
    for (uint32_t t = 0; t < tokens; t++, blk += tail) {
        bertl14_widen_s8(rows + t * n + n4, tail, blk);
    }
}
