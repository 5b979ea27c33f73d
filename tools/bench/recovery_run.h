// One measured recovery of `trainmover-bench recovery`: the example job
// (trainmover-gpt under trainmover-launch, DP N/2 x PP 2) loses one rank to
// SIGKILL mid-run and recovers in one of three ways; the figures come from
// the launcher's event log and the trainer's output.
#pragma once

#include <string>
#include <vector>

#include "common/json.h"
#include "common/status.h"

namespace trainmover::bench {

// How the job recovers (docs/benchmarks.md):
//  - kTrainMover: a warm standby (started with the job), the delta switch,
//    the state from a live replica (trainmover-launch --standby 1);
//  - kStopRestart: every rank stopped and the whole job started again, the
//    checkpoint loaded from disk, every communicator built from scratch
//    (--on-failure restart, as torchrun --max-restarts does);
//  - kColdStandby: the standby process started only when the failure is
//    detected, and every rank destroys and re-creates its communicators in
//    the new epoch (--standby 1 --standby-start failure --switch rebuild).
enum class RecoveryImpl { kTrainMover, kStopRestart, kColdStandby };

const char* recovery_impl_name(RecoveryImpl impl);

struct RecoveryPlan {
  RecoveryImpl impl = RecoveryImpl::kTrainMover;
  int nranks = 4;  // DP nranks/2 x PP 2
  int steps = 150;
  int kill_step = 60;  // the victim is killed once the trainer logged this step
  int checkpoint_every = 25;
  int victim = 1;                  // a stage-0 slot with a live replica (slot 0)
  std::vector<std::string> model;  // trainmover-gpt's model and batch options
  std::string launcher;            // trainmover-launch
  std::string trainer;             // trainmover-gpt
  double timeout_s = 180;          // the whole run
};

// The figures of one recovery (the row `--json` prints; docs/benchmarks.md):
// downtime_s: from the kill to the first step completed after the recovery,
// minus one normal step; cpu_s: the CPU seconds of every process of the job
// (launcher and ranks, the reaped ones included) over the same window;
// critical_cpu_s: the part of it on the recovery's critical path.
struct RecoveryRow {
  RecoveryImpl impl = RecoveryImpl::kTrainMover;
  int nranks = 0;
  double downtime_s = 0;
  double detection_s = 0;
  double switch_s = 0;
  double state_transfer_s = 0;
  double first_step_s = 0;
  int64_t lost_steps = 0;
  double cpu_s = 0;
  // The coordinator's recovery_done.critical_cpu_s (trainmover and
  // cold-standby): the CPU on the recovery's critical path, as if each
  // process had a core; -1 for stop-restart, which has no coordinator.
  double critical_cpu_s = -1;
  // Its parts by name (recovery_done.critical_cpu_parts), null without it;
  // `--json` prints them next to to_json()'s keys.
  Json critical_cpu_parts;
  double wall_s = 0;  // the window itself: the kill to that first step
  double normal_step_s = 0;
  uint64_t resume_step = 0;

  Json to_json() const;
};

// Runs the job, kills the victim, waits for the job to finish (exit 0), and
// computes the row. Fails naming the step that went wrong (the job did not
// start, never reached the kill step, did not recover, or exited non-zero).
Result<RecoveryRow> run_recovery(const RecoveryPlan& plan);

}  // namespace trainmover::bench
