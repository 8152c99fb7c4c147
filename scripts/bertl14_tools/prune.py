"""Attention-head pruning: measure each head's importance on calibration sentences, remove the N least
important heads of every layer (their Q/K/V rows and their output-projection columns).

Importance (gradient-free): the mean, over the calibration tokens, of the L2 norm of what the head adds to
the attention output, ||ctx_h @ Wo[:, h]^T||. A head whose contribution is small can go with the least change
to the residual stream. The forward pass that measures it is the float model with every head present.
"""
from __future__ import annotations

import copy

import numpy as np
from tqdm import tqdm

from .errors import UserError
from .floatmodel import FloatLayer, FloatModel


def _layer_norm(x: np.ndarray, g: np.ndarray, b: np.ndarray, eps: float) -> np.ndarray:
    mu = x.mean(-1, keepdims=True)
    var = ((x - mu) ** 2).mean(-1, keepdims=True)
    return (x - mu) / np.sqrt(var + eps) * g + b


def _gelu(x: np.ndarray) -> np.ndarray:
    return 0.5 * x * (1.0 + np.tanh(np.sqrt(2.0 / np.pi) * (x + 0.044715 * x ** 3)))


def _layer_with_head_norms(layer: FloatLayer, h: np.ndarray, head_dim: int, eps: float):
    """One post-LN encoder layer in float64; also returns each kept head's mean contribution norm."""
    n_heads = len(layer.heads_kept)
    q = (h @ layer.wq.T + layer.bq).reshape(len(h), n_heads, head_dim)
    k = (h @ layer.wk.T + layer.bk).reshape(len(h), n_heads, head_dim)
    v = (h @ layer.wv.T + layer.bv).reshape(len(h), n_heads, head_dim)
    norms = np.zeros(n_heads)
    attn = np.zeros((len(h), layer.wo.shape[0]))
    for j in range(n_heads):
        s = q[:, j] @ k[:, j].T / np.sqrt(head_dim)           # scores [tokens, tokens]
        p = np.exp(s - s.max(-1, keepdims=True))
        p /= p.sum(-1, keepdims=True)
        contrib = (p @ v[:, j]) @ layer.wo[:, j * head_dim:(j + 1) * head_dim].T  # head j's share of Wo
        norms[j] = np.linalg.norm(contrib, axis=-1).mean()
        attn += contrib
    h1 = _layer_norm(attn + layer.bo + h, layer.ln1_g, layer.ln1_b, eps)
    ffn = _gelu(h1 @ layer.wi.T + layer.bi) @ layer.wo2.T + layer.bo2
    return _layer_norm(ffn + h1, layer.ln2_g, layer.ln2_b, eps), norms


def head_importance(fm: FloatModel, calib_ids: list[list[int]], progress: bool = True) -> list[np.ndarray]:
    """Per layer, one importance value per kept head (in `heads_kept` order)."""
    if not calib_ids:
        raise UserError("head pruning needs calibration sentences; pass --calibration FILE.jsonl")
    f64 = lambda a: np.asarray(a, np.float64)  # noqa: E731
    totals = [np.zeros(len(layer.heads_kept)) for layer in fm.layers]
    for ids in tqdm(calib_ids, desc="head importance", unit="sent", disable=not progress, leave=False):
        ids = np.asarray(ids)
        x = f64(fm.word_emb[ids]) + f64(fm.pos_emb[: len(ids)]) + f64(fm.type_emb[0])
        h = _layer_norm(x, fm.emb_ln_g, fm.emb_ln_b, fm.layer_norm_eps)
        for li, layer in enumerate(fm.layers):
            h, norms = _layer_with_head_norms(layer, h, fm.head_dim, fm.layer_norm_eps)
            totals[li] += norms
    return [t / len(calib_ids) for t in totals]


def prune_heads(fm: FloatModel, n_remove: int, importance: list[np.ndarray]) -> FloatModel:
    """A copy of `fm` without the `n_remove` least important heads of each layer (ties: the later head goes)."""
    if n_remove < 0:
        raise UserError(f"--prune-heads {n_remove}: must be 0 or more")
    out = copy.copy(fm)
    if n_remove == 0:
        return out
    d = fm.head_dim
    layers = []
    for li, (layer, imp) in enumerate(zip(fm.layers, importance)):
        n_heads = len(layer.heads_kept)
        if n_remove >= n_heads:
            raise UserError(f"--prune-heads {n_remove} would remove every head of layer {li} "
                            f"({n_heads} heads); use at most {n_heads - 1}")
        order = sorted(range(n_heads), key=lambda j: (-imp[j], j))  # most important first
        keep = sorted(order[: n_heads - n_remove])
        rows = np.concatenate([np.arange(j * d, (j + 1) * d) for j in keep])
        layers.append(FloatLayer(
            wq=layer.wq[rows].copy(), bq=layer.bq[rows].copy(),
            wk=layer.wk[rows].copy(), bk=layer.bk[rows].copy(),
            wv=layer.wv[rows].copy(), bv=layer.bv[rows].copy(),
            wo=layer.wo[:, rows].copy(), bo=layer.bo,
            ln1_g=layer.ln1_g, ln1_b=layer.ln1_b, wi=layer.wi, bi=layer.bi,
            wo2=layer.wo2, bo2=layer.bo2, ln2_g=layer.ln2_g, ln2_b=layer.ln2_b,
            heads_kept=[layer.heads_kept[j] for j in keep],
        ))
    out.layers = layers
    return out
