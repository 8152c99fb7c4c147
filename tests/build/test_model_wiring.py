"""The build converts CONFIG_BERTL14_MODEL_DIR with the .config values (bertl14 convert as a CMake
custom command) and links the bertl14 library, when an application sets BERTL14_APP_USES_MODEL."""
from __future__ import annotations

import subprocess
import sys

import pytest

from testsupport import REPO, west


@pytest.fixture
def tiny_model(tmp_path):
    sys.path.insert(0, str(REPO / "tests" / "convert"))
    try:
        from cvt_util import write_tiny_bert
    except Exception as e:  # the converter's test helpers are not there yet
        pytest.skip(f"tests/convert/cvt_util.write_tiny_bert unavailable: {e}")
    return write_tiny_bert(tmp_path / "tiny")


def test_host_build_converts_with_kconfig_values_and_runs(tmp_path, tiny_model):
    b = tmp_path / "b"
    proc = west("build", "-b", "host", "-d", str(b), str(REPO / "tests/build/model_app"), "--",
                f"-DCONFIG_BERTL14_MODEL_DIR={tiny_model}", "-DCONFIG_BERTL14_MAX_SEQ_LEN=16",
                "-DCONFIG_BERTL14_QUANTIZE_EMBEDDING_INT4=y", "-DCONFIG_BERTL14_WEIGHTS_INT8=y")
    assert proc.returncode == 0, proc.stdout[-3000:] + proc.stderr
    config_h = (b / "generated" / "model" / "bertl14_config.h").read_text()
    assert "#define BERTL14_MAX_SEQ_LEN 16" in config_h
    assert "#define BERTL14_EMBEDDING_BITS 4" in config_h
    assert "#define BERTL14_WEIGHTS_INT8 1" in config_h     # converted with INT8 weights, run by the INT8 library
    run = subprocess.run([str(b / "firmware.elf")], input="", capture_output=True, text=True, timeout=20)
    assert run.stdout.strip() == "model ok", run.stdout + run.stderr
    # A changed .config value re-runs the converter on the next build.
    proc = west("build", "-d", str(b), "--", "-DCONFIG_BERTL14_MAX_SEQ_LEN=24")
    assert proc.returncode == 0, proc.stdout[-3000:] + proc.stderr
    assert "#define BERTL14_MAX_SEQ_LEN 24" in (b / "generated" / "model" / "bertl14_config.h").read_text()


def test_a_model_too_big_for_the_board_stops_the_build_at_the_conversion(tmp_path):
    """The build passes its board to the converter: a model with more data than the board's flash (board.yml) fails
    with the numbers before its C sources are written, not at the link."""
    from testsupport import require_arm
    require_arm()
    sys.path.insert(0, str(REPO / "tests" / "convert"))
    from cvt_util import CALIB, TINY_VOCAB, write_tiny_bert
    big = write_tiny_bert(tmp_path / "big", layers=1, hidden=256, heads=4, intermediate=64, positions=32,
                          vocab=TINY_VOCAB + [f"w{i:05d}" for i in range(17_000)], calibration=CALIB)
    b = tmp_path / "b"
    proc = west("build", "-b", "mps2_an500", "-d", str(b), str(REPO / "tests/build/model_app"), "--",
                f"-DCONFIG_BERTL14_MODEL_DIR={big}", "-DCONFIG_APP_RTOS_NONE=y",
                env={"BERTL14_MODULES_DIR": str(tmp_path / "no-modules")})
    assert proc.returncode != 0
    out = proc.stdout + proc.stderr
    assert "bertl14 convert: error: the model does not fit mps2_an500: its model data needs " in out, out[-3000:]
    sys.path.insert(0, str(REPO / "scripts" / "west_commands"))
    from bertl14_west.boards import find_board
    assert f"but mps2_an500's FLASH has {find_board('mps2_an500').flash_region['size']:,} B" in out
    assert not (b / "generated" / "model" / "bertl14_weights.c").exists()


def test_work_buffer_smaller_than_the_model_fails_the_build(tmp_path, tiny_model):
    """CONFIG_BERTL14_WORK_BUFFER_SIZE below what the model needs is a build error naming the size it needs (the
    converter's figure), not an init failure on the device; enough bytes build."""
    import json
    b = tmp_path / "b"
    proc = west("build", "-b", "host", "-d", str(b), str(REPO / "tests/build/model_app"), "--",
                f"-DCONFIG_BERTL14_MODEL_DIR={tiny_model}", "-DCONFIG_BERTL14_MAX_SEQ_LEN=16",
                "-DCONFIG_BERTL14_WORK_BUFFER_SIZE=100")
    assert proc.returncode != 0
    need = json.loads((b / "generated" / "model" / "manifest.json").read_text())["work_buffer_bytes"]
    assert need > 100
    out = proc.stdout + proc.stderr
    assert f"CONFIG_BERTL14_WORK_BUFFER_SIZE=100 is smaller than the {need} bytes" in out, out[-3000:]
    assert not (b / "firmware.elf").exists()
    proc = west("build", "-d", str(b), "--", f"-DCONFIG_BERTL14_WORK_BUFFER_SIZE={need - 1}")   # still one short
    assert proc.returncode != 0 and f"at least {need}" in proc.stdout + proc.stderr
    proc = west("build", "-d", str(b), "--", f"-DCONFIG_BERTL14_WORK_BUFFER_SIZE={need}")
    assert proc.returncode == 0, proc.stdout[-3000:] + proc.stderr
    run = subprocess.run([str(b / "firmware.elf")], input="", capture_output=True, text=True, timeout=20)
    assert run.stdout.strip() == "model ok", run.stdout + run.stderr
