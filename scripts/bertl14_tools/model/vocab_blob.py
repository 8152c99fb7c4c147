"""The tokenizer section of the model data: the contents of the C array `bertl14_vocab_offsets[]`.

`build_vocab_section(vocab, do_lower_case, strip_accents, tokenize_chinese_chars) -> list[int]` returns uint32 words:

    [0, 256)        first-byte index (the seed's vocab_offsets[256]): entry b = index in the sorted word-start
                    piece table of the first piece whose first byte is >= b (bucket b ends where b+1 starts)
    [256, 256+H)    header (HDR_* below: magic, version, sizes, special ids, flags, table offsets)
    ...             tables, each at the word offset the header gives:
      start_entries  word-start pieces sorted bytewise: (pool byte offset << 8) | byte length
      start_ids      their ids: two uint16 a word (low half first) or one uint32 a word (FLAG_IDS_32)
      cont_index     256 words: the first-byte index of the continuation pieces (`##` removed)
      cont_entries, cont_ids   as above for the continuation pieces
      pool           the pieces' UTF-8 bytes, 4 a word, little-endian within the word
      classes        code point classes: sorted (first_cp << 3) | class, each run lasting until the next one
      map_keys       characters whose normalized form differs from themselves: sorted (cp << 8) | n_out
      map_offsets    index in map_out of each key's output
      map_out        output characters: cp | (kind << 29), kind = word / punct / space, bit 31 = not in vocabulary

The C tokenizer (bertl14/src/bertl14_tokenizer.c) reads exactly this; docs/tokenizer.md describes it for humans.
The Unicode tables are generated from bertl14_tools.model.tokenizer (Python's unicodedata plus HF's deltas) and are
limited to the vocabulary: a character is listed in the map only if its normalized form can be found in the
vocabulary (or it is in the vocabulary itself); otherwise the C code's default (keep it, it makes its word
[UNK]) already gives HF's result. Hangul syllables are decomposed arithmetically in C, not listed.
"""
from __future__ import annotations

import functools
import unicodedata

from . import tokenizer as T
from ..errors import UserError

MAGIC = 0x4B4F5442  # bytes "BTOK" in little-endian memory
VERSION = 1

# header word indices (relative to word 256)
(HDR_MAGIC, HDR_VERSION, HDR_WORDS, HDR_TOTAL_WORDS, HDR_VOCAB_SIZE,
 HDR_PAD_ID, HDR_UNK_ID, HDR_CLS_ID, HDR_SEP_ID, HDR_MASK_ID,
 HDR_FLAGS, HDR_UNIDATA_VERSION, HDR_HF_TOKENIZERS_VERSION, HDR_MAX_CHARS_PER_WORD,
 HDR_N_START, HDR_START_ENTRIES, HDR_START_IDS,
 HDR_N_CONT, HDR_CONT_INDEX, HDR_CONT_ENTRIES, HDR_CONT_IDS,
 HDR_POOL, HDR_POOL_BYTES,
 HDR_N_CLASSES, HDR_CLASSES,
 HDR_N_MAP, HDR_MAP_KEYS, HDR_MAP_OFFSETS, HDR_MAP_OUT, HDR_MAP_OUT_WORDS,
 HDR_CHECKSUM, HEADER_WORDS) = range(32)

FLAG_LOWER_CASE = 1
FLAG_STRIP_ACCENTS = 2
FLAG_CHINESE_CHARS = 4
FLAG_IDS_32 = 8

# code point classes (3 bits)
CLASS_WORD, CLASS_DROP, CLASS_SPACE, CLASS_PUNCT, CLASS_CJK = range(5)
# kinds of a mapped output character
KIND_WORD, KIND_PUNCT, KIND_SPACE = range(3)
OUT_UNKNOWN = 1 << 31
NO_ID = 0xFFFFFFFF

HANGUL_FIRST, HANGUL_LAST = 0xAC00, 0xD7A3


def _pack_version(text: str) -> int:
    parts = [int("".join(ch for ch in p if ch.isdigit()) or 0) for p in text.split(".")[:3]]
    parts += [0] * (3 - len(parts))
    return (parts[0] << 16) | (parts[1] << 8) | parts[2]


def _hf_tokenizers_version() -> str:
    """The tokenizers release whose tables tokenizer.py's deltas were generated from (recorded in its header)."""
    src = open(T.__file__, encoding="utf-8").read()
    marker = "from tokenizers "
    i = src.find(marker)
    return src[i + len(marker):].split()[0] if i >= 0 else "0"


def default_map(cp: int, strip: bool) -> str:
    """What the C code does for a character that has no map entry: keeps it (Hangul: NFD arithmetically)."""
    if strip and HANGUL_FIRST <= cp <= HANGUL_LAST:
        return unicodedata.normalize("NFD", chr(cp))
    return chr(cp)


def _kind(cp: int) -> int:
    if T.is_whitespace(cp):
        return KIND_SPACE
    return KIND_PUNCT if T.is_punctuation(cp) else KIND_WORD


def _effect(out: str, vocab_chars: set[str]) -> tuple:
    """What a normalized character sequence does to tokenization (unknown word characters collapse)."""
    eff = []
    for c in out:
        k = _kind(ord(c))
        item = (k, c if c in vocab_chars else None)
        if k == KIND_WORD and item[1] is None and eff and eff[-1] == item:
            continue
        eff.append(item)
    return tuple(eff)


@functools.lru_cache(maxsize=8)
def _normalization_table(lower: bool, strip: bool, chinese: bool):
    """The vocabulary-independent part of the tables, computed once per option set (a walk over every code
    point takes seconds): the class runs [(first_cp, class)] and every character whose normalized form differs
    from what the C code does without a map entry, as (cp, normalized, default)."""
    classes = []  # per run: (first_cp, class)
    candidates = []
    prev = None
    for cp in range(0x110000):
        if 0xD800 <= cp <= 0xDFFF:
            cls = CLASS_DROP  # never decoded (invalid UTF-8), any class will do
        elif T.is_removed(cp):
            cls = CLASS_DROP
        elif T.is_whitespace(cp):
            cls = CLASS_SPACE
        else:
            c = chr(cp)
            cat = unicodedata.category(c)
            if cat == "Cn" and cp not in T.HF_LOWERCASE_ADDED and cp not in T._MN_ADDED:
                out = c  # unassigned in Python's tables: kept as it is (HF's Rust too)
            else:
                out = T.map_char(c, lower, strip)
            if out == "":
                cls = CLASS_DROP
            else:
                if chinese and T.is_cjk(cp):
                    cls = CLASS_CJK
                else:
                    cls = CLASS_PUNCT if T.is_punctuation(cp) else CLASS_WORD
                default = default_map(cp, strip)
                if out != default:
                    candidates.append((cp, out, default))
        if cls != prev:
            classes.append((cp, cls))
            prev = cls
    return tuple(classes), tuple(candidates)


def _classes_and_map(vocab_chars: set[str], lower: bool, strip: bool, chinese: bool):
    classes, candidates = _normalization_table(lower, strip, chinese)
    # a map entry is needed only where the normalized form tokenizes differently from the default
    keys = [(cp, out) for cp, out, default in candidates
            if _effect(out, vocab_chars) != _effect(default, vocab_chars) or any(ch in vocab_chars for ch in default)]
    return list(classes), keys


def _bucketed(pieces: list[tuple[bytes, int]], pool: bytearray, pool_index: dict[bytes, int]):
    """Sorted entries + ids + first-byte index for one piece table; piece bytes appended to the pool once."""
    pieces = sorted(pieces)
    entries, ids, index = [], [], [0] * 256
    for b, i in pieces:
        if len(b) > 255:
            raise UserError(f"vocabulary piece of {len(b)} bytes: pieces longer than 255 bytes are not supported")
        off = pool_index.get(b)
        if off is None:
            off = pool_index[b] = len(pool)
            pool.extend(b)
        entries.append((off << 8) | len(b))
        ids.append(i)
    # index[x] = first entry whose first byte >= x
    j = 0
    for x in range(256):
        while j < len(pieces) and pieces[j][0][0] < x:
            j += 1
        index[x] = j
    return entries, ids, index


def _pack_ids(ids: list[int], ids32: bool) -> list[int]:
    if ids32:
        return list(ids)
    padded = ids + [0] * (len(ids) & 1)
    return [padded[k] | (padded[k + 1] << 16) for k in range(0, len(padded), 2)]


def build_vocab_section(vocab: dict[str, int], do_lower_case: bool = True, strip_accents: bool | None = None,
                        tokenize_chinese_chars: bool = True) -> list[int]:
    """The uint32 words of `bertl14_vocab_offsets[]` for this vocabulary and these BERT tokenizer options."""
    strip = do_lower_case if strip_accents is None else bool(strip_accents)
    for name in ("[UNK]", "[CLS]", "[SEP]"):
        if name not in vocab:
            raise UserError(f"vocabulary has no {name} token: is this a BERT vocab.txt?")
    vocab_size = max(vocab.values()) + 1
    ids32 = vocab_size > 0xFFFF

    start, cont = [], []
    vocab_chars: set[str] = set()
    for piece, i in vocab.items():
        if piece == "":
            continue  # an empty line can never match
        if piece.startswith(T.CONTINUATION_PREFIX) and len(piece) > len(T.CONTINUATION_PREFIX):
            body = piece[len(T.CONTINUATION_PREFIX):]
            cont.append((body.encode("utf-8"), i))
        else:
            body = piece
            start.append((body.encode("utf-8"), i))
        vocab_chars.update(body)
    if strip and any(unicodedata.combining(c) for c in vocab_chars):
        import warnings
        warnings.warn("the vocabulary contains combining marks that survive accent stripping: the C tokenizer does "
                      "not reorder them canonically (docs/tokenizer.md, Limits); ids may differ from HF for words "
                      "with two such marks in a row", stacklevel=2)
    pool = bytearray()
    pool_index: dict[bytes, int] = {}
    s_entries, s_ids, s_index = _bucketed(start, pool, pool_index)
    c_entries, c_ids, c_index = _bucketed(cont, pool, pool_index)
    if len(pool) >= 1 << 24:
        raise UserError("vocabulary text above 16 MiB: not supported")
    max_piece = max([e & 0xFF for e in s_entries + c_entries] or [0])

    classes, mapped = _classes_and_map(vocab_chars, do_lower_case, strip, tokenize_chinese_chars)
    map_keys, map_offsets, map_out = [], [], []
    for cp, out in mapped:
        if len(out) > 255:
            raise UserError("internal: a character maps to more than 255 characters")
        map_keys.append((cp << 8) | len(out))
        map_offsets.append(len(map_out))
        for ch in out:
            word = ord(ch) | (_kind(ord(ch)) << 29)
            if ch not in vocab_chars:
                word |= OUT_UNKNOWN
            map_out.append(word)

    flags = (FLAG_LOWER_CASE if do_lower_case else 0) | (FLAG_STRIP_ACCENTS if strip else 0) \
        | (FLAG_CHINESE_CHARS if tokenize_chinese_chars else 0) | (FLAG_IDS_32 if ids32 else 0)
    header = [0] * HEADER_WORDS
    body: list[int] = []

    def place(words: list[int]) -> int:
        off = 256 + HEADER_WORDS + len(body)
        body.extend(words)
        return off

    header[HDR_MAGIC] = MAGIC
    header[HDR_VERSION] = VERSION
    header[HDR_WORDS] = HEADER_WORDS
    header[HDR_VOCAB_SIZE] = vocab_size
    for hdr, name in zip((HDR_PAD_ID, HDR_UNK_ID, HDR_CLS_ID, HDR_SEP_ID, HDR_MASK_ID), T.SPECIAL_TOKENS):
        header[hdr] = vocab.get(name, NO_ID)
    header[HDR_FLAGS] = flags
    header[HDR_UNIDATA_VERSION] = _pack_version(unicodedata.unidata_version)
    header[HDR_HF_TOKENIZERS_VERSION] = _pack_version(_hf_tokenizers_version())
    header[HDR_MAX_CHARS_PER_WORD] = T.MAX_INPUT_CHARS_PER_WORD
    header[HDR_N_START] = len(s_entries)
    header[HDR_START_ENTRIES] = place(s_entries)
    header[HDR_START_IDS] = place(_pack_ids(s_ids, ids32))
    header[HDR_N_CONT] = len(c_entries)
    header[HDR_CONT_INDEX] = place(c_index)
    header[HDR_CONT_ENTRIES] = place(c_entries)
    header[HDR_CONT_IDS] = place(_pack_ids(c_ids, ids32))
    pool_words = [int.from_bytes(pool[k:k + 4].ljust(4, b"\0"), "little") for k in range(0, len(pool), 4)]
    header[HDR_POOL] = place(pool_words)
    header[HDR_POOL_BYTES] = len(pool)
    header[HDR_N_CLASSES] = len(classes)
    header[HDR_CLASSES] = place([(cp << 3) | cls for cp, cls in classes])
    header[HDR_N_MAP] = len(map_keys)
    header[HDR_MAP_KEYS] = place(map_keys)
    header[HDR_MAP_OFFSETS] = place(map_offsets)
    header[HDR_MAP_OUT] = place(map_out)
    header[HDR_MAP_OUT_WORDS] = len(map_out)
    header[HDR_TOTAL_WORDS] = 256 + HEADER_WORDS + len(body)
    del max_piece  # informational only; the C code needs no limit
    words = s_index + header + body
    words[256 + HDR_CHECKSUM] = section_checksum(words)
    return words


def section_checksum(words: list[int]) -> int:
    """Sum of all words except the checksum word itself, mod 2^32 (what bertl14_tokenizer_validate checks)."""
    total = sum(words) - words[256 + HDR_CHECKSUM]
    return total & 0xFFFFFFFF


def section_from_file(vocab_path, do_lower_case: bool = True, strip_accents: bool | None = None,
                      tokenize_chinese_chars: bool = True) -> list[int]:
    return build_vocab_section(T.load_vocab(vocab_path), do_lower_case, strip_accents, tokenize_chinese_chars)


def section_bytes(words: list[int]) -> bytes:
    """Little-endian bytes of the section (what model.bl14 stores and a Cortex-M sees in memory)."""
    import struct
    return struct.pack(f"<{len(words)}I", *words)


def check_section(data) -> None:
    """Every check bertl14_init makes on a vocabulary section (bertl14_tokenizer_validate; docs/model-format.md,
    "Checks"), in its order: raises blob.ModelDataError with the status bertl14_init returns. `data`: the
    section's little-endian bytes (their length is the array's size) or its uint32 words."""
    import struct

    import numpy as np

    from .blob import ERR_MODEL_CORRUPT, ERR_MODEL_FORMAT, ERR_MODEL_LAYOUT, ERR_MODEL_SIZE, ModelDataError
    raw = bytes(data) if isinstance(data, (bytes, bytearray, memoryview)) else struct.pack(f"<{len(data)}I", *data)
    if len(raw) < 4 * (256 + HEADER_WORDS) or len(raw) % 4:
        raise ModelDataError(ERR_MODEL_SIZE, f"vocabulary section of {len(raw)} bytes: shorter than its header or "
                                             "not whole words")
    w = np.frombuffer(raw, dtype="<u4")
    h = [int(x) for x in w[256:256 + HEADER_WORDS]]
    if h[HDR_MAGIC] != MAGIC or h[HDR_VERSION] != VERSION or h[HDR_WORDS] < HEADER_WORDS:
        raise ModelDataError(ERR_MODEL_FORMAT, "not a bertl14 vocabulary section of this version (magic, version)")
    total = h[HDR_TOTAL_WORDS]
    if total != len(w):
        raise ModelDataError(ERR_MODEL_SIZE, f"vocabulary section has {len(w)} words but its header says {total}")
    if (int(w.sum(dtype=np.uint64)) - 2 * h[HDR_CHECKSUM]) % 2**32:
        raise ModelDataError(ERR_MODEL_CORRUPT, "vocabulary section checksum mismatch: the data changed after "
                                                "conversion")

    def layout(what: str) -> ModelDataError:
        return ModelDataError(ERR_MODEL_LAYOUT, f"vocabulary section: {what}")

    vocab, flags = h[HDR_VOCAB_SIZE], h[HDR_FLAGS]
    first = 256 + HEADER_WORDS

    def inside(off: int, n: int) -> bool:
        return first <= off <= total and n <= total - off

    def id_words(n: int) -> int:
        return n if flags & FLAG_IDS_32 else (n + 1) // 2

    if not 1 <= h[HDR_MAX_CHARS_PER_WORD] <= T.MAX_INPUT_CHARS_PER_WORD:
        raise layout(f"{h[HDR_MAX_CHARS_PER_WORD]} characters a word (1..{T.MAX_INPUT_CHARS_PER_WORD})")
    if max(h[HDR_UNK_ID], h[HDR_CLS_ID], h[HDR_SEP_ID]) >= vocab or vocab > 0x7FFFFFFF or any(
            h[k] != NO_ID and h[k] >= vocab for k in (HDR_PAD_ID, HDR_MASK_ID)):
        raise layout("a special token's id is outside the vocabulary")
    if h[HDR_N_CLASSES] == 0 or h[HDR_POOL_BYTES] > 0xFFFFFFFC:
        raise layout("no class table, or a pool above 4 GB")
    tables = [(HDR_START_ENTRIES, h[HDR_N_START]), (HDR_START_IDS, id_words(h[HDR_N_START])), (HDR_CONT_INDEX, 256),
              (HDR_CONT_ENTRIES, h[HDR_N_CONT]), (HDR_CONT_IDS, id_words(h[HDR_N_CONT])),
              (HDR_POOL, (h[HDR_POOL_BYTES] + 3) // 4), (HDR_CLASSES, h[HDR_N_CLASSES]), (HDR_MAP_KEYS, h[HDR_N_MAP]),
              (HDR_MAP_OFFSETS, h[HDR_N_MAP]), (HDR_MAP_OUT, h[HDR_MAP_OUT_WORDS])]
    if not all(inside(h[k], n) for k, n in tables):
        raise layout("a table lies outside the section")
    pool = raw[4 * h[HDR_POOL]:4 * h[HDR_POOL] + h[HDR_POOL_BYTES]]
    for name, index_at, entries_at, ids_at, n in (
            ("word-start", 0, h[HDR_START_ENTRIES], h[HDR_START_IDS], h[HDR_N_START]),
            ("continuation", h[HDR_CONT_INDEX], h[HDR_CONT_ENTRIES], h[HDR_CONT_IDS], h[HDR_N_CONT])):
        index = [int(x) for x in w[index_at:index_at + 256]]
        if any(x > n for x in index) or any(b < a for a, b in zip(index, index[1:])):
            raise layout(f"the {name} pieces' first-byte index")
        entries = [int(x) for x in w[entries_at:entries_at + n]]
        if flags & FLAG_IDS_32:
            ids = [int(x) for x in w[ids_at:ids_at + n]]
        else:
            ids = [int(x) >> (16 * (i & 1)) & 0xFFFF for i, x in enumerate(np.repeat(w[ids_at:ids_at + id_words(n)], 2))]
        prev = None
        for i, e in enumerate(entries):
            off, length = e >> 8, e & 0xFF
            if length == 0 or off > h[HDR_POOL_BYTES] or length > h[HDR_POOL_BYTES] - off:
                raise layout(f"{name} piece {i} lies outside the pool")
            piece = pool[off:off + length]
            b = piece[0]
            if i < index[b] or (b < 255 and i >= index[b + 1]) or ids[i] >= vocab or (prev is not None and prev >= piece):
                raise layout(f"{name} piece {i} is out of order, outside its bucket or has an id outside the "
                             "vocabulary")
            prev = piece
    classes = [int(x) >> 3 for x in w[h[HDR_CLASSES]:h[HDR_CLASSES] + h[HDR_N_CLASSES]]]
    if classes[0] != 0 or any(b <= a for a, b in zip(classes, classes[1:])):
        raise layout("the class runs do not start at 0 and increase")
    keys = w[h[HDR_MAP_KEYS]:h[HDR_MAP_KEYS] + h[HDR_N_MAP]] & 0xFF
    offs = w[h[HDR_MAP_OFFSETS]:h[HDR_MAP_OFFSETS] + h[HDR_N_MAP]]
    if ((offs > h[HDR_MAP_OUT_WORDS]) | (keys.astype(np.int64) > h[HDR_MAP_OUT_WORDS] - offs.astype(np.int64))).any():
        raise layout("a character's mapped output lies outside its table")
