"""C hygiene of the library: it compiles without a single warning under -Wall -Wextra -Werror with every compiler
and kernel set users build it with (host gcc and clang; arm-none-eabi-gcc, and clang with newlib's headers, for the
Cortex-M boards: the DSP kernel set there uses the real ACLE intrinsics; riscv64-unknown-elf-gcc with picolibc for
qemu_riscv32's RV32IMAC, portable kernels); its
public headers define only BERTL14_ / bertl14_ names, so they sit next to vendor headers that typedef INT8 and
friends (C and C++); no library code defines a reserved identifier (__name, _Name) or reads memory through a
pointer cast to another integer type (bertl14_ld32 is the one way to do that)."""
from __future__ import annotations

import os
import re
import shutil
import subprocess
from concurrent.futures import ThreadPoolExecutor
from pathlib import Path

import pytest

from bertl14_tools import cbuild

LIB = cbuild.LIB_DIR
INCLUDES = [f"-I{LIB / 'include'}", f"-I{LIB / 'src'}", f"-I{LIB / 'src' / 'kernels'}"]
STRICT = ["-std=c99", "-Wall", "-Wextra", "-Werror"]
ARM_CPUS = {   # the boards' cores (boards/*/*/board.cmake)
    "cortex-m7": ["-mcpu=cortex-m7", "-mthumb", "-mfloat-abi=hard", "-mfpu=fpv5-d16"],
    "cortex-m4": ["-mcpu=cortex-m4", "-mthumb", "-mfloat-abi=hard", "-mfpu=fpv4-sp-d16"],
    "cortex-m55": ["-mcpu=cortex-m55", "-mthumb", "-mfloat-abi=hard"],
    "cortex-m33": ["-mcpu=cortex-m33", "-mthumb", "-mfloat-abi=hard", "-mfpu=fpv5-sp-d16"],
}
CLANG_TARGET = {"cortex-m7": "thumbv7em-none-eabihf", "cortex-m4": "thumbv7em-none-eabihf",
                "cortex-m55": "thumbv8.1m.main-none-eabihf", "cortex-m33": "thumbv8m.main-none-eabihf"}
# qemu_riscv32's core with picolibc's headers (boards/qemu/qemu_riscv32/board.cmake): the portable kernels only
RISCV_FLAGS = ["-march=rv32imac", "-misa-spec=2.2", "-mabi=ilp32", "--specs=picolibc.specs"]
BUILDS = {   # name: compiler, its flags
    "gcc": ("gcc", []),
    "clang": ("clang", []),
    **{f"arm-{cpu}": ("arm-none-eabi-gcc", flags) for cpu, flags in ARM_CPUS.items()},
    **{f"clang-arm-{cpu}": ("clang", [f"--target={CLANG_TARGET[cpu]}"] + flags[:1] + flags[2:])
       for cpu, flags in ARM_CPUS.items()},
    "riscv32": ("riscv64-unknown-elf-gcc", RISCV_FLAGS),
}
# the kernel sets' definitions; the Cortex-M55 builds check the Helium set (its portable and DSP bodies are the
# M7's), the other builds the portable and DSP sets
KERNEL_DEFS = {"portable": [], "dsp": ["-DBERTL14_USE_DSP=1"], "mve": ["-DBERTL14_USE_DSP=1", "-DBERTL14_USE_MVE=1"]}
CASES = [(build, k) for build in BUILDS for k in KERNEL_DEFS if (k == "mve") == build.endswith("cortex-m55")
         and (k == "portable" or build != "riscv32")]


def library_sources() -> list[Path]:
    """Every C file of the library: the core (src, kernels) and the registry and slot-value libraries."""
    return cbuild.library_sources() + sorted((LIB / "registry").glob("*.c")) + sorted((LIB / "slots").glob("*.c"))


def need(tool: str) -> str:
    """The compiler's path; a missing one skips the test, or fails it under CI (CI=true), which installs them all."""
    path = shutil.which(tool)
    if path is None:
        reason = f"{tool} not installed (make test installs it)"
        if os.environ.get("CI", "").lower() == "true":
            pytest.fail(reason + " [CI=true: CI installs every compiler, so this fails instead of skipping]",
                        pytrace=False)
        pytest.skip(reason)
    return path


def newlib_include() -> str:
    """The C library headers of the Arm toolchain (newlib), for clang's Arm builds."""
    r = subprocess.run([need("arm-none-eabi-gcc"), "-E", "-Wp,-v", "-xc", "/dev/null"], capture_output=True,
                       text=True)
    dirs = [ln.strip() for ln in r.stderr.splitlines() if ln.startswith(" ")]
    found = [d for d in dirs if (Path(d) / "string.h").is_file()]
    assert found, r.stderr
    return found[0]


@pytest.mark.parametrize("build,kernels", CASES)
def test_library_builds_warning_free(tmp_path, build, kernels):
    cc, flags = BUILDS[build]
    if build.startswith("clang-arm"):
        flags = flags + ["-isystem", newlib_include()]
    defs = KERNEL_DEFS[kernels]
    cmd = [need(cc), "-O2"] + flags + STRICT + defs + INCLUDES + ["-c"]
    with ThreadPoolExecutor(max_workers=os.cpu_count() or 1) as pool:   # one compiler a source, as make -j does
        runs = list(pool.map(lambda src: subprocess.run(cmd + cbuild.source_options(src)
                                                        + [str(src), "-o", str(tmp_path / (src.stem + ".o"))],
                                                        capture_output=True, text=True), library_sources()))
    stderr = "".join(r.stderr for r in runs)
    assert all(r.returncode == 0 for r in runs), f"{build} {kernels}:\n{stderr[-4000:]}"
    assert not stderr.strip(), stderr[-4000:]
    assert len(list(tmp_path.glob("*.o"))) == len(library_sources())


# A vendor header (board support packages and older DSP libraries typedef these names), then every public header.
VENDOR_AND_PUBLIC = """
typedef signed char INT8;
typedef short INT16;
typedef int INT32;
typedef float FLOAT32;
typedef signed char INT4;
#include "bertl14.h"
#include "bertl14_profile.h"
#include "bertl14_registry.h"
#include "bertl14_slots.h"
INT8 a8; INT16 a16; INT32 a32; FLOAT32 af; INT4 a4;
bertl14_dtype_t dtype = BERTL14_INT8;
"""


@pytest.mark.parametrize("cc,std", [("gcc", "-std=c99"), ("clang", "-std=c99"), ("g++", "-std=c++11"),
                                    ("clang++", "-std=c++11")])
def test_public_headers_next_to_vendor_types(tmp_path, cc, std):
    src = tmp_path / ("t.cpp" if cc.endswith("++") else "t.c")
    src.write_text(VENDOR_AND_PUBLIC)
    r = subprocess.run([need(cc), std, "-Wall", "-Wextra", "-Wpedantic", "-Werror", "-fsyntax-only",
                        f"-I{LIB / 'include'}", str(src)], capture_output=True, text=True)
    assert r.returncode == 0, r.stderr[-4000:]


def _strip_comments(text: str) -> str:
    text = re.sub(r"/\*.*?\*/", lambda m: "\n" * m.group(0).count("\n"), text, flags=re.S)
    return re.sub(r"//[^\n]*", "", text)


def test_public_headers_define_only_prefixed_names():
    bad = []
    for h in sorted((LIB / "include").glob("*.h")):
        text = _strip_comments(h.read_text())
        names = re.findall(r"^\s*#\s*define\s+(\w+)", text, re.M)
        enums = [n for body in re.findall(r"\benum\s*\w*\s*\{(.*?)\}", text, re.S)
                 for n in re.findall(r"(?:^|,)\s*([A-Za-z_]\w*)", body)]
        types = (re.findall(r"\}\s*(\w+)\s*;", text) + re.findall(r"typedef[^;{]*\(\s*\*\s*(\w+)\s*\)", text)
                 + re.findall(r"typedef\s+[^;{()]*\s\**(\w+)\s*;", text))
        bad += [f"{h.name}: {n}" for n in names + enums if not n.startswith("BERTL14_")]
        bad += [f"{h.name}: {n}" for n in types if not n.startswith("bertl14_")]
    assert not bad, "names without the BERTL14_ / bertl14_ prefix in the public headers: " + ", ".join(bad)
    assert "INT8" not in " ".join(bad)


RESERVED_DEF = re.compile(r"#\s*define\s+(_[A-Z_]\w*)|^\s*(?:static\s+)?(?:inline\s+)?[\w\s\*]*?\b(_[A-Z_]\w*)\s*\([^;]*$",
                          re.M)
# *(T *)p or ((T *)p)[i] with T a 16/32/64-bit integer type: a load of memory as a type it may not have
PUNNED_LOAD = re.compile(r"\*\s*\(\s*(?:const\s+)?u?int(?:16|32|64)_t\s*\*\s*\)"
                         r"|\(\s*\(\s*(?:const\s+)?u?int(?:16|32|64)_t\s*\*\s*\)[^;]*?\)\s*\[|may_alias")


def test_no_reserved_names_no_punned_loads():
    files = library_sources() + sorted(LIB.glob("**/*.h"))
    reserved, punned = [], []
    for f in files:
        text = _strip_comments(f.read_text())
        rel = f.relative_to(LIB)
        for m in RESERVED_DEF.finditer(text):
            name = m.group(1) or m.group(2)
            if name not in ("__attribute__", "__asm", "__asm__", "__builtin_assume_aligned"):
                reserved.append(f"{rel}: {name}")
        punned += [f"{rel}:{text[:m.start()].count(chr(10)) + 1}" for m in PUNNED_LOAD.finditer(text)]
    assert not reserved, "reserved identifiers defined: " + ", ".join(reserved)
    assert not punned, "loads through a cast integer pointer (use bertl14_ld32): " + ", ".join(punned)


def test_checks_see_what_they_look_for():
    """The two scans find a reserved definition and a punned load when there is one."""
    assert RESERVED_DEF.search("static inline int32_t __ssat(int32_t x, uint32_t bits)\n{")
    assert RESERVED_DEF.search("#define __smlad(a, b, c) x")
    assert not RESERVED_DEF.search("static inline int32_t bertl14_ssat(int32_t x, uint32_t bits)\n{")
    assert PUNNED_LOAD.search("const uint32_t w = *(const uint32_t *)(const void *)(x + i);")
    assert PUNNED_LOAD.search("s = ((const uint32_t *)(const void *)(buf + off))[token];")
    assert not PUNNED_LOAD.search("lin->w = (const int16_t *)section(blob, s, NULL);")
