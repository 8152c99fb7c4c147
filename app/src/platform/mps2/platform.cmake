# QEMU MPS2 boards (mps2_an500, mps2_an386): own startup and register definitions, no module needed.
target_sources(app PRIVATE
  ${CMAKE_CURRENT_LIST_DIR}/startup.c
  ${CMAKE_CURRENT_LIST_DIR}/platform.c
  ${CMAKE_CURRENT_LIST_DIR}/../cortex_m/fault.c)
target_include_directories(app PRIVATE ${CMAKE_CURRENT_LIST_DIR}/../cortex_m)
