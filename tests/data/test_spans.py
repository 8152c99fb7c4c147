"""Slot spans of `bertl14 dataset` rows: the character span of every slot the template filled, in the text
as written (placeholders in masked rows), which the token tagger is trained on."""
import re

import pytest

from bertl14_tools.data import dataset as data


@pytest.fixture(scope="module")
def en():
    return data.build_dataset("en", per_intent=30, seed=5, mask_names=0.5)


def test_marked_sentence_gives_spans_in_both_forms():
    marked = data.clean_marked("set \ue010\ue001corner lamp\ue00f\ue011 to \ue010 forty \ue011 percent")
    plain, spans, masked, masked_spans = data.split_marked_spans(marked, ["name", "brightness"])
    assert plain == "set corner lamp to forty percent"
    assert [plain[a:b] for a, b, _ in spans] == ["corner lamp", "forty"]
    assert masked == "set [NAME] to forty percent"
    assert [(masked[a:b], s) for a, b, s in masked_spans] == [("[NAME]", "name"), ("forty", "brightness")]
    # no entity: no masked form, spans still found
    # a duration's span covers its unit word (not one joined by a hyphen); other slots' spans do not grow
    assert data.split_marked_spans("\ue010五\ue011分钟", ["minutes"]) == ("五分钟", [[0, 3, "minutes"]], None, [])
    plain, spans, _, _ = data.split_marked_spans("timer \ue0101\ue011 hour \ue01010\ue011-minutes \ue010two\ue011 hoursmith",
                                                 ["hours", "minutes", "seconds"])
    assert [(plain[a:b], s) for a, b, s in spans] == [("1 hour", "hours"), ("10", "minutes"), ("two", "seconds")]
    plain, spans, _, _ = data.split_marked_spans("add \ue010five\ue011 minutes", ["item"])
    assert [(plain[a:b], s) for a, b, s in spans] == [("five", "item")]


def test_every_row_spans_its_slot_values(en):
    checked = 0
    for row in en.train + en.validation:
        text, spans = row["text"], row.get("spans", [])
        for a, b, slot in spans:
            assert 0 <= a < b <= len(text) and text[a:b] == text[a:b].strip(), row
            value = row["slots"].get(slot)
            piece = text[a:b]
            if re.fullmatch(r"\[(NAME|AREA|FLOOR)\]", piece):
                assert row.get("masked"), row
            elif slot in ("name", "area", "floor", "item", "message", "search_query") and isinstance(value, str):
                assert piece.lower() == value.lower(), row
                checked += 1
            elif isinstance(value, int) and piece.isdigit():
                assert int(piece) == value, row
                checked += 1
        # spans do not overlap
        ends = [b for _, b, _ in spans]
        assert all(spans[i + 1][0] >= ends[i] for i in range(len(spans) - 1)), row
    assert checked > 200


def test_out_of_domain_rows_have_no_spans(en):
    assert all(not r.get("spans") for r in en.train if r["intent"] == "none")
