"""GeluApprox on the emulated Cortex-M7 (mps2_an500, QEMU -icount shift=0): flash it adds to a TFLM
image, instructions per element, and the time of a 32 x 512 activation at 480 MHz (1 instruction =
1 cycle). Builds with integrations/tflm/tflm_m7.py (objects cached in ~/.cache/bertl14/tflm/m7)."""
import shutil

import numpy as np
import pytest

from test_tflm_host import gelu_tanh
from testsupport import skip_missing

N = 32 * 512


@pytest.fixture(scope="module")
def m7_report(tflm_sources, make_model):  # skip (fail under CI) when the TFLM sources are absent
    missing = [t for t in ("arm-none-eabi-g++", "arm-none-eabi-size", "qemu-system-arm") if not shutil.which(t)]
    if missing:
        skip_missing(f"{', '.join(missing)} not found (install gcc-arm-none-eabi, libnewlib-arm-none-eabi, "
                     "libstdc++-arm-none-eabi-newlib, qemu-system-arm)")
    import tflm_m7
    images = tflm_m7.build_images(tflm_sources)
    sizes = {k: tflm_m7.size(v) for k, v in images.items()}
    return sizes, tflm_m7.run_qemu(images["with_op"])


def test_flash_added_by_op_at_most_2kb(m7_report):
    sizes, _ = m7_report
    added = sizes["with_op"]["flash"] - sizes["without_op"]["flash"]
    assert 0 < added <= 2048, sizes


def test_float32_32x512_under_1ms_at_480mhz(m7_report):
    _, run = m7_report
    r = run["float32"]
    assert r["status"] == 0 and r["n"] == N, run["log"]
    assert r["ms_at_480MHz_1IPC"] < 1.0, r
    # the image's checksum: sum of trunc(1000 * y) over the ramp x_i = -8 + 16 i / N
    x = (np.float32(-8.0) + np.float32(16.0) * np.arange(N, dtype=np.float32) / np.float32(N)).astype(np.float64)
    expected = np.trunc(1000 * gelu_tanh(x)).sum()
    assert abs(r["sum"] - expected) < 200, (r["sum"], expected)


def test_int8_32x512(m7_report):
    _, run = m7_report
    r = run["int8"]
    assert r["status"] == 0 and r["ms_at_480MHz_1IPC"] < 1.0, r
    q = (np.arange(N) & 0xFF).astype(np.uint8).view(np.int8).astype(np.float64)  # the image's input codes
    expected = np.clip(np.round(gelu_tanh(q * 8 / 127) / (8 / 127)), -128, 127).sum()
    assert abs(r["sum"] - expected) <= N // 256 * 4, (r["sum"], expected)  # a few codes may round apart
