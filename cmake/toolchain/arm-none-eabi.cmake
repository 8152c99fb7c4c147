# Toolchain file for the Cortex-M boards (GNU Arm Embedded: gcc-arm-none-eabi + newlib).
# The board's CPU flags (BOARD_CPU_FLAGS in boards/<vendor>/<board>/board.cmake) go into the
# *_FLAGS_INIT variables, so every target of the build -- the app, FreeRTOS, the HAL and the
# bertl14 library added with add_subdirectory() -- is compiled for the same CPU and float ABI.
set(CMAKE_SYSTEM_NAME Generic)
set(CMAKE_SYSTEM_PROCESSOR arm)

set(CMAKE_TRY_COMPILE_PLATFORM_VARIABLES BOARD_DIR)
set(CMAKE_TRY_COMPILE_TARGET_TYPE STATIC_LIBRARY)

find_program(ARM_GCC arm-none-eabi-gcc)
if(NOT ARM_GCC)
  message(FATAL_ERROR "arm-none-eabi-gcc not found: install it with "
                      "`sudo apt-get install gcc-arm-none-eabi libnewlib-arm-none-eabi`")
endif()
get_filename_component(_arm_bin "${ARM_GCC}" DIRECTORY)
set(CMAKE_C_COMPILER   ${_arm_bin}/arm-none-eabi-gcc)
set(CMAKE_CXX_COMPILER ${_arm_bin}/arm-none-eabi-g++)
set(CMAKE_ASM_COMPILER ${_arm_bin}/arm-none-eabi-gcc)
set(CMAKE_OBJCOPY      ${_arm_bin}/arm-none-eabi-objcopy CACHE FILEPATH "objcopy")
set(CMAKE_SIZE         ${_arm_bin}/arm-none-eabi-size CACHE FILEPATH "size")

if(NOT BOARD_DIR)
  message(FATAL_ERROR "BOARD_DIR is not set: configure through `west build -b BOARD`")
endif()
include(${BOARD_DIR}/board.cmake)
string(REPLACE ";" " " _cpu "${BOARD_CPU_FLAGS}")

# -O2 -g unless a build type is given: the kernels and the measured figures (docs/benchmarks.md) are -O2
set(CMAKE_C_FLAGS_INIT   "${_cpu} -O2 -g -ffunction-sections -fdata-sections")
set(CMAKE_CXX_FLAGS_INIT "${_cpu} -ffunction-sections -fdata-sections -fno-exceptions -fno-rtti")
set(CMAKE_ASM_FLAGS_INIT "${_cpu} -x assembler-with-cpp")
set(CMAKE_EXE_LINKER_FLAGS_INIT "--specs=nano.specs --specs=nosys.specs -Wl,--gc-sections")

set(CMAKE_FIND_ROOT_PATH_MODE_PROGRAM NEVER)
set(CMAKE_FIND_ROOT_PATH_MODE_LIBRARY ONLY)
set(CMAKE_FIND_ROOT_PATH_MODE_INCLUDE ONLY)
