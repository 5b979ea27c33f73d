// Prefaulter: faults in memory that a recorder will write soon, on threads
// of its own, so that the training thread's copy into it does not pay the
// page faults (measured here: a 4 MiB capture takes 0.4 ms into faulted
// memory, about 2 ms into fresh 4 KiB pages).
//
// It uses madvise(MADV_POPULATE_WRITE) (Linux 5.14), which maps the pages
// writable without touching their contents, so the owner may write the
// range while it is being populated. The threads run at SCHED_IDLE, so they
// use only CPU time the training loop leaves idle (waiting for its peers),
// and populate in 256 KiB steps, each a short system call even on a kernel
// without preemption. Where the kernel lacks MADV_POPULATE_WRITE or a thread
// cannot be started, populate() does nothing: prefaulting is an
// optimisation, never a condition; pages not populated in time are faulted
// in by the writer as usual.
//
// Contract: a range must stay mapped until wait() or stop() has returned
// (the destructor stops). Not thread-safe: one owner thread calls populate(),
// wait() and stop().
#pragma once

#include <atomic>
#include <cstddef>
#include <span>
#include <thread>
#include <vector>

namespace trainmover::record {

class Prefaulter {
 public:
  Prefaulter() = default;
  Prefaulter(const Prefaulter&) = delete;
  Prefaulter& operator=(const Prefaulter&) = delete;
  ~Prefaulter() { stop(); }

  // Starts populating `range` in the background and returns at once.
  void populate(std::span<std::byte> range);
  // Returns once every range given so far is populated.
  void wait();
  // Abandons what is not populated yet (within one step) and returns; the
  // Prefaulter can be used again afterwards.
  void stop();
  // Whether this kernel populates ranges (false: populate() is a no-op).
  static bool supported();

 private:
  std::atomic<bool> stopping_{false};
  std::vector<std::thread> threads_;
};

}  // namespace trainmover::record
