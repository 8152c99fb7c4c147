"""`west debugserver`: start the runner's gdb server alone, for a gdb or an IDE you start yourself.

    west debugserver [-d BUILD_DIR] [-r RUNNER] [--gdb-port PORT] [--dry-run]

Connect with `target extended-remote 127.0.0.1:3333` (openocd), `target remote 127.0.0.1:3333` (pyocd),
`target remote 127.0.0.1:2331` (jlink) or `target remote 127.0.0.1:1234` (qemu: the image waits at its reset
vector; UART0 on this terminal, Ctrl-A then X quits). Ctrl-C stops the server.
"""
from __future__ import annotations

import sys
from pathlib import Path

sys.path.insert(0, str(Path(__file__).resolve().parent))
from bertl14_west.runners.command import RunnerCommand  # noqa: E402


class DebugServer(RunnerCommand):
    COMMAND = "debugserver"
    HELP = "run the board's gdb server (connect your own gdb or IDE)"
    DESCRIPTION = __doc__
