/*
 * Plain-C driver for the fuzz targets without libFuzzer (gcc + ASan/UBSan in CI, test_fuzz_short.py):
 *   fuzz_replay SECONDS [SEED] [FILES...]   replays FILES (a corpus, seeds or crash reproducers), then for SECONDS
 *                                           runs inputs made by mutating them (bit flips, bytes set, bytes
 *                                           inserted, erased or copied, cuts) or generated: raw bytes, valid UTF-8
 *                                           of random code points, ASCII words, special-token fragments, long words.
 * Prints the number of executions and of inputs that went all the way through the target (fuzz_deep_runs);
 * any invariant failure or sanitizer report aborts (non-zero exit).
 */
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size);
extern unsigned long long fuzz_deep_runs;   /* defined by each target */
extern const char *const fuzz_deep_name;

#define MAX_SEEDS 512
#define MAX_SEED_BYTES 8192

static uint8_t *g_seed[MAX_SEEDS];
static size_t g_seed_len[MAX_SEEDS], g_seeds;

static uint64_t g_rng = 0x9E3779B97F4A7C15ull;

static uint32_t rnd(void)
{
    g_rng ^= g_rng << 13;
    g_rng ^= g_rng >> 7;
    g_rng ^= g_rng << 17;
    return (uint32_t)(g_rng >> 16);
}

static size_t put_utf8(uint8_t *out, uint32_t cp)
{
    if (cp < 0x80) { out[0] = (uint8_t)cp; return 1; }
    if (cp < 0x800) { out[0] = (uint8_t)(0xC0 | (cp >> 6)); out[1] = (uint8_t)(0x80 | (cp & 0x3F)); return 2; }
    if (cp < 0x10000) {
        out[0] = (uint8_t)(0xE0 | (cp >> 12)); out[1] = (uint8_t)(0x80 | ((cp >> 6) & 0x3F));
        out[2] = (uint8_t)(0x80 | (cp & 0x3F)); return 3;
    }
    out[0] = (uint8_t)(0xF0 | (cp >> 18)); out[1] = (uint8_t)(0x80 | ((cp >> 12) & 0x3F));
    out[2] = (uint8_t)(0x80 | ((cp >> 6) & 0x3F)); out[3] = (uint8_t)(0x80 | (cp & 0x3F)); return 4;
}

static size_t generate(uint8_t *buf, size_t cap)
{
    static const char *const frags[] = {"[CLS]", "[SEP]", "[MASK]", "[PAD]", "[UNK]", "[MAS", "[", "]", "##",
                                        "the", "light", "turn", "on", "打开", "灯", "é", "e\xcc\x81", " ", "\t",
                                        "\xe3\x80\x80", "\xc2\xa0", "\xf0\x9f\x98\x80", "\xe2\x80\x8d", "!"};
    size_t n = 2, len = rnd() % (rnd() % 8 == 0 ? cap - 8 : 200);
    uint32_t style = rnd() % 5;
    buf[0] = (uint8_t)rnd();
    buf[1] = (uint8_t)rnd();
    while (n < len && n + 8 < cap) {
        uint32_t r = rnd();
        if (style == 0) {                     /* raw bytes */
            buf[n++] = (uint8_t)r;
        } else if (style == 1 || (style == 4 && r % 3 == 0)) { /* any code point, sometimes invalid ones */
            uint32_t cp = rnd() % (r % 4 == 0 ? 0x110000u : (r % 4 == 1 ? 0x3000u : 0x80u));
            if (cp == 0) cp = ' ';
            if (cp >= 0xD800 && cp <= 0xDFFF && r % 16) cp = 'x';
            n += put_utf8(buf + n, cp);       /* a surrogate now and then: must be rejected */
        } else if (style == 2) {              /* fragments */
            const char *f = frags[r % (sizeof frags / sizeof frags[0])];
            size_t fl = strlen(f);
            if (n + fl + 8 >= cap) break;
            memcpy(buf + n, f, fl);
            n += fl;
        } else {                              /* one long word */
            buf[n++] = (uint8_t)('a' + r % 3);
        }
    }
    if (rnd() % 16 == 0 && n > 3) {           /* truncate inside a sequence */
        n -= 1 + rnd() % 2;
    }
    return n;
}

static int replay(const char *path)
{
    static uint8_t buf[1 << 16];
    FILE *f = fopen(path, "rb");
    size_t n;
    if (!f) {
        perror(path);
        return 1;
    }
    n = fread(buf, 1, sizeof buf, f);
    fclose(f);
    LLVMFuzzerTestOneInput(buf, n);
    if (g_seeds < MAX_SEEDS && n <= MAX_SEED_BYTES) {   /* kept for mutation */
        g_seed[g_seeds] = malloc(n ? n : 1);
        memcpy(g_seed[g_seeds], buf, n);
        g_seed_len[g_seeds++] = n;
    }
    return 0;
}

/* a seed with 1..8 random mutations */
static size_t mutate(uint8_t *buf, size_t cap)
{
    const size_t k = rnd() % g_seeds;
    size_t n = g_seed_len[k], m, i;
    memcpy(buf, g_seed[k], n);
    for (m = 1 + rnd() % 8; m > 0; m--) {
        const uint32_t r = rnd();
        const size_t at = n ? rnd() % n : 0, len = 1 + rnd() % 16;
        switch (r % 6) {
        case 0: if (n) buf[at] ^= (uint8_t)(1u << (r >> 8) % 8u); break;             /* flip a bit */
        case 1: if (n) buf[at] = (uint8_t)(r >> 8); break;                            /* set a byte */
        case 2: if (n + len < cap) {                                                  /* insert bytes */
                    memmove(buf + at + len, buf + at, n - at);
                    for (i = 0; i < len; i++) buf[at + i] = (uint8_t)rnd();
                    n += len;
                }
                break;
        case 3: if (at + len <= n) { memmove(buf + at, buf + at + len, n - at - len); n -= len; } break; /* erase */
        case 4: if (n > 2 * len && at + len <= n) {                                   /* copy a chunk elsewhere */
                    const size_t to = rnd() % (n - len);
                    memmove(buf + to, buf + at, len);
                }
                break;
        default: if (n > 2) n -= rnd() % (n / 2 + 1); break;                          /* cut the end */
        }
    }
    return n;
}

int main(int argc, char **argv)
{
    static uint8_t buf[MAX_SEED_BYTES + 6000];
    double seconds = argc > 1 ? atof(argv[1]) : 10.0;
    unsigned long long execs = 0;
    clock_t end;
    int i;
    if (argc > 2) {
        g_rng ^= strtoull(argv[2], NULL, 0) * 0x2545F4914F6CDD1Dull;
    }
    for (i = 3; i < argc; i++) {
        if (replay(argv[i])) return 1;
        execs++;
    }
    end = clock() + (clock_t)(seconds * CLOCKS_PER_SEC);
    while (clock() < end) {
        int k;
        for (k = 0; k < 64; k++) {
            size_t n = g_seeds && rnd() % 2 ? mutate(buf, sizeof buf) : generate(buf, 6000);
            LLVMFuzzerTestOneInput(buf, n);
            execs++;
        }
    }
    printf("fuzz_replay: %llu executions, %llu %s, no failure\n", execs, fuzz_deep_runs, fuzz_deep_name);
    return 0;
}
