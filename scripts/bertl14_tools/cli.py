"""`bertl14` command line: one subcommand a module, each module exposes `register(subparsers)`.

A module's `register` adds its parser and sets `func` (called with the parsed args, returns an exit code).
Errors meant for the user are raised as `bertl14_tools.errors.UserError` and printed as one line.
"""
from __future__ import annotations

import argparse
import importlib
import sys

from .errors import UserError

# subcommand modules, in the order `bertl14 --help` lists them
COMMAND_MODULES = [
    "bertl14_tools.convert",      # convert
    "bertl14_tools.infer",        # tokenize, embed, predict, eval
    "bertl14_tools.bitexact",     # check-bitexact
    "bertl14_tools.data",         # dataset
    "bertl14_tools.train",        # train
    "bertl14_tools.report",       # report
    "bertl14_tools.serial",       # console, validate
    "bertl14_tools.bench",        # bench
]


def build_parser() -> argparse.ArgumentParser:
    parser = argparse.ArgumentParser(prog="bertl14", description=__doc__.splitlines()[0])
    sub = parser.add_subparsers(dest="command", metavar="COMMAND")
    for name in COMMAND_MODULES:
        try:
            module = importlib.import_module(name)
        except ModuleNotFoundError as exc:
            if exc.name == name:  # module not written yet in this checkout
                continue
            raise
        module.register(sub)
    return parser


def main(argv: list[str] | None = None) -> int:
    parser = build_parser()
    args = parser.parse_args(argv)
    if not getattr(args, "func", None):
        parser.print_help()
        return 2
    try:
        return int(args.func(args) or 0)
    except UserError as exc:
        print(f"bertl14 {args.command}: error: {exc}", file=sys.stderr)
        return 2
    except KeyboardInterrupt:
        return 130


if __name__ == "__main__":
    sys.exit(main())
