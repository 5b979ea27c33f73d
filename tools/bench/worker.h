// The worker side of `trainmover-bench allreduce` and the other collectives:
// one rank of a measured job. The bench re-executes itself as
// `trainmover-bench worker --impl X --op OP --plan B:K:W,...` under a local job; each rank prints
// one JSON line per size, {"bytes":B,"iters":K,"elapsed_s":T}, T being this rank's time for the K
// timed iterations (which start after a barrier).
#pragma once

#include <vector>

#include "config.h"  // HAVE_GLOO

#include "collective_options.h"
#include "common/status.h"

namespace trainmover::bench {

// Per size, this rank's elapsed seconds for the timed iterations.
using Timings = std::vector<double>;

// Each runner joins the job from the TRAINMOVER_* environment, checks one
// call's result (so a broken implementation cannot post a fast time), then
// measures every size of the plan.
Result<Timings> run_trainmover_collective(Collective op, const std::vector<SizePlan>& plan);
#ifdef HAVE_GLOO
Result<Timings> run_gloo_collective(Collective op, const std::vector<SizePlan>& plan);
#endif

// `trainmover-bench worker ...`; argv[0] is "worker".
int worker_main(int argc, char** argv);

// Checks the output of one call of `op` over `nranks` ranks whose inputs
// were slot + 1 (collective.h); the error names the first wrong element.
Status check_output(Collective op, const float* out, size_t recv_count, int nranks);

}  // namespace trainmover::bench
