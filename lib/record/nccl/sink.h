// Where the recorder puts a trace's entries. The file-backed sink writes
// them with lib/record's trace writer; tests use an in-memory one.
#pragma once

#include <cstddef>
#include <span>

#include "common/status.h"
#include "record/nccl/entries.h"

namespace trainmover::nccl {

// Calls are serialised by the caller; entries may come in any order across
// communicators (each call carries its sequence number).
class TraceSink {
 public:
  virtual ~TraceSink() = default;
  virtual Status put_comm(const CommEntry& comm) = 0;
  virtual Status put_call(const CallEntry& call, std::span<const std::byte> output) = 0;
  // Completes the trace; nothing is put after it.
  virtual Status finish() = 0;
};

}  // namespace trainmover::nccl
