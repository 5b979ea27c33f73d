#include "failure_model.h"

#include <array>
#include <cmath>
#include <vector>

namespace trainmover::sim {
namespace {

constexpr std::array<FailureCause, 18> kCauses{{
    {"faulty_gpu", 148, true},
    {"gpu_hbm3", 72, true},
    {"software_bug", 54, false},
    {"network_switch_cable", 35, true},
    {"host_maintenance", 32, true},
    {"gpu_sram", 19, true},
    {"gpu_system_processor", 17, true},
    {"nic", 7, true},
    {"nccl_watchdog", 7, false},
    {"silent_data_corruption", 6, true},
    {"gpu_thermal", 6, true},
    {"ssd", 3, true},
    {"power_supply", 3, true},
    {"server_chassis", 2, true},
    {"io_expansion_board", 2, true},
    {"dependency", 2, false},
    {"cpu", 2, true},
    {"system_memory", 2, true},
}};

std::vector<double> cause_weights() {
  std::vector<double> weights;
  for (const FailureCause& cause : kCauses) weights.push_back(cause.llama3_count);
  return weights;
}

}  // namespace

double mttf_scaling_exponent(const MttfScaling& scaling) {
  return std::log(scaling.small_mttf_hours / scaling.large_mttf_hours) /
         std::log(scaling.large_gpus / scaling.small_gpus);
}

double job_mttf_hours(const MttfScaling& scaling, double gpus) {
  if (scaling.fixed_mttf_hours > 0.0) return scaling.fixed_mttf_hours;
  const double exponent = mttf_scaling_exponent(scaling);
  return scaling.small_mttf_hours * std::pow(gpus / scaling.small_gpus, -exponent);
}

std::span<const FailureCause> llama3_unexpected_causes() { return kCauses; }

double llama3_planned_per_unexpected() {
  return static_cast<double>(kLlama3Planned) / kLlama3Unexpected;
}

CauseSampler::CauseSampler() {
  const std::vector<double> weights = cause_weights();
  distribution_ = std::discrete_distribution<std::size_t>(weights.begin(), weights.end());
}

std::size_t CauseSampler::draw(std::mt19937_64& rng) { return distribution_(rng); }

}  // namespace trainmover::sim
