"""`west boards`: the boards of this workspace (boards/<vendor>/<board>/board.yml), one a line.

    west boards [-f FORMAT] [-n REGEX]

FORMAT is a Python format string over the fields {name} {vendor} {full_name} {cpu} {qemu} (the QEMU machine,
empty for real hardware) {runners} {flash} (the flash region's size) {ram} (every RAM region with its size) and
{dir}; the default prints the names. Example:

    west boards -f '{name:14} {cpu:10} flash {flash:6} {ram:40} runners: {runners}'
"""
from __future__ import annotations

import argparse
import re
import sys
from pathlib import Path

from west.commands import WestCommand

sys.path.insert(0, str(Path(__file__).resolve().parent))
from bertl14_west import REPO_ROOT, BuildError, run_command  # noqa: E402
from bertl14_west.boards import Board, all_boards  # noqa: E402
from bertl14_west.memory import human_size  # noqa: E402


def board_fields(board: Board) -> dict:
    flash = board.flash_region
    return {"name": board.name, "vendor": board.data.get("vendor", ""), "full_name": board.data.get("full_name", ""),
            "cpu": board.cpu, "qemu": board.qemu_machine or "", "runners": ", ".join(board.runners),
            "flash": human_size(flash["size"]) if flash else "",
            "ram": ", ".join(f"{r['name']} {human_size(r['size'])}" for r in board.memory if r.get("kind") != "flash"),
            "dir": str(board.dir.relative_to(REPO_ROOT)) if board.dir.is_relative_to(REPO_ROOT) else str(board.dir)}


class Boards(WestCommand):
    def __init__(self):
        super().__init__("boards", "list the boards", __doc__)

    def do_add_parser(self, parser_adder):
        parser = parser_adder.add_parser(self.name, help=self.help, description=self.description,
                                         formatter_class=argparse.RawDescriptionHelpFormatter)
        parser.add_argument("-f", "--format", default="{name}", help="format string of a line (default: '{name}')")
        parser.add_argument("-n", "--name", metavar="REGEX", help="only the boards whose name matches REGEX")
        return parser

    def do_run(self, args, unknown):
        run_command(self, self._list, args)

    def _list(self, args) -> int:
        try:
            pattern = re.compile(args.name) if args.name else None
        except re.error as e:
            raise BuildError(f"-n {args.name!r}: not a regular expression ({e})") from None
        for board in all_boards().values():
            if pattern and not pattern.search(board.name):
                continue
            fields = board_fields(board)
            try:
                print(args.format.format(**fields))
            except (KeyError, IndexError, ValueError) as e:
                raise BuildError(f"-f {args.format!r}: {type(e).__name__} {e}; fields: "
                                 f"{', '.join('{' + k + '}' for k in fields)}") from None
        return 0
