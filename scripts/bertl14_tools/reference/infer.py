"""`bertl14 tokenize | embed | predict | eval`: run a model on the host with a chosen engine.

Engines: `ref` the Python integer reference (bit-exact with the C library), `c` the C library itself through
ctypes, `float` the unquantized model in numpy, and for `tokenize` also `hf` (Hugging Face's tokenizer).
With `--json` every command prints one JSON object a line (the contract later tools and tests use):

  tokenize  {"text", "ids"}
  embed     {"text", "cls"} (+ "cls_int8", "cls_scale" for integer engines: cls = cls_int8 * cls_scale)
  predict   {"text", "intent", "score", "tokens"} (+ "best", "slots")   (score in [0, 1], for integer engines the
            device's printed thousandths / 1000; tokens = number of ids incl. [CLS]/[SEP]; slots: a dict keyed by
            Home Assistant's slot names, {"minutes": 5, "name": "Kitchen Light"}, with a registry or a model
            that tags slots)
  eval      {"n", "accuracy", "macro_f1", "accuracy_argmax", "macro_f1_argmax", "min_score", "min_score_named",
             "agreement_with_float"} (+ "value_slot_accuracy", "value_slots" with a model that tags slots)

`predict` and `eval` answer as the firmware does (answer.py, app/src/protocol.c): a best label whose score, in
integer thousandths, is under the model's `min_score` (training.json, compiled into the firmware as
BERTL14_MIN_SCORE_MILLI) answers "intent": "none" with "best": the label; the model's own `none` class answers
"none" without "best". A sentence in which `--entities` replaced a name, area or floor is answered with the
model's `min_score_named` instead (BERTL14_MIN_SCORE_NAMED_MILLI; `min_score` when it ships none). `--min-score X`
sets another threshold, for every sentence unless `--min-score-named Y` sets the named one; `--min-score 0` gives
the plain argmax. `eval`'s "accuracy" / "macro_f1" are those of the device's answers, "accuracy_argmax" /
"macro_f1_argmax" those of the best label without the threshold.

`tokenize`, `predict` and `eval` take `--entities FILE` (a registry YAML, or a `*_home.json` of the public test data): the
registry is compiled for the model's tokenizer options and every text goes through the matcher first (docs/
registry.md): known names become [NAME] / [AREA] / [FLOOR] before tokenizing. The `c` engine uses the C matcher
(bertl14_registry_match through ctypes), the others registry.Matcher (bit-exact with it). Then tokenize and predict add
"masked" (the text the model saw) and "names" [{"kind", "name", "text", "start", "end"}] (name = the registry's
display name, text = the words of the input, start/end = byte offsets in the UTF-8 input; tokenize calls the
list "slots"), predict's "slots" dict holds the first name of each kind, and eval adds
"slot_accuracy" and "slots" (slots.SlotScore: the expected name/area/floor of each record, compared as registry
objects). With a model that ships intent_domains.json, the domain rule of the firmware applies (answer.py,
docs/registry.md): when entity names of known domains were found, the answer is the best label among the intents
that accept one of those domains (`none` and the intents that never take a name stay allowed), scored from the
same logits (the `c` engine calls bertl14_classify_allowed, `ref` its Python twin answer.classify_allowed).
predict adds "argmax" (the label before the rule) when the rule changed the answer; eval adds "domain_rule"
{"labels_with_domains", "changed"}.

A model with a slot tagger (tags.json when trained, the token classifier in the weights blob) also answers slot
values, as the firmware does (app/src/intent.c): the text the model read is tokenized with byte offsets, every
token tagged, the BIO spans decoded and turned into values by the model's value table (slots.json, docs/slots.md;
tagging.slot_values_of, the Python twin of bertl14_slots_extract). The registry's names win over the tagger's.
eval's "value_slots": sentence-level exact match over the value slots (slots.VALUE_SLOTS) of the sentences whose
intent is right ("accuracy", of "eligible"), and the share of every sentence that expects a value slot answered with
the right intent and every value ("end_to_end", of "with_values").
"""
from __future__ import annotations

import sys
from dataclasses import dataclass

import numpy as np

from .. import textio, ui
from ..errors import UserError
from ..model.folder import Model, open_model, read_model_parts

MAX_SLOTS = 4  # names replaced per sentence: the firmware's default CONFIG_APP_REGISTRY_MAX_SLOTS


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
    score_milli: int    # the score the threshold compares: the device's thousandths (float engine: rounded)
    logits: np.ndarray | None = None   # the classifier's logits (int32 Q10 for the integer engines)


# ------------------------------------------------------------------------------------------------------
# engines
# ------------------------------------------------------------------------------------------------------

class FloatEngine:
    name = "float"

    def __init__(self, model: Model):
        from ..model import float_engine
        self.model, self.fe = model, float_engine
        self.fm = model.fm   # raises a UserError when the source model is not at hand

    def embed(self, ids: list[int]) -> Embedding:
        return Embedding(cls=[float(x) for x in self.fe.forward(self.fm, ids).cls])

    def predict(self, ids: list[int]) -> Prediction:
        r = self._last = self.fe.forward(self.fm, ids)
        if r.logits is None:
            raise UserError(f"{self.model.name} has no classifier (a BertModel encoder): use embed")
        p = self.fe.softmax(r.logits)
        return Prediction(int(np.argmax(r.logits)), float(p.max()), len(ids), int(round(float(p.max()) * 1000)),
                          np.asarray(r.logits, np.float64))

    def last_tags(self) -> list[int]:
        """The slot tag of every token of the last predict."""
        return [int(t) for t in self._last.tags]

    def choose(self, p: Prediction, allowed: list[bool]) -> Prediction:
        """The best allowed logit and its softmax probability over the allowed labels, in floating point (as
        bertl14_classify_allowed computes it in fixed point)."""
        ok = np.asarray(allowed, bool) if any(allowed) else np.ones(len(allowed), bool)
        label = int(np.flatnonzero(ok)[np.argmax(p.logits[ok])])
        prob = float(self.fe.softmax(np.where(ok, p.logits, -np.inf))[label])   # the others weigh nothing
        return Prediction(label, prob, p.tokens, int(round(prob * 1000)), p.logits)


class RefEngine:
    """The integer reference (reference/integer.py), on the QuantModel read back from model.bl14."""
    name = "ref"

    def __init__(self, model: Model):
        from . import integer as reference
        self.model, self.ref, self.qm = model, reference, model.qm

    def embed(self, ids: list[int]) -> Embedding:
        r = self.ref.encode(self.qm, ids)
        return Embedding(cls=[float(x) for x in r.cls_float], cls_int8=[int(x) for x in r.cls],
                         cls_scale=float(r.cls_scale) * 2.0 ** -(r.hidden_f + 8))

    def predict(self, ids: list[int]) -> Prediction:
        if not self.qm.has_classifier:
            raise UserError(f"{self.model.name} has no classifier (a BertModel encoder): use embed")
        r = self._last = self.ref.encode(self.qm, ids)
        return Prediction(int(r.label), r.score / 1000.0, len(ids), int(r.score), r.logits)  # what the device prints

    def last_tags(self) -> list[int]:
        """The slot tag of every token of the last predict (reference.token_tags, bit-exact with bertl14_tag)."""
        return [int(t) for t in self._last.tags]

    def choose(self, p: Prediction, allowed: list[bool]) -> Prediction:
        """The domain rule: answer.classify_allowed, the Python twin of bertl14_classify_allowed."""
        from .answer import classify_allowed
        label, q16 = classify_allowed(p.logits, allowed)
        milli = self.ref.score_thousandths(q16)
        return Prediction(label, milli / 1000.0, p.tokens, milli, p.logits)


class CEngine(RefEngine):
    """The C library through ctypes (cengine.py)."""
    name = "c"

    def __init__(self, model: Model):
        from . import cengine
        self.model = model
        self.eng = cengine.CLibrary(model.path, max_seq_len=model.max_seq_len)

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
        return Prediction(int(r.label), r.score_milli / 1000.0, len(ids), int(r.score_milli), r.logits)

    def last_tags(self) -> list[int]:
        """bertl14_tag on the last predict's encode."""
        return list(self.eng.tag().tags)

    def choose(self, p: Prediction, allowed: list[bool]) -> Prediction:
        """The domain rule: bertl14_classify_allowed of the C library on the classification's logits."""
        import ctypes
        from .answer import allowed_words
        from .cengine import Classification
        fn = self.eng.lib.bertl14_classify_allowed
        fn.restype, fn.argtypes = ctypes.c_int, [ctypes.c_void_p, ctypes.c_uint32, ctypes.c_void_p, ctypes.c_void_p]
        logits = np.ascontiguousarray(p.logits, dtype=np.int32)
        words = np.asarray(allowed_words(allowed), dtype=np.uint32)
        r = Classification()
        st = fn(logits.ctypes.data, len(logits), words.ctypes.data, ctypes.byref(r))
        if st != 0:
            raise UserError(f"bertl14_classify_allowed failed: status {st}")
        return Prediction(int(r.label), r.score_milli / 1000.0, p.tokens, int(r.score_milli), p.logits)


ENGINES = {"ref": RefEngine, "c": CEngine, "float": FloatEngine}


def make_engine(name: str, model: Model):
    return ENGINES[name](model)


# ------------------------------------------------------------------------------------------------------
# --entities: the registry's names become placeholders before tokenizing
# ------------------------------------------------------------------------------------------------------

@dataclass
class Slot:
    kind: str       # "name", "area", "floor"
    name: str       # the registry's display name of the object found
    index: int      # its index among the objects of its kind
    text: str       # the words of the input that matched
    start: int      # byte offsets in the UTF-8 input
    end: int

    def as_dict(self) -> dict:
        return {"kind": self.kind, "name": self.name, "text": self.text, "start": self.start, "end": self.end}


class Entities:
    """A registry compiled for a model's tokenizer options, with the matcher of an engine (C for `c`)."""

    def __init__(self, path, model: Model, engine: str, max_slots: int = MAX_SLOTS):
        import warnings
        from ..registry import names as R
        from ..model import vocab_blob as V
        if not 0 <= max_slots <= 255:
            raise UserError(f"--max-slots {max_slots}: use 0..255")
        self.R, self.max_slots = R, max_slots
        self.matcher_vocab = vocab_words = read_model_parts(model.path / "model.bl14")[1]
        flags = vocab_words[256 + V.HDR_FLAGS]  # the options the C matcher checks the table against
        self.opts = (bool(flags & V.FLAG_LOWER_CASE), bool(flags & V.FLAG_STRIP_ACCENTS),
                     bool(flags & V.FLAG_CHINESE_CHARS))
        self.registry = R.load(path)
        R.validate(self.registry, *self.opts)
        with warnings.catch_warnings(record=True) as caught:  # shared names: said once, on stderr
            warnings.simplefilter("always")
            self.words = R.compile_registry(self.registry, *self.opts)
        for w in caught:
            print(f"warning: {w.message}", file=sys.stderr)
        if engine == "c":
            from .cengine import RegistryMatcher
            self.matcher = RegistryMatcher(self.words, vocab_words)
            self._domain = _c_entity_domain(self.words)
        else:
            self.matcher = R.Matcher(self.words, vocab_words)
            self._domain = lambda index: R.entity_domain(self.words, index)
        # the domain rule (answer.py): label -> domain bits of the model's intent_domains.json (None: no table)
        from ..registry.domains import label_domain_masks, load_intent_domains
        table = load_intent_domains(model.path)
        self.label_masks = label_domain_masks(model.labels, table) if table is not None and model.labels else None

    def apply(self, text: str) -> tuple[str, list[Slot]]:
        """(the text with placeholders, the names found)."""
        st, out, found = self.matcher.match(text, self.max_slots)
        if st != 0:
            raise UserError(f"registry matcher failed on {text!r}: status {st} (invalid UTF-8?)")
        raw = text.encode("utf-8", "surrogatepass")
        slots = [Slot(self.R.KIND_KEYS[k], self.registry.items(k)[i].name, i,
                      raw[a:b].decode("utf-8", "replace"), a, b) for k, i, a, b in found]
        return out.decode("utf-8"), slots

    def domains(self, slots: list[Slot]) -> list[int]:
        """The domains (registry.domains.DOMAINS indices, 0: unknown) of the entity names found, read from the compiled
        table by the engine's matcher side (bertl14_registry_domain for `c`, registry.entity_domain otherwise)."""
        return [self._domain(s.index) for s in slots if s.kind == "name"]

    def allowed(self, slots: list[Slot]) -> list[bool] | None:
        """The labels the domain rule lets answer (None: all: no table, or no name of a known domain)."""
        from ..registry.domains import name_domain_mask
        from .answer import allowed_labels
        return allowed_labels(self.label_masks, name_domain_mask(self.domains(slots)))

    @staticmethod
    def found(slots: list[Slot]) -> dict[str, str]:
        """kind -> display name, the first name of each kind (what the device reports)."""
        out: dict[str, str] = {}
        for s in slots:
            out.setdefault(s.kind, s.name)
        return out


# ------------------------------------------------------------------------------------------------------
# the device's answer: registry, model, threshold
# ------------------------------------------------------------------------------------------------------

@dataclass
class Answer:
    intent: str             # what the firmware answers: the label, or "none"
    best: str | None        # the label answered "none" for being under the threshold (the firmware's best=)
    label: str              # the best label, whatever the threshold
    score: float            # its score in [0, 1]
    score_milli: int
    tokens: int
    masked: str             # the text the model read (names replaced with --entities)
    slots: list[Slot]
    argmax: str             # the model's best label before the domain rule (= label when the rule changed nothing)
    allowed: list[bool] | None = None   # the labels the domain rule let answer (None: no rule)
    values: dict | None = None          # the slot values the model's tagger read (None: the model has no tagger)

    def slot_dict(self, names: dict[str, str] | None = None) -> dict:
        """The answer's slots as Home Assistant keys them: the registry's names (`names`, kind -> display name)
        first, then the tagger's values for the other keys (the firmware's order of precedence)."""
        out = dict(names or {})
        for key, value in (self.values or {}).items():
            out.setdefault(key, value)
        return out


class Answerer:
    """One sentence as the firmware answers it: the registry's names replaced (with `entities`), the model, the
    domain rule (with `entities` and a model that ships intent_domains.json: only the intents that accept the
    domain of a name found may answer, answer.py), then the score threshold (answer.device_answer), the named one
    when the registry replaced a name (answer.thresholds_for: None the model's own; a plain one given alone is
    also the named one)."""

    def __init__(self, model: Model, engine: str, entities: Entities | None = None,
                 min_score_milli: int | None = None, min_score_named_milli: int | None = None):
        from . import answer
        self.model, self.entities, self.labels = model, entities, model.labels
        self.eng = make_engine(engine, model)
        self.min_score_milli, self.min_score_named_milli = answer.thresholds_for(model, min_score_milli,
                                                                                 min_score_named_milli)
        self.device_answer, self.threshold_for = answer.device_answer, answer.threshold_for
        self.values = None
        if model.tags:    # the value table and intents' slots the firmware is built with
            from .tagging import ValueReader
            self.values = ValueReader(model.path, model.tags)

    def __call__(self, text: str) -> Answer:
        masked, slots = self.entities.apply(text) if self.entities else (text, [])
        if self.values is not None:
            ids, offsets = self.model.tokenizer.encode_offsets(masked, self.model.max_seq_len)[:2]
        else:
            ids = self.model.encode(masked)
        p = self.eng.predict(ids)
        values = None
        if self.values is not None:   # the tagger's spans of the text the model read, as bertl14_slots_extract
            values = self.values.read(masked.encode("utf-8", "surrogatepass"), self.eng.last_tags(), offsets)
        argmax = self.labels[p.label]
        allowed = self.entities.allowed(slots) if self.entities else None
        if allowed is not None:
            p = self.eng.choose(p, allowed)
        label = self.labels[p.label]
        threshold = self.threshold_for(len(slots), self.min_score_milli, self.min_score_named_milli)
        intent, best = self.device_answer(label, p.score_milli, threshold)
        if values is not None:   # the slots of the answer's intent
            values = self.values.fit(values, label)
        return Answer(intent, best, label, p.score, p.score_milli, p.tokens, masked, slots, argmax, allowed, values)


def _c_entity_domain(words: list[int]):
    """bertl14_registry_domain of the C matcher library on a compiled table, as a function of the entity index."""
    import ctypes
    from .cengine import load_registry_library
    fn = load_registry_library().bertl14_registry_domain
    fn.restype, fn.argtypes = ctypes.c_uint32, [ctypes.c_void_p, ctypes.c_uint32]
    table = ctypes.create_string_buffer(np.asarray(words, dtype=np.uint32).tobytes())
    return lambda index: int(fn(table, index))


def tokenize_texts(model: Model, texts: list[str], engine: str) -> list[list[int]]:
    if engine == "ref":
        return [model.encode(t) for t in texts]
    if engine == "hf":
        from ..model.tokenizer import hf_tokenize
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


def read_eval_data(path: str, labels: list[str] | None = None) -> tuple[list[str], list[str]]:
    records = read_eval_records(path, labels)
    return [r["text"] for r in records], [str(r["intent"]) for r in records]


def read_eval_records(path: str, labels: list[str] | None = None, what: str = "--data") -> list[dict]:
    """The JSON objects of a labelled JSONL file (each with "text" and "intent"; "slots" optional). With the
    model's `labels`, an intent the model does not know is an error naming its line (`none` is always known:
    the device answers it), so no figure is computed on labels that can only be wrong."""
    numbered = textio.read_jsonl_numbered(path, what, need=("text", "intent"))
    if labels is not None:
        check_labels(numbered, labels, path)
    return [obj for _, obj in numbered]


def check_labels(numbered: list[tuple[int, dict]], labels: list[str], path) -> None:
    known = set(labels) | {"none"}
    unknown = [(n, str(obj["intent"])) for n, obj in numbered if str(obj["intent"]) not in known]
    if unknown:
        n, label = unknown[0]
        others = f" (and {len(unknown) - 1} more lines)" if len(unknown) > 1 else ""
        raise UserError(f"{path}:{n}: intent {label!r} is not one of the model's {len(labels)} labels{others}: fix "
                        "the data, or use the model trained on these intents")


# ------------------------------------------------------------------------------------------------------
# commands
# ------------------------------------------------------------------------------------------------------

@dataclass
class Input:
    """One text to answer: `text` None when the device would refuse it (error=invalid_utf8)."""
    raw: bytes | str
    text: str | None
    where: str          # "argument 2", "stdin line 3"


def _texts(args) -> list[Input]:
    """The TEXT arguments, or the lines of stdin (- or none), as bytes checked by the device's rule."""
    if args.text == ["-"] or not args.text:
        if not args.text and sys.stdin.isatty():
            raise UserError("give TEXT arguments, or - to read one text a line from stdin")
        out = []
        for n, raw in enumerate(sys.stdin.buffer, 1):
            raw = raw.rstrip(b"\n")
            raw = raw[:-1] if raw.endswith(b"\r") else raw
            if raw.strip():
                out.append(Input(raw, textio.device_text(raw), f"stdin line {n}"))
        return out
    return [Input(t, textio.device_text(t), f"argument {n}") for n, t in enumerate(args.text, 1)]


def _refused(inp: Input, args, command: str) -> None:
    """The device's answer to text that is not UTF-8: error=invalid_utf8 on stdout, where it was on stderr."""
    shown = textio.shown(inp.raw)
    raw = inp.raw
    if isinstance(raw, str):   # an argument: the bytes the locale could not decode come back
        try:
            raw = raw.encode("utf-8", "surrogateescape")
        except UnicodeEncodeError:
            raw = b""
    bad = textio.bad_byte(raw)
    why = f" ({textio.describe_bad_byte(bad[2])} at column {bad[1]})" if bad else ""
    print(f"bertl14 {command}: error: {inp.where}: not UTF-8 text{why}: the device answers "
          f"error={textio.INVALID_UTF8}; send UTF-8 text", file=sys.stderr)
    _emit({"text": shown, "error": textio.INVALID_UTF8, "message": textio.INVALID_UTF8_MESSAGE}, args.json,
          f"error={textio.INVALID_UTF8} {textio.INVALID_UTF8_MESSAGE}\t{shown}")


def _emit(obj: dict, as_json: bool, human: str) -> None:
    if as_json:
        ui.emit_json(obj)
    else:
        print(human, flush=True)


def cmd_tokenize(args) -> int:
    model = open_model(args.model, progress=ui.show_progress())
    inputs = _texts(args)
    texts = [i.text for i in inputs if i.text is not None]
    ent = _entities(args, model)
    masked = [ent.apply(t) for t in texts] if ent else [(t, []) for t in texts]
    answers = iter(zip(texts, masked, tokenize_texts(model, [m for m, _ in masked], args.engine)))
    for inp in inputs:
        if inp.text is None:
            _refused(inp, args, "tokenize")
            continue
        text, (m, slots), ids = next(answers)
        obj = {"text": text, "ids": ids}
        if ent:
            obj.update(masked=m, slots=[s.as_dict() for s in slots])
        _emit(obj, args.json, f"{text}\t{' '.join(model.vocab[i] for i in ids)}\t{ids}")
    return 1 if len(texts) < len(inputs) else 0


def cmd_embed(args) -> int:
    model = open_model(args.model, progress=ui.show_progress())
    eng = make_engine(args.engine, model)
    refused = 0
    for inp in _texts(args):
        if inp.text is None:
            _refused(inp, args, "embed")
            refused += 1
            continue
        text = inp.text
        e = eng.embed(model.encode(text))
        obj = {"text": text, "cls": e.cls}
        if e.cls_int8 is not None:
            obj.update(cls_int8=e.cls_int8, cls_scale=e.cls_scale)
        _emit(obj, args.json, f"{text}\t" + " ".join(f"{x:.4f}" for x in e.cls[:8]) + " ...")
    return 1 if refused else 0


def _entities(args, model: Model) -> Entities | None:
    return Entities(args.entities, model, args.engine, args.max_slots) if args.entities else None


def _min_scores(args) -> dict:
    """Answerer's and evaluate's thresholds from --min-score / --min-score-named (None: the model's own)."""
    from .answer import to_milli
    return {"min_score_milli": None if args.min_score is None else to_milli(args.min_score),
            "min_score_named_milli": None if args.min_score_named is None
            else to_milli(args.min_score_named, "--min-score-named")}


def cmd_predict(args) -> int:
    model = open_model(args.model, progress=ui.show_progress())
    ent = _entities(args, model)
    run = Answerer(model, args.engine, ent, **_min_scores(args))
    refused = 0
    for inp in _texts(args):
        if inp.text is None:      # the device's rule: error=invalid_utf8, and the next line is answered
            _refused(inp, args, "predict")
            refused += 1
            continue
        text = inp.text
        a = run(text)
        obj = {"text": text, "intent": a.intent, "score": round(a.score, 6), "tokens": a.tokens}
        human = f"{a.intent}\t{a.score:.3f}\t{text}"
        if a.best is not None:
            obj["best"] = a.best
            human += f"\tbest={a.best}"
        if ent:
            obj.update(masked=a.masked, names=[s.as_dict() for s in a.slots])
            if a.argmax != a.label:     # the domain rule moved the answer
                obj["argmax"] = a.argmax
                human += f"\targmax={a.argmax}"
        if ent or a.values is not None:
            obj["slots"] = a.slot_dict(Entities.found(a.slots) if ent else None)
            human += "".join(f"\t{k}={v}" for k, v in obj["slots"].items())
        _emit(obj, args.json, human)
    return 1 if refused else 0


def evaluate(model: Model, engine: str, texts: list[str], gold: list[str], progress: bool = True,
             entities: Entities | None = None, expected: list[dict] | None = None,
             min_score_milli: int | None = None, values: list[dict] | None = None,
             min_score_named_milli: int | None = None) -> dict:
    """Intent accuracy and macro-F1 of the device's answers (the thresholds `min_score_milli` and, for sentences
    with a registry name, `min_score_named_milli`, as Answerer takes them) and of the best label without them,
    agreement of the best label with the float model; with `entities`,
    the texts go through the matcher first and, with `expected` (slots.expected_slots of each record), slot
    accuracy is added. With `values` (slots.expected_values of each record) and a model with a tagger, the value
    slots' sentence-level exact match over the sentences whose intent is right (slots.ValueScore)."""
    from .slots import SlotScore, ValueScore
    value_score = ValueScore()
    run = Answerer(model, engine, entities, min_score_milli, min_score_named_milli)
    labels = model.labels
    unknown = sorted(set(gold) - set(labels))
    pred, best, ref_pred = [], [], []
    flt = None
    if engine != "float" and model.has_float:
        flt = FloatEngine(model)
    score = SlotScore(*entities.opts) if entities else None
    with_names = moved = 0
    for n, text in enumerate(ui.progress(texts, desc=f"eval ({engine})", unit="sent", disable=not progress,
                                         leave=False)):
        a = run(text)
        if entities:
            with_names += bool(a.slots)
            moved += a.argmax != a.label
            if expected is not None:
                score.add(expected[n], entities.found(a.slots), entities.registry)
        pred.append(a.intent)
        best.append(a.label)
        if values is not None and a.values is not None:
            value_score.add(values[n], a.values, a.intent == gold[n])
        if flt is not None:   # the float model's best label, under the same domain rule
            fp = flt.predict(model.encode(a.masked))
            ref_pred.append(labels[(flt.choose(fp, a.allowed) if a.allowed is not None else fp).label])
    acc = float(np.mean([g == p for g, p in zip(gold, pred)]))
    acc_argmax = float(np.mean([g == p for g, p in zip(gold, best)]))
    if engine == "float":
        agree = 1.0
    elif flt is not None:
        agree = float(np.mean([a == b for a, b in zip(best, ref_pred)]))
    else:
        agree = None
    out = {"n": len(texts), "accuracy": round(acc, 6), "macro_f1": round(macro_f1(gold, pred), 6),
           "accuracy_argmax": round(acc_argmax, 6), "macro_f1_argmax": round(macro_f1(gold, best), 6),
           "min_score": run.min_score_milli / 1000, "min_score_named": run.min_score_named_milli / 1000,
           "agreement_with_float": None if agree is None else round(agree, 6)}
    if unknown:
        out["unknown_intents"] = unknown
    if values is not None and model.tags:
        out["value_slots"] = value_score.as_dict()
        out["value_slot_accuracy"] = out["value_slots"]["accuracy"]
    if entities:
        from ..registry.domains import ALL_DOMAINS
        out["sentences_with_names"] = with_names
        out["domain_rule"] = {"labels_with_domains": None if entities.label_masks is None else
                              sum(m != ALL_DOMAINS for m in entities.label_masks), "changed": moved}
        if score is not None:
            out["slot_accuracy"] = score.as_dict()["accuracy"]
            out["slots"] = score.as_dict()
    return out


def cmd_eval(args) -> int:
    from .slots import expected_slots, expected_values
    numbered = textio.read_jsonl_numbered(args.data, "--data", need=("text", "intent"))   # before any work
    model = open_model(args.model, progress=ui.show_progress())
    check_labels(numbered, model.labels, args.data)
    records = [obj for _, obj in numbered]
    texts, gold = [r["text"] for r in records], [str(r["intent"]) for r in records]
    ent = _entities(args, model)
    res = evaluate(model, args.engine, texts, gold, progress=ui.show_progress(), entities=ent,
                   expected=[expected_slots(r) for r in records] if ent else None,
                   values=[expected_values(r) for r in records], **_min_scores(args))
    if args.json:
        ui.emit_json(res)
    else:
        agree = "n/a (float model not available)" if res["agreement_with_float"] is None \
            else f"{res['agreement_with_float']:.4f}"
        named = "" if res["min_score_named"] == res["min_score"] else \
            f", {res['min_score_named']:.3f} with a registry name"
        line = (f"n={res['n']} accuracy={res['accuracy']:.4f} macro_f1={res['macro_f1']:.4f} (at min_score "
                f"{res['min_score']:.3f}{named}; without: accuracy={res['accuracy_argmax']:.4f} "
                f"macro_f1={res['macro_f1_argmax']:.4f}) agreement_with_float={agree}")
        if ent:
            sl = res["slots"]
            acc = "n/a" if sl["accuracy"] is None else f"{sl['accuracy']:.4f}"
            line += (f" slot_accuracy={acc} ({sl['correct']}/{sl['eligible']} sentences whose expected "
                     f"name/area/floor the registry knows)")
        vs = res.get("value_slots")
        if vs and vs["eligible"]:
            line += (f" value_slot_accuracy={vs['accuracy']:.4f} ({vs['correct']}/{vs['eligible']} sentences with "
                     f"the right intent and expected values)")
        if vs and vs["with_values"]:
            line += (f" values_end_to_end={vs['end_to_end']:.4f} ({vs['correct']}/{vs['with_values']} sentences with "
                     f"expected values: intent and every value right)")
        print(line)
    return 0


def register(subparsers) -> None:
    engine_help = {"ref": "ref: the Python integer reference (bit-exact with the device)",
                   "c": "c: the C library itself", "float": "float: the unquantized model",
                   "hf": "hf: Hugging Face's tokenizer"}

    def common(p, engines, default, json_help):
        p.add_argument("--model", required=True, metavar="M",
                       help="converted model folder, or a Hugging Face folder (converted on the fly)")
        p.add_argument("--engine", default=default, choices=engines,
                       help="; ".join(engine_help[e] for e in engines) + f" (default {default})")
        ui.add_output_options(p, json_help)

    def entities(p):
        p.add_argument("--entities", metavar="FILE", default=None,
                       help="your registry (YAML, or a *_home.json): the names it knows become [NAME]/[AREA]/[FLOOR] "
                            "before tokenizing, as on a device built with it, and are reported")
        p.add_argument("--max-slots", type=ui.int_range(0, 255), default=MAX_SLOTS, metavar="N",
                       help=f"names replaced per sentence with --entities (default {MAX_SLOTS}, the firmware's)")

    p = subparsers.add_parser("tokenize", help="token ids of texts")
    common(p, ["ref", "c", "hf"], "ref", 'one {"text", "ids"} a line (+ "masked", "slots" with --entities)')
    entities(p)
    p.add_argument("text", nargs="*", metavar="TEXT", help="texts, or - for one a line from stdin")
    p.set_defaults(func=cmd_tokenize)

    p = subparsers.add_parser("embed", help="the [CLS] vector of texts")
    common(p, ["ref", "c", "float"], "ref", 'one {"text", "cls"} a line (+ "cls_int8", "cls_scale" for ref and c)')
    p.add_argument("text", nargs="*", metavar="TEXT", help="texts, or - for one a line from stdin")
    p.set_defaults(func=cmd_embed)

    def min_score(p):
        p.add_argument("--min-score", type=ui.fraction, default=None, metavar="X",
                       help="score threshold in 0..1, compared in thousandths as on the device: a best label "
                            "under it answers none (default: the model's own min_score, training.json, as the "
                            "firmware; 0: the plain argmax). Without --min-score-named it is also the threshold "
                            "of sentences with a registry name")
        p.add_argument("--min-score-named", type=ui.fraction, default=None, metavar="X",
                       help="the threshold of a sentence in which --entities replaced a name, area or floor "
                            "(default: --min-score when given, else the model's own min_score_named, "
                            "training.json, as the firmware)")

    p = subparsers.add_parser("predict", help="intent and score of texts, answered as the firmware does")
    common(p, ["ref", "c", "float"], "ref", 'one {"text", "intent", "score", "tokens"} a line (+ "best", "slots"; '
                                            '"error": "invalid_utf8" where the device refuses the text)')
    entities(p)
    min_score(p)
    p.add_argument("text", nargs="*", metavar="TEXT", help="texts, or - for one a line from stdin")
    p.set_defaults(func=cmd_predict)

    p = subparsers.add_parser("eval", help="accuracy and macro-F1 on a labelled JSONL file (device answers and argmax)")
    common(p, ["ref", "c", "float"], "ref", 'one {"n", "accuracy", "macro_f1", "accuracy_argmax", ...} object')
    p.add_argument("--data", required=True, metavar="FILE.jsonl",
                   help="JSON lines with \"text\" and \"intent\" (every intent one of the model's labels, or none)")
    entities(p)
    min_score(p)
    p.set_defaults(func=cmd_eval)


def per_label_scores(gold: list[str], pred: list[str]) -> list[dict]:
    """Precision, recall, F1 and support of every gold label, in label order."""
    rows = []
    for lab in sorted(set(gold)):
        tp = sum(g == p == lab for g, p in zip(gold, pred))
        fp = sum(p == lab and g != lab for g, p in zip(gold, pred))
        fn = sum(g == lab and p != lab for g, p in zip(gold, pred))
        prec = tp / (tp + fp) if tp + fp else 0.0
        rec = tp / (tp + fn) if tp + fn else 0.0
        f1 = 2 * prec * rec / (prec + rec) if prec + rec else 0.0
        rows.append({"label": lab, "precision": prec, "recall": rec, "f1": f1, "support": tp + fn})
    return rows
