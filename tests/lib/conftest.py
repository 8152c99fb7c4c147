"""Fixtures of the C-library tests: host builds of both kernel sets and random integer models packed
with blob.pack_weights (the converter's packer)."""
from __future__ import annotations

import sys
from pathlib import Path

import pytest

sys.path.insert(0, str(Path(__file__).parent))

from bertl14_tools.errors import UserError  # noqa: E402

KERNEL_SETS = ["portable", "dsp"]


def _pack():
    from bertl14_tools.model.blob import pack_weights
    return pack_weights


@pytest.fixture(scope="session")
def pack():
    return _pack()


def _lib(kernels):
    from bertl14_tools.reference import cengine
    try:
        return cengine.load_library(kernels)
    except UserError as exc:
        pytest.skip(f"C library cannot be built: {exc}")


@pytest.fixture(scope="session", params=KERNEL_SETS)
def kernels(request):
    _lib(request.param)
    return request.param


@pytest.fixture(scope="session")
def lib():
    return _lib("portable")
