"""The weights blob (`bertl14_weights[]`) and the `model.bl14` file: docs/model-format.md.

`pack_weights(qm) -> bytes`, `read_weights(bytes) -> QuantModel`, `check_weights(bytes) -> header` (every check
bertl14_init makes, in its order: a refused blob raises `ModelDataError` naming the same status),
`write_model_file(path, weights, vocab_words)`, `read_model_file(path) -> (weights bytes, vocab words)`.
"""
from __future__ import annotations

import struct
import zlib
from pathlib import Path

import numpy as np

from ..errors import UserError
from .quant import QLayer, QLayerNorm, QLinear, QuantModel

MAGIC = b"BL14"
FORMAT_VERSION = 2         # 2: the blob ends with a checksum word
HEADER_WORDS = 16
GLOBAL_SECTIONS = 7
LAYER_SECTIONS = 32
TAIL_SECTIONS = 9
TAGGER_SECTIONS = 5        # optional, after the tail: token classifier w, mult, shift, bias, tag names

FLAG_INT4 = 1 << 0
FLAG_PER_TENSOR = 1 << 1
FLAG_SMOOTHING = 1 << 2
FLAG_CLASSIFIER = 1 << 3
FLAG_TAGGER = 1 << 4
FLAG_WEIGHTS_INT8 = 1 << 5   # every linear's w is INT8 (in the order of swizzle_w8), else INT16
KNOWN_FLAGS = 0x3F
WEIGHT_TYPES = ("int16", "int8")

FILE_MAGIC = b"BERTL14\0"
FILE_VERSION = 1
FILE_HEADER = struct.Struct("<8sIIII")     # magic, file_version, weights_bytes, vocab_words, crc32

# Statuses of bertl14_init for refused model data (bertl14.h), the checks of docs/model-format.md, "Checks"
ERR_MODEL_FORMAT = "BERTL14_ERR_MODEL_FORMAT"
ERR_MODEL_SIZE = "BERTL14_ERR_MODEL_SIZE"
ERR_MODEL_CORRUPT = "BERTL14_ERR_MODEL_CORRUPT"
ERR_MODEL_LAYOUT = "BERTL14_ERR_MODEL_LAYOUT"
ERR_MODEL_RANGE = "BERTL14_ERR_MODEL_RANGE"

# Ranges the C kernels are exact for (docs/model-format.md, "Checks"; bertl14_model.c)
MAX_LAYERS, MAX_HIDDEN, MAX_HEAD_DIM, MAX_ATTN, MAX_INTERMEDIATE = 64, 4096, 128, 4096, 16384
MAX_LABELS, MAX_TAGS, MAX_VOCAB = 4096, 256, 0x7FFFFFFF
EXP_RANGE = (-31, 31)             # every stored exponent F
EMB_SHIFT_RANGE = (-7, 62)        # word_shift, pos_shift
SCORE_SHIFT_RANGE = (-7, 62)      # f_q + f_k + 16 - 10
RES_SHIFT_RANGE = (-22, 62)       # F_h + 8 + 12 - f_r (both residuals)
LN_SHIFT_RANGE = (-3, 62)         # 12 + f_g - f_out (every LayerNorm)
F_UP_RANGE = (0, 12)
ROW_ABS_SUM_MAX = (2 ** 31 - 1) // 127    # 127 * sum_i |w[o][i]| < 2^31: the int32 accumulator


class ModelDataError(UserError):
    """Model data refused by check_weights: `status` is the bertl14_status_t name bertl14_init returns for it."""

    def __init__(self, status: str, message: str):
        super().__init__(f"{message}: convert the model again with `bertl14 convert`")
        self.status = status
        self.detail = message


class WeightTypeError(ModelDataError):
    """A blob whose weight type (INT8 / INT16) is not the library's: bertl14_init returns BERTL14_ERR_MODEL_FORMAT."""

    def __init__(self, message: str):
        UserError.__init__(self, message)
        self.status = ERR_MODEL_FORMAT
        self.detail = message


LINEAR_PARTS = ("w", "mult", "shift", "bias")
LAYER_LINEARS = ("q", "k", "v", "o", "i", "o2")
PARAMS_LAYER = ("f_q", "f_k", "f_v", "f_r1", "f_up", "f_r2")


def num_sections(num_layers: int, tagger: bool = False) -> int:
    return GLOBAL_SECTIONS + LAYER_SECTIONS * num_layers + TAIL_SECTIONS + (TAGGER_SECTIONS if tagger else 0)


def _names(names: list[str]) -> bytes:
    return b"".join(s.encode("utf-8") + b"\0" for s in names)


def _le(a: np.ndarray, dtype: str) -> bytes:
    return np.ascontiguousarray(a).astype(dtype).tobytes()


def swizzle_w8(w: np.ndarray) -> np.ndarray:
    """INT8 weight rows [out][in] in the blob's order: in every group of four channels 4c..4c+3 of a row (a row's
    last in % 4 channels stay in place) the bytes are channels 4c, 4c+2, 4c+1, 4c+3, so that SXTB16 of the group's
    word gives the int16 pair (4c, 4c+1) and SXTB16 of the word rotated by 8 bits the pair (4c+2, 4c+3), the order
    of the activations. Its own inverse (read_weights undoes it with the same call)."""
    w = np.array(w, copy=True)
    n4 = w.shape[1] & ~3 if w.ndim == 2 else 0
    if n4 and w.shape[0]:
        w[:, :n4] = w[:, :n4].reshape(w.shape[0], -1, 4)[:, :, [0, 2, 1, 3]].reshape(w.shape[0], n4)
    return w


def _linear_sections(lin: QLinear | None, int8: bool = False) -> list[bytes]:
    if lin is None:
        return [b""] * 4
    w = _le(swizzle_w8(lin.w), "i1") if int8 else _le(lin.w, "<i2")
    return [w, _le(lin.mult, "<i2"), _le(lin.shift, "<i2"), _le(lin.bias, "<i4")]


def _int32s(values) -> bytes:
    return _le(np.asarray(values, np.int64), "<i4")


def _sections(qm: QuantModel) -> list[bytes]:
    int8 = qm.weights == "int8"
    word = _le(pack_int4(qm.word_q), "u1") if qm.embedding == "int4" else _le(qm.word_q, "i1")
    secs = [word, _le(qm.word_scale, "<u2"), _le(qm.pos_q, "i1"), _le(qm.pos_scale, "<u2"),
            _int32s([qm.f_e, qm.word_shift, qm.pos_shift, qm.emb_ln.f_g, qm.emb_ln.f_out, qm.emb_ln.eps_q, 0, 0]),
            _le(qm.emb_ln.gamma, "<i2"), _le(qm.emb_ln.beta, "<i4")]
    for L in qm.layers:
        secs.append(_int32s([L.f_q, L.f_k, L.f_v, L.f_r1, L.f_up, L.f_r2, L.ln1.f_g, L.ln1.f_out, L.ln1.eps_q,
                             L.ln2.f_g, L.ln2.f_out, L.ln2.eps_q, 0, 0, 0, 0]))
        for name in LAYER_LINEARS:
            secs += _linear_sections(getattr(L, name), int8)
        secs += [_le(L.ln1.gamma, "<i2"), _le(L.ln1.beta, "<i4"), _le(L.ln2.gamma, "<i2"), _le(L.ln2.beta, "<i4"),
                 _le(L.res1_u, "<u2"), _le(L.res2_u, "<u2"), _le(L.gelu_ism, "<u2")]
    secs += _linear_sections(qm.pooler if qm.cls is not None else None, int8)
    secs += _linear_sections(qm.cls, int8)
    secs.append(_names(qm.labels) if qm.cls is not None else b"")
    if qm.tagger is not None:
        secs += _linear_sections(qm.tagger, int8) + [_names(qm.tags)]
    return secs


def pack_weights(qm: QuantModel) -> bytes:
    """The weights blob: header, section table, 4-byte aligned sections (little-endian)."""
    secs = _sections(qm)
    assert len(secs) == num_sections(qm.num_layers, qm.tagger is not None)
    table_offset = HEADER_WORDS * 4
    pos = table_offset + 8 * len(secs)
    table, body = [], bytearray()
    for s in secs:
        table.append((pos, len(s)))
        body += s + b"\0" * (-len(s) % 4)
        pos += len(s) + (-len(s) % 4)
    flags = ((FLAG_INT4 if qm.embedding == "int4" else 0) | (FLAG_PER_TENSOR if qm.act_scale == "per_tensor" else 0)
             | (FLAG_SMOOTHING if qm.smoothing else 0) | (FLAG_CLASSIFIER if qm.cls is not None else 0)
             | (FLAG_TAGGER if qm.tagger is not None else 0) | (FLAG_WEIGHTS_INT8 if qm.weights == "int8" else 0))
    header = struct.pack("<4s15I", MAGIC, FORMAT_VERSION, qm.num_layers, qm.hidden, qm.heads_total, qm.heads_kept,
                         qm.head_dim, qm.intermediate, qm.vocab_size, qm.max_position, qm.num_labels, flags, pos + 4,
                         len(secs), table_offset, qm.num_tags)
    blob = header + b"".join(struct.pack("<II", o, n) for o, n in table) + bytes(body)
    blob += struct.pack("<I", checksum(blob))
    assert len(blob) == pos + 4 and len(blob) % 4 == 0
    try:
        check_weights(blob)  # what bertl14_init refuses is never written (e.g. a parameter out of its range)
    except ModelDataError as exc:
        raise UserError(f"this model cannot run on the bertl14 C library: {exc.detail} (docs/model-format.md, "
                        "Checks)") from None
    return blob


def checksum(words: bytes) -> int:
    """Sum of the little-endian uint32 words, mod 2^32: a blob's last word is that of all the others."""
    return int(np.frombuffer(words, dtype="<u4").sum(dtype=np.uint64)) & 0xFFFFFFFF


def reseal(blob: bytes) -> bytes:
    """The blob with its checksum word recomputed (for tests and fuzzing that change a blob on purpose)."""
    return bytes(blob[:-4]) + struct.pack("<I", checksum(blob[:-4]))


def section_sizes(blob: bytes) -> dict[str, int]:
    """Bytes per part of the blob (header+table, embeddings, layers, head), for manifests."""
    hdr = check_weights(blob)
    table = hdr["table"]
    L = hdr["num_layers"]
    first_layer = GLOBAL_SECTIONS
    tail = GLOBAL_SECTIONS + LAYER_SECTIONS * L
    return {"header": table[0][0], "embeddings": table[first_layer][0] - table[0][0],
            "layers": table[tail][0] - table[first_layer][0], "head": len(blob) - table[tail][0],
            "total": len(blob)}


HEADER_NAMES = ("format_version", "num_layers", "hidden", "heads_total", "heads_kept", "head_dim", "intermediate",
                "vocab_size", "max_position", "num_labels", "flags", "total_bytes", "num_sections", "table_offset",
                "num_tags")
GLOBAL_NAMES = ("word_q", "word_scale", "pos_q", "pos_scale", "emb_params", "emb_ln_gamma", "emb_ln_beta")
LAYER_NAMES = ("params",) + tuple(f"{lin}.{part}" for lin in LAYER_LINEARS for part in LINEAR_PARTS) + (
    "ln1_gamma", "ln1_beta", "ln2_gamma", "ln2_beta", "res1_u", "res2_u", "gelu_ism")
TAIL_NAMES = tuple(f"{lin}.{part}" for lin in ("pooler", "cls") for part in LINEAR_PARTS) + ("labels",)
TAGGER_NAMES = tuple(f"tag.{part}" for part in LINEAR_PARTS) + ("tags",)


def section_names(num_layers: int, tagger: bool = False) -> list[str]:
    """Name of every section in table order ("layer 0 q.w", ...): docs/model-format.md section 1."""
    return (list(GLOBAL_NAMES) + [f"layer {l} {n}" for l in range(num_layers) for n in LAYER_NAMES]
            + list(TAIL_NAMES) + (list(TAGGER_NAMES) if tagger else []))


def _expected_bytes(hdr: dict, name: str) -> int | None:
    """Bytes of a section as the dimensions fix them; None for a names section."""
    H, A, I = hdr["hidden"], hdr["heads_kept"] * hdr["head_dim"], hdr["intermediate"]
    V, P, C, T = hdr["vocab_size"], hdr["max_position"], hdr["num_labels"], hdr["num_tags"]
    base = name.split()[-1]
    fixed = {"word_q": V * H // (2 if hdr["flags"] & FLAG_INT4 else 1), "word_scale": 2 * V, "pos_q": P * H,
             "pos_scale": 2 * P, "emb_params": 32, "emb_ln_gamma": 2 * H, "emb_ln_beta": 4 * H, "params": 64,
             "ln1_gamma": 2 * H, "ln1_beta": 4 * H, "ln2_gamma": 2 * H, "ln2_beta": 4 * H, "res1_u": 2 * H,
             "res2_u": 2 * H, "gelu_ism": 2 * I, "labels": None, "tags": None}
    if base in fixed:
        return fixed[base]
    lin, part = base.split(".")
    out, inn = {"q": (A, H), "k": (A, H), "v": (A, H), "o": (H, A), "i": (I, H), "o2": (H, I),
                "pooler": (H if C else 0, H), "cls": (C, H), "tag": (T, H)}[lin]
    wbytes = 1 if hdr["flags"] & FLAG_WEIGHTS_INT8 else 2
    return {"w": wbytes * out * inn, "mult": 2 * out, "shift": 2 * out, "bias": 4 * out}[part]


def _names_ok(raw: bytes, n: int) -> bool:
    if raw and raw[-1] != 0:
        return False
    try:
        raw.decode("utf-8")
    except UnicodeDecodeError:
        return False
    return raw.count(0) == n


def weight_type(flags: int) -> str:
    """"int8" or "int16": the linear weights of a blob with these header flags."""
    return "int8" if flags & FLAG_WEIGHTS_INT8 else "int16"


def check_weights(blob: bytes, c_library: bool = False, weights: str | None = None) -> dict:
    """Every check bertl14_init makes on a weights blob (docs/model-format.md, "Checks"), in the same order, so a
    blob refused here is refused there with `ModelDataError.status`. Returns the header fields and the section table
    ("table": [(offset, size)]). c_library=False also accepts what only the Python reference runs (per-tensor
    activation scales, a model without layers). `weights` ("int16" | "int8"): the weight type of the C library the
    blob is meant for (CONFIG_BERTL14_WEIGHTS_*); a blob of the other type is refused as that library refuses it."""
    blob = bytes(blob)
    size = len(blob)
    if size < HEADER_WORDS * 4:
        raise ModelDataError(ERR_MODEL_SIZE, f"weights blob truncated ({size} bytes, shorter than its header)")
    w = struct.unpack_from("<4s15I", blob, 0)
    if w[0] != MAGIC:
        raise ModelDataError(ERR_MODEL_FORMAT, "not a bertl14 weights blob (bad magic)")
    hdr = dict(zip(HEADER_NAMES, w[1:16]))
    if hdr["format_version"] != FORMAT_VERSION:
        raise ModelDataError(ERR_MODEL_FORMAT, f"weights blob format version {hdr['format_version']}, this bertl14 "
                                               f"reads version {FORMAT_VERSION}")
    if hdr["total_bytes"] != size or size % 4:
        raise ModelDataError(ERR_MODEL_SIZE, f"weights blob is {size} bytes but its header says "
                                             f"{hdr['total_bytes']}: truncated or extended")
    flags = hdr["flags"]
    if flags & ~KNOWN_FLAGS or (c_library and flags & FLAG_PER_TENSOR):
        raise ModelDataError(ERR_MODEL_FORMAT, f"weights blob flags 0x{flags:x}: " + (
            "unknown flag bits" if flags & ~KNOWN_FLAGS else "per-tensor activation scales run in the Python "
                                                             "reference only"))
    if weights is not None and weight_type(flags) != weights:
        have = weight_type(flags)
        raise WeightTypeError(
            f"the model has {have.upper()} weights but the library was built for {weights.upper()} weights: "
            f"build with CONFIG_BERTL14_WEIGHTS_{have.upper()}=y, or convert the model with --weights {weights}")
    if checksum(blob[:-4]) != struct.unpack_from("<I", blob, size - 4)[0]:
        raise ModelDataError(ERR_MODEL_CORRUPT, "weights blob checksum mismatch: the data changed after conversion")
    L, H, A, d, I = hdr["num_layers"], hdr["hidden"], hdr["heads_kept"], hdr["head_dim"], hdr["intermediate"]
    C, T = hdr["num_labels"], hdr["num_tags"]
    limits = [("num_layers", L, 1 if c_library else 0, MAX_LAYERS), ("hidden", H, 2, MAX_HIDDEN),
              ("head_dim", d, 1, MAX_HEAD_DIM), ("heads_kept", A, 1, min(MAX_ATTN // max(d, 1), hdr["heads_total"])),
              ("intermediate", I, 1, MAX_INTERMEDIATE), ("vocab_size", hdr["vocab_size"], 1, MAX_VOCAB),
              ("max_position", hdr["max_position"], 1, 2 ** 32 - 1), ("num_labels", C, 0, MAX_LABELS),
              ("num_tags", T, 0, MAX_TAGS)]
    for name, v, lo, hi in limits:
        if not lo <= v <= hi:
            raise ModelDataError(ERR_MODEL_RANGE, f"weights blob {name} {v} outside {lo}..{hi}")
    if H % 2:
        raise ModelDataError(ERR_MODEL_RANGE, f"weights blob hidden {H} is odd")
    tagger = T != 0
    names = section_names(L, tagger)
    S, table_off = hdr["num_sections"], hdr["table_offset"]
    if bool(flags & FLAG_CLASSIFIER) != (C != 0) or bool(flags & FLAG_TAGGER) != tagger:
        raise ModelDataError(ERR_MODEL_LAYOUT, "weights blob header: the head flags and num_labels / num_tags "
                                               "disagree")
    if S != len(names) or table_off != HEADER_WORDS * 4 or table_off + 8 * S > size - 4:
        raise ModelDataError(ERR_MODEL_LAYOUT, f"weights blob section table ({S} sections at byte {table_off}) does "
                                               f"not match its layer count or size")
    t = struct.unpack_from(f"<{2 * S}I", blob, table_off)
    table = [(t[2 * i], t[2 * i + 1]) for i in range(S)]
    end = table_off + 8 * S
    for name, (off, n) in zip(names, table):
        need = _expected_bytes(hdr, name)
        if off % 4 or off < end or off > size - 4 or n > size - 4 - off:
            raise ModelDataError(ERR_MODEL_LAYOUT, f"weights blob section {name} (bytes {off}..{off + n}) is not "
                                                   "in order inside the blob")
        if need is not None and n != need:
            raise ModelDataError(ERR_MODEL_LAYOUT, f"weights blob section {name} has {n} bytes, the dimensions "
                                                   f"need {need}")
        end = off + n
    sec = {name: blob[o:o + n] for name, (o, n) in zip(names, table)}
    if not _names_ok(sec["labels"], C) or (tagger and not _names_ok(sec["tags"], T)):
        raise ModelDataError(ERR_MODEL_LAYOUT, "weights blob label or tag names are not exactly num_labels / "
                                               "num_tags NUL-terminated UTF-8 names")
    _check_params(hdr, sec, L, tagger)
    hdr["table"] = table
    return hdr


def _check_params(hdr: dict, sec: dict, L: int, tagger: bool) -> None:
    """The quantization parameters inside the ranges the C kernels are exact for (bertl14_model.c params_ok)."""
    H, A, I = hdr["hidden"], hdr["heads_kept"] * hdr["head_dim"], hdr["intermediate"]

    def bad(what: str) -> ModelDataError:
        return ModelDataError(ERR_MODEL_RANGE, f"weights blob {what} outside the range the kernels support")

    def within(v: int, rng: tuple[int, int]) -> bool:
        return rng[0] <= v <= rng[1]

    def ln(prefix: str, f_g: int, f_out: int, eps_q: int) -> None:
        if not (within(f_g, EXP_RANGE) and within(f_out, EXP_RANGE)):
            raise bad(f"{prefix} exponents f_g {f_g}, f_out {f_out}")
        if not within(12 + f_g - f_out, LN_SHIFT_RANGE):
            raise bad(f"{prefix} shift 12 + f_g - f_out = {12 + f_g - f_out}")
        if eps_q < 1:
            raise bad(f"{prefix} eps_q {eps_q}")

    wdtype = "i1" if hdr["flags"] & FLAG_WEIGHTS_INT8 else "<i2"

    def linear(prefix: str, out: int, inn: int) -> None:
        w = np.frombuffer(sec[prefix + ".w"], dtype=wdtype).reshape(out, inn) if out else np.zeros((0, inn))
        mult = np.frombuffer(sec[prefix + ".mult"], dtype="<i2")
        shift = np.frombuffer(sec[prefix + ".shift"], dtype="<i2")
        if (mult < 1 << 14).any() or (shift < 1).any() or (shift > 62).any():
            raise bad(f"{prefix} mult/shift (mult 2^14..2^15-1, shift 1..62)")
        if out and (np.abs(w.astype(np.int64)).sum(axis=1) > ROW_ABS_SUM_MAX).any():
            raise bad(f"{prefix} weights (127 * sum |w| of a row must stay below 2^31)")

    def factors(name: str) -> None:
        if (np.frombuffer(sec[name], dtype="<u2") == 0).any():
            raise bad(f"{name} factors (1..65535)")

    e = struct.unpack("<8i", sec["emb_params"])     # f_e word_shift pos_shift f_g f_out eps_q 0 0
    if not within(e[0], EXP_RANGE):
        raise bad(f"f_e {e[0]}")
    if not (within(e[1], EMB_SHIFT_RANGE) and within(e[2], EMB_SHIFT_RANGE)):
        raise bad(f"embedding shifts {e[1]}, {e[2]}")
    ln("embedding LayerNorm", *e[3:6])
    f_h = e[4]
    for l in range(L):
        pre = f"layer {l} "
        p = struct.unpack("<16i", sec[pre + "params"])  # f_q f_k f_v f_r1 f_up f_r2 ln1(f_g f_out eps) ln2(...)
        if not all(within(x, EXP_RANGE) for x in p[:6]):
            raise bad(pre + f"exponents {list(p[:6])}")
        if not within(p[0] + p[1] + 6, SCORE_SHIFT_RANGE):
            raise bad(pre + f"score shift f_q + f_k + 6 = {p[0] + p[1] + 6}")
        if not within(f_h + 20 - p[3], RES_SHIFT_RANGE):
            raise bad(pre + f"residual 1 shift {f_h + 20 - p[3]}")
        if not within(p[4], F_UP_RANGE):
            raise bad(pre + f"f_up {p[4]}")
        ln(pre + "LN1", *p[6:9])
        if not within(p[7] + 20 - p[5], RES_SHIFT_RANGE):
            raise bad(pre + f"residual 2 shift {p[7] + 20 - p[5]}")
        ln(pre + "LN2", *p[9:12])
        for lin, out, inn in (("q", A, H), ("k", A, H), ("v", A, H), ("o", H, A), ("i", I, H), ("o2", H, I)):
            linear(pre + lin, out, inn)
        for name in ("res1_u", "res2_u", "gelu_ism"):
            factors(pre + name)
        f_h = p[10]
    C = hdr["num_labels"]
    linear("pooler", H if C else 0, H)
    linear("cls", C, H)
    if tagger:
        linear("tag", hdr["num_tags"], H)


def read_weights(blob: bytes) -> QuantModel:
    """The QuantModel a blob describes (inverse of pack_weights)."""
    hdr = check_weights(blob)
    table = hdr["table"]
    it = iter(range(len(table)))

    def sec(dtype: str, shape=None) -> np.ndarray:
        o, s = table[next(it)]
        a = np.frombuffer(blob, dtype=dtype, count=s // np.dtype(dtype).itemsize, offset=o).copy()
        return a.reshape(shape) if shape is not None else a

    L, H, A, d = hdr["num_layers"], hdr["hidden"], hdr["heads_kept"], hdr["head_dim"]
    I, V, P, C, flags = hdr["intermediate"], hdr["vocab_size"], hdr["max_position"], hdr["num_labels"], hdr["flags"]
    int4 = bool(flags & FLAG_INT4)
    word_q = unpack_int4(sec("u1", (V, H // 2))).astype(np.int8) if int4 else sec("i1", (V, H))
    word_scale, pos_q, pos_scale = sec("<u2"), sec("i1", (P, H)), sec("<u2")
    f_e, word_shift, pos_shift, eg, eo, ee = (int(x) for x in sec("<i4")[:6])
    emb_ln = QLayerNorm(gamma=sec("<i2"), beta=sec("<i4"), f_g=eg, f_out=eo, eps_q=ee)

    int8 = bool(flags & FLAG_WEIGHTS_INT8)

    def linear(n_out: int, n_in: int, f_in: int, f_out: int) -> QLinear:
        w = swizzle_w8(sec("i1", (n_out, n_in))) if int8 else sec("<i2", (n_out, n_in))
        return QLinear(w=w, mult=sec("<i2"), shift=sec("<i2"), bias=sec("<i4"),
                       f_in=f_in, f_out=f_out)

    layers = []
    f_h = eo
    for _ in range(L):
        p = [int(x) for x in sec("<i4")]
        f_q, f_k, f_v, f_r1, f_up, f_r2 = p[:6]
        q = linear(A * d, H, f_h, f_q)
        k = linear(A * d, H, f_h, f_k)
        v = linear(A * d, H, f_h, f_v)
        o = linear(H, A * d, f_v, f_r1)
        i = linear(I, H, p[7], f_up)
        o2 = linear(H, I, f_up, f_r2)
        ln1 = QLayerNorm(gamma=sec("<i2"), beta=sec("<i4"), f_g=p[6], f_out=p[7], eps_q=p[8])
        ln2 = QLayerNorm(gamma=sec("<i2"), beta=sec("<i4"), f_g=p[9], f_out=p[10], eps_q=p[11])
        layers.append(QLayer(q=q, k=k, v=v, o=o, i=i, o2=o2, ln1=ln1, ln2=ln2, f_q=f_q, f_k=f_k, f_v=f_v,
                             f_r1=f_r1, f_up=f_up, f_r2=f_r2, res1_u=sec("<u2"), res2_u=sec("<u2"),
                             gelu_ism=sec("<u2")))
        f_h = ln2.f_out
    pooler = cls = None
    labels: list[str] = []
    if flags & FLAG_CLASSIFIER:
        pooler = linear(H, H, f_h, 12)
        cls = linear(C, H, 15, 10)
        raw = bytes(sec("u1"))
        labels = [s.decode("utf-8") for s in raw.split(b"\0")[:C]]
    else:
        for _ in range(TAIL_SECTIONS):
            next(it)
    tagger = None
    tags: list[str] = []
    if flags & FLAG_TAGGER:
        T = hdr["num_tags"]
        tagger = linear(T, H, f_h, 10)
        tags = [s.decode("utf-8") for s in bytes(sec("u1")).split(b"\0")[:T]]
    return QuantModel(
        num_layers=L, hidden=H, heads_total=hdr["heads_total"], heads_kept=A, head_dim=d, intermediate=I,
        vocab_size=V, max_position=P, embedding="int4" if int4 else "int8",
        act_scale="per_tensor" if flags & FLAG_PER_TENSOR else "per_token", smoothing=bool(flags & FLAG_SMOOTHING),
        word_q=word_q, word_scale=word_scale, word_shift=word_shift, pos_q=pos_q, pos_scale=pos_scale,
        pos_shift=pos_shift, f_e=f_e, emb_ln=emb_ln, layers=layers, pooler=pooler, cls=cls, labels=labels,
        tagger=tagger, tags=tags, weights=weight_type(flags))


def write_model_file(path, weights: bytes, vocab_words) -> None:
    """model.bl14: file header (magic, version, lengths, CRC-32), weights blob, vocabulary section.
    `vocab_words`: the section's uint32 words (a list of ints, or their little-endian bytes)."""
    if len(weights) % 4:
        raise ValueError("weights blob length must be a multiple of 4")
    if isinstance(vocab_words, (bytes, bytearray, memoryview)):
        vocab_bytes = bytes(vocab_words)
        if len(vocab_bytes) % 4:
            raise ValueError("vocabulary section length must be a multiple of 4")
    else:
        vocab = np.asarray(vocab_words, dtype=np.int64)
        if vocab.size and (vocab.min() < 0 or vocab.max() >= 2 ** 32):
            raise ValueError("vocabulary section words must be uint32")
        vocab_bytes = vocab.astype("<u4").tobytes()
    payload = bytes(weights) + vocab_bytes
    header = FILE_HEADER.pack(FILE_MAGIC, FILE_VERSION, len(weights), len(vocab_bytes) // 4, zlib.crc32(payload))
    Path(path).write_bytes(header + payload)


def read_model_file(path) -> tuple[bytes, list[int]]:
    """(weights blob, vocabulary section words) of a model.bl14, after checking it is intact."""
    path = Path(path)
    try:
        data = path.read_bytes()
    except OSError as exc:
        raise UserError(f"{path}: cannot read ({exc.strerror})") from exc
    if len(data) < FILE_HEADER.size or data[:8] != FILE_MAGIC:
        raise UserError(f"{path}: not a bertl14 model file; convert one with `bertl14 convert`")
    _, version, wbytes, vwords, crc = FILE_HEADER.unpack_from(data, 0)
    if version != FILE_VERSION:
        raise UserError(f"{path}: model file version {version}, this bertl14 reads version {FILE_VERSION}; "
                        "convert the model again")
    payload = data[FILE_HEADER.size:]
    if len(payload) != wbytes + 4 * vwords:
        raise UserError(f"{path}: truncated ({len(payload)} bytes after the header, expected "
                        f"{wbytes + 4 * vwords}); convert the model again")
    if zlib.crc32(payload) != crc:
        raise UserError(f"{path}: checksum mismatch: file is corrupt, convert the model again")
    weights = payload[:wbytes]
    vocab = np.frombuffer(payload, dtype="<u4", offset=wbytes).astype(np.int64).tolist()
    return weights, vocab


def pack_int4(q):
    """int4 values [..., H] (-8..7) -> bytes [..., H/2], low nibble = even channel."""
    q = np.asarray(q, np.int64)
    lo, hi = q[..., 0::2] & 15, q[..., 1::2] & 15
    return (lo | (hi << 4)).astype(np.uint8)


def unpack_int4(b):
    b = np.asarray(b, np.int64)
    lo, hi = b & 15, (b >> 4) & 15
    lo, hi = np.where(lo >= 8, lo - 16, lo), np.where(hi >= 8, hi - 16, hi)
    out = np.empty(b.shape[:-1] + (b.shape[-1] * 2,), np.int64)
    out[..., 0::2], out[..., 1::2] = lo, hi
    return out
