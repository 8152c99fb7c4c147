"""`bertl14 dataset --mask-names`: placeholders where the templates have {name}/{area}/{floor}, written exactly as
the device's registry matcher writes them, a deterministic mix of masked and unmasked sentences."""
from __future__ import annotations

import json

import pytest

from bertl14_tools.data import dataset as data
from bertl14_tools.registry import names as R
from bertl14_tools.cli import main
from bertl14_tools.errors import UserError

PLACEHOLDERS = tuple(R.PLACEHOLDERS.values())


@pytest.fixture(scope="module")
def en_half():
    return data.build_dataset("en", per_intent=40, seed=3, mask_names=0.5)


@pytest.fixture(scope="module")
def zh_half():
    return data.build_dataset("zh-CN", per_intent=30, seed=3, mask_names=0.5)


def has_placeholder(text: str) -> bool:
    return any(p in text for p in PLACEHOLDERS)


def entity_values(row: dict) -> dict[str, str]:
    return {k: str(row["slots"][k]) for k in ("name", "area", "floor") if k in row["slots"]}


def test_placeholders_are_the_matchers():
    assert data.PLACEHOLDERS == {R.KIND_KEYS[k]: v for k, v in R.PLACEHOLDERS.items()}


def test_marked_sentence_gives_plain_and_masked_text():
    marked = data.clean_marked("turn on  the \ue001corner lamp\ue00f in the \ue002kitchen\ue00f ")
    assert data.split_marked(marked) == ("turn on the corner lamp in the kitchen", "turn on the [NAME] in the [AREA]")
    # spaces between CJK characters go, also across the marks; the masked text keeps the matcher's bytes
    marked = data.clean_marked("打开 \ue002客厅\ue00f 的 灯")
    assert data.split_marked(marked) == ("打开客厅的灯", "打开[AREA]的灯")
    assert data.split_marked("what time is it") == ("what time is it", None)


def test_mix_is_deterministic_and_near_the_fraction(en_half):
    again = data.build_dataset("en", per_intent=40, seed=3, mask_names=0.5)
    assert again.train == en_half.train and again.validation == en_half.validation
    bearing = [r for r in en_half.train if "masked" in r]     # the flag is on name-bearing rows only
    masked = [r for r in bearing if r["masked"]]
    assert 0.4 < len(masked) / len(bearing) < 0.6
    assert en_half.stats["masked"]["train"] == len(masked)
    assert all(entity_values(r) for r in bearing)
    # masked rows have placeholders; no other row has one
    for r in en_half.train:
        assert has_placeholder(r["text"]) == r.get("masked", False), r


def test_fraction_zero_and_one():
    plain = data.build_dataset("en", per_intent=20, seed=1)
    assert not any(has_placeholder(r["text"]) for r in plain.train + plain.validation)
    assert "masked" not in plain.stats and all("masked" not in r for r in plain.train)
    full = data.build_dataset("en", per_intent=20, seed=1, mask_names=1.0)
    assert all(r["masked"] for r in full.train if "masked" in r) and full.stats["masked"]["train"] > 100
    with pytest.raises(UserError, match="--mask-names"):
        data.build_dataset("en", per_intent=20, seed=1, mask_names=1.5)


def test_validation_has_both_forms_and_no_training_sentence(en_half):
    val = [r for r in en_half.validation if r["intent"] != "none"]
    assert any(r.get("masked") for r in val) and any(r.get("masked") is False for r in val)
    train_keys = {data.normalize(r["text"]) for r in en_half.train}
    assert not [r for r in en_half.validation if data.normalize(r["text"]) in train_keys]
    assert en_half.stats["masked"]["validation_other_forms_added"] > 0


def pairs(ds) -> list[tuple[dict, dict]]:
    """(unmasked, masked) validation rows of the same template sentence."""
    by_slots: dict = {}
    for r in ds.validation:
        if entity_values(r):
            by_slots.setdefault((r["intent"], json.dumps(r["slots"], sort_keys=True, ensure_ascii=False)), []).append(r)
    out = []
    for rows in by_slots.values():
        plain = [r for r in rows if r.get("masked") is False]
        masked = [r for r in rows if r.get("masked")]
        if len(plain) == 1 and len(masked) == 1:
            out.append((plain[0], masked[0]))
    return out


@pytest.mark.parametrize("lang", ["en", "zh-CN"])
def test_masked_text_is_what_the_registry_matcher_writes(lang, en_half, zh_half):
    """A registry holding the sentence's own names: the matcher turns the plain sentence into the masked one."""
    from bertl14_tools.model.vocab_blob import build_vocab_section
    ds = en_half if lang == "en" else zh_half
    texts = [r["text"] for r in ds.train + ds.validation]
    chars = sorted({c for t in texts for c in t.lower()} - {" "})
    section = build_vocab_section({p: i for i, p in enumerate(dict.fromkeys(
        ["[PAD]", "[UNK]", "[CLS]", "[SEP]", "[MASK]"] + chars + ["##" + c for c in chars]))})
    checked = 0
    for plain, masked in pairs(ds):
        values = entity_values(plain)
        keys = [R.name_key(v) for v in values.values()]
        if len(set(keys)) < len(keys) or any(a != b and a in b for a in keys for b in keys):
            continue        # one value inside another: the matcher's longest match decides, not the template
        reg = R.Registry(entities=[R.Item(values["name"])] if "name" in values else [],
                         areas=[R.Item(values["area"])] if "area" in values else [],
                         floors=[R.Item(values["floor"])] if "floor" in values else [])
        status, out, slots = R.Matcher(R.compile_registry(reg), section).match(plain["text"])
        if len(slots) != len(values):
            continue        # a value also written elsewhere in the sentence as an ordinary word
        assert status == R.OK and out.decode("utf-8") == masked["text"], (plain, masked)
        checked += 1
    assert checked >= 30


def test_cli_flag(tmp_path):
    out = tmp_path / "d"
    assert main(["dataset", "--lang", "en", "--out", str(out), "--per-intent", "15", "--mask-names", "0.5"]) == 0
    stats = json.loads((out / "stats.json").read_text())
    assert stats["mask_names"] == 0.5 and stats["masked"]["train"] > 0
    rows = [json.loads(line) for line in (out / "train.jsonl").read_text(encoding="utf-8").splitlines()]
    assert any(has_placeholder(r["text"]) for r in rows)
    assert (out / "handwritten.jsonl").exists()


def test_handwritten_sentences_are_ours_and_labelled():
    for lang in data.LANGUAGES:
        rows = data.load_handwritten(lang)
        assert len(rows) >= 80
        labels = {r["intent"] for r in rows}
        assert "none" not in labels and len(labels) >= 35
        assert all(r["text"].strip() == r["text"] and r["text"] for r in rows)


@pytest.mark.parametrize("lang", ["en", "zh-CN"])
def test_unseen_names_part_has_no_training_name_and_no_placeholder(lang, en_half, zh_half):
    ds = en_half if lang == "en" else zh_half
    rows = data.unseen_name_rows(ds.validation, lang)
    masked = [r for r in ds.validation if r.get("masked")]
    assert rows and len(rows) <= len(masked)
    assert not any(has_placeholder(r["text"]) for r in rows)
    known = data.load_slot_values(lang)
    seen = {data.normalize(v) for v in known["areas"] + known["floors"]} | {
        data.normalize(v) for names in known["names"].values() for v in names}
    import yaml
    unseen = yaml.safe_load((data.DATA_DIR / f"unseen-names-{lang}.yaml").read_text(encoding="utf-8"))
    ours = [str(v) for v in unseen["areas"] + unseen["floors"]] + [str(v) for n in unseen["names"].values() for v in n or []]
    assert not {data.normalize(v) for v in ours} & seen, "an unseen name is in the training lists"
    assert data.unseen_name_rows(ds.validation, lang) == rows        # deterministic
