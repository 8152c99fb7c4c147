"""stm32cubeprogrammer: flash with ST's STM32CubeProgrammer command line (STM32_Programmer_CLI; flash only).

    flash        STM32_Programmer_CLI --connect port=swd reset=HWrst --download firmware.hex --verify --start

The program is looked for on the PATH, then where ST's installer puts it
(~/STMicroelectronics/STM32Cube/STM32CubeProgrammer/bin). board.yml: `runners: args: stm32cubeprogrammer:
{port: swd, reset-mode: hw}` (reset-mode: hw, sw or core).
"""
from __future__ import annotations

import shutil
from pathlib import Path

from .. import BuildError
from .core import Runner

RESET_MODES = {"hw": "HWrst", "sw": "SWrst", "core": "Crst"}


class Stm32CubeProgrammer(Runner):
    name = "stm32cubeprogrammer"
    commands = frozenset({"flash"})
    tool = "STM32_Programmer_CLI"
    install = "download STM32CubeProgrammer from st.com and put its bin/ folder on the PATH"

    @classmethod
    def program(cls) -> str:
        found = shutil.which(cls.tool)
        if found:
            return cls.tool
        default = Path.home() / "STMicroelectronics" / "STM32Cube" / "STM32CubeProgrammer" / "bin" / cls.tool
        return str(default) if default.is_file() else cls.tool

    def flash_argv(self) -> list[str]:
        connect = [f"port={self.cfg.arg(self.name, 'port')}"]
        mode = self.cfg.args.get("reset-mode")
        if mode:
            if mode not in RESET_MODES:
                raise BuildError(f"runner {self.name}: reset-mode {mode!r} in board.yml; use one of "
                                 f"{', '.join(RESET_MODES)}")
            connect.append(f"reset={RESET_MODES[mode]}")
        return [self.program(), "--connect", *connect, "--download", self.cfg.files["hex"], "--verify", "--start"]
