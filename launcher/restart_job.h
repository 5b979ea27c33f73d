// RestartJob: trainmover-launch --on-failure restart, the stop-and-restart
// policy of torchrun (--max-restarts) and Megatron's job scripts. When a rank
// fails, every other rank is stopped (SIGTERM, SIGKILL after the grace), and
// the whole job is started again: new processes, a new rendezvous store, new
// communicators built from scratch. The program resumes from its own latest
// checkpoint (trainmover-gpt --checkpoint-dir DIR --resume). Each start gets
// TRAINMOVER_RESTART_COUNT (0, 1, ...), as torchrun sets
// TORCHELASTIC_RESTART_COUNT.
//
// Events (with an events file; JSON lines as the coordinator's, event_log.h):
// `job_started {restart, nprocs}` once a start's store exists, right before
// its processes are spawned; `rank_failed {restart, slot, pid, exit_code,
// signal}` at the first failure of a start, from waitpid; `job_restarting
// {restart, stopped_s}` once every process of the failed start is reaped
// (stopped_s: since rank_failed); `job_finished` / `restarts_exhausted`.
//
// Threading: blocks its caller.
#pragma once

#include <string>

#include "common/status.h"
#include "local_job.h"

namespace trainmover::launcher {

struct RestartJobOptions {
  LocalJobOptions job;  // argv, nprocs, timeout (of the whole run, restarts included)...
  int max_restarts = 3;
  std::string events;  // JSON-lines event log; empty: none
};

struct RestartJobResult {
  LocalJobResult last;  // the last start's result
  int restarts = 0;     // starts after the first
};

Result<RestartJobResult> run_restart_job(RestartJobOptions options);

}  // namespace trainmover::launcher
