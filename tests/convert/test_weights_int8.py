"""`bertl14 convert --weights int8`: INT8 linear weights end to end on a tiny random BERT -- the header and manifest
say so, the linear sections are half the bytes, the C engine (built for INT8 weights) answers as the reference, a
converted folder of the other weight type is converted again or refused, and a library of the other weight type
refuses the blob with a one-line error."""
from __future__ import annotations

import json
import re
import shutil
import struct

import numpy as np
import pytest

from bertl14_tools.model import blob as model_format
from bertl14_tools.model.convert import ConvertOptions, convert
from bertl14_tools.errors import UserError
from cvt_util import CALIB, run_cli, write_tiny_bert

TEXTS = ["turn on the kitchen light", "Lock the door, please!", "what is the temperature"]


def defines(path):
    return dict(re.findall(r"^#define (BERTL14_\w+) (\S+)", path.read_text(), re.M))


def flags(folder):
    weights, _ = model_format.read_model_file(folder / "model.bl14")
    return struct.unpack_from("<I", weights, 44)[0], weights


@pytest.fixture(scope="module")
def conv(tmp_path_factory):
    root = tmp_path_factory.mktemp("w8")
    src = write_tiny_bert(root / "tiny", calibration=CALIB)
    convert(src, root / "i8", ConvertOptions(quantize="int8", progress=False))
    convert(src, root / "i16", ConvertOptions(progress=False))
    return root


def test_header_manifest_and_sizes(conv):
    f8, blob8 = flags(conv / "i8")
    f16, blob16 = flags(conv / "i16")
    assert f8 & model_format.FLAG_WEIGHTS_INT8 and not f16 & model_format.FLAG_WEIGHTS_INT8
    assert defines(conv / "i8" / "bertl14_config.h")["BERTL14_WEIGHTS_INT8"] == "1"
    assert "BERTL14_WEIGHTS_INT8" not in defines(conv / "i16" / "bertl14_config.h")
    m8 = json.loads((conv / "i8" / "manifest.json").read_text())
    m16 = json.loads((conv / "i16" / "manifest.json").read_text())
    assert m8["options"]["quantize"] == "int8" and m16["options"]["quantize"] == "int16"
    g8, g16 = m8["flash_bytes"]["weights_by_group"], m16["flash_bytes"]["weights_by_group"]
    for group in ("attention_qkv", "ffn_up", "ffn_down"):       # w halves; mult/shift/bias stay
        assert g8[group] < 0.6 * g16[group], group
    assert g8["word_embeddings"] == g16["word_embeddings"]
    qm = model_format.read_weights(blob8)
    assert qm.weights == "int8" and qm.layers[0].q.w.dtype == np.int8
    assert model_format.pack_weights(qm) == blob8           # read_weights undoes the blob's weight order


def test_c_engine_encodes_like_ref(conv):
    if not (shutil.which("cc") or shutil.which("gcc")):
        pytest.skip("no host C compiler (cc) for the c engine")
    from bertl14_tools.reference import cengine, integer as reference
    from bertl14_tools.model.folder import open_model
    model = open_model(conv / "i8")
    for kernels in ("portable", "dsp"):
        eng = cengine.CLibrary(conv / "i8", kernels=kernels)        # the model's weight type: the INT8 library
        assert eng.weight_type == "int8"
        for text in TEXTS:
            ids = eng.tokenize(text)
            r = reference.encode(model.qm, ids)
            np.testing.assert_array_equal(eng.encode(ids).hidden, r.hidden, err_msg=f"{kernels} {text!r}")
            k = eng.classify()
            np.testing.assert_array_equal(k.logits, r.logits)
            assert (k.label, k.score_q16) == (r.label, r.score_q16)


def test_library_of_the_other_type_refuses(conv):
    if not (shutil.which("cc") or shutil.which("gcc")):
        pytest.skip("no host C compiler (cc) for the c engine")
    from bertl14_tools.reference import cengine
    _, blob8 = flags(conv / "i8")
    _, blob16 = flags(conv / "i16")
    lib16, lib8 = cengine.load_library("portable"), cengine.load_library("portable", weights="int8")
    assert lib16.bertl14_required_work_buffer_size(blob8, len(blob8), 16) == 0       # the C check itself
    assert lib8.bertl14_required_work_buffer_size(blob16, len(blob16), 16) == 0
    assert lib8.bertl14_required_work_buffer_size(blob8, len(blob8), 16) > 0
    with pytest.raises(UserError, match="INT8 weights but the library was built for INT16.*CONFIG_BERTL14_WEIGHTS_INT8"):
        cengine.CLibrary(conv / "i8", weight_type="int16")
    with pytest.raises(model_format.ModelDataError, match="--weights int8") as e:
        model_format.check_weights(blob16, c_library=True, weights="int8")
    assert e.value.status == model_format.ERR_MODEL_FORMAT


def test_converted_folder_of_the_other_type(conv, tmp_path):
    """A converted INT8 folder asked for INT16 (a build with CONFIG_BERTL14_WEIGHTS_INT16) is converted again from
    its source; without the source, a one-line error naming the weight type."""
    convert(conv / "i8", tmp_path / "again", ConvertOptions(quantize="int16", progress=False))
    assert flags(tmp_path / "again")[1] == flags(conv / "i16")[1]
    lonely = tmp_path / "lonely"
    lonely.mkdir()
    for name in ("model.bl14", "manifest.json", "labels.json", "vocab.txt"):
        (lonely / name).write_bytes((conv / "i8" / name).read_bytes())
    man = json.loads((lonely / "manifest.json").read_text())
    man["sources"]["path"] = "../nowhere"
    (lonely / "manifest.json").write_text(json.dumps(man))
    r = run_cli("convert", "--model", lonely, "--out", tmp_path / "x", "--weights", "int16", "-q")
    assert r.returncode == 2 and "weights int8 (asked int16)" in r.stderr and "Traceback" not in r.stderr
    assert len(r.stderr.strip().splitlines()) == 1
