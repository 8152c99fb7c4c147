/*
 * Single-producer single-consumer byte ring: the UART RX interrupt puts, the application gets.
 * Lock-free: head is written only by the producer, tail only by the consumer. Capacity is
 * CONFIG_APP_RX_BUFFER - 1 bytes; a byte arriving when it is full is dropped and counted.
 */
#ifndef APP_RINGBUF_H
#define APP_RINGBUF_H

#include <stdbool.h>
#include <stdint.h>

typedef struct {
    volatile uint32_t head;    /* next slot to write (producer) */
    volatile uint32_t tail;    /* next slot to read (consumer) */
    volatile uint32_t dropped; /* bytes lost because the ring was full */
    uint8_t data[CONFIG_APP_RX_BUFFER];
} ringbuf_t;

static inline void ringbuf_barrier(void)
{
#if defined(__arm__)
    __asm volatile("dmb" ::: "memory");
#else
    __atomic_thread_fence(__ATOMIC_SEQ_CST);
#endif
}

/** Producer side (interrupt): store one byte; false (and counted) when full. */
static inline bool ringbuf_put(ringbuf_t *rb, uint8_t byte)
{
    uint32_t head = rb->head;
    uint32_t next = (head + 1u) % CONFIG_APP_RX_BUFFER;
    if (next == rb->tail) {
        rb->dropped++;
        return false;
    }
    rb->data[head] = byte;
    ringbuf_barrier(); /* the byte is visible before the new head */
    rb->head = next;
    return true;
}

/** Consumer side (task / main loop): take one byte; false when empty. */
static inline bool ringbuf_get(ringbuf_t *rb, uint8_t *byte)
{
    uint32_t tail = rb->tail;
    if (tail == rb->head) {
        return false;
    }
    ringbuf_barrier();
    *byte = rb->data[tail];
    rb->tail = (tail + 1u) % CONFIG_APP_RX_BUFFER;
    return true;
}

#endif /* APP_RINGBUF_H */
