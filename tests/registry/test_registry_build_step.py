"""The firmware build's registry step, `python -m bertl14_tools.registry.names FILE --model DIR --out DIR`
(cmake/registry.cmake): writes bertl14_registry.c (render_c of compile_registry for the model's tokenizer
options) and registry.json; a bad file exits 2 with `error: file:line: ...` and no traceback; an unchanged
table is not rewritten (no recompile); the listing is what the firmware's `:entities` prints."""
from __future__ import annotations

import json
import subprocess
import sys
from pathlib import Path

import pytest

REPO = Path(__file__).resolve().parents[2]


@pytest.fixture(scope="module")
def model_dir() -> Path:
    from bertl14_tools.model.folder import open_model
    return open_model(REPO / "models" / "intent-en", progress=False).path


def _run(*args) -> subprocess.CompletedProcess:
    return subprocess.run([sys.executable, "-m", "bertl14_tools.registry.names", *map(str, args)], capture_output=True,
                          text=True, timeout=120, cwd=REPO)


def test_writes_the_table_for_the_model(tmp_path, model_dir):
    from bertl14_tools.registry import names as R
    src = REPO / "app" / "entities.yaml"
    proc = _run(src, "--model", model_dir, "--out", tmp_path)
    assert proc.returncode == 0, proc.stderr
    lower, strip, chinese = R.model_flags(model_dir)
    words = R.compile_registry(R.load(src), lower, strip, chinese)
    assert (tmp_path / "bertl14_registry.c").read_text() == R.render_c(words, str(src))
    data = json.loads((tmp_path / "registry.json").read_text())
    assert data["words"] == words and data["flash_bytes"] == 4 * len(words)
    assert (data["entities"], data["areas"], data["floors"]) == (13, 7, 2)
    assert data["listing"][0] == {"kind": "name", "name": "Kitchen Light", "domain": "light", "parent": "Kitchen"}
    assert data["listing"][-1] == {"kind": "floor", "name": "Top Floor", "domain": "", "parent": ""}
    assert f"table {4 * len(words):,} B" in proc.stdout
    # the model's options are in the table's header: the matcher accepts it with this vocabulary
    from bertl14_tools.model.folder import read_model_parts
    st, out, slots = R.Matcher(words, read_model_parts(model_dir / "model.bl14")[1]).match("dim the TV in the lounge")
    assert (st, out, [s[:2] for s in slots]) == (0, b"dim the [NAME] in the [AREA]", [(1, 3), (2, 1)])


def test_unchanged_table_is_not_rewritten(tmp_path, model_dir):
    src = REPO / "app" / "entities.yaml"
    assert _run(src, "--model", model_dir, "--out", tmp_path).returncode == 0
    c_file, stamp = tmp_path / "bertl14_registry.c", tmp_path / "registry.json"
    before = (c_file.stat().st_mtime_ns, stamp.stat().st_mtime_ns)
    import os
    os.utime(c_file, ns=(before[0] - 10**9, before[0] - 10**9))
    os.utime(stamp, ns=(before[1] - 10**9, before[1] - 10**9))
    assert _run(src, "--model", model_dir, "--out", tmp_path).returncode == 0
    assert c_file.stat().st_mtime_ns == before[0] - 10**9          # same bytes: left alone
    assert stamp.stat().st_mtime_ns > before[1] - 10**9             # the stamp is always written


def test_invalid_registry_exits_2_with_file_and_line(tmp_path, model_dir):
    bad = tmp_path / "bad.yaml"
    bad.write_text("floors:\n  - name: Up\nareas:\n  - name: Den\n    floor: Down\n"
                   "entities:\n  - name: Lamp\n  - name: lamp\n")
    proc = _run(bad, "--model", model_dir, "--out", tmp_path / "out")
    assert proc.returncode == 2 and "Traceback" not in proc.stderr
    assert f"{bad}:4: area 'Den' names unknown floor 'Down'" in proc.stderr
    assert f"{bad}:8: duplicate entity name 'lamp'" in proc.stderr
    assert not (tmp_path / "out").exists()


def test_not_a_model_folder(tmp_path):
    proc = _run(REPO / "app" / "entities.yaml", "--model", tmp_path, "--out", tmp_path / "out")
    assert proc.returncode == 2 and "no model.bl14" in proc.stderr


def test_table_objects_read_back_names_and_parents():
    from bertl14_tools.registry import names as R
    reg = R.load(REPO / "app" / "entities.yaml")
    objs = R.table_objects(R.compile_registry(reg))
    assert [n for n, _ in objs[R.KIND_NAME]] == [e.name for e in reg.entities]
    assert [reg.areas[p].name for _, p in objs[R.KIND_NAME]] == [e.parent for e in reg.entities]
    assert objs[R.KIND_FLOOR] == [("Ground Floor", R.NO_PARENT), ("Top Floor", R.NO_PARENT)]
