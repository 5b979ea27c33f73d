#include "record/nccl/past_end.h"

namespace trainmover::nccl {

std::string past_end_message(const CommEntry& comm, uint64_t recorded, const CallDesc& asked,
                             double wait_s) {
  return str_cat("replay trace exhausted: ", describe(comm), " had ", recorded,
                 " recorded calls and the program now calls ", describe(asked), "; waiting up to ",
                 wait_s, " s (TRAINMOVER_NCCL_REPLAY_WAIT) for the switch to the live job");
}

Status PastEndGate::wait(const std::string& what, Duration limit) {
  std::unique_lock lock(mu_);
  Deadline deadline = Deadline::after(limit);
  bool released = cv_.wait_until(lock, deadline.at(), [this] { return released_; });
  if (released)
    return error(TM_ERROR_PEER_FAILED, what, ": the communicator was aborted while waiting");
  return error(TM_ERROR_TIMEOUT, what, ": no switch to the live job within ", to_seconds(limit),
               " s");
}

void PastEndGate::release() {
  {
    std::lock_guard lock(mu_);
    released_ = true;
  }
  cv_.notify_all();
}

}  // namespace trainmover::nccl
