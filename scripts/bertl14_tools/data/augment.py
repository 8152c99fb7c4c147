"""Augmented training sentences for distillation (`bertl14 train --teacher T --augment K`).

A model trained from scratch on template expansions has never seen a synonym. A pretrained teacher has: variants
of the training sentences that no template writes, labelled by the teacher (its logits, not the source row's
intent, since a changed word may change the meaning), carry that knowledge into the student. Each variant applies
one to three of these edits to a training sentence, TinyBERT-style:

- a word replaced by one of its nearest neighbours in the teacher's own word-piece embeddings (cosine; whole
  words only), so "switch" may become "flip" or "toggle";
- a filler inserted or dropped: politeness, hesitation and request frames people put around a command;
- a number written another way: digits as words and words as digits ("5" <-> "five"), "percent" <-> "%";
- a typo a person makes: two neighbouring letters swapped, or one letter dropped.

Without a teacher (`bertl14 train --augment K` alone) a variant keeps its sentence's label, so only the edits that
keep a meaning are made: fillers, number forms, typos, and a clause about the situation put before or after the
command ("we've got people coming over", "孩子睡了"), which people add and no template writes. Out-of-domain
sentences get the same edits and stay `none`, so an edit alone never makes a command.

With `bertl14 train --augment-slots` a variant keeps the slot spans of its sentence where the edits left their text
whole (`carry_spans`: a filler or a clause moves a span, a typo or a number form inside it drops the variant's tags),
so the slot tagger learns from the variants too; otherwise the variants train the intent head only. Deterministic
for a seed.
"""
from __future__ import annotations

import random
import re
from pathlib import Path

# hesitations, politeness and request frames (hand-written, English and Chinese)
PREFIXES = {
    "en": ["please", "hey", "um", "uh", "ok", "okay", "so", "could you", "can you", "would you", "will you",
           "i want to", "i'd like to", "go ahead and", "just", "quickly", "hey can you", "could you please",
           "please can you", "i need you to", "do me a favour and", "mind if you", "yo", "alright"],
    "zh-CN": ["请", "麻烦", "帮我", "给我", "那个", "嗯", "你", "请帮我", "麻烦你", "能不能", "可以帮我", "快",
              "我要", "我想", "帮忙", "劳驾", "喂"],
}
SUFFIXES = {
    "en": ["please", "now", "thanks", "thank you", "for me", "right now", "if you can", "asap", "pls", "quickly",
           "when you get a chance", "ok", "would you", "cheers"],
    "zh-CN": ["吧", "一下", "谢谢", "好吗", "呗", "啊", "呀", "好不好", "行吗", "马上", "现在"],
}
# clauses about the situation that people put around a command, neutral as to which command (hand-written)
CLAUSES = {
    "en": ["we've got people coming over", "i'm heading out", "i'm going to bed", "just got home", "the kids are asleep",
           "before i forget", "while you're at it", "if that's ok", "i'm in the kitchen", "one more thing",
           "i'm back", "it's been a long day", "quick one", "i'm on the phone", "guests are here", "sorry",
           "my hands are full", "i'm cooking", "the baby just fell asleep", "we're leaving soon", "thanks a lot",
           "i'm working from home today", "i'm about to shower", "dinner's nearly ready", "no rush",
           "i'm watching tv", "it's late", "mum's visiting", "the dog's asleep", "i can't find my phone"],
    "zh-CN": ["客人快到了", "我要出门了", "我要睡了", "刚到家", "孩子睡了", "别忘了", "顺便", "可以的话", "我在厨房",
              "还有", "我回来了", "今天好累", "快点", "我在打电话", "客人到了", "不好意思", "我手上拿着东西",
              "我在做饭", "宝宝刚睡着", "我们马上走", "谢谢啦", "今天在家办公", "我要洗澡了", "饭快好了", "不急",
              "我在看电视", "太晚了", "妈妈来了", "狗睡了", "我找不到手机"],
}
EN_NUMBERS = ["zero", "one", "two", "three", "four", "five", "six", "seven", "eight", "nine", "ten", "eleven",
              "twelve", "thirteen", "fourteen", "fifteen", "sixteen", "seventeen", "eighteen", "nineteen"]
EN_TENS = ["", "", "twenty", "thirty", "forty", "fifty", "sixty", "seventy", "eighty", "ninety"]
ZH_DIGITS = "零一二三四五六七八九"


def carry_spans(text: str, spans: list, variant: str) -> list | None:
    """The slot spans ([start, end, slot]) of `text` moved to where their text is in `variant`, an edit of it; None
    when an edit touched the inside or the edge of a span (the variant then trains no slot tag)."""
    if not spans:
        return []
    from difflib import SequenceMatcher
    blocks = SequenceMatcher(None, text, variant, autojunk=False).get_matching_blocks()
    out = []
    for start, end, slot in spans:
        block = next((b for b in blocks if b.a <= start and end <= b.a + b.size), None)
        if block is None:
            return None
        moved = block.b - block.a
        out.append([start + moved, end + moved, slot])
    return out


def en_number_words(n: int) -> str:
    """0..100 in English words ("twenty one" or "twenty-one", both as people write them)."""
    if n < 20:
        return EN_NUMBERS[n]
    if n == 100:
        return "a hundred"
    tens, ones = divmod(n, 10)
    return EN_TENS[tens] + ("" if ones == 0 else "-" + EN_NUMBERS[ones])


def zh_number_words(n: int) -> str:
    """0..99 in Chinese numerals (十五, 二十一)."""
    if n < 10:
        return ZH_DIGITS[n]
    tens, ones = divmod(n, 10)
    return ("" if tens == 1 else ZH_DIGITS[tens]) + "十" + ("" if ones == 0 else ZH_DIGITS[ones])


WORD = re.compile(r"[a-z]+(?:'[a-z]+)?")


class NeighbourTable:
    """word -> up to `k` other whole words of a teacher's vocabulary whose input embeddings are nearest to it (cosine
    >= `min_cosine`), for the ASCII words the teacher has as one piece; [] for the others. Forms of the same word (the
    first three letters alike: "turned" of "turn") are left out: they teach little a typo does not.

    A word's neighbours are computed the first time it is asked, one word at a time: a variant's edits bring in words
    its sentence did not have ("hey can you", a typo), and a product over a batch of words may round differently
    from one over another batch, so a table built for the words of one data folder would make a sentence's variants
    depend on the other sentences of the folder."""

    def __init__(self, embedding_file: Path, vocab_file: Path, k: int = 8, min_cosine: float = 0.3):
        import numpy as np
        from safetensors.numpy import load_file
        tables = load_file(str(embedding_file))
        key = next(k_ for k_ in tables if k_.endswith("embeddings.word_embeddings.weight"))
        self.table = tables[key].astype(np.float32)
        self.vocab = vocab_file.read_text(encoding="utf-8").splitlines()
        self.candidates = [i for i, p in enumerate(self.vocab) if len(p) >= 2 and WORD.fullmatch(p)]
        self.index = {self.vocab[i]: i for i in self.candidates}
        cand = self.table[self.candidates]
        self.cand = cand / (np.linalg.norm(cand, axis=1, keepdims=True) + 1e-9)
        self.k, self.min_cosine = k, min_cosine
        self.known: dict[str, list[str]] = {}

    def get(self, word: str) -> list[str]:
        """The neighbours of `word` ([] when the teacher has none for it)."""
        if word not in self.known:
            self.known[word] = self._nearest(word) if word in self.index else []
        return self.known[word]

    def _nearest(self, word: str) -> list[str]:
        import numpy as np
        q = self.table[self.index[word]]
        sims = self.cand @ (q / (np.linalg.norm(q) + 1e-9))
        best = np.argsort(-sims, kind="stable")[:4 * self.k]
        return [self.vocab[self.candidates[j]] for j in best
                if self.vocab[self.candidates[j]][:3] != word[:3] and sims[j] >= self.min_cosine][:self.k]


def nearest_neighbours(embedding_file: Path, vocab_file: Path, words: set[str], k: int = 8,
                       min_cosine: float = 0.3) -> dict[str, list[str]]:
    """word -> its neighbours (NeighbourTable), for the words of `words` that have any."""
    table = NeighbourTable(embedding_file, vocab_file, k, min_cosine)
    return {w: n for w in sorted(words) if (n := table.get(w))}


class Augmenter:
    """Variants of sentences in one language (module doc); `neighbours` (English): a NeighbourTable, or a dict of
    word -> replacement words."""

    def __init__(self, lang: str, neighbours: NeighbourTable | dict[str, list[str]] | None = None, seed: int = 0,
                 keep_label: bool = False):
        self.lang = "zh-CN" if lang.startswith("zh") else "en"
        self.neighbours = neighbours or {}
        self.seed = seed
        self.rng = random.Random(seed)
        # a teacher labels the variants, or (`keep_label`) they keep their sentence's label, and then only the edits
        # that keep a meaning are made
        self.edits = ((self.filler, self.clause, self.number, self.typo) if keep_label
                      else (self.replace_word, self.replace_word, self.filler, self.number, self.typo))

    def variant_of(self, text: str, k: int) -> str:
        """Variant number `k` of `text`: the same for the same seed, k and text, whatever was asked before (a data
        folder that gains or loses sentences keeps the others' variants)."""
        self.rng.seed(f"{self.seed}\0{k}\0{text}")
        return self.variant(text)

    def variant(self, text: str) -> str:
        """One variant of `text` (1-3 edits); the text itself when no edit applies."""
        out = text
        for _ in range(self.rng.choice((1, 1, 2, 2, 3))):
            out = self.rng.choice(self.edits)(out)
        return out

    @staticmethod
    def _words(text: str):
        """The words of `text` outside registry placeholders ("[name]" stays as the device writes it)."""
        return [m for m in WORD.finditer(text.lower()) if not (m.start() > 0 and text[m.start() - 1] == "[")]

    def replace_word(self, text: str) -> str:
        spots = [m for m in self._words(text) if self.neighbours.get(m.group())]
        if not spots:
            return self.filler(text)
        m = self.rng.choice(spots)
        return text[:m.start()] + self.rng.choice(self.neighbours.get(m.group())) + text[m.end():]

    def filler(self, text: str) -> str:
        zh = self.lang == "zh-CN"
        sep = "" if zh else " "
        choice = self.rng.random()
        if choice < 0.4:
            return self.rng.choice(PREFIXES[self.lang]) + sep + text
        if choice < 0.8:
            return text.rstrip(" .!?。！？") + sep + self.rng.choice(SUFFIXES[self.lang])
        for filler in sorted(PREFIXES[self.lang] + SUFFIXES[self.lang], key=len, reverse=True):   # drop one
            if zh and filler in text and len(text) > len(filler) + 1:
                return text.replace(filler, "", 1)
            if not zh and re.search(rf"\b{re.escape(filler)}\b", text) and len(text.split()) > len(filler.split()) + 1:
                return re.sub(rf"\s*\b{re.escape(filler)}\b", "", text, count=1).strip()
        return text

    def clause(self, text: str) -> str:
        """A clause about the situation before or after the command, set off as people type it."""
        zh = self.lang == "zh-CN"
        said = self.rng.choice(CLAUSES[self.lang])
        core = text.rstrip(" .!?。！？")
        if self.rng.random() < 0.3:
            return said + ("，" if zh else ", ") + text
        return core + ("，" if zh else self.rng.choice((", ", " ", " - "))) + said

    def number(self, text: str) -> str:
        digits = list(re.finditer(r"\d+", text))
        if digits:
            m = self.rng.choice(digits)
            n = int(m.group())
            if n <= (100 if self.lang == "en" else 99):
                words = en_number_words(n) if self.lang == "en" else zh_number_words(n)
                return text[:m.start()] + words + text[m.end():]
        if self.lang == "en":
            for word in sorted(EN_NUMBERS, key=len, reverse=True):
                m = re.search(rf"\b{word}\b", text)
                if m:
                    return text[:m.start()] + str(EN_NUMBERS.index(word)) + text[m.end():]
            if " percent" in text:
                return text.replace(" percent", self.rng.choice(("%", " per cent", " pct")), 1)
            return text.replace("%", " percent", 1)
        return text

    def typo(self, text: str) -> str:
        if self.lang != "en":
            return self.filler(text)
        words = [m for m in self._words(text) if len(m.group()) >= 4]
        if not words:
            return text
        m = self.rng.choice(words)
        w = text[m.start():m.end()]
        swaps = [i for i in range(1, len(w) - 1) if w[i] != w[i + 1]]    # first letters stay, as people's do
        if swaps and self.rng.random() < 0.5:
            i = self.rng.choice(swaps)
            new = w[:i] + w[i + 1] + w[i] + w[i + 2:]
        else:
            i = self.rng.randrange(1, len(w))
            new = w[:i] + w[i + 1:]
        return text[:m.start()] + new + text[m.end():]
