// Sample mean with a Student-t 95% confidence interval.
#pragma once

#include <span>

namespace trainmover::sim {

struct MeanInterval {
  double mean = 0;
  double stddev = 0;         // sample standard deviation (n - 1)
  double half_width_95 = 0;  // 0 with fewer than two samples
};

MeanInterval mean_with_interval(std::span<const double> samples);

// Two-sided 97.5% quantile of Student's t with `dof` degrees of freedom.
double student_t975(int dof);

}  // namespace trainmover::sim
