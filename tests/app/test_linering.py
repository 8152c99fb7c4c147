"""The line-framed RX ring (app/src/linering.h) on the host, with a small ring (64 bytes, lines of at
most 16 bytes): every line gets exactly one record, in order; a line is either kept whole (its first
LINE_MAX + 1 bytes when too long, flagged) or counted as an overrun; a ring drained after every line
never overruns; records wrap around the ring."""
from __future__ import annotations

import random
import shutil
import subprocess

import pytest

from apphelpers import REPO

RX, LINE_MAX = 64, 16
KEEP = LINE_MAX + 1
DRAIN = b"\x01"


@pytest.fixture(scope="module")
def driver(tmp_path_factory):
    cc = shutil.which("cc") or shutil.which("gcc")
    if cc is None:
        pytest.skip("no host C compiler (cc)")
    exe = tmp_path_factory.mktemp("linering") / "driver"
    subprocess.run([cc, "-std=c11", "-O1", "-Wall", "-Werror", f"-DCONFIG_APP_RX_BUFFER={RX}",
                    f"-DCONFIG_APP_LINE_MAX={LINE_MAX}", "-I", str(REPO / "app" / "src"),
                    str(REPO / "tests" / "app" / "linering_driver.c"), "-o", str(exe)], check=True)

    def run(data: bytes) -> list[tuple]:
        out = subprocess.run([str(exe)], input=data, capture_output=True, check=True).stdout.decode()
        recs = []
        for line in out.splitlines():
            if line == "O":
                recs.append(("O",))
            else:
                _, too_long, n, hexbytes = (line.split(" ") + [""])[:4]
                recs.append(("L", too_long == "1", bytes.fromhex(hexbytes)))
                assert int(n) == len(recs[-1][2])
        return recs
    return run


def _check(lines: list[bytes], recs: list[tuple]) -> int:
    """One record a line, in order, each the line's own; returns the overruns."""
    assert len(recs) == len(lines)
    overruns = 0
    for line, rec in zip(lines, recs):
        if rec == ("O",):
            overruns += 1
            continue
        assert rec == ("L", len(line) > KEEP, line[:KEEP]), (line, rec)
    return overruns


def _random_lines(rng, n):
    return [bytes(rng.choice(b"abcdefgh \r\xff") for _ in range(rng.choice([0, 1, 3, 8, 15, 16, 17, 18, 30])))
            for _ in range(n)]


def test_drained_after_every_line_never_overruns(driver):
    rng = random.Random(1)
    lines = _random_lines(rng, 400)   # ~4 KB through a 64-byte ring: wraps many times
    recs = driver(b"".join(line + b"\n" + DRAIN for line in lines))
    assert _check(lines, recs) == 0


def test_burst_without_draining_keeps_whole_lines_and_counts_the_rest(driver):
    lines = [b"line%02d" % i for i in range(20)]      # 7 bytes + header 2 = 9 a line; 63 usable bytes
    recs = driver(b"".join(line + b"\n" for line in lines))
    overruns = _check(lines, recs)
    assert [r[0] for r in recs] == ["L"] * 7 + ["O"] * 13 and overruns == 13


def test_random_bursts_and_drains(driver):
    rng = random.Random(2)
    for _ in range(30):
        lines = _random_lines(rng, 60)
        data = b"".join(line + b"\n" + (DRAIN if rng.random() < 0.3 else b"") for line in lines)
        _check(lines, driver(data))


def test_overruns_keep_their_place_between_lines(driver):
    # fill the ring, lose two lines, drain, then a line: answers L.. O O L
    lines = [b"x" * 15] * 3 + [b"y" * 15, b"z" * 15] + [b"after"]
    data = b"".join(line + b"\n" for line in lines[:5]) + DRAIN + b"after\n"
    recs = driver(data)
    assert _check(lines, recs) == 2
    assert [r[0] for r in recs] == ["L", "L", "L", "O", "O", "L"]


def test_partial_line_is_not_taken_before_its_end(driver):
    recs = driver(b"turn on" + DRAIN + b" the light\n")
    assert recs == [("L", False, b"turn on the light")]
