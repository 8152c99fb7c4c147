# CMake side of the board: CPU flags (inherited by every target through the toolchain file), the application's
# platform layer (app/src/platform/riscv_virt), the linker script and the defines.
# -misa-spec=2.2 keeps the CSR instructions (rdinstret, csrr) in the base ISA, so -march stays plain rv32imac and
# gcc picks its rv32imac/ilp32 multilib (picolibc, libgcc); -march=rv32imac_zicsr would fall back to the default one.
set(BOARD_CPU_FLAGS -march=rv32imac -misa-spec=2.2 -mabi=ilp32 -mcmodel=medany)
set(BOARD_PLATFORM riscv_virt)
set(BOARD_LINKER_SCRIPT riscv.ld)
set(BOARD_DEFINES BOARD_QEMU_RISCV32=1 CPU_RISCV32=1)
