"""The registry in the firmware build: CONFIG_APP_REGISTRY_FILE compiles a YAML file into the
firmware (the table in the ELF is exactly registry.compile_registry's words), empty means no table and no
matcher code, a bad file fails the build with its file:line, names are percent-encoded on the wire."""
from __future__ import annotations

import json
import subprocess
from pathlib import Path

from testsupport import REPO, require_arm, west

WEIRD = """\
floors:
  - name: Ground Floor
areas:
  - name: Tea Room
    floor: Ground Floor
entities:
  - name: 50% = Lamp
    domain: light
    area: Tea Room
  - name: 台灯
    domain: light
"""


def _build(tmp_path: Path, modules: dict, *defs: str) -> tuple[Path, subprocess.CompletedProcess]:
    require_arm()
    d = tmp_path / "build"
    proc = west("build", "-b", "mps2_an500", "-p", "-d", str(d), "app", "--", "-DCONFIG_APP_RTOS_NONE=y", *defs,
                env=modules)
    return d, proc


def _symbols(build: Path) -> dict[str, tuple[int, int]]:
    out = subprocess.run(["arm-none-eabi-nm", "-S", str(build / "firmware.elf")], capture_output=True, text=True,
                         check=True).stdout
    syms = {}
    for line in out.splitlines():
        parts = line.split()
        if len(parts) == 4:
            syms[parts[3]] = (int(parts[0], 16), int(parts[1], 16))
    return syms


def _elf_words(build: Path, name: str) -> list[int]:
    """The words of a symbol, read from the loaded image (firmware.bin starts at the flash base 0)."""
    addr, size = _symbols(build)[name]
    data = (build / "firmware.bin").read_bytes()[addr:addr + size]
    return [int.from_bytes(data[k:k + 4], "little") for k in range(0, len(data), 4)]


def test_default_registry_table_is_the_python_compile(bare_metal_an500):
    """app/entities.yaml is the default; the flash table equals compile_registry for the model's tokenizer, and
    the memory summary prints its cost measured from the link map."""
    from bertl14_tools.registry import names as R
    build, proc = bare_metal_an500
    reg, words = R.build_for_model(REPO / "app" / "entities.yaml", build / "generated" / "model")
    assert _elf_words(build, "bertl14_registry") == words
    assert (build / "generated" / "registry" / "bertl14_registry.c").read_text() == R.render_c(words, "entities.yaml")
    budget = json.loads((build / "memory_budget.json").read_text())
    assert budget["registry"]["table"] == 4 * len(words) and budget["registry"]["code"] > 1000
    assert "registry" in proc.stdout and f"table {4 * len(words):,} B" in proc.stdout


def test_no_registry_means_no_table_no_matcher_no_slots(tmp_path, empty_modules, qemu):
    build, proc = _build(tmp_path, empty_modules, '-DCONFIG_APP_REGISTRY_FILE=')
    assert proc.returncode == 0, proc.stdout[-3000:] + proc.stderr[-3000:]
    assert not [s for s in _symbols(build) if "registry_match" in s or s == "bertl14_registry"]
    assert not (build / "generated" / "registry").exists()
    assert "CONFIG_APP_REGISTRY_MAX_SLOTS" not in (build / ".config").read_text()
    assert "B (none linked)" in proc.stdout
    q = qemu(build)
    assert q.readline().startswith("bertl14 ready ")
    q.write(b":entities\n")
    assert q.readline() == "ok entities 0"
    q.write(b"switch on the tv in the lounge\n")
    ans = q.readline()
    assert ans.startswith("intent=") and "names=" not in ans and "name=" not in ans, ans


def test_invalid_registry_fails_the_build_with_file_and_line(tmp_path, empty_modules):
    bad = tmp_path / "bad.yaml"
    bad.write_text("areas:\n  - name: Kitchen\n  - name: kitchen\nentities:\n  - name: Lamp\n    area: Attic\n")
    build, proc = _build(tmp_path, empty_modules, f"-DCONFIG_APP_REGISTRY_FILE={bad}")
    assert proc.returncode != 0
    out = proc.stdout + proc.stderr
    assert f"{bad}:3: duplicate area name 'kitchen'" in out, out[-3000:]
    assert f"{bad}:5: entity 'Lamp' names unknown area 'Attic'" in out
    assert "Traceback" not in out
    assert not (build / "firmware.elf").exists()


def test_missing_registry_file_is_a_clear_configure_error(tmp_path, empty_modules):
    build, proc = _build(tmp_path, empty_modules, "-DCONFIG_APP_REGISTRY_FILE=no/such.yaml")
    assert proc.returncode != 0
    assert "registry file no/such.yaml (CONFIG_APP_REGISTRY_FILE) not found" in proc.stdout + proc.stderr


def test_names_with_space_percent_equals_and_utf8_round_trip(tmp_path, empty_modules):
    """A registry of our own with awkward names, relative to the repository root: the answers stay key=value
    parseable and decode back to the display names; the reference agrees bit for bit. Editing the file
    regenerates the table on the next (incremental) build."""
    reg_file = REPO / "build" / f"test-weird-registry-{tmp_path.name}.yaml"   # relative path, resolved at the root
    reg_file.parent.mkdir(exist_ok=True)
    reg_file.write_text(WEIRD, encoding="utf-8")
    try:
        build, proc = _build(tmp_path, empty_modules, f"-DCONFIG_APP_REGISTRY_FILE=build/{reg_file.name}")
        assert proc.returncode == 0, proc.stdout[-3000:] + proc.stderr[-3000:]
        _check_weird_device(build)
        reg_file.write_text(WEIRD + "  - name: Desk Lamp\n    domain: light\n", encoding="utf-8")
        again = west("build", "-d", str(build), env=empty_modules)
        assert again.returncode == 0, again.stdout[-3000:] + again.stderr[-3000:]
        assert "bertl14 registry" in again.stdout and "bertl14 convert" not in again.stdout
        listing = json.loads((build / "generated" / "registry" / "registry.json").read_text())["listing"]
        assert [d["name"] for d in listing][:3] == ["50% = Lamp", "台灯", "Desk Lamp"]
    finally:
        reg_file.unlink(missing_ok=True)


def _check_weird_device(build: Path):
    from bertl14_tools.device.serial import Device, Reference, compare, open_link
    table = json.loads((build / "generated" / "registry" / "registry.json").read_text())
    model = build / "generated" / "model"
    manifest = json.loads((model / "manifest.json").read_text())
    # the build's domain rule too: "50% = Lamp" is a light, and the device answers among the intents that take one
    ref = Reference(model, manifest["min_score_milli"], table["words"], 4, table.get("label_domains"),
                    min_score_named_milli=manifest["min_score_named_milli"])
    with open_link(qemu=str(build / "firmware.elf"), timeout=60) as ser:
        dev = Device(ser, 60)
        dev.read_banner()
        for text, want in [("turn on the 50% = lamp in the tea room", {"name": "50% = Lamp", "area": "Tea Room"}),
                           ("打开台灯", {"name": "台灯"})]:
            ans = dev.ask(text)
            assert all(len(w.split("=")) >= 2 for w in ans.line.split()), ans.line
            assert {k: ans.fields[k] for k in want} == want, ans.line
            assert not compare(ans, ref.expect(text), False), ans.line
        assert "name=50%25%20%3D%20Lamp" in dev.ask("dim 50% = lamp").line
        listing = dev.entities()
    assert [d["name"] for d in listing] == ["50% = Lamp", "台灯", "Tea Room", "Ground Floor"]
    assert listing[0]["parent"] == "Tea Room" and listing[1]["parent"] == "" and listing[2]["parent"] == "Ground Floor"


def _host_build(build: Path, model: Path, *defs: str) -> subprocess.CompletedProcess:
    return west("build", "-b", "host", "-p", "-d", str(build), "app", "--", f"-DCONFIG_BERTL14_MODEL_DIR={model}",
                *defs)


def test_registry_only_for_a_model_trained_with_name_placeholders(tmp_path):
    """A model whose folder does not say "name_placeholders": true never saw [NAME]/[AREA]/[FLOOR]: the default
    example registry is left out with a notice, a registry asked for fails the configuration with what to do;
    once the model's training.json says so, the registry is compiled in (and the converted manifest says so)."""
    import sys
    sys.path.insert(0, str(REPO / "tests" / "convert"))
    from cvt_util import write_tiny_bert
    model = write_tiny_bert(tmp_path / "tiny")       # a Hugging Face folder, no training.json
    proc = _host_build(tmp_path / "default", model)
    assert proc.returncode == 0, proc.stdout[-3000:] + proc.stderr[-3000:]
    assert "registry: the example registry entities.yaml is left out: the model" in proc.stderr
    assert not (tmp_path / "default" / "generated" / "registry").exists()
    assert json.loads((tmp_path / "default" / "generated" / "model" / "manifest.json").read_text())[
        "name_placeholders"] is False

    asked = f"-DCONFIG_APP_REGISTRY_FILE={REPO / 'app' / 'entities.yaml'}"
    proc = _host_build(tmp_path / "asked", model, asked)
    out = " ".join((proc.stdout + proc.stderr).split())
    assert proc.returncode != 0 and "was not trained with the registry's placeholders" in out, out[-3000:]
    assert 'build with CONFIG_APP_REGISTRY_FILE="", or train the model on data made with' in out
    assert "bertl14 dataset --mask-names 0.5" in out and "Traceback" not in out

    (model / "training.json").write_text(json.dumps({"name_placeholders": True}))
    proc = _host_build(tmp_path / "with", model, asked)
    assert proc.returncode == 0, proc.stdout[-3000:] + proc.stderr[-3000:]
    assert (tmp_path / "with" / "generated" / "registry" / "registry.json").is_file()
    assert json.loads((tmp_path / "with" / "generated" / "model" / "manifest.json").read_text())[
        "name_placeholders"] is True
