/*
 * Console lines: bytes from the RX ring are assembled into lines of at most CONFIG_APP_LINE_MAX
 * bytes; every complete line gets exactly one answer. For now the answer is the line itself (echo);
 * the inference firmware replaces console_handle_line().
 */
#include "console.h"

#include <stdbool.h>
#include <stdint.h>
#include <string.h>

#include "platform.h"

static char line[CONFIG_APP_LINE_MAX + 1];
static size_t line_len;
static bool line_too_long; /* the current line overflowed: discard it up to its \n */

void console_puts(const char *s)
{
    platform_console_write(s, strlen(s));
}

static void put_uint(uint32_t v)
{
    char buf[11];
    int i = (int)sizeof(buf);
    buf[--i] = '\0';
    do {
        buf[--i] = (char)('0' + v % 10u);
        v /= 10u;
    } while (v != 0u);
    console_puts(&buf[i]);
}

void console_banner(const char *rtos)
{
    console_puts("bertl14 ready board=" BERTL14_BOARD_NAME " rtos=");
    console_puts(rtos);
    console_puts(" app=echo line_max=");
    put_uint(CONFIG_APP_LINE_MAX);
    console_puts(" rx_buffer=");
    put_uint(CONFIG_APP_RX_BUFFER);
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
    uint8_t c;
    while (ringbuf_get(&app_rx_ring, &c)) {
        if (c == '\r') {
            continue;
        }
        if (c != '\n') {
            if (line_len < CONFIG_APP_LINE_MAX) {
                line[line_len++] = (char)c;
            } else {
                line_too_long = true;
            }
            continue;
        }
        if (line_too_long) {
            console_puts("error=too_long line longer than ");
            put_uint(CONFIG_APP_LINE_MAX);
            console_puts(" bytes\r\n");
        } else {
            line[line_len] = '\0';
            console_handle_line(line, line_len);
        }
        line_len = 0;
        line_too_long = false;
    }
}
