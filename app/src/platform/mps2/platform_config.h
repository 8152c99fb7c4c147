/* Board constants of the QEMU MPS2 boards, used by FreeRTOSConfig.h and cmsdk.h. */
#ifndef PLATFORM_CONFIG_H
#define PLATFORM_CONFIG_H

/* The board's FPGA image. Defaults from QEMU's hw/arm/mps2.c (AN500, AN386): CMSDK APB UART0 at 0x40004000, RX
 * interrupt IRQ 0, TX interrupt IRQ 1 (UART0-2 overflow interrupts are ORed onto IRQ 12); TIMER0 at 0x40000000;
 * system clock 25 MHz; 32 external interrupts. A board whose image places them elsewhere defines these in its
 * board.cmake (BOARD_DEFINES): the AN505 (hw/arm/mps2-tz.c) has UART0 at 0x40200000 (RX IRQ 32) and TIMER0 at
 * 0x40000000, both also at the Secure alias +0x10000000, a 20 MHz clock and 92 external interrupts. */
#ifndef MPS2_SYSCLK_HZ
#define MPS2_SYSCLK_HZ 25000000u
#endif
#ifndef MPS2_UART0_BASE
#define MPS2_UART0_BASE 0x40004000u
#endif
#ifndef MPS2_UART0_RX_IRQn
#define MPS2_UART0_RX_IRQn 0
#endif
#ifndef MPS2_TIMER0_BASE
#define MPS2_TIMER0_BASE 0x40000000u
#endif
#ifndef MPS2_IRQ_COUNT
#define MPS2_IRQ_COUNT 32
#endif
/* The AN547 (MPS3, SSE-300, hw/arm/mps2-tz.c) differs more: UART0 at 0x49303000 (RX IRQ 33) with a 25 MHz APB
 * clock, the Cortex-M55 and SysTick at 32 MHz (MPS2_CPU_CLOCK_HZ), 96 external interrupts, and no CMSDK timer on
 * the system clock (the SSE-300's are its own system timers): platform_cycles() reads the FPGA I/O block's COUNTER
 * instead (MPS2_FPGAIO_BASE, 0x49302000), which counts at its 20 MHz prescaler clock (PRESCALE 0 from reset). Both
 * at the Secure alias +0x10000000 too. */
#ifndef MPS2_CPU_CLOCK_HZ
#define MPS2_CPU_CLOCK_HZ MPS2_SYSCLK_HZ
#endif
#if defined(MPS2_FPGAIO_BASE)
#ifndef MPS2_TIMER_HZ
#define MPS2_TIMER_HZ 20000000u
#endif
#else
#define MPS2_TIMER_HZ MPS2_SYSCLK_HZ
#endif

/* SysTick runs at the CPU clock, the CMSDK timers at the system clock in QEMU's MPS2 models. */
#define PLATFORM_CPU_CLOCK_HZ MPS2_CPU_CLOCK_HZ
/* platform_cycles() counts ticks of this many ns (TIMER0, or the FPGA I/O COUNTER): under QEMU -icount shift=S (an
 * instruction every 2^S ns) a tick is PLATFORM_ICOUNT_NS_PER_TICK / 2^S instructions (40 at 25 MHz and S = 0). */
#define PLATFORM_ICOUNT_NS_PER_TICK (1000000000u / MPS2_TIMER_HZ)
/* Priority bits used to place priorities (like the CMSDK CMSIS headers: 3). QEMU's NVIC keeps all
 * 8 bits, so configPRIO_BITS is not asserted against the hardware here (no PLATFORM_PRIO_BITS_CHECKED). */
#define PLATFORM_NVIC_PRIO_BITS 3

#endif
