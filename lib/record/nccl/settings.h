// The interposer's settings, read from the environment once per process.
//
// Every variable is listed in nccl_environment_variables() and documented
// in libtrainmover-nccl(7); a test keeps the two in step.
#pragma once

#include <cstdint>
#include <functional>
#include <optional>
#include <string>
#include <utility>
#include <vector>

#include "common/status.h"
#include "record/role.h"

namespace trainmover::nccl {

enum class Mode { kOff, kRecord, kReplay };

const char* mode_name(Mode mode);

struct Settings {
  Mode mode = Mode::kOff;
  std::string trace_dir;         // the job's trace directory (record::TraceDirectory)
  record::Role role;             // which process of the job this is, e.g. "rank=3"
  uint64_t job_id = 0;           // the job the trace belongs to
  uint64_t record_calls = 1000;  // the window: data calls per communicator
  double replay_wait_s = 300;    // how long a call past the trace waits
};

// The trace file of this role: "<dir>/<role>.tmtrace".
std::string trace_path(const Settings& settings);

// Reads the settings through `getenv` (a parameter so tests need not touch
// the process environment). Errors name the variable and its bad value.
using EnvLookup = std::function<std::optional<std::string>(const char*)>;
Result<Settings> settings_from_env(const EnvLookup& getenv);

// (name, meaning) of every variable the interposer reads.
const std::vector<std::pair<const char*, const char*>>& nccl_environment_variables();

}  // namespace trainmover::nccl
