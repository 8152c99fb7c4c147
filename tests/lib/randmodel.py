"""Random integer QuantModels for the C-library tests: every field of docs/numerics.md filled with
random but well-scaled integers (so attention, GELU and LayerNorm see realistic ranges), without
going through a float model and the quantizer. Exercises smoothing factors, INT4 embeddings,
pruned heads (heads_kept < heads_total), the classifier head and the token classifier (tags), and INT8 linear
weights (weights="int8")."""
from __future__ import annotations

import numpy as np
import pytest

from bertl14_tools.model.quant import QLayer, QLayerNorm, QLinear, QuantModel


def _linear(rng, out, inn, out_bits, f_target_bits):
    w = rng.integers(-3000, 3001, size=(out, inn)).astype(np.int16)
    mult = rng.integers(1 << 14, 1 << 15, size=out).astype(np.int16)
    # acc ~ sqrt(in) * 60 * 1700, s ~ 2^15, mult ~ 2^14.5: choose the shift so |y| ~ 2^f_target_bits
    acc_bits = np.log2(np.sqrt(inn) * 60 * 1700)
    base = int(round(acc_bits + 15 + 14.5 - f_target_bits))
    shift = np.clip(base + rng.integers(-1, 2, size=out), 1, 62).astype(np.int16)
    bias = rng.integers(-(1 << (f_target_bits - 2)), 1 << (f_target_bits - 2), size=out).astype(np.int32)
    return QLinear(w=w, mult=mult, shift=shift, bias=bias)


def _ln(rng, h, f_r):
    f_g = 13
    gamma = rng.integers(1 << 11, 1 << 13, size=h).astype(np.int16) * rng.choice([-1, 1], size=h).astype(np.int16)
    f_out = int(np.floor(np.log2(32767 / (2.0 ** -f_g * np.abs(gamma.astype(np.int64)).max() * np.sqrt(h - 1) + 0.25))))
    beta = rng.integers(-(1 << max(f_out - 3, 1)), 1 << max(f_out - 3, 1), size=h).astype(np.int32)
    eps_q = max(1, int(round(1e-12 * 2.0 ** (2 * f_r))))
    return QLayerNorm(gamma=gamma, beta=beta, f_g=f_g, f_out=f_out, eps_q=eps_q)


def _smooth(rng, n, on):
    if not on:
        return np.full(n, 4096, np.uint16)
    return rng.integers(2048, 8192, size=n).astype(np.uint16)


def random_quant_model(seed=0, layers=2, hidden=64, heads_total=8, heads_kept=8, intermediate=128, vocab=300,
                       max_position=64, labels=5, embedding="int8", smoothing=False, tags=0,
                       weights="int16") -> QuantModel:
    rng = np.random.default_rng(seed)
    d = hidden // heads_total
    a = heads_kept * d
    f_e = 18
    qlayers = []
    for _ in range(layers):
        f_r1, f_r2 = 18, 17
        ln1 = _ln(rng, hidden, f_r1)
        qlayers.append(QLayer(
            q=_linear(rng, a, hidden, 16, 12), k=_linear(rng, a, hidden, 16, 12), v=_linear(rng, a, hidden, 16, 12),
            o=_linear(rng, hidden, a, 32, f_r1 - 1), i=_linear(rng, intermediate, hidden, 16, 11),
            o2=_linear(rng, hidden, intermediate, 32, f_r2 - 1), ln1=ln1, ln2=_ln(rng, hidden, f_r2),
            f_q=12, f_k=12, f_v=12, f_r1=f_r1, f_up=int(rng.integers(9, 13)), f_r2=f_r2,
            res1_u=_smooth(rng, hidden, smoothing), res2_u=_smooth(rng, hidden, smoothing),
            gelu_ism=_smooth(rng, intermediate, smoothing)))
    lim = 7 if embedding == "int4" else 127
    qm = QuantModel(
        num_layers=layers, hidden=hidden, heads_total=heads_total, heads_kept=heads_kept, head_dim=d,
        intermediate=intermediate, vocab_size=vocab, max_position=max_position, embedding=embedding,
        act_scale="per_token", smoothing=smoothing,
        word_q=rng.integers(-lim, lim + 1, size=(vocab, hidden)).astype(np.int8),
        word_scale=rng.integers(1, 65536, size=vocab).astype(np.uint16), word_shift=4 if embedding == "int4" else 8,
        pos_q=rng.integers(-127, 128, size=(max_position, hidden)).astype(np.int8),
        pos_scale=rng.integers(1, 65536, size=max_position).astype(np.uint16), pos_shift=9,
        f_e=f_e, emb_ln=_ln(rng, hidden, f_e), layers=qlayers)
    if labels:
        qm.pooler = _linear(rng, hidden, hidden, 32, 12)
        qm.cls = _linear(rng, labels, hidden, 32, 12)
        qm.labels = [f"label_{i}" for i in range(labels)]
    if tags:      # on every output row (int8, F = the last LN's f_out), logits Q10 like the classifier's
        qm.tagger = _linear(rng, tags, hidden, 32, 12)
        qm.tags = ["O"] + [f"{bi}-slot{i // 2}" for i, bi in zip(range(tags - 1), "BI" * tags)]
    if weights == "int8":
        _to_int8_weights(qm)
    return qm


def _to_int8_weights(qm: QuantModel) -> None:
    """INT8 linear weights: each INT16 row (|w| <= 3000) scaled to 127 (about 2^-4.6), its shift lowered by 5 so the
    outputs keep their ranges."""
    lins = [getattr(L, n) for L in qm.layers for n in ("q", "k", "v", "o", "i", "o2")]
    lins += [x for x in (qm.pooler, qm.cls, qm.tagger) if x is not None]
    for lin in lins:
        lin.w = np.round(lin.w.astype(np.float64) * 127 / 3000).astype(np.int8)
        lin.shift = np.clip(lin.shift.astype(np.int64) - 5, 1, 62).astype(np.int16)
    qm.weights = "int8"


def dummy_vocab(words: int = 300) -> np.ndarray:
    """A vocabulary section for encoder-only tests (tokenize is not called)."""
    try:
        from bertl14_tools.model.vocab_blob import build_vocab_section
    except ModuleNotFoundError:
        pytest.skip("bertl14_tools.model.vocab_blob is not in this checkout")
    vocab = {p: i for i, p in enumerate(["[PAD]", "[UNK]", "[CLS]", "[SEP]", "[MASK]"]
                                         + [f"w{i}" for i in range(words - 5)])}
    return np.asarray(build_vocab_section(vocab, True, None, True), dtype=np.uint32)
