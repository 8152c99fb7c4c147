"""Integer LayerNorm (docs/numerics.md section 7) against float LayerNorm of the same integers."""
import numpy as np
import pytest

from bertl14_tools.reference import integer as R
from bertl14_tools.model.float_engine import layer_norm
from bertl14_tools.model.quant import quantize_layernorm


@pytest.mark.parametrize("h,f_r,scale", [(32, 18, 1.0), (384, 17, 3.0), (384, 12, 100.0), (768, 20, 0.5),
                                         (64, 22, 0.001), (384, 8, 40.0)])
def test_layernorm_matches_float_within_lsb(h, f_r, scale):
    """Rows with the resolution the converter gives residuals (F_r puts max|r| near 2^22): the integer
    mean and variance are then exact enough that the output is within 1.5 LSB of float LayerNorm."""
    rng = np.random.default_rng(h + f_r)
    gamma = 1.0 + rng.standard_normal(h) * 0.2
    beta = rng.standard_normal(h) * 0.1
    ln = quantize_layernorm(gamma, beta, 1e-12, f_r)
    g_real, b_real = ln.gamma * 2.0 ** -ln.f_g, ln.beta * 2.0 ** -ln.f_out     # what the integers hold
    r = np.round(rng.standard_normal((200, h)) * scale * 2.0 ** f_r)
    r[0, :5] *= 30                                                              # outlier channels
    r = np.clip(r, -2**22, 2**22).astype(np.int64)
    got = R.layernorm_s16(r, ln, f_r)
    want = layer_norm(r * 2.0 ** -f_r, g_real, b_real, 1e-12) * 2.0 ** ln.f_out
    assert np.abs(got - want).max() <= 1.5


def test_layernorm_bound_prevents_saturation():
    """f_out is chosen from |gamma| sqrt(H-1) + |beta|: a one-hot row (the largest |n|) fits int16."""
    h, f_r = 384, 16
    gamma = np.full(h, 2.5)
    beta = np.full(h, 0.3)
    ln = quantize_layernorm(gamma, beta, 1e-12, f_r)
    r = np.zeros((2, h), np.int64)
    r[0, 7] = 1 << 21
    r[1, 7] = -(1 << 21)
    y = R.layernorm_s16(r, ln, f_r)
    want = layer_norm(r * 2.0 ** -f_r, ln.gamma * 2.0 ** -ln.f_g, ln.beta * 2.0 ** -ln.f_out, 1e-12) * 2.0 ** ln.f_out
    assert np.abs(y - want).max() <= 1.5 and np.abs(y).max() < 32767


def test_layernorm_constant_row_gives_beta():
    ln = quantize_layernorm(np.ones(16), np.linspace(-1, 1, 16), 1e-12, 10)
    y = R.layernorm_s16(np.full((1, 16), 12345), ln, 10)
    assert (y[0] == ln.beta).all()
