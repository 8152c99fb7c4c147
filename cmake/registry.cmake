# bertl14_add_registry(<target>): compile the registry named by CONFIG_APP_REGISTRY_FILE into <target>.
#
# Call after bertl14_add_model(<target>) (the table is compiled for that model's tokenizer options). The build runs
#   python -m bertl14_tools.registry.names <file> --model <build>/generated/model --out <build>/generated/registry
# whenever the file, the converted model or .config changes: it validates the file (a duplicate or an unknown area
# fails the build with `error: <file>:<line>: ...`), writes bertl14_registry.c through jinja2 (registry.render_c),
# bertl14_label_domains.c (label index -> domain bits from the model's intent_domains.json, the domain rule of
# app/src/intent.c; registry.render_label_domains_c) and registry.json (the words, the listing and the label
# domains, for `bertl14 validate`). Then links the matcher library
# `bertl14_registry` (bertl14/CMakeLists.txt) and defines BERTL14_APP_REGISTRY=1 for the application.
# An empty CONFIG_APP_REGISTRY_FILE adds nothing: no table, no matcher code.
#
# The matcher writes [NAME], [AREA], [FLOOR] in place of known names, so the registry is compiled in only for a model
# trained on such sentences (`bertl14 dataset --mask-names`): its folder says so in training.json (or, for a
# `bertl14 convert` output, manifest.json) as "name_placeholders": true. For any other model the build fails and says
# what to do, unless the registry is the application's example (CONFIG_APP_REGISTRY_EXAMPLE_FILE, the default), which
# is then left out with a notice.
function(bertl14_model_name_placeholders model_dir out)
  set(_value OFF)
  foreach(_meta training.json manifest.json)
    if(EXISTS "${model_dir}/${_meta}")
      file(READ "${model_dir}/${_meta}" _json)
      string(JSON _found ERROR_VARIABLE _missing GET "${_json}" name_placeholders)
      if(NOT _missing)
        set(_value "${_found}")
        break()
      endif()
    endif()
  endforeach()
  set(${out} "${_value}" PARENT_SCOPE)
endfunction()

function(bertl14_add_registry target)
  set(_file "${CONFIG_APP_REGISTRY_FILE}")
  if(_file STREQUAL "")
    return()
  endif()
  get_target_property(_model_dir ${target} BERTL14_MODEL_SOURCE)
  if(_model_dir)
    bertl14_model_name_placeholders("${_model_dir}" _placeholders)
    if(NOT _placeholders)
      string(CONCAT _why "the model ${CONFIG_BERTL14_MODEL_DIR} was not trained with the registry's placeholders "
             "([NAME], [AREA], [FLOOR]: no \"name_placeholders\": true in its training.json or manifest.json), so "
             "the names the registry replaces would reach it as words it never learnt")
      if(_file STREQUAL "${CONFIG_APP_REGISTRY_EXAMPLE_FILE}")
        message(NOTICE "registry: the example registry ${_file} is left out: ${_why}. Train the model with "
                       "`bertl14 dataset --mask-names 0.5` for a registry of your own names.")
        return()
      endif()
      message(FATAL_ERROR "CONFIG_APP_REGISTRY_FILE=${_file}: ${_why}: build with CONFIG_APP_REGISTRY_FILE=\"\", or "
                          "train the model on data made with `bertl14 dataset --mask-names 0.5` (models/README.md)")
    endif()
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
    COMMAND ${_python} -m bertl14_tools.registry.names ${_file} --model ${_model} --out ${_out}
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
