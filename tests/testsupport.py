"""Helpers shared by the suites that build firmware (tests/build, tests/app): west in this repository's
workspace, and skips that name what is missing (a module, the Arm toolchain, QEMU)."""
from __future__ import annotations

import os
import subprocess
import sys
from pathlib import Path

import pytest

REPO = Path(__file__).resolve().parents[1]


def west(*args: str, env: dict | None = None, cwd: Path = REPO, stdin: str | None = None,
         timeout: float = 400) -> subprocess.CompletedProcess:
    """Run west (as `python -m west`, so a reduced PATH still finds it), never with the caller's
    BERTL14_MODULES_DIR unless `env` sets it; builds use at most 2 jobs (CMAKE_BUILD_PARALLEL_LEVEL)."""
    full_env = dict(os.environ)
    full_env.setdefault("CMAKE_BUILD_PARALLEL_LEVEL", "2")
    full_env.pop("BERTL14_MODULES_DIR", None)
    full_env.update(env or {})
    return subprocess.run([sys.executable, "-m", "west", *args], cwd=cwd, env=full_env, text=True,
                          capture_output=True, input=stdin, timeout=timeout)


def ensure_west_workspace() -> None:
    """The repository must be the manifest of the west workspace west finds from it: stop the session with the
    fix when it sits inside another one (a stray .west above the clone); create it (`west init -l`, as
    `make test` does) when there is none. Skips when west is not installed."""
    if subprocess.run([sys.executable, "-c", "import west"], capture_output=True).returncode:
        pytest.skip("west is not installed (pip install -e .[dev])")
    sys.path.insert(0, str(REPO / "scripts" / "west_commands"))
    try:
        from bertl14_west.workspace import foreign_workspace_error
    finally:
        sys.path.pop(0)
    msg = foreign_workspace_error(REPO)
    if msg:
        pytest.exit(msg, returncode=2)
    if west("topdir").returncode != 0:
        init = subprocess.run([sys.executable, "-m", "west", "init", "-l", str(REPO)], cwd=REPO.parent,
                              capture_output=True, text=True)
        assert init.returncode == 0, init.stderr


def assert_one_line_error(proc: subprocess.CompletedProcess, *needles: str):
    """Failed, no traceback, and one FATAL ERROR line that contains every needle."""
    assert proc.returncode != 0, proc.stdout + proc.stderr
    assert "Traceback" not in proc.stderr, proc.stderr
    fatal = [line for line in proc.stderr.splitlines() if line.startswith("FATAL ERROR")]
    assert len(fatal) == 1, proc.stderr
    for n in needles:
        assert n in fatal[0], fatal[0]
    return fatal[0]


def skip_missing(reason: str):
    """Skip naming what is missing, except under CI (CI=true): there `make test` and .ci/run provide every
    module and tool, so a missing one is a failure of the run, not a skipped test."""
    if os.environ.get("CI", "").lower() == "true":
        pytest.fail(f"{reason} [CI=true: CI provides every module and tool, so this fails instead of skipping]",
                    pytrace=False)
    pytest.skip(reason)


def modules_dir() -> Path | None:
    """`modules/` under the west topdir, or None outside a workspace."""
    top = west("topdir")
    return Path(top.stdout.strip()) / "modules" if top.returncode == 0 else None


def require_modules(*rels: str):
    """Skip (fail under CI) unless every module (path under modules/, e.g. "rtos/FreeRTOS-Kernel") is present."""
    root = modules_dir()
    for rel in rels:
        if root is None or not (root / rel).is_dir() or not any((root / rel).iterdir()):
            skip_missing(f"module {rel.rsplit('/', 1)[-1]} not present (modules/{rel}; run `west update`)")


def require_arm(board: str = "mps2_an500"):
    """Skip (fail under CI) unless the toolchain and QEMU of the emulated board (the Arm ones by default) and CMake
    are installed."""
    from bertl14_tools.device.qemu_target import missing_tools
    for tool in missing_tools(board):
        skip_missing(f"{tool} not installed (make test installs it)")
