#include "projection.h"

namespace tmsim {
namespace {

constexpr double kHoursPerWeek = 168.0;

ScenarioConfig ScenarioAt(const ProjectionConfig& config, double gpus) {
  ScenarioConfig scenario;
  scenario.gpus = gpus;
  scenario.weeks = config.weeks;
  scenario.mttf_s = JobMttfHours(config.mttf, gpus) * 3600.0;
  scenario.infra_s = config.infra_s;
  scenario.planned_per_unexpected = config.planned_per_unexpected;
  scenario.rebalance_every_s = config.rebalance_every_s;
  scenario.stragglers = config.stragglers;
  return scenario;
}

}  // namespace

double WastedGpuHoursPerWeek(double gpus, double ettr, int standby_gpus) {
  return (gpus * (1.0 - ettr) + standby_gpus) * kHoursPerWeek;
}

std::vector<ProjectionRow> Project(const ProjectionConfig& config) {
  std::vector<ProjectionRow> rows;
  for (double gpus : config.gpus) {
    const ScenarioConfig scenario = ScenarioAt(config, gpus);
    for (PolicyKind kind : config.policies) {
      const PolicyModel policy = ResolvePolicy(kind, gpus, scenario.mttf_s, config.params);
      ProjectionRow row;
      row.gpus = gpus;
      row.policy = std::string(PolicyName(kind));
      row.mttf_hours = scenario.mttf_s / 3600.0;
      row.summary = Simulate(scenario, policy, config.seed, config.replications);
      row.standby_gpus = policy.standby_machines * config.params.gpus_per_machine;
      row.wasted_gpu_hours_per_week =
          WastedGpuHoursPerWeek(gpus, row.summary.ettr_mean, row.standby_gpus);
      row.cost_usd_per_week = row.wasted_gpu_hours_per_week * config.usd_per_gpu_hour;
      rows.push_back(row);
    }
  }
  return rows;
}

}  // namespace tmsim
