/*
 * Bare-metal execution model: the UART RX interrupt queues bytes and sets rx_pending; the main loop
 * answers complete lines and otherwise sleeps in WFI. The flag is tested with interrupts masked, so
 * an interrupt arriving between the test and the WFI still wakes the core (no lost wake-up). It starts
 * set: bytes platform_init took from the UART before its interrupt was on (a line sent while the board
 * was starting) are answered at the loop's first pass, not after the next byte.
 */
#include <stdint.h>

#include "console.h"
#include "platform.h"

static volatile uint32_t rx_pending = 1u;

void app_rx_notify_from_isr(void)
{
    rx_pending = 1u;
}

void app_run(void)
{
    console_banner("none");
    for (;;) {
#if defined(CONFIG_APP_WATCHDOG)
        platform_watchdog_feed(); /* the boards with a watchdog wake the loop at least every 1 ms (HAL tick) */
#endif
        platform_irq_disable();
        if (!rx_pending) {
            platform_wait_for_interrupt();
        }
        rx_pending = 0u;
        platform_irq_enable(); /* the pending RX interrupt runs here */
        console_poll();
    }
}
