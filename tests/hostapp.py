"""The intent firmware's serial protocol built for the PC around a driver of the caller's: app/src/protocol.c (line
handling, commands, answers), intent.c and console_out.c with the bertl14 library, the registry matcher, the slot
values, and the default model and registry exactly as `west build` converts and compiles them. The driver supplies
main() (or libFuzzer's entry point), the platform layer (platform.h) and app_rx_ring.

Used by tests/app/test_uart_errors.py (the STM32H7 receive interrupt against a simulated USART) and by the
`protocol` fuzz target (tests/fuzz/fuzz_protocol.c: tests/fuzz/run.sh and tests/fuzz/test_fuzz_short.py).

    python tests/hostapp.py OUT_DIR DRIVER.c... [--cc CC] [--flag=-fsanitize=...] [--libfuzzer] [--name EXE]
builds OUT_DIR/EXE (default: the first driver's name) and prints its path. --libfuzzer: a libFuzzer target under
ASan + UBSan (clang); the library's kernels and encoder only under ASan, at -O2 and without coverage instrumentation:
their arithmetic loops are not what the target explores (the `api` and `model` targets are), and fully instrumented
they take nine tenths of the time.
"""
from __future__ import annotations

import argparse
import os
import subprocess
import sys
from pathlib import Path

REPO = Path(__file__).resolve().parents[1]
sys.path.insert(0, str(REPO / "tests"))
sys.path.insert(0, str(REPO / "scripts"))

SANITIZE = ["-fsanitize=address,undefined", "-fno-sanitize-recover=all", "-fno-omit-frame-pointer"]
LIBFUZZER = ["-fsanitize=fuzzer,address,undefined", "-fno-sanitize-recover=all"]


def generate(out: Path) -> Path:
    """Kconfig, the model conversion and the registry compilation of the host board's default configuration
    (`west build -b host -t app_registry`: no firmware is compiled); returns the build's generated/ folder."""
    from testsupport import ensure_west_workspace, west
    ensure_west_workspace()
    build = out / "host-generated"
    proc = west("build", "-b", "host", "-d", str(build), "app", "-t", "app_registry")   # incremental
    if proc.returncode != 0:
        raise RuntimeError("west build -b host -t app_registry failed:\n" + proc.stdout[-3000:] + proc.stderr[-3000:])
    return build / "generated"


def sources(gen: Path) -> tuple[list[Path], list[Path], list[Path]]:
    """(code, kernels, data): the firmware's protocol and the library sources; of those, the kernels and the
    encoder; the generated tables (model, registry)."""
    from bertl14_tools import cbuild
    app = [REPO / "app" / "src" / f for f in ("protocol.c", "intent.c", "console_out.c")]
    lib = cbuild.library_sources() + cbuild.registry_sources() + sorted((REPO / "bertl14" / "slots").glob("*.c"))
    kernels = [p for p in lib if p.parent.name == "kernels" or p.name == "bertl14_encoder.c"]
    data = sorted((gen / "model").glob("*.c")) + sorted((gen / "registry").glob("*.c"))
    return [p for p in app + lib if p not in kernels], kernels, data


def flags(gen: Path) -> list[str]:
    """What the firmware build gives app/ on the host board (cmake/firmware.cmake, boards/native/host)."""
    defs = ["-DBOARD_HOST=1", '-DBERTL14_BOARD_NAME="host"']
    if (gen / "registry" / "bertl14_registry.c").is_file():
        defs.append("-DBERTL14_APP_REGISTRY=1")
    incs = [REPO / "app" / "src", REPO / "app" / "src" / "platform" / "host", gen, gen / "model",
            REPO / "bertl14" / "include", REPO / "bertl14" / "src", REPO / "bertl14" / "src" / "kernels"]
    return ["-std=gnu11", "-imacros", str(gen / "autoconf.h"), *defs, *(f"-I{p}" for p in incs)]


def _run(cmd: list[str]) -> None:
    proc = subprocess.run([str(c) for c in cmd], capture_output=True, text=True)
    if proc.returncode != 0:
        raise RuntimeError(" ".join(map(str, cmd)) + "\n" + proc.stderr[-4000:])


def build(out: Path, drivers: list[Path], cc: str, extra: list[str], name: str | None = None,
          kernel_flags: list[str] | None = None) -> Path:
    """Compile the drivers, the protocol and the library with `extra` flags (sanitizers, -fsanitize=fuzzer), the
    kernels and the encoder with `kernel_flags` (default: the same), the generated tables with none (megabytes of
    initializers), and link OUT/name."""
    gen = generate(out)
    code, kernels, data = sources(gen)
    objs = []
    for src in data:
        obj = out / f"{src.stem}.o"
        if not obj.is_file() or obj.stat().st_mtime < src.stat().st_mtime:
            _run([cc, "-c", "-O0", "-o", obj, src])
        objs.append(obj)
    if kernel_flags is None:
        code += kernels
    else:
        for src in kernels:
            obj = out / f"kernel_{src.stem}.o"
            _run([cc, "-c", "-g", *flags(gen), *kernel_flags, "-o", obj, src])
            objs.append(obj)
    exe = out / (name or Path(drivers[0]).stem)
    _run([cc, "-g", "-O1", *flags(gen), *extra, "-o", exe, *drivers, *code, *objs, "-lm"])
    return exe


def main(argv=None) -> int:
    p = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    p.add_argument("out", type=Path)
    p.add_argument("drivers", type=Path, nargs="+")
    p.add_argument("--cc", default=os.environ.get("CC", "cc"))
    p.add_argument("--flag", action="append", default=[], help="one more compiler flag (repeat)")
    p.add_argument("--libfuzzer", action="store_true", help="a libFuzzer target under ASan + UBSan")
    p.add_argument("--name", help="the executable's name (default: the first driver's)")
    a = p.parse_args(argv)
    a.out.mkdir(parents=True, exist_ok=True)
    try:
        if a.libfuzzer:
            exe = build(a.out.resolve(), [d.resolve() for d in a.drivers], a.cc, LIBFUZZER + a.flag, a.name,
                        ["-O2", "-fsanitize=address", "-fno-omit-frame-pointer", *a.flag])
        else:
            exe = build(a.out.resolve(), [d.resolve() for d in a.drivers], a.cc, a.flag, a.name)
        print(exe)
    except (RuntimeError, subprocess.CalledProcessError) as exc:
        print(f"hostapp: {exc}", file=sys.stderr)
        return 1
    return 0


if __name__ == "__main__":
    sys.exit(main())
