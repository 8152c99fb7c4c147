"""Faults you can see (docs/serial-protocol.md "Faults"): the test image of the firmware (CONFIG_APP_TEST_FAULTS, the
`:crash <kind>` command) under QEMU mps2_an500, bare-metal and FreeRTOS. Each fault prints one report with the
fault registers and the stacked pc/lr on the console, polled, then the board resets: its banner comes again and the
next sentence is answered. The registers are checked against what the fault must set (Armv7-M CFSR bits, the
faulting address, the faulting instruction in the ELF); the main stack starts DTCM (RAM here) above its MPU guard."""
from __future__ import annotations

import re
import subprocess
from pathlib import Path

import pytest

from apphelpers import QEMU_TIMEOUT, REPO, build_firmware

# Armv7-M CFSR bits (ARM DDI 0403, B3.2.15)
DACCVIOL, MSTKERR, MMARVALID = 1 << 1, 1 << 4, 1 << 7
PRECISERR, BFARVALID, UNDEFINSTR = 1 << 9, 1 << 15, 1 << 16
UNMAPPED = 0xF0000000            # test_faults.c's UNMAPPED_ADDRESS


@pytest.fixture(scope="module", params=["none", "freertos"])
def fault_image(request, tmp_path_factory) -> Path:
    return build_firmware(tmp_path_factory, request.param, "-DCONFIG_APP_TEST_FAULTS=y") / "firmware.elf"


def _symbols(elf: Path) -> dict[str, tuple[int, int]]:
    """name -> (address, size) of the ELF's symbols."""
    out = subprocess.run(["arm-none-eabi-nm", "-S", str(elf)], capture_output=True, text=True, check=True).stdout
    syms = {}
    for line in out.splitlines():
        p = line.split()
        if len(p) == 4:
            syms[p[3]] = (int(p[0], 16), int(p[1], 16))
        elif len(p) == 3:
            syms[p[2]] = (int(p[0], 16), 0)
    return syms


def _instruction(elf: Path, pc: int) -> str:
    out = subprocess.run(["arm-none-eabi-objdump", "-d", f"--start-address={pc}", f"--stop-address={pc + 2}",
                          str(elf)], capture_output=True, text=True, check=True).stdout
    return out.strip().splitlines()[-1]


REPORT = re.compile(r"^fatal: (?P<what>.+?) pc=(?P<pc>0x[0-9a-f]{8}|none) lr=(?P<lr>0x[0-9a-f]{8}|none) "
                    r"sp=(?P<sp>0x[0-9a-f]{8}) cfsr=(?P<cfsr>0x[0-9a-f]{8}) hfsr=(?P<hfsr>0x[0-9a-f]{8}) "
                    r"mmfar=(?P<mmfar>0x[0-9a-f]{8}) bfar=(?P<bfar>0x[0-9a-f]{8})$")


def _crash(ser, kind: str) -> dict:
    """Send `:crash kind`; the report's fields (numbers as ints), after checking the reset and the banner."""
    ser.write(f":crash {kind}\n".encode())
    lines = []
    while not lines or lines[-1] != "fatal: reset":
        line = ser.readline().decode("utf-8", "replace")
        assert line.endswith("\n"), f"no fault report after :crash {kind}: {lines}"
        if line.strip():
            lines.append(line.strip())
    assert len(lines) == 2, lines                                     # one report line, then the reset
    m = REPORT.match(lines[0])
    assert m, lines[0]
    banner = ser.readline().decode("utf-8", "replace")
    assert banner.startswith("bertl14 ready "), banner                 # the board reset
    return {k: (v if k == "what" or v == "none" else int(v, 16)) for k, v in m.groupdict().items()}


def _line_of(text: str) -> int:
    src = (REPO / "app" / "src" / "test_faults.c").read_text().splitlines()
    return next(i + 1 for i, line in enumerate(src) if text in line)


def test_faults_print_the_registers_then_reset(fault_image):
    from bertl14_tools.device.serial import open_link
    elf = fault_image
    freertos = "CONFIG_APP_RTOS_FREERTOS=y" in (elf.parent / ".config").read_text()
    syms = _symbols(elf)
    crash_fn = syms["test_fault"]
    in_crash_fn = lambda pc: crash_fn[0] <= pc < crash_fn[0] + crash_fn[1]   # noqa: E731
    guard, sstack = syms["__stack_guard__"][0], syms["_sstack"][0]
    # the main stack: first in DTCM (RAM on this board), above its MPU guard
    assert guard == 0x20000000 and sstack - guard >= 32

    with open_link(qemu=str(elf), timeout=QEMU_TIMEOUT) as ser:
        assert ser.readline().decode().startswith("bertl14 ready ")

        r = _crash(ser, "bus")                                          # a load from unmapped memory
        assert r["what"] == "BusFault" and r["cfsr"] & (PRECISERR | BFARVALID) == PRECISERR | BFARVALID
        assert r["bfar"] == UNMAPPED and in_crash_fn(r["pc"]), r

        r = _crash(ser, "usage")                                        # an undefined instruction
        assert r["what"] == "UsageFault" and r["cfsr"] & UNDEFINSTR and in_crash_fn(r["pc"]), r
        assert "udf" in _instruction(elf, r["pc"])                      # the stacked pc is the faulting instruction

        r = _crash(ser, "assert")
        line = _line_of("configASSERT(kind == NULL)" if freertos else 'platform_fatal("assert test_faults.c"')
        assert r["what"] == f"assert test_faults.c:{line}" and in_crash_fn(r["pc"]), r

        r = _crash(ser, "stack")                                        # endless recursion
        if freertos:    # the task's stack: FreeRTOS's check at the next task switch (vApplicationStackOverflowHook)
            assert r["what"] == "stack overflow infer", r
        else:           # the main stack: its first push into the MPU guard faults
            assert r["what"] == "MemManage" and r["cfsr"] & (DACCVIOL | MMARVALID) == DACCVIOL | MMARVALID, r
            assert guard <= r["mmfar"] < sstack, r
            assert (r["pc"] == "none") == bool(r["cfsr"] & MSTKERR), r   # no frame when its stacking failed

        if freertos:
            r = _crash(ser, "heap")                                     # vApplicationMallocFailedHook
            assert r["what"].startswith("FreeRTOS heap exhausted "), r

        ser.write(b"turn on the kitchen light\n")                        # and the board works after the resets
        assert ser.readline().decode().startswith("intent=")
