/*
 * The serial protocol of the intent firmware (docs/serial-protocol.md): the banner, line handling,
 * commands, answers. Implements console.h for the execution models (rtos_freertos.c: the inference
 * task; rtos_none.c: the main loop), which call console_poll() whenever the RX interrupt signalled.
 *
 * Every input line gets exactly one answer line starting with `intent=` or `error=`, or, for a
 * command, ending with one line starting with `ok `; lines the RX interrupt had to discard come back
 * from the ring as overrun records and are answered `error=overrun` in their place, and a line in
 * which the UART reported a receive error (a byte lost or garbled) is answered `error=line_error`.
 */
#include <stdbool.h>
#include <stdint.h>
#include <string.h>

#include "bertl14_config.h"
#include "console.h"
#include "intent.h"
#include "linering.h"
#include "platform.h"

/* The out-of-domain threshold: Kconfig's, or the model's own when APP_MIN_SCORE is -1. */
#if CONFIG_APP_MIN_SCORE < 0
#define APP_MIN_SCORE_MILLI BERTL14_MIN_SCORE_MILLI
#else
#define APP_MIN_SCORE_MILLI CONFIG_APP_MIN_SCORE
#endif

/* The threshold of a sentence in which the registry replaced a name (it scores differently): Kconfig's, or the
 * model's own when APP_MIN_SCORE_NAMED is -1 (the plain one for a model converted before it had one). */
#if !defined(BERTL14_MIN_SCORE_NAMED_MILLI)
#define BERTL14_MIN_SCORE_NAMED_MILLI BERTL14_MIN_SCORE_MILLI
#endif
#if CONFIG_APP_MIN_SCORE_NAMED < 0
#define APP_MIN_SCORE_NAMED_MILLI BERTL14_MIN_SCORE_NAMED_MILLI
#else
#define APP_MIN_SCORE_NAMED_MILLI CONFIG_APP_MIN_SCORE_NAMED
#endif

#if defined(CONFIG_APP_RTOS_FREERTOS)
#include "FreeRTOS.h"
#include "task.h"
#endif

#if defined(CONFIG_APP_TEST_FAULTS)
#include "test_faults.h"
#endif

static char line[LINERING_LINE_KEEP + 1];
static bool dump_on;
static bool engine_ok;
static const char *rtos_name = "";

static struct {
    uint32_t sentences;   /* lines answered intent=... (none included) */
    uint32_t intent_none; /* of which intent=none */
    uint32_t errors;      /* lines answered error=... (overruns and line errors included) */
    uint32_t overruns;    /* lines answered error=overrun */
    uint32_t line_errors; /* lines answered error=line_error */
    uint64_t cycles_sum;
    uint32_t cycles_max;
} stats;

/* ---- output ------------------------------------------------------------------------------------ */
static void put_kv(const char *key, uint32_t v)
{
    console_puts(" ");
    console_puts(key);
    console_puts("=");
    console_put_uint(v);
}

/* A registry name as a `key=value` value: space, '%', '=' and control bytes (< 0x20, 0x7F) become %XX (upper-case
 * hex); every other byte, UTF-8 included, is written as it is (docs/serial-protocol.md; device/device/serial.py decodes it). */
static void put_encoded(const char *s, uint32_t len)
{
    static const char hex[] = "0123456789ABCDEF";
    uint32_t start = 0;
    for (uint32_t i = 0; i < len; i++) {
        const uint8_t b = (uint8_t)s[i];
        if (b <= 0x20u || b == 0x7Fu || b == '%' || b == '=') {
            const char esc[3] = {'%', hex[b >> 4], hex[b & 15u]};
            platform_console_write(s + start, i - start);
            platform_console_write(esc, 3);
            start = i + 1u;
        }
    }
    platform_console_write(s + start, len - start);
}

/* ` key=<name of object index of kind>`, nothing if the table has no such object */
static void put_name(const char *key, uint32_t kind, uint32_t index)
{
    uint32_t len = 0;
    const char *name = intent_registry_name(kind, index, &len);
    if (name != NULL) {
        console_puts(" ");
        console_puts(key);
        console_puts("=");
        put_encoded(name, len);
    }
}

/* thousandths as 0.000 .. 1.000 */
static void put_milli(uint32_t milli)
{
    char buf[6] = {(char)('0' + milli / 1000u), '.', (char)('0' + milli / 100u % 10u),
                   (char)('0' + milli / 10u % 10u), (char)('0' + milli % 10u), '\0'};
    console_puts(buf);
}

static void answer_error(const char *code, const char *message)
{
    stats.errors++;
    console_puts("error=");
    console_puts(code);
    console_puts(" ");
    console_puts(message);
    console_puts("\r\n");
}

/* ---- stack high-water mark --------------------------------------------------------------------- */
#if defined(CONFIG_APP_RTOS_FREERTOS)
static uint32_t stack_size(void) { return CONFIG_APP_TASK_STACK_SIZE; }
static void stack_paint(void) {} /* FreeRTOS fills task stacks itself (tskSTACK_FILL_BYTE) */
static uint32_t stack_used(void)
{
    return CONFIG_APP_TASK_STACK_SIZE - (uint32_t)uxTaskGetStackHighWaterMark(NULL) * sizeof(StackType_t);
}
#elif defined(__arm__) || defined(__riscv)
/* Bare metal: the main stack (MSP, also used by interrupts; on RISC-V main's stack, the trap handler has its own)
 * spans [_sstack, _estack). Paint what is below the current frame at start-up; the lowest overwritten word is the
 * high-water mark. */
extern uint32_t _sstack, _estack;
#define STACK_PAINT 0xC0FFEE11u
static uint32_t stack_size(void) { return (uint32_t)((uintptr_t)&_estack - (uintptr_t)&_sstack); }
static void stack_paint(void)
{
    uint32_t *p = &_sstack, *sp;
#if defined(__riscv)
    __asm volatile("mv %0, sp" : "=r"(sp));
#else
    __asm volatile("mov %0, sp" : "=r"(sp));
#endif
    while (p < sp - 32) {
        *p++ = STACK_PAINT;
    }
}
static uint32_t stack_used(void)
{
    const uint32_t *p = &_sstack;
    while (p < &_estack && *p == STACK_PAINT) {
        p++;
    }
    return (uint32_t)((uintptr_t)&_estack - (uintptr_t)p);
}
#else
static uint32_t stack_size(void) { return 0u; }
static void stack_paint(void) {}
static uint32_t stack_used(void) { return 0u; }
#endif

/* ---- banner ------------------------------------------------------------------------------------ */
void console_banner(const char *rtos)
{
    rtos_name = rtos;
    stack_paint();
    const bertl14_status_t st = intent_init();
    engine_ok = st == BERTL14_OK;
    if (!engine_ok) { /* every sentence will be answered error=internal; say why once */
        console_puts("bertl14 init_failed status=");
        console_put_uint((uint32_t)-st);
        console_puts(" ");
        console_puts(bertl14_status_str(st));
        console_puts("\r\n");
        return;
    }
    const bertl14_dims_t *d = intent_dims();
    console_puts("bertl14 ready model=" BERTL14_MODEL_NAME);
    put_kv("layers", d->num_layers);
    put_kv("hidden", d->hidden);
    put_kv("heads", d->max_heads_kept);
    console_puts("/");
    console_put_uint(BERTL14_NUM_HEADS);
    put_kv("max_seq_len", BERTL14_MAX_SEQ_LEN);
    put_kv("work_buffer", intent_work_buffer_size());
    put_kv("labels", d->num_labels);
    console_puts("\r\n");
}

/* ---- commands ---------------------------------------------------------------------------------- */
static void cmd_help(void)
{
    console_puts("help: type a sentence, get `intent=<Label> score=<0.000-1.000> tokens=<n> cycles=<c>`\r\n"
                 "help: :config   model, limits, what cycles counts\r\n"
                 "help: :stats    sentences, errors, overruns, line errors, mean/max cycles, memory high-water marks\r\n"
                 "help: :dump on|off   print the INT8 [CLS] embedding (CLS_EMB: 0x..,...) after each answer\r\n"
                 "help: :entities  the registry's entities, areas and floors (names found in a sentence are "
                 "answered name= area= floor=)\r\n"
                 "ok help\r\n");
}

static void cmd_config(void)
{
    console_puts("ok config model=" BERTL14_MODEL_NAME " board=" BERTL14_BOARD_NAME " rtos=");
    console_puts(rtos_name);
    console_puts(" cycles=");
    console_puts(intent_cycles_unit());
    console_puts(" min_score=");
    put_milli(APP_MIN_SCORE_MILLI);
    console_puts(" min_score_named=");
    put_milli(APP_MIN_SCORE_NAMED_MILLI);
    put_kv("max_seq_len", BERTL14_MAX_SEQ_LEN);
    put_kv("line_max", CONFIG_APP_LINE_MAX);
    put_kv("rx_buffer", CONFIG_APP_RX_BUFFER);
    put_kv("work_buffer", intent_work_buffer_size());
    put_kv("stack_size", stack_size());
    put_kv("entities", intent_registry_count(BERTL14_SLOT_NAME));
    put_kv("areas", intent_registry_count(BERTL14_SLOT_AREA));
    put_kv("floors", intent_registry_count(BERTL14_SLOT_FLOOR));
    put_kv("max_names", intent_has_registry() ? INTENT_MAX_SLOTS : 0u);
    console_puts(dump_on ? " dump=on\r\n" : " dump=off\r\n");
}

/* One line per registry object, entities then areas then floors: `entity: index=<i> name=<n> [area=<a>]`,
 * `area: index=<i> name=<n> [floor=<f>]`, `floor: index=<i> name=<n>`; then `ok entities <count>`. */
static void cmd_entities(void)
{
    static const char *const prefix[4] = {"", "entity:", "area:", "floor:"};
    static const char *const parent_key[4] = {"", "area", "floor", ""};
    uint32_t total = 0;
    for (uint32_t kind = BERTL14_SLOT_NAME; kind <= BERTL14_SLOT_FLOOR; kind++) {
        const uint32_t n = intent_registry_count(kind);
        for (uint32_t i = 0; i < n; i++) {
            console_puts(prefix[kind]);
            put_kv("index", i);
            put_name("name", kind, i);
            const uint32_t parent = intent_registry_parent(kind, i);
            if (parent != UINT32_MAX) {
                put_name(parent_key[kind], kind + 1u, parent);
            }
            console_puts("\r\n");
        }
        total += n;
    }
    console_puts("ok entities");
    console_puts(" ");
    console_put_uint(total);
    console_puts("\r\n");
}

static void cmd_stats(void)
{
    console_puts("ok stats");
    put_kv("sentences", stats.sentences);
    put_kv("intent_none", stats.intent_none);
    put_kv("errors", stats.errors);
    put_kv("overruns", stats.overruns);
    put_kv("line_errors", stats.line_errors);
    put_kv("mean_cycles", stats.sentences ? (uint32_t)(stats.cycles_sum / stats.sentences) : 0u);
    put_kv("max_cycles", stats.cycles_max);
    put_kv("work_buffer", intent_work_buffer_size());
    put_kv("work_buffer_used", intent_work_buffer_high_water());
    put_kv("stack_used", stack_used());
    put_kv("stack_size", stack_size());
#if defined(CONFIG_APP_RTOS_FREERTOS)
    put_kv("heap_free_min", (uint32_t)xPortGetMinimumEverFreeHeapSize());
#endif
    console_puts(" cycles_unit=");
    console_puts(intent_cycles_unit());
    console_puts("\r\n");
}

static void handle_command(const char *cmd)
{
    if (strcmp(cmd, ":help") == 0) {
        cmd_help();
    } else if (strcmp(cmd, ":config") == 0) {
        cmd_config();
    } else if (strcmp(cmd, ":stats") == 0) {
        cmd_stats();
    } else if (strcmp(cmd, ":entities") == 0) {
        cmd_entities();
    } else if (strcmp(cmd, ":dump on") == 0 || strcmp(cmd, ":dump off") == 0) {
        dump_on = cmd[6] == 'o' && cmd[7] == 'n';
        console_puts(dump_on ? "ok dump=on\r\n" : "ok dump=off\r\n");
#if defined(CONFIG_APP_TEST_FAULTS)
    } else if (strncmp(cmd, ":crash ", 7) == 0) { /* the test image's faults on purpose */
        if (test_fault(cmd + 7)) {
            console_puts("ok crash survived\r\n");
        } else {
            answer_error("unknown_command", "crashes: bus usage stack assert heap hang");
        }
#endif
    } else {
        answer_error("unknown_command", "commands: :help :config :stats :entities :dump on|off");
    }
}

/* ---- sentences --------------------------------------------------------------------------------- */
static bool is_blank(const char *s, uint32_t len)
{
    for (uint32_t i = 0; i < len; i++) {
        if (s[i] != ' ' && s[i] != '\t' && s[i] != '\r') {
            return false;
        }
    }
    return true;
}

/* The registry names the sentence contained: the first entity, area and floor (name= area= floor=), the
 * entity's registered area (entity_area=), how many names were found (names=) and the matcher's cost
 * (match_cycles=). Nothing without a registry. */
static void put_slots(const intent_result_t *r)
{
    if (!intent_has_registry()) {
        return;
    }
    uint32_t first[4] = {UINT32_MAX, UINT32_MAX, UINT32_MAX, UINT32_MAX}; /* by kind */
    for (uint32_t i = 0; i < r->n_slots; i++) {
        const uint32_t kind = r->slots[i].kind;
        if (kind >= BERTL14_SLOT_NAME && kind <= BERTL14_SLOT_FLOOR && first[kind] == UINT32_MAX) {
            first[kind] = r->slots[i].index;
        }
    }
    put_kv("names", r->n_slots);
    put_kv("match_cycles", r->match_cycles);
    if (first[BERTL14_SLOT_NAME] != UINT32_MAX) {
        put_name("name", BERTL14_SLOT_NAME, first[BERTL14_SLOT_NAME]);
    }
    if (first[BERTL14_SLOT_AREA] != UINT32_MAX) {
        put_name("area", BERTL14_SLOT_AREA, first[BERTL14_SLOT_AREA]);
    }
    if (first[BERTL14_SLOT_FLOOR] != UINT32_MAX) {
        put_name("floor", BERTL14_SLOT_FLOOR, first[BERTL14_SLOT_FLOOR]);
    }
    if (first[BERTL14_SLOT_NAME] != UINT32_MAX) {
        const uint32_t area = intent_registry_parent(BERTL14_SLOT_NAME, first[BERTL14_SLOT_NAME]);
        if (area != UINT32_MAX) {
            put_name("entity_area", BERTL14_SLOT_AREA, area);
        }
    }
}

/* The slot values the model's tagger read (hours=1 minutes=30 item=oat%20milk): numbers as integers or with one
 * decimal (21.5), texts percent-encoded like names; a key the registry already answered is not repeated. */
static void put_values(const intent_result_t *r)
{
    const bool names = intent_has_registry() && r->n_slots > 0u;
    for (uint32_t i = 0; i < r->n_values; i++) {
        const bertl14_slot_value_t *v = &r->values[i];
        if (names && (strcmp(v->slot, "name") == 0 || strcmp(v->slot, "area") == 0 || strcmp(v->slot, "floor") == 0)) {
            continue;
        }
        console_puts(" ");
        console_puts(v->slot);
        console_puts("=");
        if (v->kind == BERTL14_SLOT_VALUE_TEXT) {
            put_encoded(v->text, v->text_len);
        } else {
            const int32_t t = v->value_tenths;
            const uint32_t mag = (uint32_t)(t < 0 ? -(int64_t)t : t);
            char buf[16];
            uint32_t k = sizeof buf;
            buf[--k] = '\0';
            if (mag % 10u != 0u) {
                buf[--k] = (char)('0' + mag % 10u);
                buf[--k] = '.';
            }
            uint32_t whole = mag / 10u;
            do {
                buf[--k] = (char)('0' + whole % 10u);
                whole /= 10u;
            } while (whole != 0u);
            if (t < 0) {
                buf[--k] = '-';
            }
            console_puts(buf + k);
        }
    }
}

static void handle_sentence(const char *text)
{
    intent_result_t r;
    intent_run(text, &r);
    if (r.status == BERTL14_ERR_INVALID_UTF8) {
        answer_error("invalid_utf8", "the line is not valid UTF-8; send UTF-8 text");
        return;
    }
    if (r.status != BERTL14_OK) {
        stats.errors++;
        console_puts("error=internal ");
        console_puts(r.failed_call);
        console_puts(": ");
        console_puts(bertl14_status_str(r.status));
        console_puts("\r\n");
        return;
    }
    const char *name = intent_label_name(r.label);
    /* n_slots: the names the registry replaced (always 0 without a registry) */
    const uint32_t min_score = r.n_slots > 0u ? APP_MIN_SCORE_NAMED_MILLI : APP_MIN_SCORE_MILLI;
    const bool in_domain = r.score_milli >= min_score && strcmp(name, "none") != 0;
    stats.sentences++;
    stats.intent_none += in_domain ? 0u : 1u;
    stats.cycles_sum += r.cycles;
    stats.cycles_max = r.cycles > stats.cycles_max ? r.cycles : stats.cycles_max;
    console_puts("intent=");
    console_puts(in_domain ? name : "none");
    console_puts(" score=");
    put_milli(r.score_milli);
    put_kv("tokens", r.tokens);
    put_kv("cycles", r.cycles);
    if (r.truncated) {
        console_puts(" truncated=1");
    }
    if (!in_domain && strcmp(name, "none") != 0) { /* below the threshold: say what it was */
        console_puts(" best=");
        console_puts(name);
    }
    put_slots(&r);
    put_values(&r);
    console_puts("\r\n");
    if (dump_on) {
        intent_dump_cls();
    }
}

static void handle_line(uint32_t len, bool too_long)
{
    if (len > 0u && line[len - 1u] == '\r') { /* "\r\n" ending */
        line[--len] = '\0';
    }
    if (too_long || len > CONFIG_APP_LINE_MAX) {
        answer_error("too_long", "line longer than CONFIG_APP_LINE_MAX bytes; send shorter lines");
    } else if (len > 0u && line[0] == ':') {
        handle_command(line);
    } else if (strlen(line) != len) {
        answer_error("invalid_utf8", "the line contains a NUL byte; send UTF-8 text");
    } else if (is_blank(line, len)) {
        answer_error("empty", "nothing to classify; type a sentence or :help");
    } else if (!engine_ok) {
        answer_error("internal", "bertl14_init failed at start-up (see the first line after reset)");
    } else {
        handle_sentence(line);
    }
}

void console_poll(void)
{
    for (;;) {
        uint32_t len = 0, count = 0;
        bool too_long = false;
        const linering_kind_t kind = linering_take(&app_rx_ring, line, &len, &too_long, &count,
                                                   platform_irq_disable, platform_irq_enable);
        if (kind == LINERING_EMPTY) {
            return;
        }
        if (kind == LINERING_OVERRUNS) {
            for (uint32_t i = 0; i < count; i++) {
                stats.overruns++;
                answer_error("overrun", "line discarded: receive buffer full (wait for answers or raise CONFIG_APP_RX_BUFFER)");
            }
        } else if (kind == LINERING_DAMAGED_LINE) {
            stats.line_errors++;
            answer_error("line_error", "the UART lost or garbled a byte of this line (overrun, framing or noise "
                                       "error); send it again (check the baud rate and the cable)");
        } else {
            handle_line(len, too_long);
        }
    }
}
