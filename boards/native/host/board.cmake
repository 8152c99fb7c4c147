# CMake side of the host board: no CPU flags, the host platform layer (stdin/stdout UART).
set(BOARD_CPU_FLAGS "")
set(BOARD_PLATFORM host)
set(BOARD_FREERTOS_PORT "")
set(BOARD_DEFINES BOARD_HOST=1)
