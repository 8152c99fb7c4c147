"""`bertl14 validate`: with --dump on 300 public English test sentences the firmware under QEMU answers
exactly what the Python integer reference computes (intent, score, tokens, [CLS] bytes); against a
device that answers wrongly or breaks the protocol it reports it and exits 1."""
from __future__ import annotations

import json
import socket
import subprocess
import sys
import threading

from apphelpers import REPO, public_data


def test_300_sentences_match_the_reference_with_dump(firmware):
    """300 sentences on the bare-metal build; the FreeRTOS build runs the same library and protocol code under its
    scheduler, so its first 100 check the task, semaphore and lock path."""
    data = public_data()
    n = 300 if "-none" in firmware.parent.parent.name else 100     # the build: app-<board>-<rtos>N/build/
    proc = subprocess.run([sys.executable, "-m", "bertl14_tools.cli", "validate", "--qemu", str(firmware),
                           "--data", str(data), "--limit", str(n), "--dump", "--json"],
                          capture_output=True, text=True, timeout=400, cwd=REPO)
    assert proc.returncode == 0, proc.stdout[-3000:] + proc.stderr[-3000:]
    report = json.loads(proc.stdout)
    assert report["n"] == n and report["matches_reference"] == n
    assert report["mismatches"] == [] and report["protocol_errors"] == []
    assert report["dump"] is True and report["model"] == "intent-en"
    if n == 300:    # the model's accuracy, on enough sentences to mean something; 100 only check the task path
        assert report["accuracy"] > 0.9
    print(f"validate: {report['n']} sentences, accuracy {report['accuracy']:.4f}, 0 mismatches")


class FakeDevice:
    """A socket:// 'device' with the firmware's :config whose sentence answers are given."""

    def __init__(self, model_dir, answer: bytes):
        from bertl14_tools.model.folder import open_model
        m = open_model(model_dir)
        self.config = (f"ok config model={m.name} board=fake rtos=none cycles=host_ns min_score=0.800 "
                       f"max_seq_len={m.max_seq_len} line_max=255 rx_buffer=1024 dump=off\r\n").encode()
        self.answer = answer
        self.srv = socket.socket()
        self.srv.bind(("127.0.0.1", 0))
        self.srv.listen(1)
        self.port = self.srv.getsockname()[1]
        threading.Thread(target=self.serve, daemon=True).start()

    def serve(self):
        conn, _ = self.srv.accept()
        with conn, conn.makefile("rb") as f:
            for line in f:
                conn.sendall(self.config if line.startswith(b":config") else
                             b"ok entities 0\r\n" if line.startswith(b":entities") else self.answer)


def _validate_fake(tmp_path, answer: bytes):
    model = REPO / "models" / "intent-en"
    data = tmp_path / "d.jsonl"
    data.write_text("\n".join(json.dumps({"text": t, "intent": "HassTurnOn"})
                              for t in ["turn on the kitchen light", "switch off the fan"]) + "\n")
    fake = FakeDevice(model, answer)
    return subprocess.run([sys.executable, "-m", "bertl14_tools.cli", "validate", "--port",
                           f"socket://127.0.0.1:{fake.port}", "--model", str(model), "--data", str(data),
                           "--json", "--timeout", "3"], capture_output=True, text=True, timeout=120, cwd=REPO)


def test_validate_reports_mismatches(tmp_path):
    proc = _validate_fake(tmp_path, b"intent=HassTurnOn score=0.500 tokens=3 cycles=1\r\n")
    assert proc.returncode == 1, proc.stdout + proc.stderr
    report = json.loads(proc.stdout)
    assert len(report["mismatches"]) == 2 and report["protocol_errors"] == []
    assert any("score 0.500 !=" in d for d in report["mismatches"][0]["differences"])
    # the device's cycles by token count (a board's own timing table): both answers said tokens=3 cycles=1
    assert report["cycles_by_tokens"] == {"3": {"n": 2, "mean_cycles": 1}}
    assert report["cycles_unit"] == "host_ns" and report["mean_cycles"] == 1


def test_validate_reports_protocol_errors(tmp_path):
    proc = _validate_fake(tmp_path, b"HassTurnOn\r\n")          # no intent=/error= line: out of step
    assert proc.returncode == 1, proc.stdout + proc.stderr
    report = json.loads(proc.stdout)
    assert report["protocol_errors"] and "no complete line" in report["protocol_errors"][0]["error"]
