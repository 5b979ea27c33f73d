// CollectiveOp: one collective as an engine Operation — a PlanExecutor
// plus the failure rules: the communicator's failure ends it at once, a dead
// link fails the communicator, and the Watchdog turns a stall into a timeout
// that names a slot.
#pragma once

#include <string>
#include <vector>

#include "comm/engine.h"
#include "comm/peers.h"
#include "comm/plan_executor.h"
#include "comm/staging.h"
#include "comm/watchdog.h"

namespace trainmover {

class CollectiveOp final : public Operation {
 public:
  struct Params {
    const CollectivePlan* plan = nullptr;
    PlanBuffers buffers;
    uint64_t tag = 0;
    uint64_t number = 0;  // 1 for the communicator's first collective, and so on
    std::string name;     // "allreduce #3", for messages
  };

  CollectiveOp(PeerTable& peers, StagingPool& staging, Duration timeout, Duration grace,
               size_t max_outstanding)
      : peers_(peers),
        staging_(staging),
        watchdog_(timeout, grace),
        max_outstanding_(max_outstanding) {}

  // Caller thread, before Engine::execute().
  void prepare(Params params);

  bool poll() override;
  Status result() const override { return result_; }
  Clock::time_point wake_at() const override { return watchdog_.deadline(); }

 private:
  bool start();
  bool finish(Status status);

  PeerTable& peers_;
  StagingPool& staging_;
  Watchdog watchdog_;
  size_t max_outstanding_;
  Params params_;
  PlanExecutor executor_;
  std::vector<transport::Link*> links_;  // index: slot; the plan's peers
  bool started_ = false;
  Status result_;
};

}  // namespace trainmover
