// The exported models linked into the bench image: one .tflite per sentence length, written by `bertl14 bench`
// (TFLM_MODELS_DIR/tflm_models.S holds the flatbuffers, tflm_models.cc this table).
#ifndef TFLM_MODELS_H
#define TFLM_MODELS_H

#include <cstdint>

struct TflmModel {
  uint32_t tokens;      // the model's input length
  const uint8_t* data;  // the flatbuffer, 16-byte aligned, in flash
  const uint8_t* end;
};

extern const TflmModel tflm_models[];
extern const int tflm_model_count;

#endif
