/*
 * The console USART's receive interrupt on STM32H7 (RM0433 "USART"), with the receive FIFO on.
 *
 * The FIFO (USART_RX_FIFO_DEPTH bytes) raises the interrupt when it is half full (RXFT), when the line
 * goes idle after a burst (IDLE: the last bytes of a line), and on a receive error (EIE). The handler
 * takes every byte the FIFO holds into the line ring and reports each receive error to it
 * (ringbuf_damage), so the line the error hit is answered `error=line_error`:
 *   - framing, noise and parity errors (FE, NE, PE) belong to the byte at the top of the FIFO, the one
 *     read next: the ring is told before that byte is put;
 *   - an overrun (ORE) means a byte arrived while the FIFO was full and was lost: it came after every
 *     byte the FIFO held at that moment, so those are put first, then the ring is told.
 * Each flag is cleared before the bytes after it are read, so an error is counted once.
 *
 * The registers are reached only through the three macros below: tests/app/usart_rx_driver.c defines
 * them to run this handler on the PC against a simulated USART with injected errors.
 */
#ifndef APP_USART_RX_H
#define APP_USART_RX_H

#include <stdint.h>

#include "ringbuf.h"

#ifndef USART_RX_READ_ISR
#define USART_RX_READ_ISR(uart) ((uart)->ISR)
#define USART_RX_READ_RDR(uart) ((uart)->RDR)
#define USART_RX_CLEAR(uart, flags) ((uart)->ICR = (flags))
#endif

#define USART_RX_FIFO_DEPTH 16u
#define USART_RX_BYTE_ERRORS (USART_ISR_FE | USART_ISR_NE | USART_ISR_PE)

/* One byte from the top of the FIFO, with the errors that belong to it. */
static inline void usart_rx_take_byte(USART_TypeDef *uart, ringbuf_t *ring)
{
    if (USART_RX_READ_ISR(uart) & USART_RX_BYTE_ERRORS) {
        USART_RX_CLEAR(uart, USART_ICR_FECF | USART_ICR_NECF | USART_ICR_PECF);
        ringbuf_damage(ring);
    }
    ringbuf_put(ring, (uint8_t)USART_RX_READ_RDR(uart));
}

/** The USART's interrupt handler body: empty the receive FIFO into the ring, reporting receive errors. */
static inline void usart_rx_service(USART_TypeDef *uart, ringbuf_t *ring)
{
    USART_RX_CLEAR(uart, USART_ICR_IDLECF); /* an idle line only asks for what the FIFO holds */
    if (USART_RX_READ_ISR(uart) & USART_ISR_ORE) {
        for (uint32_t i = 0; i < USART_RX_FIFO_DEPTH && (USART_RX_READ_ISR(uart) & USART_ISR_RXNE_RXFNE); i++) {
            usart_rx_take_byte(uart, ring); /* the bytes received before the lost one */
        }
        ringbuf_damage(ring);
        USART_RX_CLEAR(uart, USART_ICR_ORECF);
    }
    while (USART_RX_READ_ISR(uart) & USART_ISR_RXNE_RXFNE) {
        usart_rx_take_byte(uart, ring);
    }
}

#endif /* APP_USART_RX_H */
