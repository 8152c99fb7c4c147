/*
 * Minimal register definitions for the QEMU MPS2 boards (AN500 Cortex-M7, AN386 Cortex-M4, AN505 Cortex-M33), so
 * the board builds with no module. Where UART0 and TIMER0 are, UART0's RX interrupt and the system clock of the
 * board being built: platform_config.h.
 */
#ifndef MPS2_CMSDK_H
#define MPS2_CMSDK_H

#include <stdint.h>

#include "platform_config.h"

typedef struct {
    volatile uint32_t DATA;      /* 0x00 RX/TX data */
    volatile uint32_t STATE;     /* 0x04 bit0 TX buffer full, bit1 RX buffer full, bit2/3 overrun (W1C) */
    volatile uint32_t CTRL;      /* 0x08 bit0 TX en, bit1 RX en, bit2 TX int en, bit3 RX int en */
    volatile uint32_t INTSTATUS; /* 0x0C bit0 TX int, bit1 RX int (write 1 to clear) */
    volatile uint32_t BAUDDIV;   /* 0x10 baud divider (>= 16) */
} cmsdk_uart_t;

#define CMSDK_UART0 ((cmsdk_uart_t *)MPS2_UART0_BASE)
#define CMSDK_UART0_RX_IRQn MPS2_UART0_RX_IRQn

#define CMSDK_UART_STATE_TXFULL   (1u << 0)
#define CMSDK_UART_STATE_RXFULL   (1u << 1)
#define CMSDK_UART_STATE_RXOVR    (1u << 3)
#define CMSDK_UART_CTRL_TXEN      (1u << 0)
#define CMSDK_UART_CTRL_RXEN      (1u << 1)
#define CMSDK_UART_CTRL_RXINTEN   (1u << 3)
#define CMSDK_UART_INT_RX         (1u << 1)

typedef struct {
    volatile uint32_t CTRL;      /* 0x00 bit0 enable, bit3 interrupt enable */
    volatile uint32_t VALUE;     /* 0x04 current value, counts down at 25 MHz */
    volatile uint32_t RELOAD;    /* 0x08 value loaded when VALUE reaches 0 */
    volatile uint32_t INTSTATUS; /* 0x0C */
} cmsdk_timer_t;

#define CMSDK_TIMER0 ((cmsdk_timer_t *)MPS2_TIMER0_BASE) /* its interrupt unused: free-running */

#if defined(MPS2_FPGAIO_BASE)
/* FPGA I/O block (MPS3 AN547): COUNTER, a 32-bit up-counter that advances when the prescaler counter reaches 0 --
 * at every prescaler clock tick with PRESCALE at its reset value 0 */
#define MPS2_FPGAIO_COUNTER (*(volatile uint32_t *)(MPS2_FPGAIO_BASE + 0x18u))
#endif

/* System control space (the same addresses on Armv7-M and Armv8-M). */
#define SCB_CPACR     (*(volatile uint32_t *)0xE000ED88u) /* coprocessor access (FPU: CP10/CP11) */
#define SCB_VTOR      (*(volatile uint32_t *)0xE000ED08u)
#define NVIC_ISER     ((volatile uint32_t *)0xE000E100u)   /* one bit an interrupt, 32 a word */
#define NVIC_IPR_BYTE ((volatile uint8_t *)0xE000E400u)

#endif /* MPS2_CMSDK_H */
