"""What every `bertl14` command shares on its command line and its output.

- `--json`: one JSON object a line on stdout (`emit_json`); without it, text for people.
- `-q/--quiet`: no progress bar at all (ours, and those of transformers and huggingface_hub); warnings and
  errors still print. Bars are also off when stderr is not a terminal (logs, CI).
- Option values checked when the command line is read (`positive_int`, `fraction`, ...), so a nonsensical
  value stops the command before any work, with the option's name.
- Lists of numbers: `--seq-lens 16,32,64` or `--seq-lens 16 32 64` (`IntList`).
"""
from __future__ import annotations

import argparse
import json
import os
import sys

_quiet = False


def set_quiet(quiet: bool) -> None:
    """--quiet for the whole process. The libraries' own bars read their switches when first imported, so the
    environment is set too (before transformers or huggingface_hub is imported by the command)."""
    global _quiet
    _quiet = bool(quiet)
    if _quiet:
        os.environ["HF_HUB_DISABLE_PROGRESS_BARS"] = "1"
        os.environ["TQDM_DISABLE"] = "1"
        os.environ["TRANSFORMERS_VERBOSITY"] = "error"
        if "transformers" in sys.modules:
            sys.modules["transformers"].utils.logging.disable_progress_bar()
        if "huggingface_hub" in sys.modules:
            sys.modules["huggingface_hub"].utils.disable_progress_bars()


def quiet() -> bool:
    return _quiet


def show_progress() -> bool:
    """Progress bars: not with --quiet, and only when stderr is a terminal."""
    return not _quiet and sys.stderr.isatty()


def progress(iterable=None, **kwargs):
    """tqdm on stderr, shown as `show_progress()` says (or never when the caller passes disable=True)."""
    from tqdm import tqdm
    kwargs["disable"] = bool(kwargs.get("disable")) or not show_progress()
    kwargs.setdefault("file", sys.stderr)
    return tqdm(iterable, **kwargs)


def emit_json(obj) -> None:
    """One JSON object on one line of stdout."""
    print(json.dumps(obj, ensure_ascii=False), flush=True)


def add_output_options(p: argparse.ArgumentParser, json_help: str) -> None:
    """--json (what it prints) and -q/--quiet, the options every command has."""
    p.add_argument("--json", action="store_true", help=json_help)
    p.add_argument("-q", "--quiet", action="store_true", help="no progress bars (warnings and errors still print)")


# ---- option types: a wrong value stops the command when its line is read ---------------------------------------

def _number(kind, text: str):
    try:
        return kind(text)
    except ValueError:
        raise argparse.ArgumentTypeError(f"{text!r} is not {'an integer' if kind is int else 'a number'}") from None


def positive_int(text: str) -> int:
    v = _number(int, text)
    if v < 1:
        raise argparse.ArgumentTypeError(f"{text} must be at least 1")
    return v


def non_negative_int(text: str) -> int:
    v = _number(int, text)
    if v < 0:
        raise argparse.ArgumentTypeError(f"{text} must be 0 or more")
    return v


def positive_float(text: str) -> float:
    v = _number(float, text)
    if not v > 0 or v != v or v == float("inf"):
        raise argparse.ArgumentTypeError(f"{text} must be a positive number")
    return v


def non_negative_float(text: str) -> float:
    v = _number(float, text)
    if not v >= 0 or v == float("inf"):
        raise argparse.ArgumentTypeError(f"{text} must be 0 or a positive number")
    return v


def fraction(text: str) -> float:
    """A number in [0, 1] (thresholds, shares of sentences)."""
    v = _number(float, text)
    if not 0 <= v <= 1:
        raise argparse.ArgumentTypeError(f"{text} must be within 0..1")
    return v


def int_range(low: int, high: int):
    def check(text: str) -> int:
        v = _number(int, text)
        if not low <= v <= high:
            raise argparse.ArgumentTypeError(f"{text} must be within {low}..{high}")
        return v
    check.__name__ = f"integer in {low}..{high}"
    return check


class IntList(argparse.Action):
    """Integers given comma-separated, space-separated or both (`16,32 64`): a sorted list without repeats.
    Use with nargs="+"; set `low`/`high` through `int_list_argument`."""

    low, high = None, None

    def __call__(self, parser, namespace, values, option_string=None):
        out = set()
        for value in values:
            for part in str(value).split(","):
                if not part.strip():
                    continue
                try:
                    n = int(part)
                except ValueError:
                    parser.error(f"argument {option_string}: {part!r} is not an integer (give numbers, e.g. "
                                 f"{option_string} 16,32,64)")
                if (self.low is not None and n < self.low) or (self.high is not None and n > self.high):
                    parser.error(f"argument {option_string}: {n} must be within {self.low}..{self.high}")
                out.add(n)
        if not out:
            parser.error(f"argument {option_string}: give at least one number")
        setattr(namespace, self.dest, sorted(out))


def int_list_argument(p: argparse.ArgumentParser, name: str, default: list[int], low: int, high: int,
                      help: str, metavar: str = "N") -> None:
    """An option taking a list of integers in low..high (IntList)."""
    action = type("IntList", (IntList,), {"low": low, "high": high})
    p.add_argument(name, nargs="+", action=action, default=list(default), metavar=metavar,
                   help=f"{help} (comma- or space-separated; default {','.join(map(str, default))})")
