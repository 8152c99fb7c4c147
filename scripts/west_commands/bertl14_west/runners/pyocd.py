"""pyocd: flash and debug with pyOCD (CMSIS-DAP and ST-LINK probes; `pip install pyocd`).

    flash        pyocd flash --target TARGET firmware.hex
    debugserver  pyocd gdbserver --target TARGET --port 3333            (attach: --connect attach)

board.yml: `runners: args: pyocd: {target: <pyocd target name>}` (`pyocd list --targets`).
"""
from __future__ import annotations

from .core import Runner


class PyOcd(Runner):
    name = "pyocd"
    commands = frozenset({"flash", "debug", "attach", "debugserver"})
    tool = "pyocd"
    install = "pip install pyocd"
    default_gdb_port = 3333
    remote = "target remote"

    def flash_argv(self) -> list[str]:
        return [self.tool, "flash", "--target", self.cfg.arg(self.name, "target"), self.cfg.files["hex"]]

    def server_argv(self, command: str) -> list[str]:
        argv = [self.tool, "gdbserver", "--target", self.cfg.arg(self.name, "target"), "--port", str(self.gdb_port)]
        return argv + ["--connect", "attach"] if command == "attach" else argv
