// P2POp: one send or receive to a single slot as an engine Operation. If no
// link to the slot exists yet it connects first (either side may), then
// moves the message in frames of at most max_frame bytes.
#pragma once

#include <cstddef>
#include <string>

#include "comm/endpoint.h"
#include "comm/engine.h"
#include "comm/peers.h"
#include "comm/watchdog.h"

namespace trainmover {

class P2POp final : public Operation {
 public:
  struct Params {
    bool is_send = true;
    int peer = -1;
    std::byte* data = nullptr;  // read for sends, written for receives
    size_t bytes = 0;
    uint64_t tag = 0;
    Endpoint endpoint;  // where to connect if there is no link yet
    std::string name;   // "send to slot 3", for messages
  };

  P2POp(PeerTable& peers, Duration timeout, Duration grace, Duration connect_timeout,
        size_t max_frame)
      : peers_(peers),
        watchdog_(timeout, grace),
        connect_timeout_(connect_timeout),
        max_frame_(max_frame) {}

  void prepare(Params params);
  bool poll() override;
  Status result() const override { return result_; }
  Clock::time_point wake_at() const override;

 private:
  enum class Phase { kStart, kConnecting, kRunning, kDone };
  bool finish(Status status);
  bool post(transport::Link& link);
  void post_window(transport::Link& link);
  bool run(transport::Link& link);

  PeerTable& peers_;
  Watchdog watchdog_;
  Duration connect_timeout_;
  size_t max_frame_;
  Params params_;
  Phase phase_ = Phase::kDone;
  Clock::time_point connect_deadline_;
  transport::RequestHandle first_{};
  size_t frames_ = 0;
  size_t frames_posted_ = 0;
  size_t frames_done_ = 0;
  Status result_;
};

}  // namespace trainmover
