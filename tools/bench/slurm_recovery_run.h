// One measured recovery of `trainmover-bench slurm-recovery`: trainmover-gpt
// under srun on a running Slurm cluster loses a task (its trainer SIGKILLed)
// or a node (its slurmd, slurmstepd and tasks SIGKILLed) mid-run, and is
// recovered by TrainMover's standby or by Slurm's own ways: the step ends and
// is run again from its checkpoint (a batch script's loop on srun), or the
// batch job is requeued (sbatch --requeue) and starts again from its
// checkpoint (docs/benchmarks.md).
#pragma once

#include <string>
#include <vector>

#include "common/json.h"
#include "common/status.h"

namespace trainmover::bench {

enum class SlurmImpl { kTrainMover, kSlurmRestart, kSlurmRequeue };
enum class SlurmEvent { kTaskKill, kNodeKill };

const char* slurm_impl_name(SlurmImpl impl);
const char* slurm_event_name(SlurmEvent event);

struct SlurmPlan {
  SlurmImpl impl = SlurmImpl::kTrainMover;
  SlurmEvent event = SlurmEvent::kTaskKill;
  std::string cluster;  // the folder of tests/slurm/cluster.sh start (slurm.conf, slurmd.N.pid)
  int nodes = 2;        // active nodes (trainmover adds one standby node)
  int steps = 60;
  int kill_step = 25;  // slot 1 (or its node) is killed once this step was logged
  int checkpoint_every = 10;
  std::vector<std::string> model;  // trainmover-gpt's model and batch options
  std::string srun = "srun";
  std::string trainer;     // trainmover-gpt
  double timeout_s = 400;  // the whole run, the rerun and the node's return included
};

// The row `--json` prints: downtime_s is the kill to the first step
// completed after the recovery, minus one normal step. For slurm-restart
// and slurm-requeue, detection_s is the kill to the end of the first run as
// its output shows it (srun's exit; or slurmstepd's line that the job was
// cancelled, when Slurm requeued it first), switch_s from there up to the
// checkpoint load of the new run (for slurm-requeue: the job's wait in the
// queue and its start included), state_transfer_s the load.
struct SlurmRow {
  SlurmImpl impl = SlurmImpl::kTrainMover;
  SlurmEvent event = SlurmEvent::kTaskKill;
  int nodes = 0;
  double downtime_s = 0, detection_s = 0, switch_s = 0, state_transfer_s = 0, first_step_s = 0;
  int64_t lost_steps = 0;
  double wall_s = 0, normal_step_s = 0;
  uint64_t resume_step = 0;
  int srun_exit = 0;  // the (first) srun's exit status

  Json to_json() const;
};

// Runs the plan; after a node kill, starts that node's slurmd again (in its
// own mount namespace, as cluster.sh does) and waits until it is back in service.
Result<SlurmRow> run_slurm_recovery(const SlurmPlan& plan);

}  // namespace trainmover::bench
