#include "record/nccl/settings.h"

#include "common/parse.h"
#include "record/trace_dir.h"

namespace trainmover::nccl {
namespace {

constexpr const char* kMode = "TRAINMOVER_NCCL_MODE";
constexpr const char* kTraceDir = "TRAINMOVER_NCCL_TRACE_DIR";
constexpr const char* kRole = "TRAINMOVER_NCCL_ROLE";
constexpr const char* kJob = "TRAINMOVER_NCCL_JOB";
constexpr const char* kRecordCalls = "TRAINMOVER_NCCL_RECORD_CALLS";
constexpr const char* kReplayWait = "TRAINMOVER_NCCL_REPLAY_WAIT";

Result<Mode> parse_mode(const std::string& text) {
  if (text == "off") return Mode::kOff;
  if (text == "record") return Mode::kRecord;
  if (text == "replay") return Mode::kReplay;
  return error(TM_ERROR_INVALID_ARGUMENT, kMode, "=", text, ": expected off, record or replay");
}

// The role is lib/record's ("stage=first,tp=0"); by default "rank=<RANK>",
// from the RANK variable that torchrun and similar launchers set.
Result<record::Role> role_from_env(const EnvLookup& getenv) {
  if (auto text = getenv(kRole)) {
    auto role = record::Role::parse(*text);
    if (!role.ok()) return role.status().with_context(kRole);
    return role;
  }
  if (auto rank = getenv("RANK")) {
    auto n = parse_int(*rank, 0, INT32_MAX);
    if (!n.ok()) return n.status().with_context("RANK");
    record::Role role;
    TM_RETURN_IF_ERROR(role.set_attribute("rank", std::to_string(*n)));
    return role;
  }
  return error(TM_ERROR_INVALID_ARGUMENT, kRole, " is not set (nor RANK): say which process ",
               "of the job this is");
}

Status read_numbers(const EnvLookup& getenv, Settings& s) {
  if (auto calls = getenv(kRecordCalls)) {
    auto n = parse_int(*calls, 1, INT64_MAX);
    if (!n.ok()) return n.status().with_context(kRecordCalls);
    s.record_calls = static_cast<uint64_t>(*n);
  }
  if (auto job = getenv(kJob)) {
    auto n = parse_int(*job, 0, INT64_MAX);
    if (!n.ok()) return n.status().with_context(kJob);
    s.job_id = static_cast<uint64_t>(*n);
  }
  if (auto wait = getenv(kReplayWait)) {
    auto secs = parse_seconds(*wait);
    if (!secs.ok()) return secs.status().with_context(kReplayWait);
    if (*secs > 1e7)
      return error(TM_ERROR_INVALID_ARGUMENT, kReplayWait, "=", *wait, ": at most 1e7 seconds");
    s.replay_wait_s = *secs;
  }
  return Status::Ok();
}

}  // namespace

const char* mode_name(Mode mode) {
  switch (mode) {
    case Mode::kOff:
      return "off";
    case Mode::kRecord:
      return "record";
    case Mode::kReplay:
      return "replay";
  }
  return "unknown";
}

std::string trace_path(const Settings& settings) {
  return record::TraceDirectory(settings.trace_dir).path_for(settings.role);
}

Result<Settings> settings_from_env(const EnvLookup& getenv) {
  Settings s;
  if (auto mode = getenv(kMode)) {
    TM_ASSIGN_OR_RETURN(s.mode, parse_mode(*mode));
  }
  if (s.mode == Mode::kOff) return s;
  auto dir = getenv(kTraceDir);
  if (!dir)
    return error(TM_ERROR_INVALID_ARGUMENT, kTraceDir, " is not set (", kMode, "=",
                 mode_name(s.mode), " needs a trace directory)");
  s.trace_dir = *dir;
  TM_ASSIGN_OR_RETURN(s.role, role_from_env(getenv));
  TM_RETURN_IF_ERROR(read_numbers(getenv, s));
  return s;
}

const std::vector<std::pair<const char*, const char*>>& nccl_environment_variables() {
  static const std::vector<std::pair<const char*, const char*>> vars = {
      {kMode, "off (default), record or replay"},
      {kTraceDir, "directory of the trace files"},
      {kRole, "this process's role in the job (default rank=<RANK>)"},
      {kJob, "the job id (decimal) a trace belongs to; replay rejects another job's trace"},
      {kRecordCalls, "record window: data calls per communicator (default 1000)"},
      {kReplayWait, "seconds a call past the end of the trace waits (default 300)"},
  };
  return vars;
}

}  // namespace trainmover::nccl
