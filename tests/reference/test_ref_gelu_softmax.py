"""GELU (float and integer) and LUT softmax against their exact values (docs/numerics.md sections 6, 8, 10)."""
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


def test_softmax_row_invariant_under_shift():
    x = np.array([3, -1000, 4000, 4000, 77])
    assert R.softmax_lut_u8(x).tolist() == R.softmax_lut_u8(x + 123456).tolist()


def test_classifier_score():
    label, score = R.classifier_score(np.array([0, 5 << 10, 5 << 10, -(3 << 10)]))
    assert label == 1                                  # first of the tied maxima
    p = 1 / (1 + 1 + math.exp(-5) + math.exp(-8))
    assert abs(score - p * 65536) <= 2
    assert R.score_thousandths(score) == int(p * 1000 + 0.5)
    assert R.classifier_score(np.array([7]))[1] == 65535
