"""`bertl14 bench`'s shape twin (long inputs for a model with few positions) and its float32 RAM rule."""
from __future__ import annotations

import json
from pathlib import Path

import numpy as np
import pytest

from bertl14_tools import bench

safetensors = pytest.importorskip("safetensors.numpy")


def _tiny_hf(folder: Path, positions: int) -> Path:
    rng = np.random.default_rng(0)
    folder.mkdir(parents=True)
    (folder / "vocab.txt").write_text("\n".join(["[PAD]", "[UNK]", "[CLS]", "[SEP]", "a", "b"]) + "\n")
    (folder / "config.json").write_text(json.dumps({"hidden_size": 8, "max_position_embeddings": positions}))
    safetensors.save_file({"bert.embeddings.position_embeddings.weight": rng.standard_normal((positions, 8)).astype(np.float32),
                           "bert.embeddings.word_embeddings.weight": rng.standard_normal((6, 8)).astype(np.float32)},
                          str(folder / "model.safetensors"))
    return folder


def test_shape_twin_tiles_positions_and_keeps_the_rest(tmp_path, monkeypatch):
    monkeypatch.setenv("BERTL14_CACHE", str(tmp_path / "cache"))
    src = _tiny_hf(tmp_path / "m", 64)
    twin = bench.shape_twin(src, 512)
    assert twin != src and bench.shape_twin(src, 512) == twin          # cached by content
    cfg = json.loads((twin / "config.json").read_text())
    assert cfg["max_position_embeddings"] == 512 and cfg["hidden_size"] == 8
    a, b = safetensors.load_file(str(src / "model.safetensors")), safetensors.load_file(str(twin / "model.safetensors"))
    pos_a, pos_b = a["bert.embeddings.position_embeddings.weight"], b["bert.embeddings.position_embeddings.weight"]
    assert pos_b.shape == (512, 8)
    np.testing.assert_array_equal(pos_b[:64], pos_a)                   # the trained rows unchanged
    np.testing.assert_array_equal(pos_b[64 * 7 + 5], pos_a[5])         # then row p = row p mod 64
    np.testing.assert_array_equal(b["bert.embeddings.word_embeddings.weight"], a["bert.embeddings.word_embeddings.weight"])
    assert (twin / "vocab.txt").read_text() == (src / "vocab.txt").read_text()


def test_float_naive_ram_rule():
    dims = {"layers": 4, "hidden": 96, "heads_kept": 3, "head_dim": 32, "intermediate": 256}
    # the figure the float32 image reported at 64 tokens: 1,171,840 B (its buffers + ids/logits/pooled)
    assert abs(bench.float_naive_bytes(dims, 64) - 1_171_840) < 1024
    limit = bench.float_ram_limit("mps2_an500")                          # its RAM region (board.yml) less a reserve
    assert bench.float_naive_bytes(dims, 128) <= limit < bench.float_naive_bytes(dims, 512)
