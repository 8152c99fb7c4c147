"""Helpers shared by the bertl14 west commands (build.py, flash.py): boards, Kconfig, memory summary."""
from pathlib import Path

REPO_ROOT = Path(__file__).resolve().parents[3]


class BuildError(Exception):
    """A problem the user can fix; the west command prints it as one line and exits non-zero."""
