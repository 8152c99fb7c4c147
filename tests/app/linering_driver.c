/*
 * Host driver of app/src/linering.h for tests/app/test_linering.py, with the RX interrupt injected
 * between any two instructions of the consumer.
 *
 * The consumer is the application's loop: take every record there is (linering_take until it
 * finds nothing), then a "busy" spell standing for an inference, again and again. Each linering_take
 * runs single-stepped: the x86-64 trap flag raises SIGTRAP after each of its instructions, and the
 * SIGTRAP handler is the UART RX interrupt. At each step it fires with the given probability; it puts
 * the next 1..4 bytes of stdin (a receive FIFO's worth) with linering_put, exactly as the platform
 * layers' interrupt handlers do. The mask hooks really mask: while the consumer has the interrupt
 * masked, a firing only pends, and the pending interrupt runs when the consumer unmasks (as PRIMASK
 * does on the Cortex-M). During a busy spell the interrupt fires 1..BUSY_MAX times.
 *
 *   linering_driver SEED PERMILLE BUSY_MAX < bytes
 *     SEED      the schedule's random seed
 *     PERMILLE  probability (1/1000) that the interrupt fires after an instruction of linering_take
 *     BUSY_MAX  most interrupts during one busy spell of the consumer
 *   stdin: the received bytes; byte 0x02 is not data but "the UART reports a receive error here"
 *   (linering_damage, called by the interrupt that delivers the next byte).
 *
 * Once every byte is delivered the consumer drains the ring without single-stepping. One output line
 * per record taken, in order:
 *   L <too_long 0|1> <len> <hex bytes>      a line
 *   D                                       a line damaged on the wire
 *   O                                       one discarded line (an overrun record expands to N lines)
 * Exit status 77: single-stepping is not available on this machine.
 */
#define _GNU_SOURCE /* sigaction, ucontext's REG_EFL */
#include <signal.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "linering.h"

#if defined(__x86_64__) && defined(__linux__)
#include <ucontext.h>
#define HAVE_STEPPING 1
#define TRAP_FLAG 0x100
#endif

#define DAMAGE_MARK 0x02
#define MAX_INPUT (1u << 20)
#define MAX_RECORDS (1u << 18)

static linering_t ring;
static uint8_t input[MAX_INPUT];
static volatile uint32_t input_len, delivered; /* delivered: bytes of input[] the interrupt has consumed */

/* the interrupt's state: masking and pending, as PRIMASK and the NVIC's pending bit */
static volatile int masked, pending, in_interrupt, stepping;
static uint32_t permille;
static uint64_t irq_rng, busy_rng; /* the interrupt's schedule, the consumer's busy spells */

static uint32_t rnd(uint64_t *state)
{
    *state ^= *state << 13;
    *state ^= *state >> 7;
    *state ^= *state << 17;
    return (uint32_t)(*state >> 11);
}

/* The RX interrupt: the next 1..4 bytes (a receive error mark applies to the byte after it). */
static void rx_interrupt(void)
{
    uint32_t burst = 1u + rnd(&irq_rng) % 4u;
    while (burst > 0u && delivered < input_len) {
        const uint8_t b = input[delivered++];
        if (b == DAMAGE_MARK) {
            linering_damage(&ring);
            continue;
        }
        linering_put(&ring, b);
        burst--;
    }
}

/* The interrupt is taken: it cannot preempt itself (a firing while it runs only pends). */
static void take_interrupt(void)
{
    pending = 0;
    in_interrupt = 1;
    rx_interrupt();
    in_interrupt = 0;
}

static void mask(void)
{
    masked = 1;
}

static void unmask(void)
{
    masked = 0;
    if (pending && !in_interrupt) { /* a pended interrupt is taken as soon as the mask is lifted */
        take_interrupt();
    }
}

#if defined(HAVE_STEPPING)
static void on_trap(int sig, siginfo_t *info, void *context)
{
    (void)sig, (void)info;
    ucontext_t *uc = context;
    if (!stepping) {
        uc->uc_mcontext.gregs[REG_EFL] &= ~(greg_t)TRAP_FLAG;
        return;
    }
    if (delivered < input_len && rnd(&irq_rng) % 1000u < permille) {
        pending = 1;
    }
    if (pending && !masked && !in_interrupt) {
        take_interrupt();
    }
}

/* Set / clear the trap flag (below the red zone: the 128 bytes under %rsp that compiled code may use
 * without moving %rsp). */
static void start_stepping(void)
{
    stepping = 1;
    __asm__ volatile("sub $128, %%rsp\n\tpushfq\n\torq $0x100, (%%rsp)\n\tpopfq\n\tadd $128, %%rsp"
                     ::: "memory", "cc");
}

static void stop_stepping(void)
{
    __asm__ volatile("sub $128, %%rsp\n\tpushfq\n\tandq $-257, (%%rsp)\n\tpopfq\n\tadd $128, %%rsp"
                     ::: "memory", "cc");
    stepping = 0;
}
#endif

/* records taken, printed at the end (no output while single-stepping) */
static char kinds[MAX_RECORDS];
static uint32_t rec_len[MAX_RECORDS], rec_start[MAX_RECORDS];
static uint8_t rec_too_long[MAX_RECORDS];
static uint8_t rec_bytes[MAX_INPUT];
static uint32_t n_records, n_rec_bytes;

static void add(char kind)
{
    if (n_records >= MAX_RECORDS) {
        abort();
    }
    kinds[n_records++] = kind;
}

/* Take every record there is (the application's console_poll). */
static void drain(void)
{
    char line[LINERING_LINE_KEEP + 1];
    for (;;) {
        uint32_t len = 0, count = 0;
        bool too_long = false;
        start_stepping();
        const linering_kind_t k = linering_take(&ring, line, &len, &too_long, &count, mask, unmask);
        stop_stepping();
        if (k == LINERING_EMPTY) {
            return;
        }
        if (k == LINERING_OVERRUNS) {
            while (count--) {
                add('O');
            }
        } else if (k == LINERING_DAMAGED_LINE) {
            add('D');
        } else {
            rec_start[n_records] = n_rec_bytes;
            rec_len[n_records] = len;
            rec_too_long[n_records] = too_long ? 1u : 0u;
            if (n_rec_bytes + len > MAX_INPUT) {
                abort();
            }
            memcpy(&rec_bytes[n_rec_bytes], line, len);
            n_rec_bytes += len;
            add('L');
        }
    }
}

int main(int argc, char **argv)
{
    if (argc != 4) {
        fprintf(stderr, "usage: %s SEED PERMILLE BUSY_MAX < bytes\n", argv[0]);
        return 2;
    }
#if !defined(HAVE_STEPPING)
    return 77;
#else
    irq_rng = strtoull(argv[1], NULL, 10) * 0x9E3779B97F4A7C15ull + 1u;
    busy_rng = irq_rng ^ 0x5DEECE66Dull;
    permille = (uint32_t)strtoul(argv[2], NULL, 10);
    if (permille < 1u || permille > 1000u) {
        fprintf(stderr, "PERMILLE must be 1..1000\n");
        return 2;
    }
    const uint32_t busy_max = (uint32_t)strtoul(argv[3], NULL, 10);
    if (busy_max < 1u) {
        fprintf(stderr, "BUSY_MAX must be at least 1\n");
        return 2;
    }
    input_len = (uint32_t)fread(input, 1, sizeof input, stdin);

    struct sigaction sa;
    memset(&sa, 0, sizeof sa);
    sa.sa_sigaction = on_trap;
    sa.sa_flags = SA_SIGINFO;
    sigemptyset(&sa.sa_mask);
    sigaction(SIGTRAP, &sa, NULL);

    while (delivered < input_len) {
        drain();
        for (uint32_t busy = 1u + rnd(&busy_rng) % busy_max; busy > 0u; busy--) {
            take_interrupt();
        }
    }
    drain();

    for (uint32_t i = 0; i < n_records; i++) {
        if (kinds[i] != 'L') {
            printf("%c\n", kinds[i]);
            continue;
        }
        printf("L %u %u ", (unsigned)rec_too_long[i], (unsigned)rec_len[i]);
        for (uint32_t j = 0; j < rec_len[i]; j++) {
            printf("%02x", rec_bytes[rec_start[i] + j]);
        }
        putchar('\n');
    }
    return 0;
#endif
}
