"""CONFIG_APP_RX_BUFFER against CONFIG_APP_LINE_MAX: app/Kconfig rejects exactly the pairs the receive ring's
_Static_assert (app/src/linering.h) rejects, so a configuration Kconfig accepts always compiles and one the ring
cannot take stops at Kconfig with one line naming the symbol and its range."""
from __future__ import annotations

import shutil
import subprocess
import sys

import pytest

from testsupport import REPO, assert_one_line_error, west

sys.path.insert(0, str(REPO / "scripts" / "west_commands"))
from bertl14_west import BuildError  # noqa: E402
from bertl14_west.boards import find_board  # noqa: E402
from bertl14_west.kconfig import configure  # noqa: E402

# (line_max, rx_buffer) on both sides of the boundary, at the ends of CONFIG_APP_LINE_MAX's range and at its default
PAIRS = [(16, 15), (16, 16), (16, 64), (255, 64), (255, 254), (255, 255), (255, 262), (255, 263), (255, 1024),
         (4096, 1024), (4096, 4095), (4096, 4096)]


def kconfig_accepts(tmp_path, line_max: int, rx: int) -> bool:
    build = tmp_path / f"k-{line_max}-{rx}"
    try:
        values = configure(find_board("host"), build, REPO / "app", [],
                           [("APP_LINE_MAX", str(line_max)), ("APP_RX_BUFFER", str(rx))])
    except BuildError as exc:
        assert f"CONFIG_APP_RX_BUFFER={rx}" in str(exc) and f"{line_max}..65536" in str(exc), str(exc)
        return False
    assert (values["APP_LINE_MAX"], values["APP_RX_BUFFER"]) == (str(line_max), str(rx))
    return True


def ring_compiles(tmp_path, line_max: int, rx: int) -> bool:
    cc = shutil.which("cc") or shutil.which("gcc")
    if cc is None:
        pytest.skip("no host C compiler (cc)")
    src = tmp_path / "ring.c"
    src.write_text('#include "linering.h"\nlinering_t ring;\n')
    r = subprocess.run([cc, "-std=c11", "-fsyntax-only", f"-DCONFIG_APP_LINE_MAX={line_max}",
                        f"-DCONFIG_APP_RX_BUFFER={rx}", f"-I{REPO / 'app' / 'src'}", str(src)],
                       capture_output=True, text=True)
    assert r.returncode == 0 or "CONFIG_APP_RX_BUFFER" in r.stderr, r.stderr
    return r.returncode == 0


def test_kconfig_rejects_what_the_ring_rejects(tmp_path):
    verdicts = [(line_max, rx, kconfig_accepts(tmp_path, line_max, rx), ring_compiles(tmp_path, line_max, rx))
                for line_max, rx in PAIRS]
    assert [v for v in verdicts if v[2] != v[3]] == [], "Kconfig and the ring's assert disagree (line_max, rx, ...)"
    assert {v[2] for v in verdicts} == {True, False}      # the pairs cover both sides


def test_west_build_stops_at_kconfig_on_a_small_rx_buffer(tmp_path):
    proc = west("build", "-b", "host", "-d", str(tmp_path / "b"), "app", "--", "-DCONFIG_APP_RX_BUFFER=64")
    assert_one_line_error(proc, "CONFIG_APP_RX_BUFFER=64", "255..65536")
    assert not (tmp_path / "b" / "firmware.elf").exists()
