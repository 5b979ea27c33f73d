// PlanExecutor: runs one slot's CollectivePlan (comm/collective_plan.h) over
// the links to the peer slots the plan names.
//
// It posts as far ahead as the plan's dependencies, the staging pool and the
// links' queue depth allow, reduces each received segment as soon as it is
// complete (and, for a combine into output, once the send reading that
// output is done), and forwards it. Engine thread only. Allocates nothing
// once its handle vectors have grown to the largest plan seen.
#pragma once

#include <cstddef>
#include <cstdint>
#include <vector>

#include "comm/collective_plan.h"
#include "comm/staging.h"
#include "common/status.h"
#include "trainmover/trainmover.h"
#include "transport/link.h"

namespace trainmover {

struct PlanBuffers {
  const std::byte* input = nullptr;
  std::byte* output = nullptr;
  tm_datatype_t type = TM_FLOAT32;
  tm_redop_t op = TM_SUM;
  int nslots = 1;
};

class PlanExecutor {
 public:
  enum class State { kRunning, kDone, kFailed };

  // Prepares to run `plan`. `links` (index: slot) holds a live link to
  // every peer the plan names. The plan, the links and the buffers must stay
  // valid until the run ends.
  void start(const CollectivePlan& plan, const PlanBuffers& buffers,
             const std::vector<transport::Link*>& links, uint64_t tag, StagingPool& staging,
             size_t max_outstanding);
  // Advances as far as possible without blocking. Sets `progressed` when any
  // request completed.
  State poll(bool& progressed);
  // Completes what has completed, posting nothing new: true when every
  // request of the plan is done. For a run whose communicator has just
  // failed: its messages may all have arrived before the failure did.
  bool settle();
  // Why the run failed (State kFailed).
  const Status& status() const { return status_; }
  // The slot the run waits for: the peer of its oldest incomplete request.
  int waiting_on() const;
  // Gives back staging slots of an abandoned run.
  void abandon();

 private:
  bool complete_recvs();
  bool complete_sends();
  bool post_sends();  // true when anything was posted
  bool post_recvs();
  void apply(const PlanRecv& recv, int staging_slot);
  std::byte* in_ptr(size_t elems) const;
  std::byte* out_ptr(size_t elems) const;
  transport::Link& link(int peer) const { return *(*links_)[static_cast<size_t>(peer)]; }

  const CollectivePlan* plan_ = nullptr;
  PlanBuffers buf_;
  size_t elem_ = 4;
  const std::vector<transport::Link*>* links_ = nullptr;
  uint64_t tag_ = 0;
  StagingPool* staging_ = nullptr;
  size_t max_outstanding_ = 64;
  Status status_;

  std::vector<transport::RequestHandle> send_handles_;
  std::vector<transport::RequestHandle> recv_handles_;
  std::vector<int> recv_slot_;  // staging slot per receive, -1 if none
  size_t sends_posted_ = 0, sends_done_ = 0;
  size_t recvs_posted_ = 0, recvs_done_ = 0;
};

}  // namespace trainmover
