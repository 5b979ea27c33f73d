// trainmover-launch: runs a program as N local ranks of one TrainMover job
// (the local default of the runtime launcher; the Slurm path is separate).
//
//   trainmover-launch --nprocs N [--timeout SEC] [--kill-grace SEC] [--] PROGRAM [ARGS...]
//
// Exit status: 0 when every rank exits 0; else the first failing rank's
// status (128 + signal for a signalled rank); 124 on timeout; 2 for bad
// arguments; 1 when the job cannot be started.
#include <getopt.h>
#include <signal.h>
#include <sys/signalfd.h>

#include <cstdio>
#include <string>
#include <vector>

#include "comm/config.h"
#include "common/parse.h"
#include "common/unique_fd.h"
#include "local_job.h"

namespace {

using trainmover::Result;
using trainmover::Status;
using trainmover::launcher::LocalJobOptions;
using trainmover::launcher::LocalJobResult;

constexpr int kExitUsage = 2;
constexpr int kExitStartFailed = 1;
constexpr int kExitTimeout = 124;

void print_help() {
  std::printf(
      "Usage: trainmover-launch --nprocs N [OPTIONS] [--] PROGRAM [ARGS...]\n"
      "Run PROGRAM as N local ranks of one TrainMover job.\n"
      "\n"
      "Every rank gets TRAINMOVER_SLOT, TRAINMOVER_NSLOTS, TRAINMOVER_JOB_ID,\n"
      "TRAINMOVER_JOB_SECRET and TRAINMOVER_STORE (a rendezvous store embedded\n"
      "in this launcher, on 127.0.0.1). When a rank fails, the others are sent\n"
      "SIGTERM, then SIGKILL after the grace period. SIGINT and SIGTERM are\n"
      "forwarded to every rank.\n"
      "\n"
      "Options:\n"
      "  -n, --nprocs N         number of ranks, 1..4096 (required)\n"
      "  -t, --timeout SEC      stop the job after SEC (e.g. 90, 1.5m; default 0: none)\n"
      "  -g, --kill-grace SEC   time between SIGTERM and SIGKILL (default 2)\n"
      "  -h, --help             show this help\n"
      "\n"
      "Exit status: 0 if every rank exited 0; else the status of the first rank\n"
      "that failed (128+N if killed by signal N); 124 on timeout; 2 on bad\n"
      "arguments; 1 if the job could not be started.\n"
      "\n"
      "Variables the ranks read (see trainmover(7)):\n%s",
      trainmover::environment_help().c_str());
}

int usage_error(const std::string& message) {
  std::fprintf(stderr, "trainmover-launch: %s\nTry 'trainmover-launch --help'.\n", message.c_str());
  return kExitUsage;
}

// Parses the command line into `options`; returns -1 to go on, else an exit status.
int parse_args(int argc, char** argv, LocalJobOptions& options) {
  static const option kLong[] = {{"nprocs", required_argument, nullptr, 'n'},
                                 {"timeout", required_argument, nullptr, 't'},
                                 {"kill-grace", required_argument, nullptr, 'g'},
                                 {"help", no_argument, nullptr, 'h'},
                                 {nullptr, 0, nullptr, 0}};
  bool have_nprocs = false;
  options.timeout = trainmover::seconds(365.0 * 24 * 3600);  // "no timeout", still finite
  opterr = 0;
  int c;
  // '+': stop at PROGRAM, so its own options are not taken for ours.
  while ((c = getopt_long(argc, argv, "+:n:t:g:h", kLong, nullptr)) != -1) {
    switch (c) {
      case 'n': {
        auto n = trainmover::parse_int(optarg, 1, 4096);
        if (!n.ok()) return usage_error("--nprocs: " + n.status().message());
        options.nprocs = static_cast<int>(n.value());
        have_nprocs = true;
        break;
      }
      case 't':
      case 'g': {
        auto s = trainmover::parse_seconds(optarg);
        const char* name = c == 't' ? "--timeout" : "--kill-grace";
        if (!s.ok()) return usage_error(std::string(name) + ": " + s.status().message());
        if (c == 'g') options.kill_grace = trainmover::seconds(s.value());
        if (c == 't' && s.value() > 0) options.timeout = trainmover::seconds(s.value());
        break;
      }
      case 'h':
        print_help();
        return 0;
      case ':':
        return usage_error(std::string("option ") + argv[optind - 1] + " needs a value");
      default:
        return usage_error(std::string("unknown option ") + argv[optind - 1]);
    }
  }
  if (!have_nprocs) return usage_error("--nprocs is required");
  if (optind >= argc) return usage_error("no PROGRAM given");
  options.argv.assign(argv + optind, argv + argc);
  return -1;
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
  if (int rc = parse_args(argc, argv, options); rc >= 0) return rc;
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
