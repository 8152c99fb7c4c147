/*
 * Faults you can see, on every Cortex-M board (Armv7-M: mps2_an500, mps2_an386, nucleo_h743zi; Armv8-M: mps2_an505).
 *
 * HardFault, MemManage, BusFault and UsageFault (the last three enabled by fault_init, so each is reported under
 * its own name; on Armv8-M also SecureFault) and platform_fatal() -- which configASSERT, the FreeRTOS stack-overflow and malloc-failed hooks
 * and the platform layers call -- end in one report on the console, written polled with interrupts masked:
 *
 *   fatal: <what> pc=0x........ lr=0x........ sp=0x........ cfsr=0x........ hfsr=0x........ mmfar=0x........ bfar=0x........
 *   fatal: reset
 *
 * then the board resets (AIRCR.SYSRESETREQ). For a fault, pc/lr are the ones the core stacked (the faulting
 * instruction and the code's link register) and sp where it stacked them (MSP or PSP); `pc=none` when that
 * frame cannot be read: the stacking itself failed (CFSR MSTKERR/STKERR: a stack overflow into the guard below),
 * or the stack pointer is outside RAM. For platform_fatal, pc/lr are the caller's. CFSR/HFSR/MMFAR/BFAR
 * are the System Control Block's fault registers as they are (MMFAR is valid when CFSR bit 7 is set, BFAR when
 * bit 15 is; docs/serial-protocol.md "Faults").
 *
 * The main stack starts its region (cmake/linker/cortex_m.ld) above a 256-byte guard that fault_init makes
 * inaccessible with the MPU (on Armv8-M, whose MPU has no "no access" permission: read-only, so a push faults just
 * the same), so an overflowing main stack faults (MemManage) at its first push past the end instead
 * of overwriting anything (a function with more than 256 bytes of locals could step over the guard; on
 * nucleo_h743zi the memory below DTCM is reserved and faults too). The fault handlers take their own stack before
 * anything else (app_fault_stack below) and drop the faulting context's lazily stacked floating-point state, so that
 * fault is still reported.
 */
#include <stddef.h>
#include <stdint.h>
#include <string.h>

#include "fault.h"
#include "platform.h"
#include "raw_out.h"

/* System Control Block (Armv7-M ARM, B3.2) */
#define SCB_AIRCR (*(volatile uint32_t *)0xE000ED0Cu)
#define SCB_CCR (*(volatile uint32_t *)0xE000ED14u)
#define SCB_SHCSR (*(volatile uint32_t *)0xE000ED24u)
#define SCB_CFSR (*(volatile uint32_t *)0xE000ED28u)
#define SCB_HFSR (*(volatile uint32_t *)0xE000ED2Cu)
#define SCB_MMFAR (*(volatile uint32_t *)0xE000ED34u)
#define SCB_BFAR (*(volatile uint32_t *)0xE000ED38u)
#if __ARM_ARCH >= 8
#define SHCSR_FAULTS_ENABLE ((1u << 16) | (1u << 17) | (1u << 18) | (1u << 19)) /* ... and SecureFault */
#else
#define SHCSR_FAULTS_ENABLE ((1u << 16) | (1u << 17) | (1u << 18)) /* MemManage, BusFault, UsageFault */
#endif
#define CCR_BFHFNMIGN (1u << 8)   /* loads at priority -1 ignore bus faults (reading a frame that is not there) */
#define CFSR_STACKING_FAILED ((1u << 4) | (1u << 12)) /* MSTKERR, STKERR */
#define AIRCR_SYSRESETREQ (0x05FA0000u | (1u << 2))

/* Memory Protection Unit: PMSAv7 (Armv7-M ARM, B3.5), PMSAv8 (Armv8-M ARM, B3.5; the Secure MPU when the core runs
 * Secure) */
#define MPU_TYPE (*(volatile uint32_t *)0xE000ED90u)
#define MPU_CTRL (*(volatile uint32_t *)0xE000ED94u)
#define MPU_RNR (*(volatile uint32_t *)0xE000ED98u)
#define MPU_RBAR (*(volatile uint32_t *)0xE000ED9Cu)
#define MPU_RASR (*(volatile uint32_t *)0xE000EDA0u) /* PMSAv8: MPU_RLAR, same address */
#define MPU_CTRL_ENABLE_PRIVDEFENA ((1u << 0) | (1u << 2)) /* on; elsewhere the default memory map */
#define MPU_RASR_NO_ACCESS ((1u << 28) | (0u << 24) | 1u) /* XN, no access, on; SIZE (bits 5:1) = log2(bytes) - 1 */
#define MPU_RBAR_V8_RO_XN ((2u << 1) | 1u) /* AP = read-only (privileged), XN; base in bits 31:5 */
#define MPU_RLAR_V8_ENABLE 1u              /* on, attribute index 0; limit (inclusive) in bits 31:5 */

/* From the linker script: RAM the stacked frame may be read from (the board's regions); the main stack's guard,
 * [__stack_guard__, _sstack), a power of two in size and aligned to it. */
extern uint32_t __ram_start__, __ram_end__, __dtcm_start__, __dtcm_end__, __stack_guard__, _sstack;

/* The handlers' own stack: never the stack that faulted (FAULT_STACK_BYTES, named in the handlers' assembly). */
#define FAULT_STACK_BYTES 1024
#define STR_(x) #x
#define STR(x) STR_(x)
uint32_t app_fault_stack[FAULT_STACK_BYTES / 4] __attribute__((aligned(8)));

void fault_init(void)
{
    SCB_SHCSR |= SHCSR_FAULTS_ENABLE;
    if ((MPU_TYPE >> 8) & 0xFFu) { /* MPU region 0: the guard below the main stack, no access */
        MPU_RNR = 0u;
#if __ARM_ARCH >= 8
        MPU_RBAR = (uint32_t)(uintptr_t)&__stack_guard__ | MPU_RBAR_V8_RO_XN;
        MPU_RASR = (((uint32_t)(uintptr_t)&_sstack - 1u) & ~0x1Fu) | MPU_RLAR_V8_ENABLE;
#else
        const uint32_t bytes = (uint32_t)((uintptr_t)&_sstack - (uintptr_t)&__stack_guard__);
        MPU_RBAR = (uint32_t)(uintptr_t)&__stack_guard__;
        MPU_RASR = MPU_RASR_NO_ACCESS | ((30u - (uint32_t)__builtin_clz(bytes)) << 1);
#endif
        MPU_CTRL = MPU_CTRL_ENABLE_PRIVDEFENA;
        __asm volatile("dsb\n\tisb" ::: "memory");
    }
}

/* [p, p + bytes) can be read: in RAM or DTCM, not in the guard. */
static int readable(uintptr_t p, size_t bytes)
{
    const uintptr_t end = p + bytes;
    return (p & 3u) == 0u && end > p && (end <= (uintptr_t)&__stack_guard__ || p >= (uintptr_t)&_sstack) &&
           ((p >= (uintptr_t)&__ram_start__ && end <= (uintptr_t)&__ram_end__) ||
            (p >= (uintptr_t)&__dtcm_start__ && end <= (uintptr_t)&__dtcm_end__));
}

/* The report, then the reset. frame: the 8 words the core stacked (r0-r3, r12, lr, pc, xPSR), or NULL with the
 * caller's pc/lr. */
static void __attribute__((noreturn)) report(const char *what, int line, const uint32_t *frame, uint32_t pc,
                                             uint32_t lr, uint32_t sp)
{
    __asm volatile("cpsid i" ::: "memory");
    const uint32_t cfsr = SCB_CFSR, hfsr = SCB_HFSR, mmfar = SCB_MMFAR, bfar = SCB_BFAR;
    int have_pc = 1;
    if (frame != NULL) {
        have_pc = !(cfsr & CFSR_STACKING_FAILED) && readable((uintptr_t)frame, 8u * sizeof(uint32_t));
        if (have_pc) {
            lr = frame[5];
            pc = frame[6];
        }
    }
    if (platform_console_ready()) { /* before platform_init the UART cannot write */
        raw_puts("\r\nfatal: ");
        raw_puts(what != NULL ? what : "?");
        if (line > 0) {
            raw_puts(":");
            raw_put_dec((uint32_t)line);
        }
        if (have_pc) {
            raw_put_field("pc", pc);
            raw_put_field("lr", lr);
        } else {
            raw_puts(" pc=none lr=none");
        }
        raw_put_field("sp", sp);
        raw_put_field("cfsr", cfsr);
        raw_put_field("hfsr", hfsr);
        raw_put_field("mmfar", mmfar);
        raw_put_field("bfar", bfar);
        raw_puts("\r\nfatal: reset\r\n");
    }
    __asm volatile("dsb" ::: "memory");
    SCB_AIRCR = AIRCR_SYSRESETREQ;
    __asm volatile("dsb" ::: "memory");
    for (;;) {
    }
}

void platform_fatal(const char *what, int line)
{
    uint32_t sp;
    __asm volatile("mov %0, sp" : "=r"(sp));
    const uint32_t caller = (uint32_t)(uintptr_t)__builtin_return_address(0);
    report(what, line, NULL, caller, caller, sp);
}

/* Called by the handlers below on app_fault_stack: frame = the faulting context's stack pointer (MSP or PSP by
 * EXC_RETURN bit 2), ipsr = the exception number. */
void __attribute__((used, noreturn)) fault_entry(const uint32_t *frame, uint32_t ipsr)
{
    static const char *const names[8] = {"exception", "exception", "exception", "HardFault", "MemManage",
                                         "BusFault", "UsageFault", "SecureFault"};
    SCB_CCR |= CCR_BFHFNMIGN;
    __asm volatile("dsb\n\tisb" ::: "memory");
    report(names[ipsr < 8u ? ipsr : 0u], 0, frame, 0u, 0u, (uint32_t)(uintptr_t)frame);
}

/* FPCCR.LSPACT cleared: the floating-point registers of the faulting context are never written to its stack (it is
 * not resumed), so the handler's own floating-point use cannot fault on a stack that overflowed. */
#if defined(__ARM_FP)
#define DROP_LAZY_FP_STATE "ldr r2, =0xE000EF34\n\tldr r3, [r2]\n\tbic r3, r3, #1\n\tstr r3, [r2]\n\t"
#else
#define DROP_LAZY_FP_STATE ""
#endif

/* The four fault vectors: pick the stack the core stacked on, move to app_fault_stack, report. Nothing is pushed
 * before the switch (naked), so an overflowed stack pointer is never used. */
#define FAULT_HANDLER(name)                                                                          \
    void __attribute__((naked)) name(void)                                                           \
    {                                                                                                \
        __asm volatile("tst lr, #4\n\t"                                                              \
                       "ite eq\n\t"                                                                  \
                       "mrseq r0, msp\n\t"                                                           \
                       "mrsne r0, psp\n\t"                                                           \
                       "mrs r1, ipsr\n\t"                                                            \
                       "ldr r2, =app_fault_stack + " STR(FAULT_STACK_BYTES) "\n\t"                   \
                       "mov sp, r2\n\t"                                                              \
                       DROP_LAZY_FP_STATE                                                            \
                       "b fault_entry\n\t"                                                           \
                       ".ltorg");                                                                    \
    }

FAULT_HANDLER(HardFault_Handler)
FAULT_HANDLER(MemManage_Handler)
FAULT_HANDLER(BusFault_Handler)
FAULT_HANDLER(UsageFault_Handler)
#if __ARM_ARCH >= 8
FAULT_HANDLER(SecureFault_Handler)
#endif
