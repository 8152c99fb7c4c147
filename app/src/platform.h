/*
 * The board layer the application runs on; one implementation per platform in
 * app/src/platform/<platform>/ (mps2: QEMU MPS2 boards, riscv_virt: qemu_riscv32, stm32h7: nucleo_h743zi, host:
 * the PC).
 */
#ifndef APP_PLATFORM_H
#define APP_PLATFORM_H

#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>

#include "ringbuf.h"

/** Bytes received by the console UART's RX interrupt, waiting for the application. */
extern ringbuf_t app_rx_ring;

/** Clocks and the console UART (CONFIG_APP_UART_BAUDRATE, 8N1) with its RX interrupt enabled. */
void platform_init(void);

/** Blocking write to the console UART. */
void platform_console_write(const char *data, size_t len);

/** Bare-metal idle: sleep until an interrupt (WFI). Called with interrupts masked (PRIMASK):
 *  a pending interrupt still wakes the core, and runs as soon as the caller unmasks. */
void platform_wait_for_interrupt(void);

/** Mask / unmask interrupts (PRIMASK). */
void platform_irq_disable(void);
void platform_irq_enable(void);

/** Free-running 32-bit counter for timing inference: CPU cycles (DWT CYCCNT) on hardware; on the
 *  QEMU boards (no DWT) a timer of PLATFORM_ICOUNT_NS_PER_TICK ns a tick (platform_config.h): the 25 MHz CMSDK
 *  TIMER0 on the MPS2 boards, which under `-icount shift=0` advances exactly once every 40 instructions, the
 *  instret CSR on qemu_riscv32 (one a nanosecond of QEMU's virtual clock: an instruction at shift 0); nanoseconds
 *  on the host. platform_cycles_unit says which. */
uint32_t platform_cycles(void);
extern const char platform_cycles_unit[];

/** Unrecoverable error: report `fatal: <what>:<line>` (line 0: no line) on the console with the caller and the
 *  fault registers, then reset the board (Cortex-M boards: platform/cortex_m/fault.c; the host exits). */
void platform_fatal(const char *what, int line);

/** The console UART is set up (platform_init has run): the fault report is written only then. */
bool platform_console_ready(void);

/** Polled console input, for the host-driven test and benchmark images (tests/target, bench/) instead of the RX
 *  interrupt: platform_console_poll_init() (after platform_init) turns the RX interrupt off; platform_console_getc()
 *  waits for the next received byte and returns it. */
void platform_console_poll_init(void);
uint8_t platform_console_getc(void);

/** Feed the independent watchdog that platform_init started (CONFIG_APP_WATCHDOG; boards with HAS_WATCHDOG). The
 *  execution model calls it each time round its loop, and at least every half timeout while it waits. */
void platform_watchdog_feed(void);

/** Provided by the execution model (rtos_freertos.c / rtos_none.c): the RX interrupt calls it
 *  after queueing bytes into app_rx_ring. */
void app_rx_notify_from_isr(void);

#endif /* APP_PLATFORM_H */
