"""The library's accelerated kernels against its portable ones on the emulated cores themselves: the kernel check
image (tests/kernel_check) built for a board links the kernels as the board builds them and the portable kernels
under ref_ names, runs every kernel on the same seeded random and edge inputs and compares the outputs byte for
byte. CI runs it on mps3_an547, for the Helium (MVE) bodies, which the host cannot run; the image builds for the other
MPS boards too (on mps2_an500 it checks the DSP bodies with the Cortex-M7's own DSP instructions, which the host tests
run on the C emulation of the intrinsics: BOARDS below)."""
from __future__ import annotations

import re
import sys

import pytest
from testsupport import REPO, require_arm, west

pytestmark = pytest.mark.qemu

# every kernel the image checks, with its number of cases (the image's loops)
KERNELS = {"linear_s8_w16": 400, "linear_s8_w8": 400, "attn_scores_s8": 300, "softmax_s32": 300, "attn_context_s8": 300, "gelu_s16": 39,
           "layernorm_s32 residual_s8": 300, "quantize_row_s16": 300, "embedding": 200}


def _run(elf, machine) -> list[str]:
    """The image's KCHECK lines, up to `KCHECK done`."""
    sys.path.insert(0, str(REPO / "scripts" / "west_commands"))
    try:
        from bertl14_west import qemu
    finally:
        sys.path.pop(0)
    lines = []
    with qemu.QemuSerial(machine, elf, timeout=60.0, env_flags=False) as link:
        ser = link.ser
        while not lines or not lines[-1].startswith("KCHECK done"):
            raw = ser.readline()
            assert raw.endswith(b"\n"), f"the kernel check image stopped answering after {lines}"
            line = raw.decode("ascii", errors="replace").strip()
            if line.startswith("KCHECK"):
                lines.append(line)
    return lines


# board: the Kconfig value that builds its accelerated kernels (mps2_an500: "CONFIG_BERTL14_USE_DSP=y" checks the DSP
# bodies on the M7; left out of CI for its time)
BOARDS = {"mps3_an547": "CONFIG_BERTL14_USE_MVE=y"}


@pytest.mark.parametrize("board,option", BOARDS.items())
def test_accelerated_kernels_match_portable_on_the_core(tmp_path, board, option):
    require_arm()
    build = tmp_path / "build"
    proc = west("build", "-b", board, "-d", str(build), str(REPO / "tests" / "kernel_check"))
    assert proc.returncode == 0, proc.stdout[-3000:] + proc.stderr[-3000:]
    assert option in (build / ".config").read_text()            # the board's accelerated kernels are the ones built
    from bertl14_tools.device.qemu_target import qemu_machine
    lines = _run(build / "firmware.elf", qemu_machine(board))
    seen = {}
    for line in lines:
        m = re.fullmatch(r"KCHECK (.+) cases=(\d+) mismatches=(\d+)", line)
        if m:
            seen[m.group(1)] = (int(m.group(2)), int(m.group(3)))
    assert seen == {k: (n, 0) for k, n in KERNELS.items()}, "\n".join(lines)
    assert lines[-1] == "KCHECK done mismatches=0", "\n".join(lines)
