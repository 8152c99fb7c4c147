"""The user's text as the tools read it: UTF-8 by the device's rule, JSON lines and YAML with `file:line` errors.

The device answers `error=invalid_utf8` for a line that is not valid UTF-8 (overlong forms, surrogates, code
points above U+10FFFF and truncated sequences included) or that holds a NUL byte (docs/serial-protocol.md).
The host tools apply the same rule (`device_text`) to every sentence they are given, and refuse a file that is
not UTF-8 text with the line and column of the first bad byte.
"""
from __future__ import annotations

import json
import os
from pathlib import Path

from .errors import UserError, yaml_error

INVALID_UTF8 = "invalid_utf8"
INVALID_UTF8_MESSAGE = "the line is not valid UTF-8; send UTF-8 text"   # the firmware's words (protocol.c)


def bad_byte(raw: bytes) -> tuple[int, int, int] | None:
    """(line, column, byte) of the first byte that breaks the device's rule (1-based line and column, counted in
    bytes), None for valid UTF-8 without NUL."""
    try:
        raw.decode("utf-8")
        pos = raw.find(b"\0")
    except UnicodeDecodeError as exc:
        pos = exc.start
    if pos < 0:
        return None
    line_start = raw.rfind(b"\n", 0, pos) + 1
    return raw.count(b"\n", 0, pos) + 1, pos - line_start + 1, raw[pos]


def describe_bad_byte(byte: int) -> str:
    return "a NUL byte" if byte == 0 else f"byte 0x{byte:02x}"


def device_text(raw: bytes | str) -> str | None:
    """The text of one input line, or None where the device answers error=invalid_utf8. A str that cannot be
    written as UTF-8 (an argument whose bytes the locale could not decode, an unpaired surrogate) is refused."""
    if isinstance(raw, str):
        try:
            raw = raw.encode("utf-8")
        except UnicodeEncodeError:
            return None
    if bad_byte(raw) is not None:
        return None
    return raw.decode("utf-8")


def shown(raw: bytes | str) -> str:
    """Printable form of an input that may not be UTF-8 (bad bytes as \\xNN)."""
    if isinstance(raw, str):
        try:
            raw = raw.encode("utf-8", "surrogateescape")   # the bytes of an argument the locale could not decode
        except UnicodeEncodeError:
            raw = raw.encode("utf-8", "replace")
    return raw.decode("utf-8", "backslashreplace").replace("\0", "\\x00")


def decode(raw: bytes, where: str) -> str:
    """UTF-8 text of a file's bytes; a UserError naming `where:line` and the bad byte otherwise (NUL is allowed in
    a file: JSON strings cannot hold it raw, and YAML refuses it itself)."""
    try:
        return raw.decode("utf-8")
    except UnicodeDecodeError as exc:
        line = raw.count(b"\n", 0, exc.start) + 1
        col = exc.start - (raw.rfind(b"\n", 0, exc.start) + 1) + 1
        raise UserError(f"{where}:{line}: not UTF-8 text (byte 0x{raw[exc.start]:02x} at column {col}): "
                        "save the file as UTF-8") from None


def read_bytes(path: str | os.PathLike, what: str = "file") -> bytes:
    p = Path(path)
    try:
        return p.read_bytes()
    except FileNotFoundError:
        raise UserError(f"{what} {path} not found: check the path") from None
    except IsADirectoryError:
        raise UserError(f"{what} {path} is a folder: give a file") from None
    except OSError as exc:
        raise UserError(f"{what} {path}: {exc.strerror}") from None


def read_text(path: str | os.PathLike, what: str = "file") -> str:
    """A UTF-8 text file (a leading byte-order mark dropped), with the tools' messages for a missing or
    unreadable file and for bytes that are not UTF-8."""
    text = decode(read_bytes(path, what), str(path))
    return text[1:] if text.startswith("\ufeff") else text


def read_jsonl_numbered(path: str | os.PathLike, what: str = "file", need: tuple[str, ...] = ("text",),
                        allow_empty: bool = False) -> list[tuple[int, dict]]:
    """(line number, object) of every non-blank line of a JSON-lines file. Each line must be a JSON object whose
    `need` fields are present ("text" must be a string the device accepts); errors name `path:line`."""
    out = []
    for n, line in enumerate(read_text(path, what).splitlines(), 1):
        if not line.strip():
            continue
        try:
            obj = json.loads(line)
        except ValueError as exc:
            msg = getattr(exc, "msg", str(exc))
            col = getattr(exc, "colno", None)
            raise UserError(f"{path}:{n}: not valid JSON ({msg}{f' at column {col}' if col else ''}): write one "
                            "JSON object a line") from None
        if not isinstance(obj, dict):
            raise UserError(f"{path}:{n}: expected a JSON object ({{\"text\": ...}}), got {type(obj).__name__}")
        missing = [k for k in need if k not in obj]
        if missing:
            raise UserError(f"{path}:{n}: no {' and '.join(repr(k) for k in missing)} field: each line needs "
                            + " and ".join(f'"{k}"' for k in need))
        if "text" in need:
            if not isinstance(obj["text"], str):
                raise UserError(f"{path}:{n}: \"text\" must be a string")
            if device_text(obj["text"]) is None:
                raise UserError(f"{path}:{n}: \"text\" holds a NUL or an unpaired surrogate, which the device "
                                f"refuses ({INVALID_UTF8}): remove it")
        out.append((n, obj))
    if not out and not allow_empty:
        raise UserError(f"{what} {path} has no lines: write one JSON object a line")
    return out


def read_jsonl(path: str | os.PathLike, what: str = "file", need: tuple[str, ...] = (),
               allow_empty: bool = True) -> list[dict]:
    """The objects of a JSON-lines file (see read_jsonl_numbered)."""
    return [obj for _, obj in read_jsonl_numbered(path, what, need, allow_empty)]


def load_yaml(path: str | os.PathLike, what: str = "file", loader=None):
    """A YAML file (UTF-8), a syntax error given as `path:line:column: problem`."""
    import yaml
    text = read_text(path, what)
    try:
        return yaml.load(text, Loader=loader or yaml.SafeLoader)
    except yaml.YAMLError as exc:
        raise UserError(yaml_error(path, exc)) from None


def read_intent_table(folder: str | os.PathLike | None, name: str, item: str) -> dict | None:
    """A model folder's {intent: [item, ...]} JSON table (intent_slots.json, intent_domains.json: written by
    `bertl14 train`), or None when the folder has none."""
    path = Path(folder) / name if folder else None
    if path is None or not path.is_file():
        return None
    try:
        table = json.loads(path.read_text(encoding="utf-8"))
    except (OSError, UnicodeDecodeError, ValueError) as exc:
        raise UserError(f"{path}: not an intent {item}s JSON file ({exc}); write it again with `bertl14 train`") \
            from exc
    if not isinstance(table, dict) or not all(isinstance(v, list) for v in table.values()):
        raise UserError(f"{path}: expected {{intent: [{item}, ...]}}; write it again with `bertl14 train`")
    return table
