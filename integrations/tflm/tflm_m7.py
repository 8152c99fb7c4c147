#!/usr/bin/env python3
"""Cortex-M7 cost of GeluApprox: build a TFLM image for mps2_an500 with and without the op, compare
flash (arm-none-eabi-size) and time Invoke of a 32 x 512 activation under QEMU -icount shift=0.

    python integrations/tflm/tflm_m7.py            # prints a JSON report

Compiler: arm-none-eabi-g++ -O2 -mcpu=cortex-m7 -mthumb -mfpu=fpv5-d16 -mfloat-abi=hard (the board's
flags), newlib-nano; startup, UART/timer code and linker script of the workspace's mps2 platform
(app/src/platform/mps2, cmake/linker/cortex_m.ld, MEMORY from boards/arm/mps2_an500/board.yml).
Only the TFLM files the interpreter needs are compiled (tflm_host.TFLM_SOURCES, as one translation unit),
objects cached in ~/.cache/bertl14/tflm/m7. Counting: with -icount shift=0 QEMU advances virtual time 1 ns per
instruction and TIMER0 ticks at 25 MHz, so instructions = ticks * 40 (+-40).
"""
from __future__ import annotations

import json
import re
import subprocess
import sys
import time
from pathlib import Path

import make_model
import tflm_host
from tflm_host import HERE, REPO, TFLM_SOURCES, cache_dir, compile_objects, find_tflm, unity_source

sys.path.insert(0, str(REPO / "scripts" / "west_commands"))
from bertl14_west.boards import find_board, linker_memory_script  # noqa: E402
from bertl14_west.qemu import board_machine, machine_argv, qemu_stdio_serial, start, stop  # noqa: E402

sys.path.insert(0, str(REPO / "scripts"))
from bertl14_tools.cachelock import cache_lock  # noqa: E402

BOARD_NAME = "mps2_an500"
PLATFORM = REPO / "app" / "src" / "platform" / "mps2"
CORTEX_M = REPO / "app" / "src" / "platform" / "cortex_m"     # the fault handlers the mps2 platform reports with
CPU = ["-mcpu=cortex-m7", "-mthumb", "-mfpu=fpv5-d16", "-mfloat-abi=hard"]
COMMON = CPU + ["-O2", "-ffunction-sections", "-fdata-sections", "-DTF_LITE_STATIC_MEMORY=1",
                "-DCONFIG_APP_UART_BAUDRATE=115200", "-DCONFIG_APP_RX_BUFFER=64",
                "-DCONFIG_APP_LINE_MAX=56",
                "-DBOARD_MPS2_AN500=1"]
CXXFLAGS = COMMON + ["-std=c++17", "-fno-rtti", "-fno-exceptions", "-fno-threadsafe-statics",
                     "-fno-use-cxa-atexit", "-Wno-psabi"]
ELEMENTS = 32 * 512
CPU_HZ = 480e6


def memory_regions(out: Path) -> Path:
    """MEMORY block from board.yml (what `west build` generates for the board)."""
    out.mkdir(parents=True, exist_ok=True)
    (out / "memory_regions.ld").write_text(linker_memory_script(find_board(BOARD_NAME)))
    return out


def build_images(tflm: Path, jobs: int = 2) -> dict[str, Path]:
    """The image with the op registered (with_op) and the same image without it (without_op)."""
    base = cache_dir() / "m7"
    with cache_lock(base):   # one process builds at a time; another waits, then finds them built
        return _build_images(tflm, base, jobs)


def _build_images(tflm: Path, base: Path, jobs: int) -> dict[str, Path]:
    gen = base / "gen"
    inc = tflm_host.include_flags(tflm) + [f"-I{PLATFORM}", f"-I{REPO / 'app' / 'src'}"]
    gen.mkdir(parents=True, exist_ok=True)
    models = gen / "gelu_models.cc"
    text = (make_model.c_array(make_model.gelu_model("float32", (32, 512)), "gelu_f32_model")
            + make_model.c_array(make_model.gelu_model("int8", (32, 512)), "gelu_i8_model"))
    if not models.exists() or models.read_text() != text:
        models.write_text(text)
    mains = {}
    for name, with_op in (("with_op", 1), ("without_op", 0)):
        mains[name] = gen / f"main_{name}.cc"
        main_cc = HERE / "m7" / "main.cc"   # its digest in the text: a changed main.cc is compiled again
        main_text = (f"// {tflm_host._digest([main_cc], [])}\n#define WITH_GELU_APPROX {with_op}\n"
                     f'#include "{main_cc}"\n')
        if not mains[name].exists() or mains[name].read_text() != main_text:
            mains[name].write_text(main_text)
    # the slowest first, two at a time: TFLM (one translation unit), the two mains, the op, the models
    unity = unity_source(tflm, TFLM_SOURCES, gen, "tflm_m7")
    tflm_obj, main_with, main_without, op_obj, models_obj = compile_objects(
        "arm-none-eabi-g++", CXXFLAGS + inc, [unity, mains["with_op"], mains["without_op"],
                                              HERE / "custom_gelu_op.cc", models], base / "obj", jobs)
    plat_objs = compile_objects("arm-none-eabi-gcc", COMMON + [f"-I{PLATFORM}", f"-I{CORTEX_M}",
                                                               f"-I{REPO / 'app' / 'src'}"],
                                [PLATFORM / "startup.c", PLATFORM / "platform.c", CORTEX_M / "fault.c"],
                                base / "obj", jobs)
    ld = memory_regions(gen)
    images = {}
    for name, objs in (("with_op", [main_with, op_obj]), ("without_op", [main_without])):
        elf = base / f"gelu_tflm_{name}.elf"
        subprocess.run(["arm-none-eabi-g++", *CPU, "-O2", "-Wl,--gc-sections", "--specs=nano.specs",
                        "--specs=nosys.specs", f"-T{REPO / 'cmake' / 'linker' / 'cortex_m.ld'}", f"-L{ld}",
                        f"-Wl,-Map={elf.with_suffix('.map')}", "-o", str(elf),
                        *map(str, objs + [models_obj] + plat_objs + [tflm_obj]), "-lm"], check=True)
        images[name] = elf
    return images


def size(elf: Path) -> dict[str, int]:
    out = subprocess.run(["arm-none-eabi-size", "-A", str(elf)], capture_output=True, text=True,
                         check=True).stdout
    sec = {m.group(1): int(m.group(2)) for m in re.finditer(r"^(\.\S+)\s+(\d+)\s+\d+", out, re.M)}
    flash = sum(v for k, v in sec.items() if k in (".isr_vector", ".text", ".rodata", ".ARM.exidx",
                                                   ".ARM.extab", ".preinit_array", ".init_array",
                                                   ".fini_array", ".data"))
    berkeley = subprocess.run(["arm-none-eabi-size", str(elf)], capture_output=True, text=True,
                              check=True).stdout.splitlines()[1].split()
    return {"text": int(berkeley[0]), "data": int(berkeley[1]), "bss": int(berkeley[2]), "flash": flash}


def run_qemu(elf: Path, timeout: float = 120.0) -> dict[str, dict]:
    cmd = machine_argv(board_machine(BOARD_NAME), elf, qemu_stdio_serial(), ["-icount", "shift=0"], env_flags=False)
    proc = start(cmd, stdout=subprocess.PIPE, stderr=subprocess.STDOUT, text=True)
    lines, deadline = [], time.time() + timeout
    try:
        for line in proc.stdout:
            lines.append(line.strip())
            if line.startswith("END") or time.time() > deadline:
                break
    finally:
        stop(proc)
    res = {}
    for line in lines:
        m = re.match(r"(\w+) status=(\d+) ticks=(\d+) n=(\d+) sum=(-?\d+)", line)
        if m:
            ticks, n = int(m.group(3)), int(m.group(4))
            instr = ticks * 40
            res[m.group(1)] = {"status": int(m.group(2)), "ticks": ticks, "n": n, "sum": int(m.group(5)),
                               "instructions": instr, "instructions_per_element": instr / n,
                               "ms_at_480MHz_1IPC": instr / CPU_HZ * 1e3}
    res["log"] = lines
    return res


def main() -> int:
    tflm = find_tflm()
    reason = tflm_host.missing_reason()
    if reason:
        print(reason, file=sys.stderr)
        return 2
    images = build_images(tflm)
    sizes = {k: size(v) for k, v in images.items()}
    report = {"sizes": sizes,
              "flash_added_by_op": sizes["with_op"]["flash"] - sizes["without_op"]["flash"],
              "text_added_by_op": sizes["with_op"]["text"] - sizes["without_op"]["text"],
              "qemu_with_op": run_qemu(images["with_op"]),
              "images": {k: str(v) for k, v in images.items()}}
    print(json.dumps(report, indent=2))
    return 0


if __name__ == "__main__":
    sys.exit(main())
