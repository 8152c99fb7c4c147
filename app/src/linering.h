/*
 * Line-framed receive ring: the UART RX interrupt stores whole lines, the application takes whole
 * lines (docs/serial-protocol.md "Flow control").
 *
 * Why lines and not bytes: when the application is busy (an inference takes milliseconds) bytes keep
 * arriving; when the ring is full a byte ring would cut a line in the middle and glue its tail to
 * the next line. Here the interrupt discards WHOLE lines instead and counts them, and each discarded
 * line is answered `error=overrun` in its place, so N lines sent always get N answers in order.
 *
 * Records in data[] (positions wrap around): a 2-byte little-endian header, then the line's bytes.
 *   header bit 15 set:   an overrun record, bits 0..14 = number of consecutive discarded lines
 *   header bit 15 clear: a line, bits 0..12 = stored bytes (without the '\n'), bit 14 = too long
 *                        (more than CONFIG_APP_LINE_MAX + 1 bytes arrived; only the first ones kept),
 *                        bit 13 = damaged (the UART reported an overrun, framing or noise error while
 *                        the line was arriving: a byte was lost or garbled, maybe its '\n')
 * The producer (interrupt) reserves a line's header when its first byte arrives and publishes the
 * record (`committed`) when its '\n' arrives; the consumer reads only published records, so the
 * producer may still roll an unpublished line back. Lines discarded after the last published record
 * are counted in `pending_overruns`: the producer writes them as an overrun record just before the
 * next line it accepts, and the consumer takes them directly once the ring is empty, so their place
 * in the order is always kept.
 *
 * Single producer (the RX interrupt), single consumer (the inference task / main loop). Only the
 * consumer's read-and-clear of pending_overruns needs the interrupt masked. The all-zero state is
 * the empty ring (a static linering_t needs no init call).
 */
#ifndef APP_LINERING_H
#define APP_LINERING_H

#include <stdbool.h>
#include <stdint.h>

/* The ring holds CONFIG_APP_RX_BUFFER bytes plus LINERING_RESERVE of its own: what a longest line needs besides its
 * CONFIG_APP_LINE_MAX bytes (its 2-byte header, the '\r' of "\r\n", an overrun record before it, the byte a full
 * ring keeps free: 6) with the margin the ring always had. So the rule is CONFIG_APP_RX_BUFFER >=
 * CONFIG_APP_LINE_MAX, a comparison app/Kconfig's range states (Kconfig has no arithmetic for "+ 8"). */
#define LINERING_RESERVE 8u
#define LINERING_SIZE (CONFIG_APP_RX_BUFFER + LINERING_RESERVE)
#define LINERING_OVERRUN 0x8000u
#define LINERING_TOO_LONG 0x4000u
#define LINERING_DAMAGED 0x2000u
#define LINERING_LEN_MASK 0x1FFFu
#define LINERING_COUNT_MAX 0x7FFFu
/* bytes kept of one line: CONFIG_APP_LINE_MAX plus one for the '\r' of a "\r\n" ending */
#define LINERING_LINE_KEEP (CONFIG_APP_LINE_MAX + 1u)

_Static_assert(CONFIG_APP_RX_BUFFER >= CONFIG_APP_LINE_MAX,
               "CONFIG_APP_RX_BUFFER must hold a whole line: at least CONFIG_APP_LINE_MAX bytes (app/Kconfig's range)");
_Static_assert(CONFIG_APP_LINE_MAX + 1 <= LINERING_LEN_MASK, "CONFIG_APP_LINE_MAX too large for the ring header");

typedef struct {
    /* producer (interrupt) */
    volatile uint32_t head;       /* next free byte */
    volatile uint32_t committed;  /* end of the last published record */
    uint32_t open;                /* header position of the line being received */
    uint32_t open_len;            /* its bytes stored so far */
    uint8_t in_line;              /* a line has started (header reserved or being discarded) */
    uint8_t discarding;           /* the open line did not fit: dropping bytes up to its '\n' */
    uint8_t too_long;             /* the open line is longer than LINERING_LINE_KEEP */
    uint8_t damaged;              /* the open line (between lines: the next one) lost or garbled a byte */
    volatile uint32_t pending_overruns; /* discarded lines not yet written as a record */
    volatile uint32_t overrun_lines;    /* discarded lines since reset (statistics) */
    /* consumer (application) */
    volatile uint32_t tail;       /* start of the oldest record not taken */
    uint8_t data[LINERING_SIZE];
} linering_t;

static inline void linering_barrier(void)
{
#if defined(__arm__)
    __asm volatile("dmb" ::: "memory");
#else
    __atomic_thread_fence(__ATOMIC_SEQ_CST);
#endif
}

static inline uint32_t linering_free(const linering_t *r)
{
    return (LINERING_SIZE - 1u) - (r->head + LINERING_SIZE - r->tail) % LINERING_SIZE;
}

static inline void linering_store(linering_t *r, uint32_t pos, uint8_t byte)
{
    r->data[pos % LINERING_SIZE] = byte;
}

static inline void linering_publish(linering_t *r)
{
    linering_barrier(); /* the record's bytes are visible before `committed` moves past them */
    r->committed = r->head;
}

/* Producer: write the header of a record at `pos`. */
static inline void linering_header(linering_t *r, uint32_t pos, uint32_t header)
{
    linering_store(r, pos, (uint8_t)header);
    linering_store(r, pos + 1u, (uint8_t)(header >> 8));
}

/* Producer: write the pending discarded lines as overrun records (as many as fit). */
static inline void linering_flush_overruns(linering_t *r)
{
    while (r->pending_overruns != 0u && linering_free(r) >= 2u) {
        uint32_t n = r->pending_overruns > LINERING_COUNT_MAX ? LINERING_COUNT_MAX : r->pending_overruns;
        linering_header(r, r->head, LINERING_OVERRUN | n);
        r->head = (r->head + 2u) % LINERING_SIZE;
        r->pending_overruns -= n;
        linering_publish(r);
    }
}

/** Producer (RX interrupt): one received byte. False when the byte's line is being discarded. */
static inline bool linering_put(linering_t *r, uint8_t byte)
{
    if (!r->in_line) { /* first byte of a line: earlier discarded lines go first, then the header */
        r->in_line = 1u;
        r->too_long = 0u;
        r->open_len = 0u;
        linering_flush_overruns(r);
        if (r->pending_overruns != 0u || linering_free(r) < 2u) {
            r->discarding = 1u;
        } else {
            r->discarding = 0u;
            r->open = r->head;
            r->head = (r->head + 2u) % LINERING_SIZE;
        }
    }
    if (byte == '\n') {
        const uint32_t damaged = r->damaged ? LINERING_DAMAGED : 0u;
        r->in_line = 0u;
        r->damaged = 0u;
        if (r->discarding) {
            r->pending_overruns++;
            r->overrun_lines++;
            return false;
        }
        linering_header(r, r->open, r->open_len | (r->too_long ? LINERING_TOO_LONG : 0u) | damaged);
        linering_publish(r);
        return true;
    }
    if (r->discarding) {
        return false;
    }
    if (r->open_len >= LINERING_LINE_KEEP) { /* too long: keep the first bytes, flag the line */
        r->too_long = 1u;
        return true;
    }
    if (linering_free(r) < 1u) { /* full: roll the unpublished line back, drop the rest of it */
        r->head = r->open;
        r->discarding = 1u;
        return false;
    }
    linering_store(r, r->head, byte);
    r->head = (r->head + 1u) % LINERING_SIZE;
    r->open_len++;
    return true;
}

/** Producer (RX interrupt): the UART reported a receive error (overrun, framing, noise). The line
 *  being received -- or, between lines, the next one -- is marked damaged: it is still one record,
 *  taken as LINERING_DAMAGED_LINE, so it gets one answer and the lines after it are not shifted. */
static inline void linering_damage(linering_t *r)
{
    r->damaged = 1u;
}

/** What linering_take() found. */
typedef enum {
    LINERING_EMPTY = 0,    /* nothing complete yet */
    LINERING_LINE,         /* a line was copied out */
    LINERING_OVERRUNS,     /* *count lines were discarded here */
    LINERING_DAMAGED_LINE, /* a line damaged on the wire (linering_damage): its bytes are skipped */
} linering_kind_t;

/**
 * Consumer: take the oldest record. For a line, copies its bytes to `line` (capacity
 * LINERING_LINE_KEEP + 1, NUL-terminated) and sets *len and *too_long. For discarded lines sets
 * *count. A damaged line is skipped (nothing copied). `mask`/`unmask` mask the RX interrupt around
 * the read-and-clear of pending_overruns.
 */
static inline linering_kind_t linering_take(linering_t *r, char *line, uint32_t *len, bool *too_long,
                                            uint32_t *count, void (*mask)(void), void (*unmask)(void))
{
    uint32_t tail = r->tail;
    if (tail == r->committed) {
        mask();
        uint32_t n = (tail == r->committed) ? r->pending_overruns : 0u;
        if (n != 0u) {
            r->pending_overruns = 0u;
        }
        unmask();
        *count = n;
        return n != 0u ? LINERING_OVERRUNS : LINERING_EMPTY;
    }
    linering_barrier();
    uint32_t header = r->data[tail] | ((uint32_t)r->data[(tail + 1u) % LINERING_SIZE] << 8);
    tail = (tail + 2u) % LINERING_SIZE;
    if (header & LINERING_OVERRUN) {
        *count = header & LINERING_COUNT_MAX;
        linering_barrier();
        r->tail = tail;
        return LINERING_OVERRUNS;
    }
    uint32_t n = header & LINERING_LEN_MASK;
    if (header & LINERING_DAMAGED) {
        linering_barrier();
        r->tail = (tail + n) % LINERING_SIZE;
        return LINERING_DAMAGED_LINE;
    }
    for (uint32_t i = 0; i < n; i++) {
        line[i] = (char)r->data[(tail + i) % LINERING_SIZE];
    }
    line[n] = '\0';
    *len = n;
    *too_long = (header & LINERING_TOO_LONG) != 0u;
    linering_barrier(); /* copied out before the producer may reuse the space */
    r->tail = (tail + n) % LINERING_SIZE;
    return LINERING_LINE;
}

#endif /* APP_LINERING_H */
