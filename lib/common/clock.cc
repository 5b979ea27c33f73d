#include "common/clock.h"

#include <time.h>

#include <algorithm>

namespace trainmover {

int Deadline::poll_timeout_ms(int cap_ms) const {
  Duration left = remaining();
  if (left == Duration::max()) return cap_ms;
  auto ms =
      std::chrono::duration_cast<std::chrono::milliseconds>(left + std::chrono::microseconds(999));
  return static_cast<int>(std::min<int64_t>(ms.count(), cap_ms));
}

double thread_cpu_seconds() {
  timespec t{};
  if (clock_gettime(CLOCK_THREAD_CPUTIME_ID, &t) != 0) return 0;
  return static_cast<double>(t.tv_sec) + static_cast<double>(t.tv_nsec) * 1e-9;
}

}  // namespace trainmover
