# nucleo_h743zi: ST HAL (stm32h7xx_hal_driver), device headers and startup (cmsis_device_h7),
# CMSIS core (CMSIS_6). Builds only with these modules (`west update`).
bertl14_module(_hal hal/stm32h7xx_hal_driver)
bertl14_module(_dev hal/cmsis_device_h7)
bertl14_module(_cmsis hal/CMSIS_6)

set(_hal_src ${_hal}/Src)
add_library(stm32h7_hal STATIC
  ${_hal_src}/stm32h7xx_hal.c
  ${_hal_src}/stm32h7xx_hal_cortex.c
  ${_hal_src}/stm32h7xx_hal_rcc.c
  ${_hal_src}/stm32h7xx_hal_rcc_ex.c
  ${_hal_src}/stm32h7xx_hal_pwr.c
  ${_hal_src}/stm32h7xx_hal_pwr_ex.c
  ${_hal_src}/stm32h7xx_hal_gpio.c
  ${_hal_src}/stm32h7xx_hal_dma.c
  ${_hal_src}/stm32h7xx_hal_dma_ex.c
  ${_hal_src}/stm32h7xx_hal_uart.c
  ${_hal_src}/stm32h7xx_hal_uart_ex.c
  ${_dev}/Source/Templates/system_stm32h7xx.c)
target_include_directories(stm32h7_hal PUBLIC
  ${CMAKE_CURRENT_LIST_DIR} ${_hal}/Inc ${_dev}/Include ${_cmsis}/CMSIS/Core/Include)
target_compile_definitions(stm32h7_hal PUBLIC ${BOARD_DEFINES})
target_compile_options(stm32h7_hal PRIVATE -w)  # vendor code: its warnings are not ours to fix

target_sources(app PRIVATE
  ${_dev}/Source/Templates/gcc/startup_stm32h743xx.s
  ${CMAKE_CURRENT_LIST_DIR}/platform.c
  ${CMAKE_CURRENT_LIST_DIR}/../cortex_m/fault.c)
target_include_directories(app PRIVATE ${CMAKE_CURRENT_LIST_DIR}/../cortex_m)
target_link_libraries(app PRIVATE stm32h7_hal)
