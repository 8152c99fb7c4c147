"""`bertl14 console` against a serial 'device' on a loopback socket: names and slot values decoded in every mode
(--send, piped stdin, --json, the prompt), piped bytes sent as they are (the device answers a line that is not
UTF-8 with error=invalid_utf8 and the next line still works), and at a terminal a prompt with line editing and a
history kept across sessions."""
from __future__ import annotations

import json
import os
import select
import subprocess
import sys
import time

import pytest

from clisupport import REPO, FakeDevice, run_main

DECODED = "   name='Kitchen Light' entity_area=Kitchen brightness=40"


def test_send_prints_the_answer_and_its_decoded_names():
    dev = FakeDevice()
    code, out, err = run_main(["console", "--port", dev.url, "--send", "turn on the kitchen light"])
    assert code == 0, err
    assert out.splitlines() == [">> turn on the kitchen light", FakeDevice.DEFAULT.decode().strip(), DECODED]
    assert dev.received == [b"turn on the kitchen light"]


def test_piped_lines_go_as_bytes_and_the_next_line_still_works():
    dev = FakeDevice()
    code, out, err = run_main(["console", "--port", dev.url], stdin=b"caf\xe9 on\nturn on the kitchen light\n")
    assert code == 0 and "Traceback" not in err, err
    assert dev.received == [b"caf\xe9 on", b"turn on the kitchen light"]   # the bytes as typed
    lines = out.splitlines()
    assert lines[0] == ">> caf\\xe9 on" and lines[1].startswith("error=invalid_utf8 ")
    assert lines[3] == FakeDevice.DEFAULT.decode().strip() and lines[4] == DECODED


def test_json_gives_one_object_an_answer_with_decoded_values():
    dev = FakeDevice()
    code, out, _ = run_main(["console", "--port", dev.url, "--json", "--send", "turn on the kitchen light",
                             "--send", "a\x00b"])
    assert code == 0
    first, second = (json.loads(line) for line in out.splitlines())
    assert first["kind"] == "intent" and first["sent"] == "turn on the kitchen light"
    assert first["values"] == {"name": "Kitchen Light", "entity_area": "Kitchen", "brightness": "40"}
    assert first["fields"]["intent"] == "HassTurnOn"
    assert second["kind"] == "error" and second["fields"] == {"error": "invalid_utf8"}


# ---- at a terminal ---------------------------------------------------------------------------------------------

class Terminal:
    """bertl14 console on a pseudo-terminal."""

    def __init__(self, url: str, env: dict):
        import pty
        self.master, slave = pty.openpty()
        self.proc = subprocess.Popen([sys.executable, "-m", "bertl14_tools.cli", "console", "--port", url,
                                      "--timeout", "5"], stdin=slave, stdout=slave, stderr=slave, cwd=REPO,
                                     env={**os.environ, **env, "TERM": "xterm"}, close_fds=True)
        os.close(slave)
        self.seen = b""

    def expect(self, text: str, timeout: float = 30) -> str:
        deadline = time.monotonic() + timeout
        while text.encode() not in self.seen:
            left = deadline - time.monotonic()
            if left <= 0 or not select.select([self.master], [], [], left)[0]:
                raise AssertionError(f"{text!r} not seen; got {self.seen.decode(errors='replace')!r}")
            try:
                self.seen += os.read(self.master, 4096)
            except OSError:
                raise AssertionError(f"{text!r} not seen; got {self.seen.decode(errors='replace')!r}") from None
        at = self.seen.index(text.encode()) + len(text)
        before, self.seen = self.seen[:at], self.seen[at:]
        return before.decode(errors="replace")

    def type(self, keys: bytes):
        os.write(self.master, keys)

    def close(self) -> int:
        try:
            return self.proc.wait(10)
        finally:
            os.close(self.master)


@pytest.fixture
def terminal(tmp_path):
    pytest.importorskip("readline")
    started = []

    def start(dev):
        t = Terminal(dev.url, {"XDG_STATE_HOME": str(tmp_path / "state")})
        started.append(t)
        return t
    yield start
    for t in started:
        if t.proc.poll() is None:
            t.proc.kill()


def test_prompt_line_editing_and_history_across_sessions(terminal, tmp_path):
    dev = FakeDevice(banner=b"bertl14 ready model=intent-en labels=43\r\n")
    t = terminal(dev)
    t.expect("bertl14> ")
    # what the device says on its own while the prompt waits (a board's banner after a reset) shows at once,
    # and the prompt is drawn again under it
    t.expect("bertl14 ready model=intent-en labels=43")
    t.expect("bertl14> ")
    t.type(b"turn on the kitchen lihgt\x7f\x7f\x7fght\r")             # backspace edits the line
    shown = t.expect("bertl14> ")
    assert "intent=HassTurnOn" in shown and DECODED in shown
    t.type(b"\x10\r")                                                   # Ctrl-P: the line before, again
    t.expect("intent=HassTurnOn")
    t.expect("bertl14> ")
    t.type(b"\x04")                                                     # Ctrl-D quits
    assert t.close() == 0
    assert dev.received == [b"turn on the kitchen light"] * 2
    history = tmp_path / "state" / "bertl14" / "console_history"
    assert "turn on the kitchen light" in history.read_text()

    dev2 = FakeDevice()                                                 # a new session recalls it
    t = terminal(dev2)
    t.expect("bertl14> ")
    t.type(b"\x10\r")
    t.expect("intent=HassTurnOn")
    t.expect("bertl14> ")
    t.type(b"\x04")
    assert t.close() == 0
    assert dev2.received == [b"turn on the kitchen light"]
