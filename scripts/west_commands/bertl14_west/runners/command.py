"""The west commands that hand a build to a runner (flash.py, debug.py, attach.py, debugserver.py): one parser
and one way of choosing the runner, checking the files and running it."""
from __future__ import annotations

import argparse
import json
from pathlib import Path

from west.commands import WestCommand

from .. import BuildError, run_command
from ..boards import Board, find_board
from . import RUNNERS, runner_class
from .core import (GDB_INSTALL, Runner, RunnerConfig, print_argv, require, run_server, run_server_and_gdb,
                   run_tool)

INFO_FILE = "bertl14_build.json"
KIND = {"flash": "flash", "debug": "debug", "attach": "debug", "debugserver": "debug"}


class RunnerCommand(WestCommand):
    """A west command run by a runner. Subclasses set COMMAND, HELP and DESCRIPTION."""
    COMMAND = ""
    HELP = ""
    DESCRIPTION = ""

    def __init__(self):
        super().__init__(self.COMMAND, self.HELP, self.DESCRIPTION)

    def do_add_parser(self, parser_adder):
        parser = parser_adder.add_parser(self.name, help=self.help, description=self.description,
                                         formatter_class=argparse.RawDescriptionHelpFormatter)
        parser.add_argument("-d", "--build-dir", default="build", help="build directory (default: build)")
        able = [n for n, r in RUNNERS.items() if self.COMMAND in r.commands]
        parser.add_argument("-r", "--runner", metavar="RUNNER",
                            help=f"{', '.join(able)} (default: the board's, see `west boards -f '{{runners}}'`)")
        parser.add_argument("--dry-run", action="store_true", help="print the command(s) and run nothing")
        if self.COMMAND != "flash":
            parser.add_argument("--gdb-port", type=int, metavar="PORT",
                                help="TCP port of the gdb server (default: the runner's: openocd/pyocd 3333, "
                                     "jlink 2331, qemu 1234)")
        if self.COMMAND in ("debug", "attach"):
            parser.add_argument("--gdb", metavar="PROGRAM",
                                help="the gdb to run (default: arm-none-eabi-gdb or gdb-multiarch, as found)")
        return parser

    def do_run(self, args, unknown):
        run_command(self, self._run, args)

    def _run(self, args) -> int:
        runner = make_runner(self.COMMAND, args)
        runner.before(self.COMMAND, args.dry_run)
        argvs = runner.argvs(self.COMMAND)
        if args.dry_run:
            for argv in argvs:
                print_argv(argv)
            return 0
        for i, argv in enumerate(argvs):
            is_gdb = self.COMMAND in ("debug", "attach") and i == len(argvs) - 1 and runner.name != "native"
            require(argv[0], runner, GDB_INSTALL if is_gdb else runner.install)
        self.banner(f"west {self.COMMAND}: {runner.name}")
        for line in runner.notes(self.COMMAND):
            print(line, flush=True)
        for argv in argvs:
            print_argv(argv)
        if self.COMMAND == "flash":
            return run_tool(runner, argvs[0])
        if len(argvs) == 1:
            return run_server(argvs[0])
        return run_server_and_gdb(runner, argvs[0], argvs[1])


def read_build(build_dir_arg: str) -> dict:
    build_dir = Path(build_dir_arg).resolve()
    try:
        return json.loads((build_dir / INFO_FILE).read_text())
    except (OSError, ValueError):
        raise BuildError(f"{build_dir} is not a west build directory: build first with "
                         f"`west build -b BOARD -d {build_dir_arg}`") from None


def choose_runner(board: Board, command: str, asked: str | None, build_dir_arg: str) -> type[Runner]:
    """The runner class for `west COMMAND` on this board: -r, else the board's default, else its first runner
    that can do it; every refusal says what would work."""
    able = [n for n in board.runners if n in RUNNERS and command in RUNNERS[n].commands]
    if asked:
        cls = runner_class(asked)
        if cls is None:
            raise BuildError(f"unknown runner {asked}; runners: {', '.join(RUNNERS)}")
        if cls.name not in board.runners:
            raise BuildError(f"board {board.name} does not support runner {asked}; its runners: "
                             f"{', '.join(board.runners) or 'none'}")
        if command not in cls.commands:
            raise BuildError(f"runner {cls.name} cannot {command}; runners of {board.name} that can: "
                             f"{', '.join(able) or 'none'}")
        return cls
    if not able:
        if command == "flash":
            hint = (f"run it with `west build -d {build_dir_arg} -t run`" if board.qemu_machine
                    else "nothing to flash")
            raise BuildError(f"board {board.name} has no flash runner: {hint}")
        raise BuildError(f"board {board.name} has no runner that can {command}")
    default = board.default_runner(KIND[command])
    return RUNNERS[default] if default in able else RUNNERS[able[0]]


def make_runner(command: str, args) -> Runner:
    info = read_build(args.build_dir)
    board = find_board(info["board"])
    cls = choose_runner(board, command, args.runner, args.build_dir)
    cfg = RunnerConfig(board=board, build_dir=Path(info["build_dir"]), files=info["files"],
                       args=board.runner_args(cls.name), gdb=getattr(args, "gdb", None),
                       gdb_port=getattr(args, "gdb_port", None))
    runner = cls(cfg)
    for f in runner.needed_files(command):
        if not Path(f).is_file():
            raise BuildError(f"{f} missing: build first with `west build -d {args.build_dir}`")
    return runner

