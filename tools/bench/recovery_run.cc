#include "recovery_run.h"

#include <dirent.h>
#include <fcntl.h>
#include <poll.h>
#include <signal.h>
#include <stdlib.h>
#include <sys/prctl.h>
#include <sys/wait.h>
#include <unistd.h>

#include <algorithm>
#include <cerrno>
#include <chrono>
#include <filesystem>
#include <fstream>
#include <optional>
#include <regex>
#include <sstream>

#include "common/clock.h"
#include "common/median.h"
#include "common/parse.h"
#include "common/unique_fd.h"
#include "run_io.h"

namespace trainmover::bench {
namespace {

// /proc/PID/stat after the command's closing parenthesis: field 3 on.
std::vector<std::string> stat_fields(pid_t pid) {
  std::string text = read_text(str_cat("/proc/", pid, "/stat"));
  size_t close = text.rfind(')');
  std::vector<std::string> fields;
  if (close == std::string::npos) return fields;
  std::istringstream in(text.substr(close + 1));
  for (std::string f; in >> f;) fields.push_back(f);
  return fields;  // fields[0] is the state (field 3), [1] ppid, [11..14] utime..cstime
}

double field_seconds(const std::vector<std::string>& f, size_t i) {
  static const double kTick = static_cast<double>(sysconf(_SC_CLK_TCK));
  return i < f.size() ? std::strtod(f[i].c_str(), nullptr) / kTick : 0.0;
}

// The job's processes: the launcher's children (ranks and standbys).
std::vector<pid_t> children_of(pid_t parent) {
  std::vector<pid_t> pids;
  std::unique_ptr<DIR, int (*)(DIR*)> dir(opendir("/proc"), closedir);
  if (!dir) return pids;
  while (dirent* e = readdir(dir.get())) {
    char* end = nullptr;
    long pid = std::strtol(e->d_name, &end, 10);
    if (end == e->d_name || *end != '\0') continue;
    auto f = stat_fields(static_cast<pid_t>(pid));
    if (f.size() > 1 && std::strtol(f[1].c_str(), nullptr, 10) == parent)
      pids.push_back(static_cast<pid_t>(pid));
  }
  return pids;
}

// CPU seconds of the whole job: the launcher's own and its reaped
// children's (cutime, cstime), plus every live child's (a killed rank's
// time moves from the second term to the first when the launcher reaps it).
double job_cpu_s(pid_t launcher) {
  auto f = stat_fields(launcher);
  double total =
      field_seconds(f, 11) + field_seconds(f, 12) + field_seconds(f, 13) + field_seconds(f, 14);
  for (pid_t child : children_of(launcher)) {
    auto c = stat_fields(child);
    total += field_seconds(c, 11) + field_seconds(c, 12);
  }
  return total;
}

bool has_env(pid_t pid, const std::string& entry) {
  std::string env = read_text(str_cat("/proc/", pid, "/environ"));
  for (std::string_view e : split(env, '\0'))
    if (e == entry) return true;
  return false;
}

// The active process serving `slot` (not a standby: they all carry slot 0).
Result<pid_t> find_slot(pid_t launcher, int slot) {
  for (pid_t pid : children_of(launcher)) {
    if (has_env(pid, str_cat("TRAINMOVER_SLOT=", slot)) && !has_env(pid, "TRAINMOVER_STANDBY=1"))
      return pid;
  }
  return error(TM_ERROR_NOT_FOUND, "no process of the job serves slot ", slot);
}

// What the run's output said, line by line as it arrived.
struct Watch {
  Watch(const RecoveryPlan& p, pid_t l) : plan(p), launcher(l) {}
  const RecoveryPlan& plan;
  pid_t launcher;
  std::vector<double> step_times_s;  // the trainer's "time X ms" before the kill
  int64_t highest_step = 0;          // logged before the first step after recovery
  std::optional<double> kill_time, first_time;
  double cpu_at_kill = 0, cpu_at_first = 0;
  std::optional<uint64_t> resume_step;
  double load_s = 0;  // checkpoint load (stop-restart)
  std::string log;    // everything, for the error message
  Status failure;

  void line(const std::string& text, double now);
  void kill_victim();
};

const std::regex kStepLine("trainmover-gpt: step ([0-9]+)/[0-9]+ loss \\S+ time ([0-9.]+) ms");
const std::regex kResumeLine("resum(?:e|ing|ed) at step ([0-9]+)");
const std::regex kLoadLine("resumed at step [0-9]+ from .* in ([0-9.]+) ms");

void Watch::kill_victim() {
  auto victim = find_slot(launcher, plan.victim);
  if (!victim.ok()) {
    failure = victim.status();
    return;
  }
  cpu_at_kill = job_cpu_s(launcher);
  kill_time = unix_now();
  if (kill(*victim, SIGKILL) != 0) failure = system_error("kill the victim", errno);
}

void Watch::line(const std::string& text, double now) {
  log += text + "\n";
  std::smatch m;
  if (std::regex_search(text, m, kStepLine)) {
    const int64_t step = std::strtoll(m[1].str().c_str(), nullptr, 10);
    if (!kill_time) {
      if (step > 5) step_times_s.push_back(std::strtod(m[2].str().c_str(), nullptr) / 1e3);
      if (step >= plan.kill_step) kill_victim();
    }
    // The first step after the recovery: its number follows the resume step
    // announced after the kill (lines written before the kill precede that
    // announcement in the pipe).
    if (kill_time && resume_step && !first_time && step == static_cast<int64_t>(*resume_step) + 1) {
      cpu_at_first = job_cpu_s(launcher);
      first_time = now;
    }
    if (!first_time) highest_step = std::max(highest_step, step);
    return;
  }
  if (kill_time && !resume_step && std::regex_search(text, m, kResumeLine))
    resume_step = std::strtoull(m[1].str().c_str(), nullptr, 10);
  if (kill_time && std::regex_search(text, m, kLoadLine))
    load_s = std::strtod(m[1].str().c_str(), nullptr) / 1e3;
}

// Reads the launcher's output until it exits; returns its wait status.
Result<int> watch_run(Launched& run, Watch& watch, Deadline deadline) {
  return read_lines_until_exit(run, deadline, watch.plan.timeout_s,
                               [&watch](const std::string& line, double now) {
                                 watch.line(line, now);
                                 return watch.failure;
                               });
}

Status fill_breakdown(const RecoveryPlan& plan, const std::vector<Json>& events, const Watch& watch,
                      RecoveryRow& row) {
  const double kill_time = *watch.kill_time;
  if (plan.impl == RecoveryImpl::kStopRestart) {
    auto failed = find_event(events, "rank_failed", 0);
    auto started = find_event(events, "job_started", 1);
    if (!failed || !started)
      return error(TM_ERROR_INTERNAL, "the event log has no rank_failed or no restart");
    const double failed_at = failed->value("time", 0.0), started_at = started->value("time", 0.0);
    row.detection_s = failed_at - kill_time;
    row.switch_s = started_at - failed_at;
    row.state_transfer_s = watch.load_s;
    row.first_step_s = *watch.first_time - started_at - watch.load_s;
    return Status::Ok();
  }
  auto failed = find_event(events, "slot_failed");
  auto done = find_event(events, "recovery_done");
  if (!failed || !done) return error(TM_ERROR_INTERNAL, "the event log has no recovery_done");
  row.detection_s = failed->value("time", 0.0) - kill_time;
  row.switch_s = done->value("switch_s", 0.0);
  row.state_transfer_s = done->value("state_transfer_s", 0.0);
  row.first_step_s = done->value("first_step_s", 0.0);
  row.critical_cpu_s = done->value("critical_cpu_s", -1.0);
  if (done->contains("critical_cpu_parts")) row.critical_cpu_parts = (*done)["critical_cpu_parts"];
  return Status::Ok();
}

std::vector<std::string> command(const RecoveryPlan& plan, const std::string& events,
                                 const std::string& checkpoints) {
  std::vector<std::string> argv = {
      plan.launcher, "--quiet", "--nprocs",  std::to_string(plan.nranks),
      "--events",    events,    "--timeout", std::to_string(plan.timeout_s)};
  if (plan.impl == RecoveryImpl::kStopRestart) {
    argv.insert(argv.end(), {"--on-failure", "restart", "--max-restarts", "1"});
  } else {
    argv.insert(argv.end(), {"--pp", "2", "--standby", "1"});
    if (plan.impl == RecoveryImpl::kColdStandby)
      argv.insert(argv.end(), {"--standby-start", "failure", "--switch", "rebuild"});
  }
  argv.insert(argv.end(),
              {"--", plan.trainer, "--dp", std::to_string(plan.nranks / 2), "--pp", "2", "--steps",
               std::to_string(plan.steps), "--log-every", "1", "--checkpoint-dir", checkpoints,
               "--checkpoint-every", std::to_string(plan.checkpoint_every), "--resume"});
  argv.insert(argv.end(), plan.model.begin(), plan.model.end());
  return argv;
}

// A private directory for one run's events and checkpoints, removed after.
class RunDir {
 public:
  static Result<RunDir> create() {
    std::string pattern =
        (std::filesystem::temp_directory_path() / "trainmover-bench-recovery-XXXXXX").string();
    if (mkdtemp(pattern.data()) == nullptr) return system_error("mkdtemp", errno);
    return RunDir(pattern);
  }
  RunDir(RunDir&& other) noexcept : path_(std::exchange(other.path_, "")) {}
  ~RunDir() {
    std::error_code ignored;
    if (!path_.empty()) std::filesystem::remove_all(path_, ignored);
  }
  const std::string& path() const { return path_; }

 private:
  explicit RunDir(std::string path) : path_(std::move(path)) {}
  std::string path_;
};

}  // namespace

const char* recovery_impl_name(RecoveryImpl impl) {
  switch (impl) {
    case RecoveryImpl::kTrainMover:
      return "trainmover";
    case RecoveryImpl::kStopRestart:
      return "stop-restart";
    case RecoveryImpl::kColdStandby:
      return "cold-standby";
  }
  return "?";
}

Json RecoveryRow::to_json() const {
  return {{"impl", recovery_impl_name(impl)},
          {"nranks", nranks},
          {"downtime_s", downtime_s},
          {"detection_s", detection_s},
          {"switch_s", switch_s},
          {"state_transfer_s", state_transfer_s},
          {"first_step_s", first_step_s},
          {"lost_steps", lost_steps},
          {"cpu_s", cpu_s},
          {"critical_cpu_s", critical_cpu_s >= 0 ? Json(critical_cpu_s) : Json(nullptr)},
          {"wall_s", wall_s},
          {"normal_step_s", normal_step_s},
          {"resume_step", resume_step}};
}

Result<RecoveryRow> run_recovery(const RecoveryPlan& plan) {
  TM_ASSIGN_OR_RETURN(RunDir dir, RunDir::create());
  const std::string events_path = dir.path() + "/events.jsonl";
  TM_ASSIGN_OR_RETURN(Launched run, launch(command(plan, events_path, dir.path() + "/ckpt")));
  Watch watch(plan, run.pid);
  auto status = watch_run(run, watch, Deadline::after(seconds(plan.timeout_s)));
  if (run.pid > 0) {  // a failed watch: the job must not outlive us
    kill(-run.pid, SIGKILL);
    (void)waitpid(run.pid, nullptr, 0);
  }
  auto tail = [&] {
    return watch.log.substr(watch.log.size() - std::min<size_t>(watch.log.size(), 3000));
  };
  if (!status.ok()) return status.status().with_context(str_cat("output:\n", tail()));
  if (!WIFEXITED(*status) || WEXITSTATUS(*status) != 0)
    return error(TM_ERROR_INTERNAL, "trainmover-launch ended with status ", *status, "; output:\n",
                 tail());
  if (!watch.kill_time)
    return error(TM_ERROR_INTERNAL, "the job never logged step ", plan.kill_step);
  if (!watch.first_time)
    return error(TM_ERROR_INTERNAL, "no step was seen after the recovery; output:\n", tail());
  TM_ASSIGN_OR_RETURN(std::vector<Json> events, read_events(events_path));
  RecoveryRow row;
  row.impl = plan.impl;
  row.nranks = plan.nranks;
  row.normal_step_s = watch.step_times_s.empty() ? 0.0 : median(watch.step_times_s);
  row.wall_s = *watch.first_time - *watch.kill_time;
  row.downtime_s = std::max(0.0, row.wall_s - row.normal_step_s);
  row.cpu_s = watch.cpu_at_first - watch.cpu_at_kill;
  row.resume_step = *watch.resume_step;
  row.lost_steps = std::max<int64_t>(0, watch.highest_step - static_cast<int64_t>(row.resume_step));
  TM_RETURN_IF_ERROR(fill_breakdown(plan, events, watch, row));
  return row;
}

}  // namespace trainmover::bench
