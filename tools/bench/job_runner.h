// The parent side of one measured job: start the ranks of one
// implementation for one round (every size of the plan), and turn what they
// print into a time per iteration for each size.
#pragma once

#include <string>
#include <vector>

#include "collective_options.h"
#include "common/status.h"

namespace trainmover::bench {

// Per size of the plan: max over ranks of the timed iterations' elapsed
// time, divided by the iterations.
using IterationTimes = std::vector<double>;

// Why a job produced no times. `not_available` marks an implementation that
// is not built or cannot be started here (skipped quietly, with a note),
// as opposed to one that started and then failed.
struct JobFailure {
  Status status;
  bool not_available = false;
};

struct JobOutcome {
  IterationTimes times;
  JobFailure failure;
  bool ok() const { return failure.status.ok(); }
};

// trainmover and gloo: N ranks of this very binary in worker mode.
JobOutcome run_worker_job(const std::string& impl, const CollectiveOptions& options,
                          const std::vector<SizePlan>& plan);
// openmpi-tcp, openmpi-shm: mpirun of trainmover-bench-mpi with the BTLs
// the name stands for.
JobOutcome run_mpi_job(const std::string& impl, const CollectiveOptions& options,
                       const std::vector<SizePlan>& plan);

// Parses rank outputs ({"bytes","iters",key} lines) into times per size.
Result<IterationTimes> times_from_outputs(const std::vector<std::string>& outputs,
                                          const std::vector<SizePlan>& plan,
                                          const std::string& elapsed_key);

// The path of the running executable.
Result<std::string> self_executable();

}  // namespace trainmover::bench
