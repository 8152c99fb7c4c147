"""`west flash`: write a built firmware to the board through its debug probe.

    west flash [-d BUILD_DIR] [-r RUNNER] [--dry-run]

Runners (the board's board.yml lists those it supports and its default; nucleo_h743zi: openocd):
  openocd              openocd -f board/st_nucleo_h743zi.cfg -c 'program firmware.elf verify reset exit'
  pyocd                pyocd flash --target stm32h743zitx firmware.hex
  jlink                JLinkExe -nogui 1 -if swd -speed auto -device STM32H743ZI -CommanderScript BUILD/runners/jlink/flash.jlink
  stm32cubeprogrammer  STM32_Programmer_CLI --connect port=swd reset=HWrst --download firmware.hex --verify --start
  st-flash             st-flash --reset write firmware.bin 0x08000000

--dry-run prints the exact command. Emulated boards have nothing to flash: `west build -t run`.
"""
from __future__ import annotations

import sys
from pathlib import Path

sys.path.insert(0, str(Path(__file__).resolve().parent))
from bertl14_west.runners.command import RunnerCommand  # noqa: E402


class Flash(RunnerCommand):
    COMMAND = "flash"
    HELP = "flash a built firmware to the board"
    DESCRIPTION = __doc__
