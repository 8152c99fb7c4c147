// Host runner: one .tflite model through the TFLM interpreter (built from the pinned sources by
// integrations/tflm/tflm_host.py) with GeluApprox registered, or without it (--no-op).
//
//   gelu_tflm_run [--no-op] MODEL.tflite INPUT.bin OUTPUT.bin
//
// INPUT.bin holds the raw bytes of input tensor 0 (exactly its size); OUTPUT.bin receives the raw bytes of
// output tensor 0. On success it prints "output <TYPE> <d0>x<d1>..." (TfLiteTypeGetName, the output shape)
// and exits 0. A model TFLM rejects (a bad flatbuffer, an unknown op, a failed Prepare or Invoke) exits 1
// with TFLM's own messages and one "error: ..." line on stderr; a usage or file error exits 2.
#include <cstdio>
#include <cstring>
#include <vector>

#include "custom_gelu_op.h"
#include "tensorflow/lite/micro/micro_interpreter.h"
#include "tensorflow/lite/micro/micro_mutable_op_resolver.h"
#include "tensorflow/lite/schema/schema_generated.h"

namespace {

bool ReadFile(const char* path, std::vector<uint8_t>& out) {
  FILE* f = std::fopen(path, "rb");
  if (f == nullptr) return false;
  uint8_t chunk[65536];
  size_t n;
  while ((n = std::fread(chunk, 1, sizeof chunk, f)) > 0) out.insert(out.end(), chunk, chunk + n);
  const bool ok = !std::ferror(f);
  std::fclose(f);
  return ok;
}

int Fail(int code, const char* what) {
  std::fprintf(stderr, "error: %s\n", what);
  return code;
}

}  // namespace

int main(int argc, char** argv) {
  int a = 1;
  const bool with_op = !(argc > 1 && std::strcmp(argv[1], "--no-op") == 0);
  if (!with_op) a = 2;
  if (argc - a != 3) {
    std::fprintf(stderr, "usage: %s [--no-op] MODEL.tflite INPUT.bin OUTPUT.bin\n", argv[0]);
    return 2;
  }
  std::vector<uint8_t> model, input;
  if (!ReadFile(argv[a], model)) return Fail(2, "cannot read the model file");
  if (!ReadFile(argv[a + 1], input)) return Fail(2, "cannot read the input file");

  flatbuffers::Verifier verifier(model.data(), model.size());
  if (!tflite::VerifyModelBuffer(verifier)) return Fail(1, "not a valid .tflite flatbuffer");

  static tflite::MicroMutableOpResolver<1> resolver;
  if (with_op) resolver.AddCustom(tflite::kGeluApproxOpName, tflite::Register_GELU_APPROX());

  // arena: input and output tensors (at most 4 bytes an element each way), the op's table, bookkeeping
  std::vector<uint8_t> arena(16384 + 8 * input.size() + 16);
  uint8_t* base = arena.data() + (16 - reinterpret_cast<uintptr_t>(arena.data()) % 16) % 16;
  tflite::MicroInterpreter interpreter(tflite::GetModel(model.data()), resolver, base, arena.size() - 16);
  if (interpreter.AllocateTensors() != kTfLiteOk) return Fail(1, "AllocateTensors() failed");

  TfLiteTensor* in = interpreter.input(0);
  if (in->bytes != input.size()) {
    std::fprintf(stderr, "error: the input file has %zu bytes, the model's input tensor %zu\n", input.size(),
                 in->bytes);
    return 2;
  }
  std::memcpy(in->data.raw, input.data(), input.size());
  if (interpreter.Invoke() != kTfLiteOk) return Fail(1, "Invoke() failed");

  const TfLiteTensor* out = interpreter.output(0);
  FILE* f = std::fopen(argv[a + 2], "wb");
  if (f == nullptr || std::fwrite(out->data.raw, 1, out->bytes, f) != out->bytes || std::fclose(f) != 0)
    return Fail(2, "cannot write the output file");
  std::printf("output %s ", TfLiteTypeGetName(out->type));
  for (int i = 0; i < out->dims->size; ++i) std::printf(i ? "x%d" : "%d", out->dims->data[i]);
  std::printf("\n");
  return 0;
}
