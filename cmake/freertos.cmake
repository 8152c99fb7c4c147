# bertl14_add_freertos(<target> <config_dir>): FreeRTOS-Kernel (module rtos/FreeRTOS-Kernel) with
# the board's port (BOARD_FREERTOS_PORT, e.g. GCC/ARM_CM7/r0p1 or GCC/ARM_CM33_NTZ/non_secure: every .c file of
# that folder) and heap_4, compiled into <target>. <config_dir> holds FreeRTOSConfig.h.
function(bertl14_add_freertos target config_dir)
  bertl14_module(_rtos rtos/FreeRTOS-Kernel)
  if(NOT BOARD_FREERTOS_PORT)
    message(FATAL_ERROR "board ${BOARD} has no FreeRTOS port: build with -DCONFIG_APP_RTOS_NONE=y")
  endif()
  set(_port ${_rtos}/portable/${BOARD_FREERTOS_PORT})
  file(GLOB _port_sources ${_port}/*.c)   # port.c; Armv8-M ports add portasm.c and mpu_wrappers_v2_asm.c
  add_library(freertos_kernel STATIC
    ${_rtos}/tasks.c ${_rtos}/queue.c ${_rtos}/list.c ${_rtos}/timers.c ${_rtos}/event_groups.c
    ${_port_sources} ${_rtos}/portable/MemMang/heap_4.c)
  target_include_directories(freertos_kernel PUBLIC ${_rtos}/include ${_port} ${config_dir} ${BERTL14_GENERATED_DIR})
  target_compile_options(freertos_kernel PRIVATE -imacros ${BERTL14_GENERATED_DIR}/autoconf.h)
  target_compile_definitions(freertos_kernel PUBLIC ${BOARD_DEFINES})
  target_link_libraries(${target} PRIVATE freertos_kernel)
endfunction()
