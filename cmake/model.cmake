# bertl14_add_model(<target>): compile the model named by CONFIG_BERTL14_MODEL_DIR into <target>.
#
# An application that runs inference sets BERTL14_APP_USES_MODEL ON and calls this. The build runs
#   bertl14 convert --model <CONFIG_BERTL14_MODEL_DIR> --out <build>/generated/model
#                   --max-seq-len <CONFIG_BERTL14_MAX_SEQ_LEN> --prune-heads <CONFIG_BERTL14_PRUNE_HEADS>
#                   --embedding int8|int4 --weights int16|int8 --target-arch <CONFIG_BOARD_TARGET_ARCH> --board <BOARD>
# whenever .config or the model folder changes, so .config stays the single source of truth (--board: a model
# whose data or work buffer cannot fit the board's memory stops the build here, with the numbers); then
# adds the generated bertl14_weights.c / bertl14_vocab.c and links the `bertl14` library target
# (bertl14/CMakeLists.txt), compiled with the same CPU flags through the toolchain file.
function(bertl14_add_model target)
  set(_model "${CONFIG_BERTL14_MODEL_DIR}")
  if(NOT IS_ABSOLUTE "${_model}")
    set(_model "${BERTL14_ROOT}/${_model}")
  endif()
  if(NOT EXISTS "${_model}")
    message(FATAL_ERROR "model folder ${_model} (CONFIG_BERTL14_MODEL_DIR) not found: set "
                        "CONFIG_BERTL14_MODEL_DIR to a Hugging Face BERT folder or a `bertl14 convert` output")
  endif()
  # the model's own folder, for the steps that read its metadata (bertl14_add_registry)
  set_target_properties(${target} PROPERTIES BERTL14_MODEL_SOURCE "${_model}")
  if(CONFIG_BERTL14_QUANTIZE_EMBEDDING_INT4)
    set(_emb int4)
  else()
    set(_emb int8)
  endif()
  if(CONFIG_BERTL14_WEIGHTS_INT8)
    set(_weights int8)
  else()
    set(_weights int16)
  endif()
  # The converter runs in the Python that runs west (Python3_EXECUTABLE), so a virtualenv's
  # editable install is the one used.
  if(Python3_EXECUTABLE)
    set(_convert ${Python3_EXECUTABLE} -m bertl14_tools.cli)
  else()
    find_program(BERTL14_CLI bertl14 REQUIRED)
    set(_convert ${BERTL14_CLI})
  endif()
  set(_out ${BERTL14_GENERATED_DIR}/model)
  set(_board_arg)
  if(BOARD)
    set(_board_arg --board ${BOARD})
  endif()
  file(GLOB_RECURSE _model_files CONFIGURE_DEPENDS "${_model}/*")
  # The converter rewrites a generated file only when its bytes change (so an unchanged model does not
  # recompile) and touches manifest.json on every run: manifest.json is the step's stamp.
  add_custom_command(
    OUTPUT ${_out}/manifest.json
    BYPRODUCTS ${_out}/bertl14_weights.c ${_out}/bertl14_vocab.c ${_out}/bertl14_config.h ${_out}/bertl14_slot_table.c
               ${_out}/bertl14_label_slots.c
    COMMAND ${_convert} convert --model ${_model} --out ${_out}
            --max-seq-len ${CONFIG_BERTL14_MAX_SEQ_LEN} --prune-heads ${CONFIG_BERTL14_PRUNE_HEADS}
            --embedding ${_emb} --weights ${_weights} --target-arch ${CONFIG_BOARD_TARGET_ARCH} ${_board_arg}
    # the work-buffer plan's mirror: bertl14_config.h's BERTL14_WORK_BUFFER_SIZE follows the library's plan;
    # convert.py and hf.py: what the folder carries (intent_domains.json, read by the registry step) follows them
    DEPENDS ${_model_files} ${BERTL14_DOT_CONFIG} ${BERTL14_ROOT}/scripts/bertl14_tools/model/workbuf.py
            ${BERTL14_ROOT}/scripts/bertl14_tools/model/convert.py ${BERTL14_ROOT}/scripts/bertl14_tools/model/hf.py
    COMMENT "bertl14 convert ${CONFIG_BERTL14_MODEL_DIR}: max_seq_len ${CONFIG_BERTL14_MAX_SEQ_LEN}, prune ${CONFIG_BERTL14_PRUNE_HEADS} heads, ${_emb} embeddings, ${_weights} weights, ${CONFIG_BOARD_TARGET_ARCH}"
    VERBATIM)
  # the step runs before any of the target's sources compile (they may include bertl14_config.h)
  add_custom_target(${target}_model DEPENDS ${_out}/manifest.json)
  add_dependencies(${target} ${target}_model)
  if(CONFIG_BERTL14_WORK_BUFFER_SIZE GREATER 0)
    # A fixed work buffer smaller than the model needs fails the build with the size it needs (not bertl14_init
    # on the device). Its own stamp, written only when the check passes, so a failed check runs again.
    if(Python3_EXECUTABLE)
      set(_python ${Python3_EXECUTABLE})
    else()
      find_program(_python python3 REQUIRED)
    endif()
    add_custom_command(
      OUTPUT ${_out}/work_buffer.checked
      COMMAND ${_python} -m bertl14_tools.model.workbuf check ${_out}/manifest.json ${CONFIG_BERTL14_WORK_BUFFER_SIZE}
              ${_out}/work_buffer.checked
      DEPENDS ${_out}/manifest.json ${BERTL14_DOT_CONFIG}
      COMMENT "CONFIG_BERTL14_WORK_BUFFER_SIZE=${CONFIG_BERTL14_WORK_BUFFER_SIZE} against the model's work buffer"
      VERBATIM)
    add_custom_target(${target}_work_buffer DEPENDS ${_out}/work_buffer.checked)
    add_dependencies(${target}_work_buffer ${target}_model)
    add_dependencies(${target} ${target}_work_buffer)
  endif()
  # bertl14_slot_table.c: the model's slot value table, kept by the linker only when the app reads slot values
  target_sources(${target} PRIVATE ${_out}/bertl14_weights.c ${_out}/bertl14_vocab.c ${_out}/bertl14_slot_table.c
                                   ${_out}/bertl14_label_slots.c)
  target_include_directories(${target} PRIVATE ${_out})
  if(NOT TARGET bertl14)
    # bertl14/CMakeLists.txt's options, from Kconfig (the DSP and Helium kernels are bit-identical to the C ones)
    if(CONFIG_BERTL14_USE_DSP)
      set(BERTL14_USE_DSP ON)
    else()
      set(BERTL14_USE_DSP OFF)
    endif()
    if(CONFIG_BERTL14_USE_MVE)
      set(BERTL14_USE_MVE ON)
    else()
      set(BERTL14_USE_MVE OFF)
    endif()
    if(CONFIG_BERTL14_WEIGHTS_INT8)
      set(BERTL14_WEIGHTS_INT8 ON)
    else()
      set(BERTL14_WEIGHTS_INT8 OFF)
    endif()
    add_subdirectory(${BERTL14_ROOT}/bertl14 ${CMAKE_BINARY_DIR}/bertl14)
  endif()
  target_link_libraries(${target} PRIVATE bertl14 bertl14_slots)
endfunction()
