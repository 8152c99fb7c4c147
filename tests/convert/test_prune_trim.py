"""prune.py and vocab_trim.py on FloatModels: which heads go, shapes after, ids after trimming."""
from __future__ import annotations

import numpy as np
import pytest

from bertl14_tools.model import float_engine
from bertl14_tools.errors import UserError
from bertl14_tools.model.hf import load_hf
from bertl14_tools.model.tokenizer import make_tokenizer
from bertl14_tools.model.prune import head_importance, keep_heads, prune_heads
from bertl14_tools.model.vocab_trim import trim_vocab
from cvt_util import CALIB


def _ids(fm, texts, n=32):
    tok = make_tokenizer(fm.vocab, fm.do_lower_case, fm.strip_accents, fm.tokenize_chinese_chars)
    return [tok.encode(t, n) for t in texts]


def test_the_silent_head_is_pruned(tiny):
    fm = load_hf(tiny)
    d = fm.head_dim
    for li, silent in enumerate((2, 0)):  # a head whose output projection is zero contributes nothing
        fm.layers[li].wo[:, silent * d:(silent + 1) * d] = 0
    imp = head_importance(fm, _ids(fm, CALIB), progress=False)
    assert imp[0][2] == 0 and imp[1][0] == 0 and min(imp[0][[0, 1, 3]]) > 0
    pruned = prune_heads(fm, 1, imp)
    assert [layer.heads_kept for layer in pruned.layers] == [[0, 1, 3], [1, 2, 3]]
    # removing a silent head changes nothing: the float model's output is the same
    ids = _ids(fm, CALIB[:1])[0]
    assert np.allclose(float_engine.forward(fm, ids).cls, float_engine.forward(pruned, ids).cls, atol=1e-9)


def test_pruned_shapes_and_keep_heads(tiny):
    fm = load_hf(tiny)
    imp = head_importance(fm, _ids(fm, CALIB), progress=False)
    pruned = prune_heads(fm, 2, imp)
    for layer, imp_l in zip(pruned.layers, imp):
        assert layer.wq.shape == layer.wk.shape == layer.wv.shape == (2 * fm.head_dim, fm.hidden)
        assert layer.bq.shape == (2 * fm.head_dim,) and layer.wo.shape == (fm.hidden, 2 * fm.head_dim)
        assert sorted(layer.heads_kept) == sorted(np.argsort(-imp_l, kind="stable")[:2].tolist())
    again = keep_heads(fm, [layer.heads_kept for layer in pruned.layers])
    for a, b in zip(again.layers, pruned.layers):
        assert np.array_equal(a.wq, b.wq) and np.array_equal(a.wo, b.wo)
    # the rows kept are the original head's rows
    h = pruned.layers[0].heads_kept[1]
    d = fm.head_dim
    assert np.array_equal(pruned.layers[0].wk[d:2 * d], fm.layers[0].wk[h * d:(h + 1) * d])


def test_pruning_every_head_is_refused(tiny):
    fm = load_hf(tiny)
    imp = head_importance(fm, _ids(fm, CALIB[:2]), progress=False)
    with pytest.raises(UserError, match="would remove every head"):
        prune_heads(fm, 4, imp)


def test_trim_keeps_used_pieces_and_remaps(tiny):
    fm = load_hf(tiny)
    corpus = ["turn on the kitchen lights", "lock the door"]
    full_ids = _ids(fm, corpus)
    trimmed, rep = trim_vocab(fm, corpus, lambda t: _ids(fm, [t], 1 << 20)[0], progress=False)
    assert rep.vocab_before == fm.vocab_size and rep.vocab_after == trimmed.vocab_size < fm.vocab_size
    assert trimmed.word_emb.shape == (trimmed.vocab_size, fm.hidden)
    for new, old in enumerate(rep.kept_ids):
        assert trimmed.vocab[new] == fm.vocab[old]
        assert np.array_equal(trimmed.word_emb[new], fm.word_emb[old])
    assert {"[PAD]", "[UNK]", "[CLS]", "[SEP]", "[MASK]"} <= set(trimmed.vocab)
    assert "garage" not in trimmed.vocab and "kitchen" in trimmed.vocab
    # the corpus tokenizes to the same pieces under the trimmed vocabulary
    for ids_full, ids_trim in zip(full_ids, _ids(trimmed, corpus)):
        assert [fm.vocab[i] for i in ids_full] == [trimmed.vocab[i] for i in ids_trim]
    # and the float model gives the same answer
    a = float_engine.forward(fm, full_ids[0]).logits
    b = float_engine.forward(trimmed, _ids(trimmed, corpus[:1])[0]).logits
    assert np.allclose(a, b)
