// Page faults counted by the kernel, to tell what a piece of code costs in
// first touches of memory: on a virtual machine that returns freed memory
// to its host, each costs several microseconds (11 us per 4 KiB page was
// measured on one), so a count is a more faithful witness than a time on a
// shared host.
#pragma once

#include <sys/resource.h>

#include <cstdint>

namespace trainmover {

// Minor page faults the calling thread has taken since it started
// (getrusage RUSAGE_THREAD); 0 where the kernel refuses.
inline uint64_t thread_minor_faults() {
  rusage usage{};
  if (::getrusage(RUSAGE_THREAD, &usage) != 0) return 0;
  return static_cast<uint64_t>(usage.ru_minflt);
}

}  // namespace trainmover
