"""The C encoder (both kernel sets) against reference/integer.py on random integer models: every token's
INT8 row, row scales, output exponent, logits, label and score must be identical."""
from __future__ import annotations

import numpy as np
import pytest
from randmodel import dummy_vocab, random_quant_model

from bertl14_tools.reference import cengine, integer as reference

MODELS = {
    "base": dict(),
    "smoothing": dict(smoothing=True, seed=1),
    "int4": dict(embedding="int4", seed=2),
    "pruned": dict(heads_kept=5, seed=3),
    "no_classifier": dict(layers=3, labels=0, seed=4),
    "odd_dims": dict(hidden=48, heads_total=6, heads_kept=6, intermediate=72, seed=6),
}
LENGTHS = [1, 2, 3, 4, 5, 7, 8, 13, 33, 64]


@pytest.mark.parametrize("name", list(MODELS))
def test_encoder_matches_reference(name, kernels, pack):
    qm = random_quant_model(**MODELS[name])
    eng = cengine.CLibrary(pack(qm), dummy_vocab(), max_seq_len=qm.max_position, kernels=kernels)
    rng = np.random.default_rng(7)
    for n in LENGTHS:
        ids = [int(i) for i in rng.integers(0, qm.vocab_size, size=n)]
        r = reference.encode(qm, ids)
        c = eng.encode(ids)
        assert c.hidden.shape == (n, qm.hidden)
        np.testing.assert_array_equal(c.hidden, r.hidden, err_msg=f"{name} n={n}: hidden state")
        np.testing.assert_array_equal(c.scales, r.hidden_scale, err_msg=f"{name} n={n}: row scales")
        assert c.frac_bits == r.hidden_f
        if qm.cls is not None:
            k = eng.classify()
            np.testing.assert_array_equal(k.logits, r.logits, err_msg=f"{name} n={n}: logits")
            assert (k.label, k.score_q16) == (r.label, r.score_q16)
            assert k.score_milli == reference.score_thousandths(r.score_q16)
            assert k.label_name == qm.labels[k.label]


def test_values_are_not_degenerate(pack):
    """Guard for the test above: the random model must produce varied rows and logits."""
    qm = random_quant_model()
    r = reference.encode(qm, list(range(5, 20)))
    assert len(np.unique(r.hidden)) > 50
    assert len(set(r.logits.tolist())) == len(r.logits)


def test_fourteen_layers_one_buffer(pack):
    """RAM does not depend on the number of layers: 2 and 14 layers need the same work buffer."""
    a = cengine.CLibrary(pack(random_quant_model(layers=2)), dummy_vocab(), max_seq_len=64)
    b = cengine.CLibrary(pack(random_quant_model(layers=14, seed=9)), dummy_vocab(), max_seq_len=64)
    assert a.work_buffer_size == b.work_buffer_size
    qm = random_quant_model(layers=14, seed=9)
    ids = list(range(1, 30))
    np.testing.assert_array_equal(b.encode(ids).hidden, reference.encode(qm, ids).hidden)
