"""MiniLM acceptance: the float engine equals transformers' BertModel to 1e-4; the integer
reference's [CLS] vector stays close to the float model's over sentences expanded from the
home-assistant-intents templates (not the test set). The unmarked tests use 50 sentences; the slow ones
500 and print the figures docs/numerics.md quotes:

    python -m pytest tests/reference/test_ref_minilm.py -m slow -s
"""
import copy
import functools

import numpy as np
import pytest
from ref_util import cosine, minilm, minilm_dir, template_sentences, tokenizer_for

from bertl14_tools.reference import integer as R
from bertl14_tools.model.float_engine import forward
from bertl14_tools.model.quant import QuantOptions, quantize

N_CALIB = 64


def _data(n):
    fm = minilm()
    tok = tokenizer_for(fm)
    texts = template_sentences(n + N_CALIB)
    ids = [tok(t) for t in texts]
    return fm, ids[:n], ids[n:]


def cls_cosines(fm_ref, fm_q, ids, calib, opts):
    """[CLS] cosines between reference.encode of quantize(fm_q) and the float fm_ref."""
    qm = quantize(fm_q, calib, opts)
    return np.array([cosine(R.encode(qm, x).cls_float, forward(fm_ref, x).cls) for x in ids])


def _report(name, cos):
    print(f"\n{name}: n={len(cos)} mean={cos.mean():.5f} min={cos.min():.5f}")


def test_float_engine_matches_transformers():
    torch = pytest.importorskip("torch", reason="torch not installed (float vs transformers parity)")
    transformers = pytest.importorskip("transformers", reason="transformers not installed")
    fm, ids, _ = _data(20)
    model = transformers.BertModel.from_pretrained(str(minilm_dir())).eval()
    worst = 0.0
    for x in ids:
        with torch.no_grad():
            out = model(torch.tensor([x]), output_hidden_states=True)
        res = forward(fm, x)
        for mine, theirs in zip(res.hidden_states, out.hidden_states):
            worst = max(worst, float(np.abs(mine - theirs[0].double().numpy()).max()))
        worst = max(worst, float(np.abs(res.pooled - out.pooler_output[0].double().numpy()).max()))
    assert worst < 1e-4, worst


@functools.lru_cache(maxsize=1)
def _with_random_head(n):
    """MiniLM plus a random 5-label classifier head (MiniLM has none), quantized with the defaults."""
    fm, ids, calib = _data(n)
    rng = np.random.default_rng(0)
    fm = copy.copy(fm)
    fm.cls_w = (rng.standard_normal((5, fm.hidden)) * 2).astype(np.float32)
    fm.cls_b = np.zeros(5, np.float32)
    fm.labels = [f"l{i}" for i in range(5)]
    return fm, ids, quantize(fm, calib, QuantOptions())


def test_integer_cls_close_to_float_50():
    fm, ids, qm = _with_random_head(50)
    cos = np.array([cosine(R.encode(qm, x).cls_float, forward(fm, x).cls) for x in ids])
    _report("default (per-token + smoothing), 50 sentences", cos)
    assert cos.mean() >= 0.997 and cos.min() >= 0.99


def test_integer_logits_follow_float_on_a_classifier_head():
    fm, ids, qm = _with_random_head(50)
    agree, score_err = 0, []
    for x in ids:
        r, f = R.encode(qm, x), forward(fm, x)
        agree += r.label == f.label
        if r.label == f.label:
            p = np.exp(f.logits - f.logits.max())
            score_err.append(abs(r.score / 1000 - p[f.label] / p.sum()))
    # the random head multiplies the [CLS] error (cosine 0.998 = about 6 % relative) into the logits
    assert agree >= 45 and np.mean(score_err) < 0.05, (agree, np.mean(score_err))


@pytest.mark.slow
def test_acceptance_500_int8_weights():
    """INT8 linear weights (one scale per output channel, bertl14 convert --weights int8): mean [CLS] cosine >= 0.995."""
    fm, ids, calib = _data(500)
    cos = cls_cosines(fm, fm, ids, calib, QuantOptions(weights="int8"))
    _report("INT8 weights (per-token + smoothing)", cos)
    assert cos.mean() >= 0.995 and cos.min() >= 0.98


@pytest.mark.slow
def test_acceptance_500_int8_weights_int4_embedding():
    """INT8 linear weights and INT4 word embeddings (--weights int8 --embedding int4): mean [CLS] cosine >= 0.995."""
    fm, ids, calib = _data(500)
    cos = cls_cosines(fm, fm, ids, calib, QuantOptions(weights="int8", embedding="int4"))
    _report("INT8 weights + INT4 word embeddings (per-token + smoothing)", cos)
    assert cos.mean() >= 0.995 and cos.min() >= 0.98


@pytest.mark.slow
def test_acceptance_500_default():
    fm, ids, calib = _data(500)
    cos = cls_cosines(fm, fm, ids, calib, QuantOptions())
    _report("per-token + smoothing (default)", cos)
    assert cos.mean() >= 0.997 and cos.min() >= 0.99


@pytest.mark.slow
def test_acceptance_500_variants_reported():
    """Figures for the per-tensor mode, per-token without smoothing, INT4 embeddings and 4 pruned heads."""
    from bertl14_tools.model.prune import head_importance, prune_heads
    fm, ids, calib = _data(500)
    figures = {}
    for name, opts in [("per-token, no smoothing", QuantOptions(smoothing=False)),
                       ("per-tensor, no smoothing (seed)", QuantOptions(act_scale="per_tensor", smoothing=False)),
                       ("per-tensor + smoothing", QuantOptions(act_scale="per_tensor")),
                       ("INT4 word embeddings (default otherwise)", QuantOptions(embedding="int4"))]:
        figures[name] = cls_cosines(fm, fm, ids, calib, opts)
        _report(name, figures[name])
    pruned = prune_heads(fm, 4, head_importance(fm, calib, progress=False))
    figures["4 heads pruned: integer vs pruned float"] = c1 = cls_cosines(pruned, pruned, ids, calib, QuantOptions())
    _report("4 heads pruned: integer vs pruned float", c1)
    c2 = np.array([cosine(forward(pruned, x).cls, forward(fm, x).cls) for x in ids])
    _report("4 heads pruned: pruned float vs unpruned float", c2)
    c3 = cls_cosines(fm, pruned, ids, calib, QuantOptions())
    _report("4 heads pruned: integer vs unpruned float", c3)
    assert figures["INT4 word embeddings (default otherwise)"].mean() >= 0.99
    assert c1.mean() >= 0.997
