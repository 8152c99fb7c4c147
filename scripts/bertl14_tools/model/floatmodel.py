"""The unquantized model as plain numpy arrays: what the converter reads from a Hugging Face folder,
what head pruning and vocabulary trimming edit, and what quantization and the float engine consume.

Linear weights keep torch's layout, [out_features, in_features]. After head pruning a layer's
attention has `len(heads_kept)` heads: wq/wk/wv have len(heads_kept) * head_dim rows and wo has as many
columns, in the order of `heads_kept` (original head indexes, ascending).
"""
from __future__ import annotations

from dataclasses import dataclass, field

import numpy as np


@dataclass
class FloatLayer:
    wq: np.ndarray
    bq: np.ndarray
    wk: np.ndarray
    bk: np.ndarray
    wv: np.ndarray
    bv: np.ndarray
    wo: np.ndarray          # attention output projection [hidden, kept_heads * head_dim]
    bo: np.ndarray
    ln1_g: np.ndarray       # attention.output.LayerNorm
    ln1_b: np.ndarray
    wi: np.ndarray          # intermediate.dense [intermediate, hidden]
    bi: np.ndarray
    wo2: np.ndarray         # output.dense [hidden, intermediate]
    bo2: np.ndarray
    ln2_g: np.ndarray       # output.LayerNorm
    ln2_b: np.ndarray
    heads_kept: list[int] = field(default_factory=list)


@dataclass
class FloatModel:
    hidden: int
    num_heads: int           # heads per layer before pruning
    intermediate: int
    max_position: int
    layer_norm_eps: float
    word_emb: np.ndarray     # [vocab, hidden]
    pos_emb: np.ndarray      # [max_position, hidden]
    type_emb: np.ndarray     # [type_vocab, hidden]
    emb_ln_g: np.ndarray
    emb_ln_b: np.ndarray
    layers: list[FloatLayer]
    vocab: list[str]                       # id -> WordPiece piece (vocab.txt order)
    do_lower_case: bool = True
    strip_accents: bool | None = None      # None: follow do_lower_case, as BertTokenizer does
    tokenize_chinese_chars: bool = True
    pooler_w: np.ndarray | None = None     # [hidden, hidden]
    pooler_b: np.ndarray | None = None
    cls_w: np.ndarray | None = None        # [num_labels, hidden]
    cls_b: np.ndarray | None = None
    labels: list[str] = field(default_factory=list)
    tag_w: np.ndarray | None = None        # token classification (tagging) head [num_tags, hidden], every token
    tag_b: np.ndarray | None = None
    tags: list[str] = field(default_factory=list)
    name: str = "model"
    gelu: str = "erf"                      # the checkpoint's GELU: "erf" (HF "gelu") or "tanh" (gelu_new & co.)

    @property
    def head_dim(self) -> int:
        return self.hidden // self.num_heads

    @property
    def num_layers(self) -> int:
        return len(self.layers)

    @property
    def vocab_size(self) -> int:
        return len(self.vocab)

    @property
    def has_classifier(self) -> bool:
        return self.cls_w is not None

    @property
    def num_tags(self) -> int:
        return 0 if self.tag_w is None else int(self.tag_w.shape[0])
