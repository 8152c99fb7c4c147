"""Helpers of the command-line tests: a serial 'device' on a loopback socket that answers as the firmware's
protocol says, and `bertl14` run in this process with given stdin bytes."""
from __future__ import annotations

import contextlib
import io
import socket
import sys
import threading
from pathlib import Path

REPO = Path(__file__).resolve().parents[2]
MODEL = REPO / "models" / "intent-en"

INVALID = b"error=invalid_utf8 the line is not valid UTF-8; send UTF-8 text\r\n"


class FakeDevice:
    """socket://127.0.0.1:PORT: every line gets one answer line; a line that is not UTF-8 (or holds a NUL) gets
    error=invalid_utf8, as app/src/protocol.c; `answers` maps a sentence to its answer line (default: a HassTurnOn
    answer with a percent-encoded name and a slot value). `received` keeps the lines as they came."""

    DEFAULT = b"intent=HassTurnOn score=0.990 tokens=6 cycles=1000 names=1 match_cycles=10 name=Kitchen%20Light " \
              b"entity_area=Kitchen brightness=40\r\n"

    def __init__(self, answers: dict[bytes, bytes] | None = None, banner: bytes | None = None):
        from bertl14_tools.textio import device_text
        self.device_text = device_text
        self.answers = answers or {}
        self.banner = banner
        self.received: list[bytes] = []
        self.srv = socket.socket()
        self.srv.bind(("127.0.0.1", 0))
        self.srv.listen(1)
        self.url = f"socket://127.0.0.1:{self.srv.getsockname()[1]}"
        threading.Thread(target=self.serve, daemon=True).start()

    def serve(self):
        conn, _ = self.srv.accept()
        with conn, conn.makefile("rb") as f:
            if self.banner:   # a board's reset while the console is open (pyserial drops what came before)
                threading.Timer(0.5, self._send, (conn, self.banner)).start()
            for line in f:
                line = line.rstrip(b"\r\n")
                self.received.append(line)
                if self.device_text(line) is None:
                    conn.sendall(INVALID)
                elif line.startswith(b":"):
                    conn.sendall(b"ok " + line[1:].split(b" ")[0] + b"\r\n")
                else:
                    conn.sendall(self.answers.get(line, self.DEFAULT))


    @staticmethod
    def _send(conn, data: bytes) -> None:
        try:
            conn.sendall(data)
        except OSError:   # the console has gone
            pass


def run_main(argv: list[str], stdin: bytes = b"") -> tuple[int, str, str]:
    """bertl14 ARGV in this process: (exit status, stdout, stderr)."""
    from bertl14_tools.cli import main
    out, err = io.StringIO(), io.StringIO()
    old_stdin = sys.stdin
    sys.stdin = io.TextIOWrapper(io.BytesIO(stdin), encoding="utf-8")
    try:
        with contextlib.redirect_stdout(out), contextlib.redirect_stderr(err):
            try:
                code = main([str(a) for a in argv])
            except SystemExit as exc:          # argparse: --help, --version, usage errors
                code = exc.code if isinstance(exc.code, int) else 1
    finally:
        sys.stdin = old_stdin
    return code, out.getvalue(), err.getvalue()
