"""`bertl14 report` helpers: per-intent scores and the confusion-matrix picture (no model needed)."""
from __future__ import annotations

import pytest

from bertl14_tools.reference.infer import per_label_scores
from bertl14_tools.train.report import apply_min_score, confusion_png, markdown_table


def test_per_label_scores():
    gold = ["a", "a", "b", "b", "c"]
    pred = ["a", "b", "b", "b", "none"]
    rows = {r["label"]: r for r in per_label_scores(gold, pred)}
    assert set(rows) == {"a", "b", "c"}
    assert rows["a"]["precision"] == 1.0 and rows["a"]["recall"] == 0.5
    assert rows["b"]["precision"] == pytest.approx(2 / 3) and rows["b"]["recall"] == 1.0
    assert rows["c"]["f1"] == 0.0 and rows["c"]["support"] == 1
    table = markdown_table(list(rows.values()), 0.6)
    assert "| a | 1.000 | 0.500 | 0.667 | 2 |" in table and "accuracy 0.6000" in table


def test_confusion_png_counts_every_cell_from_3_to_50_labels(tmp_path):
    pytest.importorskip("matplotlib", reason="matplotlib not installed")
    path = tmp_path / "c.png"
    drawn = confusion_png(["a", "b", "b", "c", "c", "c"], ["a", "a", "b", "c", "c", "none"], path, "t")
    assert path.read_bytes()[:8] == b"\x89PNG\r\n\x1a\n"
    assert drawn["labels"] == ["a", "b", "c", "none"]
    # every non-empty cell carries its count, the diagonal (right answers) included; empty cells stay blank
    assert drawn["cells"] == {(0, 0): "1", (1, 0): "1", (1, 1): "1", (2, 2): "2", (2, 3): "1"}
    from PIL import Image
    small = Image.open(path).size
    labels = [f"HassIntentNumber{i:02d}" for i in range(50)]
    gold = [lab for lab in labels for _ in range(3)]
    pred = [lab if k else labels[(i + 1) % 50] for i, lab in enumerate(labels) for k in range(3)]
    drawn = confusion_png(gold, pred, tmp_path / "c50.png", "t")
    assert len(drawn["cells"]) == 100 and all(drawn["cells"][(i, i)] == "2" for i in range(50))
    big = Image.open(tmp_path / "c50.png").size
    # the picture grows with the labels: at least 30 pixels a cell (110 dpi), counts in a readable font
    assert big[0] >= 50 * 30 and big[0] > 2 * small[0] and drawn["count_font"] >= 6


def test_threshold_curve_is_the_device_rule_at_every_min_score(tmp_path):
    from bertl14_tools.train.report import THRESHOLD_GRID, threshold_curve
    gold = ["a", "a", "b", "b", "none"]
    scored = [("a", 990), ("a", 700), ("b", 955), ("a", 980), ("none", 999)]
    ood = [("a", 960), ("none", 990), ("b", 400), ("b", 985)]
    curve = threshold_curve(gold, scored, ood, extra_milli=955)
    by = {round(r["min_score"] * 1000): r for r in curve}
    assert set(by) == set(THRESHOLD_GRID)          # 955 is on the grid already
    assert by[0] == {"min_score": 0.0, "accuracy": 0.8, "ood_false_accept": 0.75}   # the argmax: 4 of 5 right
    for t, row in by.items():
        answers = apply_min_score(scored, t)
        assert row["accuracy"] == round(sum(g == a for g, a in zip(gold, answers)) / 5, 4)
        assert row["ood_false_accept"] == round(sum(a != "none" for a in apply_min_score(ood, t)) / 4, 4)
    assert by[955]["accuracy"] == 0.6 and by[956]["accuracy"] == 0.4 and by[1000]["accuracy"] == 0.2
    assert [by[t]["ood_false_accept"] for t in (960, 961, 986)] == [0.5, 0.25, 0.0]
    assert threshold_curve(gold, scored, None)[0]["ood_false_accept"] is None
    pytest.importorskip("matplotlib", reason="matplotlib not installed")
    from bertl14_tools.train.plots import threshold_png
    threshold_png(curve, 0.955, tmp_path / "t.png", "t", bound=0.05)
    assert (tmp_path / "t.png").read_bytes()[:4] == b"\x89PNG"


def test_report_writes_the_pictures_and_the_curve_agrees_with_its_figures(tmp_path):
    """bertl14 report on a small random model: per_intent.md, confusion.png, threshold.png and tradeoff.png; the
    threshold curve's argmax point is the report's accuracy and its point at min_score the accuracy at min_score."""
    pytest.importorskip("matplotlib", reason="matplotlib not installed")
    import json
    import subprocess
    import sys
    from pathlib import Path
    repo = Path(__file__).resolve().parents[2]
    sys.path.insert(0, str(repo / "tests" / "convert"))
    from cvt_util import CALIB, write_tiny_bert
    model = write_tiny_bert(tmp_path / "m", heads=2, calibration=CALIB)
    data = tmp_path / "d.jsonl"
    data.write_text("".join(json.dumps({"text": t, "intent": f"intent_{i % 3}"}) + "\n" for i, t in enumerate(CALIB)))
    ood = tmp_path / "ood.jsonl"
    ood.write_text("".join(json.dumps({"text": t}) + "\n" for t in ("what a day", "hello there", "the sky is blue")))
    out = tmp_path / "out"
    r = subprocess.run([sys.executable, "-m", "bertl14_tools.cli", "report", "--model", str(model), "--data", str(data),
                        "--out", str(out), "--ood", str(ood), "--min-score", "0.4", "--seq-lens", "16", "24", "-q"],
                       capture_output=True, text=True, cwd=repo)
    assert r.returncode == 0, r.stderr
    for name in ("per_intent.md", "confusion.png", "threshold.png", "tradeoff.png"):
        assert (out / name).stat().st_size > 0, name
    rep = json.loads((out / "report.json").read_text())
    curve = {round(row["min_score"] * 1000): row for row in rep["threshold_curve"]}
    assert curve[0]["accuracy"] == round(rep["accuracy"], 4)
    assert curve[400]["accuracy"] == round(rep["at_min_score"]["accuracy"], 4)
    assert curve[400]["ood_false_accept"] == round(rep["at_min_score"]["ood_false_accept"]["rate"], 4)
    assert {(p["max_seq_len"], p["prune_heads"]) for p in rep["tradeoff"]} == {(16, 0), (16, 1), (24, 0), (24, 1)}


def test_min_score_answers_none_like_the_device():
    scored = [("a", 900), ("b", 550), ("none", 990), ("c", 549)]
    assert apply_min_score(scored, 550) == ["a", "b", "none", "none"]
    assert apply_min_score(scored, 0) == ["a", "b", "none", "c"]


def test_the_threshold_rule_is_protocol_c_in_thousandths():
    from bertl14_tools.reference.answer import device_answer, in_domain, to_milli
    assert device_answer("HassTurnOn", 894, 950) == ("none", "HassTurnOn")    # best= under the threshold
    assert device_answer("HassTurnOn", 950, 950) == ("HassTurnOn", None)      # >=, in integer thousandths
    assert device_answer("none", 999, 0) == ("none", None)                    # the model's none: no best=
    assert device_answer("HassTurnOn", 0, 0) == ("HassTurnOn", None)          # 0: the plain argmax
    assert not in_domain("none", 1000, 0) and in_domain("a", 1, 1) and not in_domain("a", 0, 1)
    # the converter's rounding of training.json's min_score (BERTL14_MIN_SCORE_MILLI): no float epsilon
    assert [to_milli(v) for v in (0.95, 0.7, 0.0005, 1)] == [950, 700, 0, 1000]
    with pytest.raises(Exception, match="outside 0..1"):
        to_milli(1.5)


def test_training_png_draws_what_training_json_holds(tmp_path):
    """train's picture from a training.json: the shipped model's (validation accuracy and slot spans by epoch, the
    threshold table) and one with the losses, the per-intent floor and the epoch kept."""
    pytest.importorskip("matplotlib", reason="matplotlib not installed")
    import json
    from pathlib import Path
    from bertl14_tools.train.plots import training_summary_png
    shipped = json.loads((Path(__file__).resolve().parents[2] / "models" / "intent-en" / "training.json").read_text())
    training_summary_png(shipped, tmp_path / "shipped.png")
    history = [{"epoch": e, "train_loss": 2.0 / e, "val_loss": 2.2 / e, "val_accuracy": 1 - 0.5 / e,
                "in_domain_accuracy": 1 - 0.6 / e, "lowest_intent": {"intent": "x", "accuracy": 1 - 1.0 / e}}
               for e in range(1, 8)]
    summary = {"min_score": 0.5, "training": {"history": history, "kept_epoch": 6},
               "results": {"selection": {"table": [{"min_score": t / 10, "in_domain_accuracy": 1 - t / 20,
                                                    "ood_false_accept": 0.3 - t / 40} for t in range(10)]}}}
    training_summary_png(summary, tmp_path / "new.png")
    training_summary_png({"training": {"history": history[:1]}}, tmp_path / "one.png")   # one epoch, no table
    for name in ("shipped.png", "new.png", "one.png"):
        assert (tmp_path / name).read_bytes()[:4] == b"\x89PNG", name


def test_bench_plots_use_log_axes_with_the_measured_lengths(tmp_path):
    pytest.importorskip("matplotlib", reason="matplotlib not installed")
    from bertl14_tools.train.plots import bench_instructions_png, bench_stages_png
    stages = {"attention": 5, "ffn": 4, "other": 1}
    rep = {"model": "m", "board": "b", "results": [
        {"engine": e, "seq_len": n, "instructions": k * n * 10**5, "stages": {s: v * n for s, v in stages.items()}}
        for e, k in (("bertl14-dsp", 3), ("bertl14-portable", 9)) for n in (16, 32, 512)]
        + [{"engine": "bertl14-dsp", "seq_len": 9, "instructions": 2 * 10**6, "sentence": "typed", "stages": {}}]}
    drawn = bench_instructions_png(rep, tmp_path / "i.png")
    assert drawn == {"xscale": "log", "yscale": "log", "xticks": [9, 16, 32, 512]}
    bench_stages_png(rep, tmp_path / "s.png", list(stages))
    assert (tmp_path / "i.png").read_bytes()[:4] == (tmp_path / "s.png").read_bytes()[:4] == b"\x89PNG"
