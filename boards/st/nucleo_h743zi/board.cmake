# CMake side of the board: CPU flags (inherited by every target through the toolchain file),
# the application's platform layer (HAL clock setup, USART3, TIM6 timebase) and its defines.
set(BOARD_CPU_FLAGS -mcpu=cortex-m7 -mthumb -mfpu=fpv5-d16 -mfloat-abi=hard)
set(BOARD_PLATFORM stm32h7)
set(BOARD_FREERTOS_PORT GCC/ARM_CM7/r0p1)
set(BOARD_DEFINES BOARD_NUCLEO_H743ZI=1 CPU_CORTEX_M7=1 STM32H743xx=1 USE_HAL_DRIVER=1)
