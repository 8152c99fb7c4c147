#!/usr/bin/env python3
"""Host side of the GeluApprox TFLM integration: find the TFLM sources, build the op as a shared library
for the `tflite-micro` Python runtime, and locate a Python that has the runtime pinned in west.yml.

    python integrations/tflm/tflm_host.py build        # prints the cached .so path
    python integrations/tflm/tflm_host.py python       # prints the pinned-runtime Python (or why not)

The .so holds the op plus only the TFLM files it needs (kernel_util, micro_context, micro_log, debug_log),
built with the defines the PyPI runtime was built with (TF_LITE_STATIC_MEMORY, USE_TFLM_COMPRESSION), all
symbols hidden but the registerer `bertl14_register_gelu_approx`. Objects are cached in
~/.cache/bertl14/tflm (or $BERTL14_CACHE_DIR/tflm), keyed by the sources' contents and the flags.
"""
from __future__ import annotations

import hashlib
import os
import subprocess
import sys
from concurrent.futures import ThreadPoolExecutor
from pathlib import Path

HERE = Path(__file__).resolve().parent
REPO = HERE.parent.parent
# west.yml pins tflite-micro to this commit; the PyPI build of the same commit (its version is the commit
# time) is the runtime the op library is ABI-compatible with. Its cp311/cp312 wheels are broken (they
# link Python 3.13-only symbols), so the tests run it from a Python 3.13 venv (docs/tflm.md).
TFLM_COMMIT = "90b983c2b3f1480642e040bbd2ddb37b998f3424"
TFLM_PYPI_VERSION = "0.dev20260820164721"
DEFAULT_VENV = Path.home() / ".cache" / "bertl14" / "tflm-py313"
REGISTERER = "bertl14_register_gelu_approx"
GET_SOURCES = ("west config manifest.group-filter -- +optional && west update tflite-micro, then "
               "in modules/lib/tflite-micro: make -f tensorflow/lite/micro/tools/make/Makefile "
               "third_party_downloads (flatbuffers and gemmlowp headers)")
OP_SOURCES = [HERE / "custom_gelu_op.cc"]
TFLM_SOURCES = ["tensorflow/lite/micro/kernels/kernel_util.cc", "tensorflow/lite/micro/micro_context.cc",
                "tensorflow/lite/micro/micro_log.cc", "tensorflow/lite/micro/debug_log.cc"]
HOST_FLAGS = ["-std=c++17", "-O2", "-fPIC", "-fvisibility=hidden", "-ffunction-sections",
              "-fdata-sections", "-DTF_LITE_STATIC_MEMORY=1", "-DUSE_TFLM_COMPRESSION=1"]


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


def compile_objects(compiler: str, flags: list[str], sources: list[Path], out: Path, jobs: int = 2):
    """Compile each source to out/<name>.o unless a cached object of the same key exists (-j2 at most)."""
    out.mkdir(parents=True, exist_ok=True)

    def one(src: Path) -> Path:
        obj = out / f"{src.name}.{_digest([src], flags)}.o"
        if not obj.exists():
            tmp = obj.with_suffix(".tmp")
            subprocess.run([compiler, *flags, "-c", str(src), "-o", str(tmp)], check=True)
            tmp.rename(obj)
        return obj

    with ThreadPoolExecutor(max_workers=jobs) as pool:
        return list(pool.map(one, sources))


def build_op_library(tflm: Path | None = None) -> Path:
    """Build (or reuse) libbertl14_gelu_tflm.so; returns its path."""
    tflm = tflm or find_tflm()
    reason = missing_reason()
    if reason:
        raise RuntimeError(reason)
    flags = HOST_FLAGS + include_flags(tflm)
    sources = OP_SOURCES + [HERE / "python_registerer.cc"] + [tflm / s for s in TFLM_SOURCES]
    out = cache_dir() / "host"
    objs = compile_objects(os.environ.get("CXX", "g++"), flags, sources, out / "obj")
    lib = out / f"libbertl14_gelu_tflm.{_digest(objs, flags)}.so"
    if not lib.exists():
        subprocess.run([os.environ.get("CXX", "g++"), "-shared", "-o", str(lib), *map(str, objs),
                        "-Wl,--gc-sections", "-Wl,--no-undefined"], check=True)
    return lib


def _runtime_version(python: str) -> str | None:
    r = subprocess.run([python, "-c", "import tflite_micro; print(tflite_micro.__version__)"],
                       capture_output=True, text=True)
    return r.stdout.strip() if r.returncode == 0 else None


def find_runtime_python() -> tuple[str | None, str]:
    """(python, "") for a Python whose tflite_micro is the pinned build, else (None, why and what to run)."""
    candidates = [os.environ.get("BERTL14_TFLM_PYTHON"), sys.executable, str(DEFAULT_VENV / "bin" / "python")]
    seen = []
    for python in filter(None, candidates):
        if not Path(python).exists():
            continue
        version = _runtime_version(python)
        seen.append(f"{python}: {version or 'no tflite_micro'}")
        if version and version.startswith(TFLM_PYPI_VERSION):
            return python, ""
    return None, (f"tflite-micro=={TFLM_PYPI_VERSION} (the PyPI build of the pinned TFLM commit "
                  f"{TFLM_COMMIT[:9]}) not found ({'; '.join(seen)}); install it: python3.13 -m venv "
                  f"{DEFAULT_VENV} && {DEFAULT_VENV}/bin/pip install tflite-micro=={TFLM_PYPI_VERSION} "
                  "(or set BERTL14_TFLM_PYTHON)")


def main(argv=None) -> int:
    what = (argv or sys.argv[1:] or ["build"])[0]
    if what == "build":
        reason = missing_reason()
        if reason:
            print(reason, file=sys.stderr)
            return 2
        print(build_op_library())
    elif what == "python":
        python, why = find_runtime_python()
        print(python or why, file=sys.stdout if python else sys.stderr)
        return 0 if python else 2
    else:
        print(__doc__, file=sys.stderr)
        return 2
    return 0


if __name__ == "__main__":
    sys.exit(main())
