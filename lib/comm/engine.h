// Engine: the progress thread of a communicator.
//
// It owns an EventLoop and is the only thread that touches links, the
// transport and the per-communicator state behind them. Callers hand it work
// and block until it is done:
//  - call(fn) runs a short function on the engine thread;
//  - execute(op) runs an Operation, polling it after every batch of events
//    until it finishes.
// One operation runs at a time. While idle the thread sleeps in epoll_wait
// and wakes only for events and the periodic tick (heartbeats), so it costs
// no CPU.
//
// Threading: call() and execute() may be called from any thread; they are
// serialised. Hooks run on the engine thread.
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
  // Engine thread. The first call starts the operation; returns true once it
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
  struct Task {
    const std::function<Status()>* fn = nullptr;
    Operation* op = nullptr;
    Status result;
    bool done = false;
  };

  explicit Engine(std::unique_ptr<EventLoop> loop) : loop_(std::move(loop)) {}
  Status submit(Task& task);
  void run();
  void take_tasks();
  void finish(Task& task, Status result);

  std::unique_ptr<EventLoop> loop_;
  Hooks hooks_;
  std::thread thread_;
  std::mutex mutex_;
  std::condition_variable done_cv_;
  std::vector<Task*> queue_;  // guarded by mutex_
  bool stopping_ = false;     // guarded by mutex_
  bool running_ = false;      // guarded by mutex_
  // Engine thread only:
  std::vector<Task*> calls_;
  Task* active_ = nullptr;
};

}  // namespace trainmover
