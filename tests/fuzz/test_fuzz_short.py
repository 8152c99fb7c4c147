"""CI version of the fuzzing: fuzz_bertl14.c driven by fuzz_replay_main.c (random inputs) under gcc ASan+UBSan.
The long libFuzzer run is tests/fuzz/run.sh SECONDS."""
from __future__ import annotations

import os
import shutil
import subprocess
import sys
from pathlib import Path

import pytest

from bertl14_tools import cbuild

HERE = Path(__file__).resolve().parent
REPO = HERE.parents[1]


@pytest.fixture(scope="module")
def fuzz_dir(tmp_path_factory) -> Path:
    out = tmp_path_factory.mktemp("fuzz")
    subprocess.run([sys.executable, str(HERE / "gen_fuzz_data.py"), str(out)], check=True, capture_output=True)
    # the model data once, without instrumentation (1.6 MB of C initializers)
    subprocess.run([cbuild.compiler(), "-c", "-O0", "-o", str(out / "fuzz_data.o"), str(out / "fuzz_data.c")],
                   check=True, capture_output=True)
    return out


def _build(out: Path, with_library: bool) -> Path:
    cc = cbuild.compiler()
    if not shutil.which(cc) and not os.path.exists(cc):
        pytest.skip(f"no C compiler ({cc})")
    srcs = [str(p) for p in cbuild.library_sources()] if with_library else [str(REPO / "bertl14/src/bertl14_tokenizer.c")]
    exe = out / ("replay_api" if with_library else "replay_tok")
    cmd = [cc, "-O1", "-g", "-std=c99", "-fsanitize=address,undefined", "-fno-sanitize-recover=all",
           "-fno-omit-frame-pointer", f"-I{REPO / 'bertl14/include'}", f"-I{REPO / 'bertl14/src'}",
           f"-I{REPO / 'bertl14/src/kernels'}", *(["-DFUZZ_WITH_LIBRARY"] if with_library else []),
           "-o", str(exe), str(HERE / "fuzz_bertl14.c"), str(HERE / "fuzz_replay_main.c"), *srcs,
           str(out / "fuzz_data.o"), "-lm"]
    proc = subprocess.run(cmd, capture_output=True, text=True)
    if proc.returncode and "sanitize" in proc.stderr and "cannot find" in proc.stderr:
        pytest.skip("the compiler has no ASan/UBSan runtime")
    assert proc.returncode == 0, proc.stderr
    return exe


@pytest.mark.parametrize("with_library,seconds", [(False, 4), (True, 8)])
def test_fuzz_short(fuzz_dir, with_library, seconds):
    if with_library and "fuzz_have_model = 1" not in (fuzz_dir / "fuzz_data.c").read_text():
        pytest.skip("no random model could be generated (bertl14_tools.quant/model_format missing)")
    exe = _build(fuzz_dir, with_library)
    seeds = sorted(str(p) for p in (fuzz_dir / "seeds").iterdir())
    env = dict(os.environ, ASAN_OPTIONS="detect_leaks=0:abort_on_error=1", UBSAN_OPTIONS="print_stacktrace=1")
    proc = subprocess.run([str(exe), str(seconds), "7", *seeds], capture_output=True, text=True, env=env,
                          timeout=seconds * 10 + 60)
    assert proc.returncode == 0, proc.stdout + proc.stderr[-4000:]
    assert "no failure" in proc.stdout
    execs = int(proc.stdout.split("fuzz_replay: ")[1].split()[0])
    assert execs > 1000, proc.stdout
    if with_library:
        assert int(proc.stdout.split("executions, ")[1].split()[0]) > 100, proc.stdout  # the API part ran
