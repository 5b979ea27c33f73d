// Counter-based random numbers: every draw is a pure function of its key,
// so the init of a tensor does not depend on how the model is split into
// stages, and a step's data does not depend on the steps before it. Only
// integer arithmetic: the values are the same with any C++ library.
#pragma once

#include <cstdint>
#include <initializer_list>
#include <string_view>

namespace trainmover::gpt {

// SplitMix64's output function applied to x: a strong 64-bit mix.
constexpr uint64_t splitmix64(uint64_t x) {
  x += 0x9e3779b97f4a7c15ULL;
  x = (x ^ (x >> 30)) * 0xbf58476d1ce4e5b9ULL;
  x = (x ^ (x >> 27)) * 0x94d049bb133111ebULL;
  return x ^ (x >> 31);
}

// One key from several words, each mixed in turn.
constexpr uint64_t mix_key(std::initializer_list<uint64_t> words) {
  uint64_t key = 0x6a09e667f3bcc909ULL;
  for (uint64_t w : words) key = splitmix64(key ^ w);
  return key;
}

// FNV-1a of a name, to key a tensor's draws by its name.
constexpr uint64_t name_key(std::string_view name) {
  uint64_t h = 0xcbf29ce484222325ULL;
  for (char ch : name) h = (h ^ static_cast<unsigned char>(ch)) * 0x100000001b3ULL;
  return h;
}

// Uniform in [0, 1), 53 bits.
constexpr double unit_double(uint64_t bits) {
  return static_cast<double>(bits >> 11) * (1.0 / 9007199254740992.0);
}

// Approximately standard normal (Irwin-Hall: 12 uniforms minus 6), draw
// `index` of stream `key`.
constexpr double approx_normal(uint64_t key, uint64_t index) {
  double sum = 0;
  for (uint64_t j = 0; j < 12; ++j) sum += unit_double(splitmix64(key ^ (index * 12 + j)));
  return sum - 6.0;
}

}  // namespace trainmover::gpt
