// Discrete-event simulation of one training job under one recovery policy.
#pragma once

#include <cstdint>
#include <vector>

#include "policies.h"

namespace trainmover::sim {

struct Stragglers {
  double per_day_at_16k = 0.0;  // appearances per day at 16,384 GPUs; scales with G
  double slowdown = 0.3;        // fraction of throughput lost while one is present
  double detect_s = 600.0;      // time until it is found and removed (a planned event)
};

struct ScenarioConfig {
  double gpus = 1024;
  double weeks = 1;
  double mttf_s = 0;                  // job MTTF for unexpected failures at this scale
  double infra_s = 120;               // paid per interruption, except rebalancing
  double planned_per_unexpected = 0;  // maintenance events per unexpected failure
  double rebalance_every_s = 0;       // 0: no rebalancing
  Stragglers stragglers;
};

struct RunStats {
  double wall_s = 0;
  double useful_s = 0;  // wall time of full-speed training the job banked
  int unexpected = 0;
  int planned = 0;  // maintenance and straggler removals
  int rebalances = 0;
  int standby_misses = 0;         // failures that found no standby left
  std::vector<int> cause_counts;  // indexed like llama3_unexpected_causes()

  double ettr() const { return wall_s > 0 ? useful_s / wall_s : 0.0; }
  int interruptions() const { return unexpected + planned + rebalances; }
};

RunStats simulate_once(const ScenarioConfig& config, const PolicyModel& policy, std::uint64_t seed);

struct Summary {
  double ettr_mean = 0;
  double ettr_ci95 = 0;  // half-width of a 95% interval over replications
  double ettr_stddev = 0;
  double interruptions = 0;  // mean per replication over the whole period
  double unexpected = 0;
  double standby_misses = 0;
  int replications = 0;
};

// Independent replications with seeds derived from `seed` and the scale, but
// not from the policy: all policies at one scale see the same failures.
Summary simulate(const ScenarioConfig& config, const PolicyModel& policy, std::uint64_t seed,
                 int replications);

// Seed for one replication: a SplitMix64 mix of the user seed, scale and index.
std::uint64_t replication_seed(std::uint64_t seed, double gpus, int replication);

}  // namespace trainmover::sim
