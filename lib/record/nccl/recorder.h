// The CUDA-free half of record mode: numbers communicators and calls,
// applies the record window and hands finished entries to a TraceSink.
//
// Thread-safe: the interposer calls it from application threads and the
// completion writer from its own thread; one mutex guards everything, and
// the sink is only called under it. After an error the recorder stops
// (the trace stays unfinished, so replay rejects it as truncated) and
// reports the first error.
#pragma once

#include <cstddef>
#include <cstdint>
#include <memory>
#include <mutex>
#include <optional>
#include <span>
#include <vector>

#include "common/status.h"
#include "record/nccl/entries.h"
#include "record/nccl/sink.h"
#include "record/nccl/window.h"

namespace trainmover::nccl {

class Recorder {
 public:
  Recorder(uint64_t calls_per_comm, std::unique_ptr<TraceSink> sink);

  // Registers a new communicator (its ordinal is assigned here) and writes
  // its entry. Returns the ordinal.
  Result<uint32_t> add_comm(CommEntry entry);
  // Numbers a data call on `comm`; returns its entry when the window admits
  // it, nullopt when it is not recorded. `group` as in RecordWindow::admit.
  std::optional<CallEntry> admit(uint32_t comm, const CallDesc& call, uint64_t group);
  // Writes a call whose output bytes are now on the host.
  Status put_call(const CallEntry& call, std::span<const std::byte> output);
  // True when every communicator's window is closed (outside groups), the
  // trace may then be finished.
  bool windows_closed() const;
  // Finishes the trace once; later calls return the first result.
  Status finish();
  bool finished() const;
  // Communicators registered so far.
  size_t comm_count() const;
  // Stops recording for `why`: the trace is never finished.
  void abort(const Status& why);
  // The first error, or ok.
  Status status() const;

 private:
  Status fail(Status s);

  mutable std::mutex mu_;
  RecordWindow window_;
  std::unique_ptr<TraceSink> sink_;
  std::vector<CommEntry> comms_;
  std::vector<uint64_t> next_seq_;
  bool finished_ = false;
  Status first_error_;
};

}  // namespace trainmover::nccl
