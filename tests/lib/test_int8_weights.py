"""INT8 linear weights (BERTL14_WEIGHTS_INT8): the library built for them against reference/integer.py, both kernel sets --
the kernel bertl14_linear_s8_w8 on random and edge requantizations (every shift of 1..62 around the DSP body's fast
case, sums that do not fit once lifted, s * M >= 2^31, rows whose length is not a multiple of 4), and the whole
encoder on random INT8 models."""
from __future__ import annotations

import ctypes

import numpy as np
import pytest
from randmodel import dummy_vocab, random_quant_model

from bertl14_tools.reference import cengine, integer as R
from bertl14_tools.model import blob as model_format
from bertl14_tools.errors import UserError
from bertl14_tools.model.quant import QLinear

P = ctypes.c_void_p


class Requant(ctypes.Structure):
    _fields_ = [("mult", P), ("shift", P), ("bias", P)]


class LinearDims(ctypes.Structure):
    """bertl14_linear_dims"""
    _fields_ = [("tokens", ctypes.c_uint32), ("inn", ctypes.c_uint32), ("out", ctypes.c_uint32),
                ("y_stride", ctypes.c_uint32)]


def lib8(kernels):
    try:
        lib = cengine.load_library(kernels, weights="int8")
    except UserError as exc:
        pytest.skip(f"C library cannot be built: {exc}")
    lib.bertl14_linear_s8_w8.argtypes = [P, P, P, P, P, P, P]
    return lib


def ptr(a: np.ndarray):
    return a.ctypes.data_as(P)


def block_index(t: int, i: int, tokens: int, n: int) -> int:
    n4 = n & ~3
    return ((i >> 2) * tokens + t) * 4 + (i & 3) if i < n4 else n4 * tokens + t * (n - n4) + (i - n4)


def to_block(rows: np.ndarray) -> np.ndarray:
    tokens, n = rows.shape
    idx = np.array([[block_index(t, i, tokens, n) for i in range(n)] for t in range(tokens)])
    out = np.zeros(tokens * n, rows.dtype)
    out[idx] = rows
    return out


def run_linear(lib, q, s, lin, bits, block_out=False):
    tokens, inn = q.shape
    out = lin.w.shape[0]
    w = np.ascontiguousarray(model_format.swizzle_w8(lin.w))                  # the blob's order
    rq = Requant(ptr(lin.mult), ptr(lin.shift), ptr(lin.bias))
    qb = to_block(q.astype(np.int16))
    if bits == 16:
        y = np.zeros(tokens * out, np.int16)
        dims = LinearDims(tokens, inn, out, 0 if block_out else out)
        lib.bertl14_linear_s8_w8(ctypes.byref(dims), ctypes.byref(rq), ptr(qb), ptr(s), ptr(w), ptr(y), None)
        if block_out:
            idx = np.array([[block_index(t, o, tokens, out) for o in range(out)] for t in range(tokens)])
            return y[idx]
        return y.reshape(tokens, out)
    y = np.zeros((tokens, out), np.int32)
    dims = LinearDims(tokens, inn, out, out)
    lib.bertl14_linear_s8_w8(ctypes.byref(dims), ctypes.byref(rq), ptr(qb), ptr(s), ptr(w), None, ptr(y))
    return y


@pytest.mark.parametrize("kernels", ["portable", "dsp"])
def test_linear_s8(kernels):
    lib = lib8(kernels)
    rng = np.random.default_rng(8)
    for tokens, inn, out in [(4, 384, 62), (1, 64, 62), (3, 36, 62), (4, 30, 62), (6, 20, 62), (2, 4, 62)]:
        for case in range(3):
            # case 0: random; 1: saturated rows (|acc| up to 127 * 127 * in: lifting by 2^(33 - S) overflows);
            # 2: large scales (s * M >= 2^31: the 64-bit formula)
            w = rng.integers(-127, 128, size=(out, inn)).astype(np.int8)
            q = rng.integers(-127, 128, size=(tokens, inn)).astype(np.int8)
            if case == 1:
                w[::2] = 127
                q[:] = np.where(rng.random((tokens, inn)) < 0.9, 127, -127)
            w[1] = 0
            s = rng.integers(1, 1 << 17 if case == 2 else 1 << 12, size=tokens).astype(np.uint32)
            lin = QLinear(w=w, mult=rng.integers(1 << 14, 1 << 15, size=out).astype(np.int16),
                          shift=np.arange(1, out + 1).astype(np.int16),           # every shift 1..62
                          bias=rng.integers(-(1 << 20), 1 << 20, size=out).astype(np.int32))
            for bits in (16, 32):
                want = R.linear_s8_s8(q, s, lin, bits)
                np.testing.assert_array_equal(run_linear(lib, q, s, lin, bits), want,
                                              err_msg=f"{kernels} {tokens}x{inn}x{out} case {case} sat{bits}")
            np.testing.assert_array_equal(run_linear(lib, q, s, lin, 16, block_out=True), R.linear_s8_s8(q, s, lin, 16))


MODELS = {"base": dict(tags=7), "odd_rows": dict(hidden=50, heads_total=5, heads_kept=5, intermediate=70, seed=6)}


@pytest.mark.parametrize("kernels", ["portable", "dsp"])
@pytest.mark.parametrize("name", list(MODELS))
def test_encoder_int8_matches_reference(kernels, name):
    lib8(kernels)
    qm = random_quant_model(weights="int8", **MODELS[name])
    blob = model_format.pack_weights(qm)
    eng = cengine.CLibrary(blob, dummy_vocab(), max_seq_len=qm.max_position, kernels=kernels)
    assert eng.weight_type == "int8"
    rng = np.random.default_rng(5)
    for n in (1, 3, 4, 9):
        ids = [int(i) for i in rng.integers(0, qm.vocab_size, size=n)]
        r = R.encode(qm, ids)
        c = eng.encode(ids)
        np.testing.assert_array_equal(c.hidden, r.hidden, err_msg=f"{name} n={n}: hidden state")
        np.testing.assert_array_equal(c.scales, r.hidden_scale, err_msg=f"{name} n={n}: row scales")
        k = eng.classify()
        np.testing.assert_array_equal(k.logits, r.logits, err_msg=f"{name} n={n}: logits")
        if qm.tagger is not None:
            np.testing.assert_array_equal(eng.tag().tags, r.tags, err_msg=f"{name} n={n}: tags")
    assert len(np.unique(r.hidden)) > 20                  # the model is not degenerate
