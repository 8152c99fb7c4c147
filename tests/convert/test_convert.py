"""`bertl14 convert`: determinism, C sources == model.bl14, config header, pruned/trimmed shapes, errors,
the seed script, and the tokenize/embed/predict/eval JSON contract."""
from __future__ import annotations

import json
import re
import subprocess
import sys

import numpy as np
import pytest

from bertl14_tools.model import blob as model_format, workbuf
from bertl14_tools.model.convert import ConvertOptions, convert
from bertl14_tools.model.folder import read_model_parts
from cvt_util import CALIB, REPO, run_cli, write_tiny_bert

OUTPUT_FILES = ("model.bl14", "bertl14_weights.c", "bertl14_vocab.c", "bertl14_config.h", "labels.json",
                "manifest.json", "vocab.txt", "tokenizer_config.json")


def c_array(path, ctype):
    """The values of the one initialized array in a generated C file."""
    text = path.read_text()
    m = re.search(r"const %s (\w+)\[(\d+)\][^=]*= \{(.*)\};" % ctype, text, re.S)
    assert m, f"no {ctype} array in {path}"
    body = m.group(3)
    if ctype == "uint32_t":
        vals = [int(v.rstrip("u"), 16) for v in re.findall(r"0x[0-9a-f]+u", body)]
    else:
        vals = [int(v) for v in re.findall(r"-?\d+", body)]
    assert len(vals) == int(m.group(2))
    return m.group(1), vals


def defines(path):
    return dict(re.findall(r"^#define (BERTL14_\w+) (\S+)", path.read_text(), re.M))


@pytest.fixture(scope="module")
def tiny_conv(tmp_path_factory):
    root = tmp_path_factory.mktemp("conv")
    src = write_tiny_bert(root / "tiny", calibration=CALIB)
    convert(src, root / "a", ConvertOptions(progress=False))
    convert(src, root / "b", ConvertOptions(progress=False))
    return root


def test_same_input_same_bytes(tiny_conv):
    for name in OUTPUT_FILES:
        assert (tiny_conv / "a" / name).read_bytes() == (tiny_conv / "b" / name).read_bytes(), name


def test_c_sources_hold_the_model_file_bytes(tiny_conv):
    out = tiny_conv / "a"
    weights, words = read_model_parts(out / "model.bl14")
    name, w = c_array(out / "bertl14_weights.c", "int16_t")
    assert name == "bertl14_weights"
    assert np.asarray(w, "<i2").tobytes() == weights
    name, v = c_array(out / "bertl14_vocab.c", "uint32_t")
    assert name == "bertl14_vocab_offsets"
    assert v == words
    text = (out / "bertl14_weights.c").read_text()
    assert "aligned(4)" in text and 'section(".rodata.bertl14_weights")' in text


def test_config_header_and_manifest(tiny_conv):
    out = tiny_conv / "a"
    d = defines(out / "bertl14_config.h")
    blob = read_model_parts(out / "model.bl14")[0]
    man = json.loads((out / "manifest.json").read_text())
    assert d["BERTL14_MAX_SEQ_LEN"] == "32" and d["BERTL14_PRUNE_HEADS"] == "0"
    assert d["BERTL14_QUANTIZE_EMBEDDING"] == "BERTL14_EMBEDDING_INT8" and d["BERTL14_NUM_LABELS"] == "3"
    assert d["BERTL14_HIDDEN_SIZE"] == "32" and d["BERTL14_NUM_LAYERS"] == "2"
    assert int(d["BERTL14_WORK_BUFFER_SIZE"].rstrip("u")) == workbuf.required_work_buffer_size(blob, 32) > 0
    assert man["work_buffer_bytes"] == workbuf.required_work_buffer_size(blob, 32)
    fb = man["flash_bytes"]
    assert fb["weights"] == len(blob) == sum(v for k, v in fb["weights_by_group"].items())
    assert fb["vocabulary"] == (out / "model.bl14").stat().st_size - 24 - len(blob)
    assert man["calibration"] == {"source": "calibration.jsonl (model)", "sentences": len(CALIB)}
    assert set(man["sources"]["files"]) >= {"config.json", "model.safetensors", "vocab.txt"}
    assert json.loads((out / "labels.json").read_text()) == ["intent_0", "intent_1", "intent_2"]


@pytest.mark.parametrize("training, plain, named", [
    ({"min_score": 0.8, "min_score_named": 0.65}, 800, 650),
    ({"min_score": 0.8}, 800, 800),            # a model trained before the second threshold: min_score's
    (None, 0, 0),                              # no training.json: every label answers
])
def test_thresholds_in_header_and_manifest(tiny, tmp_path, training, plain, named):
    """training.json's min_score and min_score_named reach the firmware (bertl14_config.h), the host tools
    (manifest.json) and `convert --json`, in thousandths."""
    if training is not None:
        (tiny / "training.json").write_text(json.dumps(training))
    r = run_cli("convert", "--model", tiny, "--out", tmp_path / "o", "--no-progress", "--json")
    assert r.returncode == 0, r.stderr
    d = defines(tmp_path / "o" / "bertl14_config.h")
    assert (int(d["BERTL14_MIN_SCORE_MILLI"]), int(d["BERTL14_MIN_SCORE_NAMED_MILLI"])) == (plain, named)
    man = json.loads((tmp_path / "o" / "manifest.json").read_text())
    assert (man["min_score_milli"], man["min_score_named_milli"]) == (plain, named)
    out = json.loads(r.stdout)
    assert (out["min_score_milli"], out["min_score_named_milli"]) == (plain, named)


@pytest.mark.parametrize("value", [1.5, "high"])
def test_bad_named_threshold_is_a_one_line_error(tiny, tmp_path, value):
    (tiny / "training.json").write_text(json.dumps({"min_score": 0.8, "min_score_named": value}))
    r = run_cli("convert", "--model", tiny, "--out", tmp_path / "o", "--no-progress")
    assert r.returncode == 2 and "Traceback" not in r.stderr, r.stderr
    assert len(r.stderr.strip().splitlines()) == 1, r.stderr
    assert f"min_score_named {value!r} is outside 0..1" in r.stderr and "training.json" in r.stderr


def test_converted_folder_without_the_named_threshold_is_converted_again(tiny, tmp_path):
    """A folder an older converter wrote (no min_score_named_milli) is converted again from its source when that is
    at hand, so the firmware's BERTL14_MIN_SCORE_NAMED_MILLI is the one the host tools read from training.json."""
    opts = ConvertOptions(progress=False)
    first, copy = tmp_path / "first", tmp_path / "copy"
    convert(tiny, first, opts)
    man = json.loads((first / "manifest.json").read_text())
    del man["min_score_named_milli"]
    (first / "manifest.json").write_text(json.dumps(man))
    (tiny / "training.json").write_text(json.dumps({"min_score": 0.8, "min_score_named": 0.7}))
    convert(first, copy, opts)
    assert defines(copy / "bertl14_config.h")["BERTL14_MIN_SCORE_NAMED_MILLI"] == "700"
    assert json.loads((copy / "manifest.json").read_text())["min_score_named_milli"] == 700


def test_generated_calibration_is_said(tmp_path):
    src = write_tiny_bert(tmp_path / "m")
    man = convert(src, tmp_path / "o", ConvertOptions(progress=False, max_seq_len=16))
    assert man["calibration"]["source"].startswith("generated")
    assert defines(tmp_path / "o" / "bertl14_config.h")["BERTL14_MAX_SEQ_LEN"] == "16"


def test_pruned_and_int4_shapes(tiny, tmp_path):
    man = convert(tiny, tmp_path / "p", ConvertOptions(progress=False, prune_heads=1, embedding="int4"))
    qm = model_format.read_weights(read_model_parts(tmp_path / "p" / "model.bl14")[0])
    assert (qm.heads_total, qm.heads_kept, qm.embedding) == (4, 3, "int4")
    assert qm.layers[0].q.w.shape == (3 * 8, 32) and qm.layers[0].o.w.shape == (32, 3 * 8)
    assert [len(h) for h in man["heads_kept"]] == [3, 3]
    d = defines(tmp_path / "p" / "bertl14_config.h")
    assert (d["BERTL14_PRUNE_HEADS"], d["BERTL14_HEADS_KEPT"]) == ("1", "3")
    assert d["BERTL14_QUANTIZE_EMBEDDING"] == "BERTL14_EMBEDDING_INT4" and d["BERTL14_EMBEDDING_BITS"] == "4"
    compile_next_to_vendor_types(tmp_path / "p", 4)


# A vendor header's own types (board support packages typedef these names), then the library's headers: every
# name they define carries the BERTL14_ prefix, and the embedding macros work in #if.
VENDOR_TYPES_C = r"""
typedef signed char INT8;
typedef short INT16;
typedef float FLOAT32;
typedef signed char INT4;
#include "bertl14.h"
#include "bertl14_config.h"
#if BERTL14_QUANTIZE_EMBEDDING == BERTL14_EMBEDDING_INT4
#define SEEN_BITS 4
#elif BERTL14_QUANTIZE_EMBEDDING == BERTL14_EMBEDDING_INT8
#define SEEN_BITS 8
#endif
typedef char bits_agree[SEEN_BITS == BERTL14_EMBEDDING_BITS && SEEN_BITS == EXPECT_BITS ? 1 : -1];
INT8 a8; INT16 a16; FLOAT32 af; INT4 a4;
bertl14_dtype_t dtype = BERTL14_INT8;
"""


def compile_next_to_vendor_types(model_out, bits):
    from bertl14_tools import cbuild
    src = model_out / "vendor_types.c"
    src.write_text(VENDOR_TYPES_C)
    r = subprocess.run([cbuild.compiler(), "-std=c99", "-Wall", "-Wextra", "-Werror", "-fsyntax-only",
                        f"-DEXPECT_BITS={bits}", f"-I{REPO / 'bertl14' / 'include'}", f"-I{model_out}", str(src)],
                       capture_output=True, text=True)
    assert r.returncode == 0, r.stderr


def test_generated_config_next_to_vendor_types(tiny_conv):
    compile_next_to_vendor_types(tiny_conv / "a", 8)


def test_trimmed_shapes_and_flash_saved(tiny, tmp_path):
    corpus = tmp_path / "corpus.txt"
    corpus.write_text("turn on the kitchen light\nlock the door\n")
    full = convert(tiny, tmp_path / "full", ConvertOptions(progress=False))
    man = convert(tiny, tmp_path / "t", ConvertOptions(progress=False, vocab="trim", vocab_corpus=str(corpus)))
    qm = model_format.read_weights(read_model_parts(tmp_path / "t" / "model.bl14")[0])
    vt = man["vocab_trim"]
    assert qm.vocab_size == vt["vocab_after"] == man["dims"]["vocab_size"] < vt["vocab_before"]
    saved = full["flash_bytes"]["total"] - man["flash_bytes"]["total"]
    assert saved > 0 and abs(sum(vt["flash_saved_bytes"].values()) - saved) <= 8  # padding
    out = run_cli("tokenize", "--model", tmp_path / "t", "--json", "turn on the kitchen light", check=True)
    ids = json.loads(out.stdout)["ids"]
    vocab = (tmp_path / "t" / "vocab.txt").read_text().split("\n")
    assert [vocab[i] for i in ids] == ["[CLS]", "turn", "on", "the", "kitchen", "light", "[SEP]"]


@pytest.mark.parametrize("setup, args, message", [
    (dict(model_type="distilbert"), [], "not 'bert'"),
    (dict(heads=5, hidden=32), [], "not divisible by num_attention_heads 5"),
    (dict(), ["--max-seq-len", "128"], "exceeds the model's 64 positions"),
    (dict(), ["--max-seq-len", "4"], "within 8..512"),
    (dict(), ["--max-seq-len", "1000"], "within 8..512"),
    (dict(), ["--prune-heads", "4"], "would remove every head"),
    ("novocab", [], "no vocab.txt"),
    ("noweights", [], "no model.safetensors or pytorch_model.bin"),
    ("empty", [], "no config.json"),
])
def test_errors_are_one_line_exit_2(tmp_path, setup, args, message):
    src = tmp_path / "m"
    if isinstance(setup, dict):
        write_tiny_bert(src, **setup)
    else:
        write_tiny_bert(src)
        victim = {"novocab": ["vocab.txt"], "noweights": ["model.safetensors"],
                  "empty": ["config.json", "vocab.txt", "model.safetensors"]}[setup]
        for name in victim:
            (src / name).unlink()
    r = run_cli("convert", "--model", src, "--out", tmp_path / "o", "--no-progress", *args)
    assert r.returncode == 2, r.stderr
    assert message in r.stderr and "Traceback" not in r.stderr
    assert len(r.stderr.strip().splitlines()) == 1, r.stderr


def test_seed_script(tiny, tmp_path):
    r = subprocess.run([sys.executable, REPO / "scripts" / "convert_bert_to_bertl14.py",
                        "--model_name_or_path", tiny, "--output_dir", tmp_path / "seed", "--max_seq_len", "16",
                        "--quantize", "int16", "--target_arch", "cortex-m4", "--no_progress"],
                       capture_output=True, text=True)
    assert r.returncode == 0, r.stderr
    d = defines(tmp_path / "seed" / "bertl14_config.h")
    assert d["BERTL14_MAX_SEQ_LEN"] == "16"
    assert json.loads((tmp_path / "seed" / "manifest.json").read_text())["options"]["target_arch"] == "cortex-m4"
    r = subprocess.run([sys.executable, REPO / "scripts" / "convert_bert_to_bertl14.py",
                        "--model_name_or_path", tiny, "--output_dir", tmp_path / "x", "--max_seq_len", "2048"],
                       capture_output=True, text=True)
    assert r.returncode == 2 and "within 8..512" in r.stderr and "Traceback" not in r.stderr


# -- the JSON contract of tokenize / embed / predict / eval --------------------------------------------

def _lines(r):
    assert r.returncode == 0, r.stderr
    return [json.loads(line) for line in r.stdout.splitlines()]


def test_cli_json_contract(tiny_conv, tmp_path):
    m = tiny_conv / "a"
    texts = ["turn on the kitchen light", "lock the door"]
    toks = _lines(run_cli("tokenize", "--model", m, "--json", *texts))
    assert [t["text"] for t in toks] == texts and all(t["ids"][0] == 3 and t["ids"][-1] == 4 for t in toks)
    assert _lines(run_cli("tokenize", "--model", m, "--json", "-", input="\n".join(texts) + "\n")) == toks
    for engine in ("ref", "float"):
        emb = _lines(run_cli("embed", "--model", m, "--engine", engine, "--json", *texts))
        assert [e["text"] for e in emb] == texts and all(len(e["cls"]) == 32 for e in emb)
        if engine == "ref":
            e = emb[0]
            assert np.allclose(np.asarray(e["cls_int8"]) * e["cls_scale"], e["cls"])
        pred = _lines(run_cli("predict", "--model", m, "--engine", engine, "--json", *texts))
        for p, t in zip(pred, toks):
            assert set(p) == {"text", "intent", "score", "tokens"}
            assert p["intent"] in ("intent_0", "intent_1", "intent_2") and 0 < p["score"] <= 1
            assert p["tokens"] == len(t["ids"])
    data = tmp_path / "d.jsonl"
    data.write_text("".join(json.dumps({"text": t, "intent": "intent_1"}) + "\n" for t in CALIB))
    res = _lines(run_cli("eval", "--model", m, "--data", data, "--json"))
    assert len(res) == 1 and set(res[0]) == {"n", "accuracy", "macro_f1", "accuracy_argmax", "macro_f1_argmax",
                                             "min_score", "min_score_named", "agreement_with_float"}
    assert res[0]["min_score"] == res[0]["min_score_named"] == 0                           # no training.json
    assert res[0]["accuracy"] == res[0]["accuracy_argmax"]
    assert res[0]["n"] == len(CALIB) and 0 <= res[0]["accuracy"] <= 1
    assert res[0]["agreement_with_float"] is not None  # the source folder is found next to the output


def test_hf_folder_converted_on_the_fly(tiny, tmp_path, monkeypatch):
    monkeypatch.setenv("BERTL14_CACHE", str(tmp_path / "cache"))
    r1 = _lines(run_cli("predict", "--model", tiny, "--json", "lock the door"))
    assert len(list((tmp_path / "cache").iterdir())) == 1
    r2 = _lines(run_cli("predict", "--model", tiny, "--engine", "float", "--json", "lock the door"))
    assert r1[0]["tokens"] == r2[0]["tokens"] == 5


def test_engine_errors(tiny_conv, tmp_path):
    r = run_cli("predict", "--model", tmp_path / "nope", "--json", "x")
    assert r.returncode == 2 and "no such model folder" in r.stderr
    r = run_cli("eval", "--model", tiny_conv / "a", "--data", tmp_path / "missing.jsonl", "--json")
    assert r.returncode == 2 and "Traceback" not in r.stderr


def _need_c_engine():
    pytest.importorskip("bertl14_tools.reference.cengine", reason="C engine not in this checkout")
    import shutil
    if not (shutil.which("cc") or shutil.which("gcc")):
        pytest.skip("no host C compiler (cc) for the c engine")


TEXTS = ["turn on the kitchen light", "Lock the door, please!", "what is the temperature"]


def test_c_engine_tokenizes_like_ref_and_hf(tiny_conv):
    _need_c_engine()
    m = tiny_conv / "a"
    ref = _lines(run_cli("tokenize", "--model", m, "--engine", "ref", "--json", *TEXTS))
    assert _lines(run_cli("tokenize", "--model", m, "--engine", "c", "--json", *TEXTS)) == ref
    pytest.importorskip("tokenizers", reason="Hugging Face tokenizers not installed")
    assert _lines(run_cli("tokenize", "--model", m, "--engine", "hf", "--json", *TEXTS)) == ref


def test_c_engine_embeds_like_ref(tiny_conv):
    _need_c_engine()
    m = tiny_conv / "a"
    ref = _lines(run_cli("embed", "--model", m, "--engine", "ref", "--json", *TEXTS))
    c = _lines(run_cli("embed", "--model", m, "--engine", "c", "--json", *TEXTS))
    assert [x["cls_int8"] for x in ref] == [x["cls_int8"] for x in c]
    assert [x["cls_scale"] for x in ref] == [x["cls_scale"] for x in c]


def test_converted_folder_as_input(tiny_conv, tmp_path):
    """The build may name a converted folder: copied when the shape options match, else re-converted
    from its source, else a clear error."""
    src = tiny_conv / "a"
    same = tmp_path / "deeper" / "same"
    r = run_cli("convert", "--model", src, "--out", same, "--no-progress")
    assert r.returncode == 0, r.stderr
    for name in ("model.bl14", "bertl14_weights.c", "bertl14_config.h"):
        assert (same / name).read_bytes() == (src / name).read_bytes()
    assert (same / json.loads((same / "manifest.json").read_text())["sources"]["path"] / "config.json").is_file()
    r = run_cli("convert", "--model", src, "--out", tmp_path / "s16", "--max-seq-len", "16", "--no-progress")
    assert r.returncode == 0, r.stderr
    assert defines(tmp_path / "s16" / "bertl14_config.h")["BERTL14_MAX_SEQ_LEN"] == "16"
    lonely = tmp_path / "lonely"
    lonely.mkdir()
    for name in ("model.bl14", "manifest.json", "labels.json", "vocab.txt"):
        (lonely / name).write_bytes((src / name).read_bytes())
    man = json.loads((lonely / "manifest.json").read_text())
    man["sources"]["path"] = "../nowhere"
    (lonely / "manifest.json").write_text(json.dumps(man))
    r = run_cli("convert", "--model", lonely, "--out", tmp_path / "x", "--prune-heads", "2", "--no-progress")
    assert r.returncode == 2 and "prune_heads 0 (asked 2)" in r.stderr and "Traceback" not in r.stderr


def test_converted_folder_carries_intent_domains(tiny, tmp_path):
    """intent_domains.json (the registry's domain rule) travels with the converted folder: written by the converter,
    copied with a converted input, taken from the source again when an older conversion lacks it, and not left
    stale once the source has none."""
    opts = ConvertOptions(progress=False)
    table = {"LABEL_1": ["light", "fan"]}
    (tiny / "intent_domains.json").write_text(json.dumps(table))
    first, copy = tmp_path / "first", tmp_path / "copy"
    convert(tiny, first, opts)
    assert json.loads((first / "intent_domains.json").read_text()) == table
    assert "intent_domains.json" in json.loads((first / "manifest.json").read_text())["sources"]["files"]
    convert(first, copy, opts)
    assert json.loads((copy / "intent_domains.json").read_text()) == table
    (first / "intent_domains.json").unlink()           # as a converter that did not carry it left the folder
    (copy / "intent_domains.json").unlink()
    convert(first, copy, opts)
    assert json.loads((copy / "intent_domains.json").read_text()) == table
    assert (copy / "bertl14_weights.c").read_bytes() == (first / "bertl14_weights.c").read_bytes()
    (tiny / "intent_domains.json").unlink()
    convert(first, copy, opts)
    assert not (copy / "intent_domains.json").exists()
