"""Primitives and row quantization of docs/numerics.md sections 1 and 3."""
import numpy as np

from bertl14_tools.reference import integer as R


def _rsr_py(x: int, n: int) -> int:
    return (x + (1 << (n - 1))) >> n if n > 0 else (x << -n if n < 0 else x)


def test_rsr_matches_definition_scalar_and_per_channel():
    rng = np.random.default_rng(1)
    x = rng.integers(-2**40, 2**40, 2000)
    n = rng.integers(-6, 30, 2000)
    got = R.rsr(x, n)
    assert [int(v) for v in got] == [_rsr_py(int(a), int(b)) for a, b in zip(x, n)]
    assert int(R.rsr(-3, 1)) == -1 and int(R.rsr(3, 1)) == 2 and int(R.rsr(-5, 1)) == -2   # half up
    assert int(R.rsr(7, 0)) == 7 and int(R.rsr(7, -2)) == 28


def test_div_round_and_bit_length():
    assert [int(R.div_round(a, 4)) for a in (-7, -6, -5, 5, 6, 7)] == [-2, -2, -1, 1, 2, 2]
    v = np.array([1, 2, 3, 2**14, 2**16 - 1, 2**16, 2**53 - 1, 2**53 + 1, 2**62 - 1, 2**62])
    assert list(R.bit_length(v)) == [int(x).bit_length() for x in v]


def test_quantize_row_s8_bounds_and_error():
    rng = np.random.default_rng(2)
    for n in (1, 7, 384, 1536):
        x = rng.integers(-32767, 32768, (50, n))
        x[0] = 0
        x[1, :] = 32767
        x[2, :] = -32767
        q, s = R.quantize_row_s8(x)
        assert q.min() >= -127 and q.max() <= 127
        assert s.min() >= 1 and s.max() < 2**17
        assert s[0] == 1 and not q[0].any()
        # dequantized value q*s/256 within half a step (plus the inv rounding) of x
        err = np.abs(q * s[:, None] / 256.0 - x)
        assert (err <= s[:, None] / 512.0 + 1.0).all()


def test_quantize_tensor_uses_one_scale():
    x = np.array([[1000, -20], [3, 4]])
    q, s = R.quantize_tensor_s8(x)
    assert s[0] == s[1] == (256 * 1000 + 126) // 127
    assert q[1].tolist() == [0, 1]
