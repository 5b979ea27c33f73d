// The worker side of `trainmover-bench allreduce`: one rank of a measured
// job. The bench re-executes itself as `trainmover-bench worker --impl X
// --plan B:K:W,...` under a local job; each rank prints one JSON line per
// size, {"bytes":B,"iters":K,"elapsed_s":T}, T being this rank's time for
// the K timed iterations (which start after a barrier).
#pragma once

#include <vector>

#include "config.h"  // HAVE_GLOO

#include "allreduce_options.h"
#include "common/status.h"

namespace trainmover::bench {

// Per size, this rank's elapsed seconds for the timed iterations.
using Timings = std::vector<double>;

// Each runner joins the job from the TRAINMOVER_* environment, checks one
// allreduce's result (so a broken implementation cannot post a fast time),
// then measures every size of the plan.
Result<Timings> run_trainmover_allreduce(const std::vector<SizePlan>& plan);
#ifdef HAVE_GLOO
Result<Timings> run_gloo_allreduce(const std::vector<SizePlan>& plan);
#endif

// `trainmover-bench worker ...`; argv[0] is "worker".
int worker_main(int argc, char** argv);

// Checks that every element of a sum-allreduce of (slot + 1) over `nranks`
// ranks came out as nranks(nranks+1)/2.
Status check_sum(const float* data, size_t count, int nranks);

}  // namespace trainmover::bench
