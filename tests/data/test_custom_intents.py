"""Your own intents, trained as models/README.md documents (`bertl14 dataset --intents FILE --no-builtin`, then
`bertl14 train`): the oven example reaches 1.0 on every intent's validation sentences, a broken variant fails with
one clear line, and the checks that keep a run from failing silently (per-intent validation, the accuracy floor,
nonsensical options, language, emptied intents, wildcard phrases in the user's file)."""
from __future__ import annotations

import json
import subprocess
import sys
from pathlib import Path

import pytest

from bertl14_tools.data import dataset as data
from bertl14_tools.cli import main
from bertl14_tools.errors import UserError

REPO = Path(__file__).resolve().parents[2]
OVEN = REPO / "models" / "examples" / "oven.yaml"


def needs_training():
    for module in ("torch", "transformers", "tokenizers"):
        pytest.importorskip(module, reason=f"{module} not installed (pip install -e '.[train]')")


def bertl14(*args: str) -> subprocess.CompletedProcess:
    return subprocess.run([sys.executable, "-m", "bertl14_tools.cli", *args], capture_output=True, text=True,
                          timeout=600)


def make_data(tmp_path: Path, yaml_file: Path, name: str) -> Path:
    """The documented data command for your own intents."""
    out = tmp_path / name
    assert main(["dataset", "--lang", "en", "--intents", str(yaml_file), "--no-builtin", "--out", str(out)]) == 0
    return out


@pytest.fixture(scope="module")
def oven_data(tmp_path_factory) -> Path:
    return make_data(tmp_path_factory.mktemp("oven"), OVEN, "data-oven")


def test_oven_example_trains_in_one_go_to_every_intent_right(oven_data, tmp_path):
    """The documented command (the tiny shape instead of `small`, to stay fast) on the three oven intents: every
    intent's validation sentences answered right, the data as it really was in training.json and the card."""
    needs_training()
    out = tmp_path / "oven"
    assert main(["train", "--data", str(oven_data), "--arch", "tiny", "--out", str(out), "--threads", "1",
                 "--quiet"]) == 0
    info = json.loads((out / "training.json").read_text())
    intents = info["results"]["intents"]
    assert sorted(intents) == ["CookDish", "PreheatOven", "TurnOffOven"]
    assert all(a["n"] >= data.MIN_VALIDATION for a in intents.values()), intents
    assert {k: a["accuracy"] for k, a in intents.items()} == {k: 1.0 for k in intents}
    t = info["training"]
    assert t["stopped"] in ("patience", "max_epochs") and t["kept_epoch"] <= t["epochs"] <= t["max_epochs"] == 20
    assert [h["epoch"] for h in t["history"]] == list(range(1, t["epochs"] + 1))
    assert t["dataset"]["builtin_intents"] is False and t["dataset"]["intent_files"] == [str(OVEN)]
    assert info["name_placeholders"] is False
    assert "public_test" not in info["results"]          # Home Assistant's test says nothing of an oven
    card = (out / "MODEL_CARD.md").read_text()
    assert "Home Assistant intent templates" not in card and "public test accuracy" not in card
    assert "alone: `--no-builtin`" in card and "| TurnOffOven |" in card
    assert f" --intents {OVEN} --no-builtin" in card      # the data command as `bertl14 dataset` reads it
    # the range list and the wildcard phrases of the user's file became slots
    spec = json.loads((out / "slots.json").read_text())
    assert spec["slots"]["temperature"]["type"] == "number" and spec["slots"]["dish"]["type"] == "wildcard"


def test_intent_with_three_sentences_fails_with_one_clear_line(tmp_path):
    """The oven example with TurnOffOven cut to three sentences: the data command warns, training refuses before
    any model work, in one line that names the intent, its count and what to do, and writes nothing."""
    needs_training()
    text = OVEN.read_text(encoding="utf-8")
    start = text.index("  TurnOffOven:")
    end = text.index("  CookDish:")
    broken = tmp_path / "oven-broken.yaml"
    broken.write_text(text[:start] + "  TurnOffOven:\n    data:\n      - sentences:\n"
                      '          - "turn off the oven"\n          - "switch off the oven"\n'
                      '          - "oven off"\n' + text[end:], encoding="utf-8")
    made = bertl14("dataset", "--lang", "en", "--intents", str(broken), "--no-builtin", "--out",
                   str(tmp_path / "data"))
    assert made.returncode == 0, made.stderr
    assert "refuses intents with fewer than 10 distinct sentences: TurnOffOven 3" in made.stderr
    trained = bertl14("train", "--data", str(tmp_path / "data"), "--arch", "tiny", "--out", str(tmp_path / "m"),
                      "--threads", "1")
    assert trained.returncode == 2
    lines = trained.stderr.strip().splitlines()
    assert len(lines) == 1 and "Traceback" not in trained.stderr, trained.stderr
    assert lines[0].startswith("bertl14 train: error: too few sentences")
    assert "intent TurnOffOven: 3 (2 training, 1 validation)" in lines[0] and "add alternatives" in lines[0]
    assert not (tmp_path / "m").exists()


def test_accuracy_floor_fails_the_run_and_writes_nothing(oven_data, tmp_path):
    """One training step learns no intent: the run fails with the intents under the floor, nothing is written;
    --min-intent-accuracy 0 writes the model anyway."""
    needs_training()
    out = tmp_path / "m"
    args = ["train", "--data", str(oven_data), "--arch", "tiny", "--out", str(out), "--threads", "1", "--quiet",
            "--max-steps", "1", "--calibration", "20"]
    with pytest.raises(UserError, match=r"validation accuracy under the floor 0\.8 for .*\(0/\d+\)"):
        from bertl14_tools.train.training import run
        from bertl14_tools.cli import build_parser
        run(build_parser().parse_args(args))
    assert not out.exists()
    assert main(args + ["--min-intent-accuracy", "0"]) == 0 and (out / "model.safetensors").is_file()


@pytest.mark.parametrize("option, value", [("--epochs", "0"), ("--lr", "-1"), ("--batch", "0"),
                                           ("--patience", "-1"), ("--min-intent-accuracy", "1.5"),
                                           ("--threads", "0"), ("--none-weight", "0")])
def test_nonsensical_options_are_errors_before_any_work(tmp_path, option, value):
    proc = bertl14("train", "--data", str(tmp_path / "no-such-data"), "--out", str(tmp_path / "m"), option, value)
    assert proc.returncode == 2 and option in proc.stderr and "Traceback" not in proc.stderr, proc.stderr
    assert "no-such-data" not in proc.stderr and not (tmp_path / "m").exists()


def write_yaml(tmp_path: Path, text: str) -> str:
    path = tmp_path / "intents.yaml"
    path.write_text(text, encoding="utf-8")
    return str(path)


def test_every_intent_has_validation_sentences_from_every_template(tmp_path):
    """A 9-sentence intent still gets 3 validation sentences; the split is by a hash of the sentence, so a short
    template's few sentences are not all taken for validation (as --split first does)."""
    path = write_yaml(tmp_path, """
language: en
intents:
  Small:
    data:
      - sentences: ["(open|unlock|unbolt) the (hatch|trapdoor|skylight)"]
  Large:
    data:
      - sentences: ["set the dial to {n}", "(dim|brighten) it"]
lists:
  n:
    range: {from: 1, to: 300}
""")
    ds = data.build_dataset("en", per_intent=200, seed=0, intent_files=[path], builtin=False, ood=False)
    val = [r for r in ds.validation if r["intent"] == "Small"]
    assert len(val) == data.MIN_VALIDATION and len([r for r in ds.train if r["intent"] == "Small"]) == 6
    short = {"dim it", "brighten it"}
    assert short & {r["text"] for r in ds.train}, "the short template is in training"
    first = data.build_dataset("en", per_intent=200, seed=0, intent_files=[path], builtin=False, ood=False,
                               split="first")
    assert short <= {r["text"] for r in first.validation} and ds.stats["split"] == "hash"


def test_wildcard_phrases_live_in_the_users_file(tmp_path):
    path = write_yaml(tmp_path, """
language: en
intents:
  Bake:
    data:
      - sentences: ["bake [a|some] {dish}"]
lists:
  dish:
    wildcard: true
wildcards:
  dish: [sourdough loaf, plum tart]
""")
    ds = data.build_dataset("en", per_intent=20, seed=0, intent_files=[path], builtin=False, ood=False)
    assert {r["slots"]["dish"] for r in ds.train + ds.validation} == {"sourdough loaf", "plum tart"}
    bare = write_yaml(tmp_path, "language: en\nintents:\n  Bake:\n    data:\n      - sentences: ['bake {dish}']\n"
                                "lists:\n  dish:\n    wildcard: true\n")
    with pytest.raises(UserError, match=r"no phrases for wildcard \{dish\}: .*your intents file"):
        data.build_dataset("en", per_intent=5, seed=0, intent_files=[bare], builtin=False, ood=False)


def test_language_mismatch_is_an_error(tmp_path):
    path = write_yaml(tmp_path, "language: de\nintents:\n  Backen:\n    data:\n      - sentences: ['backe brot']\n")
    with pytest.raises(UserError, match=r"is for language 'de', not 'en'"):
        data.build_dataset("en", per_intent=5, seed=0, intent_files=[path], builtin=False, ood=False)


def test_intent_emptied_by_conflicts_is_an_error(tmp_path):
    path = write_yaml(tmp_path, """
language: en
intents:
  OpenGate:
    data:
      - sentences: ["open (sesame|up)"]
  OpenChest:
    data:
      - sentences: ["open (sesame|up)", "open the chest"]
""")
    with pytest.raises(UserError, match=r"every sentence of intent OpenGate is also a sentence of OpenChest"):
        data.build_dataset("en", per_intent=50, seed=0, intent_files=[path], builtin=False, ood=False)


def test_class_balanced_order_and_weights():
    import random
    from bertl14_tools.train.training import MAX_REPEAT, class_balanced_indexes
    labels = [0] * 300 + [1] * 30 + [2] * 2 + [3] * 100
    order, weights = class_balanced_indexes(labels, random.Random(0), none_label=3, none_weight=2.0)
    counts = {y: sum(labels[i] == y for i in order) for y in range(4)}
    assert counts == {0: 300, 1: 300, 2: 2 * MAX_REPEAT, 3: 300}
    assert weights == {0: 1.0, 1: 1.0, 2: 300 / (2 * MAX_REPEAT), 3: 2.0}
    # every sentence of a class is in the order, none left out by the draw
    assert set(order) == set(range(len(labels)))
