#include "failure_model.h"

#include <array>
#include <cmath>
#include <vector>

namespace tmsim {
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

std::vector<double> CauseWeights() {
  std::vector<double> weights;
  for (const FailureCause& cause : kCauses) weights.push_back(cause.llama3_count);
  return weights;
}

}  // namespace

double MttfScalingExponent(const MttfScaling& scaling) {
  return std::log(scaling.small_mttf_hours / scaling.large_mttf_hours) /
         std::log(scaling.large_gpus / scaling.small_gpus);
}

double JobMttfHours(const MttfScaling& scaling, double gpus) {
  if (scaling.fixed_mttf_hours > 0.0) return scaling.fixed_mttf_hours;
  const double exponent = MttfScalingExponent(scaling);
  return scaling.small_mttf_hours * std::pow(gpus / scaling.small_gpus, -exponent);
}

std::span<const FailureCause> Llama3UnexpectedCauses() { return kCauses; }

double Llama3PlannedPerUnexpected() {
  return static_cast<double>(kLlama3Planned) / kLlama3Unexpected;
}

CauseSampler::CauseSampler() {
  const std::vector<double> weights = CauseWeights();
  distribution_ = std::discrete_distribution<std::size_t>(weights.begin(), weights.end());
}

std::size_t CauseSampler::Draw(std::mt19937_64& rng) { return distribution_(rng); }

}  // namespace tmsim
