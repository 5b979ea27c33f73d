#include "projection.h"

#include <cmath>

namespace trainmover::sim {
namespace {

constexpr double kHoursPerWeek = 168.0;
constexpr double kSecondsPerWeek = kHoursPerWeek * 3600;

ScenarioConfig scenario_at(const ProjectionConfig& config, double gpus) {
  ScenarioConfig scenario;
  scenario.gpus = gpus;
  scenario.weeks = config.weeks;
  scenario.mttf_s = job_mttf_hours(config.mttf, gpus) * 3600.0;
  scenario.infra_s = config.infra_s;
  scenario.planned_per_unexpected = config.planned_per_unexpected;
  scenario.rebalance_every_s = config.rebalance_every_s;
  scenario.stragglers = config.stragglers;
  return scenario;
}

// Events one replication of `policy` at `scenario` is expected to handle:
// failures, maintenance, rebalancing, stragglers (appearance and removal)
// and, with checkpoints, the ends of the compute and save phases.
double expected_events(const ScenarioConfig& scenario, const PolicyModel& policy) {
  const double period_s = scenario.weeks * kSecondsPerWeek;
  double rate = (1 + scenario.planned_per_unexpected) / scenario.mttf_s;
  if (scenario.rebalance_every_s > 0) rate += 1 / scenario.rebalance_every_s;
  rate += 2 * scenario.stragglers.per_day_at_16k * scenario.gpus / 16384 / 86400;
  if (policy.uses_checkpoints()) rate += 2 / policy.checkpoint_interval_s;
  return period_s * rate;
}

}  // namespace

double wasted_gpu_hours_per_week(double gpus, double ettr, int standby_gpus) {
  return (gpus * (1.0 - ettr) + standby_gpus) * kHoursPerWeek;
}

Status check_run_size(const ProjectionConfig& config) {
  double events = 0;
  for (double gpus : config.gpus) {
    const ScenarioConfig scenario = scenario_at(config, gpus);
    for (PolicyKind kind : config.policies) {
      // A policy that cannot be resolved is reported when the run starts.
      auto policy = resolve_policy(kind, gpus, scenario.mttf_s, config.params);
      if (policy.ok()) events += expected_events(scenario, policy.value()) * config.replications;
    }
  }
  if (!(events <= kMaxEvents)) {
    return error(
        TM_ERROR_INVALID_ARGUMENT, "this run would simulate about ", std::llround(events),
        " events, more than the ", static_cast<long long>(kMaxEvents),
        " that finish in seconds: lower --weeks, --replications, --gpus or the event rates "
        "(--mttf-hours, --planned-ratio, --rebalance-every, --stragglers-per-day)");
  }
  return Status::Ok();
}

Result<std::vector<ProjectionRow>> project(const ProjectionConfig& config) {
  TM_RETURN_IF_ERROR(check_run_size(config));
  std::vector<ProjectionRow> rows;
  for (double gpus : config.gpus) {
    const ScenarioConfig scenario = scenario_at(config, gpus);
    for (PolicyKind kind : config.policies) {
      TM_ASSIGN_OR_RETURN(const PolicyModel policy,
                          resolve_policy(kind, gpus, scenario.mttf_s, config.params));
      ProjectionRow row;
      row.gpus = gpus;
      row.policy = std::string(policy_name(kind));
      row.mttf_hours = scenario.mttf_s / 3600.0;
      row.summary = simulate(scenario, policy, config.seed, config.replications);
      row.standby_gpus = policy.standby_machines * config.params.gpus_per_machine;
      row.wasted_gpu_hours_per_week =
          wasted_gpu_hours_per_week(gpus, row.summary.ettr_mean, row.standby_gpus);
      row.cost_usd_per_week = row.wasted_gpu_hours_per_week * config.usd_per_gpu_hour;
      rows.push_back(row);
    }
  }
  return rows;
}

}  // namespace trainmover::sim
