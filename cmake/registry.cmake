# bertl14_add_registry(<target>): compile the registry named by CONFIG_APP_REGISTRY_FILE into <target>.
#
# Call after bertl14_add_model(<target>) (the table is compiled for that model's tokenizer options). The build runs
#   python -m bertl14_tools.registry <file> --model <build>/generated/model --out <build>/generated/registry
# whenever the file, the converted model or .config changes: it validates the file (a duplicate or an unknown area
# fails the build with `error: <file>:<line>: ...`), writes bertl14_registry.c through jinja2 (registry.render_c),
# bertl14_label_domains.c (label index -> domain bits from the model's intent_domains.json, the domain rule of
# app/src/intent.c; registry.render_label_domains_c) and registry.json (the words, the listing and the label
# domains, for `bertl14 validate`). Then links the matcher library
# `bertl14_registry` (bertl14/CMakeLists.txt) and defines BERTL14_APP_REGISTRY=1 for the application.
# An empty CONFIG_APP_REGISTRY_FILE adds nothing: no table, no matcher code.
function(bertl14_add_registry target)
  set(_file "${CONFIG_APP_REGISTRY_FILE}")
  if(_file STREQUAL "")
    return()
  endif()
  if(NOT IS_ABSOLUTE "${_file}")
    if(EXISTS "${CMAKE_CURRENT_SOURCE_DIR}/${_file}")
      set(_file "${CMAKE_CURRENT_SOURCE_DIR}/${_file}")
    else()
      set(_file "${BERTL14_ROOT}/${_file}")
    endif()
  endif()
  if(NOT EXISTS "${_file}")
    message(FATAL_ERROR "registry file ${CONFIG_APP_REGISTRY_FILE} (CONFIG_APP_REGISTRY_FILE) not found in "
                        "${CMAKE_CURRENT_SOURCE_DIR} or ${BERTL14_ROOT}: give a registry YAML (docs/registry.md), "
                        "or set it to \"\" for no registry")
  endif()
  if(NOT TARGET ${target}_model)
    message(FATAL_ERROR "bertl14_add_registry(${target}) needs bertl14_add_model(${target}) first")
  endif()
  if(Python3_EXECUTABLE)
    set(_python ${Python3_EXECUTABLE})
  else()
    find_program(_python python3 REQUIRED)
  endif()
  set(_model ${BERTL14_GENERATED_DIR}/model)
  set(_out ${BERTL14_GENERATED_DIR}/registry)
  # registry.json is rewritten on every run (the stamp); the C files only when their bytes change
  add_custom_command(
    OUTPUT ${_out}/registry.json
    BYPRODUCTS ${_out}/bertl14_registry.c ${_out}/bertl14_label_domains.c
    COMMAND ${_python} -m bertl14_tools.registry ${_file} --model ${_model} --out ${_out}
    DEPENDS ${_file} ${_model}/manifest.json ${BERTL14_DOT_CONFIG}
    COMMENT "bertl14 registry ${CONFIG_APP_REGISTRY_FILE}: validate, compile for the model's tokenizer"
    VERBATIM)
  add_custom_target(${target}_registry DEPENDS ${_out}/registry.json)
  add_dependencies(${target}_registry ${target}_model)
  add_dependencies(${target} ${target}_registry)
  target_sources(${target} PRIVATE ${_out}/bertl14_registry.c ${_out}/bertl14_label_domains.c)
  target_compile_definitions(${target} PRIVATE BERTL14_APP_REGISTRY=1)
  target_link_libraries(${target} PRIVATE bertl14_registry)
endfunction()
