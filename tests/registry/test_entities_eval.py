"""`--entities` for predict / eval / check-bitexact: slot scoring rules (slots.py), the masked text
reaching the model, the C matcher == registry.Matcher through the engine path, and the public test homes."""
from __future__ import annotations

import json
import os
import sys
from pathlib import Path

import pytest

from bertl14_tools.registry import names as R
from bertl14_tools.reference.slots import SlotScore, expected_slots

REPO = Path(__file__).resolve().parents[2]
sys.path.insert(0, str(REPO / "tests" / "convert"))
from cvt_util import CALIB, TINY_VOCAB, run_cli, write_tiny_bert  # noqa: E402

DATA = Path(os.environ.get("BERTL14_TEST_DATA") or REPO.parent / "shared" / "data" / "ha-intents-tests")

HOME = """\
floors:
  - {name: Ground Floor, aliases: [downstairs]}
areas:
  - {name: Kitchen, floor: Ground Floor}
  - {name: Living Room, aliases: [lounge], floor: Ground Floor}
  - {name: Bedroom}
entities:
  - {name: Kitchen Light, domain: light, area: Kitchen}
  - {name: Lamp, aliases: [reading lamp], domain: light, area: Living Room}
  - {name: Lamp, domain: light, area: Bedroom}
  - {name: Fan, domain: fan, area: Bedroom}
"""


@pytest.fixture(scope="module")
def home(tmp_path_factory) -> Path:
    p = tmp_path_factory.mktemp("home") / "entities.yaml"
    p.write_text(HOME, encoding="utf-8")
    return p


@pytest.fixture(scope="module")
def reg(home):
    return R.load(home)


# ---- the scoring rules ---------------------------------------------------------------------------------------------
def test_expected_slots_keeps_name_area_floor_strings():
    rec = {"text": "x", "slots": {"name": "Lamp", "area": ["Kitchen", "Den"], "floor": 1, "domain": "light",
                                  "brightness": 50}}
    assert expected_slots(rec) == {"name": "Lamp", "area": "Kitchen"}
    assert expected_slots({"text": "x"}) == {} and expected_slots({"slots": {"name": "  "}}) == {}


def test_alias_and_normalisation_resolve_to_the_object(reg):
    s = SlotScore()
    assert s.add({"area": "lounge"}, {"area": "Living Room"}, reg) is True       # expected is an alias
    assert s.add({"name": "KITCHEN  light"}, {"name": "Kitchen Light"}, reg) is True  # the matcher's normalisation
    assert s.add({"floor": "Ground Floor"}, {"floor": "downstairs"}, reg) is True
    assert (s.eligible, s.correct, s.accuracy) == (3, 3, 1.0)


def test_unknown_values_are_not_counted(reg):
    s = SlotScore()
    assert s.add({"name": "pizza"}, {}, reg) is None                      # a timer name: not in the registry
    assert s.add({"area": "Fan"}, {"name": "Fan"}, reg) is None            # known only as another kind
    assert s.add({}, {"name": "Fan"}, reg) is None
    assert (s.eligible, s.unknown, s.unexpected, s.accuracy) == (0, 2, 2, None)
    assert s.add({"name": "pizza", "area": "Kitchen"}, {"area": "Kitchen"}, reg) is True  # only the known one counts
    assert (s.eligible, s.correct, s.unknown) == (1, 1, 3)


def test_wrong_or_missing_object_is_wrong(reg):
    s = SlotScore()
    assert s.add({"area": "Kitchen"}, {"name": "Kitchen Light"}, reg) is False   # found, but as an entity
    assert s.add({"area": "Kitchen"}, {"area": "Bedroom"}, reg) is False
    assert s.add({"name": "Fan", "area": "Bedroom"}, {"name": "Fan"}, reg) is False  # every known value must agree
    assert s.add({"name": "Lamp"}, {"name": "reading lamp"}, reg) is True   # two Lamps: a common object suffices
    d = s.as_dict()
    assert (d["eligible"], d["correct"], d["accuracy"]) == (4, 1, 0.25)
    assert d["per_kind"]["area"] == {"eligible": 3, "correct": 0, "accuracy": 0.0}
    assert d["per_kind"]["name"] == {"eligible": 2, "correct": 2, "accuracy": 1.0}  # Fan right, its area not
    assert s.errors[0] == ({"area": "Kitchen"}, {"name": "Kitchen Light"})
    assert d["name_area"] == {"eligible": 4, "correct": 1, "accuracy": 0.25}
    assert s.add({"name": "Lamp", "floor": "Ground Floor"}, {"name": "Lamp"}, reg) is False  # floor missing
    assert s.as_dict()["name_area"] == {"eligible": 5, "correct": 2, "accuracy": 0.4}


# ---- the engine path with a tiny random model --------------------------------------------------------------------
@pytest.fixture(scope="module")
def model(tmp_path_factory) -> Path:
    from bertl14_tools.model.convert import ConvertOptions, convert
    root = tmp_path_factory.mktemp("ent")
    src = write_tiny_bert(root / "tiny", vocab=TINY_VOCAB + ["[", "]", "name", "area", "floor"],
                          calibration=CALIB)
    convert(src, root / "conv", ConvertOptions(progress=False))
    return root / "conv"


TEXTS = ["turn on the kitchen light", "turn off the lamp in the LOUNGE", "fan on downstairs please",
         "kitchenette light", "lock the door"]


def _lines(r):
    assert r.returncode == 0, r.stderr
    return [json.loads(line) for line in r.stdout.splitlines()]


def test_predict_entities_masks_before_tokenizing(model, home):
    plain = _lines(run_cli("predict", "--model", model, "--json", *TEXTS))
    assert all(set(p) == {"text", "intent", "score", "tokens"} for p in plain)   # without --entities: unchanged
    by_engine = {e: _lines(run_cli("predict", "--model", model, "--engine", e, "--entities", home, "--json", *TEXTS))
                 for e in ("ref", "c")}
    ref = by_engine["ref"]
    assert by_engine["c"] == ref
    assert [p["masked"] for p in ref] == ["turn on the [NAME]", "turn off the [NAME] in the [AREA]",
                                         "[NAME] on [FLOOR] please", "kitchenette light", "lock the door"]
    assert ref[1]["names"] == [{"kind": "name", "name": "Lamp", "text": "lamp", "start": 13, "end": 17},
                               {"kind": "area", "name": "Living Room", "text": "LOUNGE", "start": 25, "end": 31}]
    assert ref[1]["slots"] == {"name": "Lamp", "area": "Living Room"}    # the answer's slots, keyed as HA keys them
    assert ref[3]["names"] == [] and ref[4] == dict(plain[4], masked="lock the door", names=[], slots={})
    # the model saw the masked text: same answer as predicting the masked text itself
    masked = _lines(run_cli("predict", "--model", model, "--json", *[p["masked"] for p in ref]))
    assert [(p["intent"], p["score"], p["tokens"]) for p in ref] == \
        [(p["intent"], p["score"], p["tokens"]) for p in masked]
    assert ref[0]["tokens"] != plain[0]["tokens"]


def test_tokenize_entities_c_equals_ref(model, home):
    toks = {e: _lines(run_cli("tokenize", "--model", model, "--engine", e, "--entities", home, "--json", *TEXTS))
            for e in ("ref", "c")}
    assert toks["c"] == toks["ref"]
    plain = _lines(run_cli("tokenize", "--model", model, "--json", *[t["masked"] for t in toks["ref"]]))
    assert [t["ids"] for t in toks["ref"]] == [t["ids"] for t in plain]
    assert toks["ref"][0]["masked"] == "turn on the [NAME]" and toks["ref"][0]["slots"][0]["name"] == "Kitchen Light"


def test_eval_entities_reports_slot_accuracy(model, home, tmp_path):
    rows = [{"text": "turn on the kitchen light", "intent": "intent_1", "slots": {"name": "Kitchen Light"}},
            {"text": "turn off the lamp in the lounge", "intent": "intent_0",
             "slots": {"name": "Lamp", "area": "Living Room"}},
            {"text": "fan on downstairs", "intent": "intent_2", "slots": {"name": "Fan", "floor": "Upstairs"}},
            {"text": "is the kitchen warm", "intent": "intent_2", "slots": {"area": "Bedroom"}},
            {"text": "cancel the pizza timer", "intent": "intent_1", "slots": {"name": "pizza"}}]
    data = tmp_path / "d.jsonl"
    data.write_text("".join(json.dumps(r) + "\n" for r in rows))
    plain = _lines(run_cli("eval", "--model", model, "--data", data, "--json"))[0]
    assert set(plain) == {"n", "accuracy", "macro_f1", "accuracy_argmax", "macro_f1_argmax", "min_score",
                          "min_score_named", "agreement_with_float"}
    res = {e: _lines(run_cli("eval", "--model", model, "--data", data, "--engine", e, "--entities", home,
                             "--json"))[0] for e in ("ref", "c", "float")}
    assert res["c"] == res["ref"]
    r = res["ref"]
    # 4 eligible sentences ("Upstairs" and "pizza" are unknown, not counted); the 4th expects Bedroom, finds Kitchen
    assert r["slots"]["eligible"] == 4 and r["slots"]["correct"] == 3 and r["slot_accuracy"] == 0.75
    assert r["slots"]["not_in_registry"] == 2 and r["sentences_with_names"] == 4
    assert res["float"]["slots"] == r["slots"]
    human = run_cli("eval", "--model", model, "--data", data, "--entities", home)
    assert human.returncode == 0 and "slot_accuracy=0.7500 (3/4 sentences" in human.stdout


def test_entities_errors_are_one_line(model, tmp_path):
    bad = tmp_path / "bad.yaml"
    bad.write_text("entities:\n  - {name: Lamp, area: Attic}\n")
    r = run_cli("predict", "--model", model, "--entities", bad, "x")
    assert r.returncode == 2 and "unknown area 'Attic'" in r.stderr and "Traceback" not in r.stderr
    r = run_cli("predict", "--model", model, "--entities", tmp_path / "none.yaml", "x")
    assert r.returncode == 2 and "not found" in r.stderr


def test_c_matcher_equals_reference_through_the_engine_path(model, home):
    import random
    from bertl14_tools.reference.infer import Entities
    from bertl14_tools.model.folder import open_model
    m = open_model(model, progress=False)
    ref, c = Entities(home, m, "ref", 8), Entities(home, m, "c", 8)
    words = ["kitchen", "light", "Lamp", "reading", "lounge", "LIVING", "room", "fan", "downstairs", "the", "on",
             "ｆａｎ", "kitchenette", ",", "!", "é", "客厅", "\u200b"]
    rng = random.Random(1)
    for _ in range(300):
        text = "".join(rng.choice(words) + rng.choice([" ", "", "  "]) for _ in range(rng.randint(0, 7)))
        assert c.apply(text) == ref.apply(text), text


def test_check_bitexact_entities(model, home, tmp_path):
    data = tmp_path / "t.jsonl"
    data.write_text("".join(json.dumps({"text": t}) + "\n" for t in TEXTS))
    r = run_cli("check-bitexact", "--model", model, "--data", data, "--entities", home, "--kernels", "portable",
                "--quiet")
    assert r.returncode == 0, r.stdout + r.stderr
    assert "5 sentences, 0 mismatches" in r.stdout and "5 names replaced" in r.stdout


def test_check_bitexact_reports_a_matcher_difference(model, home):
    from bertl14_tools.device.bitexact import MatcherPair
    from bertl14_tools.model.folder import open_model
    pair = MatcherPair(home, open_model(model, progress=False), 4)
    assert pair.mask("turn on the kitchen light") == ("turn on the [NAME]", [])
    real = pair.c.match
    pair.c.match = lambda text, n: (lambda r: (r[0], r[1], [(2, 0, 12, 19)]))(real(text, n))
    masked, problems = pair.mask("turn on the kitchen light")
    assert problems and "slots differ" in problems[0]


# ---- the public test homes (skipped without the data) ------------------------------------------------------------
@pytest.mark.parametrize("lang", ["en", "zh-CN"])
def test_public_homes_c_equals_python_on_public_sentences(lang):
    """The shipped model's tokenizer options, the public home, every public sentence: C matcher == Python."""
    if not (DATA / f"{lang}_home.json").is_file():
        pytest.skip(f"public test data not found at {DATA} (set BERTL14_TEST_DATA)")
    from bertl14_tools.reference.cengine import RegistryMatcher
    from bertl14_tools.model.vocab_blob import build_vocab_section
    vocab = (REPO / "models" / f"intent-{lang}" / "vocab.txt").read_text(encoding="utf-8").splitlines()
    section = build_vocab_section({p: i for i, p in enumerate(vocab)})  # the shipped vocabulary, uncased
    import warnings
    with warnings.catch_warnings():
        warnings.simplefilter("ignore")
        words = R.compile_registry(R.load(DATA / f"{lang}_home.json"))
    py, c = R.Matcher(words, section), RegistryMatcher(words, section)
    texts = [json.loads(line)["text"] for line in (DATA / f"{lang}.jsonl").read_text(encoding="utf-8").splitlines()
             if line.strip()]
    assert sum(bool(c.match(t, 4)[2]) for t in texts) > len(texts) // 3
    assert all(c.match(t, 4) == py.match(t, 4) for t in texts)
