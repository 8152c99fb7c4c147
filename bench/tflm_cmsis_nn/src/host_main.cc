// Host runner of the `tflm-cmsis-nn` engine: the board image's interpreter and kernels (tflm_engine.cc; CMSIS-NN's
// portable C paths) built for the PC, to check an export's answers on many sentences quickly.
//
//   tflm_cmsis_nn_run [--all] MODEL.tflite IDS.bin OUT.bin
//
// IDS.bin: k sentences of n token ids each (int32, n = the model's input length). OUT.bin receives, for each
// sentence, the raw bytes of every output tensor in order; with --all, of every tensor of the graph in order
// (intermediate ones kept: MicroInterpreter's preserve_all_tensors), to check each operator on its own. Prints
// "arena <bytes> sentences <k> bytes <per sentence>" and exits 0; a model TFLM rejects exits 1 (TFLM's messages and
// one "error: ..." line on stderr), a usage or file error 2.
#include <cstdio>
#include <cstring>
#include <vector>

#include "tflm_engine.h"

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

constexpr size_t kArenaBytes = 8u << 20;
alignas(16) uint8_t arena[kArenaBytes];

}  // namespace

size_t Bytes(const TfLiteEvalTensor* t) {
  size_t n = t->type == kTfLiteInt32 || t->type == kTfLiteFloat32 ? 4 : t->type == kTfLiteInt16 ? 2 : 1;
  for (int d = 0; d < t->dims->size; ++d) n *= static_cast<size_t>(t->dims->data[d]);
  return n;
}

int main(int argc, char** argv) {
  const bool all = argc > 1 && std::strcmp(argv[1], "--all") == 0;
  if (all) {
    --argc;
    ++argv;
  }
  if (argc != 4) {
    std::fprintf(stderr, "usage: %s [--all] MODEL.tflite IDS.bin OUT.bin\n", argv[0]);
    return 2;
  }
  std::vector<uint8_t> file, ids;
  if (!ReadFile(argv[1], file)) return Fail(2, "cannot read the model file");
  if (!ReadFile(argv[2], ids)) return Fail(2, "cannot read the ids file");
  std::vector<uint8_t> model(file.size() + 16);  // the flatbuffer 16-byte aligned, as in flash
  uint8_t* base = model.data() + (16 - reinterpret_cast<uintptr_t>(model.data()) % 16) % 16;
  std::memcpy(base, file.data(), file.size());
  const int st = tflm_engine::Load(base, file.size(), arena, sizeof arena, nullptr, all);
  if (st == 1) return Fail(1, "not a valid .tflite flatbuffer");
  if (st != 0) return Fail(1, "AllocateTensors() failed");
  TfLiteTensor* in = tflm_engine::Input();
  if (in->type != kTfLiteInt32 || in->bytes == 0 || ids.size() % in->bytes != 0) {
    return Fail(2, "the ids file is not a whole number of the model's int32 inputs");
  }
  const size_t k = ids.size() / in->bytes;
  FILE* out = std::fopen(argv[3], "wb");
  if (out == nullptr) return Fail(2, "cannot write the output file");
  size_t per = 0;
  for (size_t s = 0; s < k; ++s) {
    std::memcpy(in->data.raw, ids.data() + s * in->bytes, in->bytes);
    if (tflm_engine::Invoke() != kTfLiteOk) {
      std::fclose(out);
      return Fail(1, "Invoke() failed");
    }
    per = 0;
    const size_t count = all ? tflm_engine::TensorCount() : tflm_engine::OutputCount();
    for (size_t o = 0; o < count; ++o) {
      const void* data;
      size_t bytes;
      if (all) {
        const TfLiteEvalTensor* t = tflm_engine::Tensor(o);
        data = t->data.data;
        bytes = Bytes(t);
      } else {
        const TfLiteTensor* t = tflm_engine::Output(o);
        data = t->data.raw;
        bytes = t->bytes;
      }
      if (std::fwrite(data, 1, bytes, out) != bytes) {
        std::fclose(out);
        return Fail(2, "cannot write the output file");
      }
      per += bytes;
    }
  }
  if (std::fclose(out) != 0) return Fail(2, "cannot write the output file");
  std::printf("arena %zu sentences %zu bytes %zu\n", tflm_engine::ArenaUsed(), k, per);
  return 0;
}
