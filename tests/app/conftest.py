"""Fixtures of the intent-firmware tests; helpers in apphelpers.py."""
from __future__ import annotations

from pathlib import Path

import pytest

from apphelpers import QEMU_TIMEOUT, build_firmware, reference_for
from testsupport import ensure_west_workspace


@pytest.fixture(scope="session", autouse=True)
def west_workspace():
    """The repository must be the manifest of a west workspace (`west init -l`), as `make test` sets up."""
    ensure_west_workspace()


@pytest.fixture(scope="session", params=["none", "freertos"])
def firmware(request, tmp_path_factory) -> Path:
    """firmware.elf of the mps2_an500 build, bare-metal and FreeRTOS."""
    return build_firmware(tmp_path_factory, request.param) / "firmware.elf"


@pytest.fixture
def device(firmware):
    """A fresh boot of the firmware under QEMU (killed afterwards), banner read."""
    from bertl14_tools.device.serial import Device, open_link
    with open_link(qemu=str(firmware), timeout=QEMU_TIMEOUT) as ser:
        dev = Device(ser, QEMU_TIMEOUT)
        dev.read_banner()
        yield dev


@pytest.fixture
def reference(firmware):
    """The Python integer reference for the firmware (apphelpers.reference_for)."""
    return reference_for(firmware)
