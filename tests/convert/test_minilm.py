"""The real checkpoint: MiniLM (6 x 384, 12 heads, vocab 30522) converted once per session."""
from __future__ import annotations

import json
import re

import numpy as np

from bertl14_tools.model import float_engine, workbuf
from bertl14_tools.reference import integer as reference
from bertl14_tools.model.folder import open_model, read_model_parts


def test_minilm_dims_flash_and_work_buffer(minilm_converted):
    man = json.loads((minilm_converted / "manifest.json").read_text())
    assert man["dims"] == {"layers": 6, "hidden": 384, "heads": 12, "heads_kept": 12, "head_dim": 32,
                           "intermediate": 1536, "vocab_size": 30522, "max_position": 32,
                           "source_max_position": 512, "num_labels": 0}
    weights, words = read_model_parts(minilm_converted / "model.bl14")
    assert man["flash_bytes"]["weights"] == len(weights) == sum(man["flash_bytes"]["weights_by_group"].values())
    assert man["flash_bytes"]["vocabulary"] == 4 * len(words)
    assert man["work_buffer_bytes"] == workbuf.required_work_buffer_size(weights, 32)
    assert man["calibration"]["source"].startswith("generated")
    # the C array's first and last values are the blob's (the whole-file parse runs on the tiny model)
    text = (minilm_converted / "bertl14_weights.c").read_text()
    body = text[text.index("= {") + 3:]
    head = [int(v) for v in re.findall(r"-?\d+", body[:4000])[:500]]
    tail = [int(v) for v in re.findall(r"-?\d+", body[-4000:])[-500:]]
    blob = np.frombuffer(weights, "<i2")
    assert head == blob[:500].tolist() and tail == blob[-500:].tolist()


def test_minilm_integer_cls_close_to_float(minilm_converted):
    m = open_model(minilm_converted)
    assert m.has_float  # found through the manifest's relative source path
    for text in ("turn on the kitchen lights", "set the bedroom temperature to 21 degrees"):
        ids = m.encode(text)
        a = reference.encode(m.qm, ids).cls_float
        b = float_engine.forward(m.fm, ids).cls
        assert a @ b / np.linalg.norm(a) / np.linalg.norm(b) > 0.99
