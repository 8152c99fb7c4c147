"""The command-line suites: their shared helpers (clisupport.py) on sys.path."""
import sys
from pathlib import Path

sys.path.insert(0, str(Path(__file__).resolve().parent))
