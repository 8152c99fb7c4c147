# QEMU RISC-V virt board (qemu_riscv32): own startup, trap entry and register definitions, no module needed.
target_sources(app PRIVATE
  ${CMAKE_CURRENT_LIST_DIR}/startup.S
  ${CMAKE_CURRENT_LIST_DIR}/platform.c
  ${CMAKE_CURRENT_LIST_DIR}/fault.c)
