"""qemu: debug an emulated board through QEMU's gdbstub (no flashing: QEMU loads the ELF itself).

    debugserver  qemu-system-arm -M MACHINE -nographic -gdb tcp:127.0.0.1:1234 -S -kernel firmware.elf
                 (the board's QEMU program and machine: qemu-system-riscv32 -M virt -bios none for qemu_riscv32)
                 (UART0 on the terminal; the CPU waits at the reset vector for gdb)
    debug        the same with UART0 on socket://127.0.0.1:1235 (the gdb port + 1), in the background, and gdb
    attach       as debug, the program running from the start (no -S): gdb stops it where it is

The program, machine and fixed arguments are the board's (board.yml `qemu:`); $BERTL14_QEMU_FLAGS is added as for
`-t run`.
"""
from __future__ import annotations

from .. import qemu as westqemu
from ..tools import install_hint
from .core import Runner


class Qemu(Runner):
    name = "qemu"
    commands = frozenset({"debug", "attach", "debugserver"})
    default_gdb_port = 1234
    remote = "target remote"

    @property
    def tool(self) -> str:
        return self.cfg.board.qemu["system"] if self.cfg.board.qemu else westqemu.QEMU

    @property
    def install(self) -> str:
        return install_hint(self.tool)

    @property
    def serial_port(self) -> int:
        return self.cfg.serial_port or self.gdb_port + 1

    def server_argv(self, command: str) -> list[str]:
        serial = None if command == "debugserver" else westqemu.qemu_tcp_serial(self.serial_port, wait=False)
        flags = ["-gdb", f"tcp:127.0.0.1:{self.gdb_port}"] + ([] if command == "attach" else ["-S"])
        return westqemu.machine_argv(self.cfg.board.qemu, self.cfg.files["elf"], serial, flags)

    def gdb_commands(self, command: str) -> list[str]:
        return []

    def notes(self, command: str) -> list[str]:
        if command == "debugserver":
            return [f"QEMU waits for gdb on 127.0.0.1:{self.gdb_port} (`target remote 127.0.0.1:{self.gdb_port}`); "
                    "UART0 is this terminal; quit: Ctrl-A then X"]
        url = f"socket://127.0.0.1:{self.serial_port}"
        return [f"UART0 of the emulated board: {url} (in another terminal: `bertl14 console --port {url}`)"]
