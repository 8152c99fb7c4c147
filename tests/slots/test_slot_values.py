"""Slot values: the C module (host build, ctypes) == the Python twin on a large generated corpus, the values real
numbers must give, robustness under ASan + UBSan, the table builder and validator, the Cortex-M7 code size."""
from __future__ import annotations

import ctypes
import random
import shutil
import struct
import subprocess
from pathlib import Path

import pytest

from bertl14_tools import cbuild
from bertl14_tools.model import slot_values as S
from bertl14_tools.errors import UserError

HERE = Path(__file__).resolve().parent
REPO = HERE.parents[1]
SRC = REPO / "bertl14" / "slots" / "bertl14_slot_values.c"
STRICT = ["-Werror", "-Wshadow", "-Wconversion"]   # on top of cbuild's -Wall -Wextra

# A model's table: Home Assistant's slots plus user-defined ones (a wide number, a duration family of its own).
SPEC = S.default_spec("en")
SPEC["slots"].update({"count": {"type": "number", "min": 0, "max": 1_000_000},
                      "offset": {"type": "number", "min": -50, "max": 50, "halves": True},
                      "delay_minutes": {"type": "duration", "max": 1000},
                      "scene": {"type": "list", "values": {"Movie Night": "scene.movie", "晚安": "scene.good_night"}}})
SLOTS = list(SPEC["slots"]) + ["delay_hours", "delay_seconds", "unknown_slot"]


# ---- the C module through ctypes -------------------------------------------------------------------------------
class Value(ctypes.Structure):
    _fields_ = [("slot", ctypes.c_char_p), ("kind", ctypes.c_uint32), ("value_tenths", ctypes.c_int32),
                ("text", ctypes.c_void_p), ("text_len", ctypes.c_uint32)]


class CSlots:
    def __init__(self, words: list[int], lib: Path):
        self.lib = ctypes.CDLL(str(lib))
        self.lib.bertl14_slot_values.restype = ctypes.c_int
        self.lib.bertl14_slot_table_validate.restype = ctypes.c_int
        self.lib.bertl14_slot_type.restype = ctypes.c_uint32
        self.lib.bertl14_slot_takes_number.restype = ctypes.c_int
        self.lib.bertl14_slot_number_bounds.restype = ctypes.c_int
        self.lib.bertl14_slot_parse_number.restype = ctypes.c_int
        self.lib.bertl14_slot_number_extent.restype = ctypes.c_uint32
        self.table = (ctypes.c_uint32 * len(words))(*words)

    def values(self, slot: str, span, max_out: int = S.VALUES_MAX) -> tuple[int, list[S.SlotValue]]:
        raw = span.encode("utf-8", "surrogatepass") if isinstance(span, str) else bytes(span)
        buf = (ctypes.c_char * max(len(raw), 1)).from_buffer_copy(raw or b"\0")   # exactly the span, no NUL after
        out = (Value * 4)()
        n = ctypes.c_uint32(99)
        st = self.lib.bertl14_slot_values(self.table, slot.encode(), buf, ctypes.c_uint32(len(raw)), out,
                                          ctypes.c_uint32(max_out), ctypes.byref(n))
        vals = [S.SlotValue(v.slot.decode(), v.kind, v.value_tenths,
                            ctypes.string_at(v.text, v.text_len) if v.text else b"") for v in out[:n.value]]
        return st, vals

    def parse_number(self, text) -> int | None:
        raw = text.encode("utf-8", "surrogatepass") if isinstance(text, str) else bytes(text)
        v = ctypes.c_int32(0)
        return v.value if self.lib.bertl14_slot_parse_number(raw, ctypes.c_uint32(len(raw)), ctypes.byref(v)) else None

    def number_extent(self, text, end: int) -> int:
        raw = text.encode("utf-8", "surrogatepass") if isinstance(text, str) else bytes(text)
        buf = (ctypes.c_char * max(len(raw), 1)).from_buffer_copy(raw or b"\0")
        return self.lib.bertl14_slot_number_extent(buf, ctypes.c_uint32(len(raw)), ctypes.c_uint32(end))

    def slot_type(self, slot: str) -> int:
        return self.lib.bertl14_slot_type(self.table, slot.encode())

    def takes_number(self, slot: str) -> bool:
        return bool(self.lib.bertl14_slot_takes_number(self.table, slot.encode()))

    def number_bounds(self, slot: str) -> tuple[int, int] | None:
        lo, hi = ctypes.c_int32(0), ctypes.c_int32(0)
        ok = self.lib.bertl14_slot_number_bounds(self.table, slot.encode(), ctypes.byref(lo), ctypes.byref(hi))
        return (lo.value, hi.value) if ok else None

    def validate(self, words=None) -> int:
        table = self.table if words is None else (ctypes.c_uint32 * len(words))(*words)
        return self.lib.bertl14_slot_table_validate(table)


@pytest.fixture(scope="module")
def words() -> list[int]:
    return S.build_value_table(SPEC)


@pytest.fixture(scope="module")
def c(words) -> CSlots:
    return CSlots(words, S.build_library(extra_flags=STRICT))


# ---- the corpus ----------------------------------------------------------------------------------------------------
ONES = "zero one two three four five six seven eight nine ten eleven twelve thirteen fourteen fifteen sixteen " \
       "seventeen eighteen nineteen".split()
TENS = "_ _ twenty thirty forty fifty sixty seventy eighty ninety".split()
ZH = "零一二三四五六七八九"


def en_number(n: int, sep: str = "-", and_: bool = True, article: bool = False) -> str:
    """English words for 0..1000, written independently of the module's grammar."""
    if n < 20:
        return ONES[n]
    if n < 100:
        t, u = divmod(n, 10)
        return TENS[t] + (sep + ONES[u] if u else "")
    if n == 1000:
        return "a thousand" if article else "one thousand"
    h, r = divmod(n, 100)
    head = "a hundred" if article and h == 1 else ONES[h] + " hundred"
    return head + ((" and " if and_ else " ") + en_number(r, sep) if r else "")


def zh_number(n: int, liang: bool = False) -> str:
    """Chinese numerals for 0..1000 (一百零五, 一百一十, 两百 with liang)."""
    if n < 10:
        return ZH[n]
    if n < 20:
        return "十" + (ZH[n - 10] if n > 10 else "")
    if n < 100:
        t, u = divmod(n, 10)
        return ZH[t] + "十" + (ZH[u] if u else "")
    if n == 1000:
        return "一千"
    h, r = divmod(n, 100)
    head = ("两" if liang and h == 2 else ZH[h]) + "百"
    if r == 0:
        return head
    if r < 10:
        return head + "零" + ZH[r]
    t, u = divmod(r, 10)
    return head + ZH[t] + "十" + (ZH[u] if u else "")


def number_corpus() -> list[tuple[str, int]]:
    """(text, value) for every integer 0..1000 in many spellings."""
    out = []
    for n in range(1001):
        out += [(str(n), n), (en_number(n, "-"), n), (en_number(n, " "), n), (en_number(n, "-", and_=False), n),
                (zh_number(n), n), ("".join(chr(ord(ch) + 0xFEE0) for ch in str(n)), n)]
        if n % 100 == 0 and n:
            out.append((en_number(n, article=True), n))
        if 200 <= n < 300:
            out.append((zh_number(n, liang=True), n))
        if n >= 1000 or n % 7 == 0:
            out.append((f"{n:,}", n))
    return out


def duration_corpus() -> list[tuple[str, str, dict]]:
    """(slot, span, expected values) in many forms, both languages."""
    out = []
    for h in range(1, 25):
        for slot, pre in (("hours", ""), ("start_hours", "start_")):
            for span in (f"{h} hours", f"{en_number(h)} hours", f"{zh_number(h)}小时", f"{zh_number(h)}个小时",
                         str(h), f"{h}h", f"{en_number(h, ' ')} hour"):
                out.append((slot, span, {pre + "hours": h}))
            for span in (f"{h} and a half hours", f"{en_number(h)} and a half hours", f"{h}.5 hours",
                         f"{zh_number(h) if h != 2 else '两'}个半小时", f"{zh_number(h)}小时半"):
                out.append((slot, span, {pre + "hours": h, pre + "minutes": 30}))
            for m in (5, 15, 30, 45):
                for span in (f"{h} hours and {m} minutes", f"{h} hour {m} minutes", f"{h} hours, {m} minutes",
                             f"{en_number(h)} hours and {en_number(m)} minutes",
                             f"{zh_number(h)}小时{zh_number(m)}分钟", f"{h}小时{m}分"):
                    out.append((slot, span, {pre + "hours": h, pre + "minutes": m}))
            out.append((slot, f"{zh_number(h)}小时零五分", {pre + "hours": h, pre + "minutes": 5}))
            out.append((slot, f"{h} hours 10 minutes 20 seconds",
                        {pre + "hours": h, pre + "minutes": 10, pre + "seconds": 20}))
    for m in range(1, 101):
        for span in (f"{m} minutes", f"{en_number(m)} minutes", f"{zh_number(m)}分钟", f"{m} mins", str(m)):
            out.append(("minutes", span, {"minutes": m}))
            out.append(("start_minutes", span, {"start_minutes": m}))
        for span in (f"{m} seconds", f"{en_number(m, ' ')} seconds", f"{zh_number(m)}秒", f"{m} sec"):
            out.append(("seconds", span, {"seconds": m}))
        if m < 60:
            out.append(("minutes", f"{m} minutes and a half", {"minutes": m, "seconds": 30}))
            out.append(("minutes", f"{zh_number(m)}分半", {"minutes": m, "seconds": 30}))
    for slot, span, exp in (
            ("hours", "an hour", {"hours": 1}), ("hours", "an hour and a half", {"hours": 1, "minutes": 30}),
            ("hours", "一个半小时", {"hours": 1, "minutes": 30}), ("hours", "一个小时", {"hours": 1}),
            ("minutes", "half an hour", {"minutes": 30}), ("hours", "half an hour", {"minutes": 30}),
            ("minutes", "半小时", {"minutes": 30}), ("minutes", "半个小时", {"minutes": 30}),
            ("minutes", "a minute and a half", {"minutes": 1, "seconds": 30}),
            ("seconds", "half a minute", {"seconds": 30}), ("minutes", "一分半钟", {"minutes": 1, "seconds": 30}),
            ("minutes", "ninety minutes", {"minutes": 90}), ("seconds", "九十秒", {"seconds": 90}),
            ("minutes", "一分钟三十秒", {"minutes": 1, "seconds": 30}), ("start_minutes", "a minute and a half",
                                                                  {"start_minutes": 1, "start_seconds": 30}),
            ("hours", "两个半小时", {"hours": 2, "minutes": 30}), ("hours", "1.5 hours", {"hours": 1, "minutes": 30}),
            ("delay_minutes", "an hour and a half", {"delay_hours": 1, "delay_minutes": 30}),
            ("delay_minutes", "500 minutes", {"delay_minutes": 500}),
            # no value: out of range, fractions other than halves, half a second, units out of order, two halves
            ("minutes", "1500 minutes", {}), ("seconds", "1.5 seconds", {}), ("hours", "1.25 hours", {}),
            ("hours", "5 minutes 2 hours", {}), ("hours", "an hour and a half and 10 minutes", {}),
            ("hours", "0 hours", {}), ("hours", "5 6", {}), ("hours", "a", {}), ("hours", "an", {}),
            # a bare half is Home Assistant's timer_half: "{timer_half:minutes} an hour"
            ("minutes", "half", {"minutes": 30}), ("seconds", "half", {"seconds": 30}),
            ("minutes", "半", {"minutes": 30}),
            ("start_minutes", "a half", {"start_minutes": 30}), ("hours", "half", {"minutes": 30}),
            ("minutes", "1.5", {"minutes": 1, "seconds": 30}), ("hours", "一个半", {"hours": 1, "minutes": 30}),
            ("hours", "一个", {"hours": 1}), ("seconds", "a", {}),
            # a bare "hour" or "minute" is one of it; "second" alone is mostly an ordinal, plurals need a number
            ("hours", "hour", {"hours": 1}), ("start_hours", "hour and a half", {"start_hours": 1, "start_minutes": 30}),
            ("minutes", "minute", {"minutes": 1}), ("minutes", "Minute and a half", {"minutes": 1, "seconds": 30}),
            ("seconds", "second", {}), ("hours", "hours", {}), ("minutes", "minutes", {}),
            ("hours", "hour 5 minutes", {"hours": 1, "minutes": 5}), ("temperature", "hour", {}),
            ("hours", "1 hour 5", {}), ("minutes", "a third of an hour", {}), ("hours", "一刻钟", {})):
        out.append((slot, span, exp))
    return out


FRAGMENTS = (ONES + TENS[2:] + ["hundred", "thousand", "a", "an", "and", "half", "point", "hour", "hours",
             "minute", "second", "minutes", "min", "seconds", "percent", "degrees", "%", "°", "℃", "-", ",", ".", " ", "  ", "the",
             "red", "Red", "up", "song", "tv show", "twenty-one", "1,000", "21.5", "0.5", "3", "40", "007", "1,00",
             "１２", "ｔｗｏ", "\u3000", "\t"]
             + list("零〇一二两三四五六七八九十百千万点半个度钟和分秒") + ["百分之", "小时", "钟头", "分钟", "秒钟",
                                                          "摄氏", "成", "刻", "红色", "绿", "电影", "很", "é", "😀"])


def random_corpus(rng: random.Random, n: int) -> list[bytes]:
    out = []
    for _ in range(n):
        parts = [rng.choice(FRAGMENTS) for _ in range(rng.randint(1, 7))]
        out.append((rng.choice(["", " "])).join(parts).encode())
    return out


def mutated_corpus(rng: random.Random, n: int) -> list[bytes]:
    """Valid numbers and durations with one piece dropped, doubled, swapped, inserted or replaced: the edges of
    the grammar, where a made-up value would hide."""
    valid = [t for t, _ in number_corpus()[::3]] + [span for _, span, _ in duration_corpus()]
    out = []
    for _ in range(n):
        text = rng.choice(valid)
        pieces = text.split(" ") if " " in text else list(text)
        k = rng.randrange(len(pieces))
        op = rng.randrange(5)
        if op == 0 and len(pieces) > 1:
            del pieces[k]
        elif op == 1:
            pieces.insert(k, pieces[k])
        elif op == 2 and len(pieces) > 1:
            j = rng.randrange(len(pieces))
            pieces[k], pieces[j] = pieces[j], pieces[k]
        elif op == 3:
            pieces.insert(k, rng.choice(FRAGMENTS))
        else:
            pieces[k] = rng.choice(FRAGMENTS)
        out.append((" " if " " in text else "").join(pieces).encode())
    return out


def byte_corpus(rng: random.Random, n: int) -> list[bytes]:
    """Random bytes, truncated UTF-8, stray continuation bytes, overlongs, surrogates, NUL."""
    out = [b"", b"\0", b"\xff", b"\xc0\xaf", b"\xed\xa0\x80", b"\xf4\x90\x80\x80", b"\xe4\xb8", b"\x80"]
    for _ in range(n):
        kind = rng.randrange(4)
        if kind == 0:
            out.append(bytes(rng.randrange(256) for _ in range(rng.randint(1, 40))))
        else:
            base = rng.choice(random_corpus(rng, 1) + [b"\xe4\xb8\x80\xe4\xb8\xaa\xe5\x8d\x8a\xe5\xb0\x8f\xe6\x97\xb6"])
            if kind == 1 and len(base) > 1:
                base = base[:rng.randrange(1, len(base))]          # truncated, often mid-character
            elif kind == 2:
                k = rng.randrange(len(base) + 1)
                base = base[:k] + bytes([rng.randrange(0x80, 0x100)]) + base[k:]
            else:
                base = bytes(b ^ (1 << rng.randrange(8)) if rng.random() < 0.1 else b for b in base)
            out.append(base)
    return out


def _twin(words, slot, span, max_out=S.VALUES_MAX):
    return S.slot_values_raw(words, slot, span, max_out)


# ---- hand-written expectations -------------------------------------------------------------------------------------
EXPECTED = [
    ("brightness", "twenty-one", {"brightness": 21}), ("brightness", "twenty one", {"brightness": 21}),
    ("brightness", "21", {"brightness": 21}), ("brightness", "40%", {"brightness": 40}),
    ("brightness", "40 %", {"brightness": 40}), ("brightness", "forty percent", {"brightness": 40}),
    ("brightness", "百分之三十", {"brightness": 30}), ("brightness", "百分之百", {"brightness": 100}),
    ("brightness", "a hundred", {"brightness": 100}), ("brightness", "one hundred", {"brightness": 100}),
    ("brightness", "五", {"brightness": 5}), ("brightness", "十五", {"brightness": 15}),
    ("brightness", "二十一", {"brightness": 21}), ("brightness", "两", {"brightness": 2}),
    ("brightness", "三个", {"brightness": 3}), ("brightness", "５０％", {"brightness": 50}),
    ("brightness", "  50  ", {"brightness": 50}), ("brightness", "FIFTY", {"brightness": 50}),
    ("count", "一百零五", {"count": 105}), ("count", "one hundred and five", {"count": 105}),
    ("count", "1,000", {"count": 1000}), ("count", "1,000,000", {"count": 1000000}),
    ("count", "一万二", {"count": 12000}), ("count", "两千", {"count": 2000}), ("count", "一千零五十", {"count": 1050}),
    ("count", "a thousand and one", {"count": 1001}), ("count", "nine hundred ninety-nine thousand",
                                                        {"count": 999000}),
    ("temperature", "21.5", {"temperature": 21.5}), ("temperature", "21.5 degrees", {"temperature": 21.5}),
    ("temperature", "二十一点五度", {"temperature": 21.5}), ("temperature", "二十一度半", {"temperature": 21.5}),
    ("temperature", "twenty one and a half degrees", {"temperature": 21.5}),
    ("temperature", "twenty one point five", {"temperature": 21.5}), ("temperature", "21.50", {"temperature": 21.5}),
    ("temperature", "21°C", {"temperature": 21}), ("temperature", "22℃", {"temperature": 22}),
    ("temperature", "half", {"temperature": 0.5}), ("offset", "-5", {}), ("offset", "4.5", {"offset": 4.5}),
    ("color", "红色", {"color": "red"}), ("color", "red", {"color": "red"}), ("color", "The Red", {"color": "red"}),
    ("color", " RED ", {"color": "red"}), ("color", "ｒｅｄ", {"color": "red"}), ("color", "绿", {"color": "green"}),
    ("color", "粉红色", {"color": "pink"}), ("color", "reddish", {}), ("color", "5", {}),
    ("media_class", "tv show", {"media_class": "tv_show"}),
    ("media_class", "the  TV   show", {"media_class": "tv_show"}),
    ("media_class", "song", {"media_class": "track"}), ("media_class", "电影", {"media_class": "movie"}),
    ("volume_step", "up", {"volume_step": "up"}), ("volume_step", "down", {"volume_step": "down"}),
    ("volume_step", "10", {"volume_step": 10}), ("volume_step", "ten percent", {"volume_step": 10}),
    ("volume_step", "大一点", {"volume_step": "up"}), ("volume_step", "sideways", {}),
    ("scene", "movie night", {"scene": "scene.movie"}), ("scene", "晚安", {"scene": "scene.good_night"}),
    ("search_query", "  the Beatles  ", {"search_query": "the Beatles"}),
    ("message", "we are leaving in five minutes", {"message": "we are leaving in five minutes"}),
    ("name", "\u3000客厅灯\u3000", {"name": "客厅灯"}), ("item", "   ", {}), ("item", "", {}),
    # never a made-up value
    ("brightness", "twenty twenty five percent", {}), ("brightness", "5 6", {}), ("brightness", "十十", {}),
    ("brightness", "a third", {}), ("brightness", "三成", {}), ("brightness", "a", {}), ("brightness", "-5", {}),
    ("brightness", "5-6", {}), ("brightness", "twenty eleven", {}), ("brightness", "zero five", {}),
    ("brightness", "二十两", {}), ("brightness", "三五", {}), ("brightness", "一百零", {}), ("brightness", "零五", {}),
    ("brightness", "21.3", {}), ("brightness", "101", {}), ("brightness", "percent", {}), ("brightness", "", {}),
    ("brightness", "fifteen hundred", {}), ("brightness", "1,00", {}), ("brightness", "5.", {}),
    ("count", "1,000,001", {}), ("count", "10000000", {}), ("count", "一千万", {}),
    ("temperature", "21.25", {}), ("temperature", "21.5.5", {}), ("unknown_slot", "5", {}),
]


@pytest.mark.parametrize("slot,span,expected", EXPECTED, ids=[f"{s}={t!r}" for s, t, _ in EXPECTED])
def test_expected_values(c, words, slot, span, expected):
    assert S.slot_values(words, slot, span) == expected
    assert c.values(slot, span) == _twin(words, slot, span)


def test_spec_dict_and_value_types(words):
    got = S.slot_values(SPEC, "hours", "一个半小时")
    assert got == {"hours": 1, "minutes": 30} and all(type(v) is int for v in got.values())
    assert type(S.slot_values(words, "temperature", "21.5")["temperature"]) is float
    assert S.slot_values(S.default_spec("zh-CN"), "color", "红色") == {"color": "red"}


def test_slots_that_take_a_number(c, words):
    """A number slot or a list slot that also takes a number (volume_step: "up", "down" or 20): where a number tagged
    under a slot the answer's intent does not take may go (tagging.fit_to_intent, the firmware's fit_values)."""
    got = {slot: S.slot_takes_number(words, slot) for slot in SLOTS}
    assert got == {slot: c.takes_number(slot) for slot in SLOTS}
    assert got["brightness"] and got["volume_step"] and got["temperature"]
    assert not got["color"] and not got["hours"] and not got["item"] and not got["unknown_slot"]


def test_number_bounds(c, words):
    """The range of a number slot: where fit_values sends a number when the intent has two empty number slots."""
    got = {slot: S.slot_number_bounds(words, slot) for slot in SLOTS}
    assert got == {slot: c.number_bounds(slot) for slot in SLOTS}
    assert got["brightness"] == got["position"] == (0, 100)
    assert got["count"] == (0, 1_000_000) and got["offset"] == (-50, 50)
    assert got["color"] is None and got["hours"] is None and got["unknown_slot"] is None


def test_parse_number(c):
    cases = {"21": 210, "21.5": 215, "21.3": 213, "twenty-one": 210, "一百零五": 1050, "百分之三十": 300,
             "半": 5, "a half": 5, "1,000": 10000, "一个半": 15, "two and a half": 25, "a": None, "5 6": None,
             "三成": None, "": None, b"\xff": None, "1000001": None, "一百万": 10_000_000}
    for text, want in cases.items():
        assert S.parse_number(text) == want, text
        assert c.parse_number(text) == want, text


def test_every_integer_in_words_and_numerals(c):
    """0..1000 in digits, English (hyphenated, spaced, with and without "and"), Chinese, full-width: C and Python
    both give the number itself."""
    corpus = number_corpus()
    assert len(corpus) > 6000
    bad = [(t, n, S.parse_number(t), c.parse_number(t)) for t, n in corpus
           if not (S.parse_number(t) == c.parse_number(t) == 10 * n)]
    assert not bad, bad[:10]


def test_numbers_in_slots_c_equals_python(c, words):
    rng = random.Random(5)
    slots = ["brightness", "temperature", "count", "volume_step", "offset", "minutes"]
    n = 0
    for text, value in number_corpus():
        for span in (text, f"{text}%", f"百分之{text}", f"{text} degrees", f"{text}度", f"{text} and a half"):
            slot = rng.choice(slots)
            got = c.values(slot, span)
            assert got == _twin(words, slot, span), (slot, span)
            n += 1
        assert S.slot_values(words, "count", text) == {"count": value}
    assert n > 30000


def test_durations(c, words):
    corpus = duration_corpus()
    assert len(corpus) > 1500
    for slot, span, expected in corpus:
        assert S.slot_values(words, slot, span) == expected, (slot, span)
        assert c.values(slot, span) == _twin(words, slot, span), (slot, span)


@pytest.mark.parametrize("slot, span, expected", [
    ("minutes", "1h 30m", {"hours": 1, "minutes": 30}), ("minutes", "1h30m", {"hours": 1, "minutes": 30}),
    ("seconds", "90s", {"seconds": 90}), ("minutes", "5m", {"minutes": 5}), ("hours", "2h", {"hours": 2}),
    ("hours", "30m", {"minutes": 30}), ("seconds", "1m 30s", {"minutes": 1, "seconds": 30}),
    ("minutes", "3 ms", {})])
def test_unit_letters_typed_after_a_number(c, words, slot, span, expected):
    """What people type in a hurry: the unit's letter glued to the number says which unit, whatever the tag."""
    assert S.slot_values(words, slot, span) == expected
    assert c.values(slot, span) == _twin(words, slot, span)


def test_temperatures_and_percentages(c, words):
    for tenths in range(0, 1001, 5):
        whole, half = divmod(tenths, 10)
        texts = [f"{whole}.{half}", f"{whole}.{half} degrees", f"{whole}.{half}°"]
        if half:
            texts += [f"{en_number(whole)} and a half", f"{zh_number(whole)}点五度", f"{zh_number(whole)}度半"]
        else:
            texts += [f"{en_number(whole)} degrees", f"{zh_number(whole)}度"]
        for t in texts:
            assert S.slot_values(words, "temperature", t) == {"temperature": tenths / 10 if half else whole}, t
            assert c.values("temperature", t) == _twin(words, "temperature", t)
    for p in range(0, 121):
        for t in (f"{p}%", f"{p} percent", f"百分之{zh_number(p) if p <= 100 else p}", f"{en_number(p)} percent"):
            want = {"brightness": p} if p <= 100 else {}
            assert S.slot_values(words, "brightness", t) == want, t
            assert c.values("brightness", t) == _twin(words, "brightness", t)


def test_lists_c_equals_python(c, words):
    for table in (S.COLORS, S.MEDIA_CLASSES, S.VOLUME_STEPS):
        slot = {id(S.COLORS): "color", id(S.MEDIA_CLASSES): "media_class", id(S.VOLUME_STEPS): "volume_step"}[id(table)]
        for lang_values in table.values():
            for text_in, out in lang_values.items():
                for span in (text_in, text_in.upper(), f" the {text_in} ", f"a {text_in}", f"{text_in}!",
                             f"an  {text_in}"):
                    got = c.values(slot, span)
                    assert got == _twin(words, slot, span), (slot, span)
                assert S.slot_values(words, slot, text_in) == {slot: out}
                assert S.slot_values(words, slot, f"The {text_in.upper()}") == {slot: out}


def test_random_token_soup_c_equals_python(c, words):
    rng = random.Random(11)
    for span in random_corpus(rng, 6000) + mutated_corpus(rng, 6000):
        slot = rng.choice(SLOTS)
        assert c.values(slot, span) == _twin(words, slot, span), (slot, span)
        assert c.parse_number(span) == S.parse_number(span), span


@pytest.mark.parametrize("text, tagged, whole", [
    ("start a timer for one hundred and twenty seconds", "one hundred", "one hundred and twenty seconds"),
    ("a timer for 2 and a half hours", "2", "2 and a half hours"),
    ("set it to twenty-two degrees please", "twenty", "twenty-two degrees"),    # one hyphen, then a unit word
    ("dim it to 50 and the fan to 3", "50", "50"),                            # never ends on "and"
    ("dim it to 50%", "50", "50%"),
    ("take 1/2 hour off", "1/2", "1/2 hour"),
    ("FIVE Minutes", "FIVE", "FIVE Minutes"),                                 # case folded, as the reader does
    ("5min", "5", "5min"),
    ("set a 30m timer", "30", "30m"),                                         # a unit letter glued to the number
    ("timer 1h 30m please", "1", "1h 30m"),
    ("about 10 -- 20 min", "10", "10"),                                       # two hyphens: not one number
    ("stop my 29-minutes timer", "29", "29"),               # a hyphen after digits: the reader reads no value there
    ("thirty-hours and 21-minute off", "thirty", "thirty-hours and 21"),   # up to the hyphen after digits
    ("一个半小时", "一个", "一个"),                                            # Chinese: as tagged
])
def test_number_extent(c, text, tagged, whole):
    raw, end = text.encode(), len(text[:text.index(tagged) + len(tagged)].encode())
    want = len(text[:text.index(whole) + len(whole)].encode())
    assert S.number_extent(raw, end) == want
    assert c.number_extent(text, end) == want
    if text.isascii():
        assert S.number_extent(text, end) == want                             # str indices: the same for ASCII


def test_number_extent_edges(c):
    for text, end in (("one", 3), ("one", 5), ("", 0), ("", 2)):              # at the end, past it, empty
        assert S.number_extent(text.encode(), end) == end == c.number_extent(text, end)


def test_number_extent_c_equals_python(c):
    rng = random.Random(5)
    for span in random_corpus(rng, 3000) + mutated_corpus(rng, 3000) + byte_corpus(rng, 2000):
        end = rng.randrange(len(span) + 2)
        assert c.number_extent(span, end) == S.number_extent(span, end), (span, end)


def test_random_bytes_c_equals_python(c, words):
    rng = random.Random(3)
    for span in byte_corpus(rng, 4000):
        slot = rng.choice(SLOTS)
        st, vals = c.values(slot, span)
        assert (st, vals) == _twin(words, slot, span), (slot, span)
        try:
            span.decode("utf-8")
        except UnicodeDecodeError:
            assert st == S.ERR_INVALID_UTF8 and not vals


def test_wildcard_cut_at_character_boundary(c, words):
    for span in ["x" * 100, "客厅" * 30, "a" + "客" * 30, "ab" + "😀" * 20, "x" * 63 + " y", " " * 70 + "z",
                 "x" * 64 + "   ", "é" * 40]:
        st, vals = c.values("search_query", span)
        assert (st, vals) == _twin(words, "search_query", span)
        text = vals[0].text
        assert len(text) <= S.TEXT_MAX and text.decode("utf-8") == text.decode("utf-8").strip()
        assert span.strip().encode().startswith(text)
        assert len(text) > S.TEXT_MAX - 4 or len(span.strip().encode()) == len(text)


def test_status_codes(c, words):
    assert c.values("hours", "an hour and a half", max_out=1) == (S.ERR_BUFFER_TOO_SMALL, [])
    assert _twin(words, "hours", "an hour and a half", max_out=1) == (S.ERR_BUFFER_TOO_SMALL, [])
    assert c.values("hours", "an hour and a half", max_out=2)[0] == S.OK
    assert c.values("unknown_slot", "5") == (S.OK, [])
    lib = c.lib
    n = ctypes.c_uint32(7)
    out = (Value * 3)()
    assert lib.bertl14_slot_values(None, b"hours", b"5", 1, out, 3, ctypes.byref(n)) == S.ERR_NULL_POINTER
    assert n.value == 0
    assert lib.bertl14_slot_values(c.table, b"hours", None, 0, out, 3, ctypes.byref(n)) == S.ERR_NULL_POINTER
    assert lib.bertl14_slot_values(c.table, b"hours", b"5", 1, out, 3, None) == S.ERR_NULL_POINTER
    bad = (ctypes.c_uint32 * 16)(*range(16))
    assert lib.bertl14_slot_values(bad, b"hours", b"5", 1, out, 3, ctypes.byref(n)) == S.ERR_INVALID_CONFIG
    assert _twin(list(range(16)), "hours", "5") == (S.ERR_INVALID_CONFIG, [])
    assert lib.bertl14_slot_table_validate(None) == S.ERR_NULL_POINTER
    for slot, t in (("hours", S.TYPE_DURATION), ("brightness", S.TYPE_NUMBER), ("color", S.TYPE_LIST),
                    ("search_query", S.TYPE_WILDCARD), ("unknown_slot", 0), ("delay_seconds", S.TYPE_DURATION)):
        assert c.slot_type(slot) == S.slot_type(words, slot) == t


def test_validate(c, words):
    assert c.validate() == S.validate_table(words) == S.OK
    for lang in S.LANGS:
        w = S.build_value_table(S.default_spec(lang))
        assert c.validate(w) == S.validate_table(w) == S.OK
    rng = random.Random(2)
    for k in range(len(words)):   # any changed word: the checksum (or a check before it) refuses the table
        w = list(words)
        w[k] ^= 1 << rng.randrange(32)
        assert c.validate(w) == S.validate_table(w) == S.ERR_INVALID_CONFIG, k


def _rechecksum(w: list[int]) -> list[int]:
    w = list(w)
    w[S.HDR_CHECKSUM] = (sum(w) - w[S.HDR_CHECKSUM]) & 0xFFFFFFFF
    return w


def test_validate_structure_with_valid_checksum(c, words):
    """Broken records with a matching checksum: the structural checks, C and Python alike."""
    first = S.HEADER_WORDS
    recs = {S.slot_type(words, n): k for k, n in reversed(list(enumerate(SPEC["slots"])))}
    cases = []
    w = list(words); w[first + S.S_INFO] = (w[first + S.S_INFO] & ~0xF) | 7; cases.append(w)        # bad type
    w = list(words); w[first + S.S_NAME] = 0xFFFFFF; cases.append(w)                                 # name outside pool
    w = list(words); w[first + S.S_MIN], w[first + S.S_MAX] = 5, 4; cases.append(w)                  # min > max
    k = first + S.SLOT_WORDS * recs[S.TYPE_DURATION]
    w = list(words); w[k + S.S_AUX] ^= 1; cases.append(w)                                            # sibling index
    k = first + S.SLOT_WORDS * recs[S.TYPE_LIST]
    w = list(words); w[k + S.S_COUNT] += 1; cases.append(w)                                          # entries overlap
    w = list(words); w[S.HDR_FLAGS] = 9; cases.append(w)                                             # language
    w = list(words); w[S.HDR_POOL_BYTES] += 8; cases.append(w)                                       # pool size
    for w in cases:
        w = _rechecksum(w)
        assert c.validate(w) == S.validate_table(w) == S.ERR_INVALID_CONFIG


# ---- ASan + UBSan ----------------------------------------------------------------------------------------------------
def _queries(items: list[tuple[int, str, bytes, int]]) -> bytes:
    out = bytearray()
    for op, slot, span, max_out in items:
        s = slot.encode()
        out += struct.pack("<BH", op, len(s)) + s + struct.pack("<I", len(span)) + span + struct.pack("<I", max_out)
    return bytes(out)


def _expected_line(words, op, slot, span, max_out) -> str:
    if op == 1:
        v = S.parse_number(span)
        return f"{int(v is not None)} {v or 0}"
    if op == 2:
        return str(S.slot_type(words, slot))
    st, vals = _twin(words, slot, span, max_out)
    return " ".join([str(st), str(len(vals))] + [f"{v.slot}|{v.kind}|{v.tenths}|{v.text.hex()}" for v in vals])


def test_sanitizers_random_bytes(tmp_path, words):
    """The module and a replay driver under -fsanitize=address,undefined: random bytes, truncated UTF-8, token soup,
    the whole duration corpus; each span in a heap block of exactly its length. Results equal the twin's."""
    flags = cbuild.compile_flags("portable", ("address", "undefined"), STRICT)
    exe = tmp_path / "slot_values_main"
    proc = subprocess.run([cbuild.compiler()] + [f for f in flags if f not in ("-fPIC", "-Wconversion")]
                          + ["-o", str(exe), str(HERE / "slot_values_main.c"), str(SRC)],
                          capture_output=True, text=True)
    if proc.returncode and "sanitize" in proc.stderr and ("cannot find" in proc.stderr or "asan" in proc.stderr):
        pytest.skip("the compiler has no ASan/UBSan runtime")
    assert proc.returncode == 0, proc.stderr
    rng = random.Random(7)
    items = []
    spans = byte_corpus(rng, 6000) + random_corpus(rng, 4000) + mutated_corpus(rng, 4000) \
        + [span.encode() for _, span, _ in duration_corpus()] + [t.encode() for t, _ in number_corpus()[::5]]
    for span in spans:
        items.append((rng.choice((0, 0, 0, 1, 2)), rng.choice(SLOTS), span, rng.choice((0, 1, 2, 3, 3, 3))))
    (tmp_path / "table.bin").write_bytes(struct.pack(f"<{len(words)}I", *words))
    (tmp_path / "queries.bin").write_bytes(_queries(items))
    run = subprocess.run([str(exe), str(tmp_path / "table.bin"), str(tmp_path / "queries.bin")], capture_output=True,
                         text=True, env={"ASAN_OPTIONS": "detect_leaks=0:abort_on_error=1",
                                         "UBSAN_OPTIONS": "print_stacktrace=1", "PATH": "/usr/bin:/bin"},
                         timeout=600)
    assert run.returncode == 0, run.stderr[-4000:]
    lines = run.stdout.splitlines()
    assert lines[-1] == "validate 0" and len(lines) == len(items) + 1
    for line, item in zip(lines, items):
        assert line == _expected_line(words, *item), (item, line)


# ---- the builder --------------------------------------------------------------------------------------------------
@pytest.mark.parametrize("spec", [
    {"lang": "fr", "slots": {}},
    {"lang": "en", "slots": {"x": {"type": "number", "min": 5, "max": 1}}},
    {"lang": "en", "slots": {"x": {"type": "number", "max": 2_000_000}}},
    {"lang": "en", "slots": {"x": {"type": "number", "step": 2}}},
    {"lang": "en", "slots": {"x": {"type": "duration"}}},
    {"lang": "en", "slots": {"hours": {"type": "duration"}, "minutes": {"type": "number"}}},
    {"lang": "en", "slots": {"hours": {"type": "duration", "halves": True}}},
    {"lang": "en", "slots": {"c": {"type": "list", "values": {}}}},
    {"lang": "en", "slots": {"c": {"type": "list", "values": {"Red": "red", "red": "rouge"}}}},
    {"lang": "en", "slots": {"c": {"type": "list", "values": {"  ": "red"}}}},
    {"lang": "en", "slots": {"c": {"type": "list", "values": {"x" * 300: "red"}}}},
    {"lang": "en", "slots": {"c": {"type": "unknown"}}},
    {"lang": "en", "slots": {"": {"type": "wildcard"}}},
    {"lang": "en", "slots": {"n" * 64: {"type": "wildcard"}}},
    {"slots": {"x": {"type": "wildcard"}}, "extra": 1},
])
def test_bad_specs(spec):
    with pytest.raises(UserError):
        S.build_value_table(spec)


def test_builder_details(words):
    w = S.build_value_table({"lang": "zh-CN", "slots": {
        "start_minutes": {"type": "duration"}, "c": {"type": "list", "values": {"Red": "red", "RED": "red"}}}})
    assert S.validate_table(w) == S.OK and w[S.HDR_FLAGS] == 1
    assert S.slot_type(w, "start_hours") == S.slot_type(w, "start_seconds") == S.TYPE_DURATION   # siblings added
    assert S.slot_values(w, "start_minutes", "90 seconds") == {"start_seconds": 90}
    assert S.slot_values(w, "c", "red") == {"c": "red"}
    assert w == S.build_value_table({"lang": "zh-CN", "slots": {"start_minutes": {"type": "duration"},
                                                                "c": {"type": "list", "values": {"Red": "red"}}}})
    assert S.default_spec("zh-CN")["slots"].keys() == S.default_spec("en")["slots"].keys()
    assert 4 * len(words) < 4096


def test_render_c_compiles(tmp_path, words):
    src = tmp_path / "table.c"
    src.write_text(S.render_c(words, "my_slot_table", source="spec.yaml"))
    main = tmp_path / "main.c"
    main.write_text('#include "bertl14_slots.h"\nextern const uint32_t my_slot_table[];\n'
                    'int main(void) {\n  bertl14_slot_value_t v[3]; uint32_t n;\n'
                    '  if (bertl14_slot_table_validate(my_slot_table) != BERTL14_OK) return 1;\n'
                    '  if (bertl14_slot_values(my_slot_table, "hours", "an hour and a half", 18, v, 3, &n)) return 2;\n'
                    '  return n == 2 && v[0].value_tenths == 10 && v[1].value_tenths == 300 ? 0 : 3;\n}\n')
    exe = tmp_path / "m"
    subprocess.run([cbuild.compiler(), "-std=c99", "-Wall", "-Wextra", "-Werror", f"-I{REPO / 'bertl14/include'}",
                    "-o", str(exe), str(main), str(src), str(SRC)], check=True)
    assert subprocess.run([str(exe)]).returncode == 0
    with pytest.raises(UserError):
        S.render_c(words, "not an identifier")


# ---- code size on the device -------------------------------------------------------------------------------------
@pytest.mark.skipif(shutil.which("arm-none-eabi-gcc") is None, reason="arm-none-eabi-gcc not installed")
def test_cortex_m7_code_size(tmp_path):
    obj = tmp_path / "slots.o"
    subprocess.run(["arm-none-eabi-gcc", "-Os", "-mcpu=cortex-m7", "-mthumb", "-std=c99", "-Wall", "-Wextra",
                    "-Werror", "-ffunction-sections", "-fdata-sections", f"-I{REPO / 'bertl14/include'}", "-c",
                    "-o", str(obj), str(SRC)], check=True)
    line = subprocess.run(["arm-none-eabi-size", str(obj)], capture_output=True, text=True,
                          check=True).stdout.splitlines()[1].split()
    text, data, bss = int(line[0]), int(line[1]), int(line[2])
    print(f"\nbertl14_slot_values.c, arm-none-eabi-gcc -Os -mcpu=cortex-m7 -mthumb: text {text} B, data {data} B, "
          f"bss {bss} B")
    assert data == 0 and bss == 0
    assert text <= 6 * 1024


# ---- values the words carry: negated slots, list words that are numbers, halves written 1/2, punctuation -----------
WORDS_SPEC = {"lang": "en", "slots": {
    "volume_step": {"type": "list", "values": {"up": "up", "down": "down"}, "number": {"min": 0, "max": 100}},
    "volume_step_down": {"type": "number", "min": 0, "max": 100, "negate": True, "report": "volume_step"},
    "brightness": {"type": "list", "values": {"max": "100", "min": "1", "half brightness": "50"},
                   "number": {"min": 0, "max": 100}},
    "temperature": {"type": "list", "values": {"daylight": "6500"}, "number": {"min": 0, "max": 10000,
                                                                                "halves": True}},
    "minutes": {"type": "duration", "max": 999}, "item": {"type": "wildcard"}}}
WORDS_EXPECTED = [
    ("volume_step_down", "20", {"volume_step": -20}), ("volume_step_down", "twenty percent", {"volume_step": -20}),
    ("volume_step_down", "120", {}), ("volume_step", "down", {"volume_step": "down"}),
    ("volume_step", "20", {"volume_step": 20}),
    ("brightness", "max", {"brightness": 100}), ("brightness", "Half  Brightness", {"brightness": 50}),
    ("brightness", "42", {"brightness": 42}), ("temperature", "daylight", {"temperature": 6500}),
    ("temperature", "2700 k", {}), ("temperature", "2700", {"temperature": 2700}),
    ("temperature", "21.5", {"temperature": 21.5}),
    ("minutes", "34 and 1/2 minutes", {"minutes": 34, "seconds": 30}), ("minutes", "1/2 hour", {"minutes": 30}),
    ("minutes", "1/23 minutes", {}), ("minutes", "one hundred and twenty", {"minutes": 120}),
    ("item", "coffee,", {"item": "coffee"}), ("item", "  oat milk. ", {"item": "oat milk"}),
    ("item", "，燕麦奶。", {"item": "燕麦奶"}), ("item", "salt, pepper", {"item": "salt, pepper"}), ("item", ",.", {}),
]


@pytest.mark.parametrize("slot,span,expected", WORDS_EXPECTED)
def test_values_the_words_carry(slot, span, expected):
    words = S.build_value_table(WORDS_SPEC)
    assert S.validate_table(words) == S.OK
    assert S.slot_values(words, slot, span) == expected
    c = CSlots(words, S.build_library(extra_flags=STRICT))
    assert c.values(slot, span) == _twin(words, slot, span)
    assert c.lib.bertl14_slot_table_validate(c.table) == S.OK


def test_a_negated_slot_must_report_another_slot():
    for bad in ({"negate": True}, {"negate": True, "report": "nowhere"}, {"negate": True, "report": "x"},
                {"report": "volume_step"}, {"negate": "yes", "report": "volume_step"}):
        spec = {"lang": "en", "slots": {"volume_step": {"type": "number"}, "x": {"type": "number", **bad}}}
        with pytest.raises(UserError):
            S.build_value_table(spec)
    words = S.build_value_table(WORDS_SPEC)
    k = next(i for i in range(words[S.HDR_N_SLOTS]) if S._table(tuple(words)).cname(i) == "volume_step_down")
    rec = S.HEADER_WORDS + k * S.SLOT_WORDS
    for aux in (k, words[S.HDR_N_SLOTS]):          # itself, or past the table: rejected by both validators
        bad = list(words)
        bad[rec + S.S_AUX] = aux
        bad[S.HDR_CHECKSUM] = (sum(bad) - bad[S.HDR_CHECKSUM]) & 0xFFFFFFFF
        assert S.validate_table(bad) == S.ERR_INVALID_CONFIG
        c = CSlots(bad, S.build_library(extra_flags=STRICT))
        assert c.lib.bertl14_slot_table_validate(c.table) == S.ERR_INVALID_CONFIG
