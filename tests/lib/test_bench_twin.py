"""`bertl14 bench`'s shape twin (long inputs for a model with few positions), the float32 image's buffer bytes (the
formula against naive_bert.c compiled for those dimensions) and its RAM rule."""
from __future__ import annotations

import json
import shutil
import subprocess
from pathlib import Path

import numpy as np
import pytest

from bertl14_tools.device import bench
from bertl14_tools import cbuild

NAIVE_SRC = cbuild.REPO_ROOT / "bench" / "float32_naive" / "src"

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


def naive_buffer_bytes(tmp_path: Path, dims: dict, n: int) -> int:
    """The bytes of naive_bert.c's static buffers built for these dimensions and n tokens: the host compiler
    compiles it, nm reads the sizes of its emb, buf and pooled arrays (floats are 4 bytes on the M7 too)."""
    inc = tmp_path / f"inc-{n}-{dims['heads_kept']}"
    inc.mkdir()
    (inc / "float_model.h").write_text("\n".join([
        f"#define FM_LAYERS {dims['layers']}", f"#define FM_HIDDEN {dims['hidden']}",
        f"#define FM_HEADS {dims['heads_kept']}", f"#define FM_HEAD_DIM {dims['head_dim']}",
        f"#define FM_INTERMEDIATE {dims['intermediate']}", f"#define FM_MAX_SEQ {n}", "#define FM_LABELS 3",
        "#define FM_LN_EPS 1e-12f",
        "typedef struct { const float *wq, *bq, *wk, *bk, *wv, *bv, *wo, *bo, *ln1_g, *ln1_b, *wi, *bi, *wo2, *bo2, "
        "*ln2_g, *ln2_b; } fm_layer_t;",
        "extern const float fm_word[], fm_pos[], fm_type0[], fm_emb_ln_g[], fm_emb_ln_b[];",
        "extern const float fm_pooler_w[], fm_pooler_b[], fm_cls_w[], fm_cls_b[];",
        "extern const fm_layer_t fm_layers[FM_LAYERS];", ""]))
    obj = inc / "naive_bert.o"
    subprocess.run([cbuild.compiler(), "-c", "-O1", f"-I{inc}", str(NAIVE_SRC / "naive_bert.c"), "-o", str(obj)],
                   check=True, capture_output=True, text=True)
    nm = subprocess.run(["nm", "-S", "--defined-only", str(obj)], check=True, capture_output=True, text=True).stdout
    sizes = {f[3]: int(f[1], 16) for f in (ln.split() for ln in nm.splitlines()) if len(f) == 4}
    assert {"emb", "buf", "pooled"} <= set(sizes), nm
    return sizes["emb"] + sizes["buf"] + sizes["pooled"]


@pytest.mark.parametrize("dims", [{"layers": 4, "hidden": 96, "heads_kept": 3, "head_dim": 32, "intermediate": 256},
                                  {"layers": 2, "hidden": 64, "heads_kept": 3, "head_dim": 16, "intermediate": 96}])
def test_float_naive_bytes_are_the_images_buffers(tmp_path, dims):
    if shutil.which("nm") is None:
        pytest.skip("nm (binutils) not installed")
    for n in (16, 64, 512):
        assert bench.float_naive_bytes(dims, n) == naive_buffer_bytes(tmp_path, dims, n)


def test_float_naive_ram_rule():
    dims = {"layers": 4, "hidden": 96, "heads_kept": 3, "head_dim": 32, "intermediate": 256}
    limit = bench.float_ram_limit("mps2_an500")                          # its RAM region (board.yml) less a reserve
    assert bench.float_naive_bytes(dims, 128) <= limit < bench.float_naive_bytes(dims, 512)
