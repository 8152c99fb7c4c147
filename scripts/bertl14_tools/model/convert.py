"""`bertl14 convert`: a Hugging Face BERT folder -> a bertl14 model folder (C sources, model.bl14, manifest).

Steps: load (hf.py) -> calibration sentences -> prune heads (prune.py) -> trim vocabulary (vocab_trim.py)
-> quantize (quant.py) -> pack (model/blob.py) -> write through the jinja2 templates in templates/.
The output is a pure function of the input files and the options: no timestamps, no absolute paths, so
converting twice gives identical bytes.
"""
from __future__ import annotations

import argparse
import dataclasses
import filecmp
import hashlib
import json
import os
import re
import sys
from dataclasses import asdict, dataclass, field
from pathlib import Path

import numpy as np
from tqdm import tqdm

from . import hf
from ..errors import UserError
from ..textio import read_intent_table
from .floatmodel import FloatModel

FORMAT_NAME = "bertl14-model-folder"
TARGET_ARCHS = ("cortex-m7", "cortex-m4", "cortex-m33", "cortex-m55", "riscv32", "host")
MAX_CALIBRATION_SENTENCES = 256
GENERATED_CALIBRATION_SENTENCES = 64
TEMPLATES = Path(__file__).parent / "templates"


@dataclass
class ConvertOptions:
    max_seq_len: int = 32
    quantize: str = "int16"            # linear weights: int16 | int8 (--weights; CONFIG_BERTL14_WEIGHTS_*)
    embedding: str = "int8"            # word-embedding precision: int8 | int4
    prune_heads: int = 0               # heads removed per layer
    calibration: str | None = None     # FILE.jsonl; else <model>/calibration.jsonl; else generated
    vocab: str = "full"                # full | trim
    vocab_corpus: str | None = None    # FILE (jsonl or text) for --vocab trim
    act_scale: str = "per-token"       # per-token | per-tensor
    smoothing: str = "on"              # on | off
    target_arch: str = "cortex-m7"
    board: str | None = field(default=None, compare=False)   # check the fit against this board's memory
    progress: bool = field(default=True, compare=False)

    def public(self) -> dict:
        d = asdict(self)
        d.pop("progress")
        d.pop("board")
        for k in ("calibration", "vocab_corpus"):  # file names only: no machine-specific paths
            d[k] = Path(d[k]).name if d[k] else None
        return d


# ------------------------------------------------------------------------------------------------------
# inputs
# ------------------------------------------------------------------------------------------------------

def sha256_file(path: Path) -> str:
    h = hashlib.sha256()
    with open(path, "rb") as f:
        for chunk in iter(lambda: f.read(1 << 20), b""):
            h.update(chunk)
    return h.hexdigest()


def read_texts(path: Path, what: str) -> list[str]:
    """Sentences from a file: JSON lines with a "text" field (or a JSON string), or plain text lines."""
    from ..textio import read_text
    texts = []
    for n, line in enumerate(read_text(path, f"{what} file").splitlines(), 1):
        line = line.strip()
        if not line:
            continue
        if line[0] in "{\"":
            try:
                obj = json.loads(line)
            except ValueError as exc:
                raise UserError(f"{path}:{n}: not valid JSON ({exc})") from exc
            if isinstance(obj, dict):
                if not isinstance(obj.get("text"), str):
                    raise UserError(f"{path}:{n}: expected an object with a \"text\" string")
                obj = obj["text"]
            if not isinstance(obj, str):
                raise UserError(f"{path}:{n}: expected a string or an object with \"text\"")
            texts.append(obj)
        else:
            texts.append(line)
    if not texts:
        raise UserError(f"{what} file {path} has no sentences")
    return texts


def generated_calibration(vocab: list[str], n: int = GENERATED_CALIBRATION_SENTENCES) -> list[str]:
    """Deterministic pseudo-sentences of whole-word vocabulary pieces (when no calibration text ships)."""
    words = [p for p in vocab if p.isalpha() and len(p) >= 2 and not p.startswith("##")]
    if not words:
        words = [p for p in vocab if p and not (p.startswith("[") and p.endswith("]"))] or ["a"]
    rng = np.random.default_rng(1234)
    return [" ".join(words[i] for i in rng.integers(0, len(words), size=int(rng.integers(3, 13))))
            for _ in range(n)]


def training_threshold_milli(model_dir: Path, key: str) -> int | None:
    """training.json's score threshold `key` (0..1) in thousandths; None when the file or the key is absent."""
    path = model_dir / "training.json"
    if not path.is_file():
        return None
    value = json.loads(path.read_text(encoding="utf-8")).get(key)
    if value is None:
        return None
    try:
        ok = not isinstance(value, bool) and 0 <= float(value) <= 1
    except (TypeError, ValueError):
        ok = False
    if not ok:
        raise UserError(f"{path}: {key} {value!r} is outside 0..1: write a probability (0.8) or leave it out")
    return int(round(float(value) * 1000))


def model_min_score_milli(model_dir: Path) -> int:
    """The model's calibrated out-of-domain threshold (training.json `min_score`, 0..1) in thousandths;
    0 (accept every label) when the model ships none."""
    return training_threshold_milli(model_dir, "min_score") or 0


def model_min_score_named_milli(model_dir: Path) -> int:
    """The model's threshold for sentences in which the registry replaced a name, area or floor (training.json
    `min_score_named`, 0..1, chosen on its validation split) in thousandths; min_score's when it ships none (a
    model trained before the second threshold)."""
    named = training_threshold_milli(model_dir, "min_score_named")
    return model_min_score_milli(model_dir) if named is None else named


def model_name_placeholders(model_dir: Path) -> bool:
    """Whether the model was trained on sentences with the registry's placeholders ([NAME], [AREA], [FLOOR]):
    its training.json's `name_placeholders` (name_placeholders below); false for a model that ships no
    training.json. Written to manifest.json, where the firmware build reads it (cmake/registry.cmake)."""
    path = model_dir / "training.json"
    if not path.is_file():
        return False
    try:
        return name_placeholders(json.loads(path.read_text(encoding="utf-8")))
    except ValueError as exc:
        raise UserError(f"{path} is not valid JSON ({exc}): write it again with `bertl14 train --measure-only`") \
            from None


def name_placeholders(info: dict) -> bool:
    """Whether the model was trained on sentences with the registry's placeholders ([NAME], [AREA], [FLOOR]), from
    its training.json: the build compiles a registry in only for such a model (cmake/registry.cmake)."""
    if "name_placeholders" in info:
        return bool(info["name_placeholders"])
    training = info.get("training", {})
    if "name_placeholders" in training:
        return bool(training["name_placeholders"])
    return bool(training.get("dataset", {}).get("mask_names"))


def calibration_texts(model_dir: Path, opts: ConvertOptions, vocab: list[str]) -> tuple[list[str], str]:
    if opts.calibration:
        texts, source = read_texts(Path(opts.calibration), "--calibration"), Path(opts.calibration).name
    elif (model_dir / "calibration.jsonl").is_file():
        texts, source = read_texts(model_dir / "calibration.jsonl", "calibration"), "calibration.jsonl (model)"
    else:
        texts, source = generated_calibration(vocab), "generated from the vocabulary (no calibration.jsonl)"
    return texts[:MAX_CALIBRATION_SENTENCES], source


def validate(fm_max_position: int | None, opts: ConvertOptions) -> None:
    if not 8 <= opts.max_seq_len <= 512:
        raise UserError(f"--max-seq-len {opts.max_seq_len}: must be within 8..512")
    if fm_max_position is not None and opts.max_seq_len > fm_max_position:
        raise UserError(f"--max-seq-len {opts.max_seq_len} exceeds the model's {fm_max_position} positions")
    if opts.quantize not in ("int16", "int8"):
        raise UserError(f"--weights {opts.quantize}: use int16 or int8")
    if opts.embedding not in ("int8", "int4"):
        raise UserError(f"--embedding {opts.embedding}: use int8 or int4")
    if opts.prune_heads < 0:
        raise UserError(f"--prune-heads {opts.prune_heads}: must be 0 or more")
    if opts.vocab not in ("full", "trim"):
        raise UserError(f"--vocab {opts.vocab}: use full or trim")
    if opts.vocab == "trim" and not opts.vocab_corpus:
        raise UserError("--vocab trim needs --vocab-corpus FILE (the domain sentences to keep pieces for)")
    if opts.act_scale not in ("per-token", "per-tensor"):
        raise UserError(f"--act-scale {opts.act_scale}: use per-token or per-tensor")
    if opts.smoothing not in ("on", "off"):
        raise UserError(f"--smoothing {opts.smoothing}: use on or off")
    if opts.target_arch not in TARGET_ARCHS:
        raise UserError(f"--target-arch {opts.target_arch}: use one of {', '.join(TARGET_ARCHS)}")


# ------------------------------------------------------------------------------------------------------
# the other helpers' modules, each used in one place
# ------------------------------------------------------------------------------------------------------

def quantize(fm: FloatModel, calib_ids: list[list[int]], opts: ConvertOptions):
    from . import quant
    qopts = quant.QuantOptions(**quant_option_values(opts))
    return quant.quantize(fm, calib_ids, qopts, progress=opts.progress)


def quant_option_values(opts: ConvertOptions) -> dict:
    """Our CLI spelling mapped onto QuantOptions (docs/numerics.md section 13)."""
    # the position table keeps max_seq_len rows (docs/numerics.md section 11)
    return {"act_scale": opts.act_scale.replace("-", "_"), "smoothing": opts.smoothing == "on",
            "embedding": opts.embedding, "max_seq_len": opts.max_seq_len, "weights": opts.quantize}


def make_tokenizer(fm: FloatModel):
    """The model's own WordPiece (the TOKENIZER helper's pure-Python BertTokenizer twin)."""
    from .tokenizer import make_tokenizer
    return make_tokenizer(fm.vocab, fm.do_lower_case, fm.strip_accents, fm.tokenize_chinese_chars)


# ------------------------------------------------------------------------------------------------------
# outputs
# ------------------------------------------------------------------------------------------------------

def _c_blocks(values: np.ndarray, fmt: str, per_line: int = 16, lines_per_block: int = 1024,
              desc: str = "", progress: bool = True):
    """The C initializer text of `values`, a block of lines at a time (fast enough for tens of MB)."""
    step = per_line * lines_per_block
    total = len(values)
    bar = tqdm(total=total, desc=desc, unit="val", unit_scale=True, disable=not progress or total < 1 << 20,
               leave=False)
    for start in range(0, total, step):
        chunk = values[start:start + step].tolist()
        strs = list(map(str, chunk)) if fmt == "d" else [f"0x{v:08x}u" for v in chunk]
        lines = ["    " + ", ".join(strs[i:i + per_line]) + "," for i in range(0, len(strs), per_line)]
        bar.update(len(chunk))
        yield "\n".join(lines) + "\n"
    bar.close()


def _replace_if_changed(tmp: Path, out: Path) -> None:
    """Keep an identical existing file untouched (its mtime too: the firmware build does not recompile)."""
    if out.is_file() and out.stat().st_size == tmp.stat().st_size and filecmp.cmp(tmp, out, shallow=False):
        tmp.unlink()
    else:
        os.replace(tmp, out)


def _write_bytes(out: Path, data: bytes) -> None:
    if out.is_file() and out.stat().st_size == len(data) and out.read_bytes() == data:
        return
    tmp = out.with_name(out.name + ".tmp")
    tmp.write_bytes(data)
    os.replace(tmp, out)


def _render(env, name: str, out: Path, **ctx) -> None:
    tmp = out.with_name(out.name + ".tmp")
    with open(tmp, "w", encoding="utf-8", newline="\n") as f:
        for piece in env.get_template(name).generate(**ctx):
            f.write(piece)
    _replace_if_changed(tmp, out)


def _jinja_env():
    import jinja2
    return jinja2.Environment(loader=jinja2.FileSystemLoader(str(TEMPLATES)), keep_trailing_newline=True,
                              undefined=jinja2.StrictUndefined, autoescape=False)


_NUMBER_LIST = re.compile(r"\[\s*(-?[\d.e+-]+(?:,\s*-?[\d.e+-]+)*)\s*\]")


def _dump_json(path: Path, obj) -> None:
    """Indented JSON with lists of numbers kept on one line (heads_kept, kept_ids, importance)."""
    text = json.dumps(obj, indent=2, ensure_ascii=False)
    text = _NUMBER_LIST.sub(lambda m: "[" + ", ".join(x.strip() for x in m.group(1).split(",")) + "]", text)
    _write_bytes(path, (text + "\n").encode("utf-8"))


class _Steps:
    """One progress line for the whole conversion, naming the step under way (some take tens of seconds)."""

    def __init__(self, opts: ConvertOptions, total: int):
        self.bar = tqdm(total=total, disable=not opts.progress, leave=False,
                        bar_format="convert [{n}/{total}] {desc} ({elapsed})")
        self.started = False

    def __call__(self, name: str) -> None:
        if self.started:
            self.bar.update(1)
        self.started = True
        self.bar.set_description_str(name)

    def close(self) -> None:
        self.bar.close()


def convert(model_dir: str | os.PathLike, out_dir: str | os.PathLike, opts: ConvertOptions) -> dict:
    """Convert and write the model folder; returns the manifest."""
    model_dir, out_dir = Path(model_dir), Path(out_dir)
    validate(None, opts)
    if (model_dir / "model.bl14").is_file() and not (model_dir / "config.json").is_file():
        return _from_converted(model_dir, out_dir, opts)
    step = _Steps(opts, 5 + bool(opts.prune_heads) + (opts.vocab == "trim"))
    try:
        return _convert(model_dir, out_dir, opts, step)
    finally:
        step.close()


SHAPE_OPTIONS = ("max_seq_len", "prune_heads", "embedding", "quantize")


def _from_converted(src: Path, out_dir: Path, opts: ConvertOptions) -> dict:
    """--model names an already converted folder (CONFIG_BERTL14_MODEL_DIR may): copy it when it was made
    with the requested max_seq_len / prune_heads / embedding / weights, else convert its Hugging Face source
    again."""
    mpath = src / "manifest.json"
    if not mpath.is_file():
        raise UserError(f"{src}: model.bl14 without manifest.json; convert the Hugging Face folder again")
    man = json.loads(mpath.read_text(encoding="utf-8"))
    have = {k: man["options"].get(k, "int16" if k == "quantize" else None) for k in SHAPE_OPTIONS}
    want = {k: getattr(opts, k) for k in SHAPE_OPTIONS}
    if have == want and not _lacks_source_domains(src, man) and not _lacks_named_threshold(src, man):
        if opts.board:
            from . import board_fit
            board_fit.check(opts.board, man["flash_bytes"]["total"], man["work_buffer_bytes"])
        if src.resolve() != out_dir.resolve():
            out_dir.mkdir(parents=True, exist_ok=True)
            for name in OUTPUT_FILES[:-1]:
                if (src / name).is_file():
                    _write_bytes(out_dir / name, (src / name).read_bytes())
                elif name in OPTIONAL_FILES:
                    (out_dir / name).unlink(missing_ok=True)
            rel = man.get("sources", {}).get("path")
            if rel:  # the source path is relative to the folder: re-anchor it
                man["sources"]["path"] = os.path.relpath((src / rel).resolve(), out_dir.resolve())
            _dump_json(out_dir / "manifest.json", man)
        (out_dir / "manifest.json").touch()
        return man
    source = manifest_source(src, man)
    if source is not None and (source / "config.json").is_file():
        keep = {k: man["options"][k] for k in ("act_scale", "smoothing", "vocab")}
        if keep["vocab"] == "trim":
            raise UserError(f"{src} was converted with a trimmed vocabulary; convert its source {source} "
                            "with --vocab trim --vocab-corpus FILE and the options you want")
        return convert(source, out_dir, dataclasses.replace(opts, **keep))
    diff = ", ".join(f"{'weights' if k == 'quantize' else k} {have[k]} (asked {want[k]})"
                     for k in SHAPE_OPTIONS if have[k] != want[k])
    raise UserError(f"{src} is a converted model with {diff} and its Hugging Face source is not at hand; "
                    "convert the Hugging Face folder with the options you need")


def manifest_source(folder: Path, manifest: dict) -> Path | None:
    """The folder a converted model was converted from, as its manifest.json names it (relative to `folder`), or
    None; it may have moved or gone since."""
    rel = (manifest.get("sources") or {}).get("path")
    return Path(folder) / rel if rel else None


def _lacks_named_threshold(src: Path, man: dict) -> bool:
    """A folder converted before the converter carried min_score_named, whose source is at hand: converted again,
    so that the firmware's BERTL14_MIN_SCORE_NAMED_MILLI is the source's training.json, as the host tools read it."""
    source = manifest_source(src, man)
    return "min_score_named_milli" not in man and source is not None and (source / "config.json").is_file()


def _lacks_source_domains(src: Path, man: dict) -> bool:
    """A folder converted before the converter carried intent_domains.json, whose source (at hand) has one: a copy
    would lose the domain rule, so it is converted again from that source."""
    source = manifest_source(src, man)
    return (not (src / hf.INTENT_DOMAINS_FILE).is_file() and source is not None
            and (source / "config.json").is_file() and (source / hf.INTENT_DOMAINS_FILE).is_file())


OUTPUT_FILES = ("model.bl14", "bertl14_weights.c", "bertl14_vocab.c", "bertl14_config.h", "labels.json",
                "vocab.txt", "tokenizer_config.json", "slots.json", "bertl14_slot_table.c", "intent_slots.json",
                "bertl14_label_slots.c", hf.INTENT_DOMAINS_FILE, "manifest.json")
# written only when the source model has them (a stale copy from an earlier conversion is removed)
OPTIONAL_FILES = ("intent_slots.json", hf.INTENT_DOMAINS_FILE)


def model_intent_slots(model_dir: Path | None) -> dict | None:
    """The model folder's intent_slots.json (intent -> the slots its answers carry), or None."""
    return read_intent_table(model_dir, "intent_slots.json", "slot")


def model_intent_domains(model_dir: Path | None) -> dict | None:
    """The model folder's intent_domains.json (intent -> the device domains its {name} accepts: the registry's
    domain rule, registry/domains.py), or None."""
    return read_intent_table(model_dir, hf.INTENT_DOMAINS_FILE, "domain")


def render_label_slots_c(labels: list[str], table: dict | None) -> str:
    """bertl14_label_slots[]: per label its slot names (NULL-terminated), NULL where the model has no table."""
    lines = ["/* Generated by bertl14 convert from intent_slots.json: the slots each label's answer carries"
             " (app/src/intent.c, tagging.fit_to_intent). Do not edit. */", "#include <stddef.h>", ""]
    refs = []
    for i, label in enumerate(labels):
        slots = None if table is None else table.get(label, [])
        if slots is None:
            refs.append("NULL")
            continue
        names = "".join(json.dumps(s, ensure_ascii=False) + ", " for s in slots)
        lines.append(f"static const char *const label_{i}[] = {{{names}NULL}}; /* {label} */")
        refs.append(f"label_{i}")
    lines.append("")
    lines.append(f"const char *const *const bertl14_label_slots[{max(1, len(labels))}] = {{"
                 + ", ".join(refs or ["NULL"]) + "};")
    return "\n".join(lines) + "\n"


def model_slot_spec(model_dir: Path | None) -> dict:
    """The value table spec of a model folder: its slots.json (written by `bertl14 train` from the slots its
    tagger knows), else Home Assistant's slots (slot_values.default_spec)."""
    from .slot_values import default_spec
    path = model_dir / "slots.json" if model_dir else None
    if path is None or not path.is_file():
        return default_spec("en")
    try:
        spec = json.loads(path.read_text(encoding="utf-8"))
    except (OSError, UnicodeDecodeError, ValueError) as exc:
        raise UserError(f"{path}: not a slots JSON file ({exc}); write it again with `bertl14 train`") from exc
    return spec


def _convert(model_dir: Path, out_dir: Path, opts: ConvertOptions, step) -> dict:
    step("load")
    fm = hf.load_hf(model_dir)
    validate(fm.max_position, opts)
    if opts.prune_heads >= fm.num_heads:
        raise UserError(f"--prune-heads {opts.prune_heads} would remove every head "
                        f"(the model has {fm.num_heads} per layer); use at most {fm.num_heads - 1}")
    inputs = {p.name: sha256_file(p) for p in hf.input_files(model_dir)}

    texts, calib_source = calibration_texts(model_dir, opts, fm.vocab)
    tok = make_tokenizer(fm)
    calib_ids = [tok.encode(t, opts.max_seq_len) for t in texts]

    importance = None
    if opts.prune_heads:
        from . import prune
        step("head importance")
        importance = prune.head_importance(fm, calib_ids, progress=opts.progress)
        fm = prune.prune_heads(fm, opts.prune_heads, importance)

    trim_report = None
    if opts.vocab == "trim":
        from . import vocab_trim
        step("vocabulary trim")
        corpus = read_texts(Path(opts.vocab_corpus), "--vocab-corpus")
        inputs[Path(opts.vocab_corpus).name] = sha256_file(Path(opts.vocab_corpus))
        fm, trim_report = vocab_trim.trim_vocab(fm, corpus, lambda t: tok.encode(t, 1 << 30),
                                                progress=opts.progress)
        tok = make_tokenizer(fm)
        calib_ids = [tok.encode(t, opts.max_seq_len) for t in texts]
    if opts.calibration:
        inputs[Path(opts.calibration).name] = sha256_file(Path(opts.calibration))

    step("quantize")
    qm = quantize(fm, calib_ids, opts)
    return write_model_folder(out_dir, fm, qm, opts, inputs=inputs, calib_source=calib_source,
                              calib_count=len(calib_ids), trim_report=trim_report,
                              importance=importance, model_dir=model_dir, step=step)


def write_model_folder(out_dir: Path, fm: FloatModel, qm, opts: ConvertOptions, *, inputs: dict,
                       calib_source: str, calib_count: int, trim_report=None, importance=None,
                       model_dir: Path | None = None, step=lambda name: None) -> dict:
    from . import blob as model_format
    from . import vocab_blob, workbuf

    step("pack weights")
    blob = model_format.pack_weights(qm)  # a multiple of 4 bytes (docs/model-format.md)
    weights = np.frombuffer(blob, dtype="<i2")
    step("vocabulary section")
    vocab_words = np.asarray(vocab_blob.build_vocab_section(vocab_ids(fm.vocab), fm.do_lower_case,
                                                            fm.strip_accents, fm.tokenize_chinese_chars),
                             dtype=np.uint32)
    vocab_bytes = vocab_words.astype("<u4").tobytes()
    work_bytes = int(workbuf.work_buffer_size(qm, opts.max_seq_len))
    if opts.board:   # before the C sources: a model that cannot fit stops here, not at the link
        from . import board_fit
        board_fit.check(opts.board, len(blob) + len(vocab_bytes), work_bytes,
                        f" (weights {len(blob):,} + vocabulary {len(vocab_bytes):,})")

    step("write C sources")
    out_dir.mkdir(parents=True, exist_ok=True)
    env = _jinja_env()
    heads_kept = len(fm.layers[0].heads_kept)
    _render(env, "bertl14_weights.c.j2", out_dir / "bertl14_weights.c", model_name=fm.name,
            n_values=len(weights), n_bytes=len(blob), sha256=hashlib.sha256(blob).hexdigest(),
            rows=_c_blocks(weights, "d", desc="bertl14_weights.c", progress=opts.progress))
    _render(env, "bertl14_vocab.c.j2", out_dir / "bertl14_vocab.c", model_name=fm.name,
            vocab_size=fm.vocab_size, n_values=len(vocab_words), n_bytes=len(vocab_bytes),
            sha256=hashlib.sha256(vocab_bytes).hexdigest(),
            rows=_c_blocks(vocab_words, "x", desc="bertl14_vocab.c", progress=opts.progress))
    min_score_milli = model_min_score_milli(model_dir)
    min_score_named_milli = model_min_score_named_milli(model_dir)
    _render(env, "bertl14_config.h.j2", out_dir / "bertl14_config.h", model_name=fm.name,
            min_score_milli=min_score_milli, min_score_named_milli=min_score_named_milli,
            options_line=" ".join(f"{k}={v}" for k, v in opts.public().items()),
            num_layers=fm.num_layers, hidden=fm.hidden, num_heads=fm.num_heads, heads_kept=heads_kept,
            head_dim=fm.head_dim, intermediate=fm.intermediate, vocab_size=fm.vocab_size,
            max_position=qm.max_position, num_labels=len(fm.labels) if fm.has_classifier else 0,
            num_tags=qm.num_tags, max_seq_len=opts.max_seq_len, prune_heads=fm.num_heads - heads_kept,
            embedding_macro="BERTL14_EMBEDDING_INT4" if opts.embedding == "int4" else "BERTL14_EMBEDDING_INT8",
            embedding_bits=4 if opts.embedding == "int4" else 8,
            act_per_tensor=int(opts.act_scale == "per-tensor"), smoothing=int(opts.smoothing == "on"),
            weights_int8=opts.quantize == "int8",
            work_buffer_size=work_bytes, weights_bytes=len(blob), weights_count=len(weights),
            vocab_bytes=len(vocab_bytes), vocab_count=len(vocab_words))
    _dump_json(out_dir / "labels.json", list(fm.labels))
    # how the device turns a tagged span into a value (docs/slots.md); always written, linked only when used
    from . import slot_values
    spec = model_slot_spec(model_dir)
    slot_words = slot_values.build_value_table(spec)
    _dump_json(out_dir / "slots.json", spec)
    _write_bytes(out_dir / "bertl14_slot_table.c",
                 slot_values.render_c(slot_words, source=f"{fm.name}'s slots.json").encode("utf-8"))
    label_slots = model_intent_slots(model_dir)
    if label_slots is not None:
        _dump_json(out_dir / "intent_slots.json", label_slots)
    else:
        (out_dir / "intent_slots.json").unlink(missing_ok=True)
    # the converted folder carries the domain rule itself: it must not depend on the source folder staying put
    domains = model_intent_domains(model_dir)
    if domains is not None:
        _dump_json(out_dir / hf.INTENT_DOMAINS_FILE, domains)
    else:
        (out_dir / hf.INTENT_DOMAINS_FILE).unlink(missing_ok=True)
    labels_for_slots = list(fm.labels) if fm.has_classifier else []
    _write_bytes(out_dir / "bertl14_label_slots.c", render_label_slots_c(labels_for_slots, label_slots).encode("utf-8"))
    _write_bytes(out_dir / "vocab.txt", "".join(p + "\n" for p in fm.vocab).encode("utf-8"))
    tokenizer = {"do_lower_case": fm.do_lower_case, "strip_accents": fm.strip_accents,
                 "tokenize_chinese_chars": fm.tokenize_chinese_chars}
    _dump_json(out_dir / "tokenizer_config.json", dict(tokenizer, tokenizer_class="BertTokenizer"))
    tmp = out_dir / "model.bl14.tmp"
    model_format.write_model_file(tmp, blob, vocab_bytes)
    _replace_if_changed(tmp, out_dir / "model.bl14")

    groups = weight_groups(blob)
    manifest = {
        "format": FORMAT_NAME,
        "model": fm.name,
        "dims": {"layers": fm.num_layers, "hidden": fm.hidden, "heads": fm.num_heads,
                 "heads_kept": heads_kept, "head_dim": fm.head_dim, "intermediate": fm.intermediate,
                 "vocab_size": fm.vocab_size, "max_position": qm.max_position,
                 "source_max_position": fm.max_position,
                 "num_labels": len(fm.labels) if fm.has_classifier else 0,
                 **({"num_tags": qm.num_tags} if qm.num_tags else {})},   # models without the head: as before
        "options": opts.public(),
        "tokenizer": tokenizer,
        "flash_bytes": {"weights": len(blob), "weights_by_group": groups, "vocabulary": len(vocab_bytes),
                        "labels": groups.get("labels", 0), "total": len(blob) + len(vocab_bytes),
                        **({"slot_table": 4 * len(slot_words)} if qm.num_tags else {})},
        "work_buffer_bytes": work_bytes,
        "max_seq_len": opts.max_seq_len,
        "min_score_milli": min_score_milli,
        "min_score_named_milli": min_score_named_milli,
        "name_placeholders": model_name_placeholders(model_dir) if model_dir else False,
        "heads_kept": [list(map(int, layer.heads_kept)) for layer in fm.layers],
        "calibration": {"source": calib_source, "sentences": calib_count},
        "sources": {"files": inputs,
                    "path": os.path.relpath(model_dir.resolve(), out_dir.resolve()) if model_dir else None},
        "outputs": {name: sha256_file(out_dir / name) for name in OUTPUT_FILES
                    if name != "manifest.json" and (out_dir / name).is_file()},
    }
    if importance is not None:
        manifest["head_importance"] = [[round(float(x), 6) for x in imp] for imp in importance]
    if trim_report is not None:
        manifest["vocab_trim"] = trim_report.as_dict()
        word_rows = groups.get("word_embeddings")
        if word_rows:
            per_row = word_rows / max(1, fm.vocab_size)
            manifest["vocab_trim"]["flash_saved_bytes"] = {
                "word_embeddings": int(round(per_row * manifest["vocab_trim"]["rows_removed"])),
            }
        full_vocab = len(_full_vocab_section(vocab_blob, model_dir, fm)) * 4 if model_dir else None
        if full_vocab is not None:
            saved = manifest["vocab_trim"].setdefault("flash_saved_bytes", {})
            saved["vocabulary"] = full_vocab - len(vocab_bytes)
        manifest["vocab_trim"]["kept_ids"] = trim_report.kept_ids
    _dump_json(out_dir / "manifest.json", manifest)
    (out_dir / "manifest.json").touch()  # the build's stamp: newer than .config after every run
    return manifest


def vocab_ids(vocab: list[str]) -> dict[str, int]:
    """piece -> id; a duplicated line maps to its last id, as BertTokenizer's load_vocab does."""
    return {piece: i for i, piece in enumerate(vocab)}


def _full_vocab_section(vocab_blob, model_dir: Path, fm: FloatModel) -> list[int]:
    return vocab_blob.build_vocab_section(vocab_ids(hf.read_vocab(model_dir)), fm.do_lower_case,
                                          fm.strip_accents, fm.tokenize_chinese_chars)


GLOBAL_SECTIONS = ["word_embeddings", "word_embeddings", "position_embeddings", "position_embeddings",
                   "embedding_layernorm", "embedding_layernorm", "embedding_layernorm"]
LAYER_GROUPS = (["layer_params"] + ["attention_qkv"] * 12 + ["attention_output"] * 4 + ["ffn_up"] * 4
                + ["ffn_down"] * 4 + ["layernorm"] * 4 + ["smoothing"] * 3)
TAIL_GROUPS = ["pooler"] * 4 + ["classifier"] * 4 + ["labels"]
TAGGER_GROUPS = ["token_classifier"] * 4 + ["tags"]


def weight_groups(blob: bytes) -> dict:
    """Flash bytes of the weights blob by tensor group, read from its section table (docs/model-format.md);
    each section counts with its padding and "header" with the table and the checksum word, so the groups add up
    to the blob's length."""
    head = np.frombuffer(blob[:64], dtype="<u4")
    n_layers, n_sections, table, n_tags = int(head[2]), int(head[13]), int(head[14]), int(head[15])
    names = GLOBAL_SECTIONS + LAYER_GROUPS * n_layers + TAIL_GROUPS + (TAGGER_GROUPS if n_tags else [])
    if len(names) != n_sections:
        raise UserError(f"weights blob has {n_sections} sections, expected {len(names)}: converter and "
                        "model_format disagree on docs/model-format.md")
    entries = np.frombuffer(blob[table:table + 8 * n_sections], dtype="<u4").reshape(-1, 2)
    groups = {"header": int(table + 8 * n_sections) + 4}          # + the checksum word that ends the blob
    ends = [int(o) for o, _ in entries[1:]] + [len(blob) - 4]
    for name, (off, _size), end in zip(names, entries, ends):
        groups[name] = groups.get(name, 0) + (end - int(off))
    return groups


# ------------------------------------------------------------------------------------------------------
# CLI
# ------------------------------------------------------------------------------------------------------

def add_convert_arguments(p: argparse.ArgumentParser) -> None:
    d = ConvertOptions()
    from .. import ui
    p.add_argument("--max-seq-len", type=ui.int_range(8, 512), default=d.max_seq_len,
                   help=f"longest input incl. [CLS]/[SEP], 8..512 (default {d.max_seq_len})")
    p.add_argument("--weights", "--quantize", dest="quantize", default=d.quantize, choices=["int16", "int8"],
                   help="linear-layer weight precision: int16, or int8 with one scale per output channel (about half "
                        "the flash; the C library must be built with the same CONFIG_BERTL14_WEIGHTS_*; default int16)")
    p.add_argument("--embedding", default=d.embedding, choices=["int8", "int4"],
                   help="word-embedding precision (default int8)")
    p.add_argument("--prune-heads", type=ui.non_negative_int, default=d.prune_heads, metavar="N",
                   help="remove the N least important attention heads of every layer (default 0)")
    p.add_argument("--calibration", metavar="FILE.jsonl",
                   help="calibration sentences (default: the model's calibration.jsonl, else generated)")
    p.add_argument("--vocab", default=d.vocab, choices=["full", "trim"], help="keep the whole vocabulary "
                   "or only the pieces --vocab-corpus uses (default full)")
    p.add_argument("--vocab-corpus", metavar="FILE", help="domain sentences for --vocab trim")
    p.add_argument("--act-scale", default=d.act_scale, choices=["per-token", "per-tensor"],
                   help="INT8 activation scale granularity (default per-token)")
    p.add_argument("--smoothing", default=d.smoothing, choices=["on", "off"],
                   help="per-channel smoothing folded into the weights (default on)")
    p.add_argument("--target-arch", default=d.target_arch, choices=list(TARGET_ARCHS),
                   help="target core (recorded; the weights are the same for all)")
    p.add_argument("--board", metavar="BOARD",
                   help="fail, with the numbers, when the model's data or work buffer cannot fit this board's flash "
                        "or RAM (board.yml; `west boards`); without it, a warning when it fits no board")
    ui.add_output_options(p, 'print the result as one JSON object ({"out", "flash_bytes", "work_buffer_bytes", '
                             '"max_seq_len", ...}) instead of the summary line')
    p.add_argument("--no-progress", dest="quiet", action="store_true", help=argparse.SUPPRESS)  # older name of -q


def options_from_args(args) -> ConvertOptions:
    return ConvertOptions(max_seq_len=args.max_seq_len, quantize=args.quantize, embedding=args.embedding,
                          prune_heads=args.prune_heads, calibration=args.calibration, vocab=args.vocab,
                          vocab_corpus=args.vocab_corpus, act_scale=args.act_scale, smoothing=args.smoothing,
                          target_arch=args.target_arch, board=args.board,
                          progress=not args.quiet and sys.stderr.isatty())  # no bars in logs


def summary_line(out: Path, manifest: dict) -> str:
    fb = manifest["flash_bytes"]
    return (f"wrote {out}: flash {fb['total']} bytes (weights {fb['weights']}, vocabulary {fb['vocabulary']}), "
            f"work buffer {manifest['work_buffer_bytes']} bytes at max_seq_len {manifest['max_seq_len']}")


def run(args) -> int:
    from . import board_fit
    if args.board:
        board_fit.needs(args.board, 0, 0)    # an unknown board is an error before any work
    manifest = convert(args.model, args.out, options_from_args(args))
    print_result(args, manifest)
    return 0


def board_fit_result(args, manifest: dict) -> tuple[list[dict] | None, str | None]:
    """(the --board fit rows, a warning when the model fits no board)."""
    from . import board_fit
    flash, work = manifest["flash_bytes"]["total"], manifest["work_buffer_bytes"]
    if args.board:
        return board_fit.needs(args.board, flash, work), None
    return None, board_fit.no_board_warning(flash, work)


def print_result(args, manifest: dict) -> None:
    """The summary line, or with --json one object."""
    fit, warning = board_fit_result(args, manifest)
    if warning:
        print(f"bertl14 convert: warning: {warning}", file=sys.stderr)
    if args.json:
        from ..ui import emit_json
        emit_json({"out": str(args.out), "model": manifest.get("model"), "flash_bytes": manifest["flash_bytes"],
                   "work_buffer_bytes": manifest["work_buffer_bytes"], "max_seq_len": manifest["max_seq_len"],
                   "min_score_milli": manifest.get("min_score_milli"),
                   "min_score_named_milli": manifest.get("min_score_named_milli"),
                   "heads_kept": manifest.get("heads_kept"),
                   **({"board": args.board, "board_fit": fit} if args.board else {})})
    else:
        print(summary_line(Path(args.out), manifest))
        if fit:
            from .board_fit import describe
            print(f"fits {args.board}: {describe(fit)} (the firmware's code and data come on top)")
        elif args.board:
            print(f"{args.board} has no memory table (board.yml): nothing to check")


def register(subparsers) -> None:
    p = subparsers.add_parser("convert", help="convert a Hugging Face BERT folder into a bertl14 model folder",
                              description=__doc__.splitlines()[0])
    p.add_argument("--model", required=True, metavar="DIR",
                   help="Hugging Face BERT folder, or a converted folder (copied when made with the same "
                        "options, else converted again from its source)")
    p.add_argument("--out", required=True, metavar="DIR", help="output model folder")
    add_convert_arguments(p)
    p.set_defaults(func=run)
