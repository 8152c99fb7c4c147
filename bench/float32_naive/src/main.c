/*
 * float32 baseline image: the same serial protocol subset and counting as tests/target/src/main.c.
 *   boot       READY float32 max_seq=<N> labels=<C> ram=<activation bytes>
 *   C <shift>  the QEMU -icount shift (answer OK)
 *   I <id>...  encode + classify: L <logit * 1000 rounded>...  S <instructions> <stack bytes>  END 0
 */
#include <stdint.h>
#include <string.h>

#include "cmsdk.h"
#include "float_model.h"
#include "naive_bert.h"
#include "platform.h"
#include "ringbuf.h"

ringbuf_t app_rx_ring;
void app_rx_notify_from_isr(void) {}

static char line[8192];
static int32_t ids[FM_MAX_SEQ];
static float logits[FM_LABELS > 0 ? FM_LABELS : 1];
static uint32_t icount_shift;

static void out(const char *s) { platform_console_write(s, strlen(s)); }

void console_puts(const char *s) { out(s); }

static void out_i64(int64_t v)
{
    char b[24];
    int i = (int)sizeof b;
    b[--i] = '\0';
    const int neg = v < 0;
    uint64_t u = neg ? (uint64_t)(-v) : (uint64_t)v;
    do {
        b[--i] = (char)('0' + (int)(u % 10u));
        u /= 10u;
    } while (u);
    if (neg) {
        b[--i] = '-';
    }
    out(&b[i]);
}

static uint64_t to_instructions(uint32_t ticks)
{
    const uint64_t t40 = (uint64_t)ticks * 40u;
    return icount_shift ? (t40 + (1u << (icount_shift - 1u))) >> icount_shift : t40;
}

extern uint32_t _sstack;
#define STACK_PAINT 0xC0FFEE11u

static uint32_t read_line(void)
{
    uint32_t n = 0;
    for (;;) {
        while (!(CMSDK_UART0->STATE & CMSDK_UART_STATE_RXFULL)) {
        }
        const char c = (char)CMSDK_UART0->DATA;
        if (c == '\n') {
            break;
        }
        if (c != '\r' && n + 1 < sizeof line) {
            line[n++] = c;
        }
    }
    line[n] = '\0';
    return n;
}

int main(void)
{
    platform_init();
    CMSDK_UART0->CTRL = CMSDK_UART_CTRL_TXEN | CMSDK_UART_CTRL_RXEN;
    static const int32_t one[1] = {0};
    const uint32_t ram = naive_bert(one, 1, logits);                  /* activation bytes */
    out("READY float32 max_seq=");
    out_i64(FM_MAX_SEQ);
    out(" labels=");
    out_i64(FM_LABELS);
    out(" ram=");
    out_i64(ram);
    out(" init=0\n");
    for (;;) {
        const uint32_t len = read_line();
        if (len >= 3 && line[0] == 'C') {
            icount_shift = (uint32_t)(line[2] - '0') * (len > 3 ? 10u : 1u) + (len > 3 ? (uint32_t)(line[3] - '0') : 0u);
            out("OK\n");
        } else if (len >= 1 && line[0] == 'I') {
            uint32_t n = 0;
            for (const char *p = line + 1; *p;) {
                while (*p == ' ') {
                    p++;
                }
                if (!*p) {
                    break;
                }
                int32_t v = 0;
                while (*p >= '0' && *p <= '9') {
                    v = v * 10 + (*p++ - '0');
                }
                if (n < FM_MAX_SEQ) {
                    ids[n++] = v;
                }
            }
            uint32_t *sp, top;
            __asm volatile("mov %0, sp" : "=r"(sp));
            top = (uint32_t)(uintptr_t)sp;
            for (uint32_t *p = &_sstack; p < sp - 16; p++) {
                *p = STACK_PAINT;
            }
            const uint32_t t0 = platform_cycles();
            naive_bert(ids, n, logits);
            const uint32_t t1 = platform_cycles();
            const uint32_t *p = &_sstack;
            while (*p == STACK_PAINT) {
                p++;
            }
            out("L");
            for (int c = 0; c < FM_LABELS; c++) {
                out(" ");
                const float x = logits[c] * 1000.f;
                out_i64((int64_t)(x < 0 ? x - 0.5f : x + 0.5f));
            }
            out("\nS ");
            out_i64((int64_t)to_instructions(t1 - t0));
            out(" ");
            out_i64((int64_t)(top - (uint32_t)(uintptr_t)p));
            out("\nEND 0\n");
        } else if (len > 0) {
            out("ERR unknown command\n");
        }
    }
}
