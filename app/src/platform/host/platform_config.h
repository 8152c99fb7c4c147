/* Host board: no FreeRTOS port, nothing to configure. */
#ifndef PLATFORM_CONFIG_H
#define PLATFORM_CONFIG_H
#define PLATFORM_CPU_CLOCK_HZ 0u
#define PLATFORM_NVIC_PRIO_BITS 8
#endif
