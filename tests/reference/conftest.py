"""Fixtures for the integer-reference tests (helpers in ref_util.py, imported by name so that this suite's
helpers do not clash with other suites' conftest modules)."""
import os
import sys
from pathlib import Path

# small matmuls on a shared 2-core machine: BLAS threads only spin against each other (20x slower)
os.environ.setdefault("OPENBLAS_NUM_THREADS", "1")
try:  # numpy may already be loaded by another suite: limit the running pool too
    from threadpoolctl import threadpool_limits
    threadpool_limits(1)
except ImportError:
    pass

sys.path.insert(0, str(Path(__file__).parent))
