"""The weights blob (`bertl14_weights[]`) and the `model.bl14` file: docs/model-format.md.

`pack_weights(qm) -> bytes`, `read_weights(bytes) -> QuantModel`, `write_model_file(path, weights,
vocab_words)`, `read_model_file(path) -> (weights bytes, vocab words)`.
"""
from __future__ import annotations

import struct
import zlib
from pathlib import Path

import numpy as np

from .errors import UserError
from .quant import QLayer, QLayerNorm, QLinear, QuantModel

MAGIC = b"BL14"
FORMAT_VERSION = 1
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

FILE_MAGIC = b"BERTL14\0"
FILE_VERSION = 1
FILE_HEADER = struct.Struct("<8sIIII")     # magic, file_version, weights_bytes, vocab_words, crc32

LINEAR_PARTS = ("w", "mult", "shift", "bias")
LAYER_LINEARS = ("q", "k", "v", "o", "i", "o2")
PARAMS_LAYER = ("f_q", "f_k", "f_v", "f_r1", "f_up", "f_r2")


def num_sections(num_layers: int, tagger: bool = False) -> int:
    return GLOBAL_SECTIONS + LAYER_SECTIONS * num_layers + TAIL_SECTIONS + (TAGGER_SECTIONS if tagger else 0)


def _names(names: list[str]) -> bytes:
    return b"".join(s.encode("utf-8") + b"\0" for s in names)


def _le(a: np.ndarray, dtype: str) -> bytes:
    return np.ascontiguousarray(a).astype(dtype).tobytes()


def _linear_sections(lin: QLinear | None) -> list[bytes]:
    if lin is None:
        return [b""] * 4
    return [_le(lin.w, "<i2"), _le(lin.mult, "<i2"), _le(lin.shift, "<i2"), _le(lin.bias, "<i4")]


def _int32s(values) -> bytes:
    return _le(np.asarray(values, np.int64), "<i4")


def _sections(qm: QuantModel) -> list[bytes]:
    from .reference import pack_int4
    word = _le(pack_int4(qm.word_q), "u1") if qm.embedding == "int4" else _le(qm.word_q, "i1")
    secs = [word, _le(qm.word_scale, "<u2"), _le(qm.pos_q, "i1"), _le(qm.pos_scale, "<u2"),
            _int32s([qm.f_e, qm.word_shift, qm.pos_shift, qm.emb_ln.f_g, qm.emb_ln.f_out, qm.emb_ln.eps_q, 0, 0]),
            _le(qm.emb_ln.gamma, "<i2"), _le(qm.emb_ln.beta, "<i4")]
    for L in qm.layers:
        secs.append(_int32s([L.f_q, L.f_k, L.f_v, L.f_r1, L.f_up, L.f_r2, L.ln1.f_g, L.ln1.f_out, L.ln1.eps_q,
                             L.ln2.f_g, L.ln2.f_out, L.ln2.eps_q, 0, 0, 0, 0]))
        for name in LAYER_LINEARS:
            secs += _linear_sections(getattr(L, name))
        secs += [_le(L.ln1.gamma, "<i2"), _le(L.ln1.beta, "<i4"), _le(L.ln2.gamma, "<i2"), _le(L.ln2.beta, "<i4"),
                 _le(L.res1_u, "<u2"), _le(L.res2_u, "<u2"), _le(L.gelu_ism, "<u2")]
    secs += _linear_sections(qm.pooler if qm.cls is not None else None)
    secs += _linear_sections(qm.cls)
    secs.append(_names(qm.labels) if qm.cls is not None else b"")
    if qm.tagger is not None:
        secs += _linear_sections(qm.tagger) + [_names(qm.tags)]
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
             | (FLAG_TAGGER if qm.tagger is not None else 0))
    header = struct.pack("<4s15I", MAGIC, FORMAT_VERSION, qm.num_layers, qm.hidden, qm.heads_total, qm.heads_kept,
                         qm.head_dim, qm.intermediate, qm.vocab_size, qm.max_position, qm.num_labels, flags, pos,
                         len(secs), table_offset, qm.num_tags)
    blob = header + b"".join(struct.pack("<II", o, n) for o, n in table) + bytes(body)
    assert len(blob) == pos and len(blob) % 4 == 0
    return blob


def section_sizes(blob: bytes) -> dict[str, int]:
    """Bytes per part of the blob (header+table, embeddings, layers, head), for manifests."""
    hdr = _header(blob)
    table = _table(blob, hdr)
    L = hdr["num_layers"]
    first_layer = GLOBAL_SECTIONS
    tail = GLOBAL_SECTIONS + LAYER_SECTIONS * L
    return {"header": table[0][0], "embeddings": table[first_layer][0] - table[0][0],
            "layers": table[tail][0] - table[first_layer][0], "head": len(blob) - table[tail][0],
            "total": len(blob)}


def _header(blob: bytes) -> dict:
    if len(blob) < HEADER_WORDS * 4:
        raise UserError("weights blob truncated (shorter than its header)")
    w = struct.unpack_from("<4s15I", blob, 0)
    if w[0] != MAGIC:
        raise UserError("not a bertl14 weights blob (bad magic); convert the model with `bertl14 convert`")
    names = ("format_version", "num_layers", "hidden", "heads_total", "heads_kept", "head_dim", "intermediate",
             "vocab_size", "max_position", "num_labels", "flags", "total_bytes", "num_sections", "table_offset",
             "num_tags")
    hdr = dict(zip(names, w[1:16]))
    if hdr["format_version"] != FORMAT_VERSION:
        raise UserError(f"weights blob format version {hdr['format_version']}, this bertl14 reads version "
                        f"{FORMAT_VERSION}; convert the model again")
    if hdr["total_bytes"] != len(blob):
        raise UserError(f"weights blob is {len(blob)} bytes but its header says {hdr['total_bytes']}: truncated")
    if bool(hdr["flags"] & FLAG_TAGGER) != (hdr["num_tags"] != 0):
        raise UserError("weights blob header: the token classifier flag and num_tags disagree")
    if hdr["num_sections"] != num_sections(hdr["num_layers"], hdr["num_tags"] != 0):
        raise UserError("weights blob section table does not match its layer count")
    return hdr


def _table(blob: bytes, hdr: dict) -> list[tuple[int, int]]:
    n = hdr["num_sections"]
    t = struct.unpack_from(f"<{2 * n}I", blob, hdr["table_offset"])
    table = [(t[2 * i], t[2 * i + 1]) for i in range(n)]
    for o, s in table:
        if o % 4 or o + s > len(blob):
            raise UserError("weights blob section table is corrupt")
    return table


def read_weights(blob: bytes) -> QuantModel:
    """The QuantModel a blob describes (inverse of pack_weights)."""
    from .reference import unpack_int4
    hdr = _header(blob)
    table = _table(blob, hdr)
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

    def linear(n_out: int, n_in: int, f_in: int, f_out: int) -> QLinear:
        return QLinear(w=sec("<i2", (n_out, n_in)), mult=sec("<i2"), shift=sec("<i2"), bias=sec("<i4"),
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
        tagger=tagger, tags=tags)


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
