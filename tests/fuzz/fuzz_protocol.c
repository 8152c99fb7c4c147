/*
 * Fuzz target `protocol`: raw bytes through the intent firmware's line handling and command parser, built for the
 * PC by tests/hostapp.py -- the line ring (app/src/linering.h) filled as the UART's receive interrupt fills it, and
 * the protocol (app/src/protocol.c) answering what it takes, with intent.c, the library, the default model and the
 * default registry behind it, as on the device. Built with libFuzzer (tests/fuzz/run.sh 300 protocol) or with the
 * plain driver fuzz_replay_main.c under gcc ASan + UBSan (tests/fuzz/test_fuzz_short.py).
 *
 * Input layout: byte 0 = how often the application runs: every (byte0 & 63) + 1 received bytes it answers what
 * the ring holds (a slow application lets the ring fill: overruns); bit 6: `:dump on` before the stream, bit 7:
 * `:dump off`; byte 1 = receive errors: when not 0, every byte1-th byte arrives with a UART error
 * (linering_damage); the rest = the bytes received. An unfinished last line is ended with '\n'.
 *
 * Checks (any failure aborts): every line gets exactly one answer (`intent=`, `error=` or `ok `), in order, and
 * every output line is one the protocol defines, valid UTF-8 with no control byte; a line with a receive error is
 * answered error=line_error (or error=overrun when the ring had no room for it), and no other line is; a line
 * longer than CONFIG_APP_LINE_MAX is answered error=too_long; a command line gets `ok` or error=unknown_command,
 * any other line an intent or error=invalid_utf8 / error=empty; error=internal never (the library accepts every
 * line); `:stats` counts what was answered since start-up.
 */
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "console.h"
#include "platform.h"

unsigned long long fuzz_deep_runs; /* sentences classified (the replay driver prints it) */
const char *const fuzz_deep_name = "sentences classified";

#define CHECK(cond)                                                                                \
    do {                                                                                           \
        if (!(cond)) {                                                                             \
            fprintf(stderr, "fuzz invariant failed: %s (%s:%d)\n", #cond, __FILE__, __LINE__);      \
            fprintf(stderr, "output:\n%.*s\n", (int)(out_len > 4000 ? 4000 : out_len), out);        \
            abort();                                                                               \
        }                                                                                          \
    } while (0)

/* ---- the platform layer: the console's output is kept for the checks ------------------------------------ */
static char out[1 << 20];
static size_t out_len;
static uint32_t ticks;

ringbuf_t app_rx_ring;
const char platform_cycles_unit[] = "ns";

void platform_init(void) {}
void platform_wait_for_interrupt(void) {}
void platform_irq_disable(void) {}
void platform_irq_enable(void) {}
uint32_t platform_cycles(void) { return ticks += 1000u; }
void app_rx_notify_from_isr(void) {}

void platform_console_write(const char *data, size_t len)
{
    if (out_len + len > sizeof out) {
        fprintf(stderr, "fuzz: more than %zu bytes of output\n", sizeof out);
        abort();
    }
    memcpy(out + out_len, data, len);
    out_len += len;
}

void platform_fatal(const char *what, int line)
{
    fprintf(stderr, "fatal: %s:%d\n", what ? what : "?", line);
    abort();
}

/* ---- what each line sent must be answered -------------------------------------------------------------- */
enum { SENTENCE, COMMAND, TOO_LONG };
#define MAX_LINES 8192
static struct {
    uint8_t kind;    /* SENTENCE, COMMAND or TOO_LONG, from the line's bytes */
    uint8_t damaged; /* a receive error was reported in it */
} sent[MAX_LINES];
static size_t n_sent;

/* answers since start-up, for `:stats` */
static unsigned long long total_sentences, total_errors, total_overruns, total_line_errors;

static void line_sent(const uint8_t *line, size_t len, int damaged)
{
    CHECK(n_sent < MAX_LINES);
    if (len > 0 && line[len - 1] == '\r') { /* a "\r\n" ending */
        len--;
    }
    sent[n_sent].kind = len > CONFIG_APP_LINE_MAX ? TOO_LONG : (len > 0 && line[0] == ':') ? COMMAND : SENTENCE;
    sent[n_sent].damaged = (uint8_t)damaged;
    n_sent++;
}

static int valid_utf8(const uint8_t *s, size_t n)
{
    static const uint32_t min_cp[5] = {0, 0, 0x80, 0x800, 0x10000};
    size_t i = 0;
    while (i < n) {
        uint32_t k, cp, j;
        if (s[i] < 0x80) { i++; continue; }
        if ((s[i] & 0xE0) == 0xC0) { k = 2; cp = s[i] & 0x1F; }
        else if ((s[i] & 0xF0) == 0xE0) { k = 3; cp = s[i] & 0x0F; }
        else if ((s[i] & 0xF8) == 0xF0) { k = 4; cp = s[i] & 0x07; }
        else return 0;
        if (i + k > n) return 0;
        for (j = 1; j < k; j++) {
            if ((s[i + j] & 0xC0) != 0x80) return 0;
            cp = (cp << 6) | (s[i + j] & 0x3F);
        }
        if (cp < min_cp[k] || cp > 0x10FFFF || (cp >= 0xD800 && cp <= 0xDFFF)) return 0;
        i += k;
    }
    return 1;
}

static int starts(const char *s, size_t n, const char *prefix)
{
    const size_t k = strlen(prefix);
    return n >= k && memcmp(s, prefix, k) == 0;
}

/* Every output line against the lines sent, in order. */
static void check_output(void)
{
    static const char *const other[] = {"help: ", "entity: ", "area: ", "floor: ", "CLS_EMB: "};
    size_t pos = 0, answered = 0;
    while (pos < out_len) {
        const char *end = memchr(out + pos, '\n', out_len - pos);
        CHECK(end != NULL && end > out + pos && end[-1] == '\r'); /* whole lines ending "\r\n" */
        const char *s = out + pos;
        const size_t n = (size_t)(end - s) - 1u;
        pos = (size_t)(end - out) + 1u;
        CHECK(valid_utf8((const uint8_t *)s, n));
        for (size_t i = 0; i < n; i++) {
            CHECK((uint8_t)s[i] >= 0x20 && s[i] != 0x7F);
        }
        if (!starts(s, n, "intent=") && !starts(s, n, "error=") && !starts(s, n, "ok ")) {
            int known = 0;
            for (size_t k = 0; k < sizeof other / sizeof other[0]; k++) {
                known |= starts(s, n, other[k]);
            }
            CHECK(known);
            continue;
        }
        CHECK(answered < n_sent); /* no answer without a line */
        const uint8_t kind = sent[answered].kind, damaged = sent[answered].damaged;
        answered++;
        CHECK(!starts(s, n, "error=internal"));
        if (starts(s, n, "error=overrun ")) {
            total_errors++, total_overruns++;
            continue;
        }
        CHECK(!damaged == !starts(s, n, "error=line_error "));
        if (damaged) {
            total_errors++, total_line_errors++;
        } else if (kind == TOO_LONG) {
            CHECK(starts(s, n, "error=too_long "));
            total_errors++;
        } else if (kind == COMMAND) {
            CHECK(starts(s, n, "ok ") || starts(s, n, "error=unknown_command "));
            total_errors += starts(s, n, "error=") ? 1u : 0u;
        } else {
            CHECK(starts(s, n, "intent=") || starts(s, n, "error=invalid_utf8 ") || starts(s, n, "error=empty "));
            if (starts(s, n, "intent=")) {
                total_sentences++;
                fuzz_deep_runs++;
            } else {
                total_errors++;
            }
        }
    }
    CHECK(answered == n_sent); /* every line answered */
}

static unsigned long long stats_field(const char *line, const char *key)
{
    const char *p = strstr(line, key);
    CHECK(p != NULL);
    return strtoull(p + strlen(key), NULL, 10);
}

/* The receive interrupt: one byte into the ring, as the platform layers put it. */
static void receive(uint8_t byte, int error)
{
    if (error) {
        ringbuf_damage(&app_rx_ring);
    }
    ringbuf_put(&app_rx_ring, byte);
}

static void send_text(const char *text)
{
    for (; *text; text++) {
        receive((uint8_t)*text, 0);
    }
}

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size)
{
    static int started;
    if (!started) {
        console_banner("none");
        CHECK(starts(out, out_len, "bertl14 ready "));
        out_len = 0;
        started = 1;
    }
    if (size < 2) {
        return 0;
    }
    const uint8_t mode = data[0];
    const uint32_t every = (mode & 63u) + 1u, error_every = data[1];
    data += 2, size -= 2;
    out_len = 0;
    n_sent = 0;

    if (mode & 0xC0u) { /* :dump on / off first, answered before the stream */
        const char *cmd = (mode & 0x40u) ? ":dump on" : ":dump off";
        send_text(cmd);
        receive('\n', 0);
        line_sent((const uint8_t *)cmd, strlen(cmd), 0);
        console_poll();
    }
    size_t start = 0;
    int damaged = 0;
    for (size_t i = 0; i <= size; i++) {
        const uint8_t b = i < size ? data[i] : '\n'; /* the last line is ended */
        if (i == size && start == size) {
            break; /* the stream ended with its line end */
        }
        const int error = error_every != 0u && i < size && (i + 1u) % error_every == 0u;
        damaged |= error;
        receive(b, error);
        if (b == '\n') {
            line_sent(data + start, i - start, damaged);
            start = i + 1u;
            damaged = 0;
        }
        if ((i + 1u) % every == 0u) {
            console_poll();
        }
    }
    console_poll(); /* the ring is empty: everything sent is answered */
    check_output();

    out_len = 0;
    n_sent = 0;
    send_text(":stats\n");
    line_sent((const uint8_t *)":stats", 6, 0);
    console_poll();
    CHECK(starts(out, out_len, "ok stats ") && out[out_len - 1] == '\n');
    out[out_len - 1] = '\0';
    CHECK(stats_field(out, " sentences=") == total_sentences);
    CHECK(stats_field(out, " errors=") == total_errors);
    CHECK(stats_field(out, " overruns=") == total_overruns);
    CHECK(stats_field(out, " line_errors=") == total_line_errors);
    return 0;
}
