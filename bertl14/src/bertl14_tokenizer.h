/**
 * @file bertl14_tokenizer.h
 * @brief Internal: BERT WordPiece tokenizer over the converter's vocabulary section (bertl14_vocab_offsets[]).
 *
 * The section layout is written by scripts/bertl14_tools/model/vocab_blob.py and described in docs/tokenizer.md.
 * The ids equal Hugging Face's BertTokenizer on valid UTF-8 input (tests/tokenizer/). No malloc, no globals,
 * linear in the input length; stack use is one word buffer and its characters' input offsets (~920 bytes).
 */
#ifndef BERTL14_TOKENIZER_H
#define BERTL14_TOKENIZER_H

#include <stdint.h>

#include "bertl14.h"
#include "bertl14_vocab_section.h"

#ifdef __cplusplus
extern "C" {
#endif

#define BERTL14_TOKENIZER_MAX_WORD_CHARS 100u /**< HF's max_input_chars_per_word: longer words are [UNK] */

/** Which special token bertl14_tokenizer_special_id() returns. */
typedef enum {
    BERTL14_TOKEN_PAD = 0,
    BERTL14_TOKEN_UNK = 1,
    BERTL14_TOKEN_CLS = 2,
    BERTL14_TOKEN_SEP = 3,
    BERTL14_TOKEN_MASK = 4,
} bertl14_special_token_t;

/**
 * Tokenize NUL-terminated UTF-8 @p text into [CLS] pieces... [SEP].
 *
 * @param vocab_section the converter's bertl14_vocab_offsets[]
 * @param text          NUL-terminated UTF-8 (the text ends at the first NUL byte)
 * @param ids           output, room for @p max_tokens ids
 * @param offsets       output or NULL: 2 * @p max_tokens values, start and end (exclusive) byte of each id's text
 *                      ([CLS], [SEP]: 0, 0; a piece: the input characters it came from; capped at 65535)
 * @param count         output: number of ids written (0 on an error other than overflow)
 * @param max_tokens    capacity of @p ids, counting [CLS] and [SEP]; at least 2
 * @return BERTL14_OK; BERTL14_ERR_TOKEN_OVERFLOW (ids hold the first max_tokens-2 pieces and [SEP], usable);
 *         BERTL14_ERR_INVALID_UTF8 (overlong, surrogate, above U+10FFFF, truncated or stray byte);
 *         BERTL14_ERR_NULL_POINTER; BERTL14_ERR_INVALID_CONFIG (not a vocabulary section);
 *         BERTL14_ERR_INVALID_SEQ_LEN (max_tokens < 2).
 */
bertl14_status_t bertl14_tokenizer_run(const uint32_t *vocab_section, const char *text, int32_t *ids,
                                       uint16_t *offsets, uint32_t *count, uint32_t max_tokens);

/**
 * Full check of the @p size bytes of a vocabulary section (size, header, checksum, table bounds, piece order and ids):
 * O(section size), meant for bertl14_init; nothing past @p size is read. bertl14_tokenizer_run only checks the header.
 * @return BERTL14_OK, BERTL14_ERR_NULL_POINTER, BERTL14_ERR_MODEL_SIZE, _FORMAT, _CORRUPT or _LAYOUT.
 */
bertl14_status_t bertl14_tokenizer_validate(const uint32_t *vocab_section, uint32_t size);

/** Vocabulary size recorded in the section; 0 if the section is not recognised. */
uint32_t bertl14_tokenizer_vocab_size(const uint32_t *vocab_section);

/** Id of a special token (bertl14_special_token_t); -1 if absent or the section is not recognised. */
int32_t bertl14_tokenizer_special_id(const uint32_t *vocab_section, int which);

/** Size in 32-bit words of the section (for flash accounting and model file checks); 0 if not recognised. */
uint32_t bertl14_tokenizer_section_words(const uint32_t *vocab_section);

#ifdef __cplusplus
}
#endif

#endif /* BERTL14_TOKENIZER_H */
