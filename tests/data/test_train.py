"""`bertl14 train` smoke test: a tiny model, a few steps. Skips where torch is not installed (CI)."""
from __future__ import annotations

import json
import shutil

import pytest

from bertl14_tools.data import dataset as data
from bertl14_tools.cli import main


def test_arch_parsing_and_flash_estimate():
    from bertl14_tools.train.training import estimate_flash, parse_arch   # no torch needed
    assert parse_arch("4x128x512x4:3000") == {"layers": 4, "hidden": 128, "intermediate": 512, "heads": 4,
                                              "vocab": 3000}
    assert parse_arch("2x64x128")["heads"] == 2
    # the worked example: 4 layers x 128 x 512 weights alone are 1.3 MB in INT16
    flash = estimate_flash(4, 128, 512, 4000, 42)
    assert flash["embeddings"] > 4000 * 128 and flash["linear"] > 4 * (4 * 128 * 128 + 2 * 128 * 512) * 2
    assert estimate_flash(4, 96, 256, 2000, 43)["total"] < 1 << 20


def test_threshold_rule_is_best_validation_accuracy_within_the_false_accept_bound():
    from bertl14_tools.reference.answer import MAX_VAL_FALSE_ACCEPT
    from bertl14_tools.train.training import choose_threshold
    table = [{"min_score": 0.0, "in_domain_accuracy": 0.99, "ood_false_accept": 0.20},
             {"min_score": 0.5, "in_domain_accuracy": 0.98, "ood_false_accept": MAX_VAL_FALSE_ACCEPT},
             {"min_score": 0.6, "in_domain_accuracy": 0.98, "ood_false_accept": 0.05},
             {"min_score": 0.9, "in_domain_accuracy": 0.90, "ood_false_accept": 0.01}]
    chosen = choose_threshold(table)
    assert chosen["min_score"] == 0.5 and chosen["meets_rule"]
    # nothing within the bound: the fewest false accepts, flagged
    worse = [dict(r, ood_false_accept=r["ood_false_accept"] + 0.1) for r in table]
    chosen = choose_threshold(worse)
    assert chosen["min_score"] == 0.9 and not chosen["meets_rule"]


def test_named_threshold_rule_is_best_masked_accuracy_within_the_bound_as_a_registry_reads():
    """min_score_named: the best masked accuracy among the thresholds whose out-of-domain false accepts, with the
    masked out-of-domain sentences under the candidate and the others under min_score, are within the bound;
    ties: the highest; nothing within: the fewest false accepts."""
    torch = pytest.importorskip("torch", reason="torch not installed (pip install -e '.[train]')")
    from bertl14_tools.train.training import choose_named_threshold
    labels = ["HassTurnOn", "none"]

    def probs(scores):     # each row's top score on HassTurnOn
        return torch.tensor([[s, 1 - s] for s in scores])
    masked_rows = [{"intent": "HassTurnOn"}] * 4
    masked = probs([0.97, 0.72, 0.66, 0.42])
    plain_ood = probs([0.30] * 18 + [0.90])            # one accepted at min_score 0.85: 1 of 20 with the named one
    named_ood = probs([0.50])                          # the masked out-of-domain sentence scores 0.5
    chosen = choose_named_threshold(masked, masked_rows, named_ood, plain_ood, 0.85, labels)
    # up to 0.5 the named sentence is accepted too: 2 of 20 = 10 %; from 0.55 on only the plain one (5 %); 3 of 4
    # masked commands are kept from 0.45 to 0.65: ties, the highest
    assert chosen["min_score_named"] == 0.65 and chosen["masked_accuracy"] == 0.75 and chosen["meets_rule"]
    assert chosen["ood_false_accept"] == 0.05 and chosen["named_ood_false_accept"] == 0.0
    assert [r["min_score_named"] for r in chosen["table"]][:3] == [0.0, 0.05, 0.1]
    # a masked out-of-domain sentence at 0.68 pushes it over the third command: 0.7 keeps 2 of 4
    bound = choose_named_threshold(masked, masked_rows, probs([0.68]), plain_ood, 0.85, labels)
    assert bound["min_score_named"] == 0.7 and bound["masked_accuracy"] == 0.5
    # nothing within the bound: the fewest false accepts, the highest of those, flagged
    worse = choose_named_threshold(masked, masked_rows, probs([0.995]), probs([0.9, 0.3]), 0.85, labels)
    assert worse["min_score_named"] == 0.99 and not worse["meets_rule"]


def test_tiny_training_run(tmp_path):
    pytest.importorskip("torch", reason="torch not installed (pip install -e '.[train]')")
    pytest.importorskip("transformers", reason="transformers not installed (pip install -e '.[train]')")
    pytest.importorskip("tokenizers", reason="tokenizers not installed (pip install -e '.[train]')")
    # three validation sentences an intent; names masked, out-of-domain sentences as a registry reads them too
    ds = data.build_dataset("zh-CN", per_intent=10, seed=0, mask_names=0.5, mask_ood_names=1)
    data.write_dataset(ds, tmp_path / "ds")
    out = tmp_path / "model"
    # three steps learn nothing: no floor on the intents' accuracy
    assert main(["train", "--data", str(tmp_path / "ds"), "--arch", "tiny", "--out", str(out), "--epochs", "1",
                 "--max-steps", "3", "--no-test", "--quiet", "--calibration", "50", "--min-intent-accuracy", "0"]) == 0
    for name in ("config.json", "model.safetensors", "vocab.txt", "tokenizer_config.json", "labels.json",
                 "calibration.jsonl", "MODEL_CARD.md", "training.png"):
        assert (out / name).exists(), name
    labels = json.loads((out / "labels.json").read_text())
    assert data.NONE_LABEL in labels and "HassTurnOn" in labels
    vocab = (out / "vocab.txt").read_text(encoding="utf-8").splitlines()
    assert vocab[:5] == ["[PAD]", "[UNK]", "[CLS]", "[SEP]", "[MASK]"]
    assert "灯" in vocab and "##灯" not in vocab          # Chinese by single character
    calib = [json.loads(line) for line in (out / "calibration.jsonl").open(encoding="utf-8")]
    train_texts = {r["text"] for r in ds.train}
    assert 0 < len(calib) <= 50 and all(c["text"] in train_texts for c in calib)
    card = (out / "MODEL_CARD.md").read_text()
    assert "bertl14 train --data" in card and "Selection rule" in card
    info = json.loads((out / "training.json").read_text())
    sel = info["results"]["selection"]
    assert info["min_score"] == sel["min_score"] and sel["ood_validation"] > 0 and sel["in_domain_validation"] > 0
    # min_score's out-of-domain split is the sentences as written; their masked forms choose min_score_named
    named = info["results"]["selection_named"]
    assert sel["ood_validation"] == sum(r["intent"] == "none" and not r.get("masked") for r in ds.validation) + \
        sum(r["intent"] == "none" for r in ds.natural.get("validation", []))
    assert named["ood_named"] == ds.stats["ood_masked"]["validation"] > 0
    assert info["min_score_named"] == named["min_score_named"] and "`min_score_named`" in card
    # the values of the natural validation sentences as the device reads them, at the chosen thresholds
    from bertl14_tools.reference.slots import expected_values
    vals = info["results"]["values_natural_validation"]
    with_values = sum(bool(expected_values(r)) for r in ds.natural["validation"] if r["intent"] in labels)
    assert vals["with_values"] == with_values > 0 and 0 <= vals["correct"] <= vals["eligible"] <= with_values
    assert vals["end_to_end"] == round(vals["correct"] / with_values, 6)
    assert f"{vals['correct']} of the {with_values} sentences that expect a value" in card
    assert f"`--mask-ood-names 1`): {ds.stats['ood_masked']['train']} written" in card
    # the card's dataset command makes the same data folder again
    data_cmd = next(line for line in card.splitlines() if line.startswith("bertl14 dataset"))
    assert " --mask-names 0.5" in data_cmd and data_cmd.endswith(" --mask-ood-names 1")
    # the model's score as a device with a registry answers: the masked part at min_score_named, the others at min_score
    as_device = {**sel["parts"], "masked": named["masked_accuracy"]}
    assert "masked" in sel["parts"] and named["rule_mean"] == round(sum(as_device.values()) / len(as_device), 4)
    # the converter reads the folder without torch
    from bertl14_tools.model.hf import load_hf
    fm = load_hf(out)
    assert fm.labels == labels and fm.vocab == vocab and fm.num_layers == 1
    # a data folder naming an intents file that is not found from here fails before any training, not after it
    stats = json.loads((tmp_path / "ds" / "stats.json").read_text())
    stats["intent_files"] = ["gone/paraphrases.yaml"]
    (tmp_path / "ds" / "stats.json").write_text(json.dumps(stats))
    assert main(["train", "--data", str(tmp_path / "ds"), "--arch", "tiny", "--out", str(tmp_path / "again"),
                 "--epochs", "1", "--max-steps", "3", "--no-test", "--quiet"]) == 2
    assert not (tmp_path / "again").exists()


def test_distillation_keeps_the_hard_label_on_out_of_domain_sentences():
    torch = pytest.importorskip("torch", reason="torch not installed (pip install -e '.[train]')")
    from bertl14_tools.train.training import distil_loss
    logits = torch.tensor([[2.0, 0.0, -1.0], [0.5, 1.5, 0.0]])
    teacher = torch.tensor([[0.0, 3.0, 0.0], [0.0, 0.0, 3.0]])
    labels = torch.tensor([0, 1])
    hard = torch.nn.functional.cross_entropy(logits, labels, reduction="none")
    soft = torch.nn.functional.kl_div(torch.log_softmax(logits / 2, -1), torch.softmax(teacher / 2, -1),
                                      reduction="none").sum(-1) * 4
    both = distil_loss(logits, teacher, labels, torch.tensor([True, False]), 2.0)
    assert torch.isclose(both, (soft[0] + hard[1]) / 2)
    assert torch.isclose(distil_loss(logits, teacher, labels, torch.tensor([False, False]), 2.0), hard.mean())


def small_english_data(tmp_path) -> list[str]:
    """A data folder of ten sentences an intent in tmp_path/ds, and the `bertl14 train` options of a quick run on it."""
    data.write_dataset(data.build_dataset("en", per_intent=10, seed=0), tmp_path / "ds")
    return ["--data", str(tmp_path / "ds"), "--epochs", "1", "--no-test", "--quiet", "--calibration", "20",
            "--min-intent-accuracy", "0"]


def test_training_goes_on_from_a_model(tmp_path, capsys):
    torch = pytest.importorskip("torch", reason="torch not installed (pip install -e '.[train]')")
    pytest.importorskip("transformers", reason="transformers not installed (pip install -e '.[train]')")
    from safetensors.torch import load_file
    common = [*small_english_data(tmp_path), "--no-calibrate"]
    first, second = tmp_path / "first", tmp_path / "second"
    assert main(["train", "--arch", "tiny", "--out", str(first), "--max-steps", "3", *common]) == 0
    # --arch is ignored: the shape, word pieces and heads are the first model's
    assert main(["train", "--arch", "default", "--init", str(first), "--out", str(second), "--max-steps", "1",
                 "--lr", "1e-9", *common]) == 0
    assert (second / "vocab.txt").read_text() == (first / "vocab.txt").read_text()
    assert json.loads((second / "labels.json").read_text()) == json.loads((first / "labels.json").read_text())
    a, b = load_file(str(first / "model.safetensors")), load_file(str(second / "model.safetensors"))
    assert a.keys() == b.keys()
    for name in a:      # one step at a learning rate of 1e-9 leaves every weight where it was
        assert torch.allclose(a[name], b[name], atol=1e-5), name
    info = json.loads((second / "training.json").read_text())["training"]
    assert info["init"] == str(first) and f"--init {first}" in info["command"]
    pieces = len((first / "vocab.txt").read_text().splitlines())
    assert info["arch"] == f"1x32x64x2:{pieces}"      # the tiny model's shape, not --arch default
    capsys.readouterr()
    assert main(["train", "--init", str(tmp_path / "ds"), "--out", str(tmp_path / "x"), *common]) != 0
    assert "has no config.json: give a model folder made by `bertl14 train`" in capsys.readouterr().err
    assert not (tmp_path / "x").exists()


def test_train_only_slots_keeps_the_encoder_and_the_intents(tmp_path, capsys):
    torch = pytest.importorskip("torch", reason="torch not installed (pip install -e '.[train]')")
    pytest.importorskip("transformers", reason="transformers not installed (pip install -e '.[train]')")
    from safetensors.torch import load_file
    common = small_english_data(tmp_path)     # scores calibrated: the kept intent head keeps its temperature
    first, second = tmp_path / "first", tmp_path / "second"
    assert main(["train", "--arch", "tiny", "--out", str(first), "--max-steps", "3", *common]) == 0
    assert main(["train", "--init", str(first), "--out", str(second), "--max-steps", "3", "--lr", "1e-2",
                 "--train-only", "slots", *common]) == 0
    a, b = load_file(str(first / "model.safetensors")), load_file(str(second / "model.safetensors"))
    for name in a:       # every weight but the slot tagger's is the first model's; the tagger has learnt
        if name.startswith("token_classifier."):
            assert not torch.allclose(a[name], b[name]), name
        else:
            assert torch.equal(a[name], b[name]), name
    info = json.loads((second / "training.json").read_text())["training"]
    assert info["train_only"] == "slots" and "--train-only slots" in info["command"]
    assert info["temperature"] == json.loads((first / "training.json").read_text())["training"]["temperature"]
    # there is nothing to keep without --init, and nothing to train without a slot tagger
    for bad in ([], ["--init", str(first), "--slot-weight", "0"]):
        capsys.readouterr()
        assert main(["train", "--arch", "tiny", "--out", str(tmp_path / "x"), "--train-only", "slots", *bad,
                     *common]) == 2
        assert "--train-only slots trains the slot tagger of an --init model alone" in capsys.readouterr().err
    assert not (tmp_path / "x").exists()


def test_average_of_models_of_one_lineage(tmp_path, capsys):
    torch = pytest.importorskip("torch", reason="torch not installed (pip install -e '.[train]')")
    pytest.importorskip("transformers", reason="transformers not installed (pip install -e '.[train]')")
    from safetensors.torch import load_file
    common = small_english_data(tmp_path)
    first, second, soup = tmp_path / "first", tmp_path / "second", tmp_path / "soup"
    assert main(["train", "--arch", "tiny", "--out", str(first), "--max-steps", "3", *common]) == 0
    assert main(["train", "--init", str(first), "--out", str(second), "--max-steps", "3", "--lr", "1e-2",
                 *common]) == 0
    assert main(["train", "--average", str(first), str(second), *common[:2], "--out", str(soup), "--quiet"]) == 0
    a, b, c = (load_file(str(m / "model.safetensors")) for m in (first, second, soup))
    info = json.loads((soup / "training.json").read_text())
    ta, tb, tc = (json.loads((m / "training.json").read_text())["training"]["temperature"]
                  for m in (first, second, soup))
    assert info["training"]["temperature"] == tc and info["min_score"] == info["results"]["selection"]["min_score"]
    moved = 0
    for name in a:
        if not a[name].is_floating_point():
            continue
        if name.startswith("classifier."):      # each one's temperature out before the average, the new one in
            want = (a[name] * ta + b[name] * tb) / 2 / tc
        else:
            want = (a[name] + b[name]) / 2
        assert torch.allclose(c[name], want, atol=1e-6), name
        moved += not torch.allclose(a[name], b[name])
    assert moved > 10          # the two models differ: the average is not either of them
    for name in ("vocab.txt", "labels.json", "tags.json", "slots.json", "intent_slots.json", "calibration.jsonl"):
        assert (soup / name).read_bytes() == (first / name).read_bytes(), name
    card = (soup / "MODEL_CARD.md").read_text()
    assert (soup / "training.png").stat().st_size > 0      # no epochs to draw: the threshold table alone
    assert [x["model"] for x in info["training"]["average"]] == [str(first), str(second)]
    assert f"`{second}`: `bertl14 train --data" in card and f"--average {first} {second}" in card
    # models of different labels (or word pieces, or tags) are no lineage: a one-line error, nothing written
    other = tmp_path / "other"
    shutil.copytree(second, other)
    (other / "labels.json").write_text(json.dumps(["none", "HassTurnOn"]))
    capsys.readouterr()
    assert main(["train", "--average", str(first), str(other), *common[:2], "--out", str(tmp_path / "x")]) == 2
    assert "differ in labels.json" in capsys.readouterr().err and not (tmp_path / "x").exists()
    assert main(["train", "--average", str(first), *common[:2], "--out", str(tmp_path / "x")]) == 2
    assert "two or more model folders" in capsys.readouterr().err
