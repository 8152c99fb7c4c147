"""Quantization of a FloatModel into the integer model of docs/numerics.md.

`quantize(fm, calib_ids, opts) -> QuantModel`. Field names are the names docs/numerics.md and
docs/model-format.md use. Integer arrays are numpy arrays of the stored type.
"""
from __future__ import annotations

from dataclasses import dataclass, field

import numpy as np

from .floatmodel import FloatModel

SMOOTH_ONE = 4096          # identity smoothing factor (Q12)


@dataclass
class QuantOptions:
    act_scale: str = "per_token"     # "per_token" | "per_tensor"
    smoothing: bool = True           # default: per-token alone misses 0.997 mean [CLS] cosine on MiniLM
    embedding: str = "int8"          # "int8" | "int4"
    smooth_alpha: float = 0.5
    max_seq_len: int | None = None   # rows of the position table (None: all the model's positions)
    weights: str = "int16"           # linear weights: "int16" | "int8" (per output channel, symmetric)


@dataclass
class QLinear:
    w: np.ndarray            # int16 [out][in] (int8 with INT8 weights)
    mult: np.ndarray         # int16 [out], in [2^14, 2^15)
    shift: np.ndarray        # int16 [out], in [1, 62]
    bias: np.ndarray         # int32 [out], Q(f_out)
    f_in: int = 0            # F of the row-quantized input (informational, not stored)
    f_out: int = 0           # F of the output (informational, not stored)


@dataclass
class QLayerNorm:
    gamma: np.ndarray        # int16 [H], Q(f_g)
    beta: np.ndarray         # int32 [H], Q(f_out)
    f_g: int
    f_out: int
    eps_q: int


@dataclass
class QLayer:
    q: QLinear
    k: QLinear
    v: QLinear
    o: QLinear
    i: QLinear
    o2: QLinear
    ln1: QLayerNorm
    ln2: QLayerNorm
    f_q: int
    f_k: int
    f_v: int
    f_r1: int
    f_up: int
    f_r2: int
    res1_u: np.ndarray       # uint16 [H]
    res2_u: np.ndarray       # uint16 [H]
    gelu_ism: np.ndarray     # uint16 [I]


@dataclass
class QuantModel:
    num_layers: int
    hidden: int
    heads_total: int
    heads_kept: int
    head_dim: int
    intermediate: int
    vocab_size: int
    max_position: int
    embedding: str           # "int8" | "int4"
    act_scale: str           # "per_token" | "per_tensor"
    smoothing: bool
    word_q: np.ndarray       # int8 [V][H] (int4: values -7..7, still one int8 per channel here)
    word_scale: np.ndarray   # uint16 [V]
    word_shift: int
    pos_q: np.ndarray        # int8 [P][H], token type 0 folded in
    pos_scale: np.ndarray    # uint16 [P]
    pos_shift: int
    f_e: int
    emb_ln: QLayerNorm
    layers: list[QLayer]
    pooler: QLinear | None = None
    cls: QLinear | None = None
    labels: list[str] = field(default_factory=list)
    tagger: QLinear | None = None     # token classification head on every token's last row (logits Q10)
    tags: list[str] = field(default_factory=list)
    weights: str = "int16"            # "int16" | "int8": the type of every linear's w

    @property
    def num_labels(self) -> int:
        return len(self.labels) if self.cls is not None else 0

    @property
    def num_tags(self) -> int:
        return len(self.tags) if self.tagger is not None else 0

    @property
    def has_classifier(self) -> bool:
        return self.cls is not None


# ------------------------------------------------------------------------------------------------
# quantization
# ------------------------------------------------------------------------------------------------

ACC_LIMIT = 2 ** 31          # 127 * sum_i |w[o][i]| must stay below this
RESIDUAL_RANGE = 2 ** 22     # max |residual| * 2^F_r <= this


def _floor_log2(x: float) -> int:
    return int(np.floor(np.log2(x)))


def _exp_for(amax: float, limit: float, f_max: int = 30) -> int:
    """The largest F with amax * 2^F <= limit (f_max for an all-zero tensor)."""
    return f_max if amax <= 0 else min(f_max, _floor_log2(limit / amax))


WEIGHT_QMAX = {"int16": 32767, "int8": 127}


def quantize_linear(w: np.ndarray, b: np.ndarray, f_in: int, f_out: int, name: str = "linear",
                    weights: str = "int16") -> QLinear:
    """INT16 (or INT8) weights with one symmetric scale per output channel (capped for the int32 accumulator),
    the requantization multiplier/shift pair and the bias in Q(f_out): docs/numerics.md section 4."""
    from ..errors import UserError
    if weights not in WEIGHT_QMAX:
        raise UserError(f"weights {weights!r}: use int16 or int8")
    w = np.asarray(w, np.float64)
    n_out = w.shape[0]
    amax = np.abs(w).max(axis=1)
    asum = np.abs(w).sum(axis=1)
    ws = np.where(amax > 0, WEIGHT_QMAX[weights] / np.where(amax > 0, amax, 1), 1.0)
    cap = (ACC_LIMIT - 1) / (127.0 * np.where(asum > 0, asum, 1)) * (1 - 1e-9)
    ws = np.where(asum > 0, np.minimum(ws, cap), 1.0)
    wq = np.round(w * ws[:, None])
    for _ in range(64):                                   # rounding can push a row over the cap
        over = 127 * np.abs(wq).sum(axis=1) >= ACC_LIMIT
        if not over.any():
            break
        ws[over] *= 0.999
        wq[over] = np.round(w[over] * ws[over, None])
    mult = np.zeros(n_out, np.int64)
    shift = np.zeros(n_out, np.int64)
    for o in range(n_out):
        t = 2.0 ** (f_out - f_in - 8) / ws[o]
        e = _floor_log2(t)
        s = 14 - e
        m = int(np.round(t * 2.0 ** s))
        if m >= 1 << 15:
            s -= 1
            m = int(np.round(t * 2.0 ** s))
        if amax[o] == 0:
            m, s = 1 << 14, 1
        if not (1 << 14) <= m < (1 << 15) or not 1 <= s <= 62:
            raise UserError(f"{name}: requantization shift {s} out of range 1..62 (output channel {o}); "
                            "the model's weights or activations are out of the supported range")
        mult[o], shift[o] = m, s
    bias = np.round(np.asarray(b, np.float64) * 2.0 ** f_out)
    if np.abs(bias).max(initial=0) >= 2 ** 31:
        raise UserError(f"{name}: bias does not fit int32 in Q{f_out}")
    return QLinear(w=wq.astype(np.int8 if weights == "int8" else np.int16), mult=mult.astype(np.int16), shift=shift.astype(np.int16),
                   bias=bias.astype(np.int32), f_in=f_in, f_out=f_out)


def quantize_layernorm(gamma: np.ndarray, beta: np.ndarray, eps: float, f_r: int) -> QLayerNorm:
    from ..errors import UserError
    gamma, beta = np.asarray(gamma, np.float64), np.asarray(beta, np.float64)
    h = len(gamma)
    f_g = _exp_for(np.abs(gamma).max(), 32767)
    f_out = _exp_for((np.abs(gamma) * np.sqrt(h - 1) + np.abs(beta)).max(), 32767)
    eps_q = max(1, int(np.round(eps * 2.0 ** (2 * f_r))))
    if eps_q >= 2 ** 31:
        raise UserError(f"layer_norm_eps {eps} too large for Q{f_r} residuals")
    return QLayerNorm(gamma=np.round(gamma * 2.0 ** f_g).astype(np.int16),
                      beta=np.round(beta * 2.0 ** f_out).astype(np.int32), f_g=f_g, f_out=f_out, eps_q=eps_q)


def _quantize_table(t: np.ndarray, qmax: int, f_e: int):
    """Per-row symmetric quantization of an embedding table; uint16 row scales and one shift."""
    t = np.asarray(t, np.float64)
    amax = np.abs(t).max(axis=1)
    q = np.round(t * (qmax / np.where(amax > 0, amax, 1))[:, None]).astype(np.int8)
    base = amax / qmax * 2.0 ** f_e
    shift = _floor_log2(65535.0 / base.max()) if base.max() > 0 else 0
    while np.round(base.max() * 2.0 ** shift) > 65535:
        shift -= 1
    scale = np.round(base * 2.0 ** shift).astype(np.uint16)
    return q, scale, shift


class _Calibration:
    """Running maxima of the float activations over the calibration sentences."""

    def __init__(self, fm: FloatModel):
        L = fm.num_layers
        self.t = {k: np.zeros(L) for k in ("q", "k", "v", "up", "r1", "r2")}
        self.ch = {k: [np.zeros(fm.hidden) for _ in range(L)] for k in ("h", "h1")}
        self.ch["g"] = [np.zeros(fm.intermediate) for _ in range(L)]
        self.pool = 0.0

    def add(self, trace: dict):
        for li, lt in enumerate(trace["layers"]):
            for k in ("q", "k", "v", "up"):
                self.t[k][li] = max(self.t[k][li], np.abs(lt[k]).max())
            self.t["r1"][li] = max(self.t["r1"][li], np.abs(lt["r1"]).max(), np.abs(lt["y1"]).max())
            self.t["r2"][li] = max(self.t["r2"][li], np.abs(lt["r2"]).max(), np.abs(lt["y2"]).max())
            for k in ("h", "h1", "g"):
                self.ch[k][li] = np.maximum(self.ch[k][li], np.abs(lt[k]).max(axis=0))


def smoothing_factors(amax_x: np.ndarray, amax_w: np.ndarray, alpha: float = 0.5) -> np.ndarray:
    """SmoothQuant factors sm_c (activation divided, weight column multiplied), scaled so that no
    smoothed channel exceeds the unsmoothed tensor's maximum (docs/numerics.md section 5)."""
    ax = np.maximum(np.asarray(amax_x, np.float64), 1e-6)
    aw = np.maximum(np.asarray(amax_w, np.float64), 1e-6)
    raw = ax ** alpha / aw ** (1 - alpha)
    k = (ax / raw).max() / ax.max()
    return raw * k


def quantize(fm: FloatModel, calib_ids: list[list[int]], opts: QuantOptions | None = None,
             progress: bool = False) -> QuantModel:
    """The integer model of docs/numerics.md from a float model and calibration token-id sequences."""
    from tqdm import tqdm

    from ..errors import UserError
    from .float_engine import forward
    opts = opts or QuantOptions()
    if opts.act_scale not in ("per_token", "per_tensor"):
        raise UserError(f"act_scale {opts.act_scale!r}: use per_token or per_tensor")
    if opts.embedding not in ("int8", "int4"):
        raise UserError(f"embedding {opts.embedding!r}: use int8 or int4")
    if opts.weights not in WEIGHT_QMAX:
        raise UserError(f"weights {opts.weights!r}: use int16 or int8")
    if not calib_ids:
        raise UserError("quantization needs calibration sentences (token ids); none given")
    kept = {len(layer.heads_kept) for layer in fm.layers}
    if len(kept) > 1:
        raise UserError(f"every layer must keep the same number of heads, got {sorted(kept)}")
    if opts.embedding == "int4" and fm.hidden % 2:
        raise UserError("INT4 embeddings need an even hidden size")
    a, d, H = (kept.pop() if kept else fm.num_heads), fm.head_dim, fm.hidden
    P = fm.max_position if opts.max_seq_len is None else int(opts.max_seq_len)
    if not 1 <= P <= fm.max_position:
        raise UserError(f"max_seq_len {P} must be 1..{fm.max_position} (the model's positions)")

    cal = _Calibration(fm)
    for ids in tqdm(calib_ids, desc="calibration", unit="sent", disable=not progress, leave=False):
        cal.add(forward(fm, list(ids)[:P], trace=True).trace)

    L = fm.num_layers
    f64 = lambda x: np.asarray(x, np.float64)  # noqa: E731
    # smoothing factors (identity when off): u_a[l] for the layer-l input h, u_b[l] for h1, ism for GELU
    one_h = np.full(H, 1.0)
    sm_a = [one_h.copy() for _ in range(L)]
    sm_b = [one_h.copy() for _ in range(L)]
    sm_g = [np.ones(fm.intermediate) for _ in range(L)]
    u_a, u_b, ism_g = [], [], []
    for li, layer in enumerate(fm.layers):
        if opts.smoothing:
            wqkv = np.abs(np.concatenate([f64(layer.wq), f64(layer.wk), f64(layer.wv)])).max(axis=0)
            sm_a[li] = smoothing_factors(cal.ch["h"][li], wqkv, opts.smooth_alpha)
            sm_b[li] = smoothing_factors(cal.ch["h1"][li], np.abs(f64(layer.wi)).max(axis=0), opts.smooth_alpha)
            sm_g[li] = smoothing_factors(cal.ch["g"][li], np.abs(f64(layer.wo2)).max(axis=0), opts.smooth_alpha)
        u_a.append(np.clip(np.round(SMOOTH_ONE * sm_a[li]), 1, 65535).astype(np.uint16))
        u_b.append(np.clip(np.round(SMOOTH_ONE * sm_b[li]), 1, 65535).astype(np.uint16))
        ism_g.append(np.clip(np.round(SMOOTH_ONE / sm_g[li]), 1, 65535).astype(np.uint16))
    # the exact factors the integers implement
    sm_a = [u.astype(np.float64) / SMOOTH_ONE for u in u_a]
    sm_b = [u.astype(np.float64) / SMOOTH_ONE for u in u_b]
    sm_g = [SMOOTH_ONE / i.astype(np.float64) for i in ism_g]

    # embeddings: token type 0 folded into the position table
    pos = f64(fm.pos_emb[:P]) + f64(fm.type_emb[0])
    word = f64(fm.word_emb)
    f_e = _exp_for(np.abs(word).max(axis=1).max() + np.abs(pos).max(axis=1).max(), RESIDUAL_RANGE)
    word_q, word_scale, word_shift = _quantize_table(word, 7 if opts.embedding == "int4" else 127, f_e)
    pos_q, pos_scale, pos_shift = _quantize_table(pos, 127, f_e)
    sm_emb = sm_a[0] if L else one_h                     # a model without layers outputs the embedding LN
    emb_ln = quantize_layernorm(f64(fm.emb_ln_g) / sm_emb, f64(fm.emb_ln_b) / sm_emb, fm.layer_norm_eps, f_e)

    layers = []
    wt = opts.weights
    f_h = emb_ln.f_out
    scale_q = 1.0 / np.sqrt(d)
    for li, layer in enumerate(fm.layers):
        f_q = _exp_for(2 * cal.t["q"][li], 32767)
        f_k = _exp_for(2 * cal.t["k"][li], 32767)
        f_v = _exp_for(2 * cal.t["v"][li], 32767)
        f_up = int(np.clip(_exp_for(2 * cal.t["up"][li], 32767), 0, 12))
        f_r1 = _exp_for(cal.t["r1"][li], RESIDUAL_RANGE)
        f_r2 = _exp_for(cal.t["r2"][li], RESIDUAL_RANGE)
        sa, sb, sg = sm_a[li], sm_b[li], sm_g[li]
        sm_next = sm_a[li + 1] if li + 1 < L else one_h       # the last LN2 output is the model output
        ln1 = quantize_layernorm(f64(layer.ln1_g) / sb, f64(layer.ln1_b) / sb, fm.layer_norm_eps, f_r1)
        ln2 = quantize_layernorm(f64(layer.ln2_g) / sm_next, f64(layer.ln2_b) / sm_next, fm.layer_norm_eps, f_r2)
        nm = f"layer {li}"
        layers.append(QLayer(
            q=quantize_linear(f64(layer.wq) * sa * scale_q, f64(layer.bq) * scale_q, f_h, f_q, nm + " query", wt),
            k=quantize_linear(f64(layer.wk) * sa, layer.bk, f_h, f_k, nm + " key", wt),
            v=quantize_linear(f64(layer.wv) * sa, layer.bv, f_h, f_v, nm + " value", wt),
            o=quantize_linear(layer.wo, layer.bo, f_v, f_r1, nm + " attention output", wt),
            i=quantize_linear(f64(layer.wi) * sb, layer.bi, ln1.f_out, f_up, nm + " intermediate", wt),
            o2=quantize_linear(f64(layer.wo2) * sg, layer.bo2, f_up, f_r2, nm + " output", wt),
            ln1=ln1, ln2=ln2, f_q=f_q, f_k=f_k, f_v=f_v, f_r1=f_r1, f_up=f_up, f_r2=f_r2,
            res1_u=u_a[li], res2_u=u_b[li], gelu_ism=ism_g[li]))
        f_h = ln2.f_out

    pooler = cls = None
    labels: list[str] = []
    if fm.cls_w is not None and fm.pooler_w is not None:
        pooler = quantize_linear(fm.pooler_w, fm.pooler_b, f_h, 12, "pooler", wt)
        cls = quantize_linear(fm.cls_w, fm.cls_b, 15, 10, "classifier", wt)
        labels = list(fm.labels) or [f"LABEL_{i}" for i in range(fm.cls_w.shape[0])]
    tagger = None
    tags: list[str] = []
    if fm.tag_w is not None:      # like the classifier, on each token's INT8 output row (F = f_h), logits Q10
        tagger = quantize_linear(fm.tag_w, fm.tag_b, f_h, 10, "token classifier", wt)
        tags = list(fm.tags) or [f"TAG_{i}" for i in range(fm.tag_w.shape[0])]
    return QuantModel(
        num_layers=L, hidden=H, heads_total=fm.num_heads, heads_kept=a, head_dim=d,
        intermediate=fm.intermediate, vocab_size=fm.vocab_size, max_position=P,
        embedding=opts.embedding, act_scale=opts.act_scale, smoothing=bool(opts.smoothing),
        word_q=word_q, word_scale=word_scale, word_shift=word_shift,
        pos_q=pos_q, pos_scale=pos_scale, pos_shift=pos_shift, f_e=f_e, emb_ln=emb_ln,
        layers=layers, pooler=pooler, cls=cls, labels=labels, tagger=tagger, tags=tags, weights=wt)
