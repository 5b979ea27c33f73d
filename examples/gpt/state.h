// TrainState: everything one pipeline stage carries from step to step.
//
// The layout, which the runtime registers for state transfer (regions()):
//   params  float32[P]  the stage's parameters (layout: param_layout.h)
//   adam_m  float32[P]  AdamW first moments, same layout
//   adam_v  float32[P]  AdamW second moments, same layout
//   counters            three uint64: step, seed, data_position
// Nothing else is state: the gradient buffer and the activation caches are
// rebuilt every step. There is no RNG stream to carry: the init and every
// step's data are counter-based draws keyed by (seed, step, DP index)
// (rng.h), so the seed and the step are the whole RNG state, and
// data_position (sequences consumed by this DP replica) follows from them;
// it is kept, and checked on load, so that a mismatched copy is caught.
// DP replicas of a stage hold bitwise identical states.
#pragma once

#include <cstddef>
#include <cstdint>
#include <vector>

#include "param_layout.h"

namespace trainmover::gpt {

struct Counters {
  uint64_t step = 0;           // steps completed
  uint64_t seed = 0;           // the run's seed
  uint64_t data_position = 0;  // sequences this DP replica has consumed
};
static_assert(sizeof(Counters) == 24, "Counters is three packed uint64");

// One contiguous buffer of the state: name, address and size in bytes.
struct StateRegion {
  const char* name;
  void* data;
  size_t bytes;
};

constexpr uint64_t kFnvOffset = 0xcbf29ce484222325ULL;

// FNV-1a 64 of `bytes`, continuing from `state` (kFnvOffset to start).
uint64_t fnv1a(const void* bytes, size_t size, uint64_t state);

class TrainState {
 public:
  // Parameters initialised from `seed` (a pure function of seed, tensor
  // name and index), moments zero, counters at step 0.
  TrainState(const ModelShape& shape, const ParamLayout& layout, uint64_t seed);

  std::vector<float> params, adam_m, adam_v;
  Counters counters;

  // The four buffers above, in that order. Pointers stay valid for the
  // object's life (the vectors are never resized).
  std::vector<StateRegion> regions();
  // FNV-1a of the parameter bytes, continuing from `state`: chained through
  // the stages in order it is the hash of the whole model's parameters.
  uint64_t param_hash(uint64_t state = kFnvOffset) const;
};

}  // namespace trainmover::gpt
