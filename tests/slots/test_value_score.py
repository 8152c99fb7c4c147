"""How `bertl14 eval` scores the value slots (reference/slots.py ValueScore, same_value): the share of the sentences
whose intent is right with every expected value right (`accuracy`), and the share of every sentence that expects a
value (`end_to_end`); the C engine's tags and the reference's score the same (both read the values with
tagging.slot_values_of; the device's own reader is compared on the emulated boards, tests/app/test_boards.py)."""
from __future__ import annotations

import json
import sys
from pathlib import Path

import pytest

from bertl14_tools.reference.slots import ValueScore, expected_values, same_value

REPO = Path(__file__).resolve().parents[2]
sys.path.insert(0, str(REPO / "tests" / "convert"))
from cvt_util import run_cli  # noqa: E402

MODEL = REPO / "models" / "intent-en"


@pytest.mark.parametrize("expected, found, same", [
    (5, 5.0, True), ("5", 5, True), (21.5, "21.5", True), (5, 6, False), (5, "five", False), ("5", "five", False),
    ("Milk", " milk ", True), ("the godfather", "godfather", False), (True, 1, False)])
def test_same_value(expected, found, same):
    assert same_value(expected, found) is same


def test_expected_values_keep_only_value_slots():
    record = {"text": "x", "intent": "HassStartTimer", "slots": {"minutes": 5, "name": "pizza", "area": "Kitchen"}}
    assert expected_values(record) == {"minutes": 5}
    assert expected_values({"text": "x", "intent": "none"}) == {}
    assert expected_values({"text": "x", "intent": "none", "slots": ["minutes"]}) == {}


def test_value_score_counts_every_sentence_with_values_end_to_end():
    score = ValueScore()
    score.add({"minutes": 5}, {"minutes": 5}, True)                          # right
    score.add({"minutes": 5, "seconds": 30}, {"minutes": 5}, True)           # a value missing: wrong
    score.add({"item": "milk"}, {"item": "milk"}, False)                     # intent wrong: not eligible
    score.add({}, {"minutes": 3}, True)                                      # expects no value: not counted
    d = score.as_dict()
    assert (d["with_values"], d["eligible"], d["correct"]) == (3, 2, 1)
    assert d["accuracy"] == 0.5 and d["end_to_end"] == round(1 / 3, 6)
    assert d["per_slot"] == {"minutes": {"right": 2, "expected": 2}, "seconds": {"right": 0, "expected": 1}}
    assert ValueScore().as_dict()["accuracy"] is None and ValueScore().as_dict()["end_to_end"] is None


def test_eval_reports_values_as_the_device_reads_them(tmp_path):
    texts = ["set a timer for 5 minutes", "add milk to the shopping list", "what time is it"]
    answers = [json.loads(line) for line in
               run_cli("predict", "--model", MODEL, "--json", "-q", *texts, check=True).stdout.splitlines()]
    timer, shopping, _ = answers
    assert timer["slots"].get("minutes") == 5 and shopping["slots"].get("item") == "milk", answers
    rows = [{"text": texts[0], "intent": timer["intent"], "slots": {"minutes": 5}},          # right
            {"text": texts[0], "intent": timer["intent"], "slots": {"minutes": 6}},          # a value wrong
            {"text": texts[1], "intent": "HassTurnOn", "slots": {"item": "milk"}},          # its intent wrong
            {"text": texts[2], "intent": answers[2]["intent"]}]                              # no value
    data = tmp_path / "values.jsonl"
    data.write_text("".join(json.dumps(r) + "\n" for r in rows))
    res = {e: json.loads(run_cli("eval", "--model", MODEL, "--data", data, "--engine", e, "--json", "-q",
                                 check=True).stdout) for e in ("ref", "c")}
    assert res["c"]["value_slots"] == res["ref"]["value_slots"]
    vs = res["ref"]["value_slots"]
    assert (vs["with_values"], vs["eligible"], vs["correct"]) == (3, 2, 1)
    assert vs["accuracy"] == 0.5 and vs["end_to_end"] == round(1 / 3, 6)
    assert res["ref"]["value_slot_accuracy"] == 0.5
    human = run_cli("eval", "--model", MODEL, "--data", data, "-q", check=True).stdout
    assert "value_slot_accuracy=0.5000 (1/2 sentences" in human
    assert "values_end_to_end=0.3333 (1/3 sentences with expected values" in human
