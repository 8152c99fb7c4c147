/*
 * Slot values of a tagged sentence: the tagger's BIO tags over the tokens -> spans of the input text -> the
 * value table's values (bertl14_slot_values). The decoding rule is reference/tagging.py's (the Python twin):
 * a span opens at B-x, or at an I-x that does not continue an x span, and grows over the following I-x tokens
 * and over a B-x right after it (nothing, one space or one hyphen between: the tagger may open "seven" of
 * "seventy-seven" again);
 * it covers the text from its first token's start to its last token's end, without clause punctuation at its
 * edges (a wildcard's: widened to whole words; a number's, duration's or list's: over the number words or Chinese
 * numerals that follow when that still reads as a value, the tokens it grew over opening no span; one that reads
 * as nothing: with the article or Chinese numerals before it, or without the article it starts with; a duration's:
 * over the Chinese numerals and units before it when the whole reads as a duration, "一个" + "半小时").
 * settle_span has the rule.
 */
#include <string.h>

#include "bertl14_slots.h"

/* A registry placeholder: the registry's matcher answers that name, not the tagger. */
static int is_placeholder(const char *s, uint32_t len)
{
    static const char *const names[] = {"[NAME]", "[AREA]", "[FLOOR]"};
    for (uint32_t i = 0; i < sizeof names / sizeof names[0]; i++) {
        if (strlen(names[i]) == len && memcmp(names[i], s, len) == 0) {
            return 1;
        }
    }
    return 0;
}

/* "B-minutes" -> kind 'B', slot "minutes"; "O" or anything else -> kind 0. */
static char tag_kind(const char *tag, const char **slot)
{
    if ((tag[0] == 'B' || tag[0] == 'I') && tag[1] == '-' && tag[2] != '\0') {
        *slot = tag + 2;
        return tag[0];
    }
    return 0;
}

static int word_char(char c)
{
    return (c >= '0' && c <= '9') || (c >= 'A' && c <= 'Z') || (c >= 'a' && c <= 'z');
}

/* A wildcard's span widened to whole words: a tag on a word piece ("ice" -> "i" "##ce") gives the word, and a hyphen
   between two letters or digits is inside a word ("lo-fi", "t-shirt"); numbers and list words are read as tagged
   ("10 min" of a typed "10 minuets"). tagging.whole_words is the Python twin. */
static void whole_words(const char *text, uint32_t len, uint32_t *start, uint32_t *end)
{
    for (;;) {
        if (*start > 0u && *start < len && word_char(text[*start - 1u]) && word_char(text[*start])) {
            (*start)--;
        } else if (*start > 1u && *start < len && text[*start - 1u] == '-' && word_char(text[*start - 2u]) &&
                   word_char(text[*start])) {
            *start -= 2u;
        } else {
            break;
        }
    }
    for (;;) {
        if (*end > 0u && *end < len && word_char(text[*end - 1u]) && word_char(text[*end])) {
            (*end)++;
        } else if (*end > 0u && *end + 1u < len && text[*end] == '-' && word_char(text[*end - 1u]) &&
                   word_char(text[*end + 1u])) {
            *end += 2u;
        } else {
            break;
        }
    }
}

/* The span gives at least one value of its slot. */
static int has_value(const uint32_t *table, const char *slot, const char *span, uint32_t len)
{
    bertl14_slot_value_t found[BERTL14_SLOT_VALUES_MAX];
    uint32_t n_found = 0;
    return bertl14_slot_values(table, slot, span, len, found, BERTL14_SLOT_VALUES_MAX, &n_found) == BERTL14_OK &&
           n_found > 0u;
}

/* The length of the clause punctuation ending at text[end] (before end) / starting at text[start]: ".,!?;:" or a
   full-width 。，！？；：、 (three UTF-8 bytes each); 0 if none. */
static const char *const clause_punct[] = {".", ",", "!", "?", ";", ":", "\xE3\x80\x82", "\xEF\xBC\x8C",
                                           "\xEF\xBC\x81", "\xEF\xBC\x9F", "\xEF\xBC\x9B", "\xEF\xBC\x9A",
                                           "\xE3\x80\x81"};

static uint32_t punct_at(const char *text, uint32_t start, uint32_t end, int at_end)
{
    for (uint32_t i = 0; i < sizeof clause_punct / sizeof clause_punct[0]; i++) {
        const uint32_t n = (uint32_t)strlen(clause_punct[i]);
        if (end - start >= n && memcmp(text + (at_end ? end - n : start), clause_punct[i], n) == 0) {
            return n;
        }
    }
    return 0;
}

/* A span without the clause punctuation at its edges: "21." reads 21 (tagging.trim_punctuation). */
static void trim_punctuation(const char *text, uint32_t *start, uint32_t *end)
{
    for (;;) {
        uint32_t n = *start < *end ? punct_at(text, *start, *end, 1) : 0u;
        if (n != 0u) {
            *end -= n;
            continue;
        }
        n = *start < *end ? punct_at(text, *start, *end, 0) : 0u;
        if (n == 0u) {
            return;
        }
        *start += n;
    }
}

/* The length of an "a " / "an " (any case) at text[start..end), 0 if none (tagging._article_at). */
static uint32_t article_at(const char *text, uint32_t start, uint32_t end)
{
    const char a = text[start];
    if ((a == 'a' || a == 'A') && end - start > 2u && text[start + 1u] == ' ') {
        return 2u;
    }
    if ((a == 'a' || a == 'A') && end - start > 3u && (text[start + 1u] == 'n' || text[start + 1u] == 'N') &&
        text[start + 2u] == ' ') {
        return 3u;
    }
    return 0u;
}

/* Where a span starts when the word "a" / "an" right before it is taken in ("a" + "minute"); start if none. */
static uint32_t article_before(const char *text, uint32_t start)
{
    for (uint32_t n = 2u; n <= 3u; n++) {
        if (start >= n) {
            const uint32_t s = start - n;
            if (article_at(text, s, start + 1u) == n && (s == 0u || !word_char(text[s - 1u]))) {
                return s;
            }
        }
    }
    return start;
}

/* Chinese numerals and the unit characters that follow or lead them in a value ("二十" + "三", "两个" + "小时"),
   three UTF-8 bytes each (tagging._ZH_NUMBER_CHARS). */
static const char zh_number_chars[] = "零〇一二两三四五六七八九十百千万点半个小时分钟秒度";

/* 3 when text[i..i+3) is one of zh_number_chars, else 0. */
static uint32_t zh_char_at(const char *text, uint32_t len, uint32_t i)
{
    if (i + 3u > len) {
        return 0u;
    }
    for (uint32_t k = 0; k + 3u <= sizeof zh_number_chars - 1u; k += 3u) {
        if (memcmp(text + i, zh_number_chars + k, 3u) == 0) {
            return 3u;
        }
    }
    return 0u;
}

/* A span's end over the Chinese numerals and units right after it (tagging.zh_number_extent). */
static uint32_t zh_number_extent(const char *text, uint32_t len, uint32_t end)
{
    while (end < len && zh_char_at(text, len, end) != 0u) {
        end += 3u;
    }
    return end;
}

/* A span's start over the Chinese numerals and units right before it ("两个" + "小时"): the farthest such start
   from which the longer span reads as a value of its slot, trying the nearer ones when it does not ("设置一个" +
   "两小时" reads from "两"); start if none does (tagging.zh_number_start). */
static uint32_t zh_number_start(const uint32_t *table, const char *slot, const char *text, uint32_t len,
                                uint32_t start, uint32_t end)
{
    uint32_t farthest = start;
    while (farthest >= 3u && zh_char_at(text, len, farthest - 3u) != 0u) {
        farthest -= 3u;
    }
    for (uint32_t s = farthest; s < start; s += 3u) {
        if (has_value(table, slot, text + s, end - s)) {
            return s;
        }
    }
    return start;
}

/* Settle a decoded span's edges: clause punctuation off; a wildcard to whole words; a number, duration or list over
   the number words (or Chinese numerals) that follow when that still reads as a value ("one hundred" + "and
   twenty", "二十" + "三"), and, when it still reads as nothing, with the article or Chinese numerals before it ("a
   minute", "两个小时") or without the article it starts with ("a 3 minute"); a duration over the Chinese numerals
   and units before it when the whole still reads as a duration ("一个" + "半小时": hours=1 minutes=30). */
static void settle_span(const uint32_t *table, const char *slot, const char *text, uint32_t text_len,
                        uint32_t *start, uint32_t *end)
{
    trim_punctuation(text, start, end);
    const uint32_t type = bertl14_slot_type(table, slot);
    if (type == BERTL14_SLOT_TYPE_WILDCARD) {
        whole_words(text, text_len, start, end);
    } else if ((type == BERTL14_SLOT_TYPE_NUMBER || type == BERTL14_SLOT_TYPE_DURATION ||
                type == BERTL14_SLOT_TYPE_LIST) &&
               *start < *end) {
        uint32_t whole = bertl14_slot_number_extent(text, text_len, *end);
        if (whole == *end) {
            whole = zh_number_extent(text, text_len, *end); /* "二十" + "三" */
        }
        if (whole != *end && has_value(table, slot, text + *start, whole - *start)) {
            *end = whole;
        }
        if (!has_value(table, slot, text + *start, *end - *start)) {
            /* a start before it that reads: the article's, else the Chinese numerals' (already read there) */
            const uint32_t article = article_before(text, *start);
            const uint32_t before =
                article != *start ? (has_value(table, slot, text + article, *end - article) ? article : *start)
                                  : zh_number_start(table, slot, text, text_len, *start, *end); /* "两个" + "小时" */
            const uint32_t skip = article_at(text, *start, *end);
            if (before != *start) {
                *start = before;
            } else if (skip != 0u && has_value(table, slot, text + *start + skip, *end - *start - skip)) {
                *start += skip;
            }
        } else if (type == BERTL14_SLOT_TYPE_DURATION) {
            *start = zh_number_start(table, slot, text, text_len, *start, *end); /* "一个" + "半小时" */
        }
    }
}

/* Normalise one span and append its values, skipping slots already answered (the first span wins). */
static bertl14_status_t add_span(const uint32_t *table, const char *slot, const char *text, uint32_t start,
                                 uint32_t end, bertl14_slot_value_t *out, uint32_t max_out, uint32_t *n)
{
    if (is_placeholder(text + start, end - start)) {
        return BERTL14_OK;
    }
    bertl14_slot_value_t found[BERTL14_SLOT_VALUES_MAX];
    uint32_t n_found = 0;
    const bertl14_status_t st =
        bertl14_slot_values(table, slot, text + start, end - start, found, BERTL14_SLOT_VALUES_MAX, &n_found);
    if (st != BERTL14_OK) {
        return st == BERTL14_ERR_INVALID_CONFIG || st == BERTL14_ERR_NULL_POINTER ? st : BERTL14_OK;
    }
    for (uint32_t i = 0; i < n_found; i++) {
        uint32_t j = 0;
        while (j < *n && strcmp(out[j].slot, found[i].slot) != 0) {
            j++;
        }
        if (j < *n) {
            continue; /* this slot already has its value */
        }
        if (*n >= max_out) {
            return BERTL14_ERR_BUFFER_TOO_SMALL;
        }
        out[(*n)++] = found[i];
    }
    return BERTL14_OK;
}

bertl14_status_t bertl14_slots_extract(const bertl14_ctx_t *ctx, const uint32_t *table, const char *text,
                                       const uint8_t *tags, const uint16_t *offsets, uint32_t n_tokens,
                                       bertl14_slot_value_t *out, uint32_t max_out, uint32_t *n_out)
{
    if (ctx == NULL || table == NULL || text == NULL || tags == NULL || offsets == NULL || out == NULL ||
        n_out == NULL) {
        return BERTL14_ERR_NULL_POINTER;
    }
    *n_out = 0;
    const uint32_t text_len = (uint32_t)strlen(text);
    const char *open_slot = NULL; /* the span being grown */
    uint32_t open_start = 0, open_end = 0;
    uint32_t consumed = 0; /* the end of the text the last settled span read */
    bertl14_status_t st = BERTL14_OK;
    for (uint32_t t = 0; t <= n_tokens && st == BERTL14_OK; t++) {
        const char *slot = NULL;
        char kind = 0;
        uint32_t start = 0, end = 0;
        if (t < n_tokens) {
            start = offsets[2u * t];
            end = offsets[2u * t + 1u];
            kind = end > start && end <= text_len ? tag_kind(bertl14_ctx_tag_name(ctx, tags[t]), &slot) : 0;
        }
        if (kind != 0 && open_slot != NULL && strcmp(open_slot, slot) == 0 &&
            (kind == 'I' || start == open_end ||
             (start == open_end + 1u && (text[open_end] == ' ' || text[open_end] == '-')))) {
            open_end = end; /* the span grows: over I-x, and over a B-x right after it ("seventy" "seven") */
            continue;
        }
        if (open_slot != NULL) { /* the span ends before token t */
            settle_span(table, open_slot, text, text_len, &open_start, &open_end);
            if (open_end > consumed) {
                consumed = open_end;
            }
            if (open_start < open_end) {
                st = add_span(table, open_slot, text, open_start, open_end, out, max_out, n_out);
            }
            open_slot = NULL;
        }
        if (kind != 0 && start < consumed) {
            kind = 0; /* a number span grown over this token read it: "half" of "an hour and a half" */
        }
        if (kind != 0) {
            open_slot = slot;
            open_start = start;
            open_end = end;
        }
    }
    return st;
}
