"""st-flash: write the raw binary with stlink-tools' st-flash (ST-LINK probes; flash only).

    flash        st-flash --reset write firmware.bin 0x08000000

The address is the board's flash region (board.yml memory table).
"""
from __future__ import annotations

from .core import Runner


class StFlash(Runner):
    name = "st-flash"
    commands = frozenset({"flash"})
    tool = "st-flash"
    install = "sudo apt-get install stlink-tools"

    def flash_argv(self) -> list[str]:
        return [self.tool, "--reset", "write", self.cfg.files["bin"], f"0x{self.cfg.flash_origin:08x}"]
