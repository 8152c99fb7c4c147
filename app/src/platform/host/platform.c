/*
 * Host platform: the application logic on the PC. stdin stands in for the UART receiver (the
 * "interrupt" is a blocking read that queues the bytes it got), stdout for the transmitter.
 * End of input ends the program.
 */
#include <stdio.h>
#include <stdlib.h>
#include <time.h>
#include <unistd.h>

#include "platform.h"

const char platform_cycles_unit[] = "ns";

uint32_t platform_cycles(void)
{
    struct timespec ts;
    clock_gettime(CLOCK_MONOTONIC, &ts);
    return (uint32_t)((uint64_t)ts.tv_sec * 1000000000u + (uint64_t)ts.tv_nsec);
}

void platform_init(void)
{
    setvbuf(stdout, NULL, _IONBF, 0);
}

void platform_console_write(const char *data, size_t len)
{
    fwrite(data, 1, len, stdout);
}

void platform_wait_for_interrupt(void)
{
    uint8_t buf[256];
    ssize_t n = read(0, buf, sizeof(buf));
    if (n <= 0) {
        exit(0);
    }
    for (ssize_t i = 0; i < n; i++) {
        ringbuf_put(&app_rx_ring, buf[i]);
    }
    app_rx_notify_from_isr();
}

void platform_irq_disable(void)
{
}

void platform_irq_enable(void)
{
}

void platform_fatal(const char *what, int line)
{
    fprintf(stderr, "fatal: %s:%d\n", what ? what : "?", line);
    exit(3);
}
