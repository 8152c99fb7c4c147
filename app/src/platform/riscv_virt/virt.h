/*
 * Minimal register definitions of QEMU's RISC-V virt machine (hw/riscv/virt.c), so the board builds with no module:
 *   NS16550A UART0 at 0x10000000 (byte registers), its interrupt PLIC source 10; the UART's clock 3.6864 MHz
 *   PLIC at 0x0C000000: context 0 is hart 0 in machine mode
 *   SiFive test device at 0x00100000: writing FINISHER_RESET resets the machine
 */
#ifndef VIRT_H
#define VIRT_H

#include <stdint.h>

#define VIRT_UART0_BASE 0x10000000u
#define VIRT_UART0_IRQ 10u
#define VIRT_UART0_CLOCK_HZ 3686400u

#define UART_REG(off) (*(volatile uint8_t *)(VIRT_UART0_BASE + (off)))
#define UART_RBR UART_REG(0) /* receive buffer (read, DLAB 0) */
#define UART_THR UART_REG(0) /* transmit holding (write, DLAB 0) */
#define UART_DLL UART_REG(0) /* divisor low (DLAB 1) */
#define UART_IER UART_REG(1) /* interrupt enable (DLAB 0); divisor high (DLAB 1) */
#define UART_FCR UART_REG(2) /* FIFO control (write) */
#define UART_LCR UART_REG(3) /* line control: bit 7 DLAB, bits 1:0 word length */
#define UART_MCR UART_REG(4) /* modem control: bit 3 OUT2 */
#define UART_LSR UART_REG(5) /* line status */

#define UART_IER_RX_AVAILABLE 0x01u
#define UART_LCR_DLAB 0x80u
#define UART_LCR_8N1 0x03u
#define UART_MCR_DTR_RTS_OUT2 0x0Bu
#define UART_LSR_DATA_READY 0x01u
#define UART_LSR_ERRORS 0x0Eu /* overrun, parity, framing */
#define UART_LSR_THR_EMPTY 0x20u

#define PLIC_BASE 0x0C000000u
#define PLIC_PRIORITY(irq) (*(volatile uint32_t *)(PLIC_BASE + 4u * (irq)))
#define PLIC_ENABLE_CTX0 ((volatile uint32_t *)(PLIC_BASE + 0x2000u))   /* one bit a source, 32 a word */
#define PLIC_THRESHOLD_CTX0 (*(volatile uint32_t *)(PLIC_BASE + 0x200000u))
#define PLIC_CLAIM_CTX0 (*(volatile uint32_t *)(PLIC_BASE + 0x200004u))  /* read: claim; write: complete */

#define VIRT_TEST (*(volatile uint32_t *)0x00100000u)
#define VIRT_TEST_FINISHER_RESET 0x7777u

/* Machine-mode CSR bits */
#define MSTATUS_MIE (1u << 3)
#define MIE_MEIE (1u << 11)
#define MCAUSE_INTERRUPT 0x80000000u
#define MCAUSE_MACHINE_EXTERNAL 11u

#define CSR_READ(csr) ({ uint32_t v_; __asm volatile("csrr %0, " #csr : "=r"(v_)); v_; })
#define CSR_WRITE(csr, v) __asm volatile("csrw " #csr ", %0" ::"r"((uint32_t)(v)) : "memory")
#define CSR_SET(csr, v) __asm volatile("csrs " #csr ", %0" ::"r"((uint32_t)(v)) : "memory")
#define CSR_CLEAR(csr, v) __asm volatile("csrc " #csr ", %0" ::"r"((uint32_t)(v)) : "memory")

#endif /* VIRT_H */
