/*
 * What the host-driven images on the QEMU MPS2 boards share (tests/target, the test and benchmark image, and
 * bench/float32_naive, its float32 baseline): commands read from UART0 by polling, one per line; timer ticks
 * converted to instructions for the QEMU -icount shift the host announces (`C <shift>`); the stack
 * high-water mark of one call.
 */
#ifndef TARGET_LINK_H
#define TARGET_LINK_H

#include <stdint.h>

/* UART0 transmit and receive on, no RX interrupt (input is polled by target_read_line). */
void target_link_init(void);

/* One command line from UART0 (waits for '\n'; '\r' dropped; at most size - 1 bytes kept, the rest of a longer
 * line discarded) into line, NUL-terminated. Returns its length. */
uint32_t target_read_line(char *line, uint32_t size);

/* `C <shift>`: digits is the shift's decimal text (one or two digits), the QEMU -icount shift S in use. */
void target_set_icount_shift(const char *digits);

/* The QEMU -icount shift in use (target_set_icount_shift). */
extern uint32_t target_icount_shift;

/* Instructions of an interval of CMSDK TIMER0 ticks (25 MHz, 40 ns): under -icount shift=S an instruction is
 * 2^S ns, so T ticks are T * 40 / 2^S instructions, rounded (exact for S >= 7; a multiple of 40 for S = 0).
 * Inline: the profile hook calls it on every stage change, and its cost is part of what is measured. */
static inline uint64_t target_instructions(uint32_t ticks)
{
    const uint64_t t40 = (uint64_t)ticks * 40u;
    return target_icount_shift ? (t40 + (1u << (target_icount_shift - 1u))) >> target_icount_shift : t40;
}

/* The stack pointer of the caller. */
static inline __attribute__((always_inline)) uint32_t target_stack_pointer(void)
{
    uint32_t sp;
    __asm volatile("mov %0, sp" : "=r"(sp));
    return sp;
}

/* Stack high-water mark: target_stack_paint() paints the stack below the current frame (down to the linker's
 * _sstack), the call runs, then target_stack_used(top) counts the bytes from top (the caller's
 * target_stack_pointer() before painting) down to the deepest word the call overwrote. Inline, as the code
 * around the timed call is part of the counts. */
#define TARGET_STACK_PAINT 0xC0FFEE11u
extern uint32_t _sstack;

static inline void target_stack_paint(void)
{
    uint32_t *p = &_sstack;
    uint32_t *const sp = (uint32_t *)(uintptr_t)target_stack_pointer();
    while (p < sp - 16) {
        *p++ = TARGET_STACK_PAINT;
    }
}

static inline uint32_t target_stack_used(uint32_t top)
{
    const uint32_t *p = &_sstack;
    while (*p == TARGET_STACK_PAINT) {
        p++;
    }
    return top - (uint32_t)(uintptr_t)p;
}

#endif
