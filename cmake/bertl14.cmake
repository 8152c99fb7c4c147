# The bertl14 workspace glue, included by an application's CMakeLists.txt BEFORE project():
#
#   cmake_minimum_required(VERSION 3.20)
#   include(${BERTL14_ROOT}/cmake/bertl14.cmake)
#   project(my_app C ASM)
#
# It loads the board (board.cmake) and the build's Kconfig output (<build>/.config -> CONFIG_*
# CMake variables, <build>/generated/autoconf.h force-included in every C file) and provides:
#   bertl14_module(<var> <rel>)        path of a module (modules/<rel>) or a clear error
#   bertl14_firmware(<target>)         board startup/linker/outputs (.elf .bin .hex .map)
#   bertl14_add_model(<target>)        convert CONFIG_BERTL14_MODEL_DIR and link the bertl14 library
#   bertl14_add_registry(<target>)     compile CONFIG_APP_REGISTRY_FILE (after bertl14_add_model), link the matcher
#   bertl14_add_freertos(<target> <config-dir>)  FreeRTOS kernel + the board's port, heap_4
# Everything is driven by `west build`, which passes BOARD, BOARD_DIR, BERTL14_ROOT,
# BERTL14_MODULES_DIR and the toolchain file.
cmake_minimum_required(VERSION 3.20)

foreach(_v BOARD BOARD_DIR BERTL14_ROOT)
  if(NOT DEFINED ${_v})
    message(FATAL_ERROR "${_v} is not set: build with `west build -b BOARD` (see README.md)")
  endif()
endforeach()

include(${BOARD_DIR}/board.cmake)
set(BERTL14_GENERATED_DIR ${CMAKE_BINARY_DIR}/generated)

# --- Kconfig: <build>/.config is the single source of truth ------------------------------------
set(BERTL14_DOT_CONFIG ${CMAKE_BINARY_DIR}/.config)
if(NOT EXISTS ${BERTL14_DOT_CONFIG})
  message(FATAL_ERROR "${BERTL14_DOT_CONFIG} missing: build with `west build`, which runs Kconfig first")
endif()
set_property(DIRECTORY APPEND PROPERTY CMAKE_CONFIGURE_DEPENDS ${BERTL14_DOT_CONFIG})
file(STRINGS ${BERTL14_DOT_CONFIG} _kconfig_lines REGEX "^CONFIG_[A-Za-z0-9_]+=")
foreach(_line IN LISTS _kconfig_lines)
  string(REGEX MATCH "^(CONFIG_[A-Za-z0-9_]+)=(.*)$" _ "${_line}")
  set(_name "${CMAKE_MATCH_1}")
  set(_value "${CMAKE_MATCH_2}")
  if(_value MATCHES "^\"(.*)\"$")
    set(_value "${CMAKE_MATCH_1}")
  endif()
  set(${_name} "${_value}")
endforeach()

# Given by west build for every configuration, used only by some (FreeRTOS, the model converter).
set(_bertl14_optional_inputs "${BERTL14_MODULES_DIR}" "${Python3_EXECUTABLE}")

# --- modules -------------------------------------------------------------------------------------
function(bertl14_module out rel)
  get_filename_component(_name ${rel} NAME)
  set(_dir "${BERTL14_MODULES_DIR}/${rel}")
  if(NOT BERTL14_MODULES_DIR OR NOT EXISTS "${_dir}")
    message(FATAL_ERROR "module ${_name} not found (looked in ${_dir}): run `west update`, or set "
                        "BERTL14_MODULES_DIR to a folder holding ${rel}")
  endif()
  set(${out} "${_dir}" PARENT_SCOPE)
endfunction()

include(${CMAKE_CURRENT_LIST_DIR}/firmware.cmake)
include(${CMAKE_CURRENT_LIST_DIR}/model.cmake)
include(${CMAKE_CURRENT_LIST_DIR}/registry.cmake)
include(${CMAKE_CURRENT_LIST_DIR}/freertos.cmake)
