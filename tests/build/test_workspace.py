"""Workspace: manifest, boards, Kconfig merge and its errors, build directory rules, host board."""
from __future__ import annotations

import re
import subprocess
import sys

import yaml

from testsupport import REPO, assert_one_line_error, west


def test_manifest_pins_the_modules_and_keeps_tflm_optional():
    m = yaml.safe_load((REPO / "west.yml").read_text())["manifest"]
    projects = {p["name"]: p for p in m["projects"]}
    assert m["self"]["west-commands"] == "scripts/west-commands.yml"
    assert projects["FreeRTOS-Kernel"]["revision"] == "V11.3.0"
    assert projects["FreeRTOS-Kernel"]["path"] == "modules/rtos/FreeRTOS-Kernel"
    assert (projects["stm32h7xx_hal_driver"]["revision"], projects["cmsis_device_h7"]["revision"],
            projects["CMSIS_6"]["revision"]) == ("v1.11.3", "v1.10.4", "v6.3.0")
    assert projects["tflite-micro"]["path"] == "modules/lib/tflite-micro"
    group = projects["tflite-micro"]["groups"][0]
    assert f"-{group}" in m["group-filter"]
    # CMSIS-NN: the commit tflite-micro's cmsis_nn kernels are built with, optional like TFLM
    assert projects["CMSIS-NN"]["path"] == "modules/lib/CMSIS-NN"
    assert projects["CMSIS-NN"]["revision"] == "4ab83cc3cc98fb85ed6dafb55e8ca02f1628dcae"
    assert projects["CMSIS-NN"]["groups"] == [group]
    listed = west("list", "-f", "{name}")
    assert listed.returncode == 0, listed.stderr
    assert "FreeRTOS-Kernel" in listed.stdout and "tflite-micro" not in listed.stdout
    assert "CMSIS-NN" not in listed.stdout


def test_every_kconfig_symbol_has_help():

    env = {"BOARD": "mps2_an500", "BOARD_DIR": str(REPO / "boards/arm/mps2_an500"), "srctree": str(REPO)}
    code = ("import kconfiglib,sys;k=kconfiglib.Kconfig(sys.argv[1]);"
            "missing=[n.item.name for n in k.node_iter() if isinstance(n.item,(kconfiglib.Symbol,kconfiglib.Choice))"
            " and n.item.name and n.help is None];print(' '.join(missing))")
    out = subprocess.run([sys.executable, "-c", code, str(REPO / "Kconfig")], env={**env, "PATH": ""},
                         capture_output=True, text=True, cwd=REPO)
    assert out.returncode == 0, out.stderr
    assert out.stdout.split() == [], "symbols without help: " + out.stdout


def test_unknown_board_lists_the_boards(tmp_path):
    proc = west("build", "-b", "no_such_board", "-d", str(tmp_path / "b"))
    line = assert_one_line_error(proc, "no_such_board")
    for board in ("mps2_an500", "mps2_an386", "nucleo_h743zi", "host"):
        assert board in line


def test_out_of_range_value_names_symbol_and_range(tmp_path):
    proc = west("build", "-b", "host", "-d", str(tmp_path / "b"), "--", "-DCONFIG_BERTL14_MAX_SEQ_LEN=9999")
    assert_one_line_error(proc, "BERTL14_MAX_SEQ_LEN", "9999", "8..512")


def test_unknown_symbol_and_malformed_value_are_errors(tmp_path):
    proc = west("build", "-b", "host", "-d", str(tmp_path / "b"), "--", "-DCONFIG_NO_SUCH_THING=y")
    assert_one_line_error(proc, "CONFIG_NO_SUCH_THING")
    proc = west("build", "-b", "host", "-d", str(tmp_path / "c"), "--", "-DCONFIG_APP_LINE_MAX=lots")
    assert_one_line_error(proc, "APP_LINE_MAX", "lots")


def test_freertos_cannot_be_chosen_on_the_host_board(tmp_path):
    proc = west("build", "-b", "host", "-d", str(tmp_path / "b"), "--", "-DCONFIG_APP_RTOS_FREERTOS=y")
    assert_one_line_error(proc, "APP_RTOS_FREERTOS", "HAS_FREERTOS_PORT")


def _host_build(build_dir, *extra):
    proc = west("build", "-b", "host", "-d", str(build_dir), *extra)
    assert proc.returncode == 0, proc.stdout + proc.stderr
    return proc


def _banner(build_dir, stdin=""):
    run = subprocess.run([str(build_dir / "firmware.elf")], input=stdin, capture_output=True, text=True, timeout=20)
    assert run.returncode == 0, run.stderr
    lines = run.stdout.splitlines()
    return lines[0], lines[1:]


def _config(build_dir) -> str:
    """The intent firmware's `:config` line (board, rtos, line_max, rx_buffer, ...)."""
    return _banner(build_dir, ":config\n")[1][0]


def test_host_board_echoes_lines_and_rejects_long_ones(tmp_path):
    b = tmp_path / "host"
    _host_build(b, "app")
    banner, replies = _banner(b, "turn on the light\r\n" + "x" * 300 + "\n:config\n")
    assert banner.startswith("bertl14 ready model=")
    assert replies[0].startswith("intent=HassTurnOn ") and replies[1].startswith("error=too_long ")
    assert " board=host rtos=none " in replies[2]


def test_merge_order_defconfig_prj_extra_cli(tmp_path):
    extra = tmp_path / "extra.conf"
    extra.write_text("CONFIG_APP_LINE_MAX=100\nCONFIG_APP_RX_BUFFER=300\n")
    b = tmp_path / "b"
    _host_build(b, "--", f"-DEXTRA_CONF_FILE={extra}", "-DCONFIG_APP_LINE_MAX=90")
    autoconf = (b / "generated" / "autoconf.h").read_text()
    assert "#define CONFIG_APP_LINE_MAX 90" in autoconf       # -D beats EXTRA_CONF_FILE
    assert "#define CONFIG_APP_RX_BUFFER 300" in autoconf     # EXTRA_CONF_FILE beats prj.conf (1024)
    assert "#define CONFIG_APP_RTOS_NONE 1" in autoconf       # from host_defconfig
    assert "line_max=90 rx_buffer=300" in _config(b)


def test_setconfig_change_reaches_the_next_build(tmp_path):
    """kconfiglib's setconfig (menuconfig's non-interactive sibling) edits <build>/.config; the next
    build regenerates autoconf.h from it and the firmware uses the new value."""
    b = tmp_path / "b"
    _host_build(b)
    env = {"KCONFIG_CONFIG": str(b / ".config"), "BOARD": "host", "BOARD_DIR": str(REPO / "boards/native/host"),
           "srctree": str(REPO), "PATH": ""}
    sc = subprocess.run([sys.executable, "-m", "setconfig", "--kconfig", str(REPO / "Kconfig"), "APP_LINE_MAX=77"],
                        env=env, capture_output=True, text=True, cwd=REPO)
    assert sc.returncode == 0, sc.stderr
    _host_build(b)
    assert "#define CONFIG_APP_LINE_MAX 77" in (b / "generated" / "autoconf.h").read_text()
    assert "line_max=77" in _config(b)


def test_build_dir_of_another_board_asks_for_pristine(tmp_path):
    b = tmp_path / "b"
    _host_build(b)
    proc = west("build", "-b", "mps2_an500", "-d", str(b))
    assert_one_line_error(proc, "host", "mps2_an500", "-p")


def test_rebuild_without_changes_does_nothing(tmp_path):
    b = tmp_path / "b"
    _host_build(b)
    again = _host_build(b)
    assert re.search(r"no work to do|Nothing to be done", again.stdout), again.stdout


def test_run_target_on_the_host_board_uses_stdin_and_stdout(tmp_path):
    b = tmp_path / "b"
    _host_build(b)
    proc = west("build", "-d", str(b), "-t", "run", stdin="turn on the kitchen light\n")
    assert proc.returncode == 0, proc.stderr
    # the label depends on the shipped weights; the name on the default registry (app/entities.yaml)
    assert any(line.startswith("intent=") and " name=Kitchen%20Light " in line for line in proc.stdout.splitlines()), \
        proc.stdout


def _drive_menuconfig(build_dir, keys: list[bytes], timeout: float = 60) -> bytes:
    """Run `west build -t menuconfig` on a pseudo-terminal and type keys into it."""
    import fcntl
    import os
    import pty
    import select
    import struct
    import termios
    import time

    pid, fd = pty.fork()
    if pid == 0:  # child: menuconfig needs a terminal
        os.environ["TERM"] = "xterm"
        os.execvp(sys.executable, [sys.executable, "-m", "west", "build", "-d", str(build_dir), "-t", "menuconfig"])
    fcntl.ioctl(fd, termios.TIOCSWINSZ, struct.pack("HHHH", 30, 100, 0, 0))
    out = bytearray()

    def pump(seconds):
        end = time.monotonic() + seconds
        while time.monotonic() < end:
            if select.select([fd], [], [], 0.05)[0]:
                try:
                    out.extend(os.read(fd, 65536))
                except OSError:
                    return

    pump(1.0)
    for k in keys:
        os.write(fd, k)
        pump(0.3)
    deadline = time.monotonic() + timeout
    while time.monotonic() < deadline:
        pump(0.2)
        done, status = os.waitpid(pid, os.WNOHANG)
        if done:
            assert os.waitstatus_to_exitcode(status) == 0, bytes(out[-2000:])
            return bytes(out)
    os.kill(pid, 9)
    raise AssertionError("menuconfig did not exit: " + repr(bytes(out[-2000:])))


def test_menuconfig_change_reaches_the_next_build(tmp_path):
    """Jump to APP_LINE_MAX with '/', set 150, save, quit; the next build's autoconf.h and the
    firmware's banner have it."""
    import importlib.util

    if importlib.util.find_spec("curses") is None:
        import pytest
        pytest.skip("Python curses module unavailable")
    b = tmp_path / "b"
    _host_build(b)
    out = _drive_menuconfig(b, [b"/", b"APP_LINE_MAX", b"\r", b"\r", b"\x15", b"150", b"\r", b"S", b"\r", b"\r", b"Q"])
    assert b"saved" in out
    _host_build(b)
    assert "#define CONFIG_APP_LINE_MAX 150" in (b / "generated" / "autoconf.h").read_text()
    assert "line_max=150" in _config(b)


def _workspace_guard():
    sys.path.insert(0, str(REPO / "scripts" / "west_commands"))
    try:
        from bertl14_west import workspace
    finally:
        sys.path.pop(0)
    return workspace


def _fake_clone(parent, manifest_path: str | None):
    """parent/main holding what `make test` runs first; parent/.west naming manifest_path (None: no workspace)."""
    import shutil
    clone = parent / "main"
    for rel in ("Makefile", ".ci/run", "scripts/west_commands/bertl14_west/workspace.py"):
        (clone / rel).parent.mkdir(parents=True, exist_ok=True)
        shutil.copy2(REPO / rel, clone / rel)
    if manifest_path is not None:
        (parent / ".west").mkdir()
        (parent / ".west" / "config").write_text(f"[manifest]\npath = {manifest_path}\nfile = west.yml\n")
    return clone


def test_workspace_guard_accepts_our_workspace_and_none(tmp_path):
    import shutil
    ws = _workspace_guard()
    ours = _fake_clone(tmp_path / "ours", "main")
    assert ws.foreign_workspace_error(ours) is None
    lonely = _fake_clone(tmp_path / "lonely", None)
    if ws.west_topdir(lonely) is None:   # no stray .west above the temporary folder
        assert ws.foreign_workspace_error(lonely) is None
    if ws.west_topdir(lonely) is None and shutil.which("make"):
        proc = subprocess.run(["make", "-s", "check-workspace"], cwd=lonely, capture_output=True, text=True)
        assert proc.returncode == 0, proc.stderr


def test_ci_run_fails_early_inside_another_workspace(tmp_path):
    """A clone below another west workspace (a stray .west): .ci/run (make test) stops at once and says what to do,
    before installing anything."""
    import shutil
    if shutil.which("make") is None:
        import pytest
        pytest.skip("make is not installed (.ci/run installs it)")
    ws = _workspace_guard()
    clone = _fake_clone(tmp_path, "someone-else")
    msg = ws.foreign_workspace_error(clone)
    assert msg and str(tmp_path / ".west") in msg and "remove" in msg and "clone bertl14 outside" in msg
    proc = subprocess.run(["bash", str(clone / ".ci" / "run")], cwd=clone, capture_output=True, text=True, timeout=60)
    assert proc.returncode != 0
    assert f"error: {msg}" in proc.stderr, proc.stderr
    assert not (clone / ".venv").exists()   # failed before the python step


def tracked_text_files():
    """The repository's tracked files (the working tree's files when this is not a git checkout)."""
    listed = subprocess.run(["git", "ls-files", "-z"], cwd=REPO, capture_output=True)
    if listed.returncode == 0 and listed.stdout:
        names = [n for n in listed.stdout.decode().split("\0") if n]
    else:
        skip = {".git", ".venv", "build", "__pycache__"}
        names = [str(p.relative_to(REPO)) for p in REPO.rglob("*")
                 if p.is_file() and not skip.intersection(p.relative_to(REPO).parts)]
    for name in names:
        path = REPO / name
        if path.is_file() and path.suffix not in {".png", ".safetensors", ".bin", ".bl14"}:
            try:
                yield name, path.read_text(encoding="utf-8")
            except UnicodeDecodeError:
                continue


def test_the_product_states_requirements_not_history():
    # code, comments, help texts, model cards and docs say what is required, never which ticket or run asked for it
    # (the pattern is spelled in pieces so that this line does not match itself)
    words = ("issue", "seed", "session")
    history = re.compile("|".join(rf"{w} [0-9]" for w in words) + r"|\(" + words[0], re.IGNORECASE)
    found = [f"{name}:{n}: {line.strip()[:100]}" for name, text in tracked_text_files()
             for n, line in enumerate(text.splitlines(), 1) if history.search(line)]
    assert not found, "\n".join(found)
