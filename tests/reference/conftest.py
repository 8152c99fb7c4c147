"""Fixtures for the integer-reference tests (helpers in ref_util.py, imported by name so that this suite's
helpers do not clash with other suites' conftest modules)."""
import sys
from pathlib import Path

sys.path.insert(0, str(Path(__file__).parent))
