/*
 * bertl14 test and benchmark image (the QEMU boards). Reads commands from the console UART (polled, one per
 * line) and answers with machine-readable lines that scripts/bertl14_tools/device/qemu_target.py parses:
 *
 *   boot                 READY dsp=<0|1> profile=<0|1> max_seq=<N> hidden=<H> labels=<C> work=<bytes> unit=<timer>
 *                              tick_ns=<ns of a timer tick>
 *   T <hex UTF-8 text>   tokenize + encode + classify (+ tag) the sentence
 *   I <id> <id> ...      encode + classify (+ tag) these token ids (no tokenizer)
 *     answer:            IDS <status> <n> <id>...          (T only)
 *                        O <start> <end> ...               (T only: byte offsets of each token, untimed)
 *                        H <row scale> <hex of the H int8 bytes>   (one line per token)
 *                        F <frac bits of the output rows>
 *                        L <label> <score_q16> <logit>...  (printed after the tagger ran: its logits intact)
 *                        G <tag> <tag logit>...            (models with a token classifier: one line per token)
 *                        P <instructions of each bertl14_stage_t> / <entries of each stage>   (profile builds)
 *                        S <instructions of the whole call> <stack bytes used>
 *                        END <status>
 *   C <shift>            the QEMU -icount shift S in use (answer: OK); counts below are in instructions
 *   M                    MARK <instructions of 4096 profile marks> (the per-mark overhead to subtract)
 *   K                    kernel micro-benchmarks: KERNEL <name> <reps> <instructions> <macs or elements per rep>
 *
 * Counts come from platform_cycles(), a timer of NS = PLATFORM_ICOUNT_NS_PER_TICK ns a tick (the MPS2 boards' CMSDK
 * TIMER0 at 25 MHz: 40 ns; qemu_riscv32's instret: 1 ns): under QEMU -icount shift=S an instruction advances
 * virtual time by 2^S ns, so an interval of T ticks is T * NS / 2^S instructions. Every timed interval is
 * converted on its own with rounding: when a tick is under half an instruction (NS / 2^S < 0.5: S >= 7 at 40 ns,
 * every S at 1 ns) the error of a tick difference rounds away and each count is exact; at 40 ns and S = 0 each
 * interval is a multiple of 40 (+-40). Timing never includes the UART.
 */
#include <stdint.h>
#include <string.h>

#include "bertl14.h"
#include "bertl14_config.h"
#include "bertl14_kernels.h"
#include "bertl14_profile.h"
#include "platform.h"
#include "ringbuf.h"
#include "target_link.h"

extern const int16_t bertl14_weights[];
extern const uint32_t bertl14_vocab_offsets[];

static uint8_t work[BERTL14_WORK_BUFFER_SIZE] __attribute__((section(".dtcmram"), aligned(8)));
static char line[8192];
static int32_t ids[BERTL14_MAX_SEQ_LEN];

#ifndef BERTL14_NUM_TAGS                /* a model folder converted before the token classifier existed */
#define BERTL14_NUM_TAGS 0
#endif
static uint8_t tags[BERTL14_MAX_SEQ_LEN];
static int32_t ids2[BERTL14_MAX_SEQ_LEN];
static uint16_t offsets[2 * BERTL14_MAX_SEQ_LEN];

ringbuf_t app_rx_ring;                 /* platform.c's RX interrupt (disabled here: polled input) */
void app_rx_notify_from_isr(void) {}

/* ---- output ------------------------------------------------------------------------------- */
static char obuf[512];
static uint32_t olen;

static void flush(void)
{
    platform_console_write(obuf, olen);
    olen = 0;
}

static void putch(char c)
{
    if (olen == sizeof obuf) {
        flush();
    }
    obuf[olen++] = c;
}

static void puts_(const char *s)
{
    while (*s) {
        putch(*s++);
    }
}

static void put_u32(uint32_t v)
{
    char b[11];
    int i = 0;
    do {
        b[i++] = (char)('0' + v % 10u);
        v /= 10u;
    } while (v);
    while (i) {
        putch(b[--i]);
    }
}

static void put_u64(uint64_t v)
{
    char b[21];
    int i = 0;
    do {
        b[i++] = (char)('0' + (uint32_t)(v % 10u));
        v /= 10u;
    } while (v);
    while (i) {
        putch(b[--i]);
    }
}

static void put_i32(int32_t v)
{
    if (v < 0) {
        putch('-');
        put_u32(0u - (uint32_t)v);
    } else {
        put_u32((uint32_t)v);
    }
}

static void put_hex8(uint8_t v)
{
    static const char hx[] = "0123456789abcdef";
    putch(hx[v >> 4]);
    putch(hx[v & 15u]);
}

/* platform_fatal() reports through the console */
void console_puts(const char *s)
{
    flush();
    platform_console_write(s, strlen(s));
}

/* ---- input (polled UART0 lines: target_read_line in target_link.c) ------------------------- */
static int hexval(char c)
{
    return c >= '0' && c <= '9' ? c - '0' : (c >= 'a' && c <= 'f' ? c - 'a' + 10 : -1);
}

/* ---- profiling (counts: target_instructions in target_link.h) ----------------------------- */
static uint64_t prof_count[BERTL14_STAGE_COUNT];
static uint32_t prof_entries[BERTL14_STAGE_COUNT];
static uint32_t prof_last;
static bertl14_stage_t prof_cur;
static int prof_stopped;               /* after the timed interval: the output (tag logits, UART) is not counted */

void bertl14_profile_stage(bertl14_stage_t stage)
{
    if (prof_stopped) {
        return;
    }
    const uint32_t now = platform_cycles();
    prof_count[prof_cur] += target_instructions(now - prof_last);
    prof_entries[stage]++;
    prof_cur = stage;
    prof_last = now;
}

static void prof_reset(void)
{
    memset(prof_count, 0, sizeof prof_count);
    memset(prof_entries, 0, sizeof prof_entries);
    prof_cur = BERTL14_STAGE_OTHER;
    prof_stopped = 0;
    prof_last = platform_cycles();
}

/* ---- one inference ------------------------------------------------------------------------ */
static void run(int have_text, uint32_t n)
{
    bertl14_status_t st = BERTL14_OK;
    const uint32_t sp_top = target_stack_pointer();
    target_stack_paint();
    prof_reset();
    const uint32_t t0 = platform_cycles();
    if (have_text) {
        BERTL14_STAGE(TOKENIZE);
        st = bertl14_tokenize(line + 2, ids, &n, BERTL14_MAX_SEQ_LEN);
        BERTL14_STAGE(OTHER);
    }
    bertl14_tensor_t out;
    bertl14_classification_t cls = {0};
    bertl14_status_t est = (st == BERTL14_OK || st == BERTL14_ERR_TOKEN_OVERFLOW) ? bertl14_encode(ids, n, &out) : st;
    if (est == BERTL14_OK && BERTL14_NUM_LABELS > 0) {
        est = bertl14_classify(&cls);
    }
    uint32_t ntags = 0;
    if (est == BERTL14_OK && BERTL14_NUM_TAGS > 0) {
        est = bertl14_tag(tags, BERTL14_MAX_SEQ_LEN, &ntags);
    }
    const uint32_t t1 = platform_cycles();
    BERTL14_STAGE(OTHER);
#if defined(BERTL14_PROFILE)
    prof_stopped = 1;                  /* the stages add up to the timed interval */
#endif
    const uint32_t stack = target_stack_used(sp_top);
    if (have_text) {
        puts_("IDS ");
        put_i32(st);
        putch(' ');
        put_u32(n);
        for (uint32_t i = 0; i < n; i++) {
            putch(' ');
            put_i32(ids[i]);
        }
        puts_("\n");
        uint32_t n2 = 0;
        bertl14_tokenize_offsets(line + 2, ids2, offsets, &n2, BERTL14_MAX_SEQ_LEN);
        puts_("O");
        for (uint32_t i = 0; i < 2u * n2; i++) {
            putch(' ');
            put_u32(offsets[i]);
        }
        puts_("\n");
    }
    if (est == BERTL14_OK) {
        bertl14_tensor_t hs;
        bertl14_get_last_hidden_state(&hs);
        const uint32_t H = hs.dims[2];
        int32_t frac = 0;
        for (uint32_t t = 0; t < hs.dims[1]; t++) {
            uint32_t scale = 0;
            bertl14_ctx_output_scale(bertl14_default_ctx(), t, &scale, &frac);
            puts_("H ");
            put_u32(scale);
            putch(' ');
            const uint8_t *row = (const uint8_t *)hs.data_ptr + t * H;
            for (uint32_t c = 0; c < H; c++) {
                put_hex8(row[c]);
            }
            putch('\n');
        }
        puts_("F ");
        put_i32(frac);
        putch('\n');
        if (BERTL14_NUM_LABELS > 0) {
            puts_("L ");
            put_u32(cls.label);
            putch(' ');
            put_u32(cls.score_q16);
            for (uint32_t c = 0; c < cls.num_labels; c++) {
                putch(' ');
                put_i32(cls.logits[c]);
            }
            putch('\n');
        }
        for (uint32_t t = 0; t < ntags; t++) {
            const int32_t *logits = NULL;
            bertl14_ctx_tag_logits(bertl14_default_ctx(), t, &logits);
            puts_("G ");
            put_u32(tags[t]);
            for (uint32_t c = 0; c < BERTL14_NUM_TAGS; c++) {
                putch(' ');
                put_i32(logits[c]);
            }
            putch('\n');
        }
    }
#if defined(BERTL14_PROFILE)
    puts_("P");
    for (int s = 0; s < BERTL14_STAGE_COUNT; s++) {
        putch(' ');
        put_u64(prof_count[s]);
    }
    puts_(" /");
    for (int s = 0; s < BERTL14_STAGE_COUNT; s++) {
        putch(' ');
        put_u32(prof_entries[s]);
    }
    putch('\n');
#endif
    puts_("S ");
    put_u64(target_instructions(t1 - t0));
    putch(' ');
    put_u32(stack);
    puts_("\nEND ");
    put_i32(est);
    putch('\n');
    flush();
}

static void cmd_ids(void)
{
    uint32_t n = 0;
    const char *p = line + 1;
    while (*p) {
        while (*p == ' ') {
            p++;
        }
        if (!*p) {
            break;
        }
        int32_t v = 0;
        int neg = *p == '-';
        p += neg;
        while (*p >= '0' && *p <= '9') {
            v = v * 10 + (*p++ - '0');
        }
        if (n < BERTL14_MAX_SEQ_LEN) {
            ids[n] = neg ? -v : v;
        }
        n++;
    }
    run(0, n > BERTL14_MAX_SEQ_LEN ? BERTL14_MAX_SEQ_LEN + 1u : n);
}

static void cmd_text(uint32_t len)
{
    /* decode the hex in place: line + 2 becomes the NUL-terminated UTF-8 text */
    uint32_t j = 2;
    for (uint32_t i = 2; i + 1 < len; i += 2) {
        int hi = hexval(line[i]), lo = hexval(line[i + 1]);
        if (hi < 0 || lo < 0) {
            break;
        }
        line[j++] = (char)(hi * 16 + lo);
    }
    line[j] = '\0';
    run(1, 0);
}

static void cmd_mark(void)
{
    prof_reset();
    const uint32_t t0 = platform_cycles();
    for (int i = 0; i < 4096; i++) {
        bertl14_profile_stage(BERTL14_STAGE_OTHER);
    }
    const uint32_t t1 = platform_cycles();
    puts_("MARK ");
    put_u64(target_instructions(t1 - t0));
    putch('\n');
    flush();
}

/* ---- kernel micro-benchmarks (CMSIS-NN style: one kernel, fixed shapes, many repetitions) ---- */
static void kernel_line(const char *name, uint32_t reps, uint64_t count, uint32_t work_per_rep)
{
    puts_("KERNEL ");
    puts_(name);
    putch(' ');
    put_u32(reps);
    putch(' ');
    put_u64(count);
    putch(' ');
    put_u32(work_per_rep);
    putch('\n');
    flush();
}

static uint8_t bench_buf[160 * 1024] __attribute__((aligned(8)));

/* The library's linear kernel and weight type (CONFIG_BERTL14_WEIGHTS_INT8 / _INT16), with a shift of the range
 * the converter gives that type (INT16 weights: 35..40 here; INT8: 8 less). */
#if defined(BERTL14_WEIGHTS_INT8)
typedef int8_t bench_weight_t;
#define BENCH_LINEAR bertl14_linear_s8_w8
#define BENCH_W(i) ((int8_t)((int32_t)((i) * 101u % 255u) - 127))
#define BENCH_SHIFT 30
#else
typedef int16_t bench_weight_t;
#define BENCH_LINEAR bertl14_linear_s8_w16
#define BENCH_W(i) ((int16_t)((int32_t)((i) * 101u % 4001u) - 2000))
#define BENCH_SHIFT 38
#endif

static void bench_linear(const char *name, uint32_t tokens, uint32_t in, uint32_t out, uint32_t reps)
{
    uint8_t *const work = bench_buf;
    /* inputs and weights from the work buffer (any values: the instruction count does not depend on them) */
    int16_t *x = (int16_t *)(void *)work;
    bench_weight_t *w = (bench_weight_t *)(void *)(x + tokens * in);
    int32_t *y = (int32_t *)(void *)(w + in * out);
    int16_t *mult = (int16_t *)(void *)(y + tokens * out);
    int16_t *shift = mult + out;
    int32_t *bias = (int32_t *)(void *)(shift + out + (out & 1u));
    uint32_t *xs = (uint32_t *)(void *)(bias + out);
    if ((uint8_t *)(xs + tokens) > work + sizeof bench_buf) {
        return;
    }
    for (uint32_t i = 0; i < tokens * in; i++) {
        x[i] = (int16_t)((int32_t)(i * 37u % 255u) - 127);
    }
    for (uint32_t i = 0; i < in * out; i++) {
        w[i] = BENCH_W(i);
    }
    for (uint32_t o = 0; o < out; o++) {
        mult[o] = 20000;
        shift[o] = BENCH_SHIFT;
        bias[o] = 0;
    }
    for (uint32_t t = 0; t < tokens; t++) {
        xs[t] = 300;
    }
    const bertl14_requant_t rq = {mult, shift, bias};
    const uint32_t t0 = platform_cycles();
    for (uint32_t r = 0; r < reps; r++) {
        for (uint32_t t = 0; t < tokens; t += 4) {      /* blocks of 4 tokens, as the encoder calls it */
            const uint32_t nb = tokens - t < 4u ? tokens - t : 4u;
            const bertl14_linear_dims dims = {nb, in, out, out};
            BENCH_LINEAR(&dims, &rq, x + t * in, xs + t, w, NULL, y + t * out);
        }
    }
    kernel_line(name, reps, target_instructions(platform_cycles() - t0), tokens * in * out);
}

static void bench_softmax(const char *name, uint32_t n, uint32_t reps)
{
    int32_t *s = (int32_t *)(void *)bench_buf, *src = s + n;
    uint8_t *p = (uint8_t *)(src + n);
    int32_t max = INT32_MIN;
    for (uint32_t i = 0; i < n; i++) {
        src[i] = (int32_t)(i * 7919u % 8192u) - 4096;   /* Q10 scores spread over +-4 */
        max = src[i] > max ? src[i] : max;              /* the scores kernel's, outside the count */
    }
    uint64_t count = 0;
    for (uint32_t r = 0; r < reps; r++) {
        memcpy(s, src, n * 4u);                         /* the kernel uses its input as scratch */
        const uint32_t t0 = platform_cycles();
        bertl14_softmax_s32(s, n, max, p);
        count += target_instructions(platform_cycles() - t0);
    }
    kernel_line(name, reps, count, n);
}

static void cmd_kernels(void)
{
    bench_linear("linear_32x64x64", 32, 64, 64, 16);
    bench_linear("linear_32x64x256", 32, 64, 256, 4);
    bench_linear("linear_32x256x64", 32, 256, 64, 4);
    bench_linear("linear_32x128x128", 32, 128, 128, 4);
    bench_linear("linear_32x512x128", 32, 512, 128, 1);
    bench_softmax("softmax_32", 32, 64);
    bench_softmax("softmax_128", 128, 16);
    /* timer-read overhead of the softmax loop, subtracted by the host */
    uint64_t count = 0;
    for (uint32_t r = 0; r < 64; r++) {
        const uint32_t t0 = platform_cycles();
        count += target_instructions(platform_cycles() - t0);
    }
    kernel_line("timer_read", 64, count, 1);
    puts_("KEND\n");
    flush();
}

int main(void)
{
    platform_init();
    target_link_init();                /* polled input, no RX interrupt */
    bertl14_config_t c = {
        .max_seq_len = BERTL14_MAX_SEQ_LEN, .vocab_size = BERTL14_VOCAB_SIZE,
        .work_buffer_ptr = (int8_t *)work, .work_buffer_size = sizeof work,
        .weights_ptr = bertl14_weights, .vocab_offsets = bertl14_vocab_offsets,
        .weights_size = BERTL14_WEIGHTS_SIZE, .vocab_offsets_size = BERTL14_VOCAB_SECTION_SIZE,
    };
    bertl14_status_t st = bertl14_init(&c);
#if defined(BERTL14_USE_DSP)
    puts_("READY dsp=1");
#else
    puts_("READY dsp=0");
#endif
#if defined(BERTL14_PROFILE)
    puts_(" profile=1");
#else
    puts_(" profile=0");
#endif
    puts_(" max_seq=");
    put_u32(BERTL14_MAX_SEQ_LEN);
    puts_(" hidden=");
    put_u32(BERTL14_HIDDEN_SIZE);
    puts_(" labels=");
    put_u32(BERTL14_NUM_LABELS);
    puts_(" work=");
    put_u32((uint32_t)sizeof work);
    puts_(" init=");
    put_i32(st);
    puts_(" unit=");
    puts_(platform_cycles_unit);
    puts_(" tick_ns=");
    put_u32(PLATFORM_ICOUNT_NS_PER_TICK);
    putch('\n');
    flush();
    for (;;) {
        uint32_t len = target_read_line(line, sizeof line);
        if (len >= 2 && line[0] == 'T' && line[1] == ' ') {
            cmd_text(len);
        } else if (len >= 1 && line[0] == 'I') {
            cmd_ids();
        } else if (len >= 3 && line[0] == 'C' && line[1] == ' ') {
            target_set_icount_shift(line + 2);
            puts_("OK\n");
            flush();
        } else if (len == 1 && line[0] == 'M') {
            cmd_mark();
        } else if (len == 1 && line[0] == 'K') {
            cmd_kernels();
        } else if (len > 0) {
            puts_("ERR unknown command\n");
            flush();
        }
    }
}
