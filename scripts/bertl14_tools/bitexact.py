"""`bertl14 check-bitexact`: the C library against the Python integer reference, sentence by sentence.

For every sentence of a JSON-lines file ("text" field): the token ids of the C tokenizer against the
Python tokenizer, then the INT8 last hidden state of every token with its row scales (the [CLS] row
is the seed's embedding) and the logits, label and score of the C encoder against reference.py on
the same ids. Prints the number of sentences and of mismatches (with the first mismatching
sentences) and exits 1 on any mismatch.

--target host builds the library with the host compiler (cbuild.py) and calls it through ctypes
(cengine.py); --kernels both checks the portable and the DSP kernels (the latter on the C emulation
of the ACLE intrinsics on the host).
"""
from __future__ import annotations

import sys
from dataclasses import dataclass, field

import numpy as np

from .errors import UserError

MAX_SHOWN = 10


@dataclass
class Report:
    kernels: str
    sentences: int = 0
    tokens: int = 0
    mismatches: list[str] = field(default_factory=list)


def _texts(path, limit: int | None) -> list[str]:
    from .data import read_jsonl
    rows = read_jsonl(path)
    texts = [r["text"] for r in rows if isinstance(r, dict) and isinstance(r.get("text"), str)]
    if not texts:
        raise UserError(f"{path}: no lines with a \"text\" field")
    return texts[:limit] if limit else texts


def compare_sentence(text: str, model, eng, ref, qm) -> list[str]:
    """Differences between the C engine and the reference for one sentence (empty: bit-exact)."""
    problems = []
    ref_ids = model.encode(text)
    c_ids = eng.tokenize(text, model.max_seq_len)
    if c_ids != ref_ids:
        problems.append(f"token ids differ: C {c_ids} vs reference {ref_ids}")
    r = ref.encode(qm, ref_ids)
    c = eng.encode(ref_ids)
    if not np.array_equal(c.hidden, r.hidden):
        rows = sorted({int(i) for i in np.nonzero((c.hidden != r.hidden).any(axis=1))[0]})
        what = "[CLS] bytes" if rows == [0] else f"hidden rows {rows}"
        problems.append(f"{what} differ ({int((c.hidden != r.hidden).sum())} bytes)")
    if not np.array_equal(c.scales.astype(np.int64), r.hidden_scale.astype(np.int64)):
        problems.append(f"row scales differ: C {c.scales.tolist()} vs reference {r.hidden_scale.tolist()}")
    if c.frac_bits != r.hidden_f:
        problems.append(f"output exponent differs: C {c.frac_bits} vs reference {r.hidden_f}")
    if r.logits is not None:
        k = eng.classify()
        if not np.array_equal(k.logits.astype(np.int64), r.logits.astype(np.int64)):
            problems.append(f"logits differ: C {k.logits.tolist()} vs reference {r.logits.tolist()}")
        elif (k.label, k.score_q16) != (r.label, r.score_q16):
            problems.append(f"label/score differ: C {(k.label, k.score_q16)} vs reference {(r.label, r.score_q16)}")
    return problems


def check_host(model, texts: list[str], kernels: str, progress: bool = True) -> Report:
    from . import cengine, reference
    eng = cengine.CEngine(model.path, max_seq_len=model.max_seq_len, kernels=kernels)
    qm = model.qm
    rep = Report(kernels)
    it = texts
    if progress:
        from tqdm import tqdm
        it = tqdm(texts, desc=f"check-bitexact host/{kernels}", unit="sentence", file=sys.stderr)
    for text in it:
        probs = compare_sentence(text, model, eng, reference, qm)
        rep.sentences += 1
        if probs:
            rep.mismatches.append(f"{text!r}: " + "; ".join(probs))
    return rep


def run(args) -> int:
    from .modelio import open_model
    if args.target == "qemu":
        raise UserError("--target qemu is not implemented yet: run --target host (the same C sources; "
                        "the DSP kernels run on the ACLE emulation)")
    model = open_model(args.model, progress=not args.quiet)
    texts = _texts(args.data, args.limit)
    kernel_sets = ["portable", "dsp"] if args.kernels == "both" else [args.kernels]
    failed = False
    for k in kernel_sets:
        rep = check_host(model, texts, k, progress=not args.quiet)
        print(f"check-bitexact {model.name} target=host kernels={k}: {rep.sentences} sentences, "
              f"{len(rep.mismatches)} mismatches")
        for m in rep.mismatches[:MAX_SHOWN]:
            print("  MISMATCH " + m)
        if len(rep.mismatches) > MAX_SHOWN:
            print(f"  ... and {len(rep.mismatches) - MAX_SHOWN} more")
        failed |= bool(rep.mismatches)
    return 1 if failed else 0


def register(subparsers) -> None:
    p = subparsers.add_parser("check-bitexact", help="C library vs Python integer reference, byte for byte",
                              description=__doc__.split("\n\n")[0])
    p.add_argument("--model", required=True, help="converted model folder (or a Hugging Face folder)")
    p.add_argument("--data", required=True, metavar="FILE.jsonl", help="JSON lines with a \"text\" field")
    p.add_argument("--target", choices=["host", "qemu"], default="host")
    p.add_argument("--kernels", choices=["portable", "dsp", "both"], default="both")
    p.add_argument("--limit", type=int, default=None, help="check only the first N sentences")
    p.add_argument("--quiet", action="store_true", help="no progress bar")
    p.set_defaults(func=run)
