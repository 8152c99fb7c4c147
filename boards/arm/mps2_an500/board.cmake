# CMake side of the board: CPU flags (inherited by every target through the toolchain file),
# the application's platform layer (app/src/platform/<BOARD_PLATFORM>) and its defines.
set(BOARD_CPU_FLAGS -mcpu=cortex-m7 -mthumb -mfpu=fpv5-d16 -mfloat-abi=hard)
set(BOARD_PLATFORM mps2)
set(BOARD_FREERTOS_PORT GCC/ARM_CM7/r0p1)
set(BOARD_DEFINES BOARD_MPS2_AN500=1 CPU_CORTEX_M7=1)
