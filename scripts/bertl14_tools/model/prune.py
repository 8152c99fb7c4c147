"""Attention-head pruning: measure each head's importance on calibration sentences, remove the N least
important heads of every layer (their Q/K/V rows and their output-projection columns).

Importance (gradient-free): the mean, over the calibration tokens, of the L2 norm of what the head adds to
the attention output, ||ctx_h @ Wo[:, h]^T||. A head whose contribution is small can go with the least change
to the residual stream. The forward pass that measures it is float_engine's, with every head present.
"""
from __future__ import annotations

import copy

import numpy as np
from tqdm import tqdm

from . import float_engine
from ..errors import UserError
from .floatmodel import FloatLayer, FloatModel


def head_importance(fm: FloatModel, calib_ids: list[list[int]], progress: bool = True) -> list[np.ndarray]:
    """Per layer, one importance value per kept head (in `heads_kept` order)."""
    if not calib_ids:
        raise UserError("head pruning needs calibration sentences; pass --calibration FILE.jsonl")
    d = fm.head_dim
    totals = [np.zeros(len(layer.heads_kept)) for layer in fm.layers]
    for ids in tqdm(calib_ids, desc="head importance", unit="sent", disable=not progress, leave=False):
        trace = float_engine.forward(fm, ids, gelu="tanh", trace=True).trace  # tanh: fast, near-equal
        for li, (layer, tr) in enumerate(zip(fm.layers, trace["layers"])):
            for j in range(len(layer.heads_kept)):
                cols = slice(j * d, (j + 1) * d)
                contrib = tr["ctx"][:, cols] @ np.asarray(layer.wo[:, cols], np.float64).T  # head j's share
                totals[li][j] += np.linalg.norm(contrib, axis=-1).mean()
    return [t / len(calib_ids) for t in totals]


def prune_heads(fm: FloatModel, n_remove: int, importance: list[np.ndarray]) -> FloatModel:
    """A copy of `fm` without the `n_remove` least important heads of each layer (ties: the later head goes)."""
    if n_remove < 0:
        raise UserError(f"--prune-heads {n_remove}: must be 0 or more")
    if n_remove == 0:
        return copy.copy(fm)
    keep_lists = []
    for li, (layer, imp) in enumerate(zip(fm.layers, importance)):
        n_heads = len(layer.heads_kept)
        if n_remove >= n_heads:
            raise UserError(f"--prune-heads {n_remove} would remove every head of layer {li} "
                            f"({n_heads} heads); use at most {n_heads - 1}")
        order = sorted(range(n_heads), key=lambda j: (-imp[j], j))  # most important first
        keep_lists.append([layer.heads_kept[j] for j in sorted(order[: n_heads - n_remove])])
    return keep_heads(fm, keep_lists)


def keep_heads(fm: FloatModel, heads_kept: list[list[int]]) -> FloatModel:
    """A copy of `fm` with only the listed original heads in each layer (e.g. a manifest's heads_kept)."""
    if len(heads_kept) != fm.num_layers:
        raise UserError(f"heads_kept lists {len(heads_kept)} layers, the model has {fm.num_layers}")
    d = fm.head_dim
    layers = []
    for layer, keep in zip(fm.layers, heads_kept):
        pos = [layer.heads_kept.index(h) for h in sorted(keep)]  # positions within this layer's current heads
        rows = np.concatenate([np.arange(j * d, (j + 1) * d) for j in pos])
        layers.append(FloatLayer(
            wq=layer.wq[rows].copy(), bq=layer.bq[rows].copy(),
            wk=layer.wk[rows].copy(), bk=layer.bk[rows].copy(),
            wv=layer.wv[rows].copy(), bv=layer.bv[rows].copy(),
            wo=layer.wo[:, rows].copy(), bo=layer.bo,
            ln1_g=layer.ln1_g, ln1_b=layer.ln1_b, wi=layer.wi, bi=layer.bi,
            wo2=layer.wo2, bo2=layer.bo2, ln2_g=layer.ln2_g, ln2_b=layer.ln2_b,
            heads_kept=sorted(keep),
        ))
    out = copy.copy(fm)
    out.layers = layers
    return out
