"""The int8 .tflite export of `bertl14 bench`'s tflm-cmsis-nn engine (scripts/bertl14_tools/model/tflite_export.py): a tiny
random BERT is exported, the flatbuffer carries what TFLite's full-integer quantization gives (per-channel weights,
the fixed softmax and tanh outputs), its float graph is the model, and TFLM (the engine's host runner, built from
bench/tflm_cmsis_nn with the CMSIS-NN kernels) answers what the Python int8 graph computes, within the kernels'
fixed-point rounding. The runner builds once (about 2 minutes of compiler time), then the tests take seconds."""
from __future__ import annotations

import numpy as np
import pytest

from bertl14_tools.device import bench_peer
from bertl14_tools.model import float_engine, tflite_export
from bertl14_tools.errors import UserError
from bertl14_tools.model.floatmodel import FloatLayer, FloatModel
from testsupport import skip_missing

H, HEADS, I, LAYERS, VOCAB, POSITIONS, LABELS, TAGS = 16, 2, 32, 2, 40, 24, 5, 3


def tiny_model(seed: int = 0) -> FloatModel:
    rng = np.random.default_rng(seed)
    w = lambda *shape, s=0.3: rng.normal(0.0, s, shape)  # noqa: E731

    def layer():
        return FloatLayer(wq=w(H, H), bq=w(H, s=0.1), wk=w(H, H), bk=w(H, s=0.1), wv=w(H, H), bv=w(H, s=0.1),
                          wo=w(H, H), bo=w(H, s=0.1), ln1_g=1 + w(H, s=0.1), ln1_b=w(H, s=0.1),
                          wi=w(I, H), bi=w(I, s=0.1), wo2=w(H, I), bo2=w(H, s=0.1), ln2_g=1 + w(H, s=0.1),
                          ln2_b=w(H, s=0.1), heads_kept=list(range(HEADS)))
    return FloatModel(hidden=H, num_heads=HEADS, intermediate=I, max_position=POSITIONS, layer_norm_eps=1e-12,
                      word_emb=w(VOCAB, H, s=1.0), pos_emb=w(POSITIONS, H, s=0.5), type_emb=w(2, H, s=0.2),
                      emb_ln_g=1 + w(H, s=0.1), emb_ln_b=w(H, s=0.1), layers=[layer() for _ in range(LAYERS)],
                      vocab=[f"w{i}" for i in range(VOCAB)], pooler_w=w(H, H), pooler_b=w(H, s=0.1),
                      cls_w=w(LABELS, H, s=1.0), cls_b=w(LABELS, s=0.1), labels=[f"L{i}" for i in range(LABELS)],
                      tag_w=w(TAGS, H, s=1.0), tag_b=w(TAGS, s=0.1), tags=[f"T{i}" for i in range(TAGS)],
                      gelu="tanh")


def sentences(rng, n: int, k: int) -> list[list[int]]:
    return [[2] + list(rng.integers(4, VOCAB, n - 2)) + [3] for _ in range(k)]


@pytest.fixture(scope="module")
def export():
    reason = tflite_export.missing_reason()
    if reason:
        skip_missing(reason)
    rng = np.random.default_rng(1)
    calib = [s for n in (4, 9, 16, 24) for s in sentences(rng, n, 16)]
    return tflite_export.Export(tiny_model(), calib)


@pytest.fixture(scope="module")
def runner(export):
    return bench_peer.build_host_runner()


def test_the_float_graph_is_the_model(export):
    """Before quantization the exported graph computes what the float engine does (q scaled by 1/sqrt(d) in its
    weights, position and token type rows folded): logits and tag logits to float precision."""
    rng = np.random.default_rng(2)
    for ids in sentences(rng, 7, 3) + sentences(rng, 24, 2):
        got = export.run(ids, quant=False)
        ref = float_engine.forward(export.fm, ids, gelu="tanh")
        np.testing.assert_allclose(got["logits"].ravel(), ref.logits, atol=1e-9)
        np.testing.assert_allclose(got["tag_logits"][0], ref.tag_logits, atol=1e-9)


def test_flatbuffer_holds_the_int8_quantization(export):
    s = tflite_export.schema()
    data = export.tflite(10)
    assert data[4:8] == b"TFL3"
    m = s.ModelT.InitFromPackedBuf(bytearray(data), 0)
    g = m.subgraphs[0]
    by_name = {t.name.decode(): t for t in g.tensors}
    codes = {s.BuiltinOperator.CUSTOM: "custom"}
    names = {v: k for k, v in vars(s.BuiltinOperator).items() if isinstance(v, int)}
    used = {names[m.operatorCodes[op.opcodeIndex].builtinCode] for op in g.operators}
    assert used == {"GATHER", "ADD", "SUB", "MUL", "MEAN", "RSQRT", "FULLY_CONNECTED", "RESHAPE", "TRANSPOSE",
                    "BATCH_MATMUL", "SOFTMAX", "TANH", "CUSTOM"}, used
    assert [c.customCode.decode() for c in m.operatorCodes if c.builtinCode in codes] == ["GeluApprox"]
    ids = g.tensors[g.inputs[0]]
    assert list(ids.shape) == [1, 10] and ids.type == s.TensorType.INT32
    assert [list(g.tensors[o].shape) for o in g.outputs] == [[1, 1, LABELS], [1, 10, TAGS]]
    w = by_name["l0.up.w"]                  # per output channel, symmetric
    assert w.type == s.TensorType.INT8 and len(w.quantization.scale) == I and not any(w.quantization.zeroPoint)
    b = by_name["l0.up.b"]                  # int32 at input scale x weight scale
    x_scale = by_name["l0.ln1"].quantization.scale[0]
    np.testing.assert_allclose(b.quantization.scale, x_scale * np.asarray(w.quantization.scale), rtol=1e-6)
    p = by_name["l0.probs"].quantization
    assert (p.scale[0], p.zeroPoint[0]) == (1 / 256, -128)
    t = by_name["pooled"].quantization
    assert (t.scale[0], t.zeroPoint[0]) == (1 / 128, 0)
    assert export.tflite(10) == data        # deterministic


def test_each_tflm_operator_is_the_python_one(export, runner):
    """Every operator TFLM ran (the runner keeps all tensors), recomputed in Python from TFLM's own int8 inputs:
    the same codes, or one step apart where the kernels' fixed-point arithmetic rounds the other way (requantizing
    multipliers, MEAN's integer rescale, RSQRT, the fixed-point softmax)."""
    rng = np.random.default_rng(3)
    exact: dict[str, list[float]] = {}
    for n in (6, 13, 24):
        batch = sentences(rng, n, 6)
        raw, _ = bench_peer.run_host(runner, export.tflite(n), batch, all_tensors=True)
        for ids, row in zip(batch, raw):
            codes = export.split(n, row)
            np.testing.assert_array_equal(codes["ids"][0], ids)
            again = export.replay(n, codes)
            for op in export.graph(n).ops:
                out = op.outputs[0]
                d = np.abs(again[out].astype(int) - codes[out].astype(int))
                assert d.max() <= 1, (n, op.code, out, d.max())
                exact.setdefault(op.code, []).append(float(np.mean(d == 0)))
    assert len(exact) == 13, sorted(exact)
    for code, shares in exact.items():
        assert np.mean(shares) >= 0.8, (code, np.mean(shares))
    for code in ("GATHER", "RESHAPE", "TRANSPOSE", "SUB", "GeluApprox"):    # no rounding of their own here
        assert min(exact[code]) == 1.0, code


def test_tflm_answers_the_python_int8_graph(export, runner):
    """End to end the one-step differences add up through the layers, but TFLM's logits stay a few steps of their
    int8 scale from the Python graph's (a wrong graph is tens of steps off), and its answers the float model's."""
    rng = np.random.default_rng(4)
    for n in (6, 13, 24):
        batch = sentences(rng, n, 24)
        out, arena = bench_peer.run_host(runner, export.tflite(n), batch, LABELS + n * TAGS)
        assert 0 < arena < 200_000
        ref = [export.reference(ids) for ids in batch]
        logits = out[:, :LABELS].astype(int)
        tags = out[:, LABELS:].astype(int).reshape(len(batch), n, TAGS)
        want_l = np.stack([r["logits"].reshape(LABELS) for r in ref]).astype(int)
        want_t = np.stack([r["tag_logits"].reshape(n, TAGS) for r in ref]).astype(int)
        assert np.abs(logits - want_l).mean() <= 4 and np.abs(tags - want_t).mean() <= 4, n
        flt = [int(np.argmax(float_engine.forward(export.fm, ids, gelu="tanh").logits)) for ids in batch]
        assert np.mean(np.argmax(logits, axis=1) == flt) >= 0.75, n


def test_a_damaged_model_is_refused(export, runner, tmp_path):
    data = export.tflite(8)
    with pytest.raises(UserError, match="not a valid .tflite"):
        bench_peer.run_host(runner, data[: len(data) // 2], sentences(np.random.default_rng(4), 8, 1), LABELS)
    with pytest.raises(UserError, match="24 positions"):
        export.tflite(POSITIONS + 1)
