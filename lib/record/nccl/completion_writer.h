// Writes recorded calls to the trace off the training path.
//
// Record mode copies a call's output into pinned host memory on the
// caller's stream and records a CUDA event behind the copy; complete()
// queues the call with a `landed` check (that event). Nothing but the copy
// is put on the stream: no host callback, which would hold the stream until
// a host thread had run it. This class's thread waits, in queue order, for
// each call's bytes to land (polling `landed`, backing off from 20 us to
// 1 ms), hands them to the Recorder and releases the buffer. It also
// finishes the trace once the windows are closed and every copy has landed,
// without the application thread ever waiting for a stream.
//
// Thread-safe. The destructor writes what is queued and has landed; a call
// still not landed then (a stream that never got there) leaves the trace
// unfinished, and its buffer is not released (the copy may still write it).
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
#include "common/status.h"
#include "record/nccl/recorder.h"

namespace trainmover::nccl {

class CompletionWriter {
 public:
  explicit CompletionWriter(Recorder& recorder);
  ~CompletionWriter();
  CompletionWriter(const CompletionWriter&) = delete;
  CompletionWriter& operator=(const CompletionWriter&) = delete;

  // Whether a queued call's bytes are in `data` yet: true, false (ask
  // again later) or an error, which stops the recording. Called on the
  // writer thread only.
  using Landed = std::function<Result<bool>()>;

  // A copy is being issued; complete() or abandon() will follow for it.
  void expect();
  // Queues the call: once `landed` says so (null: already), `data` is
  // written on the writer thread, then `release` is called (it returns the
  // buffer to its pool).
  void complete(const CallEntry& entry, std::span<const std::byte> data, Landed landed,
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
    Landed landed;
    std::function<void()> release;
  };
  void run();
  // Waits (lock held, released while waiting) until the front item has
  // landed; false when it never will (an error, or stop with it in flight).
  bool wait_front_landed(std::unique_lock<std::mutex>& lock);
  void drop_queue(std::unique_lock<std::mutex>& lock, const Status& why);
  // Logs `why` and aborts the trace (no lock held).
  void stop_recording(const Status& why);
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
