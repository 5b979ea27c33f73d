// Central finite differences in double precision, for the gradient tests.
#pragma once

#include <gtest/gtest.h>

#include <algorithm>
#include <cmath>
#include <functional>
#include <string>
#include <vector>

#include "gpt/rng.h"

namespace trainmover::gpt::testing {

// Values of about unit size, a pure function of `key`.
inline std::vector<double> random_values(size_t n, uint64_t key, double scale = 1.0) {
  std::vector<double> v(n);
  for (size_t i = 0; i < n; ++i) v[i] = scale * approx_normal(key, i);
  return v;
}

// The largest error seen by expect_gradient, relative to max(1, |numeric|):
// reported by the test so the tolerance's margin is visible.
inline double& max_seen_error() {
  static double worst = 0;
  return worst;
}

// Compares `analytic`, the gradient of loss() with respect to x, with central
// differences at up to `samples` indices spread over x. loss() reads x.
inline void expect_gradient(const std::string& what, std::vector<double>& x,
                            const std::vector<double>& analytic,
                            const std::function<double()>& loss, size_t samples = 24,
                            double tolerance = 1e-6) {
  ASSERT_EQ(x.size(), analytic.size()) << what;
  constexpr double kStep = 1e-5;
  const size_t stride = std::max<size_t>(1, x.size() / samples);
  for (size_t i = (x.size() / 2) % stride; i < x.size(); i += stride) {
    const double saved = x[i];
    x[i] = saved + kStep;
    const double up = loss();
    x[i] = saved - kStep;
    const double down = loss();
    x[i] = saved;
    const double numeric = (up - down) / (2 * kStep);
    const double err = std::abs(analytic[i] - numeric) / std::max(1.0, std::abs(numeric));
    max_seen_error() = std::max(max_seen_error(), err);
    EXPECT_LE(err, tolerance) << what << "[" << i << "]: analytic " << analytic[i] << ", numeric "
                              << numeric;
  }
}

// sum(w * y): a loss whose gradient with respect to y is w.
inline double weighted_sum(const std::vector<double>& y, const std::vector<double>& w) {
  double s = 0;
  for (size_t i = 0; i < y.size(); ++i) s += y[i] * w[i];
  return s;
}

}  // namespace trainmover::gpt::testing
