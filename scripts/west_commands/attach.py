"""`west attach`: open gdb on the program already running on the board, without flashing or resetting it.

    west attach [-d BUILD_DIR] [-r RUNNER] [--gdb PROGRAM] [--gdb-port PORT] [--dry-run]

As `west debug` without loading: gdb connects through the runner's gdb server and stops the program where it is
(emulated boards: QEMU starts the image running, gdb stops it on connecting). --dry-run prints the commands.
"""
from __future__ import annotations

import sys
from pathlib import Path

sys.path.insert(0, str(Path(__file__).resolve().parent))
from bertl14_west.runners.command import RunnerCommand  # noqa: E402


class Attach(RunnerCommand):
    COMMAND = "attach"
    HELP = "debug the running program with gdb (no flashing)"
    DESCRIPTION = __doc__
