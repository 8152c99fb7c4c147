"""The device's own names: an entity / area / floor registry that fills slots (docs/registry.md).

    load(path) -> Registry                 a registry YAML file or a `*_home.json` of the public test data
    validate(reg)                          raises UserError (file:line) on empty names, unknown areas/floors,
                                           duplicates
    compile_registry(reg, lower, strip, chinese) -> list[int]
                                           the uint32 words of `bertl14_registry[]` (trie over normalised names)
    render_c(words) -> str                 `bertl14_registry.c`
    entity_domain(words, index) -> int     an entity's domain (index in DOMAINS), as bertl14_registry_domain()
    label_domains_for_model(model_dir)     label index -> domain bits of the model's intent_domains.json, as the
                                           firmware's `bertl14_label_domains[]` (render_label_domains_c)
    Matcher(registry_words, vocab_section).match(text) -> (status, out_bytes, slots)
                                           the Python reference of bertl14_registry_match(), bit for bit

Normalisation is the tokenizer's: the C matcher reads the class and map tables of the model's vocabulary
section (`bertl14_vocab_offsets[]`), and so does this reference (decoded from the same words). Names are
normalised at build time with bertl14_tools.model.tokenizer's functions. Full-width forms U+FF01-FF5E are folded to
ASCII inside the matcher only (the tokenizer does not fold them).
"""
from __future__ import annotations

import bisect
import json
import re
import sys
import warnings
from dataclasses import dataclass, field
from pathlib import Path

from ..model import tokenizer as T
from ..model import vocab_blob as V
from ..errors import UserError
from .domains import DOMAINS, label_domain_masks, load_intent_domains

# ---- format constants (mirrored in bertl14/registry/bertl14_registry.c) --------------------------------------------
MAGIC = 0x47455242  # bytes "BREG" in little-endian memory
VERSION = 1
(HDR_MAGIC, HDR_VERSION, HDR_WORDS, HDR_TOTAL_WORDS, HDR_FLAGS,
 HDR_N_ENTITIES, HDR_N_AREAS, HDR_N_FLOORS, HDR_OBJECTS, HDR_POOL, HDR_POOL_BYTES, HDR_TRIE,
 HDR_CHECKSUM, HEADER_WORDS) = range(14)
FLAG_MASK = V.FLAG_LOWER_CASE | V.FLAG_STRIP_ACCENTS | V.FLAG_CHINESE_CHARS  # must equal the vocabulary's

KIND_NAME, KIND_AREA, KIND_FLOOR = 1, 2, 3
KIND_KEYS = {KIND_NAME: "name", KIND_AREA: "area", KIND_FLOOR: "floor"}
# The placeholder tokens written in place of a matched name (the training side writes the same text where its
# templates have {name}, {area}, {floor}). BERT tokenizes each as "[", "name", "]".
PLACEHOLDERS = {KIND_NAME: "[NAME]", KIND_AREA: "[AREA]", KIND_FLOOR: "[FLOOR]"}
NO_PARENT = 0xFFFF
SEPARATOR = 0x20  # between the words of a name in the trie
TRIE_CHAIN, TRIE_COUNT_MASK = 0x8000, 0x7FFF  # node word: (terminal << 16) | chain flag | count
FULLWIDTH_FIRST, FULLWIDTH_LAST, FULLWIDTH_DELTA = 0xFF01, 0xFF5E, 0xFEE0

# status codes (bertl14.h)
OK, ERR_INVALID_CONFIG, ERR_BUFFER_TOO_SMALL, ERR_NULL_POINTER, ERR_INVALID_UTF8 = 0, -1, -2, -5, -6


# ---- the registry ----------------------------------------------------------------------------------------------
@dataclass
class Item:
    name: str
    aliases: list[str] = field(default_factory=list)
    parent: str | None = None      # area id of an entity, floor id of an area
    domain: str = ""               # entities only
    id: str = ""
    where: str = ""                # "file:line" for messages


@dataclass
class Registry:
    entities: list[Item] = field(default_factory=list)
    areas: list[Item] = field(default_factory=list)
    floors: list[Item] = field(default_factory=list)
    source: str = ""

    def items(self, kind: int) -> list[Item]:
        return {KIND_NAME: self.entities, KIND_AREA: self.areas, KIND_FLOOR: self.floors}[kind]


class _LineLoader(__import__("yaml").SafeLoader):
    """SafeLoader that records each mapping's line in the key '__line__'."""


def _construct_mapping(loader, node, deep=False):
    m = loader.construct_mapping(node, deep=deep)
    m["__line__"] = node.start_mark.line + 1
    return m


_LineLoader.add_constructor(__import__("yaml").resolver.BaseResolver.DEFAULT_MAPPING_TAG, _construct_mapping)


def _str_list(value, where: str, what: str) -> list[str]:
    if value is None:
        return []
    if isinstance(value, str):
        return [value]
    if not isinstance(value, list) or not all(isinstance(v, (str, int, float)) for v in value):
        raise UserError(f"{where}: {what} must be a list of strings")
    return [str(v) for v in value]


def load_yaml(path: str | Path) -> Registry:
    """Registry YAML: `floors:`, `areas:`, `entities:` lists of mappings (docs/registry.md)."""
    from ..textio import load_yaml as read_yaml
    path = Path(path)
    data = read_yaml(path, "registry file", _LineLoader) or {}
    if not isinstance(data, dict):
        raise UserError(f"{path}: expected a mapping with floors, areas and entities")
    unknown = set(data) - {"floors", "areas", "entities", "__line__"}
    if unknown:
        raise UserError(f"{path}:{data.get('__line__', 1)}: unknown section(s) {', '.join(sorted(unknown))}: "
                        "use floors, areas, entities")
    reg = Registry(source=str(path))
    for section, parent_key in (("floors", None), ("areas", "floor"), ("entities", "area")):
        entries = data.get(section) or []
        if not isinstance(entries, list):
            raise UserError(f"{path}: {section} must be a list")
        for e in entries:
            if isinstance(e, str):
                e = {"name": e, "__line__": 0}
            if not isinstance(e, dict):
                raise UserError(f"{path}: each of {section} must be a mapping with a name")
            where = f"{path}:{e.get('__line__', 0)}"
            allowed = {"name", "aliases", "id", "__line__"} | ({parent_key} if parent_key else set()) \
                | ({"domain"} if section == "entities" else set())
            extra = set(e) - allowed
            if extra:
                raise UserError(f"{where}: unknown key(s) {', '.join(sorted(extra))} in {section} "
                                f"(allowed: {', '.join(sorted(allowed - {'__line__'}))})")
            name = e.get("name")
            item = Item(name="" if name is None else str(name), aliases=_str_list(e.get("aliases"), where, "aliases"),
                        parent=None if not parent_key or e.get(parent_key) is None else str(e[parent_key]),
                        domain=str(e.get("domain") or ""), id=str(e.get("id") or ""), where=where)
            {"floors": reg.floors, "areas": reg.areas, "entities": reg.entities}[section].append(item)
    return reg


def load_home_json(path: str | Path) -> Registry:
    """The public test data's `<lang>_home.json` (areas/floors/entities with ids; entity domain from its id)."""
    from ..textio import read_text
    path = Path(path)
    try:
        data = json.loads(read_text(path, "registry file"))
    except ValueError as exc:
        raise UserError(f"{path}:{getattr(exc, 'lineno', 1)}: not valid JSON ({getattr(exc, 'msg', exc)}): fix the "
                        "file") from None
    if not isinstance(data, dict):
        raise UserError(f"{path}: expected an object with floors, areas and entities")
    reg = Registry(source=str(path))
    for section, parent_key, out in (("floors", None, reg.floors), ("areas", "floor", reg.areas),
                                     ("entities", "area", reg.entities)):
        for i, e in enumerate(data.get(section) or []):
            eid = str(e.get("id") or "")
            domain = str(e.get("domain") or (eid.split(".")[0] if "." in eid else ""))
            out.append(Item(name=str(e.get("name") or ""), aliases=[str(a) for a in e.get("aliases") or []],
                            parent=e.get(parent_key) if parent_key else None, domain=domain if section == "entities"
                            else "", id=eid, where=f"{path}:{section}[{i}]"))
    return reg


# Entities whose words belong to intents of their own, never replaced by a placeholder: Home Assistant's shopping list
# (the shopping_list integration's todo entity) is what HassShoppingListAddItem / CompleteItem act on, and their
# sentences name it ("add milk to the shopping list"); masked, it would read as any named list (HassListAddItem).
INTENT_OWN_ENTITY_IDS = ("todo.shopping_list",)


def load(path: str | Path) -> Registry:
    """A registry YAML file, or a `*_home.json` of the public test data; validated. Entities listed in
    INTENT_OWN_ENTITY_IDS are left out: the matcher does not replace their names."""
    p = Path(path)
    reg = load_home_json(p) if p.suffix == ".json" else load_yaml(p)
    validate(reg)
    reg.entities = [e for e in reg.entities if e.id not in INTENT_OWN_ENTITY_IDS]
    return reg


# ---- normalisation (the tokenizer's) -----------------------------------------------------------------------------
def fold_fullwidth(cp: int) -> int:
    return cp - FULLWIDTH_DELTA if FULLWIDTH_FIRST <= cp <= FULLWIDTH_LAST else cp


def normalize_words(text: str, lower: bool = True, strip: bool = True, chinese: bool = True) -> list[str]:
    """The words BERT's pre-tokenizer makes of `text` (tokenizer.py's functions), full-width forms folded."""
    words, cur = [], []

    def boundary():
        if cur:
            words.append("".join(cur))
            cur.clear()

    for ch in text:
        cp = fold_fullwidth(ord(ch))
        if T.is_removed(cp):
            continue
        if T.is_whitespace(cp):
            boundary()
            continue
        cjk = chinese and T.is_cjk(cp)
        if cjk:
            boundary()
        for o in T.map_char(chr(cp), lower, strip):
            if T.is_whitespace(ord(o)):
                boundary()
            elif T.is_punctuation(ord(o)):
                boundary()
                words.append(o)
            else:
                cur.append(o)
        if cjk:
            boundary()
    boundary()
    return words


def name_key(text: str, lower: bool = True, strip: bool = True, chinese: bool = True) -> str:
    return " ".join(normalize_words(text, lower, strip, chinese))


# A Chinese floor named by numerals alone ("一", "二十") is said "一楼" / "一层" (Home Assistant's Chinese templates
# write "{floor}楼"); the bare numeral is an everyday word ("等一下", "一个") and is never matched as a floor.
CJK_NUMERALS = frozenset("零〇一二三四五六七八九十百千两")
FLOOR_SUFFIXES = ("楼", "层")


def implied_forms(kind: int, text: str) -> list[str] | None:
    """The forms a floor name or alias made of CJK numerals alone is matched by (None: matched as written)."""
    bare = text.strip()
    if kind == KIND_FLOOR and bare and all(ch in CJK_NUMERALS for ch in bare):
        return [bare + s for s in FLOOR_SUFFIXES]
    return None


def match_texts(kind: int, it: Item) -> tuple[list[str], list[str]]:
    """(texts matched as written, implied texts) of an object: its name and aliases, a numeral floor's suffixed forms.
    Implied texts yield to any written name of another object."""
    written, implied = [], []
    for text in [it.name] + list(it.aliases):
        forms = implied_forms(kind, text)
        (implied.extend(forms) if forms else written.append(text))
    return written, implied


# ---- validation ----------------------------------------------------------------------------------------------------
def validate(reg: Registry, lower: bool = True, strip: bool = True, chinese: bool = True) -> None:
    """Empty names, unknown parent ids, duplicates: one UserError listing every problem with file:line."""
    errors = []
    ids = {}
    for kind, parents in ((KIND_FLOOR, None), (KIND_AREA, reg.floors), (KIND_NAME, reg.areas)):
        what = KIND_KEYS[kind] if kind != KIND_NAME else "entity"
        parent_ids = {p.id or p.name for p in parents} | {p.name for p in parents} if parents is not None else set()
        seen: dict[tuple, Item] = {}
        for it in reg.items(kind):
            for text in [it.name] + it.aliases:
                if not name_key(text, lower, strip, chinese):
                    errors.append(f"{it.where}: {what} has an empty name or alias {text!r}")
                    continue
                if len(text.encode()) > 255:
                    errors.append(f"{it.where}: {what} name {text[:20]!r}... is longer than 255 bytes")
                key = (name_key(text, lower, strip, chinese), it.parent if kind == KIND_NAME else None)
                if key in seen and seen[key] is not it:
                    where = f" in area {it.parent!r}" if it.parent and kind == KIND_NAME else ""
                    errors.append(f"{it.where}: duplicate {what} name {text!r}{where} (first at {seen[key].where})")
                seen.setdefault(key, it)
            if it.parent is not None and parents is not None and it.parent not in parent_ids:
                errors.append(f"{it.where}: {what} {it.name!r} names unknown "
                              f"{'floor' if kind == KIND_AREA else 'area'} {it.parent!r}")
            if kind == KIND_NAME and it.domain and not re.fullmatch(r"[a-z_][a-z0-9_]*", it.domain):
                errors.append(f"{it.where}: domain {it.domain!r} is not a Home Assistant domain (e.g. light, fan)")
            if it.id:
                if (kind, it.id) in ids:
                    errors.append(f"{it.where}: duplicate id {it.id!r} (first at {ids[(kind, it.id)]})")
                ids[(kind, it.id)] = it.where
    if len(reg.entities) + len(reg.areas) + len(reg.floors) >= NO_PARENT:
        errors.append(f"{reg.source}: more than {NO_PARENT - 1} entries")
    if errors:
        raise UserError("invalid registry: " + "; ".join(errors))


# ---- compilation -------------------------------------------------------------------------------------------------
def _parent_index(parents: list[Item], ref: str | None) -> int:
    if ref is None:
        return NO_PARENT
    for i, p in enumerate(parents):
        if ref in (p.id, p.name):
            return i
    return NO_PARENT


def compile_registry(reg: Registry, lower: bool = True, strip: bool = True, chinese: bool = True) -> list[int]:
    """uint32 words of `bertl14_registry[]`: header, objects (2 words each), name pool, trie (docs/registry.md).

    A normalised name that two objects share goes to the first one in the order entities, areas, floors (a warning
    says so): entities with the same name in different areas, or an entity named like an area."""
    objects = [(KIND_NAME, it) for it in reg.entities] + [(KIND_AREA, it) for it in reg.areas] \
        + [(KIND_FLOOR, it) for it in reg.floors]
    keys: dict[str, int] = {}
    for g, (kind, it) in enumerate(objects):
        for text in match_texts(kind, it)[0]:
            key = name_key(text, lower, strip, chinese)
            if not key:
                continue
            if key in keys and keys[key] != g:
                k0, first = objects[keys[key]]
                warnings.warn(f"{it.where}: {text!r} is also {KIND_KEYS[k0]} {first.name!r}: matches that one",
                              stacklevel=2)
                continue
            keys[key] = g
    for g, (kind, it) in enumerate(objects):   # "一楼" of floor "一" unless another object is named "一楼"
        for text in match_texts(kind, it)[1]:
            keys.setdefault(name_key(text, lower, strip, chinese), g)
    pool = bytearray()
    obj_words = []
    for kind, it in objects:
        raw = it.name.encode("utf-8")[:255]
        parent = _parent_index(reg.areas if kind == KIND_NAME else reg.floors, it.parent) \
            if kind != KIND_FLOOR else NO_PARENT
        domain = DOMAINS.index(it.domain) if it.domain in DOMAINS else 0
        obj_words += [(len(pool) << 8) | len(raw), (kind << 28) | (domain << 16) | parent]
        pool += raw
    # trie: dict nodes; a run of single-child nodes becomes one chain node (docs/registry.md)
    root: dict = {}
    for key, g in keys.items():
        node = root
        for ch in key:
            node = node.setdefault(ord(ch), {})
        node[None] = g
    header = [0] * HEADER_WORDS
    o_objects = HEADER_WORDS
    o_pool = o_objects + len(obj_words)
    pool_words = [int.from_bytes(pool[k:k + 4].ljust(4, b"\0"), "little") for k in range(0, len(pool), 4)]
    o_trie = o_pool + len(pool_words)
    trie: list[int] = []

    def emit(node: dict) -> int:
        off = o_trie + len(trie)
        term = 0 if node.get(None) is None else node[None] + 1
        labels = sorted(k for k in node if k is not None)
        if len(labels) == 1:
            chain = []
            while len(labels) == 1 and (not chain or None not in node) and len(chain) < TRIE_COUNT_MASK:
                chain.append(labels[0])
                node = node[labels[0]]
                labels = sorted(k for k in node if k is not None)
            trie.extend([(term << 16) | TRIE_CHAIN | len(chain)] + chain)
            emit(node)  # the node the chain leads to follows it
            return off
        trie.append((term << 16) | len(labels))
        trie.extend(labels)
        slot = len(trie)
        trie.extend([0] * len(labels))
        for i, c in enumerate(labels):
            trie[slot + i] = emit(node[c])
        return off

    sys.setrecursionlimit(max(sys.getrecursionlimit(), 20000))
    emit(root)
    header[HDR_MAGIC] = MAGIC
    header[HDR_VERSION] = VERSION
    header[HDR_WORDS] = HEADER_WORDS
    header[HDR_FLAGS] = (V.FLAG_LOWER_CASE if lower else 0) | (V.FLAG_STRIP_ACCENTS if strip else 0) \
        | (V.FLAG_CHINESE_CHARS if chinese else 0)
    header[HDR_N_ENTITIES], header[HDR_N_AREAS], header[HDR_N_FLOORS] = \
        len(reg.entities), len(reg.areas), len(reg.floors)
    header[HDR_OBJECTS], header[HDR_POOL], header[HDR_POOL_BYTES], header[HDR_TRIE] = o_objects, o_pool, len(pool), o_trie
    words = header + obj_words + pool_words + trie
    words[HDR_TOTAL_WORDS] = len(words)
    words[HDR_CHECKSUM] = (sum(words) - words[HDR_CHECKSUM]) & 0xFFFFFFFF
    return words


def render_c(words: list[int], source: str = "") -> str:
    """`bertl14_registry.c`: the table as a C array in flash (4-byte aligned, read-only), through the jinja2
    template templates/bertl14_registry.c.j2."""
    import jinja2
    env = jinja2.Environment(loader=jinja2.FileSystemLoader(str(Path(__file__).parent / "templates")),
                             keep_trailing_newline=True, undefined=jinja2.StrictUndefined, autoescape=False)
    rows = [", ".join(f"0x{w:08x}u" for w in words[k:k + 8]) for k in range(0, len(words), 8)]
    return env.get_template("bertl14_registry.c.j2").render(
        source=Path(source).name if source else "a registry", n_words=len(words), n_bytes=4 * len(words), rows=rows)


def label_domains_for_model(model_dir: str | Path) -> tuple[list[int] | None, list[str]]:
    """(one word per label: the domain bits of the intents that take a {name}, domains.label_domain_masks; the
    labels) for a converted model folder: its labels.json and intent_domains.json (the converter copies the model's
    table into the folder). None: the model ships no intent_domains.json (nothing is filtered)."""
    labels_file = Path(model_dir) / "labels.json"
    labels = json.loads(labels_file.read_text(encoding="utf-8")) if labels_file.is_file() else []
    table = load_intent_domains(model_dir)
    return (label_domain_masks(labels, table) if table is not None and labels else None), labels


def render_label_domains_c(masks: list[int] | None, labels: list[str], source: str = "") -> str:
    """`bertl14_label_domains.c`: `bertl14_label_domains[]` (label index -> domain bits) and its count (0 without a
    table), through the jinja2 template templates/bertl14_label_domains.c.j2."""
    import jinja2
    env = jinja2.Environment(loader=jinja2.FileSystemLoader(str(Path(__file__).parent / "templates")),
                             keep_trailing_newline=True, undefined=jinja2.StrictUndefined, autoescape=False)
    rows = [f"0x{m:08x}u, /* {i} {labels[i] if i < len(labels) else ''} */" for i, m in enumerate(masks or [])] \
        or ["0xffffffffu, /* no table */"]
    return env.get_template("bertl14_label_domains.c.j2").render(
        source=Path(source).name if source else "a model", n_words=len(rows), rows=rows, count=len(masks or []))


def flash_bytes(words: list[int]) -> int:
    return 4 * len(words)


# ---- the matcher (Python reference of bertl14/registry/bertl14_registry.c) ------------------------------------------------
BOUNDARY, END, INVALID = -1, -2, -3


def utf8_decode(b: bytes, i: int) -> tuple[int, int]:
    """(code point, length) of strict UTF-8 at b[i]; length 0 if invalid (the C tokenizer's rules)."""
    b0 = b[i]
    if b0 < 0x80:
        return b0, 1
    lo, hi = 0x80, 0xBF
    if 0xC2 <= b0 <= 0xDF:
        n, c = 2, b0 & 0x1F
    elif 0xE0 <= b0 <= 0xEF:
        n, c = 3, b0 & 0x0F
        lo, hi = (0xA0 if b0 == 0xE0 else 0x80), (0x9F if b0 == 0xED else 0xBF)
    elif 0xF0 <= b0 <= 0xF4:
        n, c = 4, b0 & 0x07
        lo, hi = (0x90 if b0 == 0xF0 else 0x80), (0x8F if b0 == 0xF4 else 0xBF)
    else:
        return 0, 0
    for k in range(1, n):
        if i + k >= len(b) or not lo <= b[i + k] <= hi:
            return 0, 0
        lo, hi = 0x80, 0xBF
        c = (c << 6) | (b[i + k] & 0x3F)
    return c, n


class Matcher:
    """bertl14_registry_match() in Python: same symbols, same trie walk, same output bytes and slots."""

    def __init__(self, registry: list[int], vocab_section: list[int]):
        self.r = registry
        h = 256
        s = vocab_section
        if s[h + V.HDR_MAGIC] != V.MAGIC or registry[HDR_MAGIC] != MAGIC or registry[HDR_VERSION] != VERSION:
            raise UserError("not a vocabulary section / registry table")
        self.flags = s[h + V.HDR_FLAGS]
        if (self.flags & FLAG_MASK) != registry[HDR_FLAGS]:
            raise UserError("registry compiled with other tokenizer options than the model's vocabulary "
                            "(lower case / strip accents / Chinese characters): recompile it")
        runs = s[s[h + V.HDR_CLASSES]: s[h + V.HDR_CLASSES] + s[h + V.HDR_N_CLASSES]]
        self.run_starts = [w >> 3 for w in runs]
        self.run_classes = [w & 7 for w in runs]
        keys = s[s[h + V.HDR_MAP_KEYS]: s[h + V.HDR_MAP_KEYS] + s[h + V.HDR_N_MAP]]
        offs = s[s[h + V.HDR_MAP_OFFSETS]: s[h + V.HDR_MAP_OFFSETS] + s[h + V.HDR_N_MAP]]
        out = s[s[h + V.HDR_MAP_OUT]: s[h + V.HDR_MAP_OUT] + s[h + V.HDR_MAP_OUT_WORDS]]
        self.map = {k >> 8: [(o & 0x1FFFFF, (o >> 29) & 3) for o in out[off: off + (k & 0xFF)]]
                    for k, off in zip(keys, offs)}

    def _outputs(self, cp: int, cls: int) -> list[tuple[int, int]]:
        if (self.flags & V.FLAG_LOWER_CASE) and 0x41 <= cp <= 0x5A:   # ASCII folded even where the map omits it
            return [(cp + 0x20, V.KIND_WORD)]
        if cp in self.map:
            return self.map[cp]
        if (self.flags & V.FLAG_STRIP_ACCENTS) and V.HANGUL_FIRST <= cp <= V.HANGUL_LAST:
            s = cp - V.HANGUL_FIRST
            jamo = [0x1100 + s // 588, 0x1161 + (s % 588) // 28] + ([0x11A7 + s % 28] if s % 28 else [])
            return [(j, V.KIND_WORD) for j in jamo]
        return [(cp, V.KIND_PUNCT if cls == V.CLASS_PUNCT else V.KIND_WORD)]

    def symbols(self, b: bytes, pos: int):
        """(symbol, char_start, char_end, first, last): symbol a code point, BOUNDARY, END or INVALID; first/last
        mark the first/last non-boundary symbol of an input character."""
        while pos < len(b) and b[pos] != 0:
            cp, n = utf8_decode(b, pos)
            if n == 0:
                yield INVALID, pos, pos, False, False
                return
            start, pos = pos, pos + n
            cp = fold_fullwidth(cp)
            cls = self.run_classes[bisect.bisect_right(self.run_starts, cp) - 1]
            if cls == V.CLASS_DROP:
                continue
            if cls == V.CLASS_SPACE:
                yield BOUNDARY, start, pos, False, False
                continue
            outs = self._outputs(cp, cls)
            nonspace = [i for i, (_, k) in enumerate(outs) if k != V.KIND_SPACE]
            first_ns, last_ns = (nonspace[0], nonspace[-1]) if nonspace else (-1, -1)
            if cls == V.CLASS_CJK:
                yield BOUNDARY, start, pos, False, False
            for i, (c, k) in enumerate(outs):
                if k == V.KIND_SPACE:
                    yield BOUNDARY, start, pos, False, False
                    continue
                if k == V.KIND_PUNCT:
                    yield BOUNDARY, start, pos, False, False
                yield c, start, pos, i == first_ns, i == last_ns
                if k == V.KIND_PUNCT:
                    yield BOUNDARY, start, pos, False, False
            if cls == V.CLASS_CJK:
                yield BOUNDARY, start, pos, False, False
        yield END, pos, pos, False, False

    def _step(self, node: int, k: int, label: int) -> tuple[int, int]:
        """Trie walk: from (node, k labels of its chain consumed) along `label`; node 0 = no such name."""
        r = self.r
        n = r[node] & TRIE_COUNT_MASK
        if r[node] & TRIE_CHAIN:
            if r[node + 1 + k] != label:
                return 0, 0
            return (node + 1 + n, 0) if k + 1 == n else (node, k + 1)
        labels = r[node + 1: node + 1 + n]
        i = bisect.bisect_left(labels, label)
        return (r[node + 1 + n + i], 0) if i < n and labels[i] == label else (0, 0)

    def _longest(self, b: bytes, start: int):
        """Longest name whose words start at byte `start`: (object index, end byte) or None."""
        node, k, best, prev_b, last_ok, last_end = self.r[HDR_TRIE], 0, None, True, False, start
        for sym, _, end, _, last in self.symbols(b, start):
            if sym in (BOUNDARY, END, INVALID):
                if sym == BOUNDARY and prev_b:
                    continue
                if k == 0 and (self.r[node] >> 16) and last_ok:
                    best = ((self.r[node] >> 16) - 1, last_end)
                if sym != BOUNDARY:
                    break
                node, k = self._step(node, k, SEPARATOR)
                if not node:
                    break
                prev_b = True
                continue
            node, k = self._step(node, k, sym)
            if not node:
                break
            prev_b, last_ok, last_end = False, last, end
        return best

    def kind_index(self, g: int) -> tuple[int, int]:
        ne, na = self.r[HDR_N_ENTITIES], self.r[HDR_N_AREAS]
        return (KIND_NAME, g) if g < ne else (KIND_AREA, g - ne) if g < ne + na else (KIND_FLOOR, g - ne - na)

    def match(self, text: str | bytes, max_slots: int = 8):
        """(status, output bytes, [(kind, index, start, end)]) as bertl14_registry_match (unbounded output)."""
        b = text.encode("utf-8", "surrogatepass") if isinstance(text, str) else bytes(text)
        b = b.split(b"\0", 1)[0]
        out, slots, copied, pos, prev_b = bytearray(), [], 0, 0, True
        while True:  # one pass over the symbols; restarted after each match at its end
            restart = None
            for sym, start, _, first, _ in self.symbols(b, pos):
                if sym == INVALID:
                    return ERR_INVALID_UTF8, b"", []
                if sym == END:
                    break
                if sym == BOUNDARY:
                    prev_b = True
                    continue
                if prev_b and first and len(slots) < max_slots:
                    m = self._longest(b, start)
                    if m is not None:
                        kind, idx = self.kind_index(m[0])
                        out += b[copied:start] + PLACEHOLDERS[kind].encode()
                        slots.append((kind, idx, start, m[1]))
                        copied = restart = m[1]
                        prev_b = False
                        break
                prev_b = False
            if restart is None:
                break
            pos = restart
        out += b[copied:]
        return OK, bytes(out), slots


# ---- the firmware build's generation step (cmake/registry.cmake) ---------------------------------------------------
def model_flags(model_dir: str | Path) -> tuple[bool, bool, bool]:
    """(lower, strip, chinese): the tokenizer options of a converted model folder, read from its vocabulary
    section (the words the C matcher checks the table against)."""
    from ..model.folder import read_model_parts
    if not (Path(model_dir) / "model.bl14").is_file():
        raise UserError(f"{model_dir}: no model.bl14: give a `bertl14 convert` output folder (the build's "
                        "generated/model)")
    words = read_model_parts(Path(model_dir) / "model.bl14")[1]
    f = words[256 + V.HDR_FLAGS]
    return bool(f & V.FLAG_LOWER_CASE), bool(f & V.FLAG_STRIP_ACCENTS), bool(f & V.FLAG_CHINESE_CHARS)


def build_for_model(registry_file: str | Path, model_dir: str | Path) -> tuple[Registry, list[int]]:
    """Load, validate (with the model's normalisation) and compile a registry for a converted model; shared
    names are said once on stderr (`warning: ...`)."""
    lower, strip, chinese = model_flags(model_dir)
    reg = load(registry_file)
    validate(reg, lower, strip, chinese)
    with warnings.catch_warnings(record=True) as caught:
        warnings.simplefilter("always")
        words = compile_registry(reg, lower, strip, chinese)
    for w in caught:
        print(f"warning: {w.message}", file=sys.stderr)
    return reg, words


def listing(reg: Registry) -> list[dict]:
    """What `:entities` prints, in table order: kind, name, domain, parent's display name."""
    out = []
    for kind, parents in ((KIND_NAME, reg.areas), (KIND_AREA, reg.floors), (KIND_FLOOR, [])):
        for it in reg.items(kind):
            i = _parent_index(parents, it.parent) if parents else NO_PARENT
            out.append({"kind": KIND_KEYS[kind], "name": it.name.encode("utf-8")[:255].decode("utf-8", "ignore"),
                        "domain": it.domain if kind == KIND_NAME else "",
                        "parent": parents[i].name if i != NO_PARENT else ""})
    return out


def table_objects(words: list[int]) -> dict[int, list[tuple[str, int]]]:
    """The objects of a compiled table, as bertl14_registry_name / bertl14_registry_parent read them:
    kind -> [(display name, parent index in the next kind or NO_PARENT)]."""
    pool = b"".join(w.to_bytes(4, "little") for w in words[words[HDR_POOL]:words[HDR_TRIE]])
    counts = {KIND_NAME: words[HDR_N_ENTITIES], KIND_AREA: words[HDR_N_AREAS], KIND_FLOOR: words[HDR_N_FLOORS]}
    out, g = {}, 0
    for kind in (KIND_NAME, KIND_AREA, KIND_FLOOR):
        items = []
        for _ in range(counts[kind]):
            ref, info = words[words[HDR_OBJECTS] + 2 * g], words[words[HDR_OBJECTS] + 2 * g + 1]
            parent = info & 0xFFFF
            if kind == KIND_FLOOR or parent >= counts.get(kind + 1, 0):
                parent = NO_PARENT
            items.append((pool[ref >> 8:(ref >> 8) + (ref & 0xFF)].decode("utf-8", "replace"), parent))
            g += 1
        out[kind] = items
    return out


def entity_domain(words: list[int], index: int) -> int:
    """bertl14_registry_domain: entity `index`'s domain as its index in DOMAINS (0: none, not in DOMAINS, or no
    such entity)."""
    if words[HDR_MAGIC] != MAGIC or not 0 <= index < words[HDR_N_ENTITIES]:
        return 0
    return (words[words[HDR_OBJECTS] + 2 * index + 1] >> 16) & 0xFFF


def main(argv=None) -> int:
    """python -m bertl14_tools.registry.names REGISTRY --model CONVERTED_DIR --out DIR

    Writes DIR/bertl14_registry.c (through render_c), DIR/bertl14_label_domains.c (render_label_domains_c: the
    model's label -> domain bits, for the domain rule) and DIR/registry.json (the words, the flash bytes, the
    listing, the label domains) when their bytes change; a validation error is printed as `error: file:line: ...`,
    exit 2."""
    import argparse
    p = argparse.ArgumentParser(prog="python -m bertl14_tools.registry.names", description=main.__doc__.splitlines()[0])
    p.add_argument("registry", help="registry YAML (or a *_home.json)")
    p.add_argument("--model", required=True, help="converted model folder (its tokenizer options are used)")
    p.add_argument("--out", required=True, type=Path)
    a = p.parse_args(argv)
    try:
        reg, words = build_for_model(a.registry, a.model)
        masks, labels = label_domains_for_model(a.model)
    except UserError as e:
        print(f"error: {e}", file=sys.stderr)
        return 2
    a.out.mkdir(parents=True, exist_ok=True)
    files = {"bertl14_registry.c": render_c(words, str(a.registry)),
             "bertl14_label_domains.c": render_label_domains_c(masks, labels, str(Path(a.model) / "labels.json")),
             "registry.json": json.dumps({"source": str(a.registry), "flash_bytes": flash_bytes(words),
                                          "entities": len(reg.entities), "areas": len(reg.areas),
                                          "floors": len(reg.floors), "listing": listing(reg), "words": words,
                                          "label_domains": masks},
                                         ensure_ascii=False, indent=1) + "\n"}
    for name, text in files.items():   # the C files only when they change; registry.json is the build's stamp
        f = a.out / name
        if name == "registry.json" or not f.is_file() or f.read_text(encoding="utf-8") != text:
            f.write_text(text, encoding="utf-8")
    print(f"registry {a.registry}: {len(reg.entities)} entities, {len(reg.areas)} areas, {len(reg.floors)} floors, "
          f"table {flash_bytes(words):,} B; " + (f"domain rule over {len(masks)} labels" if masks is not None
                                                  else "no intent_domains.json with the model: no domain rule"))
    return 0


if __name__ == "__main__":
    sys.exit(main())
