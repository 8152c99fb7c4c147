"""GELU (float and integer) and LUT softmax against their exact values (docs/numerics.md sections 6, 8, 10): the
attention softmax (numerics v1.2, exp_q22) and the classifier score (v1.1, exp_q23)."""
import math

import numpy as np
import pytest

from bertl14_tools.reference import integer as R
from bertl14_tools.model.float_engine import gelu_erf, gelu_tanh

SEED_X = [-2.0, -1.0, 0.0, 1.0, 2.0]
SEED_ERF = [-0.0455, -0.1587, 0.0, 0.8413, 1.9545]        # the seed's listed values (erf GELU)
SEED_TANH = [-0.0454, -0.1588, 0.0, 0.8412, 1.9546]       # the tanh formula, 4 decimals


def test_float_gelu_tanh_within_1e3_of_erf_on_minus8_8():
    x = np.linspace(-8, 8, 160001)
    assert np.abs(gelu_tanh(x) - gelu_erf(x)).max() < 1e-3


def test_float_gelu_seed_values():
    assert np.abs(gelu_tanh(SEED_X) - SEED_ERF).max() < 1e-3
    assert np.abs(gelu_erf(SEED_X) - SEED_ERF).max() < 1e-4
    assert np.abs(gelu_tanh(SEED_X) - SEED_TANH).max() < 1e-4


def _half_up(v):
    return np.floor(np.asarray(v, np.float64) + 0.5)


@pytest.mark.parametrize("f", range(0, 13))
def test_integer_gelu_within_one_lsb_for_every_int16(f):
    x = np.arange(-32768, 32768)
    exact = np.clip(_half_up(gelu_tanh(x * 2.0 ** -f) * 2.0 ** f), -32768, 32767)
    got = R.gelu_tanh_lut_s16(x, f)
    assert got.min() >= -32768 and got.max() <= 32767
    assert np.abs(got - exact).max() <= 1


def test_integer_gelu_rejects_unsupported_exponent():
    with pytest.raises(ValueError):
        R.gelu_tanh_lut_s16(np.array([1]), 13)


def _exact_softmax_q8(x):
    x = np.asarray(x, np.float64) * 2.0 ** -10
    e = np.exp(x - x.max(-1, keepdims=True))
    return np.minimum(255, _half_up(256 * e / e.sum(-1, keepdims=True)))


def _random_rows(rng, count):
    """Rows as attention produces them: int32 Q10 scores, length 1..512, spreads from 16 LSB to 2^20."""
    for it in range(count):
        n = int(rng.integers(1, 513))
        spread = int(rng.choice([16, 1024, 8192, 12000, 20000, 1 << 20]))
        kind = it % 4
        if kind == 0:      # uniform
            x = rng.integers(-spread, spread + 1, n)
        elif kind == 1:    # clustered on a coarse grid (many ties)
            x = rng.integers(0, 64, n) * (spread // 64 + 1)
        elif kind == 2:    # one dominant score
            x = rng.integers(-spread, 1, n)
            x[rng.integers(n)] = spread
        else:              # gaussian
            x = np.round(rng.normal(0, spread / 4, n)).astype(np.int64)
        yield np.clip(x + int(rng.integers(-2**30, 2**30)), -2**31, 2**31 - 1)


def test_softmax_within_one_lsb_random_rows():
    rng = np.random.default_rng(3)
    worst = 0
    for x in _random_rows(rng, 1500):
        got = R.softmax_lut_u8(x)
        assert got.min() >= 0 and got.max() <= 255
        worst = max(worst, int(np.abs(got - _exact_softmax_q8(x)).max()))
    assert worst <= 1


EDGE_ROWS = [
    [5], [0, 0], [7] * 512, [0, 8192], [0, 8191], [0, 8193], [2**31 - 1, -2**31], [0, 8192, 8192],
    [0] + [-8192] * 511, [0] + [-8193] * 511, [0] + [-int(16.6 * 1024)] * 511, [0] + [-17000] * 511,
    [0, -1] * 256, [100, 100, -2**31] * 10, list(range(0, 512 * 64, 64)),
]


@pytest.mark.parametrize("row", EDGE_ROWS, ids=range(len(EDGE_ROWS)))
def test_softmax_edge_rows(row):
    x = np.array(row, np.int64)
    assert np.abs(R.softmax_lut_u8(x) - _exact_softmax_q8(x)).max() <= 1


def test_softmax_within_0p6_lsb_of_unrounded_float_and_unbiased():
    """|p - 256 softmax| <= 0.6 (rounding 0.5, the exp's 2^(1/256) steps the rest), and no drift against the
    exactly rounded softmax (rounding half up of each p, not a truncation, keeps the mean error ~0, not ~-0.5)."""
    rng = np.random.default_rng(5)
    err, count, worst = 0.0, 0, 0.0
    for x in _random_rows(rng, 600):
        xf = x.astype(np.float64) * 2.0 ** -10
        e = np.exp(xf - xf.max())
        p = R.softmax_lut_u8(x)
        worst = max(worst, float(np.abs(p - np.minimum(255, 256 * e / e.sum())).max()))
        err, count = err + float((p - _exact_softmax_q8(x)).sum()), count + p.size
    assert worst <= 0.6
    assert abs(err / count) < 0.01


def test_exp_q22_error_bound():
    """|e - 2^22 exp(x - max)| <= 0.0028 * 2^22 exp(x - max) + 1: the index steps of 2^(1/256) (+-0.271 %, the
    SMMLS phase included), the table's Q15 rounding and the shift's floor (< 1); e = 2^22 at the maximum."""
    rng = np.random.default_rng(6)
    xm = rng.integers(-2**31, 2**31, 100000)
    d = np.concatenate([rng.integers(0, 1 << 15, 80000), rng.integers(0, 2**32, 20000)])
    keep = xm - d >= -2**31
    xm, d = xm[keep], d[keep]
    e = R.exp_q22(xm - d, xm)
    exact = 2.0 ** 22 * np.exp(-d / 1024.0)
    assert np.all(np.abs(e - exact) <= 0.0028 * exact + 1)
    assert np.all(R.exp_q22(xm, xm) == 1 << 22)
    assert R.exp_q22(np.array([-2**31]), np.array([2**31 - 1]))[0] == 0          # the widest gap: no overflow


@pytest.mark.parametrize("n", [1, 2, 3, 7, 64, 100, 255, 256, 257, 511, 512])
def test_softmax_all_equal_rows(n):
    """n equal scores (anywhere in int32): every p the same, round(256 / n) within 1, their sum within n/2 of 256."""
    for v in (0, -2**31, 2**31 - 1, 12345):
        p = R.softmax_lut_u8(np.full(n, v, np.int64))
        assert len(set(p.tolist())) == 1
        assert abs(int(p[0]) - min(255, int(_half_up(256 / n)))) <= 1
        assert abs(int(p.sum()) - 256) <= n / 2 + 1


def test_softmax_one_score_and_extremes():
    for v in (0, 1, -1, 2**31 - 1, -2**31):
        assert R.softmax_lut_u8(np.array([v])).tolist() == [255]
    x = np.full(512, -2**31, np.int64)
    x[100] = 2**31 - 1                                  # spread 2^32 - 1: one takes all
    p = R.softmax_lut_u8(x)
    assert p[100] == 255 and p.sum() == 255
    x = np.array([2**31 - 1, 2**31 - 1 - 710, -2**31], np.int64)   # ln 2 apart at the top of the range
    assert np.abs(R.softmax_lut_u8(x) - _exact_softmax_q8(x)).max() <= 1


@pytest.mark.parametrize("n", [512])
def test_softmax_512_rows_within_one_lsb(n):
    rng = np.random.default_rng(7)
    for spread in (16, 1024, 8192, 20000, 1 << 20, 2**31 - 1):
        x = rng.integers(-spread, spread, n)
        assert np.abs(R.softmax_lut_u8(x) - _exact_softmax_q8(x)).max() <= 1


def test_softmax_shift_moves_a_row_by_at_most_one_lsb():
    """v1.2 depends on the maximum through the phase of its product with log2(e) (the SMMLS), so a shift of every
    score may move a probability by 1 LSB, never more."""
    rng = np.random.default_rng(8)
    for x in _random_rows(rng, 300):
        s = int(rng.integers(-5000, 5000))
        if -2**31 <= x.min() + s and x.max() + s < 2**31:
            assert np.abs(R.softmax_lut_u8(x + s) - R.softmax_lut_u8(x)).max() <= 1


def test_classifier_score():
    label, score = R.classifier_score(np.array([0, 5 << 10, 5 << 10, -(3 << 10)]))
    assert label == 1                                  # first of the tied maxima
    p = 1 / (1 + 1 + math.exp(-5) + math.exp(-8))
    assert abs(score - p * 65536) <= 2
    assert R.score_thousandths(score) == int(p * 1000 + 0.5)
    assert R.classifier_score(np.array([7]))[1] == 65535
