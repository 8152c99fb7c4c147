"""bertl14 PC-side tools: converter, integer reference, training, serial validation, benchmarks."""
import os
from pathlib import Path

# Our matrices are small (tokens x hidden): OpenBLAS threads only contend with each other on a busy machine
# (measured 20x slower at load 6 on 2 cores). Set before numpy is first imported; an explicit setting wins.
os.environ.setdefault("OPENBLAS_NUM_THREADS", "1")

__version__ = "0.1.0"

#: The repository root (scripts/bertl14_tools/ -> repo), for tools that build the C library or firmware.
REPO_ROOT = Path(__file__).resolve().parents[2]
