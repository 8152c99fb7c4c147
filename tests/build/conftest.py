"""Fixtures of the workspace/build tests: run `west build` in this repository's west workspace,
boot firmware under QEMU with its serial port on a TCP socket (pyserial socket://)."""
from __future__ import annotations

import json
import subprocess
import sys
from pathlib import Path

import pytest

from testsupport import REPO, ensure_west_workspace, require_arm, west

sys.path.insert(0, str(REPO / "scripts" / "west_commands"))
from bertl14_west import qemu as westqemu  # noqa: E402


@pytest.fixture(scope="session", autouse=True)
def west_workspace():
    """The repository must be the manifest of a west workspace (`west init -l`), as `make test` sets up."""
    ensure_west_workspace()


@pytest.fixture
def empty_modules(tmp_path) -> dict:
    """Environment in which no module can be found."""
    d = tmp_path / "no-modules"
    d.mkdir()
    return {"BERTL14_MODULES_DIR": str(d)}


class QemuSerial(westqemu.QemuSerial):
    """Firmware under QEMU (its build's bertl14_build.json), its UART0 reachable via pyserial's socket:// URL."""

    def __init__(self, build_dir: Path):
        info = json.loads((build_dir / "bertl14_build.json").read_text())
        super().__init__(westqemu.build_machine(info), info["files"]["elf"], stdout=subprocess.PIPE,
                         stderr=subprocess.STDOUT)
        self.start()

    def readline(self) -> str:
        return self.ser.readline().decode("utf-8", "replace").rstrip("\r\n")

    def write(self, data: bytes):
        self.ser.write(data)


@pytest.fixture
def qemu():
    started = []

    def start(build_dir: Path) -> QemuSerial:
        q = QemuSerial(build_dir)
        started.append(q)
        return q

    yield start
    for q in started:
        q.close()


@pytest.fixture(scope="session")
def bare_metal_an500(tmp_path_factory):
    """mps2_an500 bare-metal build with no module reachable (shared by several tests)."""
    require_arm()
    d = tmp_path_factory.mktemp("an500-none") / "build"
    empty = tmp_path_factory.mktemp("no-modules")
    proc = west("build", "-b", "mps2_an500", "-p", "-d", str(d), "app", "--", "-DCONFIG_APP_RTOS_NONE=y",
                env={"BERTL14_MODULES_DIR": str(empty)})
    assert proc.returncode == 0, proc.stdout + proc.stderr
    return d, proc
