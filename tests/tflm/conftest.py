"""Fixtures for the GeluApprox TFLM tests: skip (naming what is missing and how to get it) when the
TFLM sources, their third-party headers or the pinned tflite-micro runtime are absent."""
import subprocess
import sys
from pathlib import Path

import numpy as np
import pytest

TFLM_DIR = Path(__file__).resolve().parents[2] / "integrations" / "tflm"
sys.path.insert(0, str(TFLM_DIR))

import tflm_host  # noqa: E402


@pytest.fixture(scope="session")
def op_lib():
    reason = tflm_host.missing_reason()
    if reason:
        pytest.skip(reason)
    return tflm_host.build_op_library()


@pytest.fixture(scope="session")
def runtime_python():
    python, why = tflm_host.find_runtime_python()
    if python is None:
        pytest.skip(why)
    return python


@pytest.fixture
def run_model(op_lib, runtime_python, tmp_path):
    """run_model(model_bytes, x, register=True) -> (returncode, output array or None, stdout+stderr)."""
    def run(model: bytes, x: np.ndarray, register: bool = True):
        model_path, x_path, y_path = tmp_path / "m.tflite", tmp_path / "x.npy", tmp_path / "y.npy"
        model_path.write_bytes(model)
        np.save(x_path, x)
        cmd = [runtime_python, str(TFLM_DIR / "run_tflm.py"), "--model", str(model_path),
               "--input", str(x_path), "--output", str(y_path)]
        if register:
            cmd += ["--op-lib", str(op_lib)]
        r = subprocess.run(cmd, capture_output=True, text=True, timeout=120)
        y = np.load(y_path) if r.returncode == 0 else None
        return r.returncode, y, r.stdout + r.stderr
    return run


@pytest.fixture(scope="session")
def make_model():
    """The writer's gelu_model(); it needs only the flatbuffers schema of any tflite-micro build."""
    try:
        import make_model as mm
        mm._schema()
    except (ImportError, SystemExit) as exc:
        pytest.skip(f"the .tflite writer needs the tflite-micro package (pip install tflite-micro): {exc}")
    return mm.gelu_model
