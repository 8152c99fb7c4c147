"""The registry on the wire (docs/serial-protocol.md "Names"): the default build carries
app/entities.yaml; answers report name= area= floor= entity_area= (percent-encoded), bit-exact with the
reference (registry.Matcher + reference/integer.py); `:entities` lists the registry; bad input with names; a
sentence with a name is answered with CONFIG_APP_MIN_SCORE_NAMED (host builds)."""
from __future__ import annotations

import json
import subprocess
import sys
from pathlib import Path

from apphelpers import REPO, build_firmware, reference_for


def _check(device, reference, text):
    from bertl14_tools.device.serial import compare
    ans = device.ask(text)
    diffs = compare(ans, reference.expect(text), device.dump)
    assert not diffs, (text, ans.line, diffs)
    return ans.fields


def test_answers_carry_the_names(device, reference):
    f = _check(device, reference, "switch on the tv in the lounge")     # alias -> display names
    assert (f["name"], f["area"], f["entity_area"], f["names"]) == ("Television", "Living Room", "Living Room", "2")
    f = _check(device, reference, "turn off the towel rail upstairs")
    assert (f["name"], f["floor"], f["entity_area"]) == ("Towel Rail", "Top Floor", "Bathroom") and "area" not in f
    f = _check(device, reference, "what is the temperature in the bedroom")
    assert f["area"] == "Bedroom" and "name" not in f and f["names"] == "1"
    f = _check(device, reference, "打开小夜灯")                          # a Chinese name, UTF-8 kept as is
    assert f["name"] == "小夜灯" and f["entity_area"] == "Balcony"
    f = _check(device, reference, "turn on the kitchen lights")           # longest match: not the area
    assert f["name"] == "Kitchen Light" and "area" not in f
    f = _check(device, reference, "set a timer for five minutes")
    assert f["names"] == "0" and not {"name", "area", "floor"} & set(f)
    assert int(f["match_cycles"]) <= int(f["cycles"])


def test_the_answer_respects_the_domain_of_a_name(device, reference):
    """Desk Fan and Cooker Hood are fans in app/entities.yaml: "set the [NAME] to 40 percent" reads like a light's
    brightness or a cover's position to the model alone; the device answers among the intents that accept a fan
    (the domain rule, bertl14_classify_allowed with the generated bertl14_label_domains[]), as the reference does."""
    for text in ("set the desk fan to 40 percent", "put the cooker hood at 40 percent"):
        f = _check(device, reference, text)
        assert (f.get("best") or f["intent"]) == "HassFanSetSpeed", f
        words, max_names, domains = reference.words, reference.max_names, reference.label_domains
        reference.set_registry(words, max_names, None)                      # the same without the rule
        try:
            alone = reference.expect(text).label
        finally:
            reference.set_registry(words, max_names, domains)
        assert alone != "HassFanSetSpeed", "the model alone already answers this one: the rule is not exercised"
    f = _check(device, reference, "set the sofa blinds to 40 percent")  # a cover stays a cover
    assert (f.get("best") or f["intent"]) == "HassSetPosition"
    f = _check(device, reference, "turn on the desk fan")                # HassTurnOn accepts a fan
    assert (f.get("best") or f["intent"]) == "HassTurnOn"


def test_a_number_goes_to_the_slot_of_its_range(device, reference):
    """The domain rule answers HassLightSet for a light's name while the tagger, reading "[NAME] to 5%", may tag the
    number as a cover's position: the answer carries it as the light's brightness (the slot of the same range,
    0..100), not its colour temperature (fit_values, tagging.fit_to_intent), on the device as in the reference."""
    for text, value in (("set the kitchen light to 5%", "5"), ("put the kitchen light at 70 percent", "70")):
        f = _check(device, reference, text)
        assert f["intent"] == "HassLightSet" and f.get("brightness") == value and "temperature" not in f, (text, f)


def test_a_timer_length_names_the_running_timer(device, reference):
    """The tagger may read "for 15 minutes" after "the timer i set" as a new timer's length (minutes); in an answer
    about a running timer it is the length that timer was started with (start_minutes: fit_values,
    tagging.fit_to_intent), on the device as in the reference."""
    want = {"stop the timer i set for 15 minutes": ("HassCancelTimer", "15"),
            "how long is left on the timer i set for 30 minutes": ("HassTimerStatus", "30")}
    for text, (intent, value) in want.items():
        f = _check(device, reference, text)
        assert (f["intent"], f.get("start_minutes")) == (intent, value) and "minutes" not in f, (text, f)


def test_slot_values_the_reader_settles(device, reference):
    """The device's span rules (bertl14_slots_extract) answer as the reference's (tagging.slot_values_of) where they
    act: a full stop after a number, a number span grown over words tagged as another slot, an article before a
    bare unit or before digits."""
    want = {"set the heat to 22.": ("temperature", "22"), "timer for one hour and a half": ("minutes", "30"),
            "a minute timer please": ("minutes", "1"), "put on a 5 minute tea timer": ("minutes", "5"),
            "add oat milk, to the shopping list": ("item", "oat milk")}
    for text, (key, value) in want.items():
        f = _check(device, reference, text)
        assert f.get(key) == value, (text, f)
    assert "seconds" not in _check(device, reference, "timer for one hour and a half")


def test_entities_lists_the_registry(device):
    from bertl14_tools.registry import names as R
    want = [{k: d[k] for k in ("kind", "name", "parent")} for d in R.listing(R.load(REPO / "app" / "entities.yaml"))]
    assert device.entities() == want
    cfg = device.command(":config").fields
    assert (cfg["entities"], cfg["areas"], cfg["floors"], cfg["max_names"]) == ("13", "7", "2", "4")
    assert any(":entities" in line for line in device.ask(":help").before)


def test_bad_input_with_names(device, reference):
    device.send("turn on the tv ".encode() + b"\xff\xfe")               # a name, then invalid UTF-8
    assert device.read_answer().line.startswith("error=invalid_utf8 ")
    device.send(b"\xe5\xb0\x8f\xe5\xa4\x9c\xe7\x81")                    # 小夜灯 cut in its last character
    assert device.read_answer().line.startswith("error=invalid_utf8 ")
    full = " ".join(["tv"] * 80)                                         # a line full of names, 239 bytes
    f = _check(device, reference, full)
    assert f["names"] == "4" and f["name"] == "Television"              # max_names replaced, the rest is text
    f = _check(device, reference, "kitchen tv lounge upstairs radiator hall desk fan")   # more names than slots
    assert f["names"] == "4" and (f["area"], f["name"], f["floor"]) == ("Kitchen", "Television", "Top Floor")
    f = _check(device, reference, "tv,tv.tv!tv?tv")                     # punctuation between names
    assert f["names"] == "4"
    _check(device, reference, "turn on the kitchen light")              # and the device is fine afterwards
    stats = device.command(":stats").fields
    assert stats["errors"] == "2"


def test_encoding_round_trip():
    from bertl14_tools.device.serial import decode_value, encode_value, parse_fields
    for name in ["Living Room", "50% = Lamp", "小夜灯", "a\tb\x7f", "%20", "=", "Café Lamp"]:
        enc = encode_value(name)
        assert " " not in enc and "=" not in enc and "\t" not in enc
        assert decode_value(enc) == name
        assert parse_fields(f"intent=X name={enc} area={encode_value('Hall')}")["name"] == name
    assert encode_value("50% = Lamp") == "50%25%20%3D%20Lamp"


NAMED_PROBES = ["turn on the kitchen light", "switch on the tv in the lounge", "turn off the towel rail upstairs",
                "what is the temperature in the bedroom", "set a timer for five minutes", "what time is it"]


def _predict(model: Path, texts: list[str], *flags: str) -> list[dict]:
    """`bertl14 predict --json` with the default build's registry (app/entities.yaml)."""
    proc = subprocess.run([sys.executable, "-m", "bertl14_tools.cli", "predict", "--model", str(model), "--entities",
                           str(REPO / "app" / "entities.yaml"), *flags, "--json", *texts],
                          capture_output=True, text=True, timeout=600, cwd=REPO)
    assert proc.returncode == 0, proc.stderr[-3000:]
    return [json.loads(line) for line in proc.stdout.splitlines()]


def _host_answers(elf: Path, lines: list[str]):
    """The answers of a host build (stdin in, stdout out; the end of input ends it) to `lines`."""
    from bertl14_tools.device.serial import Answer, parse_fields
    proc = subprocess.run([str(elf)], input="".join(t + "\n" for t in lines).encode(), capture_output=True,
                          timeout=120)
    assert proc.returncode == 0, proc.stderr.decode(errors="replace")[-3000:]
    out = [line for line in proc.stdout.decode().split("\r\n") if line.startswith(("intent=", "error=", "ok "))]
    assert len(out) == len(lines), out
    return [Answer(line=line, fields=parse_fields(line)) for line in out]


def test_a_sentence_with_a_name_is_answered_with_the_named_threshold(tmp_path_factory):
    """A sentence in which the registry replaced a name, scored s, between the two thresholds (s and s + 1
    thousandths): answered when CONFIG_APP_MIN_SCORE_NAMED is below its score, `intent=none ... best=` when it is
    above. Two host builds; every answer is also what the validator's reference (with the thresholds read back from
    the device's `:config`) and `bertl14 predict` give."""
    from bertl14_tools.device.serial import compare, device_thresholds
    argmax = _predict(REPO / "models" / "intent-en", NAMED_PROBES, "--min-score", "0")
    text, best = next((t, a) for t, a in zip(NAMED_PROBES, argmax)
                      if a["names"] and a["intent"] != "none" and a["score"] < 1)
    s = round(best["score"] * 1000)
    for plain, named, answered in ((s + 1, s, True), (s, s + 1, False)):
        elf = build_firmware(tmp_path_factory, "none", f"-DCONFIG_APP_MIN_SCORE={plain}",
                             f"-DCONFIG_APP_MIN_SCORE_NAMED={named}", board="host") / "firmware.elf"
        config, *answers = _host_answers(elf, [":config", *NAMED_PROBES])
        ref = reference_for(elf)
        assert device_thresholds(config.fields) == (ref.min_score, ref.min_score_named) == (plain, named)
        host = _predict(elf.parent / "generated" / "model", NAMED_PROBES, "--min-score", str(plain / 1000),
                        "--min-score-named", str(named / 1000))
        for t, ans, p in zip(NAMED_PROBES, answers, host):
            assert not compare(ans, ref.expect(t), False), (t, ans.line, compare(ans, ref.expect(t), False))
            assert (ans.fields["intent"], ans.fields.get("best"), ans.fields["score"]) == \
                (p["intent"], p.get("best"), f"{p['score']:.3f}"), (t, ans.line, p)
        f = answers[NAMED_PROBES.index(text)].fields
        assert f["score"] == f"{s / 1000:.3f}" and f["names"] != "0", f
        assert (f["intent"], f.get("best")) == ((best["intent"], None) if answered else ("none", best["intent"])), f
