/* GeluApprox: the tanh approximation of GELU as a TensorFlow Lite Micro custom operator.
 *
 *   GELU(x) ~= 0.5 x (1 + tanh(sqrt(2/pi) (x + 0.044715 x^3)))
 *
 * Register it under the op name the model uses (case-sensitive):
 *
 *   #include "custom_gelu_op.h"
 *   static tflite::MicroMutableOpResolver<N> resolver;
 *   resolver.AddCustom("GeluApprox", tflite::Register_GELU_APPROX());
 *
 * Types: float32 -> float32, int8 -> int8 (per-tensor scale/zero point; a 256-entry table built in
 * Prepare, like TFLite's own int8 GELU). float16 models: convert the tensor to float32 before the op and
 * back after it (docs/tflm.md). The output shape must equal the input shape.
 * Without this declaration a project that registers the op fails to compile or link. */
#ifndef BERTL14_INTEGRATIONS_TFLM_CUSTOM_GELU_OP_H_
#define BERTL14_INTEGRATIONS_TFLM_CUSTOM_GELU_OP_H_

#include "tensorflow/lite/micro/micro_common.h"

namespace tflite {

/* The op name models must use for the custom operator. */
constexpr char kGeluApproxOpName[] = "GeluApprox";

/* Returns the registration (init/prepare/invoke) of the GeluApprox kernel: pass its address to
 * MicroMutableOpResolver::AddCustom("GeluApprox", ...). */
const TFLMRegistration* Register_GELU_APPROX();

}  // namespace tflite

#endif  // BERTL14_INTEGRATIONS_TFLM_CUSTOM_GELU_OP_H_
