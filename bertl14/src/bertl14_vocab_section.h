/**
 * @file bertl14_vocab_section.h
 * @brief Internal: layout of the vocabulary section (bertl14_vocab_offsets[]) and strict UTF-8 decoding, shared
 * by the tokenizer (bertl14_tokenizer.c) and the registry matcher (registry/bertl14_registry.c), so that both read
 * the text and the section the same way. Written by scripts/bertl14_tools/model/vocab_blob.py (HDR_*, FLAG_*: the
 * same names and order; tests/registry checks them); described in docs/tokenizer.md.
 */
#ifndef BERTL14_VOCAB_SECTION_H
#define BERTL14_VOCAB_SECTION_H

#include <stdint.h>

#define BERTL14_VOCAB_MAGIC 0x4B4F5442u /**< header word 0: bytes "BTOK" */
#define BERTL14_VOCAB_VERSION 1u
#define BERTL14_VOCAB_INDEX_WORDS 256u  /**< the seed's first-byte index comes first */

/* header words, after the 256-word first-byte index */
enum {
    HDR_MAGIC, HDR_VERSION, HDR_WORDS, HDR_TOTAL_WORDS, HDR_VOCAB_SIZE,
    HDR_PAD_ID, HDR_UNK_ID, HDR_CLS_ID, HDR_SEP_ID, HDR_MASK_ID,
    HDR_FLAGS, HDR_UNIDATA_VERSION, HDR_HF_TOKENIZERS_VERSION, HDR_MAX_CHARS_PER_WORD,
    HDR_N_START, HDR_START_ENTRIES, HDR_START_IDS,
    HDR_N_CONT, HDR_CONT_INDEX, HDR_CONT_ENTRIES, HDR_CONT_IDS,
    HDR_POOL, HDR_POOL_BYTES,
    HDR_N_CLASSES, HDR_CLASSES,
    HDR_N_MAP, HDR_MAP_KEYS, HDR_MAP_OFFSETS, HDR_MAP_OUT, HDR_MAP_OUT_WORDS,
    HDR_CHECKSUM, HEADER_WORDS
};

/* HDR_FLAGS bits */
#define FLAG_LOWER_CASE 1u
#define FLAG_STRIP_ACCENTS 2u
#define FLAG_CHINESE_CHARS 4u
#define FLAG_IDS_32 8u
#define FLAG_TOKENIZER_OPTIONS (FLAG_LOWER_CASE | FLAG_STRIP_ACCENTS | FLAG_CHINESE_CHARS)

/* character classes (class table) and kinds of mapped output characters (map table, bits 29-30) */
enum { CLASS_WORD = 0, CLASS_DROP = 1, CLASS_SPACE = 2, CLASS_PUNCT = 3, CLASS_CJK = 4 };
enum { KIND_WORD = 0, KIND_PUNCT = 1, KIND_SPACE = 2 };

/* Hangul syllables: decomposed arithmetically when accents are stripped (no map entries) */
#define HANGUL_FIRST 0xAC00u
#define HANGUL_LAST 0xD7A3u

/* Decode one character of strict UTF-8 at s (NUL-terminated); returns its byte length, 0 if invalid. */
static inline uint32_t bertl14_utf8_decode(const uint8_t *s, uint32_t *cp)
{
    uint8_t b0 = s[0];
    uint8_t lo = 0x80u, hi = 0xBFu; /* allowed range of the second byte */
    uint32_t len, c, i;
    if (b0 < 0x80u) {
        *cp = b0;
        return 1u;
    } else if (b0 >= 0xC2u && b0 <= 0xDFu) {
        len = 2u; c = b0 & 0x1Fu;
    } else if (b0 >= 0xE0u && b0 <= 0xEFu) {
        len = 3u; c = b0 & 0x0Fu;
        if (b0 == 0xE0u) { lo = 0xA0u; }      /* overlong */
        if (b0 == 0xEDu) { hi = 0x9Fu; }      /* surrogates */
    } else if (b0 >= 0xF0u && b0 <= 0xF4u) {
        len = 4u; c = b0 & 0x07u;
        if (b0 == 0xF0u) { lo = 0x90u; }      /* overlong */
        if (b0 == 0xF4u) { hi = 0x8Fu; }      /* above U+10FFFF */
    } else {
        return 0u;                            /* continuation byte, C0/C1 overlong, F5..FF */
    }
    for (i = 1u; i < len; i++) {              /* stops at the NUL terminator: 0 is never a continuation */
        uint8_t b = s[i];
        if (b < lo || b > hi) {
            return 0u;
        }
        lo = 0x80u; hi = 0xBFu;
        c = (c << 6) | (b & 0x3Fu);
    }
    *cp = c;
    return len;
}

#endif /* BERTL14_VOCAB_SECTION_H */
