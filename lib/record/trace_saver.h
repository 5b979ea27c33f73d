// TraceSaver: encodes a finished trace and stores it in a trace directory on
// a thread of its own, so the training loop waits for neither compression,
// nor the disk, nor the comparison with another replica's trace. The thread
// runs with SCHED_IDLE and the idle I/O class, so it takes as little as the
// kernel allows from the training loop.
//
// Owns the builder, whose recorded bytes it gives back once the trace is
// stored (room faulted in ahead and never written stays until the saver
// goes, see ByteArena::free_written), and the thread; the destructor waits for the thread (a
// bounded job: one encode, one file write, at most one file read). The
// outcome is logged when the save ends (a conflict or an error as a warning)
// and returned by wait(). wait() and the destructor are for one thread.
#pragma once

#include <optional>
#include <string>
#include <thread>

#include "record/trace_builder.h"
#include "record/trace_dir.h"

namespace trainmover::record {

class TraceSaver {
 public:
  TraceSaver(TraceBuilder builder, uint32_t iterations, Compression compression, std::string dir);
  ~TraceSaver();
  TraceSaver(const TraceSaver&) = delete;
  TraceSaver& operator=(const TraceSaver&) = delete;

  // Waits until the trace is stored; the same result on every call.
  const Result<StoreResult>& wait();

 private:
  void run();

  TraceBuilder builder_;
  uint32_t iterations_;
  Compression compression_;
  std::string dir_;
  Result<StoreResult> result_;  // written by the thread, read after join
  std::thread thread_;          // last: starts once the rest is set
};

}  // namespace trainmover::record
