/* Shared by the host-driven images on the QEMU boards: polled command input, the -icount shift (target_link.h). */
#include "target_link.h"

#include "platform.h"

uint32_t target_icount_shift;

void target_link_init(void)
{
    platform_console_poll_init();
}

uint32_t target_read_line(char *line, uint32_t size)
{
    uint32_t n = 0;
    for (;;) {
        const char c = (char)platform_console_getc();
        if (c == '\n') {
            break;
        }
        if (c != '\r' && n + 1 < size) {
            line[n++] = c;
        }
    }
    line[n] = '\0';
    return n;
}

void target_set_icount_shift(const char *digits)
{
    target_icount_shift = (uint32_t)(digits[0] - '0');
    if (digits[1] != '\0') {
        target_icount_shift = target_icount_shift * 10u + (uint32_t)(digits[1] - '0');
    }
}
