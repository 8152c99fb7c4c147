# bertl14_firmware(<target>): make <target> the board's firmware image.
#  - output <build>/firmware.elf plus .map, and (cross boards) firmware.bin / firmware.hex
#  - autoconf.h force-included, the board defines, warnings on
#  - cross boards: the board's linker script (BOARD_LINKER_SCRIPT in board.cmake, default cortex_m.ld; riscv.ld) from
#    cmake/linker/ with the MEMORY block west generated from board.yml (<build>/generated/memory_regions.ld), main
#    stack size from CONFIG_APP_MAIN_STACK_SIZE
function(bertl14_firmware target)
  set_target_properties(${target} PROPERTIES OUTPUT_NAME firmware SUFFIX ".elf"
                        RUNTIME_OUTPUT_DIRECTORY ${CMAKE_BINARY_DIR})
  target_compile_options(${target} PRIVATE -imacros ${BERTL14_GENERATED_DIR}/autoconf.h
                         -Wall -Wextra -Werror=implicit-function-declaration)
  target_compile_definitions(${target} PRIVATE ${BOARD_DEFINES} BERTL14_BOARD_NAME="${BOARD}")
  target_include_directories(${target} PRIVATE ${BERTL14_GENERATED_DIR})
  set(_map ${CMAKE_BINARY_DIR}/firmware.map)
  if(CMAKE_SYSTEM_NAME STREQUAL "Generic")
    if(BOARD_LINKER_SCRIPT)
      set(_ld ${BERTL14_ROOT}/cmake/linker/${BOARD_LINKER_SCRIPT})
    else()
      set(_ld ${BERTL14_ROOT}/cmake/linker/cortex_m.ld)
    endif()
    target_link_options(${target} PRIVATE -T${_ld} -L${BERTL14_GENERATED_DIR}
                        -Wl,-Map=${_map} -Wl,--defsym=_Min_Stack_Size=${CONFIG_APP_MAIN_STACK_SIZE})
    set_property(TARGET ${target} APPEND PROPERTY LINK_DEPENDS ${_ld} ${BERTL14_GENERATED_DIR}/memory_regions.ld)
    add_custom_command(TARGET ${target} POST_BUILD
      COMMAND ${CMAKE_OBJCOPY} -O binary $<TARGET_FILE:${target}> ${CMAKE_BINARY_DIR}/firmware.bin
      COMMAND ${CMAKE_OBJCOPY} -O ihex $<TARGET_FILE:${target}> ${CMAKE_BINARY_DIR}/firmware.hex
      BYPRODUCTS ${CMAKE_BINARY_DIR}/firmware.bin ${CMAKE_BINARY_DIR}/firmware.hex
      COMMENT "firmware.bin, firmware.hex")
  else()
    target_link_options(${target} PRIVATE -Wl,-Map=${_map})
  endif()
endfunction()
