// Engine: the progress of a communicator.
//
// It owns an EventLoop, the only way to touch links, the transport and the
// per-communicator state behind them. Whoever runs the loop (the "loop
// owner") is the only thread that touches them:
//  - execute(op) runs an Operation on the calling thread: the caller takes
//    the loop from the progress thread and polls the operation after every
//    batch of events until it finishes, so that a collective costs no
//    hand-off between threads at its start, at each of its steps or at its
//    end (docs/latency.md);
//  - call(fn) runs a short function on the loop owner (the progress thread,
//    or a caller inside execute());
//  - between operations the progress thread owns the loop (from kLease after
//    the last one): it answers heartbeats and connections, and sleeps in
//    epoll_wait while idle, so it costs no CPU.
// One operation runs at a time.
//
// Threading: call() and execute() may be called from any thread; execute()
// is serialised by the owner (a second one at once fails). Hooks and
// operations run on the loop owner. Lock order: loop_mutex_, then mutex_.
#pragma once

#include <condition_variable>
#include <functional>
#include <memory>
#include <mutex>
#include <thread>
#include <vector>

#include "common/clock.h"
#include "common/event_loop.h"
#include "common/status.h"

namespace trainmover {

class Operation {
 public:
  virtual ~Operation() = default;
  // Loop owner. The first call starts the operation; returns true once it
  // has finished, with its outcome in result().
  virtual bool poll() = 0;
  virtual Status result() const = 0;
  // When poll() must run again even if no event arrives (timeouts).
  virtual Clock::time_point wake_at() const = 0;
};

class Engine {
 public:
  struct Hooks {
    std::function<void()> after_events;  // after each batch of events (sweeping)
    std::function<void()> on_tick;       // every tick_period
    Duration tick_period = std::chrono::seconds(1);
  };

  static Result<std::unique_ptr<Engine>> create();
  // Stops the thread; pending calls fail.
  ~Engine();
  // Stops and joins the thread, keeping the loop so that what is registered
  // with it can still deregister. Idempotent.
  void stop();

  // Starts the thread. Before start(), the owner may use loop() directly.
  void start(Hooks hooks);
  EventLoop& loop() { return *loop_; }

  Status call(const std::function<Status()>& fn);
  Status execute(Operation& op);

 private:
  // How long the progress thread leaves the loop to callers after an
  // operation: short against any timeout, long against a step's gap.
  static constexpr Duration kLease = std::chrono::milliseconds(2);

  struct Task {
    const std::function<Status()>* fn = nullptr;
    Operation* op = nullptr;
    Status result;
    bool done = false;
  };

  explicit Engine(std::unique_ptr<EventLoop> loop) : loop_(std::move(loop)) {}
  Status submit(Task& task);
  void run();
  void wait_while_lent();
  // One pass of the loop owner: queued calls, the active operation, hooks,
  // the tick. Then wait_events() sleeps until something arrives.
  void process();
  Status wait_events();
  void take_tasks();
  void finish(Task& task, Status result);
  void fail_all(const Status& why);

  std::unique_ptr<EventLoop> loop_;
  Hooks hooks_;
  std::thread thread_;
  std::mutex loop_mutex_;  // held by the loop owner
  std::mutex mutex_;
  std::condition_variable done_cv_;
  std::condition_variable lend_cv_;  // the progress thread waits here while a caller drives
  std::vector<Task*> queue_;         // guarded by mutex_
  int borrowers_ = 0;                // guarded by mutex_: callers inside execute()
  bool in_epoll_ = false;            // guarded by mutex_: the progress thread sleeps in the loop
  Clock::time_point last_return_;    // guarded by mutex_: when the last one returned
  bool stopping_ = false;            // guarded by mutex_
  bool running_ = false;             // guarded by mutex_
  // Loop owner only (loop_mutex_):
  std::vector<Task*> calls_;
  Task* active_ = nullptr;
  Clock::time_point next_tick_;
  Clock::time_point last_socket_look_;  // a caller's last epoll_wait (loop_mutex_)
};

}  // namespace trainmover
