/*
 * float32 baseline image: the same serial protocol subset and counting as tests/target/src/main.c
 * (input, counting and stack measurement: tests/target/src/target_link.h).
 *   boot       READY float32 max_seq=<N> labels=<C> ram=<activation bytes>
 *   C <shift>  the QEMU -icount shift (answer OK)
 *   I <id>...  encode + classify: L <logit * 1000 rounded>...  S <instructions> <stack bytes>  END 0
 */
#include <stdint.h>
#include <string.h>

#include "float_model.h"
#include "naive_bert.h"
#include "platform.h"
#include "ringbuf.h"
#include "target_link.h"

ringbuf_t app_rx_ring;
void app_rx_notify_from_isr(void) {}

static char line[8192];
static int32_t ids[FM_MAX_SEQ];
static float logits[FM_LABELS > 0 ? FM_LABELS : 1];

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

int main(void)
{
    platform_init();
    target_link_init();
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
        const uint32_t len = target_read_line(line, sizeof line);
        if (len >= 3 && line[0] == 'C') {
            target_set_icount_shift(line + 2);
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
            const uint32_t top = target_stack_pointer();
            target_stack_paint();
            const uint32_t t0 = platform_cycles();
            naive_bert(ids, n, logits);
            const uint32_t t1 = platform_cycles();
            const uint32_t stack = target_stack_used(top);
            out("L");
            for (int c = 0; c < FM_LABELS; c++) {
                out(" ");
                const float x = logits[c] * 1000.f;
                out_i64((int64_t)(x < 0 ? x - 0.5f : x + 0.5f));
            }
            out("\nS ");
            out_i64((int64_t)target_instructions(t1 - t0));
            out(" ");
            out_i64((int64_t)stack);
            out("\nEND 0\n");
        } else if (len > 0) {
            out("ERR unknown command\n");
        }
    }
}
