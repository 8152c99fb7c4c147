/*
 * Startup of the QEMU RISC-V virt board (one hart, machine mode). `qemu-system-riscv32 -M virt -bios none` loads the
 * ELF and starts the hart at 0x80000000, the start of the FLASH region, where _start is (section .text.start,
 * first in cmake/linker/riscv.ld). _start: interrupts off, gp and sp, every trap to trap_entry, .data and .tdata
 * copied from FLASH, .tbss and .bss zeroed, tp at the TLS block, main().
 *
 * trap_entry: interrupts and exceptions, on a stack of their own (trap_stack, swapped in through mscratch: a
 * main stack that overflowed into its guard is never written again). It saves the registers a C function may
 * change, calls trap_handler(mcause, mepc, mtval, the interrupted sp, the saved registers) (platform.c) and
 * returns with mret.
 */
#define FRAME_WORDS 16               /* ra, t0-t6, a0-a7 */
#define TRAP_STACK_BYTES 1024

    .section .text.start, "ax"
    .globl _start
_start:
    csrw mie, zero
    csrci mstatus, 8                 /* MIE off until platform_init */
    .option push
    .option norelax
    la gp, __global_pointer$
    .option pop
    la sp, _estack
    la t0, trap_entry
    csrw mtvec, t0                   /* direct mode: every trap to trap_entry */
    la t0, trap_stack + TRAP_STACK_BYTES
    csrw mscratch, t0

    la a0, _sdata                    /* .data and .tdata: [_sdata, _edata) from _sidata */
    la a1, _sidata
    la a2, _edata
1:  bgeu a0, a2, 2f
    lw t0, 0(a1)
    sw t0, 0(a0)
    addi a0, a0, 4
    addi a1, a1, 4
    j 1b
2:  la a0, _sbss                     /* .tbss and .bss: [_sbss, _ebss) */
    la a1, _ebss
3:  bgeu a0, a1, 4f
    sw zero, 0(a0)
    addi a0, a0, 4
    j 3b
4:  la tp, __tls_base
    call main
5:  wfi
    j 5b

    .text
    .align 2
    .globl trap_entry
trap_entry:
    csrrw sp, mscratch, sp           /* sp: the trap stack; mscratch: the interrupted sp */
    addi sp, sp, -4 * FRAME_WORDS
    sw ra, 0(sp)
    sw t0, 4(sp)
    sw t1, 8(sp)
    sw t2, 12(sp)
    sw t3, 16(sp)
    sw t4, 20(sp)
    sw t5, 24(sp)
    sw t6, 28(sp)
    sw a0, 32(sp)
    sw a1, 36(sp)
    sw a2, 40(sp)
    sw a3, 44(sp)
    sw a4, 48(sp)
    sw a5, 52(sp)
    sw a6, 56(sp)
    sw a7, 60(sp)
    csrr a0, mcause
    csrr a1, mepc
    csrr a2, mtval
    csrr a3, mscratch
    mv a4, sp
    call trap_handler
    lw ra, 0(sp)
    lw t0, 4(sp)
    lw t1, 8(sp)
    lw t2, 12(sp)
    lw t3, 16(sp)
    lw t4, 20(sp)
    lw t5, 24(sp)
    lw t6, 28(sp)
    lw a0, 32(sp)
    lw a1, 36(sp)
    lw a2, 40(sp)
    lw a3, 44(sp)
    lw a4, 48(sp)
    lw a5, 52(sp)
    lw a6, 56(sp)
    lw a7, 60(sp)
    addi sp, sp, 4 * FRAME_WORDS
    csrrw sp, mscratch, sp           /* back to the interrupted sp; mscratch: the trap stack again */
    mret

    .bss
    .align 4
    .globl trap_stack
trap_stack:
    .space TRAP_STACK_BYTES
