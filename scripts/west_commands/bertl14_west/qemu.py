"""The QEMU command line for a built firmware (one place for `west build -t run`, the tests and demos).

Deterministic instruction counts: add `-icount shift=N` (e.g. BERTL14_QEMU_FLAGS="-icount shift=0").
Under -icount each guest instruction advances virtual time by 2^N ns; the MPS2 CMSDK timers and
SysTick run from the 25 MHz system clock (40 ns a tick), so at shift=0 a timer tick is exactly 40
instructions and at shift=10 one instruction is exactly 25.6 ticks.
"""
from __future__ import annotations

import os
import shlex


def qemu_argv(info: dict, serial: list[str] | None = None) -> list[str]:
    argv = ["qemu-system-arm", "-M", info["qemu_machine"]]
    argv += serial if serial is not None else ["-nographic"]
    argv += shlex.split(os.environ.get("BERTL14_QEMU_FLAGS", ""))
    argv += ["-kernel", info["files"]["elf"]]
    return argv


def qemu_tcp_serial(port: int, wait: bool = True) -> list[str]:
    """Serial port 0 on a TCP server (pyserial: socket://127.0.0.1:PORT); wait=True holds the guest
    until the client connects, so the banner is not lost."""
    return ["-display", "none", "-monitor", "none",
            "-serial", f"tcp:127.0.0.1:{port},server=on,wait={'on' if wait else 'off'}"]
