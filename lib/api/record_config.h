// The record-and-replay fields of tm_config_t, checked.
#pragma once

#include <cstdint>
#include <string>

#include "common/status.h"
#include "record/role.h"
#include "record/trace_builder.h"
#include "trainmover/trainmover.h"

namespace trainmover::api {

struct RecordConfig {
  uint64_t job_id = 0;
  int slot = -1;
  uint32_t iterations = 2;   // 0: recording off
  size_t reserve_bytes = 0;  // faulted in before the first recorded iteration
  std::string trace_dir;     // empty: recording off
  record::Compression compression = record::Compression::kNone;
  record::Role role;
  bool role_given = false;  // config.role was set

  bool recording() const { return iterations > 0 && !trace_dir.empty(); }
  // `config` as complete_config() (comm/config.h) takes it. Checks the
  // fields above, naming field and variable;
  // fails when compression is asked for and this build has no zstd.
  static Result<RecordConfig> from_c(const tm_config_t& config);
};

// Checks a tm_stage_t from a C caller.
Result<record::Stage> stage_from_c(tm_stage_t stage);

}  // namespace trainmover::api
