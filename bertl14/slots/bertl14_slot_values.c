/**
 * @file bertl14_slot_values.c
 * @brief Slot values from tagged spans: numbers (digits, English and Chinese words), durations, lists, wildcards.
 *
 * A number or duration span is read in two steps. The lexer turns the span into at most MAX_TOKENS tokens
 * (digit runs, English words, Chinese numerals and unit words; anything it does not know makes the span yield no
 * value). The parser reads the tokens as "items" (a number, an optional unit word, an optional half) separated by
 * "and" / "," / 和 / 零. A number slot needs exactly one item; a duration needs items with decreasing units.
 * Lists compare the normalised span with the table's normalised "text in" entries; wildcards return the trimmed
 * span. The Python twin is scripts/bertl14_tools/model/slot_values.py (same functions, same order); the rules and the
 * table layout are in docs/slots.md.
 */
#include "bertl14_slots.h"

#include <stddef.h>

/* ---- the value table (model/slot_values.py HDR_* and SLOT_*) ------------------------------------------------------- */
enum { H_MAGIC, H_VERSION, H_WORDS, H_TOTAL_WORDS, H_FLAGS, H_N_SLOTS, H_SLOTS, H_POOL, H_POOL_BYTES, H_CHECKSUM,
       H_HEADER_WORDS };
enum { S_NAME, S_INFO, S_MIN, S_MAX, S_AUX, S_COUNT, S_WORDS };
#define MAGIC_WORD 0x564C5342u /* "BSLV" */
#define VERSION_1 1u
#define INFO_TYPE 0xFu
#define INFO_HALVES 0x10u
#define INFO_NUMBER 0x20u       /* a list slot that also takes a number */
#define INFO_NEGATE 0x40u       /* a number slot answered as slot S_AUX, negated ("down by 20": -20) */
#define INFO_UNIT_SHIFT 8u      /* durations: 0 hours, 1 minutes, 2 seconds */
#define INFO_NAME_LEN_SHIFT 16u
#define NO_SLOT 0x3FFu          /* duration sibling index: 10 bits each in S_AUX */
#define MAX_SLOTS 1023u
#define POOL_OFF_MASK 0xFFFFFFu /* list entry word: offset | length << 24 */
#define VALUE_CAP 1000000       /* numbers above it are not read (their tenths stay far from INT32_MAX) */

/* ---- limits of the reader ------------------------------------------------------------------------------------- */
#define MAX_TOKENS 32u
#define MAX_ITEMS 3u
#define NORM_MAX 255u           /* list matching: longer normalised spans match nothing (entries are <= 255) */
#define WORD_MAX 12u            /* longest English word of the lexicon is 10 letters */

enum { UNIT_HOURS, UNIT_MINUTES, UNIT_SECONDS, UNIT_NONE };

/* token kinds */
enum { T_END, T_DIGITS, T_SMALL, T_TENS, T_HUNDRED, T_THOUSAND, T_A, T_AND, T_HALF, T_POINT, T_UNIT, T_FILLER,
       T_ZH_DIGIT, T_ZH_MULT, T_ZH_POINT, T_ZH_HALF, T_COMMA };
#define ZH_LIANG 16u            /* 两: a 2 that stands only before 百/千/万 or alone */
#define TOK(kind, val) (uint16_t)(((kind) << 8) | (val))

typedef struct {
    uint8_t kind, val;
    int32_t num; /* T_DIGITS: tenths; T_UNIT: 1 for "hour" and "minute", which alone mean one ("the hour timer") */
} tok_t;

/* The lexicons: NUL-separated words, and a code (kind << 8 | value) per word. */
static const char en_words[] =
    "zero\0one\0two\0three\0four\0five\0six\0seven\0eight\0nine\0ten\0eleven\0twelve\0thirteen\0fourteen\0"
    "fifteen\0sixteen\0seventeen\0eighteen\0nineteen\0twenty\0thirty\0forty\0fifty\0sixty\0seventy\0eighty\0"
    "ninety\0hundred\0thousand\0a\0an\0and\0half\0point\0hour\0hours\0hr\0hrs\0h\0minute\0minutes\0min\0mins\0m\0"
    "second\0seconds\0sec\0secs\0s\0percent\0degree\0degrees\0celsius\0fahrenheit\0c\0f\0";
static const uint16_t en_codes[] = {
    TOK(T_SMALL, 0), TOK(T_SMALL, 1), TOK(T_SMALL, 2), TOK(T_SMALL, 3), TOK(T_SMALL, 4), TOK(T_SMALL, 5),
    TOK(T_SMALL, 6), TOK(T_SMALL, 7), TOK(T_SMALL, 8), TOK(T_SMALL, 9), TOK(T_SMALL, 10), TOK(T_SMALL, 11),
    TOK(T_SMALL, 12), TOK(T_SMALL, 13), TOK(T_SMALL, 14), TOK(T_SMALL, 15), TOK(T_SMALL, 16), TOK(T_SMALL, 17),
    TOK(T_SMALL, 18), TOK(T_SMALL, 19), TOK(T_TENS, 2), TOK(T_TENS, 3), TOK(T_TENS, 4), TOK(T_TENS, 5),
    TOK(T_TENS, 6), TOK(T_TENS, 7), TOK(T_TENS, 8), TOK(T_TENS, 9), TOK(T_HUNDRED, 0), TOK(T_THOUSAND, 0),
    TOK(T_A, 0), TOK(T_A, 0), TOK(T_AND, 0), TOK(T_HALF, 0), TOK(T_POINT, 0),
    /* hour hours hr hrs h */
    TOK(T_UNIT, UNIT_HOURS), TOK(T_UNIT, UNIT_HOURS), TOK(T_UNIT, UNIT_HOURS), TOK(T_UNIT, UNIT_HOURS),
    TOK(T_UNIT, UNIT_HOURS),
    /* minute minutes min mins m */
    TOK(T_UNIT, UNIT_MINUTES), TOK(T_UNIT, UNIT_MINUTES), TOK(T_UNIT, UNIT_MINUTES), TOK(T_UNIT, UNIT_MINUTES),
    TOK(T_UNIT, UNIT_MINUTES),
    /* second seconds sec secs s */
    TOK(T_UNIT, UNIT_SECONDS), TOK(T_UNIT, UNIT_SECONDS), TOK(T_UNIT, UNIT_SECONDS), TOK(T_UNIT, UNIT_SECONDS),
    TOK(T_UNIT, UNIT_SECONDS),
    /* percent degree degrees celsius fahrenheit c f */
    TOK(T_FILLER, 0), TOK(T_FILLER, 0), TOK(T_FILLER, 0), TOK(T_FILLER, 0), TOK(T_FILLER, 0), TOK(T_FILLER, 0),
    TOK(T_FILLER, 0),
};

/* 零〇一二两三四五六七八九 十百千万 点 半 个度钟百分之摄氏华氏 小时钟头 分钟分 秒秒钟 和 (UTF-8) */
static const char zh_words[] =
    "\xe9\x9b\xb6\0\xe3\x80\x87\0\xe4\xb8\x80\0\xe4\xba\x8c\0\xe4\xb8\xa4\0\xe4\xb8\x89\0\xe5\x9b\x9b\0"
    "\xe4\xba\x94\0\xe5\x85\xad\0\xe4\xb8\x83\0\xe5\x85\xab\0\xe4\xb9\x9d\0"
    "\xe5\x8d\x81\0\xe7\x99\xbe\0\xe5\x8d\x83\0\xe4\xb8\x87\0"
    "\xe7\x82\xb9\0\xe5\x8d\x8a\0"
    "\xe4\xb8\xaa\0\xe5\xba\xa6\0\xe9\x92\x9f\0\xe7\x99\xbe\xe5\x88\x86\xe4\xb9\x8b\0\xe6\x91\x84\xe6\xb0\x8f\0"
    "\xe5\x8d\x8e\xe6\xb0\x8f\0"
    "\xe5\xb0\x8f\xe6\x97\xb6\0\xe9\x92\x9f\xe5\xa4\xb4\0\xe5\x88\x86\xe9\x92\x9f\0\xe5\x88\x86\0"
    "\xe7\xa7\x92\0\xe7\xa7\x92\xe9\x92\x9f\0\xe5\x92\x8c\0";
static const uint16_t zh_codes[] = {
    TOK(T_ZH_DIGIT, 0), TOK(T_ZH_DIGIT, 0), TOK(T_ZH_DIGIT, 1), TOK(T_ZH_DIGIT, 2),
    TOK(T_ZH_DIGIT, 2 | ZH_LIANG), TOK(T_ZH_DIGIT, 3), TOK(T_ZH_DIGIT, 4), TOK(T_ZH_DIGIT, 5), TOK(T_ZH_DIGIT, 6),
    TOK(T_ZH_DIGIT, 7), TOK(T_ZH_DIGIT, 8), TOK(T_ZH_DIGIT, 9),
    TOK(T_ZH_MULT, 1), TOK(T_ZH_MULT, 2), TOK(T_ZH_MULT, 3), TOK(T_ZH_MULT, 4),
    TOK(T_ZH_POINT, 0), TOK(T_ZH_HALF, 0),
    TOK(T_FILLER, 0), TOK(T_FILLER, 0), TOK(T_FILLER, 0), TOK(T_FILLER, 0), TOK(T_FILLER, 0), TOK(T_FILLER, 0),
    TOK(T_UNIT, UNIT_HOURS), TOK(T_UNIT, UNIT_HOURS), TOK(T_UNIT, UNIT_MINUTES), TOK(T_UNIT, UNIT_MINUTES),
    TOK(T_UNIT, UNIT_SECONDS), TOK(T_UNIT, UNIT_SECONDS), TOK(T_AND, 0),
};

static const int32_t zh_mult_value[5] = {1, 10, 100, 1000, 10000};

/* ---- UTF-8 and characters --------------------------------------------------------------------------------------- */

/* Strict UTF-8 (no overlongs, surrogates or > U+10FFFF, as Python's decoder): length of the character at s[i],
   0 if invalid or at the end. Never reads at or past s[n]. */
static uint32_t utf8_at(const uint8_t *s, uint32_t n, uint32_t i, uint32_t *cp)
{
    uint32_t b0, len, c, k, lo = 0x80u, hi = 0xBFu;
    if (i >= n) {
        return 0u;
    }
    b0 = s[i];
    if (b0 < 0x80u) {
        *cp = b0;
        return 1u;
    }
    if (b0 >= 0xC2u && b0 <= 0xDFu) {
        len = 2u; c = b0 & 0x1Fu;
    } else if (b0 >= 0xE0u && b0 <= 0xEFu) {
        len = 3u; c = b0 & 0x0Fu;
        if (b0 == 0xE0u) { lo = 0xA0u; }
        if (b0 == 0xEDu) { hi = 0x9Fu; }
    } else if (b0 >= 0xF0u && b0 <= 0xF4u) {
        len = 4u; c = b0 & 0x07u;
        if (b0 == 0xF0u) { lo = 0x90u; }
        if (b0 == 0xF4u) { hi = 0x8Fu; }
    } else {
        return 0u;
    }
    for (k = 1u; k < len; k++) {
        uint32_t b;
        if (i + k >= n) {
            return 0u;
        }
        b = s[i + k];
        if (b < lo || b > hi) {
            return 0u;
        }
        lo = 0x80u; hi = 0xBFu;
        c = (c << 6) | (b & 0x3Fu);
    }
    *cp = c;
    return len;
}

static int utf8_valid(const uint8_t *s, uint32_t n)
{
    uint32_t i = 0u, cp;
    while (i < n) {
        uint32_t len = utf8_at(s, n, i, &cp);
        if (len == 0u) {
            return 0;
        }
        i += len;
    }
    return 1;
}

/* full-width forms U+FF01-FF5E read as ASCII, then ASCII upper case as lower case */
static uint32_t fold(uint32_t cp)
{
    if (cp >= 0xFF01u && cp <= 0xFF5Eu) {
        cp -= 0xFEE0u;
    }
    if (cp >= 'A' && cp <= 'Z') {
        cp += 'a' - 'A';
    }
    return cp;
}

static int is_space(uint32_t cp)
{
    return cp == ' ' || (cp >= 0x09u && cp <= 0x0Du) || cp == 0xA0u || cp == 0x3000u;
}

static int is_digit(uint32_t cp) { return cp >= '0' && cp <= '9'; }
static int is_letter(uint32_t cp) { return cp >= 'a' && cp <= 'z'; }

/* folded code point at s[i] (length in *len; 0 at the end: then the code point is 0) */
static uint32_t peek(const uint8_t *s, uint32_t n, uint32_t i, uint32_t *len)
{
    uint32_t cp = 0u;
    *len = utf8_at(s, n, i, &cp);
    return *len ? fold(cp) : 0u;
}

/* ---- lexer ------------------------------------------------------------------------------------------------------- */

/* index of word w (len bytes) in a NUL-separated lexicon; -1 if absent. For Chinese, the longest entry that is a
   prefix of s[0..n) (its length in *matched). */
static int lookup(const char *lex, uint32_t n_words, const uint8_t *w, uint32_t len, int prefix, uint32_t *matched)
{
    uint32_t k, best_len = 0u;
    int best = -1;
    const char *e = lex;
    for (k = 0u; k < n_words; k++) {
        uint32_t m = 0u;
        while (e[m] != '\0' && m < len && (uint8_t)e[m] == w[m]) {
            m++;
        }
        if (e[m] == '\0' && (prefix ? m > best_len : m == len)) {
            best = (int)k;
            best_len = m;
        }
        while (e[m] != '\0') {
            m++;
        }
        e += m + 1u;
    }
    *matched = best_len;
    return best;
}

#define N_EN (sizeof en_codes / sizeof en_codes[0])
#define N_ZH (sizeof zh_codes / sizeof zh_codes[0])

/* 1 for the unit words that alone mean one of their unit ("the hour timer", "hour and a half", "a minute"), else 0.
   "second" is not one of them: alone it is mostly an ordinal ("the second timer"). w: lower-case letters. */
static int32_t bare_unit_one(const uint8_t *w, uint32_t wl)
{
    static const char hour[] = "hour", minute[] = "minute";
    const char *word = wl == 4u ? hour : wl == 6u ? minute : NULL;
    uint32_t k;
    for (k = 0u; word != NULL && k < wl; k++) {
        if (w[k] != (uint8_t)word[k]) {
            return 0;
        }
    }
    return word != NULL;
}

static int push(tok_t *t, uint32_t *nt, uint16_t code, int32_t num)
{
    if (*nt >= MAX_TOKENS) {
        return 0;
    }
    t[*nt].kind = (uint8_t)(code >> 8);
    t[*nt].val = (uint8_t)(code & 0xFFu);
    t[*nt].num = num;
    (*nt)++;
    return 1;
}

/* A digit run at s[*pi]: "21", "1,000" (groups of three after one to three digits), "21.5" (a decimal point
   followed by a digit; digits after the first decimal must be 0). Returns 0 if it cannot be a value. */
static int lex_digits(const uint8_t *s, uint32_t n, uint32_t *pi, int32_t *tenths)
{
    uint32_t i = *pi, len, cp, ndig = 0u;
    int32_t v = 0;
    while (is_digit(cp = peek(s, n, i, &len))) {
        v = v * 10 + (int32_t)(cp - '0');
        if (v > VALUE_CAP) {
            return 0;
        }
        i += len;
        ndig++;
    }
    if (ndig <= 3u) {
        for (;;) {
            uint32_t j = i, k, l2, d[3];
            if (peek(s, n, j, &l2) != ',') {
                break;
            }
            j += l2;
            for (k = 0u; k < 3u; k++) {
                d[k] = peek(s, n, j, &l2);
                if (!is_digit(d[k])) {
                    break;
                }
                j += l2;
            }
            if (k < 3u || is_digit(peek(s, n, j, &l2))) {
                break; /* not a thousands group: the comma is a token of its own */
            }
            v = v * 1000 + (int32_t)((d[0] - '0') * 100u + (d[1] - '0') * 10u + (d[2] - '0'));
            if (v > VALUE_CAP) {
                return 0;
            }
            i = j;
        }
    }
    v *= 10;
    if (peek(s, n, i, &len) == '.') {
        uint32_t l2, d = peek(s, n, i + len, &l2);
        if (is_digit(d)) {
            i += len + l2;
            v += (int32_t)(d - '0');
            while (is_digit(d = peek(s, n, i, &l2))) {
                if (d != '0') {
                    return 0; /* hundredths and below: never a slot value */
                }
                i += l2;
            }
        }
    }
    *pi = i;
    *tenths = v;
    return 1;
}

/* The tokens of a span (valid UTF-8); 0 if any part of it is not a known word, digit run or sign. */
static int lex(const uint8_t *s, uint32_t n, tok_t *t, uint32_t *nt)
{
    uint32_t i = 0u, len, cp, k;
    int after_letter = 0;
    *nt = 0u;
    while (i < n) {
        cp = peek(s, n, i, &len);
        if (is_space(cp)) {
            i += len;
            after_letter = 0;
            continue;
        }
        if (n - i >= 3u && s[i] == '1' && s[i + 1u] == '/' && s[i + 2u] == '2' &&
            (n - i == 3u || !is_digit(s[i + 3u]))) { /* "1/2": a half, as Home Assistant's timer_half */
            if (!push(t, nt, TOK(T_HALF, 0), 0)) {
                return 0;
            }
            i += 3u;
            after_letter = 0;
            continue;
        }
        if (is_digit(cp)) {
            int32_t tenths;
            if (!lex_digits(s, n, &i, &tenths) || !push(t, nt, TOK(T_DIGITS, 0), tenths)) {
                return 0;
            }
            after_letter = 0;
            continue;
        }
        if (is_letter(cp)) {
            uint8_t w[WORD_MAX];
            uint32_t wl = 0u, matched;
            int idx;
            while (is_letter(cp = peek(s, n, i, &len))) {
                if (wl == WORD_MAX) {
                    return 0;
                }
                w[wl++] = (uint8_t)cp;
                i += len;
            }
            idx = lookup(en_words, (uint32_t)N_EN, w, wl, 0, &matched);
            if (idx < 0 || !push(t, nt, en_codes[idx], bare_unit_one(w, wl))) {
                return 0;
            }
            after_letter = 1;
            continue;
        }
        if (cp == '-') { /* only inside hyphenated words: "twenty-one"; a minus sign is no value */
            uint32_t l2;
            if (!after_letter || !is_letter(peek(s, n, i + len, &l2))) {
                return 0;
            }
            i += len;
            continue;
        }
        after_letter = 0;
        if (cp == '%' || cp == 0xB0u || cp == 0x2103u || cp == 0x2109u) { /* % ° ℃ ℉ */
            if (!push(t, nt, TOK(T_FILLER, 0), 0)) {
                return 0;
            }
            i += len;
            continue;
        }
        if (cp == ',') {
            if (!push(t, nt, TOK(T_COMMA, 0), 0)) {
                return 0;
            }
            i += len;
            continue;
        }
        {
            uint32_t matched;
            int idx = lookup(zh_words, (uint32_t)N_ZH, s + i, n - i, 1, &matched);
            if (idx < 0 || !push(t, nt, zh_codes[idx], 0)) {
                return 0;
            }
            i += matched;
        }
    }
    for (k = *nt; k < MAX_TOKENS + 4u; k++) { /* room for the parser's lookahead */
        t[k].kind = T_END;
        t[k].val = 0u;
        t[k].num = 0;
    }
    return 1;
}

/* ---- numbers ----------------------------------------------------------------------------------------------------- */

static int starts_below100(const tok_t *t)
{
    return (t->kind == T_SMALL && t->val > 0u) || t->kind == T_TENS;
}

/* 1..99 in words: "seven", "nineteen", "twenty", "twenty one" */
static int en_below100(const tok_t *t, uint32_t *pi, int32_t *v)
{
    uint32_t i = *pi;
    if (t[i].kind == T_SMALL && t[i].val > 0u) {
        *v = t[i].val;
        *pi = i + 1u;
        return 1;
    }
    if (t[i].kind == T_TENS) {
        *v = 10 * t[i].val;
        if (t[i + 1u].kind == T_SMALL && t[i + 1u].val > 0u && t[i + 1u].val < 10u) {
            *v += t[i + 1u].val;
            i++;
        }
        *pi = i + 1u;
        return 1;
    }
    return 0;
}

/* 1..999: "five hundred [and] twenty one", "a hundred", "hundred", or below 100 */
static int en_below1000(const tok_t *t, uint32_t *pi, int32_t *v)
{
    uint32_t i = *pi;
    int32_t h, r;
    if (((t[i].kind == T_SMALL && t[i].val > 0u && t[i].val < 10u) || t[i].kind == T_A) &&
        t[i + 1u].kind == T_HUNDRED) {
        h = 100 * (t[i].kind == T_A ? 1 : (int32_t)t[i].val);
        i += 2u;
    } else if (t[i].kind == T_HUNDRED) {
        h = 100;
        i += 1u;
    } else {
        return en_below100(t, pi, v);
    }
    if (t[i].kind == T_AND && starts_below100(&t[i + 1u])) {
        i++;
    }
    if (starts_below100(&t[i])) {
        (void)en_below100(t, &i, &r);
        h += r;
    }
    *v = h;
    *pi = i;
    return 1;
}

static int starts_below1000(const tok_t *t)
{
    return starts_below100(t) || t[0].kind == T_HUNDRED || (t[0].kind == T_A && t[1].kind == T_HUNDRED);
}

/* an English integer: "zero", 1..999, "[a|N] thousand [[and] 1..999]" */
static int en_int(const tok_t *t, uint32_t *pi, int32_t *v)
{
    uint32_t i = *pi;
    int32_t a;
    if (t[i].kind == T_SMALL && t[i].val == 0u) {
        *v = 0;
        *pi = i + 1u;
        return 1;
    }
    if (!en_below1000(t, &i, &a)) {
        if (t[i].kind == T_A && t[i + 1u].kind == T_THOUSAND) {
            a = 1;
            i++;
        } else if (t[i].kind == T_THOUSAND) {
            a = 1;
        } else {
            return 0;
        }
    }
    if (t[i].kind == T_THOUSAND) {
        a *= 1000;
        i++;
        if (t[i].kind == T_AND && starts_below1000(&t[i + 1u])) {
            i++;
        }
        if (starts_below1000(&t[i])) {
            int32_t b;
            (void)en_below1000(t, &i, &b);
            a += b;
        }
    }
    *v = a;
    *pi = i;
    return 1;
}

/* One section of a Chinese numeral (below 万, or what follows 万 when after_wan): digits with 千/百/十 in
   decreasing order, 零 for skipped positions ("一百零五"), a trailing digit one position below the last
   multiplier ("一百五" = 150, "二十五"), a leading 十 ("十五"). t[i..end) are numeral tokens other than 万. */
static int zh_section(const tok_t *t, uint32_t i, uint32_t end, int after_wan, int32_t *out)
{
    int32_t val = 0, last = 10000, pending = -1;
    int zero = 0, any = 0;
    for (; i < end; i++) {
        if (t[i].kind == T_ZH_DIGIT) {
            int32_t d = t[i].val & 15u;
            if (pending >= 0) {
                return 0; /* two digits in a row: "三五", "二零二五" */
            }
            if (d == 0) {
                if (zero || (!any && !after_wan)) {
                    return 0;
                }
                zero = 1;
                continue;
            }
            pending = d;
        } else {
            int32_t m = zh_mult_value[t[i].val];
            if (m >= last) {
                return 0; /* "十十", "一百一千" */
            }
            if (pending < 0) {
                if (m == 10 && ((!any && !after_wan) || zero)) {
                    pending = 1; /* "十五", "一千零十" */
                } else {
                    return 0;
                }
            }
            if (zero && m * 10 >= last) {
                return 0; /* 零 skips no position: "一百零五十" */
            }
            val += pending * m;
            last = m;
            pending = -1;
            zero = 0;
            any = 1;
        }
    }
    if (pending >= 0) {
        if (zero) {
            if (last <= 10) {
                return 0;
            }
            val += pending;
        } else if (any || after_wan) {
            val += pending * (last / 10);
        } else {
            val = pending;
        }
    } else if (zero) {
        return 0; /* a trailing 零 */
    }
    *out = val;
    return 1;
}

/* A Chinese integer: the run of numeral tokens at *pi, as a whole. */
static int zh_int(const tok_t *t, uint32_t *pi, int32_t *v)
{
    uint32_t i = *pi, end = i, k, wan = 0xFFFFFFFFu;
    int32_t hi, lo = 0;
    while (t[end].kind == T_ZH_DIGIT || t[end].kind == T_ZH_MULT) {
        end++;
    }
    for (k = i; k < end; k++) {
        if (t[k].kind == T_ZH_DIGIT && (t[k].val & ZH_LIANG) &&
            !(end - i == 1u || (k + 1u < end && t[k + 1u].kind == T_ZH_MULT && t[k + 1u].val >= 2u))) {
            return 0; /* 两 before 十 or after other numerals: "两十", "二十两" */
        }
        if (t[k].kind == T_ZH_MULT && t[k].val == 4u) {
            if (wan != 0xFFFFFFFFu || k == i) {
                return 0;
            }
            wan = k;
        }
    }
    if (end - i == 1u && t[i].kind == T_ZH_DIGIT && (t[i].val & 15u) == 0u) {
        hi = 0; /* 零 alone */
    } else if (end - i == 1u && t[i].kind == T_ZH_MULT && t[i].val == 2u) {
        hi = 100; /* 百 alone: "百分之百" */
    } else if (wan == 0xFFFFFFFFu) {
        if (!zh_section(t, i, end, 0, &hi)) {
            return 0;
        }
    } else {
        if (!zh_section(t, i, wan, 0, &hi) || !zh_section(t, wan + 1u, end, 1, &lo)) {
            return 0;
        }
        hi = hi * 10000 + lo;
    }
    if (hi > VALUE_CAP) {
        return 0;
    }
    *v = hi;
    *pi = end;
    return 1;
}

/* One number at *pi, in tenths: digits, English or Chinese words with a decimal part, or a bare half.
   article_one: "a" / "an" alone is 1 (durations: "an hour"). */
static int parse_number(const tok_t *t, uint32_t *pi, int article_one, int32_t *v)
{
    uint32_t i = *pi;
    int32_t iv;
    uint8_t k = t[i].kind;
    if (k == T_DIGITS) {
        *v = t[i].num;
        *pi = i + 1u;
        return 1;
    }
    if (k == T_HALF || k == T_ZH_HALF || (k == T_A && t[i + 1u].kind == T_HALF)) {
        i += k == T_A ? 2u : 1u;
        if (k != T_ZH_HALF && t[i].kind == T_A && t[i + 1u].kind == T_UNIT) {
            i++; /* "half an hour" */
        }
        *v = 5;
        *pi = i;
        return 1;
    }
    if (k == T_ZH_DIGIT || k == T_ZH_MULT) {
        if (!zh_int(t, &i, &iv)) {
            return 0;
        }
        *v = iv * 10;
        if (t[i].kind == T_ZH_POINT) {
            if (t[i + 1u].kind != T_ZH_DIGIT || (t[i + 1u].val & ZH_LIANG)) {
                return 0;
            }
            *v += t[i + 1u].val;
            for (i += 2u; t[i].kind == T_ZH_DIGIT; i++) {
                if (t[i].val != 0u) {
                    return 0;
                }
            }
        }
        *pi = i;
        return 1;
    }
    if (!en_int(t, &i, &iv)) {
        if (k == T_A && article_one && t[i + 1u].kind == T_UNIT) { /* "an hour"; a lone "a" is no number */
            *v = 10;
            *pi = i + 1u;
            return 1;
        }
        if (k == T_UNIT && article_one && t[i].num == 1) { /* "hour and a half": one, the unit read next */
            *v = 10;
            return 1;
        }
        return 0;
    }
    *v = iv * 10;
    if (t[i].kind == T_POINT) {
        if (t[i + 1u].kind != T_SMALL || t[i + 1u].val > 9u) {
            return 0;
        }
        *v += t[i + 1u].val;
        for (i += 2u; t[i].kind == T_SMALL && t[i].val <= 9u; i++) {
            if (t[i].val != 0u) {
                return 0;
            }
        }
    }
    *pi = i;
    return 1;
}

static uint32_t skip_fillers(const tok_t *t, uint32_t i)
{
    while (t[i].kind == T_FILLER) {
        i++;
    }
    return i;
}

/* "半" or "and [a] half" at i: index after it, or 0 */
static uint32_t half_suffix(const tok_t *t, uint32_t i)
{
    if (t[i].kind == T_ZH_HALF) {
        return i + 1u;
    }
    if (t[i].kind == T_AND) {
        if (t[i + 1u].kind == T_HALF) {
            return i + 2u;
        }
        if (t[i + 1u].kind == T_A && t[i + 2u].kind == T_HALF) {
            return i + 3u;
        }
    }
    return 0u;
}

typedef struct {
    int32_t tenths;
    uint32_t unit; /* UNIT_* */
} item_t;

/* item: number [fillers] [half] [fillers] [unit [fillers] [half] [fillers]] */
static int parse_item(const tok_t *t, uint32_t *pi, int article_one, item_t *it)
{
    uint32_t i = *pi, h;
    int32_t v;
    if (!parse_number(t, &i, article_one, &v)) {
        return 0;
    }
    i = skip_fillers(t, i);
    if (v % 10 == 0 && (h = half_suffix(t, i)) != 0u) {
        v += 5;
        i = skip_fillers(t, h);
    }
    it->unit = UNIT_NONE;
    if (t[i].kind == T_UNIT) {
        it->unit = t[i].val;
        i = skip_fillers(t, i + 1u);
        if (v % 10 == 0 && (h = half_suffix(t, i)) != 0u) {
            v += 5;
            i = skip_fillers(t, h);
        }
    }
    it->tenths = v;
    *pi = i;
    return 1;
}

/* The items of a span: -1 if it is malformed, else how many (0..MAX_ITEMS). */
static int parse_items(const uint8_t *s, uint32_t n, int article_one, item_t *items)
{
    tok_t t[MAX_TOKENS + 4u];
    uint32_t nt, i, count = 0u;
    if (!lex(s, n, t, &nt)) {
        return -1;
    }
    i = skip_fillers(t, 0u);
    while (t[i].kind != T_END) {
        if (count > 0u) {
            if (t[i].kind == T_AND || t[i].kind == T_COMMA ||
                (t[i].kind == T_ZH_DIGIT && t[i].val == 0u && items[count - 1u].unit != UNIT_NONE)) {
                i = skip_fillers(t, i + 1u); /* "1 hour and 5 minutes", "一小时零五分" */
            }
        }
        if (count == MAX_ITEMS || !parse_item(t, &i, article_one, &items[count])) {
            return -1;
        }
        count++;
    }
    return (int)count;
}

int bertl14_slot_parse_number(const char *text, uint32_t len, int32_t *value_tenths)
{
    item_t it[MAX_ITEMS];
    const uint8_t *s = (const uint8_t *)text;
    if (text == NULL || value_tenths == NULL || !utf8_valid(s, len) || parse_items(s, len, 0, it) != 1) {
        return 0;
    }
    *value_tenths = it[0].tenths;
    return 1;
}

/* ---- the number a tagged span continues --------------------------------------------------------------------- */

/* The end of the ASCII number word at s[i] (a word of the English lexicon, "1/2", a digit run, '%'); 0 if none.
   *joiner: the word only joins numbers ("a", "an", "and", "point"), so an extent never ends on it. */
static uint32_t number_word_end(const uint8_t *s, uint32_t n, uint32_t i, int *joiner)
{
    uint32_t j = i;
    *joiner = 0;
    if (i >= n) {
        return 0u;
    }
    if (n - i >= 3u && s[i] == '1' && s[i + 1u] == '/' && s[i + 2u] == '2' && (n - i == 3u || !is_digit(s[i + 3u]))) {
        return i + 3u;
    }
    if (is_digit(s[i])) {
        while (j < n && (is_digit(s[j]) || ((s[j] == '.' || s[j] == ',') && j + 1u < n && is_digit(s[j + 1u])))) {
            j++;
        }
        return j;
    }
    if (s[i] == '%') {
        return i + 1u;
    }
    {
        uint8_t w[WORD_MAX];
        uint32_t wl = 0u, matched;
        int idx;
        while (j < n && s[j] < 0x80u && is_letter(fold(s[j]))) {
            if (wl == WORD_MAX) {
                return 0u;
            }
            w[wl++] = (uint8_t)fold(s[j++]);
        }
        idx = wl ? lookup(en_words, (uint32_t)N_EN, w, wl, 0, &matched) : -1;
        if (idx < 0) {
            return 0u;
        }
        *joiner = (en_codes[idx] >> 8) == T_A || (en_codes[idx] >> 8) == T_AND || (en_codes[idx] >> 8) == T_POINT;
        return j;
    }
}

uint32_t bertl14_slot_number_extent(const char *text, uint32_t len, uint32_t end)
{
    const uint8_t *s = (const uint8_t *)text;
    uint32_t pos = end, good = end;
    if (text == NULL || end > len) {
        return end;
    }
    for (;;) {
        uint32_t j = pos, hyphens = 0u, word_end;
        int joiner;
        while (j < len && s[j] == ' ') {
            j++;
        }
        if (j == pos && j < len && s[j] == '-') { /* a hyphen between letters, as the reader takes it: "twenty-two" */
            hyphens = pos > 0u && s[pos - 1u] < 0x80u && is_letter(fold(s[pos - 1u])) && j + 1u < len &&
                              s[j + 1u] < 0x80u && is_letter(fold(s[j + 1u]))
                          ? 1u
                          : 2u;
            j++;
        }
        word_end = hyphens <= 1u ? number_word_end(s, len, j, &joiner) : 0u;
        if (word_end == 0u) {
            return good;
        }
        pos = word_end;
        if (!joiner) {
            good = word_end;
        }
    }
}

/* ---- the table --------------------------------------------------------------------------------------------------- */

typedef struct {
    const uint32_t *w;
    const uint8_t *pool;
    uint32_t n_slots, pool_bytes, total;
} table_t;

static int table_open(const uint32_t *w, table_t *tb)
{
    uint32_t total, pool;
    if (w[H_MAGIC] != MAGIC_WORD || w[H_VERSION] != VERSION_1 || w[H_WORDS] != H_HEADER_WORDS) {
        return 0;
    }
    total = w[H_TOTAL_WORDS];
    pool = w[H_POOL];
    if (w[H_SLOTS] != H_HEADER_WORDS || w[H_N_SLOTS] > MAX_SLOTS ||
        H_HEADER_WORDS + w[H_N_SLOTS] * S_WORDS > pool || pool > total ||
        w[H_POOL_BYTES] / 4u + ((w[H_POOL_BYTES] & 3u) != 0u) > total - pool) {
        return 0;
    }
    tb->w = w;
    tb->pool = (const uint8_t *)(w + pool);
    tb->n_slots = w[H_N_SLOTS];
    tb->pool_bytes = w[H_POOL_BYTES];
    tb->total = total;
    return 1;
}

static const uint32_t *slot_rec(const table_t *tb, uint32_t index)
{
    return tb->w + H_HEADER_WORDS + index * S_WORDS;
}

/* a NUL-terminated pool string of len bytes at off, or NULL if it is not inside the pool */
static const char *pool_str(const table_t *tb, uint32_t off, uint32_t len)
{
    if (off >= tb->pool_bytes || len >= tb->pool_bytes - off || tb->pool[off + len] != 0u) {
        return NULL;
    }
    return (const char *)tb->pool + off;
}

static const char *slot_name_of(const table_t *tb, uint32_t index)
{
    const uint32_t *r = slot_rec(tb, index);
    return pool_str(tb, r[S_NAME], r[S_INFO] >> INFO_NAME_LEN_SHIFT);
}

static int find_slot(const table_t *tb, const char *name, uint32_t *index)
{
    uint32_t k;
    for (k = 0u; k < tb->n_slots; k++) {
        const char *s = slot_name_of(tb, k);
        uint32_t m = 0u;
        if (s == NULL) {
            continue;
        }
        while (s[m] != '\0' && s[m] == name[m]) {
            m++;
        }
        if (s[m] == '\0' && name[m] == '\0') {
            *index = k;
            return 1;
        }
    }
    return 0;
}

static void put_number(bertl14_slot_value_t *o, const char *slot, int32_t tenths)
{
    o->slot = slot;
    o->kind = tenths % 10 == 0 ? BERTL14_SLOT_VALUE_INT : BERTL14_SLOT_VALUE_HALF;
    o->value_tenths = tenths;
    o->text = NULL;
    o->text_len = 0u;
}

/* exactly one number within [min, max]; halves only if allowed; a negated slot answers as its report slot */
static uint32_t number_value(const table_t *tb, const uint8_t *s, uint32_t n, const uint32_t *rec,
                             const char *name, bertl14_slot_value_t *o)
{
    item_t it[MAX_ITEMS];
    int32_t v;
    if (parse_items(s, n, 0, it) != 1) {
        return 0u;
    }
    v = it[0].tenths;
    if (!(v % 10 == 0 || (v % 10 == 5 && (rec[S_INFO] & INFO_HALVES))) ||
        v < (int32_t)rec[S_MIN] * 10 || v > (int32_t)rec[S_MAX] * 10) {
        return 0u;
    }
    if (rec[S_INFO] & INFO_NEGATE) {
        if (rec[S_AUX] >= tb->n_slots || (name = slot_name_of(tb, rec[S_AUX])) == NULL) {
            return 0u;
        }
        v = -v;
    }
    put_number(o, name, v);
    return 1u;
}

/* a list value out that is a whole number ("100", "-1"): 1 and its tenths; 0 for any other text */
static int entry_number(const char *out, uint32_t len, int32_t *tenths)
{
    uint32_t i = out[0] == '-' ? 1u : 0u;
    int32_t v = 0;
    if (len == i || len - i > 7u) {
        return 0;
    }
    for (; i < len; i++) {
        if (out[i] < '0' || out[i] > '9') {
            return 0;
        }
        v = v * 10 + (out[i] - '0');
    }
    *tenths = out[0] == '-' ? -v * 10 : v * 10;
    return 1;
}

/* hours / minutes / seconds; out has room for 3 */
static uint32_t duration_values(const table_t *tb, const uint8_t *s, uint32_t n, const uint32_t *rec,
                                const char *slot, bertl14_slot_value_t *o)
{
    item_t it[MAX_ITEMS];
    int32_t acc[3] = {-1, -1, -1};
    uint32_t k, count = 0u, prev = 0u;
    int n_items = parse_items(s, n, 1, it);
    if (n_items <= 0) {
        return 0u;
    }
    if (n_items == 1 && it[0].unit == UNIT_NONE) {
        uint32_t unit = (rec[S_INFO] >> INFO_UNIT_SHIFT) & 3u; /* no unit word: the tagged slot's unit */
        if (it[0].tenths == 5 && unit != UNIT_HOURS) {
            /* a bare "half" tagged minutes is Home Assistant's "{timer_half:minutes} an hour": 30 of that slot */
            put_number(o, slot, 300);
            return 1u;
        }
        it[0].unit = unit;
    }
    for (k = 0u; k < (uint32_t)n_items; k++) {
        int32_t ip = it[k].tenths / 10, frac = it[k].tenths % 10;
        uint32_t u = it[k].unit;
        if (u == UNIT_NONE || (k > 0u && u <= prev) || (frac != 0 && frac != 5) ||
            (frac == 5 && u == UNIT_SECONDS)) {
            return 0u;
        }
        prev = u;
        if (ip > 0 || frac == 0) {
            if (acc[u] >= 0) {
                return 0u;
            }
            acc[u] = ip;
        }
        if (frac == 5) {
            if (acc[u + 1u] >= 0) {
                return 0u; /* "an hour and a half and 10 minutes" */
            }
            acc[u + 1u] = 30;
        }
    }
    for (k = 0u; k < 3u; k++) {
        uint32_t sib = (rec[S_AUX] >> (10u * k)) & NO_SLOT;
        const uint32_t *r;
        const char *name;
        if (acc[k] < 0) {
            continue;
        }
        if (sib >= tb->n_slots) {
            return 0u;
        }
        r = slot_rec(tb, sib);
        name = slot_name_of(tb, sib);
        if (name == NULL || acc[k] < (int32_t)r[S_MIN] || acc[k] > (int32_t)r[S_MAX]) {
            return 0u;
        }
        put_number(&o[count++], name, acc[k] * 10);
    }
    return count;
}

/* the span as list entries are stored: whitespace runs as one space, trimmed, full-width folded, ASCII lower
   case, a leading "the " / "a " / "an " dropped; 0 if longer than NORM_MAX */
static uint32_t normalise(const uint8_t *s, uint32_t n, uint8_t *buf, uint32_t *start)
{
    uint32_t i = 0u, len, cp, out = 0u;
    int space = 0;
    *start = 0u;
    while (i < n) {
        cp = peek(s, n, i, &len);
        i += len;
        if (is_space(cp)) {
            space = out > 0u;
            continue;
        }
        if (space) {
            if (out >= NORM_MAX) {
                return 0u;
            }
            buf[out++] = ' ';
            space = 0;
        }
        {
            uint32_t nb = cp < 0x80u ? 1u : cp < 0x800u ? 2u : cp < 0x10000u ? 3u : 4u, b;
            if (out + nb > NORM_MAX) {
                return 0u;
            }
            if (nb == 1u) {
                buf[out++] = (uint8_t)cp;
            } else {
                buf[out++] = (uint8_t)((0xF00u >> nb) | (cp >> (6u * (nb - 1u))));
                for (b = nb - 1u; b > 0u; b--) {
                    buf[out++] = (uint8_t)(0x80u | ((cp >> (6u * (b - 1u))) & 0x3Fu));
                }
            }
        }
    }
    {
        static const char *const articles[3] = {"the ", "a ", "an "};
        uint32_t a;
        for (a = 0u; a < 3u; a++) {
            uint32_t m = 0u;
            while (articles[a][m] != '\0' && m < out && buf[m] == (uint8_t)articles[a][m]) {
                m++;
            }
            if (articles[a][m] == '\0' && out > m) {
                *start = m;
                break;
            }
        }
    }
    return out - *start;
}

static uint32_t list_value(const table_t *tb, const uint8_t *s, uint32_t n, const uint32_t *rec,
                           const char *name, bertl14_slot_value_t *o)
{
    uint8_t buf[NORM_MAX];
    uint32_t start, len = normalise(s, n, buf, &start), e, first = rec[S_AUX], count = rec[S_COUNT];
    if (first < H_HEADER_WORDS || first > tb->total || count > (tb->total - first) / 2u) {
        return 0u;
    }
    for (e = 0u; len > 0u && e < count; e++) {
        const uint32_t *ent = tb->w + first + 2u * e;
        uint32_t in_len = ent[0] >> 24, out_len = ent[1] >> 24, m = 0u;
        const char *in = pool_str(tb, ent[0] & POOL_OFF_MASK, in_len);
        const char *val = pool_str(tb, ent[1] & POOL_OFF_MASK, out_len);
        if (in == NULL || val == NULL || in_len != len) {
            continue;
        }
        while (m < len && (uint8_t)in[m] == buf[start + m]) {
            m++;
        }
        if (m == len) {
            int32_t tenths;
            if ((rec[S_INFO] & INFO_NUMBER) && entry_number(val, out_len, &tenths)) {
                put_number(o, name, tenths);
                return 1u;
            }
            o->slot = name;
            o->kind = BERTL14_SLOT_VALUE_TEXT;
            o->value_tenths = 0;
            o->text = val;
            o->text_len = out_len;
            return 1u;
        }
    }
    return (rec[S_INFO] & INFO_NUMBER) ? number_value(tb, s, n, rec, name, o) : 0u;
}

/* sentence punctuation a wildcard does not start or end with ("coffee," -> "coffee") */
static int is_edge_punct(uint32_t cp)
{
    return cp == ',' || cp == '.' || cp == ';' || cp == ':' || cp == '!' || cp == '?' || cp == 0x3001u ||
           cp == 0x3002u || cp == 0xFF01u || cp == 0xFF0Cu || cp == 0xFF1Au || cp == 0xFF1Bu || cp == 0xFF1Fu;
}

/* trimmed of spaces and sentence punctuation, then cut to BERTL14_SLOT_TEXT_MAX bytes at a character boundary and
   trimmed again */
static uint32_t wildcard_value(const uint8_t *s, uint32_t n, const char *name, bertl14_slot_value_t *o)
{
    uint32_t i = 0u, len, cp, first = n, end = 0u;
    while (i < n) {
        len = utf8_at(s, n, i, &cp);
        if (!is_space(cp) && !is_edge_punct(cp)) {
            if (first == n) {
                first = i;
            }
            if (i + len - first > BERTL14_SLOT_TEXT_MAX) {
                break;
            }
            end = i + len;
        }
        i += len;
    }
    if (first == n) {
        return 0u;
    }
    o->slot = name;
    o->kind = BERTL14_SLOT_VALUE_TEXT;
    o->value_tenths = 0;
    o->text = (const char *)s + first;
    o->text_len = end - first;
    return 1u;
}

bertl14_status_t bertl14_slot_values(const uint32_t *table, const char *slot_name, const char *span,
                                     uint32_t span_len, bertl14_slot_value_t *out, uint32_t max_out,
                                     uint32_t *n_out)
{
    table_t tb;
    bertl14_slot_value_t vals[BERTL14_SLOT_VALUES_MAX];
    const uint8_t *s = (const uint8_t *)span;
    const uint32_t *rec;
    const char *name;
    uint32_t index, n = 0u, k;
    if (n_out == NULL) {
        return BERTL14_ERR_NULL_POINTER;
    }
    *n_out = 0u;
    if (table == NULL || slot_name == NULL || span == NULL || (out == NULL && max_out > 0u)) {
        return BERTL14_ERR_NULL_POINTER;
    }
    if (!table_open(table, &tb)) {
        return BERTL14_ERR_INVALID_CONFIG;
    }
    if (!utf8_valid(s, span_len)) {
        return BERTL14_ERR_INVALID_UTF8;
    }
    if (!find_slot(&tb, slot_name, &index)) {
        return BERTL14_OK;
    }
    rec = slot_rec(&tb, index);
    name = slot_name_of(&tb, index);
    switch (rec[S_INFO] & INFO_TYPE) {
    case BERTL14_SLOT_TYPE_NUMBER: n = number_value(&tb, s, span_len, rec, name, vals); break;
    case BERTL14_SLOT_TYPE_DURATION: n = duration_values(&tb, s, span_len, rec, name, vals); break;
    case BERTL14_SLOT_TYPE_LIST: n = list_value(&tb, s, span_len, rec, name, vals); break;
    case BERTL14_SLOT_TYPE_WILDCARD: n = wildcard_value(s, span_len, name, vals); break;
    default: return BERTL14_ERR_INVALID_CONFIG;
    }
    if (n > max_out) {
        return BERTL14_ERR_BUFFER_TOO_SMALL;
    }
    for (k = 0u; k < n; k++) {
        out[k] = vals[k];
    }
    *n_out = n;
    return BERTL14_OK;
}

uint32_t bertl14_slot_type(const uint32_t *table, const char *slot_name)
{
    table_t tb;
    uint32_t index;
    if (table == NULL || slot_name == NULL || !table_open(table, &tb) || !find_slot(&tb, slot_name, &index)) {
        return 0u;
    }
    return slot_rec(&tb, index)[S_INFO] & INFO_TYPE;
}

/* The record of a slot that takes a number (a number slot, or a list slot that also takes one); NULL otherwise. */
static const uint32_t *number_slot_rec(const uint32_t *table, const char *slot_name)
{
    table_t tb;
    uint32_t index;
    if (table == NULL || slot_name == NULL || !table_open(table, &tb) || !find_slot(&tb, slot_name, &index)) {
        return NULL;
    }
    const uint32_t *rec = slot_rec(&tb, index);
    const uint32_t info = rec[S_INFO];
    const int takes = (info & INFO_TYPE) == BERTL14_SLOT_TYPE_NUMBER ||
                      ((info & INFO_TYPE) == BERTL14_SLOT_TYPE_LIST && (info & INFO_NUMBER) != 0u);
    return takes ? rec : NULL;
}

int bertl14_slot_takes_number(const uint32_t *table, const char *slot_name)
{
    return number_slot_rec(table, slot_name) != NULL;
}

int bertl14_slot_number_bounds(const uint32_t *table, const char *slot_name, int32_t *min_value, int32_t *max_value)
{
    const uint32_t *rec = number_slot_rec(table, slot_name);
    if (rec == NULL || min_value == NULL || max_value == NULL) {
        return 0;
    }
    *min_value = (int32_t)rec[S_MIN];
    *max_value = (int32_t)rec[S_MAX];
    return 1;
}

static int in_range(int32_t v) { return v >= -VALUE_CAP && v <= VALUE_CAP; }

bertl14_status_t bertl14_slot_table_validate(const uint32_t *table)
{
    table_t tb;
    uint32_t k, sum = 0u, entries_end, pool_off;
    if (table == NULL) {
        return BERTL14_ERR_NULL_POINTER;
    }
    if (!table_open(table, &tb) || table[H_FLAGS] > 1u || tb.total - table[H_POOL] != (tb.pool_bytes + 3u) / 4u) {
        return BERTL14_ERR_INVALID_CONFIG;
    }
    for (k = 0u; k < tb.total; k++) {
        sum += k == H_CHECKSUM ? 0u : table[k];
    }
    if (sum != table[H_CHECKSUM]) {
        return BERTL14_ERR_INVALID_CONFIG;
    }
    pool_off = table[H_POOL];
    entries_end = H_HEADER_WORDS + tb.n_slots * S_WORDS; /* list entries follow the slot records, in order */
    for (k = 0u; k < tb.n_slots; k++) {
        const uint32_t *r = slot_rec(&tb, k);
        const char *name = slot_name_of(&tb, k);
        uint32_t type = r[S_INFO] & INFO_TYPE, len = r[S_INFO] >> INFO_NAME_LEN_SHIFT, m, e;
        if (name == NULL || len == 0u) {
            return BERTL14_ERR_INVALID_CONFIG;
        }
        for (m = 0u; m < len; m++) { /* no NUL inside a name */
            if (name[m] == '\0') {
                return BERTL14_ERR_INVALID_CONFIG;
            }
        }
        for (m = 0u; m < k; m++) { /* unique names */
            const char *other = slot_name_of(&tb, m);
            uint32_t j = 0u;
            while (other[j] != '\0' && other[j] == name[j]) {
                j++;
            }
            if (other[j] == name[j]) {
                return BERTL14_ERR_INVALID_CONFIG;
            }
        }
        if (type < BERTL14_SLOT_TYPE_NUMBER || type > BERTL14_SLOT_TYPE_WILDCARD ||
            !in_range((int32_t)r[S_MIN]) || !in_range((int32_t)r[S_MAX]) || (int32_t)r[S_MIN] > (int32_t)r[S_MAX]) {
            return BERTL14_ERR_INVALID_CONFIG;
        }
        if (type == BERTL14_SLOT_TYPE_LIST) {
            if (r[S_AUX] != entries_end || r[S_COUNT] > (pool_off - entries_end) / 2u) {
                return BERTL14_ERR_INVALID_CONFIG;
            }
            for (e = 0u; e < r[S_COUNT]; e++) {
                const uint32_t *ent = table + r[S_AUX] + 2u * e;
                if (pool_str(&tb, ent[0] & POOL_OFF_MASK, ent[0] >> 24) == NULL ||
                    pool_str(&tb, ent[1] & POOL_OFF_MASK, ent[1] >> 24) == NULL) {
                    return BERTL14_ERR_INVALID_CONFIG;
                }
            }
            entries_end += 2u * r[S_COUNT];
        } else if (type == BERTL14_SLOT_TYPE_NUMBER && (r[S_INFO] & INFO_NEGATE)) {
            if (r[S_AUX] >= tb.n_slots || r[S_AUX] == k) {
                return BERTL14_ERR_INVALID_CONFIG;
            }
        } else if (type == BERTL14_SLOT_TYPE_DURATION) {
            uint32_t unit = (r[S_INFO] >> INFO_UNIT_SHIFT) & 3u, u;
            if (unit > UNIT_SECONDS || ((r[S_AUX] >> (10u * unit)) & NO_SLOT) != k) {
                return BERTL14_ERR_INVALID_CONFIG;
            }
            for (u = 0u; u < 3u; u++) { /* every sibling is a duration of its unit with the same siblings */
                uint32_t sib = (r[S_AUX] >> (10u * u)) & NO_SLOT;
                const uint32_t *sr;
                if (sib >= tb.n_slots) {
                    return BERTL14_ERR_INVALID_CONFIG;
                }
                sr = slot_rec(&tb, sib);
                if ((sr[S_INFO] & INFO_TYPE) != BERTL14_SLOT_TYPE_DURATION ||
                    ((sr[S_INFO] >> INFO_UNIT_SHIFT) & 3u) != u || sr[S_AUX] != r[S_AUX]) {
                    return BERTL14_ERR_INVALID_CONFIG;
                }
            }
        }
    }
    return entries_end == pool_off ? BERTL14_OK : BERTL14_ERR_INVALID_CONFIG;
}
