/* Board constants of the QEMU RISC-V virt board (no FreeRTOS port: nothing for FreeRTOSConfig.h). */
#ifndef PLATFORM_CONFIG_H
#define PLATFORM_CONFIG_H

#define PLATFORM_CPU_CLOCK_HZ 0u
/* platform_cycles() is the instret CSR, which QEMU's -icount makes its virtual clock in ns: a "tick" is 1 ns, so under
 * -icount shift=S it advances 2^S a retired instruction (exactly one at S = 0; a real core counts instructions). */
#define PLATFORM_ICOUNT_NS_PER_TICK 1u

#endif
