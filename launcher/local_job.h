// LocalJob: runs one TrainMover job of N ranks as child processes of this
// process, on this host. It is the local default of the runtime launcher and
// what the benchmarks and tests use to start real multi-process jobs.
//
// The job gets a fresh secret and id and an embedded rendezvous store on
// 127.0.0.1; every rank finds them in its TRAINMOVER_* environment. The run
// ends when every rank has exited, when one fails (the others are then
// stopped), when the timeout passes, or when the caller's stop fd delivers a
// signal to forward. Every wait is bounded; every child is reaped.
#pragma once

#include <sys/types.h>

#include <functional>
#include <optional>
#include <string>
#include <utility>
#include <vector>

#include "common/clock.h"
#include "common/secret.h"
#include "common/status.h"

namespace trainmover::launcher {

struct LocalJobOptions {
  // PROGRAM and its arguments; PROGRAM without a '/' is looked up in PATH.
  std::vector<std::string> argv;
  int nprocs = 1;
  // The whole job must finish within this; then the ranks are stopped.
  Duration timeout = seconds(600);
  // Time between SIGTERM and SIGKILL when ranks are stopped.
  Duration kill_grace = seconds(2);
  // Capture each rank's stdout in RankResult::output instead of sharing ours.
  bool capture_stdout = false;
  // Set for every rank, after (so overriding) the TRAINMOVER_* variables.
  std::vector<std::pair<std::string, std::string>> extra_env;
  // Optional non-blocking signalfd (SFD_NONBLOCK; any fd yielding struct
  // signalfd_siginfo records will do):
  // each signal read from it is forwarded to every rank, which then gets
  // kill_grace to exit before SIGKILL. -1: none.
  int forward_signals_fd = -1;

  // ---- runtime mode (trainmover-launch --standby; runtime_job.h) ----
  // Processes started after the N ranks with TRAINMOVER_STANDBY=1; they
  // wait to be promoted to a failed rank's slot.
  int standbys = 0;
  // Cold standbys: none is started with the job; each failure of a process
  // (an exit the job did not cause) starts one then, up to `standbys` in all.
  bool standbys_on_failure = false;
  // Set: a failed rank does not stop the job (the coordinator recovers its
  // slot); the job succeeds once N processes exited 0, and the standbys
  // left over are then stopped.
  bool recover_failures = false;
  // Called on the supervisor's thread at once for every child that exits:
  // exit_code when it exited, else -1 and the signal.
  std::function<void(pid_t pid, int exit_code, int signal)> on_exit;
  // Set: every child gets a lifeline (control/lifeline.h), and this is
  // called on that lifeline's own thread as soon as the child begins an
  // exit it did not choose (killed, crashed), ahead of on_exit; never for a
  // child the job itself stops.
  std::function<void(pid_t pid)> on_dying;
  // Runtime mode, asked after on_exit for a process that did not exit 0:
  // whether it had finished training first (told the coordinator so). Such
  // an exit is no failure, and it counts as the process's finish.
  std::function<bool(pid_t pid)> finished_training;
  // Polled about every 10 ms: a reason to stop every process (the
  // coordinator gave up on the job), or nullopt.
  std::function<std::optional<std::string>()> stop_reason;
  // Called about once a second while the job runs (the status line).
  std::function<void()> on_tick;
  // Called once the job's secret, id and store exist, before any process
  // starts (the launcher starts its coordinator here); returns variables
  // set for every process, after extra_env. An error ends the job unstarted.
  std::function<Result<std::vector<std::pair<std::string, std::string>>>(const JobSecret& secret,
                                                                         uint64_t job_id)>
      prepare_job;
};

struct RankResult {
  int rank = 0;
  int pid = -1;
  bool exited = false;  // exited normally, with exit_code
  int exit_code = -1;
  int term_signal = 0;          // the signal that ended it, when !exited
  bool stopped_by_job = false;  // we signalled it (another rank failed, timeout, forwarding)
  std::string output;           // its stdout, when captured

  bool succeeded() const { return exited && exit_code == 0; }
  // A shell-style status: the exit code, or 128 + the signal.
  int shell_status() const { return exited ? exit_code : 128 + term_signal; }
  // "rank 2 exited with status 3", "rank 1 was killed by signal 9 (Killed)".
  std::string describe() const;
};

struct LocalJobResult {
  std::vector<RankResult> ranks;
  bool timed_out = false;
  int forwarded_signal = 0;  // the first signal forwarded, 0 if none
  // The rank that failed first (in the order failures were seen), -1 if none.
  int first_failed_rank = -1;
  // Runtime mode: processes that exited 0 or had finished training (see
  // finished_training), and the reason the job was stopped (from
  // stop_reason), if it was.
  int finished = 0;
  std::optional<std::string> stopped;

  // Without recover_failures: every rank exited 0.
  bool succeeded() const { return first_failed_rank < 0 && !timed_out && forwarded_signal == 0; }
};

// Runs the job to completion. Fails (without leaving any child behind) when
// the options are invalid, the program cannot be found or started, or the
// store cannot be started; otherwise reports every rank's fate.
Result<LocalJobResult> run_local_job(const LocalJobOptions& options);

// The executable `program` names: itself when it contains '/', else the
// first executable match in PATH. Fails naming the program.
Result<std::string> resolve_program(const std::string& program);

}  // namespace trainmover::launcher
