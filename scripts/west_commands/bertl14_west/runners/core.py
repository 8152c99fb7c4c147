"""What every runner shares: its configuration (the build's files, the board's runner arguments, gdb) and the
three ways a command runs (a flash tool; a debug server alone; a debug server in the background with gdb in
the foreground), as Zephyr's runners do.

A runner is a class with a `name`, the `commands` it supports ("flash", "debug", "attach", "debugserver") and
methods that return argv lists; it never starts a process itself, so `--dry-run` prints exactly what would run.
"""
from __future__ import annotations

import os
import shlex
import shutil
import signal
import subprocess
import sys
from dataclasses import dataclass, field
from pathlib import Path

from .. import BuildError
from ..boards import Board

# gdb for an Arm Cortex-M image, in the order they are looked for on the PATH (Debian/Ubuntu: gdb-multiarch)
GDB_NAMES = ("arm-none-eabi-gdb", "gdb-multiarch")
GDB_INSTALL = "sudo apt-get install gdb-multiarch"

# Output of a probe tool when no probe is attached (matched case-insensitively).
NO_PROBE_HINTS = (
    "open failed", "no device found", "unable to find", "couldn't find", "no connected debug probes",
    "no debug probe", "no st-link", "failed to connect", "not found any", "error: libusb",
    "couldn't open", "unable to open", "found 0 stlink", "cannot connect to target", "no j-link found",
    "no stm32 target found", "no debug probe detected", "error: no stlink",
)


@dataclass
class RunnerConfig:
    """Everything a runner's commands are made from."""
    board: Board
    build_dir: Path
    files: dict                     # elf, bin, hex, map: paths of the build's outputs
    args: dict = field(default_factory=dict)   # board.yml `runners: args: <runner>:`
    gdb: str | None = None          # the gdb to run (debug, attach); None: found on the PATH
    gdb_port: int | None = None     # None: the runner's default
    serial_port: int | None = None  # emulated boards: the TCP port of UART0 during `west debug|attach`

    @property
    def flash_origin(self) -> int:
        """Where a raw binary goes: the board's flash region (board.yml memory table)."""
        region = self.board.flash_region
        if region is None:
            raise BuildError(f"board {self.board.name} has no flash region in its board.yml")
        return int(region["origin"])

    def arg(self, runner: str, key: str) -> str:
        value = self.args.get(key)
        if value in (None, ""):
            raise BuildError(f"{self.board.dir / 'board.yml'}: runner {runner} needs `runners: args: {runner}: "
                             f"{key}:`")
        return str(value)

    def gdb_program(self) -> str:
        """--gdb, else the first of GDB_NAMES on the PATH, else the Debian name (what --dry-run prints)."""
        if self.gdb:
            return self.gdb
        return next((name for name in GDB_NAMES if shutil.which(name)), GDB_NAMES[-1])


class Runner:
    """A flash/debug tool. Subclasses set `name`, `commands`, `tool` (the program that must be installed,
    `install` says how) and implement the methods of the commands they support."""
    name = ""
    commands: frozenset = frozenset()
    tool = ""
    install = ""
    default_gdb_port = 3333
    remote = "target extended-remote"      # how gdb connects to this runner's server

    def __init__(self, cfg: RunnerConfig):
        self.cfg = cfg

    @property
    def gdb_port(self) -> int:
        return self.cfg.gdb_port or self.default_gdb_port

    # ---- what a runner provides -------------------------------------------------------------------------
    def flash_argv(self) -> list[str]:
        raise NotImplementedError

    def server_argv(self, command: str) -> list[str]:
        """The debug server of `west debug|attach|debugserver` (command is one of them)."""
        raise NotImplementedError

    def gdb_commands(self, command: str) -> list[str]:
        """gdb commands after connecting: debug loads the image and resets; attach leaves the program as it is."""
        if command == "debug":
            return ["monitor reset halt", "load", "monitor reset halt"]
        return []

    def before(self, command: str, dry_run: bool) -> None:
        """Files the commands need (a J-Link commander script), written also for --dry-run so the printed
        command can be copied and run."""

    def notes(self, command: str) -> list[str]:
        """Lines printed before the commands start (where the serial console is, how to stop)."""
        return []

    # ---- derived ----------------------------------------------------------------------------------------
    def gdb_argv(self, command: str) -> list[str]:
        argv = [self.cfg.gdb_program(), "-q", self.cfg.files["elf"],
                "-ex", f"{self.remote} 127.0.0.1:{self.gdb_port}"]
        for line in self.gdb_commands(command):
            argv += ["-ex", line]
        return argv

    def argvs(self, command: str) -> list[list[str]]:
        """Every command line `west COMMAND` runs, in order (flash: the tool; debugserver: the server; debug and
        attach: the server, then gdb)."""
        if command == "flash":
            return [self.flash_argv()]
        if command == "debugserver":
            return [self.server_argv(command)]
        return [self.server_argv(command), self.gdb_argv(command)]

    def needed_files(self, command: str) -> list[str]:
        """The build outputs the command reads (they must exist)."""
        files = self.cfg.files
        used = [f for argv in self.argvs(command) for f in files.values() if any(f in a for a in argv)]
        return sorted(set(used))


def require(program: str, runner: Runner, install: str = "") -> str:
    """The program's path; a missing one is an error saying how to install it."""
    path = shutil.which(program) or (program if os.path.isfile(program) and os.access(program, os.X_OK) else None)
    if not path:
        hint = f": install it with `{install}`" if install else ""
        raise BuildError(f"{program} not found (the {runner.name} runner){hint}")
    return path


def print_argv(argv: list[str]) -> None:
    print(shlex.join(argv), flush=True)


def run_tool(runner: Runner, argv: list[str]) -> int:
    """Run a flash tool, its output shown; a failure is one line (no probe: what to plug in)."""
    proc = subprocess.run(argv, stdout=subprocess.PIPE, stderr=subprocess.STDOUT, text=True, errors="replace")
    sys.stdout.write(proc.stdout)
    if proc.returncode != 0:
        raise probe_error(runner, argv[0], proc.returncode, proc.stdout)
    return 0


def probe_error(runner: Runner, program: str, returncode: int, output: str) -> BuildError:
    if any(h in (output or "").lower() for h in NO_PROBE_HINTS):
        return BuildError(f"no debug probe found by {Path(program).name}: connect the board's debug USB port "
                          "(and check its udev permissions), then retry")
    return BuildError(f"{Path(program).name} failed (exit {returncode}); see its output above")


def run_server(argv: list[str]) -> int:
    """`west debugserver`: the server in the foreground until it exits or Ctrl-C."""
    try:
        return subprocess.run(argv).returncode
    except KeyboardInterrupt:
        return 0


def run_server_and_gdb(runner: Runner, server: list[str], gdb: list[str]) -> int:
    """`west debug|attach`: the server in the background (its own session, so the Ctrl-C typed in gdb to stop
    the program does not kill it), gdb in the foreground (gdb retries the connection while the server starts);
    the server is stopped when gdb exits."""
    proc = subprocess.Popen(server, start_new_session=True, stdin=subprocess.DEVNULL)
    previous = signal.signal(signal.SIGINT, signal.SIG_IGN)   # gdb handles Ctrl-C itself
    try:
        rc = subprocess.run(gdb).returncode
    finally:
        signal.signal(signal.SIGINT, previous)
        server_rc = proc.poll()
        if server_rc is None:
            proc.terminate()
            try:
                proc.wait(timeout=5)
            except subprocess.TimeoutExpired:
                proc.kill()
                proc.wait()
    if server_rc is not None and server_rc != 0:
        raise BuildError(f"{Path(server[0]).name} exited with {server_rc} before gdb finished; see its output above "
                         "(no debug probe? connect the board's debug USB port and check its udev permissions)")
    return rc
