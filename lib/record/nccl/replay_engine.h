// Replay mode's CUDA half: communicators and answers from a trace, with no
// network and no call into NCCL.
//
// Communicator handles are objects of this engine (never dereferenced by
// NCCL, since NCCL is not called). A data call is checked against the
// trace (ReplayBook) and answered by cudaMemcpyAsync from the trace's
// pinned payload into the receive buffer on the caller's stream; inside a
// group the copies are issued at the outermost ncclGroupEnd. A call past
// the end of the trace waits on the communicator's PastEndGate.
//
// Thread-safe: one mutex over the book and the handle table; a waiting
// call holds only its communicator (shared), not the mutex.
#pragma once

#include <nccl.h>

#include <map>
#include <memory>
#include <mutex>
#include <span>

#include "common/status.h"
#include "record/nccl/data_call.h"
#include "record/nccl/group_queue.h"
#include "record/nccl/past_end.h"
#include "record/nccl/replay_book.h"
#include "record/nccl/settings.h"

namespace trainmover::nccl {

class ReplayEngine {
 public:
  // Pins the book's payload (cudaHostRegister) when it can; pageable memory
  // still gives the same bytes, only the copies stop being asynchronous.
  ReplayEngine(const Settings& settings, ReplayBook book);
  ~ReplayEngine();
  ReplayEngine(const ReplayEngine&) = delete;
  ReplayEngine& operator=(const ReplayEngine&) = delete;

  Result<ncclComm_t> init_comm(int nranks, int rank);
  // Null when `color` is NCCL_SPLIT_NOCOLOR (as NCCL does).
  Result<ncclComm_t> split_comm(ncclComm_t parent, int color, int key);
  Status destroy(ncclComm_t comm);
  Status data_call(const DataCall& call);
  void group_start();
  Status group_end();

  // What ncclCommCount / UserRank / CuDevice report.
  struct CommView {
    CommEntry entry;
    int device;
  };
  Result<CommView> view(ncclComm_t comm);

 private:
  struct Comm {
    CommEntry entry;
    int device = 0;
    PastEndGate gate;
  };
  struct PendingCopy {
    void* dst;
    std::span<const std::byte> src;
    cudaStream_t stream;
  };
  static GroupQueue<PendingCopy>& group();
  Result<std::shared_ptr<Comm>> find(ncclComm_t comm);
  // Takes a communicator the book opened; a creation past the end of the
  // trace waits like a call past its end.
  Result<ncclComm_t> adopt(Result<CommEntry> entry, std::unique_lock<std::mutex>& lock);
  Status past_end(const std::shared_ptr<Comm>& comm, const CallDesc& asked);
  static Status copy(const PendingCopy& copy);

  Settings settings_;
  std::mutex mu_;
  ReplayBook book_;
  bool pinned_ = false;
  PastEndGate creation_gate_;  // for communicators the trace does not have
  std::map<ncclComm_t, std::shared_ptr<Comm>> comms_;
};

}  // namespace trainmover::nccl
