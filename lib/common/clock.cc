#include "common/clock.h"

#include <algorithm>

namespace trainmover {

int Deadline::poll_timeout_ms(int cap_ms) const {
  Duration left = remaining();
  if (left == Duration::max()) return cap_ms;
  auto ms =
      std::chrono::duration_cast<std::chrono::milliseconds>(left + std::chrono::microseconds(999));
  return static_cast<int>(std::min<int64_t>(ms.count(), cap_ms));
}

}  // namespace trainmover
