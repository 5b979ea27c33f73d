// ControlClient: a process's end of the control channel (ranks, standbys,
// the launcher, trainmover-ctl).
//
// connect() authenticates with the job secret, registers, and waits for the
// coordinator's Welcome; then a thread of the client's own heartbeats every
// interval the Welcome gave (carrying the step set_step() last set) and reads
// what the coordinator sends. Orders, replies and events wait in a queue for
// next(). The coordinator heartbeats too: when nothing has come from it for
// the heartbeat timeout, or the connection breaks, the coordinator is lost,
// on_lost runs once, and next() fails from then on with TM_ERROR_PEER_FAILED
// naming the cause. A rank must then stop: no one else may publish views.
//
// Threading: every method may be called from any thread. on_lost runs on the
// client's thread; it must not block or destroy the client.
#pragma once

#include <atomic>
#include <condition_variable>
#include <deque>
#include <functional>
#include <memory>
#include <mutex>
#include <string>
#include <thread>

#include "common/clock.h"
#include "common/secret.h"
#include "common/status.h"
#include "common/unique_fd.h"
#include "control/control_protocol.h"

namespace trainmover::control {

struct ControlClientOptions {
  std::string address;  // the coordinator's "host:port"
  uint64_t job_id = 0;
  Register identity;
  Duration connect_timeout = std::chrono::seconds(10);
  std::function<void(const Status&)> on_lost;  // optional
  // Optional: runs on the client's thread as each order arrives, before
  // next() returns it; it must not block or destroy the client. A rank uses
  // it to end a collective that waits for a silent peer (lib/worker).
  std::function<void(const Order&)> on_order;
};

class ControlClient {
 public:
  static Result<std::unique_ptr<ControlClient>> connect(const ControlClientOptions& options,
                                                        const JobSecret& secret);
  // Stops the thread and closes the connection (the coordinator sees it close).
  ~ControlClient();

  const Welcome& welcome() const { return welcome_; }
  // The step heartbeats carry from now on. A message send() queued before
  // this call reaches the coordinator before any heartbeat with this step.
  void set_step(uint64_t step) { step_.store(step, std::memory_order_relaxed); }
  // Queues a message for the coordinator; fails once the coordinator is lost.
  Status send(const Message& message);
  // The next message from the coordinator: TM_ERROR_TIMEOUT when none came
  // within `timeout`, TM_ERROR_PEER_FAILED once the coordinator is lost.
  Result<Message> next(Duration timeout);
  // Whether an order waits for next(): a process inside a long wait of its
  // own (a joiner waiting for the other joiners) checks that it is not
  // superseded.
  bool order_waiting() const;
  // Ok while the coordinator is reachable; else why it is not.
  Status health() const;

 private:
  ControlClient(ControlClientOptions options, UniqueFd fd, UniqueFd wake, Welcome welcome);
  void run();
  void lose(const Status& why);
  void wake() const;

  ControlClientOptions options_;
  UniqueFd fd_;
  UniqueFd wake_fd_;
  Welcome welcome_;
  std::atomic<uint64_t> step_{0};
  std::atomic<bool> stopping_{false};

  mutable std::mutex mutex_;  // guards the fields below
  std::condition_variable arrived_;
  std::deque<Message> inbox_;
  std::deque<Message> outbox_;
  Status lost_;
  std::thread thread_;
};

}  // namespace trainmover::control
