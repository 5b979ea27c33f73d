#include "state.h"

#include <cmath>

#include "rng.h"

namespace trainmover::gpt {
namespace {

constexpr double kInitStd = 0.02;

void init_tensor(const TensorInfo& t, double residual_std, uint64_t seed, float* out) {
  const uint64_t key = mix_key({seed, name_key(t.name)});
  for (size_t i = 0; i < t.count; ++i) {
    switch (t.init) {
      case TensorInfo::Init::kZero:
        out[i] = 0.0f;
        break;
      case TensorInfo::Init::kOne:
        out[i] = 1.0f;
        break;
      case TensorInfo::Init::kNormal:
        out[i] = static_cast<float>(kInitStd * approx_normal(key, i));
        break;
      case TensorInfo::Init::kResidualOut:
        out[i] = static_cast<float>(residual_std * approx_normal(key, i));
        break;
    }
  }
}

}  // namespace

uint64_t fnv1a(const void* bytes, size_t size, uint64_t state) {
  const auto* p = static_cast<const unsigned char*>(bytes);
  for (size_t i = 0; i < size; ++i) state = (state ^ p[i]) * 0x100000001b3ULL;
  return state;
}

TrainState::TrainState(const ModelShape& shape, const ParamLayout& layout, uint64_t seed)
    : params(layout.total(), 0.0f), adam_m(layout.total(), 0.0f), adam_v(layout.total(), 0.0f) {
  counters.seed = seed;
  // Residual output projections are scaled down with depth (GPT-2).
  const double residual_std = kInitStd / std::sqrt(2.0 * shape.n_layers);
  for (const TensorInfo& t : layout.tensors())
    init_tensor(t, residual_std, seed, params.data() + t.offset);
}

std::vector<StateRegion> TrainState::regions() {
  return {{"params", params.data(), params.size() * sizeof(float)},
          {"adam_m", adam_m.data(), adam_m.size() * sizeof(float)},
          {"adam_v", adam_v.data(), adam_v.size() * sizeof(float)},
          {"counters", &counters, sizeof(counters)}};
}

uint64_t TrainState::param_hash(uint64_t state) const {
  return fnv1a(params.data(), params.size() * sizeof(float), state);
}

}  // namespace trainmover::gpt
