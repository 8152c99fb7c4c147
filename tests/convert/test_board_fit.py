"""`bertl14 convert --board B`: a model whose data or work buffer cannot fit the board's memory (board.yml, the table
the linker script is made from) stops the conversion with the numbers before any C source is written; without
--board a model that fits no board is a warning; a fitting one prints its share of each region."""
from __future__ import annotations

import json
import sys
from pathlib import Path

import pytest

from cvt_util import CALIB, REPO, TINY_VOCAB, run_cli, write_tiny_bert

sys.path.insert(0, str(REPO / "scripts" / "west_commands"))
from bertl14_west.boards import all_boards  # noqa: E402


def _region(board: str, name: str) -> int:
    return next(r["size"] for r in all_boards()[board].memory if r["name"] == name)


def _largest_flash() -> tuple[int, str]:
    """(size, board) of the largest flash region of any board."""
    return max((r["size"], b.name) for b in all_boards().values() for r in b.memory if r.get("kind") == "flash")


@pytest.fixture(scope="module")
def big_bert(tmp_path_factory) -> Path:
    """More model data than any board's flash (word rows of 256 INT8 values, one layer; 4,096 rows a MB): 0.5 MB
    beyond the largest flash region."""
    rows = (_largest_flash()[0] + 512 * 1024) // 256
    vocab = TINY_VOCAB + [f"w{i:05d}" for i in range(rows)]
    return write_tiny_bert(tmp_path_factory.mktemp("big") / "hf", layers=1, hidden=256, heads=4, intermediate=64,
                           positions=32, vocab=vocab, calibration=CALIB)


def test_too_big_for_the_board_stops_before_the_sources(big_bert, tmp_path):
    from bertl14_tools.model.convert import ConvertOptions, convert
    from bertl14_tools.errors import UserError
    out = tmp_path / "out"
    with pytest.raises(UserError) as e:
        convert(big_bert, out, ConvertOptions(board="nucleo_h743zi", progress=False))
    msg = str(e.value)
    flash = _region("nucleo_h743zi", "FLASH")
    assert "does not fit nucleo_h743zi" in msg and f"FLASH has {flash:,} B" in msg, msg
    assert "--vocab trim" in msg and "--embedding int4" in msg
    assert not (out / "bertl14_weights.c").exists()          # stopped before writing gigabytes of C
    # the numbers are the converted model's: the same folder converted without --board has them in its manifest
    man = convert(big_bert, tmp_path / "all", ConvertOptions(progress=False))
    fb = man["flash_bytes"]
    assert f"needs {fb['total']:,} B (weights {fb['weights']:,} + vocabulary {fb['vocabulary']:,})" in msg
    assert f"({fb['total'] - flash:,} B too many)" in msg
    # a converted folder given again with --board is checked too (the build passes one)
    with pytest.raises(UserError, match="does not fit nucleo_h743zi"):
        convert(tmp_path / "all", tmp_path / "again", ConvertOptions(board="nucleo_h743zi", progress=False))


def test_a_model_that_fits_no_board_is_a_warning(big_bert, tmp_path):
    r = run_cli("convert", "--model", big_bert, "--out", tmp_path / "out", "-q")
    assert r.returncode == 0, r.stderr
    total = json.loads((tmp_path / "out" / "manifest.json").read_text())["flash_bytes"]["total"]
    warning = [line for line in r.stderr.splitlines() if "warning" in line]
    assert len(warning) == 1 and "fits none of the boards" in warning[0], r.stderr
    size, board = _largest_flash()
    assert f"model data {total:,} B of FLASH {size / 2**20:.1f} MB" in warning[0], (board, warning[0])  # the largest


def test_fit_is_printed_for_the_board(tmp_path):
    hf = write_tiny_bert(tmp_path / "tiny", calibration=CALIB)
    r = run_cli("convert", "--model", hf, "--out", tmp_path / "out", "--board", "nucleo_h743zi", "--json")
    assert r.returncode == 0, r.stderr
    res = json.loads(r.stdout)
    rows = {row["region"]: row for row in res["board_fit"]}
    assert rows["FLASH"]["need"] == res["flash_bytes"]["total"] and rows["FLASH"]["size"] == _region("nucleo_h743zi", "FLASH")
    assert rows["DTCM"]["need"] == res["work_buffer_bytes"] and rows["DTCM"]["size"] == _region("nucleo_h743zi", "DTCM")
    r = run_cli("convert", "--model", tmp_path / "out", "--out", tmp_path / "out", "--board", "mps2_an500", "-q")
    assert r.returncode == 0, r.stderr
    assert f"fits mps2_an500: model data {res['flash_bytes']['total']:,} B of FLASH 4.0 MB" in r.stdout
    assert f"work buffer {res['work_buffer_bytes']:,} B of RAM 4.0 MB" in r.stdout    # no DTCM on the mps2 boards


def test_work_buffer_is_checked_against_its_region_and_unknown_boards_are_errors(tmp_path):
    from bertl14_tools.model import board_fit
    from bertl14_tools.errors import UserError
    dtcm = _region("nucleo_h743zi", "DTCM")
    with pytest.raises(UserError) as e:
        board_fit.check("nucleo_h743zi", 1000, dtcm + 1)
    assert f"work buffer needs {dtcm + 1:,} B but nucleo_h743zi's DTCM has {dtcm:,} B (1 B too many)" in str(e.value)
    assert "--max-seq-len" in str(e.value) and "it fits mps2_an386, mps2_an500" in str(e.value)
    assert board_fit.check("nucleo_h743zi", 1000, dtcm)[1]["need"] == dtcm
    assert board_fit.needs("host", 10**9, 10**9) == []        # no memory table: nothing to check
    r = run_cli("convert", "--model", tmp_path / "missing", "--out", tmp_path / "o", "--board", "nucleo")
    assert r.returncode != 0 and "unknown board 'nucleo'" in r.stderr and "nucleo_h743zi" in r.stderr
    assert "Traceback" not in r.stderr
