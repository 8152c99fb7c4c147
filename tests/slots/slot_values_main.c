/* Replays queries against bertl14_slot_values() for tests/slots (built with ASan + UBSan there).
 *
 *   slot_values_main TABLE QUERIES
 *
 * TABLE: the value table's words, little-endian. QUERIES: records of
 *   u8 op (0 values, 1 parse_number, 2 type), u16 slot length, slot bytes, u32 span length, span bytes, u32 max_out
 * (little-endian). Each span is copied into a heap block of exactly its length, so a read past it is an ASan error.
 * One output line per query: "status n slot|kind|tenths|hex-text ..." (op 0), "found tenths" (1), "type" (2);
 * a value pointing outside the table and the span prints BADPTR.
 */
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "bertl14_slots.h"

static unsigned char *read_file(const char *path, size_t *len)
{
    FILE *f = fopen(path, "rb");
    unsigned char *buf;
    long n;
    if (f == NULL || fseek(f, 0, SEEK_END) != 0 || (n = ftell(f)) < 0 || fseek(f, 0, SEEK_SET) != 0) {
        return NULL;
    }
    buf = malloc((size_t)n + 1u);
    if (buf == NULL || fread(buf, 1u, (size_t)n, f) != (size_t)n) {
        return NULL;
    }
    fclose(f);
    *len = (size_t)n;
    return buf;
}

static uint32_t get(const unsigned char *p, unsigned bytes)
{
    uint32_t v = 0u;
    unsigned k;
    for (k = 0u; k < bytes; k++) {
        v |= (uint32_t)p[k] << (8u * k);
    }
    return v;
}

static int inside(const void *p, uint32_t n, const void *base, size_t size)
{
    const char *c = p, *b = base;
    return c >= b && c + n <= b + size;
}

int main(int argc, char **argv)
{
    size_t table_len, q_len, pos = 0u, k;
    unsigned char *raw, *q;
    uint32_t *table;
    if (argc != 3 || (raw = read_file(argv[1], &table_len)) == NULL || (q = read_file(argv[2], &q_len)) == NULL) {
        fprintf(stderr, "usage: slot_values_main TABLE QUERIES\n");
        return 2;
    }
    table = malloc(table_len + 4u);
    for (k = 0u; k < table_len / 4u; k++) {
        table[k] = get(raw + 4u * k, 4u);
    }
    while (pos + 11u <= q_len) {
        unsigned op = q[pos];
        uint32_t slot_len = get(q + pos + 1u, 2u), span_len, max_out, n = 0u, i;
        char *slot = malloc(slot_len + 1u), *span;
        bertl14_slot_value_t out[4];
        memcpy(slot, q + pos + 3u, slot_len);
        slot[slot_len] = '\0';
        pos += 3u + slot_len;
        span_len = get(q + pos, 4u);
        span = malloc(span_len ? span_len : 1u);
        memcpy(span, q + pos + 4u, span_len);
        pos += 4u + span_len;
        max_out = get(q + pos, 4u);
        max_out = max_out > 4u ? 4u : max_out; /* room in out[] */
        pos += 4u;
        if (op == 1u) {
            int32_t v = 0;
            int found = bertl14_slot_parse_number(span, span_len, &v);
            printf("%d %d\n", found, found ? (int)v : 0);
        } else if (op == 2u) {
            printf("%u\n", (unsigned)bertl14_slot_type(table, slot));
        } else {
            bertl14_status_t st = bertl14_slot_values(table, slot, span, span_len, out, max_out, &n);
            printf("%d %u", (int)st, (unsigned)n);
            for (i = 0u; i < n; i++) {
                uint32_t b;
                if (!inside(out[i].slot, 1u, table, table_len) ||
                    (out[i].text != NULL && !inside(out[i].text, out[i].text_len, table, table_len) &&
                     !inside(out[i].text, out[i].text_len, span, span_len))) {
                    printf(" BADPTR");
                    continue;
                }
                printf(" %s|%u|%d|", out[i].slot, (unsigned)out[i].kind, (int)out[i].value_tenths);
                for (b = 0u; b < out[i].text_len; b++) {
                    printf("%02x", (unsigned char)out[i].text[b]);
                }
            }
            printf("\n");
        }
        free(slot);
        free(span);
    }
    printf("validate %d\n", (int)bertl14_slot_table_validate(table));
    free(table);
    free(raw);
    free(q);
    return 0;
}
