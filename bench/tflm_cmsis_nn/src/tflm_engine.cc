#include "tflm_engine.h"

#include <new>

#include "custom_gelu_op.h"
#include "tensorflow/lite/micro/micro_interpreter.h"
#include "tensorflow/lite/micro/micro_mutable_op_resolver.h"
#include "tensorflow/lite/schema/schema_generated.h"

namespace tflm_engine {
namespace {

constexpr int kOps = 13;
using Resolver = tflite::MicroMutableOpResolver<kOps>;

Resolver& Ops() {
  static Resolver r;
  static bool ready = false;
  if (!ready) {
    r.AddFullyConnected();
    r.AddBatchMatMul();
    r.AddSoftmax();
    r.AddAdd();
    r.AddMul();
    r.AddSub();
    r.AddTranspose();
    r.AddReshape();
    r.AddGather();
    r.AddMean();
    r.AddRsqrt();
    r.AddTanh();
    r.AddCustom(tflite::kGeluApproxOpName, tflite::Register_GELU_APPROX());
    ready = true;
  }
  return r;
}

alignas(tflite::MicroInterpreter) uint8_t storage[sizeof(tflite::MicroInterpreter)];
tflite::MicroInterpreter* interpreter = nullptr;
const uint8_t* model_data = nullptr;

}  // namespace

int Load(const uint8_t* model, size_t model_size, uint8_t* arena, size_t arena_size,
         tflite::MicroProfilerInterface* profiler, bool preserve_all_tensors) {
  if (interpreter != nullptr) {
    interpreter->~MicroInterpreter();
    interpreter = nullptr;
  }
  flatbuffers::Verifier verifier(model, model_size);
  if (!tflite::VerifyModelBuffer(verifier)) {
    return 1;
  }
  model_data = model;
  interpreter = new (storage) tflite::MicroInterpreter(tflite::GetModel(model), Ops(), arena, arena_size,
                                                      nullptr, profiler, preserve_all_tensors);
  return interpreter->AllocateTensors() == kTfLiteOk ? 0 : 2;
}

size_t ArenaUsed() { return interpreter->arena_used_bytes(); }
TfLiteTensor* Input() { return interpreter->input(0); }
size_t OutputCount() { return interpreter->outputs_size(); }
TfLiteTensor* Output(size_t i) { return interpreter->output(i); }
int Invoke() { return interpreter->Invoke(); }
size_t TensorCount() { return tflite::GetModel(model_data)->subgraphs()->Get(0)->tensors()->size(); }
TfLiteEvalTensor* Tensor(size_t i) { return interpreter->GetTensor(static_cast<int>(i)); }

}  // namespace tflm_engine
