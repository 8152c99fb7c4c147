"""Puts tests/ on sys.path so that every suite imports the shared helpers (`testsupport`) by a unique module
name: a test must never `from conftest import ...` (with several suites in one run, `conftest` is whichever
folder's conftest was imported last)."""
import sys
from pathlib import Path

sys.path.insert(0, str(Path(__file__).resolve().parent))
