// GeluApprox: tanh-approximation GELU as a TensorFlow Lite Micro custom operator (seed 000).
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

// 2^t for t in [-126, 126]: t = k + f with k = round(t), |f| <= 1/2; 2^f by its degree-5 Taylor
// polynomial (relative error < 2.5e-6), 2^k added to the exponent bits. No libm call: newlib's tanhf
// costs ~115 instructions and ~1 KB of flash on the M7, this ~20 instructions and no table.
inline float Exp2(float t) {
  t = t > 126.0f ? 126.0f : (t < -126.0f ? -126.0f : t);
  const float kRound = 12582912.0f;  // 1.5 * 2^23: adding it rounds to an integer in the low bits
  const float r = t + kRound;
  int32_t k;
  std::memcpy(&k, &r, sizeof k);
  k -= 0x4B400000;  // the bits of kRound
  const float f = t - (r - kRound);
  float p = 1.3333558e-3f;  // ln2^5/5!
  p = p * f + 9.6181291e-3f;
  p = p * f + 5.5504109e-2f;
  p = p * f + 2.4022651e-1f;
  p = p * f + 6.9314718e-1f;
  p = p * f + 1.0f;
  int32_t bits;
  std::memcpy(&bits, &p, sizeof bits);
  bits += k * (1 << 23);
  std::memcpy(&p, &bits, sizeof p);
  return p;
}

// 0.5 x (1 + tanh(u)) with u = sqrt(2/pi) (x + 0.044715 x^3), evaluated as x / (1 + e^(-2u)):
// the same function (0.5 (1 + tanh(u)) = 1 / (1 + e^(-2u))), without tanh's cancellation near 0.
inline float GeluTanh(float x) {
  const float minus_2u_log2e = x * (-2.0f * kSqrt2OverPi * kLog2e) * (1.0f + kCoeff * x * x);
  return x / (1.0f + Exp2(minus_2u_log2e));
}

// node->user_data: nullptr for float32, the 256-byte table for int8 (indexed by input code + 128).
struct GeluInt8Table {
  int8_t lut[256];
};

const char* TypeName(TfLiteType type) {
  switch (type) {
    case kTfLiteFloat32: return "float32";
    case kTfLiteFloat16: return "float16";
    case kTfLiteInt8: return "int8";
    case kTfLiteInt16: return "int16";
    case kTfLiteUInt8: return "uint8";
    case kTfLiteInt32: return "int32";
    default: return "other";
  }
}

TfLiteStatus CheckTensors(const TfLiteTensor* input, const TfLiteTensor* output) {
  if (input->type != kTfLiteFloat32 && input->type != kTfLiteInt8) {
    MicroPrintf("GeluApprox: input type %s (%d) is not supported; use float32 or int8 "
                "(float16: convert to float32 before the op and back after it)",
                TypeName(input->type), input->type);
    return kTfLiteError;
  }
  if (output->type != input->type) {
    MicroPrintf("GeluApprox: output type %s (%d) must equal the input type %s",
                TypeName(output->type), output->type, TypeName(input->type));
    return kTfLiteError;
  }
  if (input->dims->size != output->dims->size) {
    MicroPrintf("GeluApprox: output rank %d must equal the input rank %d",
                output->dims->size, input->dims->size);
    return kTfLiteError;
  }
  for (int d = 0; d < input->dims->size; ++d) {
    if (input->dims->data[d] != output->dims->data[d]) {
      MicroPrintf("GeluApprox: output dim %d is %d, the input's is %d (shapes must match)", d,
                  output->dims->data[d], input->dims->data[d]);
      return kTfLiteError;
    }
  }
  if (input->type == kTfLiteInt8 &&
      !(input->params.scale > 0.0f && output->params.scale > 0.0f)) {
    MicroPrintf("GeluApprox: int8 tensors need a per-tensor scale > 0 (input %f, output %f)",
                static_cast<double>(input->params.scale),
                static_cast<double>(output->params.scale));
    return kTfLiteError;
  }
  return kTfLiteOk;
}

// lut[q + 128] = clamp(round(GELU(s_in (q - z_in)) / s_out) + z_out, -128, 127)
void BuildInt8Table(const TfLiteTensor* input, const TfLiteTensor* output, int8_t* lut) {
  const float inv_out_scale = 1.0f / output->params.scale;
  for (int q = -128; q <= 127; ++q) {
    const float x = input->params.scale * static_cast<float>(q - input->params.zero_point);
    const float v = GeluTanh(x) * inv_out_scale;  // round half away from zero, as lround
    const int32_t y = static_cast<int32_t>(v + (v < 0.0f ? -0.5f : 0.5f)) + output->params.zero_point;
    lut[q + 128] = static_cast<int8_t>(y < -128 ? -128 : (y > 127 ? 127 : y));
  }
}

TfLiteStatus GeluPrepare(TfLiteContext* context, TfLiteNode* node) {
  if (node->inputs->size != 1 || node->outputs->size != 1) {
    MicroPrintf("GeluApprox: expects 1 input and 1 output, got %d and %d", node->inputs->size,
                node->outputs->size);
    return kTfLiteError;
  }
  MicroContext* micro_context = GetMicroContext(context);
  TfLiteTensor* input = micro_context->AllocateTempInputTensor(node, 0);
  TfLiteTensor* output = micro_context->AllocateTempOutputTensor(node, 0);
  TfLiteStatus status = kTfLiteError;
  if (input == nullptr || output == nullptr) {
    MicroPrintf("GeluApprox: missing input or output tensor");
  } else {
    status = CheckTensors(input, output);
  }
  node->user_data = nullptr;
  if (status == kTfLiteOk && input->type == kTfLiteInt8) {
    auto* table = static_cast<GeluInt8Table*>(
        micro_context->AllocatePersistentBuffer(sizeof(GeluInt8Table)));
    if (table == nullptr) {
      MicroPrintf("GeluApprox: no arena space for the 256-byte int8 table");
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
    const float* in = micro::GetTensorData<float>(input);
    float* out = micro::GetTensorData<float>(output);
    for (int i = 0; i < count; ++i) out[i] = GeluTanh(in[i]);
    return kTfLiteOk;
  }
  if (input->type == kTfLiteInt8 && node->user_data != nullptr) {
    const int8_t* lut = static_cast<const GeluInt8Table*>(node->user_data)->lut;
    const int8_t* in = micro::GetTensorData<int8_t>(input);
    int8_t* out = micro::GetTensorData<int8_t>(output);
    for (int i = 0; i < count; ++i) out[i] = lut[static_cast<uint8_t>(in[i] ^ 0x80)];
    return kTfLiteOk;
  }
  MicroPrintf("GeluApprox: Eval on type %s without a successful Prepare", TypeName(input->type));
  return kTfLiteError;
}

}  // namespace

const TFLMRegistration* Register_GELU_APPROX() {
  static const TFLMRegistration registration =
      micro::RegisterOp(nullptr, GeluPrepare, GeluEval);
  return &registration;
}

}  // namespace tflite
