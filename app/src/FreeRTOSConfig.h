/*
 * FreeRTOS configuration of the bertl14 application. Board-specific values (CPU clock, priority
 * bits) come from platform_config.h of the board's platform layer; sizes from Kconfig (autoconf.h
 * is force-included in every file of the build).
 */
#ifndef FREERTOS_CONFIG_H
#define FREERTOS_CONFIG_H

#include "platform_config.h"

#define configUSE_PREEMPTION                    1
#define configUSE_PORT_OPTIMISED_TASK_SELECTION 1
#define configUSE_TICKLESS_IDLE                 0
#define configCPU_CLOCK_HZ                      (PLATFORM_CPU_CLOCK_HZ)
#define configTICK_RATE_HZ                      ((TickType_t)1000)
#define configMAX_PRIORITIES                    5
#define configMINIMAL_STACK_SIZE                ((unsigned short)256)
#define configMAX_TASK_NAME_LEN                 12
#define configTICK_TYPE_WIDTH_IN_BITS           TICK_TYPE_WIDTH_32_BITS
#define configIDLE_SHOULD_YIELD                 1
#define configUSE_MUTEXES                       1
#define configUSE_RECURSIVE_MUTEXES             0
#define configUSE_COUNTING_SEMAPHORES           1
#define configQUEUE_REGISTRY_SIZE               0
#define configUSE_TASK_NOTIFICATIONS            1

#define configSUPPORT_STATIC_ALLOCATION         0
#define configSUPPORT_DYNAMIC_ALLOCATION        1
#define configTOTAL_HEAP_SIZE                   ((size_t)CONFIG_APP_FREERTOS_HEAP_SIZE)

#define configUSE_IDLE_HOOK                     0
#define configUSE_TICK_HOOK                     0
#define configCHECK_FOR_STACK_OVERFLOW          2
#define configUSE_MALLOC_FAILED_HOOK            1
#define configUSE_TRACE_FACILITY                1
#define configGENERATE_RUN_TIME_STATS           0

#define configUSE_TIMERS                        0
#define configUSE_CO_ROUTINES                   0

#define INCLUDE_vTaskDelay                      1
#define INCLUDE_vTaskDelete                     0
#define INCLUDE_uxTaskGetStackHighWaterMark     1
#define INCLUDE_xTaskGetSchedulerState          1

/* Cortex-M interrupt priorities. PLATFORM_NVIC_PRIO_BITS implemented bits (4 on STM32H7).
 * Interrupts that call FreeRTOS ...FromISR() functions (the UART RX) must have a numerically
 * higher (less urgent) priority than configMAX_SYSCALL_INTERRUPT_PRIORITY. */
#ifdef PLATFORM_PRIO_BITS_CHECKED
#define configPRIO_BITS PLATFORM_NVIC_PRIO_BITS
#endif
#define configLIBRARY_LOWEST_INTERRUPT_PRIORITY      ((1 << PLATFORM_NVIC_PRIO_BITS) - 1)
#define configLIBRARY_MAX_SYSCALL_INTERRUPT_PRIORITY 5
#define configKERNEL_INTERRUPT_PRIORITY      (configLIBRARY_LOWEST_INTERRUPT_PRIORITY << (8 - PLATFORM_NVIC_PRIO_BITS))
#define configMAX_SYSCALL_INTERRUPT_PRIORITY (configLIBRARY_MAX_SYSCALL_INTERRUPT_PRIORITY << (8 - PLATFORM_NVIC_PRIO_BITS))

/* Armv8-M ports (ARM_CM33_NTZ, ARM_CM55_NTZ): each task keeps its FPU context; no MPU regions of FreeRTOS's own; no TrustZone: the
 * kernel and every task run in the Secure state the core boots in (the image never enters the Non-secure state). */
#if defined(__ARM_ARCH_8M_MAIN__) || defined(__ARM_ARCH_8_1M_MAIN__)
#define configENABLE_FPU                        1
#define configENABLE_MPU                        0
#define configENABLE_TRUSTZONE                  0
#define configRUN_FREERTOS_SECURE_ONLY          1
#if defined(__ARM_FEATURE_MVE)
#define configENABLE_MVE                        1   /* ARM_CM55_NTZ: each task keeps its Helium (MVE) context */
#else
#define configENABLE_MVE                        0
#endif
#endif

/* A failed assertion is a fatal error: `fatal: assert <file>:<line>` with the fault registers, then a reset
 * (platform_fatal, platform/cortex_m/fault.c). */
#ifndef __ASSEMBLER__
void platform_fatal(const char *what, int line);
#endif
#ifdef __FILE_NAME__
#define configASSERT(x) do { if (!(x)) { platform_fatal("assert " __FILE_NAME__, __LINE__); } } while (0)
#else
#define configASSERT(x) do { if (!(x)) { platform_fatal("assert " __FILE__, __LINE__); } } while (0)
#endif

/* The port's handlers are the vector table's entries. */
#define vPortSVCHandler     SVC_Handler
#define xPortPendSVHandler  PendSV_Handler
#define xPortSysTickHandler SysTick_Handler

#endif /* FREERTOS_CONFIG_H */
