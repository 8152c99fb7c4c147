"""The flash and debug tools of `west flash|debug|attach|debugserver`, one file a runner (as Zephyr's runners):

| runner | flash | debug, attach, debugserver | tool |
|---|---|---|---|
| openocd | yes | yes | OpenOCD |
| pyocd | yes | yes | pyOCD |
| jlink | yes | yes | SEGGER J-Link (JLinkExe, JLinkGDBServer) |
| stm32cubeprogrammer | yes | no | STM32_Programmer_CLI |
| st-flash | yes | no | stlink-tools' st-flash |
| qemu | no (QEMU loads the ELF) | yes | QEMU's gdbstub |
| native | no | debug | the host's gdb (host board) |

A board lists the runners it supports in its board.yml (`runners: available:`), the default of each command
(`runners: default: {flash: ..., debug: ...}`) and each runner's arguments (`runners: args:`).
"""
from __future__ import annotations

from .core import Runner, RunnerConfig
from .jlink import JLink
from .native import Native
from .openocd import OpenOcd
from .pyocd import PyOcd
from .qemu import Qemu
from .st_flash import StFlash
from .stm32cubeprogrammer import Stm32CubeProgrammer

RUNNERS: dict[str, type[Runner]] = {r.name: r for r in (OpenOcd, PyOcd, JLink, Stm32CubeProgrammer, StFlash, Qemu,
                                                         Native)}
ALIASES = {"stlink": "st-flash"}     # the name an earlier `west flash` used

__all__ = ["RUNNERS", "ALIASES", "Runner", "RunnerConfig", "runner_class"]


def runner_class(name: str) -> type[Runner] | None:
    return RUNNERS.get(ALIASES.get(name, name))
