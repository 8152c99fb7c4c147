"""Receive errors of the STM32H7 console UART (docs/serial-protocol.md "Receive errors"): the board's receive
interrupt (app/src/platform/stm32h7/usart_rx.h) runs on the PC against a simulated USART with a 16-byte FIFO
(usart_rx_driver.c), feeding the firmware's real line ring and protocol with the default model. Overruns (the
interrupt held off while the FIFO fills), framing and noise errors are injected; the line each one hit gets exactly
one answer, `error=line_error`, and every other line gets the answer it gets on a clean link."""
from __future__ import annotations

import os
import random
import subprocess
import sys

import pytest

from apphelpers import REPO

FE, NE, HOLD = b"\x02", b"\x03", b"\x04"   # markers of usart_rx_driver.c (not data)
LINES = ["turn on the kitchen light", "set a timer for five minutes", "what time is it",
         "turn off the fan in the bedroom", "switch on the tv in the lounge", "what is the weather like",
         "set the brightness of the desk lamp to 40 percent", "stop the music"]


@pytest.fixture(scope="module")
def uart(tmp_path_factory):
    sys.path.insert(0, str(REPO / "tests"))
    import hostapp
    from bertl14_tools import cbuild
    out = tmp_path_factory.mktemp("uart-errors")
    try:
        exe = hostapp.build(out, [REPO / "tests" / "app" / "usart_rx_driver.c"], cbuild.compiler(),
                            ["-Wall", "-Wextra", "-Werror=implicit-function-declaration",
                             f"-I{REPO / 'app' / 'src' / 'platform' / 'stm32h7'}", *hostapp.SANITIZE])
    except RuntimeError as exc:
        if "sanitize" in str(exc) and "cannot find" in str(exc):
            pytest.skip("the compiler has no ASan/UBSan runtime")
        raise
    env = dict(os.environ, ASAN_OPTIONS="detect_leaks=0:abort_on_error=1", UBSAN_OPTIONS="print_stacktrace=1")

    def run(wire: bytes) -> tuple[list[str], list[int]]:
        """(answer lines: intent= / error= / ok ..., indices of the data bytes the USART lost)"""
        proc = subprocess.run([str(exe)], input=wire, capture_output=True, env=env, timeout=120)
        assert proc.returncode == 0, proc.stderr.decode(errors="replace")[-3000:]
        out_lines = proc.stdout.decode("utf-8").split("\r\n")
        assert out_lines[0].startswith("bertl14 ready "), out_lines[0]
        answers = [line for line in out_lines if line.startswith(("intent=", "error=", "ok "))]
        lost = [int(line.split()[1]) for line in proc.stderr.decode().splitlines() if line.startswith("lost ")]
        return answers, lost
    return run


def _clean_answers(run) -> dict[str, str]:
    answers, lost = run("".join(t + "\n" for t in LINES).encode())
    assert not lost and len(answers) == len(LINES)
    assert all(a.startswith("intent=") for a in answers), answers
    return dict(zip(LINES, answers))


def _expected(wire: bytes, lost: list[int], clean: dict[str, str]) -> list[str]:
    """What the device must answer: the data bytes that survived, split at the line ends that survived; a line is
    damaged when one of its bytes arrived with an error or was lost (a lost line end merges two lines)."""
    data, bad, mark = [], [], False
    for b in wire:
        if bytes([b]) in (FE, NE):
            mark = True
        elif bytes([b]) != HOLD:
            data.append(b)
            bad.append(mark)
            mark = False
    for i in lost:
        bad[i] = True
    expected, cur, damaged = [], bytearray(), False
    for i, b in enumerate(data):
        damaged |= bad[i]
        if i in lost:
            continue
        if b == 0x0A:
            expected.append("error=line_error" if damaged else clean[cur.decode()])
            cur, damaged = bytearray(), False
        else:
            cur.append(b)
    return expected


def _check(run, wire: bytes, clean: dict[str, str]) -> list[str]:
    answers, lost = run(wire + b":stats\n")
    stats = answers.pop()
    want = _expected(wire, lost, clean)
    got = ["error=line_error" if a.startswith("error=line_error ") else a for a in answers]
    assert got == want
    assert f" line_errors={want.count('error=line_error')} " in stats, stats
    return lost


def test_an_overrun_gets_one_error_and_the_next_line_is_answered(uart):
    clean = _clean_answers(uart)
    # the interrupt is held off for 24 byte times after the first 5 bytes of a 49-byte line: the FIFO holds those 5
    # and 11 more, the next 13 bytes are lost
    long = LINES[6]
    wire = (LINES[0] + "\n" + long[:5]).encode() + HOLD + (long[5:] + "\n" + LINES[2] + "\n").encode()
    answers, lost = uart(wire + b":stats\n")
    start = len(LINES[0]) + 1 + 16
    assert lost == list(range(start, start + 13))
    assert answers[0] == clean[LINES[0]]
    assert answers[1].startswith("error=line_error ")               # exactly one error= answer, for that line
    assert answers[2] == clean[LINES[2]]                             # and the next line is answered
    assert answers[3].startswith("ok stats ") and " line_errors=1 " in answers[3] and len(answers) == 4


def test_framing_and_noise_errors_hit_their_own_line(uart):
    clean = _clean_answers(uart)
    wire = (FE + LINES[0].encode() + b"\n"                     # on the first byte of a line
            + LINES[1].encode() + b"\n"
            + LINES[2][:4].encode() + NE + LINES[2][4:].encode() + b"\n"
            + LINES[3].encode() + FE + b"\n"                   # on the line end itself
            + LINES[4].encode() + b"\n")
    _check(uart, wire, clean)


def test_a_lost_line_end_merges_two_lines_into_one_error(uart):
    clean = _clean_answers(uart)
    # held off from 10 bytes before the end of the first line: the line end is among the bytes lost
    first = LINES[0].encode()
    wire = first[:-10] + HOLD + first[-10:] + b"\n" + LINES[1].encode() + b"\n" + LINES[2].encode() + b"\n"
    answers, lost = uart(wire)
    assert len(first) in lost                                        # the '\n' was lost
    assert len(answers) == 2 and answers[0].startswith("error=line_error ") and answers[1] == clean[LINES[2]]
    _check(uart, wire, clean)


def test_random_errors(uart):
    clean = _clean_answers(uart)
    rng = random.Random(16)
    wire = bytearray()
    for _ in range(40):
        line = bytearray(rng.choice(LINES).encode() + b"\n")
        for _ in range(rng.choice([0, 0, 0, 1, 2])):
            line[rng.randrange(len(line)):0] = rng.choice([FE, NE, HOLD])
        wire += line
    wire += (LINES[0] + "\n" + LINES[1] + "\n").encode()    # clean lines last: `:stats` is never held off
    lost = _check(uart, bytes(wire), clean)
    assert lost                                                      # overruns happened, not only flagged bytes
