/*
 * Intent recognition: bertl14_tokenize -> bertl14_encode -> bertl14_classify on the model compiled
 * into the firmware, timed with the board's counter (see intent.h for the locking rule).
 */
#include "intent.h"

#include <string.h>

#include "bertl14_config.h"
#include "console.h"
#include "platform.h"
#include "platform_config.h"

#if defined(CONFIG_APP_RTOS_FREERTOS)
#include "FreeRTOS.h"
#include "semphr.h"
#endif

extern const int16_t bertl14_weights[];
extern const uint32_t bertl14_vocab_offsets[];

#if defined(BERTL14_APP_REGISTRY)
extern const uint32_t bertl14_registry[]; /* generated from CONFIG_APP_REGISTRY_FILE (cmake/registry.cmake) */
/* The text with names replaced: a placeholder is at most 6 bytes longer than the name it replaces ("tv" ->
 * "[NAME]"), and at most INTENT_MAX_SLOTS names are replaced. */
static char masked[CONFIG_APP_LINE_MAX + 6 * INTENT_MAX_SLOTS + 1];
/* Generated next to the registry from the model's intent_domains.json: per label, the domains (bits, the indices
 * bertl14_registry_domain returns) its intent accepts for a name; count 0 when the model ships no table. */
extern const uint32_t bertl14_label_domains[];
extern const uint32_t bertl14_label_domains_count;
static uint32_t allowed[(BERTL14_NUM_LABELS + 31) / 32 + 1]; /* bertl14_classify_allowed's label bits */
#endif

#if CONFIG_BERTL14_WORK_BUFFER_SIZE > 0
#define APP_WORK_BUFFER_SIZE CONFIG_BERTL14_WORK_BUFFER_SIZE
#else
#define APP_WORK_BUFFER_SIZE BERTL14_WORK_BUFFER_SIZE /* the converter's exact figure */
#endif

/* All activations of the encoder; DTCM on nucleo_h743zi (zero wait states, not zeroed at boot). */
static int8_t work_buffer[APP_WORK_BUFFER_SIZE] __attribute__((section(".dtcmram"), aligned(8)));
static int32_t ids[BERTL14_MAX_SEQ_LEN];
#if BERTL14_NUM_TAGS > 0
extern const uint32_t bertl14_slot_table[]; /* the model's value table (the converter's bertl14_slot_table.c) */
static uint16_t offsets[2 * BERTL14_MAX_SEQ_LEN]; /* each token's bytes in the text, for the slot spans */
static uint8_t tags[BERTL14_MAX_SEQ_LEN];
/* per label the slots its answer carries, NULL-terminated; NULL: no table (the converter's bertl14_label_slots.c) */
extern const char *const *const bertl14_label_slots[];

static bool listed(const char *const *list, const char *name)
{
    for (; *list != NULL; list++) {
        if (strcmp(*list, name) == 0) {
            return true;
        }
    }
    return false;
}

static bool has_value(const bertl14_slot_value_t *v, uint32_t n, const char *name)
{
    for (uint32_t i = 0; i < n; i++) {
        if (strcmp(v[i].slot, name) == 0) {
            return true;
        }
    }
    return false;
}

/* A timer's duration and the duration a timer was started with are one value under two names: the slot of `list`
 * that is `slot`'s twin ("start_minutes" for "minutes", and back), or NULL. */
#define TIMER_START "start_"
static const char *timer_twin(const char *const *list, const char *slot)
{
    const size_t n = sizeof TIMER_START - 1u;
    const bool started = strncmp(slot, TIMER_START, n) == 0;
    for (; *list != NULL; list++) {
        if (started ? strcmp(*list, slot + n) == 0
                    : strncmp(*list, TIMER_START, n) == 0 && strcmp(*list + n, slot) == 0) {
            return *list;
        }
    }
    return NULL;
}

/* The values an answer of `label` carries (tagging.fit_to_intent): a name, or a slot the intent takes, is kept; a
 * number under a slot it does not take moves to the slot taking a number (bertl14_slot_takes_number) that the intent
 * takes and the sentence left empty, when there is one; when there are several, to the one of them whose range is
 * the tagged slot's (bertl14_slot_number_bounds): "turn the [NAME] to 40 percent" tagged volume_level (0..100),
 * answered HassLightSet (brightness 0..100, colour temperature 0..10000): brightness=40. A duration under a slot
 * the intent does not take moves to its timer twin when the sentence left that empty ("cancel the 45 minute timer"
 * tagged minutes, answered HassCancelTimer: start_minutes=45). The rest is dropped. */
static void fit_values(intent_result_t *r, uint32_t label)
{
    const char *const *slots = label < BERTL14_NUM_LABELS ? bertl14_label_slots[label] : NULL;
    if (slots == NULL) {
        return;
    }
    bertl14_slot_value_t found[INTENT_MAX_VALUES];
    const uint32_t n_found = r->n_values;
    memcpy(found, r->values, n_found * sizeof found[0]);
    uint32_t n = 0;
    for (uint32_t i = 0; i < n_found; i++) {
        bertl14_slot_value_t v = found[i];
        const bool name = strcmp(v.slot, "name") == 0 || strcmp(v.slot, "area") == 0 || strcmp(v.slot, "floor") == 0;
        if (name || listed(slots, v.slot)) {
            r->values[n++] = v;
            continue;
        }
        const char *twin = timer_twin(slots, v.slot);
        if (twin != NULL) {
            if (!has_value(found, n_found, twin) && !has_value(r->values, n, twin)) {
                v.slot = twin;
                r->values[n++] = v;
            }
            continue;
        }
        if (v.kind == BERTL14_SLOT_VALUE_TEXT) {
            continue;
        }
        /* the empty number slots the intent takes, and among them those of the tagged slot's range */
        int32_t lo, hi, s_lo, s_hi;
        const bool bounded = bertl14_slot_number_bounds(bertl14_slot_table, v.slot, &lo, &hi) != 0;
        const char *free_slot = NULL, *same_slot = NULL;
        uint32_t n_free = 0u, n_same = 0u;
        for (const char *const *s = slots; *s != NULL; s++) {
            if (!bertl14_slot_number_bounds(bertl14_slot_table, *s, &s_lo, &s_hi) ||
                has_value(found, n_found, *s) || has_value(r->values, n, *s)) {
                continue;
            }
            free_slot = *s;
            n_free++;
            if (bounded && s_lo == lo && s_hi == hi) {
                same_slot = *s;
                n_same++;
            }
        }
        if (n_free == 1u || n_same == 1u) {
            v.slot = n_free == 1u ? free_slot : same_slot;
            r->values[n++] = v;
        }
    }
    r->n_values = n;
}
#endif
static int8_t cls_row[BERTL14_HIDDEN_SIZE]; /* copy of the last [CLS] row, for :dump */
static bool cls_valid;
static bertl14_dims_t dims;

#define WORK_PAINT 0x5Au

/* ---- the work-buffer lock ---------------------------------------------------------------------- */
#if defined(CONFIG_APP_RTOS_FREERTOS)
static SemaphoreHandle_t work_mutex;
static void intent_lock(void) { xSemaphoreTake(work_mutex, portMAX_DELAY); }
static void intent_unlock(void) { xSemaphoreGive(work_mutex); }
#else
static void intent_lock(void) {}
static void intent_unlock(void) {}
#endif

/* ---- counting ---------------------------------------------------------------------------------- */
#if defined(PLATFORM_ICOUNT_NS_PER_TICK)
/* The QEMU boards have no cycle counter: platform_cycles() is a timer of PLATFORM_ICOUNT_NS_PER_TICK ns a tick (the
 * MPS2 CMSDK timer: 40 ns at 25 MHz), which under -icount shift=0 (one instruction a nanosecond) advances once every
 * that many instructions. */
static uint32_t ticks_to_cycles(uint32_t ticks) { return ticks * PLATFORM_ICOUNT_NS_PER_TICK; }
const char *intent_cycles_unit(void) { return "qemu_icount_instructions"; }
#elif defined(BOARD_HOST)
static uint32_t ticks_to_cycles(uint32_t ticks) { return ticks; }
const char *intent_cycles_unit(void) { return "host_ns"; }
#else
static uint32_t ticks_to_cycles(uint32_t ticks) { return ticks; }
const char *intent_cycles_unit(void) { return "dwt_cycles"; }
#endif

/* ---- output hook: the library's "\n" becomes the protocol's "\r\n" ------------------------------ */
static void write_hook(const char *text, size_t len, void *user)
{
    (void)user;
    size_t start = 0;
    for (size_t i = 0; i < len; i++) {
        if (text[i] == '\n') {
            platform_console_write(text + start, i - start);
            platform_console_write("\r\n", 2);
            start = i + 1;
        }
    }
    platform_console_write(text + start, len - start);
}

bertl14_status_t intent_init(void)
{
#if defined(CONFIG_APP_RTOS_FREERTOS)
    work_mutex = xSemaphoreCreateMutex();
    configASSERT(work_mutex != NULL);
#endif
    memset(work_buffer, WORK_PAINT, sizeof work_buffer); /* for intent_work_buffer_high_water() */
    const bertl14_config_t config = {
        .max_seq_len = BERTL14_MAX_SEQ_LEN,
        .vocab_size = BERTL14_VOCAB_SIZE,
        .work_buffer_ptr = work_buffer,
        .work_buffer_size = sizeof work_buffer,
        .weights_ptr = bertl14_weights,
        .vocab_offsets = bertl14_vocab_offsets,
        .weights_size = BERTL14_WEIGHTS_SIZE,
        .vocab_offsets_size = BERTL14_VOCAB_SECTION_SIZE,
    };
    intent_lock();
    bertl14_status_t st = bertl14_init(&config);
    if (st == BERTL14_OK) {
        st = bertl14_set_output_hook(write_hook, NULL);
    }
    if (st == BERTL14_OK) {
        st = bertl14_ctx_dims(bertl14_default_ctx(), &dims);
    }
#if defined(BERTL14_APP_REGISTRY)
    if (st == BERTL14_OK) { /* the whole table, then that it was compiled for this vocabulary's options */
        uint32_t n = 0;
        bertl14_slot_t slot;
        st = bertl14_registry_validate(bertl14_registry);
        if (st == BERTL14_OK) {
            st = bertl14_registry_match(bertl14_registry, bertl14_vocab_offsets, "", masked, sizeof masked, &slot,
                                        1u, &n);
        }
        if (st == BERTL14_OK && bertl14_label_domains_count != 0u &&
            (bertl14_label_domains_count != dims.num_labels || dims.num_labels > 32u * (sizeof allowed / 4u))) {
            st = BERTL14_ERR_INVALID_CONFIG; /* the label table was generated for another model */
        }
    }
#endif
    intent_unlock();
    return st;
}

#if defined(BERTL14_APP_REGISTRY)
/* The domain rule (docs/registry.md, "The domain of a name"): when the sentence names entities whose domains are
 * known, only the labels that accept at least one of those domains may answer (none and the intents that take no
 * name accept all); the best of them by the logits, scored from the same logits (bertl14_classify_allowed). */
static bertl14_status_t apply_domains(bertl14_classification_t *c, const intent_result_t *r)
{
    uint32_t names = 0;
    for (uint32_t i = 0; i < r->n_slots; i++) {
        if (r->slots[i].kind == BERTL14_SLOT_NAME) {
            const uint32_t d = bertl14_registry_domain(bertl14_registry, r->slots[i].index);
            names |= (d > 0u && d < 32u) ? 1u << d : 0u;
        }
    }
    if (names == 0u || bertl14_label_domains_count != c->num_labels) {
        return BERTL14_OK;
    }
    memset(allowed, 0, sizeof allowed);
    for (uint32_t l = 0; l < c->num_labels; l++) {
        if (bertl14_label_domains[l] & names) {
            allowed[l >> 5] |= 1u << (l & 31u);
        }
    }
    return bertl14_classify_allowed(c->logits, c->num_labels, allowed, c);
}
#endif

void intent_run(const char *text, intent_result_t *r)
{
    memset(r, 0, sizeof *r);
    r->failed_call = "";
    intent_lock();
    const uint32_t t0 = platform_cycles();
    uint32_t n = 0;
    bertl14_tensor_t cls;
    bertl14_classification_t c;
    bertl14_status_t st = BERTL14_OK;
#if defined(BERTL14_APP_REGISTRY)
    /* known names become [NAME] / [AREA] / [FLOOR] before WordPiece; invalid UTF-8 gives the tokenizer's status */
    st = bertl14_registry_match(bertl14_registry, bertl14_vocab_offsets, text, masked, sizeof masked, r->slots,
                                INTENT_MAX_SLOTS, &r->n_slots);
    r->match_cycles = ticks_to_cycles(platform_cycles() - t0);
    if (st != BERTL14_OK) {
        r->failed_call = "bertl14_registry_match";
    }
    text = masked;
#endif
    if (st == BERTL14_OK) {
#if BERTL14_NUM_TAGS > 0
        st = bertl14_tokenize_offsets(text, ids, offsets, &n, BERTL14_MAX_SEQ_LEN);
#else
        st = bertl14_tokenize(text, ids, &n, BERTL14_MAX_SEQ_LEN);
#endif
        if (st == BERTL14_ERR_TOKEN_OVERFLOW) { /* usable: the first max_seq_len - 1 tokens and [SEP] */
            r->truncated = true;
            st = BERTL14_OK;
        }
        if (st != BERTL14_OK) {
            r->failed_call = "bertl14_tokenize";
        }
    }
    if (st != BERTL14_OK) {
        /* failed_call says which */
    } else if ((st = bertl14_encode(ids, n, &cls)) != BERTL14_OK) {
        r->failed_call = "bertl14_encode";
    } else {
        memcpy(cls_row, cls.data_ptr, sizeof cls_row); /* before classify reuses the buffer */
        if ((st = bertl14_classify(&c)) != BERTL14_OK) {
            r->failed_call = "bertl14_classify";
        }
#if defined(BERTL14_APP_REGISTRY)
        else if ((st = apply_domains(&c, r)) != BERTL14_OK) {
            r->failed_call = "bertl14_classify_allowed";
        }
#endif
#if BERTL14_NUM_TAGS > 0
        /* the slot values: every token's tag from the same encode, spans of the text, the value table */
        uint32_t n_tags = 0;
        if (st == BERTL14_OK && (st = bertl14_tag(tags, BERTL14_MAX_SEQ_LEN, &n_tags)) != BERTL14_OK) {
            r->failed_call = "bertl14_tag";
        }
        if (st == BERTL14_OK) {
            st = bertl14_slots_extract(bertl14_default_ctx(), bertl14_slot_table, text, tags, offsets, n_tags,
                                       r->values, INTENT_MAX_VALUES, &r->n_values);
            if (st == BERTL14_ERR_BUFFER_TOO_SMALL) { /* more values than INTENT_MAX_VALUES: the first ones */
                st = BERTL14_OK;
            } else if (st != BERTL14_OK) {
                r->failed_call = "bertl14_slots_extract";
            }
        }
        if (st == BERTL14_OK) {
            fit_values(r, c.label); /* the slots of the answer's intent */
        }
#endif
    }
    const uint32_t t1 = platform_cycles();
    cls_valid = st == BERTL14_OK; /* with cls_row, under the lock: another caller's dump sees the pair whole */
    intent_unlock();
    r->status = st;
    r->tokens = n;
    r->cycles = ticks_to_cycles(t1 - t0);
    if (st == BERTL14_OK) {
        r->label = c.label;
        r->score_milli = c.score_milli;
    }
}

void intent_dump_cls(void)
{
    const bertl14_tensor_t t = {.data_ptr = cls_row, .dims = {1, 1, BERTL14_HIDDEN_SIZE, 1}, .dtype = BERTL14_INT8};
    intent_lock(); /* cls_row and cls_valid change only under the lock (intent_run) */
    if (cls_valid) {
        bertl14_dump_tensor(&t, "CLS_EMB");
    }
    intent_unlock();
}

const char *intent_label_name(uint32_t idx)
{
    return bertl14_label_name(idx);
}

#if defined(BERTL14_APP_REGISTRY)
bool intent_has_registry(void) { return true; }
uint32_t intent_registry_count(uint32_t kind) { return bertl14_registry_count(bertl14_registry, kind); }
const char *intent_registry_name(uint32_t kind, uint32_t index, uint32_t *len)
{
    return bertl14_registry_name(bertl14_registry, kind, index, len);
}
uint32_t intent_registry_parent(uint32_t kind, uint32_t index)
{
    return bertl14_registry_parent(bertl14_registry, kind, index);
}
#else /* no registry: the matcher library is not linked */
bool intent_has_registry(void) { return false; }
uint32_t intent_registry_count(uint32_t kind) { (void)kind; return 0u; }
const char *intent_registry_name(uint32_t kind, uint32_t index, uint32_t *len)
{
    (void)kind, (void)index, (void)len;
    return NULL;
}
uint32_t intent_registry_parent(uint32_t kind, uint32_t index)
{
    (void)kind, (void)index;
    return UINT32_MAX;
}
#endif

const bertl14_dims_t *intent_dims(void)
{
    return &dims;
}

uint32_t intent_work_buffer_size(void)
{
    return (uint32_t)sizeof work_buffer;
}

uint32_t intent_work_buffer_high_water(void)
{
    uint32_t n = (uint32_t)sizeof work_buffer;
    intent_lock();
    while (n > 0u && (uint8_t)work_buffer[n - 1u] == WORK_PAINT) {
        n--;
    }
    intent_unlock();
    return n;
}
