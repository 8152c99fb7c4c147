#include "cmsis_nn_bench.h"

#include <cmath>
#include <cstdio>
#include <cstring>
#include <limits>

#include "Include/arm_nnfunctions.h"
#include "tensorflow/lite/kernels/internal/common.h"
#include "tensorflow/lite/kernels/internal/quantization_util.h"

extern "C" {
#include "platform.h"
#include "target_link.h"
}

namespace {

alignas(16) uint8_t pool[256 * 1024];

// Deterministic operands: the counts do not depend on the values, but saturation paths should look like real data.
template <typename T>
void Fill(T* p, int n, int lo, int hi, uint32_t seed) {
  for (int i = 0; i < n; ++i) {
    seed = seed * 1664525u + 1013904223u;
    p[i] = static_cast<T>(lo + static_cast<int>((seed >> 8) % static_cast<uint32_t>(hi - lo + 1)));
  }
}

struct Alloc {
  uint8_t* next = pool;
  template <typename T>
  T* take(int n) {
    uint8_t* p = next;
    next += (static_cast<size_t>(n) * sizeof(T) + 15u) & ~static_cast<size_t>(15);
    return next <= pool + sizeof pool ? reinterpret_cast<T*>(p) : nullptr;
  }
};

// counts as unsigned long: 32 bits on the M-profile targets (newlib-nano's printf has no 64-bit conversions);
// the repetitions are chosen to stay far below 2^32 instructions
void Report(void (*out)(const char*), const char* name, int reps, uint64_t instructions, uint64_t work) {
  char text[128];
  snprintf(text, sizeof text, "KERNEL %s %d %lu %lu\n", name, reps, static_cast<unsigned long>(instructions),
           static_cast<unsigned long>(work));
  out(text);
}

bool FullyConnected(bool s16, int batches, int in, int outc, int reps, void (*out)(const char*)) {
  Alloc a;
  int8_t* w = a.take<int8_t>(in * outc);
  int32_t* bias32 = a.take<int32_t>(outc);
  int64_t* bias64 = a.take<int64_t>(outc);
  void* x = s16 ? static_cast<void*>(a.take<int16_t>(batches * in)) : static_cast<void*>(a.take<int8_t>(batches * in));
  void* y = s16 ? static_cast<void*>(a.take<int16_t>(batches * outc))
                : static_cast<void*>(a.take<int8_t>(batches * outc));
  cmsis_nn_dims input_dims = {batches, 1, 1, in}, filter_dims = {in, 1, 1, outc}, bias_dims = {1, 1, 1, outc},
                output_dims = {batches, 1, 1, outc};
  const int32_t buf_size = s16 ? arm_fully_connected_s16_get_buffer_size(&filter_dims)
                               : arm_fully_connected_s8_get_buffer_size(&filter_dims);
  int32_t* buf = buf_size > 0 ? a.take<int32_t>(buf_size / 4 + 1) : nullptr;
  if (w == nullptr || bias32 == nullptr || bias64 == nullptr || x == nullptr || y == nullptr ||
      (buf_size > 0 && buf == nullptr)) {
    return false;
  }
  Fill(w, in * outc, -127, 127, 1);
  Fill(bias32, outc, -2000, 2000, 2);
  for (int i = 0; i < outc; ++i) bias64[i] = bias32[i];
  cmsis_nn_fc_params fc = {};
  fc.activation.min = s16 ? std::numeric_limits<int16_t>::min() : std::numeric_limits<int8_t>::min();
  fc.activation.max = s16 ? std::numeric_limits<int16_t>::max() : std::numeric_limits<int8_t>::max();
  cmsis_nn_per_tensor_quant_params q = {1 << 30, s16 ? -12 : -8};
  cmsis_nn_context ctx = {buf, buf_size};
  if (s16) {
    Fill(static_cast<int16_t*>(x), batches * in, -3000, 3000, 3);
  } else {
    Fill(static_cast<int8_t*>(x), batches * in, -128, 127, 3);
    fc.input_offset = 5;  // an asymmetric activation (zero point -5), as TFLite's int8 activations are
    fc.output_offset = -3;
    if (buf != nullptr) {  // kernel sums, where the target wants them (TFLM: once, in Prepare)
      arm_vector_sum_s8(buf, in, outc, w, fc.input_offset, 0, bias32);
    }
  }
  const uint32_t t0 = platform_cycles();
  for (int r = 0; r < reps; ++r) {
    if (s16) {
      arm_fully_connected_s16(&ctx, &fc, &q, &input_dims, static_cast<int16_t*>(x), &filter_dims, w, &bias_dims,
                              bias64, &output_dims, static_cast<int16_t*>(y));
    } else {
      arm_fully_connected_s8(&ctx, &fc, &q, &input_dims, static_cast<int8_t*>(x), &filter_dims, w, &bias_dims,
                             bias32, &output_dims, static_cast<int8_t*>(y));
    }
  }
  const uint64_t count = target_instructions(platform_cycles() - t0);
  char name[48];
  snprintf(name, sizeof name, "%s_%dx%dx%d", s16 ? "fc_s16" : "fc_s8", batches, in, outc);
  Report(out, name, reps, count, static_cast<uint64_t>(batches) * in * outc);
  return true;
}

bool Softmax(bool s16, int rows, int n, int reps, void (*out)(const char*)) {
  Alloc a;
  constexpr int kLut = tflite::LUTSize<int16_t>();
  int16_t* exp_lut = a.take<int16_t>(kLut);
  int16_t* one_lut = a.take<int16_t>(kLut);
  void* x = s16 ? static_cast<void*>(a.take<int16_t>(rows * n)) : static_cast<void*>(a.take<int8_t>(rows * n));
  void* y = s16 ? static_cast<void*>(a.take<int16_t>(rows * n)) : static_cast<void*>(a.take<int8_t>(rows * n));
  if (exp_lut == nullptr || one_lut == nullptr || x == nullptr || y == nullptr) {
    return false;
  }
  int32_t mult = 0, shift = 0, diff_min = 0;
  cmsis_nn_softmax_lut_s16 luts = {exp_lut, one_lut};
  if (s16) {  // TFLM's Prepare (softmax_common.cc): scores of scale 8/32768, the tables over [-10, 0] and [0, 1]
    Fill(static_cast<int16_t*>(x), rows * n, -32768, 32767, 4);
    const int32_t range = std::numeric_limits<int16_t>::max() - std::numeric_limits<int16_t>::min();
    tflite::LUTPopulate<int16_t>(10.0f / range, std::numeric_limits<int16_t>::max(), 2.0f / range, 0,
                                 [](float v) { return std::exp(v); }, exp_lut);
    tflite::LUTPopulate<int16_t>(1.0f / range, std::numeric_limits<int16_t>::min(), 2.0f / range, 0,
                                 [](float v) { return 1.0f / (1.0f + v); }, one_lut);
    int left = 0;
    tflite::QuantizeMultiplier(8.0 / 32768.0 / (10.0 / 65535.0), &mult, &left);
    shift = left;
  } else {  // scores of scale 1/16 (+-8), beta 1
    Fill(static_cast<int8_t*>(x), rows * n, -128, 127, 4);
    int left = 0;
    tflite::PreprocessSoftmaxScaling(1.0, 1.0 / 16.0, 5, &mult, &left);
    shift = left;
    diff_min = -tflite::CalculateInputRadius(5, left);
  }
  const uint32_t t0 = platform_cycles();
  for (int r = 0; r < reps; ++r) {
    if (s16) {
      arm_softmax_s16(static_cast<int16_t*>(x), rows, n, mult, shift, &luts, static_cast<int16_t*>(y));
    } else {
      arm_softmax_s8(static_cast<int8_t*>(x), rows, n, mult, shift, diff_min, static_cast<int8_t*>(y));
    }
  }
  const uint64_t count = target_instructions(platform_cycles() - t0);
  char name[48];
  snprintf(name, sizeof name, "%s_%d", s16 ? "softmax_s16" : "softmax_s8", n);
  Report(out, name, reps, count, static_cast<uint64_t>(rows) * n);
  return true;
}

}  // namespace

void cmsis_nn_bench(const char* args, void (*out)(const char*)) {
  char kernel[16] = {0};
  int v[4] = {0, 0, 0, 0};
  const int got = sscanf(args, "%15s %d %d %d %d", kernel, &v[0], &v[1], &v[2], &v[3]);
  bool ok = false;
  if ((!strcmp(kernel, "fc_s8") || !strcmp(kernel, "fc_s16")) && got == 5 && v[0] > 0 && v[1] > 0 && v[2] > 0 &&
      v[3] > 0) {
    ok = FullyConnected(!strcmp(kernel, "fc_s16"), v[0], v[1], v[2], v[3], out);
  } else if ((!strcmp(kernel, "softmax_s8") || !strcmp(kernel, "softmax_s16")) && got == 4 && v[0] > 0 &&
             v[1] > 0 && v[2] > 0) {
    ok = Softmax(!strcmp(kernel, "softmax_s16"), v[0], v[1], v[2], out);
  }
  if (!ok) {
    out("ERR unknown kernel or shape\n");
  }
}
