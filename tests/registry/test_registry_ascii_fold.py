"""Upper-case ASCII in a name with a vocabulary whose map omits the letter (docs/registry.md
"Normalisation"): intent-zh-CN's uncased vocabulary has no piece with 'v', so its map has no 'V' -> 'v' entry
(the tokenizer makes "TV" [UNK] either way), but the registry compiles "TV" as "tv". The matcher folds A-Z
itself when the vocabulary is uncased, in C and in Python alike."""
from __future__ import annotations

from pathlib import Path

import pytest

from bertl14_tools.registry import names as R
from bertl14_tools.model import vocab_blob as V

REPO = Path(__file__).resolve().parents[2]
REGISTRY = """\
areas:
  - name: 客厅
entities:
  - name: TV
    area: 客厅
  - name: Corner Lamp
"""


@pytest.fixture(scope="module")
def zh():
    from bertl14_tools.model.folder import open_model, read_model_parts
    model = open_model(REPO / "models" / "intent-zh-CN", progress=False)
    return model, read_model_parts(model.path / "model.bl14")[1]


def test_upper_case_ascii_matches_without_a_map_entry(tmp_path, zh):
    model, vocab = zh
    h = 256
    keys = {w >> 8 for w in vocab[vocab[h + V.HDR_MAP_KEYS]: vocab[h + V.HDR_MAP_KEYS] + vocab[h + V.HDR_N_MAP]]}
    assert vocab[h + V.HDR_FLAGS] & V.FLAG_LOWER_CASE and ord("V") not in keys   # the case this test is about
    f = tmp_path / "r.yaml"
    f.write_text(REGISTRY, encoding="utf-8")
    reg, words = R.build_for_model(f, model.path)
    engines = [R.Matcher(words, vocab)]
    try:
        from bertl14_tools.reference.cengine import RegistryMatcher
        engines.append(RegistryMatcher(words, vocab))
    except Exception as exc:   # no C compiler: the Python reference alone
        print(f"C matcher not available: {exc}")
    for m in engines:
        for text, out in [("TV下一首", "[NAME]下一首"), ("打开客厅的Tv", "打开[AREA]的[NAME]"),
                          ("turn on the CORNER lamp", "turn on the [NAME]"), ("ＴＶ", "[NAME]")]:
            st, got, slots = m.match(text, 4)
            assert (st, got.decode()) == (0, out), (type(m).__name__, text, got.decode())
    st, got, slots = engines[0].match("TV下一首", 4)
    assert slots == [(R.KIND_NAME, 0, 0, 2)]
