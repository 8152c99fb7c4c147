"""The integer reference: docs/numerics.md op for op, with the C kernels' names (`bertl14_<op>` in C).

Every function computes exactly the integers the C library computes. Arrays are numpy int64; a kernel
that C runs on one row accepts a batch of rows here (the rows are independent). Integer matrix products
go through float64 BLAS: every product sum here is below 2^53, so float64 is exact.
The lookup tables EXP_LUT, TANH_LUT and ISQRT_LUT are defined here and nowhere else (gen_luts.py writes
the C copies from them).
"""
from __future__ import annotations

import math
from dataclasses import dataclass

import numpy as np

from ..errors import UserError
from ..model.blob import pack_int4, unpack_int4
from ..model.quant import QLayerNorm, QLinear, QuantModel

F_SM = 10          # Q of attention scores and logits
F_POOL = 12        # Q of the pooler's pre-activation
F_TANH = 15        # Q of the pooler output


def _round_half_up(v: float) -> int:
    return int(math.floor(v + 0.5))


EXP_LUT = np.array([_round_half_up(32768 * 2 ** (-i / 256)) for i in range(257)], np.int64)   # 2^-x, Q15
LOG2E_Q14 = 23637          # round(log2(e) * 2^14)
LOG2E_Q30 = 1549082005     # round(log2(e) * 2^30): d in Q10 times it, >> 32, is d log2(e) in Q8
TANH_LUT = np.array([_round_half_up(32768 * math.tanh(i / 32)) for i in range(257)], np.int64)
ISQRT_LUT = np.array([_round_half_up(2 ** 22 / math.sqrt((j + 64) * 256)) for j in range(193)], np.int64)


# ------------------------------------------------------------------------------------------------
# primitives
# ------------------------------------------------------------------------------------------------

def rsr(x, n):
    """Round-half-up arithmetic shift right by n (left shift when n < 0)."""
    x = np.asarray(x, np.int64)
    n = np.asarray(n, np.int64)
    if n.ndim == 0:
        n = int(n)
        if n > 0:
            return (x + (1 << (n - 1))) >> n
        return x << -n if n < 0 else x
    pos = np.maximum(n, 1)
    right = (x + (np.int64(1) << (pos - 1))) >> pos
    return np.where(n > 0, right, x << np.maximum(-n, 0))


def sat(x, bits: int):
    lim = 1 << (bits - 1)
    return np.clip(np.asarray(x, np.int64), -lim, lim - 1)


def div_round(a, b):
    """sign(a) * ((|a| + b/2) / b) with truncating division, b > 0."""
    a = np.asarray(a, np.int64)
    b = np.asarray(b, np.int64)
    return np.sign(a) * ((np.abs(a) + b // 2) // b)


def bit_length(v):
    """Bit length of positive int64 values (exact: corrects float64 rounding up to a power of two)."""
    v = np.asarray(v, np.int64)
    bl = np.frexp(v.astype(np.float64))[1].astype(np.int64)
    too_big = (bl > 0) & ((v >> np.maximum(bl - 1, 0)) == 0)
    return bl - too_big


def imatmul(a, b):
    """Exact integer a @ b through float64 (all sums here are far below 2^53)."""
    return np.rint(np.asarray(a, np.float64) @ np.asarray(b, np.float64)).astype(np.int64)


# ------------------------------------------------------------------------------------------------
# kernels
# ------------------------------------------------------------------------------------------------

def _row_params(m):
    s = np.maximum(1, (256 * np.asarray(m, np.int64) + 126) // 127)
    inv = (np.int64(1 << 32) + s // 2) // s            # div_round(2^32, s)
    return s, inv


def quantize_row_s8(x):
    """Rows of int16-bounded values -> (int8 rows, uint32 scale per row). Row = last axis."""
    x = np.asarray(x, np.int64)
    s, inv = _row_params(np.abs(x).max(axis=-1))
    q = sat(rsr(x * inv[..., None], 24), 8)
    return q, s


def quantize_tensor_s8(x):
    """The per-tensor option: one scale for every row of x (returned broadcast, one per row)."""
    x = np.asarray(x, np.int64)
    s, inv = _row_params(np.abs(x).max() if x.size else 0)
    q = sat(rsr(x * inv, 24), 8)
    return q, np.full(x.shape[:-1], s, np.int64)


def linear_s8_s16(q, s, lin: QLinear, out_bits: int):
    """q int8 [N, in] with row scales s [N] times int16 weights [out, in] -> [N, out] (sat16 or sat32).
    INT8 weights (lin.w int8) go to linear_s8_s8: the same integers."""
    if lin.w.dtype == np.int8:
        return linear_s8_s8(q, s, lin, out_bits)
    acc = imatmul(q, lin.w.T)                                           # int32 by the weight cap
    y = rsr(acc * np.asarray(s, np.int64)[:, None] * lin.mult.astype(np.int64)[None, :],
            lin.shift.astype(np.int64)[None, :]) + lin.bias.astype(np.int64)[None, :]
    return sat(y, out_bits)


def linear_s8_s8(q, s, lin: QLinear, out_bits: int):
    """q int8 [N, in] with row scales s [N] times INT8 weights [out, in] (one scale per output channel, folded into
    mult/shift) -> [N, out]: acc = sum q * w (|acc| <= 127 * 127 * in < 2^31), then the requantization of
    linear_s8_s16, rsr(acc * s * mult, shift) + bias, sat16 or sat32 (docs/numerics.md section 4b)."""
    if lin.w.dtype != np.int8:
        raise ValueError(f"linear_s8_s8 takes INT8 weights, got {lin.w.dtype}")
    acc = imatmul(q, lin.w.astype(np.int64).T)
    y = rsr(acc * np.asarray(s, np.int64)[:, None] * lin.mult.astype(np.int64)[None, :],
            lin.shift.astype(np.int64)[None, :]) + lin.bias.astype(np.int64)[None, :]
    return sat(y, out_bits)


def smooth_s16(x, ism):
    """Per-channel smoothing before row quantization: sat16(rsr(x * ism, 12))."""
    return sat(rsr(np.asarray(x, np.int64) * np.asarray(ism, np.int64), 12), 16)


def exp_q23(d):
    """exp(-d) in Q23 for d >= 0 in Q10 (the classifier's score, numerics v1.1): 2^-(d log2 e), the fraction from
    EXP_LUT with linear interpolation, the integer part a shift."""
    d = np.asarray(d, np.int64)
    z = rsr(d * LOG2E_Q14, 8)                     # d * log2(e) in Q16
    k, fr = z >> 16, z & 65535
    i, f = fr >> 8, fr & 255
    m = EXP_LUT[i] + rsr((EXP_LUT[i + 1] - EXP_LUT[i]) * f, 8)      # 2^-(fr / 2^16) in Q15
    kc = np.minimum(k, 24)
    return np.where(k >= 24, 0, rsr(m, kc - 8))


def exp_q22(x, xm):
    """exp(x - xm) in Q22 for int32 scores x <= xm in Q10 (the attention softmax, numerics v1.2): z = (xm - x)
    log2(e) in Q8 as hi(MC * 2^32 - x * LOG2E_Q30) with MC = ceil(xm * LOG2E_Q30 / 2^32) (so z = 0 at the
    maximum), its fraction an EXP_LUT entry (no interpolation), its integer part a right shift clamped to 31."""
    x, xm = np.asarray(x, np.int64), np.asarray(xm, np.int64)
    mc = (xm * LOG2E_Q30 + (1 << 32) - 1) >> 32
    z = ((mc << 32) - x * LOG2E_Q30) >> 32
    return (EXP_LUT[z & 255] << 7) >> np.minimum(z >> 8, 31)


def softmax_lut_u8(x):
    """Softmax over the last axis of int32 Q10 scores -> uint8 probabilities in Q8 (max 255), numerics v1.2:
    e = exp_q22(x, max) (sum E <= 512 * 2^22 = 2^31), R = (2^32 - 1) // (E >> 8) <= 2^18,
    p = min(255, rsr(e * R, 32))."""
    x = np.asarray(x, np.int64)
    e = exp_q22(x, x.max(axis=-1, keepdims=True))
    r = (2**32 - 1) // (e.sum(axis=-1, keepdims=True) >> 8)
    return np.minimum(255, rsr(e * r, 32))


def attn_scores_s8(q8, sq, k8, sk, f_q: int, f_k: int):
    """Scores of queries q8 [T, d] (scales sq [T]) against keys k8 [N, d] (scales sk [N]): int32 Q10 [T, N]."""
    acc = imatmul(q8, np.asarray(k8).T)
    return sat(rsr(acc * (np.asarray(sq, np.int64)[:, None] * np.asarray(sk, np.int64)[None, :]),
                   f_q + f_k + 16 - F_SM), 32)


def attn_context_s8(p, v8, sv):
    """Probabilities p [T, N] (Q8) times values v8 [N, d] (scales sv [N]) -> context int16 [T, d] in Q(f_v)."""
    w = rsr(np.asarray(p, np.int64) * np.asarray(sv, np.int64)[None, :], 8)
    return sat(rsr(imatmul(w, v8), 8), 16)


def attention_head(q8, sq, k8, sk, v8, sv, f_q: int, f_k: int):
    """One head: scores, LUT softmax, context. C runs it a block of up to four query rows at a time; rows are
    independent."""
    return attn_context_s8(softmax_lut_u8(attn_scores_s8(q8, sq, k8, sk, f_q, f_k)), v8, sv)


def tanh_lut_q15(u):
    """tanh of u in Q12 -> Q15 (+-32768 when saturated), by TANH_LUT with linear interpolation."""
    u = np.asarray(u, np.int64)
    a = np.abs(u)
    ac = np.minimum(a, (8 << 12) - 1)
    i, f = ac >> 7, ac & 127
    t = TANH_LUT[i] + rsr((TANH_LUT[i + 1] - TANH_LUT[i]) * f, 7)
    t = np.where(a >= (8 << 12), 32768, t)
    return np.where(u < 0, -t, t)


def gelu_tanh_lut_s16(x, f: int):
    """GELU (tanh formula) of int16 x in Q(f), 0 <= f <= 12, -> int16 in Q(f)."""
    if not 0 <= f <= 12:
        raise ValueError(f"GELU input exponent {f} outside 0..12")
    x = np.asarray(x, np.int64)
    xc = np.clip(x << (12 - f), -(8 << 12), 8 << 12)
    x3 = rsr(rsr(xc * xc, 12) * xc, 12)
    inner = xc + rsr(x3 * 2930, 16)
    u = rsr(inner * 52290, 16)
    t = tanh_lut_q15(u)
    return sat(rsr(x * (32768 + t), 16), 16)


def layernorm_s16(r, ln: QLayerNorm, f_r: int):
    """Integer LayerNorm of int32 rows r [N, H] in Q(f_r) -> int16 [N, H] in Q(ln.f_out)."""
    r = np.asarray(r, np.int64)
    h = r.shape[-1]
    mu = div_round(r.sum(axis=-1, keepdims=True), h)
    dev = r - mu
    var = div_round((dev * dev).sum(axis=-1, keepdims=True), h)
    v = var + ln.eps_q
    e = bit_length(v) - 16
    e = e + (e & 1)                                         # round up to even
    m = np.where(e >= 0, v >> np.maximum(e, 0), v << np.maximum(-e, 0))   # plain shifts, in [2^14, 2^16)
    j, fr = (m >> 8) - 64, m & 255
    g = ISQRT_LUT[j] + rsr((ISQRT_LUT[j + 1] - ISQRT_LUT[j]) * fr, 8)
    n = rsr(dev * g, 10 + e // 2)
    y = rsr(n * ln.gamma.astype(np.int64), 12 + ln.f_g - ln.f_out) + ln.beta.astype(np.int64)
    return sat(y, 16)


def residual_add_s32(y, h8, s_h, u, f_h: int, f_r: int):
    """r = sat32(y + rsr(h8 * s_h * u, f_h + 20 - f_r)): the sublayer input (int8 rows, scale s_h, Q(f_h),
    smoothed by 4096/u) added back in Q(f_r)."""
    x = np.asarray(h8, np.int64) * np.asarray(s_h, np.int64)[:, None] * np.asarray(u, np.int64)[None, :]
    return sat(np.asarray(y, np.int64) + rsr(x, f_h + 20 - f_r), 32)


def embedding_s8(rows, table_q, scale, shift: int):
    """Rows of an int8 table scaled into Q(f_e): rsr(q[r][c] * scale[r], shift)."""
    rows = np.asarray(rows, np.int64)
    return rsr(table_q[rows].astype(np.int64) * scale[rows].astype(np.int64)[:, None], shift)


def embedding_s4(rows, table_packed, scale, shift: int):
    """As embedding_s8 for an INT4 table packed two per byte (low nibble = even channel)."""
    rows = np.asarray(rows, np.int64)
    q = unpack_int4(table_packed[rows])
    return rsr(q * scale[rows].astype(np.int64)[:, None], shift)


def pooler_tanh(x):
    """Pooler activation: int32 Q12 -> int16 Q15."""
    return sat(tanh_lut_q15(x), 16)


def token_tags(h8, s_h, tagger: QLinear):
    """Token classification of every row of the last hidden state (int8 rows, scales s_h): int32 logits in Q10
    [N, T] (the classifier's linear, sat32) and each row's tag, the first index of its largest logit."""
    logits = linear_s8_s16(h8, s_h, tagger, 32)
    return logits, np.argmax(logits, axis=-1)


def classifier_score(logits):
    """(label = first argmax, score_q16 = softmax probability of the label in Q16, capped at 65535)."""
    logits = np.asarray(logits, np.int64)
    label = int(np.argmax(logits))
    e = exp_q23(logits[label] - logits)
    score = min(65535, int(div_round(1 << 39, int(e.sum()))))
    return label, score


def score_thousandths(score_q16: int) -> int:
    return (score_q16 * 1000 + 32768) >> 16


# The C kernels' names (bertl14_<name> in bertl14/src/kernels/bertl14_kernels.h) for the same operations
linear_s8_w16 = linear_s8_s16
linear_s8_w8 = linear_s8_s8
softmax_s32 = softmax_lut_u8
quantize_row_s16 = quantize_row_s8
tanh_q12 = tanh_lut_q15
gelu_s16 = gelu_tanh_lut_s16
residual_s8 = residual_add_s32
layernorm_s32 = layernorm_s16


# ------------------------------------------------------------------------------------------------
# the forward pass
# ------------------------------------------------------------------------------------------------

@dataclass
class EncodeResult:
    hidden: np.ndarray          # int8 [N, H]: the last hidden state
    hidden_scale: np.ndarray    # uint32 [N] row scales
    hidden_f: int               # F of the last hidden state: real = q * s * 2^-(F+8)
    logits: np.ndarray | None   # int32 [C] in Q10
    label: int | None
    score_q16: int | None
    tag_logits: np.ndarray | None = None   # int32 [N, T] in Q10 (models with a token classifier)
    tags: np.ndarray | None = None         # [N] tag of every token

    @property
    def cls(self) -> np.ndarray:
        return self.hidden[0]

    @property
    def cls_scale(self) -> int:
        return int(self.hidden_scale[0])

    def dequant(self, rows=None) -> np.ndarray:
        """The real values of the hidden state (float64), for comparisons only."""
        q = self.hidden if rows is None else self.hidden[rows]
        s = self.hidden_scale if rows is None else self.hidden_scale[rows]
        return q * (np.asarray(s, np.float64)[..., None] if np.ndim(s) else float(s)) * 2.0 ** -(self.hidden_f + 8)

    @property
    def cls_float(self) -> np.ndarray:
        return self.dequant(0)

    @property
    def score(self) -> int | None:
        return None if self.score_q16 is None else score_thousandths(self.score_q16)


def encode(qm: QuantModel, ids) -> EncodeResult:
    """The whole integer forward pass of one sequence of token ids ([CLS] ... [SEP])."""
    ids = np.asarray(ids, np.int64)
    n = len(ids)
    if not 1 <= n <= qm.max_position:
        raise UserError(f"sequence of {n} tokens: the model takes 1..{qm.max_position}")
    if ids.min() < 0 or ids.max() >= qm.vocab_size:
        raise UserError(f"token id outside the vocabulary (0..{qm.vocab_size - 1})")
    rowq = quantize_tensor_s8 if qm.act_scale == "per_tensor" else quantize_row_s8
    a, d = qm.heads_kept, qm.head_dim

    # embeddings: word + (position + token type 0), LayerNorm, row quantization -> h0
    if qm.embedding == "int4":
        word = embedding_s4(ids, pack_int4(qm.word_q), qm.word_scale, qm.word_shift)
    else:
        word = embedding_s8(ids, qm.word_q, qm.word_scale, qm.word_shift)
    e = word + embedding_s8(np.arange(n), qm.pos_q, qm.pos_scale, qm.pos_shift)
    h8, sh = rowq(layernorm_s16(e, qm.emb_ln, qm.f_e))
    fh = qm.emb_ln.f_out

    for L in qm.layers:
        # attention: K, V of every token, then each query row over every kept head
        qh, sq = rowq(linear_s8_s16(h8, sh, L.q, 16).reshape(n, a, d))
        kh, sk = rowq(linear_s8_s16(h8, sh, L.k, 16).reshape(n, a, d))
        vh, sv = rowq(linear_s8_s16(h8, sh, L.v, 16).reshape(n, a, d))
        ctx = np.concatenate([attention_head(qh[:, j], sq[:, j], kh[:, j], sk[:, j], vh[:, j], sv[:, j],
                                             L.f_q, L.f_k) for j in range(a)], axis=1)
        c8, sc = rowq(ctx)
        y1 = linear_s8_s16(c8, sc, L.o, 32)
        r1 = residual_add_s32(y1, h8, sh, L.res1_u, fh, L.f_r1)
        h18, sh1 = rowq(layernorm_s16(r1, L.ln1, L.f_r1))
        # FFN
        up = linear_s8_s16(h18, sh1, L.i, 16)
        g8, sg = rowq(smooth_s16(gelu_tanh_lut_s16(up, L.f_up), L.gelu_ism))
        y2 = linear_s8_s16(g8, sg, L.o2, 32)
        r2 = residual_add_s32(y2, h18, sh1, L.res2_u, L.ln1.f_out, L.f_r2)
        h8, sh = rowq(layernorm_s16(r2, L.ln2, L.f_r2))
        fh = L.ln2.f_out

    logits = label = score = None
    if qm.cls is not None:
        pooled = pooler_tanh(linear_s8_s16(h8[:1], sh[:1], qm.pooler, 32))     # [CLS] row only
        p8, sp = quantize_row_s8(pooled)
        logits = linear_s8_s16(p8, sp, qm.cls, 32)[0]
        label, score = classifier_score(logits)
    tag_logits = tags = None
    if qm.tagger is not None:
        tag_logits, tags = token_tags(h8, sh, qm.tagger)
        tag_logits = tag_logits.astype(np.int32)
    return EncodeResult(hidden=h8.astype(np.int8), hidden_scale=sh.astype(np.uint32), hidden_f=fh,
                        logits=None if logits is None else logits.astype(np.int32), label=label,
                        score_q16=score, tag_logits=tag_logits, tags=tags)
