/* Linear layer: INT16 weights x INT8 activations (held as int16), per-channel requantization
 * (docs/numerics.md "Linear layer"). The DSP body loads each pair of weights once for up to four
 * tokens (SMLAD: two MACs an instruction), so weights stream from flash once per token block. */
#include <string.h>

#include "bertl14_kernels.h"
#include "bertl14_acle_emul.h"

static inline void store(int16_t *y16, int32_t *y32, uint32_t idx, int32_t acc, uint32_t s,
                         int32_t mult, int32_t shift, int32_t bias)
{
    /* |acc| < 2^31, s < 2^17, M < 2^15: the product fits int64 */
    int64_t v = bertl14_rsr((int64_t)acc * (int64_t)s * mult, shift) + bias;
    if (y16) {
        y16[idx] = (int16_t)bertl14_sat16(v);
    } else {
        y32[idx] = bertl14_sat32(v);
    }
}

static inline int32_t ld_bias(const int32_t *b, uint32_t o)
{
    int32_t v;
    memcpy(&v, b + o, sizeof v);
    return v;
}

#if defined(BERTL14_USE_DSP)
/* acc[j] += sum_i x_j[i] * w[i] for four tokens; in even. */
static inline void dot4(const int16_t *w, const int16_t *x0, const int16_t *x1, const int16_t *x2,
                        const int16_t *x3, uint32_t in, int32_t acc[4])
{
    int32_t a0 = 0, a1 = 0, a2 = 0, a3 = 0;
    uint32_t i = 0;
    for (; i + 4 <= in; i += 4) {
        uint32_t wa = bertl14_ld32(w + i), wb = bertl14_ld32(w + i + 2);
        a0 = __smlad(wa, bertl14_ld32(x0 + i), a0);
        a1 = __smlad(wa, bertl14_ld32(x1 + i), a1);
        a2 = __smlad(wa, bertl14_ld32(x2 + i), a2);
        a3 = __smlad(wa, bertl14_ld32(x3 + i), a3);
        a0 = __smlad(wb, bertl14_ld32(x0 + i + 2), a0);
        a1 = __smlad(wb, bertl14_ld32(x1 + i + 2), a1);
        a2 = __smlad(wb, bertl14_ld32(x2 + i + 2), a2);
        a3 = __smlad(wb, bertl14_ld32(x3 + i + 2), a3);
    }
    for (; i < in; i++) {
        a0 += w[i] * x0[i];
        a1 += w[i] * x1[i];
        a2 += w[i] * x2[i];
        a3 += w[i] * x3[i];
    }
    acc[0] = a0;
    acc[1] = a1;
    acc[2] = a2;
    acc[3] = a3;
}

static inline int32_t dot1(const int16_t *w, const int16_t *x, uint32_t in)
{
    int32_t a = 0, b = 0;
    uint32_t i = 0;
    for (; i + 4 <= in; i += 4) {
        a = __smlad(bertl14_ld32(w + i), bertl14_ld32(x + i), a);
        b = __smlad(bertl14_ld32(w + i + 2), bertl14_ld32(x + i + 2), b);
    }
    for (; i < in; i++) {
        a += w[i] * x[i];
    }
    return a + b;
}
#else
static inline int32_t dot1(const int16_t *w, const int16_t *x, uint32_t in)
{
    int32_t a = 0;
    for (uint32_t i = 0; i < in; i++) {
        a += (int32_t)w[i] * (int32_t)x[i];
    }
    return a;
}
#endif

void bertl14_linear_s16(const int16_t *x, const uint32_t *x_scale, uint32_t tokens, uint32_t in,
                        const int16_t *w, uint32_t out, const bertl14_requant_t *rq,
                        int16_t *y16, int32_t *y32, uint32_t y_stride)
{
    for (uint32_t o = 0; o < out; o++) {
        const int16_t *wo = w + (uint32_t)o * in;
        const int32_t mult = rq->mult[o], shift = rq->shift[o], bias = ld_bias(rq->bias, o);
        uint32_t t = 0;
#if defined(BERTL14_USE_DSP)
        for (; t + 4 <= tokens; t += 4) {
            int32_t acc[4];
            const int16_t *xt = x + t * in;
            dot4(wo, xt, xt + in, xt + 2 * in, xt + 3 * in, in, acc);
            for (uint32_t j = 0; j < 4; j++) {
                store(y16, y32, (t + j) * y_stride + o, acc[j], x_scale[t + j], mult, shift, bias);
            }
        }
#endif
        for (; t < tokens; t++) {
            int32_t acc = dot1(wo, x + t * in, in);
            store(y16, y32, t * y_stride + o, acc, x_scale[t], mult, shift, bias);
        }
    }
}
