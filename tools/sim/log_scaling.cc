#include "log_scaling.h"

#include <algorithm>
#include <cmath>

namespace trainmover::sim {

double LogLinear::at(double gpus) const {
  // A downtime never drops below zero, however far below the anchor G is.
  return std::max(0.0, seconds + per_doubling_s * std::log2(gpus / at_gpus));
}

LogLinear line_through(double g1, double s1, double g2, double s2) {
  // Anchored at the larger scale, since at-scale projection extrapolates up.
  const double slope = (s2 - s1) / std::log2(g2 / g1);
  return g2 >= g1 ? LogLinear{g2, s2, slope} : LogLinear{g1, s1, slope};
}

}  // namespace trainmover::sim
