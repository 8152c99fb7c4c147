"""QEMU for the emulated boards, in one place: the command line (`west build -t run`, `bertl14 console|validate
--qemu`, the test image of `check-bitexact --target qemu` and `bench`, the tests, `make demo`, the TFLM
integration) and starting/stopping the process with its UART0 on a loopback TCP port (pyserial socket://)
or on stdio. The QEMU program, machine and fixed arguments of a board come from its board.yml (`qemu: system:
machine: flags:`, boards.py; the program defaults to qemu-system-arm).
Standard library only (pyserial and PyYAML are imported where they are needed), so it works both inside
west and from the bertl14 package.

Deterministic instruction counts: add `-icount shift=N` (e.g. BERTL14_QEMU_FLAGS="-icount shift=0").
Under -icount each guest instruction advances virtual time by 2^N ns; the MPS2 CMSDK timers and
SysTick run from the 25 MHz system clock (40 ns a tick), so at shift=0 a timer tick is exactly 40
instructions and at shift=10 one instruction is exactly 25.6 ticks (each board's tick: docs/boards.md).
"""
from __future__ import annotations

import os
import shlex
import socket
import subprocess
import time
from pathlib import Path

QEMU = "qemu-system-arm"


def board_machine(board: str) -> dict | None:
    """How QEMU runs a board ({"system", "machine", "flags"} from board.yml `qemu:`), None for a board QEMU does
    not emulate. Raises BuildError for an unknown board. machine_argv and QemuSerial take it as `machine`."""
    from .boards import find_board
    return find_board(board).qemu


def machine_spec(machine: str | dict) -> dict:
    """{"system", "machine", "flags"}: a board's `qemu:` entry as board_machine gives it, or a bare machine
    name (an Arm machine of qemu-system-arm, no fixed arguments)."""
    if isinstance(machine, dict):
        return {"system": machine.get("system") or QEMU, "machine": machine["machine"],
                "flags": list(machine.get("flags") or [])}
    return {"system": QEMU, "machine": str(machine), "flags": []}


def qemu_boards() -> list[str]:
    """The boards QEMU emulates (those whose board.yml names a QEMU machine)."""
    from .boards import all_boards
    return [name for name, b in all_boards().items() if b.qemu_machine]


def qemu_tcp_serial(port: int, wait: bool = True) -> list[str]:
    """Serial port 0 on a TCP server (pyserial: socket://127.0.0.1:PORT); wait=True holds the guest
    until the client connects, so the banner is not lost."""
    return ["-display", "none", "-monitor", "none",
            "-serial", f"tcp:127.0.0.1:{port},server=on,wait={'on' if wait else 'off'}"]


def qemu_stdio_serial() -> list[str]:
    """Serial port 0 on QEMU's stdin/stdout, no monitor (a firmware whose output a pipe reads)."""
    return ["-nographic", "-monitor", "none", "-serial", "stdio"]


def machine_argv(machine: str | dict, elf: str | Path, serial: list[str] | None = None, flags=(),
                 env_flags: bool = True) -> list[str]:
    """qemu-system-XXX -M MACHINE BOARD-FLAGS SERIAL [$BERTL14_QEMU_FLAGS] FLAGS -kernel ELF (machine: see
    machine_spec). Without `serial`, -nographic (UART0 and the monitor on the terminal: Ctrl-A X quits)."""
    spec = machine_spec(machine)
    argv = [spec["system"], "-M", spec["machine"], *spec["flags"]]
    argv += serial if serial is not None else ["-nographic"]
    if env_flags:
        argv += shlex.split(os.environ.get("BERTL14_QEMU_FLAGS", ""))
    argv += list(flags)
    argv += ["-kernel", str(elf)]
    return argv


def qemu_argv(info: dict, serial: list[str] | None = None, flags=()) -> list[str]:
    """The command line for a `west build` output (its bertl14_build.json: qemu (or qemu_machine), files.elf)."""
    return machine_argv(build_machine(info), info["files"]["elf"], serial, flags)


def build_machine(info: dict) -> str | dict:
    """How QEMU runs a `west build` output: its bertl14_build.json's `qemu` entry (a build directory made before
    the entry existed has only `qemu_machine`, an Arm machine)."""
    return info.get("qemu") or info["qemu_machine"]


def free_port() -> int:
    """A loopback TCP port free now (QEMU binds it a moment later: another process may take it first)."""
    with socket.socket() as s:
        s.bind(("127.0.0.1", 0))
        return s.getsockname()[1]


def start(argv: list[str], stdout=subprocess.DEVNULL, stderr=subprocess.PIPE, text: bool = False) -> subprocess.Popen:
    """Start QEMU (stdin closed). FileNotFoundError when its program (argv[0]) is not installed."""
    return subprocess.Popen(argv, stdin=subprocess.DEVNULL, stdout=stdout, stderr=stderr, text=text)


def stop(proc: subprocess.Popen | None) -> None:
    """Kill QEMU if it still runs and reap it."""
    if proc is not None and proc.poll() is None:
        proc.kill()
    if proc is not None:
        proc.wait(timeout=10)


class QemuError(RuntimeError):
    """QEMU exited before its serial port answered (`exited`), or the port did not open in time."""

    def __init__(self, message: str, exited: bool = False, returncode: int | None = None, stderr: str = ""):
        super().__init__(message)
        self.exited, self.returncode, self.stderr = exited, returncode, stderr


class QemuSerial:
    """A firmware under QEMU with UART0 on a free loopback TCP port, reached with pyserial (socket://).

        with QemuSerial(machine, elf, flags=["-icount", "shift=0"]) as q:
            q.ser.write(b"hello\\n"); q.ser.readline()

    `argv` is known before start(); start() raises QemuError when QEMU exits before listening or its port
    does not open within `start_within` seconds; close() (or leaving the block) stops QEMU."""

    def __init__(self, machine: str | dict, elf: str | Path, flags=(), timeout: float = 15.0, start_within: float = 10.0,
                 env_flags: bool = True, stdout=subprocess.DEVNULL, stderr=subprocess.PIPE):
        self.port = free_port()
        self.argv = machine_argv(machine, elf, qemu_tcp_serial(self.port), flags, env_flags)
        self.timeout, self.start_within = timeout, start_within
        self.stdout, self.stderr = stdout, stderr
        self.proc: subprocess.Popen | None = None
        self.ser = None

    @classmethod
    def for_build(cls, info: dict, flags=(), **kw) -> "QemuSerial":
        """For a `west build` output (its bertl14_build.json)."""
        return cls(build_machine(info), info["files"]["elf"], flags, **kw)

    def start(self, settle: float = 0.0) -> "QemuSerial":
        """Start QEMU and connect (after `settle` seconds, to let QEMU bind or fail to)."""
        import serial
        self.proc = start(self.argv, self.stdout, self.stderr)
        if settle:
            time.sleep(settle)
        deadline = time.monotonic() + self.start_within
        while self.ser is None:
            if self.proc.poll() is not None:   # died (e.g. the port was taken): never talk to another listener
                err = self.proc.stderr.read() if self.stderr == subprocess.PIPE else b""
                err = (err.decode(errors="replace") if isinstance(err, bytes) else err or "").strip()
                rc = self.proc.returncode
                self.close()
                raise QemuError(f"QEMU exited ({rc}): {err}", exited=True, returncode=rc, stderr=err)
            try:
                self.ser = serial.serial_for_url(f"socket://127.0.0.1:{self.port}", timeout=self.timeout)
            except (serial.SerialException, OSError):
                if time.monotonic() > deadline:
                    self.close()
                    raise QemuError(f"QEMU did not open its serial port within {self.start_within:.0f} s") from None
                time.sleep(0.05)
        return self

    def alive(self) -> bool:
        return self.proc is not None and self.proc.poll() is None

    def close(self) -> None:
        if self.ser is not None:
            try:
                self.ser.close()
            except Exception:
                pass
            self.ser = None
        stop(self.proc)
        self.proc = None

    def __enter__(self) -> "QemuSerial":
        return self if self.proc is not None else self.start()

    def __exit__(self, *exc) -> None:
        self.close()
