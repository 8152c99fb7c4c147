"""Each C kernel (portable and DSP bodies) against its reference/integer.py twin on random and edge inputs,
called directly through ctypes (the host shared library exports the internal kernels)."""
from __future__ import annotations

import ctypes

import numpy as np
import pytest

from bertl14_tools.reference import cengine, integer as R
from bertl14_tools.model.quant import QLayerNorm, QLinear

P = ctypes.c_void_p


def lib_for(kernels):
    lib = cengine.load_library(kernels)
    lib.bertl14_quantize_row_s16.restype = ctypes.c_uint32
    lib.bertl14_quantize_row_s16.argtypes = [P, ctypes.c_uint32, P, P]
    lib.bertl14_softmax_s32.argtypes = [P, ctypes.c_uint32, ctypes.c_int32, P]
    lib.bertl14_gelu_s16.argtypes = [P, ctypes.c_uint32, ctypes.c_int32]
    lib.bertl14_layernorm_s32.argtypes = [P, P, ctypes.c_uint32, P]
    lib.bertl14_linear_s8_w16.argtypes = [P, P, P, P, P, P, P]
    lib.bertl14_widen_s8.argtypes = [P, ctypes.c_uint32, P]
    lib.bertl14_widen_block_s8.argtypes = [P, ctypes.c_uint32, ctypes.c_uint32, P]
    lib.bertl14_quantize_row_block_s16.restype = ctypes.c_uint32
    lib.bertl14_quantize_row_block_s16.argtypes = [P, ctypes.c_uint32, P, P, ctypes.c_uint32, ctypes.c_uint32]
    lib.bertl14_quantize_block_s16.restype = ctypes.c_uint32
    lib.bertl14_quantize_block_s16.argtypes = [P, ctypes.c_uint32, ctypes.c_uint32, ctypes.c_uint32]
    lib.bertl14_gelu_smooth_block_s16.argtypes = [P, P, ctypes.c_uint32, ctypes.c_uint32, ctypes.c_int32]
    lib.bertl14_gelu_quantize_block_s16.argtypes = [P, P, ctypes.c_uint32, ctypes.c_uint32, ctypes.c_int32, P]
    return lib


def block_index(t: int, i: int, tokens: int, n: int) -> int:
    """bertl14_block_index: chunk i//4 of token t at (i//4 * tokens + t) * 4, the n % 4 tail densely after."""
    n4 = n & ~3
    return ((i >> 2) * tokens + t) * 4 + (i & 3) if i < n4 else n4 * tokens + t * (n - n4) + (i - n4)


def to_block(rows: np.ndarray) -> np.ndarray:
    """Row-major [tokens][n] -> the block layout (flat)."""
    tokens, n = rows.shape
    out = np.zeros(tokens * n, rows.dtype)
    for t in range(tokens):
        for i in range(n):
            out[block_index(t, i, tokens, n)] = rows[t, i]
    return out


def from_block(flat: np.ndarray, tokens: int, n: int) -> np.ndarray:
    idx = np.array([[block_index(t, i, tokens, n) for i in range(n)] for t in range(tokens)])
    return flat[idx]


def ptr(a: np.ndarray):
    return a.ctypes.data_as(P)


def test_quantize_row(kernels):
    lib = lib_for(kernels)
    rng = np.random.default_rng(0)
    rows = [np.zeros(7, np.int16), np.full(5, -32768 + 1, np.int16), np.array([32767, -32767, 1], np.int16)]
    rows += [rng.integers(-32767, 32768, size=n).astype(np.int16) for n in (1, 2, 31, 384, 1536)]
    rows += [rng.integers(-3, 4, size=64).astype(np.int16)]
    for x in rows:
        q8 = np.zeros(len(x), np.int8)
        q16 = np.zeros(len(x), np.int16)
        s = lib.bertl14_quantize_row_s16(ptr(x), len(x), ptr(q8), ptr(q16))
        rq, rs = R.quantize_row_s8(x[None, :])
        assert s == int(rs[0])
        np.testing.assert_array_equal(q8, rq[0])
        np.testing.assert_array_equal(q16, rq[0])


def test_widen(kernels):
    lib = lib_for(kernels)
    x = np.arange(-128, 128, dtype=np.int8)[::-1].copy()
    for n in (1, 3, 4, 5, 255, 256):
        y = np.zeros(n, np.int16)
        lib.bertl14_widen_s8(ptr(x), n, ptr(y))
        np.testing.assert_array_equal(y, x[:n])


@pytest.mark.parametrize("n", [1, 2, 3, 5, 8, 64, 511, 512])
def test_softmax(kernels, n):
    lib = lib_for(kernels)
    rng = np.random.default_rng(n)
    cases = [rng.integers(-(1 << 14), 1 << 14, size=n), np.zeros(n, np.int64),
             rng.integers(-(1 << 20), 1 << 20, size=n), np.full(n, 2**31 - 1),
             np.where(np.arange(n) % 2, -2**31, 2**31 - 1)]
    for x in cases:
        x = np.asarray(x, np.int32)
        scores = x.copy()
        p = np.zeros(n, np.uint8)
        lib.bertl14_softmax_s32(ptr(scores), n, int(x.max()), ptr(p))
        np.testing.assert_array_equal(p, R.softmax_lut_u8(x.astype(np.int64)[None, :])[0])
        np.testing.assert_array_equal(scores, R.exp_q22(x.astype(np.int64), int(x.max())))   # the scratch: e_u


@pytest.mark.parametrize("f", [0, 5, 9, 12])
def test_gelu_every_int16(kernels, f):
    lib = lib_for(kernels)
    x = np.arange(-32768, 32768, dtype=np.int16)
    y = x.copy()
    lib.bertl14_gelu_s16(ptr(y), len(y), f)
    np.testing.assert_array_equal(y, R.gelu_tanh_lut_s16(x, f))


def test_layernorm(kernels):
    lib = lib_for(kernels)
    rng = np.random.default_rng(3)
    for h, amp, eps in [(384, 1 << 21, 1), (64, 3, 1 << 20), (8, 0, 1), (128, 1 << 22, 5)]:
        r = rng.integers(-amp, amp + 1, size=h).astype(np.int32)
        gamma = rng.integers(-32767, 32768, size=h).astype(np.int16)
        beta = rng.integers(-4000, 4000, size=h).astype(np.int32)
        ln = QLayerNorm(gamma=gamma, beta=beta, f_g=15, f_out=10, eps_q=eps)
        y = np.zeros(h, np.int16)
        params = LayerNormParams(ptr(gamma), ptr(beta), eps, 12 + 15 - 10, 10)
        lib.bertl14_layernorm_s32(ctypes.byref(params), ptr(r), h, ptr(y))
        np.testing.assert_array_equal(y, R.layernorm_s16(r[None, :], ln, 18)[0])


class Requant(ctypes.Structure):
    _fields_ = [("mult", P), ("shift", P), ("bias", P)]


class LinearDims(ctypes.Structure):
    """bertl14_linear_dims"""
    _fields_ = [("tokens", ctypes.c_uint32), ("inn", ctypes.c_uint32), ("out", ctypes.c_uint32),
                ("y_stride", ctypes.c_uint32)]


class AttnParams(ctypes.Structure):
    """bertl14_attn_params"""
    _fields_ = [("n", ctypes.c_uint32), ("d", ctypes.c_uint32), ("score_shift", ctypes.c_int32)]


class LayerNormParams(ctypes.Structure):
    """bertl14_layernorm_params"""
    _fields_ = [("gamma", P), ("beta", P), ("eps_q", ctypes.c_int64), ("g_shift", ctypes.c_int32),
                ("f_out", ctypes.c_int32)]


@pytest.mark.parametrize("tokens,inn,out", [(1, 64, 16), (4, 384, 32), (7, 30, 9), (9, 1536, 8), (3, 3, 3)])
@pytest.mark.parametrize("bits", [16, 32])
def test_linear(kernels, tokens, inn, out, bits):
    lib = lib_for(kernels)
    rng = np.random.default_rng(tokens * inn + out)
    w = rng.integers(-32768, 32768, size=(out, inn)).astype(np.int16)
    w[0] = 0 if out > 1 else w[0]
    lin = QLinear(w=w, mult=rng.integers(1 << 14, 1 << 15, size=out).astype(np.int16),
                  shift=rng.integers(30, 50, size=out).astype(np.int16),
                  bias=rng.integers(-(1 << 20), 1 << 20, size=out).astype(np.int32))
    q = rng.integers(-127, 128, size=(tokens, inn)).astype(np.int16)
    s = rng.integers(1, 1 << 17, size=tokens).astype(np.uint32)
    rq = Requant(ptr(lin.mult), ptr(lin.shift), ptr(lin.bias))
    qb = to_block(q)                                           # the kernel's input layout
    if bits == 16:
        y = np.zeros((tokens, out), np.int16)
        lib.bertl14_linear_s8_w16(ctypes.byref(LinearDims(tokens, inn, out, out)), ctypes.byref(rq), ptr(qb), ptr(s),
                                  ptr(w), ptr(y), None)
        yb = np.zeros(tokens * out, np.int16)                  # y_stride 0: output in the block layout
        lib.bertl14_linear_s8_w16(ctypes.byref(LinearDims(tokens, inn, out, 0)), ctypes.byref(rq), ptr(qb), ptr(s),
                                  ptr(w), ptr(yb), None)
        np.testing.assert_array_equal(from_block(yb, tokens, out), y)
    else:
        y = np.zeros((tokens, out), np.int32)
        lib.bertl14_linear_s8_w16(ctypes.byref(LinearDims(tokens, inn, out, out)), ctypes.byref(rq), ptr(qb), ptr(s),
                                  ptr(w), None, ptr(y))
    np.testing.assert_array_equal(y, R.linear_s8_s16(q, s, lin, bits))


@pytest.mark.parametrize("tokens,n", [(1, 7), (3, 64), (4, 30), (4, 257), (2, 3)])
def test_block_layout_kernels(kernels, tokens, n):
    lib = lib_for(kernels)
    rng = np.random.default_rng(tokens * 1000 + n)
    rows8 = rng.integers(-128, 128, size=(tokens, n)).astype(np.int8)
    blk = np.zeros(tokens * n, np.int16)
    lib.bertl14_widen_block_s8(ptr(rows8), tokens, n, ptr(blk))
    np.testing.assert_array_equal(blk, to_block(rows8.astype(np.int16)))
    x = rng.integers(-32767, 32768, size=(tokens, n)).astype(np.int16)
    x[0, : n // 2] = 0
    rq, rs = R.quantize_row_s8(x)
    blk = np.zeros(tokens * n, np.int16)
    for t in range(tokens):                                    # one contiguous row into the block
        q8 = np.zeros(n, np.int8)
        assert lib.bertl14_quantize_row_block_s16(ptr(x[t].copy()), n, ptr(q8), ptr(blk), t, tokens) == rs[t]
        np.testing.assert_array_equal(q8, rq[t])
    np.testing.assert_array_equal(from_block(blk, tokens, n), rq)
    blk = to_block(x)                                          # in place inside the block
    for t in range(tokens):
        assert lib.bertl14_quantize_block_s16(ptr(blk), n, t, tokens) == rs[t]
    np.testing.assert_array_equal(from_block(blk, tokens, n), rq)
    ism = rng.integers(1, 65536, size=n).astype(np.uint16)
    blk = to_block(x)                                          # GELU + smoothing, one pass
    lib.bertl14_gelu_smooth_block_s16(ptr(blk), ptr(ism), n, tokens, 9)
    np.testing.assert_array_equal(from_block(blk, tokens, n), R.smooth_s16(R.gelu_tanh_lut_s16(x, 9), ism))
    g = R.smooth_s16(R.gelu_tanh_lut_s16(x, 9), ism)           # ... then the row quantization, max from that pass
    gq, gs = R.quantize_row_s8(g)
    blk, scale = to_block(x), np.zeros(tokens, np.uint32)
    lib.bertl14_gelu_quantize_block_s16(ptr(blk), ptr(ism), n, tokens, 9, ptr(scale))
    np.testing.assert_array_equal(from_block(blk, tokens, n), gq)
    np.testing.assert_array_equal(scale, gs)


def blocks4(rows: np.ndarray) -> np.ndarray:
    """Rows [r][len] -> blocks of four rows (bertl14_block4_index; the rows padded to a multiple of 4 with zeros)."""
    r, n = rows.shape
    out = np.zeros((r + 3) // 4 * 4 * n, np.int16)
    for i in range(r):
        for c in range(n):
            out[(i & ~3) * n + block_index(i & 3, c, 4, n)] = rows[i, c]
    return out


@pytest.mark.parametrize("nq,n,d,shift", [(4, 32, 32, 32), (3, 7, 32, 31), (1, 1, 4, 36), (2, 33, 16, 40),
                                          (4, 130, 5, 32), (4, 20, 32, 20)])
def test_attn_scores_blocks(kernels, nq, n, d, shift):
    lib = lib_for(kernels)
    lib.bertl14_attn_scores_s8.argtypes = [P, P, P, ctypes.c_uint32, P, P, ctypes.c_uint32, P, P]
    rng = np.random.default_rng(n * 100 + d)
    npad = (n + 15) & ~15
    q8 = rng.integers(-128, 128, size=(nq, d))
    k8 = rng.integers(-128, 128, size=(n, d))
    sq = rng.integers(1, 30000, nq).astype(np.uint32)
    sk = np.zeros(npad, np.uint32)
    sk[:n] = rng.integers(1, 66000 if d == 16 else 30000, n)            # d 16: some products beyond 31 bits
    q = blocks4(np.vstack([q8, np.zeros((4 - nq, d), np.int64)]))
    k = blocks4(k8)
    scores, mx = np.zeros(4 * npad, np.int32), np.zeros(4, np.int32)
    ap = AttnParams(n, d, shift)
    lib.bertl14_attn_scores_s8(ctypes.byref(ap), ptr(q), ptr(sq), nq, ptr(k), ptr(sk), int(sk[:n].max()),
                               ptr(scores), ptr(mx))
    want = R.sat(R.rsr(R.imatmul(q8, k8.T) * (sq.astype(np.int64)[:, None] * sk[:n].astype(np.int64)[None, :]),
                       shift), 32)
    np.testing.assert_array_equal(scores.reshape(4, npad)[:nq, :n], want)
    np.testing.assert_array_equal(mx[:nq], want.max(axis=1))


@pytest.mark.parametrize("nq,n,d,wide", [(1, 1, 4, False), (4, 7, 32, False), (3, 33, 16, True), (2, 64, 30, False),
                                         (4, 130, 5, True)])
def test_attn_context_blocks(kernels, nq, n, d, wide):
    lib = lib_for(kernels)
    lib.bertl14_attn_context_s8.argtypes = [P, P, ctypes.c_uint32, P, P, ctypes.c_uint32, P, P, ctypes.c_uint32]
    rng = np.random.default_rng(n * 100 + d)
    npad = (n + 15) & ~15
    p = rng.integers(0, 256, size=(4, npad)).astype(np.uint8)     # beyond n: what the kernel must ignore
    sv = rng.integers(1, 131072 if wide else 30000, npad).astype(np.uint32)   # weights of 17 bits, or int16 ones
    sv[n:] = 0                                                             # the padded keys' scales
    v8 = rng.integers(-128, 128, size=(n, d))
    vt = np.zeros((d, npad), np.int64)
    vt[:, :n] = v8.T
    vt[:, n:] = rng.integers(-128, 128, size=(d, npad - n))                # beyond n: any finite value
    v = blocks4(vt)
    w, out = np.zeros(4 * npad, np.int16), np.full((4, d + 2), 0x55, np.int16)
    ap = AttnParams(n, d, 0)
    lib.bertl14_attn_context_s8(ctypes.byref(ap), ptr(p), nq, ptr(v), ptr(sv), int(sv[:n].max()), ptr(w), ptr(out),
                                d + 2)
    np.testing.assert_array_equal(out[:nq, :d], R.attn_context_s8(p[:nq, :n], v8, sv[:n]))
    assert (out[:nq, d:] == 0x55).all() and (out[nq:] == 0x55).all()
