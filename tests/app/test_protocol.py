"""The intent firmware's serial protocol under QEMU mps2_an500 (bare-metal and FreeRTOS): banner,
bad input followed by good input, a burst of 1000 lines, cycles under -icount (docs/serial-protocol.md)."""
from __future__ import annotations

import json
import random

from apphelpers import QEMU_TIMEOUT, REPO, public_sentences

VALID = "turn on the kitchen light"


def banner_line(dev) -> str:
    return "bertl14 ready " + " ".join(f"{k}={v}" for k, v in dev.banner.items())


def test_banner_and_config(device, firmware):
    """The banner says what the build converted (the generated model's manifest)."""
    m = json.loads((firmware.parent / "generated" / "model" / "manifest.json").read_text())
    d = m["dims"]
    assert banner_line(device) == (
        f"bertl14 ready model={m['model']} layers={d['layers']} hidden={d['hidden']} "
        f"heads={d['heads_kept']}/{d['heads']} max_seq_len={m['max_seq_len']} "
        f"work_buffer={m['work_buffer_bytes']} labels={d['num_labels']}")
    assert m["model"] == "intent-en" and m["max_seq_len"] == 32          # the defaults
    cfg = device.command(":config").fields
    assert cfg["cycles"] == "qemu_icount_instructions"
    # the default thresholds are the model's own (models/intent-en/training.json), through the converter; the
    # named one is min_score's when the model ships none
    training = json.loads((REPO / "models" / "intent-en" / "training.json").read_text())
    shipped, named = training["min_score"], training.get("min_score_named", training["min_score"])
    assert (m["min_score_milli"], m["min_score_named_milli"]) == (round(shipped * 1000), round(named * 1000))
    assert cfg["min_score"] == f"{shipped:.3f}" and cfg["min_score_named"] == f"{named:.3f}"
    assert cfg["line_max"] == "255" and cfg["rx_buffer"] == "1024"
    freertos = "CONFIG_APP_RTOS_FREERTOS=y" in (firmware.parent / ".config").read_text()
    assert cfg["rtos"] == ("freertos" if freertos else "none")
    help_ = device.ask(":help")
    assert help_.line == "ok help" and any(":dump on|off" in line for line in help_.before)


def _assert_valid(device, reference, text=VALID, sent=None):
    from bertl14_tools.device.serial import compare
    ans = device.ask(sent if sent is not None else text)
    diffs = compare(ans, reference.expect(text), device.dump)
    assert not diffs, (ans.line, diffs)
    return ans


def test_bad_input_each_followed_by_a_valid_line(device, reference):
    rng = random.Random(6)
    _assert_valid(device, reference)
    device.send(b"a" * 300)
    assert device.read_answer().line.startswith("error=too_long ")
    _assert_valid(device, reference)
    device.send(b"turn on the \xff\xfe light")
    assert device.read_answer().line.startswith("error=invalid_utf8 ")
    _assert_valid(device, reference)
    device.send(b"")
    assert device.read_answer().line.startswith("error=empty ")
    _assert_valid(device, reference)
    device.send(b"\r")                             # a "\r\n" line: empty too
    assert device.read_answer().line.startswith("error=empty ")
    _assert_valid(device, reference)
    noise = bytes(b for b in rng.randbytes(1200) if b != 0x0A)[:1024]
    device.send(noise)
    assert device.read_answer().line.startswith("error=too_long ")
    _assert_valid(device, reference)
    device.ser.write(b"\r")                        # a lone \r, no line end: whitespace of the next line
    _assert_valid(device, reference, sent=VALID)
    device.send(b"turn on the\x00 light")
    assert device.read_answer().line.startswith("error=invalid_utf8 ")
    _assert_valid(device, reference)
    assert device.command(":dump on").line == "ok dump=on"
    ans = _assert_valid(device, reference)          # now with the [CLS] bytes compared
    assert ans.cls is not None and len(ans.cls) == 96
    device.send(":frobnicate")
    assert device.read_answer().line.startswith("error=unknown_command ")
    _assert_valid(device, reference)
    long_text = "turn on the light in the kitchen and " * 6   # > 32 tokens, < 255 bytes
    ans = _assert_valid(device, reference, text=long_text.strip())
    assert ans.fields.get("truncated") == "1" and ans.fields["tokens"] == "32"
    assert device.command(":dump off").line == "ok dump=off"
    stats = device.command(":stats").fields
    assert stats["errors"] == "7" and stats["overruns"] == "0" and stats["sentences"] == "11"


def test_burst_of_1000_lines_gets_1000_answers_in_order(device, reference):
    from bertl14_tools.device.serial import compare
    rows = public_sentences(1000)
    texts = [rows[i % len(rows)]["text"] for i in range(1000)]
    device.ser.write(b"".join(t.encode("utf-8") + b"\n" for t in texts))   # no waiting for answers
    answers = [device.read_answer() for _ in texts]
    overruns = 0
    for text, ans in zip(texts, answers):
        if ans.line.startswith("error=overrun "):
            overruns += 1
            continue
        assert ans.kind == "intent", ans.line              # nothing merged, nothing else
        diffs = compare(ans, reference.expect(text), dump=False)
        assert not diffs, (text, ans.line, diffs)           # each line that fit: its own answer
    assert 0 < overruns < 1000                              # a 1 KB ring cannot hold 1000 lines
    stats = device.command(":stats").fields
    assert int(stats["overruns"]) == overruns and int(stats["sentences"]) == 1000 - overruns
    assert device.ask(VALID).kind == "intent"               # and the device is fine afterwards


def test_cycles_count_instructions_under_icount(firmware):
    """Under -icount shift=0 the QEMU timer advances once every 40 instructions: the same sentence costs
    the same count every time (to the timer's 40-instruction resolution)."""
    from bertl14_tools.device.serial import Device, open_link
    with open_link(qemu=str(firmware), qemu_flags=["-icount", "shift=0"], timeout=QEMU_TIMEOUT) as ser:
        dev = Device(ser, QEMU_TIMEOUT)
        dev.read_banner()
        counts = [int(dev.ask(VALID).fields["cycles"]) for _ in range(3)]
        stats = dev.command(":stats").fields
    assert all(c % 40 == 0 for c in counts)
    assert max(counts) - min(counts) <= 80, counts
    assert 100_000 < counts[0] < 50_000_000, counts
    assert int(stats["stack_used"]) > 512 and int(stats["stack_used"]) < int(stats["stack_size"])
    assert 0 < int(stats["work_buffer_used"]) <= int(stats["work_buffer"])
    print(f"cycles of {VALID!r} under -icount shift=0: {counts}; stats: {stats}")
