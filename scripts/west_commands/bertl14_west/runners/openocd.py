"""openocd: flash through OpenOCD's `program` command, debug through its gdb server.

    flash        openocd -f CONFIG -c 'program firmware.elf verify reset exit'
    debugserver  openocd -f CONFIG -c 'gdb_port 3333' -c init -c 'reset halt'   (attach: no reset halt)

board.yml: `runners: args: openocd: {config: board/<file>.cfg}` (a script of OpenOCD's scripts/ folder).
"""
from __future__ import annotations

from .core import Runner


class OpenOcd(Runner):
    name = "openocd"
    commands = frozenset({"flash", "debug", "attach", "debugserver"})
    tool = "openocd"
    install = "sudo apt-get install openocd"
    default_gdb_port = 3333

    def flash_argv(self) -> list[str]:
        return [self.tool, "-f", self.cfg.arg(self.name, "config"),
                "-c", f"program {self.cfg.files['elf']} verify reset exit"]

    def server_argv(self, command: str) -> list[str]:
        argv = [self.tool, "-f", self.cfg.arg(self.name, "config"), "-c", f"gdb_port {self.gdb_port}", "-c", "init"]
        return argv if command == "attach" else argv + ["-c", "reset halt"]
