#include "runtime_job.h"

#include <sys/stat.h>
#include <unistd.h>

#include <cerrno>
#include <cstdio>
#include <cstdlib>
#include <filesystem>
#include <memory>
#include <mutex>
#include <optional>

#include "child_env.h"
#include "common/parse.h"
#include "control/coordinator.h"
#include "control/job_file.h"
#include "event_printer.h"

namespace trainmover::launcher {
namespace {

using nlohmann::json;

std::string status_line(control::Coordinator& coordinator) {
  auto st = coordinator.status(std::chrono::seconds(1));
  if (!st.ok()) return "";
  const json& j = *st;
  int ready = 0;
  for (const json& sb : j.value("standbys", json::array()))
    if (sb.value("state", std::string()) == "ready") ++ready;
  std::string recovery = j.contains("recovery") && !j["recovery"].is_null()
                             ? str_cat(", recovering slot ", j["recovery"].value("slot", -1))
                             : "";
  return str_cat("step ", j.value("step", json()).dump(), ", epoch ", j.value("epoch", 0),
                 ", standbys ready ", ready, recovery);
}

// A directory this launcher made, removed with what is in it when the job
// ends; empty when the directory was given (and is kept).
class OwnedDir {
 public:
  OwnedDir() = default;
  explicit OwnedDir(std::string path) : path_(std::move(path)) {}
  OwnedDir(const OwnedDir&) = delete;
  OwnedDir& operator=(const OwnedDir&) = delete;
  ~OwnedDir() {
    std::error_code ignored;  // a leftover in $TMPDIR is no reason to fail the job
    if (!path_.empty()) std::filesystem::remove_all(path_, ignored);
  }

 private:
  std::string path_;
};

// The trace directory's variables for the children, and the directory.
Result<EnvVars> warmup_env(const RuntimeJobOptions& options, std::optional<OwnedDir>& owned) {
  if (options.warmup == "none")
    return EnvVars{{"TRAINMOVER_WARMUP", "none"}, {"TRAINMOVER_TRACE_DIR", ""}};
  std::string dir = options.trace_dir;
  if (dir.empty()) {
    std::string pattern = get_env("TMPDIR").value_or("/tmp") + "/trainmover-traces.XXXXXX";
    if (mkdtemp(pattern.data()) == nullptr) return system_error("mkdtemp " + pattern, errno);
    dir = pattern;
    owned.emplace(dir);
  } else if (mkdir(dir.c_str(), 0750) != 0 && errno != EEXIST) {
    return system_error("--trace-dir " + dir, errno);
  }
  return EnvVars{{"TRAINMOVER_WARMUP", "replay"}, {"TRAINMOVER_TRACE_DIR", dir}};
}

}  // namespace

Result<RuntimeJobResult> run_runtime_job(RuntimeJobOptions options) {
  LocalJobOptions& job = options.job;
  if (options.pp < 1 || job.nprocs % options.pp != 0)
    return error(TM_ERROR_INVALID_ARGUMENT, "--pp ", options.pp, " does not divide --nprocs ",
                 job.nprocs);
  TM_ASSIGN_OR_RETURN(control::Layout layout,
                      control::Layout::create(job.nprocs / options.pp, options.pp));
  std::optional<OwnedDir> trace_dir;
  TM_ASSIGN_OR_RETURN(EnvVars warmup, warmup_env(options, trace_dir));
  auto printer = std::make_shared<EventPrinter>("trainmover-launch");
  std::unique_ptr<control::Coordinator> coordinator;
  job.recover_failures = true;
  job.prepare_job = [&](const JobSecret& secret, uint64_t job_id) -> Result<EnvVars> {
    control::CoordinatorConfig config;
    config.job_id = job_id;
    config.layout = layout;
    config.events_path = options.events;
    config.heartbeat_timeout = seconds(options.heartbeat_timeout_s);
    config.standby_wait = seconds(options.standby_wait_s);
    config.on_event = [printer](const json& e) { printer->print(e); };
    TM_ASSIGN_OR_RETURN(coordinator, control::Coordinator::start(config, secret));
    if (!options.job_file.empty()) {
      TM_RETURN_IF_ERROR(control::write_job_file(
          options.job_file, {coordinator->address(), job_id, secret.to_hex(), getpid()}));
    }
    EnvVars env = warmup;
    env.emplace_back("TRAINMOVER_CONTROL", coordinator->address());
    env.emplace_back("TRAINMOVER_SWITCH", options.switch_mode);
    return env;
  };
  job.on_exit = [&](pid_t pid, int exit_code, int signal) {
    if (coordinator) coordinator->report_exit(pid, exit_code, signal);
  };
  job.on_dying = [&](pid_t pid) {
    if (coordinator) coordinator->report_dying(pid);
  };
  job.finished_training = [&](pid_t pid) {
    if (!coordinator) return false;
    auto finished = coordinator->finished_training(pid);
    return finished.ok() && *finished;
  };
  job.stop_reason = [&]() -> std::optional<std::string> {
    return coordinator ? coordinator->stopped_reason() : std::nullopt;
  };
  if (!options.quiet) {
    job.on_tick = [&] {
      if (!coordinator) return;
      std::string line = status_line(*coordinator);
      if (!line.empty()) std::fprintf(stderr, "trainmover-launch: [%s]\n", line.c_str());
    };
  }
  auto ran = run_local_job(job);
  if (!options.job_file.empty()) (void)unlink(options.job_file.c_str());
  if (!ran.ok()) return ran.status();
  RuntimeJobResult result;
  const EventTotals totals = printer->totals();
  result.failures = totals.failures;
  result.recoveries = totals.recoveries;
  result.downtime_s = totals.downtime_s;
  result.job = std::move(*ran);
  return result;
}

}  // namespace trainmover::launcher
