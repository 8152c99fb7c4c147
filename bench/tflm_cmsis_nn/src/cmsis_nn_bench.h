// CMSIS-NN kernels called directly, as micro-benchmarks on a model's shapes (the `K` command of main.cc):
//
//   fc_s8 <batches> <in> <out> <reps>       arm_fully_connected_s8: int8 activations, int8 weights (per tensor)
//   fc_s16 <batches> <in> <out> <reps>      arm_fully_connected_s16: int16 activations, int8 weights
//   softmax_s8 <rows> <row length> <reps>   arm_softmax_s8
//   softmax_s16 <rows> <row length> <reps>  arm_softmax_s16 (TFLM's exp and 1/(1+x) tables)
//
// Each answers "KERNEL <name> <reps> <instructions of all reps> <MACs or elements per rep>" (name: the command
// and its shape, e.g. fc_s8_32x96x256), or "ERR ..." for an unknown kernel or a shape beyond its buffers.
// What TFLM does once in Prepare (the fully connected kernel sums where CMSIS-NN wants them, the softmax scaling
// and tables) is done before the timed repetitions.
#ifndef CMSIS_NN_BENCH_H
#define CMSIS_NN_BENCH_H

void cmsis_nn_bench(const char* args, void (*out)(const char*));

#endif
