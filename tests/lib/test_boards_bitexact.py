"""The library on every emulated board (each board whose board.yml names a QEMU machine: the Cortex-M4, M7, M33
and M55 MPS boards, qemu_riscv32): `bertl14 check-bitexact --target qemu --board B --kernels both` with the shipped
intent-en model on sentences expanded from the home-assistant-intents templates (English and Chinese) checks every
kernel set the board runs (board.yml `kernels:`) against the Python integer reference, token ids, hidden rows,
logits and tags byte for byte; an accelerated set executes fewer instructions than the portable one. A short run
here (CI); the acceptance runs 300 sentences a board (docs/boards.md)."""
from __future__ import annotations

import importlib.util
import json
from pathlib import Path

import pytest

from bertl14_tools import cli, qemu_target
from testsupport import ensure_west_workspace, skip_missing

pytestmark = pytest.mark.qemu

REPO = Path(__file__).resolve().parents[2]
SENTENCES = 10


@pytest.fixture(scope="module", autouse=True)
def west_workspace():
    ensure_west_workspace()


@pytest.mark.parametrize("board", qemu_target.qemu_boards())
def test_check_bitexact_on_every_emulated_board(board, capsys):
    for tool in qemu_target.missing_tools(board):
        skip_missing(f"{tool} not installed (make test installs it)")
    for mod in ("west", "serial", "hassil", "home_assistant_intents"):
        if importlib.util.find_spec(mod) is None:
            pytest.skip(f"Python module {mod} not installed (pip install -e .[dev])")
    code = cli.main(["check-bitexact", "--model", str(REPO / "models" / "intent-en"), "--data", f"hassil:{SENTENCES}",
                     "--target", "qemu", "--board", board, "--kernels", "both", "--json", "--quiet"])
    out = capsys.readouterr().out
    rows = [json.loads(line) for line in out.splitlines() if line.startswith("{")]
    assert code == 0, out
    assert [r["kernels"] for r in rows] == qemu_target.board_kernels(board), out
    for r in rows:
        assert r["board"] == board and r["target"] == "qemu"
        assert r["sentences"] == SENTENCES and r["mismatches"] == 0, r
        assert r["tags_compared"] and r["tokens"] > 2 * SENTENCES and r["instructions"] > 0, r
    counts = {r["kernels"]: r["instructions"] for r in rows}
    for accelerated in set(counts) - {"portable"}:
        assert counts[accelerated] < counts["portable"], counts


def test_a_kernel_set_the_board_lacks_is_a_one_line_error(capsys):
    code = cli.main(["check-bitexact", "--model", str(REPO / "models" / "intent-en"), "--data", "hassil:1",
                     "--target", "qemu", "--board", "qemu_riscv32", "--kernels", "dsp", "--quiet"])
    err = capsys.readouterr().err
    assert code != 0
    assert "qemu_riscv32 runs portable kernels only" in err and "use portable or both" in err, err
    assert "Traceback" not in err
