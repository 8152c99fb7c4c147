/*
 * What the host-driven images on the QEMU boards share (tests/target, the test and benchmark image, and
 * bench/float32_naive, its float32 baseline): commands read from the console UART by polling, one per line; timer
 * ticks converted to instructions for the QEMU -icount shift the host announces (`C <shift>`); the stack
 * high-water mark of one call.
 */
#ifndef TARGET_LINK_H
#define TARGET_LINK_H

#include <stdint.h>

#include "platform_config.h"

/* The console UART without its RX interrupt (input is polled by target_read_line). */
void target_link_init(void);

/* One command line from the console UART (waits for '\n'; '\r' dropped; at most size - 1 bytes kept, the rest of a longer
 * line discarded) into line, NUL-terminated. Returns its length. */
uint32_t target_read_line(char *line, uint32_t size);

/* `C <shift>`: digits is the shift's decimal text (one or two digits), the QEMU -icount shift S in use. */
void target_set_icount_shift(const char *digits);

/* The QEMU -icount shift in use (target_set_icount_shift). */
extern uint32_t target_icount_shift;

/* Instructions of an interval of platform_cycles() ticks of PLATFORM_ICOUNT_NS_PER_TICK ns (the MPS2 boards' CMSDK
 * TIMER0 at 25 MHz: 40 ns; 50 at 20 MHz; qemu_riscv32's instret: 1): under -icount shift=S an instruction is 2^S ns,
 * so T ticks are T * NS / 2^S instructions, rounded (with 40 ns ticks exact for S >= 7, a multiple of 40 for S = 0;
 * with 1 ns ticks exact for every S). Inline: the profile hook calls it on every stage change, and its cost is part
 * of what is measured. */
static inline uint64_t target_instructions(uint32_t ticks)
{
    const uint64_t t = (uint64_t)ticks * PLATFORM_ICOUNT_NS_PER_TICK;
    return target_icount_shift ? (t + (1u << (target_icount_shift - 1u))) >> target_icount_shift : t;
}

/* The stack pointer of the caller. */
static inline __attribute__((always_inline)) uint32_t target_stack_pointer(void)
{
    uint32_t sp;
#if defined(__riscv)
    __asm volatile("mv %0, sp" : "=r"(sp));
#else
    __asm volatile("mov %0, sp" : "=r"(sp));
#endif
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
