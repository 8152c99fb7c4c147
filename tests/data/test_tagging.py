"""Slot tags: training targets from dataset spans, and the device's decoding rule back to spans and values."""
import sys
from pathlib import Path

from bertl14_tools.reference import tagging
from bertl14_tools.model.slot_values import default_spec

NAMES = tagging.tag_names(["minutes", "hours", "item", "name"])
IDX = {t: i for i, t in enumerate(NAMES)}


def test_tag_names_are_sorted_bio_pairs():
    assert NAMES == ["O", "B-hours", "I-hours", "B-item", "I-item", "B-minutes", "I-minutes", "B-name", "I-name"]


def test_targets_mark_first_token_b_and_the_rest_i():
    text = "add oat milk to my list"
    offsets = [(0, 0), (0, 3), (4, 7), (8, 12), (13, 15), (16, 18), (19, 23), (0, 0)]
    tags = tagging.token_tags(offsets, [[4, 12, "item"]], IDX)
    assert tags == [tagging.IGNORE, 0, IDX["B-item"], IDX["I-item"], 0, 0, 0, tagging.IGNORE]
    # a word piece continuation inside the span is I-, one outside is O
    assert tagging.token_tags([(4, 6), (6, 7), (8, 12)], [[4, 7, "item"]], IDX) == [IDX["B-item"], IDX["I-item"], 0]
    assert text[4:12] == "oat milk"


def test_decode_is_the_devices_rule():
    offs = [(0, 0), (0, 3), (4, 7), (8, 12), (13, 15), (16, 18), (0, 0)]
    O, B, I = 0, IDX["B-item"], IDX["I-item"]
    assert tagging.decode([O, O, B, I, O, O, O], offs, NAMES) == [("item", 4, 12)]
    # an I- that continues nothing opens a span; B- after B- starts a new one; another slot's I- starts its own
    assert tagging.decode([O, O, I, I, O, O, O], offs, NAMES) == [("item", 4, 12)]
    assert tagging.decode([O, O, B, B, O, O, O], offs, NAMES) == [("item", 4, 7), ("item", 8, 12)]
    assert tagging.decode([O, O, B, IDX["I-name"], O, O, O], offs, NAMES) == [("item", 4, 7), ("name", 8, 12)]
    # with the text: a B- right after a span of its slot (a space or a hyphen between, or nothing) continues it
    text = "add oat milk to my"
    assert tagging.decode([O, O, B, B, O, O, O], offs, NAMES, text) == [("item", 4, 12)]
    assert tagging.decode([O, O, B, B, O, O, O], offs, NAMES, "add oat-milk to my") == [("item", 4, 12)]
    assert tagging.decode([O, O, B, B, O, O, O], offs, NAMES, "add oat,milk to my") == [("item", 4, 7), ("item", 8, 12)]
    assert tagging.decode([O, O, B, B, O, O, O], offs, NAMES, text.encode()) == [("item", 4, 12)]
    assert tagging.decode([O, O, B, O, B, O, O], offs, NAMES, text) == [("item", 4, 7), ("item", 13, 15)]
    # special tokens ((0, 0) offsets) never belong to a span, out-of-range tag ids read as O
    assert tagging.decode([B, O, O, O, O, O, I], offs, NAMES) == []
    assert tagging.decode([O, 99, O, O, O, O, O], offs, NAMES) == []


def test_values_of_a_tagged_sentence():
    spec = default_spec("en")
    text = "set a [NAME] timer for an hour and a half"
    words = [(0, 3), (4, 5), (6, 12), (13, 18), (19, 22), (23, 25), (26, 30), (31, 34), (35, 36), (37, 41)]
    offs = [(0, 0)] + words + [(0, 0)]
    tags = [0] * len(offs)
    tags[3] = IDX["B-name"]                     # the registry's placeholder: not the tagger's to answer
    tags[6], tags[7] = IDX["B-hours"], IDX["I-hours"]
    tags[10] = IDX["B-minutes"]                 # "half" tagged minutes, as Home Assistant's timer_half does
    got = tagging.slot_values_of(text, tags, offs, NAMES, spec)
    assert got == {"hours": 1, "minutes": 30}
    # the same on UTF-8 bytes with byte offsets (the device's unit)
    assert tagging.slot_values_of(text.encode(), tags, offs, NAMES, spec) == got
    # the first span that gives a slot wins
    b = IDX["B-minutes"]
    offs2 = [(0, 0), (0, 1), (2, 9), (10, 14), (15, 16), (0, 0)]
    assert tagging.slot_values_of("5 minutes then 7", [0, b, 0, 0, b, 0], offs2, NAMES, spec) == {"minutes": 5}


def test_number_spans_take_the_number_words_that_follow():
    spec = default_spec("en")
    names = tagging.tag_names(["seconds", "hours", "minutes", "brightness", "search_query"])
    idx = {t: i for i, t in enumerate(names)}

    def tagged(text, slot, first_word, n_words=1):
        """`text` split on spaces, words first_word.. tagged B-slot I-slot ..."""
        offs, pos = [], 0
        for w in text.split(" "):
            offs.append((pos, pos + len(w)))
            pos += len(w) + 1
        tags = [0] * len(offs)
        tags[first_word] = idx[f"B-{slot}"]
        for k in range(first_word + 1, first_word + n_words):
            tags[k] = idx[f"I-{slot}"]
        return tagging.slot_values_of(text, [0] + tags + [0], [(0, 0)] + offs + [(0, 0)], names, spec)

    assert tagged("start a timer for one hundred and twenty seconds", "seconds", 4, 2) == {"seconds": 120}
    assert tagged("set a timer for 2 and a half hours", "hours", 4) == {"hours": 2, "minutes": 30}
    assert tagged("dim the light to 50 and the fan to 3", "brightness", 4) == {"brightness": 50}
    # the longer span reads no value ("5 minutes one"): the tagged one is kept
    assert tagged("set the timer for 5 minutes one more time", "minutes", 4, 2) == {"minutes": 5}
    assert tagged("play the album seventy two", "search_query", 3) == {"search_query": "seventy"}   # wildcards: as tagged


def test_values_fit_the_answers_intent():
    numbers = {"brightness": (0, 100), "volume_level": (0, 100), "position": (0, 100), "percentage": (0, 100),
               "temperature": (0, 10000)}
    light = ["area", "brightness", "color", "name"]
    # a number under a slot the intent does not take moves to its one empty number slot
    assert tagging.fit_to_intent({"name": "x", "volume_level": 40}, light, numbers) == {"name": "x", "brightness": 40}
    # text the intent does not take is dropped; kept slots stay; no table: unchanged
    assert tagging.fit_to_intent({"item": "milk", "color": "red"}, light, numbers) == {"color": "red"}
    assert tagging.fit_to_intent({"item": "milk"}, None, numbers) == {"item": "milk"}
    # two empty number slots: no guess, the value is dropped; a slot the sentence filled is not taken twice
    assert tagging.fit_to_intent({"volume_level": 40}, ["brightness", "position"], numbers) == {}
    assert tagging.fit_to_intent({"brightness": 10, "volume_level": 40}, light, numbers) == {"brightness": 10}
    # two empty number slots of different ranges: the one of the tagged slot's range (a percentage is a brightness,
    # not a colour temperature); none of that range: dropped
    light_t = light + ["temperature"]
    assert tagging.fit_to_intent({"name": "x", "position": 5}, light_t, numbers) == {"name": "x", "brightness": 5}
    assert tagging.fit_to_intent({"percentage": 70}, light_t, numbers) == {"brightness": 70}
    # one empty number slot: it, whatever its range (a thermostat's number tagged as a position is its temperature)
    assert tagging.fit_to_intent({"position": 19}, ["area", "name", "temperature"], numbers) == {"temperature": 19}
    assert tagging.fit_to_intent({"position": 5}, ["temperature", "volume_level", "brightness"], numbers) == {}
    assert tagging.fit_to_intent({"minutes": 5}, light_t, numbers) == {}
    # a timer's duration and the duration it was started with are one value under two names, both ways
    cancel, start = ["area", "name", "start_hours", "start_minutes"], ["hours", "minutes", "name"]
    assert tagging.fit_to_intent({"minutes": 45}, cancel, numbers) == {"start_minutes": 45}
    assert tagging.fit_to_intent({"hours": 1, "minutes": 30}, cancel, numbers) == {"start_hours": 1, "start_minutes": 30}
    assert tagging.fit_to_intent({"start_minutes": 5, "name": "tea"}, start, numbers) == {"minutes": 5, "name": "tea"}
    # not when the sentence gave the twin its own value, nor to a twin the intent does not take
    assert tagging.fit_to_intent({"start_minutes": 10, "minutes": 45}, cancel, numbers) == {"start_minutes": 10}
    assert tagging.fit_to_intent({"seconds": 20}, cancel, numbers) == {}


def test_intent_slots_from_spans():
    rows = [{"intent": "A", "spans": [[0, 1, "minutes"], [2, 3, "name"]]}, {"intent": "A", "spans": [[0, 1, "hours"]]},
            {"intent": "none", "slots": {}}]
    assert tagging.intent_slots(rows) == {"A": ["hours", "minutes", "name"], "none": []}


def test_spans_are_whole_words():
    text = "add ice cream and hardcore history"
    assert tagging.whole_words(text, 5, 7) == (4, 7)          # "ce" of "ice"
    assert tagging.whole_words(text, 4, 10) == (4, 13)        # "ice cr" -> "ice cream"
    assert tagging.whole_words(text, 22, 26) == (18, 26)      # "core" -> "hardcore"
    assert tagging.whole_words(text.encode(), 22, 26) == (18, 26)
    assert tagging.whole_words("[NAME] on", 1, 5) == (1, 5)     # inside the placeholder's brackets: its letters
    assert tagging.whole_words("pizza's here", 0, 2) == (0, 5)  # the apostrophe ends the word
    assert tagging.whole_words("12%", 0, 1) == (0, 2)
    assert tagging.whole_words("play lo-fi beats", 5, 7) == (5, 10)     # "lo" -> "lo-fi": a hyphen inside a word
    assert tagging.whole_words(b"the x-men films", 6, 9) == (4, 9)        # "men" -> "x-men"
    assert tagging.whole_words("t-shirt-", 0, 1) == (0, 7)               # not over a hyphen that ends the text
    assert tagging.whole_words("5 - 6", 0, 1) == (0, 1)                  # a hyphen between spaces joins nothing


def test_span_edges_the_reader_settles():
    """Clause punctuation is not part of a value; a number span's growth is read once; a span that reads as nothing
    takes the article before it or drops the one it starts with (bertl14_slots_extract does the same)."""
    spec = default_spec("en")
    names = tagging.tag_names(["temperature", "hours", "minutes", "seconds", "item"])
    idx = {t: i for i, t in enumerate(names)}

    def tagged(text, words_tags):
        """Tokens: `words_tags` = [(token text, tag or None), ...] found left to right in `text`."""
        tags = [0] + [idx[tag] if tag else 0 for _, tag in words_tags] + [0]
        answers = []
        for t in (text, text.encode()):     # characters, and UTF-8 bytes with byte offsets (the device's unit)
            offs, pos = [], 0
            for piece, _ in words_tags:
                piece = piece if isinstance(t, str) else piece.encode()
                pos = t.index(piece, pos)
                offs.append((pos, pos + len(piece)))
                pos += len(piece)
            answers.append(tagging.slot_values_of(t, tags, [(0, 0)] + offs + [(0, 0)], names, spec))
        assert answers[0] == answers[1]
        return answers[0]

    # "21" "." tagged B I: the sentence's full stop is not part of the number
    assert tagged("set the heat to 21.", [("set", 0), ("the", 0), ("heat", 0), ("to", 0), ("21", "B-temperature"),
                                          (".", "I-temperature")]) == {"temperature": 21}
    assert tagged("add oat milk, please", [("add", 0), ("oat", "B-item"), ("milk", "I-item"), (",", "I-item"),
                                           ("please", 0)]) == {"item": "oat milk"}
    assert tagged("加到购物清单：牛奶。", [("加到购物清单", 0), ("：", 0), ("牛奶", "B-item"), ("。", "I-item")]) == {"item": "牛奶"}
    assert tagged("set it to .", [("set", 0), ("it", 0), ("to", 0), (".", "B-temperature")]) == {}
    # "an hour" grows over "and a half": "half" tagged seconds is that growth's, not a value of its own
    assert tagged("timer for an hour and a half", [("timer", 0), ("for", 0), ("an", "B-hours"), ("hour", "I-hours"),
                                                   ("and", 0), ("a", 0), ("half", "B-seconds")]) == {"hours": 1, "minutes": 30}
    # a bare unit reads as one with the article before it; an article before digits is dropped
    assert tagged("set a timer for a minute", [("set", 0), ("a", 0), ("timer", 0), ("for", 0), ("a", 0),
                                               ("minute", "I-minutes")]) == {"minutes": 1}
    assert tagged("start a 3 minute egg timer", [("start", 0), ("a", "B-minutes"), ("3", "B-minutes"),
                                                 ("minute", "I-minutes"), ("egg", 0), ("timer", 0)]) == {"minutes": 3}
    # not an article: "ta" is a word's end ("minutes" needs a number; "a minutes" would read as one); a span that
    # reads a value keeps its edges
    assert tagged("set a timer for ta minutes", [("set", 0), ("a", 0), ("timer", 0), ("for", 0), ("ta", 0),
                                                 ("minutes", "I-minutes")]) == {}
    # a bare "hour" or "minute" is one of it, and grows over "and a half"; "second" alone is an ordinal
    assert tagged("pause the hour timer", [("pause", 0), ("the", 0), ("hour", "I-hours"), ("timer", 0)]) == {"hours": 1}
    assert tagged("the hour and a half timer", [("the", 0), ("hour", "I-hours"), ("and", 0), ("a", 0),
                                                ("half", "B-seconds"), ("timer", 0)]) == {"hours": 1, "minutes": 30}
    assert tagged("stop the second timer", [("stop", 0), ("the", 0), ("second", "B-seconds"), ("timer", 0)]) == {}
    assert tagged("set a timer for a 5 minutes", [("set", 0), ("a", 0), ("timer", 0), ("for", 0), ("a", 0),
                                                  ("5", "B-minutes"), ("minutes", "I-minutes")]) == {"minutes": 5}
    # Chinese: numerals and units after a number span ("二十" + "三", "二十五" + "度半"), before a bare unit ("两个" + "小时")
    zh = lambda text, tagged_chars: tagged(text, [(c, tagged_chars.get(i)) for i, c in enumerate(text)])  # noqa: E731
    assert zh("到二十三", {1: "B-temperature", 2: "I-temperature"}) == {"temperature": 23}
    assert zh("设定二十五度半", {2: "B-temperature", 3: "I-temperature", 4: "I-temperature", 6: "B-seconds"}) \
        == {"temperature": 25.5}
    assert zh("设置两个小时的定时器", {4: "I-hours", 5: "I-hours"}) == {"hours": 2}
    assert zh("两个小时", {}) == {}
    # the nearest start that reads: "一个两小时" reads as nothing, "两小时" as two hours
    assert zh("设置一个两小时的定时器", {5: "I-hours", 6: "I-hours"}) == {"hours": 2}
    # a duration that reads takes the numerals before it when the whole reads too: "一个" + "半小时"
    assert zh("帮我设个一个半小时的计时器", {6: "I-minutes", 7: "I-minutes", 8: "I-minutes"}) == {"hours": 1, "minutes": 30}
    assert zh("倒计时两个半小时", {5: "B-minutes", 6: "I-minutes", 7: "I-minutes"}) == {"hours": 2, "minutes": 30}
    # a number is not a duration: "一个" before "二十度" stays out
    assert zh("调一个二十度", {3: "B-temperature", 4: "I-temperature", 5: "I-temperature"}) == {"temperature": 20}


def test_c_engine_reads_spans_as_the_reference():
    """The C engine's tags (the library's token classifier) and the reference's give the same values of the shipped
    Chinese model, durations whose numerals the tagger left out among them (both settle the spans with
    slot_values_of; the device's bertl14_slots_extract is compared with it on the emulated boards,
    tests/app/test_boards.py)."""
    import json
    import subprocess
    texts = ["帮我设个一个半小时的计时器", "设置一个两小时二十分钟的定时器", "倒计时两个半小时", "麻烦记时两分钟",
             "把温度调到二十三度", "客厅灯亮度调到百分之三十", "设定二十五度半", "两个小时后提醒我"]
    model = Path(__file__).resolve().parents[2] / "models" / "intent-zh-CN"
    answers = {}
    for engine in ("ref", "c"):
        out = subprocess.run([sys.executable, "-m", "bertl14_tools.cli", "predict", "--model", str(model), "--engine",
                              engine, "--json", "--min-score", "0", *texts], capture_output=True, text=True)
        assert out.returncode == 0, out.stderr
        answers[engine] = [json.loads(line) for line in out.stdout.splitlines()]
    assert answers["c"] == answers["ref"]
    slots = {t: a.get("slots", {}) for t, a in zip(texts, answers["c"])}
    assert slots["帮我设个一个半小时的计时器"] == {"hours": 1, "minutes": 30}
    assert slots["倒计时两个半小时"] == {"hours": 2, "minutes": 30}
