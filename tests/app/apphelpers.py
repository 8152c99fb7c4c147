"""Helpers of the intent-firmware tests: build app/ for mps2_an500 or another emulated board (bare-metal always,
FreeRTOS when its module is present), boot it under QEMU, talk to it with bertl14_tools.device.serial."""
from __future__ import annotations

import json
import os
import shutil
from pathlib import Path

import pytest

from testsupport import REPO, require_arm, require_modules, skip_missing, west  # noqa: F401  (re-exported)
QEMU_TIMEOUT = 60


def public_data(name: str = "en.jsonl") -> Path:
    base = Path(os.environ.get("BERTL14_TEST_DATA") or REPO.parent / "shared" / "data" / "ha-intents-tests")
    path = base / name
    if not path.is_file():
        pytest.skip(f"public test data {path} not present (set BERTL14_TEST_DATA to the ha-intents-tests folder)")
    return path


def public_sentences(n: int) -> list[dict]:
    rows = [json.loads(line) for line in public_data().read_text(encoding="utf-8").splitlines() if line.strip()]
    return rows[:n]


_builds: dict[tuple, Path] = {}


def build_firmware(tmp_factory, rtos: str, *options: str, board: str = "mps2_an500") -> Path:
    """app/ for `board` (an emulated one, or `host`: the PC, stdin/stdout as the UART) with the default model and
    these extra -D options (built once a combination); rtos 'none' builds with no module reachable."""
    key = (board, rtos, *options)
    if key in _builds:
        return _builds[key]
    if board == "host":
        if not shutil.which("cmake"):
            skip_missing("cmake not installed (make test installs it)")
    else:
        require_arm(board)
    d = tmp_factory.mktemp(f"app-{board}-{rtos}") / "build"
    if rtos == "freertos":
        require_modules("rtos/FreeRTOS-Kernel")
        proc = west("build", "-b", board, "-p", "-d", str(d), "app", "--", "-DCONFIG_APP_RTOS_FREERTOS=y",
                    *options)
    else:
        empty = tmp_factory.mktemp("no-modules")
        proc = west("build", "-b", board, "-p", "-d", str(d), "app", "--", "-DCONFIG_APP_RTOS_NONE=y",
                    *options, env={"BERTL14_MODULES_DIR": str(empty)})
    assert proc.returncode == 0, proc.stdout[-3000:] + proc.stderr[-3000:]
    _builds[key] = d
    return d


def reference_for(firmware: Path):
    """The Python integer reference on the model the build converted, with the firmware's thresholds
    (CONFIG_APP_MIN_SCORE and CONFIG_APP_MIN_SCORE_NAMED, or the model's own from the converter's manifest where
    -1) and its registry (the build's generated/registry/registry.json, CONFIG_APP_REGISTRY_MAX_SLOTS names a
    sentence, with the label domains of the domain rule)."""
    from bertl14_tools.device.serial import Reference
    config = (firmware.parent / ".config").read_text()
    model = firmware.parent / "generated" / "model"
    manifest = json.loads((model / "manifest.json").read_text())

    def threshold(symbol: str, own: str) -> int:
        value = int(next(line.split("=")[1] for line in config.splitlines() if line.startswith(f"CONFIG_{symbol}=")))
        return manifest[own] if value < 0 else value
    table = firmware.parent / "generated" / "registry" / "registry.json"
    data = json.loads(table.read_text(encoding="utf-8")) if table.is_file() else {}
    max_names = next((int(line.split("=")[1]) for line in config.splitlines()
                      if line.startswith("CONFIG_APP_REGISTRY_MAX_SLOTS=")), 0)
    return Reference(model, threshold("APP_MIN_SCORE", "min_score_milli"), data.get("words"), max_names,
                     data.get("label_domains"),
                     min_score_named_milli=threshold("APP_MIN_SCORE_NAMED", "min_score_named_milli"))


