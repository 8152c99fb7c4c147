"""The intent firmware on the emulated boards besides mps2_an500: mps2_an505 (Cortex-M33 with DSP, bare metal and
FreeRTOS), mps3_an547 (Cortex-M55 with the Helium kernels, bare metal and FreeRTOS) and qemu_riscv32 (RV32IMAC, bare
metal). Each answers the demo sentences and a few more exactly as the
Python reference does for the model and registry it was built with, counts instructions with its own counter under
-icount, and answers lines that were sent before it finished booting (QEMU's stdio serial)."""
from __future__ import annotations

import json
import subprocess
import threading

import pytest

from apphelpers import QEMU_TIMEOUT, build_firmware, reference_for

# (board, execution model); qemu_riscv32 has no FreeRTOS port
BUILDS = [("mps2_an505", "none"), ("mps2_an505", "freertos"), ("mps3_an547", "none"), ("mps3_an547", "freertos"),
          ("qemu_riscv32", "none")]
# ns of a tick of the board's instruction counter (platform_config.h PLATFORM_ICOUNT_NS_PER_TICK): the AN505's
# CMSDK timer and the AN547's FPGA I/O counter run at 20 MHz; qemu_riscv32 reads instret, one a nanosecond of QEMU's
# virtual clock
TICK_NS = {"mps2_an505": 50, "mps3_an547": 50, "qemu_riscv32": 1}
MORE = ["打开客厅的灯", "set the bedroom temperature to 21.5 degrees", "turn off all the lights on the first floor",
        "what time is it", "set a 30m timer", "play lo-fi beats"]   # a unit letter glued on; a hyphenated word


@pytest.fixture(scope="module", params=BUILDS, ids=[f"{b}-{r}" for b, r in BUILDS])
def build(request, tmp_path_factory):
    board, rtos = request.param
    return board, rtos, build_firmware(tmp_path_factory, rtos, board=board) / "firmware.elf"


def test_answers_as_the_reference_and_counts_instructions(build):
    from bertl14_tools.device.serial import SAMPLE_LINES, Device, compare, open_link
    board, rtos, elf = build
    info = json.loads((elf.parent / "bertl14_build.json").read_text())
    assert info["board"] == board and info["qemu"]["machine"] in ("mps2-an505", "mps3-an547", "virt")
    if board == "mps3_an547":                                   # the Helium kernels answer there
        assert "CONFIG_BERTL14_USE_MVE=y" in (elf.parent / ".config").read_text()
    reference = reference_for(elf)
    with open_link(qemu=str(elf), qemu_flags=["-icount", "shift=0"], timeout=QEMU_TIMEOUT) as ser:
        dev = Device(ser, QEMU_TIMEOUT)
        dev.read_banner()
        assert dev.banner["model"] == "intent-en"
        cfg = dev.command(":config").fields
        assert cfg["rtos"] == rtos and cfg["cycles"] == "qemu_icount_instructions"
        assert dev.command(":dump on").line == "ok dump=on"   # the [CLS] bytes compared too
        for text in SAMPLE_LINES + MORE:
            ans = dev.ask(text)
            diffs = compare(ans, reference.expect(text), dev.dump)
            assert not diffs, (board, text, ans.line, diffs)
        assert dev.command(":dump off").line == "ok dump=off"
        counts = [int(dev.ask(SAMPLE_LINES[0]).fields["cycles"]) for _ in range(3)]
    tick = TICK_NS[board]
    assert all(c % tick == 0 for c in counts), counts           # whole ticks of the board's counter
    assert 1_000_000 < counts[0] < 100_000_000, counts
    if rtos == "none":
        # nothing interrupts the inference: the same sentence, the same count (to the counter's tick)
        assert max(counts) - min(counts) <= tick, counts
    print(f"{board} {rtos}: cycles of {SAMPLE_LINES[0]!r} under -icount shift=0: {counts}")


def early_answers(elf, text: str, count: int) -> list[str]:
    """The first `count` answer lines (`intent=` or `error=`) of the firmware booted under QEMU with `text` already
    written to its stdio serial, so that its bytes arrive while the board is still starting."""
    from bertl14_tools.device.qemu_target import west_qemu
    westqemu = west_qemu()
    info = json.loads((elf.parent / "bertl14_build.json").read_text())
    argv = westqemu.machine_argv(westqemu.build_machine(info), elf, westqemu.qemu_stdio_serial(), env_flags=False)
    proc = subprocess.Popen(argv, stdin=subprocess.PIPE, stdout=subprocess.PIPE, stderr=subprocess.DEVNULL)
    timer = threading.Timer(QEMU_TIMEOUT, proc.kill)
    timer.start()
    try:
        proc.stdin.write(text.encode())
        proc.stdin.flush()
        answers, printed = [], []
        while len(answers) < count:
            raw = proc.stdout.readline()
            assert raw, f"{elf.parent.parent.name}: QEMU ended before answering {text!r} (printed {printed})"
            line = raw.decode("utf-8", "replace").strip()
            printed.append(line)
            if line.startswith(("intent=", "error=")):
                answers.append(line)
    finally:
        timer.cancel()
        westqemu.stop(proc)
    return answers


def test_lines_sent_before_the_board_is_up_are_answered(build):
    """QEMU's stdio serial delivers the lines at once, while the board is still starting: none of their bytes is
    lost (a UART that cleared its receiver at start-up would drop the first one and answer another sentence)."""
    from bertl14_tools.device.serial import SAMPLE_LINES, Answer, compare, parse_fields
    board, _, elf = build
    lines = SAMPLE_LINES[:2]
    answers = early_answers(elf, "".join(f"{t}\n" for t in lines), len(lines))
    reference = reference_for(elf)
    for text, line in zip(lines, answers):
        diffs = compare(Answer(line=line, fields=parse_fields(line)), reference.expect(text), False)
        assert not diffs, (board, text, line, diffs)


def test_a_line_the_board_received_while_starting_is_answered_at_once(build):
    """A one-byte line sent before the board is up may be in the UART before its interrupt is on: start-up takes
    it into the receive ring, and the main loop answers it without waiting for another byte to arrive."""
    board, _, elf = build
    answers = early_answers(elf, "\n", 1)
    assert answers[0].startswith("error=empty"), (board, answers)
