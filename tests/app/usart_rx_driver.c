/*
 * The STM32H7 console's receive interrupt (app/src/platform/stm32h7/usart_rx.h) on the PC, against a simulated
 * USART with its 16-byte receive FIFO, feeding the firmware's real line ring and protocol (protocol.c, intent.c
 * and the library with the default model, built by tests/hostapp.py) -- for tests/app/test_uart_errors.py.
 *
 * stdin is what arrives on the wire, with markers that are not data:
 *   0x02  the next byte arrives with a framing error (FE)
 *   0x03  the next byte arrives with noise (NE)
 *   0x04  the receive interrupt cannot run for the next 24 byte times (masked by a longer critical section):
 *         bytes that arrive while the FIFO is full are lost and the USART sets ORE
 * The line goes idle after every '\n' (the sender pauses) and at the end of the input. The interrupt is taken
 * when the hardware would raise it (FIFO half full, idle line, an error flag), then the application answers
 * what the ring holds (console_poll). stdout: the firmware's output; stderr: `lost <n>` for each data byte the
 * USART lost (n counts data bytes from 0).
 */
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>

#include "console.h"
#include "platform.h"

/* ---- the simulated USART: its registers are reached only through these macros ------------------------------ */
typedef struct {
    int unused;
} USART_TypeDef;

/* The simulation's own flag bits (the handler uses only the names). */
#define USART_ISR_PE 0x01u
#define USART_ISR_FE 0x02u
#define USART_ISR_NE 0x04u
#define USART_ISR_ORE 0x08u
#define USART_ISR_IDLE 0x10u
#define USART_ISR_RXNE_RXFNE 0x20u
#define USART_ISR_RXFT 0x40u
#define USART_ICR_PECF USART_ISR_PE
#define USART_ICR_FECF USART_ISR_FE
#define USART_ICR_NECF USART_ISR_NE
#define USART_ICR_ORECF USART_ISR_ORE
#define USART_ICR_IDLECF USART_ISR_IDLE

#define FIFO_DEPTH 16u
#define THRESHOLD 8u /* UART_RXFIFO_THRESHOLD_1_2 */

static struct {
    uint8_t byte[FIFO_DEPTH], error[FIFO_DEPTH]; /* error: FE / NE the byte arrived with */
    uint32_t head, count;
    uint32_t sticky;      /* FE, NE, ORE, IDLE: set by the hardware, cleared by writing ICR */
    int top_reported;     /* the top byte's error has been raised in `sticky` */
    uint32_t data_bytes;  /* data bytes that arrived so far */
} usart;

static uint32_t sim_isr(void)
{
    if (usart.count > 0u && !usart.top_reported) { /* the error of the byte now at the top of the FIFO */
        usart.sticky |= usart.error[usart.head];
        usart.top_reported = 1;
    }
    return usart.sticky | (usart.count > 0u ? USART_ISR_RXNE_RXFNE : 0u) | (usart.count >= THRESHOLD ? USART_ISR_RXFT : 0u);
}

static uint32_t sim_rdr(void)
{
    if (usart.count == 0u) {
        fprintf(stderr, "the handler read RDR with the FIFO empty\n");
        abort();
    }
    const uint8_t b = usart.byte[usart.head];
    usart.head = (usart.head + 1u) % FIFO_DEPTH;
    usart.count--;
    usart.top_reported = 0;
    return b;
}

static void sim_arrive(uint8_t b, uint8_t error)
{
    if (usart.count == FIFO_DEPTH) {
        usart.sticky |= USART_ISR_ORE;
        fprintf(stderr, "lost %u\n", (unsigned)usart.data_bytes++);
        return;
    }
    const uint32_t at = (usart.head + usart.count) % FIFO_DEPTH;
    usart.byte[at] = b;
    usart.error[at] = error;
    usart.count++;
    usart.data_bytes++;
}

#define USART_RX_READ_ISR(uart) ((void)(uart), sim_isr())
#define USART_RX_READ_RDR(uart) ((void)(uart), sim_rdr())
#define USART_RX_CLEAR(uart, flags) ((void)(uart), usart.sticky &= ~(uint32_t)(flags))

#include "usart_rx.h"

static USART_TypeDef usart3;

/* ---- the platform layer the protocol runs on ------------------------------------------------------------- */
ringbuf_t app_rx_ring;
const char platform_cycles_unit[] = "ns";
static uint32_t ticks;

void platform_init(void) {}
void platform_console_write(const char *data, size_t len) { fwrite(data, 1, len, stdout); }
void platform_wait_for_interrupt(void) {}
void platform_irq_disable(void) {}
void platform_irq_enable(void) {}
uint32_t platform_cycles(void) { return ticks += 1000u; }
void app_rx_notify_from_isr(void) {}

void platform_fatal(const char *what, int line)
{
    fprintf(stderr, "fatal: %s:%d\n", what ? what : "?", line);
    exit(3);
}

/* The interrupt, when the hardware raises it (RXFTIE, IDLEIE, EIE), then the application. */
static void interrupt_if_raised(void)
{
    if (sim_isr() & (USART_ISR_RXFT | USART_ISR_IDLE | USART_ISR_ORE | USART_ISR_FE | USART_ISR_NE)) {
        usart_rx_service(&usart3, &app_rx_ring);
        app_rx_notify_from_isr();
        console_poll();
    }
}

int main(void)
{
    uint8_t error = 0;
    uint32_t masked = 0;
    int c;
    console_banner("none");
    while ((c = getchar()) != EOF) {
        if (c == 0x02 || c == 0x03) {
            error = c == 0x02 ? USART_ISR_FE : USART_ISR_NE;
            continue;
        }
        if (c == 0x04) {
            masked = 24u;
            continue;
        }
        sim_arrive((uint8_t)c, error);
        error = 0;
        if (c == '\n') {
            usart.sticky |= USART_ISR_IDLE;
        }
        if (masked > 0u) {
            masked--;
        }
        if (masked == 0u) {
            interrupt_if_raised();
        }
    }
    usart.sticky |= USART_ISR_IDLE;
    interrupt_if_raised();
    fflush(stdout);
    return 0;
}
