/*
 * Console output shared by the intent protocol (protocol.c) and the echo console of test applications
 * (console.c): strings and unsigned decimals, written through the board's console UART by raw_out.h's writers
 * (the same ones the fault reports use).
 */
#include "console.h"

#include "raw_out.h"

void console_puts(const char *s)
{
    raw_puts(s);
}

void console_put_uint(uint32_t v)
{
    raw_put_dec(v);
}
