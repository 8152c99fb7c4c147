"""The host tools answer as the firmware does (answer.py): `predict` and `eval` apply the model's min_score in
integer thousandths (protocol.c's rule), `none` with `best` under it, `--min-score` overrides; a sentence in which
the registry replaced a name is answered with min_score_named instead (`--min-score-named` overrides)."""
from __future__ import annotations

import json
import sys
from pathlib import Path

import pytest

REPO = Path(__file__).resolve().parents[2]
sys.path.insert(0, str(REPO / "tests" / "convert"))
from cvt_util import CALIB, TINY_VOCAB, run_cli, write_tiny_bert  # noqa: E402

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


# ---- the threshold of a sentence with a registry name --------------------------------------------------------------
HOME = """\
areas:
  - {name: Kitchen}
  - {name: Living Room, aliases: [lounge]}
entities:
  - {name: Kitchen Light, domain: light, area: Kitchen}
  - {name: Desk Fan, domain: fan}
"""
NAMED_TEXTS = ["turn on the kitchen light", "set the desk fan to 40 percent", "open the door in the lounge",
               "turn off the kitchen light please", "is the desk fan on", "close the garage door",
               "set the heat to 20", "play music", "lock the door", "what is the temperature"]


@pytest.fixture(scope="module")
def named(tmp_path_factory):
    """A random model that reads the registry's placeholders (without a `none` class: every sentence has a label to
    answer), its registry, and every text's argmax with the names replaced (--min-score 0); then the same model
    shipped with min_score above every score and min_score_named at the lowest: by the rule, the sentences with a
    name answer their label, the others none."""
    import shutil
    root = tmp_path_factory.mktemp("named")
    src = write_tiny_bert(root / "tiny", vocab=TINY_VOCAB + ["[", "]", "name", "area", "floor"],
                          num_labels=3, seed=5, calibration=CALIB)
    (src / "labels.json").write_text(json.dumps(LABELS[:3]))
    home = root / "home.yaml"
    home.write_text(HOME, encoding="utf-8")
    argmax = _lines(run_cli("predict", "--model", src, "--entities", home, "--min-score", "0", "--json",
                            *NAMED_TEXTS))
    scores = [int(round(a["score"] * 1000)) for a in argmax]
    lo, hi = min(scores), max(scores) + 1
    assert hi <= 1000 and {bool(a["names"]) for a in argmax} == {True, False}, argmax
    folder = root / "shipped"
    shutil.copytree(src, folder)
    (folder / "training.json").write_text(json.dumps({"min_score": hi / 1000, "min_score_named": lo / 1000}))
    return folder, home, argmax, lo, hi


def _expected(argmax, plain: int, named: int) -> list[tuple[str, str | None]]:
    """protocol.c written out: the named threshold when the registry replaced a name, else the plain one."""
    return [_device(a["intent"], int(round(a["score"] * 1000)), named if a["names"] else plain) for a in argmax]


@pytest.mark.parametrize("engine", ["ref", "c"])
def test_predict_applies_the_named_threshold_to_sentences_with_a_name(named, engine):
    folder, home, argmax, lo, hi = named

    def predict(*args):
        got = _lines(run_cli("predict", "--model", folder, "--engine", engine, "--entities", home, "--json", *args,
                             *NAMED_TEXTS))
        assert [(p["score"], p["names"]) for p in got] == [(a["score"], a["names"]) for a in argmax]
        return [(p["intent"], p.get("best")) for p in got]

    own = predict()                                       # the model's own: min_score hi, min_score_named lo
    assert own == _expected(argmax, hi, lo)
    assert any(i != "none" for i, _ in own) and any(b is not None for _, b in own)
    # the other way round, by the flags: a name now needs hi, a plain sentence lo
    swapped = predict("--min-score", str(lo / 1000), "--min-score-named", str(hi / 1000))
    assert swapped == _expected(argmax, lo, hi) != own
    # --min-score alone is the threshold of every sentence: 0 is the plain argmax
    assert predict("--min-score", "0") == [(a["intent"], a.get("best")) for a in argmax]
    assert predict("--min-score", str(hi / 1000)) == _expected(argmax, hi, hi)
    # without --entities nothing is replaced: min_score for every sentence
    bare = _lines(run_cli("predict", "--model", folder, "--engine", engine, "--min-score", "0", "--json",
                          *NAMED_TEXTS))
    plain = _lines(run_cli("predict", "--model", folder, "--engine", engine, "--json", *NAMED_TEXTS))
    assert [(p["intent"], p.get("best")) for p in plain] == \
        [_device(b["intent"], int(round(b["score"] * 1000)), hi) for b in bare]


def test_eval_reports_both_thresholds(named, tmp_path):
    folder, home, argmax, lo, hi = named
    data = tmp_path / "d.jsonl"
    data.write_text("".join(json.dumps({"text": a["text"], "intent": a["intent"]}) + "\n" for a in argmax))
    r = _lines(run_cli("eval", "--model", folder, "--entities", home, "--data", data, "--json"))[0]
    assert (r["min_score"], r["min_score_named"]) == (hi / 1000, lo / 1000)
    device = [i for i, _ in _expected(argmax, hi, lo)]
    assert r["accuracy"] == round(sum(d == a["intent"] for d, a in zip(device, argmax)) / len(argmax), 6)
    assert r["accuracy_argmax"] == 1.0
    one = _lines(run_cli("eval", "--model", folder, "--entities", home, "--data", data, "--min-score", "0",
                         "--json"))[0]
    assert one["min_score"] == one["min_score_named"] == 0 and one["accuracy"] == 1.0
    human = run_cli("eval", "--model", folder, "--entities", home, "--data", data)
    assert human.returncode == 0 and f"at min_score {hi / 1000:.3f}, {lo / 1000:.3f} with a registry name" \
        in human.stdout
    bad = run_cli("eval", "--model", folder, "--data", data, "--min-score-named", "2")
    assert bad.returncode == 2 and "--min-score-named: 2 must be within 0..1" in bad.stderr


def test_report_answers_sentences_with_a_name_under_the_named_threshold(named, tmp_path):
    """bertl14 report --entities: its figures at the model's thresholds are the device's (a name: min_score_named),
    for the in-domain data and the out-of-domain file alike."""
    folder, home, argmax, lo, hi = named
    data = tmp_path / "d.jsonl"
    data.write_text("".join(json.dumps({"text": a["text"], "intent": a["intent"]}) + "\n" for a in argmax))
    out = tmp_path / "report"
    r = run_cli("report", "--model", folder, "--entities", home, "--data", data, "--ood", data, "--out", out,
                "--no-tradeoff", "-q")
    assert r.returncode == 0, r.stderr
    at = json.loads((out / "report.json").read_text())["at_min_score"]
    device = [i for i, _ in _expected(argmax, hi, lo)]
    assert (at["min_score"], at["min_score_named"]) == (hi / 1000, lo / 1000)
    assert at["sentences_with_names"] == sum(bool(a["names"]) for a in argmax)
    assert at["accuracy"] == sum(d == a["intent"] for d, a in zip(device, argmax)) / len(argmax)
    assert at["ood_false_accept"]["accepted"] == sum(d != "none" for d in device) > 0
    # the threshold curve keeps min_score_named for the sentences with a name: its point at min_score is the device's
    curve = {round(r["min_score"] * 1000): r for r in json.loads((out / "report.json").read_text())["threshold_curve"]}
    assert curve[hi]["accuracy"] == round(at["accuracy"], 4)
    assert curve[hi]["ood_false_accept"] == round(at["ood_false_accept"]["rate"], 4)
    assert (out / "threshold.png").stat().st_size > 0
