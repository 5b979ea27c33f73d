// LinkWaitOp: waits until links to a set of slots are up — how a
// communicator's creation waits for its ring neighbours.
#pragma once

#include <vector>

#include "comm/engine.h"
#include "comm/peers.h"

namespace trainmover {

class LinkWaitOp final : public Operation {
 public:
  LinkWaitOp(PeerTable& peers, std::vector<int> slots, Duration timeout)
      : peers_(peers),
        slots_(std::move(slots)),
        deadline_(Clock::now() + timeout),
        timeout_(timeout) {}

  bool poll() override;
  Status result() const override { return result_; }
  Clock::time_point wake_at() const override { return deadline_; }

 private:
  PeerTable& peers_;
  std::vector<int> slots_;
  Clock::time_point deadline_;
  Duration timeout_;
  Status result_;
};

}  // namespace trainmover
