"""`bertl14 check-bitexact`: the C library against the Python integer reference, sentence by sentence.

For every sentence of a JSON-lines file ("text" field): the token ids and their byte offsets of the C
tokenizer against the Python tokenizer, then the INT8 last hidden state of every token with its row
scales (the [CLS] row is the seed's embedding), the logits, label and score and, for a model with a
token classifier, every token's tag logits and tag of the C encoder against reference/integer.py on the same
ids. Prints the number of sentences and of mismatches (with the first mismatching sentences) and
exits 1 on any mismatch.

--target host builds the library with the host compiler (cbuild.py) and calls it through ctypes
(cengine.py); --kernels both checks the portable and the DSP kernels (the latter on the C emulation
of the ACLE intrinsics on the host). --target qemu builds the test image tests/target for an
emulated board (--board, default mps2_an500, the Cortex-M7; every board whose board.yml has `qemu:`),
boots it under QEMU and sends it the sentences over its serial port (qemu_target.py); the image
tokenizes, encodes and classifies on the target and prints every result, compared here with the
reference on the target's token ids. There --kernels both checks every kernel set the board runs
(board.yml `kernels:`: portable and DSP on the Cortex-M4/M7/M33 boards, portable alone on qemu_riscv32). `--data hassil:N`
uses N sentences expanded from the home-assistant-intents templates (English and Chinese).

--entities FILE (a registry YAML or a `*_home.json`): first the C matcher (bertl14_registry_match, host build)
against registry.Matcher on every sentence: status, the text with placeholders, the slots (kind, index, byte
span); then everything above on the masked text. With --target qemu the matchers are compared on the host and
the target receives the masked text (the test image has no registry).
"""
from __future__ import annotations

from dataclasses import dataclass, field

import numpy as np

from ..errors import UserError

MAX_SHOWN = 10


@dataclass
class Report:
    kernels: str
    sentences: int = 0
    tokens: int = 0
    instructions: int = 0
    mismatches: list[str] = field(default_factory=list)


def hassil_sentences(n: int, seed: int = 0, zh_fraction: float = 0.4) -> list[str]:
    """n distinct sentences expanded from the home-assistant-intents templates (our slot lists):
    English and Chinese (zh-CN), in a seeded order. Not the public test set."""
    import random
    from ..data.dataset import build_dataset
    out = []
    for lang, count in (("en", n - int(n * zh_fraction)), ("zh-CN", int(n * zh_fraction))):
        if count <= 0:
            continue
        per_intent = 5
        while True:
            ds = build_dataset(lang, per_intent=per_intent, seed=seed, val_fraction=0.0, ood=False)
            texts = sorted({r["text"] for r in ds.train})
            if len(texts) >= count or per_intent > 200:
                break
            per_intent *= 2
        random.Random(seed).shuffle(texts)
        out += texts[:count]
    return out


def _texts(path, limit: int | None) -> list[str]:
    if str(path).startswith("hassil:"):
        try:
            n = int(str(path)[7:])
        except ValueError:
            raise UserError(f"--data {path}: use hassil:N with N a number of sentences") from None
        return hassil_sentences(n)
    from ..textio import read_jsonl_numbered
    texts = [r["text"] for _, r in read_jsonl_numbered(path, "--data", need=("text",))]
    return texts[:limit] if limit else texts


def host_result(eng, text: str, model):
    """One answer of the host build (tokenize, encode, classify, tag), in the QEMU test image's answer form, so
    both are compared with the reference by the same code (compare_answer)."""
    from .qemu_target import TargetResult
    ids, offsets, _ = eng.tokenize_offsets(text, model.max_seq_len)
    c = eng.encode(ids)
    r = TargetResult(ids=ids, token_status=0, hidden=c.hidden, scales=c.scales, frac_bits=c.frac_bits, label=None,
                     score_q16=None, logits=None, offsets=offsets)
    if model.qm.cls is not None:
        k = eng.classify()
        r.logits, r.label, r.score_q16 = k.logits.astype(np.int64), k.label, k.score_q16
    if model.qm.tagger is not None:
        g = eng.tag()            # after classify: it must not disturb the rows the tagger reads
        r.tags, r.tag_logits = g.tags, g.logits
    return r


def compare_tags(tags, logits, r) -> list[str]:
    """Differences of one sentence's tags and tag logits (C, from the host or the target) from the reference's."""
    if logits is None or np.shape(logits) != r.tag_logits.shape or not np.array_equal(logits, r.tag_logits):
        bad = (sorted({int(i) for i in np.nonzero((logits != r.tag_logits).any(axis=1))[0]})
               if logits is not None and np.shape(logits) == r.tag_logits.shape else "all")
        return [f"tag logits differ (tokens {bad})"]
    if list(tags or []) != r.tags.tolist():
        return [f"tags differ: C {list(tags or [])} vs reference {r.tags.tolist()}"]
    return []


class MatcherPair:
    """The registry compiled for the model, matched by C (host build) and by registry.Matcher."""

    def __init__(self, path, model, max_slots: int):
        from ..reference.cengine import RegistryMatcher
        from ..reference.infer import Entities
        self.entities = Entities(path, model, "ref", max_slots)   # the Python matcher
        self.c = RegistryMatcher(self.entities.words, self.entities.matcher_vocab)
        self.max_slots = max_slots
        self.slots = 0

    def mask(self, text: str) -> tuple[str, list[str]]:
        """(masked text of the reference, differences C vs Python)."""
        r_py = self.entities.matcher.match(text, self.max_slots)
        r_c = self.c.match(text, self.max_slots)
        problems = []
        if r_c[0] != r_py[0]:
            problems.append(f"matcher status differs: C {r_c[0]} vs reference {r_py[0]}")
        elif r_c[1] != r_py[1]:
            problems.append(f"masked text differs: C {r_c[1]!r} vs reference {r_py[1]!r}")
        elif r_c[2] != r_py[2]:
            problems.append(f"slots differ: C {r_c[2]} vs reference {r_py[2]}")
        self.slots += len(r_py[2])
        masked = r_py[1].decode("utf-8") if r_py[0] == 0 else text
        return masked, problems


def check_host(model, texts: list[str], kernels: str, progress: bool = True,
               matchers: MatcherPair | None = None) -> Report:
    from ..reference import cengine, integer as reference
    eng = cengine.CLibrary(model.path, max_seq_len=model.max_seq_len, kernels=kernels)
    qm = model.qm
    rep = Report(kernels)
    it = texts
    if progress:
        from ..ui import progress as bar
        it = bar(texts, desc=f"check-bitexact host/{kernels}", unit="sentence")
    for text in it:
        probs = []
        if matchers is not None:
            masked, probs = matchers.mask(text)
            text = masked if not probs else text
        probs += compare_answer(text, model, host_result(eng, text, model), reference, qm)
        rep.sentences += 1
        if probs:
            rep.mismatches.append(f"{text!r}: " + "; ".join(probs))
    return rep


def compare_answer(text: str, model, r, ref, qm) -> list[str]:
    """Differences between one answer of the C library (the QEMU test image's, or host_result's) and the reference
    (empty: bit-exact). The encoder is checked on the C tokenizer's own ids, so a tokenizer difference is reported
    once."""
    problems = []
    ref_ids = model.encode(text)
    ref_offsets = model.tokenizer.encode_offsets(text, model.max_seq_len)[1]
    if r.ids != ref_ids:
        problems.append(f"token ids differ: C {r.ids} vs reference {ref_ids}")
    elif r.offsets is not None and r.offsets != ref_offsets:
        problems.append(f"token offsets differ: C {r.offsets} vs reference {ref_offsets}")
    if r.status != 0 or r.hidden is None:
        return problems + [f"encode failed (status {r.status})"]
    e = ref.encode(qm, r.ids)
    if r.hidden.shape != e.hidden.shape or not np.array_equal(r.hidden, e.hidden):
        bad = (sorted({int(i) for i in np.nonzero((r.hidden != e.hidden).any(axis=1))[0]})
               if r.hidden.shape == e.hidden.shape else "all")
        problems.append(f"{'[CLS] bytes' if bad == [0] else f'hidden rows {bad}'} differ")
    if not np.array_equal(r.scales.astype(np.int64), e.hidden_scale.astype(np.int64)):
        problems.append(f"row scales differ: C {r.scales.tolist()} vs reference {e.hidden_scale.tolist()}")
    if r.frac_bits != e.hidden_f:
        problems.append(f"output exponent differs: C {r.frac_bits} vs reference {e.hidden_f}")
    if e.logits is not None:
        if r.logits is None or not np.array_equal(r.logits, e.logits.astype(np.int64)):
            problems.append(f"logits differ: C {None if r.logits is None else r.logits.tolist()} "
                            f"vs reference {e.logits.tolist()}")
        elif (r.label, r.score_q16) != (e.label, e.score_q16):
            problems.append(f"label/score differ: C {(r.label, r.score_q16)} vs reference {(e.label, e.score_q16)}")
    if e.tag_logits is not None:
        problems += compare_tags(r.tags, r.tag_logits, e)
    return problems


def check_qemu(model, texts: list[str], kernels: str, board: str = "mps2_an500", progress: bool = True,
               matchers: MatcherPair | None = None) -> Report:
    from . import qemu_target
    from ..reference import integer as reference
    elf = qemu_target.build_image(model.path, kernels, model.max_seq_len, board=board, quiet=not progress)
    rep = Report(kernels)
    it = texts
    if progress:
        from ..ui import progress as bar
        it = bar(texts, desc=f"check-bitexact qemu/{kernels}", unit="sentence")
    with qemu_target.QemuTarget(elf, board=board) as target:
        for text in it:
            probs = []
            if matchers is not None:
                masked, probs = matchers.mask(text)
                text = masked if not probs else text
            r = target.infer_text(text)
            probs += compare_answer(text, model, r, reference, model.qm)
            rep.sentences += 1
            rep.tokens += len(r.ids or [])
            rep.instructions += r.instructions
            if probs:
                rep.mismatches.append(f"{text!r}: " + "; ".join(probs))
    return rep


def run(args) -> int:
    from ..model.folder import open_model
    from ..ui import emit_json, show_progress
    if args.target == "qemu":                 # the board and its kernel sets first: their errors before any work
        from . import qemu_target
        args.board = args.board or "mps2_an500"
        kernel_sets = qemu_target.resolve_kernels(args.board, args.kernels)
        cpu = qemu_target.board_cpu(args.board)
    else:
        if args.board:
            raise UserError("--board names the emulated board of --target qemu; the host target has none")
        kernel_sets = ["portable", "dsp"] if args.kernels == "both" else [args.kernels]
    texts = _texts(args.data, args.limit)      # the data next
    model = open_model(args.model, progress=show_progress())
    if args.limit:
        texts = texts[:args.limit]
    failed = False
    matchers = MatcherPair(args.entities, model, args.max_slots) if args.entities else None
    for k in kernel_sets:
        if matchers is not None:
            matchers.slots = 0
        if args.target == "qemu":
            rep = check_qemu(model, texts, k, board=args.board, progress=not args.quiet, matchers=matchers)
            extra = (f" ({rep.tokens} tokens; {rep.instructions} instructions on the emulated {args.board} ({cpu}), "
                     f"{rep.instructions // max(1, rep.sentences)} a sentence, profile hooks included)")
        else:
            rep = check_host(model, texts, k, progress=not args.quiet, matchers=matchers)
            extra = ""
        if matchers is not None:
            extra += (f" (registry {args.entities}: {matchers.slots} names replaced, C matcher vs "
                      f"registry.Matcher{' on the host' if args.target == 'qemu' else ''})")
        if model.qm.tagger is not None:
            extra += f" (token classifier: {model.qm.num_tags} tags and their logits compared on every token)"
        failed |= bool(rep.mismatches)
        if args.json:
            emit_json({"model": model.name, "target": args.target,
                       **({"board": args.board} if args.target == "qemu" else {}),
                       "kernels": k, "sentences": rep.sentences,
                       "mismatches": len(rep.mismatches), "first_mismatches": rep.mismatches[:MAX_SHOWN],
                       **({"tokens": rep.tokens, "instructions": rep.instructions} if args.target == "qemu" else {}),
                       **({"registry_names": matchers.slots} if matchers is not None else {}),
                       "tags_compared": model.qm.tagger is not None})
            continue
        where = f"target={args.target}" + (f" board={args.board}" if args.target == "qemu" else "")
        print(f"check-bitexact {model.name} {where} kernels={k}: {rep.sentences} sentences, "
              f"{len(rep.mismatches)} mismatches{extra}")
        for m in rep.mismatches[:MAX_SHOWN]:
            print("  MISMATCH " + m)
        if len(rep.mismatches) > MAX_SHOWN:
            print(f"  ... and {len(rep.mismatches) - MAX_SHOWN} more")
    return 1 if failed else 0


def register(subparsers) -> None:
    p = subparsers.add_parser("check-bitexact", help="C library vs Python integer reference, byte for byte",
                              description=__doc__.split("\n\n")[0])
    p.add_argument("--model", required=True, help="converted model folder (or a Hugging Face folder)")
    p.add_argument("--data", required=True, metavar="FILE.jsonl",
                   help="JSON lines with a \"text\" field, or hassil:N for N sentences expanded from the "
                        "home-assistant-intents templates (English and Chinese)")
    from .. import ui
    p.add_argument("--target", choices=["host", "qemu"], default="host",
                   help="host: the library built with the host compiler; qemu: built for an emulated board (--board) "
                        "and run under QEMU (default host)")
    from .qemu_target import KERNEL_CONFIG, qemu_boards
    p.add_argument("--board", default=None, choices=qemu_boards() or None,
                   help="with --target qemu: the emulated board (default mps2_an500, the Cortex-M7; the boards whose "
                        "board.yml names a QEMU machine)")
    p.add_argument("--kernels", choices=[*KERNEL_CONFIG, "both"], default="both",
                   help="the library's kernel sets to check: the portable C ones, the Cortex-M DSP ones, the Helium "
                        "ones (mve), or both (default both; with --target qemu every set the board runs, board.yml "
                        "`kernels:`)")
    p.add_argument("--limit", type=ui.positive_int, default=None, metavar="N", help="check only the first N sentences")
    p.add_argument("--entities", metavar="FILE", default=None,
                   help="registry YAML or *_home.json: also compare the C matcher with registry.Matcher, then "
                        "check the encoder on the masked text")
    from ..reference.infer import MAX_SLOTS
    p.add_argument("--max-slots", type=ui.int_range(0, 255), default=MAX_SLOTS, metavar="N",
                   help=f"names replaced per sentence with --entities (default {MAX_SLOTS}, the firmware's)")
    ui.add_output_options(p, 'one {"model", "target", "kernels", "sentences", "mismatches", "first_mismatches"} '
                             'object a line, one line per kernel set')
    p.set_defaults(func=run)
