"""Firmware builds for the Cortex-M boards: outputs, memory summary, QEMU serial echo over pyserial
socket://, module and toolchain errors, nucleo_h743zi build and `west flash --dry-run` (every runner: test_runners.py)."""
from __future__ import annotations

import struct
import subprocess
from pathlib import Path

import pytest

from testsupport import assert_one_line_error, require_arm, require_modules, west


def _expect_banner_and_echo(q, board: str, rtos: str):
    """The intent firmware (its own tests are tests/app): banner, :config, answers."""
    banner = q.readline()
    assert banner.startswith("bertl14 ready model="), banner
    q.write(b":config\r\n")
    config = q.readline()
    assert config.startswith(f"ok config model=") and f" board={board} rtos={rtos} " in config, config
    q.write(b"turn on the kitchen light\r\n")
    # the label depends on the shipped weights (tests/app checks it against the reference); the name comes from
    # the default registry app/entities.yaml, compiled into every board's build
    answer = q.readline()
    assert answer.startswith("intent=") and " score=" in answer and " name=Kitchen%20Light " in answer, answer
    q.write(b"y" * 400 + b"\nturn off the fan\n")
    assert q.readline().startswith("error=too_long ")
    assert q.readline().startswith("intent=")


def test_bare_metal_an500_builds_without_modules(bare_metal_an500):
    build_dir, proc = bare_metal_an500
    for ext in ("elf", "bin", "hex", "map"):
        assert (build_dir / f"firmware.{ext}").stat().st_size > 0
    assert "FLASH:" in proc.stdout and "RAM:" in proc.stdout and "4 MB" in proc.stdout
    autoconf = (build_dir / "generated" / "autoconf.h").read_text()
    assert "#define CONFIG_APP_RTOS_NONE 1" in autoconf


def test_bare_metal_an500_echoes_under_qemu(bare_metal_an500, qemu):
    _expect_banner_and_echo(qemu(bare_metal_an500[0]), "mps2_an500", "none")


def test_rom_and_ram_reports(bare_metal_an500):
    rom = west("build", "-d", str(bare_metal_an500[0]), "-t", "rom_report")
    assert rom.returncode == 0, rom.stderr
    assert "ROM report" in rom.stdout and "bertl14_weights" in rom.stdout   # the app carries the model now
    ram = west("build", "-d", str(bare_metal_an500[0]), "-t", "ram_report")
    assert ram.returncode == 0, ram.stderr
    assert "app_rx_ring" in ram.stdout


def test_freertos_needs_its_module(tmp_path, empty_modules):
    require_arm()
    proc = west("build", "-b", "mps2_an500", "-d", str(tmp_path / "b"), "app", env=empty_modules)
    assert_one_line_error(proc, "FreeRTOS-Kernel", "west update", "BERTL14_MODULES_DIR")


def test_freertos_an500_echoes_under_qemu(tmp_path, qemu):
    require_arm()
    require_modules("rtos/FreeRTOS-Kernel")
    b = tmp_path / "b"
    proc = west("build", "-b", "mps2_an500", "-p", "-d", str(b), "app")
    assert proc.returncode == 0, proc.stdout + proc.stderr
    assert "#define CONFIG_APP_RTOS_FREERTOS 1" in (b / "generated" / "autoconf.h").read_text()
    _expect_banner_and_echo(qemu(b), "mps2_an500", "freertos")


@pytest.mark.parametrize("rtos", ["none", "freertos"])
def test_an386_cortex_m4_echoes_under_qemu(tmp_path, qemu, empty_modules, rtos):
    require_arm()
    if rtos == "freertos":
        require_modules("rtos/FreeRTOS-Kernel")  # port GCC/ARM_CM4F
        proc = west("build", "-b", "mps2_an386", "-d", str(tmp_path / "b"))
    else:
        proc = west("build", "-b", "mps2_an386", "-d", str(tmp_path / "b"), "--", "-DCONFIG_APP_RTOS_NONE=y",
                    env=empty_modules)
    assert proc.returncode == 0, proc.stdout + proc.stderr
    _expect_banner_and_echo(qemu(tmp_path / "b"), "mps2_an386", rtos)


def test_nucleo_needs_the_hal_modules(tmp_path, empty_modules):
    require_arm()
    proc = west("build", "-b", "nucleo_h743zi", "-d", str(tmp_path / "b"), env=empty_modules)
    assert_one_line_error(proc, "not found", "west update")


def test_missing_toolchain_says_how_to_install(tmp_path):
    """With arm-none-eabi-gcc off the PATH the build stops before CMake with the apt-get command."""
    bindir = tmp_path / "bin"
    bindir.mkdir()
    proc = west("build", "-b", "mps2_an500", "-d", str(tmp_path / "b"), env={"PATH": str(bindir)})
    assert_one_line_error(proc, "arm-none-eabi-gcc", "apt-get install gcc-arm-none-eabi")
    # the board's own toolchain (board.yml `toolchain:`): the RISC-V one for qemu_riscv32
    proc = west("build", "-b", "qemu_riscv32", "-d", str(tmp_path / "rv"), env={"PATH": str(bindir)})
    assert_one_line_error(proc, "riscv64-unknown-elf-gcc", "apt-get install gcc-riscv64-unknown-elf "
                          "picolibc-riscv64-unknown-elf")


def test_nucleo_builds_and_flash_dry_run_prints_each_runner(tmp_path):
    require_arm()
    require_modules("rtos/FreeRTOS-Kernel", "hal/stm32h7xx_hal_driver", "hal/cmsis_device_h7", "hal/CMSIS_6")
    b = tmp_path / "b"
    proc = west("build", "-b", "nucleo_h743zi", "-p", "-d", str(b), "app")
    assert proc.returncode == 0, proc.stdout + proc.stderr
    for region in ("FLASH:", "DTCM:", "RAM:", "2 MB", "128 KB", "512 KB"):
        assert region in proc.stdout
    elf, bin_, hex_ = (str(b / f"firmware.{e}") for e in ("elf", "bin", "hex"))
    expected = {
        None: f"openocd -f board/st_nucleo_h743zi.cfg -c 'program {elf} verify reset exit'",
        "pyocd": f"pyocd flash --target stm32h743zitx {hex_}",
        "st-flash": f"st-flash --reset write {bin_} 0x08000000",
    }
    for runner, command in expected.items():
        args = ["flash", "-d", str(b), "--dry-run"] + (["-r", runner] if runner else [])
        out = west(*args)
        assert out.returncode == 0, out.stderr
        assert out.stdout.strip() == command


def _vector_table(elf: Path, tmp: Path) -> list[int]:
    out = tmp / "vectors.bin"
    subprocess.run(["arm-none-eabi-objcopy", "-O", "binary", "-j", ".isr_vector", str(elf), str(out)], check=True)
    data = out.read_bytes()
    return list(struct.unpack(f"<{len(data) // 4}I", data))


def _symbols(elf: Path) -> dict[str, int]:
    nm = subprocess.run(["arm-none-eabi-nm", str(elf)], capture_output=True, text=True, check=True).stdout
    return {p[2]: int(p[0], 16) for p in (line.split() for line in nm.splitlines()) if len(p) == 3}


def test_nucleo_vectors_route_uart_tim6_and_freertos(tmp_path):
    """USART3 (IRQ 39) -> our RX handler, TIM6 (IRQ 54) -> the HAL timebase, SVC/PendSV/SysTick -> the
    FreeRTOS port; HardFault/MemManage/BusFault/UsageFault -> the fault report; the initial stack pointer is the top
    of the main stack, which starts DTCM above its 256-byte MPU guard (an overflow faults instead of running into data)."""
    require_arm()
    require_modules("rtos/FreeRTOS-Kernel", "hal/stm32h7xx_hal_driver", "hal/cmsis_device_h7", "hal/CMSIS_6")
    b = tmp_path / "b"
    proc = west("build", "-b", "nucleo_h743zi", "-d", str(b), "app")
    assert proc.returncode == 0, proc.stdout + proc.stderr
    vectors, syms = _vector_table(b / "firmware.elf", tmp_path), _symbols(b / "firmware.elf")
    expected = {3: "HardFault_Handler", 4: "MemManage_Handler", 5: "BusFault_Handler", 6: "UsageFault_Handler",
                11: "SVC_Handler", 14: "PendSV_Handler", 15: "SysTick_Handler",
                16 + 39: "USART3_IRQHandler", 16 + 54: "TIM6_DAC_IRQHandler"}
    for slot, name in expected.items():
        assert vectors[slot] & ~1 == syms[name] & ~1, name
        assert syms[name] != syms["Default_Handler"], f"{name} is still the startup file's weak default"
    stack = int((b / ".config").read_text().split("CONFIG_APP_MAIN_STACK_SIZE=")[1].split()[0])
    assert syms["__stack_guard__"] == 0x20000000 and syms["_sstack"] == 0x20000000 + 256    # DTCM's start
    assert vectors[0] == syms["_estack"] == syms["_sstack"] + stack


def test_flash_on_a_qemu_board_explains(bare_metal_an500):
    proc = west("flash", "-d", str(bare_metal_an500[0]), "--dry-run")
    assert_one_line_error(proc, "no flash runner", "-t run")
