"""`bertl14 bench`'s tflm-cmsis-nn engine on the emulated Cortex-M7 (slow, opt-in: `pytest -m slow`; the TFLM and
CMSIS-NN images build for several minutes the first time): the JSON contract of its rows next to the library's,
and the board image answering what the host runner answers (the agreement figures come from the host)."""
from __future__ import annotations

import json
import shutil

import numpy as np
import pytest

from bertl14_tools.device import bench_peer
from bertl14_tools import cli
from bertl14_tools.model import tflite_export
from testsupport import REPO, skip_missing

pytestmark = [pytest.mark.slow, pytest.mark.qemu]
MODEL = REPO / "models" / "intent-en"


@pytest.fixture(scope="module")
def ready():
    reason = tflite_export.missing_reason()
    if reason:
        skip_missing(reason)
    missing = [t for t in ("arm-none-eabi-g++", "qemu-system-arm", "cmake") if not shutil.which(t)]
    if missing:
        skip_missing(f"{', '.join(missing)} not found (make deps installs them)")


def test_bench_json_has_the_peer_rows(ready, tmp_path, capsys):
    data = tmp_path / "d.jsonl"
    texts = ["turn on the kitchen light", "set a timer for five minutes", "what is the weather like",
             "pause the music", "add milk to my shopping list", "tell me a joke"]
    data.write_text("".join(json.dumps({"text": t}) + "\n" for t in texts))
    code = cli.main(["bench", "--model", str(MODEL), "--kernels", "dsp", "--seq-lens", "16,32", "--no-baseline",
                     "--no-host", "--agreement-data", str(data), "--json", "--quiet"])
    out = capsys.readouterr().out
    assert code == 0, out
    rep = json.loads(out)
    rows = {(r["engine"], r["seq_len"]): r for r in rep["results"] if not r.get("sentence")}
    assert set(rows) == {("bertl14-dsp", 16), ("bertl14-dsp", 32), ("tflm-cmsis-nn", 16), ("tflm-cmsis-nn", 32)}
    for (engine, n), r in rows.items():
        for key in ("instructions", "macs", "ram_bytes", "work_buffer_bytes", "flash_bytes", "agreement_with_float",
                    "ms_estimate"):
            assert key in r, (engine, key)
        assert r["ms_estimate"] == round(r["instructions"] / 400e6 * 1e3, 3)     # board.yml's 400 MHz
        assert 0.0 <= r["agreement_with_float"] <= 1.0
    for n in (16, 32):
        t, d = rows[("tflm-cmsis-nn", n)], rows[("bertl14-dsp", n)]
        assert t["macs"] == d["macs"] and t["instructions"] > d["instructions"] > 0
        assert t["arena_bytes"] == t["work_buffer_bytes"] > 0 and t["ram_bytes"] > t["arena_bytes"]
        assert t["flash_bytes"] > t["model_bytes"] > 0
        ops = t["operators"]
        assert {"FULLY_CONNECTED", "SOFTMAX", "BATCH_MATMUL", "MEAN", "GeluApprox"} <= set(ops)
        assert 0.95 * t["instructions"] < sum(v["instructions"] for v in ops.values()) <= t["instructions"]
    assert rows[("tflm-cmsis-nn", 32)]["instructions"] > rows[("tflm-cmsis-nn", 16)]["instructions"]
    assert rep["clock"] == {"hz": 400_000_000, "part": "STM32H743ZI"}
    assert rep["agreement"]["n"] == len(texts) and "accuracy_argmax" not in rep["agreement"]   # no gold intents
    k = rep["kernels"]["tflm-cmsis-nn"]
    assert k["arm_fully_connected_s8 32x96x256"]["instructions_per_mac"] > 0
    assert k["arm_softmax_s16 32"]["instructions_per_element"] > 0
    assert rep["ratios"][1]["tflm_over_dsp_instructions"] > 1


def test_the_board_image_answers_as_the_host_runner(ready):
    """The logits and tag logits the M7 image prints (CMSIS-NN's DSP code) are byte for byte the host runner's
    (its portable C code): the agreement measured on the host is the board's."""
    from bertl14_tools.device import qemu_target
    from bertl14_tools.device.bench import _ids
    from bertl14_tools.model.folder import open_model
    model = open_model(MODEL, progress=False)
    texts = ["turn on the kitchen light", "set the bedroom temperature to twenty degrees"]
    lens = sorted({len(model.encode(x)) for x in texts} | {16})
    elf, _ = bench_peer.build_image(model, lens, "mps2_an500", False)
    runner = bench_peer.build_host_runner()
    ex = bench_peer.exporter(model)
    C, T = len(model.labels), len(model.tags)
    with qemu_target.QemuTarget(elf, board="mps2_an500", timeout=120) as t:
        for n in lens:
            for ids in [_ids(model, n)] + [model.encode(x) for x in texts if len(model.encode(x)) == n]:
                got = bench_peer._invoke(t, "I", ids, n)
                board = np.array([int(v) for v in got["L"].split()] +
                                 list(np.frombuffer(bytes.fromhex(got["G"]), np.int8)), np.int8)
                host, _ = bench_peer.run_host(runner, ex.tflite(n), [ids], C + n * T)
                np.testing.assert_array_equal(board, host[0])
