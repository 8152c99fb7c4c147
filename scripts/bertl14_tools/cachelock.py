"""One builder at a time per cache folder, across processes.

The tools keep built images, exported models and compiled peers in shared cache folders (~/.cache/bertl14). Two
processes that build the same folder at once (two `bertl14` commands, or parallel test workers) would write the same
files together; `cache_lock(folder)` holds an exclusive lock on `<folder>.lock` for the duration of a build, so the
second process waits and then finds the work done. The lock is released when its holder exits, even by a crash."""
from __future__ import annotations

import contextlib
import fcntl
import os
from pathlib import Path


@contextlib.contextmanager
def cache_lock(folder: str | os.PathLike):
    """Hold the exclusive lock of `folder` (a file `<folder>.lock` beside it) inside the `with` block."""
    folder = Path(folder)
    folder.parent.mkdir(parents=True, exist_ok=True)
    with open(folder.with_name(folder.name + ".lock"), "a") as f:
        fcntl.flock(f, fcntl.LOCK_EX)
        try:
            yield
        finally:
            fcntl.flock(f, fcntl.LOCK_UN)
