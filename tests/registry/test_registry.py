"""Registry: C matcher == Python reference on generated inputs, edge cases, validation."""
from __future__ import annotations

import ctypes
import os
import random
import re
import subprocess
from pathlib import Path

import pytest

from bertl14_tools import cbuild
from bertl14_tools.registry import names as R
from bertl14_tools.model import vocab_blob as V
from bertl14_tools.errors import UserError
from bertl14_tools.model.tokenizer import SPECIAL_TOKENS

REPO = Path(__file__).resolve().parents[2]
SRC = REPO / "bertl14" / "registry" / "bertl14_registry.c"
DATA = Path(os.environ.get("BERTL14_TEST_DATA") or REPO.parent / "shared" / "data" / "ha-intents-tests")

EXAMPLE = """\
floors:
  - {name: Ground Floor, aliases: [downstairs]}
  - {name: 二楼}
areas:
  - {name: Kitchen, floor: Ground Floor}
  - {name: Living Room, aliases: [lounge], floor: Ground Floor}
  - {name: 客厅, floor: 二楼}
entities:
  - {name: Kitchen Light, domain: light, area: Kitchen}
  - {name: TV, aliases: [television, telly], domain: media_player, area: Living Room}
  - {name: Light, domain: light}
  - {name: Café Lamp, domain: light, area: Kitchen}
  - {name: 客厅 lamp, domain: light, area: 客厅}
  - {name: 吊灯, domain: light, area: 客厅}
  - {name: "Rock'n roll speaker", domain: media_player}
"""

WORDS = ["turn", "on", "off", "the", "in", "please", "kitchen", "light", "lights", "living", "room", "tv", "lamp",
         "café", "CAFE", "Kitchen", "LIGHT", "ｋｉｔｃｈｅｎ", "客厅", "吊灯", "打开", "的", "二楼", "lounge", "telly",
         "ground", "floor", "downstairs", "rock", "'", "n", "roll", "speaker", "kitchenette", "x", "!", ",", "?",
         "\u200b", "\t", "  ", "é", "É", "한국", "[MASK]", "ｔｖ", "Ü"]


def build_lib() -> Path:
    """The matcher as the tools build it, with stricter warnings as errors."""
    return cbuild.build_registry_library(extra_flags=["-Werror", "-Wshadow", "-Wconversion"])


class Slot(ctypes.Structure):
    _fields_ = [("kind", ctypes.c_uint32), ("index", ctypes.c_uint32), ("start", ctypes.c_uint32),
                ("end", ctypes.c_uint32)]


class CMatcher:
    def __init__(self, registry: list[int], section: list[int]):
        self.lib = ctypes.CDLL(str(build_lib()))
        self.lib.bertl14_registry_match.restype = ctypes.c_int
        self.lib.bertl14_registry_validate.restype = ctypes.c_int
        self.lib.bertl14_registry_name.restype = ctypes.c_void_p
        self.reg = (ctypes.c_uint32 * len(registry))(*registry)
        self.sec = (ctypes.c_uint32 * len(section))(*section)

    def match(self, text, max_slots=8, out_size=None):
        raw = text.encode("utf-8", "surrogatepass") if isinstance(text, str) else bytes(text)
        size = out_size if out_size is not None else 8 * len(raw) + 64
        out = ctypes.create_string_buffer(max(size, 1))
        slots = (Slot * max(max_slots, 1))()
        n = ctypes.c_uint32(99)
        st = self.lib.bertl14_registry_match(self.reg, self.sec, raw, out, ctypes.c_uint32(size), slots,
                                             ctypes.c_uint32(max_slots), ctypes.byref(n))
        return st, out.value, [(s.kind, s.index, s.start, s.end) for s in slots[:n.value]]


@pytest.fixture(scope="module")
def section():
    """A small uncased vocabulary (own words) with every character of the test words, as a vocabulary section."""
    chars = sorted({c for w in WORDS for c in w.lower()} | set("abcdefghijklmnopqrstuvwxyz'!,?[]") - {" ", "\t"})
    pieces = list(SPECIAL_TOKENS) + chars + ["##" + c for c in chars] + ["kitchen", "light", "name", "area"]
    return V.build_vocab_section({p: i for i, p in enumerate(dict.fromkeys(pieces))})


@pytest.fixture(scope="module")
def example(tmp_path_factory):
    p = tmp_path_factory.mktemp("reg") / "entities.yaml"
    p.write_text(EXAMPLE, encoding="utf-8")
    return R.load(p)


@pytest.fixture(scope="module")
def engines(example, section):
    words = R.compile_registry(example)
    return R.Matcher(words, section), CMatcher(words, section), words


def both(engines, text, **kw):
    py, c, _ = engines
    r_py, r_c = py.match(text, **{k: v for k, v in kw.items() if k == "max_slots"}), c.match(text, **kw)
    assert r_c == r_py, text
    return r_py


def kinds(res):
    return [(R.KIND_KEYS[k], i) for k, i, _, _ in res[2]]


# ---- the edge cases --------------------------------------------------------------------------------------
def test_name_inside_a_name_longest_wins(engines):
    st, out, slots = both(engines, "turn on the kitchen light please")
    assert st == 0 and out == b"turn on the [NAME] please" and kinds((st, out, slots)) == [("name", 0)]
    assert slots[0][2:] == (12, 25)
    assert both(engines, "turn on the kitchen lights")[1] == b"turn on the [AREA] lights"  # word boundary
    assert both(engines, "kitchenette light")[1] == b"kitchenette [NAME]"


def test_alias_and_common_words(engines):
    assert both(engines, "switch the telly off") == (0, b"switch the [NAME] off", [(1, 1, 11, 16)])
    assert both(engines, "TV on")[1] == b"[NAME] on"
    assert both(engines, "a light in the lounge")[1] == b"a [NAME] in the [AREA]"
    assert both(engines, "the tvs")[1] == b"the tvs"


def test_start_end_and_normalisation(engines):
    assert both(engines, "Kitchen")[1] == b"[AREA]"
    assert both(engines, "ＫＩＴＣＨＥＮ ＬＩＧＨＴ!")[1] == b"[NAME]!"  # full-width folded, uppercase, punctuation
    assert both(engines, "CAFE lamp, cafe\u200b LAMP, café lamp")[1] == b"[NAME], [NAME], [NAME]"
    assert both(engines, "kitchen\t\t light")[1] == b"[NAME]"
    assert both(engines, "rock'n roll speaker on")[1] == b"[NAME] on"
    assert both(engines, "downstairs")[2] == [(3, 0, 0, 10)]


def test_mixed_chinese_and_latin(engines):
    st, out, slots = both(engines, "打开客厅lamp")
    assert out == "打开[NAME]".encode() and slots == [(1, 4, 6, 16)]
    assert both(engines, "打开客厅的吊灯")[1] == "打开[AREA]的[NAME]".encode()
    assert both(engines, "二楼的灯")[1] == "[FLOOR]的灯".encode()


def test_numeral_floors_need_their_suffix(section, tmp_path):
    """A floor named "一" is said "一楼"/"一层" and never matched in "等一下"; a floor written "一楼" keeps its name."""
    reg_file = tmp_path / "floors.yaml"
    reg_file.write_text("floors:\n  - {name: 二}\n  - {name: 一}\n  - {name: 一楼}\n", encoding="utf-8")
    reg = R.load(reg_file)
    words = R.compile_registry(reg)
    eng = (R.Matcher(words, section), CMatcher(words, section), words)
    assert both(eng, "打开二楼的灯") == (0, "打开[FLOOR]的灯".encode(), [(3, 0, 6, 12)])
    assert both(eng, "二层")[2] == [(3, 0, 0, 6)]
    assert both(eng, "等一下")[1] == "等一下".encode()        # the bare numeral is a word, not a floor
    assert both(eng, "二")[2] == []
    assert both(eng, "一楼")[2] == [(3, 2, 0, 6)]              # the floor written "一楼" wins over 一's implied form
    assert both(eng, "一层")[2] == [(3, 1, 0, 6)]
    from bertl14_tools.reference.slots import SlotScore
    score = SlotScore()   # "一楼" names floor 一楼 and (implied) floor 一: either expectation agrees
    assert score.add({"floor": "一"}, {"floor": "一楼"}, reg) is True
    assert score.add({"floor": "一楼"}, {"floor": "一楼"}, reg) is True
    assert score.add({"floor": "二"}, {"floor": "一楼"}, reg) is False


def test_empty_registry(section):
    words = R.compile_registry(R.Registry())
    c = CMatcher(words, section)
    assert c.match("turn on the kitchen light") == (0, b"turn on the kitchen light", [])
    assert R.Matcher(words, section).match("turn on the kitchen light") == (0, b"turn on the kitchen light", [])
    assert c.lib.bertl14_registry_validate(c.reg) == 0


def test_errors(engines, section):
    _, c, words = engines
    for bad in [b"\xff kitchen", b"kitchen \xc3", b"\xed\xa0\x80", b"kitchen light \xc0\xaf"]:
        assert c.match(bad) == (R.ERR_INVALID_UTF8, b"", [])
        assert engines[0].match(bad) == (R.ERR_INVALID_UTF8, b"", [])
    assert c.match("kitchen light", out_size=6)[0] == R.ERR_BUFFER_TOO_SMALL
    assert c.match("kitchen light", out_size=7)[1] == b"[NAME]"
    assert both(engines, "tv tv tv", max_slots=2)[1] == b"[NAME] [NAME] tv"
    assert c.lib.bertl14_registry_validate(c.reg) == 0
    corrupt = list(words)
    corrupt[5] += 1
    assert c.lib.bertl14_registry_validate((ctypes.c_uint32 * len(corrupt))(*corrupt)) == R.ERR_INVALID_CONFIG
    cased = R.compile_registry(R.Registry(), lower=False, strip=False)
    assert CMatcher(cased, section).match("x")[0] == R.ERR_INVALID_CONFIG
    n = ctypes.c_uint32()
    p = c.lib.bertl14_registry_name(c.reg, 2, 2, ctypes.byref(n))
    assert ctypes.string_at(p, n.value).decode() == "客厅"


def test_c_equals_python_on_generated_inputs(engines):
    rng = random.Random(9)
    for _ in range(3000):
        text = "".join(rng.choice(WORDS) + rng.choice([" ", "", " ", "\u3000", "-"]) for _ in range(rng.randint(0, 8)))
        both(engines, text, max_slots=rng.choice([0, 1, 8]))
    for _ in range(500):  # random code points around the interesting ranges
        text = "".join(chr(rng.choice([rng.randint(0x20, 0x7e), rng.randint(0xa0, 0x24f), rng.randint(0xff00, 0xff65),
                                       rng.randint(0x4e00, 0x4e20), rng.randint(0xac00, 0xac10), 0x5ba2, 0x5385,
                                       rng.randint(0x300, 0x36f)])) for _ in range(rng.randint(1, 30)))
        both(engines, text)


# ---- validation ---------------------------------------------------------------------------------------------------
@pytest.mark.parametrize("text, message", [
    ("areas:\n  - {name: Kitchen}\n  - {name: KITCHEN}\n", r"entities.yaml:3: duplicate area name 'KITCHEN'.*:2\)"),
    ("entities:\n  - {name: Lamp, area: Attic}\n", r"entities.yaml:2: entity 'Lamp' names unknown area 'Attic'"),
    ("areas:\n  - {name: Den, floor: Roof}\n", r"entities.yaml:2: area 'Den' names unknown floor 'Roof'"),
    ("entities:\n  - {name: '  '}\n", r"entities.yaml:2: entity has an empty name"),
    ("entities:\n  - {name: Lamp, colour: red}\n", r"entities.yaml:2: unknown key\(s\) colour"),
    ("rooms: []\n", r"unknown section\(s\) rooms"),
    ("entities: [\n", r"not valid YAML"),
])
def test_validation_errors(tmp_path, text, message):
    p = tmp_path / "entities.yaml"
    p.write_text(text)
    with pytest.raises(UserError, match=message):
        R.load(p)


def test_example_file_loads():
    reg = R.load(REPO / "docs" / "examples" / "entities.yaml")
    assert reg.entities and reg.areas and reg.floors


def test_c_reads_the_vocabulary_header_where_vocab_blob_writes_it():
    """The section layout the tokenizer and the matcher share (src/bertl14_vocab_section.h) is vocab_blob's."""
    header = (REPO / "bertl14" / "src" / "bertl14_vocab_section.h").read_text()
    enum = re.search(r"enum \{\s*(HDR_MAGIC.*?HEADER_WORDS)\s*\}", header, re.S).group(1)
    names = [n.strip() for n in enum.split(",")]
    assert names[-1] == "HEADER_WORDS" and len(names) == V.HEADER_WORDS + 1
    for i, name in enumerate(names):
        assert getattr(V, name) == i, name
    for flag in ("FLAG_LOWER_CASE", "FLAG_STRIP_ACCENTS", "FLAG_CHINESE_CHARS", "FLAG_IDS_32"):
        assert int(re.search(rf"#define {flag} (\d+)u", header).group(1)) == getattr(V, flag), flag
    assert '#include "bertl14_vocab_section.h"' in SRC.read_text()
    assert int(re.search(r"#define BERTL14_VOCAB_MAGIC (0x[0-9A-F]+)u", header).group(1), 16) == V.MAGIC


@pytest.mark.parametrize("lang", ["en", "zh-CN"])
def test_public_home_registries(lang, section):
    path = DATA / f"{lang}_home.json"
    if not path.is_file():
        pytest.skip(f"public test data not found at {DATA} (set BERTL14_TEST_DATA)")
    with pytest.warns(UserWarning) if lang == "en" else _nothing():
        words = R.compile_registry(R.load(path))
    c = CMatcher(words, section)
    assert c.lib.bertl14_registry_validate(c.reg) == 0
    py = R.Matcher(words, section)
    lines = [l for l in (DATA / f"{lang}.jsonl").read_text(encoding="utf-8").splitlines()[:400] if l]
    import json
    hits = 0
    for line in lines:
        text = json.loads(line)["text"]
        r = c.match(text)
        assert r == py.match(text), text
        hits += bool(r[2])
    assert hits > len(lines) // 4
    print(f"\n{lang}: registry {4 * len(words)} bytes of flash; names found in {hits}/{len(lines)} sentences")


class _nothing:
    def __enter__(self):
        return self

    def __exit__(self, *a):
        return False


def test_render_c_compiles_to_the_same_words(tmp_path, engines):
    words = engines[2]
    src = tmp_path / "bertl14_registry_table.c"
    src.write_text(R.render_c(words, "entities.yaml"))
    main = tmp_path / "main.c"
    main.write_text('#include <stdio.h>\n#include <stdint.h>\nextern const uint32_t bertl14_registry[];\n'
                    'extern const uint32_t bertl14_registry_words;\nint main(void){uint32_t i;'
                    'for(i=0;i<bertl14_registry_words;i++)printf("%u\\n",(unsigned)bertl14_registry[i]);return 0;}\n')
    subprocess.run([cbuild.compiler(), "-std=c99", "-Wall", "-Werror", "-o", str(tmp_path / "t"), str(main), str(src)],
                   check=True)
    out = subprocess.run([str(tmp_path / "t")], capture_output=True, text=True, check=True).stdout.split()
    assert [int(x) for x in out] == words


def test_the_shopping_list_is_its_intents_own(tmp_path, section):
    """Home Assistant's shopping list (todo.shopping_list) is what the shopping-list intents act on and their
    sentences name: the matcher leaves its words to the model instead of masking them as any named list."""
    p = tmp_path / "home.yaml"
    p.write_text("entities:\n"
                 "  - {name: Shopping List, id: todo.shopping_list, domain: todo}\n"
                 "  - {name: Kitchen Light, domain: todo}\n", encoding="utf-8")
    reg = R.load(p)
    assert [d["name"] for d in R.listing(reg)] == ["Kitchen Light"]
    res = R.Matcher(R.compile_registry(reg), section).match("add milk to the shopping list and the kitchen light")
    assert [(R.KIND_KEYS[k], i) for k, i, _, _ in res[2]] == [("name", 0)]
    assert b"shopping list" in res[1]
