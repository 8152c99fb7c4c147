/* Board constants used by FreeRTOSConfig.h on the QEMU MPS2 boards. */
#ifndef PLATFORM_CONFIG_H
#define PLATFORM_CONFIG_H

/* SysTick and the CMSDK timers run at the 25 MHz system clock in QEMU's MPS2 model. */
#define PLATFORM_CPU_CLOCK_HZ 25000000u
/* Priority bits used to place priorities (like the CMSDK CMSIS headers: 3). QEMU's NVIC keeps all
 * 8 bits, so configPRIO_BITS is not asserted against the hardware here (no PLATFORM_PRIO_BITS_CHECKED). */
#define PLATFORM_NVIC_PRIO_BITS 3

#endif
