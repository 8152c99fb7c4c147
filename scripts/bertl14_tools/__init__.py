"""bertl14 PC-side tools, one subpackage a pipeline stage:

    model/       the float model, Hugging Face loading, quantization, pruning, vocabulary, the tokenizer, the
                 model.bl14 blob, slot value tables, the converter (`bertl14 convert`), model folders
    registry/    the device's own names (entities, areas, floors) and the domains an intent accepts
    reference/   the model run on the PC exactly as on the device: the integer engine, the C library through
                 ctypes, tagging, answers, `bertl14 predict` and `eval`
    data/        training data: `bertl14 dataset`, augmentation, intents files, the hand-written data files
    train/       `bertl14 train`, `bertl14 report`, their plots
    device/      serial console and validation, QEMU targets, `bertl14 check-bitexact`, `bertl14 bench`

The top level holds the CLI wiring (cli.py) and helpers every stage shares (errors.py, ui.py, textio.py, and
cbuild.py, which compiles the C library and its modules for the host, and cachelock.py, which lets one process at
a time build into a shared cache folder). A module imports only from its own
stage, the stages before it and the helpers; tests/cli/test_layout.py checks this order and that no import
cycle exists:

Import order: helpers < model < registry < reference < data < train < device < cli
"""
import os
from pathlib import Path

# Our matrices are small (tokens x hidden): OpenBLAS threads only contend with each other on a busy machine
# (measured 20x slower at load 6 on 2 cores). Set before numpy is first imported; an explicit setting wins.
os.environ.setdefault("OPENBLAS_NUM_THREADS", "1")

__version__ = "0.1.0"

#: The repository root (scripts/bertl14_tools/ -> repo), for tools that build the C library or firmware.
REPO_ROOT = Path(__file__).resolve().parents[2]
