"""Slot tagging: BIO tags over the model's tokens, from the slot spans of `bertl14 dataset` rows to training
targets, and from a tagger's per-token answers back to spans of the input text.

A tag set is ["O", "B-<slot>", "I-<slot>", ...] with Home Assistant's slot names, sorted. A token belongs to a
span when its first character lies inside it; the first such token is B-, the others I- (WordPiece
continuations included). Decoding is the device's rule (the same in C, bertl14/slots/bertl14_slot_decode.c): a
span opens at B-x, or at I-x that does not continue an x span, and grows over the following I-x tokens (and over a
B-x right after it: nothing, a space or a hyphen between); it covers the input from its first token's start to
its last token's end (slot_values_of settles its edges: clause punctuation off, a wildcard's widened to whole
words, a number's or duration's over the number words that follow it when that still reads as a value,
slot_values.number_extent, or with an article taken in or dropped when it reads as nothing). [CLS], [SEP] and tokens that cover no input are never in a
span.
"""
from __future__ import annotations

IGNORE = -100     # the loss skips [CLS], [SEP] and padding
MAX_VALUES = 8    # slot values an answer carries, the first ones of the sentence (app/src/intent.h INTENT_MAX_VALUES)


def tag_names(slots) -> list[str]:
    """The BIO tag set of these slot names."""
    names = ["O"]
    for slot in sorted(set(slots)):
        names += [f"B-{slot}", f"I-{slot}"]
    return names


def token_tags(offsets, spans, tag_index: dict[str, int]) -> list[int]:
    """Training target of one sentence: a tag id per token (IGNORE for tokens that cover no text).
    `offsets`: (start, end) of each token in the text, (0, 0) for special tokens; `spans`: [start, end, slot]."""
    out = []
    opened = set()
    for start, end in offsets:
        if end <= start:
            out.append(IGNORE)
            continue
        tag = 0
        for i, (a, b, slot) in enumerate(spans):
            key = f"B-{slot}"
            if a <= start < b and key in tag_index:
                tag = tag_index[f"I-{slot}"] if i in opened else tag_index[key]
                opened.add(i)
                break
        out.append(tag)
    return out


def _joins(text, end: int, start: int) -> bool:
    """Nothing, one space or one hyphen between a span's end and the next token: "seventy-seven", "oat milk"."""
    gap = text[end:start]
    return len(gap) == 0 or (start == end + 1 and gap in (" ", "-", b" ", b"-"))


def decode(tags, offsets, names: list[str], text=None, settle=None) -> list[tuple[str, int, int]]:
    """(slot, start, end) spans of one sentence from its per-token tag ids (the device's rule, module doc). With
    the `text` the offsets index, a B-x right after an x span (_joins) continues it: the tagger sometimes opens a
    number or a name again at its second word ("seventy" B-hours, "seven" B-hours). With `settle` (slot_values_of's
    rule, bertl14_slots_extract's): each span is settled when it ends (`settle(span)` sets its [slot, start, end]
    edges and gives where its text ends), a token whose start that text covers opens no span, and a token outside
    `text` is no span's."""
    spans: list[list] = []
    current = None
    consumed = 0      # the end of the text the settled spans read

    def close():
        nonlocal consumed
        if current is not None and settle is not None:
            consumed = max(consumed, settle(current))

    for tag, (start, end) in zip(tags, offsets):
        name = names[tag] if 0 <= tag < len(names) else "O"
        if end <= start or name == "O" or (settle is not None and end > len(text)):
            close()
            current = None
            continue
        kind, slot = name[0], name[2:]
        if current is not None and current[0] == slot and (
                kind == "I" or (text is not None and _joins(text, current[2], start))):
            current[2] = end
            continue
        close()
        current = None
        if start < consumed:
            continue
        current = [slot, start, end]
        spans.append(current)
    close()
    return [tuple(s) for s in spans]


def _word_char(c) -> bool:
    """An ASCII letter or digit (a character of str, or a byte)."""
    c = c if isinstance(c, int) else ord(c)
    return c < 0x80 and (0x30 <= c <= 0x39 or 0x41 <= c <= 0x5A or 0x61 <= c <= 0x7A)


def whole_words(text, start: int, end: int) -> tuple[int, int]:
    """A wildcard's span widened to whole words (the device's rule, bertl14_slots_extract): a span that starts or
    ends inside a word of ASCII letters and digits grows to its edges, so a tag on a word piece ("ice" -> "i" "##ce")
    gives the word; a hyphen between two letters or digits is inside a word ("lo-fi", "t-shirt"). Numbers and list
    words are read as tagged: "10 min" of a typed "10 minuets" still says 10."""
    def hyphen(i) -> bool:
        return text[i] in ("-", 0x2D)
    while True:
        if 0 < start < len(text) and _word_char(text[start - 1]) and _word_char(text[start]):
            start -= 1
        elif 1 < start < len(text) and hyphen(start - 1) and _word_char(text[start - 2]) and _word_char(text[start]):
            start -= 2
        else:
            break
    while True:
        if 0 < end < len(text) and _word_char(text[end - 1]) and _word_char(text[end]):
            end += 1
        elif 0 < end and end + 1 < len(text) and hyphen(end) and _word_char(text[end - 1]) and \
                _word_char(text[end + 1]):
            end += 2
        else:
            break
    return start, end


PLACEHOLDER_TEXTS = ("[NAME]", "[AREA]", "[FLOOR]")     # the registry answers these, not the tagger


# Punctuation that closes a typed clause, never part of a value: "set the heat to 21." reads 21.
_CLAUSE_PUNCT = tuple(".,!?;:") + ("\u3002", "\uff0c", "\uff01", "\uff1f", "\uff1b", "\uff1a", "\u3001")
_CLAUSE_PUNCT_BYTES = tuple(p.encode("utf-8") for p in _CLAUSE_PUNCT)


def trim_punctuation(text, start: int, end: int) -> tuple[int, int]:
    """A span without the clause punctuation at its edges (bertl14_slots_extract's rule): ".,!?;:" and the
    full-width 。，！？；：、 ("21." -> "21", "oat milk," -> "oat milk"). `text` str or bytes; may give start == end."""
    marks = _CLAUSE_PUNCT_BYTES if isinstance(text, (bytes, bytearray)) else _CLAUSE_PUNCT
    changed = True
    while changed and start < end:
        changed = False
        for m in marks:
            if end - start >= len(m) and text[end - len(m):end] == m:
                end -= len(m)
                changed = True
                break
            if end - start >= len(m) and text[start:start + len(m)] == m:
                start += len(m)
                changed = True
                break
    return start, end


def _article_at(text, start: int, end: int) -> int:
    """The length of an "a " / "an " (any case) at text[start:end], 0 if none."""
    for art in ("a ", "an "):
        n = len(art)
        piece = text[start:start + n]
        piece = piece.decode("latin-1") if isinstance(piece, (bytes, bytearray)) else piece
        if end - start > n and piece.lower() == art:
            return n
    return 0


def article_before(text, start: int) -> int:
    """Where a span starts when the word "a" or "an" (any case, a word of its own) right before it is taken in:
    "a minute" of a span tagged on "minute"; `start` itself when there is none."""
    for n in (2, 3):     # "a " and "an "
        s = start - n
        if s >= 0 and _article_at(text, s, start + 1) == n and (s == 0 or not _word_char(text[s - 1])):
            return s
    return start


# Chinese numerals and the unit characters that follow or lead them in a value ("二十" + "三", "两个" + "小时").
_ZH_NUMBER_CHARS = "零〇一二两三四五六七八九十百千万点半个小时分钟秒度"
_ZH_NUMBER_BYTES = tuple(c.encode("utf-8") for c in _ZH_NUMBER_CHARS)


def _zh_char_at(text, i: int, before: bool) -> int:
    """The length of a _ZH_NUMBER_CHARS character ending at (before) or starting at text[i], 0 if none."""
    marks = _ZH_NUMBER_BYTES if isinstance(text, (bytes, bytearray)) else tuple(_ZH_NUMBER_CHARS)
    for m in marks:
        n = len(m)
        piece = text[i - n:i] if before else text[i:i + n]
        if (i - n >= 0 if before else i + n <= len(text)) and piece == m:
            return n
    return 0


def zh_number_extent(text, end: int) -> int:
    """Where a span ending at `end` ends when it takes in the Chinese numerals and units right after it
    ("二十" of "二十三", "二十五" of "二十五度半"); bertl14_slots_extract's rule."""
    while end < len(text) and (n := _zh_char_at(text, end, False)):
        end += n
    return end


def zh_number_start(text, start: int, reads) -> int:
    """Where a span starting at `start` starts when it takes in the Chinese numerals and units right before it
    ("两个" + "小时"): the farthest such start from which `reads(new_start)` (the longer span reads as a value),
    trying the nearer ones when it does not ("设置一个" + "两小时" reads from "两"); `start` if none does."""
    starts, s = [], start
    while s > 0 and (n := _zh_char_at(text, s, True)):
        s -= n
        starts.append(s)
    return next((s for s in reversed(starts) if reads(s)), start)


def slot_values_of(text: str | bytes, tags, offsets, names: list[str], spec) -> dict:
    """The slot values of a tagged sentence, as bertl14_slots_extract() gives them: each decoded span (the rule of
    decode) without clause punctuation at its edges (trim_punctuation), skipping registry placeholders, through
    slot_values.slot_values with the model's value table `spec` (slots.json or its words); the first span that
    gives a slot its value wins. A number's, duration's or list's span grows over the number words (or Chinese
    numerals and units) that follow when the longer span still reads as a value, and a token that growth covered opens no span of its own ("an hour" grown
    to "an hour and a half": "half" tagged seconds is not read again); a span that still reads as nothing takes the
    article right before it ("a minute") or the Chinese numerals before it ("两个" + "小时"), or drops the article
    it starts with ("a 3 minute"), when that reads as a value; a duration's takes the Chinese numerals and units
    before it when the whole still reads as a duration ("一个" + "半小时": hours=1 minutes=30). `offsets` index `text`: characters of a str, bytes of UTF-8 bytes (the device's unit)."""
    from ..model.slot_values import build_value_table, slot_values
    out: dict = {}
    placeholders = PLACEHOLDER_TEXTS if isinstance(text, str) else tuple(p.encode() for p in PLACEHOLDER_TEXTS)
    words = build_value_table(spec) if isinstance(spec, dict) else spec     # built once, not once a span
    for slot, start, end in decode(tags, offsets, names, text, settle=lambda span: _settle(text, span, words)):
        piece = text[start:end]
        if start >= end or piece in placeholders:
            continue
        for key, value in slot_values(words, slot, piece).items():
            out.setdefault(key, value)
    return out


def _settle(text, span: list, words) -> int:
    """Settle a decoded [slot, start, end] span's edges in place (slot_values_of's rules); gives where its text
    ends."""
    from ..model.slot_values import TYPE_DURATION, TYPE_LIST, TYPE_NUMBER, TYPE_WILDCARD, number_extent, slot_type, slot_values
    slot, start, end = span
    start, end = trim_punctuation(text, start, end)
    kind = slot_type(words, slot)
    if kind == TYPE_WILDCARD:
        start, end = whole_words(text, start, end)
    elif kind in (TYPE_NUMBER, TYPE_DURATION, TYPE_LIST) and start < end:   # "one hundred" + "and twenty"
        whole = number_extent(text, end)                          # the longer span when it reads as a value
        if whole == end:
            whole = zh_number_extent(text, end)                   # "二十" + "三"
        if whole != end and slot_values(words, slot, text[start:whole]):
            end = whole
        reads = lambda s: bool(slot_values(words, slot, text[s:end]))
        if not reads(start):
            article = article_before(text, start)                 # "a" + "minute"
            before = ((article if reads(article) else start) if article != start
                      else zh_number_start(text, start, reads))   # "两个" + "小时" (read there already)
            skip = _article_at(text, start, end)                  # "a 3 minute" -> "3 minute"
            if before != start:
                start = before
            elif skip and reads(start + skip):
                start += skip
        elif kind == TYPE_DURATION:
            start = zh_number_start(text, start, reads)           # "一个" + "半小时": the whole duration
    span[1], span[2] = start, end
    return end


NAME_SLOTS = ("name", "area", "floor")     # the registry's (or the tagger's words for them): never refitted


def intent_slots(rows: list[dict], spec: dict | None = None) -> dict[str, list[str]]:
    """intent -> the slots its training sentences tag (the dataset's spans), each as the slot its value is
    answered as (a value table slot's "report": volume_step_down answers volume_step): intent_slots.json."""
    answered = {k: v.get("report", k) for k, v in ((spec or {}).get("slots") or {}).items()}
    out: dict[str, set] = {}
    for r in rows:
        out.setdefault(r["intent"], set()).update(answered.get(slot, slot) for _, _, slot in r.get("spans", []))
    return {intent: sorted(slots) for intent, slots in sorted(out.items())}


START = "start_"  # the prefix of the slots that name a running timer by its length (start_minutes)


def fit_to_intent(values: dict, slots: list[str] | None, number_slots: dict) -> dict:
    """The values an answer of an intent carries (the device's rule, app/src/intent.c): a value whose slot the
    intent takes (`slots`, its intent_slots.json entry) or a name is kept; a number under a slot the intent does
    not take moves to the number slot the intent takes and the sentence left empty, when there is one; when there
    are several, to the one of them whose range is the tagged slot's (`number_slots`: the value table's slots that
    take a number -> their (lowest, highest), slot_values.slot_number_bounds): "turn the [NAME] to 40 percent" tagged
    volume_level (0..100), answered HassLightSet (brightness 0..100, colour temperature 0..10000): brightness=40.
    A timer's duration and the duration a timer was started with are one value under two names: `minutes` under
    an intent that takes `start_minutes` but not `minutes` moves there when the sentence left it empty, and back
    ("cancel the 45 minute timer" tagged minutes=45, answered HassCancelTimer: start_minutes=45).
    Anything else is dropped. `slots` None (no table for the intent): unchanged."""
    if slots is None:
        return values
    out: dict = {}
    for key, value in values.items():
        twin = key[len(START):] if key.startswith(START) else START + key
        if key in NAME_SLOTS or key in slots:
            out.setdefault(key, value)
        elif twin in slots:
            if twin not in values and twin not in out:
                out[twin] = value
        elif isinstance(value, (int, float)) and not isinstance(value, bool):
            free = [s for s in slots if s in number_slots and s not in values and s not in out]
            if len(free) > 1 and key in number_slots:
                free = [s for s in free if number_slots[s] == number_slots[key]]
            if len(free) == 1:
                out[free[0]] = value
    return out


class ValueReader:
    """A model's slot values as the firmware reads them (app/src/intent.c): its value table (convert's slots.json),
    its intents' slots (intent_slots.json) and its tag names, loaded once from the model folder. `read` gives the
    first MAX_VALUES values of a tagged text (bertl14_slots_extract), `fit` those an answer's intent carries
    (fit_values). The host's predict/eval (infer.Answerer) and validate's reference (serial.Reference) share it."""

    def __init__(self, model_path, tag_names: list[str]):
        from ..model.convert import model_intent_slots, model_slot_spec
        from ..model.slot_values import build_value_table, slot_number_bounds
        self.spec = model_slot_spec(model_path)
        self.table = build_value_table(self.spec)
        self.intent_slots = model_intent_slots(model_path)
        self.number_slots = {s: b for s in self.spec["slots"] if (b := slot_number_bounds(self.table, s)) is not None}
        self.tag_names = tag_names

    def read(self, text: bytes, tags, offsets) -> dict:
        values = slot_values_of(text, tags, offsets, self.tag_names, self.table)
        return dict(list(values.items())[:MAX_VALUES])

    def fit(self, values: dict, label: str) -> dict:
        if self.intent_slots is None:
            return values
        return fit_to_intent(values, self.intent_slots.get(label, []), self.number_slots)
