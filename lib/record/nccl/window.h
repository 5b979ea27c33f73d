// The record window: which data calls of each communicator are recorded.
//
// Programs that call NCCL directly do not mark iterations, so the window is
// counted in calls: the first `calls_per_comm` data calls issued on each
// communicator after its creation. A group (ncclGroupStart/End) that a
// communicator entered inside its window is recorded whole, even past the
// limit, so replay never has to answer half of a group. Not thread-safe: the
// caller serialises.
#pragma once

#include <cstdint>
#include <vector>

namespace trainmover::nccl {

class RecordWindow {
 public:
  explicit RecordWindow(uint64_t calls_per_comm) : limit_(calls_per_comm) {}

  // Called once per data call on communicator `comm`; `group` identifies the
  // enclosing outermost group, 0 outside any. Returns whether to record it.
  bool admit(uint32_t comm, uint64_t group);
  // Whether `comm` has seen its whole window (valid outside groups).
  bool closed(uint32_t comm) const;
  uint64_t limit() const { return limit_; }

 private:
  struct PerComm {
    uint64_t seen = 0;
    uint64_t admitted_group = 0;  // the group this comm was last admitted in
  };
  PerComm& at(uint32_t comm);

  uint64_t limit_;
  std::vector<PerComm> comms_;  // by ordinal
};

}  // namespace trainmover::nccl
