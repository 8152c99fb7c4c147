/*
 * Faults you can see on the RISC-V boards (qemu_riscv32), as platform/cortex_m/fault.c does on the Cortex-M ones.
 *
 * An exception (illegal instruction, access fault, misaligned access, ...; trap_handler in platform.c) and
 * platform_fatal() -- which the platform layer and the application call -- end in one report on the console,
 * written polled with interrupts off:
 *
 *   fatal: <what> pc=0x........ ra=0x........ sp=0x........ mcause=0x........ mtval=0x........
 *   fatal: reset
 *
 * then the machine resets (the virt machine's test device). For an exception, pc is mepc (the faulting
 * instruction), ra the interrupted code's return address and sp its stack pointer; mcause says which exception
 * (2 illegal instruction, 5 load access fault, 7 store access fault, ...) and mtval the address or instruction
 * involved. For platform_fatal, pc/ra are the caller's and mcause/mtval 0.
 *
 * The main stack starts its region (cmake/linker/riscv.ld) above a 256-byte guard that fault_init makes
 * inaccessible with a locked PMP entry (locked entries bind machine mode too), so an overflowing main stack faults
 * (store access fault) at its first store past the end instead of overwriting anything. The trap handler runs on a
 * stack of its own (startup.S), so that fault is still reported.
 */
#include <stdint.h>
#include <string.h>

#include "fault.h"
#include "platform.h"
#include "raw_out.h"
#include "virt.h"

/* From the linker script: the main stack's guard [__stack_guard__, _sstack), 256 bytes aligned to 256. */
extern uint32_t __stack_guard__, _sstack;

#define PMP_LOCKED_NAPOT_NO_ACCESS 0x98u /* L, A = NAPOT, no R/W/X */

void fault_init(void)
{
    const uint32_t base = (uint32_t)(uintptr_t)&__stack_guard__;
    const uint32_t bytes = (uint32_t)((uintptr_t)&_sstack - (uintptr_t)&__stack_guard__);
    /* NAPOT: the address's low bits say the size: base / 4 with (bytes / 8 - 1) in its low bits */
    CSR_WRITE(pmpaddr0, (base >> 2) | ((bytes >> 3) - 1u));
    CSR_WRITE(pmpcfg0, PMP_LOCKED_NAPOT_NO_ACCESS);
}

static void __attribute__((noreturn)) report(const char *what, int line, uint32_t pc, uint32_t ra, uint32_t sp,
                                             uint32_t mcause, uint32_t mtval)
{
    CSR_CLEAR(mstatus, MSTATUS_MIE);
    if (platform_console_ready()) { /* before platform_init the UART cannot write */
        raw_puts("\r\nfatal: ");
        raw_puts(what != NULL ? what : "?");
        if (line > 0) {
            raw_puts(":");
            raw_put_dec((uint32_t)line);
        }
        raw_put_field("pc", pc);
        raw_put_field("ra", ra);
        raw_put_field("sp", sp);
        raw_put_field("mcause", mcause);
        raw_put_field("mtval", mtval);
        raw_puts("\r\nfatal: reset\r\n");
    }
    VIRT_TEST = VIRT_TEST_FINISHER_RESET;
    for (;;) {
    }
}

void platform_fatal(const char *what, int line)
{
    const uint32_t sp = (uint32_t)(uintptr_t)__builtin_frame_address(0);
    const uint32_t caller = (uint32_t)(uintptr_t)__builtin_return_address(0);
    report(what, line, caller, caller, sp, 0u, 0u);
}

void fault_exception(uint32_t mcause, uint32_t mepc, uint32_t mtval, uint32_t sp, const uint32_t *frame)
{
    static const char *const names[16] = {
        "instruction address misaligned", "instruction access fault", "illegal instruction", "breakpoint",
        "load address misaligned", "load access fault", "store address misaligned", "store access fault",
        "environment call from U-mode", "environment call from S-mode", "exception", "environment call from M-mode",
        "instruction page fault", "load page fault", "exception", "store page fault"};
    report(mcause < 16u ? names[mcause] : "exception", 0, mepc, frame[0], sp, mcause, mtval);
}
