// AdamW (decoupled weight decay), elementwise over a stage's flat buffers:
// the update of an element depends on nothing outside it, so a model split
// into stages updates bitwise as the whole one does.
#pragma once

#include <cstdint>

#include "param_layout.h"
#include "state.h"

namespace trainmover::gpt {

struct AdamWConfig {
  float lr = 3e-3f;
  float beta1 = 0.9f;
  float beta2 = 0.95f;
  float eps = 1e-8f;
  float weight_decay = 0.1f;  // on the tensors marked `decay` only
};

// Applies the gradients of step t (1-based) to state.params and the moments.
void adamw_update(const AdamWConfig& config, const ParamLayout& layout, uint64_t t,
                  const float* grads, TrainState& state);

}  // namespace trainmover::gpt
