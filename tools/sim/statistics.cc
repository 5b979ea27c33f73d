#include "statistics.h"

#include <array>
#include <cmath>

namespace trainmover::sim {

double student_t975(int dof) {
  static constexpr std::array<double, 30> kTable{
      12.706, 4.303, 3.182, 2.776, 2.571, 2.447, 2.365, 2.306, 2.262, 2.228,
      2.201,  2.179, 2.160, 2.145, 2.131, 2.120, 2.110, 2.101, 2.093, 2.086,
      2.080,  2.074, 2.069, 2.064, 2.060, 2.056, 2.052, 2.048, 2.045, 2.042};
  if (dof < 1) return 0;
  if (dof <= 30) return kTable[static_cast<std::size_t>(dof - 1)];
  return dof <= 120 ? 2.0 : 1.96;
}

MeanInterval mean_with_interval(std::span<const double> samples) {
  MeanInterval result;
  if (samples.empty()) return result;
  double sum = 0;
  for (double x : samples) sum += x;
  const double n = static_cast<double>(samples.size());
  result.mean = sum / n;
  if (samples.size() < 2) return result;
  double squares = 0;
  for (double x : samples) squares += (x - result.mean) * (x - result.mean);
  result.stddev = std::sqrt(squares / (n - 1));
  const int dof = static_cast<int>(samples.size()) - 1;
  result.half_width_95 = student_t975(dof) * result.stddev / std::sqrt(n);
  return result;
}

}  // namespace trainmover::sim
