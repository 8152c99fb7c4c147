"""Serial demo for `make demo`: boot a built QEMU firmware, print its banner, send a few lines and
print the answers. Usage: python -m bertl14_west.demo BUILD_DIR [LINE ...]"""
from __future__ import annotations

import json
import socket
import subprocess
import sys
import time
from pathlib import Path

import serial

from bertl14_west.qemu import qemu_argv, qemu_tcp_serial

DEFAULT_LINES = ["turn on the kitchen light", "what is the temperature in the bedroom", "hello bertl14"]


def main(argv: list[str]) -> int:
    if not argv:
        print(__doc__, file=sys.stderr)
        return 2
    build_dir = Path(argv[0])
    lines = argv[1:] or DEFAULT_LINES
    info = json.loads((build_dir / "bertl14_build.json").read_text())
    with socket.socket() as s:
        s.bind(("127.0.0.1", 0))
        port = s.getsockname()[1]
    cmd = qemu_argv(info, qemu_tcp_serial(port))
    print("$ " + " ".join(cmd))
    qemu = subprocess.Popen(cmd, stdin=subprocess.DEVNULL)
    try:
        deadline = time.monotonic() + 10
        while True:
            try:
                ser = serial.serial_for_url(f"socket://127.0.0.1:{port}", timeout=5)
                break
            except serial.SerialException:
                if time.monotonic() > deadline or qemu.poll() is not None:
                    print("demo: QEMU did not start", file=sys.stderr)
                    return 1
                time.sleep(0.05)
        with ser:
            print("<< " + ser.readline().decode(errors="replace").rstrip())
            for line in lines:
                print(">> " + line)
                ser.write(line.encode() + b"\r\n")
                print("<< " + ser.readline().decode(errors="replace").rstrip())
    finally:
        qemu.kill()
        qemu.wait()
    return 0


if __name__ == "__main__":
    sys.exit(main(sys.argv[1:]))
