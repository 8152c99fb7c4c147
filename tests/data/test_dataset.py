"""`bertl14 dataset`: determinism, balance, deduplication and conflicts, slot filling, our own lists."""
from __future__ import annotations

import json
import os
import re
from pathlib import Path

import pytest

from bertl14_tools.data import dataset as data
from bertl14_tools.cli import main
from bertl14_tools.errors import UserError

REPO = Path(__file__).resolve().parents[2]


def find_test_data() -> Path | None:
    env = os.environ.get("BERTL14_TEST_DATA")
    path = Path(env) if env else REPO.parent / "shared" / "data" / "ha-intents-tests"
    return path if path.is_dir() else None


@pytest.fixture(scope="module")
def en_small():
    return data.build_dataset("en", per_intent=40, seed=3)


def write_yaml(tmp_path: Path, text: str) -> str:
    path = tmp_path / "intents.yaml"
    path.write_text(text, encoding="utf-8")
    return str(path)


def test_same_seed_same_files_other_seed_other_sentences(tmp_path, en_small):
    again = data.build_dataset("en", per_intent=40, seed=3)
    assert again.train == en_small.train and again.validation == en_small.validation
    other = data.build_dataset("en", per_intent=40, seed=4)
    assert other.train != en_small.train
    for sub in ("a", "b"):
        assert main(["dataset", "--lang", "en", "--out", str(tmp_path / sub), "--per-intent", "10", "--seed", "9"]) == 0
    for name in ("train.jsonl", "validation.jsonl", "ood.jsonl", "stats.json"):
        assert (tmp_path / "a" / name).read_bytes() == (tmp_path / "b" / name).read_bytes()


def test_balanced_and_deduplicated(en_small):
    rows = en_small.train + en_small.validation
    counts: dict[str, int] = {}
    for r in rows:
        counts[r["intent"]] = counts.get(r["intent"], 0) + 1
    intents = {k: v for k, v in counts.items() if k != data.NONE_LABEL}
    assert len(intents) >= 40
    assert max(intents.values()) <= 40
    # the raw expansion is skewed by thousands to one; here most intents reach the cap
    assert sum(v == 40 for v in intents.values()) >= 30
    keys = [data.normalize(r["text"]) for r in rows]
    assert len(keys) == len(set(keys))
    assert not set(keys) & {data.normalize(r["text"]) for r in en_small.ood_eval}


def test_sentence_with_two_labels_is_dropped_and_counted(tmp_path):
    path = write_yaml(tmp_path, """
language: en
intents:
  OpenGate:
    data:
      - sentences: ["open sesame", "open the (gate|portal)"]
  OpenChest:
    data:
      - sentences: ["open sesame", "open the chest"]
""")
    ds = data.build_dataset("en", per_intent=50, seed=0, intent_files=[path], builtin=False, ood=False,
                            val_fraction=0)
    texts = {(r["text"], r["intent"]) for r in ds.train}
    assert ds.stats["conflicts_dropped"] == 1
    assert not any(t == "open sesame" for t, _ in texts)
    assert texts == {("open the gate", "OpenGate"), ("open the portal", "OpenGate"), ("open the chest", "OpenChest")}


def test_names_match_the_template_domain(tmp_path):
    values = data.load_slot_values("en")
    path = write_yaml(tmp_path, """
language: en
intents:
  LockIt:
    data:
      - sentences: ["secure [the] {name}"]
        requires_context: {domain: lock}
  DimIt:
    data:
      - sentences: ["dim [the] {name} [in the {area}]"]
        slots: {domain: light}
""")
    ds = data.build_dataset("en", per_intent=60, seed=1, intent_files=[path], builtin=False, ood=False,
                            val_fraction=0)
    by_intent = {"LockIt": "lock", "DimIt": "light"}
    for r in ds.train:
        assert r["slots"]["name"] in values["names"][by_intent[r["intent"]]], r
        assert r["slots"]["name"] in r["text"]
        if "area" in r["slots"]:
            assert r["slots"]["area"] in values["areas"]
    # Home Assistant's own light templates get light names only
    for r in data.build_dataset("en", per_intent=200, seed=2, ood=False).train:
        if r["intent"] == "HassLightSet" and "name" in r["slots"]:
            assert r["slots"]["name"] in values["names"]["light"], r


def test_composed_names_stay_in_the_domain_and_are_reproducible(tmp_path):
    """--compose-names: made-up names ("corner lamp", "emma's lamp", "rosie") in place of listed ones, with a device
    word of the template's domain when they have one; same seed, same sentences; 0 draws nothing extra."""
    values = data.load_slot_values("en")
    path = write_yaml(tmp_path, """
language: en
intents:
  DimIt:
    data:
      - sentences: ["dim [the] {name} [in the {area}]"]
        slots: {domain: light}
""")
    def build(fraction):
        return data.build_dataset("en", per_intent=300, seed=1, intent_files=[path], builtin=False, ood=False,
                                  val_fraction=0, compose_names=fraction)
    ds = build(1.0)
    light_words = {n.split()[-1] for n in values["names"]["light"]}
    words = set(data.load_name_words("en"))
    names = [r["slots"]["name"] for r in ds.train]
    assert sum(n not in values["names"]["light"] for n in names) > 0.8 * len(names)
    for n in names:   # a light word last, or "<light word> <number>"; bare nicknames only for robots and people
        parts = n.split()
        assert parts[-1] in light_words or (len(parts) > 1 and parts[-2] in light_words), n
    assert any(set(n.split()) & words for n in names)     # general words do make names ("falcon lamp")
    assert ds.stats["compose_names"] == 1.0
    assert [r["text"] for r in build(1.0).train] == [r["text"] for r in ds.train]
    plain = build(0.0)
    assert all(r["slots"]["name"] in values["names"]["light"] for r in plain.train)
    assert "compose_names" not in plain.stats
    with pytest.raises(UserError, match="compose-names"):
        build(1.5)


def test_generated_out_of_domain_sentences_train_only():
    """--ood-generated N: N distinct `none` training sentences from our frames, never an in-domain sentence, never
    in the validation or test splits; the template sentences and the written out-of-domain split do not move."""
    base = data.build_dataset("en", per_intent=30, seed=2)
    ds = data.build_dataset("en", per_intent=30, seed=2, ood_generated=200)
    gen = [r for r in ds.train if r.get("generated")]
    assert len(gen) == 200 and all(r["intent"] == "none" for r in gen)
    assert not any(r.get("generated") for r in ds.validation + ds.ood_eval)
    assert ds.validation == base.validation and ds.ood_eval == base.ood_eval
    assert [r for r in ds.train if not r.get("generated")] == base.train
    in_domain = {data.normalize(r["text"]) for r in base.train + base.validation if r["intent"] != "none"}
    assert not {data.normalize(r["text"]) for r in gen} & in_domain
    assert len({r["text"] for r in gen}) == 200 and not any("{" in r["text"] for r in gen)
    assert ds.stats["ood_split"]["train_generated"] == 200


@pytest.mark.parametrize("lang", data.LANGUAGES)
def test_out_of_domain_sentences_also_written_as_a_registry_reads_them(lang):
    """--mask-ood-names 1: every written out-of-domain training sentence that names a listed device or area gets
    its masked form beside it, each validation one too (both forms, as the in-domain names), generated ones are
    written masked; the held-out ood.jsonl and every other sentence stay where they were."""
    base = data.build_dataset(lang, per_intent=5, seed=3, ood_generated=300)
    ds = data.build_dataset(lang, per_intent=5, seed=3, ood_generated=300, mask_ood_names=1)
    assert ds.ood_eval == base.ood_eval
    forms = {"train": [r for r in ds.train if r.get("of")], "validation": [r for r in ds.validation if r.get("of")]}
    for split, rows in (("train", base.train), ("validation", base.validation)):
        written = {r["text"] for r in rows if r["intent"] == "none" and not r.get("generated")}
        assert forms[split] and all(r["intent"] == "none" and r["masked"] and r["of"] in written
                                    for r in forms[split])
        assert all(r["text"] != r["of"] and re.search(r"\[(NAME|AREA)\]", r["text"]) for r in forms[split])
        # the placeholder stands where the name was: the rest of the sentence is the written one's
        for r in forms[split]:
            pattern = re.escape(r["text"]).replace(r"\[NAME\]", ".+").replace(r"\[AREA\]", ".+")
            assert re.fullmatch(pattern, r["of"]), r
    assert [r for r in ds.validation if not r.get("of")] == base.validation
    assert [r for r in ds.train if not r.get("of") and not r.get("generated")] == \
        [r for r in base.train if not r.get("generated")]
    gen = [r for r in ds.train if r.get("generated")]
    assert len(gen) == 300 and any(r.get("masked") for r in gen)
    assert ds.stats["ood_masked"] == {"train": len(forms["train"]), "validation": len(forms["validation"]),
                                      "train_generated": sum(bool(r.get("masked")) for r in gen)}
    masker = data.OodNameMasker(lang, data.load_slot_values(lang))
    assert all(r["text"] == masker(r["of"]) for r in forms["train"] + forms["validation"])


def test_out_of_domain_masking_takes_whole_words_and_keeps_plain_sentences():
    mask = data.OodNameMasker("en", data.load_slot_values("en"))
    assert mask("the chandelier in the dining room is crooked") == "the [NAME] in the [AREA] is crooked"
    assert mask("where did i put the tv's remote") == "where did i put the [NAME]'s remote"
    assert mask("what's the capital of france") is None
    assert mask("i watched a tvshow") is None          # a name inside a word is not a name
    zh = data.OodNameMasker("zh-CN", data.load_slot_values("zh-CN"))
    assert zh("厨房的水龙头漏水了怎么办") == "[AREA]的水龙头漏水了怎么办"
    assert zh("今天天气怎么样") is None


def test_numbers_as_digits_and_words():
    ds = data.build_dataset("en", per_intent=300, seed=5, ood=False, only_intents=["HassLightSet"])
    with_numbers = [r for r in ds.train if "brightness" in r["slots"]]
    assert any(re.search(r"\d", r["text"]) for r in with_numbers)
    assert any(re.search(r"\b(twenty|thirty|forty|fifty|sixty|seventy|eighty|ninety)\b", r["text"])
               for r in with_numbers)


def test_wildcards_filled_from_our_phrases(en_small):
    values = data.load_slot_values("en")
    items = [r for r in en_small.train + en_small.validation if r["intent"] == "HassShoppingListAddItem"]
    assert items
    for r in items:
        assert r["slots"]["item"] in values["wildcards"]["shopping_list_item"]
        assert "{" not in r["text"]


@pytest.mark.parametrize("lang", data.LANGUAGES)
def test_wildcard_words_fill_open_values_with_general_words(lang):
    # --wildcard-words 1: every open-ended value is 1-3 words of the language's word list, written as the language
    # writes words (English with spaces, Chinese without), and the sentence carries it where the template put it
    ds = data.build_dataset(lang, per_intent=30, seed=0, wildcard_words=1.0)
    words = set(data.load_name_words(lang))
    phrases = {p for ps in data.load_slot_values(lang)["wildcards"].values() for p in ps}
    items = [r for r in ds.train if r["intent"] == "HassShoppingListAddItem"]
    assert len(items) >= 10
    for r in items:
        item = r["slots"]["item"]
        assert item in r["text"] and item not in phrases
        if lang == "zh-CN":
            assert " " not in item and any(item.startswith(w) for w in words)
        else:
            assert set(item.split()) <= words


def test_chinese_dataset_builds():
    ds = data.build_dataset("zh-CN", per_intent=20, seed=0)
    assert ds.stats["intents"] >= 35
    # the templates' sentences have no stray spaces (our hand-written out-of-domain ones may: people type them)
    assert all("{" not in r["text"] and " " not in r["text"].strip() or re.search(r"[a-z]", r["text"])
               for r in ds.train if r["intent"] != data.NONE_LABEL)


@pytest.mark.parametrize("lang", data.LANGUAGES)
def test_out_of_domain_file(lang):
    sentences = data.load_ood(lang)
    assert len(sentences) >= 200
    keys = [data.normalize(s) for s in sentences]
    assert len(keys) == len(set(keys)), "duplicate out-of-domain sentences"
    assert all(len(s) < 80 for s in sentences)
    ds = data.build_dataset(lang, per_intent=1, seed=0)
    split = ds.stats["ood_split"]
    assert split["test"] == ds.stats["ood_eval"] >= 100 and split["validation"] >= 100 and split["train"] >= 240
    assert split["train"] == ds.stats["sentences_per_label"][data.NONE_LABEL]


def test_out_of_domain_split_is_three_way_stable_and_seed_free():
    a = data.build_dataset("en", per_intent=1, seed=0)
    b = data.build_dataset("en", per_intent=1, seed=7)
    parts = {}
    for name, rows in (("train", a.train), ("validation", a.validation), ("test", a.ood_eval)):
        parts[name] = {r["text"] for r in rows if r["intent"] == data.NONE_LABEL}
    assert not parts["train"] & parts["validation"] and not parts["train"] & parts["test"] \
        and not parts["validation"] & parts["test"]
    assert {r["text"] for r in b.ood_eval} == parts["test"]            # the seed never moves a sentence
    for name, texts in parts.items():                                   # nor do other sentences: a hash each
        assert all(data.ood_part(t) == name for t in texts)
    shares = {name: len(texts) / sum(map(len, parts.values())) for name, texts in parts.items()}
    assert 0.18 < shares["test"] < 0.32 and 0.18 < shares["validation"] < 0.32


def test_own_out_of_domain_file_joins_ours_split_by_the_hash(tmp_path, capsys):
    """--ood FILE: the user's near misses join the `none` class, each in the split its hash gives it, next to ours
    (which keep their places); a sentence ours already has counts once; bad files are one-line errors."""
    own = [f"is the espresso machine descaled yet {i}" for i in range(60)]
    ours = data.load_ood("en")
    path = tmp_path / "near-misses.txt"
    path.write_text("# the coffee machine's near misses\n" + "\n".join(own + [ours[0]]) + "\n\n", encoding="utf-8")
    base = data.build_dataset("en", per_intent=1, seed=0)
    ds = data.build_dataset("en", per_intent=1, seed=0, ood_files=[str(path)])

    def none_texts(rows):
        return {r["text"] for r in rows if r["intent"] == data.NONE_LABEL}
    parts = {"train": none_texts(ds.train), "validation": none_texts(ds.validation), "test": none_texts(ds.ood_eval)}
    before = {"train": none_texts(base.train), "validation": none_texts(base.validation),
              "test": none_texts(base.ood_eval)}
    for name in parts:
        assert parts[name] - before[name] == {t for t in own if data.ood_part(t) == name}
        assert before[name] <= parts[name]
    assert len({data.ood_part(t) for t in own}) == 3         # the file reaches every split
    assert ds.stats["ood_files"] == [str(path)] and ds.stats["ood_from_files"] == 61
    assert ds.stats["ood_split"]["test"] == base.stats["ood_split"]["test"] + sum(data.ood_part(t) == "test"
                                                                                   for t in own)
    empty = tmp_path / "empty.txt"
    empty.write_text("# nothing yet\n", encoding="utf-8")
    with pytest.raises(UserError, match="has no sentences"):
        data.build_dataset("en", per_intent=1, ood_files=[str(empty)])
    with pytest.raises(UserError, match="not found"):
        data.build_dataset("en", per_intent=1, ood_files=[str(tmp_path / "missing.txt")])
    with pytest.raises(UserError, match="--no-ood"):
        data.build_dataset("en", per_intent=1, ood=False, ood_files=[str(path)])
    latin1 = tmp_path / "latin1.txt"
    latin1.write_bytes("caf\xe9 au lait\n".encode("latin-1"))
    assert main(["dataset", "--lang", "en", "--out", str(tmp_path / "o"), "--per-intent", "1",
                 "--ood", str(latin1)]) == 2
    err = capsys.readouterr().err.strip()
    assert "not UTF-8" in err and len(err.splitlines()) == 1 and "Traceback" not in err


@pytest.mark.parametrize("lang", data.LANGUAGES)
def test_no_test_sentence_in_our_lists(lang):
    folder = find_test_data()
    if folder is None or not (folder / f"{lang}.jsonl").exists():
        pytest.skip("public test sentences not found (../shared/data/ha-intents-tests or BERTL14_TEST_DATA)")
    test = {data.normalize(json.loads(line)["text"]) for line in (folder / f"{lang}.jsonl").open(encoding="utf-8")}
    values = data.load_slot_values(lang)
    ours = set(values["areas"]) | set(values["floors"])
    ours |= {v for names in values["names"].values() for v in names}
    ours |= {v for phrases in values["wildcards"].values() for v in phrases}
    ours |= set(data.load_ood(lang)) | set(data.load_name_words(lang))
    ours |= {v for vs in values["compose"].values() for v in vs}
    assert not {data.normalize(v) for v in ours} & test


def test_bad_intents_file_is_a_user_error(tmp_path):
    path = write_yaml(tmp_path, "intents: [not, a, mapping]\n")
    with pytest.raises(UserError, match="intents"):
        data.build_dataset("en", intent_files=[path], builtin=False)
    with pytest.raises(UserError, match="missing.yaml not found"):
        data.build_dataset("en", intent_files=[str(tmp_path / "missing.yaml")])
    assert main(["dataset", "--lang", "en", "--out", str(tmp_path / "o"), "--intents", path, "--no-builtin"]) == 2


@pytest.mark.parametrize("lang", data.LANGUAGES)
def test_our_phrasing_files_extend_home_assistant_intents_only(lang):
    """Our hand-written phrasings (paraphrases-<lang>.yaml, then paraphrases-extra-<lang>.yaml and
    paraphrases-more-<lang>.yaml, which use the first file's rules and lists) load together, add no intent of their
    own, every intent they extend gets training sentences, and every tagged span lies inside its sentence and tags
    one of its slots."""
    files = [str(data.DATA_DIR / f"paraphrases-{part}{lang}.yaml") for part in ("", "extra-", "more-")]
    builtin = set(data.load_intents(lang).intents)
    ours = data.load_intents(lang, files, builtin=False)
    assert set(ours.intents) <= builtin
    ds = data.build_dataset(lang, per_intent=60, seed=1, intent_files=files)
    produced = {r["intent"] for r in ds.train} - {data.NONE_LABEL}
    assert set(ours.intents) <= produced
    tagged = [row for row in ds.train if row.get("spans")]
    in_domain = [row for row in ds.train if row["intent"] != data.NONE_LABEL]     # `none` rows have no slots
    assert len(tagged) > len(in_domain) // 2                # most commands carry a value, a name or an area
    # a tag answers as its value table's "report" slot (volume_step_down answers volume_step), as on the device
    spec = data.slot_spec(lang, {slot for row in tagged for _, _, slot in row["spans"]}, files)
    answered = {k: v.get("report", k) for k, v in spec["slots"].items()}
    for row in tagged:              # every span lies inside its sentence and tags one of the row's slots
        for start, end, slot in row["spans"]:
            assert 0 <= start < end <= len(row["text"]) and row["text"][start:end].strip(), row
            assert answered.get(slot, slot) in row["slots"], row


def test_intents_flag_given_twice_keeps_both_files():
    from bertl14_tools.cli import build_parser
    a, b = "scripts/bertl14_tools/data/paraphrases-en.yaml", "scripts/bertl14_tools/data/paraphrases-extra-en.yaml"
    for argv in (["--intents", a, b], ["--intents", a, "--intents", b]):
        args = build_parser().parse_args(["dataset", "--lang", "en", "--out", "o"] + argv)
        assert args.intents == [a, b]
