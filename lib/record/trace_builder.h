// TraceBuilder: a trace assembled in memory as calls complete, then encoded
// as one file. The recorder of the C API and the NCCL interposer both append
// calls to one while a job runs and write it once recording ends.
//
// Appending copies the output into an arena that never moves (see arena.h):
// that is all the recording costs on the caller's path. Checksumming,
// encoding and compressing happen in encode(), meant for later, off it.
//
// Not thread-safe: one thread appends; encode() may then run on another
// thread once appending has stopped. Errors: append() rejects calls out of
// order (an iteration number going back, an index that is not the next one
// of its iteration); encode() fails when compression is asked for and this
// build has no zstd.
#pragma once

#include <cstddef>
#include <cstdint>
#include <span>
#include <vector>

#include "record/arena.h"
#include "record/trace_format.h"

namespace trainmover::record {

enum class Compression { kNone, kZstd };

// A trace file as parts to write one after the other. The body pieces point
// into the builder (or into `owned`), so it lives only as long as both.
struct EncodedTrace {
  TraceMeta meta;
  HeaderFields fields;
  std::vector<std::span<const std::byte>> raw_body;  // uncompressed, in the builder
  std::vector<std::byte> header;
  std::vector<std::span<const std::byte>> body;
  std::vector<std::byte> owned;  // the compressed body, when compressed
  std::vector<std::byte> trailer;

  std::vector<std::span<const std::byte>> parts() const;
  size_t size() const;
  std::vector<std::byte> concatenate() const;
};

class TraceBuilder {
 public:
  explicit TraceBuilder(TraceMeta meta, ArenaPages pages = ArenaPages::kSmall)
      : meta_(std::move(meta)), body_(pages) {}

  Status append(const CallInfo& call, std::span<const std::byte> output);
  // The index the next call of `iteration` must have.
  uint32_t next_index(uint32_t iteration) const;

  // `iterations` counts iterations including any without calls, and must be
  // greater than every appended call's iteration.
  // Checksums the records appended since the last call first.
  Result<EncodedTrace> encode(uint32_t iterations, Compression compression);
  // The whole file in one buffer.
  Result<std::vector<std::byte>> finish(uint32_t iterations, Compression compression);

  // Gives back the memory of the calls appended so far, which are dropped,
  // once they are saved (see ByteArena::free_written). The meta stays.
  void free_calls();

  const TraceMeta& meta() const { return meta_; }
  TraceMeta& meta() { return meta_; }
  uint64_t calls() const { return calls_; }
  size_t body_bytes() const { return body_.size(); }
  // Room for the next `bytes` of records (see ByteArena::reserve), for
  // prefaulting it before the calls are appended.
  Result<std::span<std::byte>> reserve(size_t bytes) { return body_.reserve(bytes); }

 private:
  TraceMeta meta_;
  ByteArena body_;
  uint64_t calls_ = 0;
  uint32_t last_iteration_ = 0;
  uint32_t next_index_ = 0;  // within last_iteration_
  size_t sealed_bytes_ = 0;  // records before this offset have their CRC
};

}  // namespace trainmover::record
