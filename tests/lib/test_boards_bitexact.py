"""The library on every emulated board (each board whose board.yml names a QEMU machine: the Cortex-M4, M7, M33
and M55 MPS boards, qemu_riscv32): `bertl14 check-bitexact --target qemu --board B --kernels K` with the shipped
intent-en model on sentences expanded from the home-assistant-intents templates (English and Chinese) checks the
kernels a default build of the board runs -- its accelerated sets (board.yml `kernels:`: dsp, mve), or the portable
one where it has none -- against the Python integer reference: token ids, hidden rows, logits and tags byte for
byte. A short run for CI, where each test image build costs about as much as the check: the portable kernels are
checked on the host and on qemu_riscv32 here, on the Cortex-M7 by test_qemu_target.py (both sets, DSP below
portable), and on every board by `--kernels both` runs of 300 sentences (docs/boards.md)."""
from __future__ import annotations

import importlib.util
import json
from pathlib import Path

import pytest

from bertl14_tools import cli
from bertl14_tools.device import qemu_target
from testsupport import ensure_west_workspace, skip_missing

pytestmark = pytest.mark.qemu

REPO = Path(__file__).resolve().parents[2]
SENTENCES = 10


@pytest.fixture(scope="module", autouse=True)
def west_workspace():
    ensure_west_workspace()


def default_kernels(board: str) -> list[str]:
    """The kernel sets a default build of the board runs: its accelerated ones, else the portable one."""
    return [k for k in qemu_target.board_kernels(board) if k != "portable"] or ["portable"]


@pytest.mark.parametrize("board,kernels", [(b, k) for b in qemu_target.qemu_boards() for k in default_kernels(b)])
def test_check_bitexact_on_every_emulated_board(board, kernels, capsys):
    for tool in qemu_target.missing_tools(board):
        skip_missing(f"{tool} not installed (make test installs it)")
    for mod in ("west", "serial", "hassil", "home_assistant_intents"):
        if importlib.util.find_spec(mod) is None:
            pytest.skip(f"Python module {mod} not installed (pip install -e .[dev])")
    code = cli.main(["check-bitexact", "--model", str(REPO / "models" / "intent-en"), "--data", f"hassil:{SENTENCES}",
                     "--target", "qemu", "--board", board, "--kernels", kernels, "--json", "--quiet"])
    out = capsys.readouterr().out
    rows = [json.loads(line) for line in out.splitlines() if line.startswith("{")]
    assert code == 0, out
    assert len(rows) == 1, out
    r = rows[0]
    assert r["board"] == board and r["target"] == "qemu" and r["kernels"] == kernels
    assert r["sentences"] == SENTENCES and r["mismatches"] == 0, r
    assert r["tags_compared"] and r["tokens"] > 2 * SENTENCES and r["instructions"] > 0, r


def test_a_kernel_set_the_board_lacks_is_a_one_line_error(capsys):
    code = cli.main(["check-bitexact", "--model", str(REPO / "models" / "intent-en"), "--data", "hassil:1",
                     "--target", "qemu", "--board", "qemu_riscv32", "--kernels", "dsp", "--quiet"])
    err = capsys.readouterr().err
    assert code != 0
    assert "qemu_riscv32 runs portable kernels only" in err and "use portable or both" in err, err
    assert "Traceback" not in err
