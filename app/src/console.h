/* Line handling of the UART console: banner, line assembly from the RX ring, the reply to a line. */
#ifndef APP_CONSOLE_H
#define APP_CONSOLE_H

#include <stddef.h>
#include <stdint.h>

/** Print the ready banner (first line after reset). */
void console_banner(const char *rtos);

/** Drain the RX ring: assemble lines (ending in \n; \r is dropped) and answer each complete one.
 *  Called by the task / main loop whenever the RX interrupt signalled new bytes. */
void console_poll(void);

/** Write a NUL-terminated string to the console (console_out.c). */
void console_puts(const char *s);

/** Write an unsigned decimal to the console (console_out.c). */
void console_put_uint(uint32_t v);

#endif /* APP_CONSOLE_H */
