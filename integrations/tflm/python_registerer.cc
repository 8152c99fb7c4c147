// Host-only glue: the tflite-micro Python runtime looks up this function by name (dlsym) when the
// model is loaded with custom_op_registerers=["bertl14_register_gelu_approx"], and calls it with its
// resolver. Not needed on a device (there, call AddCustom yourself; see custom_gelu_op.h).
#include "custom_gelu_op.h"
#include "python/tflite_micro/python_ops_resolver.h"

extern "C" __attribute__((visibility("default"))) bool bertl14_register_gelu_approx(
    tflite::PythonOpsResolver* resolver) {
  return resolver->AddCustom(tflite::kGeluApproxOpName, tflite::Register_GELU_APPROX()) ==
         kTfLiteOk;
}
