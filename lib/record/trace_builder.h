// TraceBuilder: a trace assembled in memory as calls complete, then encoded
// as one file. The recorder of the C API and the NCCL interposer both append
// calls to one while a job runs and write it once recording ends.
//
// Not thread-safe: one thread appends (the caller of the collectives).
// Errors: append() rejects calls out of order (an iteration number going
// back, an index that is not the next one of its iteration); finish() fails
// when compression is asked for and this build has no zstd.
#pragma once

#include <cstddef>
#include <cstdint>
#include <span>
#include <vector>

#include "record/trace_format.h"

namespace trainmover::record {

enum class Compression { kNone, kZstd };

class TraceBuilder {
 public:
  explicit TraceBuilder(TraceMeta meta) : meta_(std::move(meta)) {}

  // Copies `output`; the CRC of the record is computed here, while the bytes
  // are in cache.
  Status append(const CallInfo& call, std::span<const std::byte> output);
  // The index the next call of `iteration` must have.
  uint32_t next_index(uint32_t iteration) const;

  // The whole file; `iterations` counts iterations including any without
  // calls, and must be greater than every appended call's iteration.
  Result<std::vector<std::byte>> finish(uint32_t iterations, Compression compression) const;

  const TraceMeta& meta() const { return meta_; }
  TraceMeta& meta() { return meta_; }
  uint64_t calls() const { return calls_; }
  size_t body_bytes() const { return body_.size(); }

 private:
  TraceMeta meta_;
  std::vector<std::byte> body_;
  uint64_t calls_ = 0;
  uint32_t last_iteration_ = 0;
  uint32_t next_index_ = 0;  // within last_iteration_
};

}  // namespace trainmover::record
