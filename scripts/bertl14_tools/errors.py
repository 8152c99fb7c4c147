"""Errors that reach the user as one line (no traceback): say what is wrong and what to do next.

Commands raise `UserError` for the problems they recognise, naming the file (and line) at fault. Whatever a
library raises past them (YAML, JSON, safetensors, torch, hassil, pyserial, the file system, text that is not
UTF-8) is turned into one line by `describe` in the command line's single error path (cli.main); the
environment variable BERTL14_DEBUG=1 prints the traceback as well.
"""
from __future__ import annotations

import os

DEBUG_ENV = "BERTL14_DEBUG"


class UserError(Exception):
    """A problem with the user's input or environment, printed as `bertl14 CMD: error: <message>`."""


def debug() -> bool:
    return os.environ.get(DEBUG_ENV, "") not in ("", "0")


def _first_line(exc: BaseException) -> str:
    text = str(exc).strip()
    return text.splitlines()[0] if text else type(exc).__name__


def _module(exc: BaseException) -> str:
    return type(exc).__module__.split(".")[0]


def describe(exc: BaseException) -> str:
    """One line for an exception no command turned into a UserError: what went wrong and what to do."""
    mod = _module(exc)
    if isinstance(exc, UnicodeDecodeError):
        return (f"input is not UTF-8 text (byte 0x{exc.object[exc.start]:02x} at byte {exc.start}): save or send "
                "it as UTF-8")
    if isinstance(exc, UnicodeEncodeError):
        return "input is not valid UTF-8 (the device answers error=invalid_utf8): give UTF-8 text"
    if mod == "yaml":
        name = getattr(getattr(exc, "problem_mark", None), "name", None) or ""
        return yaml_error(name if name and not name.startswith("<") else "YAML input", exc)
    if isinstance(exc, MemoryError):
        return "out of memory: close other programs, or use a smaller model, batch or --limit"
    if isinstance(exc, OSError) and mod != "serial":
        what = f"{exc.filename}: " if exc.filename else ""
        if isinstance(exc, FileNotFoundError):
            return f"{what}not found: check the path"
        if isinstance(exc, PermissionError):
            return f"{what}permission denied: check the file's permissions or choose another output folder"
        if exc.errno == 28:
            return f"{what}no space left on the device: free some disk space"
        return f"{what}{exc.strerror or _first_line(exc)}"
    if mod == "serial":
        return f"serial port: {_first_line(exc)}: check --port (and that no other program has the port open)"
    if mod in ("safetensors", "safetensors_rust") or "SafetensorError" in type(exc).__name__:
        return (f"a model file is damaged ({_first_line(exc)}): copy or download model.safetensors again, or "
                "re-train the model")
    if mod == "hassil":
        return f"intent template: {_first_line(exc)}: close every ( [ {{ < of the templates"
    if mod == "torch":
        return f"torch: {_first_line(exc)}"
    if isinstance(exc, ValueError) and "JSON" in type(exc).__name__:
        return f"not valid JSON ({_first_line(exc)}): fix the file"
    return (f"unexpected {type(exc).__name__}: {_first_line(exc)} (run with {DEBUG_ENV}=1 for the traceback, "
            "and report it)")


def yaml_error(path, exc) -> str:
    mark = getattr(exc, "problem_mark", None) or getattr(exc, "context_mark", None)
    problem = getattr(exc, "problem", None) or str(exc).splitlines()[0]
    where = f"{path}:{mark.line + 1}:{mark.column + 1}" if mark is not None else str(path)
    return f"{where}: not valid YAML ({problem}): fix the file"
