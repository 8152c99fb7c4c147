"""Fixtures of the workspace/build tests: run `west build` in this repository's west workspace,
boot firmware under QEMU with its serial port on a TCP socket (pyserial socket://)."""
from __future__ import annotations

import os
import shutil
import socket
import subprocess
import sys
import time
from pathlib import Path

import pytest

REPO = Path(__file__).resolve().parents[2]
sys.path.insert(0, str(REPO / "scripts" / "west_commands"))
from bertl14_west.qemu import qemu_argv, qemu_tcp_serial  # noqa: E402


def west(*args: str, env: dict | None = None, cwd: Path = REPO, stdin: str | None = None,
         timeout: float = 240) -> subprocess.CompletedProcess:
    """Run west (as `python -m west`, so a reduced PATH still finds it)."""
    full_env = dict(os.environ)
    full_env.pop("BERTL14_MODULES_DIR", None)
    full_env.update(env or {})
    return subprocess.run([sys.executable, "-m", "west", *args], cwd=cwd, env=full_env, text=True,
                          capture_output=True, input=stdin, timeout=timeout)


def assert_one_line_error(proc: subprocess.CompletedProcess, *needles: str):
    """Failed, no traceback, and one FATAL ERROR line that contains every needle."""
    assert proc.returncode != 0, proc.stdout + proc.stderr
    assert "Traceback" not in proc.stderr, proc.stderr
    fatal = [line for line in proc.stderr.splitlines() if line.startswith("FATAL ERROR")]
    assert len(fatal) == 1, proc.stderr
    for n in needles:
        assert n in fatal[0], fatal[0]
    return fatal[0]


@pytest.fixture(scope="session", autouse=True)
def west_workspace():
    """The repository must be the manifest of a west workspace (`west init -l`), as `make test` sets up."""
    if shutil.which("west") is None and subprocess.run([sys.executable, "-c", "import west"]).returncode:
        pytest.skip("west is not installed (pip install -e .[dev])")
    if west("topdir").returncode != 0:
        init = subprocess.run([sys.executable, "-m", "west", "init", "-l", str(REPO)], cwd=REPO.parent,
                              capture_output=True, text=True)
        assert init.returncode == 0, init.stderr


def modules_dir() -> Path | None:
    top = west("topdir")
    return Path(top.stdout.strip()) / "modules" if top.returncode == 0 else None


def require_modules(*rels: str):
    root = modules_dir()
    for rel in rels:
        if root is None or not (root / rel).is_dir() or not any((root / rel).iterdir()):
            pytest.skip(f"module {rel.rsplit('/', 1)[-1]} not present (modules/{rel}; run `west update`)")


def require_arm():
    for tool in ("arm-none-eabi-gcc", "qemu-system-arm"):
        if shutil.which(tool) is None:
            pytest.skip(f"{tool} not installed (make test installs it)")


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
