"""Open a model for the host tools: a converted bertl14 folder (has model.bl14), or a Hugging Face folder,
converted on the fly with the default options into a cache directory keyed by the content of its files.

`open_model(path)` returns a `Model`: the QuantModel (integer engines), the FloatModel when the source is
at hand (the `float` engine), the tokenizer, the labels and the manifest.
"""
from __future__ import annotations

import hashlib
import json
import os
import shutil
import tempfile
from dataclasses import dataclass, field
from functools import cached_property
from pathlib import Path

from . import hf
from ..errors import UserError
from .floatmodel import FloatModel
from .tokenizer import Tokenizer, make_tokenizer

CACHE_ENV = "BERTL14_CACHE"


@dataclass
class Model:
    path: Path                   # the converted folder
    manifest: dict
    source_dir: Path | None = None   # the Hugging Face folder, when known
    _fm: FloatModel | None = field(default=None, repr=False)

    @property
    def name(self) -> str:
        return self.manifest["model"]

    @property
    def max_seq_len(self) -> int:
        return int(self.manifest["max_seq_len"])

    @cached_property
    def labels(self) -> list[str]:
        return json.loads((self.path / "labels.json").read_text(encoding="utf-8"))

    @property
    def tags(self) -> list[str]:
        """Tag names of the token classifier (empty without one): they live in the weights blob."""
        return list(self.qm.tags)

    @cached_property
    def vocab(self) -> list[str]:
        return hf.read_vocab(self.path)

    @property
    def vocab_path(self) -> Path:
        return self.path / "vocab.txt"

    @cached_property
    def tokenizer(self) -> Tokenizer:
        t = self.manifest["tokenizer"]
        return make_tokenizer(self.vocab, t["do_lower_case"], t["strip_accents"], t["tokenize_chinese_chars"])

    def encode(self, text: str) -> list[int]:
        return self.tokenizer.encode(text, self.max_seq_len)

    @cached_property
    def model_bytes(self) -> bytes:
        return (self.path / "model.bl14").read_bytes()

    @cached_property
    def qm(self):
        """The QuantModel, read back from model.bl14 (what the C library runs)."""
        from .blob import read_weights
        return read_weights(read_model_parts(self.path / "model.bl14")[0])

    @property
    def has_float(self) -> bool:
        return self._fm is not None or self._find_source() is not None

    def _find_source(self) -> Path | None:
        if self.source_dir is not None:
            return self.source_dir
        from .convert import manifest_source
        cand = manifest_source(self.path, self.manifest)
        if cand is None:
            return None
        cand = cand.resolve()
        if not (cand / "config.json").is_file():
            return None
        files = self.manifest["sources"]["files"]
        for p in hf.input_files(cand):
            if p.name in files and convert_sha(p) != files[p.name]:
                return None  # the source changed since conversion: its float model is not this model's
        return cand

    @property
    def fm(self) -> FloatModel:
        """The float model this folder was converted from, pruned and trimmed the same way."""
        if self._fm is None:
            src = self._find_source()
            if src is None:
                raise UserError(f"{self.path}: the float model is not available (its Hugging Face source "
                                f"folder, {self.manifest.get('sources', {}).get('path')!r} relative to it, is "
                                "missing or changed); pass the Hugging Face folder as --model instead")
            self._fm = float_model_as_converted(hf.load_hf(src), self.manifest)
        return self._fm


def read_model_parts(path) -> tuple[bytes, list[int]]:
    """(weights blob, vocabulary section words) of a model.bl14 (the file checked by model_format, the vocabulary
    section as bertl14_init checks it; the weights are checked where they are read: blob.read_weights)."""
    from .blob import read_model_file
    from .vocab_blob import check_section
    r = read_model_file(path)
    weights, words = (r.weights, r.vocab_words) if hasattr(r, "weights") else r
    words = [int(w) for w in words]
    check_section(words)
    return bytes(weights), words


def convert_sha(path: Path) -> str:
    from .convert import sha256_file
    return sha256_file(path)


def float_model_as_converted(fm: FloatModel, manifest: dict) -> FloatModel:
    """Apply a manifest's head pruning and vocabulary trimming to the freshly loaded source model."""
    from .prune import keep_heads
    from .vocab_trim import keep_ids
    if any(len(h) != fm.num_heads for h in manifest["heads_kept"]):
        fm = keep_heads(fm, manifest["heads_kept"])
    trim = manifest.get("vocab_trim")
    if trim:
        fm = keep_ids(fm, trim["kept_ids"])
    return fm


def cache_root() -> Path:
    if os.environ.get(CACHE_ENV):
        return Path(os.environ[CACHE_ENV])
    base = Path(os.environ.get("XDG_CACHE_HOME") or Path.home() / ".cache")
    return base / "bertl14"


def cache_key(model_dir: Path, opts) -> str:
    """Content hash of the inputs, the options and the converter's own code (a new converter re-converts)."""
    from .convert import sha256_file
    h = hashlib.sha256()
    for p in hf.input_files(model_dir):
        h.update(p.name.encode() + b"\0" + sha256_file(p).encode() + b"\0")
    h.update(json.dumps(opts.public(), sort_keys=True).encode())
    pkg = Path(__file__).parent
    for name in ("hf.py", "convert.py", "prune.py", "vocab_trim.py", "quant.py", "blob.py",
                 "vocab_blob.py", "workbuf.py"):
        if (pkg / name).is_file():
            h.update(hashlib.sha256((pkg / name).read_bytes()).digest())
    return h.hexdigest()[:24]


def open_model(path: str | os.PathLike, opts=None, progress: bool = True) -> Model:
    """A converted folder as it is, or a Hugging Face folder converted (once) into the cache."""
    path = Path(path)
    if (path / "model.bl14").is_file():
        mpath = path / "manifest.json"
        if not mpath.is_file():
            raise UserError(f"{path}: model.bl14 without manifest.json; re-run bertl14 convert")
        return Model(path=path, manifest=json.loads(mpath.read_text(encoding="utf-8")))
    if (path / "config.json").is_file():
        from .convert import ConvertOptions, convert
        opts = opts or ConvertOptions(progress=progress)
        opts.progress = progress
        out = cache_root() / f"{hf._model_name(path)}-{cache_key(path, opts)}"
        if not (out / "manifest.json").is_file():
            out.parent.mkdir(parents=True, exist_ok=True)
            tmp = Path(tempfile.mkdtemp(prefix=".convert-", dir=out.parent))
            try:
                convert(path, tmp, opts)
                if (tmp / "manifest.json").is_file() and not out.exists():
                    tmp.rename(out)
            finally:
                shutil.rmtree(tmp, ignore_errors=True)
        m = Model(path=out, manifest=json.loads((out / "manifest.json").read_text(encoding="utf-8")),
                  source_dir=path)
        return m
    if not path.exists():
        raise UserError(f"{path}: no such model folder")
    raise UserError(f"{path}: neither a converted bertl14 model (model.bl14) nor a Hugging Face folder "
                    "(config.json)")
