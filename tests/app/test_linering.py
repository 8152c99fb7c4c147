"""The line-framed RX ring (app/src/linering.h) on the host, with a small ring (64 bytes, lines of at
most 16 bytes), driven the way the firmware drives it: the RX interrupt fires between any two
instructions of the consumer (linering_driver.c single-steps it), the consumer's mask hooks really mask.
Every line gets exactly one record, in order; a line is either kept whole (its first LINE_MAX + 1 bytes
when too long, flagged) or counted as an overrun; a line the UART reported an error in is one damaged
record; records wrap around the ring. Copies of linering.h with a known bug fail the same checks."""
from __future__ import annotations

import random
import shutil
import subprocess
from pathlib import Path

import pytest

from apphelpers import REPO

RX, LINE_MAX = 56, 16            # CONFIG_APP_RX_BUFFER 56: a ring of 56 + LINERING_RESERVE (8) = 64 bytes
KEEP = LINE_MAX + 1
DAMAGE = b"\x02"       # not data: "the UART reports a receive error before the next byte"


def _compile(out: Path, header_dir: Path) -> Path:
    cc = shutil.which("cc") or shutil.which("gcc")
    if cc is None:
        pytest.skip("no host C compiler (cc)")
    subprocess.run([cc, "-std=c11", "-O2", "-Wall", "-Werror", f"-DCONFIG_APP_RX_BUFFER={RX}",
                    f"-DCONFIG_APP_LINE_MAX={LINE_MAX}", "-I", str(header_dir),
                    str(REPO / "tests" / "app" / "linering_driver.c"), "-o", str(out)], check=True)
    probe = subprocess.run([str(out), "1", "1", "1"], input=b"", capture_output=True)
    if probe.returncode == 77:
        pytest.skip("single-stepping the consumer needs x86-64 Linux")
    return out


def _runner(exe: Path):
    def run(data: bytes, seed: int, permille: int, busy: int) -> list[tuple]:
        out = subprocess.run([str(exe), str(seed), str(permille), str(busy)], input=data, capture_output=True,
                             check=True, timeout=60).stdout.decode()
        recs = []
        for line in out.splitlines():
            if line in ("O", "D"):
                recs.append((line,))
            else:
                _, too_long, n, hexbytes = (line.split(" ") + [""])[:4]
                recs.append(("L", too_long == "1", bytes.fromhex(hexbytes)))
                assert int(n) == len(recs[-1][2])
        return recs
    return run


@pytest.fixture(scope="module")
def driver(tmp_path_factory):
    return _runner(_compile(tmp_path_factory.mktemp("linering") / "driver", REPO / "app" / "src"))


def _split(data: bytes) -> list[tuple[bytes, bool]]:
    """The lines of a stream (each ends with \\n) and whether a receive error was reported in each (a mark
    anywhere after the previous line's end, up to and including its own \\n's position)."""
    lines, cur, damaged = [], bytearray(), False
    for b in data:
        if b == DAMAGE[0]:
            damaged = True
        elif b == 0x0A:
            lines.append((bytes(cur), damaged))
            cur, damaged = bytearray(), False
        else:
            cur.append(b)
    assert not cur and not damaged, "streams end with a line end"
    return lines


def _check(data: bytes, recs: list[tuple]) -> dict[str, int]:
    """One record a line, in order, each the line's own; returns the count of each kind."""
    lines = _split(data)
    assert len(recs) == len(lines), (len(recs), len(lines))
    kinds = {"L": 0, "O": 0, "D": 0}
    for i, ((line, damaged), rec) in enumerate(zip(lines, recs)):
        kinds[rec[0]] += 1
        if rec == ("O",):
            continue
        if damaged:
            assert rec == ("D",), (i, line, rec)
        else:
            assert rec == ("L", len(line) > KEEP, line[:KEEP]), (i, line, rec)
    return kinds


def _random_stream(rng: random.Random, n: int, damage: float = 0.0) -> bytes:
    out = bytearray()
    for _ in range(n):
        line = bytes(rng.choice(b"abcdefgh \r\xff") for _ in range(rng.choice([0, 1, 3, 8, 15, 16, 17, 18, 30])))
        if damage and rng.random() < damage:
            at = rng.randrange(len(line) + 1)
            line = line[:at] + DAMAGE + line[at:]
        out += line + b"\n"
    return bytes(out)


# (interrupt probability per consumer instruction in 1/1000, longest busy spell of the consumer)
SCHEDULES = [(1, 1), (5, 20), (20, 5), (100, 40), (300, 2), (1000, 1)]


def test_interrupts_anywhere_keep_every_line_in_order(driver):
    rng = random.Random(1)
    totals = {"L": 0, "O": 0, "D": 0}
    for seed in range(12):
        permille, busy = SCHEDULES[seed % len(SCHEDULES)]
        data = _random_stream(rng, 60)         # ~750 bytes through a 64-byte ring: wraps many times
        for k, v in _check(data, driver(data, seed, permille, busy)).items():
            totals[k] += v
    assert totals["L"] > 300 and totals["O"] > 100, totals    # both paths exercised


def test_a_consumer_that_keeps_up_never_overruns(driver):
    """Rare interrupts, one FIFO's worth between drains: the consumer takes each line before the ring fills."""
    rng = random.Random(2)
    data = _random_stream(rng, 100)
    kinds = _check(data, driver(data, 3, 1, 1))
    assert kinds["O"] == 0 and kinds["L"] == 100


def test_a_busy_consumer_gets_whole_lines_then_overruns_in_place(driver):
    """Interrupts at every instruction and a consumer that spends long spells busy: the ring fills, the lines
    that do not fit are counted, in their place, and the ones that fit are whole."""
    lines = [b"line%02d" % i for i in range(40)]
    data = b"".join(line + b"\n" for line in lines)
    kinds = _check(data, driver(data, 4, 1000, 100))
    assert kinds["O"] > 0 and kinds["L"] >= 7, kinds


def test_damaged_lines_are_one_record_each(driver):
    rng = random.Random(5)
    totals = {"L": 0, "O": 0, "D": 0}
    for seed in range(6):
        permille, busy = SCHEDULES[seed % len(SCHEDULES)]
        data = _random_stream(rng, 60, damage=0.2)
        for k, v in _check(data, driver(data, seed, permille, busy)).items():
            totals[k] += v
    assert totals["D"] > 20 and totals["L"] > 100, totals
    # a mark between two lines damages the next one only
    data = b"first\n" + DAMAGE + b"second\nthird\n"
    assert driver(data, 1, 1, 1) == [("L", False, b"first"), ("D",), ("L", False, b"third")]


# Bugs the schedule must catch: (what, original text in linering.h, replacement)
MUTATIONS = [
    ("consumer reads and clears the pending overruns without masking the interrupt",
     "        mask();\n", "\n"),
    ("producer fills the ring's last byte, so a full ring looks empty",
     "return (LINERING_SIZE - 1u) - (r->head", "return LINERING_SIZE - (r->head"),
    ("consumer frees a line's space before copying it out",
     "    for (uint32_t i = 0; i < n; i++) {\n        line[i] = (char)r->data[(tail + i) % LINERING_SIZE];\n    }\n",
     "    r->tail = (tail + n) % LINERING_SIZE;\n"
     "    for (uint32_t i = 0; i < n; i++) {\n        line[i] = (char)r->data[(tail + i) % LINERING_SIZE];\n    }\n"),
]


@pytest.mark.parametrize("what,original,replacement", MUTATIONS, ids=["no-mask", "full-is-empty", "free-first"])
def test_a_wrong_ring_fails_these_checks(tmp_path, what, original, replacement):
    src = (REPO / "app" / "src" / "linering.h").read_text()
    assert src.count(original) == 1, f"linering.h changed: update the mutation '{what}'"
    (tmp_path / "linering.h").write_text(src.replace(original, replacement))
    run = _runner(_compile(tmp_path / "driver", tmp_path))
    rng = random.Random(7)
    for seed in range(30):
        permille, busy = SCHEDULES[seed % len(SCHEDULES)]
        data = _random_stream(rng, 60)
        try:
            _check(data, run(data, seed, permille, busy))
        except (AssertionError, subprocess.CalledProcessError):   # a wrong record, or the driver crashed
            print(f"{what}: caught by schedule {seed}")
            return
    pytest.fail(f"the checks did not notice: {what}")
