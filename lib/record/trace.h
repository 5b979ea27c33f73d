// Trace: a checked, parsed trace file, and TraceCursor, which walks it call
// by call for a replay.
//
// Parsing checks everything before a byte is trusted and rejects, with a
// message that starts with the kind of problem:
//   "not a trace"    wrong magic                           TM_ERROR_PROTOCOL
//   "truncated"      the file ends before its header says  TM_ERROR_PROTOCOL
//   "corrupted"      a checksum or field does not hold     TM_ERROR_PROTOCOL
//   "wrong version"  written by another format version     TM_ERROR_PROTOCOL
//   "wrong job", "wrong role", "wrong api"                 TM_ERROR_INVALID_ARGUMENT
//                    a sound trace, but not the one asked for
// A Trace owns its bytes; the CallViews point into them (move-only).
#pragma once

#include <cstddef>
#include <cstdint>
#include <optional>
#include <span>
#include <string>
#include <vector>

#include "record/trace_format.h"

namespace trainmover::record {

// What the reader requires of a trace; unset fields are not checked.
struct TraceExpect {
  std::optional<uint64_t> job_id;
  std::optional<Role> role;
  std::optional<std::string> api;
};

inline constexpr size_t kDefaultMaxTraceBytes = size_t{1} << 40;

// The header of a trace file, checked (prologue, header CRC, fields), and
// where its body starts; the body is not looked at.
Result<std::pair<HeaderFields, size_t>> parse_header(std::span<const std::byte> file);

class Trace {
 public:
  // `max_body_bytes` bounds the decompressed body (a corrupted size must not
  // allocate without limit).
  static Result<Trace> parse(std::vector<std::byte> file, const TraceExpect& expect = {},
                             size_t max_body_bytes = kDefaultMaxTraceBytes);
  // Reads and parses; errors are prefixed with "trace <path>: ".
  static Result<Trace> load(const std::string& path, const TraceExpect& expect = {});

  Trace(Trace&&) = default;
  Trace& operator=(Trace&&) = default;

  const TraceMeta& meta() const { return header_.meta; }
  const HeaderFields& header() const { return header_; }
  bool compressed() const { return (header_.flags & kFlagZstd) != 0; }
  uint32_t iterations() const { return header_.iterations; }
  size_t file_bytes() const { return file_bytes_; }
  const std::vector<CallView>& calls() const { return calls_; }
  // The calls of iteration `i` (< iterations()).
  std::span<const CallView> iteration(uint32_t i) const;
  // Same identity (TraceMeta but slot), iterations and calls, outputs included.
  bool same_content(const Trace& other) const;

 private:
  Trace() = default;
  Status parse_body(std::span<const std::byte> body);

  HeaderFields header_;
  size_t file_bytes_ = 0;
  std::vector<std::byte> storage_;
  std::vector<CallView> calls_;
  std::vector<size_t> iteration_start_;  // iterations()+1 offsets into calls_
};

// Replays a trace in order. Every problem is TM_ERROR_PROTOCOL with a message
// naming the iteration and call index. Not thread-safe.
class TraceCursor {
 public:
  explicit TraceCursor(const Trace& trace) : trace_(&trace) {}

  // Enters the next iteration; fails past the last recorded one, or when the
  // current iteration was not ended.
  Status begin_iteration();
  // The next call of the current iteration; fails outside an iteration and
  // past the iteration's last recorded call.
  Result<const CallView*> next();
  // Fails when calls of the iteration were not replayed.
  Status end_iteration();

  bool in_iteration() const { return in_iteration_; }
  uint32_t iteration() const { return iteration_; }  // current (or last) iteration
  uint32_t index() const { return index_; }          // of the next call
  uint32_t iterations_done() const { return done_; }

 private:
  const Trace* trace_;
  bool in_iteration_ = false;
  uint32_t iteration_ = 0;
  uint32_t index_ = 0;
  uint32_t done_ = 0;
};

}  // namespace trainmover::record
