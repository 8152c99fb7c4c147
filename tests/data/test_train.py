"""`bertl14 train` smoke test: a tiny model, a few steps. Skips where torch is not installed (CI)."""
from __future__ import annotations

import json

import pytest

from bertl14_tools.data import dataset as data
from bertl14_tools.cli import main


def test_arch_parsing_and_flash_estimate():
    from bertl14_tools.train.training import estimate_flash, parse_arch   # no torch needed
    assert parse_arch("4x128x512x4:3000") == {"layers": 4, "hidden": 128, "intermediate": 512, "heads": 4,
                                              "vocab": 3000}
    assert parse_arch("2x64x128")["heads"] == 2
    # the worked example: 4 layers x 128 x 512 weights alone are 1.3 MB in INT16
    flash = estimate_flash(4, 128, 512, 4000, 42)
    assert flash["embeddings"] > 4000 * 128 and flash["linear"] > 4 * (4 * 128 * 128 + 2 * 128 * 512) * 2
    assert estimate_flash(4, 96, 256, 2000, 43)["total"] < 1 << 20


def test_threshold_rule_is_best_validation_accuracy_within_the_false_accept_bound():
    from bertl14_tools.reference.answer import MAX_VAL_FALSE_ACCEPT
    from bertl14_tools.train.training import choose_threshold
    table = [{"min_score": 0.0, "in_domain_accuracy": 0.99, "ood_false_accept": 0.20},
             {"min_score": 0.5, "in_domain_accuracy": 0.98, "ood_false_accept": MAX_VAL_FALSE_ACCEPT},
             {"min_score": 0.6, "in_domain_accuracy": 0.98, "ood_false_accept": 0.05},
             {"min_score": 0.9, "in_domain_accuracy": 0.90, "ood_false_accept": 0.01}]
    chosen = choose_threshold(table)
    assert chosen["min_score"] == 0.5 and chosen["meets_rule"]
    # nothing within the bound: the fewest false accepts, flagged
    worse = [dict(r, ood_false_accept=r["ood_false_accept"] + 0.1) for r in table]
    chosen = choose_threshold(worse)
    assert chosen["min_score"] == 0.9 and not chosen["meets_rule"]


def test_tiny_training_run(tmp_path):
    pytest.importorskip("torch", reason="torch not installed (pip install -e '.[train]')")
    pytest.importorskip("transformers", reason="transformers not installed (pip install -e '.[train]')")
    pytest.importorskip("tokenizers", reason="tokenizers not installed (pip install -e '.[train]')")
    ds = data.build_dataset("zh-CN", per_intent=10, seed=0)   # three validation sentences an intent
    data.write_dataset(ds, tmp_path / "ds")
    out = tmp_path / "model"
    # three steps learn nothing: no floor on the intents' accuracy
    assert main(["train", "--data", str(tmp_path / "ds"), "--arch", "tiny", "--out", str(out), "--epochs", "1",
                 "--max-steps", "3", "--no-test", "--quiet", "--calibration", "50", "--min-intent-accuracy", "0"]) == 0
    for name in ("config.json", "model.safetensors", "vocab.txt", "tokenizer_config.json", "labels.json",
                 "calibration.jsonl", "MODEL_CARD.md", "training.png"):
        assert (out / name).exists(), name
    labels = json.loads((out / "labels.json").read_text())
    assert data.NONE_LABEL in labels and "HassTurnOn" in labels
    vocab = (out / "vocab.txt").read_text(encoding="utf-8").splitlines()
    assert vocab[:5] == ["[PAD]", "[UNK]", "[CLS]", "[SEP]", "[MASK]"]
    assert "灯" in vocab and "##灯" not in vocab          # Chinese by single character
    calib = [json.loads(line) for line in (out / "calibration.jsonl").open(encoding="utf-8")]
    train_texts = {r["text"] for r in ds.train}
    assert 0 < len(calib) <= 50 and all(c["text"] in train_texts for c in calib)
    card = (out / "MODEL_CARD.md").read_text()
    assert "bertl14 train --data" in card and "Selection rule" in card
    info = json.loads((out / "training.json").read_text())
    sel = info["results"]["selection"]
    assert info["min_score"] == sel["min_score"] and sel["ood_validation"] > 0 and sel["in_domain_validation"] > 0
    # the converter reads the folder without torch
    from bertl14_tools.model.hf import load_hf
    fm = load_hf(out)
    assert fm.labels == labels and fm.vocab == vocab and fm.num_layers == 1
