/* What the fuzz targets share: the invariant check and an independent strict UTF-8 test. */
#ifndef FUZZ_CHECK_H
#define FUZZ_CHECK_H

#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>

/* A broken invariant stops the run with its condition and place (libFuzzer keeps the input). */
#define CHECK(cond)                                                                              \
    do {                                                                                         \
        if (!(cond)) {                                                                           \
            fprintf(stderr, "fuzz invariant failed: %s (%s:%d)\n", #cond, __FILE__, __LINE__);   \
            abort();                                                                             \
        }                                                                                        \
    } while (0)

/* Strict UTF-8 of a NUL-terminated string, checked independently of the library (a table of minimum values per
   length instead of per-lead byte ranges). */
static inline int valid_utf8(const uint8_t *s)
{
    static const uint32_t min_cp[5] = {0, 0, 0x80, 0x800, 0x10000};
    while (*s) {
        uint32_t n, cp, i;
        if (*s < 0x80) { s++; continue; }
        if ((*s & 0xE0) == 0xC0) { n = 2; cp = *s & 0x1F; }
        else if ((*s & 0xF0) == 0xE0) { n = 3; cp = *s & 0x0F; }
        else if ((*s & 0xF8) == 0xF0) { n = 4; cp = *s & 0x07; }
        else return 0;
        for (i = 1; i < n; i++) {
            if ((s[i] & 0xC0) != 0x80) return 0;
            cp = (cp << 6) | (s[i] & 0x3F);
        }
        if (cp < min_cp[n] || cp > 0x10FFFF || (cp >= 0xD800 && cp <= 0xDFFF)) return 0;
        s += n;
    }
    return 1;
}

#endif
