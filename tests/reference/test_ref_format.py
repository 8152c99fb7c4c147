"""Weights blob and model.bl14 (docs/model-format.md): round trips, the bytes themselves, errors; the
generated C lookup tables are up to date."""
import struct

import numpy as np
import pytest
from ref_util import random_float_model, random_ids

from bertl14_tools.model import float_engine
from bertl14_tools.reference import gen_luts
from bertl14_tools.model import blob as MF
from bertl14_tools.reference import integer as R
from bertl14_tools.errors import UserError
from bertl14_tools.model.quant import QuantOptions, quantize

OPTIONS = [QuantOptions(), QuantOptions(smoothing=False), QuantOptions(embedding="int4", max_seq_len=24),
           QuantOptions(act_scale="per_tensor", smoothing=False)]


@pytest.mark.parametrize("opts", OPTIONS, ids=["default", "nosmooth", "int4", "per_tensor"])
def test_pack_read_round_trip(opts):
    fm = random_float_model(seed=3)
    rng = np.random.default_rng(0)
    calib = random_ids(rng, fm.vocab_size, 8, 20)
    qm = quantize(fm, calib, opts)
    blob = MF.pack_weights(qm)
    assert len(blob) % 4 == 0
    qm2 = MF.read_weights(blob)
    assert MF.pack_weights(qm2) == blob
    for ids in random_ids(rng, fm.vocab_size, 5, qm.max_position):
        a, b = R.encode(qm, ids), R.encode(qm2, ids)
        assert np.array_equal(a.hidden, b.hidden) and np.array_equal(a.hidden_scale, b.hidden_scale)
        assert np.array_equal(a.logits, b.logits) and a.label == b.label and a.score_q16 == b.score_q16
    assert qm2.labels == fm.labels and qm2.embedding == opts.embedding and qm2.act_scale == opts.act_scale


def test_blob_header_and_sections():
    fm = random_float_model(layers=3, seed=4)
    fm.layers = [ly for ly in fm.layers]
    qm = quantize(fm, [[1, 2, 3]], QuantOptions(max_seq_len=16))
    blob = MF.pack_weights(qm)
    w = struct.unpack_from("<4s15I", blob)
    assert w[0] == b"BL14" and w[1] == 2 and w[2:12] == (3, 32, 4, 4, 8, 64, 50, 16, 3, 0b1100)
    assert w[12] == len(blob) and w[13] == 7 + 32 * 3 + 9 and w[14] == 64
    words = struct.unpack(f"<{len(blob) // 4}I", blob)
    assert words[-1] == sum(words[:-1]) % 2**32                       # the checksum word ends the blob
    table = struct.unpack_from(f"<{2 * w[13]}I", blob, 64)
    offsets, sizes = table[0::2], table[1::2]
    assert all(o % 4 == 0 for o in offsets)
    assert sizes[0] == 50 * 32 and sizes[1] == 2 * 50 and sizes[2] == 16 * 32
    layer0 = 7
    assert sizes[layer0 + 1] == 32 * 32 * 2 and sizes[layer0 + 17] == 64 * 32 * 2     # q.w, i.w
    # the word table bytes are the int8 values row-major
    assert blob[offsets[0]:offsets[0] + 32] == qm.word_q[0].astype(np.int8).tobytes()
    labels = blob[offsets[-1]:offsets[-1] + sizes[-1]]
    assert labels == b"intent_0\0intent_1\0intent_2\0"
    assert offsets[-1] + sizes[-1] <= len(blob) - 4


def test_int4_packing_low_nibble_even_channel():
    q = np.array([[1, -2, 7, -7]])
    packed = MF.pack_int4(q)
    assert packed.tolist() == [[0xE1, 0x97]]
    assert MF.unpack_int4(packed).tolist() == q.tolist()


def test_no_classifier_sections_are_empty():
    fm = random_float_model(labels=0, seed=5)
    qm = quantize(fm, [[1, 2, 3, 4]])
    blob = MF.pack_weights(qm)
    n = MF.num_sections(fm.num_layers)
    table = struct.unpack_from(f"<{2 * n}I", blob, 64)
    assert all(s == 0 for s in table[1::2][-9:])
    qm2 = MF.read_weights(blob)
    assert qm2.cls is None and R.encode(qm2, [1, 2]).logits is None


def test_model_file_round_trip_and_errors(tmp_path):
    fm = random_float_model(seed=6)
    blob = MF.pack_weights(quantize(fm, [[3, 4, 5]]))
    vocab = [0, 1, 2**32 - 1, 12345]
    path = tmp_path / "model.bl14"
    MF.write_model_file(path, blob, vocab)
    assert MF.read_model_file(path) == (blob, vocab)
    MF.write_model_file(tmp_path / "b.bl14", blob, np.array(vocab, "<u4").tobytes())
    assert (tmp_path / "b.bl14").read_bytes() == path.read_bytes()
    data = path.read_bytes()
    cases = {"bad magic": b"XXXXXXXX" + data[8:], "truncated": data[:-4],
             "corrupt": data[:100] + bytes([data[100] ^ 1]) + data[101:],
             "version": data[:8] + struct.pack("<I", 9) + data[12:]}
    messages = {"bad magic": "not a bertl14 model file", "truncated": "truncated", "corrupt": "checksum mismatch",
                "version": "version 9"}
    for name, bad in cases.items():
        p = tmp_path / f"{name}.bl14"
        p.write_bytes(bad)
        with pytest.raises(UserError, match=messages[name]):
            MF.read_model_file(p)
    with pytest.raises(UserError, match="cannot read"):
        MF.read_model_file(tmp_path / "missing.bl14")


def test_read_weights_errors():
    fm = random_float_model(seed=7)
    blob = MF.pack_weights(quantize(fm, [[3, 4, 5]]))
    with pytest.raises(UserError, match="bad magic"):
        MF.read_weights(b"ABCD" + blob[4:])
    with pytest.raises(UserError, match="truncated"):
        MF.read_weights(blob[:-8])
    with pytest.raises(UserError, match="version"):
        MF.read_weights(blob[:4] + struct.pack("<I", 9) + blob[8:])


def test_generated_c_luts_up_to_date():
    assert gen_luts.DEFAULT_OUT.read_text() == gen_luts.render(), \
        "bertl14/src/bertl14_luts.c is stale: run python -m bertl14_tools.reference.gen_luts"
    assert R.EXP_LUT[0] == 32768 and R.EXP_LUT[256] == 16384
    assert R.TANH_LUT[0] == 0 and R.TANH_LUT[256] == 32768 and R.ISQRT_LUT[0] == 32768 and R.ISQRT_LUT[192] == 16384


def test_quantize_errors():
    fm = random_float_model(seed=8)
    with pytest.raises(UserError, match="calibration"):
        quantize(fm, [])
    with pytest.raises(UserError, match="max_seq_len"):
        quantize(fm, [[1]], QuantOptions(max_seq_len=fm.max_position + 1))
    with pytest.raises(UserError, match="act_scale"):
        quantize(fm, [[1]], QuantOptions(act_scale="per_row"))
    with pytest.raises(UserError, match="1..16"):
        R.encode(quantize(fm, [[1]], QuantOptions(max_seq_len=16)), list(range(17)))


def test_weight_cap_keeps_accumulator_in_int32():
    fm = random_float_model(hidden=32, intermediate=4096, seed=9)     # wide FFN down: the cap binds
    fm.layers[0].wo2[:] = 0.5
    qm = quantize(fm, [[1, 2, 3]])
    for layer in qm.layers:
        for lin in (layer.q, layer.k, layer.v, layer.o, layer.i, layer.o2):
            assert (127 * np.abs(lin.w.astype(np.int64)).sum(axis=1) < 2**31).all()
            assert ((lin.mult >= 2**14) & (lin.mult < 2**15)).all() and ((lin.shift >= 1) & (lin.shift <= 62)).all()
    assert np.abs(qm.layers[0].o2.w).max() < 32767                                  # capped, not saturated


def test_model_without_layers_is_the_embedding():
    fm = random_float_model(seed=10)
    fm.layers = []
    qm = quantize(fm, [[1, 2, 3]])
    assert qm.num_layers == 0 and qm.heads_kept == fm.num_heads
    assert MF.read_weights(MF.pack_weights(qm)).num_layers == 0
    assert R.encode(qm, [4, 5]).hidden.shape == (2, fm.hidden)


def test_float_engine_errors():
    from bertl14_tools.model.float_engine import forward
    fm = random_float_model(seed=11)
    for ids, msg in (([], "0 tokens"), (list(range(fm.max_position + 1)), "takes 1..40"), ([fm.vocab_size], "vocabulary")):
        with pytest.raises(UserError, match=msg):
            forward(fm, ids)


@pytest.mark.parametrize("labels", [3, 0])
def test_token_classifier_sections_and_round_trip(labels):
    """The optional tagger: flag bit 4, num_tags in header word 15, five sections after the tail (the classifier's
    quantization, Q10 logits from the last hidden rows); a model without it packs as before (word 15 zero)."""
    fm = random_float_model(labels=labels, seed=8)
    plain = MF.pack_weights(quantize(fm, [[1, 2, 3, 4]]))
    rng = np.random.default_rng(2)
    fm.tag_w = (rng.standard_normal((5, fm.hidden)) * 0.5).astype(np.float32)
    fm.tag_b = (rng.standard_normal(5) * 0.1).astype(np.float32)
    fm.tags = ["O", "B-name", "I-name", "B-área", "I-área"]
    qm = quantize(fm, [[1, 2, 3, 4]])
    blob = MF.pack_weights(qm)
    w = struct.unpack_from("<4s15I", blob)
    assert w[11] & MF.FLAG_TAGGER and w[15] == 5 and w[13] == MF.num_sections(fm.num_layers, True)
    assert struct.unpack_from("<4s15I", plain)[15] == 0 and not struct.unpack_from("<4s15I", plain)[11] & MF.FLAG_TAGGER
    assert blob[:64 + 8 * MF.num_sections(fm.num_layers)] != plain[:64]            # header differs, ...
    n = w[13]
    table = struct.unpack_from(f"<{2 * n}I", blob, 64)
    o, s = table[2 * (n - 1)], table[2 * (n - 1) + 1]
    assert blob[o:o + s] == "O\0B-name\0I-name\0B-área\0I-área\0".encode()
    assert table[2 * (n - 5) + 1] == 5 * fm.hidden * 2                                 # tag.w int16 [T][H]
    qm2 = MF.read_weights(blob)
    assert MF.pack_weights(qm2) == blob and qm2.tags == fm.tags and qm2.num_tags == 5
    for ids in random_ids(rng, fm.vocab_size, 6, qm.max_position):
        r = R.encode(qm2, ids)
        assert r.tag_logits.shape == (len(ids), 5) and r.tags.tolist() == np.argmax(r.tag_logits, 1).tolist()
        assert np.array_equal(r.tag_logits, R.encode(qm, ids).tag_logits)
        # the head's own rounding: the float head on the same (dequantized) rows, within a few Q10 steps
        want = r.dequant() @ fm.tag_w.astype(np.float64).T + fm.tag_b
        assert np.abs(r.tag_logits * 2.0 ** -R.F_SM - want).max() < 4 * 2.0 ** -R.F_SM
    assert float_engine.forward(fm, [1, 2, 3]).tag_logits.shape == (3, 5)
    bad = bytearray(blob)
    struct.pack_into("<I", bad, 60, 0)                                                   # num_tags 0, flag set
    with pytest.raises(UserError, match="checksum mismatch"):
        MF.read_weights(bytes(bad))
    with pytest.raises(UserError, match="head flags and num_labels / num_tags disagree"):
        MF.read_weights(MF.reseal(bytes(bad)))
