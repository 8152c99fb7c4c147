/*
 * Fuzz target `registry`: the registry matcher (bertl14_registry_match) on raw bytes, as the firmware runs it on
 * every line the UART receives. Three registry tables (gen_fuzz_data.py: app/entities.yaml and the natural-home
 * registries, English and Chinese) with the vocabulary sections they were compiled for. The text is copied into a
 * heap buffer of exactly its length + NUL, the output into one of exactly out_size bytes, so a read or write past
 * either is a sanitizer report. Any broken invariant calls abort().
 *
 * Input: byte 0 mode (bits 0-1: which registry; bits 2-7: max_slots), byte 1 out_size (0: room for any answer),
 * then the text (an embedded NUL ends it, as for any C string). Mode bits 0-1 = 3: the table is edited first by
 * the first 8 * byte 2 bytes of the text (word index uint16, value uint32, operation uint16: set, xor, add) and
 * its checksum recomputed; it is matched only if bertl14_registry_validate accepts it (as the firmware does at
 * start-up). The edits never change the table's word count (the matcher's API has no size: the table's own
 * count is trusted, as the build generates it).
 */
#include <stddef.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "bertl14_registry.h"
#include "fuzz_check.h"

extern const uint32_t *const fuzz_registries[3];
extern const uint32_t *const fuzz_registry_vocabs[3];
extern const uint32_t fuzz_registry0_size, fuzz_registry1_size, fuzz_registry2_size;

unsigned long long fuzz_deep_runs;           /* texts matched (the replay driver prints it) */
const char *const fuzz_deep_name = "texts matched";

#define MAX_TEXT 4096u
#define R_TOTAL_WORDS 3u
#define R_CHECKSUM 12u

/* a copy of registry 0 edited by the input; NULL when there is nothing to edit with */
static uint32_t *edited_registry(const uint8_t **data, size_t *size)
{
    const uint32_t words = fuzz_registry0_size / 4u;
    uint32_t *r;
    if (*size < 1u) {
        return NULL;
    }
    size_t n = (*data)[0];
    if (*size < 1u + 8u * n) {
        n = (*size - 1u) / 8u;
    }
    r = malloc(fuzz_registry0_size);
    CHECK(r != NULL);
    memcpy(r, fuzz_registries[0], fuzz_registry0_size);
    for (size_t i = 0; i < n; i++) {
        const uint8_t *e = *data + 1u + 8u * i;
        const uint32_t k = (e[0] | (uint32_t)e[1] << 8) % words, op = e[6] % 3u;
        const uint32_t value = e[2] | (uint32_t)e[3] << 8 | (uint32_t)e[4] << 16 | (uint32_t)e[5] << 24;
        if (k == R_TOTAL_WORDS) {
            continue;
        }
        r[k] = op == 0 ? value : (op == 1 ? r[k] ^ value : r[k] + value);
    }
    uint32_t sum = 0;
    r[R_CHECKSUM] = 0;
    for (uint32_t i = 0; i < words; i++) {
        sum += r[i];
    }
    r[R_CHECKSUM] = sum;
    *data += 1u + 8u * n;
    *size -= 1u + 8u * n;
    return r;
}

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size)
{
    bertl14_slot_t slots[64];
    uint32_t count = 12345;
    if (size < 2) {
        return 0;
    }
    const uint8_t mode = data[0], out_sel = data[1];
    const uint32_t which = mode & 3u, max_slots = mode >> 2;
    data += 2;
    size -= 2;
    uint32_t *edited = which == 3u ? edited_registry(&data, &size) : NULL;
    const uint32_t *reg = which == 3u ? edited : fuzz_registries[which];
    const uint32_t *vocab = fuzz_registry_vocabs[which == 3u ? 0u : which];
    if (!reg) {
        return 0;
    }
    if (edited && bertl14_registry_validate(edited) != BERTL14_OK) {
        free(edited);
        return 0;
    }

    size_t n = size < MAX_TEXT ? size : MAX_TEXT;
    const void *nul = memchr(data, 0, n);
    if (nul) {
        n = (size_t)((const uint8_t *)nul - data);
    }
    char *text = malloc(n + 1u);
    CHECK(text != NULL);
    memcpy(text, data, n);
    text[n] = '\0';
    const uint32_t out_size = out_sel ? out_sel : (uint32_t)(8u * n + 8u); /* a placeholder <= 7 bytes a name */
    char *out = malloc(out_size);
    CHECK(out != NULL);

    const bertl14_status_t st = bertl14_registry_match(reg, vocab, text, out, out_size, slots, max_slots, &count);
    const int valid = valid_utf8((const uint8_t *)text);
    if (st == BERTL14_OK) {
        CHECK(valid && count <= max_slots);
        /* out = the text with each slot's span replaced by its placeholder */
        uint32_t pos = 0, o = 0;
        for (uint32_t i = 0; i < count; i++) {
            const bertl14_slot_t *s = &slots[i];
            const char *ph = bertl14_registry_placeholder(s->kind);
            uint32_t len = 0;
            CHECK(s->kind >= BERTL14_SLOT_NAME && s->kind <= BERTL14_SLOT_FLOOR);
            CHECK(s->index < bertl14_registry_count(reg, s->kind));
            CHECK(s->start >= pos && s->start < s->end && s->end <= n);
            CHECK(bertl14_registry_name(reg, s->kind, s->index, &len) != NULL);
            (void)bertl14_registry_parent(reg, s->kind, s->index);
            (void)bertl14_registry_domain(reg, s->index);
            CHECK(memcmp(out + o, text + pos, s->start - pos) == 0);
            o += s->start - pos;
            CHECK(strncmp(out + o, ph, strlen(ph)) == 0);
            o += (uint32_t)strlen(ph);
            pos = s->end;
        }
        CHECK(strcmp(out + o, text + pos) == 0 && o + strlen(text + pos) < out_size);
        fuzz_deep_runs++;
    } else if (st == BERTL14_ERR_INVALID_UTF8) {
        CHECK(!valid && count == 0 && out[0] == '\0');
    } else if (st == BERTL14_ERR_INVALID_CONFIG) {
        CHECK(edited != NULL && count == 0);  /* an edited table compiled for other tokenizer options */
    } else {
        CHECK(st == BERTL14_ERR_BUFFER_TOO_SMALL && count == 0 && out_sel != 0 && out[0] == '\0');
    }
    if (!edited && out_sel == 0) {
        CHECK(st == (valid ? BERTL14_OK : BERTL14_ERR_INVALID_UTF8));
    }
    free(out);
    free(text);
    free(edited);
    return 0;
}
