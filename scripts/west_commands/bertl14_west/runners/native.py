"""native: the host board's firmware is a host program; `west debug` runs the host's gdb on it.

    debug        gdb -q firmware.elf
"""
from __future__ import annotations

from .core import Runner


class Native(Runner):
    name = "native"
    commands = frozenset({"debug"})
    tool = "gdb"
    install = "sudo apt-get install gdb"

    def argvs(self, command: str) -> list[list[str]]:
        return [[self.cfg.gdb or self.tool, "-q", self.cfg.files["elf"]]]
