// What a replaying program meets when it runs past the end of its trace.
//
// A standby replays a recorded window to warm up; when it asks for more,
// the right thing is to wait for the switch to the live job, not to invent
// results. The calling thread blocks here, after a message saying why, for
// at most the configured time, then the call fails. release() (the
// communicator is aborted or destroyed) ends every wait early with an error.
// Thread-safe.
#pragma once

#include <condition_variable>
#include <mutex>
#include <string>

#include "common/clock.h"
#include "common/status.h"
#include "record/nccl/entries.h"

namespace trainmover::nccl {

// The message printed when a call finds the trace exhausted.
std::string past_end_message(const CommEntry& comm, uint64_t recorded, const CallDesc& asked,
                             double wait_s);

class PastEndGate {
 public:
  // Blocks for up to `limit` or until release(); always returns an error
  // (TM_ERROR_TIMEOUT, or TM_ERROR_PEER_FAILED when released) naming `what`.
  Status wait(const std::string& what, Duration limit);
  void release();

 private:
  std::mutex mu_;
  std::condition_variable cv_;
  bool released_ = false;
};

}  // namespace trainmover::nccl
