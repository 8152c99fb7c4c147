"""Fixtures of the intent-firmware tests; helpers in apphelpers.py."""
from __future__ import annotations

import json
from pathlib import Path

import pytest

from apphelpers import QEMU_TIMEOUT, build_firmware
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
    from bertl14_tools.serial import Device, open_link
    with open_link(qemu=str(firmware), timeout=QEMU_TIMEOUT) as ser:
        dev = Device(ser, QEMU_TIMEOUT)
        dev.read_banner()
        yield dev


@pytest.fixture
def reference(firmware):
    """The Python integer reference on the model the build converted, with the firmware's threshold
    (CONFIG_APP_MIN_SCORE, or the model's own from the converter's manifest when that is -1) and its registry
    (the build's generated/registry/registry.json, CONFIG_APP_REGISTRY_MAX_SLOTS names a sentence, with the label
    domains of the domain rule)."""
    from bertl14_tools.serial import Reference
    config = (firmware.parent / ".config").read_text()
    min_score = int(next(line.split("=")[1] for line in config.splitlines() if line.startswith("CONFIG_APP_MIN_SCORE=")))
    model = firmware.parent / "generated" / "model"
    if min_score < 0:
        min_score = json.loads((model / "manifest.json").read_text())["min_score_milli"]
    table = firmware.parent / "generated" / "registry" / "registry.json"
    data = json.loads(table.read_text(encoding="utf-8")) if table.is_file() else {}
    max_names = next((int(line.split("=")[1]) for line in config.splitlines()
                      if line.startswith("CONFIG_APP_REGISTRY_MAX_SLOTS=")), 0)
    return Reference(model, min_score, data.get("words"), max_names, data.get("label_domains"))
