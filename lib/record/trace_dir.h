// TraceDirectory: the traces of a job, one file per role, named by the
// role's canonical text. Only the first recording of a role is kept: the
// identical traces of the other data-parallel replicas are dropped, and a
// different trace for a role that has one is reported as a conflict (the
// first stays). See role.h for roles whose outputs depend on the slot.
//
// Safe for concurrent writers in several processes: a trace is placed with
// link(), so exactly one writer of a role wins.
#pragma once

#include <span>
#include <string>

#include "record/role.h"
#include "record/trace.h"
#include "record/trace_builder.h"

namespace trainmover::record {

enum class StoreOutcome {
  kWritten,    // this trace is now the role's
  kDuplicate,  // an identical trace was there; this one was dropped
  kConflict,   // a different trace was there and is kept; this one was dropped
};
const char* store_outcome_name(StoreOutcome outcome);

struct StoreResult {
  StoreOutcome outcome = StoreOutcome::kWritten;
  std::string path;
  std::string detail;  // for a conflict: how the traces differ
};

class TraceDirectory {
 public:
  explicit TraceDirectory(std::string dir) : dir_(std::move(dir)) {}

  const std::string& dir() const { return dir_; }
  std::string path_for(const Role& role) const;
  // Creates the directory if needed. `file` must be a valid trace.
  Result<StoreResult> store(std::span<const std::byte> file) const;
  // The same for a trace encoded by a TraceBuilder, written part by part.
  Result<StoreResult> store(const EncodedTrace& trace) const;
  // The role's trace, checked against `expect` (whose role is set to `role`).
  Result<Trace> load(const Role& role, TraceExpect expect = {}) const;

 private:
  std::string dir_;
};

}  // namespace trainmover::record
