"""C tokenizer on the emulated Cortex-M7 (mps2_an500 under QEMU, NUMERICS' test image): ids against the Python
reference and the instructions the `tokenize` stage takes.

    python tests/tokenizer/measure_target.py --model CONVERTED_DIR [--elf firmware.elf] [--n 30]

Without --elf the test image is built for the model (west build, a few minutes).
"""
from __future__ import annotations

import argparse
import json
import statistics
import sys
from pathlib import Path

sys.path.insert(0, str(Path(__file__).resolve().parent))

import sentences as S  # noqa: E402
from bertl14_tools.device.qemu_target import QemuTarget, build_image  # noqa: E402
from bertl14_tools.model.tokenizer import BertTokenizer, load_vocab  # noqa: E402


def main() -> int:
    ap = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    ap.add_argument("--model", required=True, type=Path, help="converted model folder (vocab.txt, manifest.json)")
    ap.add_argument("--elf", type=Path, help="an already built test image for that model")
    ap.add_argument("--n", type=int, default=30, help="intent sentences a language (en, zh-CN)")
    args = ap.parse_args()
    cfg = json.loads((args.model / "tokenizer_config.json").read_text())
    max_seq_len = json.loads((args.model / "manifest.json").read_text()).get("max_seq_len", 128)
    tok = BertTokenizer(load_vocab(args.model / "vocab.txt"), do_lower_case=cfg["do_lower_case"],
                        strip_accents=cfg.get("strip_accents"),
                        tokenize_chinese_chars=cfg.get("tokenize_chinese_chars", True))
    elf = args.elf or build_image(args.model, "portable", max_seq_len, quiet=False)
    # one line a command on the serial port: no line breaks or NULs in the texts
    texts = [t for t in S.ADVERSARIAL if not any(c in t for c in "\n\r\x00")]
    texts += S.intent_sentences("en", args.n, seed=5) + S.intent_sentences("zh-CN", args.n, seed=5)
    bad, costs = 0, []
    with QemuTarget(elf) as target:
        for text in texts:
            r = target.infer_text(text)
            if r.ids != tok.encode(text, max_seq_len)[0]:
                bad += 1
                print(f"DIFF {text!r}: {r.ids}", file=sys.stderr)
            costs.append((r.stage_instructions.get("tokenize", 0), len(text.encode("utf-8"))))
    print(f"{len(texts)} texts on {elf.name}: {bad} id mismatches")
    print(f"tokenize: median {statistics.median(c for c, _ in costs):.0f} instructions a text, "
          f"median {statistics.median(c / max(n, 1) for c, n in costs):.0f} a byte, "
          f"max {max(costs)[0]} ({max(costs)[1]} bytes)")
    return 1 if bad else 0


if __name__ == "__main__":
    sys.exit(main())
