#include "policies.h"

#include <algorithm>
#include <array>
#include <cmath>
#include <stdexcept>

namespace trainmover::sim {
namespace {

struct NamedPolicy {
  PolicyKind kind;
  std::string_view name;
};

constexpr std::array<NamedPolicy, 7> kNames{{
    {PolicyKind::kCheckpointRestart, "checkpoint-restart"},
    {PolicyKind::kOobleck, "oobleck"},
    {PolicyKind::kParcae, "parcae"},
    {PolicyKind::kTorchft, "torchft"},
    {PolicyKind::kTrainmover, "trainmover"},
    {PolicyKind::kTrainmoverNoStandby, "trainmover-nostandby"},
    {PolicyKind::kMeasured, "measured"},
}};

PolicyModel checkpoint_restart_policy(double gpus, double mttf_s, const PolicyParams& params) {
  PolicyModel model;
  const double restart_s = params.restart.restart_seconds(gpus);
  model.unexpected_down_s = restart_s;
  // A planned stop saves a checkpoint first, so no work is lost.
  model.planned_down_s = params.checkpoint_save_s + restart_s;
  model.rebalance_down_s = model.planned_down_s;
  model.checkpoint_save_s = params.checkpoint_save_s;
  model.checkpoint_interval_s = young_interval(params.checkpoint_save_s, mttf_s);
  return model;
}

// Oobleck and Parcae: removing the failed machine and later joining its
// replacement both pause the job; both are charged at the event.
PolicyModel remove_and_join(double gpus, double remove_s, double join_s,
                            const PolicyParams& params) {
  const double remove_growth = params.trainmover_unexpected.per_doubling_s;
  const double join_growth = params.trainmover_planned.per_doubling_s;
  const double total = LogLinear{params.baseline_gpus, remove_s, remove_growth}.at(gpus) +
                       LogLinear{params.baseline_gpus, join_s, join_growth}.at(gpus);
  PolicyModel model;
  model.unexpected_down_s = total;
  model.planned_down_s = total;
  model.rebalance_down_s = total;
  model.lost_work_s = params.step_s;
  return model;
}

PolicyModel torchft_policy(double gpus, const PolicyParams& params) {
  PolicyModel model;
  model.unexpected_down_s = params.torchft_quorum_s;
  model.planned_down_s = params.torchft_quorum_s;
  model.rebalance_down_s = params.torchft_quorum_s;
  model.lost_work_s = params.step_s;
  model.degraded_s = params.torchft_heal_s;
  model.degraded_fraction = std::min(1.0, params.torchft_replica_gpus / gpus);
  return model;
}

// Without a standby, the replacement machine must first be scheduled and
// warmed up; the restart breakdown gives those two parts.
double no_standby_extra(const PolicyParams& params) {
  return params.restart.reschedule_s + params.restart.warmup_s;
}

// The published planned figure grows faster per doubling than the unexpected
// one, so far enough out the lines cross; a planned event never costs more than
// handling the same event as unexpected would, hence the cap.
double planned_capped(double planned_s, double unexpected_s) {
  return std::min(planned_s, unexpected_s);
}

PolicyModel trainmover_policy(double gpus, int standbys, const PolicyParams& params) {
  PolicyModel model;
  model.unexpected_down_s = params.trainmover_unexpected.at(gpus);
  model.planned_down_s =
      planned_capped(params.trainmover_planned.at(gpus), model.unexpected_down_s);
  model.rebalance_down_s = model.planned_down_s;
  model.lost_work_s = params.step_s;
  model.standby_machines = standbys;
  model.standby_replenish_s = params.standby_replenish_s;
  model.no_standby_extra_s = no_standby_extra(params);
  return model;
}

Result<PolicyModel> measured_policy(double gpus, const PolicyParams& params) {
  if (!params.measured) {
    return error(TM_ERROR_INVALID_ARGUMENT, "policy 'measured' needs --measured FILE");
  }
  PolicyModel model = trainmover_policy(gpus, params.standbys, params);
  model.kind = PolicyKind::kMeasured;
  model.unexpected_down_s = params.measured->unexpected.at(gpus);
  model.planned_down_s = planned_capped(params.measured->planned.at(gpus), model.unexpected_down_s);
  model.rebalance_down_s = model.planned_down_s;
  return model;
}

}  // namespace

std::string_view policy_name(PolicyKind kind) {
  for (const NamedPolicy& named : kNames) {
    if (named.kind == kind) return named.name;
  }
  return "unknown";
}

std::optional<PolicyKind> policy_from_name(std::string_view name) {
  for (const NamedPolicy& named : kNames) {
    if (named.name == name) return named.kind;
  }
  return std::nullopt;
}

std::vector<PolicyKind> all_policies() {
  std::vector<PolicyKind> kinds;
  for (const NamedPolicy& named : kNames) kinds.push_back(named.kind);
  return kinds;
}

double RestartModel::checkpoint_load_seconds() const {
  return checkpoint_gb_per_machine / storage_gbps_per_machine;
}

double RestartModel::growth_per_doubling() const {
  const double fixed = stop_s + reschedule_s + checkpoint_load_seconds();
  const double scaled_at_breakdown = ccl_init_s + warmup_s;
  const double scaled_at_calibration = calibration_restart_s - fixed;
  const double doublings = std::log2(breakdown_gpus / calibration_gpus);
  return (1.0 - scaled_at_calibration / scaled_at_breakdown) / doublings;
}

double RestartModel::restart_seconds(double gpus) const {
  // Below the calibrated range the line would turn negative; a floor of 10% of
  // the 8,192-GPU init + warm-up keeps it physical.
  const double factor =
      std::max(0.1, 1.0 + growth_per_doubling() * std::log2(gpus / breakdown_gpus));
  return stop_s + reschedule_s + checkpoint_load_seconds() + (ccl_init_s + warmup_s) * factor;
}

double young_interval(double save_s, double mttf_s) { return std::sqrt(2.0 * save_s * mttf_s); }

Result<PolicyModel> resolve_policy(PolicyKind kind, double gpus, double mttf_s,
                                   const PolicyParams& params) {
  PolicyModel model;
  switch (kind) {
    case PolicyKind::kCheckpointRestart:
      model = checkpoint_restart_policy(gpus, mttf_s, params);
      break;
    case PolicyKind::kOobleck:
      model = remove_and_join(gpus, params.oobleck_remove_s, params.oobleck_join_s, params);
      break;
    case PolicyKind::kParcae:
      model = remove_and_join(gpus, params.parcae_remove_s, params.parcae_join_s, params);
      break;
    case PolicyKind::kTorchft:
      model = torchft_policy(gpus, params);
      break;
    case PolicyKind::kTrainmover:
      model = trainmover_policy(gpus, params.standbys, params);
      break;
    case PolicyKind::kTrainmoverNoStandby:
      model = trainmover_policy(gpus, 0, params);
      break;
    case PolicyKind::kMeasured: {
      TM_ASSIGN_OR_RETURN(model, measured_policy(gpus, params));
      break;
    }
  }
  model.kind = kind;
  return model;
}

}  // namespace trainmover::sim
