// The synthetic training step of `trainmover-bench record`: a compute step
// of real CPU work over a gradient buffer, shaped like a data-parallel
// iteration (compute, then allreduce the gradients, then apply them).
#pragma once

#include <cstddef>
#include <cstdint>
#include <vector>

namespace trainmover::bench {

class Workload {
 public:
  // `count` floats of parameters and gradients, seeded by slot.
  Workload(size_t count, int slot);

  // `passes` fused multiply-add sweeps over the buffers, producing this
  // iteration's gradients (depend on the parameters, hence on every earlier
  // allreduce).
  void compute(int passes, int iteration);
  // Applies the reduced gradients to the parameters.
  void apply(int nslots);
  float* gradients() { return grads_.data(); }
  size_t count() const { return grads_.size(); }
  // CRC-32C of the gradients, to compare a replay with the live run.
  uint32_t gradient_crc() const;

 private:
  std::vector<float> params_;
  std::vector<float> grads_;
};

// Passes of compute() that take about `target_s` on this machine (median of
// a few timed runs), at least 1.
int calibrate_passes(size_t count, double target_s);

// What a first touch of fresh anonymous memory costs on this host, in
// microseconds per 4 KiB page: the median of five 8 MiB mappings, each page
// written once. A fraction of a microsecond on bare metal; about 11 on a
// virtual machine that returns freed memory to its host, where every fresh
// allocation pays it again. 0 when no memory could be mapped.
double first_touch_us_per_page();

}  // namespace trainmover::bench
