// SwitchWaitOp: phase 1 of a membership switch, waited for on the engine
// thread — until the links a process must open for the next epoch are up.
//
// On a stayer the new links are incoming (the joiner connects), so it only
// watches PeerTable's prepared epoch. On a joiner the links are those of its
// own (already current) epoch, and it connects to the targets it must dial,
// again and again until the deadline: a stayer that has not prepared the
// epoch yet refuses, and a moment later accepts.
#pragma once

#include <string>
#include <vector>

#include "comm/endpoint.h"
#include "comm/engine.h"
#include "comm/peers.h"

namespace trainmover {

class SwitchWaitOp final : public Operation {
 public:
  struct Target {
    int slot = -1;
    Endpoint endpoint;
    bool dial = false;  // this process connects (else it waits to be connected)
  };

  // A stayer's wait for its prepared epoch's links.
  SwitchWaitOp(PeerTable& peers, Duration timeout);
  // A joiner's connects and wait.
  SwitchWaitOp(PeerTable& peers, std::vector<Target> targets, Duration timeout);

  bool poll() override;
  Status result() const override { return result_; }
  Clock::time_point wake_at() const override;

 private:
  bool poll_stayer();
  bool poll_joiner();
  Status timed_out(int slot, const std::string& detail) const;

  PeerTable& peers_;
  bool joiner_ = false;
  std::vector<Target> targets_;
  std::vector<Clock::time_point> retry_at_;
  Clock::time_point deadline_;
  Duration timeout_;
  Status result_;
};

}  // namespace trainmover
