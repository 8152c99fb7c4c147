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
    smoothing: bool = False
    embedding: str = "int8"          # "int8" | "int4"
    smooth_alpha: float = 0.5


@dataclass
class QLinear:
    w: np.ndarray            # int16 [out][in]
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

    @property
    def num_labels(self) -> int:
        return len(self.labels) if self.cls is not None else 0

    @property
    def has_classifier(self) -> bool:
        return self.cls is not None
