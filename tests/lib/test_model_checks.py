"""bertl14_init's checks of the model data (docs/model-format.md, "Checks"), on the C library built with ASan +
UBSan for both kernel sets (tests/lib/model_checks.c reads each blob into a heap buffer of exactly its size, so any
read past the data is a sanitizer report and fails the run): every section of a weights blob truncated, cut with its
header patched, bit-flipped, and its table entry changed; every header field; every parameter at and beyond the
edges of its range; every table of the vocabulary section. The expected status of each case is reasoned from the
order of the checks (size, format, checksum, dimensions, layout, ranges), and blob.check_weights (weights)
and vocab_blob.check_section (vocabulary) must refuse the same data with the same status. Blobs at the edges of the
ranges then run a sentence through tokenize, encode, classify and tag under the sanitizers."""
from __future__ import annotations

import struct
import subprocess
from pathlib import Path

import numpy as np
import pytest
from randmodel import random_quant_model

from bertl14_tools import cbuild
from bertl14_tools.reference import cengine
from bertl14_tools.model import workbuf
from bertl14_tools.model import blob as MF
from bertl14_tools.model import vocab_blob as VB
from bertl14_tools.errors import UserError

HERE = Path(__file__).parent
OK, FORMAT, SIZE, CORRUPT = "BERTL14_OK", MF.ERR_MODEL_FORMAT, MF.ERR_MODEL_SIZE, MF.ERR_MODEL_CORRUPT
LAYOUT, RANGE = MF.ERR_MODEL_LAYOUT, MF.ERR_MODEL_RANGE
MAX_SEQ = 16

# header words (docs/model-format.md, "Header")
(W_MAGIC, W_VERSION, W_LAYERS, W_HIDDEN, W_HEADS_TOTAL, W_HEADS_KEPT, W_HEAD_DIM, W_INTER, W_VOCAB, W_MAXPOS,
 W_LABELS, W_FLAGS, W_TOTAL, W_SECTIONS, W_TABLE, W_TAGS) = range(16)


def _vocab_words() -> list[int]:
    """A 300-piece section with every table filled: word-start and continuation pieces, accents and CJK (map and
    class tables), the special tokens."""
    pieces = ["[PAD]", "[UNK]", "[CLS]", "[SEP]", "[MASK]", "turn", "on", "off", "the", "light", "é", "中", "文",
              "a", "b", "!", "##s", "##ing", "##ed", "##é"]
    pieces += [f"w{i}" for i in range(300 - len(pieces))]
    return VB.build_vocab_section({p: i for i, p in enumerate(pieces)}, True, None, True)


def _model(**kw):
    args = dict(seed=11, layers=2, hidden=32, heads_total=4, heads_kept=4, intermediate=64, vocab=300,
                max_position=MAX_SEQ, labels=5, tags=5, smoothing=True)
    return random_quant_model(**dict(args, **kw))


def _table(blob: bytes) -> list[tuple[int, int]]:
    n = struct.unpack_from("<I", blob, 4 * W_SECTIONS)[0]
    t = struct.unpack_from(f"<{2 * n}I", blob, 64)
    return [(t[2 * i], t[2 * i + 1]) for i in range(n)]


def _put(blob: bytes, offset: int, fmt: str, value, reseal: bool = True) -> bytes:
    b = bytearray(blob)
    struct.pack_into(fmt, b, offset, value)
    return MF.reseal(bytes(b)) if reseal else bytes(b)


def _header(blob: bytes, word: int, value: int, reseal: bool = True) -> bytes:
    return _put(blob, 4 * word, "<I", value, reseal)


def _flip(data: bytes, byte: int, bit: int) -> bytes:
    b = bytearray(data)
    b[byte] ^= 1 << bit
    return bytes(b)


def _vocab_bytes(words) -> bytes:
    return np.asarray(words, dtype="<u4").tobytes()


def _revocab(words: list[int]) -> list[int]:
    """The section with its checksum word recomputed (a change that only the structural checks can see)."""
    w = list(words)
    w[256 + VB.HDR_CHECKSUM] = VB.section_checksum(w)
    return w


# ---- the cases: name -> (weights, vocab words or None for the valid section, expected status, why) -------------

def weights_cases(blob: bytes) -> dict[str, tuple[bytes, None, str, str]]:
    cases: dict[str, tuple] = {}
    names = MF.section_names(struct.unpack_from("<I", blob, 8)[0], tagger=True)
    total = len(blob)

    def add(name, w, expect, why):
        cases[name] = (w, None, expect, why)

    add("valid", blob, OK, "the packer's blob")
    # sizes
    add("empty", b"", SIZE, "shorter than a header")
    add("63 bytes", blob[:63], SIZE, "shorter than a header")
    add("cut by 56 bytes", blob[:-56], SIZE, "total_bytes says 56 bytes more than the array has")
    add("4 bytes appended", blob + b"\0" * 4, SIZE, "the array is 4 bytes longer than total_bytes")
    add("cut in the table", blob[:64 + 8 * 3 + 2], SIZE, "total_bytes says more than the array has")
    add("checksum flipped", _flip(blob, total - 1, 7), CORRUPT, "the last word is no longer the sum of the others")
    # header fields; 'resealed' = checksum recomputed after the change, so the later checks are reached
    add("magic", _header(blob, W_MAGIC, 0x34314C58, reseal=False), FORMAT, "magic is checked before the checksum")
    add("version 1", _header(blob, W_VERSION, 1, reseal=False), FORMAT, "a version-1 blob has no checksum word")
    add("total_bytes + 4", _header(blob, W_TOTAL, total + 4, reseal=False), SIZE, "not the array's size")
    flags = struct.unpack_from("<I", blob, 4 * W_FLAGS)[0]
    add("unknown flag", _header(blob, W_FLAGS, flags | 0x40, reseal=False), FORMAT, "flags are checked before "
        "the checksum; bit 6 has no meaning")
    add("INT8 weights flag, resealed", _header(blob, W_FLAGS, flags | MF.FLAG_WEIGHTS_INT8), FORMAT,
        "the library is built for INT16 weights")
    add("per-tensor flag, resealed", _header(blob, W_FLAGS, flags | MF.FLAG_PER_TENSOR), FORMAT,
        "per-tensor activation scales run in the Python reference only")
    add("smoothing flag, not resealed", _header(blob, W_FLAGS, flags ^ MF.FLAG_SMOOTHING, reseal=False), CORRUPT,
        "any change of a word the checksum covers")
    add("smoothing flag, resealed", _header(blob, W_FLAGS, flags ^ MF.FLAG_SMOOTHING), OK,
        "informational: the smoothing factors are stored either way")
    add("INT4 flag, resealed", _header(blob, W_FLAGS, flags ^ MF.FLAG_INT4), LAYOUT,
        "word_q then needs V*H/2 bytes, it has V*H")
    add("classifier flag, resealed", _header(blob, W_FLAGS, flags ^ MF.FLAG_CLASSIFIER), LAYOUT,
        "the flag and num_labels disagree")
    add("tagger flag, resealed", _header(blob, W_FLAGS, flags ^ MF.FLAG_TAGGER), LAYOUT,
        "the flag and num_tags disagree")
    for word, value, expect, why in [
        (W_LAYERS, 3, LAYOUT, "num_sections is that of 2 layers"), (W_LAYERS, 0, RANGE, "at least one layer"),
        (W_LAYERS, 65, RANGE, "at most 64 layers"),
        (W_HIDDEN, 33, RANGE, "hidden must be even (INT4 rows)"), (W_HIDDEN, 34, LAYOUT, "every H-sized section"),
        (W_HIDDEN, 4098, RANGE, "at most 4096"),
        (W_HEADS_TOTAL, 3, RANGE, "fewer heads than kept"), (W_HEADS_TOTAL, 12, OK, "informational"),
        (W_HEADS_KEPT, 2, LAYOUT, "q/k/v/o sections have 4 heads"), (W_HEADS_KEPT, 0, RANGE, "at least one head"),
        (W_HEAD_DIM, 129, RANGE, "head_dim at most 128"), (W_HEAD_DIM, 4, LAYOUT, "q/k/v/o sections have d = 8"),
        (W_INTER, 0, RANGE, "at least 1"), (W_INTER, 16385, RANGE, "at most 16384"),
        (W_INTER, 65, LAYOUT, "the FFN sections have I = 64"),
        (W_VOCAB, 0, RANGE, "at least one token"), (W_VOCAB, 301, LAYOUT, "word_q has 300 rows"),
        (W_VOCAB, 0x80000000, RANGE, "token ids are int32"),
        (W_MAXPOS, 0, RANGE, "at least one position"), (W_MAXPOS, 17, LAYOUT, "pos_q has 16 rows"),
        (W_LABELS, 4, LAYOUT, "cls has 5 rows and 5 names"), (W_LABELS, 0, LAYOUT, "the classifier flag is set"),
        (W_LABELS, 4097, RANGE, "at most 4096 labels"),
        (W_SECTIONS, len(names) + 1, LAYOUT, "not 7 + 32 L + 9 + 5"), (W_TABLE, 68, LAYOUT, "the table is at 64"),
        (W_TAGS, 4, LAYOUT, "tag has 5 rows and 5 names"), (W_TAGS, 0, LAYOUT, "the tagger flag is set"),
        (W_TAGS, 257, RANGE, "tag ids are uint8")]:
        add(f"header word {word} = {value}, resealed", _header(blob, word, value), expect, why)
    # every section: truncated, cut with the header patched, a bit flipped, its table entry changed
    table = _table(blob)
    for s, (name, (off, n)) in enumerate(zip(names, table)):
        cut = off + n // 2
        add(f"{name}: cut", blob[:cut], SIZE, "the array ends inside the section; total_bytes is the full length")
        c4 = cut & ~3
        patched = _header(blob[:c4] + b"\0" * 4, W_TOTAL, c4 + 4)      # a self-consistent shorter blob
        add(f"{name}: cut, header patched", patched, LAYOUT, "size and checksum agree, but the section ends past "
            "the data")
        add(f"{name}: bit flipped", _flip(blob, cut, s % 8), CORRUPT, "a single bit changes the word sum")
        entry = 64 + 8 * s
        add(f"{name}: size off by one", _put(blob, entry + 4, "<I", n ^ 1), LAYOUT,
            "not the size the dimensions need (names: a NUL more or a name left open)")
        add(f"{name}: moved by 4 bytes", _put(blob, entry, "<I", off ^ 4), LAYOUT,
            "it overlaps its neighbour or the table, or ends past the data")
    return cases


def _set(blob: bytes, names: list[str], section: str, index: int, fmt: str, value) -> bytes:
    off, _ = _table(blob)[names.index(section)]
    return _put(blob, off + struct.calcsize(fmt) * index, fmt, value)


def range_cases(blob: bytes) -> dict[str, tuple[bytes, None, str, str]]:
    """Every parameter at the edges of its range (accepted, and then run under the sanitizers) and just beyond
    (refused with BERTL14_ERR_MODEL_RANGE)."""
    names = MF.section_names(2, tagger=True)
    emb = list(struct.unpack_from("<8i", blob, _table(blob)[names.index("emb_params")][0]))
    p0 = list(struct.unpack_from("<16i", blob, _table(blob)[names.index("layer 0 params")][0]))
    cases: dict[str, tuple] = {}

    def emb_with(**kw) -> bytes:
        v = list(emb)
        for k, x in kw.items():
            v[["f_e", "word_shift", "pos_shift", "f_g", "f_out", "eps_q"].index(k)] = x
        off = _table(blob)[names.index("emb_params")][0]
        return MF.reseal(blob[:off] + struct.pack("<8i", *v) + blob[off + 32:])

    def layer_with(b: bytes = blob, **kw) -> bytes:
        v = list(p0)
        keys = ["f_q", "f_k", "f_v", "f_r1", "f_up", "f_r2", "ln1_f_g", "ln1_f_out", "ln1_eps", "ln2_f_g",
                "ln2_f_out", "ln2_eps"]
        for k, x in kw.items():
            v[keys.index(k)] = x
        off = _table(b)[names.index("layer 0 params")][0]
        return MF.reseal(b[:off] + struct.pack("<16i", *v) + b[off + 64:])

    def edge(name, good, bad, why):
        cases[f"{name}: at the edge"] = (good, None, OK, why)
        cases[f"{name}: beyond"] = (bad, None, RANGE, why)

    edge("word_shift -7", emb_with(word_shift=-7), emb_with(word_shift=-8), "|w * scale| < 2^23; << 7 and the "
         "sum of two stay int32")
    edge("pos_shift 62", emb_with(pos_shift=62), emb_with(pos_shift=63), "rsr by at most 62 in int64")
    edge("f_e 31", emb_with(f_e=31), emb_with(f_e=32), "every stored exponent in -31..31")
    edge("embedding eps_q 1", emb_with(eps_q=1), emb_with(eps_q=0), "variance + eps must be >= 1 (LUT index)")
    cases["embedding eps_q 2^31 - 1"] = (emb_with(eps_q=2**31 - 1), None, OK, "the largest int32")
    # LayerNorm shift 12 + f_g - f_out in -3..62 (the layer-0 residual shift F_h + 20 - f_r1 stays in range)
    edge("LN shift 62", emb_with(f_g=31, f_out=-19), emb_with(f_g=31, f_out=-20), "rsr(n * gamma) in int64")
    edge("LN shift -3", emb_with(f_g=-31, f_out=-16), emb_with(f_g=-31, f_out=-15), "|n * gamma| < 2^59: << 3 fits")
    edge("f_up 12", layer_with(f_up=12), layer_with(f_up=13), "x << (12 - f_up) in GELU")
    edge("f_up 0", layer_with(f_up=0), layer_with(f_up=-1), "x << (12 - f_up) exact in int32")
    edge("score shift 62", layer_with(f_q=28, f_k=28), layer_with(f_q=28, f_k=29), "f_q + f_k + 6: rsr in int64")
    edge("score shift -7", layer_with(f_q=-6, f_k=-7), layer_with(f_q=-6, f_k=-8), "|acc * sq * sk| < 2^55")
    edge("f_v 31", layer_with(f_v=31), layer_with(f_v=-32), "every stored exponent in -31..31")
    # residual 1 shift F_h + 20 - f_r1 (F_h = the embedding LN's f_out), residual 2 ln1.f_out + 20 - f_r2
    edge("residual 1 shift 62", layer_with(emb_with(f_out=11), f_r1=-31),
         layer_with(emb_with(f_out=12), f_r1=-31), "rsr of |h * s * u| < 2^40 in int64")
    edge("residual 1 shift -22", layer_with(emb_with(f_out=-11), f_r1=31),
         layer_with(emb_with(f_out=-12), f_r1=31), "|h * s * u| < 2^40: << 22 fits int64")
    edge("residual 2 shift 62", layer_with(ln1_f_out=11, ln1_f_g=11, f_r2=-31),
         layer_with(ln1_f_out=12, ln1_f_g=12, f_r2=-31), "rsr of |h * s * u| < 2^40 in int64")
    edge("LN1 eps_q 1", layer_with(ln1_eps=1), layer_with(ln1_eps=0), "variance + eps must be >= 1")
    edge("LN2 exponent 31", layer_with(ln2_f_g=31, ln2_f_out=31), layer_with(ln2_f_g=32, ln2_f_out=31),
         "every stored exponent in -31..31")
    for lin in ("layer 0 q", "layer 1 o2", "pooler", "cls", "tag"):
        edge(f"{lin}.mult 2^14", _set(blob, names, lin + ".mult", 0, "<h", 1 << 14),
             _set(blob, names, lin + ".mult", 0, "<h", (1 << 14) - 1), "requantization multiplier in [2^14, 2^15)")
        edge(f"{lin}.shift 62", _set(blob, names, lin + ".shift", 0, "<h", 62),
             _set(blob, names, lin + ".shift", 0, "<h", 63), "requantization shift in 1..62")
        edge(f"{lin}.shift 1", _set(blob, names, lin + ".shift", 0, "<h", 1),
             _set(blob, names, lin + ".shift", 0, "<h", 0), "requantization shift in 1..62")
    cases["layer 0 q.mult 2^15 - 1"] = (_set(blob, names, "layer 0 q.mult", 0, "<h", 32767), None, OK,
                                       "the largest multiplier")
    for name in ("layer 0 res1_u", "layer 1 res2_u", "layer 0 gelu_ism"):
        edge(f"{name} 1", _set(blob, names, name, 3, "<H", 1), _set(blob, names, name, 3, "<H", 0),
             "smoothing factors in 1..65535")
        cases[f"{name} 65535"] = (_set(blob, names, name, 3, "<H", 65535), None, OK, "the largest factor")
    # names: exactly num_labels NUL-terminated UTF-8 names
    lab_off, lab_n = _table(blob)[names.index("labels")]
    cases["labels: invalid UTF-8"] = (_put(blob, lab_off + 1, "<B", 0xFF), None, LAYOUT, "names are UTF-8")
    cases["labels: a NUL more"] = (_put(blob, lab_off + 1, "<B", 0), None, LAYOUT, "six names for five labels")
    cases["labels: last NUL dropped"] = (_put(blob, lab_off + lab_n - 1, "<B", 0x41), None, LAYOUT,
                                         "an open name would be read past the section")
    return cases


def row_sum_cases() -> dict[str, tuple[bytes, None, str, str]]:
    """127 * sum |w| of a row below 2^31 (the int32 accumulator): a wide FFN-down row filled to exactly the bound,
    and one more."""
    blob = MF.pack_weights(_model(intermediate=640))
    names = MF.section_names(2, tagger=True)
    off, _ = _table(blob)[names.index("layer 0 o2.w")]
    row = np.zeros(640, np.int16)
    full, rest = divmod(MF.ROW_ABS_SUM_MAX, 32767)
    row[:full] = 32767
    row[full] = -rest                                    # the sign does not matter: |w|
    at = MF.reseal(blob[:off] + row.astype("<i2").tobytes() + blob[off + 2 * 640:])
    row[full] -= 1
    over = MF.reseal(blob[:off] + row.astype("<i2").tobytes() + blob[off + 2 * 640:])
    return {"o2 row at the accumulator bound": (at, None, OK, "127 * 16909320 < 2^31"),
            "o2 row one past the bound": (over, None, RANGE, "127 * 16909321 >= 2^31")}


def vocab_cases(words: list[int]) -> dict[str, tuple[None, list[int] | bytes, str, str]]:
    cases: dict[str, tuple] = {}
    h = words[256:256 + VB.HEADER_WORDS]
    total = len(words)

    def add(name, v, expect, why):
        cases[name] = (None, v, expect, why)

    raw = _vocab_bytes(words)
    add("vocab: cut by 4 bytes", raw[:-4], SIZE, "HDR_TOTAL_WORDS says one word more")
    add("vocab: shorter than its header", raw[:1000], SIZE, "the header is not there")
    add("vocab: 4 bytes appended", raw + b"\0" * 4, SIZE, "one word more than HDR_TOTAL_WORDS")
    add("vocab: 2 bytes cut", raw[:-2], SIZE, "not a whole number of words")
    regions = {"first-byte index": (0, 256), "header": (256, VB.HEADER_WORDS),
               "start entries": (h[VB.HDR_START_ENTRIES], h[VB.HDR_N_START]),
               "start ids": (h[VB.HDR_START_IDS], (h[VB.HDR_N_START] + 1) // 2),
               "continuation index": (h[VB.HDR_CONT_INDEX], 256),
               "continuation entries": (h[VB.HDR_CONT_ENTRIES], h[VB.HDR_N_CONT]),
               "continuation ids": (h[VB.HDR_CONT_IDS], (h[VB.HDR_N_CONT] + 1) // 2),
               "pool": (h[VB.HDR_POOL], (h[VB.HDR_POOL_BYTES] + 3) // 4),
               "classes": (h[VB.HDR_CLASSES], h[VB.HDR_N_CLASSES]),
               "map keys": (h[VB.HDR_MAP_KEYS], h[VB.HDR_N_MAP]),
               "map offsets": (h[VB.HDR_MAP_OFFSETS], h[VB.HDR_N_MAP]),
               "map output": (h[VB.HDR_MAP_OUT], h[VB.HDR_MAP_OUT_WORDS])}
    for i, (name, (off, n)) in enumerate(regions.items()):
        assert n > 0, name
        w = list(words)
        w[off + n // 2] ^= 1 << (3 + i)
        add(f"vocab {name}: bit flipped", w, CORRUPT, "a single bit changes the word sum")
        add(f"vocab {name}: cut", raw[:4 * (off + n // 2)], SIZE, "the section ends inside the table")

    def hdr(k, v):
        w = list(words)
        w[256 + k] = v
        return _revocab(w)

    add("vocab header: magic", hdr(VB.HDR_MAGIC, 0), FORMAT, "not a vocabulary section")
    add("vocab header: version 2", hdr(VB.HDR_VERSION, 2), FORMAT, "a version this library does not read")
    add("vocab header: total words + 1", hdr(VB.HDR_TOTAL_WORDS, total + 1), SIZE, "not the array's size")
    add("vocab header: start entries outside", hdr(VB.HDR_START_ENTRIES, total), LAYOUT, "the table ends past the "
        "section")
    add("vocab header: pool past the section", hdr(VB.HDR_POOL_BYTES, h[VB.HDR_POOL_BYTES] + 4 * total), LAYOUT,
        "the pool ends past the section")
    add("vocab header: unk id = vocab size", hdr(VB.HDR_UNK_ID, h[VB.HDR_VOCAB_SIZE]), LAYOUT, "id outside the "
        "vocabulary")
    add("vocab header: mask id = vocab size", hdr(VB.HDR_MASK_ID, h[VB.HDR_VOCAB_SIZE]), LAYOUT, "id outside the "
        "vocabulary (and not 'none')")
    add("vocab header: no mask token", hdr(VB.HDR_MASK_ID, VB.NO_ID), OK, "an absent special token")
    add("vocab header: 101 characters a word", hdr(VB.HDR_MAX_CHARS_PER_WORD, 101), LAYOUT, "the tokenizer's word "
        "buffer holds 100")
    s0 = h[VB.HDR_START_ENTRIES]
    w = list(words)
    w[s0 + 10], w[s0 + 11] = w[s0 + 11], w[s0 + 10]
    add("vocab start entries: two swapped", _revocab(w), LAYOUT, "the binary searches need bytewise order")
    w = list(words)
    w[s0 + 10] &= ~0xFF
    add("vocab start entries: empty piece", _revocab(w), LAYOUT, "a piece has at least one byte")
    w = list(words)
    w[h[VB.HDR_START_IDS]] = (w[h[VB.HDR_START_IDS]] & 0xFFFF0000) | 300
    add("vocab start ids: id = vocab size", _revocab(w), LAYOUT, "a piece's id must be a row of word_q")
    w = list(words)
    w[100], w[101] = w[101] + 1, w[100]
    add("vocab first-byte index: decreasing", _revocab(w), LAYOUT, "bucket starts never decrease")
    w = list(words)
    w[h[VB.HDR_CLASSES]] |= 1 << 3
    add("vocab classes: first run not at 0", _revocab(w), LAYOUT, "every code point has a class")
    w = list(words)
    w[h[VB.HDR_MAP_OFFSETS]] = h[VB.HDR_MAP_OUT_WORDS]
    add("vocab map offsets: past the output table", _revocab(w), LAYOUT, "a key's output inside the table")
    return cases


# ---- running them ------------------------------------------------------------------------------------------------

@pytest.fixture(scope="module", params=cbuild.KERNEL_SETS)
def driver(request):
    """model_checks.c with the library under ASan + UBSan, for each kernel set (the DSP kernels on the host's
    emulation of the intrinsics): the checks are the same code, the sentence after them runs other kernels."""
    try:
        return cbuild.build_executable([HERE / "model_checks.c"], "model_checks", request.param,
                                       sanitize=("address", "undefined"))
    except UserError as exc:
        pytest.skip(f"no sanitizer build: {exc}")


def _run_cases(driver: Path, tmp: Path, cases: dict, valid_w: bytes, valid_v: list[int]) -> dict:
    tmp.mkdir(parents=True, exist_ok=True)
    (tmp / "w.bin").write_bytes(valid_w)
    (tmp / "v.bin").write_bytes(_vocab_bytes(valid_v))
    args, order = [], []
    for i, (name, (w, v, _e, _why)) in enumerate(cases.items()):
        wp, vp = tmp / "w.bin", tmp / "v.bin"
        if w is not None:
            wp = tmp / f"w{i}.bin"
            wp.write_bytes(w)
        if v is not None:
            vp = tmp / f"v{i}.bin"
            vp.write_bytes(v if isinstance(v, bytes) else _vocab_bytes(v))
        args += [str(wp), str(vp)]
        order.append(name)
    r = subprocess.run([str(driver), str(MAX_SEQ), *args], capture_output=True, text=True, timeout=600,
                       env={"ASAN_OPTIONS": "detect_leaks=0:abort_on_error=1", "UBSAN_OPTIONS": "print_stacktrace=1"})
    if r.returncode != 0:                                                 # a sanitizer report ends the run
        last = [ln for ln in r.stderr.splitlines() if ln.startswith("case ")][-1:]
        name = order[int(last[0].split()[1].rstrip(":"))] if last else "?"
        pytest.fail(f"model_checks stopped in case {name!r}:\n{r.stderr[-4000:]}")
    lines = r.stdout.splitlines()
    assert len(lines) == len(order), r.stdout[-2000:] + r.stderr[-2000:]
    out = {}
    for name, line in zip(order, lines):
        st, need, run = line.split()
        out[name] = (cengine.status_name(int(st)), int(need), run)
    return out


@pytest.fixture(scope="module")
def results(driver, tmp_path_factory):
    blob = MF.pack_weights(_model())
    words = _vocab_words()
    cases = {**weights_cases(blob), **range_cases(blob), **row_sum_cases(), **vocab_cases(words)}
    return cases, _run_cases(driver, tmp_path_factory.mktemp("cases"), cases, blob, words)


def _python_status(w: bytes | None, v) -> str:
    """blob.check_weights (or, for a vocabulary case, vocab_blob.check_section) on the same bytes."""
    try:
        if w is not None:
            MF.check_weights(w, c_library=True, weights="int16")     # the INT16 library these cases run on
        else:
            VB.check_section(v if isinstance(v, bytes) else _vocab_bytes(v))
    except MF.ModelDataError as exc:
        return exc.status
    return OK


def _case_names():
    blob = MF.pack_weights(_model())
    return list({**weights_cases(blob), **range_cases(blob), **row_sum_cases(),
                 **vocab_cases(_vocab_words())})


@pytest.mark.parametrize("case", _case_names())
def test_model_data_case(results, case):
    cases, got = results
    w, v, expect, why = cases[case]
    status, need, run = got[case]
    assert status == expect, f"{case}: bertl14_init answered {status}, expected {expect} ({why})"
    assert _python_status(w, v) == expect, f"{case}: the Python check disagrees with bertl14_init"
    if w is not None:
        assert need == (workbuf.required_work_buffer_size(w, MAX_SEQ) if expect == OK else 0)
    if expect == OK:
        assert run == "ok", f"{case}: accepted, but a sentence then failed with status {run}"
        assert need > 0
    else:
        assert run == "-"


def test_every_section_has_its_cases():
    """One truncation, one patched cut, one bit flip and two table changes for each of the 7 + 32 L + 9 + 5
    sections, and a flip and a cut in each table of the vocabulary section."""
    names = _case_names()
    sections = MF.section_names(2, tagger=True)
    assert len(sections) == 7 + 64 + 9 + 5
    for s in sections:
        for kind in ("cut", "cut, header patched", "bit flipped", "size off by one", "moved by 4 bytes"):
            assert f"{s}: {kind}" in names
    assert sum(n.startswith("vocab ") and n.endswith(": bit flipped") for n in names) == 12


def test_packer_refuses_what_init_refuses():
    qm = _model()
    qm.layers[0].f_up = 13
    with pytest.raises(UserError, match="cannot run on the bertl14 C library: .*f_up 13"):
        MF.pack_weights(qm)


def test_python_reader_names_the_problem():
    blob = MF.pack_weights(_model())
    with pytest.raises(MF.ModelDataError, match="section layer 0 q.mult has 66 bytes, the dimensions need 64") as e:
        MF.read_weights(_put(blob, 64 + 8 * 9 + 4, "<I", 66))
    assert e.value.status == LAYOUT
    with pytest.raises(MF.ModelDataError, match="truncated") as e:
        MF.read_weights(blob[:-56])
    assert e.value.status == SIZE
