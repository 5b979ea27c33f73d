// Recovery policies and their downtime models. Every default is a published
// figure or a stated assumption; docs/simulator.md gives the source of each.
#pragma once

#include <optional>
#include <string>
#include <string_view>
#include <vector>

#include "common/status.h"
#include "log_scaling.h"
#include "measured.h"

namespace trainmover::sim {

enum class PolicyKind {
  kCheckpointRestart,
  kOobleck,
  kParcae,
  kTorchft,
  kTrainmover,
  kTrainmoverNoStandby,
  kMeasured,
};

std::string_view policy_name(PolicyKind kind);
std::optional<PolicyKind> policy_from_name(std::string_view name);
std::vector<PolicyKind> all_policies();

// The checkpoint-restart (Megatron-LM) restart, split as in the TrainMover
// paper's 8,192-GPU breakdown. The stop, reschedule and checkpoint-load parts
// do not depend on G (the load is bounded by each machine's own storage
// bandwidth); CCL init and warm-up grow per doubling of G so that the total
// matches the published ~300 s restart at 1,024 GPUs.
struct RestartModel {
  double breakdown_gpus = 8192.0;
  double stop_s = 0.52 * 60;
  double reschedule_s = 1.50 * 60;
  double checkpoint_gb_per_machine = 46.8;  // assumption; only load time is published
  double storage_gbps_per_machine = 0.5;    // assumption; 46.8 GB / 0.5 GB/s = 1.56 min
  double ccl_init_s = 1.09 * 60;
  double warmup_s = 1.80 * 60;
  double calibration_gpus = 1024.0;
  double calibration_restart_s = 300.0;

  double checkpoint_load_seconds() const;
  // Fractional growth of CCL init + warm-up per doubling of G.
  double growth_per_doubling() const;
  double restart_seconds(double gpus) const;
};

struct PolicyParams {
  RestartModel restart;
  double checkpoint_save_s = 45.0;  // assumption, see docs
  double step_s = 10.0;             // assumption: one training step
  // TrainMover, published at 32 and 1,024 GPUs.
  LogLinear trainmover_planned = line_through(32, 11.5, 1024, 16.6);
  LogLinear trainmover_unexpected = line_through(32, 19.6, 1024, 21.1);
  int standbys = 1;                  // machines held idle for trainmover
  double standby_replenish_s = 600;  // assumption: a used standby is replaced after this
  int gpus_per_machine = 8;
  // Oobleck and Parcae, published at 32 GPUs; they are given TrainMover's
  // growth per doubling (an assumption that favours them).
  double oobleck_remove_s = 57.0;
  double oobleck_join_s = 100.0;
  double parcae_remove_s = 21.0;
  double parcae_join_s = 200.0;
  double baseline_gpus = 32.0;
  // torchft: assumptions, no published downtime at scale.
  double torchft_quorum_s = 10.0;
  double torchft_heal_s = 300.0;
  double torchft_replica_gpus = 64.0;
  std::optional<MeasuredDowntimes> measured;
};

// A policy resolved at one scale: what each kind of event costs the job.
// Downtimes exclude the infrastructure cost, which the simulation adds.
struct PolicyModel {
  PolicyKind kind = PolicyKind::kCheckpointRestart;
  double unexpected_down_s = 0;
  double planned_down_s = 0;  // maintenance and straggler removal
  double rebalance_down_s = 0;
  double lost_work_s = 0;  // work redone after an unexpected failure (not checkpoint-restart)
  // checkpoint-restart only: compute for interval, then save (blocking).
  double checkpoint_interval_s = 0;
  double checkpoint_save_s = 0;
  // Machines held idle; a failure that removes a machine uses one, and it is
  // replaced after standby_replenish_s. With none left, no_standby_extra_s is added.
  int standby_machines = 0;
  double standby_replenish_s = 0;
  double no_standby_extra_s = 0;
  // torchft: after an event the job runs short of one replica group for a while.
  double degraded_s = 0;
  double degraded_fraction = 0;

  bool uses_checkpoints() const { return checkpoint_interval_s > 0; }
};

// Young's formula: the checkpoint interval that minimises save + lost work.
double young_interval(double save_s, double mttf_s);

// Resolves a policy at G GPUs, given the job MTTF at that scale (needed for
// Young's formula). Fails for `measured` without measured data.
Result<PolicyModel> resolve_policy(PolicyKind kind, double gpus, double mttf_s,
                                   const PolicyParams& params);

}  // namespace trainmover::sim
