// Watchdog: decides when an operation that makes no progress has failed,
// and which slot to blame.
//
// An operation waits on one peer at a time (its oldest incomplete request).
// When nothing has moved for `timeout`, the peer's heartbeats tell:
//  - no heartbeat for `timeout` either: the peer is hung or unreachable;
//  - its heartbeat says it has not entered this operation: it is the one
//    holding everybody up;
//  - it has entered and is itself waiting: the culprit is further along, and
//    its neighbour will report it; wait up to `grace` more for that abort,
//    then blame whom the peer says it waits for.
#pragma once

#include <string>

#include "comm/peers.h"
#include "common/clock.h"
#include "common/status.h"

namespace trainmover {

class Watchdog {
 public:
  Watchdog(Duration timeout, Duration grace) : timeout_(timeout), grace_(grace) {}

  void start(Clock::time_point now) {
    last_progress_ = now;
    in_grace_ = false;
  }
  void progressed(Clock::time_point now) {
    last_progress_ = now;
    in_grace_ = false;
  }
  Clock::time_point deadline() const {
    return last_progress_ + timeout_ + (in_grace_ ? grace_ : Duration::zero());
  }

  // Called at or after deadline(): ok() to keep waiting (grace), else the
  // timeout error naming the slot at fault. `what` names the operation.
  // `collective` is the operation's collective number (0 for point-to-point).
  Status expire(Clock::time_point now, int waiting_on, const PeerTable& peers,
                const std::string& what, uint64_t collective);

 private:
  Duration timeout_;
  Duration grace_;
  Clock::time_point last_progress_;
  bool in_grace_ = false;
};

}  // namespace trainmover
