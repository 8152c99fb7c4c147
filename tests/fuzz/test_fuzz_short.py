"""CI version of the fuzzing: each target (docs/fuzzing.md) driven for a few seconds by fuzz_replay_main.c (its seeds,
then mutations of them and generated inputs) under gcc ASan + UBSan. The long libFuzzer runs are
tests/fuzz/run.sh SECONDS TARGET."""
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
LIB = "library"   # stands for cbuild.library_sources()

# target -> (sources, defines, seconds, inputs that must get all the way through: fuzz_deep_runs)
TARGETS = {
    "tokenizer": ([HERE / "fuzz_bertl14.c", REPO / "bertl14/src/bertl14_tokenizer.c"], [], 4, 1000),
    "api": ([HERE / "fuzz_bertl14.c", LIB], ["-DFUZZ_WITH_LIBRARY"], 6, 100),
    "model": ([HERE / "fuzz_model.c", LIB], [], 5, 30),
    "registry": ([HERE / "fuzz_registry.c", REPO / "bertl14/registry/bertl14_registry.c"], [], 5, 300),
    "model-dsp": ([HERE / "fuzz_model.c", LIB], ["-DBERTL14_USE_DSP=1"], 2, 15),   # the DSP kernels, emulated
    # the library built for INT8 weights, on its INT8 models; with the DSP kernels, where the INT8 linear kernel's
    # own code is (its portable loop differs from the INT16 one only in the weights' order)
    "model-int8": ([HERE / "fuzz_model.c", LIB], ["-DBERTL14_WEIGHTS_INT8=1", "-DBERTL14_USE_DSP=1"], 3, 25),
}
NEEDS_MODEL = {"api", "model", "model-dsp", "model-int8"}


@pytest.fixture(scope="module")
def fuzz_dir(tmp_path_factory) -> Path:
    out = tmp_path_factory.mktemp("fuzz")
    subprocess.run([sys.executable, str(HERE / "gen_fuzz_data.py"), str(out)], check=True, capture_output=True)
    # the model data once, without instrumentation (1.6 MB of C initializers)
    subprocess.run([cbuild.compiler(), "-c", "-O0", "-o", str(out / "fuzz_data.o"), str(out / "fuzz_data.c")],
                   check=True, capture_output=True)
    return out


def _build(out: Path, target: str) -> Path:
    cc = cbuild.compiler()
    if not shutil.which(cc) and not os.path.exists(cc):
        pytest.skip(f"no C compiler ({cc})")
    sources, defines, _, _ = TARGETS[target]
    srcs = [str(p) for s in sources for p in (cbuild.library_sources() if s == LIB else [s])]
    exe = out / f"replay_{target}"
    cmd = [cc, "-O1", "-g", "-std=c99", "-fsanitize=address,undefined", "-fno-sanitize-recover=all",
           "-fno-omit-frame-pointer", f"-I{REPO / 'bertl14/include'}", f"-I{REPO / 'bertl14/src'}",
           f"-I{REPO / 'bertl14/src/kernels'}", *defines, "-o", str(exe), str(HERE / "fuzz_replay_main.c"), *srcs,
           str(out / "fuzz_data.o"), "-lm"]
    proc = subprocess.run(cmd, capture_output=True, text=True)
    if proc.returncode and "sanitize" in proc.stderr and "cannot find" in proc.stderr:
        pytest.skip("the compiler has no ASan/UBSan runtime")
    assert proc.returncode == 0, proc.stderr
    return exe


@pytest.mark.parametrize("target", list(TARGETS))
def test_fuzz_short(fuzz_dir, target):
    if target in NEEDS_MODEL and "fuzz_have_model = 1" not in (fuzz_dir / "fuzz_data.c").read_text():
        pytest.skip("no random model could be generated (bertl14_tools.model.quant/model_format missing)")
    exe = _build(fuzz_dir, target)
    _, _, seconds, min_deep = TARGETS[target]
    seeds = sorted(str(p) for p in (fuzz_dir / "seeds" / target.split("-")[0]).iterdir())
    assert seeds, f"gen_fuzz_data.py wrote no seeds for {target}"
    env = dict(os.environ, ASAN_OPTIONS="detect_leaks=0:abort_on_error=1", UBSAN_OPTIONS="print_stacktrace=1")
    proc = subprocess.run([str(exe), str(seconds), "7", *seeds], capture_output=True, text=True, env=env,
                          timeout=seconds * 10 + 60)
    assert proc.returncode == 0, proc.stdout + proc.stderr[-4000:]
    assert "no failure" in proc.stdout
    print(f"{target}: {proc.stdout.strip()}")
    execs = int(proc.stdout.split("fuzz_replay: ")[1].split()[0])
    deep = int(proc.stdout.split("executions, ")[1].split()[0])
    assert execs > 1000, proc.stdout
    assert deep >= min_deep, proc.stdout     # the inputs reach the part behind the checks


def test_fuzz_short_protocol(tmp_path):
    """The `protocol` target: the firmware's line ring and protocol with the default model and registry, built for
    the PC by tests/hostapp.py (a `west build -b host` of the generated tables, then the sources under ASan+UBSan)."""
    sys.path.insert(0, str(REPO / "tests"))
    import hostapp
    subprocess.run([sys.executable, str(HERE / "gen_protocol_seeds.py"), str(tmp_path)], check=True,
                   capture_output=True)
    try:
        exe = hostapp.build(tmp_path, [HERE / "fuzz_protocol.c", HERE / "fuzz_replay_main.c"], cbuild.compiler(),
                            hostapp.SANITIZE, "replay_protocol")
    except RuntimeError as exc:
        if "sanitize" in str(exc) and "cannot find" in str(exc):
            pytest.skip("the compiler has no ASan/UBSan runtime")
        raise
    seeds = sorted(str(p) for p in (tmp_path / "seeds" / "protocol").iterdir())
    env = dict(os.environ, ASAN_OPTIONS="detect_leaks=0:abort_on_error=1", UBSAN_OPTIONS="print_stacktrace=1")
    proc = subprocess.run([str(exe), "6", "7", *seeds], capture_output=True, text=True, env=env, timeout=600)
    assert proc.returncode == 0, proc.stdout + proc.stderr[-4000:]
    assert "no failure" in proc.stdout
    print(f"protocol: {proc.stdout.strip()}")
    execs = int(proc.stdout.split("fuzz_replay: ")[1].split()[0])
    deep = int(proc.stdout.split("executions, ")[1].split()[0])
    assert execs > 200 and deep > 100, proc.stdout   # streams, and sentences that reached the model
