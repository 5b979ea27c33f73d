// Record mode's CUDA half: after each forwarded call, copies its output to
// pinned host memory on the caller's stream and hands it to the trace.
//
// Per recorded data call: cudaMemcpyAsync(device -> pinned host) on the
// caller's stream right behind the collective, then cudaEventRecord; the
// CompletionWriter polls the event and writes the bytes once they landed.
// The stream is held for the copy only (an event costs it nothing, where a
// host callback would stall it until a host thread ran); the calling thread
// never waits for the stream. Inside a
// group, copies are issued at the outermost ncclGroupEnd, when NCCL itself
// enqueues the group's work. Calls captured into a CUDA graph cannot be
// recorded (the copy would run at every graph launch): recording stops and
// the trace stays unfinished, so replay rejects it.
//
// Thread-safe; group state is per thread, like NCCL's.
#pragma once

#include <nccl.h>

#include <cstdint>
#include <memory>
#include <mutex>
#include <optional>
#include <span>
#include <unordered_map>
#include <variant>

#include "common/clock.h"
#include "record/nccl/completion_writer.h"
#include "record/nccl/data_call.h"
#include "record/nccl/event_pool.h"
#include "record/nccl/group_queue.h"
#include "record/nccl/host_pool.h"
#include "record/nccl/real_nccl.h"
#include "record/nccl/recorder.h"
#include "record/nccl/settings.h"

namespace trainmover::nccl {

class RecordEngine {
 public:
  RecordEngine(const Settings& settings, const RealNccl& real, std::unique_ptr<TraceSink> sink);
  RecordEngine(const RecordEngine&) = delete;
  RecordEngine& operator=(const RecordEngine&) = delete;

  // After the real ncclCommInitRank* / ncclCommSplit returned `result`.
  // For a split, `parent` is the split communicator; the new one's size and
  // rank are then asked of NCCL.
  void comm_created(ncclResult_t result, ncclComm_t comm, CommEntry entry, ncclComm_t parent);
  // After the real data call returned `result`.
  void data_call_done(ncclResult_t result, const DataCall& call);
  void group_start();
  // After the real ncclGroupEnd returned `result`.
  void group_end_done(ncclResult_t result);
  // Waits for the copies in flight (until `deadline`) and finishes the
  // trace with what was recorded; used at process exit.
  void flush(Deadline deadline);

 private:
  struct PendingCopy {
    CallEntry entry;
    const void* src;
    ncclComm_t comm;
    cudaStream_t stream;
  };
  struct PendingComm {
    ncclComm_t comm;
    CommEntry entry;
    ncclComm_t parent;  // null for an init
  };
  using Pending = std::variant<PendingCopy, PendingComm>;

  // NCCL's group state is per thread, so is the work held for a group.
  static GroupQueue<Pending>& group();
  void issue(const Pending& pending);
  void issue_copy(const PendingCopy& copy);
  void register_comm(const PendingComm& pending);
  void stop(const Status& why);
  void check_windows();
  std::optional<uint32_t> ordinal(ncclComm_t comm);
  // A non-blocking communicator may return ncclInProgress; its work is
  // enqueued only once it reports otherwise.
  Status wait_ready(ncclComm_t comm);

  const RealNccl& real_;
  Recorder recorder_;
  HostPool pool_;
  EventPool events_;
  CompletionWriter writer_;  // after recorder_, pool_ and events_, which it uses
  std::mutex mu_;
  std::unordered_map<ncclComm_t, uint32_t> ordinals_;
};

}  // namespace trainmover::nccl
