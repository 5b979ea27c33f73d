#include "memcpy_bound.h"

#include <algorithm>
#include <cstring>
#include <memory>

#include "common/clock.h"

namespace trainmover::bench {

double memcpy_gbps(size_t bytes) {
  constexpr int kTries = 5;
  auto from = std::make_unique<std::byte[]>(bytes);  // zeroed: every page touched
  auto to = std::make_unique<std::byte[]>(bytes);
  double best = 0;
  for (int i = 0; i < kTries; ++i) {
    from[i] = std::byte{1};
    auto start = Clock::now();
    std::memcpy(to.get(), from.get(), bytes);
    double seconds = to_seconds(Clock::now() - start);
    // Read the copy back, so the compiler cannot drop it.
    if (to[i] != std::byte{1}) return 0;
    if (seconds > 0) best = std::max(best, static_cast<double>(bytes) / seconds / 1e9);
  }
  return best;
}

}  // namespace trainmover::bench
