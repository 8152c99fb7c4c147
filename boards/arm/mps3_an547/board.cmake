# CMake side of the board: CPU flags (inherited by every target through the toolchain file), the application's
# platform layer and its defines. The MPS2 platform layer (app/src/platform/mps2) serves the AN547 with the values
# below (hw/arm/mps2-tz.c, Secure aliases): CMSDK UART0 at 0x59303000 (RX interrupt 33) on a 25 MHz APB clock, the
# core at 32 MHz, 96 external interrupts, and the FPGA I/O block's 20 MHz COUNTER as the cycle count (the SSE-300
# has no CMSDK timer on the system clock).
# -mcpu=cortex-m55 with the hard-float ABI: the FPU (double precision), the DSP extension and MVE (integer and
# floating point, __ARM_FEATURE_MVE 3).
set(BOARD_CPU_FLAGS -mcpu=cortex-m55 -mthumb -mfloat-abi=hard)
set(BOARD_PLATFORM mps2)
# FreeRTOS's Armv8-M port without TrustZone support, run entirely in the Secure state
# (configRUN_FREERTOS_SECURE_ONLY in app/src/FreeRTOSConfig.h); it saves the MVE/FPU context of each task
set(BOARD_FREERTOS_PORT GCC/ARM_CM55_NTZ/non_secure)
set(BOARD_DEFINES BOARD_MPS3_AN547=1 CPU_CORTEX_M55=1
    MPS2_SYSCLK_HZ=25000000u MPS2_CPU_CLOCK_HZ=32000000u MPS2_UART0_BASE=0x59303000u MPS2_UART0_RX_IRQn=33
    MPS2_FPGAIO_BASE=0x59302000u MPS2_IRQ_COUNT=96)
