"""The domain rule (docs/registry.md, "The domain of a name"): with a registry, the answer is the best label among
the intents that accept the domain of a name found (none and the intents that take no name stay allowed), scored
from the same logits. C (bertl14_classify_allowed, bertl14_registry_domain) == Python (answer.classify_allowed,
registry.names.entity_domain); the intent -> domains table from the templates (data.dataset.intent_domains); the shipped model
on "set the <fan> to 40 percent"."""
from __future__ import annotations

import ctypes
import json
import random
from pathlib import Path

import numpy as np
import pytest

from bertl14_tools.reference import answer as A
from bertl14_tools.registry import domains as D
from bertl14_tools.registry import names as R

REPO = Path(__file__).resolve().parents[2]

FAN_HOME = """\
areas:
  - {name: Study}
entities:
  - {name: Desk Fan, domain: fan, area: Study}
  - {name: Sofa Blinds, domain: cover, area: Study}
  - {name: Reading Lamp, domain: light}
  - {name: Old Radio, domain: made_up_domain}
"""


# ---- the integer part: C == Python -------------------------------------------------------------------------------
@pytest.fixture(scope="module")
def clib():
    from bertl14_tools.reference.cengine import load_library
    lib = load_library("portable")
    fn = lib.bertl14_classify_allowed
    fn.restype, fn.argtypes = ctypes.c_int, [ctypes.c_void_p, ctypes.c_uint32, ctypes.c_void_p, ctypes.c_void_p]
    return fn


def _c_classify_allowed(fn, logits, allowed):
    from bertl14_tools.reference.cengine import Classification
    lg = np.ascontiguousarray(logits, dtype=np.int32)
    words = None if allowed is None else np.asarray(A.allowed_words(allowed), dtype=np.uint32)
    r = Classification()
    st = fn(lg.ctypes.data, len(lg), None if words is None else words.ctypes.data, ctypes.byref(r))
    assert st == 0
    return r.label, r.score_q16, r.score_milli


def test_classify_allowed_c_equals_python(clib):
    from bertl14_tools.reference.integer import classifier_score, score_thousandths
    rng = random.Random(5)
    for n in range(400):
        c = rng.choice([1, 2, 3, 31, 32, 33, 43, 70])
        spread = rng.choice([50, 2000, 20000, 90000, 2**31 - 1])       # up to the whole int32 range
        logits = [rng.randint(-spread, spread) for _ in range(c)]
        if n % 7 == 0 and c > 2:
            logits[1] = logits[2] = max(logits)                    # ties: the first wins
        allowed = [rng.random() < 0.3 for _ in range(c)] if n % 5 else [False] * c
        py = A.classify_allowed(logits, allowed)
        label, q16, milli = _c_classify_allowed(clib, logits, allowed)
        assert (label, q16, milli) == (py[0], py[1], score_thousandths(py[1])), (logits, allowed)
        if any(allowed):
            assert allowed[label] and logits[label] == max(x for x, ok in zip(logits, allowed) if ok)
            assert label == min(i for i, (x, ok) in enumerate(zip(logits, allowed)) if ok and x == logits[label])
        else:
            assert label == int(np.argmax(logits))                 # nothing allowed: the plain argmax
        # every label allowed (or NULL): exactly the library's classifier score
        assert A.classify_allowed(logits, None) == classifier_score(logits)
        assert _c_classify_allowed(clib, logits, None)[:2] == classifier_score(logits)
        assert _c_classify_allowed(clib, logits, [True] * c)[:2] == classifier_score(logits)


def test_classify_allowed_score_is_that_labels_softmax_over_the_allowed():
    logits = np.array([3000, 1000, -500, 2900])                    # Q10
    ok = np.array([False, True, True, False])
    label, q16 = A.classify_allowed(logits, list(ok))
    e = np.exp(logits[ok] / 1024)
    assert label == 1 and abs(q16 / 65536 - e[0] / e.sum()) < 2e-3    # p(label | one of the allowed answers)


def test_classify_allowed_checks_its_arguments(clib):
    from bertl14_tools.reference.cengine import Classification
    r = Classification()
    lg = np.zeros(3, np.int32)
    assert clib(None, 3, None, ctypes.byref(r)) == -5               # BERTL14_ERR_NULL_POINTER
    assert clib(lg.ctypes.data, 0, None, ctypes.byref(r)) == -8     # BERTL14_ERR_NO_CLASSIFIER
    assert clib(lg.ctypes.data, 3, None, None) == -5


# ---- the registry's domain: C == Python ---------------------------------------------------------------------------
@pytest.mark.parametrize("path", ["app/entities.yaml", "docs/examples/entities.yaml", "fan"])
def test_entity_domain_c_equals_python(path, tmp_path):
    from bertl14_tools.reference.infer import _c_entity_domain
    if path == "fan":
        (tmp_path / "h.yaml").write_text(FAN_HOME)
        path = tmp_path / "h.yaml"
    reg = R.load(REPO / path)
    words = R.compile_registry(reg)
    c_domain = _c_entity_domain(words)
    for i, it in enumerate(reg.entities):
        want = D.DOMAINS.index(it.domain) if it.domain in D.DOMAINS else 0
        assert R.entity_domain(words, i) == c_domain(i) == want, it
    for i in (len(reg.entities), len(reg.entities) + 1, 10**6):   # areas, floors, out of range: 0
        assert R.entity_domain(words, i) == c_domain(i) == 0


# ---- the table ---------------------------------------------------------------------------------------------------
def test_intent_domains_from_the_templates():
    pytest.importorskip("hassil")
    from bertl14_tools.data.dataset import intent_domains
    t = intent_domains("en")
    assert t["HassFanSetSpeed"] == ["fan"] and "fan" not in t["HassSetPosition"]
    assert {"cover", "valve"} <= set(t["HassSetPosition"])
    # Home Assistant turns on/off and reports the state of an entity of any domain: never filtered
    assert not {"HassTurnOn", "HassTurnOff", "HassGetState"} & set(t)
    assert "HassStartTimer" not in t and "HassGetCurrentTime" not in t and "none" not in t   # no {name}
    assert t == dict(sorted(t.items())) and all(v == sorted(v) for v in t.values())


@pytest.mark.parametrize("name", ["intent-en", "intent-en-small", "intent-zh-CN"])
def test_shipped_models_carry_their_table(name):
    pytest.importorskip("hassil")
    from bertl14_tools.data.dataset import intent_domains
    folder = REPO / "models" / name
    stats = json.loads((folder / "training.json").read_text())["training"]["dataset"]
    table = D.load_intent_domains(folder)
    # the templates it was trained on: Home Assistant's and the --intents files (paths from the repository root)
    assert table == intent_domains(stats["lang"], [str(REPO / f) for f in stats.get("intent_files") or []])
    labels = json.loads((folder / "labels.json").read_text())
    masks = D.label_domain_masks(labels, table)
    assert masks[labels.index("none")] == D.ALL_DOMAINS
    assert masks[labels.index("HassFanSetSpeed")] == 1 << D.DOMAINS.index("fan")
    assert masks[labels.index("HassStartTimer")] == D.ALL_DOMAINS


def test_allowed_labels():
    labels = ["HassFanSetSpeed", "HassSetPosition", "HassStartTimer", "none"]
    masks = D.label_domain_masks(labels, {"HassFanSetSpeed": ["fan"], "HassSetPosition": ["cover", "valve"],
                                          "HassListAddItem": ["todo"]})
    fan, cover = D.DOMAINS.index("fan"), D.DOMAINS.index("cover")
    assert A.allowed_labels(masks, D.name_domain_mask([fan])) == [True, False, True, True]
    assert A.allowed_labels(masks, D.name_domain_mask([fan, cover])) == [True, True, True, True]
    assert A.allowed_labels(masks, D.name_domain_mask([0])) is None        # unknown domain: no rule
    assert A.allowed_labels(None, D.name_domain_mask([fan])) is None       # no table: no rule
    assert A.allowed_words([True] * 33) == [0xFFFFFFFF, 1]


def test_build_step_writes_the_label_table(tmp_path):
    """registry.json's label_domains and bertl14_label_domains.c, from the model's intent_domains.json; none
    without one (count 0: the firmware applies no rule)."""
    import shutil
    import subprocess
    import sys
    from bertl14_tools.model.folder import open_model
    model = open_model(REPO / "models" / "intent-en", progress=False).path
    src = REPO / "app" / "entities.yaml"
    run = lambda m, out: subprocess.run([sys.executable, "-m", "bertl14_tools.registry.names", str(src), "--model",  # noqa
                                         str(m), "--out", str(out)], capture_output=True, text=True, cwd=REPO)
    proc = run(model, tmp_path / "a")
    assert proc.returncode == 0, proc.stderr
    masks, labels = R.label_domains_for_model(model)
    data = json.loads((tmp_path / "a" / "registry.json").read_text())
    assert data["label_domains"] == masks and len(masks) == len(labels) == 43
    c = (tmp_path / "a" / "bertl14_label_domains.c").read_text()
    assert c == R.render_label_domains_c(masks, labels, str(model / "labels.json"))
    assert f"0x{1 << D.DOMAINS.index('fan'):08x}u, /* {labels.index('HassFanSetSpeed')} HassFanSetSpeed */" in c
    assert "bertl14_label_domains_count = 43u;" in c and "domain rule over 43 labels" in proc.stdout
    bare = tmp_path / "model"                      # a converted folder without the table (its source has one): none
    shutil.copytree(model, bare)
    (bare / D.INTENT_DOMAINS_FILE).unlink()
    proc = run(bare, tmp_path / "b")
    assert proc.returncode == 0, proc.stderr
    assert json.loads((tmp_path / "b" / "registry.json").read_text())["label_domains"] is None
    assert "bertl14_label_domains_count = 0u;" in (tmp_path / "b" / "bertl14_label_domains.c").read_text()


def _source_copy(tmp_path):
    """A throwaway copy of the shipped model, to move, delete or edit (never the repository's own folder)."""
    import shutil
    return Path(shutil.copytree(REPO / "models" / "intent-en", tmp_path / "src" / "intent-en"))


def test_a_converted_folder_keeps_the_table_without_its_source(tmp_path, monkeypatch):
    """The cache's conversion carries intent_domains.json: the rule survives its source folder being deleted (another
    checkout, a moved workspace)."""
    import shutil
    from bertl14_tools.model.folder import open_model
    monkeypatch.setenv("BERTL14_CACHE", str(tmp_path / "cache"))
    src = _source_copy(tmp_path)
    table = D.load_intent_domains(src)
    assert table and "HassFanSetSpeed" in table
    model = open_model(src, progress=False)
    assert model.path.parent == tmp_path / "cache"
    expected, labels = R.label_domains_for_model(model.path)
    shutil.rmtree(src)
    assert D.load_intent_domains(model.path) == table
    masks, labels_after = R.label_domains_for_model(model.path)
    assert masks == expected and labels_after == labels and len(masks) == 43
    assert masks[labels.index("HassFanSetSpeed")] == 1 << D.DOMAINS.index("fan")


def test_a_changed_table_is_not_served_from_the_cache(tmp_path, monkeypatch):
    """intent_domains.json is one of the conversion's inputs: a cache entry made before it changed is not reused, and
    a table removed from the source is not left behind in a folder converted again."""
    from bertl14_tools.model.convert import ConvertOptions, convert
    from bertl14_tools.model.folder import open_model
    monkeypatch.setenv("BERTL14_CACHE", str(tmp_path / "cache"))
    src = _source_copy(tmp_path)
    first = open_model(src, progress=False)
    assert "intent_domains.json" in first.manifest["sources"]["files"]
    table = D.load_intent_domains(src)
    table["HassFanSetSpeed"] = ["fan", "cover"]
    (src / D.INTENT_DOMAINS_FILE).write_text(json.dumps(table), encoding="utf-8")
    second = open_model(src, progress=False)
    assert second.path != first.path
    assert D.load_intent_domains(second.path)["HassFanSetSpeed"] == ["fan", "cover"]
    assert D.load_intent_domains(first.path)["HassFanSetSpeed"] == ["fan"]
    out = tmp_path / "out"                         # the build converts into the same folder every time
    convert(src, out, ConvertOptions(progress=False))
    assert D.load_intent_domains(out) == table
    (src / D.INTENT_DOMAINS_FILE).unlink()
    convert(src, out, ConvertOptions(progress=False))
    assert D.load_intent_domains(out) is None


# ---- the shipped model: a fan's name reads like another device's --------------------------------------------------
@pytest.fixture(scope="module")
def homes(tmp_path_factory):
    d = tmp_path_factory.mktemp("homes")
    (d / "fan.yaml").write_text(FAN_HOME)
    plain = "\n".join(line.replace(", domain: fan", "").replace(", domain: cover", "").replace(
        ", domain: light", "").replace(", domain: made_up_domain", "") for line in FAN_HOME.splitlines())
    (d / "plain.yaml").write_text(plain + "\n")
    assert "domain" not in plain
    return d


TEXTS = ["set the desk fan to 40 percent", "set the sofa blinds to 40 percent", "turn on the desk fan",
         "set the old radio to 40 percent", "set a timer for 5 minutes"]


@pytest.mark.parametrize("engine", ["ref", "c"])
def test_a_fan_is_not_a_cover(homes, engine):
    from bertl14_tools.reference.infer import Answerer, Entities
    from bertl14_tools.model.folder import open_model
    model = open_model(REPO / "models" / "intent-en", progress=False)
    ent = Entities(homes / "fan.yaml", model, engine)
    plain = Entities(homes / "plain.yaml", model, engine)
    argmax = Answerer(model, engine, None, 0)
    run, run0, run_plain = Answerer(model, engine, ent), Answerer(model, engine, ent, 0), Answerer(model, engine, plain, 0)
    fan = run(TEXTS[0])
    assert fan.masked == "set the [NAME] to 40 percent"
    alone = argmax(fan.masked).label                                    # what the model alone says: not a fan's
    assert alone == fan.argmax and alone != "HassFanSetSpeed"            # intent (a light's or a cover's)
    assert fan.label == "HassFanSetSpeed" and (fan.intent, fan.best) in (("HassFanSetSpeed", None),
                                                                        ("none", "HassFanSetSpeed"))
    assert run0(TEXTS[0]).intent == "HassFanSetSpeed"                    # --min-score 0: the answer itself
    assert run(TEXTS[1]).label == "HassSetPosition"                      # a cover stays a cover
    assert run(TEXTS[2]).label == "HassTurnOn"                           # HassTurnOn accepts fans
    assert run(TEXTS[3]).label == alone                                  # a domain outside DOMAINS: no rule
    for text in TEXTS:                                                   # a registry without domains changes nothing
        a, b = run_plain(text), argmax(run_plain(text).masked)
        assert (a.label, a.score_milli, a.intent) == (b.label, b.score_milli, b.intent) and a.argmax == a.label
    # the score is the chosen label's softmax probability over the allowed labels, from the same logits
    p = argmax.eng.predict(model.encode(fan.masked))
    q16 = A.classify_allowed(p.logits, fan.allowed)[1]
    from bertl14_tools.reference.integer import score_thousandths
    assert fan.score_milli == score_thousandths(q16)


def test_predict_and_eval_cli_apply_the_rule(homes, tmp_path):
    import sys
    sys.path.insert(0, str(REPO / "tests" / "convert"))
    from cvt_util import run_cli
    lines = lambda r: [json.loads(x) for x in r.stdout.splitlines()]  # noqa: E731
    got = {e: lines(run_cli("predict", "--model", REPO / "models" / "intent-en", "--engine", e, "--entities",
                            homes / "fan.yaml", "--min-score", "0", "--json", *TEXTS[:2])) for e in ("ref", "c")}
    assert got["c"] == got["ref"]
    assert got["ref"][0]["intent"] == "HassFanSetSpeed" and got["ref"][0]["argmax"] != "HassFanSetSpeed"
    # the same masked text: the model alone answers both alike; "argmax" only where the rule changed the answer
    assert got["ref"][1]["intent"] == "HassSetPosition"
    assert got["ref"][1].get("argmax", got["ref"][1]["intent"]) == got["ref"][0]["argmax"]
    data = tmp_path / "d.jsonl"
    data.write_text("".join(json.dumps({"text": t, "intent": i}) + "\n" for t, i in
                            [(TEXTS[0], "HassFanSetSpeed"), (TEXTS[1], "HassSetPosition")]))
    res = lines(run_cli("eval", "--model", REPO / "models" / "intent-en", "--engine", "c", "--entities",
                        homes / "fan.yaml", "--data", data, "--min-score", "0", "--json"))[0]
    with_domains = len(D.load_intent_domains(REPO / "models" / "intent-en"))   # the labels its table lists
    changed = sum("argmax" in g for g in got["ref"])                        # the answers the rule changed
    assert res["accuracy"] == 1.0 and res["domain_rule"] == {"labels_with_domains": with_domains, "changed": changed}


def test_the_float_engine_scores_the_rule_as_the_device(homes):
    """`--engine float` answers with the same rule: the allowed label's softmax over the allowed labels alone, in
    floating point, within a thousandth or two of the integer engines' score."""
    from bertl14_tools.model import float_engine
    from bertl14_tools.reference.infer import Answerer, Entities
    from bertl14_tools.model.folder import open_model
    model = open_model(REPO / "models" / "intent-en", progress=False)
    flt = Answerer(model, "float", Entities(homes / "fan.yaml", model, "float"), 0)
    ref = Answerer(model, "ref", Entities(homes / "fan.yaml", model, "ref"), 0)
    fan, fan_ref = flt(TEXTS[0]), ref(TEXTS[0])
    assert fan.label == fan_ref.label == "HassFanSetSpeed" and fan.allowed == fan_ref.allowed
    logits = flt.eng.predict(model.encode(fan.masked)).logits
    ok = np.asarray(fan.allowed, bool)
    expected = float_engine.softmax(logits[ok])[list(np.flatnonzero(ok)).index(model.labels.index(fan.label))]
    assert abs(fan.score - expected) < 1e-9
    assert abs(fan.score_milli - fan_ref.score_milli) <= 3    # float against the integer engines
    assert fan.score > float_engine.softmax(logits)[model.labels.index(fan.label)]   # not over every label
