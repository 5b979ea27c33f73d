// `trainmover-bench record`: the cost of recording collectives for standbys
// and the speed of replaying them, on a data-parallel-shaped loop of N worker
// processes (compute step, allreduce of the gradients, update).
//
// Per round (interleaved, medians reported): a job without recording, the
// same job recording its first K iterations, with --control a second job
// without recording, then one sandbox process replaying the trace. See trainmover-bench(1) for the
// keys printed.
#pragma once

#include <cstdint>
#include <string>

namespace trainmover::bench {

struct RecordOptions {
  int nranks = 2;
  uint64_t bytes = 4 << 20;  // gradient buffer
  double compute_s = 0.015;  // target of the compute step
  int passes = 0;            // compute passes; 0: calibrate to compute_s
  int recorded = 2;          // K
  int after = 10;            // iterations measured after recording
  int warmup = 12;           // unmarked iterations before the first recorded one
  int rounds = 5;
  bool compress = false;
  bool control = false;  // also a second job that never records: the noise floor
  // TRAINMOVER_RECORD_RESERVE of the recording job; 0: unset (the
  // library's default); kAutoReserve: what its K iterations record.
  uint64_t reserve = 0;
  static constexpr uint64_t kAutoReserve = UINT64_MAX;
  int cpus_per_rank = 1;  // rank i on its own CPUs, as srun --cpu-bind=cores; 0: unbound
  bool json = false;
  double job_timeout_s = 300;
};

int record_main(int argc, char** argv);

}  // namespace trainmover::bench
