"""hf.py: reading Hugging Face folders (safetensors, torch .bin without torch), config checks, labels."""
from __future__ import annotations

import json

import numpy as np
import pytest

from bertl14_tools.model import float_engine
from bertl14_tools.errors import UserError
from bertl14_tools.model.hf import load_hf, read_state_dict
from cvt_util import write_tiny_bert


def _equal_models(a, b):
    for name in ("word_emb", "pos_emb", "type_emb", "emb_ln_g", "emb_ln_b", "pooler_w", "cls_w", "cls_b"):
        assert np.array_equal(getattr(a, name), getattr(b, name)), name
    for la, lb in zip(a.layers, b.layers):
        for name in ("wq", "bq", "wk", "wv", "wo", "wi", "wo2", "ln1_g", "ln2_b"):
            assert np.array_equal(getattr(la, name), getattr(lb, name)), name


def test_tiny_classifier_loads(tiny):
    fm = load_hf(tiny)
    assert (fm.num_layers, fm.hidden, fm.num_heads, fm.intermediate, fm.max_position) == (2, 32, 4, 64, 64)
    assert fm.labels == ["intent_0", "intent_1", "intent_2"]
    assert fm.cls_w.shape == (3, 32) and fm.pooler_w.shape == (32, 32)
    assert fm.layers[0].heads_kept == [0, 1, 2, 3]
    assert fm.vocab[3] == "[CLS]" and fm.word_emb.shape == (len(fm.vocab), 32)


def test_bertmodel_without_prefix_and_mlm_head_dropped(tmp_path):
    d = write_tiny_bert(tmp_path / "enc", num_labels=None, with_mlm=True)
    fm = load_hf(d)
    assert not fm.has_classifier and fm.labels == [] and fm.pooler_w is not None


def test_labels_json_wins_over_id2label(tiny):
    (tiny / "labels.json").write_text(json.dumps(["a", "b", "c"]))
    assert load_hf(tiny).labels == ["a", "b", "c"]
    (tiny / "labels.json").write_text(json.dumps(["a", "b"]))
    with pytest.raises(UserError, match="2 labels but the classifier has 3"):
        load_hf(tiny)


def test_tokenizer_config_read(tiny):
    (tiny / "tokenizer_config.json").write_text(json.dumps({"do_lower_case": False, "strip_accents": True,
                                                            "tokenize_chinese_chars": False}))
    fm = load_hf(tiny)
    assert (fm.do_lower_case, fm.strip_accents, fm.tokenize_chinese_chars) == (False, True, False)


@pytest.mark.parametrize("edit, message", [
    (lambda d: _cfg(d, model_type="roberta"), "model_type is 'roberta', not 'bert'"),
    (lambda d: _cfg(d, num_attention_heads=5), "not divisible by num_attention_heads 5"),
    (lambda d: _cfg(d, hidden_act="relu"), "GELU only"),
    (lambda d: (d / "vocab.txt").unlink(), "no vocab.txt"),
    (lambda d: (d / "model.safetensors").unlink(), "no model.safetensors or pytorch_model.bin"),
    (lambda d: (d / "config.json").unlink(), "no config.json"),
    (lambda d: _cfg(d, num_hidden_layers=3), "config says 3 layers"),
    (lambda d: (d / "vocab.txt").write_text("[UNK]\n" * 500), "only"),
])
def test_load_errors(tiny, edit, message):
    edit(tiny)
    with pytest.raises(UserError, match=message):
        load_hf(tiny)


def _cfg(d, **kw):
    cfg = json.loads((d / "config.json").read_text())
    cfg.update(kw)
    (d / "config.json").write_text(json.dumps(cfg))


def test_bin_equals_safetensors(tiny, tmp_path):
    torch = pytest.importorskip("torch", reason="torch not installed (writing a .bin needs it)")
    sd = read_state_dict(tiny)
    bin_dir = tmp_path / "bin"
    bin_dir.mkdir()
    for name in ("config.json", "vocab.txt", "tokenizer_config.json"):
        (bin_dir / name).write_bytes((tiny / name).read_bytes())
    tsd = {k: torch.from_numpy(v.copy()) for k, v in sd.items()}
    # shared storage and a non-contiguous view, as real checkpoints have (tied / transposed tensors)
    tsd["extra.transposed"] = torch.arange(12.0).reshape(3, 4).t()
    tsd["extra.view"] = tsd["bert.embeddings.word_embeddings.weight"][2:5]
    tsd["extra.bf16"] = torch.tensor([1.5, -2.0], dtype=torch.bfloat16)
    torch.save(tsd, bin_dir / "pytorch_model.bin")
    back = read_state_dict(bin_dir)
    assert np.array_equal(back["extra.transposed"], np.arange(12.0).reshape(3, 4).T)
    assert np.array_equal(back["extra.view"], sd["bert.embeddings.word_embeddings.weight"][2:5])
    assert back["extra.bf16"].tolist() == [1.5, -2.0]
    _equal_models(load_hf(bin_dir), load_hf(tiny))


def test_bin_refuses_code(tiny, tmp_path):
    import pickle
    import zipfile
    d = tmp_path / "evil"
    d.mkdir()
    for name in ("config.json", "vocab.txt"):
        (d / name).write_bytes((tiny / name).read_bytes())

    class Evil:
        def __reduce__(self):
            return (print, ("pwned",))

    with zipfile.ZipFile(d / "pytorch_model.bin", "w") as zf:
        zf.writestr("archive/data.pkl", pickle.dumps({"x": Evil()}))
    with pytest.raises(UserError, match="refusing to load builtins.print"):
        load_hf(d)


def test_float_forward_matches_transformers(tiny):
    torch = pytest.importorskip("torch", reason="torch not installed")
    transformers = pytest.importorskip("transformers", reason="transformers not installed")
    m = transformers.BertForSequenceClassification.from_pretrained(str(tiny)).eval()
    fm = load_hf(tiny)
    ids = [3, 10, 20, 7, 4]
    with torch.no_grad():
        logits = m(torch.tensor([ids])).logits[0].numpy()
    assert np.abs(float_engine.forward(fm, ids).logits - logits).max() < 1e-4


def _add_token_classifier(d, tags: int, bias: bool = True):
    from safetensors.numpy import load_file, save_file
    sd = dict(load_file(str(d / "model.safetensors")))
    rng = np.random.default_rng(1)
    sd["token_classifier.weight"] = rng.standard_normal((tags, 32)).astype(np.float32)
    if bias:
        sd["token_classifier.bias"] = rng.standard_normal(tags).astype(np.float32)
    save_file(sd, str(d / "model.safetensors"))


def test_token_classifier_and_tags_json(tiny):
    """The optional slot-tagging head: token_classifier.* and tags.json (TAG_i without it)."""
    assert load_hf(tiny).tag_w is None and load_hf(tiny).num_tags == 0
    _add_token_classifier(tiny, 5, bias=False)
    fm = load_hf(tiny)
    assert fm.tag_w.shape == (5, 32) and fm.tag_b.tolist() == [0.0] * 5 and fm.tags == [f"TAG_{i}" for i in range(5)]
    (tiny / "tags.json").write_text(json.dumps(["O", "B-name", "I-name", "B-area", "I-area"]))
    fm = load_hf(tiny)
    assert fm.tags[1] == "B-name" and fm.has_classifier and fm.num_tags == 5
    f = float_engine.forward(fm, [3, 7, 8, 4])
    assert np.allclose(f.tag_logits, f.last_hidden @ fm.tag_w.T.astype(np.float64) + fm.tag_b)
    assert f.tags.tolist() == np.argmax(f.tag_logits, axis=1).tolist()
    (tiny / "tags.json").write_text(json.dumps(["O", "B-name"]))
    with pytest.raises(UserError, match="2 tags but the token classifier has 5"):
        load_hf(tiny)
    (tiny / "tags.json").write_text(json.dumps({"0": "O"}))
    with pytest.raises(UserError, match="expected a list of tag names"):
        load_hf(tiny)
    _add_token_classifier(tiny, 300)
    with pytest.raises(UserError, match="1..256 tags"):
        load_hf(tiny)


def test_a_hub_name_is_answered_with_the_current_download_command():
    """bertl14 downloads nothing; a Hub name is answered with huggingface_hub's current CLI (`hf`; the older
    `huggingface-cli` is no longer shipped by newer releases)."""
    import pytest
    from bertl14_tools.errors import UserError
    from bertl14_tools.model.hf import load_hf
    with pytest.raises(UserError, match=r"`hf download org-that-is-not-here/bert-mini --local-dir DIR`"):
        load_hf("org-that-is-not-here/bert-mini")
