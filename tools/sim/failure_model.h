// Failure model: how often a job of G GPUs is interrupted and why.
// Sources: Kokolis et al., HPCA 2025 (job MTTF on Meta research clusters) and
// the Llama 3 report (causes of 466 interruptions in 54 days on 16,384 GPUs).
#pragma once

#include <random>
#include <span>
#include <string_view>

namespace trainmover::sim {

// Job MTTF as a power law in G through two published points, used for both
// interpolation and extrapolation (a straight line on log-log axes).
struct MttfScaling {
  double small_gpus = 1024.0;
  double small_mttf_hours = 7.9;
  double large_gpus = 16384.0;
  double large_mttf_hours = 1.8;
  double fixed_mttf_hours = 0.0;  // > 0: use this MTTF at every scale.
};

double job_mttf_hours(const MttfScaling& scaling, double gpus);

// The exponent a in MTTF(G) = MTTF(G1) * (G / G1)^-a.
double mttf_scaling_exponent(const MttfScaling& scaling);

struct FailureCause {
  std::string_view name;
  int llama3_count;
  // Software faults restart a process on the same machine; every other cause
  // takes the machine out of the job, so a replacement machine is needed.
  bool removes_machine;
};

// The 419 unexpected interruptions of the Llama 3 report, by cause.
std::span<const FailureCause> llama3_unexpected_causes();

inline constexpr int kLlama3Planned = 47;
inline constexpr int kLlama3Unexpected = 419;

// Planned interruptions per unexpected one (47:419 in the Llama 3 report).
double llama3_planned_per_unexpected();

// Draws causes with the Llama 3 frequencies; returns an index into
// llama3_unexpected_causes().
class CauseSampler {
 public:
  CauseSampler();
  std::size_t draw(std::mt19937_64& rng);

 private:
  std::discrete_distribution<std::size_t> distribution_;
};

}  // namespace trainmover::sim
