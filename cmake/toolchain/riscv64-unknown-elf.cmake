# Toolchain file for the RISC-V boards: Debian's gcc-riscv64-unknown-elf (every RV32/RV64 multilib) with
# picolibc-riscv64-unknown-elf as the C library. The board's CPU flags (BOARD_CPU_FLAGS in
# boards/<vendor>/<board>/board.cmake: -march, -mabi) go into the *_FLAGS_INIT variables, so every target of the
# build -- the app and the bertl14 library added with add_subdirectory() -- is compiled for the same ISA and ABI,
# and the link picks the matching multilib of picolibc and libgcc.
set(CMAKE_SYSTEM_NAME Generic)
set(CMAKE_SYSTEM_PROCESSOR riscv)

set(CMAKE_TRY_COMPILE_PLATFORM_VARIABLES BOARD_DIR)
set(CMAKE_TRY_COMPILE_TARGET_TYPE STATIC_LIBRARY)

find_program(RISCV_GCC riscv64-unknown-elf-gcc)
if(NOT RISCV_GCC)
  message(FATAL_ERROR "riscv64-unknown-elf-gcc not found: install it with "
                      "`sudo apt-get install gcc-riscv64-unknown-elf picolibc-riscv64-unknown-elf`")
endif()
if(NOT EXISTS /usr/lib/picolibc/riscv64-unknown-elf/picolibc.specs)
  message(FATAL_ERROR "picolibc for riscv64-unknown-elf not found: install it with "
                      "`sudo apt-get install picolibc-riscv64-unknown-elf`")
endif()
get_filename_component(_riscv_bin "${RISCV_GCC}" DIRECTORY)
set(CMAKE_C_COMPILER   ${_riscv_bin}/riscv64-unknown-elf-gcc)
set(CMAKE_CXX_COMPILER ${_riscv_bin}/riscv64-unknown-elf-g++)
set(CMAKE_ASM_COMPILER ${_riscv_bin}/riscv64-unknown-elf-gcc)
set(CMAKE_OBJCOPY      ${_riscv_bin}/riscv64-unknown-elf-objcopy CACHE FILEPATH "objcopy")
set(CMAKE_SIZE         ${_riscv_bin}/riscv64-unknown-elf-size CACHE FILEPATH "size")

if(NOT BOARD_DIR)
  message(FATAL_ERROR "BOARD_DIR is not set: configure through `west build -b BOARD`")
endif()
include(${BOARD_DIR}/board.cmake)
string(REPLACE ";" " " _cpu "${BOARD_CPU_FLAGS}")

# -O2 -g unless a build type is given, as for the Cortex-M boards; picolibc's headers through its specs file
set(CMAKE_C_FLAGS_INIT   "${_cpu} --specs=picolibc.specs -O2 -g -ffunction-sections -fdata-sections")
set(CMAKE_CXX_FLAGS_INIT "${_cpu} --specs=picolibc.specs -ffunction-sections -fdata-sections -fno-exceptions -fno-rtti")
set(CMAKE_ASM_FLAGS_INIT "${_cpu} -x assembler-with-cpp")
# the link gets the C flags (picolibc.specs once: a second one is an error); the board's startup code instead of
# picolibc's crt0, its linker script (bertl14_firmware) instead of picolibc.ld
set(CMAKE_EXE_LINKER_FLAGS_INIT "-nostartfiles -Wl,--gc-sections")

set(CMAKE_FIND_ROOT_PATH_MODE_PROGRAM NEVER)
set(CMAKE_FIND_ROOT_PATH_MODE_LIBRARY ONLY)
set(CMAKE_FIND_ROOT_PATH_MODE_INCLUDE ONLY)
