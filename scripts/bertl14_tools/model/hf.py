"""Read a Hugging Face BERT folder into a `FloatModel`, without torch.

Accepted: `BertModel` and `BertForSequenceClassification` checkpoints (`config.json` with model_type "bert",
`model.safetensors` or `pytorch_model.bin`, `vocab.txt`, optional `tokenizer_config.json`, optional
`labels.json`). MLM/NSP heads (`cls.*`) are dropped; the pooler and the classifier are kept, and so is an
optional token-classification (slot tagging) head `token_classifier.weight` / `.bias` with its tag names in
`tags.json`.

`pytorch_model.bin` is a zip of a pickle plus one raw file per tensor storage; `_TorchZipUnpickler` rebuilds
numpy arrays from it and refuses every class outside a short allow-list, so no code from the file runs.
"""
from __future__ import annotations

import json
import os
import pickle
import zipfile
from collections import OrderedDict
from pathlib import Path

import numpy as np

from ..errors import UserError
from ..textio import decode, read_text
from .floatmodel import FloatLayer, FloatModel

WEIGHT_FILES = ("model.safetensors", "pytorch_model.bin")
GELU_ACTS = ("gelu", "gelu_new", "gelu_pytorch_tanh", "gelu_fast")


# --------------------------------------------------------------------------------------------------------
# state dict readers
# --------------------------------------------------------------------------------------------------------

_SAFETENSORS_DTYPES = {"F64": np.float64, "F32": np.float32, "F16": np.float16, "I64": np.int64,
                       "I32": np.int32, "I16": np.int16, "I8": np.int8, "U8": np.uint8, "BOOL": np.bool_}


def _bf16_to_f32(raw: np.ndarray) -> np.ndarray:
    return (raw.astype(np.uint32) << 16).view(np.float32)


def read_safetensors(path: Path) -> dict[str, np.ndarray]:
    """All tensors of a .safetensors file as numpy arrays (bfloat16 widened to float32)."""
    try:
        from safetensors.numpy import load_file
        return dict(load_file(str(path)))
    except Exception as exc:  # numpy has no bfloat16: read those files by hand (the format is simple)
        try:
            with open(path, "rb") as f:
                n = int.from_bytes(f.read(8), "little")
                if not 2 <= n <= os.path.getsize(path) - 8:
                    raise ValueError(f"a header of {n} bytes in a file of {os.path.getsize(path)}")
                header = json.loads(f.read(n))
                data = f.read()
        except (OSError, ValueError) as exc2:
            raise UserError(f"{path}: not a readable safetensors file ({exc2}): copy or download it again, or "
                            "re-save the checkpoint") from None
        if not isinstance(header, dict):
            raise UserError(f"{path}: not a safetensors file (no tensor table): copy or download it again") from exc
        out = {}
        for name, info in header.items():
            if name == "__metadata__":
                continue
            start, end = info["data_offsets"]
            if end > len(data):
                raise UserError(f"{path}: truncated ({8 + n + len(data)} bytes, tensor {name} ends at byte "
                                f"{8 + n + end}): copy or download the file again, or re-train the model") from None
            dt = info["dtype"]
            if dt == "BF16":
                arr = _bf16_to_f32(np.frombuffer(data[start:end], dtype="<u2"))
            elif dt in _SAFETENSORS_DTYPES:
                arr = np.frombuffer(data[start:end], dtype=np.dtype(_SAFETENSORS_DTYPES[dt]).newbyteorder("<"))
            else:
                raise UserError(f"{path}: tensor {name} has unsupported dtype {dt}") from exc
            out[name] = arr.reshape(info["shape"])
        return out


# torch storage class name -> numpy dtype (little-endian, as torch writes them)
_TORCH_STORAGE_DTYPES = {
    "FloatStorage": "<f4", "DoubleStorage": "<f8", "HalfStorage": "<f2", "BFloat16Storage": "bf16",
    "LongStorage": "<i8", "IntStorage": "<i4", "ShortStorage": "<i2", "CharStorage": "i1",
    "ByteStorage": "u1", "BoolStorage": "?",
}
# torch.dtype name (newer checkpoints pass dtypes for UntypedStorage) -> numpy dtype
_TORCH_DTYPES = {"float32": "<f4", "float": "<f4", "float64": "<f8", "double": "<f8", "float16": "<f2",
                 "half": "<f2", "bfloat16": "bf16", "int64": "<i8", "long": "<i8", "int32": "<i4",
                 "int": "<i4", "int16": "<i2", "int8": "i1", "uint8": "u1", "bool": "?"}


class _StorageType:
    def __init__(self, dtype: str):
        self.dtype = dtype


class _TorchDtype:
    def __init__(self, name: str):
        self.name = name


def _rebuild_tensor(storage, storage_offset, size, stride, *_ignored):
    """torch._utils._rebuild_tensor_v2 for a numpy view: storage is a flat numpy array of the right dtype."""
    size = tuple(int(s) for s in size)
    if not size:
        return storage[storage_offset:storage_offset + 1].reshape(()).copy()
    item = storage.itemsize
    view = np.lib.stride_tricks.as_strided(storage[storage_offset:], shape=size,
                                           strides=tuple(int(s) * item for s in stride))
    return np.array(view)  # own, contiguous copy


def _rebuild_parameter(data, *_ignored):
    return data


class _TorchZipUnpickler(pickle.Unpickler):
    """Unpickles torch's `data.pkl` into numpy arrays; any class outside the allow-list is an error."""

    def __init__(self, file, zf: zipfile.ZipFile, prefix: str, origin: Path):
        super().__init__(file)
        self.zf, self.prefix, self.origin = zf, prefix, origin
        self.storages: dict[str, np.ndarray] = {}

    def find_class(self, module, name):
        if module == "collections" and name == "OrderedDict":
            return OrderedDict
        if module == "torch._utils" and name in ("_rebuild_tensor_v2", "_rebuild_tensor"):
            return _rebuild_tensor
        if module == "torch._utils" and name == "_rebuild_parameter":
            return _rebuild_parameter
        if module == "torch" and name in _TORCH_STORAGE_DTYPES:
            return _StorageType(_TORCH_STORAGE_DTYPES[name])
        if module == "torch" and name in _TORCH_DTYPES:
            return _TorchDtype(name)
        if module == "torch" and name == "UntypedStorage":
            return _StorageType("u1")
        raise UserError(f"{self.origin}: refusing to load {module}.{name} from the pickle "
                        "(only plain tensors are read); save the model as model.safetensors instead")

    def persistent_load(self, pid):
        # ('storage', storage_type, key, location, numel)
        if not (isinstance(pid, tuple) and pid and pid[0] == "storage"):
            raise UserError(f"{self.origin}: unexpected persistent id in the pickle; re-save as safetensors")
        storage_type, key = pid[1], str(pid[2])
        if isinstance(storage_type, _TorchDtype):
            dtype = _TORCH_DTYPES[storage_type.name]
        else:
            dtype = storage_type.dtype
        if key not in self.storages:
            raw = self.zf.read(f"{self.prefix}data/{key}")
            if dtype == "bf16":
                arr = _bf16_to_f32(np.frombuffer(raw, dtype="<u2"))
            else:
                arr = np.frombuffer(raw, dtype=np.dtype(dtype))
            self.storages[key] = arr
        return self.storages[key]


def read_torch_bin(path: Path) -> dict[str, np.ndarray]:
    """The state dict of a torch `save` zip file (torch >= 1.6 format) as numpy arrays, without torch."""
    if not zipfile.is_zipfile(path):
        raise UserError(f"{path}: legacy (pre-zip) torch file, not supported; re-save it with a recent torch "
                        "or as model.safetensors")
    with zipfile.ZipFile(path) as zf:
        pkl = [n for n in zf.namelist() if n.endswith("data.pkl")]
        if not pkl:
            raise UserError(f"{path}: no data.pkl inside the zip; is this a torch checkpoint?")
        prefix = pkl[0][: -len("data.pkl")]
        with zf.open(pkl[0]) as f:
            obj = _TorchZipUnpickler(f, zf, prefix, path).load()
    if isinstance(obj, dict) and "state_dict" in obj and isinstance(obj["state_dict"], dict):
        obj = obj["state_dict"]
    if not isinstance(obj, dict):
        raise UserError(f"{path}: expected a state dict, found {type(obj).__name__}")
    return {k: v for k, v in obj.items() if isinstance(v, np.ndarray)}


def find_weights_file(folder: Path) -> Path:
    for name in WEIGHT_FILES:
        if (folder / name).is_file():
            return folder / name
    raise UserError(f"{folder}: no model.safetensors or pytorch_model.bin; "
                    "save the model with save_pretrained() into this folder")


def read_state_dict(folder: Path) -> dict[str, np.ndarray]:
    path = find_weights_file(folder)
    return read_safetensors(path) if path.suffix == ".safetensors" else read_torch_bin(path)


# --------------------------------------------------------------------------------------------------------
# config, vocabulary, labels
# --------------------------------------------------------------------------------------------------------

def read_config(folder: Path) -> dict:
    path = folder / "config.json"
    if not path.is_file():
        raise UserError(f"{folder}: no config.json; expected a Hugging Face model folder")
    try:
        cfg = json.loads(read_text(path))
    except ValueError as exc:
        raise UserError(f"{path}: not valid JSON ({exc})") from exc
    mt = cfg.get("model_type")
    if mt != "bert":
        raise UserError(f"{folder}: model_type is {mt!r}, not 'bert'; bertl14 converts BERT encoders only "
                        "(BertModel / BertForSequenceClassification)")
    hidden, heads = int(cfg.get("hidden_size", 0)), int(cfg.get("num_attention_heads", 0))
    if heads <= 0 or hidden <= 0 or hidden % heads:
        raise UserError(f"{path}: hidden_size {hidden} is not divisible by num_attention_heads {heads}")
    act = cfg.get("hidden_act", "gelu")
    if act not in GELU_ACTS:
        raise UserError(f"{path}: hidden_act {act!r} is not supported (bertl14 implements GELU only)")
    pet = cfg.get("position_embedding_type", "absolute")
    if pet != "absolute":
        raise UserError(f"{path}: position_embedding_type {pet!r} is not supported (absolute only)")
    return cfg


def read_vocab(folder: Path) -> list[str]:
    path = folder / "vocab.txt"
    if not path.is_file():
        raise UserError(f"{folder}: no vocab.txt; copy the tokenizer's vocab.txt next to config.json "
                        "(tokenizer.save_pretrained(folder))")
    # BertTokenizer's load_vocab: one token a line, only the newline stripped (empty lines are tokens too)
    lines = decode(path.read_bytes(), str(path)).split("\n")
    if lines and lines[-1] == "":
        lines.pop()
    return lines


def read_tokenizer_config(folder: Path) -> dict:
    path = folder / "tokenizer_config.json"
    cfg = {}
    if path.is_file():
        try:
            cfg = json.loads(read_text(path))
        except ValueError as exc:
            raise UserError(f"{path}: not valid JSON ({exc})") from exc
    return {"do_lower_case": bool(cfg.get("do_lower_case", True)),
            "strip_accents": cfg.get("strip_accents", None),
            "tokenize_chinese_chars": bool(cfg.get("tokenize_chinese_chars", True))}


def read_labels(folder: Path, cfg: dict, num_labels: int) -> list[str]:
    """labels.json (a list, or a {id: name} dict) wins over config id2label; default LABEL_i."""
    path = folder / "labels.json"
    labels = None
    if path.is_file():
        try:
            raw = json.loads(read_text(path))
        except ValueError as exc:
            raise UserError(f"{path}: not valid JSON ({exc})") from exc
        if isinstance(raw, dict) and "labels" in raw:
            raw = raw["labels"]
        if isinstance(raw, dict):
            labels = [str(raw[k]) for k in sorted(raw, key=lambda k: int(k))]
        elif isinstance(raw, list):
            labels = [str(x) for x in raw]
        else:
            raise UserError(f"{path}: expected a list of label names")
    elif isinstance(cfg.get("id2label"), dict):
        labels = [str(cfg["id2label"][k]) for k in sorted(cfg["id2label"], key=lambda k: int(k))]
    if labels is None or len(labels) != num_labels:
        if labels is not None and path.is_file():
            raise UserError(f"{path}: {len(labels)} labels but the classifier has {num_labels} outputs")
        labels = [f"LABEL_{i}" for i in range(num_labels)]
    return labels


MAX_TAGS = 256   # tag ids are uint8 on the device


def read_tags(folder: Path, num_tags: int) -> list[str]:
    """tags.json: a list of tag names ("O", then "B-<slot>", "I-<slot>" pairs), one per output of the token
    classifier; default TAG_i when the file is absent."""
    path = folder / "tags.json"
    if not path.is_file():
        return [f"TAG_{i}" for i in range(num_tags)]
    try:
        raw = json.loads(read_text(path))
    except ValueError as exc:
        raise UserError(f"{path}: not valid JSON ({exc})") from exc
    if not isinstance(raw, list) or not all(isinstance(x, str) for x in raw):
        raise UserError(f"{path}: expected a list of tag names")
    if len(raw) != num_tags:
        raise UserError(f"{path}: {len(raw)} tags but the token classifier has {num_tags} outputs")
    return list(raw)


# --------------------------------------------------------------------------------------------------------
# the model
# --------------------------------------------------------------------------------------------------------

def _model_name(folder: Path) -> str:
    name = folder.resolve().name
    if name in ("model", "hf", "checkpoint", "final") and folder.resolve().parent.name:
        name = folder.resolve().parent.name
    return name


def load_hf(folder: str | os.PathLike) -> FloatModel:
    folder = Path(folder)
    if not folder.is_dir():
        hint = ""
        if not folder.is_absolute() and len(folder.parts) <= 2 and not str(folder).startswith("."):
            hint = (" (bertl14 downloads nothing: fetch a Hugging Face model first, e.g. "
                    f"`hf download {folder} --local-dir DIR` (huggingface_hub's CLI), and pass DIR)")
        raise UserError(f"{folder}: no such model folder{hint}")
    cfg = read_config(folder)
    vocab = read_vocab(folder)
    tok = read_tokenizer_config(folder)
    sd = read_state_dict(folder)
    wpath = find_weights_file(folder)

    # BertForSequenceClassification prefixes the encoder with "bert."; heads ("cls.") are dropped
    base = {}
    for k, v in sd.items():
        if k.startswith("bert."):
            base[k[5:]] = v
        elif not k.startswith(("cls.", "classifier.", "token_classifier.")):
            base.setdefault(k, v)
    # old TF-converted checkpoints name LayerNorm parameters gamma/beta
    base = {k.replace("LayerNorm.gamma", "LayerNorm.weight").replace("LayerNorm.beta", "LayerNorm.bias"): v
            for k, v in base.items()}

    def get(key: str, optional: bool = False):
        if key in base:
            return np.ascontiguousarray(base[key], dtype=np.float32)
        if optional:
            return None
        raise UserError(f"{wpath}: tensor {key!r} is missing; is this a BERT checkpoint?")

    hidden, heads = int(cfg["hidden_size"]), int(cfg["num_attention_heads"])
    n_layers = int(cfg.get("num_hidden_layers", 0))
    found = {int(k.split(".")[2]) for k in base if k.startswith("encoder.layer.")}
    if n_layers <= 0 or found != set(range(n_layers)):
        raise UserError(f"{wpath}: config says {n_layers} layers but the weights hold layers "
                        f"{sorted(found)[:4]}{'...' if len(found) > 4 else ''}")
    word = get("embeddings.word_embeddings.weight")
    if word.shape[1] != hidden:
        raise UserError(f"{wpath}: word embeddings are {word.shape[1]} wide, config hidden_size is {hidden}")
    if len(vocab) > word.shape[0]:
        raise UserError(f"{folder}/vocab.txt has {len(vocab)} entries but the model embeds only "
                        f"{word.shape[0]} ids; vocab.txt belongs to another model")
    word = word[: len(vocab)]  # rows past the vocabulary (padding) can never be produced by the tokenizer

    layers = []
    for i in range(n_layers):
        p = f"encoder.layer.{i}."
        layers.append(FloatLayer(
            wq=get(p + "attention.self.query.weight"), bq=get(p + "attention.self.query.bias"),
            wk=get(p + "attention.self.key.weight"), bk=get(p + "attention.self.key.bias"),
            wv=get(p + "attention.self.value.weight"), bv=get(p + "attention.self.value.bias"),
            wo=get(p + "attention.output.dense.weight"), bo=get(p + "attention.output.dense.bias"),
            ln1_g=get(p + "attention.output.LayerNorm.weight"), ln1_b=get(p + "attention.output.LayerNorm.bias"),
            wi=get(p + "intermediate.dense.weight"), bi=get(p + "intermediate.dense.bias"),
            wo2=get(p + "output.dense.weight"), bo2=get(p + "output.dense.bias"),
            ln2_g=get(p + "output.LayerNorm.weight"), ln2_b=get(p + "output.LayerNorm.bias"),
            heads_kept=list(range(heads)),
        ))
    inter = layers[0].wi.shape[0]

    pooler_w, pooler_b = get("pooler.dense.weight", True), get("pooler.dense.bias", True)
    cls_w = sd.get("classifier.weight")
    cls_b = sd.get("classifier.bias")
    labels: list[str] = []
    if cls_w is not None:
        cls_w = np.ascontiguousarray(cls_w, dtype=np.float32)
        cls_b = (np.zeros(cls_w.shape[0], np.float32) if cls_b is None
                 else np.ascontiguousarray(cls_b, dtype=np.float32))
        if pooler_w is None:
            raise UserError(f"{wpath}: a classifier without a pooler is not supported "
                            "(BertForSequenceClassification classifies the pooled [CLS])")
        labels = read_labels(folder, cfg, cls_w.shape[0])

    tag_w, tag_b, tags = sd.get("token_classifier.weight"), sd.get("token_classifier.bias"), []
    if tag_w is not None:
        tag_w = np.ascontiguousarray(tag_w, dtype=np.float32)
        if tag_w.ndim != 2 or tag_w.shape[1] != hidden or not 1 <= tag_w.shape[0] <= MAX_TAGS:
            raise UserError(f"{wpath}: token_classifier.weight is {list(tag_w.shape)}, expected "
                            f"[num_tags, {hidden}] with 1..{MAX_TAGS} tags")
        tag_b = (np.zeros(tag_w.shape[0], np.float32) if tag_b is None
                 else np.ascontiguousarray(tag_b, dtype=np.float32).reshape(-1))
        if tag_b.shape != (tag_w.shape[0],):
            raise UserError(f"{wpath}: token_classifier.bias has {tag_b.size} values, expected {tag_w.shape[0]}")
        tags = read_tags(folder, tag_w.shape[0])

    pos = get("embeddings.position_embeddings.weight")
    typ = get("embeddings.token_type_embeddings.weight")
    return FloatModel(
        hidden=hidden, num_heads=heads, intermediate=inter, max_position=pos.shape[0],
        layer_norm_eps=float(cfg.get("layer_norm_eps", 1e-12)),
        word_emb=word, pos_emb=pos, type_emb=typ,
        emb_ln_g=get("embeddings.LayerNorm.weight"), emb_ln_b=get("embeddings.LayerNorm.bias"),
        layers=layers, vocab=vocab,
        do_lower_case=tok["do_lower_case"], strip_accents=tok["strip_accents"],
        tokenize_chinese_chars=tok["tokenize_chinese_chars"],
        pooler_w=pooler_w, pooler_b=pooler_b, cls_w=cls_w, cls_b=cls_b, labels=labels,
        tag_w=tag_w, tag_b=tag_b, tags=tags, name=_model_name(folder),
        gelu="erf" if cfg.get("hidden_act", "gelu") == "gelu" else "tanh",
    )


# the registry's domain rule a model ships (registry/domains.py reads it; the converter carries it along)
INTENT_DOMAINS_FILE = "intent_domains.json"


def input_files(folder: str | os.PathLike) -> list[Path]:
    """The files a conversion reads (for the manifest's checksums and the on-the-fly cache key)."""
    folder = Path(folder)
    names = ["config.json", find_weights_file(folder).name, "vocab.txt", "tokenizer_config.json",
             "labels.json", "tags.json", "calibration.jsonl", "training.json", INTENT_DOMAINS_FILE, "slots.json",
             "intent_slots.json"]
    return [folder / n for n in names if (folder / n).is_file()]
