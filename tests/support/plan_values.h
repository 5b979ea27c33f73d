// Inputs for the plan simulators (ring_plan_test, doubling_plan_test):
// element i of slot `slot`, with magnitudes from 1e-3 to 1e4 so that the
// association of a float sum shows in the result's bits; and a NaN no
// computation produces, for memory a plan must not leave unwritten.
#pragma once

#include <bit>
#include <cstddef>
#include <cstdint>

namespace trainmover::testing {

inline const float kPoison = std::bit_cast<float>(0x7FC0DEADu);

inline float plan_value(int slot, size_t i) {
  uint64_t h = (static_cast<uint64_t>(slot) * 0x9E3779B97F4A7C15ull) ^ (i * 0xC2B2AE3D27D4EB4Full);
  h ^= h >> 29;
  h *= 0xBF58476D1CE4E5B9ull;
  h ^= h >> 32;
  float mantissa = static_cast<float>(h % 100000) / 997.0f - 50.0f;
  float scale = 1.0f;
  for (uint64_t k = (h >> 20) % 8; k > 0; --k) scale *= 10.0f;
  return mantissa * scale / 1000.0f;
}

}  // namespace trainmover::testing
