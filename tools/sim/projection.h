// Runs every (scale, policy) pair and turns ETTR into wasted GPU-hours and cost.
#pragma once

#include <cstdint>
#include <string>
#include <vector>

#include "common/status.h"
#include "failure_model.h"
#include "policies.h"
#include "simulation.h"

namespace trainmover::sim {

struct ProjectionConfig {
  std::vector<double> gpus;
  std::vector<PolicyKind> policies;
  double weeks = 1;
  std::uint64_t seed = 1;
  int replications = 10;
  double infra_s = 120;
  double planned_per_unexpected = llama3_planned_per_unexpected();
  double rebalance_every_s = 0;
  double usd_per_gpu_hour = 2.0;
  Stragglers stragglers;
  MttfScaling mttf;
  PolicyParams params;
};

struct ProjectionRow {
  double gpus = 0;
  std::string policy;
  double mttf_hours = 0;
  Summary summary;
  int standby_gpus = 0;
  double wasted_gpu_hours_per_week = 0;
  double cost_usd_per_week = 0;
};

// Job GPUs idle for (1 - ETTR) of the week, plus every standby GPU all week.
double wasted_gpu_hours_per_week(double gpus, double ettr, int standby_gpus);

// The most events a run may simulate, summed over scales, policies and
// replications: a few seconds of one CPU (about 4e7 events a second here).
inline constexpr double kMaxEvents = 2e8;

// Refuses, naming what to lower, a run expected to simulate more than
// kMaxEvents events.
Status check_run_size(const ProjectionConfig& config);

// Every (scale, policy) row; fails as CheckRunSize does, or when a policy
// cannot be resolved (measured without data).
Result<std::vector<ProjectionRow>> project(const ProjectionConfig& config);

}  // namespace trainmover::sim
