/*
 * Platform layer of the QEMU RISC-V virt board (qemu_riscv32): the NS16550A UART0 as the console, its RX interrupt
 * through the PLIC (source 10) as the hart's machine external interrupt. The interrupt drains the receiver into
 * app_rx_ring before completing at the PLIC: a byte that arrives after the drain keeps the UART's interrupt line
 * up, so the PLIC raises it again and none is left behind. A receive error the UART reports (LSR overrun, parity,
 * framing) marks the line damaged (ringbuf_damage), as on nucleo_h743zi. Instructions are counted by the instret CSR.
 */
#include <stdint.h>

#include "console.h"
#include "fault.h"
#include "platform.h"
#include "virt.h"

#define BAUD_DIVISOR(baud) (VIRT_UART0_CLOCK_HZ / (16u * (baud)))

const char platform_cycles_unit[] = "instret";

void platform_init(void)
{
    fault_init();
    UART_IER = 0u;
    UART_LCR = UART_LCR_DLAB;
    UART_DLL = (uint8_t)BAUD_DIVISOR(CONFIG_APP_UART_BAUDRATE);
    UART_IER = (uint8_t)(BAUD_DIVISOR(CONFIG_APP_UART_BAUDRATE) >> 8); /* DLM while DLAB is set */
    UART_LCR = UART_LCR_8N1;
    /* FIFOs off, as the UART leaves reset: QEMU then hands it one byte at a time when the last was read (none is
     * ever overrun), and the byte it may already hold -- the first of a line sent before the board was up -- is
     * kept (turning the FIFOs on would clear it). It goes to the ring with those the interrupt receives. */
    UART_FCR = 0u;
    UART_MCR = UART_MCR_DTR_RTS_OUT2;
    while (UART_LSR & UART_LSR_DATA_READY) {
        ringbuf_put(&app_rx_ring, UART_RBR);
    }
    UART_IER = UART_IER_RX_AVAILABLE;
    PLIC_PRIORITY(VIRT_UART0_IRQ) = 1u;
    PLIC_ENABLE_CTX0[VIRT_UART0_IRQ / 32u] |= 1u << (VIRT_UART0_IRQ % 32u);
    PLIC_THRESHOLD_CTX0 = 0u;
    CSR_SET(mie, MIE_MEIE);
    CSR_SET(mstatus, MSTATUS_MIE); /* interrupts on, as a Cortex-M leaves reset */
}

uint32_t platform_cycles(void)
{
    uint32_t v;
    __asm volatile("rdinstret %0" : "=r"(v));
    return v;
}

static void uart_rx_isr(void)
{
    uint8_t lsr;
    while ((lsr = UART_LSR) & UART_LSR_DATA_READY) {
        if (lsr & UART_LSR_ERRORS) {
            ringbuf_damage(&app_rx_ring);
        }
        ringbuf_put(&app_rx_ring, UART_RBR);
    }
    app_rx_notify_from_isr();
}

/* Every trap (startup.S trap_entry, on the trap stack): the UART's interrupt, or an exception (reported). */
void trap_handler(uint32_t mcause, uint32_t mepc, uint32_t mtval, uint32_t sp, const uint32_t *frame)
{
    if (!(mcause & MCAUSE_INTERRUPT)) {
        fault_exception(mcause, mepc, mtval, sp, frame);
    }
    if ((mcause & ~MCAUSE_INTERRUPT) != MCAUSE_MACHINE_EXTERNAL) {
        platform_fatal("unexpected interrupt", (int)(mcause & ~MCAUSE_INTERRUPT));
    }
    uint32_t irq;
    while ((irq = PLIC_CLAIM_CTX0) != 0u) {
        if (irq == VIRT_UART0_IRQ) {
            uart_rx_isr();
        } else {
            platform_fatal("unexpected interrupt", (int)irq);
        }
        PLIC_CLAIM_CTX0 = irq;
    }
}

void platform_console_write(const char *data, size_t len)
{
    for (size_t i = 0; i < len; i++) {
        while (!(UART_LSR & UART_LSR_THR_EMPTY)) {
        }
        UART_THR = (uint8_t)data[i];
    }
}

void platform_wait_for_interrupt(void)
{
    __asm volatile("wfi" ::: "memory"); /* wakes on a pending enabled interrupt even with MIE off */
}

void platform_irq_disable(void)
{
    CSR_CLEAR(mstatus, MSTATUS_MIE);
}

void platform_irq_enable(void)
{
    CSR_SET(mstatus, MSTATUS_MIE);
}

bool platform_console_ready(void)
{
    return UART_LCR == UART_LCR_8N1;
}

void platform_console_poll_init(void)
{
    UART_IER = 0u; /* no RX interrupt */
}

uint8_t platform_console_getc(void)
{
    while (!(UART_LSR & UART_LSR_DATA_READY)) {
    }
    return UART_RBR;
}
