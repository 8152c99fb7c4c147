"""`bertl14`: the command line. One subcommand a module; each module's `register(subparsers)` adds its parser
and sets `func` (called with the parsed arguments, returns the exit code).

Every error reaches the user as one line, `bertl14 CMD: error: ...`, through `main` (errors.py); the
traceback only with BERTL14_DEBUG=1. Every command has --json and -q/--quiet (ui.py).
"""
from __future__ import annotations

import argparse
import importlib
import sys

from . import __version__
from .errors import UserError, debug, describe

DESCRIPTION = """\
bertl14 runs BERT-style intent models on Cortex-M microcontrollers. This command prepares a model for a
device, answers sentences on the PC exactly as the device will, and talks to a device over its serial port."""

EPILOG = """\
typical steps:
  bertl14 predict --model models/intent-en "turn on the kitchen light"   answer a sentence as the device does
  bertl14 dataset --lang en --intents my.yaml --out data/my                sentences from your intent templates
  bertl14 train --data data/my --out models/my                             train a model (needs the train extra)
  bertl14 eval --model models/my --data data/my/validation.jsonl           accuracy on labelled sentences
  bertl14 console --port /dev/ttyACM0                                      type sentences to a board

Every command takes --json (one JSON object a line) and -q/--quiet (no progress bars), and -h for its options.
BERTL14_DEBUG=1 prints the traceback behind an error. More: README.md and docs/ in the repository."""

# subcommand modules, in the order `bertl14 --help` lists them. Each imports only what every install has; a
# command that needs an optional extra (torch for train, onnxruntime for bench) imports it when it runs and says
# which extra to install.
COMMAND_MODULES = [
    "bertl14_tools.model.convert",        # convert
    "bertl14_tools.reference.infer",      # tokenize, embed, predict, eval
    "bertl14_tools.device.bitexact",      # check-bitexact
    "bertl14_tools.data.dataset",         # dataset
    "bertl14_tools.train.training",       # train
    "bertl14_tools.train.report",         # report
    "bertl14_tools.device.serial",        # console, validate
    "bertl14_tools.device.bench",         # bench
]


class Parser(argparse.ArgumentParser):
    """argparse with a one-line error: `bertl14 CMD: error: MESSAGE (see bertl14 CMD --help)`, exit 2."""

    def error(self, message: str):
        self.exit(2, f"{self.prog}: error: {message} (see {self.prog} --help)\n")


def build_parser() -> argparse.ArgumentParser:
    parser = Parser(prog="bertl14", description=DESCRIPTION, epilog=EPILOG,
                    formatter_class=argparse.RawDescriptionHelpFormatter)
    parser.add_argument("--version", action="version", version=f"bertl14 {__version__}",
                        help="print the package version and exit")
    sub = parser.add_subparsers(dest="command", metavar="COMMAND", parser_class=Parser)
    for name in COMMAND_MODULES:
        importlib.import_module(name).register(sub)
    return parser


def main(argv: list[str] | None = None) -> int:
    parser = build_parser()
    args = parser.parse_args(argv)
    if not getattr(args, "func", None):
        parser.print_help()
        return 2
    from . import ui
    ui.set_quiet(getattr(args, "quiet", False))
    try:
        return int(args.func(args) or 0)
    except KeyboardInterrupt:
        return 130
    except BrokenPipeError:   # `bertl14 predict ... | head`: the reader left
        _silence_stdout()
        return 0
    except Exception as exc:   # noqa: BLE001 - the one place every error becomes one line
        if debug():
            import traceback
            traceback.print_exc()
        message = str(exc) if isinstance(exc, UserError) else describe(exc)
        print(f"bertl14 {args.command}: error: {message}", file=sys.stderr)
        return 2


def _silence_stdout() -> None:
    import os
    try:
        devnull = os.open(os.devnull, os.O_WRONLY)
        os.dup2(devnull, sys.stdout.fileno())
    except (OSError, ValueError):
        pass


if __name__ == "__main__":
    sys.exit(main())
