"""Write the starting inputs of the `protocol` fuzz target (fuzz_protocol.c) to OUT_DIR/seeds/protocol/.

Each seed is fuzz_protocol.c's layout: a mode byte (how often the application runs; `:dump on` / `:dump off`), a
receive-error byte, then a stream of lines: generated English and Chinese commands, names of the default registry,
every command of the protocol, the tokenizer's adversarial strings, "\\r\\n" endings, too long lines, NUL bytes and
invalid UTF-8.
Usage: python tests/fuzz/gen_protocol_seeds.py OUT_DIR
"""
from __future__ import annotations

import random
import sys
from pathlib import Path

HERE = Path(__file__).resolve().parent
sys.path[:0] = [str(HERE.parent / "tokenizer")]

import sentences as S  # noqa: E402

MAX_LEN = 1024   # run.sh's -max_len for this target

COMMANDS = [":help", ":config", ":stats", ":entities", ":dump on", ":dump off", ":frobnicate", ":", ":dump",
            ":stats extra", ":DUMP ON"]
NAMES = ["switch on the tv in the lounge", "turn off the towel rail upstairs", "打开小夜灯",
         "kitchen tv lounge upstairs radiator hall desk fan", " ".join(["tv"] * 80), "tv,tv.tv!tv?tv",
         "set the desk fan to 40 percent", "set a timer for an hour and a half", "warm the study up to 21.5 degrees",
         "add oat milk to my shopping list"]
ODD = [b"", b"\r", b" \t ", b"turn on the\x00 light", b"turn on the \xff\xfe light", b"\xe5\xb0\x8f\xe5\xa4\x9c\xe7\x81",
       b"a" * 255, b"a" * 256, b"a" * 300 + b"\r", b"b" * 254 + b"\r", b"\x80" * 40, b"\xc0\xaf", b"\xed\xa0\x80"]


def main(out_dir: str) -> int:
    rng = random.Random(14)
    d = Path(out_dir) / "seeds" / "protocol"
    d.mkdir(parents=True, exist_ok=True)
    texts = ([t.encode() for t in S.intent_sentences("en", 40) + S.intent_sentences("zh-CN", 20) + NAMES + COMMANDS]
             + [t.encode() for t in S.ADVERSARIAL] + ODD)
    seeds = []
    for i in range(0, len(texts), 4):                      # a few lines each, answered as they come
        seeds.append(bytes([0, 0]) + b"\n".join(texts[i:i + 4]) + b"\n")
    for i in range(12):                                    # bursts: the application lags (overruns), receive errors
        lines = rng.sample(texts, 12)
        ending = b"\r\n" if i % 3 == 0 else b"\n"
        seeds.append(bytes([rng.choice([0, 7, 31, 63]) | rng.choice([0, 0x40, 0x80]), rng.choice([0, 0, 17, 61])])
                     + ending.join(lines) + ending)
    for i, seed in enumerate(seeds):
        (d / f"seed{i:03d}").write_bytes(seed[:MAX_LEN])
    print(d)
    return 0


if __name__ == "__main__":
    sys.exit(main(sys.argv[1] if len(sys.argv) > 1 else "build/fuzz"))
