#include "adamw.h"

#include <cmath>

namespace trainmover::gpt {

void adamw_update(const AdamWConfig& config, const ParamLayout& layout, uint64_t t,
                  const float* grads, TrainState& state) {
  const double td = static_cast<double>(t);
  const float m_scale = static_cast<float>(1.0 / (1.0 - std::pow(config.beta1, td)));
  const float v_scale = static_cast<float>(1.0 / (1.0 - std::pow(config.beta2, td)));
  float* p = state.params.data();
  float* m = state.adam_m.data();
  float* v = state.adam_v.data();
  for (const TensorInfo& tensor : layout.tensors()) {
    const float decay = tensor.decay ? config.lr * config.weight_decay : 0.0f;
    for (size_t i = tensor.offset; i < tensor.offset + tensor.count; ++i) {
      const float g = grads[i];
      m[i] = config.beta1 * m[i] + (1.0f - config.beta1) * g;
      v[i] = config.beta2 * v[i] + (1.0f - config.beta2) * g * g;
      const float step = (m[i] * m_scale) / (std::sqrt(v[i] * v_scale) + config.eps);
      p[i] -= decay * p[i] + config.lr * step;
    }
  }
}

}  // namespace trainmover::gpt
