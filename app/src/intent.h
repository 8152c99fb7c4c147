/*
 * Intent recognition on the device: the bertl14 library with the model compiled into the firmware
 * (generated bertl14_weights.c / bertl14_vocab.c), its work buffer, timing and statistics.
 *
 * The work buffer is one static array in section .dtcmram (DTCM on nucleo_h743zi, plain RAM on the
 * QEMU boards). It is shared state: every call below takes intent_lock() around its use, a FreeRTOS
 * mutex in the FreeRTOS variant (so a second task may call intent_run() safely; today only the
 * inference task does) and nothing in the bare-metal variant (one thread of execution).
 */
#ifndef APP_INTENT_H
#define APP_INTENT_H

#include <stdbool.h>
#include <stdint.h>

#include "bertl14.h"
#include "bertl14_registry.h" /* types only; the matcher is linked when CONFIG_APP_REGISTRY_FILE is set */
#include "bertl14_slots.h"    /* types only; the slot values are read when the model has a tagger */

/* BERTL14_APP_REGISTRY is defined (1) by cmake/registry.cmake when a registry is compiled in. */
#if defined(BERTL14_APP_REGISTRY)
#define INTENT_MAX_SLOTS CONFIG_APP_REGISTRY_MAX_SLOTS
#else
#define INTENT_MAX_SLOTS 1
#endif

/* Slot values answered a sentence (hours, minutes, brightness, item, ...): a model's slots rarely exceed a handful. */
#define INTENT_MAX_VALUES 8

/** One sentence's result. */
typedef struct {
    bertl14_status_t status;  /**< BERTL14_OK, or the first failing call's status */
    const char *failed_call;  /**< name of that call ("" when status is OK) */
    uint32_t label;           /**< index of the best label */
    uint32_t score_milli;     /**< its probability in thousandths (what the reference prints) */
    uint32_t tokens;          /**< ids encoded, [CLS] and [SEP] included */
    bool truncated;           /**< the text had more than max_seq_len tokens */
    uint32_t cycles;          /**< match + tokenize + encode + classify, in intent_cycles_unit() */
    uint32_t match_cycles;    /**< of which the registry matcher (0 without a registry) */
    uint32_t n_slots;         /**< registry names found (the first INTENT_MAX_SLOTS), in text order */
    bertl14_slot_t slots[INTENT_MAX_SLOTS];
    uint32_t n_values;        /**< slot values read by the model's tagger (0 without one), in text order */
    bertl14_slot_value_t values[INTENT_MAX_VALUES]; /**< texts point into the sentence, valid until the next run */
} intent_result_t;

/** Initialise the library on the work buffer (once, from the inference task). */
bertl14_status_t intent_init(void);

/** Replace the registry's names by placeholders (when a registry is compiled in), then tokenize, encode and
 *  classify one NUL-terminated UTF-8 sentence; when names of known domains were found, the label is the best of
 *  the intents that accept one of them (the domain rule, docs/registry.md "The domain of a name"). */
void intent_run(const char *text, intent_result_t *result);

/** Write the INT8 [CLS] row of the last successful intent_run() as `CLS_EMB: 0x..,...` + "\r\n". */
void intent_dump_cls(void);

/** Name of label idx ("" if out of range). */
const char *intent_label_name(uint32_t idx);

/** The registry compiled in (CONFIG_APP_REGISTRY_FILE), as bertl14_registry.h's calls on its table; without
 *  one: false, 0 objects, NULL names, no parents (UINT32_MAX), and no matcher code linked. */
bool intent_has_registry(void);
uint32_t intent_registry_count(uint32_t kind);
const char *intent_registry_name(uint32_t kind, uint32_t index, uint32_t *len);
uint32_t intent_registry_parent(uint32_t kind, uint32_t index);

/** Model dimensions (valid after intent_init). */
const bertl14_dims_t *intent_dims(void);

/** Bytes of the work buffer, and the highest byte ever written in it (painted at init). */
uint32_t intent_work_buffer_size(void);
uint32_t intent_work_buffer_high_water(void);

/** What `cycles` counts on this board: "dwt_cycles", "qemu_icount_instructions" or "host_ns". */
const char *intent_cycles_unit(void);

#endif /* APP_INTENT_H */
