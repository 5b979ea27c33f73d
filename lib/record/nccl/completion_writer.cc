#include "record/nccl/completion_writer.h"

#include <algorithm>
#include <chrono>
#include <utility>

#include "common/log.h"

namespace trainmover::nccl {

CompletionWriter::CompletionWriter(Recorder& recorder)
    : recorder_(recorder), thread_([this] { run(); }) {}

CompletionWriter::~CompletionWriter() {
  {
    std::lock_guard lock(mu_);
    stop_ = true;
  }
  wake_.notify_all();
  thread_.join();
}

void CompletionWriter::expect() {
  std::lock_guard lock(mu_);
  ++outstanding_;
}

void CompletionWriter::complete(const CallEntry& entry, std::span<const std::byte> data,
                                Landed landed, std::function<void()> release) {
  {
    std::lock_guard lock(mu_);
    queue_.push_back(Item{entry, data, std::move(landed), std::move(release)});
  }
  wake_.notify_one();
}

void CompletionWriter::stop_recording(const Status& why) {
  log(LogLevel::kError, "nccl: recording stopped, the trace stays incomplete: ", why.message());
  recorder_.abort(why);
}

void CompletionWriter::abandon(Status why) {
  stop_recording(why);
  std::lock_guard lock(mu_);
  --outstanding_;
  idle_.notify_all();
}

void CompletionWriter::finish_when_idle() {
  std::unique_lock lock(mu_);
  finish_requested_ = true;
  maybe_finish(lock);
}

bool CompletionWriter::drain(Deadline deadline) {
  std::unique_lock lock(mu_);
  return idle_.wait_until(lock, deadline.at(), [this] { return outstanding_ == 0; });
}

void CompletionWriter::maybe_finish(std::unique_lock<std::mutex>& lock) {
  if (!finish_requested_ || outstanding_ != 0 || recorder_.finished()) return;
  lock.unlock();
  Status s = recorder_.finish();
  if (!s.ok()) log(LogLevel::kError, "nccl: cannot finish the trace: ", s.message());
  lock.lock();
}

void CompletionWriter::write(Item& item) {
  Status s = recorder_.put_call(item.entry, item.data);
  if (!s.ok()) log(LogLevel::kError, "nccl: recording stopped: ", s.message());
  if (item.release) item.release();
}

// The buffers of dropped calls are not released: their copies may still
// be writing them. The trace is never finished after this.
void CompletionWriter::drop_queue(std::unique_lock<std::mutex>& lock, const Status& why) {
  outstanding_ -= queue_.size();
  queue_.clear();
  lock.unlock();
  stop_recording(why);
  lock.lock();
  if (outstanding_ == 0) idle_.notify_all();
}

bool CompletionWriter::wait_front_landed(std::unique_lock<std::mutex>& lock) {
  // A copy of a few MiB takes a few hundred microseconds; polling starts
  // fine and backs off so that a long wait costs little CPU.
  auto backoff = std::chrono::microseconds(20);
  constexpr auto kMaxBackoff = std::chrono::microseconds(1000);
  for (;;) {
    // Only this thread pops, and push_back keeps references valid.
    const Item& front = queue_.front();
    if (!front.landed) return true;
    lock.unlock();
    Result<bool> landed = front.landed();
    lock.lock();
    if (!landed.ok()) {
      drop_queue(lock, landed.status());
      return false;
    }
    if (*landed) return true;
    if (stop_) {
      drop_queue(lock,
                 error(TM_ERROR_TIMEOUT, "a recorded output had not reached host memory at exit"));
      return false;
    }
    wake_.wait_for(lock, backoff);
    backoff = std::min(backoff * 2, kMaxBackoff);
  }
}

void CompletionWriter::run() {
  std::unique_lock lock(mu_);
  for (;;) {
    wake_.wait(lock, [this] { return stop_ || !queue_.empty(); });
    if (queue_.empty()) return;  // stop_ with nothing left to write
    if (!wait_front_landed(lock)) continue;
    Item item = std::move(queue_.front());
    queue_.pop_front();
    lock.unlock();
    write(item);
    lock.lock();
    --outstanding_;
    maybe_finish(lock);
    if (outstanding_ == 0) idle_.notify_all();
  }
}

}  // namespace trainmover::nccl
