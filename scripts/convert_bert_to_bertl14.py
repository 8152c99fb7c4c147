#!/usr/bin/env python3
"""The converter under its script name, a thin wrapper over `bertl14 convert`:

    python scripts/convert_bert_to_bertl14.py --model_name_or_path DIR --output_dir ./bertl14_model \
        --max_seq_len 128 --quantize int16 --target_arch cortex-m7

`--model_name_or_path` must be a local Hugging Face folder (bertl14 downloads nothing). The other
`bertl14 convert` options are accepted too, in either spelling (--prune_heads or --prune-heads).
"""
from __future__ import annotations

import argparse
import sys
from pathlib import Path

try:
    from bertl14_tools.model import convert
    from bertl14_tools.errors import UserError
except ModuleNotFoundError:  # run from a checkout without `pip install -e .`
    sys.path.insert(0, str(Path(__file__).resolve().parent))
    from bertl14_tools.model import convert
    from bertl14_tools.errors import UserError


def _dashed(arg: str) -> str:
    """--max_seq_len=64 -> --max-seq-len=64 (values untouched); the two seed-only names stay as they are."""
    if not arg.startswith("--"):
        return arg
    name, eq, value = arg.partition("=")
    if name in ("--model_name_or_path", "--output_dir"):
        return arg
    return name.replace("_", "-") + eq + value


def main(argv: list[str] | None = None) -> int:
    p = argparse.ArgumentParser(prog="convert_bert_to_bertl14.py", description=__doc__.splitlines()[0])
    p.add_argument("--model_name_or_path", "--model", dest="model", required=True, metavar="DIR",
                   help="local Hugging Face BERT folder")
    p.add_argument("--output_dir", "--out", dest="out", required=True, metavar="DIR", help="output model folder")
    convert.add_convert_arguments(p)
    # the seed's underscore spellings of the options
    argv = [_dashed(a) for a in (sys.argv[1:] if argv is None else argv)]
    args = p.parse_args(argv)
    try:
        manifest = convert.convert(args.model, args.out, convert.options_from_args(args))
    except UserError as exc:
        print(f"convert_bert_to_bertl14.py: error: {exc}", file=sys.stderr)
        return 2
    convert.print_result(args, manifest)
    return 0


if __name__ == "__main__":
    sys.exit(main())
