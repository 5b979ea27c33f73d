// RuntimeJob: trainmover-launch's local mode with the job runtime — the
// rendezvous store and the coordinator embedded in this process, N active
// ranks and S standbys as children. A rank that dies is reported to the
// coordinator at once (waitpid) and its slot recovered by a standby; the
// coordinator's events are printed as they happen, a status line about
// once a second, a summary at the end.
//
// Threading: run_runtime_job blocks its caller; the coordinator has its own
// thread (events are printed from it, one line at a time).
#pragma once

#include <string>

#include "common/status.h"
#include "local_job.h"

namespace trainmover::launcher {

struct RuntimeJobOptions {
  LocalJobOptions job;   // argv, nprocs, standbys, timeout, signals...
  int pp = 1;            // pipeline stages: the layout is (nprocs / pp) x pp
  std::string events;    // JSON-lines event log; empty: none
  std::string job_file;  // where trainmover-ctl finds the job; empty: none
  double heartbeat_timeout_s = 1.0;
  double standby_wait_s = 30.0;  // with no standby ready: wait this long, then stop
  bool quiet = false;            // no status lines (events and the summary still)
  // How every process switches to a new membership: "delta" (the two-phase
  // delta switch) or "rebuild" (each destroys and re-creates its
  // communicators); passed to every process as TRAINMOVER_SWITCH.
  std::string switch_mode = "delta";
  // Standby warm-up: "replay" (the ranks record their first steps into the
  // trace directory, TRAINMOVER_TRACE_DIR; standbys replay them) or "none"
  // (no recording, cold standbys). The children get TRAINMOVER_WARMUP.
  std::string warmup = "replay";
  // The job's trace directory, kept; empty: a fresh one under $TMPDIR,
  // removed when the job ends.
  std::string trace_dir;
};

struct RuntimeJobResult {
  LocalJobResult job;
  int failures = 0;       // slots that failed
  int recoveries = 0;     // recoveries completed
  double downtime_s = 0;  // summed over the recoveries
};

Result<RuntimeJobResult> run_runtime_job(RuntimeJobOptions options);

}  // namespace trainmover::launcher
