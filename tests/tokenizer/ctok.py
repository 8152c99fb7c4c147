"""Host build of the C tokenizer alone (bertl14/src/bertl14_tokenizer.c) and a ctypes wrapper for the tests.

Built on its own (not the whole library) so the tokenizer tests run even while other parts are in progress;
compiler and flags come from bertl14_tools.cbuild, the cache lives next to cbuild's.
"""
from __future__ import annotations

import ctypes
import hashlib
import os
import subprocess
from pathlib import Path

from bertl14_tools import cbuild

REPO = Path(__file__).resolve().parents[2]
SRC = REPO / "bertl14" / "src" / "bertl14_tokenizer.c"
HEADERS = [REPO / "bertl14" / "src" / "bertl14_tokenizer.h", REPO / "bertl14" / "include" / "bertl14.h"]

OK, TOKEN_OVERFLOW, INVALID_UTF8, NULL_POINTER, INVALID_CONFIG, INVALID_SEQ_LEN = 0, -3, -6, -5, -1, -4
MODEL_FORMAT, MODEL_SIZE, MODEL_CORRUPT, MODEL_LAYOUT = -11, -12, -13, -14   # bertl14.h


def build(sanitize: tuple[str, ...] = (), extra_sources: tuple[Path, ...] = (), executable: str | None = None,
          extra_flags: tuple[str, ...] = ()) -> Path:
    """Compile the tokenizer into a shared library (or, with `executable`, a program with extra_sources)."""
    flags = cbuild.compile_flags("portable", sanitize, ["-Werror", "-Wshadow", "-Wconversion", *extra_flags])
    srcs = [SRC, *map(Path, extra_sources)]
    h = hashlib.sha256(" ".join([cbuild.compiler(), *flags, str(executable)]).encode())
    for f in srcs + HEADERS:
        h.update(f.read_bytes())
    out_dir = cbuild.cache_dir() / f"tok-{h.hexdigest()[:16]}"
    out = out_dir / (executable or "libbertl14_tokenizer.so")
    if out.exists():
        return out
    out_dir.mkdir(parents=True, exist_ok=True)
    tmp = out.with_name(out.name + f".tmp{os.getpid()}")
    cmd = [cbuild.compiler(), *flags, *([] if executable else ["-shared"]), "-o", str(tmp), *map(str, srcs)]
    proc = subprocess.run(cmd, capture_output=True, text=True)
    if proc.returncode:
        raise RuntimeError("C build failed: " + " ".join(cmd) + "\n" + proc.stderr)
    os.replace(tmp, out)
    return out


class CTokenizer:
    """bertl14_tokenizer_run over one vocabulary section (list of uint32 words)."""

    def __init__(self, section: list[int], lib_path: Path | None = None):
        self.lib = ctypes.CDLL(str(lib_path or build()))
        self.lib.bertl14_tokenizer_run.restype = ctypes.c_int
        self.lib.bertl14_tokenizer_run.argtypes = [ctypes.c_void_p, ctypes.c_char_p, ctypes.c_void_p,
                                                   ctypes.c_void_p, ctypes.c_void_p, ctypes.c_uint32]
        self.lib.bertl14_tokenizer_validate.restype = ctypes.c_int
        self.lib.bertl14_tokenizer_validate.argtypes = [ctypes.c_void_p, ctypes.c_uint32]
        self.lib.bertl14_tokenizer_vocab_size.restype = ctypes.c_uint32
        self.lib.bertl14_tokenizer_special_id.restype = ctypes.c_int32
        self.section = (ctypes.c_uint32 * len(section))(*section)

    def run(self, text: str | bytes, max_tokens: int = 512) -> tuple[list[int], int]:
        raw = text.encode("utf-8", "surrogatepass") if isinstance(text, str) else bytes(text)
        ids = (ctypes.c_int32 * max(max_tokens, 1))()
        count = ctypes.c_uint32(0xDEAD)
        st = self.lib.bertl14_tokenizer_run(self.section, raw, ids, None, ctypes.byref(count), max_tokens)
        return list(ids[: count.value]), st

    def run_offsets(self, text: str | bytes, max_tokens: int = 512) -> tuple[list[int], list[tuple[int, int]], int]:
        """Ids, byte spans (start, end) in the UTF-8 text, status."""
        raw = text.encode("utf-8", "surrogatepass") if isinstance(text, str) else bytes(text)
        ids = (ctypes.c_int32 * max(max_tokens, 1))()
        offsets = (ctypes.c_uint16 * max(2 * max_tokens, 2))()
        count = ctypes.c_uint32(0xDEAD)
        st = self.lib.bertl14_tokenizer_run(self.section, raw, ids, offsets, ctypes.byref(count), max_tokens)
        n = count.value
        return list(ids[:n]), [(offsets[2 * i], offsets[2 * i + 1]) for i in range(n)], st

    def validate(self, size: int | None = None) -> int:
        """bertl14_tokenizer_validate on the section's `size` bytes (all of them by default)."""
        return self.lib.bertl14_tokenizer_validate(self.section, 4 * len(self.section) if size is None else size)
