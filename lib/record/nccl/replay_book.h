// The CUDA-free half of replay mode: a loaded trace and the cursors that
// answer a program's NCCL calls from it.
//
// TraceBuilder collects entries in any order (as a trace file holds them)
// and checks them into a ReplayBook: communicators numbered 0..n-1, each
// communicator's calls numbered 0..m-1 without a gap, output sizes that fit
// the calls. The book then answers, in order, the communicators the program
// creates and the calls it issues on each; a call that differs from the
// recorded one is an error naming both, and a call past the last recorded
// one is reported as exhausted (the caller decides how to wait).
// Not thread-safe: the caller serialises.
#pragma once

#include <cstddef>
#include <cstdint>
#include <optional>
#include <span>
#include <vector>

#include "common/status.h"
#include "record/nccl/entries.h"

namespace trainmover::nccl {

class ReplayBook;

class TraceBuilder {
 public:
  Status add_comm(const CommEntry& comm);
  Status add_call(const CallEntry& call, std::span<const std::byte> output);
  // Checks the whole and hands it over; the builder is empty afterwards.
  Result<ReplayBook> build();

 private:
  struct Call {
    CallEntry entry;
    uint64_t offset;  // into payload_
  };
  std::vector<std::optional<CommEntry>> comms_;
  std::vector<Call> calls_;
  std::vector<std::byte> payload_;
};

class ReplayBook {
 public:
  // What the trace says a call returned.
  struct Answer {
    const CallEntry* entry;
    std::span<const std::byte> output;
  };

  // The program creates its next communicator with ncclCommInitRank (or a
  // variant); it must be the trace's next one, with the same size and rank.
  Result<CommEntry> open_init(int nranks, int rank);
  // Likewise for ncclCommSplit of communicator `parent`.
  Result<CommEntry> open_split(uint32_t parent, int color, int key);
  // The next call on `comm`: its answer, nullopt when the trace has no more
  // calls for it, an error when the program asks for something else.
  Result<std::optional<Answer>> next(uint32_t comm, const CallDesc& asked);

  const CommEntry& comm(uint32_t ordinal) const { return comms_[ordinal]; }
  size_t comm_count() const { return comms_.size(); }
  uint64_t recorded_calls(uint32_t comm) const { return calls_[comm].size(); }
  // All output bytes, contiguous (the CUDA layer pins this region).
  std::span<std::byte> payload() { return payload_; }

 private:
  friend class TraceBuilder;
  struct Call {
    CallEntry entry;
    uint64_t offset;
  };
  Result<CommEntry> open_next(const char* how);

  std::vector<CommEntry> comms_;
  std::vector<std::vector<Call>> calls_;  // by comm, in seq order
  std::vector<uint64_t> cursor_;          // next call per comm
  uint32_t opened_ = 0;                   // communicators created so far
  std::vector<std::byte> payload_;
};

}  // namespace trainmover::nccl
