/*
 * The TFLM side of the `tflm-cmsis-nn` engine of `bertl14 bench`: one MicroInterpreter with the operators an
 * int8 BERT export uses (scripts/bertl14_tools/model/tflite_export.py), the CMSIS-NN kernels where TFLM has them
 * (FULLY_CONNECTED, BATCH_MATMUL, SOFTMAX, ADD, MUL, TRANSPOSE), TFLM's reference kernels for the rest, and the
 * GeluApprox custom operator (integrations/tflm). Shared by the board image (main.cc) and the host runner
 * (host_main.cc), so both run the same kernels.
 */
#ifndef TFLM_ENGINE_H
#define TFLM_ENGINE_H

#include <cstddef>
#include <cstdint>

#include "tensorflow/lite/c/common.h"
#include "tensorflow/lite/micro/micro_profiler_interface.h"

namespace tflm_engine {

/* Parses `model` (a .tflite flatbuffer, 16-byte aligned) and allocates its tensors in `arena`, replacing the
 * interpreter of the previous model; `profiler` (may be null) hears of every operator Invoke runs;
 * `preserve_all_tensors` keeps every intermediate tensor readable after Invoke (Tensor()). 0 on success;
 * 1 not a valid flatbuffer, 2 AllocateTensors failed (TFLM says why through its log). */
int Load(const uint8_t* model, size_t model_size, uint8_t* arena, size_t arena_size,
         tflite::MicroProfilerInterface* profiler = nullptr, bool preserve_all_tensors = false);

/* Arena bytes the loaded model takes (MicroInterpreter::arena_used_bytes). */
size_t ArenaUsed();

TfLiteTensor* Input();
size_t OutputCount();
TfLiteTensor* Output(size_t i);

/* One inference of the loaded model: 0 ok, else TFLM's status. */
int Invoke();

/* The model's tensors (graph order) after Invoke: every one with preserve_all_tensors, else inputs, outputs and
 * constants only. */
size_t TensorCount();
TfLiteEvalTensor* Tensor(size_t i);

}  // namespace tflm_engine

#endif
