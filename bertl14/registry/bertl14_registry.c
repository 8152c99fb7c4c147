/**
 * @file bertl14_registry.c
 * @brief Names of the registry (entities, areas, floors) found in a text and replaced by placeholders.
 *
 * The text is read as the tokenizer reads it: each UTF-8 character (full-width forms folded to ASCII first) is
 * classified and mapped with the class and map tables of the model's vocabulary section, and becomes a run of
 * symbols: its output characters, with word boundaries around punctuation and CJK ideographs and for whitespace.
 * A name is a path of the registry's trie over those symbols (one SEPARATOR between words). At each word start
 * the trie is walked as far as it goes and the last name that ended on a word boundary wins (longest match);
 * the walk then goes on after the name. Cost: O(text length * longest name), no malloc, no globals.
 * The vocabulary section's layout and the UTF-8 decoder are the tokenizer's (src/bertl14_vocab_section.h).
 * Layout of the registry: scripts/bertl14_tools/registry/names.py and docs/registry.md.
 */
#include "bertl14_registry.h"
#include "bertl14_vocab_section.h"

#include <stddef.h>

/* ---- the registry (registry/names.py HDR_*) --------------------------------------------------------------------------- */
enum {
    R_MAGIC, R_VERSION, R_WORDS, R_TOTAL_WORDS, R_FLAGS, R_N_ENTITIES, R_N_AREAS, R_N_FLOORS,
    R_OBJECTS, R_POOL, R_POOL_BYTES, R_TRIE, R_CHECKSUM, R_HEADER_WORDS
};
#define R_MAGIC_WORD 0x47455242u /* "BREG" */
#define R_VERSION_1 1u
#define TRIE_CHAIN 0x8000u
#define TRIE_COUNT 0x7FFFu
#define SEPARATOR 0x20u
#define FULLWIDTH_FIRST 0xFF01u
#define FULLWIDTH_LAST 0xFF5Eu
#define FULLWIDTH_DELTA 0xFEE0u

/* symbols */
#define SYM_BOUNDARY 0xFFFFFFFFu
#define SYM_END 0xFFFFFFFEu
#define SYM_INVALID 0xFFFFFFFDu

typedef struct {
    const uint32_t *classes, *map_keys, *map_offsets, *map_out;
    uint32_t n_classes, n_map, map_out_words, flags;
    /* Lookup caches (text repeats the same few runs: a-z is one class run and one gap of the map), so most
       characters skip both binary searches. Only speed: the results are the searches' results. */
    uint32_t run_lo, run_hi, run_cls; /* code points [run_lo, run_hi) have class run_cls */
    uint32_t gap_lo, gap_hi;          /* no map key in [gap_lo, gap_hi) */
} norm_t;

/* Reads the text one symbol at a time (see the file comment). */
typedef struct {
    norm_t *nm;
    const uint8_t *text;
    uint32_t pos;               /* byte offset of the next input character */
    uint32_t start, end;        /* span of the current input character */
    uint32_t cls;               /* its class */
    const uint32_t *outs;       /* its output characters (map words: cp | kind << 29) */
    uint32_t local[3];          /* outputs not in the map: itself or Hangul jamo */
    uint32_t n_out, i_out;      /* outputs, next output */
    uint32_t first_ns, last_ns; /* first and last output that is not whitespace */
    uint32_t queue[3], q_n, q_i;/* symbols of the current output */
    uint32_t q_flags[3];        /* bit 0: first non-boundary symbol of the character, bit 1: last */
    int trailing;               /* a CJK character's boundary after its outputs is due */
} cursor_t;

static uint32_t class_of(norm_t *nm, uint32_t cp)
{
    uint32_t lo = 0u, hi = nm->n_classes;
    if (cp >= nm->run_lo && cp < nm->run_hi) {
        return nm->run_cls;
    }
    while (hi - lo > 1u) {
        uint32_t mid = lo + (hi - lo) / 2u;
        if ((nm->classes[mid] >> 3) <= cp) { lo = mid; } else { hi = mid; }
    }
    /* the run of entry lo reaches the next entry's start (the first run also covers what is below it) */
    nm->run_lo = lo == 0u ? 0u : nm->classes[lo] >> 3;
    nm->run_hi = lo + 1u < nm->n_classes ? nm->classes[lo + 1u] >> 3 : 0xFFFFFFFFu;
    nm->run_cls = nm->classes[lo] & 7u;
    return nm->run_cls;
}

static void cursor_init(cursor_t *c, norm_t *nm, const uint8_t *text, uint32_t pos)
{
    c->nm = nm; c->text = text; c->pos = pos; c->start = c->end = pos;
    c->n_out = c->i_out = 0u; c->q_n = c->q_i = 0u; c->trailing = 0; c->cls = CLASS_WORD;
    c->outs = c->local;
}

static void push(cursor_t *c, uint32_t sym, uint32_t flags)
{
    c->queue[c->q_n] = sym;
    c->q_flags[c->q_n] = flags;
    c->q_n++;
}

/* load the next input character that gives symbols; returns 0 at the end, SYM_INVALID on bad UTF-8 */
static uint32_t load_char(cursor_t *c)
{
    norm_t *nm = c->nm;
    for (;;) {
        uint32_t cp = 0u, len, lo, hi, i;
        if (c->text[c->pos] == 0u) {
            return 0u;
        }
        len = bertl14_utf8_decode(c->text + c->pos, &cp);
        if (len == 0u) {
            return SYM_INVALID;
        }
        c->start = c->pos;
        c->pos += len;
        c->end = c->pos;
        if (cp >= FULLWIDTH_FIRST && cp <= FULLWIDTH_LAST) {
            cp -= FULLWIDTH_DELTA;
        }
        c->cls = class_of(nm, cp);
        if (c->cls == CLASS_DROP) {
            continue;
        }
        c->q_n = c->q_i = 0u;
        c->n_out = c->i_out = 0u;
        c->trailing = 0;
        if (c->cls == CLASS_SPACE) {
            push(c, SYM_BOUNDARY, 0u);
            return 1u;
        }
        lo = 0u; hi = 0u; /* [lo, hi) non-empty after the search: the map entry of cp */
        if ((nm->flags & FLAG_LOWER_CASE) && cp >= 'A' && cp <= 'Z') {
            /* the vocabulary's map lists only letters it has pieces for ("TV" with a Chinese vocabulary without
               'v'), but names are compiled fully lower-cased: fold ASCII here (what the map gives when it has it) */
            cp += 'a' - 'A';
        } else if (!(cp >= nm->gap_lo && cp < nm->gap_hi)) { /* not known to be between two keys: search */
            hi = nm->n_map;
            while (lo < hi) {
                uint32_t mid = lo + (hi - lo) / 2u, key = nm->map_keys[mid] >> 8;
                if (key == cp) { break; }
                if (key < cp) { lo = mid + 1u; } else { hi = mid; }
            }
            if (lo == hi) { /* a miss: keys[lo - 1] < cp < keys[lo]; remember the gap between them */
                nm->gap_lo = lo == 0u ? 0u : (nm->map_keys[lo - 1u] >> 8) + 1u;
                nm->gap_hi = lo < nm->n_map ? nm->map_keys[lo] >> 8 : 0xFFFFFFFFu;
            }
        }
        if (lo < hi) {
            uint32_t mid = lo + (hi - lo) / 2u, off = nm->map_offsets[mid];
            c->n_out = nm->map_keys[mid] & 0xFFu;
            if (off > nm->map_out_words || c->n_out > nm->map_out_words - off) {
                c->n_out = 0u; /* corrupt table: no output rather than a read outside it */
            }
            c->outs = nm->map_out + off;
        } else if ((nm->flags & FLAG_STRIP_ACCENTS) && cp >= HANGUL_FIRST && cp <= HANGUL_LAST) {
            uint32_t s = cp - HANGUL_FIRST;
            c->local[0] = 0x1100u + s / 588u;
            c->local[1] = 0x1161u + (s % 588u) / 28u;
            c->local[2] = 0x11A7u + s % 28u;
            c->n_out = (s % 28u) ? 3u : 2u;
            c->outs = c->local;
        } else {
            c->local[0] = cp | ((c->cls == CLASS_PUNCT ? (uint32_t)KIND_PUNCT : (uint32_t)KIND_WORD) << 29);
            c->n_out = 1u;
            c->outs = c->local;
        }
        c->first_ns = c->last_ns = 0xFFFFFFFFu;
        for (i = 0u; i < c->n_out; i++) {
            if (((c->outs[i] >> 29) & 3u) != KIND_SPACE) {
                if (c->first_ns == 0xFFFFFFFFu) { c->first_ns = i; }
                c->last_ns = i;
            }
        }
        if (c->cls == CLASS_CJK) {
            push(c, SYM_BOUNDARY, 0u);
            c->trailing = 1;
        }
        return 1u;
    }
}

/* next symbol: a code point, SYM_BOUNDARY, SYM_END or SYM_INVALID; *flags: bit 0 first, bit 1 last of its char */
static uint32_t next_symbol(cursor_t *c, uint32_t *flags)
{
    while (c->q_i == c->q_n) {
        c->q_n = c->q_i = 0u;
        if (c->i_out < c->n_out) {
            uint32_t o = c->outs[c->i_out], kind = (o >> 29) & 3u, i = c->i_out++;
            uint32_t f = (i == c->first_ns ? 1u : 0u) | (i == c->last_ns ? 2u : 0u);
            if (kind == KIND_SPACE) {
                push(c, SYM_BOUNDARY, 0u);
            } else if (kind == KIND_PUNCT) {
                push(c, SYM_BOUNDARY, 0u);
                push(c, o & 0x1FFFFFu, f);
                push(c, SYM_BOUNDARY, 0u);
            } else {
                push(c, o & 0x1FFFFFu, f);
            }
        } else if (c->trailing) {
            c->trailing = 0;
            push(c, SYM_BOUNDARY, 0u);
        } else {
            uint32_t r = load_char(c);
            if (r == 0u || r == SYM_INVALID) {
                *flags = 0u;
                return r == 0u ? SYM_END : SYM_INVALID;
            }
        }
    }
    *flags = c->q_flags[c->q_i];
    return c->queue[c->q_i++];
}

/* ---- trie ---------------------------------------------------------------------------------------------------------- */

/* one step from (node, k labels of its chain consumed) along label; returns 0 when no name goes on */
static uint32_t trie_step(const uint32_t *r, uint32_t *node, uint32_t *k, uint32_t label)
{
    uint32_t total = r[R_TOTAL_WORDS], w = r[*node], n = w & TRIE_COUNT;
    if (n > total - *node - 1u) {
        return 0u;
    }
    if (w & TRIE_CHAIN) {
        if (*k >= n || r[*node + 1u + *k] != label) {
            return 0u;
        }
        if (*k + 1u == n) {
            *node += 1u + n;
            *k = 0u;
            return *node < total;
        }
        (*k)++;
        return 1u;
    } else {
        uint32_t lo = 0u, hi = n;
        if (2u * n > total - *node - 1u) {
            return 0u;
        }
        while (lo < hi) {
            uint32_t mid = lo + (hi - lo) / 2u, l = r[*node + 1u + mid];
            if (l == label) {
                uint32_t child = r[*node + 1u + n + mid];
                if (child < r[R_TRIE] || child >= total) {
                    return 0u;
                }
                *node = child;
                *k = 0u;
                return 1u;
            }
            if (l < label) { lo = mid + 1u; } else { hi = mid; }
        }
        return 0u;
    }
}

/* longest name whose words start at byte start: object index + 1 (0: none), its end byte in *end */
static uint32_t longest_at(const uint32_t *r, norm_t *nm, const uint8_t *text, uint32_t start, uint32_t *end)
{
    cursor_t c;
    uint32_t node = r[R_TRIE], k = 0u, best = 0u, prev_b = 1u, last_ok = 0u, last_end = start;
    cursor_init(&c, nm, text, start);
    for (;;) {
        uint32_t flags, sym = next_symbol(&c, &flags);
        if (sym == SYM_BOUNDARY || sym == SYM_END || sym == SYM_INVALID) {
            if (sym == SYM_BOUNDARY && prev_b) {
                continue;
            }
            if (k == 0u && (r[node] >> 16) != 0u && last_ok) {
                best = r[node] >> 16;
                *end = last_end;
            }
            if (sym != SYM_BOUNDARY || !trie_step(r, &node, &k, SEPARATOR)) {
                break;
            }
            prev_b = 1u;
            continue;
        }
        if (!trie_step(r, &node, &k, sym)) {
            break;
        }
        prev_b = 0u;
        last_ok = (flags >> 1) & 1u;
        last_end = c.end;
    }
    return best;
}

/* ---- API ------------------------------------------------------------------------------------------------------------ */

static int registry_header_ok(const uint32_t *r)
{
    uint32_t total = r[R_TOTAL_WORDS], n_obj;
    if (r[R_MAGIC] != R_MAGIC_WORD || r[R_VERSION] != R_VERSION_1 || r[R_WORDS] != (uint32_t)R_HEADER_WORDS) {
        return 0;
    }
    n_obj = r[R_N_ENTITIES] + r[R_N_AREAS] + r[R_N_FLOORS];
    return n_obj < 0xFFFFu && total > r[R_TRIE] && r[R_TRIE] >= (uint32_t)R_HEADER_WORDS &&
           r[R_OBJECTS] >= (uint32_t)R_HEADER_WORDS && r[R_OBJECTS] <= total && 2u * n_obj <= total - r[R_OBJECTS] &&
           r[R_POOL] <= total && (r[R_POOL_BYTES] + 3u) / 4u <= total - r[R_POOL];
}

static int norm_init(norm_t *nm, const uint32_t *section)
{
    const uint32_t *h = section + BERTL14_VOCAB_INDEX_WORDS;
    uint32_t total = h[HDR_TOTAL_WORDS];
    if (h[HDR_MAGIC] != BERTL14_VOCAB_MAGIC || h[HDR_VERSION] != BERTL14_VOCAB_VERSION || h[HDR_N_CLASSES] == 0u) {
        return 0;
    }
    if (h[HDR_CLASSES] > total || h[HDR_N_CLASSES] > total - h[HDR_CLASSES] || h[HDR_MAP_KEYS] > total ||
        h[HDR_N_MAP] > total - h[HDR_MAP_KEYS] || h[HDR_MAP_OFFSETS] > total || h[HDR_N_MAP] > total - h[HDR_MAP_OFFSETS] ||
        h[HDR_MAP_OUT] > total || h[HDR_MAP_OUT_WORDS] > total - h[HDR_MAP_OUT]) {
        return 0;
    }
    nm->classes = section + h[HDR_CLASSES];
    nm->n_classes = h[HDR_N_CLASSES];
    nm->map_keys = section + h[HDR_MAP_KEYS];
    nm->map_offsets = section + h[HDR_MAP_OFFSETS];
    nm->map_out = section + h[HDR_MAP_OUT];
    nm->n_map = h[HDR_N_MAP];
    nm->map_out_words = h[HDR_MAP_OUT_WORDS];
    nm->flags = h[HDR_FLAGS];
    nm->run_lo = nm->run_hi = nm->run_cls = 0u; /* empty caches */
    nm->gap_lo = nm->gap_hi = 0u;
    return 1;
}

static const char *const k_placeholders[4] = {"", "[NAME]", "[AREA]", "[FLOOR]"};

const char *bertl14_registry_placeholder(uint32_t kind)
{
    return kind >= 1u && kind <= 3u ? k_placeholders[kind] : "";
}

/* append bytes to out; 0 when they do not fit (a NUL must still fit after them) */
static int put(char *out, uint32_t out_size, uint32_t *n, const char *s, uint32_t len)
{
    uint32_t i;
    if (len >= out_size - *n) {
        return 0;
    }
    for (i = 0u; i < len; i++) {
        out[*n + i] = s[i];
    }
    *n += len;
    return 1;
}

bertl14_status_t bertl14_registry_match(const uint32_t *registry, const uint32_t *vocab_section, const char *text,
                                        char *out, uint32_t out_size, bertl14_slot_t *slots, uint32_t max_slots,
                                        uint32_t *slot_count)
{
    norm_t nm;
    cursor_t c;
    const uint8_t *t = (const uint8_t *)text;
    uint32_t n_out = 0u, copied = 0u, prev_b = 1u, n_slots = 0u;
    if (registry == NULL || vocab_section == NULL || text == NULL || out == NULL || slot_count == NULL ||
        (slots == NULL && max_slots != 0u)) {
        return BERTL14_ERR_NULL_POINTER;
    }
    *slot_count = 0u;
    if (out_size == 0u) {
        return BERTL14_ERR_BUFFER_TOO_SMALL;
    }
    out[0] = '\0';
    if (!registry_header_ok(registry) || !norm_init(&nm, vocab_section) ||
        (nm.flags & FLAG_TOKENIZER_OPTIONS) != registry[R_FLAGS]) {
        return BERTL14_ERR_INVALID_CONFIG;
    }
    cursor_init(&c, &nm, t, 0u);
    for (;;) {
        uint32_t flags, sym = next_symbol(&c, &flags);
        if (sym == SYM_INVALID) {
            out[0] = '\0';
            return BERTL14_ERR_INVALID_UTF8;
        }
        if (sym == SYM_END) {
            break;
        }
        if (sym == SYM_BOUNDARY) {
            prev_b = 1u;
            continue;
        }
        if (prev_b && (flags & 1u) && n_slots < max_slots) {
            uint32_t start = c.start, end = start, g = longest_at(registry, &nm, t, start, &end);
            if (g != 0u) {
                uint32_t kind = BERTL14_SLOT_NAME, idx = g - 1u;
                if (idx >= registry[R_N_ENTITIES]) {
                    idx -= registry[R_N_ENTITIES];
                    kind = BERTL14_SLOT_AREA;
                    if (idx >= registry[R_N_AREAS]) {
                        idx -= registry[R_N_AREAS];
                        kind = BERTL14_SLOT_FLOOR;
                    }
                }
                if (!put(out, out_size, &n_out, text + copied, start - copied) ||
                    !put(out, out_size, &n_out, k_placeholders[kind], kind == BERTL14_SLOT_FLOOR ? 7u : 6u)) {
                    out[0] = '\0';
                    return BERTL14_ERR_BUFFER_TOO_SMALL;
                }
                slots[n_slots].kind = kind;
                slots[n_slots].index = idx;
                slots[n_slots].start = start;
                slots[n_slots].end = end;
                n_slots++;
                copied = end;
                cursor_init(&c, &nm, t, end); /* go on after the name */
                prev_b = 0u;
                continue;
            }
        }
        prev_b = 0u;
    }
    {
        uint32_t rest = 0u;
        while (t[copied + rest] != 0u) {
            rest++;
        }
        if (!put(out, out_size, &n_out, text + copied, rest)) {
            out[0] = '\0';
            return BERTL14_ERR_BUFFER_TOO_SMALL;
        }
    }
    out[n_out] = '\0';
    *slot_count = n_slots;
    return BERTL14_OK;
}

bertl14_status_t bertl14_registry_validate(const uint32_t *registry)
{
    uint32_t i, sum = 0u, total, n_obj;
    if (registry == NULL) {
        return BERTL14_ERR_NULL_POINTER;
    }
    if (!registry_header_ok(registry)) {
        return BERTL14_ERR_INVALID_CONFIG;
    }
    total = registry[R_TOTAL_WORDS];
    for (i = 0u; i < total; i++) {
        sum += registry[i];
    }
    if (sum - registry[R_CHECKSUM] != registry[R_CHECKSUM]) {
        return BERTL14_ERR_INVALID_CONFIG;
    }
    n_obj = registry[R_N_ENTITIES] + registry[R_N_AREAS] + registry[R_N_FLOORS];
    for (i = 0u; i < n_obj; i++) { /* display names inside the pool */
        uint32_t ref = registry[registry[R_OBJECTS] + 2u * i];
        if ((ref >> 8) > registry[R_POOL_BYTES] || (ref & 0xFFu) > registry[R_POOL_BYTES] - (ref >> 8)) {
            return BERTL14_ERR_INVALID_CONFIG;
        }
    }
    for (i = registry[R_TRIE]; i < total;) { /* nodes laid end to end: counts, terminals and children in range */
        uint32_t w = registry[i], n = w & TRIE_COUNT, j;
        if ((w >> 16) > n_obj || n > total - i - 1u) {
            return BERTL14_ERR_INVALID_CONFIG;
        }
        if (!(w & TRIE_CHAIN)) {
            if (2u * n > total - i - 1u) {
                return BERTL14_ERR_INVALID_CONFIG;
            }
            for (j = 0u; j < n; j++) {
                uint32_t child = registry[i + 1u + n + j];
                if (child <= i || child >= total || (j > 0u && registry[i + 1u + j] <= registry[i + j])) {
                    return BERTL14_ERR_INVALID_CONFIG;
                }
            }
            i += 1u + 2u * n;
        } else {
            if (n == 0u || i + 1u + n >= total) {
                return BERTL14_ERR_INVALID_CONFIG;
            }
            i += 1u + n;
        }
    }
    return BERTL14_OK;
}

uint32_t bertl14_registry_count(const uint32_t *registry, uint32_t kind)
{
    if (registry == NULL || !registry_header_ok(registry) || kind < 1u || kind > 3u) {
        return 0u;
    }
    return registry[R_N_ENTITIES + kind - 1u];
}

const char *bertl14_registry_name(const uint32_t *registry, uint32_t kind, uint32_t index, uint32_t *len)
{
    uint32_t g, ref;
    if (len == NULL || index >= bertl14_registry_count(registry, kind)) {
        return NULL;
    }
    g = index + (kind >= 2u ? registry[R_N_ENTITIES] : 0u) + (kind == 3u ? registry[R_N_AREAS] : 0u);
    ref = registry[registry[R_OBJECTS] + 2u * g];
    if ((ref >> 8) + (ref & 0xFFu) > registry[R_POOL_BYTES]) {
        return NULL;
    }
    *len = ref & 0xFFu;
    /* the pool's bytes are little-endian within each word: a byte pointer into it works on little-endian
       targets (Cortex-M, x86, RISC-V), which is every target bertl14 builds for */
    return (const char *)(registry + registry[R_POOL]) + (ref >> 8);
}

uint32_t bertl14_registry_domain(const uint32_t *registry, uint32_t index)
{
    if (index >= bertl14_registry_count(registry, 1u)) {
        return 0u;
    }
    return (registry[registry[R_OBJECTS] + 2u * index + 1u] >> 16) & 0xFFFu; /* (kind << 28) | (domain << 16) | parent */
}

uint32_t bertl14_registry_parent(const uint32_t *registry, uint32_t kind, uint32_t index)
{
    uint32_t g, parent;
    if (kind == 3u || index >= bertl14_registry_count(registry, kind)) {
        return UINT32_MAX;
    }
    g = index + (kind == 2u ? registry[R_N_ENTITIES] : 0u);
    parent = registry[registry[R_OBJECTS] + 2u * g + 1u] & 0xFFFFu;
    /* an entity's parent is an area, an area's a floor: out of range (0xFFFF = none) means none */
    return parent < bertl14_registry_count(registry, kind + 1u) ? parent : UINT32_MAX;
}
