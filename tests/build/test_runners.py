"""`west boards`, and `west flash|debug|attach|debugserver` through their runners: the exact commands (--dry-run, on
a build directory whose outputs are stand-ins: no probe or toolchain needed), the refusals, and a real debug
session on the emulated board (QEMU's gdbstub, spoken to directly and through gdb when one is installed)."""
from __future__ import annotations

import json
import os
import shlex
import shutil
import signal
import socket
import struct
import subprocess
import sys
import time
from pathlib import Path

import pytest

from testsupport import REPO, assert_one_line_error, west

sys.path.insert(0, str(REPO / "scripts" / "west_commands"))
from bertl14_west import qemu as westqemu  # noqa: E402
from bertl14_west.boards import all_boards, find_board  # noqa: E402


def _fake_build(tmp_path: Path, board: str) -> Path:
    """A build directory as `west build` leaves it (its bertl14_build.json from build.py itself), with stand-in
    firmware files: enough for --dry-run, which only prints."""
    import importlib.util
    spec = importlib.util.spec_from_file_location("bertl14_west_build", REPO / "scripts" / "west_commands" / "build.py")
    west_build = importlib.util.module_from_spec(spec)
    spec.loader.exec_module(west_build)
    b = tmp_path / board
    b.mkdir()
    info = west_build._make_info(find_board(board), b, REPO / "app", None)
    (b / west_build.INFO_FILE).write_text(json.dumps(info))
    for f in info["files"].values():
        Path(f).write_bytes(b"stand-in")
    return b


def _dry(command: str, build_dir: Path, runner: str | None = None, gdb: str | None = None,
         gdb_port: int | None = None) -> str:
    """What `west COMMAND -d BUILD_DIR [-r RUNNER] [--gdb G] [--gdb-port P] --dry-run` prints, computed in this
    process by the commands' own code (each west start costs a second; the west path itself is tested below)."""
    from argparse import Namespace
    from bertl14_west.runners.command import make_runner
    args = Namespace(build_dir=str(build_dir), runner=runner, gdb=gdb, gdb_port=gdb_port, dry_run=True)
    r = make_runner(command, args)
    r.before(command, True)
    return "\n".join(shlex.join(argv) for argv in r.argvs(command))


def test_west_boards_lists_every_board_with_its_memory_and_runners():
    proc = west("boards")
    assert proc.returncode == 0, proc.stderr
    assert proc.stdout.split() == sorted(all_boards())
    assert {"host", "mps2_an386", "mps2_an500", "mps2_an505", "nucleo_h743zi", "qemu_riscv32"} <= set(all_boards())
    proc = west("boards", "-n", "nucleo|an500|riscv", "-f", "{name}|{cpu}|{flash}|{ram}|{qemu}|{runners}|{dir}")
    assert proc.stdout.splitlines() == [
        "mps2_an500|cortex-m7|4 MB|RAM 4 MB|mps2-an500|qemu|boards/arm/mps2_an500",
        "nucleo_h743zi|cortex-m7|2 MB|DTCM 128 KB, RAM 512 KB, SRAM123 288 KB, SRAM4 64 KB||"
        "openocd, pyocd, jlink, stm32cubeprogrammer, st-flash|boards/st/nucleo_h743zi",
        "qemu_riscv32|riscv32|4 MB|RAM 4 MB|virt|qemu|boards/qemu/qemu_riscv32"]
    assert_one_line_error(west("boards", "-f", "{speed}"), "{speed}", "{name}", "{runners}")


def test_nucleo_flash_dry_run_prints_each_runner(tmp_path):
    b = _fake_build(tmp_path, "nucleo_h743zi")
    elf, bin_, hex_ = (str(b / f"firmware.{e}") for e in ("elf", "bin", "hex"))
    script = b / "runners" / "jlink" / "flash.jlink"
    expected = {
        None: f"openocd -f board/st_nucleo_h743zi.cfg -c 'program {elf} verify reset exit'",
        "openocd": f"openocd -f board/st_nucleo_h743zi.cfg -c 'program {elf} verify reset exit'",
        "pyocd": f"pyocd flash --target stm32h743zitx {hex_}",
        "jlink": f"JLinkExe -nogui 1 -if swd -speed auto -device STM32H743ZI -CommanderScript {script}",
        "st-flash": f"st-flash --reset write {bin_} 0x08000000",
        "stlink": f"st-flash --reset write {bin_} 0x08000000",      # the earlier name still works
    }
    for runner, command in expected.items():
        assert _dry("flash", b, runner) == command, runner
    proc = west("flash", "-d", str(b), "-r", "st-flash", "--dry-run")     # the same through west
    assert proc.returncode == 0 and proc.stdout.strip() == expected["st-flash"], proc.stderr
    assert script.read_text().splitlines() == ["ExitOnError 1", "r", f"loadfile {hex_}", "r", "g", "q"]
    cube = _dry("flash", b, "stm32cubeprogrammer")
    assert cube.endswith(f"STM32_Programmer_CLI --connect port=swd reset=HWrst --download {hex_} --verify --start")


def test_nucleo_debug_attach_debugserver_dry_run(tmp_path):
    b = _fake_build(tmp_path, "nucleo_h743zi")
    elf = str(b / "firmware.elf")
    ocd = "openocd -f board/st_nucleo_h743zi.cfg -c 'gdb_port 3333' -c init"
    assert _dry("debug", b, gdb="my-gdb").splitlines() == [
        ocd + " -c 'reset halt'",
        f"my-gdb -q {elf} -ex 'target extended-remote 127.0.0.1:3333' -ex 'monitor reset halt' -ex load "
        "-ex 'monitor reset halt'"]
    assert _dry("attach", b, gdb="my-gdb").splitlines() == [ocd, f"my-gdb -q {elf} -ex 'target extended-remote 127.0.0.1:3333'"]
    assert _dry("debugserver", b) == ocd + " -c 'reset halt'"
    assert _dry("debug", b, "pyocd", "my-gdb", 4000).splitlines() == [
        "pyocd gdbserver --target stm32h743zitx --port 4000",
        f"my-gdb -q {elf} -ex 'target remote 127.0.0.1:4000' -ex 'monitor reset halt' -ex load -ex 'monitor reset halt'"]
    assert _dry("attach", b, "pyocd").splitlines()[0].endswith("--port 3333 --connect attach")
    jlink = "JLinkGDBServer -select usb -port 2331 -if swd -speed auto -device STM32H743ZI -silent -singlerun -nogui"
    assert _dry("debug", b, "jlink", "my-gdb").splitlines() == [
        jlink, f"my-gdb -q {elf} -ex 'target remote 127.0.0.1:2331' -ex 'monitor halt' -ex 'monitor reset' -ex load "
               "-ex 'monitor reset'"]
    assert _dry("attach", b, "jlink").splitlines()[0] == jlink + " -nohalt"
    proc = west("debug", "-d", str(b), "--gdb", "my-gdb", "--dry-run")      # the same through west
    assert proc.returncode == 0 and proc.stdout.splitlines() == _dry("debug", b, gdb="my-gdb").splitlines(), proc.stderr


def test_runner_refusals_say_what_works(tmp_path):
    from bertl14_west import BuildError
    b = _fake_build(tmp_path, "nucleo_h743zi")
    assert_one_line_error(west("debug", "-d", str(b), "-r", "st-flash", "--dry-run"),
                          "st-flash cannot debug", "openocd, pyocd, jlink")
    an500 = _fake_build(tmp_path, "mps2_an500")
    refusals = [(("flash", b, "nope"), ("unknown runner nope", "st-flash")),
                (("flash", b, "qemu"), ("does not support runner qemu", "openocd")),
                (("flash", an500), ("no flash runner", f"west build -d {an500} -t run")),
                (("flash", tmp_path / "none"), ("not a west build directory",))]
    for call, needles in refusals:
        with pytest.raises(BuildError) as e:
            _dry(*call)
        assert all(n in str(e.value) for n in needles), str(e.value)
    (b / "firmware.hex").unlink()
    with pytest.raises(BuildError, match="firmware.hex missing: build first"):
        _dry("flash", b, "pyocd")


def test_missing_tool_says_how_to_install(tmp_path):
    b = _fake_build(tmp_path, "nucleo_h743zi")
    bindir = tmp_path / "bin"
    bindir.mkdir()
    proc = west("flash", "-d", str(b), "-r", "st-flash", env={"PATH": str(bindir)})
    assert_one_line_error(proc, "st-flash not found", "apt-get install stlink-tools")
    proc = west("debug", "-d", str(b), "-r", "openocd", "--gdb", str(bindir / "no-gdb"), env={"PATH": str(bindir)})
    assert_one_line_error(proc, "openocd not found", "apt-get install openocd")


def test_emulated_and_host_boards_debug_dry_run(tmp_path, monkeypatch):
    monkeypatch.setenv("BERTL14_QEMU_FLAGS", "")
    b = _fake_build(tmp_path, "mps2_an386")
    elf = str(b / "firmware.elf")
    server, gdb = _dry("debug", b, gdb="g", gdb_port=5000).splitlines()
    assert server == (f"qemu-system-arm -M mps2-an386 -display none -monitor none -serial "
                      f"tcp:127.0.0.1:5001,server=on,wait=off -gdb tcp:127.0.0.1:5000 -S -kernel {elf}")
    assert gdb == f"g -q {elf} -ex 'target remote 127.0.0.1:5000'"
    assert " -S " not in _dry("attach", b)
    assert _dry("debugserver", b) == f"qemu-system-arm -M mps2-an386 -nographic -gdb tcp:127.0.0.1:1234 -S -kernel {elf}"
    rv = _fake_build(tmp_path, "qemu_riscv32")            # the board's QEMU program and fixed arguments (board.yml)
    assert _dry("debugserver", rv) == (f"qemu-system-riscv32 -M virt -bios none -nographic -gdb tcp:127.0.0.1:1234 "
                                       f"-S -kernel {rv / 'firmware.elf'}")
    host = _fake_build(tmp_path, "host")
    assert _dry("debug", host) == f"gdb -q {host / 'firmware.elf'}"


# ---- a real session on the emulated board ----------------------------------------------------------------------

def _rsp(sock: socket.socket, packet: str, timeout: float = 10) -> str:
    """Send one gdb remote-protocol packet and return the reply's payload."""
    sock.sendall(f"${packet}#{sum(packet.encode()) % 256:02x}".encode())
    data, deadline = b"", time.monotonic() + timeout
    while time.monotonic() < deadline:
        data += sock.recv(4096)
        start = data.find(b"$")
        end = data.find(b"#", start + 1)
        if start >= 0 and end >= 0 and len(data) >= end + 3:
            sock.sendall(b"+")
            return data[start + 1:end].decode()
    raise AssertionError(f"no reply to {packet!r}: {data!r}")


def _reset_handler(elf: Path) -> int:
    nm = subprocess.run(["arm-none-eabi-nm", str(elf)], capture_output=True, text=True, check=True).stdout
    return next(int(p[0], 16) for p in (ln.split() for ln in nm.splitlines()) if len(p) == 3 and p[2] == "Reset_Handler")


def test_debugserver_holds_the_emulated_board_at_its_reset_vector(bare_metal_an500):
    """`west debugserver` on mps2_an500: QEMU's gdbstub answers on the port, the CPU is stopped (signal 5) and its
    pc is Reset_Handler, as gdb would see after `target remote`."""
    build_dir = bare_metal_an500[0]
    port = westqemu.free_port()
    proc = subprocess.Popen([sys.executable, "-m", "west", "debugserver", "-d", str(build_dir), "--gdb-port", str(port)],
                            cwd=REPO, stdin=subprocess.DEVNULL, stdout=subprocess.PIPE, stderr=subprocess.STDOUT,
                            start_new_session=True, env={**os.environ, "BERTL14_QEMU_FLAGS": ""})
    try:
        deadline = time.monotonic() + 20
        while True:
            try:
                sock = socket.create_connection(("127.0.0.1", port), timeout=10)
                break
            except OSError:
                assert proc.poll() is None, proc.stdout.read().decode()
                assert time.monotonic() < deadline, "the gdb server did not open its port"
                time.sleep(0.1)
        with sock:
            stop = _rsp(sock, "?")
            assert stop[0] in "ST" and stop[1:3] == "05", stop
            regs = _rsp(sock, "g")
            pc = struct.unpack("<I", bytes.fromhex(regs[15 * 8:16 * 8]))[0]
            assert pc == _reset_handler(build_dir / "firmware.elf") & ~1
    finally:
        os.killpg(proc.pid, signal.SIGTERM)
        proc.wait(timeout=10)


def test_debug_runs_gdb_to_main_on_the_emulated_board(bare_metal_an500):
    """`west debug` on mps2_an500 with gdb reading its commands from stdin: a breakpoint on main is reached from
    the reset vector, and QEMU is stopped when gdb exits."""
    gdb = next((g for g in ("arm-none-eabi-gdb", "gdb-multiarch") if shutil.which(g)), None)
    if gdb is None:
        pytest.skip("no gdb for Arm installed (sudo apt-get install gdb-multiarch)")
    build_dir = bare_metal_an500[0]
    port = westqemu.free_port()
    proc = west("debug", "-d", str(build_dir), "--gdb", gdb, "--gdb-port", str(port),
                stdin="break main\ncontinue\ninfo registers pc\nquit\n", env={"BERTL14_QEMU_FLAGS": ""}, timeout=120)
    assert proc.returncode == 0, proc.stdout + proc.stderr
    assert "Reset_Handler" in proc.stdout                       # where QEMU held the CPU
    assert "Breakpoint 1, main" in proc.stdout, proc.stdout     # continue ran the startup code to main
    assert f"socket://127.0.0.1:{port + 1}" in proc.stdout       # where UART0 was
    time.sleep(0.5)
    with socket.socket() as s:                                   # QEMU is gone: its gdb port is free again
        s.bind(("127.0.0.1", port))
