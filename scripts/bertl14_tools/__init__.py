"""bertl14 PC-side tools: converter, integer reference, training, serial validation, benchmarks."""
from pathlib import Path

__version__ = "0.1.0"

#: The repository root (scripts/bertl14_tools/ -> repo), for tools that build the C library or firmware.
REPO_ROOT = Path(__file__).resolve().parents[2]
