"""`bertl14 dataset`: labelled intent sentences from Home Assistant's templates (and the user's own).

The templates of the `home-assistant-intents` package (hassil syntax) are expanded by a seeded random
walk instead of hassil's full enumeration, whose size is skewed by thousands to one between intents:
each intent gets up to `--per-intent` distinct sentences. Slots are filled from our own lists in
`bertl14_tools/data/slots-<lang>.yaml` (device names matching the domain the template block is scoped
to, areas, floors, wildcard phrases); numbers are written as digits or as words. Every sentence keeps
its slots as structured values (`{"name": ..., "area": ...}`), so a later pass can mask names.

A sentence produced under two intents is dropped from both and counted. Out-of-domain sentences
(`data/ood-<lang>.txt`, ours) become the `none` class, split by a hash of the sentence: half for
training, a quarter in the validation split (it chooses the score threshold and the model), a quarter
held out in `ood.jsonl` (the out-of-domain test set: measured, never used to choose anything). Same arguments and seed, same files, byte for byte.
"""
from __future__ import annotations

import hashlib
import json
import random
import re
import sys
import unicodedata
from dataclasses import dataclass, field
from pathlib import Path

from ..errors import UserError
from ..registry.domains import INTENT_DOMAINS_FILE, NONE_LABEL

DATA_DIR = Path(__file__).parent   # the hand-written data files beside this module (package data)
LANGUAGES = ("en", "zh-CN")
SPACED_LANGUAGES = ("en",)   # words between spaces: a name matches whole words only
ENTITY_LISTS = ("name", "area", "floor")   # registry lists: filled from our lists, maskable (docs/registry.md)
# `--mask-names`: the placeholder the device's registry matcher writes in place of a known name
# (registry.PLACEHOLDERS: "[NAME]", "[AREA]", "[FLOOR]"; the name's bytes replaced, no spaces added).
PLACEHOLDERS = {"name": "[NAME]", "area": "[AREA]", "floor": "[FLOOR]"}
# While a sentence is generated, an entity value is wrapped in private-use marks (start mark per list, one end
# mark), so that the same cleaned sentence yields the plain text and the masked text.
_MARK_START = {"name": "\ue001", "area": "\ue002", "floor": "\ue003"}
_MARK_END = "\ue00f"
# Every slot value (entities, numbers, list and wildcard phrases) is also wrapped in a span mark pair; the i-th
# span start belongs to the i-th slot the walk filled, which gives each slot its character span in the text.
_SPAN_START, _SPAN_END = "\ue010", "\ue011"
_MARKS = "\ue001-\ue011"
_CJK = "\u3000-\u9fff\uff00-\uffef"

# domains for `{name}` in blocks that are not scoped to a domain
DEFAULT_NAME_DOMAINS = {
    "HassTurnOn": ["light", "switch", "fan", "media_player", "input_boolean"],
    "HassTurnOff": ["light", "switch", "fan", "media_player", "input_boolean"],
    "HassGetState": ["light", "switch", "fan", "cover", "lock", "sensor"],
    "HassClimateGetTemperature": ["climate"],
    "HassClimateSetTemperature": ["climate"],
    "HassClimateSetFanMode": ["climate"],
    "HassFanSetSpeed": ["fan"],
    "HassLightSet": ["light"],
    "HassSetPosition": ["cover", "valve"],
    "HassVacuumStart": ["vacuum"],
    "HassVacuumReturnToBase": ["vacuum"],
    "HassVacuumCleanArea": ["vacuum"],
    "HassLawnMowerStartMowing": ["lawn_mower"],
    "HassLawnMowerDock": ["lawn_mower"],
    "HassGetWeather": ["weather"],
}
MEDIA_INTENT_PREFIXES = ("HassMedia", "HassSetVolume")


def normalize(text: str) -> str:
    """The key sentences are compared by: lower case, NFKC, single spaces, no space between CJK characters."""
    text = unicodedata.normalize("NFKC", text).lower().strip()
    text = re.sub(r"\s+", " ", text)
    return re.sub(r"(?<=[\u3000-\u9fff\uff00-\uffef]) (?=[\u3000-\u9fff\uff00-\uffef])", "", text)


def clean_text(text: str) -> str:
    """A generated sentence as we store it: single spaces, none between CJK characters."""
    text = re.sub(r"\s+", " ", text).strip()
    return re.sub(r"(?<=[\u3000-\u9fff\uff00-\uffef]) (?=[\u3000-\u9fff\uff00-\uffef])", "", text)


def clean_marked(text: str) -> str:
    """`clean_text` of a sentence whose entity values carry marks: spaces are removed between CJK characters
    as if the marks were not there, so that stripping the marks gives exactly `clean_text` of the plain text."""
    text = re.sub(r"\s+", " ", text).strip()
    pattern = re.compile(rf"(?<=[{_CJK}])([{_MARKS}]*) ([{_MARKS}]*)(?=[{_CJK}])")
    while True:     # a lookbehind cannot skip marks of any length: repeat until stable
        cleaned = pattern.sub(r"\1\2", text)
        if cleaned == text:
            return cleaned
        text = cleaned


def split_marked(text: str) -> tuple[str, str | None]:
    """(plain text, masked text or None when the sentence names no entity) of a marked sentence."""
    plain = re.sub(rf"[{_MARKS}]", "", text)
    if plain == text:
        return plain, None
    masked = text
    for kind, start in _MARK_START.items():
        masked = re.sub(rf"{start}[^{_MARK_END}]*{_MARK_END}", lambda _m, k=kind: PLACEHOLDERS[k], masked)
    return plain, masked


# A duration's span covers its unit word too ("5 minutes", "an hour", "两个小时"): the unit says which slot the
# number fills, and the device's value table reads it (docs/slots.md), so the tagger learns number and unit as one.
DURATION_SLOTS = ("hours", "minutes", "seconds", "start_hours", "start_minutes", "start_seconds")
_UNIT_AFTER = re.compile(r" ?(?:hours?|hrs?|minutes?|mins?|seconds?|secs?)\b|(?:个小时|个钟头|小时|钟头|分钟|分|秒钟|秒)")


def with_units(text: str, spans: list) -> list:
    """`spans` with every duration span extended over the unit word right after it."""
    out = []
    for a, b, slot in spans:
        m = _UNIT_AFTER.match(text, b) if slot in DURATION_SLOTS else None
        out.append([a, m.end() if m else b, slot])
    return out


def split_marked_spans(text: str, span_slots: list[str]) -> tuple[str, list, str | None, list]:
    """`split_marked` of a sentence whose slot values also carry span marks, with the character spans
    `[start, end, slot]` of the slots in the plain and in the masked text (the span of a masked name is its
    placeholder). `span_slots`: the slot name of each span start, in order. Spaces at a span's edges are not
    part of it."""
    masked = split_marked(text)[1] if any(m in text for m in _MARK_START.values()) else None

    def spans_of(marked: str) -> tuple[str, list]:
        out, spans, opened, k = [], [], [], 0
        for ch in marked:
            if ch == _SPAN_START:
                opened.append((len(out), span_slots[k] if k < len(span_slots) else None))
                k += 1
            elif ch == _SPAN_END:
                start, slot = opened.pop()
                end = len(out)
                while start < end and out[start] == " ":
                    start += 1
                while end > start and out[end - 1] == " ":
                    end -= 1
                if slot is not None and end > start:
                    spans.append([start, end, slot])
            elif not "\ue001" <= ch <= "\ue011" and not (ch == " " and (not out or out[-1] == " ")):
                out.append(ch)    # marks removed, spaces they separated collapsed as clean_text does
        while out and out[-1] == " ":
            out.pop()
        n = len(out)
        spans = [[a, min(b, n), slot] for a, b, slot in spans if a < n]
        plain = "".join(out)
        return plain, sorted(with_units(plain, spans))

    plain_text, plain_spans = spans_of(text)
    if masked is None:
        return plain_text, plain_spans, None, []
    masked_text, masked_spans = spans_of(masked)
    return plain_text, plain_spans, masked_text, masked_spans


def mask_chosen(text: str, seed: int, fraction: float) -> bool:
    """Whether the name-bearing sentence `text` (plain) is written masked: a hash of the seed and the
    normalized sentence against `fraction`, so the choice is deterministic for the seed and does not move
    the random walk."""
    if fraction <= 0:
        return False
    if fraction >= 1:
        return True
    digest = hashlib.sha256(f"{seed}\0{normalize(text)}".encode("utf-8")).digest()
    return int.from_bytes(digest[:8], "big") < fraction * 2 ** 64


def check_lang(lang: str) -> str:
    if lang not in LANGUAGES:
        raise UserError(f"unsupported language {lang!r}: use one of {', '.join(LANGUAGES)}")
    return lang


def load_slot_values(lang: str) -> dict:
    import yaml
    path = DATA_DIR / f"slots-{check_lang(lang)}.yaml"
    with open(path, encoding="utf-8") as f:
        values = yaml.safe_load(f)
    values["areas"] = [str(v) for v in values["areas"]]
    values["floors"] = [str(v) for v in values["floors"]]
    values["names"] = {d: [str(v) for v in names] for d, names in values["names"].items()}
    values["wildcards"] = {k: [str(v) for v in phrases] for k, phrases in values["wildcards"].items()}
    values["compose"] = {k: [str(v) for v in vs] for k, vs in (values.get("compose") or {}).items()}
    return values


def read_lines(path: Path | str, what: str = "data file") -> list[str]:
    """The lines of a UTF-8 text file (ours, or the user's), stripped, without blank lines and `#` comments; a
    missing or unreadable file is a UserError that names it as `what`."""
    from ..textio import read_text
    lines = read_text(path, what).splitlines()
    return [line.strip() for line in lines if line.strip() and not line.startswith("#")]


def load_name_words(lang: str) -> list[str]:
    """General words for composed names (`data/name-words-<lang>.txt`; none for a language without the file)."""
    path = DATA_DIR / f"name-words-{check_lang(lang)}.txt"
    return read_lines(path) if path.exists() else []


def device_words(names: dict[str, list[str]]) -> dict[str, list[str]]:
    """domain -> the last words of its listed names ("lamp", "fan", "blinds"): what a made-up name ends with."""
    return {d: sorted({n.split()[-1] for n in ns}) for d, ns in names.items()}


class NameComposer:
    """Names and areas as users make them up (`--compose-names`): "corner lamp", "emma's fan", "sunroom fan",
    "falcon lamp", "lamp 2", "rosie", "upstairs bathroom". The device words of a domain are the last words of
    its listed names, so the composed names stay in the domain a template is scoped to."""

    FORMS = ("modifier", "owner", "area", "word", "number", "nickname", "modified")
    # sensors are named for what they measure ("what is outdoor humidity"): a random word there makes any question
    # ("what is the capital of france") read like a sensor query, so only descriptive forms for these domains
    DESCRIPTIVE_ONLY = frozenset({"sensor", "binary_sensor", "climate"})
    # a bare made-up word is a name people give robots and people ("start rosie"); for other devices a device word
    # stays in the name ("falcon lamp"), so that "open the camera app" does not read like "open <a cover>"
    NICKNAMED = frozenset({"vacuum", "lawn_mower", "person"})

    def __init__(self, values: dict, words: list[str], rng: random.Random):
        c = values.get("compose") or {}
        self.rng, self.values, self.words = rng, values, words
        self.modifiers, self.owners = c.get("modifiers", []), c.get("owners", [])
        self.area_modifiers = c.get("area_modifiers", [])
        self.heads = device_words(values["names"])
        if not (self.modifiers and self.owners and self.words):
            raise UserError("--compose-names needs a compose: section (modifiers, owners, area_modifiers) in "
                            f"{DATA_DIR}/slots-<lang>.yaml and a name-words-<lang>.txt word list")

    def _owner(self) -> str:
        o = self.rng.choice(self.owners)
        return o if o in PRONOUNS else (o + "'" if o.endswith("s") else o + "'s")

    def name(self, domain: str) -> str:
        r, heads = self.rng, self.heads.get(domain) or ["device"]
        forms = self.FORMS if domain in self.NICKNAMED else tuple(f for f in self.FORMS if f != "nickname")
        if domain in self.DESCRIPTIVE_ONLY:
            forms = ("modifier", "owner", "area", "number", "modified")
        form = r.choice(forms) if domain != "person" else "nickname"
        head = r.choice(heads)
        if form == "modifier":
            return f"{r.choice(self.modifiers)} {head}"
        if form == "owner":
            return f"{self._owner()} {head}"
        if form == "area":
            return f"{r.choice(self.values['areas'])} {head}"
        if form == "word":
            return f"{r.choice(self.words)} {head}"
        if form == "number":
            n = r.randrange(1, 10)
            return f"{head} {n if r.random() < 0.5 else NUMBER_WORDS[n]}"
        if form == "modified":
            return f"{r.choice(self.modifiers)} {r.choice(self.values['names'][domain])}"
        return " ".join(r.choice(self.words) for _ in range(1 if r.random() < 0.7 else 2))

    def area(self) -> str:
        r = self.rng
        if r.random() < 0.25:
            return r.choice(self.words)
        return f"{r.choice(self.area_modifiers)} {r.choice(self.values['areas'])}"


PRONOUNS = ("my", "our", "her", "his", "their")
NUMBER_WORDS = ("zero", "one", "two", "three", "four", "five", "six", "seven", "eight", "nine")


OOD_FILES = ("ood-{lang}.txt", "ood-extra-{lang}.txt", "ood-more-{lang}.txt", "ood-nearby-{lang}.txt",
             "ood-beside-{lang}.txt", "ood-household-{lang}.txt",
             "ood-talk-{lang}.txt", "ood-wider-{lang}.txt",
             "ood-around-{lang}.txt", "ood-aside-{lang}.txt")  # in the order they were written


def load_ood(lang: str) -> list[str]:
    """Our out-of-domain sentences for `lang`, in file order (`OOD_FILES`: the first must exist, later batches may
    not). Each sentence's split is a hash of its own text, so a new file never moves an existing sentence."""
    paths = [DATA_DIR / name.format(lang=check_lang(lang)) for name in OOD_FILES]
    return [line for i, path in enumerate(paths) if i == 0 or path.exists() for line in read_lines(path)]


def load_user_ood(paths: list[str]) -> list[str]:
    """The out-of-domain sentences of the user's own text files (`--ood`: one a line, `#` comments, UTF-8), in file
    order. They join ours and are split like them, by a hash of each sentence."""
    sentences = []
    for path in paths:
        own = read_lines(path, "out-of-domain file")
        if not own:
            raise UserError(f"out-of-domain file {path} has no sentences: write one sentence a line "
                            "(lines starting with # are comments)")
        sentences += own
    return sentences


def load_intents(lang: str, extra_files: list[str] | None = None, builtin: bool = True,
                 wildcards: dict | None = None):
    """hassil `Intents` for Home Assistant's `lang` templates plus the user's YAML files. `wildcards`, when given,
    receives the phrases of the files' `wildcards:` sections (list name -> phrases: what fills a `wildcard: true`
    list of the file when sentences are generated)."""
    from hassil.intents import Intents
    from hassil.util import merge_dict

    from . import intents_file

    merged: dict = {}
    if builtin:
        import home_assistant_intents
        merged = home_assistant_intents.get_intents(lang)
        if merged is None:
            raise UserError(f"home-assistant-intents has no templates for {lang!r}")
        merged = json.loads(json.dumps(merged))  # own copy: merge_dict edits in place
    for name in extra_files or []:
        user = intents_file.load(name)   # UTF-8, YAML, every intent with sentences, every template parses
        check_intents_file(name, user, lang, wildcards)
        user = {k: v for k, v in user.items() if k != "wildcards"}     # ours, not hassil's
        merge_dict(merged, user)
    merged.setdefault("language", lang)
    merged.setdefault("intents", {})
    try:
        return Intents.from_dict(merged)
    except Exception as exc:  # hassil parse errors carry the template
        raise UserError(f"cannot parse the intent templates: {exc}") from exc


def same_language(a: str, b: str) -> bool:
    """`zh-CN`, `zh_cn` and `zh-cn` name one language."""
    return str(a).replace("_", "-").lower() == str(b).replace("_", "-").lower()


def check_intents_file(name: str, user: dict, lang: str, wildcards: dict | None) -> None:
    """An intents file's own checks: its `language:` is the one asked for, its `wildcards:` section (our extension:
    list name -> example phrases) is a mapping of lists of phrases; the phrases go to `wildcards`."""
    if user.get("language") is not None and not same_language(user["language"], lang):
        raise UserError(f"{name} is for language {user['language']!r}, not {lang!r}: make the data with "
                        f"--lang {user['language']} or write the file's sentences in {lang}")
    section = user.get("wildcards") or {}
    if not isinstance(section, dict) or not all(isinstance(v, list) and v for v in section.values()):
        raise UserError(f"{name}: 'wildcards:' must map each wildcard list to its phrases "
                        "(e.g. wildcards: {dish: [pizza, roast chicken]})")
    if wildcards is not None:
        for list_name, phrases in section.items():
            wildcards.setdefault(str(list_name), []).extend(str(p) for p in phrases)


@dataclass
class Sample:
    text: str
    intent: str
    slots: dict = field(default_factory=dict)
    masked_text: str | None = None     # the text with entity values replaced by placeholders (None: no entity)
    spans: list = field(default_factory=list)          # [start, end, slot] character spans of the slots in text
    masked_spans: list = field(default_factory=list)   # the same in masked_text


class Expander:
    """Seeded random walk through hassil templates; slot values from our lists."""

    def __init__(self, intents, lang: str, slot_values: dict, rng: random.Random, compose_names: float = 0.0,
                 wildcard_words: float = 0.0):
        self.intents = intents
        self.lang = lang
        self.values = slot_values
        self.rng = rng
        self._numbers = None
        self.compose_names = compose_names
        self.composer = NameComposer(slot_values, load_name_words(lang), rng) if compose_names > 0 else None
        # open-ended values (a song, a shopping item, a message) are any words: this fraction of the wildcard fills
        # are 1-3 general words, so that the sentence's frame, not its value, decides the intent
        self.wildcard_words = wildcard_words
        self.general_words = load_name_words(lang) if wildcard_words > 0 else []
        self.word_joint = "" if lang == "zh-CN" else " "     # Chinese writes words without spaces

    # -- slot values -------------------------------------------------------------
    def entity_value(self, list_name: str, domains: list[str]) -> str:
        """A name, area or floor surface text (the hook name masking replaces)."""
        # no extra draw without --compose-names: older data commands keep their exact output
        compose = self.composer is not None and self.rng.random() < self.compose_names
        if list_name == "area":
            return self.composer.area() if compose else self.rng.choice(self.values["areas"])
        if list_name == "floor":
            return self.rng.choice(self.values["floors"])
        names = self.values["names"]
        usable = [d for d in domains if names.get(d)] or sorted(names)
        domain = self.rng.choice(usable)
        return self.composer.name(domain) if compose else self.rng.choice(names[domain])

    def number_text(self, number) -> str:
        if self.rng.random() < 0.5 or (not float(number).is_integer() and self.lang != "en"):
            text = f"{number:g}" if isinstance(number, float) else str(number)
            return text
        if self._numbers is None:
            from hassil.numbers import get_rbnf_engine
            self._numbers = get_rbnf_engine(self.lang)
        words = self._numbers.format_number(number).text_by_ruleset
        text = words.get("spellout-cardinal") or next(iter(words.values()))
        if self.lang == "en" and "-" in text and self.rng.random() < 0.5:
            text = text.replace("-", " ")
        return text

    # -- expression walk ---------------------------------------------------------
    def walk(self, expr, ctx: dict) -> str:
        from hassil.expression import (Alternative, ListReference, Permutation, RuleReference,
                                       Sequence, TextChunk)

        if isinstance(expr, TextChunk):
            return expr.original_text if expr.original_text is not None else expr.text
        if isinstance(expr, Alternative):
            return self.walk(self.rng.choice(expr.items), ctx)
        if isinstance(expr, Permutation):
            items = list(expr.items)
            self.rng.shuffle(items)
            return " ".join(self.walk(item, ctx) for item in items)
        if isinstance(expr, Sequence):
            return "".join(self.walk(item, ctx) for item in expr.items)
        if isinstance(expr, RuleReference):
            rule = ctx["rules"].get(expr.rule_name)
            if rule is None:
                raise UserError(f"template uses undefined rule <{expr.rule_name}>: define it in expansion_rules")
            return self.walk(rule.expression, ctx)
        if isinstance(expr, ListReference):
            ctx["span_slots"].append(tag_slot(expr, ctx["lists"]))
            return _SPAN_START + self.list_text(expr, ctx) + _SPAN_END
        raise UserError(f"unsupported template expression {type(expr).__name__}")

    def list_text(self, expr, ctx: dict) -> str:
        """The text of a `{list}` reference; its value goes to ctx["slots"]."""
        from hassil.intents import RangeSlotList, TextSlotList, WildcardSlotList
        name, slot = expr.list_name, expr.slot_name
        if name in ENTITY_LISTS:
            text = self.entity_value(name, ctx["domains"])
            ctx["slots"][slot] = text
            return _MARK_START[name] + text + _MARK_END
        slot_list = ctx["lists"].get(name)
        if isinstance(slot_list, WildcardSlotList) or (slot_list is None and name in self.values["wildcards"]):
            phrases = self.values["wildcards"].get(name)
            if not phrases:
                raise UserError(f"no phrases for wildcard {{{name}}}: add examples of what it stands for to your "
                                f"intents file (wildcards: {{{name}: [phrase, another phrase]}})")
            text = self.rng.choice(phrases)
            if self.wildcard_words > 0 and self.rng.random() < self.wildcard_words:   # no draw when off
                text = self.word_joint.join(self.rng.choice(self.general_words)
                                            for _ in range(self.rng.randint(1, 3)))
            ctx["slots"][slot] = text
            return text
        if isinstance(slot_list, TextSlotList):
            value = self.rng.choice(slot_list.values)
            ctx["slots"][slot] = value.value_out
            return self.walk(value.text_in, ctx)
        if isinstance(slot_list, RangeSlotList):
            numbers = list(slot_list.get_numbers())
            number = self.rng.choice(numbers)
            ctx["slots"][slot] = scaled(number, slot_list.multiplier)
            return self.number_text(number)
        raise UserError(f"template uses undefined list {{{name}}}: define it under lists:")

    def templates(self, intent_name: str):
        """(intent data block, sentence) pairs of an intent."""
        intent = self.intents.intents[intent_name]
        return [(data, sentence) for data in intent.data for sentence in data.sentences]

    def sample(self, intent_name: str, data, sentence) -> Sample:
        domains = sorted(block_domains(data))
        if not domains:
            domains = DEFAULT_NAME_DOMAINS.get(intent_name) or (
                ["media_player"] if intent_name.startswith(MEDIA_INTENT_PREFIXES) else [])
        ctx = {
            "rules": {**self.intents.expansion_rules, **data.expansion_rules},
            "lists": {**self.intents.slot_lists, **data.slot_lists},
            "domains": domains,
            "slots": {},
            "span_slots": [],
        }
        text, spans, masked, masked_spans = split_marked_spans(clean_marked(self.walk(sentence.expression, ctx)),
                                                               ctx["span_slots"])
        slots = {k: v for k, v in ctx["slots"].items()}
        for key, value in data.slots.items():      # fixed slots of the block (domain, ...)
            slots.setdefault(key, value)
        return Sample(text=text, intent=intent_name, slots=slots, masked_text=masked, spans=spans,
                      masked_spans=masked_spans)


def scaled(number, multiplier):
    """A range list's value: the number said times the list's multiplier (Home Assistant's volume_step_down: -1)."""
    if multiplier is None or multiplier == 1:
        return number
    value = number * multiplier
    return int(value) if float(value).is_integer() else value


def tag_slot(expr, lists: dict) -> str:
    """The slot the tagger learns for a `{list:slot}` span: the slot, or the list's own name for a range list with a
    negative multiplier ("turn the volume down by {volume_step_down:volume_step}"): the direction is in the words
    around the number, so only a tag of its own can carry it; the value table answers it as the slot, negated
    (slot_spec's "negate")."""
    from hassil.intents import RangeSlotList
    found = lists.get(expr.list_name)
    if isinstance(found, RangeSlotList) and found.multiplier is not None and found.multiplier < 0:
        return expr.list_name
    return expr.slot_name


def block_domains(data) -> set[str]:
    """Domains a template block is scoped to (hassil >= 3 computes them; older hassil: from its slots)."""
    if hasattr(data, "domains"):
        return set(data.domains)
    found: set[str] = set()
    for source in (data.slots, data.requires_context):
        value = source.get("domain")
        found.update([value] if isinstance(value, str) else list(value or []))
    return found


# Home Assistant's handlers of these intents act on an entity of any domain (turn on/off any entity, the state of
# any entity): a registry's domains never rule them out, whatever domains their templates happen to name.
ANY_DOMAIN_INTENTS = ("HassTurnOn", "HassTurnOff", "HassGetState")


def intent_domains(lang: str, extra_files: list[str] | None = None) -> dict[str, list[str]]:
    """intent -> the device domains its templates accept for `{name}`: over the template blocks whose sentences
    reference the `name` list, the domains `Expander.sample` fills that name from (the block's own, else
    DEFAULT_NAME_DOMAINS, else media_player for the media intents). Intents whose templates never take a {name},
    or take one of any domain (a block with none of these, or ANY_DOMAIN_INTENTS), are left out: a registry's domains
    never filter them (the firmware's domain rule, docs/registry.md). Written to the model folder as
    intent_domains.json."""
    from hassil.expression import ListReference, RuleReference
    intents = load_intents(lang, extra_files)

    def takes_name(expr, rules: dict, seen: tuple = ()) -> bool:
        if isinstance(expr, ListReference):
            return expr.list_name == "name"
        if isinstance(expr, RuleReference):
            rule = rules.get(expr.rule_name)
            return rule is not None and expr.rule_name not in seen and \
                takes_name(rule.expression, rules, seen + (expr.rule_name,))
        return any(takes_name(item, rules, seen) for item in getattr(expr, "items", None) or [])

    out: dict[str, list[str]] = {}
    for intent_name, intent in sorted(intents.intents.items()):
        domains: set[str] = set()
        named, unscoped = False, False
        for data in intent.data:
            rules = {**intents.expansion_rules, **data.expansion_rules}
            if not any(takes_name(s.expression, rules) for s in data.sentences):
                continue
            named = True
            found = block_domains(data) or set(DEFAULT_NAME_DOMAINS.get(intent_name) or (
                ["media_player"] if intent_name.startswith(MEDIA_INTENT_PREFIXES) else []))
            unscoped |= not found
            domains |= found
        if named and not unscoped and intent_name not in ANY_DOMAIN_INTENTS:
            out[intent_name] = sorted(domains)
    return out


def generated_ood_rows(lang: str, count: int, seed: int, taken: set[str]) -> list[dict]:
    """Up to `count` distinct out-of-domain training sentences from `data/ood-frames-<lang>.txt` (`none`, training
    only, `"generated": true`), none equal to a sentence of `taken` (normalized in-domain and written ones).
    Drawn from their own random stream, so the template sentences do not move."""
    path = DATA_DIR / f"ood-frames-{check_lang(lang)}.txt"
    if not path.exists():
        raise UserError(f"--ood-generated: no {path.name} for {lang}: write sentence frames there or leave it at 0")
    frames = read_lines(path)
    values, words = load_slot_values(lang), load_name_words(lang)
    devices = sorted({w for ws in device_words(values["names"]).values() for w in ws}
                     | {n for ns in values["names"].values() for n in ns})
    people = [o for o in values["compose"].get("owners", []) if " " not in o and o not in PRONOUNS] or ["alice"]
    fills = {"word": lambda r: r.choice(words),
             "words": lambda r: " ".join(r.choice(words) for _ in range(r.randint(1, 3))),
             "device": lambda r: r.choice(devices), "area": lambda r: r.choice(values["areas"]),
             "person": lambda r: r.choice(people),
             "place": lambda r: r.choice(values["wildcards"].get("zone") or ["paris"]),
             "number": lambda r: str(r.randint(1, 100))}
    rng = random.Random(f"ood-generated-{seed}")
    out, seen = [], set(taken)
    for _ in range(count * 5):
        if len(out) >= count:
            break
        frame = rng.choice(frames)
        try:
            text = re.sub(r"\{(\w+)\}", lambda m: fills[m.group(1)](rng), frame)
        except KeyError as exc:
            raise UserError(f"{path.name}: unknown slot {{{exc.args[0]}}} in {frame!r}") from None
        key = normalize(text)
        if key not in seen:
            seen.add(key)
            out.append({"text": text, "intent": NONE_LABEL, "slots": {}, "generated": True})
    return out


# The name lists whose names a home's registry matches in everyday talk about the home ("our dishwasher is so loud",
# "the kitchen clock is fast"): devices and areas. The lists of to-do lists, scenes, scripts and helpers are mostly
# plain words ("reading", "relax", "car") that a sentence uses in their plain sense.
OOD_MASK_DOMAINS = ("light", "switch", "fan", "cover", "valve", "lock", "climate", "media_player", "vacuum",
                    "lawn_mower", "sensor", "binary_sensor")


class OodNameMasker:
    """An out-of-domain sentence as a device with a registry reads it: the device names and areas of the name lists
    (slots-<lang>.yaml, OOD_MASK_DOMAINS) it contains become [NAME] / [AREA], longest first, whole words for a
    language with spaces. A matched name says nothing of whether the sentence is a command; the model learns that
    from these sentences."""

    def __init__(self, lang: str, values: dict):
        names = {n for d in OOD_MASK_DOMAINS for n in values["names"].get(d, [])}
        phrases = sorted(({n: "[NAME]" for n in names} | {a: "[AREA]" for a in values["areas"]}).items(),
                         key=lambda kv: (-len(kv[0]), kv[0]))
        self.placeholder = {k.lower(): v for k, v in phrases}
        words = "|".join(re.escape(k) for k, _ in phrases)
        edge = (r"(?<!\w)", r"(?!\w)") if lang in SPACED_LANGUAGES else ("", "")
        self.pattern = re.compile(f"{edge[0]}({words}){edge[1]}", re.IGNORECASE)

    def __call__(self, text: str) -> str | None:
        """The masked sentence, or None when it names nothing of the lists."""
        masked = self.pattern.sub(lambda m: self.placeholder[m.group(1).lower()], text)
        return masked if masked != text else None


def ood_part(text: str) -> str:
    """The split an out-of-domain sentence belongs to, from a hash of its normalized text: a quarter
    `test` (ood.jsonl, only measured), a quarter `validation` (chooses the score threshold and the model),
    half `train`. Independent of the seed and of the other sentences, so adding sentences to the file
    never moves an existing one to another split."""
    digest = hashlib.sha256(normalize(text).encode("utf-8")).digest()
    return OOD_PARTS[digest[0] % len(OOD_PARTS)]


OOD_PARTS = ("test", "validation", "train", "train")


@dataclass
class Dataset:
    train: list[dict]
    validation: list[dict]
    ood_eval: list[dict]
    stats: dict
    handwritten: list[dict] = field(default_factory=list)
    natural: dict = field(default_factory=dict)


def build_dataset(lang: str, per_intent: int = 1000, seed: int = 0, intent_files: list[str] | None = None,
                  builtin: bool = True, val_fraction: float = 0.1, ood: bool = True,
                  only_intents: list[str] | None = None, mask_names: float = 0.0,
                  compose_names: float = 0.0, ood_generated: int = 0, wildcard_words: float = 0.0,
                  split: str = "hash", mask_ood_names: float = 0.0, ood_files: list[str] | None = None) -> Dataset:
    """`mask_names`: the fraction of name-bearing sentences (a `{name}`, `{area}` or `{floor}` in the template)
    written with placeholders instead of the names (chosen by `mask_chosen`). With a fraction above 0 the
    validation split holds both forms of each of its name-bearing sentences (a masked and an unmasked
    validation part), unless that form is a training sentence. Name-bearing rows carry `"masked": true|false`.
    `mask_ood_names`: the fraction of the out-of-domain training sentences naming a device or area of the name lists
    (OodNameMasker) also written masked, as a device with a registry reads them, chosen by `mask_chosen`
    (generated ones are written masked instead); the validation split then holds both forms of each of its
    out-of-domain sentences that names one. The held-out ood.jsonl stays as written.
    `ood_files`: the user's own out-of-domain sentences (text files, one a line), added to ours and split the
    same way (`ood_part`); a sentence ours already has counts once."""
    check_lang(lang)
    if ood_files and not ood:
        raise UserError("--ood adds sentences to the out-of-domain class that --no-ood leaves out: give one of them")
    if not 0 <= mask_names <= 1:
        raise UserError("--mask-names must be a fraction in [0, 1] (e.g. 0.5: half the name-bearing sentences masked)")
    if not 0 <= wildcard_words <= 1:
        raise UserError("--wildcard-words must be a fraction in [0, 1] (e.g. 0.5)")
    if wildcard_words > 0 and not load_name_words(lang):
        raise UserError(f"--wildcard-words needs a word list: write data/name-words-{lang}.txt (one word a line)")
    if not 0 <= mask_ood_names <= 1:
        raise UserError("--mask-ood-names must be a fraction in [0, 1] (e.g. 0.5)")
    if not 0 <= compose_names <= 1:
        raise UserError("--compose-names must be a fraction in [0, 1] (e.g. 0.5: half the names made up)")
    if per_intent < 1:
        raise UserError("--per-intent must be at least 1")
    if not 0 <= val_fraction < 1:
        raise UserError("--val-fraction must be in [0, 1)")
    rng = random.Random(seed)
    user_wildcards: dict[str, list[str]] = {}
    intents = load_intents(lang, intent_files, builtin, wildcards=user_wildcards)
    names = sorted(intents.intents)
    # the intents the user's files define or extend (their templates are the user's to fix)
    own = names if not builtin else sorted(load_intents(lang, intent_files, False).intents) if intent_files else []
    if only_intents:
        names = [n for n in names if n in set(only_intents)]
    if not names:
        raise UserError("no intents to expand: check --intents files")
    values = load_slot_values(lang)
    values["wildcards"] = {**values["wildcards"], **user_wildcards}    # the intents files' phrases first
    expander = Expander(intents, lang, values, rng, compose_names, wildcard_words)

    # 1. up to per_intent distinct sentences an intent, templates drawn uniformly
    by_intent: dict[str, dict[str, Sample]] = {}
    for name in names:
        templates = expander.templates(name)
        found: dict[str, Sample] = {}
        attempts, max_attempts = 0, 20 * per_intent + 200
        while templates and len(found) < per_intent and attempts < max_attempts:
            data, sentence = templates[rng.randrange(len(templates))]
            sample = expander.sample(name, data, sentence)
            if sample.masked_text is not None and mask_chosen(sample.text, seed, mask_names):
                sample.text, sample.masked_text = sample.masked_text, sample.text   # masked_text: the other form
                sample.spans, sample.masked_spans = sample.masked_spans, sample.spans
                sample.slots["masked"] = True
            found.setdefault(normalize(sample.text), sample)
            attempts += 1
        by_intent[name] = found

    # 2. a sentence under two labels is dropped everywhere
    owners: dict[str, set[str]] = {}
    for name, found in by_intent.items():
        for key in found:
            owners.setdefault(key, set()).add(name)
    ood_sentences = load_ood(lang) if ood else []
    user_ood = load_user_ood(ood_files) if ood_files else []
    seen_ood = {normalize(t) for t in ood_sentences}
    for text in user_ood:
        if (key := normalize(text)) not in seen_ood:
            seen_ood.add(key)
            ood_sentences.append(text)
    for text in ood_sentences:
        owners.setdefault(normalize(text), set()).add(NONE_LABEL)
    conflicts = sorted(key for key, labels in owners.items() if len(labels) > 1)
    conflict_set = set(conflicts)

    # 3. stratified split, deterministic
    train, validation = [], []
    per_intent_counts = {}
    other_forms = []      # (sample, other form) of name-bearing validation sentences
    for name in names:
        rows = [s for key, s in by_intent[name].items() if key not in conflict_set]
        if not rows:
            raise UserError(empty_intent_message(name, by_intent[name], owners))
        per_intent_counts[name] = len(rows)
        val_index = validation_rows(rows, validation_count(len(rows), val_fraction), seed, split)
        for i, s in enumerate(rows):
            slots = {k: v for k, v in s.slots.items() if k != "masked"}
            row = {"text": s.text, "intent": s.intent, "slots": slots, "spans": s.spans}
            if mask_names > 0 and s.masked_text is not None:    # "masked" only on name-bearing rows
                row["masked"] = bool(s.slots.get("masked"))
            (validation if i in val_index else train).append(row)
            if i in val_index and mask_names > 0 and s.masked_text is not None:
                other_forms.append((row, s.masked_text, s.masked_spans))
    # both forms of a name-bearing validation sentence, unless the other form is taken (a training sentence,
    # another validation sentence, or a sentence of another label)
    taken = {normalize(r["text"]) for r in train + validation}
    added_forms = 0
    for row, text, spans in other_forms:
        key = normalize(text)
        if key in taken or owners.get(key, {row["intent"]}) != {row["intent"]}:
            continue
        taken.add(key)
        validation.append({**row, "text": text, "spans": spans, "masked": not row["masked"]})
        added_forms += 1
    ood_eval = []
    masker = OodNameMasker(lang, values) if ood and mask_ood_names > 0 else None
    ood_masked = {"train": 0, "validation": 0, "train_generated": 0}
    masked_forms = []     # (split, row): appended after the shuffles, so the other sentences keep their places

    def masked_form(text: str) -> dict | None:
        """The out-of-domain sentence as a registry reads it, unless that form is another label's sentence."""
        masked = masker(text) if masker else None
        if masked is None or owners.get(normalize(masked), {NONE_LABEL}) != {NONE_LABEL} \
                or normalize(masked) in taken:
            return None
        taken.add(normalize(masked))
        return {"text": masked, "intent": NONE_LABEL, "slots": {}, "masked": True, "of": text}
    if ood:
        kept = [t for t in ood_sentences if normalize(t) not in conflict_set]
        n_ood = {}
        for text in kept:
            part = ood_part(text)
            n_ood[part] = n_ood.get(part, 0) + 1
            row = {"text": text, "intent": NONE_LABEL, "slots": {}}
            if part == "test":
                ood_eval.append(row)          # ood.jsonl: measured, never used to choose anything
            elif part == "validation":
                validation.append(row)        # out-of-domain validation: threshold and model choice
                if masker and (other := masked_form(text)):     # both forms, as the in-domain names
                    masked_forms.append(("validation", other))
            else:
                train.append(row)
                if masker and mask_chosen(text, seed, mask_ood_names) and (other := masked_form(text)):
                    masked_forms.append(("train", other))
        per_intent_counts[NONE_LABEL] = n_ood.get("train", 0)
    rng.shuffle(train)
    rng.shuffle(validation)
    for split_name, row in masked_forms:
        (train if split_name == "train" else validation).append(row)
        ood_masked[split_name] += 1
    # appended after the shuffles (their own random stream): the other sentences keep their places
    generated = generated_ood_rows(lang, ood_generated, seed, set(owners)) if ood and ood_generated > 0 else []
    for row in generated if masker else []:
        masked = masker(row["text"])
        if masked is not None and mask_chosen(row["text"], seed, mask_ood_names) \
                and owners.get(normalize(masked), {NONE_LABEL}) == {NONE_LABEL}:
            row.update(text=masked, masked=True)
            ood_masked["train_generated"] += 1
    train += generated
    stats = {
        "lang": lang, "seed": seed, "per_intent": per_intent, "val_fraction": val_fraction, "split": split,
        "intent_files": list(intent_files or []), "builtin_intents": builtin, "ood": ood,
        "intents": len(names), "train": len(train), "validation": len(validation), "ood_eval": len(ood_eval),
        "ood_split": {"train": per_intent_counts.get(NONE_LABEL, 0),
                      "validation": sum(r["intent"] == NONE_LABEL for r in validation), "test": len(ood_eval)},
        "conflicts_dropped": len(conflicts), "conflict_examples": conflicts[:20], "intents_from_files": own,
        "sentences_per_label": per_intent_counts,
    }
    if mask_names > 0:
        stats["mask_names"] = mask_names
        stats["masked"] = {"train": sum(bool(r.get("masked")) for r in train),
                           "validation": sum(bool(r.get("masked")) for r in validation),
                           "validation_other_forms_added": added_forms}
    if ood_files:
        stats["ood_files"] = list(ood_files)
        stats["ood_from_files"] = len(user_ood)
    if masker:
        stats["mask_ood_names"] = mask_ood_names
        stats["ood_masked"] = ood_masked
    if compose_names > 0:
        stats["compose_names"] = compose_names
    if wildcard_words > 0:
        stats["wildcard_words"] = wildcard_words
    if generated:
        stats["ood_generated"] = ood_generated
        stats["ood_split"]["train_generated"] = len(generated)
    natural = load_natural(lang) if builtin else {}
    if natural:
        stats["natural"] = {k: len(v) for k, v in natural.items()}
    return Dataset(train, validation, ood_eval, stats, load_handwritten(lang) if builtin else [], natural)


# Every intent's validation part has at least this many sentences (fewer when the intent has under 3 x as many),
# so that each intent is measured on its own (`bertl14 train` checks each one against a floor).
MIN_VALIDATION = 3
# `bertl14 train` refuses an intent with fewer distinct sentences than MIN_SENTENCES (a few sentences cannot teach
# it, nor measure it) and warns below FEW_SENTENCES.
MIN_SENTENCES = 10
FEW_SENTENCES = 30


def validation_count(n: int, val_fraction: float) -> int:
    """How many of an intent's `n` sentences go to the validation split: `val_fraction` of them, at least
    MIN_VALIDATION (at most a third of them, at least one when there are two); none when `val_fraction` is 0."""
    if val_fraction <= 0 or n < 2:
        return 0
    return max(int(n * val_fraction), min(MIN_VALIDATION, max(1, n // 3)))


SPLITS = ("hash", "first")


def validation_rows(rows: list, n_val: int, seed: int, split: str) -> set[int]:
    """The indexes of an intent's `n_val` validation sentences among its `rows` (in the order the walk found them):
    `hash`, those with the smallest hash of seed and sentence, so every template has its share in training and in
    validation; `first`, the first found (the split of the shipped models' data: the few sentences of a short
    template are found first, and so all went to validation)."""
    if split == "first":
        return set(range(n_val))
    if split != "hash":
        raise UserError(f"--split {split!r}: use one of {', '.join(SPLITS)}")
    rank = sorted(range(len(rows)), key=lambda i: hashlib.sha256(
        f"split\0{seed}\0{normalize(rows[i].text)}".encode("utf-8")).digest())
    return set(rank[:n_val])


def empty_intent_message(name: str, found: dict, owners: dict[str, set[str]]) -> str:
    """Why an intent has no sentence left, and what to do."""
    if not found:
        return f"intent {name} yields no sentence: give it sentences (data: - sentences: [...])"
    others = sorted({o for key in found for o in owners.get(key, ()) if o != name})
    said = ", ".join("the out-of-domain sentences" if o == NONE_LABEL else o for o in others)
    example = next(iter(found.values())).text
    return (f"every sentence of intent {name} is also a sentence of {said} (e.g. {example!r}), so none is left: "
            "make its templates tell it apart")


def unseen_name_rows(rows: list[dict], lang: str) -> list[dict]:
    """Validation sentences with names the model never saw: each masked row of `rows` with its placeholders
    filled from `data/unseen-names-<lang>.yaml` (ours, none of them in the training lists; a name of the
    sentence's domain when the list has one), as a device without a registry meets a user's own names.
    Deterministic (a hash of the sentence picks the names)."""
    import yaml
    path = DATA_DIR / f"unseen-names-{check_lang(lang)}.yaml"
    if not path.exists():
        return []
    unseen = yaml.safe_load(path.read_text(encoding="utf-8"))
    known = load_slot_values(lang)
    seen = {normalize(v) for v in known["areas"] + known["floors"]} | {
        normalize(v) for names in known["names"].values() for v in names}
    fresh = lambda values: [str(v) for v in values or [] if normalize(str(v)) not in seen]   # noqa: E731
    areas, floors = fresh(unseen.get("areas")), fresh(unseen.get("floors"))
    names = {d: fresh(v) for d, v in (unseen.get("names") or {}).items()}
    every_name = [v for d in sorted(names) for v in names[d]]
    out, taken = [], set()
    for row in rows:
        if not row.get("masked"):
            continue
        rng = random.Random(hashlib.sha256(normalize(row["text"]).encode("utf-8")).digest())
        domain = row.get("slots", {}).get("domain")
        domains = [domain] if isinstance(domain, str) else list(domain or []) or DEFAULT_NAME_DOMAINS.get(
            row["intent"], ["media_player"] if row["intent"].startswith(MEDIA_INTENT_PREFIXES)
            else ["todo"] if row["intent"].startswith("HassList") else [])
        pool = [v for d in domains for v in names.get(d, [])] or every_name
        choices = {"[NAME]": pool, "[AREA]": areas, "[FLOOR]": floors}
        text = re.sub(r"\[(NAME|AREA|FLOOR)\]", lambda m: rng.choice(choices[m.group(0)] or ["x"]), row["text"])
        if normalize(text) not in taken:
            taken.add(normalize(text))
            out.append({"text": text, "intent": row["intent"], "slots": {}, "unseen_names": True})
    return out


def load_handwritten(lang: str) -> list[dict]:
    """Our hand-written in-domain validation sentences (`data/handwritten-<lang>.jsonl`: written by us, not
    from the templates nor the public test), or [] when there is no such file."""
    path = DATA_DIR / f"handwritten-{check_lang(lang)}.jsonl"
    return read_jsonl(path) if path.exists() else []


def list_phrases(expr) -> list[str]:
    """Every text a (small) hassil list expression can be written as: "(track|song)" -> ["track", "song"]."""
    from hassil.expression import Alternative, Permutation, Sequence, TextChunk
    if isinstance(expr, TextChunk):
        return [expr.original_text if expr.original_text is not None else expr.text]
    if isinstance(expr, Alternative):
        return [p for item in expr.items for p in list_phrases(item)]
    if isinstance(expr, (Sequence, Permutation)):
        out = [""]
        for item in expr.items:
            out = [a + b for a in out for b in list_phrases(item)][:64]
        return out
    return []


def slot_spec(lang: str, slots, intent_files: list[str] | None = None, builtin: bool = True) -> dict:
    """The value table spec (slot_values.build_value_table) of the slots a model tags, from the lists the templates
    fill each slot from, on top of Home Assistant's slots as slot_values.default_spec has them (builtin):
    - a range list: a number in its range (a built-in number slot's range widens to cover it: a light's colour
      temperature in kelvin as well as a thermostat's degrees);
    - a text list: its phrases and values ("max" -> 100 for brightness; a number slot then takes both);
    - a range list with a negative multiplier, tagged under its own name (tag_slot): a number answered as its
      slot, negated ("negate", "report");
    - a wildcard or a registry list: the text.
    Written to the model folder as slots.json; the converter compiles it for the device."""
    from hassil.expression import ListReference, RuleReference
    from hassil.intents import RangeSlotList, TextSlotList
    from ..model.slot_values import default_spec
    spec = default_spec(lang) if builtin else {"lang": lang, "slots": {}}
    wanted = sorted(set(slots))
    intents = load_intents(lang, intent_files, builtin)
    sources: dict[str, list] = {}        # tagged slot name -> the lists that fill it
    reported: dict[str, str] = {}        # tagged slot name -> the slot it answers

    def visit(expr, lists: dict, rules: dict, seen: tuple = ()) -> None:
        if isinstance(expr, ListReference):
            tag = tag_slot(expr, lists)
            sources.setdefault(tag, []).append(lists.get(expr.list_name, expr.list_name))
            reported[tag] = expr.slot_name
        elif isinstance(expr, RuleReference):
            rule = rules.get(expr.rule_name)
            if rule is not None and expr.rule_name not in seen:
                visit(rule.expression, lists, rules, seen + (expr.rule_name,))
        for item in getattr(expr, "items", None) or []:
            visit(item, lists, rules, seen)

    for intent in intents.intents.values():
        for data in intent.data:
            lists = {**intents.slot_lists, **data.slot_lists}
            rules = {**intents.expansion_rules, **data.expansion_rules}
            for sentence in data.sentences:
                visit(sentence.expression, lists, rules)

    def phrases_of(texts) -> dict:
        values = {}
        for x in texts:
            for v in x.values:
                for phrase in list_phrases(v.text_in):
                    phrase = clean_text(phrase)
                    if phrase and isinstance(v.value_out, (str, int)) and not isinstance(v.value_out, bool):
                        values.setdefault(phrase, str(v.value_out))
        return values

    def number_range(ranges) -> dict:
        return {"min": min(r.start for r in ranges), "max": max(r.stop for r in ranges),
                "halves": any("halves" in str(r.fraction_type or "") for r in ranges)}

    for name in wanted:
        found = sources.get(name, [])
        ranges = [x for x in found if isinstance(x, RangeSlotList)]
        words = phrases_of([x for x in found if isinstance(x, TextSlotList)])
        known = spec["slots"].get(name)
        if known is not None and known["type"] in ("number", "list"):
            number = known if known["type"] == "number" else known.get("number")
            if number is not None and ranges:      # widen, never narrow, Home Assistant's range
                r = number_range(ranges)
                number = {"min": min(number["min"], r["min"]), "max": max(number["max"], r["max"]),
                          "halves": number["halves"] or r["halves"]}
            if known["type"] == "list" or words:
                merged = {**words, **known.get("values", {})}
                spec["slots"][name] = {"type": "list", "values": merged, **({"number": {
                    k: number[k] for k in ("min", "max", "halves")}} if number else {})}
            else:
                spec["slots"][name] = {"type": "number", **{k: number[k] for k in ("min", "max", "halves")}}
        elif known is not None:
            continue
        elif ranges and reported.get(name, name) != name:
            spec["slots"][name] = {"type": "number", **number_range(ranges), "negate": True,
                                   "report": reported[name]}
        elif ranges:
            spec["slots"][name] = {"type": "number", **number_range(ranges)}
        elif words:
            spec["slots"][name] = {"type": "list", "values": words}
        else:
            spec["slots"][name] = {"type": "wildcard"}
    keep = set(slots) | {v["report"] for k, v in spec["slots"].items() if k in set(slots) and "report" in v}
    spec["slots"] = {k: v for k, v in spec["slots"].items() if k in keep}
    return spec


NATURAL_PARTS = ("validation", "test")


def natural_part(text: str) -> str:
    """`validation` or `test` for one of our natural commands, from a hash of its normalized text: half chooses
    (the rule's `natural` part), half is only measured. Adding commands never moves an existing one."""
    digest = hashlib.sha256(("natural\0" + normalize(text)).encode("utf-8")).digest()
    return NATURAL_PARTS[digest[0] % 2]


def load_natural(lang: str) -> dict[str, list[dict]]:
    """Our hand-written natural commands with their slot values (`data/natural-<lang>.jsonl`: written by people
    who never saw the templates nor the public test), split by natural_part; {} when there is no such file."""
    path = DATA_DIR / f"natural-{check_lang(lang)}.jsonl"
    if not path.exists():
        return {}
    parts: dict[str, list[dict]] = {p: [] for p in NATURAL_PARTS}
    for row in read_jsonl(path):
        parts[natural_part(row["text"])].append(row)
    return parts


def write_jsonl(path: Path, rows: list[dict]) -> None:
    with open(path, "w", encoding="utf-8") as f:
        for row in rows:
            f.write(json.dumps(row, ensure_ascii=False, sort_keys=True) + "\n")


def read_jsonl(path) -> list[dict]:
    """The objects of a JSON-lines file (textio.read_jsonl: UTF-8, errors naming file:line)."""
    from ..textio import read_jsonl as read
    return read(path)


def write_dataset(ds: Dataset, out: Path) -> None:
    out.mkdir(parents=True, exist_ok=True)
    write_jsonl(out / "train.jsonl", ds.train)
    write_jsonl(out / "validation.jsonl", ds.validation)
    write_jsonl(out / "ood.jsonl", ds.ood_eval)
    if ds.handwritten:
        write_jsonl(out / "handwritten.jsonl", ds.handwritten)
    for part, rows in ds.natural.items():     # natural-validation.jsonl chooses, natural-test.jsonl is measured
        write_jsonl(out / f"natural-{part}.jsonl", rows)
    (out / "stats.json").write_text(json.dumps(ds.stats, ensure_ascii=False, indent=1, sort_keys=True) + "\n",
                                    encoding="utf-8")


def run(args) -> int:
    ds = build_dataset(args.lang, per_intent=args.per_intent, seed=args.seed, intent_files=args.intents,
                       builtin=not args.no_builtin, val_fraction=args.val_fraction, ood=not args.no_ood,
                       mask_names=args.mask_names, compose_names=args.compose_names,
                       wildcard_words=args.wildcard_words,
                       ood_generated=args.ood_generated, split=args.split,
                       mask_ood_names=args.mask_ood_names, ood_files=args.ood)
    out = Path(args.out)
    write_dataset(ds, out)
    s = ds.stats
    for line in few_sentences_lines(s["sentences_per_label"]) if args.json else []:
        print(line, file=sys.stderr)
    if args.json:
        from ..ui import emit_json
        emit_json({"out": str(out), **s})
        return 0
    print(f"{out}: {s['train']} train, {s['validation']} validation, {s['ood_eval']} held-out out-of-domain; "
          f"{s['intents']} intents, {s['conflicts_dropped']} sentences with two labels dropped")
    if "masked" in s:
        print(f"names masked in {s['masked']['train']} train and {s['masked']['validation']} validation sentences")
    short = {k: v for k, v in s["sentences_per_label"].items() if v < args.per_intent}
    if short:
        print("intents with fewer distinct sentences than --per-intent: "
              + ", ".join(f"{k} {v}" for k, v in sorted(short.items())))
    for line in few_sentences_lines(s["sentences_per_label"]):
        print(line, file=sys.stderr)
    return 0


def few_sentences_lines(counts: dict[str, int]) -> list[str]:
    """The warnings about intents with few distinct sentences (`bertl14 train` refuses the ones under
    MIN_SENTENCES), none when every intent has FEW_SENTENCES or more."""
    counts = {k: v for k, v in counts.items() if k != NONE_LABEL}
    few = {k: v for k, v in counts.items() if MIN_SENTENCES <= v < FEW_SENTENCES}
    too_few = {k: v for k, v in counts.items() if v < MIN_SENTENCES}
    fix = "add alternatives to their templates ((a|b) choices, [optional] words, more sentences)"
    lines = []
    if too_few:
        lines.append(f"warning: `bertl14 train` refuses intents with fewer than {MIN_SENTENCES} distinct sentences: "
                     + ", ".join(f"{k} {v}" for k, v in sorted(too_few.items())) + f"; {fix}")
    if few:
        lines.append(f"warning: intents with fewer than {FEW_SENTENCES} distinct sentences (few to learn from, "
                     "fewer to measure): " + ", ".join(f"{k} {v}" for k, v in sorted(few.items())) + f"; {fix}")
    return lines


def register(subparsers) -> None:
    p = subparsers.add_parser("dataset", help="expand intent templates into train/validation JSONL",
                              description=__doc__.splitlines()[0])
    from .. import ui
    p.add_argument("--lang", required=True, choices=LANGUAGES, help="language of the sentences")
    p.add_argument("--out", required=True, help="output folder (train.jsonl, validation.jsonl, ood.jsonl, stats.json)")
    p.add_argument("--per-intent", type=ui.positive_int, default=1000, metavar="N",
                   help="distinct sentences an intent (default 1000)")
    p.add_argument("--seed", type=int, default=0, help="seed of the random choices (same seed, same data)")
    p.add_argument("--intents", nargs="+", action="extend", metavar="FILE",
                   help="your own hassil intents YAML files (one flag with several files, or the flag again)")
    p.add_argument("--no-builtin", action="store_true", help="only the --intents files, not Home Assistant's")
    p.add_argument("--no-ood", action="store_true", help="no out-of-domain `none` class")
    p.add_argument("--ood", nargs="+", action="extend", metavar="FILE",
                   help="your own out-of-domain sentences (UTF-8 text, one a line, # comments): what people say near "
                        "your device that is not one of its commands (\"is the espresso machine descaled yet?\" "
                        "when no intent answers it). Added to ours and split the same way, by a hash of each "
                        "sentence: half training, a quarter validation (it chooses the threshold), a quarter "
                        "held-out (ood.jsonl)")
    p.add_argument("--val-fraction", type=ui.fraction, default=0.1, metavar="FRACTION",
                   help="share of each intent's sentences kept for validation (default 0.1)")
    p.add_argument("--split", choices=SPLITS, default="hash",
                   help="which of an intent's sentences go to validation: hash (chosen by a hash of seed and "
                        "sentence, every template represented in both splits) or first (the first the random walk "
                        "found: the data of the shipped models) (default hash)")
    p.add_argument("--mask-names", type=ui.fraction, nargs="?", const=1.0, default=0.0, metavar="FRACTION",
                   help="write [NAME]/[AREA]/[FLOOR] (what the device's registry matcher writes) in place of the "
                        "names in this fraction of the sentences that have one, chosen by a hash of seed and "
                        "sentence (alone: 1 = all; default 0 = none); validation then holds both forms")
    p.add_argument("--mask-ood-names", type=ui.fraction, default=0.0, metavar="FRACTION",
                   help="also write this fraction of the out-of-domain training sentences that name a device or "
                        "area of the name lists (\"our dishwasher is loud\") with [NAME]/[AREA], as a device with a "
                        "registry reads them (generated ones: written masked instead); validation then holds both "
                        "forms (default 0)")
    p.add_argument("--ood-generated", type=ui.non_negative_int, default=0, metavar="N",
                   help="add N out-of-domain training sentences made from the frames of ood-frames-<lang>.txt "
                        "(training only; the out-of-domain validation and test splits stay the written ones)")
    p.add_argument("--wildcard-words", type=ui.fraction, default=0.0, metavar="FRACTION",
                   help="fill this fraction of the open-ended slots (song, shopping item, message...) with 1-3 "
                        "general words of name-words-<lang>.txt instead of the phrases of slots-<lang>.yaml "
                        "(default 0)")
    p.add_argument("--compose-names", type=ui.fraction, default=0.0, metavar="FRACTION",
                   help="make up this fraction of the device names and areas (\"corner lamp\", \"emma's fan\", "
                        "\"falcon lamp\", \"rosie\") from the compose: lists of slots-<lang>.yaml and "
                        "name-words-<lang>.txt instead of drawing them from the name lists (default 0)")
    ui.add_output_options(p, 'print the folder\'s stats.json figures as one JSON object ({"out", "train", '
                             '"validation", "intents", "sentences_per_label", ...}) instead of the summary')
    p.set_defaults(func=run)


def write_intent_domains(folder: str | Path, dataset_stats: dict) -> Path | None:
    """intent_domains.json of a model trained on a `bertl14 dataset` (its stats.json: language, intents files),
    from the same templates (intent_domains); nothing without a language."""
    lang = dataset_stats.get("lang")
    if not lang:
        return None
    path = Path(folder) / INTENT_DOMAINS_FILE
    table = intent_domains(lang, dataset_stats.get("intent_files") or None)
    path.write_text(json.dumps(table, ensure_ascii=False, indent=1) + "\n", encoding="utf-8")
    return path
