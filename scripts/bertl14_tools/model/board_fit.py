"""Does a converted model fit a board? Its data (weights + vocabulary) against the board's flash region, its work
buffer against the RAM region that holds it, the sizes read from the board's board.yml (bertl14_west.boards, the
memory table the linker script is generated from: one source). The firmware's own code and data come on top; the
build's memory summary counts everything after linking.

    rows = needs("nucleo_h743zi", flash_bytes, work_buffer_bytes)   # [{what, region, need, size}, ...]
    check(...)   -> raises UserError with the numbers when a region is too small
    fitting_boards(...)   -> the boards (with a memory table) the model fits
"""
from __future__ import annotations

import functools
import sys

from .. import REPO_ROOT
from ..errors import UserError


@functools.cache
def _west_boards():
    """bertl14_west.boards (scripts/west_commands), shared with `west build` and `west boards`; None outside a
    repository checkout (an installed package without the boards)."""
    sys.path.insert(0, str(REPO_ROOT / "scripts" / "west_commands"))
    try:
        from bertl14_west import BuildError, boards
    except ImportError:
        return None
    finally:
        sys.path.pop(0)
    return boards, BuildError


def board_names() -> list[str]:
    west = _west_boards()
    return list(west[0].all_boards()) if west else []


def needs(board: str, flash_bytes: int, work_buffer_bytes: int) -> list[dict]:
    """The model's share of each memory region of `board` (UserError for an unknown board)."""
    west = _west_boards()
    if west is None:
        raise UserError(f"--board {board}: the board descriptions (boards/*/*/board.yml) are not in this "
                        "installation; run from a bertl14 repository checkout")
    boards, build_error = west
    try:
        b = boards.find_board(board)
    except build_error as exc:
        raise UserError(f"--board: {exc}") from None
    return boards.model_needs(b, flash_bytes, work_buffer_bytes)


def region_size(board: str, region: str) -> int:
    """The size in bytes of one memory region of a board (board.yml)."""
    west = _west_boards()
    if west is None:
        raise UserError("the board descriptions (boards/*/*/board.yml) are not in this installation; run from a "
                        "bertl14 repository checkout")
    boards, build_error = west
    try:
        b = boards.find_board(board)
    except build_error as exc:
        raise UserError(str(exc)) from None
    sizes = {r["name"]: int(r["size"]) for r in b.memory}
    if region not in sizes:
        raise UserError(f"board {board} has no {region} region in its board.yml (regions: {', '.join(sizes) or 'none'})")
    return sizes[region]


def _kb(n: int) -> str:
    return f"{n / 1024:,.0f} KB" if n < 1024 * 1024 else f"{n / (1024 * 1024):,.1f} MB"


def describe(rows: list[dict]) -> str:
    """'model data 991,516 B of FLASH 2.0 MB (47 %), work buffer 17,972 B of DTCM 128 KB (14 %)'."""
    return ", ".join(f"{r['what']} {r['need']:,} B of {r['region']} {_kb(r['size'])} "
                     f"({100 * r['need'] / r['size']:.0f} %)" for r in rows)


def over(rows: list[dict]) -> list[dict]:
    return [r for r in rows if r["need"] > r["size"]]


def check(board: str, flash_bytes: int, work_buffer_bytes: int, detail: str = "") -> list[dict]:
    """The rows of `needs`; UserError naming every region the model overflows, by how much, and what to try."""
    rows = needs(board, flash_bytes, work_buffer_bytes)
    bad = over(rows)
    if bad:
        what = "; ".join(f"its {r['what']} needs {r['need']:,} B{detail if r['what'] == 'model data' else ''} but "
                         f"{board}'s {r['region']} has {r['size']:,} B ({r['need'] - r['size']:,} B too many)"
                         for r in bad)
        fixes = ("a smaller model (fewer layers, a smaller hidden size or vocabulary), --vocab trim, --weights int8 "
                 "(CONFIG_BERTL14_WEIGHTS_INT8), --embedding int4 or --prune-heads N"
                 if any(r["what"] == "model data" for r in bad) else "")
        if any(r["what"] == "work buffer" for r in bad):
            fixes += ("; " if fixes else "") + "a shorter --max-seq-len (CONFIG_BERTL14_MAX_SEQ_LEN) or --prune-heads N"
        fits = fitting_boards(flash_bytes, work_buffer_bytes)
        raise UserError(f"the model does not fit {board}: {what}. Try {fixes}"
                        + (f" (it fits {', '.join(fits)})" if fits else ""))
    return rows


def fitting_boards(flash_bytes: int, work_buffer_bytes: int) -> list[str]:
    """The boards with a memory table whose regions hold the model's data and work buffer."""
    out = []
    for name in board_names():
        rows = needs(name, flash_bytes, work_buffer_bytes)
        if rows and not over(rows):
            out.append(name)
    return out


def no_board_warning(flash_bytes: int, work_buffer_bytes: int) -> str | None:
    """A warning when the model fits none of the boards (None when it fits one, or no boards are known)."""
    names = [n for n in board_names() if needs(n, flash_bytes, work_buffer_bytes)]
    if not names or fitting_boards(flash_bytes, work_buffer_bytes):
        return None
    largest = max(names, key=lambda n: needs(n, flash_bytes, work_buffer_bytes)[0]["size"])
    return (f"the model fits none of the boards ({', '.join(names)}): "
            f"{describe(needs(largest, flash_bytes, work_buffer_bytes))} on the largest, {largest}; use a smaller "
            "model, --vocab trim, --weights int8, --embedding int4, --prune-heads N or a shorter --max-seq-len")
