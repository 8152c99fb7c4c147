"""Fixtures of the GeluApprox TFLM tests: the host runner built from the pinned tflite-micro sources, and the
.tflite writer (flatbuffers + the schema bindings of those sources). When the sources, their third-party
headers or the flatbuffers package are absent they skip naming what to get (and fail under CI=true, which
provides them)."""
import sys
from pathlib import Path

import pytest

from testsupport import skip_missing

TFLM_DIR = Path(__file__).resolve().parents[2] / "integrations" / "tflm"
sys.path.insert(0, str(TFLM_DIR))

import make_model as mm  # noqa: E402
import tflm_host  # noqa: E402


@pytest.fixture(scope="session")
def tflm_sources():
    reason = tflm_host.missing_reason()
    if reason:
        skip_missing(reason)
    return tflm_host.find_tflm()


@pytest.fixture(scope="session")
def schema(tflm_sources):
    try:
        return mm.schema()
    except mm.SchemaError as exc:
        skip_missing(f"the .tflite writer cannot run: {exc}")


@pytest.fixture(scope="session")
def make_model(schema):
    """The writer's gelu_model(dtype, shape, ...) -> .tflite bytes."""
    return mm.gelu_model


@pytest.fixture(scope="session")
def runner(tflm_sources):
    return tflm_host.build_runner(tflm_sources)


@pytest.fixture
def run_model(runner):
    """run_model(model_bytes, x, register=True) -> (returncode, output array or None, stdout+stderr)."""
    def run(model: bytes, x, register: bool = True):
        return tflm_host.run_model(model, x, register=register, runner=runner)
    return run
