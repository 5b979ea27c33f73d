#include "slurm_recovery_run.h"

#include <poll.h>
#include <signal.h>
#include <stdlib.h>
#include <sys/wait.h>
#include <unistd.h>

#include <algorithm>
#include <cerrno>
#include <filesystem>
#include <fstream>
#include <optional>
#include <regex>

#include "batch_job.h"
#include "common/clock.h"
#include "common/median.h"
#include "common/parse.h"
#include "run_io.h"

namespace trainmover::bench {
namespace {

constexpr int kVictimSlot = 1;

const std::regex kStepLine("trainmover-gpt: step ([0-9]+)/[0-9]+ loss \\S+ time ([0-9.]+) ms");
const std::regex kResumeLine("resum(?:e|ing|ed) at step ([0-9]+)");
const std::regex kLoadLine("resumed at step [0-9]+ from .* in ([0-9.]+) ms");
// slurm-requeue: the batch script's line after srun, or slurmstepd's when
// Slurm ended the job (requeued it) before srun returned.
const std::regex kRunEndLine(
    "^slurm-requeue: srun exited ([0-9]+)|\\*\\*\\* JOB [0-9]+ ON \\S+ CANCELLED");

// What the runs' output said, line by line as it arrived (one Watch spans
// the step and, for slurm-restart, its rerun).
struct Watch {
  explicit Watch(const SlurmPlan& p, std::string events)
      : plan(p), events_path(std::move(events)) {}
  const SlurmPlan& plan;
  std::string events_path;
  std::vector<double> step_times_s;
  int64_t highest_step = 0;
  std::optional<double> kill_time, first_time, srun_end, resumed_time;
  std::optional<uint64_t> resume_step;
  std::optional<int> first_srun_exit;  // slurm-requeue: the batch script's first srun
  std::string victim_host;
  double load_s = 0;
  std::string log;
  Status failure;

  void line(const std::string& text, double now);
  // line(), then whether the run must end: the handler of every output.
  Status take(const std::string& text, double now) {
    line(text, now);
    return failure;
  }
  std::string log_tail() const {
    return log.substr(log.size() - std::min<size_t>(log.size(), 3000));
  }
  void kill_victim();
};

// Every process in the mount namespace of `host`'s slurmd: the node.
Result<std::vector<pid_t>> node_processes(const std::string& cluster, const std::string& host) {
  const std::string pid_text = read_text(str_cat(cluster, "/slurmd.", host, ".pid"));
  const long slurmd = std::strtol(pid_text.c_str(), nullptr, 10);
  if (slurmd <= 0) return error(TM_ERROR_NOT_FOUND, "no slurmd pid for node ", host);
  std::error_code ec;
  const auto ns = std::filesystem::read_symlink(str_cat("/proc/", slurmd, "/ns/mnt"), ec);
  if (ec) return error(TM_ERROR_NOT_FOUND, "slurmd of ", host, " (pid ", slurmd, ") is gone");
  std::vector<pid_t> pids;
  for (const auto& entry : std::filesystem::directory_iterator("/proc", ec)) {
    const std::string name = entry.path().filename();
    if (name.find_first_not_of("0123456789") != std::string::npos) continue;
    std::error_code ignored;
    if (std::filesystem::read_symlink(entry.path() / "ns/mnt", ignored) == ns)
      pids.push_back(static_cast<pid_t>(std::stol(name)));
  }
  return pids;
}

// Slot 1's trainer and host, from its slot_registered event.
Result<std::pair<pid_t, std::string>> victim_of(const std::string& events_path) {
  TM_ASSIGN_OR_RETURN(std::vector<Json> events, read_events(events_path));
  for (const Json& e : events) {
    if (e.value("event", std::string()) == "slot_registered" && e.value("slot", -1) == kVictimSlot)
      return std::pair{static_cast<pid_t>(e.value("pid", 0)), e.value("host", std::string())};
  }
  return error(TM_ERROR_NOT_FOUND, "the event log has no slot_registered of slot ", kVictimSlot);
}

void Watch::kill_victim() {
  auto victim = victim_of(events_path);
  if (!victim.ok()) {
    failure = victim.status();
    return;
  }
  victim_host = victim->second;
  std::vector<pid_t> pids = {victim->first};
  if (plan.event == SlurmEvent::kNodeKill) {
    auto node = node_processes(plan.cluster, victim_host);
    if (!node.ok()) {
      failure = node.status();
      return;
    }
    pids = *node;
  }
  kill_time = unix_now();
  const bool victim_alive = kill(victim->first, SIGKILL) == 0;
  for (pid_t pid : pids) kill(pid, SIGKILL);
  // A kill that finds the trainer gone measures nothing: its output reached
  // us after the job had run on (maybe to its end).
  if (!victim_alive)
    failure = error(TM_ERROR_INTERNAL, "slot ", kVictimSlot, "'s trainer (pid ", victim->first,
                    ") had exited before the line of step ", plan.kill_step,
                    " arrived: the job ran ahead of its output; raise --steps");
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
    if (kill_time && resume_step && !first_time && step == static_cast<int64_t>(*resume_step) + 1)
      first_time = now;
    if (!first_time) highest_step = std::max(highest_step, step);
    return;
  }
  if (plan.impl == SlurmImpl::kSlurmRequeue && kill_time && !srun_end &&
      std::regex_search(text, m, kRunEndLine)) {
    srun_end = now;
    if (m[1].matched) first_srun_exit = std::atoi(m[1].str().c_str());
  }
  if (kill_time && !resume_step && std::regex_search(text, m, kResumeLine)) {
    resume_step = std::strtoull(m[1].str().c_str(), nullptr, 10);
    resumed_time = now;
  }
  if (kill_time && std::regex_search(text, m, kLoadLine))
    load_s = std::strtod(m[1].str().c_str(), nullptr) / 1e3;
}

// Reads srun's output until it exits; returns its wait status.
Result<int> watch_run(Launched& run, Watch& watch, Deadline deadline) {
  return read_lines_until_exit(
      run, deadline, watch.plan.timeout_s,
      [&watch](const std::string& line, double now) { return watch.take(line, now); });
}

// Runs one srun to its end, killing it (its process group) if the watch fails.
Result<int> run_step(const std::vector<std::string>& argv, const std::vector<std::string>& env,
                     Watch& watch, Deadline deadline) {
  TM_ASSIGN_OR_RETURN(Launched run, launch(argv, env));
  auto status = watch_run(run, watch, deadline);
  if (run.pid > 0) {
    kill(-run.pid, SIGKILL);
    (void)waitpid(run.pid, nullptr, 0);
  }
  if (!status.ok()) return status.status().with_context(str_cat("output:\n", watch.log_tail()));
  if (!WIFEXITED(*status))
    return error(TM_ERROR_INTERNAL, "srun ended with status ", *status, "; output:\n",
                 watch.log_tail());
  return WEXITSTATUS(*status);
}

std::vector<std::string> srun_command(const SlurmPlan& plan, int nodes, int standby,
                                      const std::string& events, const std::string& ckpt) {
  std::vector<std::string> argv = {plan.srun,
                                   str_cat("-N", nodes),
                                   str_cat("-n", nodes),
                                   "--no-kill",
                                   "--kill-on-bad-exit=0",
                                   "--trainmover",
                                   str_cat("--trainmover-standby=", standby),
                                   "--trainmover-events=" + events,
                                   plan.trainer,
                                   "--dp",
                                   std::to_string(plan.nodes),
                                   "--steps",
                                   std::to_string(plan.steps),
                                   "--log-every",
                                   "1",
                                   "--checkpoint-dir",
                                   ckpt,
                                   "--checkpoint-every",
                                   std::to_string(plan.checkpoint_every),
                                   "--resume"};
  argv.insert(argv.end(), plan.model.begin(), plan.model.end());
  return argv;
}

// The state of `host` in sinfo ("idle", "down*", ...), empty if unknown.
std::string node_state(const std::string& conf, const std::string& host) {
  auto out = slurm_command(conf, {"sinfo", "-h", "-n", host, "-o", "%t"});
  if (!out.ok()) return "";
  std::string s = out->substr(0, out->find('\n'));
  while (!s.empty() && s.back() == ' ') s.pop_back();
  return s;
}

// Starts `host`'s slurmd again in a mount namespace with its own /tmp (as
// tests/slurm/cluster.sh does) and waits until Slurm has it back in service.
Status revive_node(const SlurmPlan& plan, const std::string& host, Deadline deadline) {
  const std::string conf = plan.cluster + "/slurm.conf";
  const std::string script = str_cat("mount --bind '", plan.cluster, "/tmp/", host,
                                     "' /tmp && exec slurmd -N ", host, " -f '", conf, "'");
  TM_ASSIGN_OR_RETURN(Launched run, launch({program_path("unshare"), "--mount", "--propagation",
                                            "private", "sh", "-c", script}));
  int status = 0;
  while (waitpid(run.pid, &status, 0) < 0 && errno == EINTR) {
  }
  if (!WIFEXITED(status) || WEXITSTATUS(status) != 0)
    return error(TM_ERROR_INTERNAL, "slurmd ", host, " did not start again (status ", status, ")");
  // Back in service; "mix" too: 22.05 may keep a killed step's CPUs counted
  // on the node for minutes ("unable to update job's core use information"),
  // and the partition shares nodes (OverSubscribe=FORCE).
  auto usable = [&](const std::string& state) { return state == "idle" || state == "mix"; };
  while (!usable(node_state(conf, host))) {
    if (deadline.expired())
      return error(TM_ERROR_TIMEOUT, "node ", host, " is not idle again: ", node_state(conf, host));
    usleep(200000);
  }
  return Status::Ok();
}

// A private folder under the cluster's (the nodes see it; not their /tmp).
Result<std::string> make_run_dir(const std::string& cluster) {
  std::string pattern = cluster + "/bench-XXXXXX";
  if (mkdtemp(pattern.data()) == nullptr) return system_error("mkdtemp " + pattern, errno);
  return pattern;
}

Status fill_row(const SlurmPlan& plan, const Watch& watch, SlurmRow& row) {
  const double kill_time = *watch.kill_time;
  row.normal_step_s = watch.step_times_s.empty() ? 0.0 : median(watch.step_times_s);
  row.wall_s = *watch.first_time - kill_time;
  row.downtime_s = std::max(0.0, row.wall_s - row.normal_step_s);
  row.resume_step = *watch.resume_step;
  row.lost_steps = std::max<int64_t>(0, watch.highest_step - static_cast<int64_t>(row.resume_step));
  if (plan.impl != SlurmImpl::kTrainMover) {
    row.detection_s = *watch.srun_end - kill_time;
    row.state_transfer_s = watch.load_s;
    row.switch_s = *watch.resumed_time - *watch.srun_end - watch.load_s;
    row.first_step_s = *watch.first_time - *watch.resumed_time;
    return Status::Ok();
  }
  TM_ASSIGN_OR_RETURN(std::vector<Json> events, read_events(watch.events_path));
  auto failed = find_event(events, "slot_failed");
  auto done = find_event(events, "recovery_done");
  if (!failed || !done) return error(TM_ERROR_INTERNAL, "the event log has no recovery_done");
  row.detection_s = failed->value("time", 0.0) - kill_time;
  row.switch_s = done->value("switch_s", 0.0);
  row.state_transfer_s = done->value("state_transfer_s", 0.0);
  row.first_step_s = done->value("first_step_s", 0.0);
  return Status::Ok();
}

// One measured run's folder (under the cluster's, which every node sees),
// its checkpoints and the environment of srun or sbatch.
struct Run {
  const SlurmPlan& plan;
  std::string dir, ckpt;
  std::vector<std::string> env;
};

// trainmover (one srun, a standby node) and slurm-restart (srun without
// standby, then the same srun again, resuming from the checkpoint).
// Returns the first srun's exit status.
Result<int> run_steps(const Run& run, Watch& watch, Deadline deadline) {
  const SlurmPlan& plan = run.plan;
  const bool tm = plan.impl == SlurmImpl::kTrainMover;
  auto argv =
      srun_command(plan, tm ? plan.nodes + 1 : plan.nodes, tm ? 1 : 0, watch.events_path, run.ckpt);
  TM_ASSIGN_OR_RETURN(int first_exit, run_step(argv, run.env, watch, deadline));
  watch.srun_end = unix_now();
  if (!watch.kill_time)
    return error(TM_ERROR_INTERNAL, "the job never logged step ", plan.kill_step, " (srun exit ",
                 first_exit, ")");
  if (tm && first_exit != 0)
    return error(TM_ERROR_INTERNAL, "srun --trainmover exited ", first_exit, " after the ",
                 slurm_event_name(plan.event));
  if (tm) return first_exit;
  if (first_exit == 0)
    return error(TM_ERROR_INTERNAL, "the step without standby finished despite the kill");
  TM_ASSIGN_OR_RETURN(int rerun_exit, run_step(argv, run.env, watch, deadline));
  if (rerun_exit != 0)
    return error(TM_ERROR_INTERNAL, "the rerun from the checkpoint exited ", rerun_exit);
  return first_exit;
}

std::string shell_quoted(const std::string& word) {
  std::string quoted = "'";
  for (char c : word) quoted += c == '\'' ? std::string("'\\''") : std::string(1, c);
  return quoted + "'";
}

// slurm-requeue's batch script: srun without standby; when it fails, the
// job asks Slurm to requeue it (once), and the requeued job's srun resumes
// from the checkpoint. A lost node makes Slurm requeue the job by itself.
std::string requeue_script(const std::vector<std::string>& srun_argv) {
  std::string srun_line;
  for (const std::string& word : srun_argv) srun_line += shell_quoted(word) + " ";
  return str_cat(
      "#!/bin/sh\n"
      "# trainmover-bench slurm-recovery --impl slurm-requeue: Slurm's own requeue\n"
      "echo \"slurm-requeue: run ${SLURM_RESTART_COUNT:-0} of job $SLURM_JOB_ID started\"\n",
      srun_line,
      "\n"
      "rc=$?\n"
      "echo \"slurm-requeue: srun exited $rc\"\n"
      "if [ \"$rc\" -ne 0 ] && [ \"${SLURM_RESTART_COUNT:-0}\" -eq 0 ]; then\n"
      "  # Slurm ends this script when it requeues the job\n  ",
      shell_quoted(program_path("scontrol")),
      " requeue \"$SLURM_JOB_ID\" && exec sleep 300\n"
      "fi\n"
      "exit \"$rc\"\n");
}

// slurm-requeue: the run as a batch job (sbatch --requeue) whose output file
// is followed. Returns the first srun's exit status (-1: the job was
// requeued before srun returned).
Result<int> run_requeued(const Run& run, Watch& watch, Deadline deadline) {
  const SlurmPlan& plan = run.plan;
  const std::string script = run.dir + "/job.sh", output = run.dir + "/job.out";
  {
    std::ofstream out(script);
    out << requeue_script(srun_command(plan, plan.nodes, 0, watch.events_path, run.ckpt));
    if (!out) return error(TM_ERROR_INTERNAL, "cannot write ", script);
  }
  TM_ASSIGN_OR_RETURN(
      BatchJob job, submit_batch(plan.cluster + "/slurm.conf",
                                 {"--requeue", str_cat("-N", plan.nodes), str_cat("-n", plan.nodes),
                                  "--open-mode=append", "-o", output, "-D", run.dir, "-J",
                                  "tm-bench-requeue", script},
                                 run.env));
  struct Cancel {
    const BatchJob& job;
    ~Cancel() { cancel_batch(job); }
  } cancel{job};
  auto state = follow_batch_output(
      job, output, deadline, plan.timeout_s,
      [&watch](const std::string& line, double now) { return watch.take(line, now); });
  if (!state.ok()) return state.status().with_context(str_cat("output:\n", watch.log_tail()));
  if (!watch.kill_time)
    return error(TM_ERROR_INTERNAL, "the job never logged step ", plan.kill_step);
  if (*state != "COMPLETED")
    return error(TM_ERROR_INTERNAL, "batch job ", job.job_id, " ended ", *state, "; output:\n",
                 watch.log_tail());
  if (!watch.srun_end) return error(TM_ERROR_INTERNAL, "the output shows no end of the first run");
  return watch.first_srun_exit.value_or(-1);
}

}  // namespace

const char* slurm_impl_name(SlurmImpl impl) {
  switch (impl) {
    case SlurmImpl::kTrainMover:
      return "trainmover";
    case SlurmImpl::kSlurmRestart:
      return "slurm-restart";
    case SlurmImpl::kSlurmRequeue:
      return "slurm-requeue";
  }
  return "?";
}

const char* slurm_event_name(SlurmEvent event) {
  return event == SlurmEvent::kTaskKill ? "task-kill" : "node-kill";
}

Json SlurmRow::to_json() const {
  return {{"impl", slurm_impl_name(impl)},
          {"event", slurm_event_name(event)},
          {"nodes", nodes},
          {"downtime_s", downtime_s},
          {"detection_s", detection_s},
          {"switch_s", switch_s},
          {"state_transfer_s", state_transfer_s},
          {"first_step_s", first_step_s},
          {"lost_steps", lost_steps},
          {"wall_s", wall_s},
          {"normal_step_s", normal_step_s},
          {"resume_step", resume_step},
          {"srun_exit", srun_exit}};
}

Result<SlurmRow> run_slurm_recovery(const SlurmPlan& plan) {
  const Deadline deadline = Deadline::after(seconds(plan.timeout_s));
  TM_ASSIGN_OR_RETURN(std::string dir, make_run_dir(plan.cluster));
  struct Cleanup {
    std::string path;
    ~Cleanup() {
      std::error_code ignored;
      std::filesystem::remove_all(path, ignored);
    }
  } cleanup{dir};
  SlurmPlan p = plan;
  p.srun = program_path(plan.srun);
  Watch watch(p, dir + "/events.jsonl");
  const Run run{p,
                dir,
                dir + "/ckpt",
                {"SLURM_CONF=" + plan.cluster + "/slurm.conf",
                 // without standby: stop at once
                 "TRAINMOVER_STANDBY_WAIT=0"}};
  Result<int> first_exit = plan.impl == SlurmImpl::kSlurmRequeue
                               ? run_requeued(run, watch, deadline)
                               : run_steps(run, watch, deadline);
  if (!first_exit.ok()) return first_exit.status();
  if (plan.event == SlurmEvent::kNodeKill)
    TM_RETURN_IF_ERROR(revive_node(plan, watch.victim_host, deadline));
  if (!watch.first_time || !watch.resume_step)
    return error(TM_ERROR_INTERNAL, "no step was seen after the recovery");
  SlurmRow row;
  row.impl = plan.impl;
  row.event = plan.event;
  row.nodes = plan.nodes;
  row.srun_exit = *first_exit;
  TM_RETURN_IF_ERROR(fill_row(plan, watch, row));
  return row;
}

}  // namespace trainmover::bench
