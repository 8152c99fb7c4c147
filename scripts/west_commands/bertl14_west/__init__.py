"""Helpers shared by the bertl14 west commands (build.py, flash.py): boards, Kconfig, memory summary."""
import os
import subprocess
import sys
from pathlib import Path

REPO_ROOT = Path(__file__).resolve().parents[3]


class BuildError(Exception):
    """A problem the user can fix; the west command prints it as one line and exits non-zero."""


def run_command(command, work, args) -> None:
    """Run a west command's work(args) and exit with its code. Users never see a traceback: a BuildError, a
    failed tool, Ctrl-C and anything unexpected end as one line through command.die (BERTL14_DEBUG=1 raises)."""
    try:
        sys.exit(work(args))
    except BuildError as e:
        command.die(str(e))
    except subprocess.CalledProcessError as e:
        command.die(f"{Path(str(e.cmd[0])).name} failed (exit {e.returncode})")
    except KeyboardInterrupt:
        command.die("interrupted")
    except Exception as e:
        if os.environ.get("BERTL14_DEBUG"):
            raise
        command.die(f"internal error: {type(e).__name__}: {e} (BERTL14_DEBUG=1 shows the traceback)")
