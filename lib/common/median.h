// The median of measured samples: what every benchmark and the simulator's
// measured policy report for several rounds of one figure.
#pragma once

#include <vector>

namespace trainmover {

// The middle value; for an even count, the mean of the two middle values.
// NaN for no values (so that a missing figure cannot pass for a measured 0).
double median(std::vector<double> values);

}  // namespace trainmover
