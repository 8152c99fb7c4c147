"""Slot VALUES: a tagged span ("twenty-one", "一个半小时", "红色") turned into Home Assistant's slot values.

    default_spec(lang) -> spec                the slots Home Assistant's intents use, with en + zh-CN lists
    build_value_table(spec) -> list[int]      the uint32 words of a value table (docs/slots.md)
    render_c(words, name) -> str              the table as a C array in flash
    slot_values(spec_or_table, slot, span) -> {"hours": 1, "minutes": 30} | {"temperature": 21.5} | {"color": "red"}
    slot_values_raw(words, slot, span, max_out) -> (status, [SlotValue])   bertl14_slot_values(), bit for bit
    parse_number(text) -> tenths | None       bertl14_slot_parse_number()
    validate_table(words) -> status           bertl14_slot_table_validate()
    build_library(sanitize, extra_flags)      the C module as a host shared library (tests, ctypes)

The reader below is the Python twin of bertl14/slots/bertl14_slot_values.c: the same lexer, the same parser
functions in the same order, the same limits. Change both together; tests/slots compares them on a large corpus.
"""
from __future__ import annotations

import functools
import re
from dataclasses import dataclass
from pathlib import Path

from .. import REPO_ROOT
from ..errors import UserError

# ---- format constants (mirrored in bertl14/slots/bertl14_slot_values.c) ----------------------------------------------
MAGIC = 0x564C5342  # bytes "BSLV" in little-endian memory
VERSION = 1
(HDR_MAGIC, HDR_VERSION, HDR_WORDS, HDR_TOTAL_WORDS, HDR_FLAGS, HDR_N_SLOTS, HDR_SLOTS, HDR_POOL, HDR_POOL_BYTES,
 HDR_CHECKSUM, HEADER_WORDS) = range(11)
S_NAME, S_INFO, S_MIN, S_MAX, S_AUX, S_COUNT, SLOT_WORDS = range(7)
INFO_TYPE, INFO_HALVES, INFO_NUMBER, INFO_NEGATE, INFO_UNIT_SHIFT, INFO_NAME_LEN_SHIFT = 0xF, 0x10, 0x20, 0x40, 8, 16
NO_SLOT, MAX_SLOTS, POOL_OFF_MASK = 0x3FF, 1023, 0xFFFFFF
VALUE_CAP = 1_000_000
LANGS = {"en": 0, "zh-CN": 1}

TYPE_NUMBER, TYPE_DURATION, TYPE_LIST, TYPE_WILDCARD = 1, 2, 3, 4
TYPES = {"number": TYPE_NUMBER, "duration": TYPE_DURATION, "list": TYPE_LIST, "wildcard": TYPE_WILDCARD}
KIND_INT, KIND_HALF, KIND_TEXT = 1, 2, 3
UNIT_HOURS, UNIT_MINUTES, UNIT_SECONDS, UNIT_NONE = 0, 1, 2, 3
UNIT_NAMES = ("hours", "minutes", "seconds")

TEXT_MAX = 64        # BERTL14_SLOT_TEXT_MAX
VALUES_MAX = 3       # BERTL14_SLOT_VALUES_MAX
MAX_TOKENS = 32
MAX_ITEMS = 3
NORM_MAX = 255
WORD_MAX = 12
NAME_MAX = 63        # slot names (the builder's limit)
ENTRY_MAX = 255      # list "text in" (normalised) and "value out", bytes

# status codes (bertl14.h)
OK, ERR_INVALID_CONFIG, ERR_BUFFER_TOO_SMALL, ERR_NULL_POINTER, ERR_INVALID_UTF8 = 0, -1, -2, -5, -6

# ---- lexicons ------------------------------------------------------------------------------------------------------
(T_END, T_DIGITS, T_SMALL, T_TENS, T_HUNDRED, T_THOUSAND, T_A, T_AND, T_HALF, T_POINT, T_UNIT, T_FILLER,
 T_ZH_DIGIT, T_ZH_MULT, T_ZH_POINT, T_ZH_HALF, T_COMMA) = range(17)
ZH_LIANG = 16

EN_WORDS: dict[str, tuple[int, int]] = {}
for _v, _w in enumerate("zero one two three four five six seven eight nine ten eleven twelve thirteen fourteen "
                        "fifteen sixteen seventeen eighteen nineteen".split()):
    EN_WORDS[_w] = (T_SMALL, _v)
for _v, _w in enumerate("twenty thirty forty fifty sixty seventy eighty ninety".split(), start=2):
    EN_WORDS[_w] = (T_TENS, _v)
EN_WORDS.update({"hundred": (T_HUNDRED, 0), "thousand": (T_THOUSAND, 0), "a": (T_A, 0), "an": (T_A, 0),
                 "and": (T_AND, 0), "half": (T_HALF, 0), "point": (T_POINT, 0)})
# the letters typed glued to a number count too: "1h 30m", "90s" (a duration slot reads no other unit)
for _u, _ws in ((UNIT_HOURS, "hour hours hr hrs h"), (UNIT_MINUTES, "minute minutes min mins m"),
                (UNIT_SECONDS, "second seconds sec secs s")):
    EN_WORDS.update({_w: (T_UNIT, _u) for _w in _ws.split()})
EN_WORDS.update({_w: (T_FILLER, 0) for _w in "percent degree degrees celsius fahrenheit c f".split()})
# the unit words that alone mean one of their unit ("the hour timer", "hour and a half"); "second" alone is mostly an
# ordinal ("the second timer"): their tokens carry num=1, as bare_unit_one() in C
BARE_UNITS_ONE = frozenset({"hour", "minute"})

ZH_WORDS: dict[str, tuple[int, int]] = {"零": (T_ZH_DIGIT, 0), "〇": (T_ZH_DIGIT, 0), "两": (T_ZH_DIGIT, 2 | ZH_LIANG)}
ZH_WORDS.update({_c: (T_ZH_DIGIT, _v) for _v, _c in enumerate("一二三四五六七八九", start=1)})
ZH_WORDS.update({"十": (T_ZH_MULT, 1), "百": (T_ZH_MULT, 2), "千": (T_ZH_MULT, 3), "万": (T_ZH_MULT, 4),
                 "点": (T_ZH_POINT, 0), "半": (T_ZH_HALF, 0), "和": (T_AND, 0)})
ZH_WORDS.update({_w: (T_FILLER, 0) for _w in ("个", "度", "钟", "百分之", "摄氏", "华氏")})
ZH_WORDS.update({"小时": (T_UNIT, UNIT_HOURS), "钟头": (T_UNIT, UNIT_HOURS), "分钟": (T_UNIT, UNIT_MINUTES),
                 "分": (T_UNIT, UNIT_MINUTES), "秒": (T_UNIT, UNIT_SECONDS), "秒钟": (T_UNIT, UNIT_SECONDS)})
ZH_MULT_VALUE = (1, 10, 100, 1000, 10000)
FILLER_SIGNS = {ord("%"), 0xB0, 0x2103, 0x2109}   # % ° ℃ ℉


# ---- characters ----------------------------------------------------------------------------------------------------
def fold(cp: int) -> int:
    """Full-width forms U+FF01-FF5E as ASCII, then ASCII upper case as lower case (nothing else is folded)."""
    if 0xFF01 <= cp <= 0xFF5E:
        cp -= 0xFEE0
    if 0x41 <= cp <= 0x5A:
        cp += 0x20
    return cp


def is_space(cp: int) -> bool:
    return cp == 0x20 or 0x09 <= cp <= 0x0D or cp == 0xA0 or cp == 0x3000


def _is_digit(cp: int) -> bool:
    return 0x30 <= cp <= 0x39


def _is_letter(cp: int) -> bool:
    return 0x61 <= cp <= 0x7A


def _decode(span) -> str | None:
    """The span as text; None if it is not strict UTF-8 (the C module's rule)."""
    if isinstance(span, str):
        span = span.encode("utf-8", "surrogatepass")
    try:
        return bytes(span).decode("utf-8")
    except UnicodeDecodeError:
        return None


# ---- lexer ---------------------------------------------------------------------------------------------------------
@dataclass
class _Tok:
    kind: int
    val: int = 0
    num: int = 0


def _peek(s: str, i: int) -> int:
    return fold(ord(s[i])) if i < len(s) else 0


def _lex_digits(s: str, i: int) -> tuple[int, int] | None:
    """(tenths, index after) of the digit run at s[i]; None if it cannot be a value."""
    v, ndig = 0, 0
    while _is_digit(_peek(s, i)):
        v = v * 10 + _peek(s, i) - 0x30
        if v > VALUE_CAP:
            return None
        i += 1
        ndig += 1
    if ndig <= 3:
        while _peek(s, i) == ord(","):
            d = [_peek(s, i + 1 + k) for k in range(3)]
            if not all(_is_digit(c) for c in d) or _is_digit(_peek(s, i + 4)):
                break
            v = v * 1000 + (d[0] - 0x30) * 100 + (d[1] - 0x30) * 10 + (d[2] - 0x30)
            if v > VALUE_CAP:
                return None
            i += 4
    v *= 10
    if _peek(s, i) == ord(".") and _is_digit(_peek(s, i + 1)):
        v += _peek(s, i + 1) - 0x30
        i += 2
        while _is_digit(_peek(s, i)):
            if _peek(s, i) != 0x30:
                return None
            i += 1
    return v, i


def _lex(s: str) -> list[_Tok] | None:
    toks: list[_Tok] = []
    i, after_letter = 0, False

    def push(kind, val=0, num=0) -> bool:
        if len(toks) >= MAX_TOKENS:
            return False
        toks.append(_Tok(kind, val, num))
        return True

    while i < len(s):
        cp = _peek(s, i)
        if is_space(cp):
            i += 1
            after_letter = False
            continue
        if s[i:i + 3] == "1/2" and not (i + 3 < len(s) and "0" <= s[i + 3] <= "9"):   # "1/2": Home Assistant's timer_half
            if not push(T_HALF):
                return None
            i += 3
            after_letter = False
            continue
        if _is_digit(cp):
            r = _lex_digits(s, i)
            if r is None or not push(T_DIGITS, 0, r[0]):
                return None
            i = r[1]
            after_letter = False
            continue
        if _is_letter(cp):
            w = []
            while _is_letter(_peek(s, i)):
                if len(w) == WORD_MAX:
                    return None
                w.append(chr(_peek(s, i)))
                i += 1
            word = "".join(w)
            code = EN_WORDS.get(word)
            if code is None or not push(*code, int(word in BARE_UNITS_ONE)):
                return None
            after_letter = True
            continue
        if cp == ord("-"):   # only inside hyphenated words: "twenty-one"; a minus sign is no value
            if not after_letter or not _is_letter(_peek(s, i + 1)):
                return None
            i += 1
            continue
        after_letter = False
        if cp in FILLER_SIGNS:
            if not push(T_FILLER):
                return None
            i += 1
            continue
        if cp == ord(","):
            if not push(T_COMMA):
                return None
            i += 1
            continue
        best = max((w for w in ZH_WORDS if s.startswith(w, i)), key=len, default=None)
        if best is None or not push(*ZH_WORDS[best]):
            return None
        i += len(best)
    return toks + [_Tok(T_END)] * 4   # room for the parser's lookahead


# ---- numbers -------------------------------------------------------------------------------------------------------
def _starts_below100(t: _Tok) -> bool:
    return (t.kind == T_SMALL and t.val > 0) or t.kind == T_TENS


def _en_below100(t, i):
    if t[i].kind == T_SMALL and t[i].val > 0:
        return t[i].val, i + 1
    if t[i].kind == T_TENS:
        v = 10 * t[i].val
        if t[i + 1].kind == T_SMALL and 0 < t[i + 1].val < 10:
            return v + t[i + 1].val, i + 2
        return v, i + 1
    return None


def _en_below1000(t, i):
    if ((t[i].kind == T_SMALL and 0 < t[i].val < 10) or t[i].kind == T_A) and t[i + 1].kind == T_HUNDRED:
        h = 100 * (1 if t[i].kind == T_A else t[i].val)
        i += 2
    elif t[i].kind == T_HUNDRED:
        h = 100
        i += 1
    else:
        return _en_below100(t, i)
    if t[i].kind == T_AND and _starts_below100(t[i + 1]):
        i += 1
    if _starts_below100(t[i]):
        r, i = _en_below100(t, i)
        h += r
    return h, i


def _starts_below1000(t, i) -> bool:
    return _starts_below100(t[i]) or t[i].kind == T_HUNDRED or (t[i].kind == T_A and t[i + 1].kind == T_HUNDRED)


def _en_int(t, i):
    if t[i].kind == T_SMALL and t[i].val == 0:
        return 0, i + 1
    r = _en_below1000(t, i)
    if r is None:
        if t[i].kind == T_A and t[i + 1].kind == T_THOUSAND:
            r = (1, i + 1)
        elif t[i].kind == T_THOUSAND:
            r = (1, i)
        else:
            return None
    a, i = r
    if t[i].kind == T_THOUSAND:
        a *= 1000
        i += 1
        if t[i].kind == T_AND and _starts_below1000(t, i + 1):
            i += 1
        if _starts_below1000(t, i):
            b, i = _en_below1000(t, i)
            a += b
    return a, i


def _zh_section(t, i, end, after_wan) -> int | None:
    val, last, pending, zero, any_ = 0, 10000, -1, False, False
    for k in range(i, end):
        if t[k].kind == T_ZH_DIGIT:
            d = t[k].val & 15
            if pending >= 0:
                return None
            if d == 0:
                if zero or (not any_ and not after_wan):
                    return None
                zero = True
                continue
            pending = d
        else:
            m = ZH_MULT_VALUE[t[k].val]
            if m >= last:
                return None
            if pending < 0:
                if m == 10 and ((not any_ and not after_wan) or zero):
                    pending = 1
                else:
                    return None
            if zero and m * 10 >= last:
                return None
            val += pending * m
            last, pending, zero, any_ = m, -1, False, True
    if pending >= 0:
        if zero:
            if last <= 10:
                return None
            val += pending
        elif any_ or after_wan:
            val += pending * (last // 10)
        else:
            val = pending
    elif zero:
        return None
    return val


def _zh_int(t, i):
    end, wan = i, None
    while t[end].kind in (T_ZH_DIGIT, T_ZH_MULT):
        end += 1
    for k in range(i, end):
        if t[k].kind == T_ZH_DIGIT and t[k].val & ZH_LIANG and not (
                end - i == 1 or (k + 1 < end and t[k + 1].kind == T_ZH_MULT and t[k + 1].val >= 2)):
            return None
        if t[k].kind == T_ZH_MULT and t[k].val == 4:
            if wan is not None or k == i:
                return None
            wan = k
    if end - i == 1 and t[i].kind == T_ZH_DIGIT and t[i].val & 15 == 0:
        hi = 0
    elif end - i == 1 and t[i].kind == T_ZH_MULT and t[i].val == 2:
        hi = 100
    elif wan is None:
        hi = _zh_section(t, i, end, False)
        if hi is None:
            return None
    else:
        hi, lo = _zh_section(t, i, wan, False), _zh_section(t, wan + 1, end, True)
        if hi is None or lo is None:
            return None
        hi = hi * 10000 + lo
    if hi > VALUE_CAP:
        return None
    return hi, end


def _parse_number(t, i, article_one):
    k = t[i].kind
    if k == T_DIGITS:
        return t[i].num, i + 1
    if k in (T_HALF, T_ZH_HALF) or (k == T_A and t[i + 1].kind == T_HALF):
        i += 2 if k == T_A else 1
        if k != T_ZH_HALF and t[i].kind == T_A and t[i + 1].kind == T_UNIT:
            i += 1
        return 5, i
    if k in (T_ZH_DIGIT, T_ZH_MULT):
        r = _zh_int(t, i)
        if r is None:
            return None
        v, i = r[0] * 10, r[1]
        if t[i].kind == T_ZH_POINT:
            if t[i + 1].kind != T_ZH_DIGIT or t[i + 1].val & ZH_LIANG:
                return None
            v += t[i + 1].val
            i += 2
            while t[i].kind == T_ZH_DIGIT:
                if t[i].val != 0:
                    return None
                i += 1
        return v, i
    r = _en_int(t, i)
    if r is None:
        if k == T_A and article_one and t[i + 1].kind == T_UNIT:   # "an hour"; a lone "a" is no number
            return 10, i + 1
        if k == T_UNIT and article_one and t[i].num == 1:          # "hour and a half": one, the unit read next
            return 10, i
        return None
    v, i = r[0] * 10, r[1]
    if t[i].kind == T_POINT:
        if t[i + 1].kind != T_SMALL or t[i + 1].val > 9:
            return None
        v += t[i + 1].val
        i += 2
        while t[i].kind == T_SMALL and t[i].val <= 9:
            if t[i].val != 0:
                return None
            i += 1
    return v, i


def _skip_fillers(t, i):
    while t[i].kind == T_FILLER:
        i += 1
    return i


def _half_suffix(t, i) -> int:
    if t[i].kind == T_ZH_HALF:
        return i + 1
    if t[i].kind == T_AND:
        if t[i + 1].kind == T_HALF:
            return i + 2
        if t[i + 1].kind == T_A and t[i + 2].kind == T_HALF:
            return i + 3
    return 0


def _parse_item(t, i, article_one):
    r = _parse_number(t, i, article_one)
    if r is None:
        return None
    v, i = r
    i = _skip_fillers(t, i)
    if v % 10 == 0 and (h := _half_suffix(t, i)):
        v += 5
        i = _skip_fillers(t, h)
    unit = UNIT_NONE
    if t[i].kind == T_UNIT:
        unit = t[i].val
        i = _skip_fillers(t, i + 1)
        if v % 10 == 0 and (h := _half_suffix(t, i)):
            v += 5
            i = _skip_fillers(t, h)
    return (v, unit), i


def _parse_items(s: str, article_one: bool) -> list[tuple[int, int]] | None:
    t = _lex(s)
    if t is None:
        return None
    items: list[tuple[int, int]] = []
    i = _skip_fillers(t, 0)
    while t[i].kind != T_END:
        if items and (t[i].kind in (T_AND, T_COMMA) or
                      (t[i].kind == T_ZH_DIGIT and t[i].val == 0 and items[-1][1] != UNIT_NONE)):
            i = _skip_fillers(t, i + 1)
        if len(items) == MAX_ITEMS:
            return None
        r = _parse_item(t, i, article_one)
        if r is None:
            return None
        items.append(r[0])
        i = r[1]
    return items


def parse_number(text) -> int | None:
    """The number in `text` (str or bytes) in tenths, as bertl14_slot_parse_number(): 21.5 -> 215; None when the
    text is not exactly one number."""
    s = _decode(text)
    if s is None:
        return None
    items = _parse_items(s, False)
    return items[0][0] if items is not None and len(items) == 1 else None


# ---- the number a tagged span continues ------------------------------------------------------------------------
_JOINERS = (T_A, T_AND, T_POINT)


def _number_word_end(s, i: int) -> tuple[int, bool]:
    """(end, joiner) of the ASCII number word at s[i], as number_word_end() in C; end 0 when there is none."""
    n = len(s)
    at = (lambda k: s[k]) if isinstance(s, (bytes, bytearray)) else (lambda k: ord(s[k]))
    if i >= n:
        return 0, False
    if n - i >= 3 and at(i) == 0x31 and at(i + 1) == 0x2F and at(i + 2) == 0x32 and \
            (n - i == 3 or not _is_digit(at(i + 3))):
        return i + 3, False
    j = i
    if _is_digit(at(i)):
        while j < n and (_is_digit(at(j)) or (at(j) in (0x2E, 0x2C) and j + 1 < n and _is_digit(at(j + 1)))):
            j += 1
        return j, False
    if at(i) == 0x25:
        return i + 1, False
    w = []
    while j < n and at(j) < 0x80 and _is_letter(fold(at(j))):
        if len(w) == WORD_MAX:
            return 0, False
        w.append(chr(fold(at(j))))
        j += 1
    code = EN_WORDS.get("".join(w)) if w else None
    if code is None:
        return 0, False
    return j, code[0] in _JOINERS


def number_extent(text, end: int) -> int:
    """bertl14_slot_number_extent(): where the number expression of a number or duration span ending at `end`
    ends, over the English number words, digits, unit words, "1/2" and '%' that follow (spaces between, or a hyphen
    between two letters as the reader takes it: "twenty-two", not "29-minutes"), never on "a"/"an"/"and"/"point".
    `text` str or bytes, `end` an index into it."""
    if end > len(text):
        return end
    at = (lambda k: text[k]) if isinstance(text, (bytes, bytearray)) else (lambda k: ord(text[k]))
    pos = good = end
    while True:
        j, hyphens = pos, 0
        while j < len(text) and at(j) == 0x20:
            j += 1
        if j == pos and j < len(text) and at(j) == 0x2D:   # a hyphen between letters, as the reader takes it
            letter = lambda k: 0 <= k < len(text) and at(k) < 0x80 and _is_letter(fold(at(k)))  # noqa: E731
            hyphens = 1 if letter(pos - 1) and letter(j + 1) else 2
            j += 1
        word_end, joiner = _number_word_end(text, j) if hyphens <= 1 else (0, False)
        if word_end == 0:
            return good
        pos = word_end
        if not joiner:
            good = word_end


# ---- normalisation (lists) -----------------------------------------------------------------------------------------
_ARTICLES = (b"the ", b"a ", b"an ")


def normalise(text: str) -> bytes | None:
    """A list text as it is compared: whitespace runs as one space, trimmed, full-width folded, ASCII lower case,
    a leading "the " / "a " / "an " dropped. None when longer than NORM_MAX bytes (before the article is dropped)."""
    out = bytearray()
    space = False
    for ch in text:
        cp = fold(ord(ch))
        if is_space(cp):
            space = len(out) > 0
            continue
        if space:
            if len(out) >= NORM_MAX:
                return None
            out += b" "
            space = False
        enc = chr(cp).encode("utf-8")
        if len(out) + len(enc) > NORM_MAX:
            return None
        out += enc
    for a in _ARTICLES:
        if out.startswith(a) and len(out) > len(a):
            return bytes(out[len(a):])
    return bytes(out)


# ---- the table -----------------------------------------------------------------------------------------------------
@dataclass(frozen=True)
class SlotValue:
    slot: str
    kind: int          # KIND_INT, KIND_HALF, KIND_TEXT
    tenths: int        # numbers: value * 10; 0 for text
    text: bytes = b""  # text values

    def value(self) -> int | float | str:
        if self.kind == KIND_TEXT:
            return self.text.decode("utf-8")
        return self.tenths // 10 if self.kind == KIND_INT else self.tenths / 10


class _Table:
    """A value table read back from its words, checked as bertl14_slot_values() checks it (header, bounds)."""

    def __init__(self, w: tuple[int, ...]):
        self.ok = False
        if len(w) < HEADER_WORDS or w[HDR_MAGIC] != MAGIC or w[HDR_VERSION] != VERSION or w[HDR_WORDS] != HEADER_WORDS:
            return
        total, pool = w[HDR_TOTAL_WORDS], w[HDR_POOL]
        pb = w[HDR_POOL_BYTES]
        if (w[HDR_SLOTS] != HEADER_WORDS or w[HDR_N_SLOTS] > MAX_SLOTS
                or HEADER_WORDS + w[HDR_N_SLOTS] * SLOT_WORDS > pool or pool > total
                or pb // 4 + (1 if pb & 3 else 0) > total - pool or total > len(w)):
            return
        self.w, self.total, self.n_slots, self.pool_bytes = w, total, w[HDR_N_SLOTS], pb
        self.pool = b"".join(x.to_bytes(4, "little") for x in w[pool:total])
        self.ok = True

    def rec(self, k: int) -> tuple[int, ...]:
        o = HEADER_WORDS + k * SLOT_WORDS
        return self.w[o:o + SLOT_WORDS]

    def pool_str(self, off: int, n: int) -> bytes | None:
        if off >= self.pool_bytes or n >= self.pool_bytes - off or self.pool[off + n] != 0:
            return None
        return self.pool[off:off + n]

    def name(self, k: int) -> bytes | None:
        r = self.rec(k)
        return self.pool_str(r[S_NAME], r[S_INFO] >> INFO_NAME_LEN_SHIFT)

    def find(self, name: bytes) -> int | None:
        name = name.split(b"\0")[0]   # C strings: up to the first NUL
        for k in range(self.n_slots):
            s = self.name(k)
            if s is not None and s.split(b"\0")[0] == name:
                return k
        return None

    def cname(self, k: int) -> str:
        return self.name(k).split(b"\0")[0].decode("utf-8", "surrogateescape")


@functools.lru_cache(maxsize=32)
def _table(words: tuple[int, ...]) -> _Table:
    return _Table(words)


def _i32(x: int) -> int:
    return x - (1 << 32) if x & 0x80000000 else x


def _number(name: str, tenths: int) -> SlotValue:
    return SlotValue(name, KIND_INT if tenths % 10 == 0 else KIND_HALF, tenths)


def _number_value(tb: _Table, s: str, rec, name: str) -> list[SlotValue]:
    items = _parse_items(s, False)
    if items is None or len(items) != 1:
        return []
    v = items[0][0]
    if not (v % 10 == 0 or (v % 10 == 5 and rec[S_INFO] & INFO_HALVES)) \
            or v < _i32(rec[S_MIN]) * 10 or v > _i32(rec[S_MAX]) * 10:
        return []
    if rec[S_INFO] & INFO_NEGATE:   # "down by 20": answered as the slot it reports, negated
        if rec[S_AUX] >= tb.n_slots or tb.name(rec[S_AUX]) is None:
            return []
        return [_number(tb.cname(rec[S_AUX]), -v)]
    return [_number(name, v)]


def _entry_number(out: bytes) -> int | None:
    """A list value out that is a whole number ("100", "-1"), in tenths; None for any other text."""
    digits = out[1:] if out[:1] == b"-" else out
    if not digits or len(digits) > 7 or not all(0x30 <= c <= 0x39 for c in digits):
        return None
    v = int(digits) * 10
    return -v if out[:1] == b"-" else v


def _duration_values(tb: _Table, s: str, rec, name: str) -> list[SlotValue]:
    items = _parse_items(s, True)
    if not items:
        return []
    if len(items) == 1 and items[0][1] == UNIT_NONE:
        unit = (rec[S_INFO] >> INFO_UNIT_SHIFT) & 3   # no unit word: the tagged slot's unit
        if items[0][0] == 5 and unit != UNIT_HOURS:   # Home Assistant's "{timer_half:minutes} an hour"
            return [SlotValue(name, KIND_INT, 300)]
        items = [(items[0][0], unit)]
    acc = [-1, -1, -1]
    prev = 0
    for k, (v, u) in enumerate(items):
        ip, frac = v // 10, v % 10
        if u == UNIT_NONE or (k > 0 and u <= prev) or frac not in (0, 5) or (frac == 5 and u == UNIT_SECONDS):
            return []
        prev = u
        if ip > 0 or frac == 0:
            if acc[u] >= 0:
                return []
            acc[u] = ip
        if frac == 5:
            if acc[u + 1] >= 0:
                return []
            acc[u + 1] = 30
    out = []
    for k in range(3):
        if acc[k] < 0:
            continue
        sib = (rec[S_AUX] >> (10 * k)) & NO_SLOT
        if sib >= tb.n_slots:
            return []
        r = tb.rec(sib)
        if tb.name(sib) is None or acc[k] < _i32(r[S_MIN]) or acc[k] > _i32(r[S_MAX]):
            return []
        out.append(SlotValue(tb.cname(sib), KIND_INT, acc[k] * 10))
    return out


def _list_value(tb: _Table, s: str, rec, name: str) -> list[SlotValue]:
    key = normalise(s)
    first, count = rec[S_AUX], rec[S_COUNT]
    if first < HEADER_WORDS or first > tb.total or count > (tb.total - first) // 2:
        return []
    if key:
        for e in range(count):
            w0, w1 = tb.w[first + 2 * e], tb.w[first + 2 * e + 1]
            text_in = tb.pool_str(w0 & POOL_OFF_MASK, w0 >> 24)
            out = tb.pool_str(w1 & POOL_OFF_MASK, w1 >> 24)
            if text_in is not None and out is not None and text_in == key:
                number = _entry_number(out) if rec[S_INFO] & INFO_NUMBER else None
                return [SlotValue(name, KIND_TEXT, 0, out) if number is None else _number(name, number)]
    return _number_value(tb, s, rec, name) if rec[S_INFO] & INFO_NUMBER else []


EDGE_PUNCT = frozenset(map(ord, ",.;:!?、。！，：；？"))   # a wildcard does not start or end with them


def _wildcard_value(raw: bytes, s: str, name: str) -> list[SlotValue]:
    pos, first, end = 0, None, 0
    for ch in s:
        n = len(ch.encode("utf-8"))
        if not is_space(ord(ch)) and ord(ch) not in EDGE_PUNCT:
            if first is None:
                first = pos
            if pos + n - first > TEXT_MAX:
                break
            end = pos + n
        pos += n
    if first is None:
        return []
    return [SlotValue(name, KIND_TEXT, 0, raw[first:end])]


def slot_values_raw(words, slot_name: str, span, max_out: int = VALUES_MAX) -> tuple[int, list[SlotValue]]:
    """bertl14_slot_values() in Python: (status, values). `span` is str or bytes (bytes may be invalid UTF-8)."""
    tb = _table(tuple(words))
    if not tb.ok:
        return ERR_INVALID_CONFIG, []
    raw = span.encode("utf-8", "surrogatepass") if isinstance(span, str) else bytes(span)
    s = _decode(raw)
    if s is None:
        return ERR_INVALID_UTF8, []
    k = tb.find(slot_name.encode("utf-8"))
    if k is None:
        return OK, []
    rec, name = tb.rec(k), tb.cname(k)
    t = rec[S_INFO] & INFO_TYPE
    if t == TYPE_NUMBER:
        vals = _number_value(tb, s, rec, name)
    elif t == TYPE_DURATION:
        vals = _duration_values(tb, s, rec, name)
    elif t == TYPE_LIST:
        vals = _list_value(tb, s, rec, name)
    elif t == TYPE_WILDCARD:
        vals = _wildcard_value(raw, s, name)
    else:
        return ERR_INVALID_CONFIG, []
    if len(vals) > max_out:
        return ERR_BUFFER_TOO_SMALL, []
    return OK, vals


def slot_values(spec_or_table, slot_name: str, span) -> dict[str, int | float | str]:
    """The values of a span tagged `slot_name`: {"hours": 1, "minutes": 30}, {"temperature": 21.5},
    {"color": "red"}; {} when it has none (or is not valid UTF-8). `spec_or_table`: a spec dict or table words."""
    words = build_value_table(spec_or_table) if isinstance(spec_or_table, dict) else spec_or_table
    _, vals = slot_values_raw(words, slot_name, span)
    return {v.slot: v.value() for v in vals}


def slot_type(words, slot_name: str) -> int:
    """bertl14_slot_type(): TYPE_* of a slot, 0 if the table has none of that name."""
    tb = _table(tuple(words))
    k = tb.find(slot_name.encode("utf-8")) if tb.ok else None
    return 0 if k is None else tb.rec(k)[S_INFO] & INFO_TYPE


def _number_slot_rec(words, slot_name: str):
    """number_slot_rec(): the record of a slot that takes a number, None otherwise."""
    tb = _table(tuple(words))
    k = tb.find(slot_name.encode("utf-8")) if tb.ok else None
    if k is None:
        return None
    rec = tb.rec(k)
    info = rec[S_INFO]
    return rec if info & INFO_TYPE == TYPE_NUMBER or (info & INFO_TYPE == TYPE_LIST and info & INFO_NUMBER) else None


def slot_takes_number(words, slot_name: str) -> bool:
    """bertl14_slot_takes_number(): a number slot, or a list slot that also takes a number."""
    return _number_slot_rec(words, slot_name) is not None


def slot_number_bounds(words, slot_name: str) -> tuple[int, int] | None:
    """bertl14_slot_number_bounds(): (lowest, highest) number a slot takes, None when it takes no number."""
    rec = _number_slot_rec(words, slot_name)
    return None if rec is None else (_i32(rec[S_MIN]), _i32(rec[S_MAX]))


def validate_table(words) -> int:
    """bertl14_slot_table_validate() in Python: OK or ERR_INVALID_CONFIG."""
    w = tuple(words)
    tb = _Table(w)
    if not tb.ok or w[HDR_FLAGS] > 1 or tb.total - w[HDR_POOL] != (tb.pool_bytes + 3) // 4:
        return ERR_INVALID_CONFIG
    if sum(w[k] for k in range(tb.total) if k != HDR_CHECKSUM) & 0xFFFFFFFF != w[HDR_CHECKSUM]:
        return ERR_INVALID_CONFIG
    entries_end = HEADER_WORDS + tb.n_slots * SLOT_WORDS
    names = []
    for k in range(tb.n_slots):
        r, name = tb.rec(k), tb.name(k)
        typ = r[S_INFO] & INFO_TYPE
        if name is None or not name or b"\0" in name or name in names:
            return ERR_INVALID_CONFIG
        names.append(name)
        lo, hi = _i32(r[S_MIN]), _i32(r[S_MAX])
        if not TYPE_NUMBER <= typ <= TYPE_WILDCARD or not -VALUE_CAP <= lo <= hi <= VALUE_CAP:
            return ERR_INVALID_CONFIG
        if typ == TYPE_LIST:
            if r[S_AUX] != entries_end or r[S_COUNT] > (w[HDR_POOL] - entries_end) // 2:
                return ERR_INVALID_CONFIG
            for e in range(r[S_COUNT]):
                w0, w1 = w[r[S_AUX] + 2 * e], w[r[S_AUX] + 2 * e + 1]
                if tb.pool_str(w0 & POOL_OFF_MASK, w0 >> 24) is None \
                        or tb.pool_str(w1 & POOL_OFF_MASK, w1 >> 24) is None:
                    return ERR_INVALID_CONFIG
            entries_end += 2 * r[S_COUNT]
        elif typ == TYPE_NUMBER and r[S_INFO] & INFO_NEGATE:
            if r[S_AUX] >= tb.n_slots or r[S_AUX] == k:
                return ERR_INVALID_CONFIG
        elif typ == TYPE_DURATION:
            unit = (r[S_INFO] >> INFO_UNIT_SHIFT) & 3
            if unit > UNIT_SECONDS or (r[S_AUX] >> (10 * unit)) & NO_SLOT != k:
                return ERR_INVALID_CONFIG
            for u in range(3):
                sib = (r[S_AUX] >> (10 * u)) & NO_SLOT
                if sib >= tb.n_slots:
                    return ERR_INVALID_CONFIG
                sr = tb.rec(sib)
                if sr[S_INFO] & INFO_TYPE != TYPE_DURATION or (sr[S_INFO] >> INFO_UNIT_SHIFT) & 3 != u \
                        or sr[S_AUX] != r[S_AUX]:
                    return ERR_INVALID_CONFIG
    return OK if entries_end == w[HDR_POOL] else ERR_INVALID_CONFIG


# ---- the spec and the table builder --------------------------------------------------------------------------------
HA_NUMBER_SLOTS = {"brightness": False, "temperature": True, "percentage": False, "volume_level": False,
                   "position": False}   # slot -> halves (Home Assistant's temperature takes 21.5)
HA_DURATION_SLOTS = ("hours", "minutes", "seconds", "start_hours", "start_minutes", "start_seconds")
HA_WILDCARD_SLOTS = ("item", "search_query", "message", "name")
DURATION_MAX = 999   # "120 seconds", "90 minutes": people go past the templates' 100

COLORS = {"en": {c: c for c in ("white", "black", "red", "orange", "yellow", "green", "blue", "purple", "brown",
                                "pink", "turquoise")},
          "zh-CN": {"白色": "white", "白": "white", "黑色": "black", "黑": "black", "红色": "red", "红": "red",
                    "橙色": "orange", "橙": "orange", "黄色": "yellow", "黄": "yellow", "绿色": "green", "绿": "green",
                    "蓝色": "blue", "蓝": "blue", "紫色": "purple", "紫": "purple", "棕色": "brown", "棕": "brown",
                    "粉色": "pink", "粉红色": "pink", "粉": "pink", "青色": "turquoise", "绿松石色": "turquoise"}}
MEDIA_CLASSES = {"en": {"artist": "artist", "album": "album", "track": "track", "song": "track",
                        "playlist": "playlist", "podcast": "podcast", "movie": "movie", "film": "movie",
                        "tv show": "tv_show", "show": "tv_show"},
                 "zh-CN": {"歌手": "artist", "艺人": "artist", "专辑": "album", "歌": "track", "歌曲": "track",
                           "曲子": "track", "播放列表": "playlist", "歌单": "playlist", "播客": "podcast",
                           "电影": "movie", "电视剧": "tv_show", "节目": "tv_show"}}
VOLUME_STEPS = {"en": {"up": "up", "down": "down", "louder": "up", "quieter": "down", "higher": "up",
                       "lower": "down"},
                "zh-CN": {"高": "up", "低": "down", "大": "up", "小": "down", "高一点": "up", "低一点": "down",
                          "大一点": "up", "小一点": "down", "大声": "up", "小声": "down"}}


def default_spec(lang: str = "en") -> dict:
    """The slots of Home Assistant's intents: durations, numbers (0-100; temperature with halves), volume_step
    (words or a number), color and media_class lists, wildcards. Lists hold the English AND the Chinese words
    (people mix languages; the lang's own come first); `lang` is recorded in the table."""
    if lang not in LANGS:
        raise UserError(f"unknown language {lang!r}: use one of {', '.join(LANGS)}")
    order = [lang] + [x for x in LANGS if x != lang]

    def merged(table):
        return {k: v for x in order for k, v in table[x].items()}

    slots: dict = {name: {"type": "duration", "min": 1, "max": DURATION_MAX} for name in HA_DURATION_SLOTS}
    slots.update({name: {"type": "number", "min": 0, "max": 100, "halves": halves}
                  for name, halves in HA_NUMBER_SLOTS.items()})
    slots["volume_step"] = {"type": "list", "values": merged(VOLUME_STEPS),
                            "number": {"min": 0, "max": 100, "halves": False}}
    slots["color"] = {"type": "list", "values": merged(COLORS)}
    slots["media_class"] = {"type": "list", "values": merged(MEDIA_CLASSES)}
    slots.update({name: {"type": "wildcard"} for name in HA_WILDCARD_SLOTS})
    return {"lang": lang, "slots": slots}


def _int_field(d: dict, key: str, default: int, where: str) -> int:
    v = d.get(key, default)
    if isinstance(v, bool) or not isinstance(v, int) or not -VALUE_CAP <= v <= VALUE_CAP:
        raise UserError(f"{where}: {key} must be an integer in [-{VALUE_CAP}, {VALUE_CAP}], not {v!r}")
    return v


def _range(d: dict, where: str, lo: int, hi: int, halves_ok: bool) -> tuple[int, int, bool]:
    a, b = _int_field(d, "min", lo, where), _int_field(d, "max", hi, where)
    if a > b:
        raise UserError(f"{where}: min {a} is above max {b}")
    halves = d.get("halves", False)
    if not isinstance(halves, bool) or (halves and not halves_ok):
        raise UserError(f"{where}: halves must be true or false" + ("" if halves_ok else " (and false here)"))
    return a, b, halves


def _check_keys(d: dict, allowed: set[str], where: str) -> None:
    extra = set(d) - allowed
    if extra:
        raise UserError(f"{where}: unknown key(s) {', '.join(sorted(extra))} (allowed: {', '.join(sorted(allowed))})")


def _duration_family(name: str, where: str) -> tuple[str, int]:
    for u, unit in enumerate(UNIT_NAMES):
        if name.endswith(unit):
            return name[:-len(unit)], u
    raise UserError(f"{where}: a duration slot's name ends with hours, minutes or seconds (its unit)")


def build_value_table(spec: dict) -> list[int]:
    """uint32 words of a value table from `spec` (docs/slots.md): header, slot records, list entries, string pool.
    Duration slots get their siblings (hours -> minutes and seconds of the same prefix) added when missing."""
    if not isinstance(spec, dict):
        raise UserError("a slot value spec is a mapping with lang and slots")
    _check_keys(spec, {"lang", "slots"}, "spec")
    lang = spec.get("lang", "en")
    if lang not in LANGS:
        raise UserError(f"spec: unknown lang {lang!r}: use one of {', '.join(LANGS)}")
    slots = spec.get("slots") or {}
    if not isinstance(slots, dict):
        raise UserError("spec: slots must be a mapping of slot name -> slot description")
    slots = dict(slots)
    for name, d in list(slots.items()):   # complete the duration families
        if isinstance(d, dict) and d.get("type") == "duration" and isinstance(name, str):
            prefix, _ = _duration_family(name, f"slot {name!r}")
            for unit in UNIT_NAMES:
                slots.setdefault(prefix + unit, {"type": "duration"})
    if len(slots) > MAX_SLOTS:
        raise UserError(f"spec: more than {MAX_SLOTS} slots")
    names = list(slots)
    pool = bytearray()
    interned: dict[bytes, int] = {}

    def intern(b: bytes) -> int:
        if b not in interned:
            interned[b] = len(pool)
            pool.extend(b + b"\0")
        return interned[b]

    records: list[list[int]] = []
    entries: list[list[int]] = []   # per list slot, its entry words
    for name in names:
        where = f"slot {name!r}"
        d = slots[name]
        if not isinstance(name, str) or not name or "\0" in name or len(name.encode()) > NAME_MAX:
            raise UserError(f"{where}: a slot name is 1 to {NAME_MAX} bytes of text without NUL")
        if not isinstance(d, dict) or d.get("type") not in TYPES:
            raise UserError(f"{where}: needs a type: one of {', '.join(TYPES)}")
        typ = TYPES[d["type"]]
        raw_name = name.encode("utf-8")
        rec = [intern(raw_name), typ | (len(raw_name) << INFO_NAME_LEN_SHIFT), 0, 0, 0, 0]
        if typ == TYPE_NUMBER:
            _check_keys(d, {"type", "min", "max", "halves", "negate", "report"}, where)
            lo, hi, halves = _range(d, where, 0, 100, True)
            rec[S_MIN], rec[S_MAX] = lo, hi
            rec[S_INFO] |= INFO_HALVES if halves else 0
            if d.get("negate", False) is not False:
                report = d.get("report")
                if d["negate"] is not True or report not in slots or report == name:
                    raise UserError(f"{where}: negate: true needs report: the name of another slot of the table "
                                    f"(the slot its value is answered as)")
                rec[S_INFO] |= INFO_NEGATE
                rec[S_AUX] = names.index(report)
            elif "report" in d:
                raise UserError(f"{where}: report is for negate: true slots only")
        elif typ == TYPE_DURATION:
            _check_keys(d, {"type", "min", "max"}, where)
            lo, hi, _ = _range(d, where, 1, 100, False)
            if lo < 0:
                raise UserError(f"{where}: a duration's min is 0 or more")
            prefix, unit = _duration_family(name, where)
            for u in UNIT_NAMES:
                sib = slots[prefix + u]
                if not isinstance(sib, dict) or sib.get("type") != "duration":
                    raise UserError(f"{where}: slot {prefix + u!r} must be a duration too (a span of {name} may "
                                    f"give {u})")
            rec[S_MIN], rec[S_MAX] = lo, hi
            rec[S_INFO] |= unit << INFO_UNIT_SHIFT
            rec[S_AUX] = sum(names.index(prefix + u) << (10 * k) for k, u in enumerate(UNIT_NAMES))
        elif typ == TYPE_LIST:
            _check_keys(d, {"type", "values", "number"}, where)
            values = d.get("values")
            if not isinstance(values, dict) or not values:
                raise UserError(f"{where}: values must be a non-empty mapping of text in -> value out")
            seen: dict[bytes, str] = {}
            words = []
            for text_in, out in values.items():
                if not isinstance(text_in, str) or not isinstance(out, str) or not out \
                        or len(out.encode()) > ENTRY_MAX or "\0" in out:
                    raise UserError(f"{where}: {text_in!r}: -> {out!r}: texts in and values out are non-empty text "
                                    f"(values out up to {ENTRY_MAX} bytes)")
                key = normalise(text_in)
                if not key or "\0" in text_in:
                    raise UserError(f"{where}: text in {text_in[:20]!r} is empty or longer than {NORM_MAX} bytes")
                if key in seen:
                    if seen[key] != out:
                        raise UserError(f"{where}: {text_in!r} reads like another text in, with another value "
                                        f"({seen[key]!r} and {out!r})")
                    continue
                seen[key] = out
                raw_out = out.encode("utf-8")
                words += [intern(key) | (len(key) << 24), intern(raw_out) | (len(raw_out) << 24)]
            entries.append(words)
            rec[S_COUNT] = len(words) // 2
            if "number" in d:
                num = d["number"]
                if not isinstance(num, dict):
                    raise UserError(f"{where}: number must be a mapping with min, max, halves")
                _check_keys(num, {"min", "max", "halves"}, where + " number")
                lo, hi, halves = _range(num, where + " number", 0, 100, True)
                rec[S_MIN], rec[S_MAX] = lo, hi
                rec[S_INFO] |= INFO_NUMBER | (INFO_HALVES if halves else 0)
        else:
            _check_keys(d, {"type"}, where)
        records.append(rec)
    if len(pool) > POOL_OFF_MASK:
        raise UserError(f"spec: more than {POOL_OFF_MASK} bytes of names and texts")
    o_entries = HEADER_WORDS + SLOT_WORDS * len(records)
    flat = []
    for rec in records:
        if rec[S_INFO] & INFO_TYPE == TYPE_LIST:
            rec[S_AUX] = o_entries + len(flat)
            flat += entries.pop(0)
    o_pool = o_entries + len(flat)
    pool_words = [int.from_bytes(pool[k:k + 4].ljust(4, b"\0"), "little") for k in range(0, len(pool), 4)]
    header = [MAGIC, VERSION, HEADER_WORDS, 0, LANGS[lang], len(records), HEADER_WORDS, o_pool, len(pool), 0]
    words = header + [x & 0xFFFFFFFF for rec in records for x in rec] + flat + pool_words
    words[HDR_TOTAL_WORDS] = len(words)
    words[HDR_CHECKSUM] = (sum(words) - words[HDR_CHECKSUM]) & 0xFFFFFFFF
    return words


def render_c(words: list[int], name: str = "bertl14_slot_table", source: str = "") -> str:
    """The table as a C array in flash (read-only, 4-byte aligned) and its word count."""
    if not re.fullmatch(r"[A-Za-z_][A-Za-z0-9_]*", name):
        raise UserError(f"{name!r} is not a C identifier")
    rows = "".join("    " + ", ".join(f"0x{w:08x}u" for w in words[k:k + 8]) + ",\n" for k in range(0, len(words), 8))
    return (f"/* Generated by `bertl14 convert`{' from ' + source if source else ''}: do not edit. "
            f"docs/slots.md */\n#include <stdint.h>\n\n/* {len(words)} words = {4 * len(words)} bytes of flash */\n"
            f"const uint32_t {name}[{len(words)}] = {{\n{rows}}};\n"
            f"const uint32_t {name}_words = {len(words)}u;\n")


# ---- the C module on the host ---------------------------------------------------------------------------------------
SOURCES = (REPO_ROOT / "bertl14" / "slots" / "bertl14_slot_values.c",)


def build_library(sanitize: tuple[str, ...] | list[str] = (), extra_flags: tuple[str, ...] | list[str] = ()) -> Path:
    """Build (or reuse) bertl14_slot_* as a host shared library of its own, as cbuild builds the registry."""
    from .. import cbuild
    for src in SOURCES:
        if not src.exists():
            raise UserError(f"{src} not found: the slot value module is missing from this checkout")
    return cbuild._shared_library("slots", "libbertl14_slots.so", list(SOURCES),
                                  cbuild.compile_flags("portable", sanitize, extra_flags))
