"""Locating the tools a build needs; a missing one is an error that says how to install it."""
from __future__ import annotations

import os
import shutil
from pathlib import Path

from . import BuildError

INSTALL = {
    "arm-none-eabi-gcc": "sudo apt-get install gcc-arm-none-eabi libnewlib-arm-none-eabi",
    "arm-none-eabi-objcopy": "sudo apt-get install binutils-arm-none-eabi",
    "gcc": "sudo apt-get install gcc",
    "cmake": "sudo apt-get install cmake (or pip install cmake)",
    "qemu-system-arm": "sudo apt-get install qemu-system-arm",
    "qemu-system-riscv32": "sudo apt-get install qemu-system-misc",
    "riscv64-unknown-elf-gcc": "sudo apt-get install gcc-riscv64-unknown-elf picolibc-riscv64-unknown-elf",
    "riscv64-unknown-elf-objcopy": "sudo apt-get install binutils-riscv64-unknown-elf",
    "openocd": "sudo apt-get install openocd",
    "pyocd": "pip install pyocd",
    "st-flash": "sudo apt-get install stlink-tools",
}


def install_hint(tool: str) -> str:
    """How to install a program (the Debian command)."""
    return INSTALL.get(tool, f"install {tool}")


def require(tool: str, why: str = "") -> str:
    path = shutil.which(tool)
    if not path:
        raise BuildError(f"{tool} not found{' (' + why + ')' if why else ''}: install it with `{install_hint(tool)}`")
    return path


def modules_root(west_topdir: str | None) -> Path | None:
    """Where the modules are: $BERTL14_MODULES_DIR if set (the folder holding rtos/, hal/, lib/, or a
    folder holding modules/), else <west topdir>/modules."""
    env = os.environ.get("BERTL14_MODULES_DIR")
    if env:
        p = Path(env).expanduser().resolve()
        return p / "modules" if (p / "modules").is_dir() else p
    if west_topdir:
        return Path(west_topdir) / "modules"
    return None


def require_module(root: Path | None, rel: str) -> Path:
    name = rel.rsplit("/", 1)[-1]
    path = root / rel if root else None
    if path is None or not path.is_dir() or not any(path.iterdir()):
        where = f" (looked in {path})" if path else ""
        raise BuildError(f"module {name} not found{where}: run `west update`, or set BERTL14_MODULES_DIR "
                         f"to a folder holding {rel}")
    return path
