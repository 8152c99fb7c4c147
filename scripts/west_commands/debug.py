"""`west debug`: flash the build, halt the board at its reset vector and open gdb on it.

    west debug [-d BUILD_DIR] [-r RUNNER] [--gdb PROGRAM] [--gdb-port PORT] [--dry-run]

The runner's gdb server runs in the background (Ctrl-C in gdb stops the program, not the server) and stops when
gdb exits. nucleo_h743zi (openocd, pyocd, jlink): gdb loads firmware.elf through the probe and resets. Emulated
boards (qemu): QEMU starts the image halted at the reset vector, its UART0 on socket://127.0.0.1:PORT+1 (printed;
`bertl14 console --port socket://...` in another terminal). host: the host's gdb on the program.
gdb: --gdb, else arm-none-eabi-gdb or gdb-multiarch (`sudo apt-get install gdb-multiarch`). --dry-run prints the
server's and gdb's command lines.
"""
from __future__ import annotations

import sys
from pathlib import Path

sys.path.insert(0, str(Path(__file__).resolve().parent))
from bertl14_west.runners.command import RunnerCommand  # noqa: E402


class Debug(RunnerCommand):
    COMMAND = "debug"
    HELP = "flash and debug the build with gdb"
    DESCRIPTION = __doc__
