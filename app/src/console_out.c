/*
 * Console output shared by the intent protocol (protocol.c) and the echo console of test applications
 * (console.c): strings and unsigned decimals, written through the board's console UART.
 */
#include "console.h"

#include <string.h>

#include "platform.h"

void console_puts(const char *s)
{
    platform_console_write(s, strlen(s));
}

void console_put_uint(uint32_t v)
{
    char buf[11]; /* 4294967295 and its NUL */
    int i = (int)sizeof(buf);
    buf[--i] = '\0';
    do {
        buf[--i] = (char)('0' + v % 10u);
        v /= 10u;
    } while (v != 0u);
    console_puts(&buf[i]);
}
