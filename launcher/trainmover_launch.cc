// trainmover-launch: runs a program as N local ranks of one TrainMover job
// (the local default of the runtime launcher; the Slurm path is separate).
//
//   trainmover-launch --nprocs N [--timeout SEC] [--kill-grace SEC] [--] PROGRAM [ARGS...]
//
// Exit status: 0 when every rank exits 0; else the first failing rank's
// status (128 + signal for a signalled rank); 124 on timeout; 2 for bad
// arguments; 1 when the job cannot be started.
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

namespace {

using trainmover::Result;
using trainmover::Status;
using trainmover::launcher::LocalJobOptions;
using trainmover::launcher::LocalJobResult;

constexpr int kExitStartFailed = 1;
constexpr int kExitTimeout = 124;

constexpr double kNoTimeoutS = 365.0 * 24 * 3600;  // "no timeout", still finite

// Parses the command line into `options`; nullopt to go on, else an exit status.
std::optional<int> parse_args(int argc, char** argv, LocalJobOptions& options) {
  double timeout_s = 0, kill_grace_s = 2;
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
      .required()
      .duration("timeout,t", "SEC", 0, kNoTimeoutS, timeout_s,
                "stop the job after SEC (e.g. 90, 1.5m; default 0: none)")
      .duration("kill-grace,g", "SEC", 0, 3600, kill_grace_s,
                "time between SIGTERM and SIGKILL (default 2)")
      .operands(trainmover::cli::Operands::kProgram, "PROGRAM", options.argv)
      .epilog(
          "Exit status: 0 if every rank exited 0; else the status of the first rank\n"
          "that failed (128+N if killed by signal N); 124 on timeout; 2 on bad\n"
          "arguments; 1 if the job could not be started.\n"
          "\n"
          "Variables the ranks read (see trainmover(7)):\n" +
          trainmover::environment_help());
  if (auto exit_code = command_line.parse(argc, argv)) return exit_code;
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
  LocalJobOptions options;
  if (auto exit_code = parse_args(argc, argv, options)) return *exit_code;
  auto signals = signal_fd();
  if (!signals.ok()) {
    std::fprintf(stderr, "trainmover-launch: %s\n", signals.status().message().c_str());
    return kExitStartFailed;
  }
  options.forward_signals_fd = signals->get();
  auto result = trainmover::launcher::run_local_job(options);
  if (!result.ok()) {
    std::fprintf(stderr, "trainmover-launch: %s\n", result.status().message().c_str());
    return kExitStartFailed;
  }
  return exit_status(result.value());
}
