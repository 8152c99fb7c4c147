"""The `c` engine: the bertl14 C library built for the host (cbuild.py) and called through ctypes.

    eng = CLibrary("models/en")          # a converted model folder / model.bl14, or CLibrary(weights, vocab_words)
    ids = eng.tokenize("turn on the light")          # tokenize_status() also returns the status code
    out = eng.encode(ids)        # out.hidden int8 [N, H], out.scales uint32 [N], out.frac_bits, out.cls_q
    cls = eng.classify()         # label, score_q16, logits (int32 Q10) of the last encode (or classify(ids))
    tg = eng.tag()               # tag of every token and their int32 Q10 logits (models with a token classifier)
    ids, offsets, st = eng.tokenize_offsets("turn on the light")   # + byte span (start, end) of every token

Each engine owns its context, its work buffer and a copy of the model data, so several engines
(e.g. the portable and the DSP kernel builds) can live side by side in one process.
"""
from __future__ import annotations

import ctypes
from dataclasses import dataclass
from pathlib import Path

import numpy as np

from .. import cbuild
from ..errors import UserError

STATUS = {
    0: "BERTL14_OK", -1: "BERTL14_ERR_INVALID_CONFIG", -2: "BERTL14_ERR_BUFFER_TOO_SMALL",
    -3: "BERTL14_ERR_TOKEN_OVERFLOW", -4: "BERTL14_ERR_INVALID_SEQ_LEN", -5: "BERTL14_ERR_NULL_POINTER",
    -6: "BERTL14_ERR_INVALID_UTF8", -7: "BERTL14_ERR_NOT_INITIALIZED", -8: "BERTL14_ERR_NO_CLASSIFIER",
    -9: "BERTL14_ERR_INVALID_TOKEN", -10: "BERTL14_ERR_NO_TAGGER", -11: "BERTL14_ERR_MODEL_FORMAT",
    -12: "BERTL14_ERR_MODEL_SIZE", -13: "BERTL14_ERR_MODEL_CORRUPT", -14: "BERTL14_ERR_MODEL_LAYOUT",
    -15: "BERTL14_ERR_MODEL_RANGE",
}
CTX_BYTES = 4096  # >= sizeof(bertl14_ctx_t) (checked by the C unit tests)

WRITE_FN = ctypes.CFUNCTYPE(None, ctypes.c_char_p, ctypes.c_size_t, ctypes.c_void_p)


class Config(ctypes.Structure):
    _fields_ = [("max_seq_len", ctypes.c_uint32), ("vocab_size", ctypes.c_uint32),
                ("work_buffer_ptr", ctypes.c_void_p), ("work_buffer_size", ctypes.c_uint32),
                ("weights_ptr", ctypes.c_void_p), ("vocab_offsets", ctypes.c_void_p),
                ("weights_size", ctypes.c_uint32), ("vocab_offsets_size", ctypes.c_uint32)]


class Tensor(ctypes.Structure):
    _fields_ = [("data_ptr", ctypes.c_void_p), ("dims", ctypes.c_uint32 * 4), ("dtype", ctypes.c_int)]


class Dims(ctypes.Structure):
    _fields_ = [(n, ctypes.c_uint32) for n in (
        "hidden", "num_layers", "num_heads", "head_dim", "intermediate", "max_heads_kept",
        "max_position", "vocab_size", "num_labels", "num_tags", "flags")]


class Classification(ctypes.Structure):
    _fields_ = [("label", ctypes.c_uint32), ("score_q16", ctypes.c_uint32), ("score_milli", ctypes.c_uint32),
                ("logits", ctypes.POINTER(ctypes.c_int32)), ("num_labels", ctypes.c_uint32)]


_LIBS: dict[tuple, ctypes.CDLL] = {}


def load_library(kernels: str = "portable", sanitize: tuple[str, ...] = (), weights: str = "int16") -> ctypes.CDLL:
    """The host library of this kernel set and linear weight type ("int16" | "int8"), built once."""
    key = (kernels, tuple(sanitize)) + ((weights,) if weights != "int16" else ())
    if key in _LIBS:
        return _LIBS[key]
    lib = ctypes.CDLL(str(cbuild.build_library(kernels, sanitize, weights=weights)))
    P, U32, I32 = ctypes.c_void_p, ctypes.c_uint32, ctypes.c_int
    sig = {
        "bertl14_ctx_init": (I32, [P, P]),
        "bertl14_ctx_tokenize": (I32, [P, ctypes.c_char_p, P, P, U32]),
        "bertl14_ctx_tokenize_offsets": (I32, [P, ctypes.c_char_p, P, P, P, U32]),
        "bertl14_ctx_tag": (I32, [P, P, U32, P]),
        "bertl14_ctx_tag_logits": (I32, [P, U32, P]),
        "bertl14_ctx_tag_name": (ctypes.c_char_p, [P, U32]),
        "bertl14_ctx_encode": (I32, [P, P, U32, P]),
        "bertl14_ctx_get_last_hidden_state": (I32, [P, P]),
        "bertl14_ctx_output_scale": (I32, [P, U32, P, P]),
        "bertl14_ctx_dims": (I32, [P, P]),
        "bertl14_ctx_classify": (I32, [P, P]),
        "bertl14_ctx_label_name": (ctypes.c_char_p, [P, U32]),
        "bertl14_ctx_set_output_hook": (I32, [P, WRITE_FN, P]),
        "bertl14_ctx_dump_tensor": (I32, [P, P, ctypes.c_char_p]),
        "bertl14_required_work_buffer_size": (U32, [P, U32, U32]),
        "bertl14_status_str": (ctypes.c_char_p, [I32]),
    }
    for name, (res, args) in sig.items():
        fn = getattr(lib, name)
        fn.restype, fn.argtypes = res, args
    _LIBS[key] = lib
    return lib


def status_name(code: int) -> str:
    return STATUS.get(code, f"status {code}")


@dataclass
class Encoded:
    hidden: np.ndarray      # int8 [N, H]: every token's last-layer row
    scales: np.ndarray      # uint32 [N]: row scales (real = q * s * 2^-(F+8))
    frac_bits: int          # F of the output rows

    @property
    def cls_q(self) -> np.ndarray:
        return self.hidden[0]

    @property
    def cls_scale(self) -> float:
        """Real value of one INT8 step of the [CLS] row."""
        return float(self.scales[0]) * 2.0 ** -(self.frac_bits + 8)

    @property
    def cls_float(self) -> np.ndarray:
        return self.hidden[0].astype(np.float64) * self.cls_scale


@dataclass
class Tagged:
    tags: list[int]         # tag of every token of the last encode ([CLS] and [SEP] included)
    logits: np.ndarray      # int32 [N, T], Q10
    names: list[str]        # the tags' names


@dataclass
class Classified:
    label: int
    score_q16: int
    score_milli: int
    logits: np.ndarray      # int32 [C], Q10
    label_name: str


def read_model(path) -> tuple[bytes, np.ndarray]:
    """(weights blob, vocabulary section words) of a converted model folder or a model.bl14 file."""
    from ..model import blob as model_format
    p = Path(path)
    f = p / "model.bl14" if p.is_dir() else p
    if not f.is_file():
        raise UserError(f"{path}: no model.bl14 found: convert the model with `bertl14 convert`")
    weights, vocab_words = model_format.read_model_file(f)
    vocab = np.asarray(vocab_words, dtype=np.uint32)
    from ..model.vocab_blob import check_section
    check_section(vocab.astype("<u4").tobytes())     # what bertl14_init refuses, said in the same words
    model_format.check_weights(weights, c_library=True)
    return bytes(weights), vocab


class CLibrary:
    def __init__(self, weights, vocab_words=None, max_seq_len: int | None = None,
                 kernels: str = "portable", sanitize: tuple[str, ...] = (), weight_type: str | None = None):
        """weight_type: the library's linear weights ("int16" | "int8"); None: the model's own (the library a
        firmware built for this model would link)."""
        if vocab_words is None:  # a model folder or model.bl14 path
            weights, vocab_words = read_model(weights)
        from ..model.blob import weight_type as blob_weight_type
        flags = int(np.frombuffer(bytes(weights[44:48]), dtype="<u4")[0]) if len(weights) >= 64 else 0
        self.weight_type = weight_type or blob_weight_type(flags)
        self.lib = load_library(kernels, tuple(sanitize), self.weight_type)
        self.kernels = kernels
        self._weights = ctypes.create_string_buffer(bytes(weights), len(weights))
        vocab = np.ascontiguousarray(np.asarray(vocab_words, dtype=np.uint32))
        self._vocab = ctypes.create_string_buffer(vocab.tobytes(), vocab.nbytes)
        header = np.frombuffer(bytes(weights[:64]), dtype="<u4") if len(weights) >= 64 else np.zeros(16, "<u4")
        self.max_position = int(header[9])
        self.max_seq_len = int(max_seq_len or min(self.max_position, 512))
        need = self.lib.bertl14_required_work_buffer_size(self._weights, len(weights), self.max_seq_len)
        if need == 0:
            from ..model.blob import check_weights
            check_weights(weights, c_library=True, weights=self.weight_type)   # names what is wrong (as bertl14_init)
            raise UserError(f"max_seq_len {self.max_seq_len} is out of range 1..{min(self.max_position, 512)}")
        self.work_buffer_size = int(need)
        self._work = (ctypes.c_uint32 * ((need + 3) // 4))()
        self._ctx = (ctypes.c_uint64 * (CTX_BYTES // 8))()
        cfg = Config(self.max_seq_len, int(header[8]), ctypes.addressof(self._work), need,
                     ctypes.addressof(self._weights), ctypes.addressof(self._vocab), len(weights), vocab.nbytes)
        st = self.lib.bertl14_ctx_init(self._ctx, ctypes.byref(cfg))
        if st != 0:
            raise UserError(f"bertl14_ctx_init failed: {status_name(st)} "
                            f"({self.lib.bertl14_status_str(st).decode()})")
        d = Dims()
        self.lib.bertl14_ctx_dims(self._ctx, ctypes.byref(d))
        self.dims = {n: getattr(d, n) for n, _ in Dims._fields_}
        self._hook = None

    # -- calls --------------------------------------------------------------------------------
    def tokenize(self, text: str | bytes, max_tokens: int | None = None) -> list[int]:
        """Token ids [CLS] ... [SEP] (truncated to max_tokens like the C call)."""
        ids, st = self.tokenize_status(text, max_tokens)
        if st not in (0, -3):
            raise UserError(f"bertl14_tokenize failed: {status_name(st)}")
        return ids

    def tokenize_status(self, text: str | bytes, max_tokens: int | None = None) -> tuple[list[int], int]:
        """Token ids ([CLS] ... [SEP]) and the status code (0, or -3 for a usable truncation)."""
        max_tokens = max_tokens or self.max_seq_len
        raw = text.encode("utf-8") if isinstance(text, str) else bytes(text)
        ids = (ctypes.c_int32 * max(1, max_tokens))()
        count = ctypes.c_uint32(0)
        st = self.lib.bertl14_ctx_tokenize(self._ctx, raw, ids, ctypes.byref(count), max_tokens)
        return list(ids[: count.value]), st

    def tokenize_offsets(self, text: str | bytes, max_tokens: int | None = None
                         ) -> tuple[list[int], list[tuple[int, int]], int]:
        """bertl14_ctx_tokenize_offsets: ids, the byte span (start, end) of every token in the UTF-8 text
        ((0, 0) for [CLS] and [SEP]) and the status code."""
        max_tokens = max_tokens or self.max_seq_len
        raw = text.encode("utf-8") if isinstance(text, str) else bytes(text)
        ids = (ctypes.c_int32 * max(1, max_tokens))()
        offsets = (ctypes.c_uint16 * max(2, 2 * max_tokens))()
        count = ctypes.c_uint32(0)
        st = self.lib.bertl14_ctx_tokenize_offsets(self._ctx, raw, ids, offsets, ctypes.byref(count), max_tokens)
        n = count.value
        return list(ids[:n]), [(offsets[2 * i], offsets[2 * i + 1]) for i in range(n)], st

    def encode(self, ids) -> Encoded:
        arr = (ctypes.c_int32 * max(1, len(ids)))(*ids)
        t = Tensor()
        st = self.lib.bertl14_ctx_encode(self._ctx, arr, len(ids), ctypes.byref(t))
        if st != 0:
            raise UserError(f"bertl14_encode failed: {status_name(st)}")
        st = self.lib.bertl14_ctx_get_last_hidden_state(self._ctx, ctypes.byref(t))
        assert st == 0, status_name(st)
        n, h = t.dims[1], t.dims[2]
        hidden = np.ctypeslib.as_array((ctypes.c_int8 * (n * h)).from_address(t.data_ptr)).reshape(n, h).copy()
        scales = np.zeros(n, dtype=np.uint32)
        s, f = ctypes.c_uint32(), ctypes.c_int32()
        for i in range(n):
            self.lib.bertl14_ctx_output_scale(self._ctx, i, ctypes.byref(s), ctypes.byref(f))
            scales[i] = s.value
        return Encoded(hidden, scales, f.value)

    def classify(self, ids=None) -> Classified:
        """Pooler + classifier of the last encode (or of `ids`, encoded first)."""
        if ids is not None:
            self.encode(ids)
        r = Classification()
        st = self.lib.bertl14_ctx_classify(self._ctx, ctypes.byref(r))
        if st != 0:
            raise UserError(f"bertl14_classify failed: {status_name(st)}")
        logits = np.array(r.logits[: r.num_labels], dtype=np.int32)
        name = self.lib.bertl14_ctx_label_name(self._ctx, r.label).decode("utf-8", "replace")
        return Classified(r.label, r.score_q16, r.score_milli, logits, name)

    def tag(self, ids=None) -> Tagged:
        """Token classification of the last encode (or of `ids`, encoded first): bertl14_ctx_tag for the tags,
        bertl14_ctx_tag_logits for each token's logits."""
        if ids is not None:
            self.encode(ids)
        n = max(1, self.max_seq_len)
        tags = (ctypes.c_uint8 * n)()
        count = ctypes.c_uint32(0)
        st = self.lib.bertl14_ctx_tag(self._ctx, tags, n, ctypes.byref(count))
        if st != 0:
            raise UserError(f"bertl14_tag failed: {status_name(st)}")
        T = self.dims["num_tags"]
        logits = np.zeros((count.value, T), dtype=np.int32)
        ptr = ctypes.POINTER(ctypes.c_int32)()
        for t in range(count.value):
            st = self.lib.bertl14_ctx_tag_logits(self._ctx, t, ctypes.byref(ptr))
            assert st == 0, status_name(st)
            logits[t] = ptr[:T]
        names = [self.lib.bertl14_ctx_tag_name(self._ctx, i).decode("utf-8", "replace") for i in range(T)]
        return Tagged(list(tags[: count.value]), logits, names)

    def dump_cls(self, name: str = "CLS_EMB") -> str:
        """What bertl14_dump_tensor writes for the last [CLS] row (the seed's UART debugging)."""
        chunks: list[bytes] = []
        self._hook = WRITE_FN(lambda p, n, _u: chunks.append(ctypes.string_at(p, n)))
        self.lib.bertl14_ctx_set_output_hook(self._ctx, self._hook, None)
        t = Tensor()
        st = self.lib.bertl14_ctx_get_last_hidden_state(self._ctx, ctypes.byref(t))
        if st != 0:
            raise UserError(f"nothing encoded yet: {status_name(st)}")
        t.dims[1] = 1
        st = self.lib.bertl14_ctx_dump_tensor(self._ctx, ctypes.byref(t), name.encode())
        assert st == 0, status_name(st)
        return b"".join(chunks).decode()


# ---- the registry matcher (bertl14/registry, bertl14_registry.h) ----------------------------------------------
class Slot(ctypes.Structure):
    _fields_ = [("kind", ctypes.c_uint32), ("index", ctypes.c_uint32), ("start", ctypes.c_uint32),
                ("end", ctypes.c_uint32)]


_REGISTRY_LIBS: dict[tuple, ctypes.CDLL] = {}


def load_registry_library(sanitize: tuple[str, ...] = ()) -> ctypes.CDLL:
    key = tuple(sanitize)
    if key not in _REGISTRY_LIBS:
        lib = ctypes.CDLL(str(cbuild.build_registry_library(sanitize)))
        P, U32 = ctypes.c_void_p, ctypes.c_uint32
        lib.bertl14_registry_match.restype = ctypes.c_int
        lib.bertl14_registry_match.argtypes = [P, P, ctypes.c_char_p, P, U32, P, U32, P]
        lib.bertl14_registry_validate.restype = ctypes.c_int
        lib.bertl14_registry_validate.argtypes = [P]
        _REGISTRY_LIBS[key] = lib
    return _REGISTRY_LIBS[key]


class RegistryMatcher:
    """bertl14_registry_match() through ctypes; `match` answers like registry.Matcher.match:
    (status, output bytes, [(kind, index, start, end)])."""

    def __init__(self, registry_words, vocab_words, sanitize: tuple[str, ...] = ()):
        self.lib = load_registry_library(tuple(sanitize))
        reg = np.ascontiguousarray(np.asarray(registry_words, dtype=np.uint32))
        voc = np.ascontiguousarray(np.asarray(vocab_words, dtype=np.uint32))
        self._reg = ctypes.create_string_buffer(reg.tobytes(), reg.nbytes)
        self._vocab = ctypes.create_string_buffer(voc.tobytes(), voc.nbytes)
        st = self.lib.bertl14_registry_validate(self._reg)
        if st != 0:
            raise UserError(f"bertl14_registry_validate failed: {status_name(st)} (recompile the registry)")

    def match(self, text: str | bytes, max_slots: int = 8):
        raw = text.encode("utf-8", "surrogatepass") if isinstance(text, str) else bytes(text)
        raw = raw.split(b"\0", 1)[0]
        size = 8 * len(raw) + 8   # a placeholder (<= 7 bytes) replaces at least one byte, + the NUL
        out = ctypes.create_string_buffer(size)
        slots = (Slot * max(1, max_slots))()
        n = ctypes.c_uint32(0)
        st = self.lib.bertl14_registry_match(self._reg, self._vocab, raw, out, size, slots, max_slots,
                                             ctypes.byref(n))
        if st != 0:
            return st, b"", []
        return st, out.value, [(s.kind, s.index, s.start, s.end) for s in slots[: n.value]]
