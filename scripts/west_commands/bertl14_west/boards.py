"""Board registry: boards/<vendor>/<board>/board.yml (+ board.cmake, Kconfig, <board>_defconfig)."""
from __future__ import annotations

from dataclasses import dataclass
from pathlib import Path

import yaml

from . import REPO_ROOT, BuildError

# the CPUs `bertl14 convert --target-arch` knows (convert.py TARGET_ARCHS); any other board converts for "host"
TARGET_ARCHS = ("cortex-m4", "cortex-m7", "cortex-m33", "cortex-m55", "riscv32")


@dataclass
class Board:
    name: str
    dir: Path
    data: dict

    @property
    def cpu(self) -> str:
        return self.data.get("cpu", "host")

    @property
    def toolchain(self) -> str:
        return self.data.get("toolchain", "host")

    @property
    def target_arch(self) -> str:
        """The `bertl14 convert --target-arch` value."""
        return self.cpu if self.cpu in TARGET_ARCHS else "host"

    def tool(self, name: str) -> str:
        """A binutils program of the board's toolchain: `objdump` -> `arm-none-eabi-objdump` (board.yml
        `toolchain:` is the prefix of its programs), the plain name for the host toolchain."""
        return name if self.toolchain == "host" else f"{self.toolchain}-{name}"

    @property
    def kernels(self) -> list[str]:
        """The library's kernel sets this board runs (board.yml `kernels:`, e.g. [portable, dsp]): what
        `bertl14 check-bitexact --target qemu` and `bertl14 bench` build for it. Default: the portable ones."""
        return list(self.data.get("kernels") or ["portable"])

    @property
    def memory(self) -> list[dict]:
        return list(self.data.get("memory") or [])

    @property
    def modules(self) -> list[str]:
        return list(self.data.get("modules") or [])

    @property
    def runners(self) -> list[str]:
        """The runners this board supports (board.yml `runners: available:`), in its order."""
        return list(self._runner_table().get("available") or [])

    def default_runner(self, command: str) -> str | None:
        """The runner `west flash` (command "flash") or `west debug|attach|debugserver` ("debug") uses
        without -r: board.yml `runners: default:`, else the first available runner that can do it."""
        return (self._runner_table().get("default") or {}).get(command)

    def runner_args(self, runner: str) -> dict:
        """board.yml `runners: args: RUNNER:` (the probe's target name, configuration file, ...)."""
        return dict((self._runner_table().get("args") or {}).get(runner) or {})

    def _runner_table(self) -> dict:
        table = self.data.get("runners") or {}
        if not isinstance(table, dict):
            raise BuildError(f"{self.dir / 'board.yml'}: `runners:` must be a mapping with `available:`, "
                             "`default:` and `args:`")
        return table

    @property
    def flash_region(self) -> dict | None:
        """The memory region the image is written to (kind: flash), None for a board without a memory table."""
        return next((r for r in self.memory if r.get("kind") == "flash"), None)

    @property
    def work_buffer_region(self) -> dict | None:
        """The RAM region holding the bertl14 work buffer (section .dtcmram): DTCM when the board has one,
        else RAM (the linker script's REGION_ALIAS below)."""
        by_name = {r["name"]: r for r in self.memory}
        return by_name.get("DTCM") or by_name.get("RAM")

    @property
    def qemu_machine(self) -> str | None:
        return (self.data.get("qemu") or {}).get("machine")

    @property
    def qemu(self) -> dict | None:
        """How QEMU runs this board (board.yml `qemu:`): {"system": the emulator program (`system:`, default
        qemu-system-arm), "machine": its -M value, "flags": arguments it always needs (`flags:`, e.g. `-bios none`)};
        None for a board QEMU does not emulate."""
        q = self.data.get("qemu") or {}
        if not q.get("machine"):
            return None
        return {"system": q.get("system") or "qemu-system-arm", "machine": q["machine"],
                "flags": [str(f) for f in q.get("flags") or []]}

    @property
    def icount_shift(self) -> int | None:
        """The QEMU -icount shift the test image counts instructions at by default (board.yml `qemu: icount_shift:`;
        None: the tools' default). A board whose counter ticks once a nanosecond of virtual time counts exactly at
        shift 0, where its 32-bit counter wraps last."""
        value = (self.data.get("qemu") or {}).get("icount_shift")
        return None if value is None else int(value)

    @property
    def defconfig(self) -> Path:
        return self.dir / f"{self.name}_defconfig"


def all_boards(root: Path = REPO_ROOT) -> dict[str, Board]:
    boards = {}
    for yml in sorted(root.glob("boards/*/*/board.yml")):
        data = (yaml.safe_load(yml.read_text()) or {}).get("board") or {}
        name = data.get("name") or yml.parent.name
        boards[name] = Board(name, yml.parent, data)
    return dict(sorted(boards.items()))


def find_board(name: str) -> Board:
    boards = all_boards()
    if name not in boards:
        raise BuildError(f"unknown board '{name}'; boards: {', '.join(boards)}")
    return boards[name]


def linker_memory_script(board: Board) -> str:
    """MEMORY block for cmake/linker/cortex_m.ld, generated from the board's memory table (one source)."""
    lines = ["/* Generated by west build from " + str(board.dir / "board.yml") + "; do not edit. */", "MEMORY", "{"]
    names = []
    for region in board.memory:
        attrs = "rx" if region.get("kind") == "flash" else "rwx"
        lines.append(f"  {region['name']} ({attrs}) : ORIGIN = 0x{region['origin']:08x}, LENGTH = 0x{region['size']:08x}")
        names.append(region["name"])
    lines.append("}")
    if "DTCM" not in names:  # the work buffer section goes to DTCM; boards without one keep it in RAM
        lines.append('REGION_ALIAS("DTCM", RAM);')
    if "VECTORS" not in names and "FLASH" in names:  # the vector table: the start of FLASH unless the board boots elsewhere
        lines.append('REGION_ALIAS("VECTORS", FLASH);')
    return "\n".join(lines) + "\n"


def model_needs(board: Board, flash_bytes: int, work_buffer_bytes: int) -> list[dict]:
    """What a converted model takes of the board's memory (board.yml's table, the one source of the sizes): its
    weights and vocabulary in the flash region, its work buffer in the work buffer's RAM region. One row a
    region {what, region, need, size}; none for a board without a memory table (host). The firmware's own code
    and data come on top (the build's memory summary counts everything)."""
    rows = []
    if board.flash_region:
        rows.append({"what": "model data", "region": board.flash_region["name"], "need": int(flash_bytes),
                     "size": int(board.flash_region["size"])})
    if board.work_buffer_region:
        rows.append({"what": "work buffer", "region": board.work_buffer_region["name"],
                     "need": int(work_buffer_bytes), "size": int(board.work_buffer_region["size"])})
    return rows
