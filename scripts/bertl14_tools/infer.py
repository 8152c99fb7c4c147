"""`bertl14 tokenize | embed | predict | eval`: run a model on the host with a chosen engine.

Engines: `ref` the Python integer reference (bit-exact with the C library), `c` the C library itself through
ctypes, `float` the unquantized model in numpy, and for `tokenize` also `hf` (Hugging Face's tokenizer).
With `--json` every command prints one JSON object a line (the contract later tools and tests use):

  tokenize  {"text", "ids"}
  embed     {"text", "cls"} (+ "cls_int8", "cls_scale" for integer engines: cls = cls_int8 * cls_scale)
  predict   {"text", "intent", "score", "tokens"}   (score in [0, 1], for integer engines the device's
            printed thousandths / 1000; tokens = number of ids incl. [CLS]/[SEP])
  eval      {"n", "accuracy", "macro_f1", "agreement_with_float"}
"""
from __future__ import annotations

import json
import sys
from dataclasses import dataclass

import numpy as np
from tqdm import tqdm

from .errors import UserError
from .modelio import Model, open_model
from .report import per_label_scores


@dataclass
class Embedding:
    cls: list[float]
    cls_int8: list[int] | None = None
    cls_scale: float | None = None


@dataclass
class Prediction:
    label: int
    score: float
    tokens: int


# ------------------------------------------------------------------------------------------------------
# engines
# ------------------------------------------------------------------------------------------------------

class FloatEngine:
    name = "float"

    def __init__(self, model: Model):
        from . import float_engine
        self.model, self.fe = model, float_engine
        self.fm = model.fm   # raises a UserError when the source model is not at hand

    def embed(self, ids: list[int]) -> Embedding:
        return Embedding(cls=[float(x) for x in self.fe.forward(self.fm, ids).cls])

    def predict(self, ids: list[int]) -> Prediction:
        r = self.fe.forward(self.fm, ids)
        if r.logits is None:
            raise UserError(f"{self.model.name} has no classifier (a BertModel encoder): use embed")
        p = self.fe.softmax(r.logits)
        return Prediction(int(np.argmax(r.logits)), float(p.max()), len(ids))


class RefEngine:
    """The integer reference (reference.py), on the QuantModel read back from model.bl14."""
    name = "ref"

    def __init__(self, model: Model):
        try:
            from . import reference
        except ModuleNotFoundError as exc:
            if exc.name != "bertl14_tools.reference":
                raise
            raise UserError("the ref engine (bertl14_tools.reference) is not in this checkout yet") from None
        self.model, self.ref, self.qm = model, reference, model.qm

    def embed(self, ids: list[int]) -> Embedding:
        r = self.ref.encode(self.qm, ids)
        return Embedding(cls=[float(x) for x in r.cls_float], cls_int8=[int(x) for x in r.cls],
                         cls_scale=float(r.cls_scale) * 2.0 ** -(r.hidden_f + 8))

    def predict(self, ids: list[int]) -> Prediction:
        if not self.qm.has_classifier:
            raise UserError(f"{self.model.name} has no classifier (a BertModel encoder): use embed")
        r = self.ref.encode(self.qm, ids)
        return Prediction(int(r.label), r.score / 1000.0, len(ids))  # what the device prints, thousandths


class CEngine(RefEngine):
    """The C library through ctypes (cengine.py)."""
    name = "c"

    def __init__(self, model: Model):
        try:
            from . import cengine
        except ModuleNotFoundError as exc:
            if exc.name != "bertl14_tools.cengine":
                raise
            raise UserError("the c engine (bertl14_tools.cengine, the C library via ctypes) is not in this "
                            "checkout yet; use --engine ref (bit-exact with it by contract)") from None
        self.model = model
        self.eng = cengine.CEngine(model.path, max_seq_len=model.max_seq_len)

    def tokenize(self, text: str) -> list[int]:
        return list(self.eng.tokenize(text, self.model.max_seq_len))

    def embed(self, ids: list[int]) -> Embedding:
        r = self.eng.encode(ids)
        return Embedding(cls=[float(x) for x in r.cls_float], cls_int8=[int(x) for x in r.cls_q],
                         cls_scale=float(r.cls_scale))

    def predict(self, ids: list[int]) -> Prediction:
        if not self.model.labels:
            raise UserError(f"{self.model.name} has no classifier (a BertModel encoder): use embed")
        r = self.eng.classify(ids)
        return Prediction(int(r.label), r.score_milli / 1000.0, len(ids))


ENGINES = {"ref": RefEngine, "c": CEngine, "float": FloatEngine}


def make_engine(name: str, model: Model):
    return ENGINES[name](model)


def tokenize_texts(model: Model, texts: list[str], engine: str) -> list[list[int]]:
    if engine == "ref":
        return [model.encode(t) for t in texts]
    if engine == "hf":
        from .tokenizer import hf_tokenize
        return hf_tokenize(model.vocab_path, texts, model.max_seq_len, model.tokenizer.do_lower_case)
    if engine == "c":
        eng = CEngine(model)
        return [eng.tokenize(t) for t in texts]
    raise UserError(f"--engine {engine}: tokenize supports ref, c and hf")


# ------------------------------------------------------------------------------------------------------
# metrics
# ------------------------------------------------------------------------------------------------------

def macro_f1(gold: list[str], pred: list[str]) -> float:
    """Mean F1 over the labels present in the gold data (a label never predicted counts as F1 = 0)."""
    rows = per_label_scores(gold, pred)
    return float(np.mean([r["f1"] for r in rows])) if rows else 0.0


def read_eval_data(path: str) -> tuple[list[str], list[str]]:
    texts, gold = [], []
    try:
        lines = open(path, encoding="utf-8").read().splitlines()
    except OSError as exc:
        raise UserError(f"--data {path}: {exc.strerror}") from None
    for n, line in enumerate(lines, 1):
        if not line.strip():
            continue
        try:
            obj = json.loads(line)
        except ValueError as exc:
            raise UserError(f"{path}:{n}: not valid JSON ({exc})") from None
        if not isinstance(obj, dict) or not isinstance(obj.get("text"), str) or "intent" not in obj:
            raise UserError(f"{path}:{n}: each line needs \"text\" and \"intent\"")
        texts.append(obj["text"])
        gold.append(str(obj["intent"]))
    if not texts:
        raise UserError(f"--data {path}: no sentences")
    return texts, gold


# ------------------------------------------------------------------------------------------------------
# commands
# ------------------------------------------------------------------------------------------------------

def _texts(args) -> list[str]:
    if args.text == ["-"] or not args.text:
        if not args.text and sys.stdin.isatty():
            raise UserError("give TEXT arguments, or - to read one text a line from stdin")
        return [line.rstrip("\n") for line in sys.stdin if line.strip()]
    return list(args.text)


def _emit(obj: dict, as_json: bool, human: str) -> None:
    print(json.dumps(obj, ensure_ascii=False) if as_json else human, flush=True)


def cmd_tokenize(args) -> int:
    model = open_model(args.model, progress=sys.stderr.isatty())
    texts = _texts(args)
    for text, ids in zip(texts, tokenize_texts(model, texts, args.engine)):
        _emit({"text": text, "ids": ids}, args.json,
              f"{text}\t{' '.join(model.vocab[i] for i in ids)}\t{ids}")
    return 0


def cmd_embed(args) -> int:
    model = open_model(args.model, progress=sys.stderr.isatty())
    eng = make_engine(args.engine, model)
    for text in _texts(args):
        e = eng.embed(model.encode(text))
        obj = {"text": text, "cls": e.cls}
        if e.cls_int8 is not None:
            obj.update(cls_int8=e.cls_int8, cls_scale=e.cls_scale)
        _emit(obj, args.json, f"{text}\t" + " ".join(f"{x:.4f}" for x in e.cls[:8]) + " ...")
    return 0


def cmd_predict(args) -> int:
    model = open_model(args.model, progress=sys.stderr.isatty())
    eng = make_engine(args.engine, model)
    labels = model.labels
    for text in _texts(args):
        p = eng.predict(model.encode(text))
        obj = {"text": text, "intent": labels[p.label], "score": round(p.score, 6), "tokens": p.tokens}
        _emit(obj, args.json, f"{labels[p.label]}\t{p.score:.3f}\t{text}")
    return 0


def evaluate(model: Model, engine: str, texts: list[str], gold: list[str], progress: bool = True) -> dict:
    eng = make_engine(engine, model)
    labels = model.labels
    unknown = sorted(set(gold) - set(labels))
    pred, ref_pred = [], []
    flt = None
    if engine != "float" and model.has_float:
        flt = FloatEngine(model)
    for text in tqdm(texts, desc=f"eval ({engine})", unit="sent", disable=not progress, leave=False):
        ids = model.encode(text)
        pred.append(labels[eng.predict(ids).label])
        if flt is not None:
            ref_pred.append(labels[flt.predict(ids).label])
    acc = float(np.mean([g == p for g, p in zip(gold, pred)]))
    if engine == "float":
        agree = 1.0
    elif flt is not None:
        agree = float(np.mean([a == b for a, b in zip(pred, ref_pred)]))
    else:
        agree = None
    out = {"n": len(texts), "accuracy": round(acc, 6), "macro_f1": round(macro_f1(gold, pred), 6),
           "agreement_with_float": None if agree is None else round(agree, 6)}
    if unknown:
        out["unknown_intents"] = unknown
    return out


def cmd_eval(args) -> int:
    model = open_model(args.model, progress=sys.stderr.isatty())
    texts, gold = read_eval_data(args.data)
    res = evaluate(model, args.engine, texts, gold, progress=sys.stderr.isatty())
    if args.json:
        print(json.dumps(res, ensure_ascii=False))
    else:
        agree = "n/a (float model not available)" if res["agreement_with_float"] is None \
            else f"{res['agreement_with_float']:.4f}"
        print(f"n={res['n']} accuracy={res['accuracy']:.4f} macro_f1={res['macro_f1']:.4f} "
              f"agreement_with_float={agree}")
    return 0


def register(subparsers) -> None:
    def common(p, engines, default):
        p.add_argument("--model", required=True, metavar="M",
                       help="converted model folder, or a Hugging Face folder (converted on the fly)")
        p.add_argument("--engine", default=default, choices=engines, help=f"(default {default})")
        p.add_argument("--json", action="store_true", help="one JSON object a line")

    p = subparsers.add_parser("tokenize", help="token ids of texts")
    common(p, ["ref", "c", "hf"], "ref")
    p.add_argument("text", nargs="*", metavar="TEXT", help="texts, or - for one a line from stdin")
    p.set_defaults(func=cmd_tokenize)

    p = subparsers.add_parser("embed", help="the [CLS] vector of texts")
    common(p, ["ref", "c", "float"], "ref")
    p.add_argument("text", nargs="*", metavar="TEXT", help="texts, or - for one a line from stdin")
    p.set_defaults(func=cmd_embed)

    p = subparsers.add_parser("predict", help="intent and score of texts")
    common(p, ["ref", "c", "float"], "ref")
    p.add_argument("text", nargs="*", metavar="TEXT", help="texts, or - for one a line from stdin")
    p.set_defaults(func=cmd_predict)

    p = subparsers.add_parser("eval", help="accuracy and macro-F1 on a labelled JSONL file")
    common(p, ["ref", "c", "float"], "ref")
    p.add_argument("--data", required=True, metavar="FILE.jsonl", help="lines with \"text\" and \"intent\"")
    p.set_defaults(func=cmd_eval)
