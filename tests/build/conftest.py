"""Fixtures of the workspace/build tests: run `west build` in this repository's west workspace,
boot firmware under QEMU with its serial port on a TCP socket (pyserial socket://)."""
from __future__ import annotations

import shutil
import socket
import subprocess
import sys
import time
from pathlib import Path

import pytest

from testsupport import REPO, require_arm, west

sys.path.insert(0, str(REPO / "scripts" / "west_commands"))
from bertl14_west.qemu import qemu_argv, qemu_tcp_serial  # noqa: E402


@pytest.fixture(scope="session", autouse=True)
def west_workspace():
    """The repository must be the manifest of a west workspace (`west init -l`), as `make test` sets up."""
    if shutil.which("west") is None and subprocess.run([sys.executable, "-c", "import west"]).returncode:
        pytest.skip("west is not installed (pip install -e .[dev])")
    if west("topdir").returncode != 0:
        init = subprocess.run([sys.executable, "-m", "west", "init", "-l", str(REPO)], cwd=REPO.parent,
                              capture_output=True, text=True)
        assert init.returncode == 0, init.stderr


@pytest.fixture
def empty_modules(tmp_path) -> dict:
    """Environment in which no module can be found."""
    d = tmp_path / "no-modules"
    d.mkdir()
    return {"BERTL14_MODULES_DIR": str(d)}


def _free_port() -> int:
    with socket.socket() as s:
        s.bind(("127.0.0.1", 0))
        return s.getsockname()[1]


class QemuSerial:
    """Firmware running under QEMU, its UART0 reachable via pyserial's socket:// URL."""

    def __init__(self, build_dir: Path):
        import json

        import serial

        info = json.loads((build_dir / "bertl14_build.json").read_text())
        self.port = _free_port()
        self.proc = subprocess.Popen(qemu_argv(info, qemu_tcp_serial(self.port)), stdin=subprocess.DEVNULL,
                                     stdout=subprocess.PIPE, stderr=subprocess.STDOUT)
        deadline = time.monotonic() + 10
        while True:
            try:
                self.ser = serial.serial_for_url(f"socket://127.0.0.1:{self.port}", timeout=15)
                break
            except serial.SerialException:
                if time.monotonic() > deadline or self.proc.poll() is not None:
                    self.close()
                    raise RuntimeError("QEMU did not open its serial socket")
                time.sleep(0.05)

    def readline(self) -> str:
        return self.ser.readline().decode("utf-8", "replace").rstrip("\r\n")

    def write(self, data: bytes):
        self.ser.write(data)

    def close(self):
        if getattr(self, "ser", None):
            self.ser.close()
        self.proc.kill()
        self.proc.wait()


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
