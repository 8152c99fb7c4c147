"""Host builds of the bertl14 C library (the `c` engine, the bit-exactness check, the C tests).

`build_library(kernels="portable"|"dsp", sanitize=())` compiles the library's C files (the list of
`bertl14/sources.cmake`, which the CMake build reads too, with its per-file options) with `cc -O2 -fPIC` into a
shared library in a cache directory keyed by a hash of the sources and the flags, and returns its path. `kernels="dsp"` defines
BERTL14_USE_DSP: on the host the DSP kernels run on the C emulation of the ACLE intrinsics
(`bertl14_acle_emul.h`), so both kernel sets are tested everywhere. `build_registry_library()` compiles the
registry matcher (`bertl14/registry/`, a library of its own as in the firmware's CMake) the same way.
`weights="int8"` builds the library for INT8 linear weights (BERTL14_WEIGHTS_INT8, CONFIG_BERTL14_WEIGHTS_INT8).
"""
from __future__ import annotations

import hashlib
import os
import re
import shutil
import subprocess
import sys
from pathlib import Path

from . import REPO_ROOT
from .errors import UserError

LIB_DIR = REPO_ROOT / "bertl14"
KERNEL_SETS = ("portable", "dsp")
WEIGHT_TYPES = ("int16", "int8")
SANITIZERS = ("address", "undefined")


def cache_dir() -> Path:
    base = os.environ.get("BERTL14_CACHE") or os.path.join(
        os.environ.get("XDG_CACHE_HOME", os.path.expanduser("~/.cache")), "bertl14")
    return Path(base) / "cbuild"


SOURCES_CMAKE = LIB_DIR / "sources.cmake"   # the library's sources and per-file options, for every build

REQUIRED = {
    "bertl14_luts.c": "generate it with `python -m bertl14_tools.reference.gen_luts`",
    "bertl14_tokenizer.c": "the C tokenizer is missing from this checkout",
}


def _source_lists() -> dict[str, list[str]]:
    """The set(NAME item ...) lists of bertl14/sources.cmake."""
    text = re.sub(r"#[^\n]*", "", SOURCES_CMAKE.read_text())
    return {m.group(1): m.group(2).split() for m in re.finditer(r"set\(\s*(\w+)\s+([^)]*)\)", text)}


def source_options(src: Path) -> list[str]:
    """The options bertl14/sources.cmake gives one library source (after the build's flags): -Os for cold code."""
    lists = _source_lists()
    rel = src.relative_to(LIB_DIR).as_posix() if src.is_relative_to(LIB_DIR) else None
    return list(lists["BERTL14_SIZE_OPTIONS"]) if rel in lists["BERTL14_SIZE_SOURCES"] else []


def compile_objects(cmd: list[str], srcs: list[Path], out_dir: Path) -> list[Path]:
    """Compile srcs into out_dir with `cmd -c` plus each source's own options; returns the objects."""
    groups: dict[tuple[str, ...], list[Path]] = {}
    for src in srcs:
        groups.setdefault(tuple(source_options(Path(src))), []).append(Path(src))
    out_dir.mkdir(parents=True, exist_ok=True)
    for opts, group in groups.items():
        _run(cmd + list(opts) + ["-c"] + [str(s) for s in group], cwd=out_dir)
    return [out_dir / (s.stem + ".o") for s in srcs]


def library_sources() -> list[Path]:
    """The library's C files (bertl14/sources.cmake), plus the files named in $BERTL14_EXTRA_SOURCES
    (os.pathsep-separated)."""
    srcs = [LIB_DIR / s for s in _source_lists()["BERTL14_SOURCES"]]
    for src in srcs:
        if not src.is_file() and src.name not in REQUIRED:
            raise UserError(f"bertl14/{src.relative_to(LIB_DIR).as_posix()} not found: bertl14/sources.cmake lists it")
    srcs = [s for s in srcs if s.is_file()]
    extra = [Path(p) for p in os.environ.get("BERTL14_EXTRA_SOURCES", "").split(os.pathsep) if p]
    names = {p.name for p in srcs} | {p.name for p in extra}
    for name, hint in REQUIRED.items():
        if name not in names and not any(n.startswith(name[:-2]) for n in names):
            raise UserError(f"bertl14/src/{name} not found: {hint}")
    return srcs + extra


def _headers() -> list[Path]:
    return (sorted((LIB_DIR / "include").glob("*.h")) + sorted((LIB_DIR / "src").glob("*.h"))
            + sorted((LIB_DIR / "src" / "kernels").glob("*.h")))


def compiler() -> str:
    cc = os.environ.get("CC") or shutil.which("cc") or shutil.which("gcc") or shutil.which("clang")
    if not cc:
        raise UserError("no C compiler found: install gcc or clang (or set CC)")
    return cc


def compile_flags(kernels: str = "portable", sanitize: tuple[str, ...] | list[str] = (),
                  extra: tuple[str, ...] | list[str] = (), weights: str = "int16") -> list[str]:
    if kernels not in KERNEL_SETS:
        raise UserError(f"unknown kernel set {kernels!r}: use one of {', '.join(KERNEL_SETS)}")
    if weights not in WEIGHT_TYPES:
        raise UserError(f"unknown weight type {weights!r}: use one of {', '.join(WEIGHT_TYPES)}")
    flags = ["-O2", "-std=c99", "-Wall", "-Wextra", "-fPIC",
             f"-I{LIB_DIR / 'include'}", f"-I{LIB_DIR / 'src'}", f"-I{LIB_DIR / 'src' / 'kernels'}"]
    if kernels == "dsp":
        flags.append("-DBERTL14_USE_DSP=1")
    if weights == "int8":
        flags.append("-DBERTL14_WEIGHTS_INT8=1")
    for s in sanitize:
        if s not in SANITIZERS:
            raise UserError(f"unknown sanitizer {s!r}: use {', '.join(SANITIZERS)}")
    if sanitize:
        flags += ["-g", "-fno-omit-frame-pointer", "-fsanitize=" + ",".join(sanitize),
                  "-fno-sanitize-recover=all"]
    return flags + list(extra)


def _key(files: list[Path], flags: list[str]) -> str:
    h = hashlib.sha256()
    h.update(" ".join([compiler()] + flags).encode())
    for f in sorted(files):
        h.update(str(f.relative_to(REPO_ROOT) if f.is_relative_to(REPO_ROOT) else f).encode())
        h.update(f.read_bytes())
    return h.hexdigest()[:16]


def _run(cmd: list[str], cwd: Path | None = None) -> None:
    proc = subprocess.run(cmd, capture_output=True, text=True, cwd=cwd)
    if proc.returncode != 0:
        raise UserError("C build failed: " + " ".join(cmd) + "\n" + proc.stderr.strip())


def build_library(kernels: str = "portable", sanitize: tuple[str, ...] | list[str] = (),
                  extra_sources: tuple[Path, ...] | list[Path] = (), weights: str = "int16") -> Path:
    """Build (or reuse from the cache) libbertl14 for the host; returns the .so path."""
    srcs = library_sources() + [Path(p) for p in extra_sources]
    prefix = f"lib-{kernels}" + ("-int8w" if weights == "int8" else "")
    return _shared_library(prefix, "libbertl14.so", srcs, compile_flags(kernels, sanitize, weights=weights), ["-lm"])


def _shared_library(prefix: str, name: str, srcs: list[Path], flags: list[str], libs: list[str] = ()) -> Path:
    """Compile srcs into the shared library `name`, cached under a key of the sources, the library's headers
    and the flags; built under a temporary name and renamed, so concurrent builds never see half a file."""
    out_dir = cache_dir() / f"{prefix}-{_key(srcs + _headers() + [SOURCES_CMAKE], flags)}"
    lib = out_dir / name
    if lib.exists():
        return lib
    tmp = out_dir / f"{name}.tmp{os.getpid()}"
    objs = compile_objects([compiler()] + flags, srcs, out_dir / f"obj{os.getpid()}")
    _run([compiler()] + flags + ["-shared", "-o", str(tmp)] + [str(o) for o in objs] + list(libs))
    shutil.rmtree(objs[0].parent, ignore_errors=True)
    os.replace(tmp, lib)
    return lib


def registry_sources() -> list[Path]:
    srcs = sorted((LIB_DIR / "registry").glob("*.c"))
    if not srcs:
        raise UserError("bertl14/registry/bertl14_registry.c not found: the registry matcher is missing from "
                        "this checkout")
    return srcs


def build_registry_library(sanitize: tuple[str, ...] | list[str] = (),
                           extra_flags: tuple[str, ...] | list[str] = ()) -> Path:
    """Build (or reuse) the registry matcher `bertl14_registry_*` as a host shared library of its own."""
    return _shared_library("registry", "libbertl14_registry.so", registry_sources(),
                           compile_flags("portable", sanitize, extra_flags))


def build_executable(main_sources: list[Path], name: str, kernels: str = "portable",
                     sanitize: tuple[str, ...] | list[str] = (), extra_flags: list[str] = ()) -> Path:
    """Build a host program from `main_sources` plus the library sources (tests, fuzz harnesses)."""
    srcs = library_sources() + [Path(p) for p in main_sources]
    flags = compile_flags(kernels, sanitize, extra_flags)
    out_dir = cache_dir() / f"exe-{name}-{kernels}-{_key(srcs + _headers() + [SOURCES_CMAKE], flags)}"
    exe = out_dir / name
    if exe.exists():
        return exe
    tmp = out_dir / f"{name}.tmp{os.getpid()}"
    objs = compile_objects([compiler()] + flags, srcs, out_dir / f"obj{os.getpid()}")
    _run([compiler()] + flags + ["-o", str(tmp)] + [str(o) for o in objs] + ["-lm"])
    shutil.rmtree(objs[0].parent, ignore_errors=True)
    os.replace(tmp, exe)
    return exe


if __name__ == "__main__":  # python -m bertl14_tools.cbuild [portable|dsp]
    print(build_library(sys.argv[1] if len(sys.argv) > 1 else "portable"))
