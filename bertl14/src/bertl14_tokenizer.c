/**
 * @file bertl14_tokenizer.c
 * @brief BERT BasicTokenizer + WordPiece in C, id for id the same as Hugging Face's BertTokenizer.
 *
 * One pass over the UTF-8 input: decode a character, classify it with the section's class table (removed,
 * whitespace, punctuation, CJK ideograph or word character), map it (lower case, accents stripped) with the
 * section's map table, collect word characters into a small buffer and run WordPiece on each finished word.
 * WordPiece finds the longest vocabulary piece at a position by narrowing the first-byte bucket one byte at a
 * time (two binary searches a byte), so a word of n bytes costs O(n * longest piece * log bucket) and the whole
 * text is linear in its length. Words over 100 characters are [UNK] without being looked up (as in HF).
 * Each token can also get its byte span in the input (as HF's offsets): a word character remembers where its
 * input character starts; a piece spans from its first character's input character to the end of its last
 * character's input character (characters the normalizer removes belong to no token).
 * Layout of the section: scripts/bertl14_tools/model/vocab_blob.py and docs/tokenizer.md.
 */
/* Cold code: compiled for size (bertl14/sources.cmake). */
#include "bertl14_tokenizer.h"

#include <stddef.h>

#define OUT_UNKNOWN 0x80000000u /* mapped character not in any piece: its word becomes [UNK] */
#define NO_ID 0xFFFFFFFFu

/* one table of pieces: word-start pieces, or continuation pieces with "##" removed */
typedef struct {
    const uint32_t *index;   /* 256 first-byte bucket starts */
    const uint32_t *entries; /* (pool byte offset << 8) | byte length, sorted bytewise */
    const uint32_t *ids;     /* packed ids */
    uint32_t n;
} piece_table_t;

typedef struct {
    const uint32_t *hdr;
    piece_table_t start, cont;
    const uint32_t *pool;
    const uint32_t *classes;
    uint32_t n_classes;
    const uint32_t *map_keys, *map_offsets, *map_out;
    uint32_t n_map, map_out_words;
    uint32_t flags, max_chars, unk_id;

    int32_t *ids;     /* output */
    uint16_t *offsets; /* output: start, end byte of each id (NULL: not wanted) */
    const uint8_t *text;
    uint32_t limit;   /* positions 1 .. limit-1 take pieces; limit = max_tokens - 1 is [SEP]'s last place */
    uint32_t n;       /* next position (keeps counting past limit to detect overflow) */

    uint8_t word[BERTL14_TOKENIZER_MAX_WORD_CHARS * 4u]; /* the current word, normalized, UTF-8 */
    uint32_t word_bytes, word_chars;
    int word_bad;     /* holds a character no piece contains, or is too long */
    uint32_t src_start, src_end;   /* input bytes of the character being normalized (capped at 65535) */
    uint32_t word_start, word_end; /* input bytes the current word covers (its first and last characters') */
    uint16_t char_src[BERTL14_TOKENIZER_MAX_WORD_CHARS]; /* input start of each stored word character */
} tok_t;

static const char *const k_special_text[5] = {"[PAD]", "[UNK]", "[CLS]", "[SEP]", "[MASK]"};

/* ---- section access ------------------------------------------------------------------------------------ */

static const uint32_t *header_of(const uint32_t *section)
{
    const uint32_t *hdr = section + BERTL14_VOCAB_INDEX_WORDS;
    if (hdr[HDR_MAGIC] != BERTL14_VOCAB_MAGIC || hdr[HDR_VERSION] != BERTL14_VOCAB_VERSION ||
        hdr[HDR_WORDS] < (uint32_t)HEADER_WORDS) {
        return NULL;
    }
    return hdr;
}

/* true when [offset, offset + words) lies inside the section (no uint32 wrap) */
static int in_section(const uint32_t *hdr, uint32_t offset, uint32_t words)
{
    uint32_t total = hdr[HDR_TOTAL_WORDS];
    return offset >= BERTL14_VOCAB_INDEX_WORDS + (uint32_t)HEADER_WORDS && offset <= total && words <= total - offset;
}

static uint32_t id_words(uint32_t n, uint32_t flags)
{
    return (flags & FLAG_IDS_32) ? n : (n + 1u) / 2u;
}

/* header sanity: every table inside the section, required ids inside the vocabulary */
static int header_ok(const uint32_t *hdr)
{
    uint32_t vocab = hdr[HDR_VOCAB_SIZE], flags = hdr[HDR_FLAGS];
    if (hdr[HDR_MAX_CHARS_PER_WORD] == 0u || hdr[HDR_MAX_CHARS_PER_WORD] > BERTL14_TOKENIZER_MAX_WORD_CHARS) {
        return 0;
    }
    if (hdr[HDR_UNK_ID] >= vocab || hdr[HDR_CLS_ID] >= vocab || hdr[HDR_SEP_ID] >= vocab || vocab > 0x7FFFFFFFu) {
        return 0;
    }
    if (hdr[HDR_N_CLASSES] == 0u || hdr[HDR_POOL_BYTES] > 0xFFFFFFFCu) {
        return 0;
    }
    return in_section(hdr, hdr[HDR_START_ENTRIES], hdr[HDR_N_START]) &&
           in_section(hdr, hdr[HDR_START_IDS], id_words(hdr[HDR_N_START], flags)) &&
           in_section(hdr, hdr[HDR_CONT_INDEX], 256u) &&
           in_section(hdr, hdr[HDR_CONT_ENTRIES], hdr[HDR_N_CONT]) &&
           in_section(hdr, hdr[HDR_CONT_IDS], id_words(hdr[HDR_N_CONT], flags)) &&
           in_section(hdr, hdr[HDR_POOL], (hdr[HDR_POOL_BYTES] + 3u) / 4u) &&
           in_section(hdr, hdr[HDR_CLASSES], hdr[HDR_N_CLASSES]) &&
           in_section(hdr, hdr[HDR_MAP_KEYS], hdr[HDR_N_MAP]) &&
           in_section(hdr, hdr[HDR_MAP_OFFSETS], hdr[HDR_N_MAP]) &&
           in_section(hdr, hdr[HDR_MAP_OUT], hdr[HDR_MAP_OUT_WORDS]);
}

static uint8_t pool_byte(const uint32_t *pool, uint32_t i)
{
    return (uint8_t)(pool[i >> 2] >> ((i & 3u) * 8u)); /* little-endian within the word, any host order */
}

static uint32_t piece_id(const piece_table_t *t, uint32_t i, uint32_t flags)
{
    if (flags & FLAG_IDS_32) {
        return t->ids[i];
    }
    return (t->ids[i >> 1] >> ((i & 1u) * 16u)) & 0xFFFFu;
}

/* ---- UTF-8 ------------------------------------------------------------------------------------------------ */

static uint32_t utf8_encode(uint32_t cp, uint8_t *out)
{
    if (cp < 0x80u) { out[0] = (uint8_t)cp; return 1u; }
    if (cp < 0x800u) {
        out[0] = (uint8_t)(0xC0u | (cp >> 6)); out[1] = (uint8_t)(0x80u | (cp & 0x3Fu)); return 2u;
    }
    if (cp < 0x10000u) {
        out[0] = (uint8_t)(0xE0u | (cp >> 12)); out[1] = (uint8_t)(0x80u | ((cp >> 6) & 0x3Fu));
        out[2] = (uint8_t)(0x80u | (cp & 0x3Fu)); return 3u;
    }
    out[0] = (uint8_t)(0xF0u | ((cp >> 18) & 0x07u)); out[1] = (uint8_t)(0x80u | ((cp >> 12) & 0x3Fu));
    out[2] = (uint8_t)(0x80u | ((cp >> 6) & 0x3Fu)); out[3] = (uint8_t)(0x80u | (cp & 0x3Fu));
    return 4u;
}

/* ---- Unicode tables ------------------------------------------------------------------------------------- */

/* class of cp: the last run starting at or before cp */
static uint32_t class_of(const tok_t *t, uint32_t cp)
{
    uint32_t lo = 0u, hi = t->n_classes; /* invariant: run lo starts <= cp (run 0 starts at 0) */
    while (hi - lo > 1u) {
        uint32_t mid = lo + (hi - lo) / 2u;
        if ((t->classes[mid] >> 3) <= cp) { lo = mid; } else { hi = mid; }
    }
    return t->classes[lo] & 7u;
}

/* index of cp's map entry, or n_map */
static uint32_t map_find(const tok_t *t, uint32_t cp)
{
    uint32_t lo = 0u, hi = t->n_map;
    while (lo < hi) {
        uint32_t mid = lo + (hi - lo) / 2u;
        uint32_t key = t->map_keys[mid] >> 8;
        if (key == cp) { return mid; }
        if (key < cp) { lo = mid + 1u; } else { hi = mid; }
    }
    return t->n_map;
}

/* ---- output ----------------------------------------------------------------------------------------------- */

static uint32_t cap16(uint32_t x) { return x > 0xFFFFu ? 0xFFFFu : x; }

/* start, end: input bytes, already capped at 65535 */
static void emit(tok_t *t, uint32_t id, uint32_t start, uint32_t end)
{
    if (t->n < t->limit) {
        t->ids[t->n] = (int32_t)id;
        if (t->offsets) {
            t->offsets[2u * t->n] = (uint16_t)start;
            t->offsets[2u * t->n + 1u] = (uint16_t)end;
        }
    }
    if (t->n != 0xFFFFFFFFu) {
        t->n++;
    }
}

/* longest piece of table tab that is a prefix of w[0..len): its byte length (0: none) and id */
static uint32_t longest_piece(const tok_t *t, const piece_table_t *tab, const uint8_t *w, uint32_t len,
                              uint32_t *id)
{
    uint32_t b = w[0];
    uint32_t lo = tab->index[b];
    uint32_t hi = (b == 255u) ? tab->n : tab->index[b + 1u];
    uint32_t k = 1u, best = 0u;
    if (hi > tab->n) { hi = tab->n; }
    if (lo > hi) { lo = hi; }
    /* invariant: the pieces in [lo, hi) start with w[0..k) */
    while (lo < hi) {
        uint32_t e = tab->entries[lo];
        if ((e & 0xFFu) == k) { /* the shortest one sorts first: an exact match of k bytes */
            best = k;
            *id = piece_id(tab, lo, t->flags);
        }
        if (k == len) { break; }
        {
            uint32_t c = w[k], a, z;
            /* key(i) = byte k of piece i, or -1 when piece i has only k bytes: non-decreasing on [lo, hi) */
            a = lo; z = hi; /* first key >= c */
            while (a < z) {
                uint32_t m = a + (z - a) / 2u, em = tab->entries[m];
                if ((em & 0xFFu) > k && pool_byte(t->pool, (em >> 8) + k) >= c) { z = m; } else { a = m + 1u; }
            }
            lo = a;
            z = hi; /* first key > c */
            while (a < z) {       /* the pieces left have more than k bytes (sorted table: bertl14_tokenizer_validate) */
                uint32_t m = a + (z - a) / 2u, em = tab->entries[m];
                if ((em & 0xFFu) <= k || pool_byte(t->pool, (em >> 8) + k) > c) { z = m; } else { a = m + 1u; }
            }
            hi = a;
        }
        k++;
    }
    return best;
}

/* WordPiece on the finished word: greedy longest match first; any gap makes the whole word one [UNK] */
static void flush_word(tok_t *t)
{
    uint32_t first = t->n, pos = 0u, c0 = 0u;
    if (t->word_chars == 0u) {
        return;
    }
    if (t->word_bad || t->word_chars > t->max_chars) {
        emit(t, t->unk_id, t->word_start, t->word_end);
    } else {
        while (pos < t->word_bytes) {
            uint32_t id = 0u, c1 = c0, last, cp;
            uint32_t len = longest_piece(t, pos == 0u ? &t->start : &t->cont, t->word + pos, t->word_bytes - pos, &id);
            if (len == 0u) {
                t->n = first; /* rewind the pieces of this word */
                emit(t, t->unk_id, t->word_start, t->word_end);
                break;
            }
            for (len += pos; pos < len; pos++) {
                c1 += (t->word[pos] & 0xC0u) != 0x80u; /* the piece is characters c0 .. c1-1 of the word */
            }
            last = t->char_src[c1 - 1u];               /* it ends with that character's input character */
            last = last < 0xFFFFu ? cap16(last + bertl14_utf8_decode(t->text + last, &cp)) : last;
            emit(t, id, t->char_src[c0], last);
            c0 = c1;
        }
    }
    t->word_bytes = 0u;
    t->word_chars = 0u;
    t->word_bad = 0;
}

static void append_char(tok_t *t, uint32_t cp, int unknown)
{
    if (unknown) {
        t->word_bad = 1;
    }
    if (t->word_chars == 0u) {
        t->word_start = t->src_start;
    }
    t->word_end = t->src_end;
    if (t->word_chars < t->max_chars && !t->word_bad) {
        t->char_src[t->word_chars] = (uint16_t)t->src_start;
        t->word_bytes += utf8_encode(cp, t->word + t->word_bytes);
    }
    if (t->word_chars != 0xFFFFFFFFu) {
        t->word_chars++;
    }
}

/* one output character of the normalizer, by kind: word characters gather, punctuation stands alone */
static void put_char(tok_t *t, uint32_t cp, uint32_t kind, int unknown)
{
    if (kind == KIND_SPACE) {
        flush_word(t);
    } else if (kind == KIND_PUNCT) {
        flush_word(t);
        append_char(t, cp, unknown);
        flush_word(t);
    } else {
        append_char(t, cp, unknown);
    }
}

/* a kept input character: its mapped form (lower case, accents stripped), or itself */
static void put_mapped(tok_t *t, uint32_t cp, uint32_t cls)
{
    uint32_t m = map_find(t, cp);
    if (m < t->n_map) {
        uint32_t n_out = t->map_keys[m] & 0xFFu, off = t->map_offsets[m], i;
        for (i = 0u; i < n_out && off + i < t->map_out_words; i++) {
            uint32_t o = t->map_out[off + i];
            put_char(t, o & 0x1FFFFFu, (o >> 29) & 3u, (o & OUT_UNKNOWN) != 0u);
        }
    } else if ((t->flags & FLAG_STRIP_ACCENTS) && cp >= HANGUL_FIRST && cp <= HANGUL_LAST) {
        uint32_t s = cp - HANGUL_FIRST; /* canonical decomposition of a Hangul syllable into jamo */
        put_char(t, 0x1100u + s / 588u, KIND_WORD, 0);
        put_char(t, 0x1161u + (s % 588u) / 28u, KIND_WORD, 0);
        if (s % 28u) {
            put_char(t, 0x11A7u + s % 28u, KIND_WORD, 0);
        }
    } else {
        put_char(t, cp, cls == CLASS_PUNCT ? KIND_PUNCT : KIND_WORD, 0);
    }
}

/* a special token written literally at s ("[MASK]"): its byte length and id, 0 if none */
static uint32_t special_at(const uint32_t *hdr, const char *s, uint32_t *id)
{
    uint32_t which;
    for (which = 0u; which < 5u; which++) {
        const char *lit = k_special_text[which];
        uint32_t i = 0u;
        if (hdr[HDR_PAD_ID + which] == NO_ID) {
            continue;
        }
        while (lit[i] != '\0' && s[i] == lit[i]) { /* stops at the text's NUL: lit has none */
            i++;
        }
        if (lit[i] == '\0') {
            *id = hdr[HDR_PAD_ID + which];
            return i;
        }
    }
    return 0u;
}

/* ---- API -------------------------------------------------------------------------------------------------- */

bertl14_status_t bertl14_tokenizer_run(const uint32_t *vocab_section, const char *text, int32_t *ids,
                                       uint16_t *offsets, uint32_t *count, uint32_t max_tokens)
{
    tok_t t;
    const uint8_t *p;
    const uint32_t *hdr;
    bertl14_status_t status = BERTL14_OK;

    if (vocab_section == NULL || text == NULL || ids == NULL || count == NULL) {
        return BERTL14_ERR_NULL_POINTER;
    }
    *count = 0u;
    hdr = header_of(vocab_section);
    if (hdr == NULL || !header_ok(hdr)) {
        return BERTL14_ERR_INVALID_CONFIG;
    }
    if (max_tokens < 2u) {
        return BERTL14_ERR_INVALID_SEQ_LEN;
    }

    t.hdr = hdr;
    t.flags = hdr[HDR_FLAGS];
    t.max_chars = hdr[HDR_MAX_CHARS_PER_WORD];
    t.unk_id = hdr[HDR_UNK_ID];
    t.start.index = vocab_section;
    t.start.entries = vocab_section + hdr[HDR_START_ENTRIES];
    t.start.ids = vocab_section + hdr[HDR_START_IDS];
    t.start.n = hdr[HDR_N_START];
    t.cont.index = vocab_section + hdr[HDR_CONT_INDEX];
    t.cont.entries = vocab_section + hdr[HDR_CONT_ENTRIES];
    t.cont.ids = vocab_section + hdr[HDR_CONT_IDS];
    t.cont.n = hdr[HDR_N_CONT];
    t.pool = vocab_section + hdr[HDR_POOL];
    t.classes = vocab_section + hdr[HDR_CLASSES];
    t.n_classes = hdr[HDR_N_CLASSES];
    t.map_keys = vocab_section + hdr[HDR_MAP_KEYS];
    t.map_offsets = vocab_section + hdr[HDR_MAP_OFFSETS];
    t.map_out = vocab_section + hdr[HDR_MAP_OUT];
    t.n_map = hdr[HDR_N_MAP];
    t.map_out_words = hdr[HDR_MAP_OUT_WORDS];
    t.ids = ids;
    t.offsets = offsets;
    t.text = (const uint8_t *)text;
    t.limit = max_tokens - 1u;
    t.n = 1u;
    t.word_bytes = 0u;
    t.word_chars = 0u;
    t.word_bad = 0;

    p = (const uint8_t *)text;
    while (*p != 0u) {
        uint32_t cp = 0u, len, cls;
        if (t.n > t.limit && t.word_chars == 0u) {
            /* truncated for certain (finished words never shrink): the rest only has to be valid UTF-8 */
            while (*p != 0u && (len = bertl14_utf8_decode(p, &cp)) != 0u) {
                p += len;
            }
            if (*p != 0u) {
                status = BERTL14_ERR_INVALID_UTF8;
            }
            break;
        }
        const uint32_t at = (uint32_t)(p - t.text);
        t.src_start = cap16(at);
        if (*p == (uint8_t)'[') { /* special tokens written literally are matched on the raw text (as HF) */
            uint32_t id = 0u;
            len = special_at(hdr, (const char *)p, &id);
            if (len) {
                flush_word(&t);
                emit(&t, id, t.src_start, cap16(at + len));
                p += len;
                continue;
            }
        }
        len = bertl14_utf8_decode(p, &cp);
        if (len == 0u) {
            status = BERTL14_ERR_INVALID_UTF8;
            break;
        }
        p += len;
        t.src_end = cap16(at + len);
        cls = class_of(&t, cp);
        if (cls == CLASS_DROP) {
            continue;                       /* control characters, U+FFFD, stripped accents */
        } else if (cls == CLASS_SPACE) {
            flush_word(&t);
        } else if (cls == CLASS_CJK) {
            flush_word(&t);                 /* each CJK ideograph is a word of its own */
            put_mapped(&t, cp, cls);
            flush_word(&t);
        } else {
            put_mapped(&t, cp, cls);
        }
    }
    if (status != BERTL14_OK) {
        return status;
    }
    flush_word(&t);
    if (t.n > t.limit) {
        t.n = t.limit;
        status = BERTL14_ERR_TOKEN_OVERFLOW;
    }
    ids[0] = (int32_t)hdr[HDR_CLS_ID];
    ids[t.n] = (int32_t)hdr[HDR_SEP_ID];
    if (offsets) {
        offsets[0] = offsets[1] = offsets[2u * t.n] = offsets[2u * t.n + 1u] = 0u;
    }
    *count = t.n + 1u;
    return status;
}

/* piece i of a table: pool offset and length of entry e */
static int piece_cmp(const uint32_t *pool, uint32_t a, uint32_t b)
{
    uint32_t la = a & 0xFFu, lb = b & 0xFFu, i;
    for (i = 0u; i < la && i < lb; i++) {
        uint32_t x = pool_byte(pool, (a >> 8) + i), y = pool_byte(pool, (b >> 8) + i);
        if (x != y) {
            return x < y ? -1 : 1;
        }
    }
    return la < lb ? -1 : (la > lb ? 1 : 0);
}

/* a piece table as longest_piece reads it: entries inside the pool, strictly sorted bytewise, each in the
 * bucket of its first byte, ids inside the vocabulary */
static int table_ok(const uint32_t *section, const uint32_t *hdr, uint32_t index, uint32_t entries, uint32_t ids,
                    uint32_t n)
{
    const uint32_t *pool = section + hdr[HDR_POOL];
    piece_table_t t;
    uint32_t i;
    t.index = section + index;
    t.entries = section + entries;
    t.ids = section + ids;
    t.n = n;
    for (i = 0u; i < 256u; i++) {                 /* first-byte index non-decreasing, inside the table */
        if (t.index[i] > n || (i > 0u && t.index[i] < t.index[i - 1u])) {
            return 0;
        }
    }
    for (i = 0u; i < n; i++) {
        uint32_t e = t.entries[i], b;
        if ((e & 0xFFu) == 0u || (e >> 8) > hdr[HDR_POOL_BYTES] || (e & 0xFFu) > hdr[HDR_POOL_BYTES] - (e >> 8)) {
            return 0;
        }
        b = pool_byte(pool, e >> 8);
        if (i < t.index[b] || (b < 255u && i >= t.index[b + 1u]) || piece_id(&t, i, hdr[HDR_FLAGS]) >= hdr[HDR_VOCAB_SIZE] ||
            (i > 0u && piece_cmp(pool, t.entries[i - 1u], e) >= 0)) {
            return 0;
        }
    }
    return 1;
}

bertl14_status_t bertl14_tokenizer_validate(const uint32_t *vocab_section, uint32_t size)
{
    const uint32_t *hdr;
    uint32_t i, sum = 0u, total;
    if (vocab_section == NULL) {
        return BERTL14_ERR_NULL_POINTER;
    }
    if (size < 4u * (BERTL14_VOCAB_INDEX_WORDS + (uint32_t)HEADER_WORDS) || (size & 3u)) {
        return BERTL14_ERR_MODEL_SIZE;                /* not even the index and the header */
    }
    hdr = header_of(vocab_section);
    if (hdr == NULL) {
        return BERTL14_ERR_MODEL_FORMAT;
    }
    total = hdr[HDR_TOTAL_WORDS];
    if (total != size / 4u) {
        return BERTL14_ERR_MODEL_SIZE;
    }
    for (i = 0u; i < total; i++) {
        sum += vocab_section[i];
    }
    if (sum - hdr[HDR_CHECKSUM] != hdr[HDR_CHECKSUM]) {
        return BERTL14_ERR_MODEL_CORRUPT;
    }
    if (!header_ok(hdr) || (hdr[HDR_PAD_ID] != NO_ID && hdr[HDR_PAD_ID] >= hdr[HDR_VOCAB_SIZE]) ||
        (hdr[HDR_MASK_ID] != NO_ID && hdr[HDR_MASK_ID] >= hdr[HDR_VOCAB_SIZE]) ||
        !table_ok(vocab_section, hdr, 0u, hdr[HDR_START_ENTRIES], hdr[HDR_START_IDS], hdr[HDR_N_START]) ||
        !table_ok(vocab_section, hdr, hdr[HDR_CONT_INDEX], hdr[HDR_CONT_ENTRIES], hdr[HDR_CONT_IDS], hdr[HDR_N_CONT])) {
        return BERTL14_ERR_MODEL_LAYOUT;
    }
    /* class runs start at 0 and increase; map entries inside the output table */
    if ((vocab_section[hdr[HDR_CLASSES]] >> 3) != 0u) {
        return BERTL14_ERR_MODEL_LAYOUT;
    }
    for (i = 1u; i < hdr[HDR_N_CLASSES]; i++) {
        if ((vocab_section[hdr[HDR_CLASSES] + i] >> 3) <= (vocab_section[hdr[HDR_CLASSES] + i - 1u] >> 3)) {
            return BERTL14_ERR_MODEL_LAYOUT;
        }
    }
    for (i = 0u; i < hdr[HDR_N_MAP]; i++) {
        uint32_t off = vocab_section[hdr[HDR_MAP_OFFSETS] + i], n = vocab_section[hdr[HDR_MAP_KEYS] + i] & 0xFFu;
        if (off > hdr[HDR_MAP_OUT_WORDS] || n > hdr[HDR_MAP_OUT_WORDS] - off) {
            return BERTL14_ERR_MODEL_LAYOUT;
        }
    }
    return BERTL14_OK;
}

uint32_t bertl14_tokenizer_vocab_size(const uint32_t *vocab_section)
{
    const uint32_t *hdr = vocab_section ? header_of(vocab_section) : NULL;
    return hdr ? hdr[HDR_VOCAB_SIZE] : 0u;
}

int32_t bertl14_tokenizer_special_id(const uint32_t *vocab_section, int which)
{
    const uint32_t *hdr = vocab_section ? header_of(vocab_section) : NULL;
    if (hdr == NULL || which < 0 || which > 4 || hdr[HDR_PAD_ID + (uint32_t)which] == NO_ID) {
        return -1;
    }
    return (int32_t)hdr[HDR_PAD_ID + (uint32_t)which];
}

uint32_t bertl14_tokenizer_section_words(const uint32_t *vocab_section)
{
    const uint32_t *hdr = vocab_section ? header_of(vocab_section) : NULL;
    return hdr ? hdr[HDR_TOTAL_WORDS] : 0u;
}
