/* Host driver of app/src/linering.h for tests/app/test_linering.py: stdin bytes go to the producer
 * (the "RX interrupt") one at a time; byte 0x01 is not data but "the consumer drains the ring now".
 * At end of input the consumer drains once more. One output line per record taken:
 *   L <too_long 0|1> <len> <hex bytes>      a line
 *   O                                       one discarded line (an overrun record expands to N lines) */
#include <stdio.h>

#include "linering.h"

static linering_t ring;
static void nop(void) {}

static void drain(void)
{
    char line[LINERING_LINE_KEEP + 1];
    for (;;) {
        uint32_t len = 0, count = 0;
        bool too_long = false;
        linering_kind_t k = linering_take(&ring, line, &len, &too_long, &count, nop, nop);
        if (k == LINERING_EMPTY) {
            return;
        }
        if (k == LINERING_OVERRUNS) {
            while (count--) {
                puts("O");
            }
            continue;
        }
        printf("L %d %u ", too_long ? 1 : 0, (unsigned)len);
        for (uint32_t i = 0; i < len; i++) {
            printf("%02x", (unsigned char)line[i]);
        }
        putchar('\n');
    }
}

int main(void)
{
    int c;
    while ((c = getchar()) != EOF) {
        if (c == 0x01) {
            drain();
        } else {
            linering_put(&ring, (uint8_t)c);
        }
    }
    drain();
    return 0;
}
