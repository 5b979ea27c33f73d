// Writes recorded calls to the trace off the training path.
//
// Record mode copies a call's output into pinned host memory on the
// caller's stream; when the stream reaches the end of that copy, a CUDA host
// callback calls complete(), which only queues the work, so the stream is
// held no longer than the copy. This class's thread then hands the bytes to
// the Recorder and releases the buffer. It also finishes the trace once the
// windows are closed and every copy has landed, without the application
// thread ever waiting for a stream.
//
// Thread-safe. The destructor writes what is queued, then stops the thread.
#pragma once

#include <condition_variable>
#include <cstddef>
#include <cstdint>
#include <deque>
#include <functional>
#include <mutex>
#include <span>
#include <thread>

#include "common/clock.h"
#include "record/nccl/recorder.h"

namespace trainmover::nccl {

class CompletionWriter {
 public:
  explicit CompletionWriter(Recorder& recorder);
  ~CompletionWriter();
  CompletionWriter(const CompletionWriter&) = delete;
  CompletionWriter& operator=(const CompletionWriter&) = delete;

  // A copy was issued; complete() or abandon() will follow for it.
  void expect();
  // The copy landed: `data` is written on the writer thread, then
  // `release` is called (it returns the buffer to its pool).
  void complete(const CallEntry& entry, std::span<const std::byte> data,
                std::function<void()> release);
  // The copy could not be issued; the trace cannot be completed.
  void abandon(Status why);
  // Asks for the trace to be finished once nothing is outstanding.
  void finish_when_idle();
  // Waits until nothing is outstanding; false when the deadline came first.
  bool drain(Deadline deadline);

 private:
  struct Item {
    CallEntry entry;
    std::span<const std::byte> data;
    std::function<void()> release;
  };
  void run();
  void write(Item& item);
  void maybe_finish(std::unique_lock<std::mutex>& lock);

  Recorder& recorder_;
  std::mutex mu_;
  std::condition_variable wake_;  // the writer thread: work or stop
  std::condition_variable idle_;  // drain(): outstanding reached 0
  std::deque<Item> queue_;
  uint64_t outstanding_ = 0;
  bool finish_requested_ = false;
  bool stop_ = false;
  std::thread thread_;  // last: starts after the state above exists
};

}  // namespace trainmover::nccl
