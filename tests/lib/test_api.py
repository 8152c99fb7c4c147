"""The public API natively (api_checks.c, built with the library): NULL arguments, error codes,
sizing, the short calls' default context, tensor dumps; and the Python work-buffer mirror."""
from __future__ import annotations

import subprocess
from pathlib import Path

import numpy as np
import pytest
from randmodel import dummy_vocab, random_quant_model

from bertl14_tools import cbuild
from bertl14_tools.reference import cengine
from bertl14_tools.model import workbuf
from bertl14_tools.errors import UserError

HERE = Path(__file__).parent


@pytest.mark.parametrize("labels,tags", [(5, 0), (0, 0), (5, 7), (0, 3)])
def test_api_checks(tmp_path, kernels, pack, labels, tags):
    try:
        exe = cbuild.build_executable([HERE / "api_checks.c"], "api_checks", kernels)
    except UserError as exc:
        pytest.skip(str(exc))
    qm = random_quant_model(labels=labels, max_position=16, tags=tags)
    (tmp_path / "w.bin").write_bytes(pack(qm))
    (tmp_path / "v.bin").write_bytes(dummy_vocab().astype("<u4").tobytes())
    r = subprocess.run([str(exe), str(tmp_path / "w.bin"), str(tmp_path / "v.bin"), str(labels), str(tags)],
                       capture_output=True, text=True, timeout=60)
    assert r.returncode == 0, r.stdout + r.stderr
    assert "0 failures" in r.stdout


@pytest.mark.parametrize("labels,claimed", [(5, 0), (0, 5), (5, 4)])
def test_api_checks_expect_one_status(tmp_path, pack, labels, claimed):
    """The classify checks accept only the status the model's head implies: told the wrong label count, they fail."""
    try:
        exe = cbuild.build_executable([HERE / "api_checks.c"], "api_checks", "portable")
    except UserError as exc:
        pytest.skip(str(exc))
    (tmp_path / "w.bin").write_bytes(pack(random_quant_model(labels=labels, max_position=16)))
    (tmp_path / "v.bin").write_bytes(dummy_vocab().astype("<u4").tobytes())
    r = subprocess.run([str(exe), str(tmp_path / "w.bin"), str(tmp_path / "v.bin"), str(claimed), "0"],
                       capture_output=True, text=True, timeout=60)
    assert r.returncode == 1 and "0 failures" not in r.stdout, r.stdout
    failed = [ln for ln in r.stdout.splitlines() if ln.startswith("FAIL")]
    assert any("num_labels == labels" in ln for ln in failed), failed
    assert any("classify" in ln or "cls.num_labels" in ln for ln in failed), failed


@pytest.mark.parametrize("kw", [dict(), dict(heads_kept=5), dict(hidden=48, heads_total=6, heads_kept=6,
                                                                  intermediate=72, labels=0),
                                dict(tags=9), dict(labels=0, tags=200)])
@pytest.mark.parametrize("max_seq_len", [1, 7, 16, 64])
def test_workbuf_mirror_is_exact(pack, lib, kw, max_seq_len):
    qm = random_quant_model(**kw)
    blob = pack(qm)
    c = cengine.load_library("portable").bertl14_required_work_buffer_size(blob, len(blob), max_seq_len)
    assert c == workbuf.required_work_buffer_size(blob, max_seq_len) == workbuf.work_buffer_size(qm, max_seq_len)


def test_buffer_grows_linearly_not_with_layers(pack, lib):
    a = [workbuf.work_buffer_size(random_quant_model(layers=nl), n) for nl in (1, 14) for n in (16, 32, 48)]
    assert a[:3] == a[3:]
    assert a[1] - a[0] == a[2] - a[1]  # linear in max_seq_len


def test_engine_refuses_non_blob():
    with pytest.raises(UserError, match="not a bertl14 weights blob"):
        cengine.CLibrary(b"\0" * 128, np.zeros(300, np.uint32))


def test_tagger_adds_one_row_of_logits(pack, lib):
    """The token classifier needs num_tags int32 more (one token's logits); models without it keep their figure."""
    for n in (1, 16, 64):
        plain = workbuf.work_buffer_size(random_quant_model(), n)
        assert workbuf.work_buffer_size(random_quant_model(tags=9), n) == plain + 9 * 4
        a, b = workbuf.plan(64, 8, 8, 128, 5, n), workbuf.plan(64, 8, 8, 128, 5, n, num_tags=9)
        assert {k: b[k] for k in a} == dict(a, total=a["total"] + 36) and b["tag32"] == a["total"]
