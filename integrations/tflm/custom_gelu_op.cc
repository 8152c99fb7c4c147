// GeluApprox: tanh-approximation GELU as a TensorFlow Lite Micro custom operator.
//   GELU(x) ~= 0.5 x (1 + tanh(sqrt(2/pi) (x + 0.044715 x^3)))
// float32: the formula per element. int8: a 256-entry table (one entry per input code) built in
// Prepare from the same formula, so Eval is one load per element (as TFLite's own int8 GELU does).
// Self-contained on purpose: bertl14's own kernel (bertl14/src/kernels/bertl14_gelu_s16.c) is an
// integer Q12 version of the same formula for int16 activations; TFLM users need float32/int8.
#include "custom_gelu_op.h"

#include <cstdint>
#include <cstring>

#include "tensorflow/lite/c/common.h"
#include "tensorflow/lite/micro/kernels/kernel_util.h"
#include "tensorflow/lite/micro/micro_context.h"
#include "tensorflow/lite/micro/micro_log.h"

namespace tflite {
namespace {

constexpr float kSqrt2OverPi = 0.7978845608028654f;  // sqrt(2/pi)
constexpr float kCoeff = 0.044715f;
constexpr float kLog2e = 1.4426950408889634f;

// 2^t, t clamped to [-126, 126]: t = k + f with k = round(t), |f| <= 1/2; 2^f by a cubic fitted for
// relative error < 7.5e-5 (it moves GELU by < 3e-5), 2^k added to the exponent bits. No libm call:
// with newlib's tanhf the op measured 116 instructions an element and ~1 KB more flash on the M7.
inline float Exp2(float t) {
  t = __builtin_fminf(__builtin_fmaxf(t, -126.0f), 126.0f);  // VMAXNM/VMINNM on FPv5
  const float kRound = 12582912.0f;  // 1.5 * 2^23: adding it rounds to an integer in the low bits
  const float r = t + kRound;
  const float f = t - (r - kRound);
  int32_t k;
  std::memcpy(&k, &r, sizeof k);  // low bits: k + 0x400000 (the mantissa of kRound)
  float p = ((0.05517163f * f + 0.24261117f) * f + 0.69326097f) * f + 0.99992806f;
  int32_t bits;
  std::memcpy(&bits, &p, sizeof bits);
  bits += static_cast<int32_t>(static_cast<uint32_t>(k - 0x4B400000) << 23);
  std::memcpy(&p, &bits, sizeof p);
  return p;
}

// 0.5 x (1 + tanh(u)) with u = sqrt(2/pi) (x + 0.044715 x^3), evaluated as x / (1 + e^(-2u)):
// the same function (0.5 (1 + tanh(u)) = 1 / (1 + e^(-2u))), without tanh's cancellation near 0.
inline float GeluTanh(float x) {
  constexpr float kA = -2.0f * kSqrt2OverPi * kLog2e;  // -2u log2(e) = x (kA + kB x^2)
  constexpr float kB = kA * kCoeff;
  return x / (1.0f + Exp2(x * (kA + kB * (x * x))));
}

// node->user_data: nullptr for float32, the 256-byte table for int8 (indexed by input code + 128).
struct GeluInt8Table {
  int8_t lut[256];
};

// Elementwise float32 GELU; Eval runs it on the tensor, Prepare on the 256 int8 codes (one copy of
// the code in flash).
__attribute__((noinline)) void GeluFloat(const float* in, float* out, int count) {
  for (int i = 0; i < count; ++i) out[i] = GeluTanh(in[i]);
}

const char* TypeName(TfLiteType type) {
  switch (type) {
    case kTfLiteFloat32: return "float32";
    case kTfLiteFloat16: return "float16";
    case kTfLiteInt8: return "int8";
    case kTfLiteInt16: return "int16";
    default: return "this";
  }
}

TfLiteStatus CheckTensors(const TfLiteTensor* input, const TfLiteTensor* output) {
  if (input->type != kTfLiteFloat32 && input->type != kTfLiteInt8) {
    MicroPrintf("GeluApprox: %s input not supported: use float32 or int8 (float16: convert to "
                "float32 and back, docs/tflm.md)", TypeName(input->type));
    return kTfLiteError;
  }
  if (output->type != input->type) {
    MicroPrintf("GeluApprox: output type %s != input type %s", TypeName(output->type),
                TypeName(input->type));
    return kTfLiteError;
  }
  bool same_shape = input->dims->size == output->dims->size;
  for (int d = 0; same_shape && d < input->dims->size; ++d)
    same_shape = input->dims->data[d] == output->dims->data[d];
  if (!same_shape) {
    MicroPrintf("GeluApprox: output shape != input shape");
    return kTfLiteError;
  }
  if (input->type == kTfLiteInt8 && !(input->params.scale > 0.0f && output->params.scale > 0.0f)) {
    MicroPrintf("GeluApprox: int8 tensors need a per-tensor scale > 0");
    return kTfLiteError;
  }
  return kTfLiteOk;
}

// lut[q + 128] = clamp(round(GELU(s_in (q - z_in)) / s_out) + z_out, -128, 127), 32 codes at a time.
void BuildInt8Table(const TfLiteTensor* input, const TfLiteTensor* output, int8_t* lut) {
  const float inv_out_scale = 1.0f / output->params.scale;
  float x[32], y[32];
  for (int base = -128; base < 128; base += 32) {
    for (int j = 0; j < 32; ++j)
      x[j] = input->params.scale * static_cast<float>(base + j - input->params.zero_point);
    GeluFloat(x, y, 32);
    for (int j = 0; j < 32; ++j) {
      const float v = y[j] * inv_out_scale;  // round half away from zero, as lround
      const int32_t q = static_cast<int32_t>(v + (v < 0.0f ? -0.5f : 0.5f)) + output->params.zero_point;
      lut[base + j + 128] = static_cast<int8_t>(q < -128 ? -128 : (q > 127 ? 127 : q));
    }
  }
}

TfLiteStatus GeluPrepare(TfLiteContext* context, TfLiteNode* node) {
  node->user_data = nullptr;
  if (node->inputs->size != 1 || node->outputs->size != 1) {
    MicroPrintf("GeluApprox: needs 1 input and 1 output");
    return kTfLiteError;
  }
  MicroContext* micro_context = GetMicroContext(context);
  TfLiteTensor* input = micro_context->AllocateTempInputTensor(node, 0);
  TfLiteTensor* output = micro_context->AllocateTempOutputTensor(node, 0);
  TfLiteStatus status = input != nullptr && output != nullptr ? CheckTensors(input, output)
                                                              : kTfLiteError;
  if (status == kTfLiteOk && input->type == kTfLiteInt8) {
    auto* table = static_cast<GeluInt8Table*>(
        micro_context->AllocatePersistentBuffer(sizeof(GeluInt8Table)));
    if (table == nullptr) {
      MicroPrintf("GeluApprox: arena too small for the int8 table");
      status = kTfLiteError;
    } else {
      BuildInt8Table(input, output, table->lut);
      node->user_data = table;
    }
  }
  if (input != nullptr) micro_context->DeallocateTempTfLiteTensor(input);
  if (output != nullptr) micro_context->DeallocateTempTfLiteTensor(output);
  return status;
}

TfLiteStatus GeluEval(TfLiteContext* context, TfLiteNode* node) {
  const TfLiteEvalTensor* input = micro::GetEvalInput(context, node, 0);
  TfLiteEvalTensor* output = micro::GetEvalOutput(context, node, 0);
  int count = 1;
  for (int d = 0; d < input->dims->size; ++d) count *= input->dims->data[d];

  if (input->type == kTfLiteFloat32) {
    GeluFloat(micro::GetTensorData<float>(input), micro::GetTensorData<float>(output), count);
    return kTfLiteOk;
  }
  if (node->user_data == nullptr) return kTfLiteError;  // int8 without its table: Prepare failed
  const int8_t* lut = static_cast<const GeluInt8Table*>(node->user_data)->lut;
  const int8_t* in = micro::GetTensorData<int8_t>(input);
  int8_t* out = micro::GetTensorData<int8_t>(output);
  for (int i = 0; i < count; ++i) out[i] = lut[static_cast<uint8_t>(in[i] ^ 0x80)];
  return kTfLiteOk;
}

}  // namespace

const TFLMRegistration* Register_GELU_APPROX() {
  static const TFLMRegistration registration =
      micro::RegisterOp(nullptr, GeluPrepare, GeluEval);
  return &registration;
}

}  // namespace tflite
