"""Is this repository the manifest of the west workspace that west finds from it?

West looks for a `.west` folder in the current directory and its parents. A clone inside another west
workspace (e.g. a stray /tmp/.west above a clone in /tmp) makes west use that workspace's manifest: its
commands, modules and paths, not ours, and the errors are confusing. `make test`, `make demo` (and so
.ci/run) and the build tests check this first:

    python3 scripts/west_commands/bertl14_west/workspace.py    # exit 2 with a message naming the fix

No workspace at all is fine (`make` and the tests create one with `west init -l`). Standard library only:
it runs before west is installed.
"""
from __future__ import annotations

import configparser
import sys
from pathlib import Path

REPO_ROOT = Path(__file__).resolve().parents[3]


def west_topdir(start: Path) -> Path | None:
    """The folder holding the `.west` that west finds from `start` (itself or a parent), or None."""
    for d in (start, *start.parents):
        if (d / ".west").is_dir():
            return d
    return None


def manifest_repo(topdir: Path) -> Path | None:
    """The manifest repository a workspace's .west/config names (manifest.path), or None."""
    cfg = configparser.ConfigParser()
    try:
        cfg.read(topdir / ".west" / "config")
    except configparser.Error:
        return None
    path = cfg.get("manifest", "path", fallback=None)
    return (topdir / path).resolve() if path else None


def foreign_workspace_error(repo: Path = REPO_ROOT) -> str | None:
    """A message saying what to do when west would use another repository's workspace; None when all is well."""
    repo = repo.resolve()
    top = west_topdir(repo)
    if top is None:
        return None
    manifest = manifest_repo(top)
    if manifest == repo:
        return None
    return (f"{repo} sits inside the west workspace {top} ({top / '.west'}), whose manifest is "
            f"{manifest or 'not set'}, not this repository: remove {top / '.west'} if it is a stray one, "
            f"or clone bertl14 outside {top}, then run the command again")


def main() -> int:
    msg = foreign_workspace_error()
    if msg:
        print(f"error: {msg}", file=sys.stderr)
        return 2
    return 0


if __name__ == "__main__":
    sys.exit(main())
