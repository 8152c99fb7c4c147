/*
 * Platform layer of the QEMU MPS2 boards: CMSDK UART0 as the console, RX interrupt-driven.
 * The RX interrupt clears its status first, then drains the data register: a byte that arrives
 * after the drain raises the interrupt again, so none is left behind (clearing after the drain
 * could lose the interrupt of a byte received in between and stall reception).
 */
#include <stdint.h>

#include "cmsdk.h"
#include "console.h"
#include "fault.h"
#include "platform.h"

/* Same priority rule as FreeRTOSConfig.h: RX interrupt less urgent than the syscall ceiling (5). */
#define UART_RX_PRIORITY (6u << (8 - 3))

#if MPS2_TIMER_HZ == 20000000u
const char platform_cycles_unit[] = "timer_20mhz";
#else
const char platform_cycles_unit[] = "timer_25mhz";
#endif

void platform_init(void)
{
    fault_init();
#if !defined(MPS2_FPGAIO_BASE)
    CMSDK_TIMER0->RELOAD = 0xFFFFFFFFu;
    CMSDK_TIMER0->VALUE = 0xFFFFFFFFu;
    CMSDK_TIMER0->CTRL = 1u;
#endif
    CMSDK_UART0->BAUDDIV = MPS2_SYSCLK_HZ / CONFIG_APP_UART_BAUDRATE;
    CMSDK_UART0->CTRL = CMSDK_UART_CTRL_TXEN | CMSDK_UART_CTRL_RXEN | CMSDK_UART_CTRL_RXINTEN;
    NVIC_IPR_BYTE[CMSDK_UART0_RX_IRQn] = (uint8_t)UART_RX_PRIORITY;
    NVIC_ISER[CMSDK_UART0_RX_IRQn / 32] = 1u << (CMSDK_UART0_RX_IRQn % 32);
}

uint32_t platform_cycles(void)
{
#if defined(MPS2_FPGAIO_BASE)
    return MPS2_FPGAIO_COUNTER;                      /* counts up from reset */
#else
    return 0xFFFFFFFFu - CMSDK_TIMER0->VALUE;
#endif
}

void UART0RX_Handler(void)
{
    CMSDK_UART0->INTSTATUS = CMSDK_UART_INT_RX;
    while (CMSDK_UART0->STATE & CMSDK_UART_STATE_RXFULL) {
        ringbuf_put(&app_rx_ring, (uint8_t)CMSDK_UART0->DATA);
    }
    app_rx_notify_from_isr();
}

void platform_console_write(const char *data, size_t len)
{
    for (size_t i = 0; i < len; i++) {
        while (CMSDK_UART0->STATE & CMSDK_UART_STATE_TXFULL) {
        }
        CMSDK_UART0->DATA = (uint8_t)data[i];
    }
}

void platform_wait_for_interrupt(void)
{
    __asm volatile("dsb\n\twfi" ::: "memory");
}

void platform_irq_disable(void)
{
    __asm volatile("cpsid i" ::: "memory");
}

void platform_irq_enable(void)
{
    __asm volatile("cpsie i" ::: "memory");
}

bool platform_console_ready(void)
{
    return (CMSDK_UART0->CTRL & CMSDK_UART_CTRL_TXEN) != 0u;
}

void platform_console_poll_init(void)
{
    CMSDK_UART0->CTRL = CMSDK_UART_CTRL_TXEN | CMSDK_UART_CTRL_RXEN; /* no RX interrupt */
}

uint8_t platform_console_getc(void)
{
    while (!(CMSDK_UART0->STATE & CMSDK_UART_STATE_RXFULL)) {
    }
    return (uint8_t)CMSDK_UART0->DATA;
}
