# Host board: stdin/stdout as the console UART.
target_sources(app PRIVATE ${CMAKE_CURRENT_LIST_DIR}/platform.c)
