// `trainmover-bench allreduce|reduce_scatter|allgather|broadcast`: runs the
// implementations interleaved, round after round, and reports the median per
// (implementation, size).
#pragma once

namespace trainmover::bench {

// argv[0] is the collective's name. Exit status: 0; 1 when trainmover itself
// failed; 2 for bad arguments.
int collective_main(int argc, char** argv);

}  // namespace trainmover::bench
