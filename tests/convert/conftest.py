"""Fixtures for the converter tests (helpers live in cvt_util.py, imported by name to avoid clashing with
other suites' conftest modules)."""
import os
import sys
from pathlib import Path

os.environ.setdefault("OPENBLAS_NUM_THREADS", "1")  # small matmuls: threads only contend (see bertl14_tools)

sys.path.insert(0, str(Path(__file__).parent))

from cvt_util import minilm, minilm_converted, tiny  # noqa: E402,F401  (fixtures)
