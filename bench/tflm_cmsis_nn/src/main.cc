// `tflm-cmsis-nn` bench image (QEMU MPS2 boards): TFLM with the CMSIS-NN kernels runs the int8 .tflite export of
// the model, one model per sentence length (TFLM tensors have fixed shapes), linked in flash by tflm_models.S.
// Commands from UART0 (polled, one a line), answers for scripts/bertl14_tools/device/bench.py:
//
//   boot           READY tflm models=<count> arena=<arena bytes> init=0
//   C <shift>      the QEMU -icount shift S in use (answer: OK); counts below are in instructions
//   A              every model loaded once: MODEL <tokens> <load status> <arena bytes used> <flatbuffer bytes>, AEND
//   I <id>...      the model of that many tokens runs them: L <logit codes (int8)>...   G <hex of the tag logit
//                  codes> (models with a tagger)   S <instructions of input copy + Invoke> <stack bytes>   END <status>
//                  (status 0; 1 no model of that length; 2 the model did not load; 3 Invoke failed)
//   P <id>...      the same with TFLM's profiler hooks: L, G, then P <operator> <instructions> <calls> ... (the
//                  instructions inside each operator type's Invoke calls, hooks excluded), S, END
//   K <kernel> ... CMSIS-NN kernel micro-benchmarks (cmsis_nn_bench.h): KERNEL <name> <reps> <instructions> <work>
//
// Counting as tests/target: CMSDK TIMER0 around the timed interval, converted by target_instructions() for the
// announced -icount shift. Loading a model (flatbuffer checks, AllocateTensors, the kernels' Prepare) is not timed,
// like bertl14_init in the bertl14 image.
#include <cstdarg>
#include <cstdio>
#include <cstring>

#include "cmsis_nn_bench.h"
#include "tensorflow/lite/micro/micro_profiler_interface.h"
#include "tflm_engine.h"
#include "tflm_models.h"

extern "C" {
#include "platform.h"
#include "ringbuf.h"
#include "target_link.h"
ringbuf_t app_rx_ring;  // platform.c's RX interrupt (disabled here: polled input)
void app_rx_notify_from_isr(void) {}
void console_puts(const char* s) { platform_console_write(s, strlen(s)); }
}

// TFLM's log goes to the UART (its debug_log.cc writes to stderr)
extern "C" int DebugVsnprintf(char* buffer, size_t size, const char* format, va_list args) {
  return vsnprintf(buffer, size, format, args);
}
extern "C" void DebugLog(const char* format, va_list args) {
  char text[160];
  vsnprintf(text, sizeof text, format, args);
  console_puts(text);
}

namespace {

#ifndef TFLM_ARENA_BYTES
#define TFLM_ARENA_BYTES (1024 * 1024)
#endif
alignas(16) uint8_t arena[TFLM_ARENA_BYTES];
char line[8192];
int loaded = -1;  // index into tflm_models of the model the interpreter holds
int load_status = 0;

void Out(const char* s) { console_puts(s); }

void OutU(uint64_t v) {  // (newlib-nano's printf has no 64-bit conversions)
  char b[24];
  int i = sizeof b - 1;
  b[i] = '\0';
  do {
    b[--i] = static_cast<char>('0' + v % 10u);
    v /= 10u;
  } while (v);
  Out(&b[i]);
}

// Instructions inside the operators' Invoke, by operator name (the tags TFLM's interpreter gives its profiler)
class OpProfile : public tflite::MicroProfilerInterface {
 public:
  static constexpr int kMax = 24;
  const char* tag[kMax];
  uint64_t instructions[kMax];
  uint32_t calls[kMax];
  int count = 0;

  void Reset() { count = 0; }
  uint32_t BeginEvent(const char* t) override {
    int i = 0;
    while (i < count && tag[i] != t) ++i;
    if (i == count && count < kMax) {
      tag[count] = t;
      instructions[count] = 0;
      calls[count++] = 0;
    }
    current_ = i;
    start_ = platform_cycles();
    return 0;
  }
  void EndEvent(uint32_t) override {
    const uint32_t now = platform_cycles();
    if (current_ < count) {
      instructions[current_] += target_instructions(now - start_);
      calls[current_]++;
    }
  }

 private:
  int current_ = 0;
  uint32_t start_ = 0;
};

// a function-local static: the startup code runs no C++ constructors of globals (no vtable pointer otherwise)
OpProfile& Profile() {
  static OpProfile p;
  return p;
}
bool profiled = false;  // the loaded interpreter reports to `profile`

int Select(int index, bool with_profile) {
  if (index != loaded || with_profile != profiled) {
    const TflmModel& m = tflm_models[index];
    load_status = tflm_engine::Load(m.data, static_cast<size_t>(m.end - m.data), arena, sizeof arena,
                                    with_profile ? &Profile() : nullptr);
    loaded = index;
    profiled = with_profile;
  }
  return load_status;
}

void CmdModels() {
  for (int i = 0; i < tflm_model_count; ++i) {
    const int st = Select(i, false);
    Out("MODEL ");
    OutU(tflm_models[i].tokens);
    Out(" ");
    OutU(st);
    Out(" ");
    OutU(st == 0 ? tflm_engine::ArenaUsed() : 0);
    Out(" ");
    OutU(static_cast<uint64_t>(tflm_models[i].end - tflm_models[i].data));
    Out("\n");
  }
  Out("AEND\n");
}

int32_t ids[1024];

void CmdIds(bool with_profile) {
  uint32_t n = 0;
  for (const char* p = line + 1; *p;) {
    while (*p == ' ') ++p;
    if (!*p) break;
    int32_t v = 0;
    while (*p >= '0' && *p <= '9') v = v * 10 + (*p++ - '0');
    if (n < sizeof ids / sizeof ids[0]) ids[n] = v;
    ++n;
  }
  int index = -1;
  for (int i = 0; i < tflm_model_count; ++i) {
    if (tflm_models[i].tokens == n) index = i;
  }
  if (index < 0) {
    Out("END 1\n");
    return;
  }
  if (Select(index, with_profile) != 0) {
    Out("END 2\n");
    return;
  }
  TfLiteTensor* in = tflm_engine::Input();
  OpProfile& profile = Profile();
  profile.Reset();
  const uint32_t top = target_stack_pointer();
  target_stack_paint();
  const uint32_t t0 = platform_cycles();
  memcpy(in->data.raw, ids, n * sizeof(int32_t));
  const int st = tflm_engine::Invoke();
  const uint32_t t1 = platform_cycles();
  const uint32_t stack = target_stack_used(top);
  if (st == 0) {
    const TfLiteTensor* logits = tflm_engine::Output(0);
    Out("L");
    for (size_t i = 0; i < logits->bytes; ++i) {
      Out(" ");
      char b[8];
      snprintf(b, sizeof b, "%d", logits->data.int8[i]);
      Out(b);
    }
    Out("\n");
    if (tflm_engine::OutputCount() > 1) {
      const TfLiteTensor* tags = tflm_engine::Output(1);
      static const char hx[] = "0123456789abcdef";
      char b[3] = {0, 0, 0};
      Out("G ");
      for (size_t i = 0; i < tags->bytes; ++i) {
        b[0] = hx[tags->data.uint8[i] >> 4];
        b[1] = hx[tags->data.uint8[i] & 15u];
        Out(b);
      }
      Out("\n");
    }
  }
  if (with_profile) {
    Out("P");
    for (int i = 0; i < profile.count; ++i) {
      Out(" ");
      Out(profile.tag[i]);
      Out(" ");
      OutU(profile.instructions[i]);
      Out(" ");
      OutU(profile.calls[i]);
    }
    Out("\n");
  }
  Out("S ");
  OutU(target_instructions(t1 - t0));
  Out(" ");
  OutU(stack);
  Out("\nEND ");
  OutU(st == 0 ? 0 : 3);
  Out("\n");
}

}  // namespace

int main() {
  platform_init();
  target_link_init();  // polled input, no RX interrupt
  Out("READY tflm models=");
  OutU(tflm_model_count);
  Out(" arena=");
  OutU(sizeof arena);
  Out(" init=0\n");
  for (;;) {
    const uint32_t len = target_read_line(line, sizeof line);
    if (len >= 3 && line[0] == 'C' && line[1] == ' ') {
      target_set_icount_shift(line + 2);
      Out("OK\n");
    } else if (len == 1 && line[0] == 'A') {
      CmdModels();
    } else if (len >= 1 && (line[0] == 'I' || line[0] == 'P')) {
      CmdIds(line[0] == 'P');
    } else if (len >= 2 && line[0] == 'K' && line[1] == ' ') {
      cmsis_nn_bench(line + 2, Out);
    } else if (len > 0) {
      Out("ERR unknown command\n");
    }
  }
}
