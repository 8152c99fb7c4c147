/* Fault reporting of the RISC-V boards (fault.c): the stack guard, exceptions and platform_fatal(). */
#ifndef APP_FAULT_H
#define APP_FAULT_H

#include <stdint.h>

/** Make the 256 bytes below the main stack inaccessible (a locked PMP entry), so an overflow faults at once.
 *  Called first by platform_init(). */
void fault_init(void);

/** Report an exception the trap handler took (its mcause, mepc, mtval, the interrupted sp and the saved registers,
 *  ra first) on the console, then reset the machine. */
void fault_exception(uint32_t mcause, uint32_t mepc, uint32_t mtval, uint32_t sp, const uint32_t *frame)
    __attribute__((noreturn));

#endif /* APP_FAULT_H */
