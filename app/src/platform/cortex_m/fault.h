/* Fault reporting of the Cortex-M boards (fault.c): the fault handlers and platform_fatal(). */
#ifndef APP_FAULT_H
#define APP_FAULT_H

/** Enable the MemManage, BusFault and UsageFault exceptions, so each is reported under its own name instead of
 *  as a HardFault. Called first by platform_init(). */
void fault_init(void);

#endif /* APP_FAULT_H */
