"""Slot accuracy: did the engine (or the device) report the name / area / floor a test sentence expects?

    expected_slots(record) -> {"name": "Kitchen Light", "area": "Kitchen"}   the record's name/area/floor values
    score = SlotScore()
    score.add(expected, found, registry)      found: kind -> display name the engine/device reported
    score.eligible, score.correct, score.accuracy, score.as_dict()

The rule (docs/registry.md, "Slot accuracy"): values are compared as registry OBJECTS, not as strings. An
expected value is resolved to the registry's objects of its kind whose name or an alias normalises like it
(`registry.name_key`, the matcher's normalisation): "lounge" expected and "Living Room" reported agree when
"lounge" is an alias of the Living Room. A reported display name is resolved the same way; the two agree when
they resolve to a common object (two entities may share a name in different areas). Expected values the
registry does not know (timer names such as "pizza", a name of another kind) are not counted.

A sentence is eligible when at least one of its expected values is known; it is correct when every known
expected value is reported, right. Per kind, each known expected value counts once (`per_kind`); `name_area`
is the same sentence rule over name and area only (the names a sentence refers to).
Reported names nobody expected are counted apart (`unexpected`), they do not change the accuracy.
"""
from __future__ import annotations

from dataclasses import dataclass, field

from ..registry import names as R

KINDS = ("name", "area", "floor")
_KIND_OF_KEY = {v: k for k, v in R.KIND_KEYS.items()}   # "name" -> KIND_NAME ...


def expected_slots(record: dict) -> dict[str, str]:
    """The name/area/floor values a test record expects (its "slots"); a list value counts by its first item."""
    slots = record.get("slots") or {}
    out = {}
    if not isinstance(slots, dict):
        return out
    for key in KINDS:
        v = slots.get(key)
        if isinstance(v, list):
            v = next((x for x in v if isinstance(x, str)), None)
        if isinstance(v, str) and v.strip():
            out[key] = v
    return out


class _Index:
    """normalised name or alias -> indices of the objects of one kind (built once per registry)."""

    def __init__(self, reg: R.Registry, lower: bool, strip: bool, chinese: bool):
        self.opts = (lower, strip, chinese)
        self.by_kind: dict[str, dict[str, set[int]]] = {}
        for key in KINDS:
            table: dict[str, set[int]] = {}
            kind = _KIND_OF_KEY[key]
            for i, it in enumerate(reg.items(kind)):
                implied = R.match_texts(kind, it)[1]    # the bare numeral of a floor stays: expectations use it
                for text in [it.name] + list(it.aliases) + implied:
                    k = R.name_key(text, *self.opts)
                    if k:
                        table.setdefault(k, set()).add(i)
            self.by_kind[key] = table

    def resolve(self, kind: str, value: str) -> set[int]:
        return self.by_kind[kind].get(R.name_key(value, *self.opts), set())


@dataclass
class SlotScore:
    """Accumulates slot accuracy over sentences (see the module doc for the rules).

    lower/strip/chinese: the normalisation of the matcher (the model's tokenizer options)."""
    lower: bool = True
    strip: bool = True
    chinese: bool = True
    sentences: int = 0           # sentences added
    eligible: int = 0            # sentences with at least one expected value the registry knows
    correct: int = 0             # ... of which every known value was reported right
    unknown: int = 0             # expected values the registry does not know (not counted)
    unexpected: int = 0          # reported kinds the sentence expects nothing for
    per_kind: dict = field(default_factory=lambda: {k: {"eligible": 0, "correct": 0} for k in KINDS})
    name_area: dict = field(default_factory=lambda: {"eligible": 0, "correct": 0})
    errors: list = field(default_factory=list)   # (expected, found) of the first wrong sentences
    _index: tuple | None = field(default=None, repr=False)

    def _lookup(self, registry: R.Registry) -> _Index:
        if self._index is None or self._index[0] is not registry:
            self._index = (registry, _Index(registry, self.lower, self.strip, self.chinese))
        return self._index[1]

    def add(self, expected: dict, found: dict, registry: R.Registry) -> bool | None:
        """Score one sentence. Returns True/False (right/wrong), None when not eligible."""
        idx = self._lookup(registry)
        self.sentences += 1
        self.unexpected += sum(1 for k in found if k in KINDS and k not in expected)
        known = known_na = 0
        right = right_na = True
        for kind, value in expected.items():
            if kind not in KINDS:
                continue
            want = idx.resolve(kind, value)
            if not want:
                self.unknown += 1
                continue
            known += 1
            got = found.get(kind)
            ok = isinstance(got, str) and bool(want & idx.resolve(kind, got))
            self.per_kind[kind]["eligible"] += 1
            self.per_kind[kind]["correct"] += ok
            right &= ok
            if kind != "floor":
                known_na += 1
                right_na &= ok
        if known_na:
            self.name_area["eligible"] += 1
            self.name_area["correct"] += right_na
        if not known:
            return None
        self.eligible += 1
        self.correct += right
        if not right and len(self.errors) < 20:
            self.errors.append((dict(expected), dict(found)))
        return right

    @property
    def accuracy(self) -> float | None:
        return self.correct / self.eligible if self.eligible else None

    def as_dict(self) -> dict:
        def acc(c, n):
            return round(c / n, 6) if n else None
        return {"eligible": self.eligible, "correct": self.correct,
                "accuracy": acc(self.correct, self.eligible),
                "per_kind": {k: dict(v, accuracy=acc(v["correct"], v["eligible"])) for k, v in self.per_kind.items()},
                "name_area": dict(self.name_area, accuracy=acc(self.name_area["correct"], self.name_area["eligible"])),
                "not_in_registry": self.unknown, "unexpected": self.unexpected}


# The slots whose values the model's tagger reads (the registry answers name/area/floor; domain, device_class and
# state come with the intent's template): durations, numbers, colours, lists, wildcards.
VALUE_SLOTS = ("hours", "minutes", "seconds", "start_hours", "start_minutes", "start_seconds", "brightness",
               "temperature", "percentage", "volume_level", "volume_step", "position", "color", "item",
               "search_query", "media_class", "message")


def expected_values(record: dict) -> dict:
    """The value slots (VALUE_SLOTS) a test record expects."""
    slots = record.get("slots") or {}
    return {k: slots[k] for k in VALUE_SLOTS if isinstance(slots, dict) and k in slots} if isinstance(slots, dict) \
        else {}


def same_value(expected, found) -> bool:
    """Numbers compare as numbers (5 == 5.0, "5" == 5), texts case-insensitively without outer spaces."""
    def number(v):
        if isinstance(v, bool):
            return None
        if isinstance(v, (int, float)):
            return float(v)
        try:
            return float(str(v).strip())
        except ValueError:
            return None
    a, b = number(expected), number(found)
    if a is not None or b is not None:
        return a is not None and b is not None and a == b
    return str(expected).strip().casefold() == str(found).strip().casefold()


@dataclass
class ValueScore:
    """Sentence-level exact match over the value slots: a sentence whose intent is right and that expects at least
    one value slot is correct when every expected value slot is answered with its value. `accuracy` is the share of
    those sentences (how well the values are read where the intent is); `end_to_end` the share of every sentence
    that expects a value slot, whatever its intent (the commands with values a device carries out as meant): a
    model that answers more intents right is judged on more values by the first, on the same sentences by the
    second."""
    with_values: int = 0                             # sentences that expect a value slot
    eligible: int = 0                                # ... of which the intent is right
    correct: int = 0                                 # ... and every expected value slot is answered right
    per_slot: dict = field(default_factory=dict)     # slot -> [right, expected]

    def add(self, expected: dict, found: dict, intent_right: bool) -> None:
        if not expected:
            return
        self.with_values += 1
        if not intent_right:
            return
        self.eligible += 1
        ok = True
        for key, value in expected.items():
            right = key in found and same_value(value, found[key])
            counts = self.per_slot.setdefault(key, [0, 0])
            counts[0] += right
            counts[1] += 1
            ok &= right
        self.correct += ok

    def as_dict(self) -> dict:
        def share(n):
            return round(self.correct / n, 6) if n else None
        return {"eligible": self.eligible, "correct": self.correct, "accuracy": share(self.eligible),
                "with_values": self.with_values, "end_to_end": share(self.with_values),
                "per_slot": {k: {"right": r, "expected": n} for k, (r, n) in sorted(self.per_slot.items())}}
