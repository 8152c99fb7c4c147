"""The host tools answer as the firmware does (answer.py): `predict` and `eval` apply the model's min_score in
integer thousandths (protocol.c's rule), `none` with `best` under it, `--min-score` overrides."""
from __future__ import annotations

import json
import sys
from pathlib import Path

import pytest

REPO = Path(__file__).resolve().parents[2]
sys.path.insert(0, str(REPO / "tests" / "convert"))
from cvt_util import CALIB, run_cli, write_tiny_bert  # noqa: E402

LABELS = ["HassTurnOn", "HassSetPosition", "HassFanSetSpeed", "none"]
TEXTS = CALIB + ["turn the fan up", "what is on", "close it", "set the kitchen light to 40 percent"]


def _lines(r):
    assert r.returncode == 0, r.stderr
    return [json.loads(line) for line in r.stdout.splitlines()]


@pytest.fixture(scope="module")
def tiny(tmp_path_factory) -> Path:
    """A random 4-label model (one of them `none`), Hugging Face folder with labels.json."""
    src = write_tiny_bert(tmp_path_factory.mktemp("answer") / "tiny", num_labels=len(LABELS), seed=3,
                          calibration=CALIB)
    (src / "labels.json").write_text(json.dumps(LABELS))
    return src


@pytest.fixture(scope="module")
def argmax(tiny):
    """Every text's plain argmax (--min-score 0), by the integer reference."""
    return _lines(run_cli("predict", "--model", tiny, "--min-score", "0", "--json", *TEXTS))


@pytest.fixture(scope="module")
def thresholded(tiny, argmax, tmp_path_factory):
    """The same model shipped with a min_score (training.json) that some in-domain answers miss: a copy of the
    folder, so that it converts to its own cache entry."""
    import shutil
    scores = sorted(int(round(p["score"] * 1000)) for p in argmax if p["intent"] != "none")
    assert len(scores) >= 4, argmax
    cut = scores[len(scores) // 2]          # one answer exactly at the threshold, some under it
    folder = tmp_path_factory.mktemp("thr") / "tiny"
    shutil.copytree(tiny, folder)
    (folder / "training.json").write_text(json.dumps({"min_score": cut / 1000}))
    return folder, cut


def _device(label: str, milli: int, cut: int) -> tuple[str, str | None]:
    """protocol.c written out: in domain when score_milli >= min_score_milli and the label is not none."""
    if milli >= cut and label != "none":
        return label, None
    return "none", None if label == "none" else label


@pytest.mark.parametrize("engine", ["ref", "c"])
def test_predict_applies_the_models_min_score(thresholded, argmax, engine):
    folder, cut = thresholded
    got = _lines(run_cli("predict", "--model", folder, "--engine", engine, "--json", *TEXTS))
    under = 0
    for a, p in zip(argmax, got):
        label = a["intent"]
        milli = int(round(a["score"] * 1000))
        intent, best = _device(label, milli, cut)
        assert (p["intent"], p.get("best")) == (intent, best), (p, a, cut)
        assert p["score"] == a["score"] and p["tokens"] == a["tokens"]
        under += best is not None
        if label != "none" and milli < cut:
            assert p["intent"] != label                      # never the argmax under the threshold
    assert under >= 1 and any(p["intent"] not in ("none",) for p in got)
    # --min-score overrides the model's: 0 is the plain argmax, 1 answers none (with best) for all but 1.000
    assert _lines(run_cli("predict", "--model", folder, "--engine", engine, "--min-score", "0", "--json",
                          *TEXTS)) == argmax
    high = _lines(run_cli("predict", "--model", folder, "--engine", engine, "--min-score", "1", "--json", *TEXTS))
    assert all(p["intent"] == "none" for p in high if p["score"] < 1)
    human = run_cli("predict", "--model", folder, "--engine", engine, *TEXTS).stdout.splitlines()
    assert [line.split("\t")[0] for line in human] == [p["intent"] for p in got]
    assert sum("\tbest=" in line for line in human) == under


def test_eval_reports_device_and_argmax_accuracy(thresholded, argmax, tmp_path):
    folder, cut = thresholded
    gold = [a["intent"] for a in argmax]               # the argmax is right everywhere
    data = tmp_path / "d.jsonl"
    data.write_text("".join(json.dumps({"text": t, "intent": g}) + "\n" for t, g in zip(TEXTS, gold)))
    res = {e: _lines(run_cli("eval", "--model", folder, "--engine", e, "--data", data, "--json"))[0]
           for e in ("ref", "c")}
    assert res["c"] == res["ref"]
    r = res["ref"]
    device = [_device(a["intent"], int(round(a["score"] * 1000)), cut)[0] for a in argmax]
    assert r["min_score"] == cut / 1000
    assert r["accuracy_argmax"] == 1.0 and r["macro_f1_argmax"] == 1.0
    assert r["accuracy"] == round(sum(d == g for d, g in zip(device, gold)) / len(gold), 6) < 1.0
    assert r["macro_f1"] < 1.0
    zero = _lines(run_cli("eval", "--model", folder, "--data", data, "--min-score", "0", "--json"))[0]
    assert zero["accuracy"] == zero["accuracy_argmax"] == 1.0 and zero["min_score"] == 0
    human = run_cli("eval", "--model", folder, "--data", data)
    assert human.returncode == 0 and f"at min_score {cut / 1000:.3f}" in human.stdout
    bad = run_cli("eval", "--model", folder, "--data", data, "--min-score", "2")
    assert bad.returncode == 2 and "--min-score: 2 must be within 0..1" in bad.stderr and "Traceback" not in bad.stderr
