"""Every bad input of docs/errors.md's table, run as the table writes it: the documented exit status, the
documented one-line message, no traceback. The table is the test's list: a row without a set-up here, or a set-up
without its row, fails."""
from __future__ import annotations

import re
import shlex
import shutil
import struct
import subprocess
import sys

import pytest

from clisupport import MODEL, REPO, FakeDevice, run_main

DOC = REPO / "docs" / "errors.md"


def table() -> dict[str, dict]:
    rows = {}
    for line in DOC.read_text(encoding="utf-8").splitlines():
        if not line.startswith("| ") or line.startswith("| Bad input") or line.startswith("|---"):
            continue
        cells = [c.strip().replace("\\|", "|") for c in re.split(r"(?<!\\)\|", line)[1:-1]]
        if len(cells) != 4:
            continue

        def code(cell):
            m = re.search(r"``(.+?)``|`([^`]+)`", cell)
            return (m.group(1) or m.group(2)).strip()
        rows[cells[0]] = {"command": code(cells[1]), "exit": int(cells[2]), "message": code(cells[3])}
    return rows


def printf_bytes(arg: str) -> bytes:
    """printf's escapes: \\xHH, \\NNN (octal), \\n."""
    out = re.sub(r"\\x([0-9a-fA-F]{2})|\\([0-7]{3})|\\n",
                 lambda m: chr(int(m.group(1), 16)) if m.group(1) else chr(int(m.group(2), 8)) if m.group(2)
                 else "\n", arg)
    return out.encode("latin-1")


def stm32_elf(size: int = 1024) -> bytes:
    """A minimal Arm ELF image whose one segment loads at 0x08000000 (an STM32's flash)."""
    ident = b"\x7fELF\x01\x01\x01" + bytes(9)
    header = ident + struct.pack("<HHIIIIIHHHHHH", 2, 40, 1, 0x08000000, 52, 0, 0x05000200, 52, 32, 1, 40, 0, 0)
    segment = struct.pack("<IIIIIIII", 1, 0x100, 0x08000000, 0x08000000, size, size, 5, 4)
    body = header + segment
    return body + bytes(0x100 - len(body)) + bytes(size)


OVEN = 'language: en\nintents:\n  TurnOffOven:\n    data:\n'


def setup_files(d):
    """The files the table's commands name, in folder d."""
    (d / "bad.jsonl").write_bytes(b'{"text": "turn on the light", "intent": "HassTurnOn"}\n'
                                  b'{"text": "caf\xe9 lights on", "intent": "HassTurnOn"}\n')
    (d / "oven.jsonl").write_text('{"text": "turn on the light", "intent": "HassTurnOn"}\n'
                                  '{"text": "turn off the oven", "intent": "TurnOffOven"}\n')
    (d / "broken.jsonl").write_text('{"text": "turn on the light"}\n{"text": "turn off the light"}\n'
                                    '{"text": "turn on the fan" "intent": "HassTurnOn"}\n')
    (d / "home.yaml").write_bytes(b"areas:\n  - name: Kitchen\n  - name: Caf\xe9 Corner\n")
    (d / "oven-latin1.yaml").write_bytes((OVEN + '      - sentences:\n          - "turn off the oven in the caf\xe9"\n')
                                         .encode("latin-1"))
    (d / "oven-paren.yaml").write_text(OVEN + '      - sentences:\n          - "(turn|switch) off [the] (oven"\n')
    (d / "oven-string.yaml").write_text(OVEN + '      - sentences: "turn off the oven"\n')
    (d / "oven-empty.yaml").write_text('language: en\nintents:\n  TurnOffOven:\n    data: []\n')
    trunc = d / "trunc"
    shutil.copytree(MODEL, trunc, ignore=shutil.ignore_patterns("report", "model.safetensors"))
    (trunc / "model.safetensors").write_bytes((MODEL / "model.safetensors").read_bytes()[:100_000])
    (d / "stm32.elf").write_bytes(stm32_elf())
    (d / "build-nucleo").mkdir()
    (d / "build-nucleo" / "firmware.elf").write_bytes(stm32_elf())
    (d / "build-nucleo" / "bertl14_build.json").write_text('{"board": "nucleo_h743zi", "qemu_machine": null}')


ROWS = table()


def test_the_table_lists_every_bad_input_of_the_tools():
    assert len(ROWS) >= 20
    needed = ["eval", "report", "check-bitexact", "validate", "registry", "intents YAML not UTF-8", "tokenize",
              "console", "safetensors", "unbalanced", "sentences:", "learning rate", "epoch", "NUCLEO",
              "does not know", "Kconfig"]
    for word in needed:
        assert any(word in key for key in ROWS), f"no row about {word!r} in {DOC}"


def pattern(message: str) -> re.Pattern:
    return re.compile(".*?".join(re.escape(part) for part in message.split("…")))


@pytest.mark.parametrize("name", sorted(ROWS))
def test_bad_input_gives_its_one_line(name, tmp_path, monkeypatch):
    row = ROWS[name]
    command = row["command"]
    stdin = b""
    m = re.match(r"printf '([^']*)' \| (.*)", command)
    if m:
        stdin, command = printf_bytes(m.group(1)), m.group(2)
    argv = shlex.split(command)
    if argv[0] == "west":
        if subprocess.run([sys.executable, "-m", "west", "topdir"], cwd=REPO, capture_output=True).returncode:
            pytest.skip("not in a west workspace (make test sets it up)")
        from testsupport import west
        argv = [str(tmp_path / a) if a.startswith("build-") else a for a in argv]
        proc = west(*argv[1:], cwd=REPO)
        code, out, err = proc.returncode, proc.stdout, proc.stderr
    else:
        assert argv[0] == "bertl14"
        setup_files(tmp_path)
        monkeypatch.chdir(tmp_path)
        device = FakeDevice() if "socket://DEVICE" in command else None
        argv = [str(MODEL) if a == "models/intent-en" else device.url if a == "socket://DEVICE" else a
                for a in argv[1:]]
        monkeypatch.delenv("BERTL14_DEBUG", raising=False)
        code, out, err = run_main(argv, stdin)
    assert "Traceback" not in out + err, err
    lines = [line for line in (out + err).splitlines()]
    assert any(pattern(row["message"]).fullmatch(line) for line in lines), \
        f"expected {row['message']!r}, got:\n{out}{err}"
    assert code == row["exit"], (code, err)
    errors = [line for line in err.splitlines() if line.strip()]
    assert len(errors) <= 1, err


def test_debug_shows_the_traceback(tmp_path, monkeypatch):
    setup_files(tmp_path)
    monkeypatch.chdir(tmp_path)
    monkeypatch.setenv("BERTL14_DEBUG", "1")
    code, _, err = run_main(["eval", "--model", MODEL, "--data", "bad.jsonl"])
    assert code == 2 and "Traceback" in err and err.strip().splitlines()[-1].startswith("bertl14 eval: error:")


def test_an_unexpected_exception_is_one_line(monkeypatch):
    """What no command recognises (here a library's error from deep inside) still ends as one line."""
    import bertl14_tools.reference.infer as infer

    def boom(*a, **k):
        raise RuntimeError("something inside a library\nwith more lines")
    monkeypatch.setattr(infer, "open_model", boom)
    monkeypatch.delenv("BERTL14_DEBUG", raising=False)
    code, _, err = run_main(["predict", "--model", MODEL, "turn on the light"])
    assert code == 2 and "Traceback" not in err
    assert err.strip() == ("bertl14 predict: error: unexpected RuntimeError: something inside a library (run with "
                           "BERTL14_DEBUG=1 for the traceback, and report it)")


def test_the_device_rule_is_the_c_tokenizers():
    """textio.device_text refuses what the C tokenizer refuses (tests/tokenizer's invalid sequences: overlong forms,
    surrogates, code points above U+10FFFF, truncated sequences) and what protocol.c refuses (a NUL), and keeps the
    valid edges."""
    from bertl14_tools.textio import device_text
    for raw in [b"\x80", b"a\xc0\xafb", b"\xe0\x80\xaf", b"\xed\xa0\x80", b"\xf4\x90\x80\x80", b"\xf5\x80\x80\x80",
                b"\xff", b"abc\xe4\xb8", b"\xc3(", b"a\0b"]:
        assert device_text(raw) is None, raw
    for text in ["\u0080", "\u07ff", "\uffff", "\U00010000", "\U0010ffff", "\ud7ff", "\ue000", "灯"]:
        assert device_text(("a" + text).encode()) == "a" + text
    assert device_text("a\udcffb") is None   # an argument the locale could not decode
