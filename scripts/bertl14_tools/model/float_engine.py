"""The `float` engine: a numpy float64 forward pass of a FloatModel (no torch).

Post-LN BERT exactly as transformers' BertModel computes it (token type 0 for every token, no padding).
`forward(fm, ids)` returns every hidden state, the [CLS] vector, the pooled output, the logits and the
token classifier's logits of every token (models with that head);
with `trace=True` it also returns the intermediate tensors the quantizer calibrates on.
"""
from __future__ import annotations

import math
from dataclasses import dataclass, field

import numpy as np

from ..errors import UserError
from .floatmodel import FloatModel

SQRT_2_OVER_PI = math.sqrt(2.0 / math.pi)


try:
    from scipy.special import erf as _erf
except ImportError:  # scipy is optional: math.erf elementwise is exact, only slower
    _erf = np.vectorize(math.erf, otypes=[np.float64])


def gelu_erf(x: np.ndarray) -> np.ndarray:
    """HF's default "gelu": 0.5 x (1 + erf(x / sqrt 2))."""
    x = np.asarray(x, np.float64)
    return 0.5 * x * (1.0 + _erf(x / math.sqrt(2.0)))


def gelu_tanh(x: np.ndarray) -> np.ndarray:
    """The seed's approximation 0.5 x (1 + tanh(sqrt(2/pi) (x + 0.044715 x^3)))."""
    x = np.asarray(x, np.float64)
    return 0.5 * x * (1.0 + np.tanh(SQRT_2_OVER_PI * (x + 0.044715 * x ** 3)))


GELUS = {"erf": gelu_erf, "tanh": gelu_tanh}


def layer_norm(x: np.ndarray, g: np.ndarray, b: np.ndarray, eps: float) -> np.ndarray:
    mu = x.mean(-1, keepdims=True)
    var = ((x - mu) ** 2).mean(-1, keepdims=True)
    return (x - mu) / np.sqrt(var + eps) * g + b


def softmax(x: np.ndarray) -> np.ndarray:
    e = np.exp(x - x.max(-1, keepdims=True))
    return e / e.sum(-1, keepdims=True)


@dataclass
class FloatResult:
    hidden_states: list[np.ndarray]   # [emb LN output, layer 1 output, ..., last layer output], each [N, H]
    cls: np.ndarray                   # last hidden state row 0, [H]
    pooled: np.ndarray | None         # tanh(pooler), [H]
    logits: np.ndarray | None         # [C]
    trace: dict = field(default_factory=dict)
    tag_logits: np.ndarray | None = None   # [N, T]: the token classifier on every last hidden row

    @property
    def last_hidden(self) -> np.ndarray:
        return self.hidden_states[-1]

    @property
    def label(self) -> int | None:
        return None if self.logits is None else int(np.argmax(self.logits))

    @property
    def tags(self) -> np.ndarray | None:
        return None if self.tag_logits is None else np.argmax(self.tag_logits, axis=-1)


def forward(fm: FloatModel, ids, gelu: str | None = None, trace: bool = False) -> FloatResult:
    """One sequence of token ids (with [CLS] ... [SEP]) through the float model, in float64.
    `gelu` overrides the checkpoint's own GELU ("erf" or "tanh")."""
    act = GELUS[gelu or fm.gelu]
    f64 = lambda a: np.asarray(a, np.float64)  # noqa: E731
    ids = np.asarray(ids, np.int64)
    n, d = len(ids), fm.head_dim
    if not 1 <= n <= fm.max_position:
        raise UserError(f"sequence of {n} tokens: the model takes 1..{fm.max_position}")
    if ids.min() < 0 or ids.max() >= len(fm.word_emb):
        raise UserError(f"token id outside the vocabulary (0..{len(fm.word_emb) - 1})")
    tr: dict = {"layers": []} if trace else {}
    e = f64(fm.word_emb[ids]) + f64(fm.pos_emb[:n]) + f64(fm.type_emb[0])   # token type 0 everywhere
    h = layer_norm(e, fm.emb_ln_g, fm.emb_ln_b, fm.layer_norm_eps)
    if trace:
        tr["emb"], tr["h0"] = e, h
    states = [h]
    for layer in fm.layers:
        a = len(layer.heads_kept)
        q = h @ f64(layer.wq).T + layer.bq                 # [N, A*d]
        k = h @ f64(layer.wk).T + layer.bk
        v = h @ f64(layer.wv).T + layer.bv
        qh, kh, vh = (t.reshape(n, a, d).transpose(1, 0, 2) for t in (q, k, v))   # [A, N, d]
        p = softmax(qh @ kh.transpose(0, 2, 1) / math.sqrt(d))                     # [A, N, N]
        ctx = (p @ vh).transpose(1, 0, 2).reshape(n, a * d)
        y1 = ctx @ f64(layer.wo).T + layer.bo
        r1 = y1 + h
        h1 = layer_norm(r1, layer.ln1_g, layer.ln1_b, fm.layer_norm_eps)
        up = h1 @ f64(layer.wi).T + layer.bi
        g = act(up)
        y2 = g @ f64(layer.wo2).T + layer.bo2
        r2 = y2 + h1
        h2 = layer_norm(r2, layer.ln2_g, layer.ln2_b, fm.layer_norm_eps)
        if trace:
            tr["layers"].append(dict(h=h, q=q / math.sqrt(d), k=k, v=v, ctx=ctx, y1=y1, r1=r1, h1=h1,
                                     up=up, g=g, y2=y2, r2=r2))
        h = h2
        states.append(h)
    pooled = logits = None
    if fm.pooler_w is not None:
        pool_pre = h[0] @ f64(fm.pooler_w).T + fm.pooler_b
        pooled = np.tanh(pool_pre)
        if trace:
            tr["pool_pre"] = pool_pre
        if fm.cls_w is not None:
            logits = pooled @ f64(fm.cls_w).T + fm.cls_b
    tag_logits = None if fm.tag_w is None else h @ f64(fm.tag_w).T + fm.tag_b
    return FloatResult(hidden_states=states, cls=h[0].copy(), pooled=pooled, logits=logits, trace=tr,
                       tag_logits=tag_logits)
