"""Fixtures of the tokenizer tests: vocabularies, their C sections, the C tokenizer and HF's tokenizer."""
from __future__ import annotations

import sys
from pathlib import Path

import pytest

sys.path.insert(0, str(Path(__file__).resolve().parent))

from vocabs import Config, build_test_vocab, minilm_vocab_path  # noqa: E402


@pytest.fixture(scope="session")
def configs(tmp_path_factory) -> list[Config]:
    out = []
    p = minilm_vocab_path()
    if p is not None:
        out.append(Config("minilm-uncased", p, lowercase=True))
    d = tmp_path_factory.mktemp("vocab")
    cased = d / "cased.txt"
    cased.write_text("\n".join(build_test_vocab(False)) + "\n", encoding="utf-8")
    out.append(Config("own-cased", cased, lowercase=False))
    lower = d / "lower.txt"
    lower.write_text("\n".join(build_test_vocab(True, seed=777)) + "\n", encoding="utf-8")
    out.append(Config("own-lower-keep-accents-no-cjk", lower, lowercase=True, strip_accents=False, chinese=False))
    return out
