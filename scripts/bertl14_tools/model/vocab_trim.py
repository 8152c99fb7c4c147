"""Vocabulary trimming: keep the special tokens, the printable ASCII characters (so an unseen English word
falls back to characters instead of [UNK]) and every piece that a domain corpus uses under the model's own
tokenizer; drop the other rows of the word embeddings and renumber the ids (kept pieces keep their order).

The corpus tokenizes to exactly the same pieces with the trimmed vocabulary: WordPiece picks the longest
piece in the vocabulary at each position, every piece it picked is kept, and every longer candidate was
already absent from the full vocabulary.
"""
from __future__ import annotations

import copy
from dataclasses import dataclass
from typing import Callable, Iterable

import numpy as np
from tqdm import tqdm

from ..errors import UserError
from .floatmodel import FloatModel

SPECIAL_TOKENS = ("[PAD]", "[UNK]", "[CLS]", "[SEP]", "[MASK]")


@dataclass
class TrimReport:
    vocab_before: int
    vocab_after: int
    corpus_sentences: int
    kept_ids: list[int]        # old id of each new id

    def as_dict(self) -> dict:
        return {"vocab_before": self.vocab_before, "vocab_after": self.vocab_after,
                "rows_removed": self.vocab_before - self.vocab_after,
                "corpus_sentences": self.corpus_sentences}


def _ascii_chars(vocab: list[str]) -> set[int]:
    chars = {chr(c) for c in range(33, 127)}
    return {i for i, p in enumerate(vocab) if p in chars or (p.startswith("##") and p[2:] in chars)}


def trim_vocab(fm: FloatModel, corpus: Iterable[str], tokenize: Callable[[str], list[int]],
               progress: bool = True) -> tuple[FloatModel, TrimReport]:
    """`tokenize(text)` is the model's own WordPiece (ids into `fm.vocab`); returns the trimmed copy."""
    keep = {i for i, p in enumerate(fm.vocab) if p in SPECIAL_TOKENS} | _ascii_chars(fm.vocab)
    n = 0
    for text in tqdm(list(corpus), desc="vocab corpus", unit="sent", disable=not progress, leave=False):
        keep.update(tokenize(text))
        n += 1
    if n == 0:
        raise UserError("--vocab trim: the vocabulary corpus has no sentences")
    missing = [t for t in ("[UNK]", "[CLS]", "[SEP]") if t not in fm.vocab]
    if missing:
        raise UserError(f"vocab.txt lacks {', '.join(missing)}; a BERT vocabulary needs them")
    kept = sorted(i for i in keep if 0 <= i < fm.vocab_size)
    return keep_ids(fm, kept), TrimReport(fm.vocab_size, len(kept), n, kept)


def keep_ids(fm: FloatModel, kept: list[int]) -> FloatModel:
    """A copy of `fm` whose vocabulary is the listed old ids, in that order (e.g. a manifest's kept_ids)."""
    out = copy.copy(fm)
    out.vocab = [fm.vocab[i] for i in kept]
    out.word_emb = np.ascontiguousarray(fm.word_emb[np.asarray(kept, dtype=np.int64)])
    return out
