// TFLM image for the emulated Cortex-M7 (mps2_an500): runs the one-node GeluApprox models (float32 and
// int8, 32 x 512 = a BERT-size FFN activation) and prints the TIMER0 ticks of each Invoke.
// Built twice by integrations/tflm/tflm_m7.py: -DWITH_GELU_APPROX=1 (op registered) and =0 (the same
// image without the op), so arm-none-eabi-size of the two gives the flash the op adds.
//   output: "<name> status=<AllocateTensors/Invoke status> ticks=<TIMER0 ticks of Invoke> n=<elements>
//            sum=<checksum of the output>" per model, then "END".
#include <cstdarg>
#include <cstdint>
#include <cstdio>
#include <cstring>

#include "tensorflow/lite/micro/micro_interpreter.h"
#include "tensorflow/lite/micro/micro_mutable_op_resolver.h"
#include "tensorflow/lite/schema/schema_generated.h"
#if WITH_GELU_APPROX
#include "custom_gelu_op.h"
#endif

extern "C" {
#include "cmsdk.h"
#include "platform.h"
#include "ringbuf.h"
ringbuf_t app_rx_ring;
void app_rx_notify_from_isr(void) {}
void console_puts(const char* s) { platform_console_write(s, strlen(s)); }
}

extern const unsigned char gelu_f32_model[];
extern const unsigned char gelu_i8_model[];

// TFLM's log goes to the UART (instead of debug_log.cc's stderr).
extern "C" int DebugVsnprintf(char* buffer, size_t size, const char* format, va_list args) {
  return vsnprintf(buffer, size, format, args);
}
extern "C" void DebugLog(const char* format, va_list args) {
  char line[160];
  vsnprintf(line, sizeof line, format, args);
  console_puts(line);
}

namespace {
constexpr int kElements = 32 * 512;
alignas(16) uint8_t tensor_arena[2 * kElements * 4 + 8192];

void Run(const char* name, const unsigned char* model_data, bool is_float,
         tflite::MicroMutableOpResolver<1>& resolver) {
  tflite::MicroInterpreter interpreter(tflite::GetModel(model_data), resolver, tensor_arena,
                                       sizeof tensor_arena);
  TfLiteStatus status = interpreter.AllocateTensors();
  uint32_t ticks = 0;
  int32_t sum = 0;
  if (status == kTfLiteOk) {
    TfLiteTensor* in = interpreter.input(0);
    for (int i = 0; i < kElements; ++i) {  // a ramp over [-8, 8)
      if (is_float) in->data.f[i] = -8.0f + 16.0f * static_cast<float>(i) / kElements;
      else in->data.int8[i] = static_cast<int8_t>(i & 0xff);
    }
    const uint32_t t0 = platform_cycles();
    status = interpreter.Invoke();
    ticks = platform_cycles() - t0;
    TfLiteTensor* out = interpreter.output(0);
    for (int i = 0; i < kElements; ++i)
      sum += is_float ? static_cast<int32_t>(out->data.f[i] * 1000.0f) : out->data.int8[i];
  }
  char line[128];
  snprintf(line, sizeof line, "%s status=%d ticks=%lu n=%d sum=%ld\r\n", name, status,
           static_cast<unsigned long>(ticks), kElements, static_cast<long>(sum));
  console_puts(line);
}
}  // namespace

int main() {
  platform_init();
  static tflite::MicroMutableOpResolver<1> resolver;
#if WITH_GELU_APPROX
  resolver.AddCustom("GeluApprox", tflite::Register_GELU_APPROX());
#endif
  Run("float32", gelu_f32_model, true, resolver);
  Run("int8", gelu_i8_model, false, resolver);
  console_puts("END\r\n");
  for (;;) {
  }
}
