/*
 * Console lines: bytes from the RX ring are assembled into lines of at most CONFIG_APP_LINE_MAX
 * bytes; every complete line gets exactly one answer: the line itself (echo). The intent firmware
 * (app/) implements console.h with protocol.c instead; this echo console serves test applications.
 */
#include "console.h"

#include <stdbool.h>
#include <stdint.h>
#include <string.h>

#include "platform.h"

static char line[CONFIG_APP_LINE_MAX + 1];
static size_t line_len;
static bool line_too_long; /* the current line overflowed: discard it up to its \n */

void console_banner(const char *rtos)
{
    console_puts("bertl14 ready board=" BERTL14_BOARD_NAME " rtos=");
    console_puts(rtos);
    console_puts(" app=echo line_max=");
    console_put_uint(CONFIG_APP_LINE_MAX);
    console_puts(" rx_buffer=");
    console_put_uint(CONFIG_APP_RX_BUFFER);
    console_puts(" cycles=");
    console_puts(platform_cycles_unit);
    console_puts("\r\n");
}

/* One complete line (without its line ending). */
static void console_handle_line(const char *text, size_t len)
{
    platform_console_write(text, len);
    console_puts("\r\n");
}

void console_poll(void)
{
    static char rx_line[LINERING_LINE_KEEP + 1];
    uint32_t len, count;
    linering_kind_t kind;
    while ((kind = linering_take(&app_rx_ring, rx_line, &len, &line_too_long, &count, platform_irq_disable,
                                 platform_irq_enable)) != LINERING_EMPTY) {
        if (kind == LINERING_OVERRUNS) {
            while (count--) {
                console_puts("error=overrun line discarded: receive buffer full\r\n");
            }
            continue;
        }
        if (kind == LINERING_DAMAGED_LINE) {
            console_puts("error=line_error the UART lost or garbled a byte of this line\r\n");
            continue;
        }
        if (len > 0u && rx_line[len - 1u] == '\r') {
            len--;
        }
        if (line_too_long || len > CONFIG_APP_LINE_MAX) {
            console_puts("error=too_long line longer than ");
            console_put_uint(CONFIG_APP_LINE_MAX);
            console_puts(" bytes\r\n");
        } else {
            memcpy(line, rx_line, len);
            line[len] = '\0';
            line_len = len;
            console_handle_line(line, line_len);
        }
    }
}
