#!/usr/bin/env python3
"""Host side of the GeluApprox TFLM integration, built from the pinned tflite-micro sources (west.yml):

    python integrations/tflm/tflm_host.py runner   # build the host runner (TFLM interpreter + the op), print its path
    python integrations/tflm/tflm_host.py build    # build the op library for the tflite-micro Python runtime

The runner (`host/main.cc`) runs one `.tflite` through the TFLM interpreter with GeluApprox registered:

    gelu_tflm_run [--no-op] MODEL.tflite INPUT.bin OUTPUT.bin

(raw bytes of input 0 and output 0; see host/main.cc). `run_model()` wraps it for numpy arrays.

The op library (`python_registerer.cc`) is for the `tflite-micro` PyPI runtime built from the same commit:
the op plus only the TFLM files it needs, with the defines that runtime is built with (TF_LITE_STATIC_MEMORY,
USE_TFLM_COMPRESSION), all symbols hidden but the registerer `bertl14_register_gelu_approx` (docs/tflm.md).

TFLM's own files are compiled as one generated translation unit that includes them all (`unity_source`): their
headers (the flatbuffers schema above all) are then parsed once instead of once a file, about 10x less compile
time; it compiles next to our own files, two compilers at a time. Objects are cached in ~/.cache/bertl14/tflm (or $BERTL14_CACHE_DIR/tflm), keyed by the sources' contents
and the flags.
"""
from __future__ import annotations

import hashlib
import os
import subprocess
import sys
import tempfile
from concurrent.futures import ThreadPoolExecutor
from pathlib import Path

HERE = Path(__file__).resolve().parent
REPO = HERE.parent.parent
REGISTERER = "bertl14_register_gelu_approx"
GET_SOURCES = ("west config manifest.group-filter -- +optional && west update tflite-micro, then "
               "in modules/lib/tflite-micro: make -f tensorflow/lite/micro/tools/make/Makefile "
               "third_party_downloads (flatbuffers and gemmlowp headers); or set BERTL14_MODULES_DIR to a "
               "folder holding lib/tflite-micro")
# The TFLM files a MicroInterpreter needs (allocator, planner, flatbuffer parsing, kernel helpers), paths under
# the tflite-micro root. The images add DebugLog: TFLM's debug_log.cc on the host, the UART on the M7.
TFLM_SOURCES = [os.path.normpath(f"tensorflow/lite/{s}") for s in (
    "micro/micro_interpreter.cc", "micro/micro_interpreter_context.cc", "micro/micro_interpreter_graph.cc",
    "micro/micro_allocator.cc", "micro/micro_allocation_info.cc", "micro/micro_context.cc",
    "micro/micro_log.cc", "micro/micro_utils.cc", "micro/memory_helpers.cc", "micro/flatbuffer_utils.cc",
    "micro/micro_op_resolver.cc", "micro/micro_resource_variable.cc", "micro/micro_profiler.cc",
    "micro/micro_time.cc",
    "micro/arena_allocator/single_arena_buffer_allocator.cc",
    "micro/arena_allocator/persistent_arena_buffer_allocator.cc",
    "micro/arena_allocator/non_persistent_arena_buffer_allocator.cc",
    "micro/memory_planner/greedy_memory_planner.cc", "micro/memory_planner/linear_memory_planner.cc",
    "micro/tflite_bridge/flatbuffer_conversions_bridge.cc", "micro/tflite_bridge/micro_error_reporter.cc",
    "micro/kernels/kernel_util.cc",
    "core/api/flatbuffer_conversions.cc", "core/api/tensor_utils.cc",
    "../compiler/mlir/lite/core/api/error_reporter.cc",
    "core/c/common.cc", "../compiler/mlir/lite/schema/schema_utils.cc",
    "kernels/internal/portable_tensor_utils.cc", "kernels/internal/tensor_ctypes.cc",
    "kernels/kernel_util.cc")]
DEBUG_LOG = "tensorflow/lite/micro/debug_log.cc"
# TFLM is built without exceptions and RTTI (its classes hide operator delete; placement new needs that)
# (and linked with --gc-sections: the kernel helpers reference quantization code no kernel here calls)
RUNNER_FLAGS = ["-std=c++17", "-O1", "-fno-exceptions", "-fno-rtti", "-ffunction-sections", "-fdata-sections",
                "-DTF_LITE_STATIC_MEMORY=1"]
PYLIB_SOURCES = ["tensorflow/lite/micro/kernels/kernel_util.cc", "tensorflow/lite/micro/micro_context.cc",
                 "tensorflow/lite/micro/micro_log.cc", DEBUG_LOG]
PYLIB_FLAGS = ["-std=c++17", "-O2", "-fPIC", "-fvisibility=hidden", "-ffunction-sections",
               "-fdata-sections", "-DTF_LITE_STATIC_MEMORY=1", "-DUSE_TFLM_COMPRESSION=1"]
# TfLiteTypeGetName() -> numpy dtype, for the types a GeluApprox model can have
NUMPY_TYPES = {"FLOAT32": "float32", "FLOAT16": "float16", "INT8": "int8", "UINT8": "uint8", "INT16": "int16",
               "INT32": "int32"}


def cache_dir() -> Path:
    base = os.environ.get("BERTL14_CACHE_DIR")
    return (Path(base) if base else Path.home() / ".cache" / "bertl14") / "tflm"


def find_tflm() -> Path | None:
    """The tflite-micro west project: $BERTL14_MODULES_DIR/lib/tflite-micro or <west topdir>/modules/..."""
    roots = [Path(os.environ["BERTL14_MODULES_DIR"])] if os.environ.get("BERTL14_MODULES_DIR") else []
    roots.append(REPO.parent / "modules")
    for root in roots:
        tflm = root / "lib" / "tflite-micro"
        if (tflm / "tensorflow" / "lite" / "micro" / "micro_interpreter.h").is_file():
            return tflm
    return None


def missing_reason() -> str | None:
    """None when the TFLM sources and their third-party headers are present, else what to run."""
    tflm = find_tflm()
    if tflm is None:
        return ("TFLM sources absent (no modules/lib/tflite-micro under the west topdir or "
                f"$BERTL14_MODULES_DIR); get them: {GET_SOURCES}")
    for name, header in (("flatbuffers", "include/flatbuffers/flatbuffers.h"),
                         ("gemmlowp", "fixedpoint/fixedpoint.h")):
        if not (downloads(tflm) / name / header).is_file():
            return f"{downloads(tflm) / name} missing (TFLM third-party headers); get them: {GET_SOURCES}"
    return None


def downloads(tflm: Path) -> Path:
    return tflm / "tensorflow" / "lite" / "micro" / "tools" / "make" / "downloads"


def include_flags(tflm: Path) -> list[str]:
    d = downloads(tflm)
    return [f"-I{tflm}", f"-I{d / 'flatbuffers' / 'include'}", f"-I{d / 'gemmlowp'}", f"-I{HERE}"]


def _digest(paths, flags) -> str:
    h = hashlib.sha256(" ".join(flags).encode())
    for p in paths:
        h.update(str(p).encode())
        h.update(Path(p).read_bytes())
    return h.hexdigest()[:16]


def _compile(compiler: str, flags: list[str], src: Path, obj: Path) -> Path:
    if not obj.exists():
        tmp = obj.with_suffix(f".{os.getpid()}.tmp")
        subprocess.run([compiler, *flags, "-c", str(src), "-o", str(tmp)], check=True)
        tmp.rename(obj)
    return obj


def compile_objects(compiler: str, flags: list[str], sources: list[Path], out: Path, jobs: int = 2):
    """Compile each source to out/<name>.<key>.o unless a cached object of the same key exists (-j2 at most)."""
    out.mkdir(parents=True, exist_ok=True)
    with ThreadPoolExecutor(max_workers=jobs) as pool:
        return list(pool.map(lambda s: _compile(compiler, flags, s, out / f"{s.name}.{_digest([s], flags)}.o"),
                             sources))


def unity_source(tflm: Path, sources: list[str], out: Path, name: str) -> Path:
    """A generated file that #includes `sources` (paths under `tflm`), named by their contents' digest."""
    text = "".join(f'#include "{s}"\n' for s in sources)
    out.mkdir(parents=True, exist_ok=True)
    src = out / f"{name}.{_digest([tflm / s for s in sources], [text])}.cc"
    if not src.exists():      # written under a temporary name and renamed: a parallel build never reads half a file
        tmp = src.with_suffix(f".{os.getpid()}.tmp")
        tmp.write_text(f"// generated by integrations/tflm/tflm_host.py: TFLM files as one translation unit\n{text}")
        tmp.rename(src)
    return src


def build_runner(tflm: Path | None = None) -> Path:
    """Build (or reuse) the host runner gelu_tflm_run; returns its path."""
    reason = missing_reason()
    if reason:
        raise RuntimeError(reason)
    tflm = tflm or find_tflm()
    cxx = os.environ.get("CXX", "g++")
    flags = RUNNER_FLAGS + include_flags(tflm)
    out = cache_dir() / "host"
    unity = unity_source(tflm, TFLM_SOURCES + [DEBUG_LOG], out / "gen", "tflm_runner")
    objs = compile_objects(cxx, flags, [unity, HERE / "host" / "main.cc", HERE / "custom_gelu_op.cc"], out / "obj")
    exe = out / f"gelu_tflm_run.{_digest(objs, flags)}"
    if not exe.exists():
        tmp = exe.with_suffix(f".{os.getpid()}.tmp")
        subprocess.run([cxx, "-o", str(tmp), *map(str, objs), "-Wl,--gc-sections", "-lm"], check=True)
        tmp.rename(exe)
    return exe


def run_model(model: bytes, x, register: bool = True, runner: Path | None = None, timeout: float = 60):
    """Run `model` on the numpy array `x` with the host runner: (returncode, output array or None, log)."""
    import numpy as np
    runner = runner or build_runner()
    with tempfile.TemporaryDirectory(prefix="gelu-tflm-") as d:
        paths = [Path(d) / n for n in ("model.tflite", "input.bin", "output.bin")]
        paths[0].write_bytes(model)
        paths[1].write_bytes(np.ascontiguousarray(x).tobytes())
        cmd = [str(runner), *([] if register else ["--no-op"]), *map(str, paths)]
        r = subprocess.run(cmd, capture_output=True, text=True, timeout=timeout)
        y = None
        if r.returncode == 0:                      # stdout: "output <TYPE> <d0>x<d1>..."
            _, type_name, *dims = r.stdout.split()
            y = np.frombuffer(paths[2].read_bytes(), dtype=NUMPY_TYPES[type_name]).reshape(
                [int(n) for n in dims[0].split("x")] if dims else [])
    return r.returncode, y, r.stdout + r.stderr


def build_op_library(tflm: Path | None = None) -> Path:
    """Build (or reuse) libbertl14_gelu_tflm.so for the tflite-micro Python runtime; returns its path."""
    reason = missing_reason()
    if reason:
        raise RuntimeError(reason)
    tflm = tflm or find_tflm()
    cxx = os.environ.get("CXX", "g++")
    flags = PYLIB_FLAGS + include_flags(tflm)
    out = cache_dir() / "host"
    unity = unity_source(tflm, PYLIB_SOURCES, out / "gen", "tflm_pylib")
    objs = compile_objects(cxx, flags, [unity, HERE / "custom_gelu_op.cc", HERE / "python_registerer.cc"],
                           out / "obj")
    lib = out / f"libbertl14_gelu_tflm.{_digest(objs, flags)}.so"
    if not lib.exists():
        tmp = lib.with_suffix(f".{os.getpid()}.tmp")
        subprocess.run([cxx, "-shared", "-o", str(tmp), *map(str, objs), "-Wl,--gc-sections",
                        "-Wl,--no-undefined"], check=True)
        tmp.rename(lib)
    return lib


def main(argv=None) -> int:
    what = (argv or sys.argv[1:] or ["runner"])[0]
    if what not in ("runner", "build"):
        print(__doc__, file=sys.stderr)
        return 2
    reason = missing_reason()
    if reason:
        print(reason, file=sys.stderr)
        return 2
    print(build_runner() if what == "runner" else build_op_library())
    return 0


if __name__ == "__main__":
    sys.exit(main())
