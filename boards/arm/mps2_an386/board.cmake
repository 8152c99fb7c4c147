# CMake side of the board: CPU flags (inherited by every target through the toolchain file),
# the application's platform layer and its defines.
set(BOARD_CPU_FLAGS -mcpu=cortex-m4 -mthumb -mfpu=fpv4-sp-d16 -mfloat-abi=hard)
set(BOARD_PLATFORM mps2)
set(BOARD_FREERTOS_PORT GCC/ARM_CM4F)
set(BOARD_DEFINES BOARD_MPS2_AN386=1 CPU_CORTEX_M4=1)
