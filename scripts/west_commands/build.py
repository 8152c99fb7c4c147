"""`west build`: Kconfig, CMake and a memory summary for a bertl14 board (Zephyr-style).

    west build -b BOARD [-d BUILD_DIR] [-p] [SOURCE_DIR] [-t TARGET] [-- -DCONFIG_X=... -DEXTRA_CONF_FILE=...]
"""
from __future__ import annotations

import argparse
import json
import os
import shutil
import subprocess
import sys
from pathlib import Path

from west.commands import WestCommand

sys.path.insert(0, str(Path(__file__).resolve().parent))
from bertl14_west import REPO_ROOT, BuildError, run_command  # noqa: E402
from bertl14_west import kconfig, memory, tools  # noqa: E402
from bertl14_west.boards import Board, all_boards, find_board, linker_memory_script  # noqa: E402
from bertl14_west.qemu import qemu_argv  # noqa: E402

INFO_FILE = "bertl14_build.json"
KCONFIG_TARGETS = ("menuconfig", "guiconfig")
REPORT_TARGETS = ("rom_report", "ram_report")

DESCRIPTION = """\
Build firmware for a board: merge the Kconfig fragments into BUILD_DIR/.config and
BUILD_DIR/generated/autoconf.h, configure CMake with the board's toolchain, build
BUILD_DIR/firmware.elf (.bin, .hex, .map) and print flash and RAM use against the board.

Kconfig merge order: defaults < boards/.../<board>_defconfig < SOURCE_DIR/prj.conf
< -DEXTRA_CONF_FILE=a.conf;b.conf < -DCONFIG_X=value (after --).

Targets (-t): menuconfig, guiconfig (edit BUILD_DIR/.config; the next build uses it),
run (QEMU boards: serial console on stdio, Ctrl-A X quits), rom_report, ram_report
(largest symbols), or any CMake target.
"""


class Build(WestCommand):
    def __init__(self):
        super().__init__("build", "build firmware for a board", DESCRIPTION)

    def do_add_parser(self, parser_adder):
        parser = parser_adder.add_parser(self.name, help=self.help, description=self.description,
                                         formatter_class=argparse.RawDescriptionHelpFormatter)
        parser.add_argument("-b", "--board", help="board to build for (see boards/)")
        parser.add_argument("-d", "--build-dir", default="build", help="build directory (default: build)")
        parser.add_argument("-p", "--pristine", nargs="?", const="always", default="never",
                            choices=["auto", "always", "never"],
                            help="start the build directory over (-p alone: always)")
        parser.add_argument("-t", "--target", help="menuconfig, guiconfig, run, rom_report, ram_report or a CMake target")
        parser.add_argument("source_dir", nargs="?", help="application folder (default: app of this repository)")
        parser.add_argument("cmake_opts", nargs="*", help="after --: -DCONFIG_X=value, -DEXTRA_CONF_FILE=..., CMake -D options")
        return parser

    def do_run(self, args, unknown):
        run_command(self, self._build, args)

    # ------------------------------------------------------------------------------------------
    def _build(self, args) -> int:
        if args.source_dir and args.source_dir.startswith("-"):  # `west build -b B -- -DX=...`: no source dir
            args.cmake_opts.insert(0, args.source_dir)
            args.source_dir = None
        build_dir = Path(args.build_dir).resolve()
        old = _read_info(build_dir)
        board_name = args.board or (old or {}).get("board")
        if not board_name:
            raise BuildError(f"no board given: use -b BOARD (boards: {', '.join(all_boards())})")
        board = find_board(board_name)
        if args.source_dir:
            source_dir = Path(args.source_dir).resolve()
        elif old:
            source_dir = Path(old["source_dir"])
        else:
            source_dir = REPO_ROOT / "app"
        if not (source_dir / "CMakeLists.txt").is_file():
            raise BuildError(f"{source_dir} is not an application folder (no CMakeLists.txt)")

        self._prepare_build_dir(build_dir, old, board, source_dir, args.pristine)
        if args.pristine != "never" and not build_dir.exists():
            old = None

        config_args, extra_conf, cmake_args = _split_options(args.cmake_opts)
        _require_toolchain(board)

        # -DCONFIG_X and EXTRA_CONF_FILE stick to the build directory (as CMake cache entries do in
        # Zephyr): later builds reuse them; new ones override per symbol.
        cli = dict((old or {}).get("kconfig_cli") or [])
        cli.update(dict(config_args))
        if not extra_conf:
            extra_conf = [Path(p) for p in (old or {}).get("extra_conf_files") or []]

        # 1. Kconfig -> .config, generated/autoconf.h
        values = kconfig.configure(board, build_dir, source_dir, extra_conf, list(cli.items()))
        info = _make_info(board, build_dir, source_dir, None)
        info.update(kconfig_cli=list(cli.items()), extra_conf_files=[str(p) for p in extra_conf],
                    cmake_args=(old or {}).get("cmake_args"))
        (build_dir / INFO_FILE).write_text(json.dumps(info, indent=2) + "\n")

        # 2. modules this configuration needs
        mod_root = tools.modules_root(self._topdir())
        needed = board.modules + (["rtos/FreeRTOS-Kernel"] if values.get("APP_RTOS_FREERTOS") == "y" else [])
        for rel in needed:
            tools.require_module(mod_root, rel)

        if args.target in KCONFIG_TARGETS:
            return _run_kconfig_ui(board, build_dir, args.target)

        # 3. CMake configure (first time, or when its arguments changed) and build
        if board.memory:
            kconfig.write_if_changed(build_dir / "generated" / "memory_regions.ld", linker_memory_script(board))
        info.update(_make_info(board, build_dir, source_dir, mod_root))
        full_cmake_args = [
            f"-DBOARD={board.name}", f"-DBOARD_DIR={board.dir}", f"-DBERTL14_ROOT={REPO_ROOT}",
            f"-DBERTL14_MODULES_DIR={mod_root if mod_root else ''}",
            f"-DCMAKE_TOOLCHAIN_FILE={REPO_ROOT / 'cmake' / 'toolchain' / (board.toolchain + '.cmake')}",
            f"-DPython3_EXECUTABLE={sys.executable}",
        ] + cmake_args
        cmake = tools.require("cmake")
        if not (build_dir / "CMakeCache.txt").is_file() or (old or {}).get("cmake_args") != full_cmake_args:
            generator = ["-G", "Ninja"] if shutil.which("ninja") else ["-G", "Unix Makefiles"]
            self.banner(f"west build: configuring {board.name} in {build_dir}")
            _run([cmake, *generator, "-S", str(source_dir), "-B", str(build_dir), *full_cmake_args],
                 "CMake configuration failed (see the messages above)")
        info["cmake_args"] = full_cmake_args
        (build_dir / INFO_FILE).write_text(json.dumps(info, indent=2) + "\n")

        target = args.target if args.target and args.target not in REPORT_TARGETS + ("run",) else None
        jobs = os.environ.get("CMAKE_BUILD_PARALLEL_LEVEL", "2")
        cmd = [cmake, "--build", str(build_dir), "-j", jobs] + (["--target", target] if target else [])
        _run(cmd, "build failed (see the messages above: the model conversion, the compiler or the linker)")
        if target:
            return 0

        elf = Path(info["files"]["elf"])
        if not elf.is_file():
            raise BuildError(f"the build produced no {elf}")
        self._print_memory(board, elf, build_dir)

        if args.target in REPORT_TARGETS:
            nm = tools.require(board.tool("nm"))
            print(memory.symbol_report(nm, elf, args.target.split("_")[0]))
        elif args.target == "run":
            return _run_target(board, info)
        return 0

    def _topdir(self) -> str | None:
        try:
            return self.topdir
        except Exception:
            return None

    def _prepare_build_dir(self, build_dir: Path, old: dict | None, board: Board, source_dir: Path, pristine: str):
        if not build_dir.exists():
            return
        is_build_dir = old is not None or (build_dir / "CMakeCache.txt").is_file() or (build_dir / "generated").is_dir()
        mismatch = None
        if old and old.get("board") != board.name:
            mismatch = f"was made for board {old.get('board')}, not {board.name}"
        elif old and old.get("source_dir") != str(source_dir):
            mismatch = f"was made from {old.get('source_dir')}, not {source_dir}"
        elif not old and (build_dir / "CMakeCache.txt").is_file():
            mismatch = "was not made by west build"
        if pristine == "always" or (pristine == "auto" and mismatch):
            if not is_build_dir and any(build_dir.iterdir()):
                raise BuildError(f"{build_dir} is not a build directory; refusing to delete it (choose another -d)")
            shutil.rmtree(build_dir)
        elif mismatch:
            raise BuildError(f"build directory {build_dir} {mismatch}: add -p to start it over "
                             f"(west build -p -b {board.name} -d {build_dir})")

    def _print_memory(self, board: Board, elf: Path, build_dir: Path):
        if not board.memory:  # host board: no memory map, just the section totals
            size = shutil.which("size")
            if size:
                subprocess.run([size, str(elf)])
            return
        objdump = tools.require(board.tool("objdump"))
        usage = memory.memory_usage(memory.elf_sections(objdump, elf), board.memory)
        print(memory.format_usage(usage))
        (build_dir / "memory.json").write_text(json.dumps(usage, indent=2) + "\n")
        for u in usage:
            if u["used"] > u["size"]:
                raise BuildError(f"{u['name']} overflows: {u['used']} bytes used of {u['size']}")


def _read_info(build_dir: Path) -> dict | None:
    try:
        return json.loads((build_dir / INFO_FILE).read_text())
    except (OSError, ValueError):
        return None


def _split_options(opts: list[str]):
    """-DCONFIG_X=v -> Kconfig; -DEXTRA_CONF_FILE=a;b -> fragments; everything else -> CMake."""
    config, extra, cmake = [], [], []
    items = list(opts)
    i = 0
    while i < len(items):
        item = items[i]
        if item == "-D" and i + 1 < len(items):
            item = "-D" + items[i + 1]
            i += 1
        body = item[2:] if item.startswith("-D") else None
        if body and body.startswith("CONFIG_"):
            if "=" not in body:
                raise BuildError(f"{item}: expected -DCONFIG_NAME=value")
            config.append(kconfig.parse_cli_assignment(body))
        elif body and body.split("=", 1)[0].split(":", 1)[0] == "EXTRA_CONF_FILE":
            for part in body.split("=", 1)[1].replace(";", " ").split():
                extra.append(Path(part).resolve())
        else:
            cmake.append(item)
        i += 1
    return config, extra, cmake


def _require_toolchain(board: Board):
    if board.toolchain != "host":     # a cross toolchain (board.yml `toolchain:`, the prefix of its programs)
        tools.require(board.tool("gcc"), f"the {board.name} toolchain")
        tools.require(board.tool("objcopy"), f"the {board.name} toolchain")
    else:
        if not (shutil.which("gcc") or shutil.which("cc")):
            tools.require("gcc", "the host toolchain")


def _make_info(board: Board, build_dir: Path, source_dir: Path, mod_root) -> dict:
    files = {ext: str(build_dir / f"firmware.{ext}") for ext in ("elf", "bin", "hex", "map")}
    return {
        "board": board.name, "board_dir": str(board.dir), "source_dir": str(source_dir),
        "build_dir": str(build_dir), "files": files, "qemu_machine": board.qemu_machine, "qemu": board.qemu,
        "runners": board.runners,
        "target_arch": board.target_arch, "modules_dir": str(mod_root) if mod_root else None,
    }


def _run(cmd: list[str], failure: str):
    if subprocess.run(cmd).returncode != 0:
        raise BuildError(failure)


def _run_kconfig_ui(board: Board, build_dir: Path, tool: str) -> int:
    env = dict(os.environ, **kconfig.kconfig_env(board), KCONFIG_CONFIG=str(build_dir / ".config"))
    if tool == "menuconfig" and not sys.stdin.isatty():
        raise BuildError("menuconfig needs an interactive terminal (or use kconfiglib's setconfig "
                         f"with KCONFIG_CONFIG={build_dir / '.config'})")
    if tool == "guiconfig" and not os.environ.get("DISPLAY") and sys.platform.startswith("linux"):
        raise BuildError("guiconfig needs a graphical display (DISPLAY is not set); use -t menuconfig")
    if tool == "guiconfig" and subprocess.run([sys.executable, "-c", "import tkinter"],
                                              capture_output=True).returncode != 0:
        raise BuildError("guiconfig needs tkinter: install it with `sudo apt-get install python3-tk`")
    rc = subprocess.run([sys.executable, "-m", tool, str(kconfig.ROOT_KCONFIG)], env=env).returncode
    if rc != 0:
        raise BuildError(f"{tool} exited with {rc}")
    print(f"{build_dir / '.config'} saved; the next `west build -d {build_dir}` uses it")
    return 0


def _run_target(board: Board, info: dict) -> int:
    if board.toolchain == "host":  # the host board runs natively: stdin/stdout are its UART
        print("running: " + info["files"]["elf"] + "   (end of input quits: Ctrl-D)", flush=True)
        return subprocess.run([info["files"]["elf"]]).returncode
    if not board.qemu_machine:
        raise BuildError(f"board {board.name} has no emulator; flash it with `west flash` instead of -t run")
    tools.require(board.qemu["system"], "to run the emulated board")
    argv = qemu_argv(info)
    print("running: " + " ".join(argv) + "   (quit: Ctrl-A then X)", flush=True)
    return subprocess.run(argv).returncode
