/*
 * Console output for code that runs without the console module (fault reports, test images that bring their own
 * console): strings, unsigned decimals and " key=0x%08x" fields written straight through platform_console_write.
 * Static inline, so each user keeps its own copy only of what it calls.
 */
#ifndef RAW_OUT_H
#define RAW_OUT_H

#include <stdint.h>
#include <string.h>

#include "platform.h"

static inline void raw_puts(const char *s)
{
    platform_console_write(s, strlen(s));
}

static inline void raw_put_dec(uint32_t v)
{
    char buf[11]; /* 4294967295 and its NUL */
    int i = (int)sizeof buf;
    buf[--i] = '\0';
    do {
        buf[--i] = (char)('0' + v % 10u);
        v /= 10u;
    } while (v != 0u);
    raw_puts(&buf[i]);
}

/* " key=0x0000abcd" */
static inline void raw_put_field(const char *key, uint32_t v)
{
    static const char digits[] = "0123456789abcdef";
    char buf[11] = {'0', 'x'};
    for (int i = 0; i < 8; i++) {
        buf[2 + i] = digits[(v >> (28 - 4 * i)) & 15u];
    }
    buf[10] = '\0';
    raw_puts(" ");
    raw_puts(key);
    raw_puts("=");
    raw_puts(buf);
}

#endif /* RAW_OUT_H */
