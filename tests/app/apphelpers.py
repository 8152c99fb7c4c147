"""Helpers of the intent-firmware tests (issue 6): build app/ for mps2_an500 (bare-metal always,
FreeRTOS when its module is present), boot it under QEMU, talk to it with bertl14_tools.serial."""
from __future__ import annotations

import json
import os
import shutil
import subprocess
import sys
from pathlib import Path

import pytest

REPO = Path(__file__).resolve().parents[2]
QEMU_TIMEOUT = 60


def west(*args: str, env: dict | None = None, timeout: float = 400) -> subprocess.CompletedProcess:
    full_env = dict(os.environ, CMAKE_BUILD_PARALLEL_LEVEL="2")
    full_env.pop("BERTL14_MODULES_DIR", None)
    full_env.update(env or {})
    return subprocess.run([sys.executable, "-m", "west", *args], cwd=REPO, env=full_env, text=True,
                          capture_output=True, timeout=timeout)


def require_arm():
    for tool in ("arm-none-eabi-gcc", "qemu-system-arm", "cmake"):
        if shutil.which(tool) is None:
            pytest.skip(f"{tool} not installed (make test installs it)")


def modules_dir() -> Path | None:
    top = west("topdir")
    return Path(top.stdout.strip()) / "modules" if top.returncode == 0 else None


def require_modules(*rels: str):
    root = modules_dir()
    for rel in rels:
        if root is None or not (root / rel).is_dir() or not any((root / rel).iterdir()):
            pytest.skip(f"module {rel.rsplit('/', 1)[-1]} not present (modules/{rel}; run `west update`)")


def public_data(name: str = "en.jsonl") -> Path:
    base = Path(os.environ.get("BERTL14_TEST_DATA") or REPO.parent / "shared" / "data" / "ha-intents-tests")
    path = base / name
    if not path.is_file():
        pytest.skip(f"public test data {path} not present (set BERTL14_TEST_DATA to the ha-intents-tests folder)")
    return path


def public_sentences(n: int) -> list[dict]:
    rows = [json.loads(line) for line in public_data().read_text(encoding="utf-8").splitlines() if line.strip()]
    return rows[:n]


_builds: dict[str, Path] = {}


def build_firmware(tmp_factory, rtos: str) -> Path:
    """app/ for mps2_an500 with the default model; rtos 'none' builds with no module reachable."""
    if rtos in _builds:
        return _builds[rtos]
    require_arm()
    d = tmp_factory.mktemp(f"app-an500-{rtos}") / "build"
    if rtos == "freertos":
        require_modules("rtos/FreeRTOS-Kernel")
        proc = west("build", "-b", "mps2_an500", "-p", "-d", str(d), "app", "--", "-DCONFIG_APP_RTOS_FREERTOS=y")
    else:
        empty = tmp_factory.mktemp("no-modules")
        proc = west("build", "-b", "mps2_an500", "-p", "-d", str(d), "app", "--", "-DCONFIG_APP_RTOS_NONE=y",
                    env={"BERTL14_MODULES_DIR": str(empty)})
    assert proc.returncode == 0, proc.stdout[-3000:] + proc.stderr[-3000:]
    _builds[rtos] = d
    return d


