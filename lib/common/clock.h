// Monotonic time and deadlines. Every wait in libtrainmover has a deadline.
#pragma once

#include <chrono>
#include <cstdint>

namespace trainmover {

using Clock = std::chrono::steady_clock;
using Duration = std::chrono::nanoseconds;

inline Duration seconds(double s) {
  return std::chrono::duration_cast<Duration>(std::chrono::duration<double>(s));
}

inline double to_seconds(Duration d) { return std::chrono::duration<double>(d).count(); }

// CPU seconds the calling thread has used (0 if the clock cannot be read).
double thread_cpu_seconds();

class Deadline {
 public:
  static Deadline after(Duration d) { return Deadline(Clock::now() + d); }
  static Deadline never() { return Deadline(Clock::time_point::max()); }
  explicit Deadline(Clock::time_point at) : at_(at) {}

  Clock::time_point at() const { return at_; }
  bool expired() const { return Clock::now() >= at_; }
  // Time left, never negative.
  Duration remaining() const {
    if (at_ == Clock::time_point::max()) return Duration::max();
    auto left = at_ - Clock::now();
    return left > Duration::zero() ? left : Duration::zero();
  }
  // Time left in whole milliseconds for poll()/epoll_wait(), rounded up, capped.
  int poll_timeout_ms(int cap_ms = 1 << 30) const;

 private:
  Clock::time_point at_;
};

}  // namespace trainmover
