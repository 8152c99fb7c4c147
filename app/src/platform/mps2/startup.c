/*
 * Startup of the QEMU MPS2 boards: vector table (16 system exceptions + the board's MPS2_IRQ_COUNT interrupts),
 * Reset_Handler (FPU on, .data copied, .bss zeroed, main()). QEMU loads the ELF and takes the initial SP and PC
 * from the table at the start of the flash region (address 0; 0x10000000 on the AN505, whose Cortex-M33 boots in
 * the Secure state from INITSVTOR and stays there).
 */
#include <stdint.h>
#include <string.h>

#include "cmsdk.h"

extern uint32_t _sidata, _sdata, _edata, _sbss, _ebss, _estack;
extern int main(void);

void Reset_Handler(void);
void Default_Handler(void);
void platform_fatal(const char *what, int line);

#define WEAK_ALIAS __attribute__((weak, alias("Default_Handler")))
void NMI_Handler(void) WEAK_ALIAS;
void HardFault_Handler(void); /* the four fault handlers: platform/cortex_m/fault.c */
void MemManage_Handler(void);
void BusFault_Handler(void);
void UsageFault_Handler(void);
#if __ARM_ARCH >= 8
void SecureFault_Handler(void); /* Armv8-M with the Security Extension (platform/cortex_m/fault.c) */
#define SECURE_FAULT_VECTOR SecureFault_Handler
#else
#define SECURE_FAULT_VECTOR 0
#endif
void SVC_Handler(void) WEAK_ALIAS;
void DebugMon_Handler(void) WEAK_ALIAS;
void PendSV_Handler(void) WEAK_ALIAS;
void SysTick_Handler(void) WEAK_ALIAS;
void UART0RX_Handler(void) WEAK_ALIAS;

typedef void (*vector_t)(void);

/* Every interrupt is Default_Handler, then UART0's RX interrupt is set over it. */
#pragma GCC diagnostic push
#pragma GCC diagnostic ignored "-Woverride-init"
__attribute__((section(".isr_vector"), used))
const vector_t vector_table[16 + MPS2_IRQ_COUNT] = {
    (vector_t)(uintptr_t)&_estack,
    Reset_Handler,
    NMI_Handler,
    HardFault_Handler,
    MemManage_Handler,
    BusFault_Handler,
    UsageFault_Handler,
    SECURE_FAULT_VECTOR,
    0, 0, 0,
    SVC_Handler,
    DebugMon_Handler,
    0,
    PendSV_Handler,
    SysTick_Handler,
    [16 ... 16 + MPS2_IRQ_COUNT - 1] = Default_Handler,
    [16 + CMSDK_UART0_RX_IRQn] = UART0RX_Handler,
};
#pragma GCC diagnostic pop

void Reset_Handler(void)
{
    /* Full access to CP10/CP11 before any floating-point instruction (hard-float ABI). */
    SCB_CPACR |= (0xFu << 20);
    __asm volatile("dsb\n\tisb" ::: "memory");

    memcpy(&_sdata, &_sidata, (size_t)((uintptr_t)&_edata - (uintptr_t)&_sdata));
    memset(&_sbss, 0, (size_t)((uintptr_t)&_ebss - (uintptr_t)&_sbss));

    main();
    for (;;) {
    }
}

void Default_Handler(void)
{
    platform_fatal("unexpected interrupt", 0);
}
