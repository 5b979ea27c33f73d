#include "comm/engine.h"

#include "common/log.h"

namespace trainmover {

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
  loop_->wake();
  if (thread_.joinable()) thread_.join();
}

void Engine::start(Hooks hooks) {
  hooks_ = std::move(hooks);
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

Status Engine::execute(Operation& op) {
  Task task;
  task.op = &op;
  return submit(task);
}

Status Engine::submit(Task& task) {
  std::unique_lock<std::mutex> lock(mutex_);
  if (!running_ || stopping_)
    return error(TM_ERROR_INTERNAL, "the communicator's progress thread is not running");
  queue_.push_back(&task);
  lock.unlock();
  loop_->wake();
  lock.lock();
  // Operations bound their own duration (timeouts); the periodic check only
  // notices a progress thread that has stopped.
  while (!task.done) {
    if (!running_) return error(TM_ERROR_INTERNAL, "the communicator's progress thread stopped");
    done_cv_.wait_for(lock, std::chrono::seconds(1));
  }
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
  for (Task* t : queue_) {
    if (t->op != nullptr && active_ == nullptr) {
      active_ = t;
    } else if (t->op != nullptr) {
      // submit() is serialised by the owner; a second op is a caller bug.
      t->result = error(TM_ERROR_INTERNAL, "two operations submitted at once");
      t->done = true;
    } else {
      calls_.push_back(t);
    }
  }
  queue_.clear();
  done_cv_.notify_all();
}

void Engine::run() {
  Clock::time_point next_tick = Clock::now() + hooks_.tick_period;
  while (true) {
    {
      std::lock_guard<std::mutex> lock(mutex_);
      if (stopping_) break;
    }
    take_tasks();
    for (Task* t : calls_) finish(*t, (*t->fn)());
    calls_.clear();
    if (active_ != nullptr && active_->op->poll()) {
      Task* t = std::exchange(active_, nullptr);
      finish(*t, t->op->result());
    }
    if (hooks_.after_events) hooks_.after_events();
    Clock::time_point now = Clock::now();
    if (now >= next_tick) {
      if (hooks_.on_tick) hooks_.on_tick();
      next_tick = now + hooks_.tick_period;
    }
    Clock::time_point wake = next_tick;
    if (active_ != nullptr) wake = std::min(wake, active_->op->wake_at());
    Status st = loop_->run_once(std::max<Duration>(wake - Clock::now(), Duration::zero()));
    if (!st.ok()) {
      log(LogLevel::kError, "progress thread: ", st.message());
      break;
    }
  }
  std::lock_guard<std::mutex> lock(mutex_);
  running_ = false;
  Status stopped = error(TM_ERROR_INTERNAL, "the communicator was destroyed during the call");
  for (Task* t : queue_) {
    t->result = stopped;
    t->done = true;
  }
  queue_.clear();
  if (active_ != nullptr) {
    active_->result = stopped;
    active_->done = true;
    active_ = nullptr;
  }
  done_cv_.notify_all();
}

}  // namespace trainmover
