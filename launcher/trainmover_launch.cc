// trainmover-launch: runs a program as N local ranks of one TrainMover job
// (the local default of the runtime launcher; the Slurm path is separate).
//
//   trainmover-launch --nprocs N [--standby S --pp P --events FILE --job-file FILE]
//                     [--standby-start launch|failure] [--switch delta|rebuild]
//                     [--on-failure stop|restart --max-restarts K]
//                     [--timeout SEC] [--kill-grace SEC] [--] PROGRAM [ARGS...]
//
// Without --standby (S = 0, no coordinator): a rank's failure stops the job,
// or with --on-failure restart restarts all of it (restart_job.h).
// With --standby (runtime_job.h): the coordinator recovers failed slots.
//
// Exit status: 0 when the job finished (every slot's last process exited
// 0, or had finished training before it ended); else the first failing rank's status (128 + signal
// for a signalled rank) without standbys, 3 with them when the coordinator stopped the job (no
// standby left); 124 on timeout; 128 + signal after SIGINT/SIGTERM; 2 for bad arguments; 1 when the
// job cannot be started.
#include <signal.h>
#include <sys/signalfd.h>

#include <cstdio>
#include <optional>
#include <string>
#include <vector>

#include "cli/command_line.h"
#include "comm/config.h"
#include "common/parse.h"
#include "common/unique_fd.h"
#include "local_job.h"
#include "restart_job.h"
#include "runtime_job.h"
#include "slurm_task_main.h"

namespace {

using trainmover::Result;
using trainmover::Status;
using trainmover::launcher::LocalJobOptions;
using trainmover::launcher::LocalJobResult;
using trainmover::launcher::RestartJobOptions;
using trainmover::launcher::RuntimeJobOptions;
using trainmover::launcher::RuntimeJobResult;

constexpr int kExitStartFailed = 1;
constexpr int kExitJobStopped = 3;
constexpr int kExitTimeout = 124;

constexpr double kNoTimeoutS = 365.0 * 24 * 3600;  // "no timeout", still finite

// What trainmover-launch was asked to do besides the job itself.
struct Policy {
  bool restart = false;  // --on-failure restart
  int max_restarts = 3;
};

// The pairs of options the table cannot check; "" when they agree.
std::string check_policy(const RuntimeJobOptions& runtime, const std::string& on_failure,
                         const std::string& standby_start, Policy& policy) {
  if (on_failure != "stop" && on_failure != "restart")
    return "--on-failure must be stop or restart, not '" + on_failure + "'";
  if (standby_start != "launch" && standby_start != "failure")
    return "--standby-start must be launch or failure, not '" + standby_start + "'";
  if (runtime.switch_mode != "delta" && runtime.switch_mode != "rebuild")
    return "--switch must be delta or rebuild, not '" + runtime.switch_mode + "'";
  policy.restart = on_failure == "restart";
  if (policy.restart && runtime.job.standbys > 0)
    return "--on-failure restart restarts the whole job: it takes no --standby";
  if (runtime.job.standbys == 0 && (standby_start != "launch" || runtime.switch_mode != "delta"))
    return "--standby-start and --switch need --standby";
  return "";
}

// Parses the command line into `options`; nullopt to go on, else an exit status.
std::optional<int> parse_args(int argc, char** argv, RuntimeJobOptions& runtime, Policy& policy) {
  LocalJobOptions& options = runtime.job;
  double timeout_s = 0, kill_grace_s = 2;
  std::string on_failure = "stop", standby_start = "launch";
  trainmover::cli::CommandLine command_line(
      "trainmover-launch", "trainmover-launch --nprocs N [OPTIONS] [--] PROGRAM [ARGS...]",
      "Run PROGRAM as N local ranks of one TrainMover job.\n"
      "\n"
      "Every rank gets TRAINMOVER_SLOT, TRAINMOVER_NSLOTS, TRAINMOVER_JOB_ID,\n"
      "TRAINMOVER_JOB_SECRET and TRAINMOVER_STORE (a rendezvous store embedded\n"
      "in this launcher, on 127.0.0.1). When a rank fails, the others are sent\n"
      "SIGTERM, then SIGKILL after the grace period. SIGINT and SIGTERM are\n"
      "forwarded to every rank. Everything from PROGRAM on is PROGRAM's.\n");
  command_line.integer("nprocs,n", "N", 1, 4096, options.nprocs, "number of ranks, 1..4096")
      .from_env("TRAINMOVER_NPROCS")
      .required()
      .duration("timeout,t", "SEC", 0, kNoTimeoutS, timeout_s,
                "stop the job after SEC (e.g. 90, 1.5m; default 0: none)")
      .from_env("TRAINMOVER_JOB_TIMEOUT")
      .duration("kill-grace,g", "SEC", 0, 3600, kill_grace_s,
                "time between SIGTERM and SIGKILL (default 2)")
      .from_env("TRAINMOVER_KILL_GRACE")
      .text("on-failure", "POLICY", on_failure,
            "without --standby, when a rank fails: stop (the job ends; default) or restart"
            " (stop every rank and start the whole job again, as torchrun does; the program"
            " resumes from its checkpoint)")
      .from_env("TRAINMOVER_ON_FAILURE")
      .integer("max-restarts", "K", 0, 1000000, policy.max_restarts,
               "with --on-failure restart: at most K restarts (default 3)")
      .from_env("TRAINMOVER_MAX_RESTARTS")
      .section("Job runtime (a coordinator recovers failed ranks)")
      .integer("standby,s", "S", 0, 4096, options.standbys,
               "start S standbys as well; a failed rank's slot goes to one (default 0: off)")
      .from_env("TRAINMOVER_STANDBYS")
      .integer("pp", "P", 1, 4096, runtime.pp,
               "pipeline stages of the job: slot s is stage s / (N/P) (default 1)")
      .from_env("TRAINMOVER_PP")
      .text("standby-start", "WHEN", standby_start,
            "launch: start the standbys with the job (default); failure: start one only when a"
            " process fails (a cold standby: nothing of it runs before the failure)")
      .from_env("TRAINMOVER_STANDBY_START")
      .text("switch", "HOW", runtime.switch_mode,
            "how the ranks change membership: delta (the two-phase delta switch; default) or"
            " rebuild (every rank destroys and re-creates all its communicators)")
      .from_env("TRAINMOVER_SWITCH")
      .text("events", "FILE", runtime.events,
            "write every event as a JSON line to FILE (0600; also with --on-failure restart)")
      .from_env("TRAINMOVER_EVENTS")
      .text("job-file", "FILE", runtime.job_file,
            "write the 0600 job file trainmover-ctl reads here (default: $TRAINMOVER_CTL)")
      .duration("heartbeat-timeout", "SEC", 0.05, 3600, runtime.heartbeat_timeout_s,
                "a rank silent this long has failed (default 1)")
      .from_env("TRAINMOVER_HEARTBEAT_TIMEOUT")
      .duration("standby-wait", "SEC", 0, 3600, runtime.standby_wait_s,
                "with no standby left, wait this long for one, then stop (default 30)")
      .from_env("TRAINMOVER_STANDBY_WAIT")
      .custom(
          "warmup", "MODE",
          [&](std::string_view v) -> Status {
            if (v != "replay" && v != "none")
              return trainmover::error(TM_ERROR_INVALID_ARGUMENT, "'", v,
                                       "' is not a warm-up mode (replay or none)");
            runtime.warmup = std::string(v);
            return Status::Ok();
          },
          "standby warm-up: replay (the ranks record their first steps, standbys replay "
          "them in a sandbox; default) or none (cold standbys)")
      .from_env("TRAINMOVER_WARMUP")
      .text("trace-dir", "DIR", runtime.trace_dir,
            "the job's traces go to DIR, kept (default: a fresh directory under $TMPDIR, "
            "removed at the end)")
      .from_env("TRAINMOVER_TRACE_DIR")
      .flag("quiet,q", runtime.quiet, "no status lines (events and the summary still)")
      .from_env("TRAINMOVER_QUIET")
      .operands(trainmover::cli::Operands::kProgram, "PROGRAM", options.argv)
      .epilog(
          "Under Slurm, the SPANK plugin runs every task as\n"
          "trainmover-launch --slurm-task (see trainmover-launch --slurm-task --help).\n"
          "\n"
          "Exit status: 0 if the job finished (with --standby: every slot's last\n"
          "process exited 0 or had finished training); without --standby the\n"
          "status of the first rank that failed (128+N if killed by signal N);\n"
          "with --standby 3 if the\n"
          "coordinator stopped the job; 124 on timeout; 128+N after signal N;\n"
          "2 on bad arguments; 1 if the job could not be started.\n"
          "\n"
          "Variables the ranks read (see trainmover(7)):\n" +
          trainmover::environment_help());
  if (auto exit_code = command_line.parse(argc, argv)) return exit_code;
  std::string problem = check_policy(runtime, on_failure, standby_start, policy);
  if (!problem.empty()) return command_line.usage_error(problem);
  options.standbys_on_failure = standby_start == "failure";
  if (runtime.job_file.empty() && options.standbys > 0)
    runtime.job_file = trainmover::get_env("TRAINMOVER_CTL").value_or("");
  options.timeout = trainmover::seconds(timeout_s > 0 ? timeout_s : kNoTimeoutS);
  options.kill_grace = trainmover::seconds(kill_grace_s);
  return std::nullopt;
}

// Blocks SIGINT/SIGTERM and returns a signalfd for them, so the job loop
// receives them as data (and forwards them) instead of dying.
Result<trainmover::UniqueFd> signal_fd() {
  sigset_t set;
  sigemptyset(&set);
  sigaddset(&set, SIGINT);
  sigaddset(&set, SIGTERM);
  if (sigprocmask(SIG_BLOCK, &set, nullptr) != 0)
    return trainmover::system_error("sigprocmask", errno);
  int fd = signalfd(-1, &set, SFD_NONBLOCK | SFD_CLOEXEC);
  if (fd < 0) return trainmover::system_error("signalfd", errno);
  return trainmover::UniqueFd(fd);
}

int runtime_exit_status(const RuntimeJobResult& r, int nprocs) {
  const LocalJobResult& job = r.job;
  std::fprintf(stderr,
               "trainmover-launch: summary: %d failure(s), %d recovered, %.3f s of downtime,"
               " %d process(es) finished\n",
               r.failures, r.recoveries, r.downtime_s, job.finished);
  if (job.forwarded_signal != 0) return 128 + job.forwarded_signal;
  if (job.timed_out) {
    std::fprintf(stderr, "trainmover-launch: timeout; the ranks were stopped\n");
    return kExitTimeout;
  }
  if (job.stopped) return kExitJobStopped;
  if (job.finished < nprocs) {
    std::fprintf(stderr, "trainmover-launch: only %d of %d slots finished\n", job.finished, nprocs);
    return kExitStartFailed;
  }
  return 0;
}

int exit_status(const LocalJobResult& result) {
  if (result.first_failed_rank >= 0) {
    const auto& rank = result.ranks[result.first_failed_rank];
    std::fprintf(stderr, "trainmover-launch: %s\n", rank.describe().c_str());
    return rank.shell_status();
  }
  if (result.timed_out) {
    std::fprintf(stderr, "trainmover-launch: timeout; the ranks were stopped\n");
    return kExitTimeout;
  }
  if (result.forwarded_signal != 0) return 128 + result.forwarded_signal;
  return 0;
}

}  // namespace

int main(int argc, char** argv) {
  if (trainmover::launcher::is_slurm_task(argc, argv))
    return trainmover::launcher::slurm_task_main(argc, argv);
  RuntimeJobOptions runtime;
  Policy policy;
  LocalJobOptions& options = runtime.job;
  if (auto exit_code = parse_args(argc, argv, runtime, policy)) return *exit_code;
  auto signals = signal_fd();
  if (!signals.ok()) {
    std::fprintf(stderr, "trainmover-launch: %s\n", signals.status().message().c_str());
    return kExitStartFailed;
  }
  options.forward_signals_fd = signals->get();
  if (options.standbys > 0) {
    auto result = trainmover::launcher::run_runtime_job(runtime);
    if (!result.ok()) {
      std::fprintf(stderr, "trainmover-launch: %s\n", result.status().message().c_str());
      return kExitStartFailed;
    }
    return runtime_exit_status(*result, options.nprocs);
  }
  if (policy.restart) {
    auto restarted =
        trainmover::launcher::run_restart_job({options, policy.max_restarts, runtime.events});
    if (!restarted.ok()) {
      std::fprintf(stderr, "trainmover-launch: %s\n", restarted.status().message().c_str());
      return kExitStartFailed;
    }
    std::fprintf(stderr, "trainmover-launch: %d restart(s)\n", restarted->restarts);
    return exit_status(restarted->last);
  }
  auto result = trainmover::launcher::run_local_job(options);
  if (!result.ok()) {
    std::fprintf(stderr, "trainmover-launch: %s\n", result.status().message().c_str());
    return kExitStartFailed;
  }
  return exit_status(result.value());
}
