"""Augmented sentences (augment.py) and `bertl14 train --augment K`, with a teacher or keeping the labels."""
from __future__ import annotations

import json

import numpy as np
import pytest

from bertl14_tools.data import augment, dataset as data
from bertl14_tools.cli import main


def test_number_words():
    assert [augment.en_number_words(n) for n in (0, 7, 15, 20, 42, 100)] == \
        ["zero", "seven", "fifteen", "twenty", "forty-two", "a hundred"]
    assert [augment.zh_number_words(n) for n in (3, 10, 15, 21, 90)] == ["三", "十", "十五", "二十一", "九十"]


def test_variants_are_deterministic_and_keep_placeholders():
    neighbours = {"turn": ["flip", "switch"], "name": ["title"], "light": ["lamp"]}
    texts = ["turn on the [NAME] light", "turn the [AREA] light off please", "set [NAME] to 40 percent"]
    a, b = augment.Augmenter("en", neighbours, seed=3), augment.Augmenter("en", neighbours, seed=3)
    first = [a.variant(t) for t in texts * 20]
    again = [b.variant(t) for t in texts * 20]
    assert first == again
    assert all(("[NAME]" in v) == ("[NAME]" in t) and ("[AREA]" in v) == ("[AREA]" in t)
               for v, t in zip(first, texts * 20))
    assert len(set(first)) > len(texts)        # the edits do change sentences
    # variant k of a sentence does not depend on what was asked before
    c = augment.Augmenter("en", neighbours, seed=3)
    assert [c.variant_of(t, 1) for t in texts] == [c.variant_of(t, 1) for t in reversed(texts)][::-1]
    assert c.variant_of(texts[0], 1) == augment.Augmenter("en", neighbours, seed=3).variant_of(texts[0], 1)


def test_each_edit():
    a = augment.Augmenter("en", {"turn": ["flip"]}, seed=0)
    assert a.replace_word("turn on the lamp") == "flip on the lamp"
    assert a.number("dim it to 5 percent") == "dim it to five percent"
    assert a.number("a timer for fifteen minutes") == "a timer for 15 minutes"
    for _ in range(20):      # two neighbouring letters swapped, or one dropped; the first letter kept
        typo = a.typo("brightness")
        swapped = [w[:i] + w[i + 1] + w[i] + w[i + 2:] for w in ["brightness"] for i in range(1, len(w) - 1)]
        dropped = ["brightness"[:i] + "brightness"[i + 1:] for i in range(1, 10)]
        assert typo != "brightness" and typo in swapped + dropped
    z = augment.Augmenter("zh-CN", seed=0)
    assert z.number("定一个5分钟的计时器") == "定一个五分钟的计时器"
    assert z.number("亮度调到百分之30") == "亮度调到百分之三十"
    assert all("打开客厅的灯" in z.filler("打开客厅的灯") for _ in range(10))


def test_label_keeping_variants_only_add_what_keeps_a_meaning():
    # without a teacher a variant keeps its sentence's label: no word is replaced, the command's words all stay
    # (typos aside), and the clauses added come from the hand-written neutral list
    a = augment.Augmenter("en", {"turn": ["flip"]}, seed=1, keep_label=True)
    text = "turn on the porch light"
    variants = [a.variant_of(text, k) for k in range(200)]
    assert not any("flip" in v for v in variants)
    assert len(set(variants)) > 50
    with_clause = [v for v in variants if any(c in v for c in augment.CLAUSES["en"])]
    assert with_clause and all(" on the " in v for v in variants)   # typos touch words of four letters or more
    assert any(v.startswith(tuple(c + ", " for c in augment.CLAUSES["en"])) for v in with_clause)
    assert variants == [augment.Augmenter("en", seed=1, keep_label=True).variant_of(text, k) for k in range(200)]
    z = augment.Augmenter("zh-CN", seed=0, keep_label=True)
    said = [z.clause("打开客厅的灯") for _ in range(20)]
    assert all("打开客厅的灯" in s and "，" in s for s in said)


def test_slot_spans_follow_the_edits_that_leave_them_whole():
    text = "set the [NAME] to 40 percent"
    spans = [[8, 14, "name"], [18, 20, "brightness"]]
    variant = "hey can you set the [NAME] to 40 percent, i'm cooking"
    moved = augment.carry_spans(text, spans, variant)
    assert moved == [[20, 26, "name"], [30, 32, "brightness"]]
    assert [variant[a:b] for a, b, _ in moved] == ["[NAME]", "40"]
    assert augment.carry_spans(text, spans, "set the [NAME] to forty percent") is None   # a number form inside a span
    assert augment.carry_spans(text, spans, "set teh [NAME] to 40 percnt") == spans      # typos beside the spans
    assert augment.carry_spans("add oat milk to my list", [[4, 12, "item"]], "add oat mlk to my list") is None
    assert augment.carry_spans("what time is it", [], "um what time is it") == []
    # every label-keeping variant's carried spans cover the same text as the sentence's
    a = augment.Augmenter("en", seed=4, keep_label=True)
    text, spans = "set a timer for 10 minutes please", [[16, 18, "minutes"]]
    for k in range(100):
        v = a.variant_of(text, k)
        got = augment.carry_spans(text, spans, v)
        assert got is None or [v[s:e] for s, e, _ in got] == ["10"]


def test_nearest_neighbours_leave_out_forms_of_the_word(tmp_path):
    from safetensors.numpy import save_file
    vocab = ["[PAD]", "[UNK]", "turn", "turned", "flip", "banana", "##s"]
    table = np.array([[0, 0, 0], [0, 0, 1], [1, 0, 0], [1, 0.05, 0], [0.9, 0.1, 0], [0, 1, 0], [1, 0, 0]],
                     np.float32)
    save_file({"bert.embeddings.word_embeddings.weight": table}, str(tmp_path / "model.safetensors"))
    (tmp_path / "vocab.txt").write_text("\n".join(vocab) + "\n")
    nn = augment.nearest_neighbours(tmp_path / "model.safetensors", tmp_path / "vocab.txt", {"turn", "missing"})
    assert nn == {"turn": ["flip"]}      # not "turned" (a form of it), not "banana" (far), not "##s" (a piece)
    # the table the augmenter uses answers any word on demand, the same as for a set of words
    table = augment.NeighbourTable(tmp_path / "model.safetensors", tmp_path / "vocab.txt")
    assert table.get("missing") == [] and table.get("turn") == ["flip"] and table.get("flip") == ["turned", "turn"]


def test_train_with_augmented_distillation(tmp_path, monkeypatch):
    torch = pytest.importorskip("torch", reason="torch not installed (pip install -e '.[train]')")
    pytest.importorskip("transformers", reason="transformers not installed (pip install -e '.[train]')")
    monkeypatch.setenv("BERTL14_CACHE", str(tmp_path / "cache"))    # the teacher's answers: not the user's cache
    ds = data.build_dataset("en", per_intent=6, seed=0)
    data.write_dataset(ds, tmp_path / "ds")
    common = ["--data", str(tmp_path / "ds"), "--arch", "tiny", "--epochs", "1", "--max-steps", "2", "--no-test",
              "--quiet", "--calibration", "20", "--min-intent-accuracy", "0"]
    assert main(["train", *common, "--out", str(tmp_path / "teacher")]) == 0
    # without a teacher the variants keep their labels
    assert main(["train", *common, "--out", str(tmp_path / "plain"), "--augment", "1"]) == 0
    assert json.loads((tmp_path / "plain" / "training.json").read_text())["training"]["augment"] == 1
    # the slot tagger may learn from the variants too; without variants the flag is refused
    assert main(["train", *common, "--out", str(tmp_path / "slots"), "--augment", "1", "--augment-slots"]) == 0
    info = json.loads((tmp_path / "slots" / "training.json").read_text())["training"]
    assert info["augment_slots"] is True and "--augment-slots" in info["command"]
    assert main(["train", *common, "--out", str(tmp_path / "x"), "--augment-slots"]) == 2
    assert main(["train", *common, "--out", str(tmp_path / "student"), "--teacher", str(tmp_path / "teacher"),
                 "--augment", "2"]) == 0
    info = json.loads((tmp_path / "student" / "training.json").read_text())
    assert info["training"]["augment"] == 2 and "--augment 2" in info["training"]["command"]
    # the labelled sentences may keep their labels, the teacher's answers the variants' targets only
    assert main(["train", *common, "--out", str(tmp_path / "student0"), "--teacher", str(tmp_path / "teacher"),
                 "--augment", "1", "--teacher-weight", "0"]) == 0
    info = json.loads((tmp_path / "student0" / "training.json").read_text())["training"]
    assert info["teacher_weight"] == 0 and "--teacher-weight 0.0" in info["command"]
    with pytest.raises(SystemExit):
        main(["train", *common, "--out", str(tmp_path / "x"), "--teacher", str(tmp_path / "teacher"),
              "--teacher-weight", "1.5"])
    # the teacher's answers are cached a sentence at a time: a data folder that gains a sentence labels only it
    from bertl14_tools.train import training
    rows = [json.loads(line) for line in (tmp_path / "ds" / "train.jsonl").open(encoding="utf-8")]
    labels = sorted({r["intent"] for r in rows})
    labelled = []
    real = training._teacher_logits
    monkeypatch.setattr(training, "_teacher_logits",
                        lambda folder, todo, labs: labelled.append(len(todo)) or real(folder, todo, labs))
    first = training.teacher_predictions(tmp_path / "teacher", rows[:5], labels)
    again = training.teacher_predictions(tmp_path / "teacher", [{"text": "turn on the porch light"}, *rows[:5]],
                                         labels)
    assert labelled[-1] == 1 and again.shape == (6, len(labels))
    assert torch.equal(again[1:], first)
    assert torch.allclose(again[:1], real(tmp_path / "teacher", [{"text": "turn on the porch light"}], labels))
    # a sentence's variants do not depend on the other sentences of the folder
    variants = training.augmented_texts(tmp_path / "teacher", rows[:8], 2, "en", 0)
    fewer = training.augmented_texts(tmp_path / "teacher", rows[3:8], 2, "en", 0)
    assert variants[3:8] == fewer[:5] and variants[11:16] == fewer[5:]
