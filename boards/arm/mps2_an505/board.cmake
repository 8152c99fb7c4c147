# CMake side of the board: CPU flags (inherited by every target through the toolchain file),
# the application's platform layer and its defines. The MPS2 platform layer (app/src/platform/mps2) serves the
# AN505 with the addresses below: its CMSDK UART0 (RX interrupt 32) and TIMER0 sit at the IoT Kit's Secure
# peripheral alias (0x50000000 + offset), and its system clock is 20 MHz (hw/arm/mps2-tz.c).
set(BOARD_CPU_FLAGS -mcpu=cortex-m33 -mthumb -mfpu=fpv5-sp-d16 -mfloat-abi=hard)
set(BOARD_PLATFORM mps2)
# FreeRTOS's Armv8-M port without TrustZone support, run entirely in the Secure state
# (configRUN_FREERTOS_SECURE_ONLY in app/src/FreeRTOSConfig.h)
set(BOARD_FREERTOS_PORT GCC/ARM_CM33_NTZ/non_secure)
set(BOARD_DEFINES BOARD_MPS2_AN505=1 CPU_CORTEX_M33=1
    MPS2_SYSCLK_HZ=20000000u MPS2_UART0_BASE=0x50200000u MPS2_UART0_RX_IRQn=32 MPS2_TIMER0_BASE=0x50000000u
    MPS2_IRQ_COUNT=92)
