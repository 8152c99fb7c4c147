/* Board constants used by FreeRTOSConfig.h on STM32H7 (nucleo_h743zi). */
#ifndef PLATFORM_CONFIG_H
#define PLATFORM_CONFIG_H

#include <stdint.h>
extern uint32_t SystemCoreClock; /* 400 MHz after platform_init() */

#define PLATFORM_CPU_CLOCK_HZ SystemCoreClock
/* STM32H7 implements 4 NVIC priority bits; FreeRTOS checks configPRIO_BITS against the hardware. */
#define PLATFORM_NVIC_PRIO_BITS 4
#define PLATFORM_PRIO_BITS_CHECKED 1

#endif
