/*
 * Slot values of a tagged sentence: the tagger's BIO tags over the tokens -> spans of the input text -> the
 * value table's values (bertl14_slot_values). The decoding rule is tagging.py's (the Python twin):
 * a span opens at B-x, or at an I-x that does not continue an x span, and grows over the following I-x tokens
 * and over a B-x right after it (nothing, one space or one hyphen between: the tagger may open "seven" of
 * "seventy-seven" again);
 * it covers the text from its first token's start to its last token's end (a wildcard's: widened to whole words; a
 * number's or duration's: over the number words that follow, bertl14_slot_number_extent, when that still reads
 * as a value).
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

/* A wildcard's span widened to whole words: a tag on a word piece ("ice" -> "i" "##ce") gives the word; numbers and
   list words are read as tagged ("10 min" of a typed "10 minuets"). tagging.whole_words is the Python twin. */
static void whole_words(const char *text, uint32_t len, uint32_t *start, uint32_t *end)
{
    while (*start > 0u && *start < len && word_char(text[*start - 1u]) && word_char(text[*start])) {
        (*start)--;
    }
    while (*end > 0u && *end < len && word_char(text[*end - 1u]) && word_char(text[*end])) {
        (*end)++;
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
            const uint32_t type = bertl14_slot_type(table, open_slot);
            if (type == BERTL14_SLOT_TYPE_WILDCARD) {
                whole_words(text, text_len, &open_start, &open_end);
            } else if (type == BERTL14_SLOT_TYPE_NUMBER || type == BERTL14_SLOT_TYPE_DURATION) {
                /* "one hundred" + "and twenty": the longer span when it reads as a value, else the tagged one */
                const uint32_t whole = bertl14_slot_number_extent(text, text_len, open_end);
                if (whole != open_end && has_value(table, open_slot, text + open_start, whole - open_start)) {
                    open_end = whole;
                }
            }
            st = add_span(table, open_slot, text, open_start, open_end, out, max_out, n_out);
            open_slot = NULL;
        }
        if (kind != 0) {
            open_slot = slot;
            open_start = start;
            open_end = end;
        }
    }
    return st;
}
