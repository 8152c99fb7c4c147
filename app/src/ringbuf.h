/*
 * The console's RX ring. It is line-framed (linering.h): the UART RX interrupt keeps or discards
 * WHOLE lines, and a discarded line comes back to the application as an overrun record, so every
 * line sent gets exactly one answer in order. The platform layers' RX interrupts call
 * ringbuf_put(&app_rx_ring, byte) for every byte and ringbuf_damage(&app_rx_ring) when the UART
 * reports a receive error; the application takes lines with linering_take().
 */
#ifndef APP_RINGBUF_H
#define APP_RINGBUF_H

#include <stdbool.h>
#include <stdint.h>

#include "linering.h"

typedef linering_t ringbuf_t;

/** Producer side (RX interrupt): one received byte (see linering_put). */
static inline bool ringbuf_put(ringbuf_t *rb, uint8_t byte)
{
    return linering_put(rb, byte);
}

/** Producer side (RX interrupt): a byte was lost or garbled on the wire (see linering_damage). */
static inline void ringbuf_damage(ringbuf_t *rb)
{
    linering_damage(rb);
}

#endif /* APP_RINGBUF_H */
