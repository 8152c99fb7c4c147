"""Flash footprint of the library on a Cortex-M7 (-O2, arm-none-eabi-gcc), code without weights (the 64-bit division
helpers it pulls from libgcc included), and GELU code + table <= 2 KB.
- Portable kernels: <= 19.5 KB: 16 KB for the encoder, tokenizer and classifier, plus the slot tagger with token byte
  offsets and the choice of a label among allowed ones, plus 2 KB for init's checks of every byte of the model data
  (sizes, checksums, section table, parameter ranges).
- DSP kernels (the speed build): <= 24 KB. Its 4.5 KB over the portable budget buys 3.3x fewer instructions on the
  emulated M7 (docs/benchmarks.md): the linear kernels' loop over the output channels of a block of four tokens in
  assembly (block4_channels, about 0.85 KB: two channels a pass as 2 x 2 tiles of channels and tokens, the requantized
  stores in registers), the attention's scores and context as block matmuls over int16 operands (a head's keys and a
  query pair's channels in unrolled assembly, 4.3 KB against 1.6 KB for the INT8-operand kernels they replace) and the
  softmax's assembly passes; the rare paths are compiled for size (bertl14/sources.cmake). It also carries the
  portable attention bodies for the shapes and scales outside the fast cases (about 0.7 KB: a query against four
  keys, four channels against a query's weights, the portable build's speed at every length).
- DSP kernels with INT8 weights: <= 25.5 KB. Their linear kernel is about 1.5 KB larger than the INT16 one: eight
  unrolled groups of three chunks (the SXTB16 widening, three chunks' weights one LDMIA, the end tested once a pass)
  are what makes INT8 weights take no more instructions a MAC than INT16 ones; the weights they halve are about
  360 KB on the default model.
- Helium (mve, Cortex-M55: the vector bodies and the DSP ones of the attention): <= 25.5 KB for both weight types
  (one Helium linear body, bertl14_linear_mve.h).
Each kernel set is measured for both weight types (CONFIG_BERTL14_WEIGHTS_INT16 / _INT8). A library carries the
linear kernel of its weight type only (the other is checked absent from the linked image and not counted)."""
from __future__ import annotations

import shutil
import subprocess
from pathlib import Path

import pytest

from bertl14_tools import cbuild

GCC = shutil.which("arm-none-eabi-gcc")
FLAGS = ["-O2", "-mcpu=cortex-m7", "-mthumb", "-mfloat-abi=hard", "-mfpu=fpv5-d16", "-std=c99",
         "-ffunction-sections", "-fdata-sections"]
FLAGS_M55 = ["-O2", "-mcpu=cortex-m55", "-mthumb", "-mfloat-abi=hard", "-std=c99", "-ffunction-sections",
             "-fdata-sections"]
TANH_LUT_BYTES = 257 * 2

pytestmark = pytest.mark.skipif(GCC is None, reason="arm-none-eabi-gcc not installed")

MAIN = r"""
#include "bertl14.h"
int main(void)
{
    bertl14_tensor_t t; bertl14_classification_t c; int32_t ids[4]; uint32_t n;
    bertl14_init(0); bertl14_tokenize("x", ids, &n, 4); bertl14_encode(ids, n, &t);
    bertl14_get_last_hidden_state(&t); bertl14_dump_tensor(&t, "A"); bertl14_classify(&c);
    return (int)bertl14_required_work_buffer_size(0, 0, 1) + bertl14_label_name(0)[0] + bertl14_status_str(0)[0];
}
"""


def _sizes(objs: list[Path]) -> dict[str, int]:
    out = subprocess.run(["arm-none-eabi-size"] + [str(o) for o in objs], capture_output=True, text=True,
                         check=True).stdout.splitlines()[1:]
    return {Path(line.split()[-1]).stem: int(line.split()[0]) + int(line.split()[1]) for line in out}


# kernel set: its definitions, the core it is measured on, the code budget for INT16 and for INT8 weights
KERNEL_SETS = {"portable": ([], FLAGS, {"int16": 19 * 1024 + 512, "int8": 19 * 1024 + 512}),
               "dsp": (["-DBERTL14_USE_DSP=1"], FLAGS, {"int16": 24 * 1024, "int8": 25 * 1024 + 512}),
               "mve": (["-DBERTL14_USE_DSP=1", "-DBERTL14_USE_MVE=1"], FLAGS_M55,
                       {"int16": 25 * 1024 + 512, "int8": 25 * 1024 + 512})}


# weight type: its definitions, the linear kernel file the library links, the one it must not link
WEIGHT_TYPES = {"int16": ([], "bertl14_linear_s8_w16", "bertl14_linear_s8_w8"),
                "int8": (["-DBERTL14_WEIGHTS_INT8=1"], "bertl14_linear_s8_w8", "bertl14_linear_s8_w16")}


@pytest.mark.parametrize("weights", list(WEIGHT_TYPES))
@pytest.mark.parametrize("kernels", list(KERNEL_SETS))
def test_code_size(tmp_path, kernels, weights):
    lib = cbuild.LIB_DIR
    defs, flags, budgets = KERNEL_SETS[kernels]
    wdefs, linear, unused = WEIGHT_TYPES[weights]
    defs, budget = defs + wdefs, budgets[weights]
    inc = [f"-I{lib / 'include'}", f"-I{lib / 'src'}", f"-I{lib / 'src' / 'kernels'}"]
    srcs = cbuild.library_sources()
    objs = cbuild.compile_objects([GCC] + flags + defs + inc, srcs, tmp_path)   # with each file's own options
    sizes = _sizes(objs)
    (tmp_path / "main.c").write_text(MAIN)
    subprocess.run([GCC] + flags + defs + inc + ["main.c"] + [o.name for o in objs] +
                   ["-specs=nosys.specs", "-Wl,--gc-sections", "-o", "m.elf"], cwd=tmp_path, check=True,
                   capture_output=True)
    nm = subprocess.run(["arm-none-eabi-nm", "-S", "m.elf"], cwd=tmp_path, capture_output=True, text=True,
                        check=True).stdout.split("\n")
    assert any(line.endswith(" " + linear) for line in nm)          # the weight type's kernel is linked ...
    assert not any(line.endswith(" " + unused) for line in nm)      # ... and the other one is not: not counted
    sizes.pop(unused)
    helpers = sum(int(line.split()[1], 16) for line in nm
                  if len(line.split()) == 4 and ("divmoddi" in line or "aeabi_l" in line or "aeabi_ul" in line))
    total = sum(sizes.values()) + helpers
    gelu = sizes["bertl14_gelu_s16"] + TANH_LUT_BYTES
    print(f"\n{kernels} {weights}: library {sum(sizes.values())} B (+ libgcc 64-bit division {helpers} B) = {total} B; "
          f"GELU code {sizes['bertl14_gelu_s16']} B + tanh table {TANH_LUT_BYTES} B = {gelu} B")
    for name, size in sorted(sizes.items(), key=lambda kv: -kv[1]):
        print(f"  {name:28s} {size:6d}")
    assert total <= budget
    assert gelu <= 2 * 1024
