// Downtimes that grow linearly in log2(G): the shape of the published
// TrainMover and Megatron-LM figures, which rise by a roughly constant number
// of seconds each time the job doubles.
#pragma once

namespace trainmover::sim {

struct LogLinear {
  double at_gpus;         // the scale the anchor value was measured at
  double seconds;         // downtime at that scale
  double per_doubling_s;  // growth per doubling of G

  double at(double gpus) const;
};

// The line through two measured points (g1, s1) and (g2, s2).
LogLinear line_through(double g1, double s1, double g2, double s2);

}  // namespace trainmover::sim
