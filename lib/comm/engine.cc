#include "comm/engine.h"

#include <sched.h>

#include "common/log.h"

namespace trainmover {
namespace {
// How long a caller polls shared-memory links before it sleeps in epoll.
constexpr Duration kSpinBeforeSleep = std::chrono::microseconds(50);
// How often a caller that keeps finding ring traffic looks at its sockets.
constexpr Duration kSocketLookPeriod = std::chrono::microseconds(500);
// How long from an operation's start its caller looks at its sockets
// without sleeping. A short operation's next message mostly arrives within
// it, and a caller asleep in epoll_wait pays a wake-up for each message
// (docs/latency.md: 4 KiB broadcast over TCP 22-27 -> 14-21 us).
constexpr Duration kSocketSpin = std::chrono::microseconds(30);
}  // namespace

Result<std::unique_ptr<Engine>> Engine::create() {
  TM_ASSIGN_OR_RETURN(auto loop, EventLoop::create());
  return std::unique_ptr<Engine>(new Engine(std::move(loop)));
}

Engine::~Engine() { stop(); }

void Engine::stop() {
  {
    std::lock_guard<std::mutex> lock(mutex_);
    stopping_ = true;
  }
  lend_cv_.notify_all();
  loop_->wake();
  if (thread_.joinable()) thread_.join();
}

void Engine::start(Hooks hooks) {
  hooks_ = std::move(hooks);
  next_tick_ = Clock::now() + hooks_.tick_period;
  {
    std::lock_guard<std::mutex> lock(mutex_);
    running_ = true;
  }
  thread_ = std::thread([this] { run(); });
}

Status Engine::call(const std::function<Status()>& fn) {
  Task task;
  task.fn = &fn;
  return submit(task);
}

Status Engine::submit(Task& task) {
  std::unique_lock<std::mutex> lock(mutex_);
  if (!running_ || stopping_)
    return error(TM_ERROR_INTERNAL, "the communicator's progress thread is not running");
  queue_.push_back(&task);
  lock.unlock();
  lend_cv_.notify_all();  // a progress thread that lent the loop takes it back for this
  loop_->wake();
  lock.lock();
  // The loop owner bounds a call's duration; the periodic check only
  // notices a progress thread that has stopped.
  while (!task.done) {
    if (!running_) return error(TM_ERROR_INTERNAL, "the communicator's progress thread stopped");
    done_cv_.wait_for(lock, std::chrono::seconds(1));
  }
  return task.result;
}

// The caller borrows the loop: it asks the progress thread to lend it (a
// wake-up ends the thread's epoll_wait; the thread then waits on lend_cv_
// while borrowers_ > 0), takes loop_mutex_, and runs passes of the loop until
// its operation is done.
Status Engine::execute(Operation& op) {
  Task task;
  task.op = &op;
  bool wake = false;
  {
    std::lock_guard<std::mutex> lock(mutex_);
    if (!running_ || stopping_)
      return error(TM_ERROR_INTERNAL, "the communicator's progress thread is not running");
    ++borrowers_;
    wake = in_epoll_;
  }
  // Only a progress thread asleep in epoll_wait needs the wake-up: back to
  // back operations find it waiting on lend_cv_ and cost no system call.
  if (wake) loop_->wake();
  {
    std::lock_guard<std::mutex> loop_lock(loop_mutex_);
    if (active_ != nullptr) {
      task.result = error(TM_ERROR_INTERNAL, "two operations submitted at once");
    } else {
      active_ = &task;
      const Clock::time_point socket_spin_until = Clock::now() + kSocketSpin;
      Status st;
      while (st.ok()) {
        process();
        if (task.done) break;
        bool stopping = false;
        {
          std::lock_guard<std::mutex> lock(mutex_);
          stopping = stopping_ || !running_;
        }
        if (stopping) {
          st = error(TM_ERROR_INTERNAL, "the communicator was destroyed during the call");
          break;
        }
        // Shared-memory links tell without a system call that the peer
        // wrote: look at them a short while, yielding the CPU between looks,
        // before sleeping. Sockets cost a system call per look, so they are
        // polled only for the operation's first kSocketSpin.
        // The sockets (handshakes, heartbeats, a peer's end) get a look at
        // least every kSocketLookPeriod, so that a stream of ring traffic
        // never starves them.
        if (loop_->spin(kSpinBeforeSleep)) {
          if (Clock::now() - last_socket_look_ >= kSocketLookPeriod) {
            last_socket_look_ = Clock::now();
            st = loop_->run_once(Duration::zero());
          }
          continue;
        }
        last_socket_look_ = Clock::now();
        if (last_socket_look_ < socket_spin_until) {
          st = loop_->run_once(Duration::zero());
          sched_yield();  // the peer we wait for may need this CPU
          continue;
        }
        st = wait_events();
      }
      if (!task.done) {
        active_ = nullptr;
        task.result = st.ok() ? error(TM_ERROR_INTERNAL, "progress stopped") : st;
      }
    }
  }
  {
    std::lock_guard<std::mutex> lock(mutex_);
    --borrowers_;
    last_return_ = Clock::now();
  }
  // No wake-up: the progress thread takes the loop back when the lease ends.
  return task.result;
}

void Engine::finish(Task& task, Status result) {
  std::lock_guard<std::mutex> lock(mutex_);
  task.result = std::move(result);
  task.done = true;
  done_cv_.notify_all();
}

void Engine::take_tasks() {
  std::lock_guard<std::mutex> lock(mutex_);
  for (Task* t : queue_) calls_.push_back(t);
  queue_.clear();
}

void Engine::process() {
  take_tasks();
  for (Task* t : calls_) finish(*t, (*t->fn)());
  calls_.clear();
  if (active_ != nullptr && active_->op->poll()) {
    Task* t = std::exchange(active_, nullptr);
    finish(*t, t->op->result());
  }
  if (hooks_.after_events) hooks_.after_events();
  Clock::time_point now = Clock::now();
  if (now >= next_tick_) {
    if (hooks_.on_tick) hooks_.on_tick();
    next_tick_ = now + hooks_.tick_period;
  }
}

Status Engine::wait_events() {
  Clock::time_point wake = next_tick_;
  if (active_ != nullptr) wake = std::min(wake, active_->op->wake_at());
  return loop_->run_once(std::max<Duration>(wake - Clock::now(), Duration::zero()));
}

// Waits while a caller drives the loop, and for kLease after the last one
// returned: back-to-back operations then wake this thread only once per
// lease, never per operation. A queued call or stop() ends the wait at once.
void Engine::wait_while_lent() {
  std::unique_lock<std::mutex> lock(mutex_);
  while (!stopping_ && queue_.empty()) {
    if (borrowers_ > 0) {
      // Timed: a borrower leaves without a wake-up, and an idle
      // communicator must get its loop owner back (heartbeats, accept
      // timeouts).
      lend_cv_.wait_for(lock, kLease);
      continue;
    }
    Duration since = Clock::now() - last_return_;
    if (since >= kLease) return;
    lend_cv_.wait_for(lock, kLease - since);
  }
}

void Engine::run() {
  while (true) {
    wait_while_lent();
    {
      std::lock_guard<std::mutex> lock(mutex_);
      if (stopping_) break;
    }
    std::lock_guard<std::mutex> loop_lock(loop_mutex_);
    process();
    {
      // A caller that asked for the loop after process() looked: its
      // wake-up ends the wait below at once.
      std::lock_guard<std::mutex> lock(mutex_);
      if (borrowers_ > 0 || stopping_) continue;
      in_epoll_ = true;
    }
    Status st = wait_events();
    {
      std::lock_guard<std::mutex> lock(mutex_);
      in_epoll_ = false;
    }
    if (!st.ok()) {
      log(LogLevel::kError, "progress thread: ", st.message());
      break;
    }
  }
  fail_all(error(TM_ERROR_INTERNAL, "the communicator was destroyed during the call"));
}

// The thread ends: every call still queued fails. A caller inside execute()
// sees running_ false and ends its operation itself.
void Engine::fail_all(const Status& why) {
  std::lock_guard<std::mutex> lock(mutex_);
  running_ = false;
  for (Task* t : queue_) {
    t->result = why;
    t->done = true;
  }
  queue_.clear();
  done_cv_.notify_all();
}

}  // namespace trainmover
