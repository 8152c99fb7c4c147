"""`bertl14 report` helpers: per-intent scores and the confusion-matrix picture (no model needed)."""
from __future__ import annotations

import pytest

from bertl14_tools.report import apply_min_score, confusion_png, markdown_table, per_label_scores


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


def test_confusion_png(tmp_path):
    pytest.importorskip("matplotlib", reason="matplotlib not installed")
    path = tmp_path / "c.png"
    confusion_png(["a", "b", "b"], ["a", "a", "b"], path, "t")
    assert path.read_bytes()[:8] == b"\x89PNG\r\n\x1a\n"


def test_min_score_answers_none_like_the_device():
    scored = [("a", 900), ("b", 550), ("none", 990), ("c", 549)]
    assert apply_min_score(scored, 550) == ["a", "b", "none", "none"]
    assert apply_min_score(scored, 0) == ["a", "b", "none", "c"]


def test_the_threshold_rule_is_protocol_c_in_thousandths():
    from bertl14_tools.answer import device_answer, in_domain, to_milli
    assert device_answer("HassTurnOn", 894, 950) == ("none", "HassTurnOn")    # best= under the threshold
    assert device_answer("HassTurnOn", 950, 950) == ("HassTurnOn", None)      # >=, in integer thousandths
    assert device_answer("none", 999, 0) == ("none", None)                    # the model's none: no best=
    assert device_answer("HassTurnOn", 0, 0) == ("HassTurnOn", None)          # 0: the plain argmax
    assert not in_domain("none", 1000, 0) and in_domain("a", 1, 1) and not in_domain("a", 0, 1)
    # the converter's rounding of training.json's min_score (BERTL14_MIN_SCORE_MILLI): no float epsilon
    assert [to_milli(v) for v in (0.95, 0.7, 0.0005, 1)] == [950, 700, 0, 1000]
    with pytest.raises(Exception, match="outside 0..1"):
        to_milli(1.5)
