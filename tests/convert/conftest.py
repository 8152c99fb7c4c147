"""Fixtures for the converter tests (helpers live in cvt_util.py, imported by name to avoid clashing with
other suites' conftest modules)."""
import sys
from pathlib import Path

sys.path.insert(0, str(Path(__file__).parent))

from cvt_util import minilm, minilm_converted, tiny  # noqa: E402,F401  (fixtures)
