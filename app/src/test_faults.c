/*
 * Faults on purpose, for the test image only (CONFIG_APP_TEST_FAULTS): the command `:crash <kind>` of protocol.c
 * ends here, so tests/app/test_faults.py can check the fault report (docs/serial-protocol.md "Faults") on the
 * console of the QEMU boards. Never in a product build.
 */
#include "test_faults.h"

#include <stdint.h>
#include <string.h>

#include "platform.h"

#if defined(CONFIG_APP_RTOS_FREERTOS)
#include "FreeRTOS.h"
#include "task.h"
#endif

#define UNMAPPED_ADDRESS 0xF0000000u

/* Endless recursion: the main stack (bare metal) runs off the start of its region; the inference task's stack
 * (FreeRTOS) overflows and the kernel's check finds it at the next task switch. */
static uint32_t __attribute__((noinline)) recurse(volatile uint32_t *depth)
{
    volatile uint8_t frame[64];
    frame[0] = (uint8_t)*depth;
    if (++*depth == 0u) { /* never: 2^32 frames do not fit anywhere */
        return 0u;
    }
#if defined(CONFIG_APP_RTOS_FREERTOS)
    taskYIELD();
#endif
    return recurse(depth) + frame[0]; /* not a tail call */
}

bool test_fault(const char *kind)
{
    if (strcmp(kind, "bus") == 0) { /* a load from nowhere: the vendor system region, unmapped on these boards */
        (void)*(volatile uint32_t *)UNMAPPED_ADDRESS;
    } else if (strcmp(kind, "usage") == 0) { /* an undefined instruction */
#if defined(__riscv)
        __asm volatile("unimp");
#else
        __asm volatile("udf #0");
#endif
    } else if (strcmp(kind, "stack") == 0) {
        volatile uint32_t depth = 0;
        recurse(&depth);
    } else if (strcmp(kind, "assert") == 0) {
#if defined(CONFIG_APP_RTOS_FREERTOS)
        configASSERT(kind == NULL);
#else
        platform_fatal("assert test_faults.c", __LINE__);
#endif
#if defined(CONFIG_APP_RTOS_FREERTOS)
    } else if (strcmp(kind, "heap") == 0) { /* more than the heap holds: the malloc-failed hook */
        (void)pvPortMalloc(2u * CONFIG_APP_FREERTOS_HEAP_SIZE);
#endif
    } else if (strcmp(kind, "hang") == 0) { /* interrupts on, never back: only the watchdog ends it */
        for (;;) {
        }
    } else {
        return false;
    }
    return true; /* only when a fault did not stop the board */
}
